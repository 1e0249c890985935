"""A fictional spec repository, made with git in a temporary folder, for end-to-end tests.

The Pigeon Transport Protocol never existed: three revisions tagged draft-example-pigeon-00…02
and the RFC text (rfc9999.md) on main, from the files in tests/fixtures/pigeon/.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pigeon"
MANIFEST = FIXTURES / "manifest.toml"
DATES = ["2029-01-10T10:00:00+00:00", "2029-06-01T10:00:00+00:00", "2029-11-20T10:00:00+00:00"]


def _git(repo: Path, *args: str, date: str | None = None) -> None:
    env = {
        "GIT_AUTHOR_NAME": "Alice Example",
        "GIT_AUTHOR_EMAIL": "alice@example.com",
        "GIT_COMMITTER_NAME": "Alice Example",
        "GIT_COMMITTER_EMAIL": "alice@example.com",
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def make_pigeon_repo(folder: Path) -> Path:
    """Create the fictional repository in ``folder`` and return its path."""
    repo = folder / "pigeon-spec"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for number, date in enumerate(DATES):
        shutil.copy(
            FIXTURES / f"draft-example-pigeon-{number:02d}.md", repo / "draft-example-pigeon.md"
        )
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"revision {number:02d}", date=date)
        _git(repo, "tag", f"draft-example-pigeon-{number:02d}")
    shutil.copy(FIXTURES / "rfc9999.md", repo / "rfc9999.md")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "as published", date="2030-04-02T10:00:00+00:00")
    return repo
