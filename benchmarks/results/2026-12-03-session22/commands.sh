#!/usr/bin/env bash
# Session 22's benchmarks, in the order they ran (one at a time), from the checkout's root.
set -euo pipefail
D=benchmarks/results/2026-12-03-session22
# At c4525a6 (old clocks: prefixq's from the submit call; the baseline tokenizing in its clock).
# Stopped after 2 pairs when the clocks were changed:
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-oldclock-steps.jsonl
# At the protocol's clocks (the first session-22 commit):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
# Diagnostic: py-spy on both workers during one burst (its burst time means nothing):
PYTHONPATH=. python $D/profile_workers.py reuse-256 150 $D/profile > $D/profile/report.txt
# With the heartbeat in Lua (the second commit):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-beat-steps.jsonl
# Per pair: times, ratio, models' share ratio, prefixq's extra CPU:
PYTHONPATH=. python $D/pairs.py $D/parity-reuse-*.jsonl
# Not run in session 22 (written for the next): per-thread CPU of each worker over one burst:
#   PYTHONPATH=. python $D/thread_cpu.py reuse-256 /tmp/threads
