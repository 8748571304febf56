"""Fresh standalone runs alternating two environments: A (as is) and B (extra env).
    PYTHONPATH=. python ab_standalone.py noreuse-64 ROUNDS KEY=VAL [KEY=VAL ...]"""
import json, os, sys, time
os.environ.setdefault("HF_HUB_OFFLINE", "1")
def main():
    burst, rounds = sys.argv[1], int(sys.argv[2])
    extra = dict(kv.split("=", 1) for kv in sys.argv[3:])
    from benchmarks.standalone import run_standalone
    from benchmarks.workloads import load_items
    items = load_items(burst, max_tokens=32, temperature=0.0)
    sampling = {"max_tokens": 32, "temperature": 0.0}
    for r in range(rounds):
        for variant in (("A", "B") if r % 2 == 0 else ("B", "A")):
            saved = {k: os.environ.get(k) for k in extra}
            if variant == "B":
                os.environ.update(extra)
            try:
                rec = run_standalone(items, sampling)
            finally:
                for k, v in saved.items():
                    if v is None: os.environ.pop(k, None)
                    else: os.environ[k] = v
            print(json.dumps({"round": r, "variant": variant, "extra": extra if variant == "B" else {},
                              "seconds": rec["seconds"], "cpu": rec["cpu_s"], "pre": rec["engine_preempted"],
                              "t": time.strftime("%H:%M:%S")}), flush=True)
if __name__ == "__main__":
    main()
