#!/usr/bin/env bash
# vLLM's publisher, then prefixq's timed one again, then standalone: noreuse-64, 2 resident runs each.
cd "$(dirname "$0")/../../.."  # the checkout
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONPATH=.
T=benchmarks/results/2026-12-01-session11/engine_threads.py
echo "== prefixq PREFIXQ_KV_PUBLISHER=vllm (vLLM's publisher)"; PREFIXQ_KV_PUBLISHER=vllm python3 $T prefixq noreuse-64 2
echo "== prefixq (timed publisher)"; python3 $T prefixq noreuse-64 2
echo "== standalone"; python3 $T standalone noreuse-64 2
