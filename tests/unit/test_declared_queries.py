"""Every question type says which ``sparql/*.rq`` files its card runs and which result models
it carries (``ratified types`` prints them, the docs quote them). Ask each type on the pigeon
brain and hold it to its word: a card that runs a query or carries a result its type does not
declare fails here, so the declarations cannot drift from the cards."""

from __future__ import annotations

import pytest

from ratified_rdf import Answer, Brain
from ratified_rdf.answers import types
from ratified_rdf.answers.router import REGISTRY
from ratified_rdf.queries.files import load_query
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTIONS = {
    "section_became": "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
    "section_history": "history of RFC 9999 section 3.1",
    "section_at": "what did section 2.1 of draft-example-pigeon-00 say?",
    "section_diff": (
        "what changed in section 2.1 between draft-example-pigeon-00 and draft-example-pigeon-02?"
    ),
    "discussion": "why does the take-off rule look like this?",
    "who_to_ask": "who should I ask about RFC 9999 section 3.1?",
    "experts": "who are the top contributors?",
    "thread": "what is PR #2?",
    "threads": "which issues are still open?",
    "person": "what did Bob Example work on?",
    "person_section": "what did Bob Example say about RFC 9999 section 3.1?",
    "count": "how many posts referred to RFC 9999 §3.1 while it was changing?",
    "document": "tell me about draft-example-pigeon",
    "where_is": "where is take-off covered?",
    "revision_chain": "what chain leads from draft-example-pigeon-01 to the RFC?",
    "revisions": "revisions of draft-example-pigeon",
    "holdings": "what does the graph hold?",
    "not_held": "what did the secdir review say about RFC 9999 section 3.1?",
    "out_of_scope": "why does the quantum teleporter work this way?",
    "group_citing": "which drafts cite RFC 9999?",
    "group_updates": "what updates RFC 9999?",
    "group_published": "what did the group publish in 2030?",
    "group_topic_people": "who knows most about example across the group?",
    "group_holdings": "what does the brain hold per repository?",
}

CARD_OF = {"not_held": "out_of_scope"}
"""Types whose card is another type's: a record the brain never ingests gets the
"doesn't know" card, with the reason."""


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("pigeon-git"))
    built, _report = Brain.build(MANIFEST, source=str(repo))
    return built


def _ran(answer: Answer) -> set[str]:
    """The queries a card ran, a card-view query counted as the full-path one it stands for."""
    return {query.reproduces or query.name for query in answer.queries}


def test_every_registered_type_has_a_question_here() -> None:
    assert {str(kind.intent) for kind in REGISTRY} <= set(QUESTIONS)


@pytest.mark.parametrize("intent", sorted(QUESTIONS))
def test_a_card_runs_and_carries_only_what_its_type_declares(brain: Brain, intent: str) -> None:
    answer = brain.ask(QUESTIONS[intent])
    card = CARD_OF.get(intent, intent)
    assert str(answer.intent) == card, f"{QUESTIONS[intent]!r} was routed elsewhere"
    assert answer.queries, "the card ran no query"
    kind = types.question_type(intent)
    assert _ran(answer) - set(kind.queries) == set(), "queries the type does not declare"
    carried = {type(result) for result in answer.results}
    assert carried - set(kind.results) == set(), "results the type does not declare"


def test_every_declared_query_is_a_query_file() -> None:
    kinds = [*REGISTRY, types.ENTITY, types.OUT_OF_SCOPE]
    for name in sorted({name for kind in kinds for name in kind.queries}):
        assert load_query(name).name == name
