# Session 43 (2026-12-06): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 26 model 2, AVX-512 with BF16 and VNNI: a kind no earlier session had);
# python -m timeit -n 20 "sum(range(10**6))": 9.5 ms at the start, 9.97 ms after the last benchmark.
# All runs at c844db7 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; chained shell scripts ran the sets back to back (each started when
# the one before had ended), with the test suite after the first three sets.
D=benchmarks/results/2026-12-06-session43
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 718 s), then:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# prefixq's defaults, stealing off (lookahead kept) and the lookahead off (which also turns
# stealing off), 4 rounds of fresh noreuse-64 runs in rotation with step traces (session 42's rotation.py):
HF_HUB_OFFLINE=1 PYTHONPATH=. python benchmarks/results/2026-12-06-session42/rotation.py noreuse-64 4 $D/rotation-noreuse-steps.jsonl base nosteal:steal=0 la0:lookahead_steps=0
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-4-steps.jsonl
# Each pair of every set (session 22's pairs.py):
for f in $D/parity-*-steps.jsonl $D/control-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
# The rotation's rounds, alone and pooled with sessions 41-42's rotations (session 42's rotsum.py),
# and its steps' speed:
S=benchmarks/results
python $S/2026-12-06-session42/rotsum.py $D/rotation-noreuse-steps.jsonl
python $S/2026-12-06-session42/rotsum.py $S/2026-12-06-session41/larotation-noreuse-steps.jsonl $S/2026-12-06-session41/larotation-noreuse-2-steps.jsonl $S/2026-12-06-session42/rotation-noreuse-steps.jsonl $S/2026-12-06-session42/rotation-noreuse-2-steps.jsonl $D/rotation-noreuse-steps.jsonl | tee $D/rotsum.txt
python $S/2026-12-04-session26/stepspeed.py $D/rotation-noreuse-steps.jsonl | tail -5
# GC, each worker's costliest collection after start-up, over every prefixq run of the session
# (session 35's gcsum.py):
python benchmarks/results/2026-12-05-session35/gcsum.py $D/parity-*.jsonl
# Which run of a pair was the slower, over every parity pair of the session (session 33's position.py; the rotations have no pairs):
python benchmarks/results/2026-12-05-session33/position.py $D/parity-*-steps.jsonl | tail -1
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-43 (session 42's
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
S41=$R/2026-12-06-session41
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $S31/control-noreuse-steps.jsonl $S33/control-noreuse{,-reversed}-steps.jsonl $S34/control-noreuse-steps.jsonl
  $S35/control-noreuse-steps.jsonl $S36/control-{noreuse,reuse}-steps.jsonl $S37/control-{noreuse,reuse}-steps.jsonl $S38/control-{noreuse,reuse}-steps.jsonl
  $S39/control-{noreuse,noreuse-2,reuse}-steps.jsonl
  $S40/control-{noreuse,reuse,reuse-2}-steps.jsonl
  $S41/control-{noreuse,reuse}-steps.jsonl
  $D/control-{noreuse,reuse}-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[3-6]-session{2[2-9],3[0-9],4[0-3]}/parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $(ls $D/parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl 2>/dev/null)
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $D/control-{noreuse,reuse}-steps.jsonl --parity $(ls $D/parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl 2>/dev/null)
python benchmarks/results/2026-12-04-session26/stepspeed.py $(ls $D/parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl 2>/dev/null) | tail -4
} | tee $D/spread.txt
# (The same, without the hand-kept lists, added in the review: bash $D/pooled.sh $D 43 | tee $D/spread.txt
# prints this file byte for byte, and sessions 40-42's spread.txt for their folders.)
# Uplift, session by session and pooled (sessions 23-43):
PYTHONPATH=. python $S34/uplift_pooled.py | tee $D/uplift.txt
# Decode steps before and after a shard's first request finished, prefixq and the A/A control
# against the baseline, every paired run with step traces of sessions 22-43 (session 41's script),
# and the prompt steps' time per token the same way:
PYTHONPATH=. python $S41/decphase.py --by-session --last-session 43 | tee $D/decphase.txt
python -m benchmarks.report
# After the records commit: a parity set with stealing off (the lookahead kept; not in the pooled lists above):
PREFIXQ_STEAL=0 HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-nosteal-steps.jsonl
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-noreuse-nosteal-steps.jsonl
