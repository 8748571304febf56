"""Standalone vLLM with and without its queue readers' busy-wait, fresh runs in rotation.

    PYTHONPATH=benchmarks/results/2026-12-07-session48/spin:. \
        python benchmarks/results/2026-12-07-session48/spinrotation.py BURST ROUNDS OUT VALUE...
    PYTHONPATH=. python benchmarks/results/2026-12-07-session48/spinrotation.py summary OUT

Each VALUE is a ``busy_loop_s`` for vLLM's shared-memory queue readers (``spin/sitecustomize.py``
sets it in every process started with ``EXPERIMENT_VLLM_BUSY_LOOP_S``), or ``default`` for
vLLM's own (1 s). Round r runs the values in the given order turned left by r. Each run is the
baseline as ``benchmarks.parity`` runs it (fresh engines, step traces), appended to OUT with
``system`` "standalone" (default) or "standalone-spinVALUE", ``round`` and ``settings``
(session 42's rotsum.py reads such files). ``summary`` prints, per round and run, the seconds, the
engine-core and model processes' CPU, the model processes' preemptions, and each variant's
seconds and model CPU over the default's in the same round.
"""

import json
import os
import statistics
import sys
from pathlib import Path

from benchmarks.standalone import run_standalone
from benchmarks.workloads import load_items
from common.config import env_var

MAX_TOKENS = 32  # benchmarks.parity's default
VAR = "EXPERIMENT_VLLM_BUSY_LOOP_S"

def summary(path: Path) -> None:
    rounds: dict[int, dict[str, dict]] = {}
    for line in path.open():
        record = json.loads(line)
        rounds.setdefault(record["round"], {})[record["system"]] = record
    quotients: dict[str, list[tuple[float, float]]] = {}
    for r, runs in sorted(rounds.items()):
        for system, record in runs.items():
            cpu = record["engine_cpu_by_process"]
            preempted = record["engine_preempted"].get("VLLM::Worker", 0)
            print(f"round {r} {system:22} {record['seconds']:7.2f} s"
                  f"  engine core {cpu.get('VLLM::EngineCore', 0):5.2f} s"
                  f"  model {cpu.get('VLLM::Worker', 0):7.2f} s  model preempted {preempted}")
            if system != "standalone" and "standalone" in runs:
                base = runs["standalone"]
                quotients.setdefault(system, []).append(
                    (record["seconds"] / base["seconds"],
                     cpu["VLLM::Worker"] / base["engine_cpu_by_process"]["VLLM::Worker"]))
    for system, q in quotients.items():
        print(f"{system} over standalone, {len(q)} rounds: seconds median {statistics.median(s for s, _ in q):.4f} "
              f"(faster in {sum(s < 1 for s, _ in q)}), model CPU median {statistics.median(c for _, c in q):.4f}")


if __name__ == "__main__" and sys.argv[1] == "summary":
    summary(Path(sys.argv[2]))
elif __name__ == "__main__":
    burst, rounds, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    values = sys.argv[4:]
    os.environ[env_var("step_trace")] = "1"
    items = load_items(burst, max_tokens=MAX_TOKENS, temperature=0.0)
    for r in range(rounds):
        turn = r % len(values)
        for value in values[turn:] + values[:turn]:
            os.environ.pop(VAR, None)
            settings = {} if value == "default" else {VAR: value}
            os.environ.update(settings)
            record = run_standalone(items, {"max_tokens": MAX_TOKENS, "temperature": 0.0})
            system = "standalone" if value == "default" else f"standalone-spin{value}"
            record = {**record, "burst": burst, "system": system, "round": r, "settings": settings}
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(system, r, record["seconds"], record["engine_cpu_by_process"], flush=True)
