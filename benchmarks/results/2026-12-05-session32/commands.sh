#!/usr/bin/env bash
# Session 32 (2026-12-05): the commands, in the order they ran. From the repository's root,
# after `bash scripts/setup.sh`. One benchmark at a time, nothing else running.
set -euo pipefail
D=benchmarks/results/2026-12-05-session32
lscpu > $D/lscpu.txt
python -m timeit -n 20 "sum(range(10**6))"   # 14.2 ms on this machine
# Where the baseline read its CPU (before the fix): one small standalone burst, 8 documents of
# noreuse-64, 32 tokens each; the record's CPU window against its clock
HF_HUB_OFFLINE=1 PYTHONPATH=. python $D/cpuspan.py   # before: window ended 0.9-1.3 s past the clock; after: 8 ms
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
bash scripts/test.sh -q   # between benchmarks
# prefixq with the KV-cache events on and off, rotated, step traces kept (why its decode steps ran slower):
PYTHONPATH=. python $D/kvrotation.py reuse-256 3 $D/kvrotation-reuse-steps.jsonl
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/kvrotation-reuse-steps.jsonl
# Per pair, per file; the models' step speeds:
for f in $D/parity-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
# Session 31's records with the baseline's excess CPU taken out (and the same reading of this
# session's, where there is none to take out):
PYTHONPATH=. python $D/recount.py benchmarks/results/2026-12-05-session31 $D   # (its remainder is benchmarks.report.uncounted_cpu_s since the review)
# Pooled: every A/A parity file, and prefixq's affinity parity files of sessions 22-32 (session
# 31's lists with this session's added); then the models' CPU for the same tokens against the
# ratio, over the same files; then this session alone (written to spread.txt):
R=benchmarks/results
S30=$R/2026-12-05-session30
S31=$R/2026-12-05-session31
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $S31/control-noreuse-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[345]-session{2[2-9],3[012]}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --parity $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
} | tee $D/spread.txt
python -m benchmarks.report
# The overhead ceiling on this machine (sim engine, one worker), three runs:
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
