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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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


_SPARED = [0]
"""How many :func:`collections_spared` blocks are open (in this process)."""


@contextmanager
def collections_spared() -> Iterator[None]:
    """Within this block, the garbage collector passes over what outlived its last full
    collection: once a full collection ends, its survivors are frozen (``gc.freeze``).

    A build holds millions of objects for minutes (a run's records, a view's rows), and
    CPython's full collection walks every one, each time a quarter more have come since the
    last: at ×10 the build's process spent 10 s in them, finding a few thousand objects at
    each. What is frozen is still freed when nothing refers to it; only a reference cycle
    among frozen objects waits for the block's end (the collections found little to free).
    At the end, everything is thawed (unless an outer block is still open)."""

    def freeze_survivors(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            gc.freeze()

    gc.freeze()
    gc.callbacks.append(freeze_survivors)
    _SPARED[0] += 1
    try:
        yield
    finally:
        _SPARED[0] -= 1
        gc.callbacks.remove(freeze_survivors)
        thaw()


def thaw() -> None:
    """Undo ``gc.freeze`` (after a fork that wanted the heap left alone), unless collections
    are spared here (:func:`collections_spared`), which keeps it frozen."""
    if not _SPARED[0]:
        gc.unfreeze()
