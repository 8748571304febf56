"""Profile both prefixq workers through one burst: py-spy attached to each worker after warm-up,
stopped after the last result. A one-off tool of session 8, kept with its output; not part of
the harness.

    PYTHONPATH=. python benchmarks/results/2026-11-30-session8/profile_burst.py noreuse-64 OUT_DIR
"""
import os, signal, subprocess, sys, tempfile, time, json
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from benchmarks.routing import Prefixq
from benchmarks.workloads import load_items
from benchmarks.overhead import profile_report

def main():
    burst, out = sys.argv[1], Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    items = load_items(burst, max_tokens=32, temperature=0.0)
    with tempfile.TemporaryDirectory() as logs, Prefixq(Path(logs)) as system:  # started and warmed
        spies = [subprocess.Popen(["py-spy", "record", "--nonblocking", "--threads", "--rate", "100",
                                   "-f", "raw", "-o", str(out / f"{w.shard}.raw"), "--pid", str(w.proc.pid)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for w in system.workers]
        time.sleep(1.0)
        t0 = time.time()
        system.client.submit_many(items).wait(timeout=3600)
        print("burst_s", round(time.time() - t0, 2))
        for spy in spies:
            spy.send_signal(signal.SIGINT)
        for spy in spies:
            spy.wait(timeout=120)
    for shard in ("gpu0", "gpu1"):
        rep = profile_report(out / f"{shard}.raw", top=30)
        print(shard, json.dumps(rep["cumulative"], indent=0))

if __name__ == "__main__":
    main()
