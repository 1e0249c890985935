"""Read a specification repository through the git command line.

The git CLI is the reader because it is everywhere git is, clones from a URL, a local clone or a
bundle with the same command, and reads objects fast enough with ``git show``; pygit2 cannot
clone bundles and dulwich's bundle support is partial. Remote URLs and bundles are cloned once
(bare) into a cache folder and fetched again on later builds.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class SourceError(RuntimeError):
    """The source repository cannot be reached or read."""


class TagInfo(BaseModel):
    """A tag and the commit it points at."""

    model_config = ConfigDict(frozen=True)

    name: str
    commit: str
    committed_at: datetime


def default_cache_dir() -> Path:
    """Where cloned repositories are kept between builds."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "ratified-rdf" / "repos"


class GitRepository:
    """A git repository opened for reading: tags, commits and file contents."""

    def __init__(self, git_dir: Path, source: str) -> None:
        self.git_dir = git_dir
        self.source = source

    @classmethod
    def open(cls, source: str | Path, cache_dir: Path | None = None) -> GitRepository:
        """Open a local clone as it is, or clone a URL or bundle into the cache (bare)."""
        text = str(source)
        local = Path(text).expanduser()
        if local.is_dir():
            git_dir = _run(["git", "-C", str(local), "rev-parse", "--absolute-git-dir"], text)
            return cls(Path(git_dir.strip()), text)
        if not local.exists() and "://" not in text and not text.startswith("git@"):
            raise SourceError(
                f"The source {text} is neither a folder, a file nor a URL. "
                "Pass a git URL, a local clone or a bundle file with --source."
            )
        origin = str(local.resolve()) if local.exists() else text
        cache = (cache_dir or default_cache_dir()) / hashlib.sha256(origin.encode()).hexdigest()[
            :16
        ]
        if (cache / "HEAD").exists():
            _run(
                [
                    "git",
                    "--git-dir",
                    str(cache),
                    "fetch",
                    "--quiet",
                    "--force",
                    "--tags",
                    origin,
                    "+refs/heads/*:refs/heads/*",
                ],
                text,
            )
        else:
            cache.parent.mkdir(parents=True, exist_ok=True)
            _run(["git", "clone", "--quiet", "--bare", origin, str(cache)], text)
        return cls(cache, text)

    def tags(self) -> dict[str, TagInfo]:
        """Every tag, peeled to its commit, with the commit's date."""
        out = self._git(
            "for-each-ref",
            "--format=%(refname:short)%09%(objectname)%09%(*objectname)"
            "%09%(committerdate:iso-strict)%09%(*committerdate:iso-strict)",
            "refs/tags",
        )
        tags: dict[str, TagInfo] = {}
        for line in out.splitlines():
            name, obj, peeled, date, peeled_date = (line.split("\t") + [""] * 5)[:5]
            tags[name] = TagInfo(
                name=name,
                commit=peeled or obj,
                committed_at=datetime.fromisoformat(peeled_date or date),
            )
        return tags

    def resolve(self, ref: str) -> TagInfo:
        """The commit a branch, tag or commit id names, with its date."""
        out = self._git("log", "-1", "--format=%H%x09%cI", f"{ref}^{{commit}}", "--")
        commit, date = out.strip().split("\t")
        return TagInfo(name=ref, commit=commit, committed_at=datetime.fromisoformat(date))

    def read_text(self, commit: str, path: str) -> str | None:
        """The file at ``path`` in ``commit``, or None when the commit has no such file."""
        result = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "show", f"{commit}:{path}"],
            capture_output=True,
            check=False,
        )
        if result.returncode != 0:
            return None
        return result.stdout.decode("utf-8", errors="replace")

    def _git(self, *args: str) -> str:
        return _run(["git", "--git-dir", str(self.git_dir), *args], self.source)


def _run(command: list[str], source: str) -> str:
    try:
        result = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise SourceError("git is not installed; install git to read a repository.") from None
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise SourceError(f"git could not read {source}: {reason}")
    return result.stdout


def load_commit_map(path: Path) -> dict[str, str]:
    """Read a ``bundle_sha <TAB> github_sha`` map; an absent file means ids are GitHub's own."""
    if not path.is_file():
        return {}
    mapping: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.strip().split("\t")
        if len(parts) == 2 and all(len(p) == 40 for p in parts):
            mapping[parts[0]] = parts[1]
    return mapping
