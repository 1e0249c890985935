"""A draft whose repository numbers no revision builds from its committed file history.

The Avocet working group never existed. Its repository keeps one mmark draft whose title
block names ``draft-ietf-avocet-wade-latest``: no tag, no per-revision file, no docname with
a number. The draft became RFC 9990 (a fact the records state; its text is not held), and the
last commit deleted the file from the default branch.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.answers.models import Holding
from ratified_rdf.records.manifest import ManifestError, load_manifest

_RR = "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>\n"
_DAY = iter(range(1, 29))

MANIFEST = """\
[brain]
id = "avocet"
title = "The Avocet drafts"
repository = "https://git.example/avocet"

[[draft]]
name = "draft-ietf-avocet-wade"
file = "draft-ietf-avocet-wade.md"
revisions = "latest"
revisions_from = ["latest"]
became = "rfc9990"

[[rfc]]
number = 9990
title = "Avocet Wading"
published = "2034-05"
"""


def _git(repo: Path, *args: str) -> None:
    date = f"2034-01-{next(_DAY, 28):02d}T10:00:00+00:00"
    env = {
        "GIT_AUTHOR_NAME": "Carol Example",
        "GIT_AUTHOR_EMAIL": "carol@example.com",
        "GIT_COMMITTER_NAME": "Carol Example",
        "GIT_COMMITTER_EMAIL": "carol@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _mmark(feeding: str) -> str:
    return (
        '%%%\n    Title = "Avocet Wading"\n    docName = "draft-ietf-avocet-wade-latest"\n'
        '    ipr = "trust200902"\n%%%\n\n.# Abstract\n\nAvocets wade (fictional).\n\n'
        "{mainmatter}\n\n# Introduction\n\nAvocets sweep their bills.\n\n"
        f"# Feeding\n\n{feeding}\n\n# Security Considerations\n\nMud is slippery.\n"
    )


@pytest.fixture
def avocet(tmp_path: Path) -> Path:
    repo = tmp_path / "avocet"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    document = repo / "draft-ietf-avocet-wade.md"
    for feeding in ("Avocets eat shrimp.", "Avocets eat shrimp and worms."):
        document.write_text(_mmark(feeding))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "feeding")
    _git(repo, "rm", "-q", document.name)
    _git(repo, "commit", "-q", "-m", "published: remove the draft")
    return repo


def test_an_unnumbered_draft_builds_its_text_as_last_committed(
    avocet: Path, tmp_path: Path
) -> None:
    records = tmp_path / "records"
    records.mkdir()
    (records / "manifest.toml").write_text(MANIFEST)
    brain, report = Brain.build(records, source=str(avocet))
    try:
        assert report.revisions == 1 and report.sections >= 3
        assert any("revisions not numbered in the repository" in n for n in report.notes)
        rows = brain.query(
            _RR + "SELECT ?n ?how ?page WHERE { ?r a rr:Revision ; rr:revisionNumber ?n ; "
            "rr:revisionProvenance ?how ; <http://xmlns.com/foaf/0.1/page> ?page }"
        ).rows
        assert [r["n"].value for r in rows] == ["latest"]
        assert "draft-ietf-avocet-wade.md as last committed" in rows[0]["how"].value
        # No page is invented for a revision number the datatracker never gave.
        assert not rows[0]["page"].value.rstrip("/").endswith("latest")
        # The text is the one before the deletion: the later feeding sentence is there.
        text = brain.query(
            _RR + "SELECT ?t WHERE { ?s rr:text ?t FILTER(CONTAINS(?t, 'worms')) }"
        ).rows
        assert text
        # Every card listing the draft's revisions names the gap and no number.
        listed = brain.ask("what revisions does draft-ietf-avocet-wade have?")
        assert listed.intent == "revisions"
        assert "revisions not numbered in the repository" in listed.summary
        assert "draft-ietf-avocet-wade-latest" in listed.summary
        held = brain.ask("what do you hold?")
        gap = [
            r
            for r in held.results
            if isinstance(r, Holding) and r.what == "revisions not numbered in the repository"
        ]
        assert [g.names for g in gap] == [["draft-ietf-avocet-wade"]]
        assert "numbers no revision of draft-ietf-avocet-wade" in held.summary
    finally:
        brain.close()


def test_latest_goes_with_its_source_and_takes_no_missing_revision(tmp_path: Path) -> None:
    path = tmp_path / "manifest.toml"
    path.write_text(MANIFEST.replace('revisions_from = ["latest"]\n', ""))
    with pytest.raises(ManifestError, match="go together"):
        load_manifest(path)
    path.write_text(
        MANIFEST.replace('revisions = "latest"', 'revisions = "latest"\nmissing = ["00"]')
    )
    with pytest.raises(ManifestError, match="never numbered"):
        load_manifest(path)
