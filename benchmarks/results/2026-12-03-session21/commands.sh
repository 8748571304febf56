#!/usr/bin/env bash
# Session 21's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Each line appends to its file; its records name the invocation (`set`).
set -euo pipefail
D=benchmarks/results/2026-12-03-session21
# At 8b268f8 (before the Lua bookkeeping), the baseline with its own split:
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
# The two splits of reuse-256 on resident standalone engines (4 rounds):
PYTHONPATH=. python $D/split.py reuse-256 4 $D/split-reuse-256.jsonl
# The overhead ceiling, 8b268f8 (a worktree) against 9aa7647, 3 alternating pairs each:
bash $D/overhead_ab.sh /path/to/8b268f8 /path/to/9aa7647 $D/overhead-ab.jsonl 3
bash $D/overhead_ab.sh /path/to/8b268f8 /path/to/9aa7647 $D/overhead-ab-sub500.jsonl 3 --submission-size 500
# At 9aa7647 with standalone.assign routing as prefixq does (28c3cef):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-same-split-steps.jsonl
# Rotation: standalone, prefixq, prefixq with KV events off, prefixq with lookahead 1000 (2 rounds):
PYTHONPATH=. python benchmarks/results/2026-12-02-session16/rotation.py reuse-256 2 $D/rotation-reuse-256.jsonl \
    standalone prefixq prefixq-kvoff:PREFIXQ_KV_EVENTS=off prefixq-allatonce:PREFIXQ_LOOKAHEAD_STEPS=1000
