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
# process's CPU per job 18-35% above the third run's):
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-2.jsonl; done
# The analysis, in this order: each pair (session 22's pairs.py), GC (session 35's gcsum.py), which
# run of a pair was the slower (session 33's position.py), the pooled spread (session 43's
# pooled.sh, spread.txt), the uplift (session 34's uplift_pooled.py, uplift.txt), the step phases
# (session 41's decphase.py, decphase.txt), and the report (analyse.sh, written in this session's
# review from the block this file first held; it prints the same three files byte for byte):
bash $D/analyse.sh $D 45
