#!/usr/bin/env bash
# Session 17's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each line appends to its file; its records name the invocation (`set`).
set -euo pipefail
D=benchmarks/results/2026-12-02-session17
PYTHONPATH=. python benchmarks/results/2026-12-02-session16/rotation.py reuse-256 3 $D/rotation-reuse-kvoff.jsonl standalone prefixq prefixq-kvoff:PREFIXQ_KV_EVENTS=off
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# Diagnostics (sampling costs CPU: these bursts' times mean nothing): where the schedulers' CPU goes.
PYTHONPATH=. python $D/profile_scheduler.py prefixq noreuse-64 $D/profile/prefixq
PYTHONPATH=. python $D/profile_scheduler.py standalone noreuse-64 $D/profile/standalone
