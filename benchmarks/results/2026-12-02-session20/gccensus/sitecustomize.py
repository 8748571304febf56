"""Diagnostic only, not part of prefixq: what each of a worker's garbage collections walks.

    GCDIAG_OUT=FILE PYTHONPATH=benchmarks/results/2026-12-02-session20/gccensus:. python ...

Loaded at start-up by every Python process that finds it on the path (as sitecustomize); it
acts only in processes whose command line names a worker. Once the worker's own GC monitor is
watching (after its gc.freeze()), every collection first counts the objects of the generations
it is about to walk (and the items of the lists, dicts, tuples and sets among them), then
writes one JSON line: generation, the collector's CPU and wall-clock milliseconds (the census
itself excluded), the thread, the objects and items walked, and for any collection over 0.8 ms
of CPU the commonest types. The census costs the worker CPU: burst times of a run with it mean
nothing.
"""
import os, sys, gc, time, json, collections, threading, heapq

def _install():
    out = os.environ.get("GCDIAG_OUT")
    if not out:
        return
    state = {}
    def census(gen):
        types = collections.Counter()
        refs = collections.Counter()
        for g in range(gen + 1):
            for o in gc.get_objects(generation=g):
                tp = type(o)
                t = f"{getattr(tp, '__module__', '?')}.{getattr(tp, '__qualname__', '?')}"
                types[t] += 1
                try:
                    n = len(o) if isinstance(o, (list, dict, tuple, set)) else 0
                except Exception:
                    n = 0
                refs[t] += n
        return types, refs
    def cb(phase, info):
        if len(gc.callbacks) < 2:  # the worker's monitor is not watching yet (before the freeze)
            state.pop("census", None)
            return
        try:
            _cb(phase, info)
        except Exception:
            pass
    def _cb(phase, info):
        if phase == "start":
            state["census"] = census(info["generation"])
            state["thread"] = threading.current_thread().name
            state["cpu0"] = time.thread_time()
            state["wall0"] = time.perf_counter()
            return
        cpu_ms = (time.thread_time() - state.get("cpu0", time.thread_time())) * 1000
        if "census" in state:
            types, refs = state["census"]
            rec = {"pid": os.getpid(), "gen": info["generation"], "cpu_ms": round(cpu_ms, 3),
                   "wall_ms": round((time.perf_counter() - state["wall0"]) * 1000, 3),
                   "collected": info["collected"], "thread": state["thread"],
                   "objects": sum(types.values()), "container_items": sum(refs.values())}
            if cpu_ms > 0.8:
                rec.update(top_types=types.most_common(12), top_refs=refs.most_common(8))
            with open(out, "a") as f:
                f.write(json.dumps(rec) + "\n")
    # First in the list: at "start" the census runs before the worker's monitor reads its
    # clocks, so neither the monitor's figures nor this file's include it.
    gc.callbacks.insert(0, cb)

if any("worker" in a for a in sys.argv):
    _install()
