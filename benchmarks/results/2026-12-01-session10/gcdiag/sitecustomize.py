"""GC diagnostic (session 10 tool): with GCDIAG_DIR set, every Python process records,
for each collection of the middle or oldest generation after a gc.freeze(), how many objects it
walks and of which types (written to <dir>/<pid>.jsonl). Not part of prefixq."""
import gc, json, os, time
from collections import Counter

_dir = os.environ.get("GCDIAG_DIR")
if _dir:
    _state = {}

    def _cb(phase, info):
        gen = info.get("generation", 0)
        if gen < 1 or gc.get_freeze_count() == 0:
            return
        if phase == "start":
            objs = []
            for g in range(gen + 1):
                objs.extend(gc.get_objects(generation=g))
            types = Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in objs)
            lens = sum(len(o) for o in objs if type(o) is list)
            _state["rec"] = {"gen": gen, "objects": len(objs), "list_items": lens,
                             "top": types.most_common(25)}
            del objs
            _state["t"] = time.thread_time()
        else:
            rec = _state.pop("rec", None)
            if rec is None:
                return
            rec["cpu_ms"] = round((time.thread_time() - _state.pop("t")) * 1e3, 3)
            rec["collected"] = info.get("collected")
            with open(os.path.join(_dir, f"{os.getpid()}.jsonl"), "a") as f:
                f.write(json.dumps(rec) + "\n")

    gc.callbacks.append(_cb)
