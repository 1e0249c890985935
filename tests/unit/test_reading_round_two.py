"""Reading what people write, round two (issue 53): a revision's text found by its section's
heading, a second revision written short after a full name, a protocol's version written out
in a draft's short name, "get to the RFC", and thread lists whose topic no heading holds, on
fictional gazetteers and the Pigeon brain."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from ratified_rdf import Brain
from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.models import Count, Verdict
from ratified_rdf.answers.router import Intent, route
from ratified_rdf.answers.types import Target, target
from ratified_rdf.queries.run import QueryRun
from tests.pigeon import build_pigeon, make_pigeon_repo


def _rfc_section(number: str, heading: str) -> HeadingEntry:
    return HeadingEntry(
        section=f"urn:rfc9990:{number}",
        heading=heading,
        number=number,
        document="RFC 9990",
        is_rfc=True,
        final=f"urn:rfc9990:{number}",
    )


ROOSTS = Gazetteer(
    drafts={"draft-ietf-owl-hoot13": ["19", "20", "21"], "draft-ietf-owl-perch": ["03"]},
    became={"draft-ietf-owl-hoot13": 9990},
    rfcs={9990: "2030-01"},
    people=[],
    threads=[4],
    headings=HeadingIndex.build(
        [
            _rfc_section("4.4", "Roost Issues"),
            _rfc_section("5.8.1", "Nest State Machine"),
            _rfc_section("7", "Talon Frames"),
            _rfc_section("7.1", "Sending Talons"),
        ]
    ),
    groups={"owl"},
    subject_words={"owl"},
)
"""A fictional Hoot 1.3 draft (draft-ietf-owl-hoot13) that became RFC 9990."""


@pytest.mark.parametrize(
    "question",
    [
        "what did the nest state machine section say in draft-ietf-owl-hoot13-20?",
        "what did the nest state machine section say in draft 20",
        "text of the nest state machine section in hoot13-20",
    ],
)
def test_a_revision_s_text_is_found_by_its_section_s_heading(question: str) -> None:
    # Before, a revision with heading words and no section number fitted no type: the
    # draft's card answered.
    chosen = route(question, ROOSTS)
    assert chosen.intent == Intent.SECTION_AT
    assert (chosen.draft, chosen.revision, chosen.section) == (
        "draft-ietf-owl-hoot13",
        "20",
        None,
    )


@pytest.mark.parametrize(
    "question",
    [
        "what's different in §5.8.1 between draft-ietf-owl-hoot13-20 and 21?",
        "diff of section 5.8.1, draft-ietf-owl-hoot13-20 versus 21",
    ],
)
def test_a_second_revision_written_short_after_a_full_name_is_the_same_draft_s(
    question: str,
) -> None:
    # Before, only -20 was read: the question got the section's fate from -20 on.
    assert ROOSTS.read(question).revisions == (
        ("draft-ietf-owl-hoot13", "20"),
        ("draft-ietf-owl-hoot13", "21"),
    )
    chosen = route(question, ROOSTS)
    assert (chosen.intent, chosen.older, chosen.newer) == (Intent.SECTION_DIFF, "20", "21")
    # A number the draft holds no revision of is something else.
    assert ROOSTS.read("draft-ietf-owl-hoot13-20 and 5 owls").revisions == (
        ("draft-ietf-owl-hoot13", "20"),
    )


@pytest.mark.parametrize(
    "question",
    [
        "who are the editors of the hoot 1.3 draft",
        "who edited the hoot1.3 draft?",
        "list every version of the Hoot 1.3 draft",
    ],
)
def test_a_version_run_into_a_draft_s_name_is_read_written_out(question: str) -> None:
    assert ROOSTS.read(question).drafts == ("draft-ietf-owl-hoot13",)
    # The version alone, without "draft", names no draft: it may be about anything.
    assert ROOSTS.read("did anyone ship hoot 1.3?").drafts == ()


@pytest.mark.parametrize(
    "question",
    [
        "how did draft-ietf-owl-hoot13-19 get to RFC 9990?",
        "how did hoot13-19 make it to RFC 9990?",
        "when did draft-ietf-owl-hoot13-19 reach RFC 9990",
    ],
)
def test_getting_to_the_rfc_asks_for_the_chain(question: str) -> None:
    # Before, "get to RFC 9990" was no cue (only "get to the rfc" was): the draft's card.
    chosen = route(question, ROOSTS)
    assert (chosen.intent, chosen.draft, chosen.revision) == (
        Intent.REVISION_CHAIN,
        "draft-ietf-owl-hoot13",
        "19",
    )


def test_a_heading_matched_only_by_what_is_asked_is_not_the_topic() -> None:
    # "issues" says what is asked for; Roost Issues holds only that word, Talon Frames the
    # topic's. Before, the heading with the rarer word (Roost Issues) was the topic.
    assert ROOSTS.headings is not None
    session: Any = SimpleNamespace(
        headings=(
            ROOSTS.headings,
            QueryRun(name="headings", sparql="", params={}, rows=0, engine_ms=0),
        ),
        queries=[],
    )
    chosen = route("which issues are still open about talon?", ROOSTS)
    found = target(session, "which issues are still open about talon?", chosen, "which threads")
    assert isinstance(found, Target)
    assert (found.rfc, found.number) == (9990, "7")


@pytest.fixture(scope="module")
def pigeon(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("git"))
    return build_pigeon(repo, "embedded", request)[0]


def test_threads_whose_topic_no_heading_holds_are_found_by_their_titles(pigeon: Brain) -> None:
    # No heading holds "owls"; the one issue titled with it (#3 "Errata: owls") is open.
    # Before, every closed issue was listed as being about owls (#1, on take-off).
    closed = pigeon.ask("which closed issues were about owls?")
    assert closed.verdict is Verdict.ANSWERED
    assert closed.results == [Count(what="closed issues", count=0)]
    assert "whose titles hold 'owls'" in closed.summary
    still_open = pigeon.ask("which issues are still open about owls?")
    assert [getattr(r, "number", None) for r in still_open.results[1:]] == [3]


@pytest.mark.parametrize(
    "question",
    [
        "which owl stacks shipped draft-ietf-owl-hoot13-20?",
        "how many websites use RFC 9990?",
        "how many servers negotiate RFC 9990 today?",
        "which TLS stacks support RFC 9990?",
    ],
)
def test_code_and_deployments_in_other_words_were_never_ingested(question: str) -> None:
    # Before, these were answered from the document they name, or from a heading their
    # words matched ("servers", "negotiate").
    assert route(question, ROOSTS).intent == Intent.NOT_HELD
