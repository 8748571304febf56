"""prefixq under several settings, fresh runs in rotation, step traces kept.

    PYTHONPATH=. python benchmarks/results/2026-12-06-session42/rotation.py BURST ROUNDS OUT VARIANT...

A VARIANT is ``name`` (prefixq's defaults) or ``name:SETTING=VALUE[,SETTING=VALUE...]`` with
SETTING a field of common.config.Settings (``steal=0`` sets PREFIXQ_STEAL=0). Round r runs the
variants in the given order turned left by r, so over as many rounds as there are variants each
runs once in every place. Each run's record is appended to OUT with ``system`` "prefixq" (a
variant named ``base``) or "prefixq-NAME", and ``round`` (session 26's stepspeed.py reads it).
This replaces session 41's larotation.py and session 32's kvrotation.py (those stay, as the
records name them).

A variant named ``standalone`` (no settings) runs the baseline instead, standalone vLLM on fresh
engines as ``benchmarks.parity`` runs it, recorded with ``system`` "standalone" (added in session
44, to put the baseline in the same rounds as prefixq's variants; rotsum.py then shows its
seconds over prefixq's, the inverse of the parity ratio).
"""

import json
import os
import sys
import tempfile
from pathlib import Path

from benchmarks.routing import run as run_prefixq
from benchmarks.standalone import run_standalone
from benchmarks.workloads import load_items
from common.config import env_var

MAX_TOKENS = 32  # benchmarks.parity's default: every rotation compares with its runs


def parse(spec: str) -> tuple[str, dict[str, str]]:
    name, _, settings = spec.partition(":")
    env = {}
    for pair in filter(None, settings.split(",")):
        setting, value = pair.split("=", 1)
        env[env_var(setting)] = value
    return name, env


if __name__ == "__main__":
    burst, rounds, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    variants = [parse(spec) for spec in sys.argv[4:]]
    touched = {var for _, env in variants for var in env}
    os.environ[env_var("step_trace")] = "1"
    for r in range(rounds):
        turn = r % len(variants)
        for name, env in variants[turn:] + variants[:turn]:
            for var in touched:
                os.environ.pop(var, None)
            os.environ.update(env)
            if name == "standalone":
                items = load_items(burst, max_tokens=MAX_TOKENS, temperature=0.0)
                record = {**run_standalone(items, {"max_tokens": MAX_TOKENS, "temperature": 0.0}),
                          "system": "standalone"}
            else:
                with tempfile.TemporaryDirectory(prefix="prefixq-rotation-") as logs:
                    record = run_prefixq(burst, "affinity", MAX_TOKENS, Path(logs))
                record = {**record, "system": "prefixq" if name == "base" else f"prefixq-{name}"}
            record = {**record, "round": r, "settings": env}
            with out.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(record["system"], r, record["seconds"], flush=True)
