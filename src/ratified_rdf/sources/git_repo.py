"""Read a specification repository through the git command line.

The git CLI is the reader because it is everywhere git is, clones from a URL, a local clone or a
bundle with the same command, and reads objects fast enough with ``git show``; pygit2 cannot
clone bundles and dulwich's bundle support is partial. Remote URLs and bundles are cloned once
(bare) into a cache folder and fetched again on later builds.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ratified_rdf._errors import SourceError


class TagInfo(BaseModel):
    """A tag and the commit it points at."""

    model_config = ConfigDict(frozen=True)

    name: str
    commit: str
    committed_at: datetime


class FileChange(BaseModel):
    """A file a commit (or range of commits) added, modified, deleted, renamed or copied."""

    model_config = ConfigDict(frozen=True)

    status: str
    """git's status letter: A, M, D, R (renamed or moved), C (copied), T (type changed)."""
    path: str
    old_path: str | None = None
    """For a rename or copy, the path it came from."""
    similarity: int | None = None
    """For a rename or copy, how alike the two files are, in percent (100: unchanged)."""


class CommitChanges(BaseModel):
    """A commit, its date and the files it changed (against its first parent)."""

    model_config = ConfigDict(frozen=True)

    commit: str
    committed_at: datetime
    changes: tuple[FileChange, ...]


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
        bundle = local.is_file()
        if bundle:
            _check_bundle(local)
        remedy = _BUNDLE_REMEDY if bundle else _SOURCE_REMEDY
        origin = str(local.resolve()) if local.exists() else text
        cache = (cache_dir or default_cache_dir()) / hashlib.sha256(
            origin.encode("utf-8", "surrogateescape")
        ).hexdigest()[:16]
        fresh = not (cache / "HEAD").exists()
        try:
            if fresh:
                cache.parent.mkdir(parents=True, exist_ok=True)
                _run(["git", "clone", "--quiet", "--bare", origin, str(cache)], text, remedy)
            else:
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
                    remedy,
                )
            repository = cls(cache, text)
            if not repository._git("for-each-ref", "--count=1").strip():
                raise SourceError(
                    f"The source {text} holds no branches or tags: "
                    + (
                        "the bundle is cut short or was made from an empty repository. "
                        if bundle
                        else "the repository is empty. "
                    )
                    + remedy
                )
        except SourceError:
            if fresh:  # a later, good copy of the same source must clone afresh
                shutil.rmtree(cache, ignore_errors=True)
            raise
        return repository

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
        """The commit a branch, tag or commit id names, with its date. In a local clone, a
        branch only its ``origin`` has (``git clone`` makes the default branch alone local,
        so a manifest's ``gh-pages`` is ``origin/gh-pages`` there) is read from ``origin``."""
        out = self._git("log", "-1", "--format=%H%x09%cI", f"{self._ref(ref)}^{{commit}}", "--")
        commit, date = out.strip().split("\t")
        return TagInfo(name=ref, commit=commit, committed_at=datetime.fromisoformat(date))

    def _ref(self, ref: str) -> str:
        """``ref``, or ``refs/remotes/origin/<ref>`` when only the clone's ``origin`` has a
        branch of that name."""
        if ref in self._origin_branches() and ref not in self._local_branches():
            return f"refs/remotes/origin/{ref}"
        return ref

    def _local_branches(self) -> list[str]:
        out = self._git("for-each-ref", "--format=%(refname:short)", "refs/heads")
        return [line for line in out.splitlines() if line]

    def _origin_branches(self) -> list[str]:
        out = self._git("for-each-ref", "--format=%(refname)", "refs/remotes/origin")
        prefix = "refs/remotes/origin/"
        return [
            line.removeprefix(prefix)
            for line in out.splitlines()
            if line.startswith(prefix) and line != f"{prefix}HEAD"
        ]

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

    def default_branch(self) -> str | None:
        """The branch HEAD names (a bundle's or clone's default branch), or None when HEAD is
        detached or names no branch."""
        result = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "symbolic-ref", "--quiet", "--short", "HEAD"],
            capture_output=True,
            check=False,
        )
        name = result.stdout.decode("utf-8", errors="replace").strip()
        if result.returncode != 0 or not name or name not in self.branches():
            return None
        return name

    def branches(self) -> list[str]:
        """The names of every branch, sorted: a local clone's own, and those only its
        ``origin`` has (``git clone`` makes the default branch alone local)."""
        return sorted({*self._local_branches(), *self._origin_branches()})

    def remote_url(self) -> str | None:
        """Where a local clone's ``origin`` remote points, if it has one."""
        result = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), "config", "--get", "remote.origin.url"],
            capture_output=True,
            check=False,
        )
        url = result.stdout.decode("utf-8", errors="replace").strip()
        return url if result.returncode == 0 and url else None

    def list_files(self, ref: str) -> list[str]:
        """Every file path in the tree of ``ref`` (a branch, tag or commit), sorted."""
        out = self._git("ls-tree", "-r", "-z", "--name-only", f"{self._ref(ref)}^{{commit}}", "--")
        return sorted(path for path in out.split("\0") if path)

    def changed_files(self, old: str | None, new: str) -> list[FileChange]:
        """The files that differ between commits ``old`` and ``new``, renames and moves found
        by content; with ``old`` None, what commit ``new`` itself changed."""
        if old is None:
            out = self._git("diff-tree", "-r", "-z", "-M", "--root", "--name-status", new, "--")
        else:
            out = self._git("diff", "-z", "-M", "--name-status", old, new, "--")
        fields = [f for f in out.split("\0") if f]
        if old is None and fields and len(fields[0]) == 40:
            fields = fields[1:]  # diff-tree first prints the commit id
        changes: list[FileChange] = []
        index = 0
        while index < len(fields):
            status = fields[index]
            if status[:1] in {"R", "C"}:
                before, after = fields[index + 1], fields[index + 2]
                changes.append(FileChange(status=status[0], path=after, old_path=before))
                index += 3
            else:
                changes.append(FileChange(status=status[0], path=fields[index + 1]))
                index += 2
        return changes

    def history(self, ref: str, *, touching: str | None = None) -> list[CommitChanges]:
        """Every commit reachable from ``ref``, oldest first, with the files each changed
        against its first parent (renames found by content). With ``touching`` (a regular
        expression), only the commits whose diff adds or removes a line matching it."""
        args = [
            "-c",
            "core.quotePath=false",
            "log",
            "--reverse",
            "--first-parent",
            "-M",
            "--name-status",
            "--format=%x01%H%x09%cI",
        ]
        if touching is not None:
            args.append(f"-G{touching}")
        out = self._git(*args, f"{self._ref(ref)}^{{commit}}", "--")
        commits: list[CommitChanges] = []
        for block in out.split("\x01")[1:]:
            lines = block.splitlines()
            commit, date = lines[0].split("\t")
            changes: list[FileChange] = []
            for line in lines[1:]:
                parts = line.split("\t")
                if len(parts) == 3 and parts[0][:1] in {"R", "C"}:
                    score = parts[0][1:]
                    changes.append(
                        FileChange(
                            status=parts[0][0],
                            path=parts[2],
                            old_path=parts[1],
                            similarity=int(score) if score.isdigit() else None,
                        )
                    )
                elif len(parts) == 2 and parts[0]:
                    changes.append(FileChange(status=parts[0][0], path=parts[1]))
            commits.append(
                CommitChanges(
                    commit=commit,
                    committed_at=datetime.fromisoformat(date),
                    changes=tuple(changes),
                )
            )
        return commits

    def read_texts(self, wanted: list[tuple[str, str]]) -> list[str | None]:
        """The file at each ``(commit, path)``, or None where the commit has no such file:
        one ``git cat-file`` for them all, so that reading many is not a process each."""
        usable = [(c, p) for c, p in wanted if "\n" not in p]
        texts: dict[tuple[str, str], str | None] = dict.fromkeys(wanted)
        if usable:
            request = "".join(f"{c}:{p}\n" for c, p in usable).encode("utf-8", "surrogateescape")
            result = subprocess.run(
                ["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
                input=request,
                capture_output=True,
                check=False,
            )
            data, at = result.stdout, 0
            for key in usable:
                end = data.find(b"\n", at)
                if end < 0:
                    break
                header = data[at:end].split(b" ")
                at = end + 1
                if len(header) != 3 or not header[2].isdigit():
                    continue  # "<spec> missing" (or ambiguous): no such file
                size = int(header[2])
                if header[1] == b"blob":
                    texts[key] = data[at : at + size].decode("utf-8", errors="replace")
                at += size + 1
        return [texts[key] for key in wanted]

    def former_paths(self, ref: str, path: str) -> list[str]:
        """The names ``path`` had before, following renames back through its history at
        ``ref`` (most recent first), without ``path`` itself."""
        out = self._git(
            "log",
            "--follow",
            "-M",
            "--diff-filter=R",
            "--format=",
            "--name-status",
            ref,
            "--",
            path,
        )
        former: list[str] = []
        for line in out.splitlines():
            parts = line.split("\t")
            if len(parts) == 3 and parts[0].startswith("R") and parts[1] not in former:
                former.append(parts[1])
        return [p for p in former if p != path]

    def _git(self, *args: str) -> str:
        return _run(["git", "--git-dir", str(self.git_dir), *args], self.source)


_BUNDLE_SIGNATURES = (b"# v2 git bundle\n", b"# v3 git bundle\n")
_BUNDLE_REMEDY = (
    "Make the bundle again in the repository (git bundle create FILE --all), or pass a local "
    "clone or a URL with --source."
)
_SOURCE_REMEDY = "Check the source, or pass a local clone or a bundle file with --source."


def _check_bundle(path: Path) -> None:
    """Raise :class:`SourceError` unless ``path`` starts as a git bundle does."""
    try:
        with path.open("rb") as handle:
            head = handle.read(len(_BUNDLE_SIGNATURES[0]))
    except OSError as error:
        raise SourceError(
            f"The bundle {path} cannot be read ({error.strerror}); check that it is there and "
            "that you may read it."
        ) from None
    if not head:
        raise SourceError(f"The bundle {path} is an empty file. {_BUNDLE_REMEDY}")
    if head not in _BUNDLE_SIGNATURES:
        raise SourceError(
            f"{path} is not a git bundle: a bundle starts with '# v2 git bundle' or "
            f"'# v3 git bundle'. {_BUNDLE_REMEDY}"
        )


def _run(command: list[str], source: str, remedy: str = _SOURCE_REMEDY) -> str:
    try:
        result = subprocess.run(command, capture_output=True, check=False)
    except FileNotFoundError:
        raise SourceError("git is not installed; install git to read a repository.") from None
    # git prints what it read (a bundle's header, a path) as bytes, which need not be UTF-8.
    stderr = result.stderr.decode("utf-8", errors="replace")
    if result.returncode != 0:
        raise SourceError(f"git could not read {source}: {_reason(stderr)}. {remedy}")
    return result.stdout.decode("utf-8", errors="replace")


def _reason(stderr: str) -> str:
    """git's own reason for a failure: its first ``error:`` or ``fatal:`` line (later lines
    are generic advice such as "Please make sure you have the correct access rights")."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    for line in lines:
        for prefix in ("error: ", "fatal: "):
            if line.startswith(prefix):
                return _printable(line.removeprefix(prefix).rstrip("."))
    return _printable(lines[-1].rstrip(".")) if lines else "no reason given"


def _printable(text: str) -> str:
    """``text`` with control characters (ANSI escapes a bundle could smuggle in) shown as
    escapes, not sent to the terminal."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)[:300]


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
