"""A repository whose draft became no RFC: a bare section number is read in the draft's last
revision, and the section cards (history, why, issues, who to ask) are about that revision's
sections, saying that the draft became no RFC the records hold, never "no such section".

The fictional Pigeon repository (tests/pigeon.py) described as if its draft were still a
draft: the manifest names no RFC."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pyoxigraph import NamedNode

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.graph import vocab as v
from tests.pigeon import BOB, FIXTURES, make_pigeon_repo

RR = "https://w3id.org/ratified-rdf/ontology#"
LAST = "draft-example-pigeon-02"
NO_RFC = "draft-example-pigeon became no RFC the records hold"


def _draft_only_records(folder: Path) -> Path:
    """The pigeon records copied to ``folder``, with neither ``became`` nor an [[rfc]]."""
    records = folder / "records"
    shutil.copytree(FIXTURES, records)
    manifest = records / "manifest.toml"
    text = manifest.read_text()
    start, end = text.index("[[rfc]]"), text.index("[discussion]")
    assert 'became = "rfc9999"\n' in text
    manifest.write_text(text[:start].replace('became = "rfc9999"\n', "") + text[end:])
    return records


@pytest.fixture(scope="module")
def draft_only(tmp_path_factory: pytest.TempPathFactory) -> tuple[Brain, BuildReport]:
    folder = tmp_path_factory.mktemp("draft-only")
    repo = make_pigeon_repo(folder / "git")
    return Brain.build(_draft_only_records(folder), source=str(repo))


def test_the_last_revision_stands_for_the_drafts_sections(
    draft_only: tuple[Brain, BuildReport],
) -> None:
    brain, report = draft_only
    assert report.rfcs == 0 and report.alignments > 0
    assert any(
        f"they are followed to those of {LAST}, the last revision of it" in n for n in report.notes
    ), report.notes
    rows = brain.query(
        f"SELECT ?r WHERE {{ <{v.document_iri('draft-example-pigeon')}> <{RR}sectionsFrom> ?r }}"
    ).rows
    assert [r["r"] for r in rows] == [NamedNode(v.revision_iri("draft-example-pigeon", "02"))]


@pytest.mark.parametrize(
    "question, intents",
    [
        ("history of section 3.1", {"section_history"}),
        ("what is the history of draft-example-pigeon section 3.1?", {"section_history"}),
        ("why does section 3.1 say what it says?", {"discussion"}),
        ("which issues discussed section 3.1?", {"threads", "discussion"}),
        ("who should I ask about section 3.1?", {"who_to_ask"}),
        ("how many commits changed section 3.1?", {"count"}),
    ],
)
def test_every_section_card_reads_the_last_revisions_section(
    draft_only: tuple[Brain, BuildReport], question: str, intents: set[str]
) -> None:
    brain, _ = draft_only
    answer = brain.ask(question)
    assert answer.verdict is Verdict.ANSWERED, answer.summary
    assert answer.intent in intents, answer.intent
    assert f"{LAST} §3.1 " in answer.summary, answer.summary
    assert NO_RFC in answer.summary, answer.summary
    assert "no RFC it holds" not in answer.summary
    [section] = [e for e in answer.evidence if e.role == "rfc-section"][:1]
    assert section.url == v.revision_section_url("draft-example-pigeon", "02", "3.1")


def test_the_history_lists_the_revisions_and_the_commits_are_credited(
    draft_only: tuple[Brain, BuildReport],
) -> None:
    brain, _ = draft_only
    history = brain.ask("history of section 3.1")
    documents = [e.document for e in history.results if getattr(e, "document", None)]
    assert documents[:3] == [
        "draft-example-pigeon-00",
        "draft-example-pigeon-01",
        "draft-example-pigeon-02",
    ], documents
    # Bob's commit changed the section in -01: the why card credits it.
    why = brain.ask("why does section 3.1 say what it says?")
    assert BOB[0] in why.summary, why.summary


def test_a_section_no_revision_has_is_said_to_be_missing_from_the_last_revision(
    draft_only: tuple[Brain, BuildReport],
) -> None:
    brain, _ = draft_only
    answer = brain.ask("history of section 9")
    assert answer.verdict is Verdict.UNKNOWN, answer.summary
    assert (
        f"neither an RFC it holds nor {LAST} (the last revision of a draft that became no RFC) "
        "has a section 9"
    ) in answer.summary, answer.summary


@pytest.mark.parametrize(
    "question, intents, section",
    [
        ("who should I ask about the loft beacon?", {"who_to_ask"}, "3.2 Loft Beacon"),
        ("why does take-off work this way?", {"discussion"}, "3.1 Take-off"),
        ("who discussed the homing signal?", {"discussion"}, "3.2 Loft Beacon"),
        ("history of the take-off rules", {"section_history"}, "3.1 Take-off"),
    ],
)
def test_a_section_found_by_its_heading_words_is_the_last_revisions(
    draft_only: tuple[Brain, BuildReport], question: str, intents: set[str], section: str
) -> None:
    # No RFC heading to match: the words find the heading of the draft's last revision (an
    # earlier revision's wording included), never "doesn't know".
    brain, _ = draft_only
    answer = brain.ask(question)
    assert answer.verdict is Verdict.ANSWERED, answer.summary
    assert answer.intent in intents, answer.intent
    assert f"heading of {LAST} §{section}. " in answer.summary, answer.summary
    assert NO_RFC in answer.summary, answer.summary
