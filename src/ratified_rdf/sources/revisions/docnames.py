"""Revisions from the commits whose front matter names a numbered revision: ``docname:
draft-…-07`` in kramdown-rfc, ``<rfc docName="draft-…-07">`` in xml2rfc.

A docname names the revision a text is being written as over many commits; the revision's
text is taken at the last of them (the text as it stood when the next revision began), which
is a guess and marked as one.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import ClassVar

from ratified_rdf.sources.revisions import (
    REVISION_NAME,
    FoundRevision,
    Rename,
    RepositoryScan,
    is_document,
    register,
    short,
)

_DOCNAME = re.compile(
    r"""^\s*docname\s*:\s*["']?(draft-[A-Za-z0-9-]+?)["']?\s*$|docName\s*=\s*["'](draft-[A-Za-z0-9-]+)["']""",
    re.MULTILINE,
)
_HEAD_CHARS = 8000
"""How far into a file its docname is looked for: front matter and <rfc> come first."""


_NUMBERED_OR_LATEST = re.compile(r"^draft-[a-z0-9]+(?:-[a-z0-9]+)+-(?:\d{2}|latest)$")


def docname_of(text: str) -> str | None:
    """The docname a draft's text gives (``draft-x-07``, ``draft-x-latest``), lower-cased;
    None when it gives none or one that names no revision (``draft-x-01pre``)."""
    match = _DOCNAME.search(text[:_HEAD_CHARS])
    if not match:
        return None
    name = (match.group(1) or match.group(2)).lower()
    return name if _NUMBERED_OR_LATEST.match(name) else None


def series_of(docname: str) -> str:
    """The draft a docname belongs to: ``draft-x-07`` and ``draft-x-latest`` are draft-x."""
    return re.sub(r"-(\d{2}|latest)$", "", docname)


class _Walk:
    """The docname of every document file along the branch, commit by commit."""

    def __init__(self, scan: RepositoryScan) -> None:
        self.last: dict[tuple[str, str], tuple[str, datetime, str]] = {}
        self.renames: list[Rename] = []
        if scan.ref is None:
            return
        points = scan.repo.history(scan.ref, touching="[dD]oc[nN]ame")
        wanted = [
            (c.commit, ch.path)
            for c in points
            for ch in c.changes
            if ch.status != "D" and is_document(ch.path)
        ]
        read = dict(zip(wanted, scan.repo.read_texts(wanted), strict=True))
        named: dict[str, str] = {}
        for commit in scan.history:
            for change in commit.changes:
                path = change.path
                if change.status == "D":
                    named.pop(path, None)
                    continue
                before = (
                    named.pop(change.old_path, None)
                    if change.status == "R" and change.old_path is not None
                    else None
                )
                if change.old_path and change.status == "C":
                    before = named.get(change.old_path)
                text = read.get((commit.commit, path))
                now = docname_of(text) if text is not None else None
                current = now or before or named.get(path)
                if current is None:
                    continue
                previous = before or named.get(path)
                named[path] = current
                if previous and series_of(previous) != series_of(current):
                    self._renamed(previous, current, path, commit.commit, change.old_path)
                match = REVISION_NAME.match(current)
                if match:
                    self.last[(match.group(1), match.group(2))] = (
                        commit.commit,
                        commit.committed_at,
                        path,
                    )

    def _renamed(
        self, previous: str, current: str, path: str, commit: str, old_path: str | None
    ) -> None:
        where = f"{old_path} renamed to {path}" if old_path else path
        rename = Rename(
            old=series_of(previous),
            new=series_of(current),
            because=f"at commit {short(commit)} ({where}) the docname {previous} became {current}",
        )
        if all((r.old, r.new) != (rename.old, rename.new) for r in self.renames):
            self.renames.append(rename)


class DocnameRevisions:
    """The commits whose docname names a numbered revision."""

    name: ClassVar[str] = "docnames"
    summary: ClassVar[str] = "the last commit whose docname names <draft>-NN"

    def _walk(self, scan: RepositoryScan) -> _Walk:
        return scan.memo(self.name, lambda: _Walk(scan))

    def find(self, scan: RepositoryScan) -> list[FoundRevision]:
        """A revision per numbered docname, at the last commit that named it."""
        return [
            FoundRevision(
                draft=draft,
                number=number,
                commit=commit,
                committed_at=date,
                source=self.name,
                provenance=f"commit {short(commit)}, the last whose {path} names {draft}-{number}",
                path=path,
                guess=True,
            )
            for (draft, number), (commit, date, path) in sorted(self._walk(scan).last.items())
        ]

    def renames(self, scan: RepositoryScan) -> list[Rename]:
        """A file whose docname turned from one draft's name to another's."""
        return list(self._walk(scan).renames)


register(DocnameRevisions())
