#!/usr/bin/env bash
# Sessions 23 and 24's benchmarks, in the order they ran (one at a time), from the checkout's root.
# Session 23 ran only the first; session 24 (a new machine) ran the rest.
set -euo pipefail
D=benchmarks/results/2026-12-03-session23
# Session 23, at 03182be, on its machine: per-thread CPU of each worker over one burst.
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/thread_cpu.py reuse-256 /tmp/threads > $D/threads-reuse-256-session23.txt
# Session 24, at 03182be (AMD EPYC with AVX-512):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/thread_cpu.py reuse-256 /tmp/threads > $D/threads-reuse-256-03182be.txt
grep -h "stages:" /tmp/threads/worker-gpu*.log > $D/threads-reuse-256-03182be-stages.txt
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
# At 2d22033 (the stealer reads only the jobs new to a tail it looked at before):
for i in 1 2 3; do
    python -m benchmarks.overhead --jobs 20000 --out $D/overhead-sim.jsonl
    python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-sim-sub500.jsonl
done
# The producer alone, 20,000 small jobs in submissions of 500, without and under py-spy:
PYTHONPATH=. python $D/enqueue_profile.py
PYTHONPATH=. py-spy record -r 500 -f raw -o /tmp/enqueue.raw -- python $D/enqueue_profile.py
python $D/profile_summary.py /tmp/enqueue.raw > $D/enqueue-profile.txt   # raw: enqueue-profile.raw.gz
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/thread_cpu.py reuse-256 /tmp/threads2 > $D/threads-reuse-256-2d22033.txt
grep -h "stages:" /tmp/threads2/worker-gpu*.log > $D/threads-reuse-256-2d22033-stages.txt
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# Per pair: times, ratio, models' share ratio, prefixq's extra CPU:
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-*.jsonl
