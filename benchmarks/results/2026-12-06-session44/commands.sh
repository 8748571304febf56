# Session 44 (2026-12-06): commands in the order they ran. Machine: lscpu.txt (Intel Xeon,
# family 6 model 167, AVX-512 and AMX: the kind of sessions 21, 26, 30, 33, 36, 38 and 41);
# python -m timeit -n 20 "sum(range(10**6))": 11.2 ms at the start, 11.5 ms after the third noreuse-64 set, 12.4 ms after the last benchmark.
# All runs at 78949c9 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; chained shell scripts ran the sets back to back (each started when
# the one before had ended), with the test suite after the first three sets.
D=benchmarks/results/2026-12-06-session44
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 766 s), then the baseline, prefixq's
# defaults and prefixq with the lookahead off (which also turns stealing off), 3 rounds of fresh
# noreuse-64 runs in rotation with step traces (session 42's rotation.py, which now also runs the
# baseline as a variant named standalone):
HF_HUB_OFFLINE=1 PYTHONPATH=. python benchmarks/results/2026-12-06-session42/rotation.py noreuse-64 3 $D/rotation-noreuse-steps.jsonl standalone base la0:lookahead_steps=0
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# The same rotation with the cycle reversed (each variant before each other equally often over the two):
HF_HUB_OFFLINE=1 PYTHONPATH=. python benchmarks/results/2026-12-06-session42/rotation.py noreuse-64 3 $D/rotation-noreuse-2-steps.jsonl standalone la0:lookahead_steps=0 base
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
# (The analysis below ran, and the records were committed; then, in the time left, one more
# reuse-256 set, and the analysis below ran again over everything:)
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# Each pair of every set (session 22's pairs.py):
for f in $D/parity-*-steps.jsonl $D/control-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
# The rotations' rounds, this session's and pooled with sessions 41-43's lookahead rotations
# (session 42's rotsum.py), and their steps' speed:
S=benchmarks/results
python $S/2026-12-06-session42/rotsum.py $D/rotation-noreuse{,-2}-steps.jsonl
python $S/2026-12-06-session42/rotsum.py $S/2026-12-06-session41/larotation-noreuse-steps.jsonl $S/2026-12-06-session41/larotation-noreuse-2-steps.jsonl $S/2026-12-06-session42/rotation-noreuse-steps.jsonl $S/2026-12-06-session42/rotation-noreuse-2-steps.jsonl $S/2026-12-06-session43/rotation-noreuse-steps.jsonl $D/rotation-noreuse{,-2}-steps.jsonl | tee $D/rotsum.txt
python $S/2026-12-04-session26/stepspeed.py $D/rotation-noreuse{,-2}-steps.jsonl | tail -5
# GC, each worker's costliest collection after start-up, over every prefixq parity run of the
# session (session 35's gcsum.py):
python benchmarks/results/2026-12-05-session35/gcsum.py $D/parity-*.jsonl
# Which run of a pair was the slower, over every parity pair of the session (session 33's position.py):
python benchmarks/results/2026-12-05-session33/position.py $D/parity-*-steps.jsonl | tail -1
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-44; the models' CPU
# over the same files; then this session alone (session 43's pooled.sh):
bash $S/2026-12-06-session43/pooled.sh $D 44 | tee $D/spread.txt
# Uplift, session by session and pooled (sessions 23-44):
PYTHONPATH=. python $S/2026-12-05-session34/uplift_pooled.py | tee $D/uplift.txt
# Decode steps before and after a shard's first request finished, prefixq and the A/A control
# against the baseline, every paired run with step traces of sessions 22-44 (session 41's script),
# and the prompt steps' time per token the same way:
PYTHONPATH=. python $S/2026-12-06-session41/decphase.py --by-session --last-session 44 | tee $D/decphase.txt
python -m benchmarks.report
