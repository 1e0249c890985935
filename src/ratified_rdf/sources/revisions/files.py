"""Revisions from per-revision files: ``draft-…-NN.xml``, ``.txt`` or ``.md`` in any folder,
as the branch's history last changed them."""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePosixPath
from typing import ClassVar

from ratified_rdf.sources.revisions import (
    DOCUMENT_SUFFIXES,
    REVISION_NAME,
    FoundRevision,
    Rename,
    RepositoryScan,
    register,
    short,
)


def revision_of_file(path: str) -> tuple[str, str] | None:
    """(draft, number) when ``path`` is named after a numbered revision (``x/draft-a-b-03.txt``
    is revision 03 of draft-a-b), else None."""
    pure = PurePosixPath(path)
    if pure.suffix.lower() not in DOCUMENT_SUFFIXES:
        return None
    match = REVISION_NAME.match(pure.stem)
    return (match.group(1), match.group(2)) if match else None


class FileRevisions:
    """One file per revision, named ``<draft>-NN`` with a document suffix."""

    name: ClassVar[str] = "files"
    summary: ClassVar[str] = "a file named <draft>-NN per revision"

    def find(self, scan: RepositoryScan) -> list[FoundRevision]:
        """Each per-revision file at the last commit that changed its text (a later move
        changes no text, so the commit and path are those before it), the source format
        (``.md``, then ``.xml``) preferred where a revision has several files."""
        latest: dict[str, tuple[str, datetime]] = {}
        for commit in scan.history:
            for change in commit.changes:
                if change.status == "D" or revision_of_file(change.path) is None:
                    continue
                if change.status == "R" and change.similarity == 100:
                    continue  # moved, not changed: the text is still the one before
                latest[change.path] = (commit.commit, commit.committed_at)
        best: dict[tuple[str, str], FoundRevision] = {}
        for path, (commit_id, date) in sorted(latest.items()):
            draft, number = revision_of_file(path) or ("", "")
            candidate = FoundRevision(
                draft=draft,
                number=number,
                commit=commit_id,
                committed_at=date,
                source=self.name,
                provenance=f"file {path} at commit {short(commit_id)}",
                path=path,
            )
            held = best.get((draft, number))
            if held is None or _preference(path) < _preference(held.path or ""):
                best[(draft, number)] = candidate
        return sorted(best.values(), key=lambda r: (r.draft, r.number))

    def renames(self, scan: RepositoryScan) -> list[Rename]:
        """A per-revision file renamed to another draft's name (rare; followed all the same)."""
        found: list[Rename] = []
        for commit in scan.history:
            for change in commit.changes:
                if change.status != "R" or change.old_path is None:
                    continue
                old, new = revision_of_file(change.old_path), revision_of_file(change.path)
                if old and new and old[0] != new[0]:
                    rename = Rename(
                        old=old[0],
                        new=new[0],
                        because=f"commit {short(commit.commit)} renamed {change.old_path} to "
                        f"{change.path}",
                    )
                    if rename not in found:
                        found.append(rename)
        return found


def _preference(path: str) -> tuple[int, int, str]:
    suffix = PurePosixPath(path).suffix.lower()
    rank = DOCUMENT_SUFFIXES.index(suffix) if suffix in DOCUMENT_SUFFIXES else 99
    return (rank, len(PurePosixPath(path).parts), path)


register(FileRevisions())
