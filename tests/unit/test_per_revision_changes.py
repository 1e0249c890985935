"""Commits to a repository that keeps one file per revision, credited to that revision.

The Avocet working group never existed. Its repository has no tags: revision -00 is
``draft-ietf-avocet-sweeping-00.xml``, edited after it was first committed; revision -01 is a
copy, ``draft-ietf-avocet-sweeping-01.xml``, edited in turn, with the ``.txt`` rendered
beside it. A commit that changed the file named for a revision changed that revision.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.init_manifest import init_manifest

_RR = "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>\n"
_DC = "PREFIX dcterms: <http://purl.org/dc/terms/>\n"


def _git(repo: Path, *args: str, day: int = 1) -> str:
    date = f"2034-05-{day:02d}T10:00:00+00:00"
    env = {
        "GIT_AUTHOR_NAME": "Carol Example",
        "GIT_AUTHOR_EMAIL": "carol@example.net",
        "GIT_COMMITTER_NAME": "Carol Example",
        "GIT_COMMITTER_EMAIL": "carol@example.net",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout


def _xml(number: str, introduction: str, details: str) -> str:
    return (
        '<?xml version="1.0"?>\n'
        '<!DOCTYPE rfc SYSTEM "rfc2629.dtd" [\n<!ENTITY MUST "<bcp14>MUST</bcp14>">\n]>\n'
        f'<rfc docName="draft-ietf-avocet-sweeping-{number}" ipr="trust200902">\n'
        "<front><title>Avocet Sweeping</title>"
        '<author fullname="Carol Example"/></front>\n<middle>\n'
        f'<section title="Introduction">\n<t>{introduction}</t>\n</section>\n'
        f'<section title="Details">\n<t>{details}</t>\n</section>\n'
        "</middle>\n</rfc>\n"
    )


@pytest.fixture(scope="module")
def avocet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The repository and the ids of its commits by what they did."""
    repo = tmp_path_factory.mktemp("avocet") / "avocet"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    commits: dict[str, str] = {}
    steps = [
        ("00", "Avocets sweep.", "Bills curve up.", "add -00"),
        ("00", "Avocets sweep.", "Bills curve upwards.", "edit -00 details"),
        ("01", "Avocets sweep.", "Bills curve upwards.", "copy -01"),
        ("01", "Avocets sweep the shallows.", "Bills curve upwards.", "edit -01 introduction"),
    ]
    for day, (number, introduction, details, what) in enumerate(steps, 1):
        name = f"draft-ietf-avocet-sweeping-{number}"
        (repo / f"{name}.xml").write_text(_xml(number, introduction, details))
        if what == "edit -01 introduction":
            (repo / f"{name}.txt").write_text("rendered\n")
        _git(repo, "add", "-A", day=day)
        _git(repo, "commit", "-q", "-m", what, day=day)
        commits[what] = _git(repo, "rev-parse", "HEAD").strip()
    return repo, commits


def test_a_commit_to_a_revisions_own_file_changed_that_revision(
    avocet: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    repo, commits = avocet
    text = init_manifest(GitRepository.open(repo), name="avocet").text
    text = text.replace("https://example.invalid/fill-in-the-public-url", "https://git.example")
    text = "\n".join(line for line in text.splitlines() if "FILL IN:" not in line) + "\n"
    (tmp_path / "manifest.toml").write_text(text)
    brain, _ = Brain.build(tmp_path, source=str(repo))
    try:
        rows = brain.query(
            _RR + _DC + "SELECT ?id ?section ?title WHERE { ?c rr:commitId ?id ; "
            "rr:changedSection ?section . ?section dcterms:title ?title }"
        ).rows
    finally:
        brain.close()
    changed = {
        (row["id"].value, row["section"].value.rsplit("/doc/", 1)[1], row["title"].value)
        for row in rows
    }
    edit_00, edit_01 = commits["edit -00 details"], commits["edit -01 introduction"]
    assert (edit_00, "draft-ietf-avocet-sweeping/00/section/2", "Details") in changed
    # The manifest's file is -00's: -01's own file was never followed before.
    assert (edit_01, "draft-ietf-avocet-sweeping/01/section/1", "Introduction") in changed
    assert not any(c == edit_01 and "/00/" in s for c, s, _ in changed)
