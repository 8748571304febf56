"""prefixq's affinity uplift against the baseline's, session by session and pooled.

    PYTHONPATH=. python benchmarks/results/2026-12-05-session34/uplift_pooled.py [FOLDER ...]

For each session folder (default: every one from session 23 on, when the harness and the
records took their present form) that holds reuse-256 round-robin pairs: the two systems'
uplifts (median affinity throughput / median round-robin throughput, as the report computes
them) and their quotient. Since uplift = affinity / round-robin for each system,

    prefixq's uplift / the baseline's = (prefixq / baseline under affinity)
                                        / (prefixq / baseline under round-robin),

so the quotient is also the median parity ratio under affinity over the median under
round-robin. Pooled, the script sets the median of every affinity pair's ratio against the
median of every round-robin pair's, with 95% bootstrap intervals: a quotient below 1 means
prefixq's uplift is the smaller.
"""

import random
import statistics
import sys
from pathlib import Path

from benchmarks.report import median_interval, paired_runs, read_lines, session_number, uplifts

RESULTS = Path("benchmarks/results")
FIRST_SESSION = 23


def ratios(rows: list[dict], policy: str) -> list[float]:
    """prefixq / standalone throughput, one per reuse-256 pair run under ``policy``."""
    out = []
    for (burst, _, _), runs in paired_runs(rows, policy=policy).items():
        if burst == "reuse-256" and {"prefixq", "standalone"} <= runs.keys():
            out.append(runs["prefixq"]["requests_per_s"] / runs["standalone"]["requests_per_s"])
    return out


def bootstrap_quotient(aff: list[float], rr: list[float], draws: int = 4000) -> tuple[float, float]:
    """95% bootstrap interval of median(aff) / median(rr), each resampled on its own."""
    rng = random.Random(34)
    values = sorted(statistics.median(rng.choices(aff, k=len(aff))) /
                    statistics.median(rng.choices(rr, k=len(rr))) for _ in range(draws))
    return values[int(0.025 * draws)], values[int(0.975 * draws) - 1]


def main() -> None:
    folders = [Path(a) for a in sys.argv[1:]] or sorted(
        (f for f in RESULTS.iterdir() if f.is_dir() and session_number(f) >= FIRST_SESSION),
        key=session_number)
    pooled_aff: list[float] = []
    pooled_rr: list[float] = []
    print("| session | affinity pairs | round-robin pairs | standalone uplift | prefixq uplift | quotient |")
    print("| --- | --- | --- | --- | --- | --- |")
    for folder in folders:
        rows = read_lines(folder, "parity-reuse*steps*.jsonl") or read_lines(folder, "parity-reuse*.jsonl")
        aff, rr = ratios(rows, "affinity"), ratios(rows, "round-robin")
        if not aff or not rr:
            continue
        both = uplifts(rows)
        base, ours = both["standalone"], both["prefixq"]
        print(f"| {folder.name} | {len(aff)} | {len(rr)} | {base - 1:+.1%} | {ours - 1:+.1%} | {ours / base:.4f} |")
        pooled_aff += aff
        pooled_rr += rr
    if not pooled_rr:
        print("no session with round-robin pairs")
        return
    a, r = statistics.median(pooled_aff), statistics.median(pooled_rr)
    (alo, ahi), (rlo, rhi) = median_interval(pooled_aff), median_interval(pooled_rr)
    qlo, qhi = bootstrap_quotient(pooled_aff, pooled_rr)
    print(f"\npooled: affinity pairs {len(pooled_aff)}, median ratio {a:.4f} ({alo:.4f}-{ahi:.4f}); "
          f"round-robin pairs {len(pooled_rr)}, median ratio {r:.4f} ({rlo:.4f}-{rhi:.4f})")
    print(f"pooled quotient (prefixq's uplift / the baseline's): {a / r:.4f} (95% bootstrap {qlo:.4f}-{qhi:.4f})")


if __name__ == "__main__":
    main()
