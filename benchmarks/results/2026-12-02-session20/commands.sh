#!/usr/bin/env bash
# Session 20's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each line appends to its file; its records name the invocation (`set`).
set -euo pipefail
D=benchmarks/results/2026-12-02-session20
# At 5cbdda8 (before the worker change): where the worker's CPU goes with the sim engine.
python -m benchmarks.overhead --jobs 20000 --profile $D/overhead-profile.raw --profile-only > $D/overhead-profile.txt
# From a55216d (token-id prompts as tuples). Diagnostic (the census costs the workers CPU: these
# bursts' times mean nothing): what each of the workers' collections walks, with session 19's
# sitecustomize; compare with session 19's census-reuse-256.jsonl.
GCDIAG_OUT=$D/gccensus/census-reuse-256.jsonl PYTHONPATH=benchmarks/results/2026-12-02-session19/gccensus:. \
    python benchmarks/results/2026-12-02-session16/rotation.py reuse-256 2 $D/gccensus/rotation-census.jsonl prefixq
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# Summaries: python -m benchmarks.report (the tables), and per run with the engines' CPU split:
PYTHONPATH=. python benchmarks/results/2026-12-02-session17/summary.py $D/parity-reuse-steps.jsonl
