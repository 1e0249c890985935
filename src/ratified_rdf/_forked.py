"""Work done in a forked child process, on another core than the build's own.

A build is mostly Python, and threads share one interpreter lock: reading GitHub's archive on
a thread beside placing each commit's changes ran them one after the other. A forked child
shares the parent's memory copy-on-write (nothing is sent to it) and sends back only what the
work returns, pickled: streamed to a file in a private temporary folder, read back once the
child has ended. Sent through the pool's pipe, the whole pickle was one bytes object in the
child and another in the parent, on top of the records in both: at scale, seconds well above
the build's peak (benchmarks/RESULTS.md, 2026-12-05).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import pickle
import shutil
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Generic, TypeVar

from ratified_rdf._errors import RatifiedError
from ratified_rdf._memory import thaw
from ratified_rdf._temporary import make_folder

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1


class ChildDied(RatifiedError, RuntimeError):
    """A forked helper process died (killed, out of memory) before it answered."""


def die_with(parent: int | None) -> None:
    """Make this forked process die when the process that forked it does (``parent``; None:
    whichever did, a fork server, which itself ends with the program). A fork inherits the
    build's open store and audit log, locks included; a child outliving a killed build would
    hold them, and the next build could not open the store."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:  # it died before the line above acted
        os._exit(1)


_WORK: Callable[[], object] | None = None
_RESULT: Path | None = None

RESULT_PREFIX = "ratified-forked-"
"""How the folder a child's result is written to under ``TMPDIR`` is named (then the building
process's id and a random part: :mod:`ratified_rdf._temporary`)."""


def _inherit(work: Callable[[], object], parent: int, result: Path) -> None:
    global _WORK, _RESULT
    die_with(parent)
    _WORK, _RESULT = work, result


def _run_inherited() -> None:
    assert _WORK is not None and _RESULT is not None
    answer = _WORK()
    with open(_RESULT, "xb") as file:
        pickle.dump(answer, file, protocol=pickle.HIGHEST_PROTOCOL)


class Forked(Generic[T]):
    """``work()`` started at once in a forked child process (``what`` names it in errors);
    :meth:`result` waits for what it returned, or raises what it raised. On a machine with
    one core, or where processes cannot be forked, the work runs in :meth:`result` itself."""

    def __init__(self, work: Callable[[], T], what: str) -> None:
        self.work, self.what = work, what
        self._pool: ProcessPoolExecutor | None = None
        self._future: Future[object] | None = None
        self._folder: Path | None = None
        if (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
            return
        self._folder = make_folder(RESULT_PREFIX)
        self._pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("fork"),
            initializer=_inherit,
            initargs=(work, os.getpid(), self._folder / "result.pickle"),  # inherited
        )
        # The child's garbage collector would write to every object it inherited, copying the
        # parent's heap page by page; it leaves frozen objects alone. A fork context's pool
        # forks at the first submit, so the parent thaws its own heap straight after.
        gc.freeze()
        try:
            self._future = self._pool.submit(_run_inherited)
        finally:
            thaw()

    def result(self) -> T:
        """What the work returned; raises what it raised, or :class:`ChildDied`."""
        if self._pool is None or self._future is None or self._folder is None:
            return self.work()
        try:
            try:
                self._future.result()
            except BrokenProcessPool:
                raise ChildDied(
                    f"The process {self.what} died before it answered (killed, or out of "
                    "memory); nothing was written. Free memory and build again."
                ) from None
            finally:
                # The child ends here, and its memory with it, before its answer is read.
                self._pool.shutdown(wait=True, cancel_futures=True)
            with open(self._folder / "result.pickle", "rb") as file:
                return pickle.load(file)
        finally:
            shutil.rmtree(self._folder, ignore_errors=True)
