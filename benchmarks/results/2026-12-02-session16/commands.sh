#!/usr/bin/env bash
# Session 16's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each parity line appends to its file; its records name the invocation (`set`).
set -euo pipefail
D=benchmarks/results/2026-12-02-session16
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
PYTHONPATH=. python $D/rotation.py reuse-256 2 $D/rotation-reuse-kvoff.jsonl standalone prefixq prefixq-kvoff:PREFIXQ_KV_EVENTS=off
PYTHONPATH=. python $D/rotation.py reuse-256 2 $D/rotation-reuse-kvoff-2.jsonl prefixq-kvoff:PREFIXQ_KV_EVENTS=off standalone prefixq
PYTHONPATH=. python $D/rotation.py noreuse-64 2 $D/rotation-noreuse-kvoff.jsonl standalone prefixq prefixq-kvoff:PREFIXQ_KV_EVENTS=off
