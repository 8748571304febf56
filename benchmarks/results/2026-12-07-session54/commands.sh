# Session 54 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 17, AVX-512: the kind of sessions 31, 32, 35, 37, 40, 45, 48-50 and 53);
# python -m timeit -n 20 "sum(range(10**6))": 14.1 ms at the start, 13.6 ms after the last set.
# All runs at 6c54298 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; one shell script ran the sets back to back (each started when the
# one before had ended), with the test suite after the overhead runs.
D=benchmarks/results/2026-12-07-session54
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Then the test suite (bash scripts/test.sh -q: 341 passed in 909 s). Beside it, this session's
# gcprobe.py twice, in an earlier form that printed the same measurements differently
# (figures in the notes):
# python $D/gcprobe.py --objects 5000 --collections 3000 --sleep-ms 5
# python $D/gcprobe.py --objects 5000 --collections 3000 --sleep-ms 20
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# A second script, started when the first had ended:
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# The collector probe on the machine with nothing else running, then beside two busy processes
# (gcprobe.txt):
(python $D/gcprobe.py; python $D/gcprobe.py --busy 2; python $D/gcprobe.py --busy 2) > $D/gcprobe.txt
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report), session 48's slowness.py, session 50's preempt.py, session 52's
# gcslow.py and session 53's kinds.py (the pooled pairs by machine kind):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 54
PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py --last-session 54 > $D/slowness.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session50/preempt.py --last-session 54 > $D/preempt.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session52/gcslow.py --last-session 54 > $D/gcslow.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session53/kinds.py --last-session 54 > $D/kinds.txt
# After the analysis, a third noreuse-64 set and a third reuse-256 set (started at 6c54298 and
# e0e7d6a, the records commit: records and results-folder files only, so the run path was the same):
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# Then worker/gcstats.py's context-switch counts, and three overhead runs with them:
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-switches.jsonl; done
# and the test suite with them (bash scripts/test.sh -q: 341 passed in 770 s).
