"""An A/A set with the counterbalanced order reversed: the control runs first in pairs 0 and 2.

    PYTHONPATH=. python benchmarks/results/2026-12-05-session30/reversed_control.py BURST OUT

``benchmarks.parity --control --counterbalance --steps --pairs 4`` runs B O | O B | B O | O B
(B the baseline, O the control); in sessions 29 and 30 the first run of pairs 1 and 3, always
the control, used the more model CPU in all ten such pairs. This runs O B | B O | O B | B O with
the same code, so the slow runs show whether they follow the position in the set or the slot.
Each record's ``first`` names the system that ran first in its pair.
"""

import os
import sys
from pathlib import Path

from benchmarks.parity import fresh_pair, run_pairs
from common.config import env_var

if __name__ == "__main__":
    burst, out = sys.argv[1], Path(sys.argv[2])
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ[env_var("step_trace")] = "1"  # as --steps
    pair = fresh_pair({"max_tokens": 32, "temperature": 0.0}, control=True, counterbalance=True)
    run_pairs([burst], 4, "affinity", 32, out, lambda b, policy, max_tokens, i: pair(b, policy, max_tokens, i + 1))
