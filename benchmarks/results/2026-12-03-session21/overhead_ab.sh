#!/usr/bin/env bash
# Paired overhead runs (sim engine, one worker, 20,000 jobs): checkout A ($1, e.g. a worktree at
# 8b268f8) and checkout B ($2, at 9aa7647), alternating A B, B A, A B; every record is appended
# to $3 with the checkout it ran from in "checkout". Extra arguments go to benchmarks.overhead.
#   bash overhead_ab.sh /path/to/old /path/to/new OUT.jsonl 3 [--submission-size 500]
set -euo pipefail
A=$1; B=$2; OUT=$3; PAIRS=${4:-3}; shift 4 || true
TMP=$(mktemp)
for i in $(seq 1 "$PAIRS"); do
  if (( i % 2 )); then order="$A $B"; else order="$B $A"; fi
  for c in $order; do
    (cd "$c" && PYTHONPATH="$c" python -m benchmarks.overhead --jobs 20000 "$@" --out "$TMP" > /dev/null 2>&1)
    python - "$c" "$OUT" "$TMP" <<'PY'
import json, sys
checkout, out, tmp = sys.argv[1:]
with open(out, "a") as f:
    for line in open(tmp).read().splitlines():
        f.write(json.dumps({**json.loads(line), "checkout": checkout}) + "\n")
open(tmp, "w").close()
PY
  done
done
rm -f "$TMP"
