"""Where an RFC's own text is in a repository that the manifest does not say holds it.

An ``[[rfc]]`` entry without ``ref`` and ``file`` is a fact about the RFC (number, title,
publication); its text may still be in the repository under a name the manifest does not
give. Three places are looked at, in this order:

- a file named after the RFC (``rfc9147.md``, ``.mkd``, ``.xml`` or ``.txt``, in any folder)
  on a branch, the default branch first;
- the first revision of the draft that revises it: at tag ``draft-…-rfc9147bis-00`` the
  document ``draft-…-rfc9147bis.md`` starts as RFC 9147's text, as working groups start a
  bis draft from the published RFC;
- the latest commit whose subject says it is the RFC ("RFC final", "as published", "RFC 9147
  as published"), in the document of a draft that became it at that commit.

Where neither holds it, :func:`locate_rfc_text` says so and the build lets the sections of
the last revision of the draft that became the RFC stand for the RFC's own.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ratified_rdf.sources.git_repo import GitRepository

__all__ = ["FoundRfcText", "locate_rfc_text", "unread_document_files"]

_SUFFIXES = (".md", ".mkd", ".xml", ".txt")


@dataclass(frozen=True)
class FoundRfcText:
    """Where a build found an RFC's text that the manifest did not name."""

    ref: str
    """The branch or tag whose tree holds the text."""
    file: str
    """The text's path at ``ref``."""
    how: str
    """Why this is the RFC's text, as a clause: "the file named after it on branch main"."""


def locate_rfc_text(
    repo: GitRepository, number: int, documents: Sequence[str] = ()
) -> FoundRfcText | None:
    """The RFC ``number``'s text in ``repo``, if a branch holds a file named after it, the
    first revision of its bis draft holds it, or a commit says it made one of ``documents``
    (the paths of the drafts that became it) the RFC's text; None when none of them does."""
    return (
        _named_file(repo, number)
        or _bis_first_revision(repo, number)
        or _final_commit(repo, number, documents)
    )


def _named_file(repo: GitRepository, number: int) -> FoundRfcText | None:
    default = repo.default_branch()
    branches = repo.branches()
    ordered = ([default] if default else []) + [b for b in branches if b != default]
    names = {f"rfc{number}{suffix}" for suffix in _SUFFIXES}
    for branch in ordered:
        # Shallowest first: a copy kept in an archive folder is not the one to read.
        found = sorted(
            (p for p in repo.list_files(branch) if PurePosixPath(p).name.lower() in names),
            key=lambda p: (p.count("/"), _SUFFIXES.index(PurePosixPath(p).suffix.lower()), p),
        )
        if found:
            return FoundRfcText(
                ref=branch, file=found[0], how=f"the file named after it on branch {branch}"
            )
    return None


def _bis_first_revision(repo: GitRepository, number: int) -> FoundRfcText | None:
    pattern = re.compile(rf"^(draft-[a-z0-9-]+-rfc{number}bis)-00$")
    for tag in sorted(repo.tags()):
        match = pattern.match(tag)
        if match is None:
            continue
        draft = match.group(1)
        files = repo.list_files(tag)
        for suffix in _SUFFIXES:
            candidates = sorted(
                (p for p in files if PurePosixPath(p).name == f"{draft}{suffix}"),
                key=lambda p: (p.count("/"), p),
            )
            if candidates:
                return FoundRfcText(
                    ref=tag,
                    file=candidates[0],
                    how=f"the first revision of {draft}, which starts as its text",
                )
    return None


_LONGEST_PATH = 1000
_DOCUMENT_FILE = re.compile(r"^(?:draft-[a-z0-9-]+|rfc\d+)(?:\.md|\.mkd|\.xml|\.txt)$", re.I)


def unread_document_files(repo: GitRepository, read: set[str]) -> tuple[str, ...]:
    """The files on the default branch that look like a draft's or an RFC's text
    (``draft-….md``, ``rfcNNNN.xml``, in any folder) but are not among the paths ``read``:
    what the brain does not hold although the repository does, for its holdings to list."""
    branch = repo.default_branch()
    if branch is None:
        return ()
    return tuple(
        path
        for path in repo.list_files(branch)
        if _DOCUMENT_FILE.match(PurePosixPath(path).name)
        and path not in read
        # A path the graph could not hold as one line of text is left out, not refused.
        and path.isprintable()
        and len(path) <= _LONGEST_PATH
    )


def _final_words(number: int) -> re.Pattern[str]:
    """A commit subject that says the commit is the RFC's text."""
    return re.compile(
        rf"\b(?:rfc[ -]?final|final rfc|as published|published as rfc|"
        rf"rfc[ -]?{number}\b.*\b(?:final|published))\b",
        re.IGNORECASE,
    )


def _final_commit(
    repo: GitRepository, number: int, documents: Sequence[str]
) -> FoundRfcText | None:
    if not documents:
        return None
    # Every commit on any branch that changed a draft's document, newest first.
    result = subprocess.run(
        [
            "git",
            "--git-dir",
            str(repo.git_dir),
            "log",
            "--all",
            "--format=%H%x09%s",
            "--",
            *documents,
        ],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        return None
    words = _final_words(number)
    for line in result.stdout.decode("utf-8", errors="replace").splitlines():
        commit, _, subject = line.partition("\t")
        if not words.search(subject):
            continue
        for path in documents:
            if repo.read_text(commit, path) is not None:
                return FoundRfcText(
                    ref=commit,
                    file=path,
                    how=f'commit {commit[:12]}, whose subject "{subject[:80]}" says it is the RFC',
                )
    return None
