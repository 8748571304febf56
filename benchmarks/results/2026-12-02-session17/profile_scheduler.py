"""Where vLLM's scheduler processes (``VLLM::EngineCore``) spend their CPU during one burst of
prefixq or of standalone vLLM: py-spy samples every thread of both engines' scheduler processes
while the burst runs.

    PYTHONPATH=. python benchmarks/results/2026-12-02-session17/profile_scheduler.py prefixq|standalone BURST OUT_PREFIX

A diagnostic, not a measurement: sampling costs CPU, so the burst's time means nothing. Writes
``OUT_PREFIX-<pid>.txt`` (py-spy's raw, collapsed stacks, one line per stack with its sample
count, thread names included) and prints the burst's CPU split by process.
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import psutil

from benchmarks.routing import Prefixq
from benchmarks.standalone import Standalone
from benchmarks.workloads import load_items


def main() -> None:
    which, burst, prefix = sys.argv[1:4]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with tempfile.TemporaryDirectory(prefix="prefixq-profile-") as logs, \
            (Prefixq(Path(logs)) if which == "prefixq" else Standalone()) as system:
        roots = system.worker_pids if which == "prefixq" else system.pids
        schedulers = [child.pid for pid in roots for child in psutil.Process(pid).children(recursive=True)
                      if child.name() == "VLLM::EngineCore"]
        samplers = []

        def start_sampling() -> None:
            for pid in schedulers:
                samplers.append(subprocess.Popen(
                    ["py-spy", "record", "--pid", str(pid), "--rate", "100", "--threads",
                     "--nonblocking", "--format", "raw", "--output", f"{prefix}-{pid}.txt"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        if which == "prefixq":
            record = system.run(burst, "affinity", 32, before_clock=start_sampling)
        else:
            record = system.run(load_items(burst, max_tokens=32, temperature=0.0),
                                {"max_tokens": 32, "temperature": 0.0}, before_clock=start_sampling)
        for sampler in samplers:
            sampler.send_signal(2)  # SIGINT: py-spy writes what it has
            sampler.wait(timeout=60)
    print(json.dumps({k: record[k] for k in ("seconds", "cpu_s", "engine_cpu_by_process")}))


if __name__ == "__main__":
    main()
