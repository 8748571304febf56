#!/usr/bin/env bash
# Session 26's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Machine: Intel Xeon (model 167, AVX-512 and AMX), 2 cores; timeit 11.2 ms.
set -euo pipefail
D=benchmarks/results/2026-12-04-session26
# At 0bb372b (the session's start):
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# Who wakes up on the machine during one burst of each system (0bb372b, a worktree at /tmp/head),
# twice; both printed tables in $D/wakeups-0bb372b.txt (the first round's has no machine line),
# the second round's record in $D/wakeups-noreuse-64-0bb372b.jsonl:
git worktree add /tmp/head 0bb372b
(cd /tmp/head && PYTHONPATH=/tmp/head python "$OLDPWD/$D/wakeups.py" "$OLDPWD/../shared/workloads/noreuse-64.jsonl" /tmp/wk 1)
# The overhead ceiling, 0bb372b against 9799313 (the one-call start), 3 alternating pairs each:
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/head "$PWD" $D/overhead-ab-sub500.jsonl 3 --submission-size 500
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/head "$PWD" $D/overhead-ab.jsonl 3
# At 5d30865 (KV flush every 2 s): who wakes up, one round (table in $D/wakeups-5d30865.txt; the
# record was renamed from wakeups-noreuse-64.jsonl to wakeups-noreuse-64-5d30865.jsonl):
PYTHONPATH=. python $D/wakeups.py noreuse-64 $D 1
# Rotation at 5d30865: standalone, prefixq, prefixq with KV events off, prefixq admitting everything at once:
PYTHONPATH=. python benchmarks/results/2026-12-02-session16/rotation.py noreuse-64 3 $D/rotation-noreuse.jsonl \
    standalone prefixq prefixq-kvoff:PREFIXQ_KV_EVENTS=off prefixq-allatonce:PREFIXQ_LOOKAHEAD_STEPS=1000
# The overhead ceiling, 9799313 against f1f9b0a (the one-call finish), 3 alternating pairs each:
git worktree add /tmp/start 9799313
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/start "$PWD" $D/overhead-ab-finish-sub500.jsonl 3 --submission-size 500
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/start "$PWD" $D/overhead-ab-finish.jsonl 3
# At f1f9b0a (the session's code; e8e9881 after it changed no behaviour): who wakes up, one round
# (table in $D/wakeups-f1f9b0a.txt, record moved from /tmp/wkf to $D/wakeups-noreuse-64-f1f9b0a.jsonl):
PYTHONPATH=. python $D/wakeups.py noreuse-64 /tmp/wkf 1
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 8 --out $D/parity-noreuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 6 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
python -m benchmarks.parity --resident --steps --burst noreuse-64 --pairs 8 --out $D/parity-noreuse-resident-steps.jsonl
# At e8e9881, a second reuse-256 set:
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 6 --out $D/parity-reuse-2-steps.jsonl
# At e8e9881, who wakes up during a reuse-256 burst, one round (table in $D/wakeups-reuse-e8e9881.txt,
# record moved from /tmp/wkr to $D/wakeups-reuse-256-e8e9881.jsonl):
PYTHONPATH=. python $D/wakeups.py reuse-256 /tmp/wkr 1
# Models' step speed per run, and per pair for parity files:
python $D/stepspeed.py $D/parity-noreuse-steps.jsonl
python $D/stepspeed.py $D/rotation-noreuse.jsonl
python $D/stepspeed.py $D/parity-noreuse-2-steps.jsonl
python $D/stepspeed.py $D/parity-reuse-steps.jsonl
python $D/stepspeed.py $D/parity-reuse-2-steps.jsonl
# Per pair: times, ratio, models' share ratio, prefixq's extra CPU:
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-*.jsonl
