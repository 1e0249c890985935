"""Cards a person reads: no label that says nothing, no question sent to the people it is
about, engine time that was spent on this card, and a card a script can hand to ``json``."""

from __future__ import annotations

import json

import pytest

from ratified_rdf import Brain
from ratified_rdf.answers.models import (
    Answer,
    DiscussionPost,
    DraftedQuestion,
    HistoryEntry,
    Verdict,
)
from ratified_rdf.answers.wording import cited_words
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


def _post(cited: str, number: str | None = "3.2") -> DiscussionPost:
    return DiscussionPost(
        document="draft-example-pigeon-01",
        section_number=number,
        thread_number=7,
        thread_title="Beacon timing",
        thread_url="https://github.com/example/pigeon-spec/issues/7",
        post_url="https://github.com/example/pigeon-spec/issues/7#issuecomment-1",
        post_kind="comment",
        author="carol-example",
        created="2029-04-01T10:00:00Z",
        cited_text=cited,
        rule="xref",
        while_changing=True,
        about_published=False,
    )


def test_a_cross_reference_reads_as_the_section_it_points_to() -> None:
    card = render_card(
        _card().model_copy(
            update={
                "results": [
                    _post("{{homing}}"),
                    _post("{{ homing }}", None).model_copy(
                        update={"post_url": "https://example.org/m/2"}
                    ),
                ]
            }
        )
    )
    assert "{{" not in card
    assert "cites §3.2 (by its anchor homing)" in card
    assert "cites the section (by its anchor homing)" in card
    assert cited_words(_post("Section 2.1 of {{?RFC9999}}")) == '"Section 2.1 of RFC9999"'


def test_a_post_is_listed_once_where_two_of_its_citations_land_in_one_place() -> None:
    from pyoxigraph import Literal, NamedNode

    from ratified_rdf.answers.discussion import _posts
    from ratified_rdf.graph.store import Term

    base = "https://w3id.org/ratified-rdf/id/"
    row: dict[str, Term] = {
        "post": NamedNode(base + "post/pigeon/7-1"),
        "postPage": Literal("https://github.com/example/pigeon-spec/issues/7#issuecomment-1"),
        "created": Literal("2029-04-01T10:00:00Z"),
        "kind": Literal("comment"),
        "threadNumber": Literal("7"),
        "threadTitle": Literal("Beacon timing"),
        "threadPage": Literal("https://github.com/example/pigeon-spec/issues/7"),
        "citedText": Literal("Section 3.2"),
        "rule": Literal("explicit"),
        "whileChanging": Literal("true"),
        "aboutPublished": Literal("false"),
    }
    sections = [base + "doc/draft-example-pigeon-01/section/3.2", base + "section-node/3.2"]
    rows = [{**row, "section": NamedNode(s)} for s in sections]
    place: tuple[str, str | None] = ("draft-example-pigeon-01", "3.2")
    places = dict.fromkeys(sections, place)
    posts = _posts(rows, {}, places)
    assert len(posts) == 1
    card = render_card(_card().model_copy(update={"results": posts}))
    assert card.count("Beacon timing") == 1


def test_a_pull_requests_sections_are_named_by_rfc_and_number(brain: Brain) -> None:
    card = brain.ask("what is PR #2?")
    assert "Its commits changed 1 RFC section: RFC 9999 §3.1 Take-off." in card.summary
    sections = [e.label for e in card.evidence if e.role == "rfc-section"]
    assert sections == ["RFC 9999 §3.1 Take-off"]


def test_the_history_and_its_timeline_date_revisions_as_the_build_does(brain: Brain) -> None:
    # The fixture's Datatracker record posts each revision two days after its tag: the
    # build places the discussion by the posting dates, so the cards date revisions by them.
    card = brain.ask("history of RFC 9999 section 3.1")
    dated = {e.document: (e.date or "")[:10] for e in card.results if isinstance(e, HistoryEntry)}
    assert dated == {
        "draft-example-pigeon-00": "2029-01-12",
        "draft-example-pigeon-01": "2029-06-03",
        "draft-example-pigeon-02": "2029-11-22",
    }
    assert card.timeline is not None
    drawn = {r.document: r.date[:10] for r in card.timeline.revisions}
    assert drawn == dated


def test_a_review_and_its_line_comment_make_one_line_in_a_revision() -> None:
    link = "https://github.com/example/pigeon-spec/pull/2#pullrequestreview-42"
    review = _post("Section 3.2").model_copy(update={"post_url": link, "post_kind": "review"})
    line = review.model_copy(
        update={"cited_text": "a review comment on a line (section Loft Beacon)"}
    )
    card = render_card(_card().model_copy(update={"results": [review, line, review]}))
    assert card.count(link) == 1
    assert 'cites "Section 3.2" and "a review comment on a line (section Loft Beacon)"' in card


def test_a_long_revision_name_never_runs_into_its_section_number() -> None:
    long_name = "draft-example-pigeon-homing-over-very-long-distances-12"
    entry = HistoryEntry(
        document=long_name,
        revision_number="12",
        date=None,
        section_number="5",
        heading="Homing",
        similarity=1.0,
        still_changing=False,
        rule="same heading",
        url="https://example.org/x",
    )
    card = Answer(
        question="history of section 5",
        intent="section_history",
        verdict=Verdict.ANSWERED,
        summary="s",
        results=[entry],
    )
    rows = render_card(card).splitlines()
    (row,) = [line for line in rows if long_name in line]
    assert f"  {long_name}  5 " in row
    header = next(line for line in rows if line.startswith("Revision"))
    assert header.index("§") == row.index(" 5 ") + 1


def test_commits_with_no_pull_request_are_not_said_to_come_through_zero() -> None:
    from ratified_rdf.answers.discussion import _coverage

    assert _coverage(0, 8, 0, []).endswith("the evidence is 8 commits.")
    assert "through 2 pull requests" in _coverage(0, 8, 2, [])
