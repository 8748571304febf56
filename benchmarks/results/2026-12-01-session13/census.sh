#!/usr/bin/env bash
# Per-thread census of one noreuse-64 burst pair (2 runs, resident) for three systems.
cd "$(dirname "$0")/../../.."  # the checkout
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=.
T=benchmarks/results/2026-12-01-session11/engine_threads.py
for round in ${ROUNDS:-1}; do
  echo "== prefixq (timed publisher) round $round"; python3 $T prefixq noreuse-64 2
  echo "== prefixq PREFIXQ_KV_PUBLISHER=vllm (vLLM's publisher) round $round"; PREFIXQ_KV_PUBLISHER=vllm python3 $T prefixq noreuse-64 2
  echo "== standalone round $round"; python3 $T standalone noreuse-64 2
done
