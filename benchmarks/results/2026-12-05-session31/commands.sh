#!/usr/bin/env bash
# Session 31 (2026-12-05): the commands, in the order they ran. From the repository's root,
# after `bash scripts/setup.sh`. One benchmark at a time, nothing else running.
set -euo pipefail
D=benchmarks/results/2026-12-05-session31
lscpu > $D/lscpu.txt
python -m timeit -n 20 "sum(range(10**6))"   # 12.0 ms on this machine
# The machine's DAMON scheme (proactive reclaim: page out what has not been touched for 60 s):
cat /sys/kernel/mm/damon/admin/kdamonds/0/state   # on
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-steps.jsonl
# Why no worker took work from the other shard although gpu0 finished 1.5-1.8 s after gpu1 in
# reuse-256: a prefixq burst alone with each shard's queue and load sampled every 0.2 s
PYTHONPATH=. python $D/queuewatch.py $D/queuewatch-reuse.jsonl &
# (first try: queuewatch.py stopped at once on a wrong psutil attribute, fixed; its run is the
# first line of routing-reuse-watch.jsonl; the second, watched, run is the second line)
python -m benchmarks.routing --burst reuse-256 --policy affinity --out $D/routing-reuse-watch.jsonl
kill %1
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
# Each core's speed with both busy (a pinned Python loop each), and the interrupts each served
python $D/corespeed.py 6 | tee $D/corespeed.txt  # with LOOPS = 20_000_000 (0.5 s rounds); then, below, 100_000_000
python $D/corespeed.py 10 | tee $D/corespeed-long.txt
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
python -m benchmarks.parity --counterbalance --control --steps --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
bash scripts/test.sh -q   # between benchmarks: 340 passed in 802 s
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
# Per pair, per file; the models' step speeds:
for f in $D/parity-*-steps.jsonl $D/control-*-steps.jsonl; do PYTHONPATH=. python benchmarks/results/2026-12-03-session22/pairs.py $f; done
python benchmarks/results/2026-12-04-session26/stepspeed.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
# Pooled: every A/A parity file, and prefixq's affinity parity files of sessions 22-31 (session
# 30's lists with this session's added); then the models' CPU for the same tokens against the
# ratio, over the same files; then this session alone (written to spread.txt):
R=benchmarks/results
S30=$R/2026-12-05-session30
CONTROL="$R/2026-11-30-session6/control-parity-cpu.jsonl $R/control-parity-noreuse.jsonl $R/control-parity-reuse.jsonl
  $R/2026-12-01-session15/control-noreuse.jsonl $R/2026-12-02-session16/control-noreuse.jsonl
  $R/2026-12-04-session29/control-{noreuse,reuse}-steps.jsonl $S30/control-{noreuse,noreuse-2,noreuse-reversed,reuse}-steps.jsonl
  $D/control-noreuse-steps.jsonl"
PARITY="$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl
  $(ls $R/2026-12-0[345]-session{2[2-9],3[01]}/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl 2>/dev/null || true)"  # ls: some sessions lack some of the names
{
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $(eval echo $CONTROL) --parity $PARITY
PYTHONPATH=. python $S30/modelcpu.py $PARITY
PYTHONPATH=. python $S30/modelcpu.py $(eval echo $CONTROL)
PYTHONPATH=. python $S30/modelcpu.py $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl $D/control-noreuse-steps.jsonl
PYTHONPATH=. python $R/2026-12-04-session29/spread.py --control $D/control-noreuse-steps.jsonl --parity $D/parity-{noreuse,reuse}{,-2,-3}-steps.jsonl
} | tee $D/spread.txt
python -m benchmarks.report
# After the analysis: a second round-robin set, for the uplift (then the uplift lines of the notes recomputed)
python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 2 --out $D/parity-reuse-rr-2-steps.jsonl
