#!/usr/bin/env bash
# Session 15's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each parity line appends to its file; its records name the invocation (`set`).
set -euo pipefail
D=benchmarks/results/2026-12-01-session15
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 5 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 5 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --burst reuse-256 --policy round-robin --pairs 3 --out $D/parity-reuse-rr.jsonl
python -m benchmarks.parity --counterbalance --control --burst noreuse-64 --pairs 3 --out $D/control-noreuse.jsonl
bash $D/census.sh
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --out $D/overhead-sim.jsonl; done
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-sim-sub500.jsonl; done
python -m benchmarks.parity --counterbalance --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-2.jsonl
