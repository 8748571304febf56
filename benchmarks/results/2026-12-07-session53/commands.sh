# Session 53 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 17, AVX-512: the kind of sessions 31, 32, 35, 37, 40, 45, 48, 49 and 50);
# python -m timeit -n 20 "sum(range(10**6))": 13.1 ms at the start.
# All runs at dfd7d07 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one shell script ran the sets back to back (each started when the
# one before had ended), with the test suite after the overhead runs; third noreuse-64 and
# reuse-256 sets ran after the records commit (at 745d7f9 and b4aa679: records and results-folder
# scripts only since dfd7d07, so the run path was the same), and the analysis files were
# written before them.
D=benchmarks/results/2026-12-07-session53
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Then the test suite (bash scripts/test.sh -q: 341 passed in 985 s).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# A second script, started when the first had ended:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report), session 48's slowness.py, session 50's preempt.py, session 52's
# gcslow.py and this session's kinds.py (the pooled pairs by machine kind):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 53
PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py --last-session 53 > $D/slowness.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session50/preempt.py --last-session 53 > $D/preempt.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session52/gcslow.py --last-session 53 > $D/gcslow.txt
PYTHONPATH=. python $D/kinds.py --last-session 53 > $D/kinds.txt
# After the records commit, a third noreuse-64 set and a third reuse-256 set:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
