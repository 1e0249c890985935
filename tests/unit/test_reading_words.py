"""Reading what people write (issue 53): drafts by their short names, a revision number that
several drafts hold, section numbers read in the document they are written beside, days in
words, and "the graph doesn't know" for what was never ingested, on fictional gazetteers and
the Pigeon brain."""

from __future__ import annotations

import pytest

from ratified_rdf import Brain
from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.models import Verdict
from ratified_rdf.answers.router import Intent, route
from tests.pigeon import build_pigeon, make_pigeon_repo


def _revision_section(draft: str, revision: str, number: str, heading: str) -> HeadingEntry:
    return HeadingEntry(
        section=f"urn:s:{draft}-{revision}:{number}",
        heading=heading,
        number=number,
        document=f"{draft}-{revision}",
        is_rfc=False,
        final=None,
    )


OWLS = Gazetteer(
    drafts={
        "draft-ietf-owl-perch": ["24", "25", "26"],
        "draft-ietf-owl-moulting": ["24", "25"],
        "draft-ietf-owl-rfc9990bis": ["09", "10"],
        "draft-tawny-owl-rfc9990-bis": ["00"],
        "draft-ietf-owl-owl2": ["10"],
        "draft-ietf-owl-deployment-notes": ["03"],
    },
    became={"draft-ietf-owl-perch": 9990, "draft-ietf-owl-moulting": 9991},
    rfcs={9990: "2030-01", 9991: "2030-02"},
    people=[],
    threads=[7],
    headings=HeadingIndex.build(
        [
            _revision_section("draft-ietf-owl-perch", "25", "5.2", "Branch Grip"),
            _revision_section("draft-ietf-owl-moulting", "25", "5.2", "Feather Loss"),
            _revision_section("draft-ietf-owl-moulting", "24", "6.1", "Down Growth"),
        ]
    ),
    groups={"owl"},
    subject_words={"owl"},
    mail=False,
    issues=False,
)
"""Fictional owl drafts: two series share revisions 24 and 25."""


@pytest.mark.parametrize(
    ("question", "revision"),
    [
        ("in owl-moulting draft 25, what is section 5.2 in the final RFC?", "moulting-25"),
        ("moulting draft 25 section 5.2", "moulting-25"),
        ("what did section 5.2 of the moulting draft -25 become?", "moulting-25"),
        ("section 5.2 of draft 25 of owl-moulting", "moulting-25"),
        ("the 9990bis draft 10: what is section 4.2.1?", "rfc9990bis-10"),
        ("rfc9990bis draft 09 section 2", "rfc9990bis-09"),
        ("owl2-10 section 3", "owl2-10"),
    ],
)
def test_a_draft_is_reached_by_its_short_names(question: str, revision: str) -> None:
    # Before, "draft 25" went to the series that became the earliest RFC (perch), and
    # "9990bis" was not read at all.
    mentions = OWLS.read(question)
    draft, number = revision.rsplit("-", 1)
    assert mentions.revisions[:1] == ((f"draft-ietf-owl-{draft}", number),)
    assert mentions.ambiguous == ()


def test_a_short_name_without_a_revision_names_the_draft_beside_draft() -> None:
    assert OWLS.read("list all versions of the 9990bis draft with dates").drafts == (
        "draft-ietf-owl-rfc9990bis",
    )
    chosen = route("list all versions of the 9990bis draft with dates", OWLS)
    assert (chosen.intent, chosen.draft) == (Intent.REVISIONS, "draft-ietf-owl-rfc9990bis")
    # A plain word names a draft only beside "draft" or a number: "perch" alone is a word.
    assert OWLS.read("how do owls perch at night?").drafts == ()


def test_a_revision_number_several_drafts_hold_is_ambiguous() -> None:
    # Asked with no type's cue, it is still the revisions' question, not "doesn't know".
    assert route("what did draft 25 change?", OWLS).intent == Intent.ENTITY
    mentions = OWLS.read("what did section 7 of draft 25 become?")
    assert mentions.revisions == ()
    assert mentions.ambiguous == (("25", ("draft-ietf-owl-perch", "draft-ietf-owl-moulting")),)
    # A section number that only one of their revisions holds picks that one.
    assert OWLS.read("what did section 6.1 of draft 24 become?").revisions == (
        ("draft-ietf-owl-moulting", "24"),
    )
    # So does the RFC the question names.
    assert OWLS.read("draft 25 of RFC 9991 section 4").revisions == (
        ("draft-ietf-owl-moulting", "25"),
    )


def test_a_bare_number_beside_a_section_is_the_rfc_it_names() -> None:
    mentions = OWLS.read("diff of 9991 section 6.2.1 between moulting-24 and moulting-25")
    assert mentions.rfcs == (9991,)
    assert mentions.rfc_sections == ("6.2.1",)
    assert OWLS.read("section 6.2.1 of 1234").rfcs == ()  # not an RFC the brain holds


@pytest.mark.parametrize(
    ("question", "day"),
    [
        ("what did RFC 9990 section 2 say as of March 15 2017?", "2017-03-15"),
        ("RFC 9990 section 2 on the 15th of March, 2017", "2017-03-15"),
        ("RFC 9990 section 2 on Sept. 3, 2018", "2018-09-03"),
        ("RFC 9990 section 2 on 2017/03/15", "2017-03-15"),
        ("RFC 9990 section 2 on 15/03/2017", "2017-03-15"),
    ],
)
def test_days_are_read_in_words_and_numbers(question: str, day: str) -> None:
    assert OWLS.read(question).days == (day,)


def test_a_day_in_words_is_read_and_one_whose_order_is_not_plain_is_not_guessed() -> None:
    mentions = OWLS.read("RFC 9990 section 2 on 03/04/2017, or was it April 3rd 2017?")
    assert mentions.days == ("2017-04-03",)


@pytest.mark.parametrize(
    "question",
    [
        "which owl libraries were first to implement RFC 9990?",
        "has anyone implemented draft-ietf-owl-perch-25?",
        "how widely deployed is RFC 9991?",
        "what happened at the IETF 110 meeting about RFC 9990?",
        "what did the list say during WGLC of draft-ietf-owl-perch-26?",
        "what did the mailing list say about RFC 9990?",
        "which issues are still open about perching?",
    ],
)
def test_what_was_never_ingested_is_not_held_even_beside_a_document(question: str) -> None:
    # Before, a question naming a document got that document's card, marked answered.
    assert route(question, OWLS).intent == Intent.NOT_HELD
    # Both ways: the same document asked about with words of what the brain holds, and a
    # draft whose name holds such a word.
    assert route("show me the list of revisions of draft-ietf-owl-perch", OWLS).intent == (
        Intent.REVISIONS
    )
    assert route("revisions of draft-ietf-owl-deployment-notes", OWLS).intent == (Intent.REVISIONS)


@pytest.mark.parametrize(
    "question",
    ["list every version of the moulting draft", "each version of the owl-moulting draft"],
)
def test_every_version_of_a_draft_named_short_lists_its_revisions(question: str) -> None:
    # Before, "version" alone was no cue: the draft's card answered instead of its revisions.
    found = route(question, OWLS)
    assert (found.intent, found.draft) == (Intent.REVISIONS, "draft-ietf-owl-moulting")


@pytest.fixture(scope="module")
def pigeon(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("git"))
    return build_pigeon(repo, "embedded", request)[0]


def test_a_never_ingested_question_says_what_is_held_about_its_document(pigeon: Brain) -> None:
    card = pigeon.ask("which pigeon libraries were first to implement RFC 9999?")
    assert card.verdict is Verdict.UNKNOWN
    assert "never ingested records of implementations" in card.summary
    assert "about RFC 9999 it holds" in card.summary
    assert [a.question for a in card.alternatives] == ["tell me about RFC 9999"]
    # Both ways: implementing a protocol is what its reader does (the question is about the
    # spec), and the Pigeon brain holds its list's archive, so what the list said is held.
    for held in [
        "I am implementing RFC 9999 section 3.1, who should I ask?",
        "what did the mailing list say about RFC 9999 section 3.1?",
    ]:
        assert pigeon.ask(held).verdict is not Verdict.UNKNOWN, held


def _rfc_section(number: str, heading: str) -> HeadingEntry:
    return HeadingEntry(
        section=f"urn:rfc9990:{number}",
        heading=heading,
        number=number,
        document="RFC 9990",
        is_rfc=True,
        final=f"urn:rfc9990:{number}",
    )


PERCHED = Gazetteer(
    drafts={"draft-ietf-owl-perch": ["24", "25"]},
    became={"draft-ietf-owl-perch": 9990},
    rfcs={9990: "2030-01"},
    people=[],
    threads=[],
    headings=HeadingIndex.build(
        [
            _rfc_section("4.1", "Roost Return Request"),
            _rfc_section("4.2", "Seed Request"),
            _rfc_section("4.3", "Perch"),
            _rfc_section("4.4", "Talon Extension"),
            _rfc_section("4.5", "Wing Extension"),
            _rfc_section("4.6", "Beak Extension"),
            _rfc_section("7.5", "Feathers"),
            _rfc_section("12.4", "Frames and Frame Types"),
            _rfc_section("19.1", "HOME_LOFT Frames"),
            _rfc_section("19.2", "PADDING Frames"),
            _rfc_section("B.1", "Perch Extension"),
            _rfc_section("E.1", "Feather Independence"),
        ]
    ),
    subject_words={"owl"},
)
"""A fictional RFC whose headings run together, share common words and restate each other."""


@pytest.mark.parametrize(
    ("question", "number"),
    [
        ("where's the roost return request?", "4.1"),
        ("roostreturnrequest: which section?", "4.1"),
        ("where is the homeloft frame?", "19.1"),
        # The appendix matched a word only it holds: it is what the question names.
        ("where is feather independence covered?", "E.1"),
    ],
)
def test_where_is_reads_everyday_spelling_and_ranks_by_distinctive_words(
    question: str, number: str
) -> None:
    chosen = route(question, PERCHED)
    assert chosen.intent == Intent.WHERE_IS
    assert _best(question) == number


def _best(question: str) -> str | None:
    assert PERCHED.headings is not None
    return PERCHED.headings.rfc_hits(PERCHED.headings.search(question))[0].entry.number


def test_an_appendix_goes_first_only_for_a_word_rarer_than_those_it_shares() -> None:
    # Both ways: "independence" is held by one heading only, "extension" by four; the body
    # section specifies what an appendix restates with a common word added.
    assert (_best("feather independence"), _best("perch extension")) == ("E.1", "4.3")


def test_a_runner_up_shares_at_least_half_of_what_the_best_matched() -> None:
    from ratified_rdf.answers.heading_search import runner_ups

    assert PERCHED.headings is not None
    index = PERCHED.headings
    # "Seed Request" shares only "request" with Roost Return Request: no other reading.
    assert runner_ups(index.rfc_hits(index.search("RoostReturnRequest"))) == []
    offered = runner_ups(index.rfc_hits(index.search("feather independence")))
    assert [hit.entry.number for hit in offered] == ["7.5"]


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("what changed in perch between draft 24 and draft 25?", Intent.SECTION_DIFF),
        ("what were the earlier section numbers of RFC 9990 section 4.3?", Intent.SECTION_HISTORY),
        ("what were its former section numbers, RFC 9990 section 4.3?", None),
    ],
)
def test_the_same_question_in_other_words_gets_the_same_type(
    question: str, intent: Intent | None
) -> None:
    chosen = route(question, PERCHED)
    assert chosen.intent == (intent or Intent.SECTION_HISTORY)


def test_who_merged_a_pull_request_is_said(pigeon: Brain) -> None:
    # The archive records who merged it (alice-example), and the card says so when asked.
    card = pigeon.ask("who merged PR 2?")
    assert card.verdict is Verdict.ANSWERED
    assert "It was merged by alice-example on 2029-03-02." in card.summary
    assert card.results[0].merged_by == "alice-example"  # type: ignore[union-attr]


def test_revisions_written_short_together_belong_to_one_draft() -> None:
    # Only perch holds both 25 and 26; both series hold 24 and 25, and nothing picks one,
    # unless a section number only one of their revisions holds does.
    assert OWLS.read("what changed between draft 25 and draft 26?").revisions == (
        ("draft-ietf-owl-perch", "25"),
        ("draft-ietf-owl-perch", "26"),
    )
    between = OWLS.read("what changed between draft 24 and draft 25?")
    assert between.revisions == ()
    assert between.ambiguous[0] == ("24", ("draft-ietf-owl-perch", "draft-ietf-owl-moulting"))
    assert OWLS.read("section 6.1 between draft 24 and draft 25").revisions == (
        ("draft-ietf-owl-moulting", "24"),
        ("draft-ietf-owl-moulting", "25"),
    )


def test_the_first_rule_is_kept_where_the_card_is_made(pigeon: Brain) -> None:
    from ratified_rdf.answers import types
    from ratified_rdf.answers.router import Route

    # A document card chosen for a question about implementations (as a type of one's own or
    # a drawn route might choose it) still says the graph doesn't know.
    question = "which pigeon libraries were first to implement RFC 9999?"
    chosen = Route(intent=Intent.DOCUMENT, rfc=9999, mentions=OWLS.read("RFC 9990"))
    card = types.answer(pigeon.reading.session(), question, chosen)
    assert card.verdict is Verdict.UNKNOWN
    assert "never ingested records of implementations" in card.summary


@pytest.mark.parametrize(
    ("question", "spelled"),
    [
        ("who'd know most about section 4.1?", "who would know most about section 4.1?"),
        (
            "who’d be the person to ask about section 4.1?",
            "who would be the person to ask about section 4.1?",
        ),
        ("how'd it change in section 4.1?", "how did it change in section 4.1?"),
        (
            "who'd changed section 4.1 before the RFC?",
            "who had changed section 4.1 before the RFC?",
        ),
    ],
)
def test_an_apostrophe_d_is_read_by_the_word_after_it(question: str, spelled: str) -> None:
    # "'d" is "would" before a verb, "did" before its subject, "had" before a participle: read
    # as "did" always, "who'd know" took another card than "who would know".
    assert route(question, PERCHED).intent == route(spelled, PERCHED).intent
    assert route(question, PERCHED).mentions == route(spelled, PERCHED).mentions
