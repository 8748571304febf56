# Session 41 (2026-12-06): commands in the order they ran. Machine: lscpu.txt (Intel Xeon,
# family 6 model 167, AVX-512 and AMX, the kind of sessions 21, 26, 30, 33, 36 and 38);
# python -m timeit -n 20 "sum(range(10**6))": 11.4 ms at the start and 11.0 ms after the second queue.
# All runs at 221ace4 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one chained shell script ran the sets back to back (each started
# when the one before had ended), with the test suite between the two queues.
D=benchmarks/results/2026-12-06-session41
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 703 s), and, from the same chained script, a second queue:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --control --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# GC, each worker's costliest collection after start-up, over every prefixq run of the session
# (session 35's gcsum.py):
python benchmarks/results/2026-12-05-session35/gcsum.py $D/parity-*.jsonl
# Which run of a pair was the slower, over every pair of the session (session 33's position.py):
python benchmarks/results/2026-12-05-session33/position.py $D/*-steps.jsonl | tail -1
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-41 (session 40's
# lists with this session's added); then the models' CPU over the same files; then this
# session alone (written to spread.txt):
R=benchmarks/results
S30=$R/2026-12-05-session30
S31=$R/2026-12-05-session31
S33=$R/2026-12-05-session33
S34=$R/2026-12-05-session34
S35=$R/2026-12-05-session35
S36=$R/2026-12-05-session36
S37=$R/2026-12-05-session37
S38=$R/2026-12-05-session38
S39=$R/2026-12-06-session39
S40=$R/2026-12-06-session40
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $S31/control-noreuse-steps.jsonl $S33/control-noreuse{,-reversed}-steps.jsonl $S34/control-noreuse-steps.jsonl
  $S35/control-noreuse-steps.jsonl $S36/control-{noreuse,reuse}-steps.jsonl $S37/control-{noreuse,reuse}-steps.jsonl $S38/control-{noreuse,reuse}-steps.jsonl
  $S39/control-{noreuse,noreuse-2,reuse}-steps.jsonl
  $S40/control-{noreuse,reuse,reuse-2}-steps.jsonl
  $D/control-{noreuse,reuse}-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[3-6]-session{2[2-9],3[0-9],4[01]}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl)
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $D/control-{noreuse,reuse}-steps.jsonl --parity $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl)
python benchmarks/results/2026-12-04-session26/stepspeed.py $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl) | tail -4
} | tee $D/spread.txt
# Uplift, session by session and pooled (sessions 23-41):
PYTHONPATH=. python $S34/uplift_pooled.py | tee $D/uplift.txt
# Decode steps before and after a shard's first request finished, prefixq and the A/A control
# against the baseline, every paired run with step traces of sessions 22-41 (new this session),
# and the prompt steps' time per token the same way:
PYTHONPATH=. python $D/decphase.py --by-session | tee $D/decphase.txt
python -m benchmarks.report
# After the records commit: the workers' lookahead on (3) and off (0), 4 rounds of fresh
# noreuse-64 runs in rotation with step traces, then a parity set with the lookahead off (not in
# the pooled lists above):
HF_HUB_OFFLINE=1 PYTHONPATH=. python $D/larotation.py noreuse-64 4 $D/larotation-noreuse-steps.jsonl
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/larotation-noreuse-steps.jsonl
PREFIXQ_LOOKAHEAD_STEPS=0 HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-la0-steps.jsonl
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-noreuse-la0-steps.jsonl
# After the review commit, a second rotation the same way:
HF_HUB_OFFLINE=1 PYTHONPATH=. python $D/larotation.py noreuse-64 4 $D/larotation-noreuse-2-steps.jsonl
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/larotation-noreuse-steps.jsonl $D/larotation-noreuse-2-steps.jsonl
