#!/usr/bin/env bash
# Session 33 (2026-12-05): the commands, in the order they ran. From the repository's root,
# after `bash scripts/setup.sh`. One benchmark at a time, nothing else running. All runs at
# d0f37e6 (no change to prefixq's code this session).
set -euo pipefail
D=benchmarks/results/2026-12-05-session33
lscpu > $D/lscpu.txt
python -m timeit -n 20 "sum(range(10**6))"   # 13.2 ms on this machine
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
bash scripts/test.sh -q   # between benchmarks
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# A/A on this machine (is the first run of a pair the slower one here with two identical systems too?):
python -m benchmarks.parity --control --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
# The same A/A with the order reversed (C B | B C | C B | B C: the control in the positions the
# baseline had): do the slow runs follow the slot or the position in the set?
PYTHONPATH=. python benchmarks/results/2026-12-05-session30/reversed_control.py noreuse-64 $D/control-noreuse-reversed-steps.jsonl
# Per pair, per file; the models' step speeds; the models' CPU for the same tokens:
for f in $D/parity-*-steps.jsonl $D/control-noreuse{,-reversed}-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
PYTHONPATH=. python benchmarks/results/2026-12-05-session30/modelcpu.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
# Steps per shard and burst in both systems, over every parity file with step traces:
python $D/stepcount.py
# Which run of a pair was the slower, and what prefixq's extra CPU was under each policy:
python $D/position.py $D/parity-*-steps.jsonl $D/control-noreuse{,-reversed}-steps.jsonl
PYTHONPATH=. python $D/uplift.py
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-33 (session 32's
# lists with this session's added); then the models' CPU over the same files; then this
# session alone (written to spread.txt):
R=benchmarks/results
S30=$R/2026-12-05-session30
S31=$R/2026-12-05-session31
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $S31/control-noreuse-steps.jsonl $D/control-noreuse{,-reversed}-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[345]-session{2[2-9],3[0123]}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --parity $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
} | tee $D/spread.txt
python -m benchmarks.report
