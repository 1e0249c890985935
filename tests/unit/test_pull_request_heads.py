"""Which pull request a merge message names: only one the source holds a head for, when it
holds any (a fork's "Merge pull request #6 from …" brought in whole names the fork's #6)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from ratified_rdf.sources.git_history import (
    CommitRecord,
    held_pull_requests,
    pull_request_heads,
)
from ratified_rdf.sources.git_repo import GitRepository


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


def _repo(folder: Path) -> Path:
    folder.mkdir()
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "config", "user.email", "wren@example.org")
    _git(folder, "config", "user.name", "Wren Example")
    (folder / "draft.md").write_text("# Coo\n")
    _git(folder, "add", ".")
    _git(folder, "commit", "-q", "-m", "Coo")
    return folder


def _record(number: int | None) -> CommitRecord:
    moment = datetime(2020, 1, 1, tzinfo=UTC)
    return CommitRecord(
        commit=f"{number or 0:040x}",
        parents=(),
        author_name="Wren Example",
        author_email="wren@example.org",
        authored_at=moment,
        committed_at=moment,
        subject=f"Merge pull request #{number} from fork/branch" if number else "Coo",
        message="",
        pull_request=number,
    )


def test_a_number_without_a_head_is_dropped_where_the_source_holds_heads(tmp_path: Path) -> None:
    folder = _repo(tmp_path / "git")
    head = _git(folder, "rev-parse", "HEAD")
    _git(folder, "update-ref", "refs/pull/7/head", head)
    bundle = tmp_path / "pigeon.bundle"
    _git(folder, "bundle", "create", str(bundle), "--all")
    for source in (str(folder), str(bundle)):
        heads = pull_request_heads(GitRepository(folder / ".git", source))
        assert heads == {7}
        kept = held_pull_requests([_record(6), _record(7), _record(None)], heads)
        assert [c.pull_request for c in kept] == [None, 7, None]


def test_a_source_without_heads_leaves_every_number(tmp_path: Path) -> None:
    folder = _repo(tmp_path / "git")
    heads = pull_request_heads(GitRepository(folder / ".git", str(folder)))
    assert heads is None
    assert [c.pull_request for c in held_pull_requests([_record(6)], heads)] == [6]
    unreachable = GitRepository(folder / ".git", str(tmp_path / "not-there"))
    assert pull_request_heads(unreachable) is None
