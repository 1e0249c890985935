"""A local clone made with ``git clone`` holds its default branch alone; the others (the
``gh-pages`` a manifest reads the GitHub archive from) are ``origin``'s, and are read there."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ratified_rdf.sources.git_repo import GitRepository


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=Ada", "-c", "user.email=ada@example.com", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_a_branch_only_the_clone_s_origin_has_is_read_from_origin(tmp_path: Path) -> None:
    upstream = tmp_path / "pigeon"
    upstream.mkdir()
    _git("init", "-q", "-b", "main", cwd=upstream)
    (upstream / "coo.md").write_text("Coo.\n")
    _git("add", ".", cwd=upstream)
    _git("commit", "-q", "-m", "Coo", cwd=upstream)
    _git("checkout", "-q", "-b", "gh-pages", cwd=upstream)
    (upstream / "archive.json").write_text("{}\n")
    _git("add", ".", cwd=upstream)
    _git("commit", "-q", "-m", "Archive", cwd=upstream)
    pages = _git("rev-parse", "HEAD", cwd=upstream)
    _git("checkout", "-q", "main", cwd=upstream)
    clone = tmp_path / "clone"
    _git("clone", "-q", str(upstream), str(clone), cwd=tmp_path)
    repo = GitRepository.open(clone)
    assert repo.resolve("gh-pages").commit == pages
    assert repo.read_text(repo.resolve("gh-pages").commit, "archive.json") == "{}\n"
    # Every reader of branches sees it too: the list, the tree, the history.
    assert repo.branches() == ["gh-pages", "main"]
    assert repo.list_files("gh-pages") == ["archive.json", "coo.md"]
    assert [c.commit for c in repo.history("gh-pages")][-1] == pages
