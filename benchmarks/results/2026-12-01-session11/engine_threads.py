"""Per-thread CPU and context switches of every process of one system through one burst.

    PYTHONPATH=<checkout> python engine_threads.py standalone|prefixq noreuse-64 [runs]

Starts the system (resident: engines up, warmed), then for each run resets prefix caches and
runs the burst; reads /proc/<pid>/task/<tid>/{stat,status,schedstat} of the system's processes
and all their descendants just before the clock and just after the burst. Prints per
(process name, thread name): CPU seconds, time slices, voluntary and involuntary switches.
"""
import json, os, sys, tempfile, time
from collections import defaultdict
from pathlib import Path
os.environ.setdefault("HF_HUB_OFFLINE", "1")
import psutil


def snapshot(root_pids):
    out = {}
    procs = []
    for pid in root_pids:
        try:
            p = psutil.Process(pid)
            procs.append(p)
            procs.extend(p.children(recursive=True))
        except psutil.NoSuchProcess:
            pass
    for p in procs:
        try:
            pname = p.name()
        except psutil.NoSuchProcess:
            continue
        for tid in os.listdir(f"/proc/{p.pid}/task"):
            base = f"/proc/{p.pid}/task/{tid}"
            try:
                stat = Path(base + "/stat").read_text()
                comm = stat[stat.index("(") + 1: stat.rindex(")")]
                run_ns, _, slices = Path(base + "/schedstat").read_text().split()
                status = Path(base + "/status").read_text()
            except (FileNotFoundError, ProcessLookupError):
                continue
            vol = int(status.split("voluntary_ctxt_switches:")[1].split()[0])
            invol = int(status.split("nonvoluntary_ctxt_switches:")[1].split()[0])
            cpus = status.split("Cpus_allowed_list:")[1].split()[0]
            out[(p.pid, int(tid))] = (pname, comm, int(run_ns) / 1e9, int(slices), vol, invol, cpus)
    return out


def diff(before, after):
    rows = defaultdict(lambda: [0.0, 0, 0, 0, 0, set()])
    for key, (pname, comm, cpu, sl, vol, invol, cpus) in after.items():
        b = before.get(key, (pname, comm, 0.0, 0, 0, 0, cpus))
        r = rows[(pname, comm)]
        r[0] += cpu - b[2]; r[1] += sl - b[3]; r[2] += vol - b[4]; r[3] += invol - b[5]; r[4] += 1
        r[5].add(cpus)
    return rows


def main():
    system, burst = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    from benchmarks.workloads import load_items
    items = load_items(burst, max_tokens=32, temperature=0.0)
    sampling = {"max_tokens": 32, "temperature": 0.0}
    snaps = {}
    if system == "standalone":
        from benchmarks.standalone import Standalone
        ctx = Standalone()
    else:
        from benchmarks.routing import Prefixq
        logs = tempfile.mkdtemp()
        ctx = Prefixq(Path(logs))
    with ctx as s:
        for i in range(runs):
            roots = s.pids
            def before():
                time.sleep(3)  # let vLLM's post-step spin end
                snaps["before"] = snapshot(roots)
            if system == "standalone":
                rec = s.run(items, sampling, before_clock=before)
            else:
                rec = s.run(burst, "affinity", 32, before_clock=before)
            after = snapshot(roots)
            rows = diff(snaps["before"], after)
            print(json.dumps({"system": system, "run": i, "seconds": rec["seconds"]}))
            tot = 0.0
            for (pname, comm), (cpu, sl, vol, invol, n, cpus) in sorted(rows.items(), key=lambda kv: -kv[1][0]):
                tot += cpu
                if cpu > 0.005 or invol > 100:
                    print(f"  {pname:20s} {comm:18s} n={n:2d} cpu={cpu:8.3f}s slices={sl:7d} vol={vol:7d} invol={invol:7d} cpus={sorted(cpus)}")
            print(f"  total cpu {tot:.2f}s", flush=True)


if __name__ == "__main__":
    main()
