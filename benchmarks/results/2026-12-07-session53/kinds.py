"""The pooled pairs by machine kind: is the spread a property of the kind of machine?

    PYTHONPATH=. python benchmarks/results/2026-12-07-session53/kinds.py [--last-session N]

Takes the files session 41's ``decphase.py`` chooses up to session N (53 if not given):
prefixq's affinity sets (``parity-{noreuse,reuse}{,-2,-3,-4}-steps.jsonl``) and the A/A sets
(``control-*-steps.jsonl``), those of folders with an ``lscpu.txt`` (from session 31). It groups
their pairs, read with session 29's ``spread.py``, by the machine they ran on: vendor, CPU
family and model, and whether the CPU has AVX-512 and AMX, as the ``lscpu.txt`` says. Per kind it
prints its sessions, and per burst the baseline's median seconds (how fast the kind is) and,
for prefixq and the A/A control, how many pairs, the median ratio, the standard deviation of
the ratios and how many fell below 0.99; last, the same over all kinds together.
"""
import argparse
import importlib.util
import statistics
from collections import defaultdict
from pathlib import Path

from benchmarks.report import session_number


# Session 52's gcslow.py loads earlier sessions' scripts (results folders are not packages)
# and has session 41's decphase.py, which chooses the files; session 29's spread.py reads a
# file's complete fresh affinity pairs.
_spec = importlib.util.spec_from_file_location(
    "gcslow", "benchmarks/results/2026-12-07-session52/gcslow.py")
gcslow = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gcslow)
decphase = gcslow.decphase
spread = gcslow.script("spread", "benchmarks/results/2026-12-04-session29/spread.py")


def kind(lscpu: Path) -> str:
    """'AMD 25/17, AVX-512' and the like, from a saved ``lscpu`` output."""
    fields = {}
    for line in lscpu.read_text().splitlines():
        name, _, value = line.partition(":")
        fields[name.strip()] = value.strip()
    flags = fields.get("Flags", "").split()
    vendor = fields.get("Vendor ID", "").replace("GenuineIntel", "Intel").replace("AuthenticAMD", "AMD")
    extras = "AMX" if "amx_tile" in flags else "AVX-512" if "avx512f" in flags else "AVX2 only"
    return f"{vendor} {fields.get('CPU family')}/{fields.get('Model')}, {extras}"


def summary(ratios: list[float]) -> str:
    if not ratios:
        return "no pairs"
    sd = statistics.stdev(ratios) if len(ratios) > 1 else 0.0
    below = sum(r < 0.99 for r in ratios)
    return (f"{len(ratios):3d} pairs, median {statistics.median(ratios):.4f}, sd {sd:.4f}, "
            f"below 0.99: {below} ({100 * below / len(ratios):.0f}%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--last-session", type=int, default=53)
    args = parser.parse_args()

    sessions: dict[str, set[int]] = defaultdict(set)
    ratios: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    seconds: dict[tuple[str, str], list[float]] = defaultdict(list)
    for name in ("noreuse", "reuse"):
        parity, control = decphase.files(name, args.last_session)
        for paths, system in ((parity, "prefixq"), (control, "A/A")):
            for path in paths:
                folder = Path(path).parent
                if not (folder / "lscpu.txt").exists():
                    continue
                k = kind(folder / "lscpu.txt")
                sessions[k].add(session_number(folder))
                for burst, base, other in spread.pairs(path):
                    ratios[(k, burst, system)].append(other["requests_per_s"] / base["requests_per_s"])
                    seconds[(k, burst)].append(base["seconds"])

    for k in sorted(sessions):
        print(f"{k}: sessions {', '.join(map(str, sorted(sessions[k])))}")
        for burst in ("noreuse-64", "reuse-256"):
            if seconds[(k, burst)]:
                print(f"  {burst}: standalone median {statistics.median(seconds[(k, burst)]):.1f} s")
            for system in ("prefixq", "A/A"):
                print(f"    {system:8s} {summary(ratios[(k, burst, system)])}")
    for system in ("prefixq", "A/A"):
        for burst in ("noreuse-64", "reuse-256"):
            pooled = [r for (_, b, s), rs in ratios.items() if b == burst and s == system for r in rs]
            print(f"all kinds {burst} {system:8s} {summary(pooled)}")


if __name__ == "__main__":
    main()
