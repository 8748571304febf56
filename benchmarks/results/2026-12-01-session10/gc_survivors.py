"""Which objects a worker's middle-generation collections walk during one burst (session 10 tool).
    GCDIAG_DIR=/tmp/gcdiag PYTHONPATH=<checkout>:<this folder>/gcdiag python gc_survivors.py reuse-256
The census is taken inside the collection (gcdiag/sitecustomize.py), which slows it a lot:
the pause figures of such a run say nothing."""
import json, os, sys, tempfile
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from benchmarks.routing import Prefixq
out = Path(os.environ["GCDIAG_DIR"])
out.mkdir(exist_ok=True)
for f in out.glob("*.jsonl"):
    f.unlink()
with tempfile.TemporaryDirectory() as logs, Prefixq(Path(logs)) as system:
    pids = system.worker_pids
    for f in out.glob("*.jsonl"):
        f.unlink()  # start-up and warm-up collections
    record = system.run(sys.argv[1], "affinity", 32)
    print("burst", record["seconds"], "s")
for pid in pids:
    f = out / f"{pid}.jsonl"
    if not f.exists():
        print("worker", pid, "no middle/full collection")
        continue
    for line in f.read_text().splitlines():
        r = json.loads(line)
        print("worker", pid, "gen", r["gen"], "objects", r["objects"], "list items", r["list_items"],
              "cpu ms (diag on)", r["cpu_ms"], "collected", r["collected"])
        for name, n in r["top"][:15]:
            print("   ", n, name)
print("gc per worker:", system.gc_per_worker)
