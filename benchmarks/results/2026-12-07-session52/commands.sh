# Session 52 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 1, AVX2 without AVX-512: the kind of sessions 17, 22, 25, 42, 46 and 47);
# python -m timeit -n 20 "sum(range(10**6))": 16.6 ms at the start.
# All runs at 263cb92 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one shell script ran the sets back to back (each started when the
# one before had ended), with the test suite after the overhead runs; a third noreuse-64 set ran
# after the records commit (e7c5c2a: records only since 263cb92, so the run path was the same),
# and the analysis files were written before it.
D=benchmarks/results/2026-12-07-session52
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Then the test suite (bash scripts/test.sh -q: 341 passed in 1021 s).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report), session 48's slowness.py, session 50's preempt.py and this
# session's gcslow.py (the costliest collections against the machine's slowness):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 52
PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py --last-session 52 > $D/slowness.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session50/preempt.py --last-session 52 > $D/preempt.txt
PYTHONPATH=. python $D/gcslow.py --last-session 52 > $D/gcslow.txt
# After the records commit, a third noreuse-64 set:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
