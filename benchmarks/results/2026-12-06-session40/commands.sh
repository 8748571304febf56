# Session 40 (2026-12-06): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 17, AVX-512, the kind of sessions 35 and 37);
# python -m timeit -n 20 "sum(range(10**6))": 12.4 ms at the start and after the second queue.
# All runs at eeb5af5 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one chained shell script ran the sets back to back (each started
# when the one before had ended), with the test suite between the two queues; the second A/A
# reuse-256 set ran on its own after the records commit.
D=benchmarks/results/2026-12-06-session40
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 823 s), and, from the same chained script, a second queue:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --control --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# GC, each worker's costliest collection after start-up, over every prefixq run of the session
# (session 35's gcsum.py):
python benchmarks/results/2026-12-05-session35/gcsum.py $D/parity-*.jsonl
# Which run of a pair was the slower, over every pair of the session (session 33's position.py;
# run again with the second A/A reuse-256 set: 40 pairs):
python benchmarks/results/2026-12-05-session33/position.py $D/*-steps.jsonl | tail -1
# (The pooled block below was run again after the second A/A reuse-256 set at the end, with
# that set in the lists; spread.txt and uplift.txt are from that second run.)
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-40 (session 39's
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
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $S31/control-noreuse-steps.jsonl $S33/control-noreuse{,-reversed}-steps.jsonl $S34/control-noreuse-steps.jsonl
  $S35/control-noreuse-steps.jsonl $S36/control-{noreuse,reuse}-steps.jsonl $S37/control-{noreuse,reuse}-steps.jsonl $S38/control-{noreuse,reuse}-steps.jsonl
  $S39/control-{noreuse,noreuse-2,reuse}-steps.jsonl
  $D/control-{noreuse,reuse,reuse-2}-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[3-6]-session{2[2-9],3[0-9],40}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl)
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $D/control-{noreuse,reuse,reuse-2}-steps.jsonl --parity $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl)
python benchmarks/results/2026-12-04-session26/stepspeed.py $(ls $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl) | tail -4
} | tee $D/spread.txt
# Uplift, session by session and pooled (sessions 23-40):
PYTHONPATH=. python $S34/uplift_pooled.py | tee $D/uplift.txt
python -m benchmarks.report
# After the records commit, a second A/A set on reuse-256 (the first had the control the faster
# by 2.8-4.3% in three pairs); then the pooled block above again, with it in the lists, and the
# report:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --control --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/control-reuse-2-steps.jsonl
python -m benchmarks.report
