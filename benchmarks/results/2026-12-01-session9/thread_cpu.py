"""CPU per thread of each prefixq worker through one burst (a one-off tool of session 9, kept
with its output; not part of the harness).

    PYTHONPATH=<checkout> python thread_cpu.py noreuse-64

Two fresh workers on a private redis-server, a warm-up, then the burst. py-spy names each
worker's Python threads (by native id; other threads show their kernel name in brackets), and
/proc/<pid>/task/<tid>/schedstat gives each thread's run time (ns) and number of time slices
before and after the burst. Prints, per worker: [CPU seconds, thread, time slices].
"""
import os, re, subprocess, sys, tempfile, time, json
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from benchmarks.routing import Prefixq
from benchmarks.workloads import load_items

def thread_cpu(pid):
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except FileNotFoundError:
            continue
        comm = stat[stat.index("(") + 1: stat.rindex(")")]
        run_ns, _, slices = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
        out[int(tid)] = (comm, int(run_ns) / 1e9, int(slices))
    return out

def names(pid):
    text = subprocess.run(["py-spy", "dump", "--pid", str(pid)], capture_output=True, text=True).stdout
    return {int(m.group(1)): m.group(2) for m in re.finditer(r'Thread (\d+) \(\w+\): "([^"]*)"', text)}

def main():
    burst = sys.argv[1]
    items = load_items(burst, max_tokens=32, temperature=0.0)
    with tempfile.TemporaryDirectory() as logs, Prefixq(Path(logs)) as system:  # started and warmed
        pids = system.worker_pids
        named = {pid: names(pid) for pid in pids}
        before = {pid: thread_cpu(pid) for pid in pids}
        t0 = time.time()
        system.client.submit_many(items).wait(timeout=3600)
        dt = time.time() - t0
        after = {pid: thread_cpu(pid) for pid in pids}
        named2 = {pid: names(pid) for pid in pids}
    print(json.dumps({"burst": burst, "seconds": round(dt, 2)}))
    for pid in pids:
        rows = []
        for tid, (comm, cpu, slices) in after[pid].items():
            d = cpu - before[pid].get(tid, (comm, 0.0, 0))[1]
            num_slices = slices - before[pid].get(tid, (comm, 0.0, 0))[2]
            name = named[pid].get(tid) or named2[pid].get(tid) or f"[{comm}]"
            rows.append((round(d, 4), name, num_slices))
        rows.sort(reverse=True)
        print(pid, "total", round(sum(r[0] for r in rows), 3), json.dumps([r for r in rows if r[0] > 0.0005]))

if __name__ == "__main__":
    main()
