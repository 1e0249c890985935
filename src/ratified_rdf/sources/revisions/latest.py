"""The one revision of a draft whose repository numbers none: the document as last committed.

Some repositories never number a revision: no ``<draft>-NN`` tag, no per-revision file, and
the front matter names ``draft-…-latest`` (the submission tool numbered each one). What the
repository does hold is the document's history; its text as last committed (before any later
commit deleted it) is read as one revision named ``latest``, and the commits before it are
credited by position as any revision's are. Which revisions the IETF numbered is not guessed:
the build names the gap.
"""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import PurePosixPath
from typing import ClassVar

from ratified_rdf.records.manifest import UNNUMBERED
from ratified_rdf.sources.revisions import (
    REVISION_NAME,
    FoundRevision,
    Rename,
    RepositoryScan,
    is_document,
    register,
    short,
)
from ratified_rdf.sources.revisions.docnames import docname_of, series_of

_DRAFT_NAME = re.compile(r"^draft-[a-z0-9]+(?:-[a-z0-9]+)+$")


class LatestRevisions:
    """A document file the branch's history changed, as last committed, whose docname names
    ``draft-…-latest`` (or, with no docname, whose file is named after an unnumbered draft)."""

    name: ClassVar[str] = "latest"
    summary: ClassVar[str] = "the document as last committed, where no revision is numbered"

    def find(self, scan: RepositoryScan) -> list[FoundRevision]:
        """One unnumbered revision per draft: its document's last change that is not a
        deletion (the file may since have been deleted from the branch)."""
        last: dict[str, tuple[str, datetime]] = {}
        for commit in scan.history:
            for change in commit.changes:
                if change.status != "D" and is_document(change.path):
                    last[change.path] = (commit.commit, commit.committed_at)
        paths = sorted(last)
        texts = scan.repo.read_texts([(last[p][0], p) for p in paths])
        found: dict[str, FoundRevision] = {}
        for path, text in zip(paths, texts, strict=True):
            draft = _unnumbered_draft(path, text)
            if draft is None:
                continue
            commit_id, date = last[path]
            revision = FoundRevision(
                draft=draft,
                number=UNNUMBERED,
                commit=commit_id,
                committed_at=date,
                source=self.name,
                provenance=f"file {path} as last committed, at commit {short(commit_id)} "
                "(the repository numbers no revision)",
                path=path,
            )
            held = found.get(draft)
            if held is None or held.committed_at < revision.committed_at:
                found[draft] = revision
        return sorted(found.values(), key=lambda r: r.draft)

    def renames(self, scan: RepositoryScan) -> list[Rename]:
        """Renames are the docname and file sources' to show."""
        return []


def _unnumbered_draft(path: str, text: str | None) -> str | None:
    """The draft whose unnumbered text ``path`` holds: the series of a ``-latest`` docname,
    else (no docname at all) the file's own name when it is a draft's without a number
    (``draft-x.md``, ``draft-x-latest.xml``)."""
    docname = docname_of(text) if text is not None else None
    if docname is not None:
        return series_of(docname) if docname.endswith(f"-{UNNUMBERED}") else None
    stem = series_of(PurePosixPath(path).stem.lower())  # draft-x-latest.xml is draft-x's
    if REVISION_NAME.match(stem) or not _DRAFT_NAME.match(stem):
        return None
    return stem


register(LatestRevisions())
