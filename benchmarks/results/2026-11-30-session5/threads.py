"""CPU per thread of some processes (and their children) over an interval: python threads.py SECONDS PID..."""
import os, re, sys, time
import psutil
def snap(pids):
    out = {}
    for pid in pids:
        try:
            procs = [psutil.Process(pid)] + psutil.Process(pid).children(recursive=True)
        except psutil.NoSuchProcess:
            continue
        for p in procs:
            for tid in os.listdir(f"/proc/{p.pid}/task"):
                try:
                    stat = open(f"/proc/{p.pid}/task/{tid}/stat").read()
                    comm = open(f"/proc/{p.pid}/task/{tid}/comm").read().strip()
                except OSError:
                    continue
                fields = stat.rsplit(")", 1)[1].split()
                out[(p.pid, int(tid))] = (p.name(), comm, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"))
    return out
secs = float(sys.argv[1]); pids = [int(x) for x in sys.argv[2:]]
a = snap(pids); time.sleep(secs); b = snap(pids)
rows = sorted(((v[2] - a.get(k, (0, 0, 0))[2], k, v) for k, v in b.items()), reverse=True)
from collections import defaultdict
groups = defaultdict(lambda: [0.0, 0])
for d, k, v in rows:
    g = groups[(v[0], re.sub(r"[_-]?\d+$", "", v[1]))]; g[0] += d; g[1] += 1
for (proc, thread), (d, n) in sorted(groups.items(), key=lambda x: -x[1][0]):
    if d > 0:
        print(f"{d:7.2f}s  {proc} / {thread} (x{n})")
