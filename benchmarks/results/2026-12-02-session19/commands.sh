#!/usr/bin/env bash
# Session 19's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each line appends to its file; its records name the invocation (`set`).
# The first four lines ran before 4ee667c: their records' `machine` figures count a kernel worker
# thread that renamed itself during the burst with all its CPU since it started (see notes.md).
set -euo pipefail
D=benchmarks/results/2026-12-02-session19
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --out $D/overhead-sim.jsonl; done
# Diagnostic (the census costs the workers CPU: this burst's time means nothing): what each of
# the workers' collections walks.
GCDIAG_OUT=$D/gccensus/census-reuse-256.jsonl PYTHONPATH=$D/gccensus:. \
    python benchmarks/results/2026-12-02-session16/rotation.py reuse-256 1 $D/gccensus/rotation-census.jsonl prefixq
# After 4ee667c: the same parity commands again (new sets appended to the same files).
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# Two more census runs.
GCDIAG_OUT=$D/gccensus/census-reuse-256.jsonl PYTHONPATH=$D/gccensus:. \
    python benchmarks/results/2026-12-02-session16/rotation.py reuse-256 2 $D/gccensus/rotation-census.jsonl prefixq
# Summaries: python -m benchmarks.report (the tables), and per run with the engines' CPU split:
PYTHONPATH=. python benchmarks/results/2026-12-02-session17/summary.py $D/parity-reuse-steps.jsonl
