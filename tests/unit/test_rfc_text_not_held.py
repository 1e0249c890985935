"""Any repository as it is: an RFC whose text the repository does not hold is still a fact,
the last revision's sections stand for its own and every section card says so; an RFC's text
kept as its bis draft's first revision is found; the holdings say what is not held (issues, RFC
texts, files no entry reads); an empty archive.json is reported, not a failed build.

Variants of the fictional Pigeon repository (tests/pigeon.py), changed with git."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.graph import vocab as v
from ratified_rdf.records.manifest import ManifestError, load_manifest
from tests.pigeon import BOB, FIXTURES, _git, make_pigeon_repo

RR = "https://w3id.org/ratified-rdf/ontology#"
NOT_HELD = "The records do not hold RFC 9999's own text"


def _records(folder: Path, *, rfc_text: str = "") -> Path:
    """The pigeon records (manifest, mail, Datatracker facts) copied to ``folder``, the
    [[rfc]] entry's ``ref`` and ``file`` replaced by ``rfc_text``."""
    records = folder / "records"
    shutil.copytree(FIXTURES, records)
    manifest = records / "manifest.toml"
    text = manifest.read_text()
    assert 'ref = "main"\nfile = "rfc9999.md"\n' in text
    manifest.write_text(text.replace('ref = "main"\nfile = "rfc9999.md"\n', rfc_text))
    return records


@pytest.fixture(scope="module")
def held_nowhere(tmp_path_factory: pytest.TempPathFactory) -> tuple[Brain, BuildReport]:
    """Pigeon without rfc9999.md, with an empty archive.json and an extra draft file on main
    that no entry reads; its manifest gives RFC 9999 without ref and file."""
    folder = tmp_path_factory.mktemp("held-nowhere")
    repo = make_pigeon_repo(folder / "git")
    _git(repo, "rm", "-q", "rfc9999.md")
    (repo / "draft-example-owl-post.md").write_text("# An owl's notes, never read\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "drop the RFC text", date="2030-06-01T10:00:00+00:00")
    _git(repo, "checkout", "-q", "gh-pages")
    (repo / "archive.json").write_text("")
    _git(repo, "commit", "-q", "-am", "empty archive", date="2030-06-02T10:00:00+00:00")
    _git(repo, "checkout", "-q", "main")
    built = Brain.build(_records(folder), source=str(repo))
    return built


def test_an_rfc_entry_without_its_text_is_a_fact(tmp_path: Path) -> None:
    manifest, _ = load_manifest(_records(tmp_path))
    [rfc] = manifest.rfc
    assert (rfc.ref, rfc.file) == (None, None)
    assert manifest.final_rfc("draft-example-pigeon") == "rfc9999"
    half = _records(tmp_path / "half", rfc_text='ref = "main"\n')
    with pytest.raises(ManifestError, match="names its text's ref but not its file"):
        load_manifest(half)


def test_the_last_revisions_sections_stand_for_the_rfcs(
    held_nowhere: tuple[Brain, BuildReport],
) -> None:
    brain, report = held_nowhere
    assert report.rfcs == 1 and report.alignments > 0
    assert any(
        "does not hold RFC 9999's own text" in n and "draft-example-pigeon-02" in n
        for n in report.notes
    ), report.notes
    stand_in = brain.query(
        f"SELECT ?r WHERE {{ <{v.document_iri('rfc9999')}> <{RR}sectionsFrom> ?r }}"
    ).rows
    assert [r["r"] for r in stand_in] == [NamedNode(v.revision_iri("draft-example-pigeon", "02"))]


@pytest.mark.parametrize(
    "question, intent",
    [
        ("history of RFC 9999 section 3.1", "section_history"),
        ("who discussed RFC 9999 section 3.1?", "discussion"),
        ("how many commits changed RFC 9999 section 3.1?", "count"),
        ("who should I ask about RFC 9999 section 3.1?", "who_to_ask"),
        (
            "what changed in RFC 9999 section 3 between draft-example-pigeon-00 and "
            "draft-example-pigeon-01?",
            "section_diff",
        ),
    ],
)
def test_every_section_card_works_and_says_the_text_is_not_held(
    held_nowhere: tuple[Brain, BuildReport], question: str, intent: str
) -> None:
    brain, _ = held_nowhere
    answer = brain.ask(question)
    assert answer.intent == intent and answer.verdict is Verdict.ANSWERED, answer.summary
    assert NOT_HELD in answer.summary and "draft-example-pigeon-02" in answer.summary


def test_a_stand_in_section_links_to_the_revision_not_the_rfc(
    held_nowhere: tuple[Brain, BuildReport],
) -> None:
    brain, _ = held_nowhere
    history = brain.ask("history of RFC 9999 section 3.1")
    [section] = [e for e in history.evidence if e.role == "rfc-section"]
    assert section.url == v.revision_section_url("draft-example-pigeon", "02", "3.1")
    # The changes are still credited: Bob's commit changed the section in -01.
    discussion = brain.ask("who discussed RFC 9999 section 3.1?")
    assert BOB[0] in discussion.summary


def test_holdings_list_what_is_not_held(held_nowhere: tuple[Brain, BuildReport]) -> None:
    brain, _ = held_nowhere
    held = brain.ask("what do you hold?")
    assert held.intent == "holdings", held.summary
    assert "It holds no issues at all" in held.summary
    assert "RFC 9999's own text is not in the records" in held.summary
    assert "draft-example-owl-post.md" in held.summary
    kinds = {h.what: h for h in held.results if h.kind == "holding"}
    assert kinds["issues"].count == 0
    assert kinds["RFC texts not held"].names == ["RFC 9999"]
    assert kinds["unread files"].names == ["draft-example-owl-post.md"]
    # The draft it reads is not listed as unread.
    assert "draft-example-pigeon.md" not in held.summary


def test_no_issues_held_is_never_zero_open(held_nowhere: tuple[Brain, BuildReport]) -> None:
    brain, _ = held_nowhere
    answer = brain.ask("which issues are open?")
    assert answer.verdict is Verdict.UNKNOWN, answer.summary
    # The router's first rule answers before the thread list does: issues were never read.
    assert "never ingested records of issues" in answer.summary
    assert "0 issues" not in answer.summary


def test_an_empty_archive_is_reported_and_the_rest_is_built(
    held_nowhere: tuple[Brain, BuildReport],
) -> None:
    _, report = held_nowhere
    assert report.revisions == 3
    assert any("archive.json at gh-pages is empty" in p for p in report.problems), report.problems


def test_the_dataset_description_names_what_is_not_held(
    held_nowhere: tuple[Brain, BuildReport],
) -> None:
    brain, _ = held_nowhere
    triples = brain.describe_dataset()
    not_held = [t.object for t in triples if t.predicate == NamedNode(RR + "textNotHeld")]
    unread = [t.object for t in triples if t.predicate == NamedNode(RR + "unreadFile")]
    assert not_held == [NamedNode(v.document_iri("rfc9999"))]
    assert unread == [Literal("draft-example-owl-post.md")]


def test_the_bis_drafts_first_revision_holds_the_rfc_text(tmp_path: Path) -> None:
    """The RFC's text kept nowhere but as the start of its bis draft is read from there."""
    repo = make_pigeon_repo(tmp_path / "git")
    text = (repo / "rfc9999.md").read_text()
    _git(repo, "rm", "-q", "rfc9999.md")
    (repo / "draft-example-pigeon-rfc9999bis.md").write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "start the bis", date="2031-01-01T10:00:00+00:00")
    _git(repo, "tag", "draft-example-pigeon-rfc9999bis-00")
    brain, report = Brain.build(_records(tmp_path), source=str(repo))
    assert any(
        "read from draft-example-pigeon-rfc9999bis.md at draft-example-pigeon-rfc9999bis-00" in n
        for n in report.notes
    ), report.notes
    history = brain.ask("history of RFC 9999 section 3.1")
    assert history.verdict is Verdict.ANSWERED, history.summary
    assert NOT_HELD not in history.summary
    [section] = [e for e in history.evidence if e.role == "rfc-section"]
    assert section.url == v.rfc_section_url("rfc9999", "3.1")
    held = brain.ask("what do you hold?")
    assert "own text is not in the records" not in held.summary


def test_a_commit_that_says_it_is_the_rfc_holds_its_text(tmp_path: Path) -> None:
    """No file is named after the RFC, but a commit titled "RFC final" made the draft's
    document the RFC's text: that is where it is read from."""
    repo = make_pigeon_repo(tmp_path / "git")
    text = (repo / "rfc9999.md").read_text()
    _git(repo, "rm", "-q", "rfc9999.md")
    _git(repo, "commit", "-q", "-m", "tidy up", date="2030-04-03T10:00:00+00:00")
    (repo / "draft-example-pigeon.md").write_text(text)
    _git(repo, "commit", "-q", "-am", "RFC final", date="2030-04-04T10:00:00+00:00")
    brain, report = Brain.build(_records(tmp_path), source=str(repo))
    assert any(
        "read from draft-example-pigeon.md at " in n and 'subject "RFC final"' in n
        for n in report.notes
    ), report.notes
    history = brain.ask("history of RFC 9999 section 3.1")
    assert history.verdict is Verdict.ANSWERED, history.summary
    assert NOT_HELD not in history.summary


def test_an_rfc_held_as_a_fact_alone_says_why_it_has_no_sections(tmp_path: Path) -> None:
    """An RFC no draft became and whose text nothing holds has no sections: a question about
    one of them says so, rather than that the RFC has no such section."""
    repo = make_pigeon_repo(tmp_path / "git")
    records = _records(tmp_path, rfc_text='ref = "main"\nfile = "rfc9999.md"\n')
    manifest = records / "manifest.toml"
    manifest.write_text(
        manifest.read_text().replace(
            "[discussion]",
            '[[rfc]]\nnumber = 9998\ntitle = "Carrier Owls"\npublished = "2029-02"\n\n[discussion]',
        )
    )
    brain, report = Brain.build(records, source=str(repo))
    assert any("RFC 9998" in n and "fact alone" in n for n in report.notes), report.notes
    answer = brain.ask("history of RFC 9998 section 1")
    assert answer.verdict is Verdict.UNKNOWN, answer.summary
    assert "hold neither RFC 9998's own text nor a revision" in answer.summary
    held = brain.ask("what do you hold?")
    assert "RFC 9998's own text is not in the records" in held.summary


def test_an_unreadable_archive_is_reported_and_the_rest_is_built(tmp_path: Path) -> None:
    repo = make_pigeon_repo(tmp_path / "git")
    _git(repo, "checkout", "-q", "gh-pages")
    (repo / "archive.json").write_text('{"issues": [')
    _git(repo, "commit", "-q", "-am", "truncated archive", date="2030-06-02T10:00:00+00:00")
    _git(repo, "checkout", "-q", "main")
    records = _records(tmp_path, rfc_text='ref = "main"\nfile = "rfc9999.md"\n')
    brain, report = Brain.build(records, source=str(repo))
    assert any(
        "archive.json at gh-pages was not read" in p and "not valid JSON" in p
        for p in report.problems
    ), report.problems
    assert brain.ask("history of RFC 9999 section 3.1").verdict is Verdict.ANSWERED
