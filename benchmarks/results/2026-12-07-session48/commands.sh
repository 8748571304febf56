# Session 48 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (AMD EPYC,
# family 25 model 17, AVX-512: the kind of sessions 31, 32, 35, 37, 40 and 45);
# python -m timeit -n 20 "sum(range(10**6))": 13.4 ms at the start, 13.6 ms after the last
# benchmark.
# All runs at 2e2e1b2 (no change to either system's run path since 6a5a8f3). One benchmark at a
# time, every engine fresh; chained shell scripts ran the sets back to back (each started when
# the one before had ended), with the test suite after the A/A reuse-256 set.
D=benchmarks/results/2026-12-07-session48
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# Then the test suite (bash scripts/test.sh -q: 341 passed in 891 s).
# An experiment, not part of prefixq: standalone vLLM with its shared-memory queue readers'
# one-second busy-wait (vLLM's default) against none (spin/sitecustomize.py, which sets the
# default in every process when EXPERIMENT_VLLM_BUSY_LOOP_S is set), fresh runs in rotation.
# Planned for 4 rounds; stopped after 3, the answer being plain (notes, "Session 48"):
HF_HUB_OFFLINE=1 PYTHONPATH=$D/spin:. python $D/spinrotation.py noreuse-64 4 $D/spin-noreuse-steps.jsonl default 0
PYTHONPATH=. python $D/spinrotation.py summary $D/spin-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# The analysis (session 45's analyse.sh: each pair, GC, which run of a pair was the slower, the
# pooled spread into spread.txt, the uplift into uplift.txt, the step phases into decphase.txt,
# and the regenerated report):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 48
# Where the pairs' spread comes from: both shards at once, within a run, across runs (new):
PYTHONPATH=. python $D/slowness.py --last-session 48 | tee $D/slowness.txt
