"""Pure matmul speed of one pinned core over time, in 5-s windows (a tool of session 11: how much
this machine's cores vary with nothing else running).  python speed.py CORE SECONDS WINDOW_S"""
import os, sys, time, torch
core = int(sys.argv[1]); dur = float(sys.argv[2]); chunk = float(sys.argv[3])
os.sched_setaffinity(0, {core}); torch.set_num_threads(1)
a = torch.randn(2048, 576); b = torch.randn(576, 1536)
end = time.time() + dur
while time.time() < end:
    t0 = time.time(); n = 0; c0 = time.process_time()
    while time.time() - t0 < chunk:
        torch.mm(a, b); n += 1
    dt = time.time() - t0; dc = time.process_time() - c0
    print(f"{time.strftime('%H:%M:%S')} core{core} {n*2*2048*576*1536/dt/1e9:.1f} GFLOP/s wall, {n*2*2048*576*1536/dc/1e9:.1f} per cpu-s", flush=True)
