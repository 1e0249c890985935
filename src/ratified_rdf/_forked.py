"""Work done in a forked child process, on another core than the build's own.

A build is mostly Python, and threads share one interpreter lock: reading GitHub's archive on
a thread beside placing each commit's changes ran them one after the other. A forked child
shares the parent's memory copy-on-write (nothing is sent to it) and sends back only what the
work returns, pickled: streamed to a file in a private temporary folder, read back once the
child has ended. Sent through the pool's pipe, the whole pickle was one bytes object in the
child and another in the parent, on top of the records in both: at scale, seconds well above
the build's peak (benchmarks/RESULTS.md, 2026-12-05).

Every child process dies with the process that started it, also when that one is killed with
SIGKILL and runs no code of its own again: a child asks the kernel for a parent-death signal
(:func:`die_with`). The kernel sends it when the *thread* that started the child ends, not the
process, so children whose parent would outlive the thread that happened to start them (the
query workers, started from a pool thread; multiprocessing's fork server, started by whichever
thread first asks for a fresh gate worker) are started from a thread that lives as long as the
process (:func:`on_lasting_thread`).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import multiprocessing
import os
import pickle
import queue
import runpy
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Generic, TypeVar

from ratified_rdf._errors import RatifiedError
from ratified_rdf._memory import thaw
from ratified_rdf._temporary import make_folder

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1


class ChildDied(RatifiedError, RuntimeError):
    """A forked helper process died (killed, out of memory) before it answered."""


def die_with(parent: int | None) -> None:
    """Make this child process die when the process that started it does (``parent``; None:
    whichever did, a fork server). A fork inherits the build's open store and audit log,
    locks included; a child outliving a killed build would hold them, and the next build
    could not open the store. A parent that died before the signal was asked for sent none:
    then this process ends here."""
    if parent is None:
        parent = _FORK_SERVER  # this process was forked by a fork server bound below
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if parent is not None and os.getppid() != parent:  # it died before the line above acted
        os._exit(1)


# --- a thread that lives as long as the process -----------------------------------------------

_Call = tuple[Callable[[], Any], "Future[Any]"]
_LASTING: list[tuple[threading.Thread, queue.SimpleQueue[_Call]]] = []
_LASTING_LOCK = threading.Lock()


def on_lasting_thread(call: Callable[[], T]) -> T:
    """``call()`` run on a thread of this module's that lives as long as the process; returns
    what it returned, raises what it raised. Start a child that calls :func:`die_with` here,
    so that its parent-death signal comes with the end of the process, not of a pool thread."""
    with _LASTING_LOCK:
        if not _LASTING or not _LASTING[0][0].is_alive():
            calls: queue.SimpleQueue[_Call] = queue.SimpleQueue()
            thread = threading.Thread(
                target=_serve_calls, args=(calls,), name="ratified-lasting", daemon=True
            )
            thread.start()
            _LASTING[:] = [(thread, calls)]
        thread, calls = _LASTING[0]
    if threading.current_thread() is thread:
        return call()
    answer: Future[T] = Future()
    calls.put((call, answer))
    return answer.result()


def _serve_calls(calls: queue.SimpleQueue[_Call]) -> None:
    while True:
        call, answer = calls.get()
        try:
            answer.set_result(call())
        except BaseException as error:  # handed to the caller, on its own thread
            answer.set_exception(error)


def _forget_lasting() -> None:
    # A forked child has none of its parent's threads: it starts its own when it needs one.
    _LASTING.clear()


os.register_at_fork(after_in_child=_forget_lasting)


# --- Python children started by this process --------------------------------------------------


def start_module(module: str, args: Sequence[str], **popen: Any) -> subprocess.Popen[bytes]:
    """``python -m module *args`` as a child that dies with this process (``popen``: what
    :class:`subprocess.Popen` takes besides the command). The child runs :func:`die_with`
    before the module, and is started from the lasting thread."""
    command = [sys.executable, "-c", _BOUND, str(os.getpid()), module, *args]
    return on_lasting_thread(lambda: subprocess.Popen(command, **popen))


_BOUND = "from ratified_rdf._forked import run_bound; run_bound()"


def run_bound() -> None:
    """The start of a child :func:`start_module` started: ``sys.argv`` holds the parent's
    process id, the module, and the module's arguments."""
    parent, module, *args = sys.argv[1:]
    die_with(int(parent))
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


# --- multiprocessing's fork server ------------------------------------------------------------

FORK_SERVER_PARENT = "RATIFIED_FORK_SERVER_PARENT"
"""The variable a fork server started by :func:`ensure_fork_server` reads its parent from."""

_STARTED_BY = os.environ.pop(FORK_SERVER_PARENT, "")
"""In a fork server :func:`ensure_fork_server` started, the process that started it. Taken out
of the environment at once in every process, so that no process started later inherits it:
a fork server started by one of those, read it, would bind itself to the wrong parent."""

_FORK_SERVER: int | None = None
"""In a fork server bound by :mod:`ratified_rdf._fork_server`, and in the processes it
forks, the fork server's process id."""


def ensure_fork_server(preload: Sequence[str]) -> None:
    """Start multiprocessing's fork server unless it runs, bound to die with this process,
    importing the modules ``preload`` names (as ``set_forkserver_preload`` does). It is
    started once for the whole process, and its children die with it (:func:`die_with`)."""
    from multiprocessing import forkserver

    forkserver.set_forkserver_preload(["ratified_rdf._fork_server", *preload])

    def start() -> None:
        os.environ[FORK_SERVER_PARENT] = str(os.getpid())
        try:
            forkserver.ensure_running()
        finally:
            os.environ.pop(FORK_SERVER_PARENT, None)

    on_lasting_thread(start)


def bind_fork_server() -> None:
    """In a starting fork server: die with the process that started it (read from
    :data:`FORK_SERVER_PARENT`; a fork server started otherwise, with this process's parent),
    and note this process as the parent of the workers it will fork."""
    global _FORK_SERVER
    die_with(int(_STARTED_BY) if _STARTED_BY.isdigit() else os.getppid())
    _FORK_SERVER = os.getpid()


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

    def cancel(self) -> None:
        """End the child, if it still runs, and forget what it would have returned (for work
        started ahead that is no longer wanted)."""
        if self._pool is not None:
            for process in list(getattr(self._pool, "_processes", {}).values()):
                with contextlib.suppress(OSError):
                    process.kill()  # a pool's shutdown waits for the work; this does not
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None
