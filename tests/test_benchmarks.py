"""The benchmark harness in a tiny configuration, so that it cannot rot.

These tests check that the harness runs and that its figures are consistent with each other;
they never assert a timing or a speed (this machine is shared and noisy: speed is measured by
the benchmarks themselves, in paired runs).
"""

from __future__ import annotations

import ctypes
import json
import mmap
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from redis import Redis

from benchmarks.cputime import busiest_threads, thread_times
from benchmarks.kvpressure import rounds
from benchmarks.machine import MachineWatch, outside_name
from benchmarks.overhead import profile_report
from benchmarks.report import (control_intro, cpu_section, median_interval, overhead_section, parity_section,
                               read_lines)
from benchmarks.standalone import assign
from benchmarks.workloads import burst_path, load_items
from common.config import Settings
from common.prompts import load_tokenizer, split_prompt
from producer.client import Client


def tiny_burst(tmp_path: Path, num_docs: int = 2, num_questions: int = 2) -> Path:
    """The first documents of the reuse burst, with their first questions."""
    lines = burst_path("reuse-256").read_text(encoding="utf-8").splitlines()[:num_docs]
    path = tmp_path / "tiny.jsonl"
    with open(path, "w", encoding="utf-8") as out:
        for line in lines:
            doc = json.loads(line)
            doc["questions"] = doc["questions"][:num_questions]
            out.write(json.dumps(doc) + "\n")
    return path


def test_cache_pressure_plan_is_fixed_and_picks_distinct_questions() -> None:
    items = load_items("reuse-256")
    plan = rounds(items, num_rounds=3, docs_per_round=5, questions=2, seed=1)
    assert plan == rounds(items, num_rounds=3, docs_per_round=5, questions=2, seed=1)
    assert plan != rounds(items, num_rounds=3, docs_per_round=5, questions=2, seed=2)
    for batch in plan:
        tags = [item.tag for item in batch]
        assert len(tags) == len(set(tags)) == 10
        docs = {tag.rsplit("/", 1)[0] for tag in tags}
        assert len(docs) == 5


def test_overhead_benchmark_on_the_simulator_stores_every_job(tmp_path: Path) -> None:
    """The sim engine (a SIMULATOR, no model) through a real redis-server and a real worker."""
    out_file = tmp_path / "overhead.jsonl"
    subprocess.run([sys.executable, "-m", "benchmarks.overhead", "--jobs", "200", "--max-batch", "64",
                    "--submission-size", "50", "--out", str(out_file)],
                   capture_output=True, text=True, timeout=300, check=True)
    runs = {row["run"]: row for row in map(json.loads, out_file.read_text().splitlines())}
    assert runs.keys() == {"end-to-end", "backlog"}
    for name, run in runs.items():
        assert run["jobs"] == run["stored"] == 200
        assert run["engine"].startswith("sim")
        assert set(run["per_job_ms"]) == {"queue", "admit", "engine"}
        # The worker's own account of its bookkeeping covers every job it ran (16 warm-up
        # jobs come first in the end-to-end run).
        expected = 216 if name == "end-to-end" else 200
        for stage in ("pull", "start", "finish"):
            assert run["stages"][stage]["jobs"] == expected, (name, stage, run["stages"])
    # Rates and CPU times are reported; their size is for the benchmark, not a pass/fail test.
    assert isinstance(runs["end-to-end"]["worker_cpu_ms_per_job"], float)
    # Rendering, tokenizing and Redis's commands take some CPU: a zero would mean a wrong process.
    assert runs["end-to-end"]["producer_cpu_ms_per_job"] > 0
    assert runs["end-to-end"]["redis_cpu_ms_per_job"] > 0
    assert isinstance(runs["backlog"]["drain_jobs_per_s"], int)
    assert runs["end-to-end"]["submissions"] == 4  # 200 jobs in submissions of 50
    for run in runs.values():  # the worker's GC figures, read from its log: a worker that ran
        # 200 jobs after gc.freeze() collected young objects at least once
        assert run["gc"]["num_collections"] > 0 and run["gc"]["collections_by_gen"][0] > 0, run["gc"]
    section = "\n".join(overhead_section(list(runs.values())))
    assert "| end-to-end (4 submissions) | 200 |" in section and "| backlog | 200 |" in section
    gc = runs["backlog"]["gc"]
    assert f"| {gc['max_pause_ms']:.2f} ({gc['max_cpu_ms']:.2f}) |" in section


def test_balance_benchmark_runs_with_and_without_stealing(tmp_path: Path, model_path: str) -> None:
    """Two sim workers (a SIMULATOR), one four times slower, on the first documents of the reuse
    burst: both runs store every request, and only the stealing run moves jobs between shards,
    to the faster one."""
    out_file = tmp_path / "balance.jsonl"
    subprocess.run([sys.executable, "-m", "benchmarks.balance", "--documents", "16", "--rounds", "1",
                    "--slowdown", "4", "--s-per-token", "0.0001", "--out", str(out_file)],
                   capture_output=True, text=True, timeout=300, check=True)
    runs = {row["steal"]: row for row in map(json.loads, out_file.read_text().splitlines())}
    assert runs.keys() == {True, False}
    for run in runs.values():
        assert run["engine"] == "sim" and run["requests"] == 64 and run["failed"] == 0
        assert sum(run["per_shard"].values()) == 64
        assert isinstance(run["seconds"], float)
    assert runs[False]["taken_per_shard"] == {}
    assert set(runs[True]["taken_per_shard"]) == {"gpu1"}  # the faster shard took work, and only it


def test_profile_report_shares_samples_per_function(tmp_path: Path) -> None:
    raw = tmp_path / "samples.txt"
    raw.write_text("thread (1): MainThread;run (worker/runner.py:10);pack (redis/connection.py:5) 3\n"
                   "thread (2): pull;_worker (concurrent/futures/thread.py:81);start (worker/rqbatch.py:9) 1\n")
    report = profile_report(raw)
    assert report["own"] == [(0.75, "pack (connection.py)"), (0.25, "start (rqbatch.py)")]
    assert (0.75, "run (runner.py)") in report["cumulative"]
    assert not any("_worker" in name for _, name in report["cumulative"])  # thread plumbing


def test_step_summary_says_when_a_shard_stepped_within_the_burst() -> None:
    from benchmarks.steps import steps_record, summarize

    steps = [(99.0, 1, 0, 10, 1),  # before the burst (a warm-up): left out
             (100.5, 2, 1, 30, 2), (100.7, 3, 0, 20, 3), (101.0, 3, 0, 0, 3), (101.2, 1, 0, 0, 1),
             (200.0, 1, 0, 5, 1)]  # after it: left out
    summary = summarize(steps, 100.0, 101.5)
    assert summary == {"steps": 4, "first_step_s": 0.5, "last_step_s": 1.2, "after_last_step_s": 0.3,
                       "median_step_s": 0.2, "max_step_s": 0.3, "prefill_steps_s": 0.2,
                       "median_prefill_step_s": 0.2, "decode_steps_s": 0.5, "median_decode_step_s": 0.25,
                       "prompt_tokens": 50, "generated_tokens": 9,
                       "peak_running": 3, "steps_waiting": 1, "steps_below_peak": 2}
    assert summarize(steps, 150.0, 160.0) == {"steps": 0}
    record = steps_record({"gpu0": steps}, 100.0, 101.5)
    assert record["step_trace"]["gpu0"][0] == [0.5, 2, 1, 30, 2]  # times from the burst's start
    assert steps_record({}, 100.0, 101.5) == {}  # no traces asked for: no fields


def test_report_shows_where_each_run_spent_its_burst() -> None:
    from benchmarks.report import steps_section
    from benchmarks.steps import steps_record

    def run(system: str, late: float) -> dict[str, object]:
        traces = {"gpu0": [(10.5 + late, 1, 1, 30, 1), (11.0 + late, 2, 0, 20, 2), (11.25 + late, 2, 0, 0, 2)],
                  "gpu1": [(10.25, 1, 0, 40, 1), (10.75, 1, 0, 0, 1)]}
        return {"burst": "tiny", "pair": 0, "system": system, "seconds": 1.5 + late,
                "set": "2026-12-01T22:27:20-ad99e8", **steps_record(traces, 10.0, 11.5 + late)}

    section = "\n".join(steps_section([run("prefixq", 0.25), run("standalone", 0.0)]))
    lines = [line for line in section.splitlines() if line.startswith("| tiny")]
    # standalone first; prefixq's first step came 0.25 s later and so did everything after it
    assert lines == ["| tiny | 0 | standalone | 1.50 | 5 | 0.500 | 0.50 (0.500) | 0.75 (0.375) | 0.250 | 2026-12-01T22:27 |",
                     "| tiny | 0 | prefixq | 1.75 | 5 | 0.750 | 0.50 (0.500) | 0.75 (0.375) | 0.250 | 2026-12-01T22:27 |"]
    assert steps_section([{"burst": "tiny", "pair": 0, "system": "prefixq", "seconds": 1.0}]) == []


@pytest.mark.vllm
def test_parity_harness_runs_both_systems_on_a_tiny_burst(tmp_path: Path, model_path: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Standalone vLLM and prefixq (real engines) answer the same four questions; the report
    pairs them."""
    from benchmarks.routing import run as run_prefixq
    from benchmarks.standalone import run_standalone
    from common.config import env_var

    monkeypatch.setenv(env_var("step_trace"), "1")  # every engine of both systems records its steps

    burst = tiny_burst(tmp_path)
    items = load_items(str(burst), max_tokens=4, temperature=0.0)
    base = run_standalone(items, {"max_tokens": 4, "temperature": 0.0})
    assert base["requests"] == 4 and base["per_shard"] == {"gpu0": 2, "gpu1": 2}
    assert 0.0 <= base["cached_fraction"] < 1.0 and isinstance(base["requests_per_s"], float)

    ours = run_prefixq(str(burst), "affinity", 4, tmp_path)
    assert ours["requests"] == 4 and ours["failed"] == 0
    assert sorted(ours["per_shard"].values()) == [2, 2]  # each document's questions on one shard
    assert 0.0 < ours["oracle_cached_fraction"] < 1.0
    assert all("num_collections" in g for g in ours["gc_per_worker"])  # read from the worker logs
    # The protocol's clocks: prefixq's runs from its first enqueue (after the producer rendered,
    # tokenized and routed: prepare_s) to the last stored result (before the results are read
    # back), so it lies within the span of the whole call; the baseline tokenizes before its clock.
    assert base["prompts"] == "token ids"
    assert ours["prepare_s"] > 0
    assert ours["prepare_s"] + ours["seconds"] <= ours["seconds_from_submit"] + 0.01, ours
    # The same work: both systems' engines saw the same prompts, token for token.
    assert sum(t["prompt"] for t in base["tokens_per_shard"].values()) == \
        sum(t["prompt"] for t in ours["tokens_per_shard"].values())
    # CPU during the burst: every part of each system is counted (its size is for benchmarks).
    assert set(base["cpu_s"]) == {"engine", "frontend"}
    assert set(ours["cpu_s"]) == {"engine", "frontend", "redis", "producer"}
    assert all(isinstance(v, float) for v in [*base["cpu_s"].values(), *ours["cpu_s"].values()])
    for run in (base, ours):  # the front ends' busiest threads, user and system CPU apart
        threads = run["frontend_threads"]
        assert threads and any(name.endswith(" (main)") for name, _, _ in threads), threads
        assert all(user >= 0 and system >= 0 for _, user, system in threads), threads
    for run in (base, ours):  # preemptions of vLLM's model threads, counted (not judged)
        assert isinstance(run["engine_preempted"]["VLLM::Worker"], int), run["engine_preempted"]
        # The engines' CPU split by process: the model's processes and the schedulers' add up.
        by_process = run["engine_cpu_by_process"]
        assert {"VLLM::Worker", "VLLM::EngineCore"} <= set(by_process), by_process
        assert abs(sum(by_process.values()) - run["cpu_s"]["engine"]) < 0.05, (by_process, run["cpu_s"])
    for run in (base, ours):  # the rest of the machine over the burst (the machine may run a redis-server of its own)
        machine = run["machine"]
        assert not {"VLLM::Worker", "VLLM::EngineCore"} & set(machine["outside_top"]), machine
        assert machine["outside_cpu_s"] >= sum(machine["outside_top"].values()) - 1e-6
        assert machine["steal_s"] >= 0
        # Each system's CPU is read from the clock's start to its end (the last result), within
        # the machine counters' span: session 31's baseline read it only after the machine watch
        # had refreshed DAMON's statistics, up to a second of spinning engines past its clock.
        start, end = run["cpu_window_s"]
        assert machine["window_s"][0] <= start < run["seconds"] <= end <= machine["window_s"][1], \
            (run["system"], run["seconds"], run["cpu_window_s"], machine["window_s"])
    for run in (base, ours):  # every token of the burst is in the steps each shard recorded
        for shard, tokens in run["tokens_per_shard"].items():
            steps = run["steps"][shard]
            assert (steps["prompt_tokens"], steps["generated_tokens"]) == \
                (tokens["prompt"], tokens["completion"]), (run["system"], shard, steps)
            assert len(run["step_trace"][shard]) == steps["steps"]

    rows = [{**base, "burst": "tiny", "pair": 0}, {**ours, "system": "prefixq", "burst": "tiny", "pair": 0}]
    section = "\n".join(parity_section(rows, tmp_path))
    ratio = ours["requests_per_s"] / base["requests_per_s"]
    assert f"| tiny | 0 | {base['requests_per_s']:.3f} | {ours['requests_per_s']:.3f} | {ratio:.4f} |" in section
    assert (tmp_path / "parity.png").exists()
    cpu = "\n".join(cpu_section(rows))
    assert "| tiny | prefixq | 1 |" in cpu and "| tiny | standalone | 1 |" in cpu


@pytest.mark.vllm
def test_parity_command_runs_pairs_on_resident_engines(tmp_path: Path, model_path: str) -> None:
    """``python -m benchmarks.parity --resident``: both systems stay up, every burst starts cold."""
    burst, out = tiny_burst(tmp_path), tmp_path / "parity-tiny.jsonl"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.parity", "--burst", str(burst), "--pairs", "2",
                           "--max-tokens", "4", "--resident", "--out", str(out)], capture_output=True, text=True, timeout=1800,
                          # four engines beside the session's two: 1 GiB KV caches, so they fit in memory
                          env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    runs, gc = rows[:-1], rows[-1]
    assert [(r["pair"], r["system"]) for r in runs] == \
        [(0, "standalone"), (0, "prefixq"), (1, "standalone"), (1, "prefixq")]
    for run in runs:
        assert run["requests"] == 4 and sum(run["per_shard"].values()) == 4
        # Cold caches: at most one of a document's two questions (sent together) can reuse the
        # other's prefix, so at most about half the prompt tokens are cached. A cache left over
        # from the burst before would cache nearly every token.
        assert run["cached_fraction"] < 0.55, run
        assert isinstance(run["idle_system_cpu_s"], float)  # the other system's CPU meanwhile
    assert gc["kind"] == "gc" and len(gc["gc_per_worker"]) == 2
    assert all("num_collections" in g for g in gc["gc_per_worker"])
    summary = json.loads(proc.stdout[proc.stdout.index('{\n'):])["summary"][str(burst)]
    expected = [round(ours["requests_per_s"] / base["requests_per_s"], 4)
                for base, ours in zip(runs[::2], runs[1::2])]
    assert summary["ratios"] == expected


def test_a_burst_can_be_cut_to_its_first_documents() -> None:
    every = load_items("reuse-256")
    first = load_items("reuse-256", 3, max_tokens=4)
    assert [item.tag for item in first] == [item.tag for item in every[:len(first)]]
    assert {item.tag.rsplit("/", 1)[0] for item in first} == {item.tag.rsplit("/", 1)[0] for item in every[:12]}
    assert len({item.tag.rsplit("/", 1)[0] for item in first}) == 3


@pytest.mark.vllm
def test_side_by_side_runs_both_systems_at_once_on_their_own_cores(tmp_path: Path, model_path: str) -> None:
    """``python -m benchmarks.sidebyside``: one shard each, released together."""
    burst, out = tiny_burst(tmp_path), tmp_path / "sidebyside.jsonl"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.sidebyside", "--burst", str(burst), "--documents", "1",
                           "--pairs", "1", "--max-tokens", "4", "--out", str(out)],
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    base, ours = [json.loads(line) for line in out.read_text().splitlines()]
    assert (base["system"], ours["system"]) == ("standalone", "prefixq")
    assert (base["core"], ours["core"]) == (0, 1)
    for run in (base, ours):
        assert run["side_by_side"] and run["documents"] == 1
        assert run["requests"] == 2 and run["per_shard"] == {"gpu0": 2}
    assert base["tokens_per_shard"]["gpu0"]["prompt"] == ours["tokens_per_shard"]["gpu0"]["prompt"]
    summary = json.loads(proc.stdout[proc.stdout.index('{\n'):])["summary"]
    assert summary["ratios"] == [round(ours["requests_per_s"] / base["requests_per_s"], 4)]


def test_report_shows_control_pairs_against_standalone(tmp_path: Path) -> None:
    """The A/A control's rows (standalone against itself) make their own table and plot."""
    rows = [{"system": "standalone", "burst": "noreuse-64", "pair": 0, "requests_per_s": 2.0, "cached_fraction": 0.1},
            {"system": "standalone-control", "burst": "noreuse-64", "pair": 0, "requests_per_s": 1.9,
             "cached_fraction": 0.1}]
    section = "\n".join(parity_section(rows, tmp_path, "Control", "control.png", other="standalone-control"))
    assert "| noreuse-64 | 0 | 2.000 | 1.900 | 0.9500 | 0.100 / 0.100 |" in section
    assert "median ratio 0.9500, worst 0.9500 over 1 pairs" in section
    assert (tmp_path / "control.png").exists()
    assert parity_section(rows, tmp_path) == []  # no prefixq rows: no prefixq table


def test_report_names_the_sessions_whose_folders_hold_ab_runs(tmp_path: Path) -> None:
    """The A/A section's intro lists the sessions with A/A files, not the side-by-side controls
    or prefixq's parity files."""
    assert control_intro(tmp_path).endswith("session 7's (`results/control-parity-*.jsonl`).")
    for folder, name in [("2026-11-30-session6", "control-parity-cpu.jsonl"),
                         ("2026-12-05-session35", "control-noreuse-steps.jsonl"),
                         ("2026-12-04-session29", "control-reuse-steps.jsonl"),
                         ("2026-12-05-session34", "control-sidebyside-noreuse.jsonl"),
                         ("2026-12-05-session33", "parity-noreuse-steps.jsonl")]:
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("")
    assert control_intro(tmp_path).endswith("`control-reuse*`: sessions 6, 29 and 35).")


def test_median_interval_is_distribution_free_and_honest_about_few_pairs() -> None:
    assert median_interval([1.0, 0.9, 1.1, 0.95, 1.05]) is None  # 5 pairs cannot give 95%
    # 6 to 8 values: the extremes (P(all on one side of the median) = 2/64 .. 2/256 <= 5%)
    assert median_interval([0.97, 1.02, 0.99, 1.01, 0.98, 1.0]) == (0.97, 1.02)
    assert median_interval([float(i) for i in range(8)]) == (0.0, 7.0)
    # 9 values: the second smallest and second largest (2 * P(B(9, 1/2) <= 1) = 0.039)
    assert median_interval([float(i) for i in range(9)]) == (1.0, 7.0)
    # 14 values: the third (2 * P(B(14, 1/2) <= 2) = 0.013; <= 3 would be 0.057)
    assert median_interval([float(i) for i in range(14)]) == (2.0, 11.0)


def test_report_keeps_apart_the_sets_appended_to_one_file(tmp_path: Path) -> None:
    """Two invocations appended to one file both number their pairs from 0: the report shows
    four pairs, not the second set's runs in place of the first's."""
    def run(system: str, run_set: str, pair: int, rate: float) -> str:
        return json.dumps({"system": system, "set": run_set, "burst": "noreuse-64", "pair": pair,
                           "requests_per_s": rate, "cached_fraction": 0.0})
    lines = [run("standalone", "a", 0, 2.0), run("prefixq", "a", 0, 1.8),
             run("standalone", "a", 1, 2.0), run("prefixq", "a", 1, 1.9),
             run("standalone", "b", 0, 2.0), run("prefixq", "b", 0, 2.1),
             run("standalone", "b", 1, 2.0), run("prefixq", "b", 1, 2.2)]
    (tmp_path / "parity-two-sets.jsonl").write_text("\n".join(lines) + "\n")
    # and a file from before records named their set: its name keeps its pairs apart
    old = [json.loads(line) for line in lines[:2]]
    for row in old:
        del row["set"]
        row["requests_per_s"] /= 2
    (tmp_path / "parity-old.jsonl").write_text("\n".join(json.dumps(row) for row in old) + "\n")
    section = "\n".join(parity_section(read_lines(tmp_path, "parity-*.jsonl"), tmp_path))
    ratios = [line.split(" | ")[4] for line in section.splitlines() if line.startswith("| noreuse-64 |")]
    assert ratios == ["0.9000", "0.9000", "0.9500", "1.0500", "1.1000"]  # file by file, in run order
    assert "| noreuse-64 | 4 |" in section
    assert "median ratio 0.9500, worst 0.9000 over 5 pairs" in section


@pytest.mark.vllm
def test_parity_control_runs_standalone_against_itself_in_both_orders(tmp_path: Path, model_path: str) -> None:
    """``python -m benchmarks.parity --control --counterbalance``: the A/A test, the second pair
    with the control run first."""
    burst, out = tiny_burst(tmp_path, num_docs=1), tmp_path / "control.jsonl"
    proc = subprocess.run([sys.executable, "-m", "benchmarks.parity", "--burst", str(burst), "--pairs", "2",
                           "--max-tokens", "4", "--control", "--counterbalance", "--out", str(out)],
                          capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    runs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(r["pair"], r["system"], r["first"]) for r in runs] == [
        (0, "standalone", "standalone"), (0, "standalone-control", "standalone"),
        (1, "standalone", "standalone-control"), (1, "standalone-control", "standalone-control")]
    assert len({json.dumps(r["tokens_per_shard"], sort_keys=True) for r in runs}) == 1  # the same work
    summary = json.loads(proc.stdout[proc.stdout.index('{\n'):])["summary"][str(burst)]
    assert summary["ratios"] == [round(runs[i + 1]["requests_per_s"] / runs[i]["requests_per_s"], 4) for i in (0, 2)]


def test_parity_refuses_counterbalancing_an_odd_number_of_pairs() -> None:
    """With 3 pairs one system would run first twice and the other once: refused before any
    engine starts, naming the flag."""
    proc = subprocess.run([sys.executable, "-m", "benchmarks.parity", "--burst", "noreuse-64", "--pairs", "3",
                           "--counterbalance"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "--counterbalance needs an even --pairs (got 3)" in proc.stderr
    assert proc.stdout == ""


_BUSY = ("import ctypes, sys\n"
         "ctypes.CDLL(None).prctl(15, sys.argv[1].encode(), 0, 0, 0)  # PR_SET_NAME\n"
         "while True: pass\n")


def _named(name: str) -> psutil.Process | None:
    return next((p for p in psutil.process_iter(["name"]) if p.info["name"] == name), None)


def test_machine_watch_counts_processes_outside_the_run_and_not_its_own(tmp_path: Path) -> None:
    """A busy process this one started belongs to the run; a busy one it does not parent (an
    orphan, as the machine's own services are) is outside it and is counted by name."""
    script = tmp_path / "busy.py"
    script.write_text(_BUSY)
    watch = MachineWatch()
    watch.start()
    inside = subprocess.Popen([sys.executable, str(script), "insidebusy"])
    subprocess.run(["sh", "-c", f"'{sys.executable}' '{script}' outsidebusy >/dev/null 2>&1 &"], check=True)
    outside = None
    try:
        deadline = time.monotonic() + 120  # until both have run a while, however busy the machine
        while time.monotonic() < deadline:
            outside = outside or _named("outsidebusy")
            if outside is not None and sum(outside.cpu_times()[:2]) >= 0.3 and \
                    sum(psutil.Process(inside.pid).cpu_times()[:2]) >= 0.3:
                break
            time.sleep(0.1)
        watch.stop()
    finally:
        inside.kill()
        if outside is not None:
            outside.kill()
    summary = watch.summary(top=1000)
    assert "insidebusy" not in summary["outside_top"]
    assert summary["outside_top"].get("outsidebusy", 0.0) >= 0.3
    assert summary["outside_cpu_s"] >= summary["outside_top"]["outsidebusy"]
    assert summary["steal_s"] >= 0 and summary["idle_s"] >= 0


def test_machine_watch_counts_major_faults_of_the_runs_own_processes(tmp_path: Path) -> None:
    """Pages of a file dropped from the page cache and then read through a mapping are major
    faults of the reading process, which is the run's own: they are counted, in the run's own
    processes and in the machine's."""
    data = tmp_path / "pages.bin"
    pages = 256
    data.write_bytes(os.urandom(pages * mmap.PAGESIZE))
    with data.open("rb") as f:
        os.fsync(f.fileno())
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)  # out of the page cache
        with MachineWatch() as watch, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            sum(mapped[i * mmap.PAGESIZE] for i in range(pages))  # read every page
    memory = watch.summary()["memory"]
    assert memory["own_major_faults"] >= 1, memory
    assert memory["major_faults"] >= memory["own_major_faults"], memory
    assert memory["file_refaults"] >= 0
    assert memory["damon_paged_out_bytes"] is None or memory["damon_paged_out_bytes"] >= 0


_RENAMING = ("import ctypes, os, sys\n"
             "libc = ctypes.CDLL(None)\n"
             "libc.prctl(15, sys.argv[1].encode(), 0, 0, 0)  # PR_SET_NAME\n"
             "while not os.path.exists(sys.argv[3]): pass\n"
             "libc.prctl(15, sys.argv[2].encode(), 0, 0, 0)\n"
             "while True: pass\n")


def _cpu_s(proc: psutil.Process) -> float:
    return sum(proc.cpu_times()[:2])


def test_busiest_threads_count_only_the_cpu_between_two_readings() -> None:
    """A thread that spun 0.3 s before the first reading and 0.2 s more before the second is
    listed first, under its own name, with about 0.2 s: not what it used before."""
    stop, spun = threading.Event(), threading.Event()

    def spin() -> None:
        ctypes.CDLL(None).prctl(15, b"spinner", 0, 0, 0)  # PR_SET_NAME: the thread's comm
        while not stop.is_set():
            if time.thread_time() > 0.3:
                spun.set()

    thread = threading.Thread(target=spin)
    thread.start()
    try:
        assert spun.wait(120)
        pid = os.getpid()
        before = thread_times([pid])
        spinner = next(key for key, (name, _, _) in before.items() if name == "spinner")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and sum(thread_times([pid])[spinner][1:]) < sum(before[spinner][1:]) + 0.2:
            time.sleep(0.02)
        after = thread_times([pid])
    finally:
        stop.set()
        thread.join()
    ranked = busiest_threads(before, after, top=100)
    assert ranked[0][0] == "spinner", ranked
    spent = ranked[0][1] + ranked[0][2]
    assert 0.2 <= spent <= sum(after[spinner][1:]) - 0.25, (spent, after[spinner])
    assert any(name.endswith(" (main)") for name, _, _ in ranked), ranked


def test_machine_watch_counts_a_process_that_renames_itself_from_its_own_reading(tmp_path: Path) -> None:
    """Kernel worker threads rename themselves after each work item: a process renamed during
    the watch is still matched with its reading at the start, so only the CPU it used during
    the watch counts (not everything since it started), under its name at the end."""
    script, renamed = tmp_path / "renaming.py", tmp_path / "now"
    script.write_text(_RENAMING)
    subprocess.run(["sh", "-c", f"'{sys.executable}' '{script}' beforename aftername '{renamed}' >/dev/null 2>&1 &"],
                   check=True)
    proc = None
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and (proc is None or _cpu_s(proc) < 0.5):
            proc = proc or _named("beforename")
            time.sleep(0.05)
        assert proc is not None and _cpu_s(proc) >= 0.5  # busy before the watch starts
        watch = MachineWatch()
        watch.start()  # its last reading is the processes' CPU (the memory counters come first)
        cpu_before = _cpu_s(proc)
        renamed.touch()
        while time.monotonic() < deadline and (proc.name() != "aftername" or _cpu_s(proc) < cpu_before + 0.2):
            time.sleep(0.05)
        watch.stop()
        cpu_after = _cpu_s(proc)
    finally:
        if proc is not None:
            proc.kill()
    assert proc.name() == "aftername"
    top = watch.summary(top=1000)["outside_top"]
    assert "beforename" not in top
    assert 0.1 <= top["aftername"] <= cpu_after - cpu_before + 0.02  # not its CPU since it started


def test_outside_processes_are_named_without_a_kernel_worker_threads_work_item() -> None:
    assert outside_name("kworker/u8:0-events_unbound") == "kworker/u8:0"
    assert outside_name("kworker/0:1-mm_percpu_wq") == "kworker/0:1"
    assert outside_name("kworker/1:2") == "kworker/1:2"
    assert outside_name("postgres-worker") == "postgres-worker"  # only kernel worker threads


def test_report_says_what_the_rest_of_the_machine_took_from_each_pair() -> None:
    from benchmarks.report import machine_section

    def run(system: str, seconds: float, outside: float, steal: float, pair: int = 0) -> dict[str, object]:
        return {"burst": "tiny", "pair": pair, "set": "2026-12-02T01:32:15-abcdef", "system": system,
                "policy": "affinity", "seconds": seconds, "requests_per_s": round(10 / seconds, 4),
                "machine": {"outside_cpu_s": outside, "outside_top": {"beam.smp": outside / 2, "kdamond.0": 0.05},
                            "steal_s": steal, "idle_s": 0.0}}

    rows = [run("standalone", 10.0, 0.2, 0.0), run("prefixq", 12.5, 0.4, 0.1),  # slower, lost more
            run("standalone", 10.0, 0.6, 0.0, 1), run("prefixq", 8.0, 0.2, 0.0, 1),  # faster, lost less
            run("standalone", 10.0, 0.1, 0.0, 2), run("prefixq", 12.5, 0.1, 0.0, 2),  # slower, lost less
            {"burst": "tiny", "pair": 3, "system": "prefixq", "seconds": 1.0, "requests_per_s": 1.0}]  # no record
    section = machine_section(rows)
    table = [line for line in section if line.startswith("| tiny")]
    assert table[0] == "| tiny | 0 | prefixq | 0.8000 | 0.20 / 0.40 | 0.00 / 0.10 | 1.00 / 2.00 " \
                       "| beam.smp 0.10 / beam.smp 0.20 | 2026-12-02T01:32 |"
    assert len(table) == 3
    assert "In 2 of 3 pairs the slower run was the one whose burst lost more" in "\n".join(section)
    assert machine_section(rows[-1:]) == []


def test_report_counts_the_schedulers_cpu_in_prefixqs_extra() -> None:
    """The engines' CPU split by process: the scheduler's extra counts with the CPU outside the
    engines, each as a share of the two cores over prefixq's burst."""
    from benchmarks.report import engine_split_section

    def run(system: str, seconds: float, model: float, scheduler: float, cpu: dict[str, float]) -> dict[str, object]:
        return {"burst": "tiny", "pair": 0, "set": "2026-12-02T05:00:00-abcdef", "system": system,
                "policy": "affinity", "seconds": seconds, "requests_per_s": round(100 / seconds, 4),
                "cpu_s": {"engine": model + scheduler, **cpu},
                "engine_cpu_by_process": {"VLLM::Worker": model, "VLLM::EngineCore": scheduler}}

    rows = [run("standalone", 100.0, 190.0, 2.0, {"frontend": 1.0}),
            run("prefixq", 125.0, 240.0, 3.0, {"frontend": 1.5, "redis": 0.5, "producer": 0.5}),
            {"burst": "tiny", "pair": 1, "system": "prefixq", "seconds": 1.0, "requests_per_s": 1.0}]  # older record
    section = engine_split_section(rows)
    table = [line for line in section if line.startswith("| tiny")]
    # models' share: 190 / (2 x 100) = 95%, 240 / (2 x 125) = 96%, a share ratio of 96 / 95;
    # outside: 2.5 - 1.0 = 1.5 s, scheduler: 1.0 s, over 2 cores x 125 s
    assert table == ["| tiny | 0 | 0.8000 | 95.00 / 96.00 | 1.0105 | 190.00 / 240.00 | 2.00 / 3.00 | 1.00 / 2.50 "
                     "| 0.60 + 0.40 = 1.00 | 2026-12-02T05:00 |"]
    assert "- **tiny**: median share ratio 1.0105 (1.0105-1.0105) over 1 pairs" in section
    assert engine_split_section(rows[-1:]) == []


@pytest.mark.parametrize("policy", ["affinity", "round-robin"])
def test_the_baseline_splits_a_burst_as_prefixqs_router_does(redis: Redis, scratch_url: str,
                                                             model_path: str, policy: str) -> None:
    items = load_items("reuse-256", documents=6, max_tokens=4)
    settings = Settings.from_env(redis_url=scratch_url)
    split = assign(items, settings, model_path, policy)
    # The same burst submitted the way prefixq's producer does, to this test's own Redis.
    Client(settings).submit_many(items, policy=policy)
    tokenizer = load_tokenizer(model_path)
    prompts = ["".join(split_prompt(tokenizer, item.messages)) for item in items]
    for shard in settings.shards:
        queued = [int(j.decode().rpartition("-")[2]) for j in redis.lrange(f"rq:queue:{shard}", 0, -1)]
        assert split[shard] == [prompts[i] for i in queued]
    assert sorted(p for shard in split.values() for p in shard) == sorted(prompts)
    shard_of = {p: shard for shard, ps in split.items() for p in ps}
    homes: dict[str, set[str]] = {}
    for item, prompt in zip(items, prompts):
        homes.setdefault(item.tag.rpartition("/")[0], set()).add(shard_of[prompt])
    assert len(homes) == 6 and all(split[shard] for shard in settings.shards)
    if policy == "affinity":  # every question about a document on its document's shard
        assert all(len(shards) == 1 for shards in homes.values())
    else:  # request i on shard i mod 2: a document's four questions on both
        assert all(len(shards) == 2 for shards in homes.values())
