# Session 46 (2026-12-06): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 1, AVX2 without AVX-512: the kind of sessions 17, 22, 25 and 42);
# python -m timeit -n 20 "sum(range(10**6))": 17 ms at the start; after the last benchmark 30.1 ms in a
# first reading and 18.1 ms in a second.
# All runs at 082dc53 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; chained shell scripts ran the sets back to back (each started when
# the one before had ended), with the test suite after the A/A noreuse-64 set.
D=benchmarks/results/2026-12-06-session46
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 964 s).
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# The overhead ceiling again, right after the last parity set (the first group ran after the test suite):
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-2.jsonl; done
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 46
