"""What one wake-up costs a thread on this machine (a one-off tool of session 9).

    redis-server --port 6399 --save "" --daemonize yes
    PYTHONPATH=<checkout> python wake_cost.py redis://127.0.0.1:6399/0 0.2 10

Run time of the calling thread (schedstat, ns) per call: a BLMOVE and a BLPOP that time out,
a time.sleep, a PING.
"""
import time, os, sys, threading, socket
from redis import Redis
def run_ns():
    return int(open(f"/proc/self/task/{threading.get_native_id()}/schedstat").read().split()[0])
redis = Redis.from_url(sys.argv[1]); redis.ping()
n = int(sys.argv[3]); t = float(sys.argv[2])
for label, fn in [("blmove", lambda: redis.blmove("a", "b", t, "LEFT", "RIGHT")),
                  ("blpop", lambda: redis.blpop(["a"], t)),
                  ("sleep", lambda: time.sleep(t)),
                  ("ping", lambda: redis.ping())]:
    c = run_ns()
    for _ in range(n): fn()
    print(label, t, "run us", (run_ns() - c) / n / 1e3)
