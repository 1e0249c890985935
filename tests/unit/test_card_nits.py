"""Cards a person reads: no label that says nothing, no question sent to the people it is
about, engine time that was spent on this card, and a card a script can hand to ``json``."""

from __future__ import annotations

import json

import pytest

from ratified_rdf import Brain
from ratified_rdf.answers.models import Answer, DraftedQuestion, Verdict
from ratified_rdf.queries import QueryRun
from ratified_rdf.surfaces.cli import render_card
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("g"))
    built, _ = Brain.build(MANIFEST, source=str(repo))
    return built


def test_a_card_goes_through_the_standard_librarys_json(brain: Brain) -> None:
    card = brain.ask("history of RFC 9999 section 3.1")
    text = json.dumps(card.to_dict())
    assert json.loads(text) == json.loads(card.model_dump_json())
    assert Answer.model_validate(json.loads(text)) == card


def test_the_doesnt_know_card_names_each_document_it_links(brain: Brain) -> None:
    card = brain.ask("how did the IESG vote on draft-example-pigeon?")
    assert card.verdict is Verdict.UNKNOWN
    labels = [e.label for e in card.evidence]
    assert len(set(labels)) == len(labels), labels
    assert "RFC 9999: The Pigeon Transport Protocol" in labels
    assert "draft-example-pigeon: The Pigeon Transport Protocol" in labels


@pytest.mark.parametrize(
    "question",
    [
        "who are the most active people?",
        "who should I ask about RFC 9999 section 3.1?",
        "what did Alice Example work on?",
        "who are the editors of draft-example-pigeon?",
    ],
)
def test_the_drafted_note_does_not_ask_the_people_about_themselves(
    brain: Brain, question: str
) -> None:
    card = brain.ask(question)
    drafted = [r for r in card.results if isinstance(r, DraftedQuestion)]
    assert drafted, card.intent
    assert question not in drafted[0].text
    assert "My question: " in drafted[0].text


def _card(*queries: QueryRun) -> Answer:
    return Answer(
        question="q", intent="thread", verdict=Verdict.ANSWERED, summary="s", queries=list(queries)
    )


def test_reused_rows_show_no_engine_time_now() -> None:
    run = QueryRun(name="headings", sparql="ASK {}", params={}, rows=28, engine_ms=2500.0)
    card = render_card(_card(run.model_copy(update={"reused": True}), run))
    assert "2 queries, 2500.00 ms engine in all" in card
    assert (
        "headings.rq: 28 rows, 0 ms engine now: rows reused from its earlier run on the same "
        "graphs (which took 2500.00 ms engine)"
    ) in card
    assert "headings.rq: 28 rows, 2500.00 ms engine\n" in card + "\n"
