#!/usr/bin/env bash
# Session 27's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Machine: AMD EPYC (family 25, model 17: AVX-512 with BF16 and VNNI, no AMX),
# 2 cores under KVM; `python -m timeit -n 20 "sum(range(10**6))"` 12.3 ms.
set -euo pipefail
D=benchmarks/results/2026-12-04-session27
# At 94e7420 (the session's start):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
# Who wakes up on the machine during one burst of each system (table in $D/wakeups-reuse-94e7420.txt):
PYTHONPATH=. python benchmarks/results/2026-12-04-session26/wakeups.py reuse-256 /tmp/wkr 1 > $D/wakeups-reuse-94e7420.txt
# A second set, with every VLLM::Worker process's huge pages read every 20 s beside it (the
# sampler was a throw-away loop over /proc/*/smaps_rollup; its readings in $D/hugepages-reuse-2.jsonl):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# Where the workers' Python time goes during one reuse-256 burst (py-spy --gil on both workers;
# printed summary in $D/profile-reuse.txt, the samples in $D/profile-gpu*.txt):
PYTHONPATH=. python $D/profile_burst.py reuse-256 /tmp/s27/prof > $D/profile-reuse.txt
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# The overhead ceiling on this machine, three runs:
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-sub500.jsonl; done
# The producer's CPU by phase, at 94e7420 and at 49013f6 alternately (git stash around the change),
# twice each:
PYTHONPATH=. python $D/producer_phases.py
# At 49013f6 (routing in calls of up to 500 requests), against 94e7420 in a worktree:
git worktree add /tmp/head27 94e7420
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/head27 "$PWD" $D/overhead-ab-route-sub500.jsonl 3 --submission-size 500
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
# At d2cfced (a routing call also ends at 4,096 blocks): payload bytes, and the same at 94e7420
# (its checkout's ../shared/workloads must exist: a symlink /tmp/shared -> the shared folder did):
python -m benchmarks.payload_bytes reuse-256 --out $D/payload-reuse-256-d2cfced.json
cp $D/payload-reuse-256-d2cfced.json benchmarks/results/payload-reuse-256.json
git worktree add /tmp/old27 94e7420
(cd /tmp/old27 && PYTHONPATH=/tmp/old27 python -m benchmarks.payload_bytes reuse-256 --out "$OLDPWD/$D/payload-reuse-256-94e7420.json")
# How long one routing call holds Redis (at 4,096 blocks a call about 17 ms; then at 1,024):
PYTHONPATH=. python $D/routecall.py
# At 531138d (calls of 1,024 blocks), payload bytes again (twice; the second kept):
python -m benchmarks.payload_bytes reuse-256 --out $D/payload-reuse-256-531138d.json
cp $D/payload-reuse-256-531138d.json benchmarks/results/payload-reuse-256.json
# Per pair, per file; the models' step speeds; every pair since session 22 pooled:
for f in $D/parity-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-*-steps.jsonl
R=benchmarks/results
PYTHONPATH=. python $D/pooled.py $R/2026-12-03-session22/parity-reuse-steps.jsonl $R/2026-12-03-session22/parity-reuse-beat-steps.jsonl \
    $R/2026-12-03-session23/parity-{noreuse,noreuse-2,reuse,reuse-2}-steps.jsonl $R/2026-12-04-session25/parity-{noreuse,reuse}-steps.jsonl \
    $R/2026-12-04-session26/parity-{noreuse,noreuse-2,reuse,reuse-2}-steps.jsonl $D/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl
