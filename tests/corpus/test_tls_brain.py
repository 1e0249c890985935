"""The done-means of the core, on the real TLS corpus: a brain built from the bundle."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.answers.models import HistoryEntry, SectionFate

pytestmark = pytest.mark.corpus


def test_both_chains_build(tls_build: tuple[Path, BuildReport]) -> None:
    _store, report = tls_build
    assert report.revisions == 45 and report.rfcs == 2
    assert report.sections > 5500 and report.alignments > 5400
    assert report.triples > 100_000


def test_section_4_2_9_of_21_became_rfc8446_4_2_10(tls_brain: Brain) -> None:
    answer = tls_brain.ask("what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?")
    assert answer.verdict is Verdict.ANSWERED
    fate = answer.results[0]
    assert isinstance(fate, SectionFate)
    assert (fate.rfc, fate.final_section_number, fate.final_heading) == (
        "RFC 8446",
        "4.2.10",
        "Early Data Indication",
    )
    chain = [e.label for e in answer.evidence if e.role in {"revision", "rfc"}]
    assert chain == [f"draft-ietf-tls-tls13-{n}" for n in range(21, 29)] + ["RFC 8446"]
    assert all(e.url and e.url.startswith("https://") for e in answer.evidence)
    urls = {e.role: e.url for e in answer.evidence}
    assert urls["rfc-section"] == "https://www.rfc-editor.org/rfc/rfc8446#section-4.2.10"
    assert (
        urls["section"]
        == "https://datatracker.ietf.org/doc/html/draft-ietf-tls-tls13-21#section-4.2.9"
    )
    # The built brain carries the card view, so the card reads its shortcut and names the
    # full-path query that gives the same rows.
    assert {q.name for q in answer.queries} == {"view_section_became", "view_revision_chain"}
    assert {q.reproduces for q in answer.queries if q.reproduces} == {
        "section_became",
        "revision_chain",
    }
    assert all("SELECT" in q.sparql and q.rows > 0 for q in answer.queries)


def test_history_of_rfc8446_4_2_10(tls_brain: Brain) -> None:
    answer = tls_brain.ask("history of RFC 8446 section 4.2.10")
    assert answer.verdict is Verdict.ANSWERED
    entries = [r for r in answer.results if isinstance(r, HistoryEntry)]
    by_doc = {e.document: e for e in entries}
    assert by_doc["draft-ietf-tls-tls13-21"].section_number == "4.2.9"
    assert by_doc["draft-ietf-tls-tls13-28"].section_number == "4.2.10"
    assert by_doc["draft-ietf-tls-tls13-14"].section_number == "4.2.6"
    # In revision order along the chain, not by string or date.
    numbers = [int(e.revision_number or 0) for e in entries]
    assert numbers == sorted(numbers)
    # Still changing while under 98% similar to the final text; final by -27.
    assert by_doc["draft-ietf-tls-tls13-21"].still_changing
    assert not by_doc["draft-ietf-tls-tls13-28"].still_changing
    assert all(e.still_changing == (e.similarity < 0.98) for e in entries)
    assert "Early Data Indication" in answer.summary


def test_ungrounded_question_gets_the_graph_does_not_know(tls_brain: Brain) -> None:
    answer = tls_brain.ask("how did the IESG vote on draft-ietf-tls-tls13?")
    assert answer.verdict is Verdict.UNKNOWN
    assert answer.summary.startswith("The graph doesn't know")
    for held in ("draft-ietf-tls-tls13", "RFC 8446", "RFC 9846", "45 revisions"):
        assert held in answer.summary


def test_rfc9846_chain_runs_through_the_replaced_draft(tls_brain: Brain) -> None:
    answer = tls_brain.revision_chain("draft-rescorla-tls-rfc8446-bis", "00")
    labels = [e.label for e in answer.evidence]
    assert labels[0] == "draft-rescorla-tls-rfc8446-bis-00"
    assert labels[1] == "draft-ietf-tls-rfc8446bis-00"
    assert labels[-1] == "RFC 9846"


def test_the_whole_brain_validates(tls_brain: Brain) -> None:
    """pyshacl over every current graph, as ``ratified validate`` does."""
    assert tls_brain.validate() == []


def test_cli_card_shows_links_and_sparql(tls_brain: Brain) -> None:
    from ratified_rdf.surfaces.cli import render_card

    card = render_card(tls_brain.ask("history of RFC 8446 section 4.2.10"), sparql=True)
    assert "https://www.rfc-editor.org/rfc/rfc8446#section-4.2.10" in card
    assert "section_history.rq (rfc=https://w3id.org/ratified-rdf/id/doc/rfc8446" in card
    assert "VALUES (?rfc ?sectionNumber)" in card


def test_what_a_section_said_on_a_day_comes_from_the_revision_current_then(
    tls_brain: Brain,
) -> None:
    answer = tls_brain.ask("what did RFC 8446 section 4.2.10 say on 2016-01-01?")
    assert answer.verdict is Verdict.ANSWERED
    text = answer.results[0]
    # -11 (posted 2015-12-28) numbered it 6.3.2.5; -12 followed on 2016-03-22.
    assert (text.document, text.section_number) == ("draft-ietf-tls-tls13-11", "6.3.2.5")
    assert text.current_from.startswith("2015-12-28") and text.current_until.startswith("2016-03")
    assert "ServerConfiguration" in text.text
    assert (
        text.url == "https://datatracker.ietf.org/doc/html/draft-ietf-tls-tls13-11#section-6.3.2.5"
    )
