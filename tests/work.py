"""Counting the work a call does, for tests that bound it without a clock.

A count of the lines of ratified_rdf's own code that a call runs is the same on an idle machine
and a loaded one, so a test can say "twice the input, about twice the work" (no quadratic
loop) or "the same work for 14 MB as for one character too many" (nothing walked the text)
and never flake. What runs in C (a regular expression, ``str.count``) is not counted: a test
of that bounds it with :func:`tests.fuzz.harness.within_bound` instead.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

import ratified_rdf

T = TypeVar("T")

PACKAGE = str(Path(ratified_rdf.__file__).parent) + os.sep
"""The folder whose code is counted: the ratified_rdf that the tests import, spelt as its
modules' code objects spell their files."""


def lines_run(call: Callable[[], T]) -> tuple[T, int]:
    """Call ``call`` and return its result and how many lines of ratified_rdf's code it ran
    (``sys.settrace`` line events in frames of files under :data:`PACKAGE`)."""
    count = 0

    def local(_frame: FrameType, event: str, _arg: Any) -> Callable[..., Any]:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, _event: str, _arg: Any) -> Callable[..., Any] | None:
        return local if frame.f_code.co_filename.startswith(PACKAGE) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        result = call()
    finally:
        sys.settrace(previous)
    return result, count
