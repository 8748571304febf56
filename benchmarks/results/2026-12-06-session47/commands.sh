# Session 47 (2026-12-06/07): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 1, AVX2 without AVX-512: the kind of sessions 17, 22, 25, 42 and 46);
# python -m timeit -n 20 "sum(range(10**6))": 19.4 ms at the start; after the last
# benchmark 23.7 ms, then 20.4 ms.
# All runs at c209e6f (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; chained shell scripts ran the sets back to back (each started when
# the one before had ended), with the test suite after the A/A reuse-256 set. One mistake: a
# replacement queue waited for `bash scripts/test.sh` to exit, which execs pytest, so three
# overhead runs and the start of the round-robin set ran beside the suite; both were thrown away
# (the overhead file deleted, the set killed before it wrote a record) and rerun once pytest had
# ended (notes, "Session 47").
D=benchmarks/results/2026-12-06-session47
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 339 passed, 2 failed in 1416 s; the two failed
# for memory while the wrongly started round-robin set's engines held it, and passed when run again below).
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-2.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
# (A second noreuse-64 set would not have ended 30 minutes before the session's end: skipped.)
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-3.jsonl; done
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 47
# The two tests that failed beside the round-robin set, run again (the analysis above ran at the
# same time; no benchmark):
bash scripts/test.sh -q tests/test_benchmarks.py -k "test_parity_harness_runs_both_systems_on_a_tiny_burst or test_parity_command_runs_pairs_on_resident_engines"
