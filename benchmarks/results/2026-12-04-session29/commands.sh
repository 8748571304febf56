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
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
# Per pair, per file; the models' step speeds:
for f in $D/parity-*-steps.jsonl $D/control-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-*-steps.jsonl
# Every A/A parity pair so far against every prefixq pair of sessions 22-29 (the files of
# session 28's pooled.py, with this session's added):
R=benchmarks/results; P=$R/2026-12-04-session27; Q=$R/2026-12-04-session28
pooled() {  # every A/A parity file, and prefixq's parity files of sessions 22-28 with the given ones
  PYTHONPATH=. python $D/spread.py \
    --control $R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl \
      $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl $D/control-{noreuse,reuse}-steps.jsonl \
    --parity $R/2026-12-03-session22/parity-reuse-steps.jsonl $R/2026-12-03-session22/parity-reuse-beat-steps.jsonl \
      $R/2026-12-03-session23/parity-{noreuse,noreuse-2,reuse,reuse-2}-steps.jsonl $R/2026-12-04-session25/parity-{noreuse,reuse}-steps.jsonl \
      $R/2026-12-04-session26/parity-{noreuse,noreuse-2,reuse,reuse-2}-steps.jsonl $P/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl \
      $Q/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl "$@"
}
pooled $D/parity-{reuse,reuse-2,noreuse,noreuse-2}-steps.jsonl
# This session alone:
PYTHONPATH=. python $D/spread.py --control $D/control-{noreuse,reuse}-steps.jsonl --parity $D/parity-{reuse,reuse-2,noreuse,noreuse-2}-steps.jsonl
python -m benchmarks.report
# The full suite at 13ecf1a: bash scripts/test.sh -q (339 passed in 827 s).
# A third reuse-256 set, at 13ecf1a (f6e9b6f's code; the report and records since):
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# With the third set: per pair, step speeds, this session's spread, and the pooled spread again
# (spread.txt), then the report:
PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $D/parity-reuse-3-steps.jsonl
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-*-steps.jsonl
PYTHONPATH=. python $D/spread.py --control $D/control-{noreuse,reuse}-steps.jsonl --parity $D/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl
pooled $D/parity-{reuse,reuse-2,reuse-3,noreuse,noreuse-2}-steps.jsonl > $D/spread.txt
python -m benchmarks.report
# The full suite at 93f3419: bash scripts/test.sh -q (339 passed in 791 s).
