"""Fresh runs of several systems in rotation, each run's full record appended to a file.

    PYTHONPATH=. python benchmarks/results/2026-12-02-session16/rotation.py BURST ROUNDS OUT \
        standalone prefixq prefixq-kvoff:PREFIXQ_KV_EVENTS=off ...

A variant is ``name[:KEY=VAL,...]``; a name starting with ``standalone`` runs the baseline, any
other prefixq, with the variables set for that run only. Round ``r`` starts at variant ``r``
(mod the number of variants), so each variant runs in every position once the rounds wrap.
Engine steps are recorded (``PREFIXQ_STEP_TRACE``) for every run.
"""
import os
import sys
import tempfile
from pathlib import Path
from unittest import mock

from benchmarks.report import emit, new_set
from benchmarks.routing import run as run_prefixq
from benchmarks.standalone import run_standalone
from benchmarks.workloads import load_items
from common.config import env_var


def parse(spec: str) -> tuple[str, dict[str, str]]:
    name, _, assignments = spec.partition(":")
    return name, dict(a.split("=", 1) for a in assignments.split(",") if a)


def one_run(burst: str, name: str, env: dict[str, str]) -> dict:
    with mock.patch.dict(os.environ, env):
        if name.startswith("standalone"):
            return run_standalone(load_items(burst, max_tokens=32, temperature=0.0),
                                  {"max_tokens": 32, "temperature": 0.0})
        with tempfile.TemporaryDirectory(prefix="prefixq-rotation-") as logs:
            return run_prefixq(burst, "affinity", 32, Path(logs))


def main() -> None:
    burst, rounds, out, *specs = sys.argv[1:]
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ[env_var("step_trace")] = "1"
    variants, run_set = [parse(s) for s in specs], new_set()
    for r in range(int(rounds)):
        for position, (name, env) in enumerate(variants[r % len(variants):] + variants[:r % len(variants)]):
            record = one_run(burst, name, env)
            emit({"burst": burst, "round": r, "position": position, "set": run_set, **record,
                  "system": name, "env": env}, Path(out))


if __name__ == "__main__":
    main()
