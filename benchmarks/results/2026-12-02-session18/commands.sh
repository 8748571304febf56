#!/usr/bin/env bash
# Session 18's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each line appends to its file; its records name the invocation (`set`).
set -euo pipefail
D=benchmarks/results/2026-12-02-session18
# prefixq's publisher (the default, PREFIXQ_KV_PUBLISHER=inline) against vLLM's and events off.
PYTHONPATH=. python benchmarks/results/2026-12-02-session16/rotation.py reuse-256 3 $D/rotation-reuse-publishers.jsonl standalone prefixq prefixq-vllmpub:PREFIXQ_KV_PUBLISHER=vllm prefixq-kvoff:PREFIXQ_KV_EVENTS=off
