# Session 50 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 17, AVX-512: the kind of sessions 31, 32, 35, 37, 40, 45, 48 and 49);
# python -m timeit -n 20 "sum(range(10**6))": 12.3 ms at the start, 13.4 ms after the
# last benchmark.
# All runs at 273bb99 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one shell script ran the sets back to back (each started when the
# one before had ended), with the test suite after the overhead runs. A second script, chained
# on it for a third reuse-256 set, was cancelled before that set began.
D=benchmarks/results/2026-12-07-session50
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Then the test suite (bash scripts/test.sh -q: 341 passed in 927 s).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 50
# Where the pairs' spread comes from (session 48's slowness.py, now through session 50):
PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py --last-session 50 | tee $D/slowness.txt
# New: the model threads' preemptions a second, prefixq against the baseline in the same pair,
# pooled over sessions 22-50 (and the A/A pairs):
PYTHONPATH=. python $D/preempt.py --last-session 50 | tee $D/preempt.txt
# After the records commit (829b42d and 3e3b9cf: records and notes only, the run path as at
# 273bb99), with the time there was: a third noreuse-64 set. The analysis above ran before it
# (spread.txt, uplift.txt, decphase.txt, slowness.txt and preempt.txt leave it out); running
# the analysis again takes it in.
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
