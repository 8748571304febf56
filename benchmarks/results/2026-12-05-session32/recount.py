"""The parity pairs' share and model-CPU ratios with the baseline's CPU past its clock taken out.

    PYTHONPATH=. python benchmarks/results/2026-12-05-session32/recount.py SESSION_DIR...

Over a run's clock the two cores hold: its own processes' CPU, the rest of the machine's, steal,
idle, and a small remainder nothing counts (the readings' own gaps). Session 31's baseline
records counted more than the two cores held, because they read the shards' CPU only after the
machine watch's slow last reading, while the engines spun. For each directory's affinity parity
files this prints, per system, that remainder (min / median / max, s; negative: CPU counted past
the clock), then per burst the share ratio (prefixq's models' share of the two cores over the
baseline's, as the report's) and the model-CPU ratio (prefixq's models' CPU for the same tokens
over the baseline's) as recorded and with each baseline run's excess taken out of its models'
CPU. The excess is prefixq's median remainder less the baseline run's (0 if negative): prefixq's
harness reads its CPU on its clock, so its remainder is what an honest reading leaves.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from benchmarks.report import paired_runs
from benchmarks.report import uncounted_cpu_s as remainder

MODEL = "VLLM::Worker"


def recount(directory: Path) -> None:
    for burst in ("noreuse", "reuse"):
        rows = [json.loads(line) for path in sorted(directory.glob(f"parity-{burst}*-steps.jsonl"))
                if "-rr" not in path.name for line in path.open()]
        rows = [r for r in rows if r.get("fresh", True) and r.get("policy", "affinity") == "affinity"]
        if not rows:
            continue
        for system in ("standalone", "prefixq"):
            left = [remainder(r) for r in rows if r["system"] == system]
            print(f"{directory.name} {burst} {system}: {len(left)} runs, remainder "
                  f"{min(left):+.2f} / {statistics.median(left):+.2f} / {max(left):+.2f} s")
        norm = statistics.median(remainder(r) for r in rows if r["system"] == "prefixq")
        share, share_fixed, model, model_fixed = [], [], [], []
        for runs in paired_runs(rows).values():
            if "standalone" not in runs or "prefixq" not in runs:
                continue
            base, ours = runs["standalone"], runs["prefixq"]
            excess = max(0.0, norm - remainder(base))
            ours_cpu, base_cpu = ours["engine_cpu_by_process"][MODEL], base["engine_cpu_by_process"][MODEL]
            model.append(ours_cpu / base_cpu)
            model_fixed.append(ours_cpu / (base_cpu - excess))
            share.append(ours_cpu / ours["seconds"] / (base_cpu / base["seconds"]))
            share_fixed.append(ours_cpu / ours["seconds"] / ((base_cpu - excess) / base["seconds"]))
        print(f"  {len(share)} pairs: share ratio median {statistics.median(share):.4f} as recorded, "
              f"{statistics.median(share_fixed):.4f} recounted; model-CPU ratio median "
              f"{statistics.median(model):.4f} as recorded ({sum(m > 1 for m in model)} above 1), "
              f"{statistics.median(model_fixed):.4f} recounted ({sum(m > 1 for m in model_fixed)} above 1)")


if __name__ == "__main__":
    for name in sys.argv[1:]:
        recount(Path(name))
