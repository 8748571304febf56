"""Where a standalone burst read its CPU against its clock: one small noreuse-64 burst (8 documents,
32 tokens each); prints the CPU window and the CPU the record leaves unaccounted over two cores."""
import json

from benchmarks.report import uncounted_cpu_s
from benchmarks.standalone import run_standalone
from benchmarks.workloads import load_items

if __name__ == "__main__":
    items = load_items("noreuse-64", 8, max_tokens=32, temperature=0.0)
    r = run_standalone(items, {"max_tokens": 32, "temperature": 0.0})
    print(json.dumps({k: r[k] for k in ("seconds", "cpu_s", "cpu_window_s")}),
          "unaccounted", round(uncounted_cpu_s(r), 3))
