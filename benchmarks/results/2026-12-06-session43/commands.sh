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
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-43; then the
# models' CPU over the same files; then this session alone (written to spread.txt). What ran
# was the block of sessions 36-42's commands.sh with this session's files added to its hand-kept
# lists; the review replaced it here with pooled.sh (this folder), which prints the same file
# byte for byte (checked again in session 44's review with `| diff - $D/spread.txt`):
bash $D/pooled.sh $D 43 | tee $D/spread.txt
# Uplift, session by session and pooled (sessions 23-43):
PYTHONPATH=. python $S/2026-12-05-session34/uplift_pooled.py | tee $D/uplift.txt
# Decode steps before and after a shard's first request finished, prefixq and the A/A control
# against the baseline, every paired run with step traces of sessions 22-43 (session 41's script),
# and the prompt steps' time per token the same way:
PYTHONPATH=. python $S/2026-12-06-session41/decphase.py --by-session --last-session 43 | tee $D/decphase.txt
python -m benchmarks.report
# After the records commit: a parity set with stealing off (the lookahead kept; not among the files pooled.sh reads):
PREFIXQ_STEAL=0 HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-nosteal-steps.jsonl
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-noreuse-nosteal-steps.jsonl
