"""Did the worker's costliest collections grow with the machine's slowness, or with the heap?

    PYTHONPATH=. python benchmarks/results/2026-12-07-session52/gcslow.py [--last-session N]

Reads the files session 41's ``decphase.py`` chooses (prefixq's affinity parity files of
sessions 22 to N, 52 if not given). For every prefixq run it takes the costliest collection's
CPU over both workers (``gc_per_worker[*]["max_cpu_ms"]``) and sets it beside two measures of
how slow the machine was at that moment that prefixq cannot affect:
- the baseline's front-end CPU in the same pair, per request (``cpu_s["frontend"]``: the same
  Python work every time, so more CPU for it means each instruction cost more);
- the baseline's model CPU per token in the same pair (``cpu_s["engine"]`` over the prompt
  tokens computed, not taken from the cache, and the completion tokens).
Within each session it ranks the runs by each and prints the rank correlation (positive if the
costliest collections came when the machine was slowest), then the correlation pooled over all
runs after each session's figures are divided by that session's median. It ends with the
collections above 2 ms of CPU: session, generation, what they freed, and where the run's
baseline front end stood among its session's runs (0 the fastest, 1 the slowest).
"""
import importlib.util
import json
import statistics
import sys
from pathlib import Path

from benchmarks.report import paired_runs, session_number


def script(name: str, path: str):
    """An earlier session's script as a module (results folders are not packages)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# Session 41's decphase.py chooses the files; session 48's slowness.py has the rank correlation.
decphase = script("decphase", "benchmarks/results/2026-12-06-session41/decphase.py")
slowness = script("slowness", "benchmarks/results/2026-12-07-session48/slowness.py")


def runs_by_session(paths: list[str]) -> dict[int, list[tuple[float, float, float, dict]]]:
    """Per session: (costliest collection's CPU, baseline front-end CPU per request, baseline
    model CPU per token, that collection's worker summary) for every prefixq run with both."""
    out: dict[int, list] = {}
    for path in paths:
        rows = [json.loads(line) for line in open(path)]
        for runs in paired_runs(rows).values():
            ours, base = runs.get("prefixq"), runs.get("standalone")
            if not ours or not base or not ours.get("gc_per_worker"):
                continue
            cpu = base.get("cpu_s") or {}
            shards = (base.get("tokens_per_shard") or {}).values()
            tokens = sum(s["prompt"] - s["cached"] + s["completion"] for s in shards) or None
            if "frontend" not in cpu or "engine" not in cpu or tokens is None:
                continue
            worst = max(ours["gc_per_worker"], key=lambda w: w["max_cpu_ms"])
            out.setdefault(session_number(Path(path).parent), []).append(
                (worst["max_cpu_ms"], cpu["frontend"] / base["requests"], cpu["engine"] / tokens, worst))
    return out


def relative(values: list[float]) -> list[float]:
    middle = statistics.median(values)
    return [v / middle for v in values]


def main() -> None:
    last = int(sys.argv[sys.argv.index("--last-session") + 1]) if "--last-session" in sys.argv else 52
    for burst in ("noreuse", "reuse"):
        parity, _ = decphase.files(burst, last)
        sessions = runs_by_session(parity)
        print(burst)
        pooled = {"gc": [], "front": [], "model": []}
        big = []
        for number, runs in sorted(sessions.items()):
            gc_ms, front, model = ([r[i] for r in runs] for i in range(3))
            if len(runs) >= 4:
                print(f"  session {number}: {len(runs)} runs, costliest collection "
                      f"{min(gc_ms):.2f}-{max(gc_ms):.2f} ms (median {statistics.median(gc_ms):.2f}); "
                      f"rank correlation with the baseline's front-end CPU "
                      f"{slowness.correlation(gc_ms, front):.3f}, with its model CPU per token "
                      f"{slowness.correlation(gc_ms, model):.3f}")
                pooled["gc"] += relative(gc_ms)
                pooled["front"] += relative(front)
                pooled["model"] += relative(model)
            order = sorted(front)
            for gc_cpu, f, _, worst in runs:
                if gc_cpu > 2:
                    place = order.index(f) / max(len(order) - 1, 1)
                    big.append(f"session {number}: {gc_cpu:.2f} ms, generation "
                               f"{worst['max_cpu_generation']}, freed {worst['max_cpu_collected']}, "
                               f"baseline front end at {place:.2f} of its session's runs")
        print(f"  pooled ({len(pooled['gc'])} runs, each over its session's median): rank correlation "
              f"with the front end {slowness.correlation(pooled['gc'], pooled['front']):.3f}, "
              f"with model CPU per token {slowness.correlation(pooled['gc'], pooled['model']):.3f}")
        print(f"  collections above 2 ms of CPU: {len(big)}")
        for line in big:
            print("    " + line)


if __name__ == "__main__":
    main()
