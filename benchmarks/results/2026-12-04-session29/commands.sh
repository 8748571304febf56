#!/usr/bin/env bash
# Session 29's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Machine: AMD EPYC (family 25, model 17: AVX-512 with BF16 and VNNI, no AMX),
# 2 cores under KVM; `python -m timeit -n 20 "sum(range(10**6))"` 13.1 ms.
set -euo pipefail
D=benchmarks/results/2026-12-04-session29
# A/A control on this machine: standalone vLLM against itself, the protocol unchanged, at 2c6b55a
# (a 3 s unit test ran during the first run's engine start-up):
python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/control-noreuse-steps.jsonl
# Parity at f6e9b6f (the records now name each front end's busiest threads, user and system CPU
# apart: frontend_threads):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# A/A control, reuse-256:
python -m benchmarks.parity --control --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# Second sets, the same code:
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
