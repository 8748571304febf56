"""Turn the JSON lines the benchmarks wrote into ``benchmarks/README.md`` with PNG plots.

    python -m benchmarks.report [--results benchmarks/results]

Reads ``parity-*.jsonl`` (from ``benchmarks.parity --out``, affinity and round-robin runs),
``kvoff-parity-*.jsonl`` (the same with ``PREFIXQ_KV_EVENTS=off``),
``*/parity-*-steps.jsonl`` (``benchmarks.parity --steps --out`` in a session's folder: where
each run's time went), ``*/parity-*.jsonl`` and ``*/control-*.jsonl`` (what the rest of the
machine took during each run, and the engines' CPU by process, where the records say),
``routing-*.jsonl`` (``benchmarks.routing --out``), ``overhead-*.jsonl``
(``benchmarks.overhead --out``), ``kvpressure-*.jsonl``
(``benchmarks.kvpressure --out``) and ``payload-*.json`` (``benchmarks.payload_bytes --out``);
writes the tables and ``benchmarks/results/*.png``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks.steps import by_kind

HERE = Path(__file__).resolve().parent
# Parity runs with engine steps recorded (``benchmarks.parity --steps``), in the sessions'
# folders; runs with settings other than the defaults are named otherwise.
STEPS_RUNS = "*/parity-*-steps.jsonl"


def read_lines(folder: Path, pattern: str) -> list[dict[str, Any]]:
    """Every record of the files matching ``pattern``, in file order. A record written before
    records named their set (the invocation that made them) gets its file's name as its set."""
    rows = []
    for path in sorted(folder.glob(pattern)):
        rows += [{"set": path.name, **json.loads(line)} for line in path.read_text().splitlines() if line.strip()]
    return rows


def new_set() -> str:
    """A name for one invocation's records (``set``): when it started, and a random tail."""
    return f"{time.strftime('%Y-%m-%dT%H:%M:%S')}-{uuid.uuid4().hex[:6]}"


def emit(record: dict[str, Any], out: Path | None) -> None:
    """Print one result as a JSON line, and append it to ``out`` when given."""
    line = json.dumps(record)
    print(line, flush=True)
    if out is not None:
        with open(out, "a", encoding="utf-8") as f:
            f.write(line + "\n")


# A/A parity runs (not the side-by-side controls): the results' root, then the sessions' folders.
CONTROL_RUNS = ["control-parity-*.jsonl", "*/control-parity-*.jsonl", "*/control-noreuse*.jsonl",
                "*/control-reuse*.jsonl"]


def session_number(folder: Path) -> int:
    """The session a results folder belongs to (``2026-12-05-session35``: 35), or -1."""
    tail = folder.name.rpartition("session")[2]
    return int(tail) if tail.isdigit() else -1


def control_intro(folder: Path) -> str:
    """What the A/A section shows, naming the sessions whose folders hold A/A runs."""
    sessions = sorted({session_number(path.parent) for pattern in CONTROL_RUNS[1:]
                       for path in folder.glob(pattern)} - {-1})
    text = ("The parity protocol with standalone vLLM in prefixq's place (`benchmarks.parity --control`): "
            "how far apart two identical systems measure on this machine kind. Every A/A set run so far: "
            "session 7's (`results/control-parity-*.jsonl`)")
    if not sessions:
        return text + "."
    *rest, last = sessions
    named = f"{', '.join(map(str, rest))} and {last}" if rest else str(last)
    return (text + ", then those in the sessions' folders (`control-parity-*`, then `control-noreuse*`, "
            f"then `control-reuse*`: sessions {named}).")


SIDE_BY_SIDE_INTRO = ("`benchmarks.sidebyside`: one shard each, every request on it, the two engines on "
                      "different cores (swapped each pair) and both clocks started together, so a slowdown "
                      "of the whole machine slows both. A diagnostic, not the protocol.")


def paired_runs(rows: list[dict[str, Any]], policy: str | None = "affinity"
                ) -> dict[tuple[str, str, int], dict[str, dict[str, Any]]]:
    """The runs of each pair by system, keyed by burst, set and pair number, so the sets of
    several invocations appended to one file stay apart; only ``policy``'s runs (None: all)."""
    runs: dict[tuple[str, str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        if "system" in row and policy in (None, row.get("policy", "affinity")):
            burst = row["burst"] + (f", first {row['documents']} documents" if row.get("documents") else "")
            runs[(burst, str(row.get("set", "")), row["pair"])][row["system"]] = row
    return runs


def parity_section(rows: list[dict[str, Any]], folder: Path,
                   title: str = "Parity: prefixq vs standalone vLLM", plot: str = "parity.png",
                   other: str = "prefixq", intro: str = "") -> list[str]:
    """Pairs of runs, ``other`` against standalone: throughputs, ratios, their median and worst.

    A pair is the runs with the same burst, set and pair number (:func:`paired_runs`); pairs
    are numbered in the order they were run.
    """
    runs = paired_runs(rows)
    if not any(other in pair_runs for pair_runs in runs.values()):
        return []
    out = [f"## {title}", "", *([intro, ""] if intro else []),
           f"| burst | pair | standalone req/s | {other} req/s | ratio | cached fraction (standalone / {other}) |",
           "| --- | --- | --- | --- | --- | --- |"]
    ratios: dict[str, list[float]] = defaultdict(list)
    for (burst, _, _), pair_runs in sorted(runs.items(), key=lambda run: run[0][0]):  # stable: run order
        if {"standalone", other} <= pair_runs.keys():
            base, ours = pair_runs["standalone"], pair_runs[other]
            ratio = ours["requests_per_s"] / base["requests_per_s"]
            ratios[burst].append(ratio)
            out.append(f"| {burst} | {len(ratios[burst]) - 1} | {base['requests_per_s']:.3f} | {ours['requests_per_s']:.3f} "
                       f"| {ratio:.4f} | {base['cached_fraction']:.3f} / {ours['cached_fraction']:.3f} |")
    out.append("")
    for burst, values in ratios.items():
        interval = median_interval(values)
        where = f" (95% interval {interval[0]:.4f}-{interval[1]:.4f})" if interval else ""
        out.append(f"- **{burst}**: median ratio {statistics.median(values):.4f}{where}, "
                   f"worst {min(values):.4f} over {len(values)} pairs")
    if ratios:
        plot_ratios(ratios, folder / plot, f"{other} / standalone throughput")
        out += ["", f"![ratio per pair](results/{plot})"]
    return out + [""]


def median_interval(values: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """An interval that holds the true median with at least ``confidence``, whatever the
    distribution: the k-th smallest and k-th largest value, for the largest k the binomial
    distribution allows. None when there are too few values (fewer than 6 for 95%)."""
    ordered, n = sorted(values), len(values)
    tail, k = 0.0, 0
    for below in range(n + 1):  # P(at most `below` values fall under the median) = tail
        tail += math.comb(n, below) / 2 ** n
        if tail > (1 - confidence) / 2:
            break
        k = below + 1
    return (ordered[k - 1], ordered[n - k]) if k else None


def routing_section(rows: list[dict[str, Any]], folder: Path) -> list[str]:
    out = ["## Routing: prefix affinity vs round-robin (prefixq, real workers)", "",
           "| burst | policy | req/s | cached fraction | oracle | of oracle |", "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        out.append(f"| {row['burst']} | {row['policy']} | {row['requests_per_s']:.3f} | "
                   f"{row['cached_fraction']:.3f} | {row['oracle_cached_fraction']:.3f} | {row['of_oracle']} |")
    by_policy = {row["policy"]: row["requests_per_s"] for row in rows}
    if {"affinity", "round-robin"} <= by_policy.keys():
        out += ["", f"Affinity uplift over round-robin: "
                    f"{by_policy['affinity'] / by_policy['round-robin'] - 1:+.1%}"]
    return out + [""]


def uplift_section(rows: list[dict[str, Any]]) -> list[str]:
    """Affinity vs round-robin for both systems, from the parity runs (reuse burst)."""
    rates, cached = reuse_by_policy(rows, "requests_per_s"), reuse_by_policy(rows, "cached_fraction")
    out = ["## Affinity vs round-robin, both systems (reuse-256)", "",
           "| system | policy | runs | median req/s | median cached fraction |", "| --- | --- | --- | --- | --- |"]
    for (system, policy), values in sorted(rates.items()):
        out.append(f"| {system} | {policy} | {len(values)} | {statistics.median(values):.3f} | "
                   f"{statistics.median(cached[(system, policy)]):.3f} |")
    out.append("")
    for system, uplift in uplifts(rows).items():
        out.append(f"- **{system}**: affinity uplift over round-robin {uplift - 1:+.1%} (medians)")
    return out + [""]


def reuse_by_policy(rows: list[dict[str, Any]], field: str) -> dict[tuple[str, str], list[float]]:
    """``field`` of every reuse-256 run, keyed by system and routing policy."""
    values: dict[tuple[str, str], list[float]] = defaultdict(list)
    for row in rows:
        if "system" in row and row["burst"] == "reuse-256":
            values[(row["system"], row.get("policy", "affinity"))].append(row[field])
    return values


def uplifts(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Each system's affinity uplift on reuse-256: its median throughput under affinity over its
    median under round-robin (only systems that ran under both)."""
    rates = reuse_by_policy(rows, "requests_per_s")
    return {system: statistics.median(rates[(system, "affinity")]) / statistics.median(rates[(system, "round-robin")])
            for system in ("standalone", "prefixq")
            if (system, "affinity") in rates and (system, "round-robin") in rates}


def gc_section(rows: list[dict[str, Any]]) -> list[str]:
    """The longest GC pause per worker in each prefixq parity run."""
    out = ["## GC pauses after start-up (prefixq workers)", "",
           "| burst | pair | policy | max pause, ms wall (per worker) | max collector CPU, ms | collections by generation |",
           "| --- | --- | --- | --- | --- | --- |"]
    found = False
    for row in rows:
        if row.get("system") == "prefixq" and row.get("gc_per_worker"):
            found = True
            pauses = " / ".join(f"{g.get('max_pause_ms', 0.0):.2f}" for g in row["gc_per_worker"])
            cpu = " / ".join(f"{g['max_cpu_ms']:.2f}" if "max_cpu_ms" in g else "-" for g in row["gc_per_worker"])
            counts = " / ".join(str(g.get("collections_by_gen", g.get("num_collections", "?")))
                                for g in row["gc_per_worker"])
            if row.get("kind") == "gc":  # resident workers: one record covers every burst they ran
                bursts, pair = ", ".join(row["bursts"]), f"all {row['pairs']}"
            else:
                bursts, pair = row["burst"], row["pair"]
            out.append(f"| {bursts} | {pair} | {row.get('policy', 'affinity')} | {pauses} | {cpu} | {counts} |")
    return out + [""] if found else []


def cpu_section(rows: list[dict[str, Any]]) -> list[str]:
    """CPU time per request during the burst: the engines, and everything else each system ran."""
    groups: dict[tuple[str, str], list[dict[str, float]]] = defaultdict(list)
    for row in rows:
        if "system" in row and row.get("cpu_s") and row.get("policy", "affinity") == "affinity":
            groups[(row["burst"], row["system"])].append(
                {part: seconds / row["requests"] for part, seconds in row["cpu_s"].items()})
    if not groups:
        return []
    out = ["## CPU time per request outside the engines (affinity runs, medians)", "",
           "Engines have a core each; everything else shares those two cores, so CPU spent outside",
           "the engines is what a serving layer can take from them. The engines' CPU for the same",
           "work varies from run to run about as much as their wall-clock time. Both systems' CPU is",
           "read from the start to the end of the burst.", "",
           "| burst | system | runs | engine CPU ms/req | front end(s) | redis-server | producer | outside engines |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (burst, system), runs in sorted(groups.items()):
        def med(part: str) -> float:
            return statistics.median(r.get(part, 0.0) for r in runs) * 1e3
        outside = statistics.median(sum(v for k, v in r.items() if k != "engine") for r in runs) * 1e3
        out.append(f"| {burst} | {system} | {len(runs)} | {med('engine'):.1f} | {med('frontend'):.1f} | "
                   f"{med('redis'):.2f} | {med('producer'):.2f} | {outside:.1f} ({outside / med('engine'):.1%} of engine) |")
    return out + [""]


def steps_section(rows: list[dict[str, Any]]) -> list[str]:
    """Where each run's time went, from the engine steps both systems recorded
    (``benchmarks.parity --steps``): a late start, slower steps or a late finish."""
    rows = [row for row in rows if row.get("steps") and "system" in row]
    if not rows:
        return []
    out = ["## Where a burst's time goes (engine steps; `benchmarks.parity --steps`)", "",
           "Per run, over both shards: when the first step's output came (the later shard), the",
           "summed intervals of steps that computed prompt tokens and of those that only decoded",
           "(both shards), their medians, and how long the burst went on after the last step (the",
           "result reaching the client). A serving layer that admitted late or stored results",
           "slowly would show in the first and last columns; the steps' own speed is the engines'.",
           "The runs are those in the sessions' folders (`results/*/parity-*-steps.jsonl`; see the",
           "notes for each session's machine); a set is one invocation, named by when it began.", "",
           "| burst | pair | system | burst s | steps | first step s | prefill steps s (median) "
           "| decode steps s (median) | after last step s | set |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def med(shards: list[dict[str, Any]], key: str) -> float:
        return statistics.median(s[key] for s in shards if s.get(key) is not None)

    for row in sorted(rows, key=lambda r: (r["burst"], r.get("set", ""), r["pair"], r["system"] != "standalone")):
        # Records summarized before the split by kind get it from their steps.
        shards = [{**by_kind(row.get("step_trace", {}).get(shard, ())), **s}
                  for shard, s in row["steps"].items() if s.get("steps")]
        if not shards:
            continue
        out.append(f"| {row['burst']} | {row['pair']} | {row['system']} | {row['seconds']:.2f} | "
                   f"{sum(s['steps'] for s in shards)} | {max(s['first_step_s'] for s in shards):.3f} | "
                   f"{sum(s['prefill_steps_s'] for s in shards):.2f} ({med(shards, 'median_prefill_step_s'):.3f}) | "
                   f"{sum(s['decode_steps_s'] for s in shards):.2f} ({med(shards, 'median_decode_step_s'):.3f}) | "
                   f"{min(s['after_last_step_s'] for s in shards):.3f} | {row.get('set', '')[:16]} |")
    return out + [""]


def lost_share(row: dict[str, Any], cores: int = 2) -> float:
    """The share of the machine's cores that the rest of the machine took during a run's burst:
    the CPU of processes outside the run and the hypervisor's steal time."""
    machine = row["machine"]
    return (machine["outside_cpu_s"] + machine["steal_s"]) / (cores * row["seconds"])


def uncounted_cpu_s(row: dict[str, Any], cores: int = 2) -> float:
    """The cores' seconds over a run's clock that its record does not count: its own processes'
    CPU, the rest of the machine's, steal and idle taken from the cores times the clock. A small
    positive remainder is the readings' own gaps; a negative one means CPU counted past the clock."""
    machine = row["machine"]
    counted = sum(row["cpu_s"].values()) + machine["outside_cpu_s"] + machine["steal_s"] + machine["idle_s"]
    return cores * row["seconds"] - counted


def _busiest_outside(row: dict[str, Any]) -> str:
    """The outside process that took the most CPU during a run's burst (``outside_top`` is
    ordered costliest first), with its seconds."""
    top = next(iter(row["machine"]["outside_top"].items()), None)
    return "-" if top is None else f"{top[0]} {top[1]:.2f}"


def pairs_recording(rows: list[dict[str, Any]], field: str
                    ) -> list[tuple[tuple[str, str, int], dict[str, dict[str, Any]]]]:
    """The complete pairs (standalone and one other system, every policy) whose records have
    ``field``, in order; records from before the field existed are left out."""
    rows = [row for row in rows if field in row and "pair" in row]
    return [(key, runs) for key, runs in sorted(paired_runs(rows, policy=None).items())
            if "standalone" in runs and len(runs) == 2]


def machine_section(rows: list[dict[str, Any]]) -> list[str]:
    """Per pair of runs that recorded the rest of the machine (``machine``): what it took during
    each burst, and how often the slower run of a pair was the one that lost more."""
    pairs = pairs_recording(rows, "machine")
    if not pairs:
        return []
    out = ["## The rest of the machine during each burst", "",
           "What processes outside the run (the machine's own services, kernel threads) used and what",
           "the hypervisor stole while each burst ran (`machine` in each record;",
           "`results/*/parity-*.jsonl` and `results/*/control-*.jsonl`). Lost: both, as a share of",
           "the two cores over the burst. Busiest: the outside process that took the most.", "",
           "Records written before 4ee667c (sessions 16-19; sets up to 2026-12-02T16:00) matched",
           "processes by name, and a kernel worker thread renames itself after each work item",
           "(`kworker/u8:1-events_unbound`, `-flush-254:0`, ...): one renamed during a burst was",
           "counted with all the CPU it had used before the burst too. Their outside CPU is too high",
           "by up to about 1.4 s, and their `kworker/...-...` entries are mostly that. Later records",
           "match by process and name kworkers without the work item.", "",
           "| burst | pair | other | ratio | outside CPU s (standalone / other) | steal s | lost % "
           "| busiest outside (standalone / other) | set |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    slower_lost_more = 0
    for (burst, run_set, pair), runs in pairs:
        base = runs["standalone"]
        other = next(r for name, r in runs.items() if name != "standalone")
        ratio = other["requests_per_s"] / base["requests_per_s"]
        slower, faster = (other, base) if ratio < 1 else (base, other)
        slower_lost_more += lost_share(slower) > lost_share(faster)
        out.append(f"| {burst} | {pair} | {other['system']} | {ratio:.4f} | "
                   f"{base['machine']['outside_cpu_s']:.2f} / {other['machine']['outside_cpu_s']:.2f} | "
                   f"{base['machine']['steal_s']:.2f} / {other['machine']['steal_s']:.2f} | "
                   f"{100 * lost_share(base):.2f} / {100 * lost_share(other):.2f} | "
                   f"{_busiest_outside(base)} / {_busiest_outside(other)} | {run_set[:16]} |")
    out += ["", f"In {slower_lost_more} of {len(pairs)} pairs the slower run was the one whose burst lost "
                "more of the cores to the rest of the machine.", ""]
    return out


MODEL = "VLLM::Worker"  # vLLM's model process
SCHEDULER = "VLLM::EngineCore"  # vLLM's scheduler process; it also builds and sends KV-cache events


def outside_engines(row: dict[str, Any]) -> float:
    """A run's CPU seconds outside the engines' processes (``cpu_s`` without ``engine``)."""
    return sum(v for k, v in row["cpu_s"].items() if k != "engine")


def engine_split_section(rows: list[dict[str, Any]]) -> list[str]:
    """Per pair whose records split the engines' CPU by process (``engine_cpu_by_process``): the
    model's and the scheduler's CPU in each system, and what prefixq spent beyond the baseline."""
    pairs = pairs_recording(rows, "engine_cpu_by_process")
    if not pairs:
        return []
    out = ["## The engines' CPU by process, and all of prefixq's extra CPU", "",
           "Each engine is two processes on its core: the model (`VLLM::Worker`) and the scheduler",
           "(`VLLM::EngineCore`, which waits for each step, and with KV-cache events on builds them and",
           "sends them from a publisher thread). Any CPU either system spends beside the models, in",
           "the schedulers or outside the engines, comes out of the models' two cores. So all of",
           "prefixq's extra CPU is its excess outside the engines plus its schedulers' excess (last",
           "column, as shares of the two cores over prefixq's burst; `engine_cpu_by_process` and",
           "`cpu_s` in each record, `results/*/parity-*.jsonl`).", "",
           "The models' share: the model processes' CPU as a share of the two cores over the",
           "burst. When the machine runs slower, the models' CPU for the same work grows with the",
           "burst's time, so the share does not move with the machine's speed: the share ratio",
           "(prefixq's share over the baseline's) is a pair's ratio with that drift taken out. It",
           "assumes the models' CPU for the same work does not depend on the system around them;",
           "if prefixq slowed the models' own instructions (through the caches, say), it would not",
           "show here.", "",
           "The baseline's records of session 31 (at 5dd0155) read its CPU only after the machine",
           "watch had refreshed DAMON's statistics (up to 1.3 s, measured in session 32), while both",
           "engines spun after their last step: by the records' own accounting they count a median",
           "0.3 s and up to 1.6 s of engine CPU past the clock. That makes the baseline's model CPU",
           "and share too high and session 31's share ratios too low (session 32's notes). Records",
           "since say where each system's CPU was read against its clock (`cpu_window_s`).", "",
           "| burst | pair | ratio | models' share % (standalone / prefixq) | share ratio | "
           "model CPU s (standalone / prefixq) | scheduler CPU s | "
           "outside the engines s | prefixq's extra % (outside + scheduler = all) | set |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    share_ratios: dict[str, list[float]] = {}
    for (burst, run_set, pair), runs in pairs:
        base = runs["standalone"]
        other = next(r for name, r in runs.items() if name != "standalone")
        split = [r["engine_cpu_by_process"] for r in (base, other)]
        outside = [outside_engines(r) for r in (base, other)]
        span = 2 * other["seconds"]  # the two cores over prefixq's burst
        extra_outside = (outside[1] - outside[0]) / span
        extra_scheduler = (split[1].get(SCHEDULER, 0.0) - split[0].get(SCHEDULER, 0.0)) / span
        share = [models_share(r) for r in (base, other)]
        share_ratio = share[1] / share[0]
        policy = other.get("policy", "affinity")
        share_ratios.setdefault(burst if policy == "affinity" else f"{burst}, {policy}", []).append(share_ratio)
        out.append(f"| {burst} | {pair} | {other['requests_per_s'] / base['requests_per_s']:.4f} | "
                   f"{100 * share[0]:.2f} / {100 * share[1]:.2f} | {share_ratio:.4f} | "
                   f"{split[0].get(MODEL, 0.0):.2f} / {split[1].get(MODEL, 0.0):.2f} | "
                   f"{split[0].get(SCHEDULER, 0.0):.2f} / {split[1].get(SCHEDULER, 0.0):.2f} | "
                   f"{outside[0]:.2f} / {outside[1]:.2f} | {100 * extra_outside:.2f} + "
                   f"{100 * extra_scheduler:.2f} = {100 * (extra_outside + extra_scheduler):.2f} | "
                   f"{run_set[:16]} |")
    out.append("")
    for burst, ratios in share_ratios.items():
        out.append(f"- **{burst}**: median share ratio {statistics.median(ratios):.4f} "
                   f"({min(ratios):.4f}-{max(ratios):.4f}) over {len(ratios)} pairs")
    return out + [""]


def models_share(row: dict[str, Any], cores: int = 2) -> float:
    """The model processes' CPU as a share of the cores over a run's burst."""
    return row["engine_cpu_by_process"].get(MODEL, 0.0) / (cores * row["seconds"])


def overhead_section(rows: list[dict[str, Any]]) -> list[str]:
    """The sim-engine ceiling: end-to-end and backlog rates, and the worker's stages per job."""
    if not rows:
        return []
    out = ["## Overhead ceiling (sim engine: a SIMULATOR that takes no time; one worker)", "",
           "| run | jobs | jobs/s | worker CPU ms/job | queue wait ms | admission ms | pull / start / finish, CPU ms per job "
           "| worker's max GC pause, ms wall (collector CPU) |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        rate = row.get("jobs_per_s") or row.get("drain_jobs_per_s")
        stages = row.get("stages", {})
        per_stage = " / ".join(f"{stages[s]['cpu_ms_per_job']:.3f}" if s in stages else "-"
                               for s in ("pull", "start", "finish"))
        run = row["run"] + (f" ({row['submissions']} submissions)" if row.get("submissions", 1) > 1 else "")
        gc = row.get("gc") or {}
        pause = f"{gc['max_pause_ms']:.2f} ({gc['max_cpu_ms']:.2f})" if "max_pause_ms" in gc else "-"
        out.append(f"| {run} | {row['jobs']} | {rate:,} | {row.get('worker_cpu_ms_per_job') or '-'} | "
                   f"{row['per_job_ms']['queue']:.0f} | {row['per_job_ms']['admit']:.1f} | {per_stage} | {pause} |")
    return out + [""]


def kvpressure_section(rows: list[dict[str, Any]], folder: Path) -> list[str]:
    """Predicted-only vs event-confirmed routing under KV-cache pressure."""
    if not rows:
        return []
    out = ["## Routing under KV-cache pressure: predicted-only vs event-confirmed", "",
           "| pair | mode | KV blocks/worker | req/s | cached fraction | requests per shard | busiest shard / mean, per round |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    by_mode: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_mode[row["mode"]].append(row)
        shards = ", ".join(f"{k} {v}" for k, v in sorted(row["per_shard"].items()))
        out.append(f"| {row['pair']} | {row['mode']} | {row['kv_cache_blocks']} | {row['requests_per_s']:.3f} | "
                   f"{row['cached_fraction']:.3f} | {shards} | "
                   f"{' '.join(f'{x:.2f}' for x in row.get('round_imbalance', [row['imbalance']]))} |")
    out.append("")
    for mode, runs in by_mode.items():
        rounds = [x for r in runs for x in r.get("round_imbalance", [])]
        spread = f", mean busiest-shard share per round {statistics.mean(rounds):.3f}" if rounds else ""
        out.append(f"- **{mode}**: median {statistics.median(r['requests_per_s'] for r in runs):.3f} req/s, "
                   f"cached fraction {statistics.median(r['cached_fraction'] for r in runs):.3f}{spread} "
                   f"over {len(runs)} runs")
    plot_modes(by_mode, folder / "kvpressure.png")
    return out + ["", "![cache pressure](results/kvpressure.png)", ""]


def payload_section(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    out = ["## Payload bytes written to Redis", "",
           "| burst | bytes written | raw JSON of the rendered prompts | ratio |", "| --- | --- | --- | --- |"]
    for row in rows:
        out.append(f"| {row['burst']} | {row['bytes_written']:,} | {row['raw_prompt_json_bytes']:,} | "
                   f"1/{row['raw_prompt_json_bytes'] / row['bytes_written']:.2f} |")
    return out + [""]


def plot_modes(by_mode: dict[str, list[dict[str, Any]]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    modes = sorted(by_mode)
    fig, (left, right) = plt.subplots(1, 2, figsize=(7, 3.2))
    for ax, field, label in ((left, "requests_per_s", "requests/s"), (right, "cached_fraction", "cached fraction")):
        for i, mode in enumerate(modes):
            values = [r[field] for r in by_mode[mode]]
            ax.scatter([i] * len(values), values, label=mode)
            ax.bar(i, statistics.median(values), alpha=0.3)
        ax.set_xticks(range(len(modes)), modes)
        ax.set_ylabel(label)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_ratios(ratios: dict[str, list[float]], path: Path,
                ylabel: str = "prefixq / standalone throughput") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for burst, values in ratios.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", label=burst)
    ax.axhline(0.995, color="grey", linestyle="--", label="target 0.995")
    ax.set_xlabel("pair")
    ax.set_ylabel(ylabel)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=HERE / "results")
    args = parser.parse_args()
    lines = ["# Benchmarks", "",
             "Measured on this project's machine kind (2 cores, no GPU), the built-in model, two shards",
             "with one core each, float32, prefix caching on, `max_tokens` 32, temperature 0. Engines",
             "start fresh for every run and are warmed with a few unrelated prompts. Regenerate with the",
             "commands in the top-level README, then `python -m benchmarks.report`.", ""]
    parity = read_lines(args.results, "parity-*.jsonl")
    gc_rows = [row for row in parity if row.get("gc_per_worker")]
    parity = [row for row in parity if row.get("kind") != "gc"]
    lines += parity_section(parity, args.results)
    lines += uplift_section(parity)
    kv_off = read_lines(args.results, "kvoff-parity-*.jsonl")
    lines += parity_section(kv_off, args.results, "Parity with the workers' KV-cache events off",
                            "parity-kv-off.png")
    controls = [row for pattern in CONTROL_RUNS for row in read_lines(args.results, pattern)]
    lines += parity_section(controls, args.results,
                            "Control: standalone vLLM against itself (A/A)", "parity-control.png",
                            other="standalone-control", intro=control_intro(args.results))
    lines += parity_section(read_lines(args.results, "sidebyside-*.jsonl"), args.results,
                            "Side by side (diagnostic): both systems at once, one core each", "sidebyside.png",
                            intro=SIDE_BY_SIDE_INTRO)
    lines += parity_section(read_lines(args.results, "control-sidebyside-*.jsonl"), args.results,
                            "Side by side, control: standalone against itself", "sidebyside-control.png",
                            other="standalone-control")
    lines += steps_section(read_lines(args.results, STEPS_RUNS))
    lines += machine_section(read_lines(args.results, "*/parity-*.jsonl") +
                             read_lines(args.results, "*/control-*.jsonl"))
    lines += engine_split_section(read_lines(args.results, "*/parity-*.jsonl"))
    lines += cpu_section(parity)
    lines += gc_section(gc_rows)
    lines += overhead_section(read_lines(args.results, "overhead-*.jsonl"))
    lines += routing_section(read_lines(args.results, "routing-*.jsonl"), args.results)
    lines += kvpressure_section(read_lines(args.results, "kvpressure-*.jsonl"), args.results)
    lines += payload_section(read_lines(args.results, "payload-*.json"))
    notes = args.results / "notes.md"
    if notes.exists():
        lines += ["## Notes on these runs", "", notes.read_text().strip(), ""]
    (HERE / "README.md").write_text("\n".join(lines) + "\n")
    print(HERE / "README.md")


if __name__ == "__main__":
    main()
