"""A pull request merged on the main line is linked even when its merge changed no document
file: the merge names the pull request and who merged it, where the discussion is git only."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ratified_rdf.build import read_git_evidence
from ratified_rdf.sources.git_repo import GitRepository


def _git(folder: Path, *args: str, date: str = "2030-01-01T10:00:00+00:00") -> str:
    env = {**os.environ, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    return subprocess.run(
        ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def _birds(folder: Path) -> Path:
    """A draft, a pull request (#15) that changes only the README, merged on the main line by
    Robin, and one (#16) that changes the draft."""
    folder.mkdir()
    _git(folder, "init", "-q", "-b", "main")
    _git(folder, "config", "user.email", "wren@example.org")
    _git(folder, "config", "user.name", "Wren Example")
    (folder / "draft-example-heron.md").write_text("# Herons\n\nHerons fly.\n")
    _git(folder, "add", ".")
    _git(folder, "commit", "-q", "-m", "Herons")
    _git(folder, "checkout", "-q", "-b", "readme")
    (folder / "README.md").write_text("Birds, by the example working group.\n")
    _git(folder, "add", ".")
    _git(folder, "commit", "-q", "-m", "A README", date="2030-01-02T10:00:00+00:00")
    _git(folder, "checkout", "-q", "main")
    _git(folder, "-c", "user.name=Robin Example", "-c", "user.email=robin@example.org",
         "merge", "-q", "--no-ff", "readme", "-m", "Merge pull request #15 from wren/readme",
         "-m", "A README for the birds", date="2030-01-03T10:00:00+00:00")  # fmt: skip
    _git(folder, "checkout", "-q", "-b", "egrets")
    (folder / "draft-example-heron.md").write_text("# Herons\n\nHerons and egrets fly.\n")
    _git(folder, "commit", "-q", "-am", "Egrets too", date="2030-01-04T10:00:00+00:00")
    _git(folder, "checkout", "-q", "main")
    merge_16 = "Merge pull request #16 from wren/egrets"
    _git(
        folder, "merge", "-q", "--no-ff", "egrets", "-m", merge_16, date="2030-01-05T10:00:00+00:00"
    )
    return folder


def test_a_merge_that_changed_no_document_file_still_names_its_pull_request(
    tmp_path: Path,
) -> None:
    folder = _birds(tmp_path / "birds")
    repo = GitRepository(folder / ".git", str(folder))
    evidence = read_git_evidence(repo, ["main"], ["draft-example-heron.md"])
    merges = {c.pull_request: c for c in evidence.commits if c.pull_request is not None}
    assert sorted(merges) == [15, 16]
    readme = merges[15]
    assert readme.subject == "Merge pull request #15 from wren/readme"
    assert (readme.committer_name, readme.committer_email) == ("Robin Example", "robin@example.org")
    # It changed no document file, so no section is credited to it.
    assert readme.changes == () and readme.touched == ()
    assert evidence.places.get(readme.commit, []) == []
    # Still oldest first, the README merge before the egrets commit.
    times = [c.committed_at for c in evidence.commits]
    assert times == sorted(times)
