# Session 45 (2026-12-06): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 17, AVX-512: the kind of sessions 31, 32, 35, 37 and 40);
# python -m timeit -n 20 "sum(range(10**6))": 12.3 ms at the start, 12.5 ms after the last benchmark.
# All runs at 7745cba (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; chained shell scripts ran the sets back to back (each started when
# the one before had ended), with the test suite after the A/A reuse-256 set.
D=benchmarks/results/2026-12-06-session45
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 851 s).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# The overhead ceiling again (the first run above, right after the round-robin set, had every
# process's CPU per job 18-35% above the other two's):
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-2.jsonl; done
# Each pair of every set (session 22's pairs.py):
for f in $D/parity-*-steps.jsonl $D/control-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
S=benchmarks/results
# GC, each worker's costliest collection after start-up, over every prefixq parity run of the
# session (session 35's gcsum.py):
python $S/2026-12-05-session35/gcsum.py $D/parity-*.jsonl
# Which run of a pair was the slower, over every parity pair of the session (session 33's position.py):
python $S/2026-12-05-session33/position.py $D/parity-*-steps.jsonl | tail -1
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-45; the models' CPU
# over the same files; then this session alone (session 43's pooled.sh):
bash $S/2026-12-06-session43/pooled.sh $D 45 | tee $D/spread.txt
# Uplift, session by session and pooled (sessions 23-45):
PYTHONPATH=. python $S/2026-12-05-session34/uplift_pooled.py | tee $D/uplift.txt
# Decode steps before and after a shard's first request finished, prefixq and the A/A control
# against the baseline, every paired run with step traces of sessions 22-45 (session 41's script),
# and the prompt steps' time per token the same way:
PYTHONPATH=. python $S/2026-12-06-session41/decphase.py --by-session --last-session 45 | tee $D/decphase.txt
python -m benchmarks.report
