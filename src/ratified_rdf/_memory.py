"""Giving freed memory back to the system, before work that forks.

Python frees a large structure (a run's records) into the C allocator, which keeps most of the
freed pages for later allocations instead of returning them. A process forked after that
inherits them all; and when the parent then reuses them, each page it writes is copied, so
the children come to hold memory the parent no longer needs. Returning the free pages first
keeps them out of every child.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
from collections.abc import Callable
from functools import cache


@cache
def _trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, where the C library is glibc (not musl, macOS or Windows)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        function = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    trim: Callable[[int], int] = function
    return trim


def give_back() -> None:
    """Collect unreachable objects and return the allocator's free pages to the system
    (``malloc_trim(0)``; a no-op where the C library has none)."""
    gc.collect()
    trim = _trim()
    if trim is not None:
        trim(0)
