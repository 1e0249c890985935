"""Commits as evidence: which headings each commit's diff touched, and what it belongs to.

One ``git log -p --unified=0`` over the document files gives every hunk; a diff driver whose
``xfuncname`` matches markdown headings makes git print, on each hunk line, the heading the
change sits under. Headings added or removed by the hunk count as touched too. The diff driver
is set through ``core.attributesFile`` and ``-c``, so nothing is written into the repository.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ratified_rdf.sources.git_repo import GitRepository, SourceError
from ratified_rdf.sources.kramdown import heading_of

_HUNK = re.compile(r"^@@ [^@]* @@ ?(.*)$")
_MERGED_PR = re.compile(r"Merge pull request #(\d+)")
_SQUASHED_PR = re.compile(r"\(#(\d+)\)\s*$")
_HEADING_FUNCNAME = r"^(%%)?#{1,6}[ \t].*$"


class TouchedHeading(BaseModel):
    """A heading whose section a commit changed, in one file."""

    model_config = ConfigDict(frozen=True)

    file: str
    heading: str


class CommitRecord(BaseModel):
    """A commit to the document files."""

    model_config = ConfigDict(frozen=True)

    commit: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    authored_at: datetime
    committed_at: datetime
    subject: str
    message: str
    touched: tuple[TouchedHeading, ...] = ()
    pull_request: int | None = None
    """The pull request a merge or squash commit names in its message."""


def read_history(repo: GitRepository, refs: list[str], files: list[str]) -> list[CommitRecord]:
    """Every commit reachable from ``refs`` that changed one of ``files``, oldest first."""
    with tempfile.NamedTemporaryFile("w", suffix=".gitattributes", delete=False) as attributes:
        attributes.write("".join(f"{f} diff=rfcdoc\n" for f in files))
    try:
        command = [
            "git",
            "--git-dir",
            str(repo.git_dir),
            "-c",
            f"core.attributesFile={attributes.name}",
            "-c",
            f"diff.rfcdoc.xfuncname={_HEADING_FUNCNAME}",
            "log",
            *refs,
            "--reverse",
            "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%B%x1d",
            "-p",
            "--unified=0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--",
            *files,
        ]
        result = subprocess.run(command, capture_output=True, check=False)
    finally:
        Path(attributes.name).unlink(missing_ok=True)
    if result.returncode != 0:
        reason = result.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise SourceError(f"git log failed on {repo.source}: {' '.join(reason)}")
    text = result.stdout.decode("utf-8", errors="replace")
    return [_commit(record) for record in text.split("\x1e")[1:]]


def _commit(record: str) -> CommitRecord:
    header, _, diff = record.partition("\x1d")
    commit, parents, name, email, authored, committed, message = header.split("\x1f", 6)
    touched: dict[tuple[str, str], None] = {}
    current_file = ""
    context: str | None = None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[4:].strip()
            current_file = path[2:] if path.startswith("b/") else path
            continue
        if line.startswith("--- "):
            path = line[4:].strip()
            if path != "/dev/null":
                current_file = path[2:] if path.startswith("a/") else path
            continue
        hunk = _HUNK.match(line)
        if hunk:
            # The heading git names is the last one *above* the hunk. It is the touched section
            # unless the hunk starts on a heading line, in which case that section is.
            context = heading_of(hunk.group(1).strip())
            continue
        if line[:1] in {"+", "-"}:
            heading = heading_of(line[1:])
            if context and not heading:
                touched[(current_file, context)] = None
            context = None
            if heading:
                touched[(current_file, heading)] = None
    subject = message.strip().splitlines()[0] if message.strip() else ""
    pr = _MERGED_PR.search(subject) or _SQUASHED_PR.search(subject)
    return CommitRecord(
        commit=commit.strip(),
        parents=tuple(parents.split()),
        author_name=name,
        author_email=email,
        authored_at=datetime.fromisoformat(authored),
        committed_at=datetime.fromisoformat(committed),
        subject=subject,
        message=message.strip(),
        touched=tuple(TouchedHeading(file=f, heading=h) for f, h in touched),
        pull_request=int(pr.group(1)) if pr else None,
    )


def first_containing(repo: GitRepository, ordered_refs: list[tuple[str, str]]) -> dict[str, str]:
    """For every commit, the name of the first ref (in the given order) that contains it.

    ``ordered_refs`` is (name, ref) in revision order, e.g. ("draft-ietf-tls-tls13-00", tag).
    """
    landed: dict[str, str] = {}
    for name, ref in ordered_refs:
        out = subprocess.run(
            ["git", "--git-dir", str(repo.git_dir), "rev-list", ref],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
        if out.returncode != 0:
            raise SourceError(f"git cannot list the history of {ref} in {repo.source}.")
        for commit in out.stdout.split():
            landed.setdefault(commit, name)
    return landed


def branch_commits(repo: GitRepository, merge_commit: str) -> list[str]:
    """Commits a merge brought in: those reachable from its second parent but not its first."""
    out = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "rev-list", f"{merge_commit}^1..{merge_commit}^2"],
        capture_output=True,
        text=True,
        errors="replace",  # git's messages quote bytes that need not be UTF-8
        check=False,
    )
    return out.stdout.split() if out.returncode == 0 else []


def commit_parents(repo: GitRepository, refs: list[str]) -> dict[str, tuple[str, ...]]:
    """Every commit reachable from ``refs`` with its parents, from one ``git rev-list``."""
    out = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "rev-list", "--parents", *refs],
        capture_output=True,
        text=True,
        errors="replace",  # git's messages quote bytes that need not be UTF-8
        check=False,
    )
    if out.returncode != 0:
        raise SourceError(f"git cannot list the commits of {repo.source}.")
    parents: dict[str, tuple[str, ...]] = {}
    for line in out.stdout.splitlines():
        commit, *rest = line.split()
        parents[commit] = tuple(rest)
    return parents
