"""Turn the JSON lines the benchmarks wrote into ``benchmarks/README.md`` with PNG plots.

    python -m benchmarks.report [--results benchmarks/results]

Reads ``parity-*.jsonl`` (from ``benchmarks.parity --out``) and ``routing-*.jsonl`` (from
``benchmarks.routing --out``); writes the tables and ``benchmarks/results/*.png``.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def read_lines(folder: Path, pattern: str) -> list[dict[str, Any]]:
    rows = []
    for path in sorted(folder.glob(pattern)):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def parity_section(rows: list[dict[str, Any]], folder: Path) -> list[str]:
    runs: dict[tuple[str, int], dict[str, dict[str, Any]]] = defaultdict(dict)
    for row in rows:
        if "system" in row:
            runs[(row["burst"], row["pair"])][row["system"]] = row
    out = ["## Parity: prefixq vs standalone vLLM", "",
           "| burst | pair | standalone req/s | prefixq req/s | ratio | cached fraction (standalone / prefixq) |",
           "| --- | --- | --- | --- | --- | --- |"]
    ratios: dict[str, list[float]] = defaultdict(list)
    for (burst, pair), pair_runs in sorted(runs.items()):
        if {"standalone", "prefixq"} <= pair_runs.keys():
            base, ours = pair_runs["standalone"], pair_runs["prefixq"]
            ratio = ours["requests_per_s"] / base["requests_per_s"]
            ratios[burst].append(ratio)
            out.append(f"| {burst} | {pair} | {base['requests_per_s']:.3f} | {ours['requests_per_s']:.3f} "
                       f"| {ratio:.4f} | {base['cached_fraction']:.3f} / {ours['cached_fraction']:.3f} |")
    out.append("")
    for burst, values in ratios.items():
        out.append(f"- **{burst}**: median ratio {statistics.median(values):.4f}, "
                   f"worst {min(values):.4f} over {len(values)} pairs")
    if ratios:
        plot_ratios(ratios, folder / "parity.png")
        out += ["", "![ratio per pair](results/parity.png)"]
    return out + [""]


def routing_section(rows: list[dict[str, Any]], folder: Path) -> list[str]:
    out = ["## Routing: prefix affinity vs round-robin (prefixq, real workers)", "",
           "| burst | policy | req/s | cached fraction | oracle | of oracle |", "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        out.append(f"| {row['burst']} | {row['policy']} | {row['requests_per_s']:.3f} | "
                   f"{row['cached_fraction']:.3f} | {row['oracle_cached_fraction']:.3f} | {row['of_oracle']} |")
    by_policy = {row["policy"]: row["requests_per_s"] for row in rows}
    if {"affinity", "round-robin"} <= by_policy.keys():
        out += ["", f"Affinity uplift over round-robin: "
                    f"{by_policy['affinity'] / by_policy['round-robin'] - 1:+.1%}"]
    return out + [""]


def plot_ratios(ratios: dict[str, list[float]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for burst, values in ratios.items():
        ax.plot(range(1, len(values) + 1), values, marker="o", label=burst)
    ax.axhline(0.995, color="grey", linestyle="--", label="target 0.995")
    ax.set_xlabel("pair")
    ax.set_ylabel("prefixq / standalone throughput")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=HERE / "results")
    args = parser.parse_args()
    lines = ["# Benchmarks", "",
             "Measured on this project's machine kind (2 cores, no GPU), the built-in model, two shards",
             "with one core each, float32, prefix caching on, `max_tokens` 32, temperature 0. Every run",
             "starts its engines fresh and warms them with a few unrelated prompts. Regenerate with the",
             "commands in the top-level README, then `python -m benchmarks.report`.", ""]
    lines += parity_section(read_lines(args.results, "parity-*.jsonl"), args.results)
    lines += routing_section(read_lines(args.results, "routing-*.jsonl"), args.results)
    notes = args.results / "notes.md"
    if notes.exists():
        lines += ["## Notes on these runs", "", notes.read_text().strip(), ""]
    (HERE / "README.md").write_text("\n".join(lines) + "\n")
    print(HERE / "README.md")


if __name__ == "__main__":
    main()
