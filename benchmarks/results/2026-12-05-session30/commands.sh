#!/usr/bin/env bash
# Session 30's benchmarks, in the order they ran (one at a time, nothing else running), from the
# checkout's root. Machine: Intel Xeon (family 6, model 167: AVX-512 and AMX), 2 cores under
# KVM; `python -m timeit -n 20 "sum(range(10**6))"` 11.8 ms.
set -euo pipefail
D=benchmarks/results/2026-12-05-session30
# The overhead ceiling at 00377bc (redis-server's CPU now read from its INFO cpu), three runs:
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Parity at 00377bc:
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
# A/A control on this machine: standalone vLLM against itself, the protocol unchanged:
python -m benchmarks.parity --control --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# The full suite at 00377bc: bash scripts/test.sh -q (339 passed in 738 s).
# A third noreuse-64 set:
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
# A second A/A noreuse-64 set:
python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-2-steps.jsonl
# Per pair, per file; the models' step speeds:
for f in $D/parity-*-steps.jsonl $D/control-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-*-steps.jsonl
# Pooled: every A/A parity file, and prefixq's parity files of sessions 22-30 (the files of
# session 29's `pooled`, with this session's added); then how much of each pair's ratio the
# models' own CPU for the same work explains, over the same prefixq files:
R=benchmarks/results
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $D/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[345]-session{2[2-9],30}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $D/modelcpu.py $PARITY
# The same for this session's prefixq and A/A pairs, and for every A/A file:
PYTHONPATH=. python $D/modelcpu.py $D/parity-*-steps.jsonl $D/control-*-steps.jsonl
PYTHONPATH=. python $D/modelcpu.py $(eval echo $CONTROL)
# This session alone:
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $D/control-*-steps.jsonl --parity $D/parity-*-steps.jsonl
python -m benchmarks.report
# After the review: an A/A noreuse-64 set with the counterbalanced order reversed (the control
# first in pairs 0 and 2), then the per-file, pooled and model-CPU lines above again:
PYTHONPATH=. python $D/reversed_control.py noreuse-64 $D/control-noreuse-reversed-steps.jsonl
# The full suite at 805e188: bash scripts/test.sh -q (339 passed in 734 s).
