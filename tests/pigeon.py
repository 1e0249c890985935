"""A fictional spec repository, made with git in a temporary folder, for end-to-end tests.

The Pigeon Transport Protocol never existed: three revisions tagged draft-example-pigeon-00…02
and the RFC text (rfc9999.md) on main, from the files in tests/fixtures/pigeon/.
"""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf.audit import AuditLog
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.sources.mail import mail_archive_permalink

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pigeon"
MANIFEST = FIXTURES / "manifest.toml"
DATES = ["2029-01-10T10:00:00+00:00", "2029-06-01T10:00:00+00:00", "2029-11-20T10:00:00+00:00"]


def _git(
    repo: Path, *args: str, date: str | None = None, author: tuple[str, str] | None = None
) -> None:
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
    if author:
        env["GIT_AUTHOR_NAME"], env["GIT_AUTHOR_EMAIL"] = author
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


BOB = ("Bob Example", "bob@example.org")


_MADE: dict[int, Path] = {}
"""The repository made with git once in this process (by process id), which later calls copy."""


def make_pigeon_repo(folder: Path) -> Path:
    """Create the fictional repository in ``folder`` and return its path.

    Between revisions -00 and -01, Bob's pull request #2 changes only the Take-off section on
    a branch and is merged with a merge commit; the gh-pages branch holds the issue archive.

    Git makes it once per process; every call gets a copy of its own (the same commits, ids
    and branches: the dates and authors are fixed), so no test sees another's changes to it.
    """
    made = _MADE.get(os.getpid())
    if made is None:
        scratch = Path(tempfile.mkdtemp(prefix="ratified-pigeon-", dir=_SCRATCH_ROOT))
        atexit.register(_remove_if_mine, scratch, os.getpid())
        made = _MADE[os.getpid()] = _make_with_git(scratch)
    repo = folder / "pigeon-spec"
    shutil.copytree(made, repo, symlinks=True)
    return repo


_SCRATCH_ROOT = tempfile.gettempdir()
"""Where the repository is made once per process: the temporary folder when this module was
imported, not a test's own ``TMPDIR`` (a test that counts what its builds leave there would
count it)."""


def _remove_if_mine(folder: Path, pid: int) -> None:
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def _make_with_git(folder: Path) -> Path:
    repo = folder / "pigeon-spec"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    document = repo / "draft-example-pigeon.md"
    ids: dict[str, str] = {}
    for number, date in enumerate(DATES):
        if number == 1:
            ids["base"] = _head(repo)
            _git(repo, "checkout", "-q", "-b", "takeoff")
            text = document.read_text().replace("tied to its leg.", "tied to its leg securely.")
            document.write_text(text)
            _git(
                repo,
                "commit",
                "-q",
                "-am",
                "Tie datagrams securely",
                date="2029-03-01T09:00:00+00:00",
                author=BOB,
            )
            ids["head"] = _head(repo)
            _git(repo, "checkout", "-q", "main")
            _git(
                repo,
                "merge",
                "-q",
                "--no-ff",
                "-m",
                "Merge pull request #2 from bob-example/takeoff",
                "takeoff",
                date="2029-03-02T10:00:00+00:00",
            )
            ids["merge"] = _head(repo)
        shutil.copy(FIXTURES / f"draft-example-pigeon-{number:02d}.md", document)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"revision {number:02d}", date=date)
        _git(repo, "tag", f"draft-example-pigeon-{number:02d}")
    shutil.copy(FIXTURES / "rfc9999.md", repo / "rfc9999.md")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "as published", date="2030-04-02T10:00:00+00:00")
    archive = (FIXTURES / "pigeon-archive.json").read_text()
    ids["knot1"] = (
        mail_archive_permalink("knot-1@example.com", "pigeon").rstrip("/").rsplit("/", 1)[-1]
    )
    for key, commit in ids.items():
        archive = archive.replace("{" + key + "}", commit)
    _git(repo, "checkout", "-q", "--orphan", "gh-pages")
    _git(repo, "rm", "-rfq", ".")
    (repo / "archive.json").write_text(archive)
    _git(repo, "add", "archive.json")
    _git(repo, "commit", "-q", "-m", "archive", date="2030-05-02T00:00:00+00:00")
    _git(repo, "checkout", "-q", "main")
    return repo


def _head(repo: Path) -> str:
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def build_pigeon(
    repo: Path, backend: str, request: pytest.FixtureRequest
) -> tuple[Brain, BuildReport]:
    """The pigeon brain built from ``repo`` in the ``backend`` store (see ``conftest.backend``):
    the embedded store in memory, a store folder opened with ``in_memory`` (answers from a
    copy of the reader's graphs), or the session's Oxigraph server."""
    if backend == "embedded":
        return Brain.build(MANIFEST, source=str(repo))
    if backend == "copied-in-memory":
        folder = request.getfixturevalue("tmp_path_factory").mktemp("pigeon-store") / "store"
        built, report = Brain.build(MANIFEST, source=str(repo), path=folder)
        built.close()
        opened = Brain.open(folder, in_memory=True)
        request.addfinalizer(opened.close)
        return opened, report
    url = request.getfixturevalue("oxigraph_url")
    log = AuditLog.open(request.getfixturevalue("tmp_path_factory").mktemp("audit"))
    return Brain.build(MANIFEST, source=str(repo), path=url, audit=log)


def reviewed_pigeon_store(folder: Path) -> tuple[Path, OxigraphStore]:
    """The fictional repository made under ``folder`` and its brain built into a store on
    disk there, with one review written: a rebuild of it has a reviews graph outside its
    run."""
    from ratified_rdf import build as build_module
    from ratified_rdf.trust import Reader

    repo = make_pigeon_repo(folder / "git")
    store = OxigraphStore(folder / "db")
    build_module.build(MANIFEST, source=str(repo), store=store)
    reviewed = Brain.from_store(store, reader=Reader(clearance="internal"))
    reviewed.review("who discussed RFC 9999 section 3.1?", reviewer="Dana", verdict="ratified")
    return repo, store
