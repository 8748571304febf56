#!/usr/bin/env bash
# Session 28's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Machine: AMD EPYC (family 25, model 17: AVX-512 with BF16 and VNNI, no AMX),
# 2 cores under KVM; `python -m timeit -n 20 "sum(range(10**6))"` 13.4 ms.
set -euo pipefail
D=benchmarks/results/2026-12-04-session28
# The producer's CPU by phase (session 27's script), before and after the piece-wise encoder:
PYTHONPATH=. python benchmarks/results/2026-12-04-session27/producer_phases.py
# Overhead, 3 alternating pairs: a worktree at 94814f4 (the session's start) against fe392de
# (common/pieces.py). Old worktrees need /tmp/shared -> /work/shared.
git worktree add -f /tmp/wt-old 94814f4
ln -sfn /work/shared /tmp/shared
bash benchmarks/results/2026-12-03-session21/overhead_ab.sh /tmp/wt-old "$PWD" $D/overhead-ab-pieces.jsonl 3 --submission-size 500
# Overhead at 350210c (with the producer's and redis-server's CPU per job), 5 runs:
for i in 1 2 3 4 5; do
  python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-350210c.jsonl
done
# The worker's CPU profile in the end-to-end run (py-spy, raw samples):
python -m benchmarks.overhead --jobs 20000 --submission-size 500 --profile $D/overhead-profile.raw --profile-only
# A trial, not kept: the young generation's threshold at 3,000 after the freeze (was 700): in
# worker/gcstats.py, gc.set_threshold(3000, MIDDLE_EVERY, FULL_EVERY); 3 runs:
#   python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead-gc-young-3000.jsonl
# Parity at 2ac3406 (the same code as 350210c; README only):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
# Where redis-server's CPU goes in an end-to-end overhead run (INFO commandstats):
PYTHONPATH=. python benchmarks/results/2026-12-04-session28/redis_commandstats.py > $D/redis-commandstats.txt
# The full suite at 350210c: bash scripts/test.sh -q (338 passed in 996 s).
# Affinity against round-robin, and a second set of each burst, at a6a5215 (notes and README only
# since 350210c):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# Per pair, per file; the models' step speeds; every pair since session 22 pooled; the report:
for f in $D/parity-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-*-steps.jsonl
R=benchmarks/results; P=$R/2026-12-04-session27
PYTHONPATH=. python $P/pooled.py $R/2026-12-03-session22/parity-reuse-steps.jsonl $R/2026-12-03-session22/parity-reuse-beat-steps.jsonl \
    $R/2026-12-03-session23/parity-{noreuse,noreuse-2,reuse,reuse-2}-steps.jsonl $R/2026-12-04-session25/parity-{noreuse,reuse}-steps.jsonl \
    $R/2026-12-04-session26/parity-{noreuse,noreuse-2,reuse,reuse-2}-steps.jsonl $P/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl \
    $D/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl
python -m benchmarks.report
# The full suite at 0c7a159: bash scripts/test.sh -q (338 passed in 898 s).
# The baseline's shard processes' CPU by thread over one reuse-256 burst, on their own:
PYTHONPATH=. python $D/frontend_threads.py reuse-256 2>/dev/null | grep -v WARNING > $D/frontend-threads-reuse.txt
