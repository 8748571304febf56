"""Fresh runs rotating several systems: standalone and prefixq variants (env overrides).
    PYTHONPATH=. python abc.py BURST ROUNDS name:KEY=VAL,KEY=VAL ...   (name 'standalone' or 'prefixq...')"""
import json, os, sys, tempfile, time
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
def main():
    burst, rounds = sys.argv[1], int(sys.argv[2])
    variants = []
    for spec in sys.argv[3:]:
        name, _, envs = spec.partition(":")
        variants.append((name, dict(kv.split("=", 1) for kv in envs.split(",") if kv)))
    from benchmarks.standalone import run_standalone
    from benchmarks.routing import run as run_prefixq
    from benchmarks.workloads import load_items
    items = load_items(burst, max_tokens=32, temperature=0.0)
    sampling = {"max_tokens": 32, "temperature": 0.0}
    for r in range(rounds):
        order = variants[r % len(variants):] + variants[:r % len(variants)]
        for name, extra in order:
            saved = {k: os.environ.get(k) for k in extra}
            os.environ.update(extra)
            try:
                if name.startswith("standalone"):
                    rec = run_standalone(items, sampling)
                else:
                    with tempfile.TemporaryDirectory() as logs:
                        rec = run_prefixq(burst, "affinity", 32, Path(logs))
            finally:
                for k, v in saved.items():
                    if v is None: os.environ.pop(k, None)
                    else: os.environ[k] = v
            print(json.dumps({"round": r, "variant": name, "extra": extra, "seconds": rec["seconds"],
                              "cpu": rec["cpu_s"], "pre": rec["engine_preempted"],
                              "t": time.strftime("%H:%M:%S")}), flush=True)
if __name__ == "__main__":
    main()
