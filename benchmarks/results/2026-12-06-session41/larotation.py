"""prefixq with the workers' lookahead at its default (3 steps) and off (0), fresh runs in
rotation, step traces kept.

    PYTHONPATH=. python benchmarks/results/2026-12-06-session41/larotation.py BURST ROUNDS OUT

With the lookahead off a worker hands its engine everything it pulls (up to the in-flight
bound), as the baseline's client does; with it, it admits over the prompt steps. Round r runs
3 then 0 (even r) or 0 then 3 (odd r); each run's record is appended to OUT with ``system``
"prefixq" or "prefixq-la0" and ``round`` (session 26's stepspeed.py reads it).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

from benchmarks.routing import run as run_prefixq
from common.config import env_var

if __name__ == "__main__":
    burst, rounds, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    os.environ[env_var("step_trace")] = "1"
    for r in range(rounds):
        for steps in (("3", "0") if r % 2 == 0 else ("0", "3")):
            os.environ[env_var("lookahead_steps")] = steps
            with tempfile.TemporaryDirectory(prefix="prefixq-larotation-") as logs:
                record = run_prefixq(burst, "affinity", 32, Path(logs))
            record = {**record, "system": "prefixq" if steps == "3" else "prefixq-la0", "round": r}
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(record["system"], r, record["seconds"], flush=True)
