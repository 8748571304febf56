# The pooled parity and A/A figures of sessions 22 to LAST, then LAST's own (spread.txt).
#
#     bash benchmarks/results/2026-12-06-session43/pooled.sh FOLDER LAST | tee FOLDER/spread.txt
#
# FOLDER is session LAST's results folder. It prints what the block of the same name in
# sessions 36-43's commands.sh printed, without their file lists, which each session copied
# and extended by hand: the A/A files are the five from before session 29 named below and
# every control-*-steps.jsonl of sessions 29 to LAST; the parity files are session 22's
# parity-reuse-beat set and every parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl of sessions
# 22 to LAST. For sessions 40, 41, 42 and 43 the output is their spread.txt, byte for byte
# (added in session 43's review; the next session's commands.sh can call it).
set -eu
D=$1
LAST=$2
R=benchmarks/results
export PYTHONPATH=.

# The folders of sessions FROM to LAST, oldest first.
sessions() {
  for f in "$R"/*-session*/; do
    n=${f%/}; n=${n##*session}
    if [ "$n" -ge "$1" ] && [ "$n" -le "$LAST" ]; then echo "$n ${f%/}"; fi
  done | sort -n | cut -d' ' -f2
}
# The files among the arguments that exist (a session lacks some of the names), in the order
# the commands.sh blocks gave them: ls's order, which the bootstrap intervals depend on.
existing() { for f in "$@"; do if [ -e "$f" ]; then echo "$f"; fi; done | xargs -r ls; }
# A session's A/A files, each name before its suffixed variants (noreuse, noreuse-2,
# noreuse-reversed, reuse, reuse-2), as the blocks listed them.
controls() { existing "$1"/control-*-steps.jsonl | sed 's/-steps\.jsonl$//' | sort | sed 's/$/-steps.jsonl/'; }

control=("$R/2026-11-30-session6/control-parity-cpu.jsonl" "$R/control-parity-noreuse.jsonl"
         "$R/control-parity-reuse.jsonl" "$R/2026-12-01-session15/control-noreuse.jsonl"
         "$R/2026-12-02-session16/control-noreuse.jsonl")
parity=("$R/2026-12-03-session22/parity-reuse-beat-steps.jsonl")
for s in $(sessions 29); do control+=($(controls "$s")); done
parity+=($(existing $(for s in $(sessions 22); do echo "$s"/parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl; done)))
own=($(existing "$D"/parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl))
own_control=($(controls "$D"))

python $R/2026-12-04-session29/spread.py --control "${control[@]}" --parity "${parity[@]}"
python $R/2026-12-05-session30/modelcpu.py "${parity[@]}"
python $R/2026-12-05-session30/modelcpu.py "${own[@]}"
if [ ${#own_control[@]} -gt 0 ]; then
  python $R/2026-12-04-session29/spread.py --control "${own_control[@]}" --parity "${own[@]}"
else
  python $R/2026-12-04-session29/spread.py --parity "${own[@]}"
fi
python $R/2026-12-04-session26/stepspeed.py "${own[@]}" | tail -4
