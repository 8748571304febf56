#!/usr/bin/env bash
# Session 15's thread census: one resident noreuse-64 run per system, every thread's CPU and
# context switches through the burst (session 11's engine_threads.py). Run from the checkout.
set -euo pipefail
D=benchmarks/results/2026-12-01-session15
export PYTHONPATH=.
python benchmarks/results/2026-12-01-session11/engine_threads.py prefixq noreuse-64 1 | grep -v WARNING > $D/census-prefixq.txt
python benchmarks/results/2026-12-01-session11/engine_threads.py standalone noreuse-64 1 | grep -v WARNING > $D/census-standalone.txt
