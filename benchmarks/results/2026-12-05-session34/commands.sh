# Session 34 (2026-12-05): commands in the order they ran. Machine: lscpu.txt (Intel, family 6
# model 207); python -m timeit -n 20 "sum(range(10**6))": 14.6 ms.
D=benchmarks/results/2026-12-05-session34
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
# (alongside, started a minute after it: python $D/ctxsample.py PID_OF_THAT_RUN ctx-rr.jsonl, which
# reads every thread's context switches and CPU in its process tree every 5 s; gzipped afterwards)
# Experiment, not kept: SCHED_IDLE for torch's gloo loops. With idle-gloo.patch applied (git apply),
# A = as is (the gloo loops idle), B = off; standalone only. Per-thread context switches were
# sampled meanwhile by ctxsample.py (python ctxsample.py PID_OF_THE_RUN OUT.jsonl).
PYTHONPATH=. python benchmarks/results/2026-12-01-session11/ab_standalone.py noreuse-64 4 PREFIXQ_IDLE_ENGINE_THREADS= | grep '^{' > $D/ab-idle-gloo-noreuse.jsonl
git checkout common/config.py worker/engines.py
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# Operator's error: the next set (reuse-256, -2-) was started at 12:43:39 while the set above was
# still in its last pair; it was killed at 12:44:10, during pair 3's standalone run. Pair 3's two
# records were moved out of parity-noreuse-2-steps.jsonl into
# disturbed-parity-noreuse-2-pair3.jsonl (ratio 1.1476, not counted anywhere).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# machine check after the overhead runs (13:12): timeit 18.1 ms (14.6 ms at 11:31); python -m timeit -s 'import os' 'os.getppid()': 204 ns a system call; redis-benchmark -q -n 50000 -t ping,set,get: 91,575 / 95,785 / 98,231 requests/s
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-34 (session 33's
# lists with this session's added); then the models' CPU over the same files; then this
# session alone (written to spread.txt):
R=benchmarks/results
S30=$R/2026-12-05-session30
S31=$R/2026-12-05-session31
S33=$R/2026-12-05-session33
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $S31/control-noreuse-steps.jsonl $S33/control-noreuse{,-reversed}-steps.jsonl $D/control-noreuse-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[345]-session{2[2-9],3[01234]}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl)
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --parity $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl)
} | tee $D/spread.txt
# Uplift, session by session and pooled (sessions 23-34):
PYTHONPATH=. python $D/uplift_pooled.py | tee $D/uplift.txt
# Wake-ups per thread name, from the samples taken during the round-robin set and the A/B:
(cd $D && python ctxrates.py ctx-rr.jsonl.gz > ctx-rr.txt && python ctxrates.py ctx-ab.jsonl.gz ab-idle-gloo-noreuse.jsonl > ctx-ab.txt)
python -m benchmarks.report
