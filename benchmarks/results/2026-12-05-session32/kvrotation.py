"""prefixq with its engines' KV-cache events on and off, fresh runs in rotation, step traces kept.

    PYTHONPATH=. python benchmarks/results/2026-12-05-session32/kvrotation.py BURST ROUNDS OUT

Round r runs events on then off (even r) or off then on (odd r); each run's whole record is
appended to OUT, ``system`` "prefixq" or "prefixq-kvoff" (for stepspeed.py of session 26).
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
        for events in ((True, False) if r % 2 == 0 else (False, True)):
            os.environ[env_var("kv_events")] = "on" if events else "off"
            with tempfile.TemporaryDirectory(prefix="prefixq-kvrotation-") as logs:
                record = run_prefixq(burst, "affinity", 32, Path(logs))
            record = {**record, "system": "prefixq" if events else "prefixq-kvoff", "round": r}
            assert record["kv_events"] is events, record["kv_events"]
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(record["system"], r, record["seconds"], flush=True)
