# Session 51 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (Intel Xeon,
# family 6 model 167, AVX-512 and AMX: the kind of sessions 21, 26, 30, 33, 36, 38, 41 and 44);
# python -m timeit -n 20 "sum(range(10**6))": 11.9 ms at the start, 12.3 ms after the
# fourth noreuse-64 set.
# All runs at d086a8f (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one shell script ran the sets back to back (each started when the
# one before had ended), with the test suite after the overhead runs, and a second script,
# chained on the first, ran a fourth noreuse-64 set.
D=benchmarks/results/2026-12-07-session51
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Then the test suite (bash scripts/test.sh -q: 341 passed in 791 s).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-4-steps.jsonl
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 51
# Where the pairs' spread comes from (session 48's slowness.py, now through session 51):
PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py --last-session 51 | tee $D/slowness.txt
# The model threads' preemptions a second, prefixq against the baseline (session 50's preempt.py):
PYTHONPATH=. python benchmarks/results/2026-12-07-session50/preempt.py --last-session 51 | tee $D/preempt.txt
# After the records commit (e9876d1: records and notes only, the run path as at d086a8f), with the
# time there was: a fourth reuse-256 set. The analysis above ran before it (spread.txt,
# uplift.txt, decphase.txt, slowness.txt and preempt.txt leave it out); running the analysis
# again takes it in.
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-4-steps.jsonl
