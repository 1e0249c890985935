"""What tests of the work done on both cores share: counting the forks a module makes, and
the document texts a history's changes name."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

import pytest

from ratified_rdf import _forked
from ratified_rdf.sources.formats import FORMATS, DocumentFormat
from ratified_rdf.sources.git_history import CommitRecord


def counted_forks(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[str]:
    """The ``what`` of every :class:`~ratified_rdf._forked.Forked` ``module`` starts from now
    on (its ``Forked`` replaced by one that counts and still forks), in order."""
    forks: list[str] = []

    class Counted(_forked.Forked[object]):
        def __init__(self, work: object, what: str) -> None:
            forks.append(what)
            super().__init__(work, what)  # type: ignore[arg-type]

    # A module that imports Forked where it forks (so that answering never imports
    # multiprocessing) reads it from _forked at that moment; one that imports it at its top
    # holds its own name for it.
    monkeypatch.setattr(_forked, "Forked", Counted)
    if hasattr(module, "Forked"):
        monkeypatch.setattr(module, "Forked", Counted)
    return forks


def markdown_blobs(history: Sequence[CommitRecord]) -> dict[str, DocumentFormat]:
    """Every blob (before and after) of the markdown files ``history``'s commits changed, with
    its format (what ``git_history._outlines`` reads blobs by)."""
    return {
        blob: FORMATS["kramdown"]
        for commit in history
        for change in commit.changes
        if change.file.endswith(".md")
        for blob in (change.old_blob, change.new_blob)
        if blob
    }
