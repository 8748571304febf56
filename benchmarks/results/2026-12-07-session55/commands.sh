# Session 55 (2026-12-07): commands in the order they ran. Machine: lscpu.txt (Intel Xeon,
# family 6 model 106, AVX-512 without AMX: a kind not recorded in sessions 31-54);
# python -m timeit -n 20 "sum(range(10**6))": 13.9 ms at the start.
# All runs at 0a64efe: the first parity runs whose records hold the GC monitor's switch counts
# (max_cpu_switches, switched_collections; worker/gcstats.py since 611c420). Otherwise no change
# to either system's run path since 6a5a8f3. One benchmark at a time, every engine fresh; one
# shell script ran the sets back to back (each started when the one before had ended), with the
# test suite after the overhead runs.
D=benchmarks/results/2026-12-07-session55
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --policy round-robin --pairs 4 --out $D/parity-reuse-rr-steps.jsonl
for i in 1 2 3; do python -m benchmarks.overhead --jobs 20000 --submission-size 500 --out $D/overhead.jsonl; done
# Then the test suite (bash scripts/test.sh -q).
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst noreuse-64 --pairs 4 --out $D/control-noreuse-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-2-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --control --burst reuse-256 --pairs 4 --out $D/control-reuse-steps.jsonl
# A second script, started when the first had ended: third noreuse-64 and reuse-256 sets.
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst noreuse-64 --pairs 4 --out $D/parity-noreuse-3-steps.jsonl
HF_HUB_OFFLINE=1 python -m benchmarks.parity --counterbalance --steps --burst reuse-256 --pairs 4 --out $D/parity-reuse-3-steps.jsonl
# The analysis (session 45's analyse.sh, then the scripts of sessions 48, 50, 52 and 53), and
# this session's gcswitch.py (were the costliest collections switched out?):
bash benchmarks/results/2026-12-06-session45/analyse.sh $D 55
PYTHONPATH=. python benchmarks/results/2026-12-07-session48/slowness.py --last-session 55 > $D/slowness.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session50/preempt.py --last-session 55 > $D/preempt.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session52/gcslow.py --last-session 55 > $D/gcslow.txt
PYTHONPATH=. python benchmarks/results/2026-12-07-session53/kinds.py --last-session 55 > $D/kinds.txt
python $D/gcswitch.py $D/parity-*.jsonl > $D/gcswitch.txt
# python -m timeit -n 20 "sum(range(10**6))" after the last set: 15.2 ms.
