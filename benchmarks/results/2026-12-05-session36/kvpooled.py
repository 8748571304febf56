"""KV-cache events on against off, round by round, over every ``kvrotation.py`` file.

    PYTHONPATH=. python benchmarks/results/2026-12-05-session36/kvpooled.py

For each round of session 32's rotation (fresh prefixq runs, events on and off; reuse-256, and
noreuse-64 from session 38 on): the burst's seconds with the events on over its seconds with
them off (above 1: on was the slower), and the same for the models' CPU (``VLLM::Worker``).
Then the median over all rounds of each burst.
"""

import statistics
from pathlib import Path

from benchmarks.report import MODEL, read_lines


def rounds(records: list[dict]) -> list[tuple[float, float]]:
    """``[(seconds on / off, model CPU on / off), ...]``, one per round of one rotation file."""
    by_round: dict[int, dict[str, dict]] = {}
    for record in records:
        by_round.setdefault(record["round"], {})[record["system"]] = record
    out = []
    for _, runs in sorted(by_round.items()):
        on, off = runs["prefixq"], runs["prefixq-kvoff"]
        out.append((on["seconds"] / off["seconds"],
                    on["engine_cpu_by_process"][MODEL] / off["engine_cpu_by_process"][MODEL]))
    return out


if __name__ == "__main__":
    seconds: dict[str, list[float]] = {}  # by burst
    for path in sorted(Path("benchmarks/results").glob("*/kvrotation-*.jsonl")):
        records = read_lines(path.parent, path.name)
        burst, quotients = records[0]["burst"], rounds(records)
        seconds.setdefault(burst, []).extend(s for s, _ in quotients)
        print(path.parent.name, burst, "seconds on/off", " ".join(f"{s:.4f}" for s, _ in quotients),
              "| models' CPU on/off", " ".join(f"{m:.4f}" for _, m in quotients))
    for burst, values in sorted(seconds.items(), key=lambda item: item[0] != "reuse-256"):
        print(f"{burst}, {len(values)} rounds: median on/off {statistics.median(values):.4f}, "
              f"on the slower in {sum(s > 1 for s in values)}")
