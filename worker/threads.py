"""The worker's own threads carry their Python names into the operating system (Linux), so
``top -H``, ``ps -L`` and /proc tell them apart from the interpreter's other threads (vLLM's
front end shares the worker's process)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
import threading

_PR_SET_NAME = 15  # prctl(2)
_libc = ctypes.CDLL(ctypes.util.find_library("c")) if sys.platform.startswith("linux") else None


def name_this_thread() -> None:
    """Give the calling thread's Python name to its OS thread (the first 15 bytes: the kernel's
    limit). Does nothing where the OS has no such name."""
    if _libc is not None:
        _libc.prctl(_PR_SET_NAME, threading.current_thread().name.encode()[:15], 0, 0, 0)
