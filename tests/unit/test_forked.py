"""Work forked into a child process: it runs there, on the parent's memory, and hands back what
it returns or raises; a child that dies is a sentence."""

from __future__ import annotations

import os

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
