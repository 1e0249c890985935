"""Work forked into a child process: it runs there, on the parent's memory, and hands back what
it returns or raises; a child that dies is a sentence."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ratified_rdf._errors import SourceError
from ratified_rdf._forked import ChildDied, Forked


def test_the_work_runs_in_another_process_on_what_the_parent_holds() -> None:
    held = {"posts": list(range(1000))}  # never sent: the fork inherits it
    forked = Forked(lambda: (os.getpid(), sum(held["posts"])), "adding up posts")
    child, total = forked.result()
    assert total == sum(range(1000))
    assert child != os.getpid()


def test_what_the_work_raises_is_raised_in_the_parent() -> None:
    def broken() -> None:
        raise SourceError("The GitHub archive is not JSON: fix the file and build again.")

    with pytest.raises(SourceError, match="is not JSON"):
        Forked(broken, "reading the archive").result()


def test_a_child_that_dies_is_a_sentence() -> None:
    with pytest.raises(ChildDied, match="reading the archive died before it answered"):
        Forked(lambda: os._exit(9), "reading the archive").result()


def test_on_one_core_the_work_runs_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert Forked(os.getpid, "asking for the pid").result() == os.getpid()


def test_the_answer_comes_through_a_private_file_read_after_the_child_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The child streams what it returns to a file in a folder of its build's own (mode
    0700), the parent reads it once the child has ended, and the folder is removed after,
    whether the work answered, raised or died."""
    import stat
    import tempfile

    from ratified_rdf._forked import RESULT_PREFIX

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def answer() -> dict[str, object]:
        (folder,) = tmp_path.glob(f"{RESULT_PREFIX}{os.getppid()}-*")
        mode = oct(stat.S_IMODE(folder.stat().st_mode))
        return {"posts": ["é" * 100] * 1000, "child": os.getpid(), "mode": mode}

    forked = Forked(answer, "reading the archive")
    got = forked.result()
    assert got["posts"] == ["é" * 100] * 1000 and got["child"] != os.getpid()
    assert got["mode"] == "0o700"
    child = got["child"]
    assert isinstance(child, int)
    with pytest.raises(ProcessLookupError):  # it has ended
        os.kill(child, 0)
    assert list(tmp_path.glob(f"{RESULT_PREFIX}*")) == []
    with pytest.raises(ChildDied):
        Forked(lambda: os._exit(9), "reading the archive").result()
    with pytest.raises(ValueError, match="broken"):
        Forked(lambda: int("broken"), "reading the archive").result()
    assert list(tmp_path.glob(f"{RESULT_PREFIX}*")) == []


def test_a_child_outlives_the_thread_that_started_it_and_not_the_process() -> None:
    """A child asks the kernel to kill it when its parent goes, and the kernel means the
    parent *thread*: a child started from a pool thread was killed when that thread ended.
    Started through ``start_module``, from whatever thread, it runs while this process does."""
    import socket
    import subprocess
    import threading
    from multiprocessing.connection import Connection

    from ratified_rdf._forked import start_module

    ours, theirs = socket.socketpair()
    conn = Connection(os.dup(ours.fileno()))
    ours.close()
    started: list[subprocess.Popen[bytes]] = []

    def start_and_ask() -> None:
        child = start_module(
            "ratified_rdf.queries.sandbox",
            [str(theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
        )
        started.append(child)
        conn.send(("load", (), b""))
        conn.recv()  # it runs, so it has asked for its parent-death signal

    thread = threading.Thread(target=start_and_ask)
    thread.start()
    thread.join()  # the thread that started the child has ended
    theirs.close()
    (child,) = started
    with conn:
        conn.send(("load", (), b""))
        assert conn.poll(60), "the child stopped answering"
        assert conn.recv() == ("loaded", "")  # not killed with the thread
    assert child.wait(timeout=60) == 0  # and it ends when this side closes
