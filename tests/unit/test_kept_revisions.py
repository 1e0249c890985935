"""A revision the repository lacks, filled by its text kept in the records folder.

The Snipe working group never existed. Its repository tags revisions -00 and -02 of its
draft; -01 is nowhere in it, so the manifest lists it as missing. ``ratified fetch draft``
keeps -01's text as ``texts/draft-example-snipe-01.xml`` (written here by hand, as the
fetch side is tested in test_fetch_texts.py), and the Datatracker facts kept beside the
manifest date its posting.
"""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.sources.git_repo import SourceError
from ratified_rdf.sources.online.datatracker import DraftFacts, Revision, write_facts_record

_PREFIXES = (
    "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>\n"
    "PREFIX prov: <http://www.w3.org/ns/prov#>\n"
)
_DAY = iter(range(1, 29))

MANIFEST = """\
[brain]
id = "snipe"
title = "The Snipe drafts"
repository = "https://git.example/snipe"

[[draft]]
name = "draft-example-snipe"
file = "draft-example-snipe.md"
revisions = "00-02"
missing = ["01"]

[discussion]
document_files = ["*.md"]
"""

KEPT_01 = (
    '<?xml version="1.0"?>\n<rfc docName="draft-example-snipe-01" ipr="trust200902">\n'
    '<front><title>Snipe Probing</title><author fullname="Dana Example"/></front>\n'
    '<middle>\n<section title="Introduction"><t>Snipes probe mud, 01.</t></section>\n'
    '<section title="Bills"><t>Long bills, 01.</t></section>\n</middle>\n</rfc>\n'
)


def _git(repo: Path, *args: str) -> None:
    date = f"2035-02-{next(_DAY, 28):02d}T10:00:00+00:00"
    env = {
        "GIT_AUTHOR_NAME": "Dana Example",
        "GIT_AUTHOR_EMAIL": "dana@example.com",
        "GIT_COMMITTER_NAME": "Dana Example",
        "GIT_COMMITTER_EMAIL": "dana@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _md(number: str) -> str:
    return (
        f"---\ntitle: Snipe Probing\ndocname: draft-example-snipe-{number}\n---\n\n"
        f"--- middle\n\n# Introduction\n\nSnipes probe mud, {number}.\n\n"
        f"# Bills\n\nLong bills, {number}.\n"
    )


@pytest.fixture
def snipe(tmp_path: Path) -> Path:
    repo = tmp_path / "snipe"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    for number in ("00", "02"):
        (repo / "draft-example-snipe.md").write_text(_md(number))
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", f"snipe -{number}")
        _git(repo, "tag", f"draft-example-snipe-{number}")
    return repo


def _records(folder: Path, *, dated: bool) -> Path:
    records = folder / "records"
    (records / "texts").mkdir(parents=True)
    (records / "manifest.toml").write_text(MANIFEST)
    (records / "texts" / "draft-example-snipe-01.xml").write_text(KEPT_01)
    if dated:
        posted = [datetime(2035, 2, day, 12, tzinfo=UTC) for day in (1, 10, 20)]
        facts = DraftFacts(
            name="draft-example-snipe",
            title="Snipe Probing",
            revisions=tuple(Revision(f"{n:02d}", when) for n, when in enumerate(posted)),
        )
        write_facts_record(facts, records)
    return records


def test_a_kept_revision_text_fills_the_revision_the_repository_lacks(
    snipe: Path, tmp_path: Path
) -> None:
    brain, report = Brain.build(_records(tmp_path, dated=True), source=str(snipe))
    try:
        assert report.revisions == 3
        assert not any("lacks revision" in note for note in report.notes)
        assert any(
            note.startswith(
                "draft-example-snipe-01, which the repository lacks, is read from "
                "texts/draft-example-snipe-01.xml"
            )
            for note in report.notes
        ), report.notes
        assert not brain.query(_PREFIXES + "SELECT ?n WHERE { ?d rr:missingRevision ?n }").rows
        rows = brain.query(
            _PREFIXES + "SELECT ?how ?from ?date WHERE { ?r rr:revisionNumber '01' ; "
            "rr:revisionProvenance ?how ; prov:hadPrimarySource ?from ; "
            "prov:generatedAtTime ?date }"
        ).rows
        assert len(rows) == 1
        assert "texts/draft-example-snipe-01.xml, fetched from the IETF archive" in (
            rows[0]["how"].value
        )
        assert rows[0]["from"].value.endswith("/archive/id/draft-example-snipe-01.xml")
        assert rows[0]["date"].value.startswith("2035-02-10")
        # No commit of the repository made it.
        commits = brain.query(
            _PREFIXES + "SELECT ?c WHERE { ?r rr:revisionNumber '01' ; prov:wasDerivedFrom ?c . "
            "?c a rr:Commit }"
        ).rows
        assert not commits
        # Its sections are the kept text's, and the chain runs through it.
        text = brain.query(
            _PREFIXES + "SELECT ?t WHERE { ?s rr:text ?t FILTER(CONTAINS(?t, 'mud, 01')) }"
        ).rows
        assert text
        chain = brain.query(
            _PREFIXES + "SELECT ?n WHERE { ?a rr:revisionNumber '00' ; rr:supersededBy ?b . "
            "?b rr:revisionNumber ?n }"
        ).rows
        assert [r["n"].value for r in chain] == ["01"]
    finally:
        brain.close()


def test_a_kept_revision_nothing_dates_is_refused_saying_what_to_fetch(
    snipe: Path, tmp_path: Path
) -> None:
    with pytest.raises(SourceError, match="ratified fetch datatracker draft-example-snipe"):
        Brain.build(_records(tmp_path, dated=False), source=str(snipe))
