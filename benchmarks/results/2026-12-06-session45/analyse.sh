# A session's standing analysis, after its benchmarks: each pair, GC, run order, the pooled
# spread, the uplift and the step phases (writing spread.txt, uplift.txt and decphase.txt into
# FOLDER), then the regenerated report.
#
#     bash benchmarks/results/2026-12-06-session45/analyse.sh FOLDER LAST
#
# FOLDER is session LAST's results folder. The block of the same steps that sessions 41-45's
# commands.sh each wrote out by hand (added in session 45's review; the next session's
# commands.sh can call it).
set -eu
D=$1
LAST=$2
S=benchmarks/results
export PYTHONPATH=.

# Each pair of every set (session 22's pairs.py):
for f in "$D"/parity-*-steps.jsonl "$D"/control-*-steps.jsonl; do
  if [ -e "$f" ]; then python $S/2026-12-03-session22/pairs.py "$f"; fi
done
# GC, each worker's costliest collection after start-up, over every prefixq parity run of the
# session (session 35's gcsum.py):
python $S/2026-12-05-session35/gcsum.py "$D"/parity-*.jsonl
# Which run of a pair was the slower, over every parity pair of the session (session 33's position.py):
python $S/2026-12-05-session33/position.py "$D"/parity-*-steps.jsonl | tail -1
# Pooled: every A/A file, and prefixq's affinity parity files of sessions 22-LAST; the models'
# CPU over the same files; then this session alone (session 43's pooled.sh):
bash $S/2026-12-06-session43/pooled.sh "$D" "$LAST" | tee "$D"/spread.txt
# Uplift, session by session and pooled (sessions 23-LAST):
python $S/2026-12-05-session34/uplift_pooled.py | tee "$D"/uplift.txt
# Decode steps before and after a shard's first request finished, prefixq and the A/A control
# against the baseline, every paired run with step traces of sessions 22-LAST (session 41's
# script), and the prompt steps' time per token the same way:
python $S/2026-12-06-session41/decphase.py --by-session --last-session "$LAST" | tee "$D"/decphase.txt
python -m benchmarks.report
