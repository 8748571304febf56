#!/usr/bin/env bash
# Session 25's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Machine: AMD EPYC, AVX2 only (no AVX-512), 2 cores.
set -euo pipefail
D=benchmarks/results/2026-12-04-session25
# The producer alone (20,000 small jobs in submissions of 500), 3 runs each at 52dd77a and 20bbda7:
PYTHONPATH=. python benchmarks/results/2026-12-03-session23/enqueue_profile.py
# The overhead ceiling, 52dd77a (a worktree: git worktree add /tmp/base 52dd77a) against
# 20bbda7 (the producer's scripted enqueue), 3 alternating pairs each:
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/base "$PWD" $D/overhead-ab.jsonl 3
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/base "$PWD" $D/overhead-ab-sub500.jsonl 3 --submission-size 500
# Where the worker's CPU goes (py-spy; one end-to-end run, submissions of 500), at 20bbda7:
python -m benchmarks.overhead --jobs 20000 --submission-size 500 --profile /tmp/worker.raw --profile-only > $D/worker-profile.txt
gzip -c /tmp/worker.raw > $D/worker-profile.raw.gz
# At 6c17cdc (code as 20bbda7):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
# Per pair: times, ratio, models' share ratio, prefixq's extra CPU:
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-*.jsonl
