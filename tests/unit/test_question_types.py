"""Question types are registered parts: a toy type needs only its registry entry, its query
file and its card function, and every surface reaches it; the entity reader on its own."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, Verdict
from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.models import Answer, Count
from ratified_rdf.answers.router import QuestionType, cue, register, route, unregister
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.queries.files import register_query_folder
from tests.pigeon import build_pigeon, make_pigeon_repo

TOY_QUERY = """# Answers: how many sections the brain holds (a toy type's query).
# Reads: spec
PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>
SELECT (COUNT(?section) AS ?sections) WHERE { ?section a rr:Section }
"""


def _count_sections(session: Session, question: str, chosen: object) -> Answer:
    rows = session.run("toy_section_count")
    number = int(text_of(rows[0], "sections") or 0)
    return Answer(
        question=question,
        intent="toy_section_count",
        verdict=Verdict.ANSWERED,
        summary=f"The brain holds {number} sections.",
        results=[Count(what="sections", count=number)],
        queries=session.queries,
    )


@pytest.fixture()
def toy_type(tmp_path: Path) -> Iterator[QuestionType]:
    (tmp_path / "toy_section_count.rq").write_text(TOY_QUERY, encoding="utf-8")
    register_query_folder(tmp_path)
    kind = register(
        QuestionType(
            intent="toy_section_count",
            answers="How many sections the brain holds.",
            cues=(cue(r"\bhow many sections (?:are there|does it hold)\b", 5),),
            needs=lambda mentions, reading: True,
            uses=0,
            answer=_count_sections,
            queries=("toy_section_count",),
            results=(Count,),
            asked="how many sections are there?",
        )
    )
    yield kind
    unregister("toy_section_count")


@pytest.fixture(scope="module")
def pigeon_brain(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("git"))
    return build_pigeon(repo, "embedded", request)[0]


def test_a_toy_type_is_three_parts_and_every_path_reaches_it(
    toy_type: QuestionType, pigeon_brain: Brain
) -> None:
    asked = pigeon_brain.ask("how many sections are there?")
    assert asked.intent == "toy_section_count" and asked.verdict is Verdict.ANSWERED
    count = asked.results[0]
    assert isinstance(count, Count) and count.count == 28  # 7 sections in each of 4 texts
    assert [q.name for q in asked.queries][-1] == "toy_section_count"
    drawn = pigeon_brain.answer("toy_section_count")
    assert (drawn.question, drawn.results) == ("how many sections are there?", asked.results)
    unregister("toy_section_count")
    gone = pigeon_brain.ask("how many sections are there?")
    assert gone.intent != "toy_section_count"


def test_an_unknown_type_is_refused_in_a_sentence(pigeon_brain: Brain) -> None:
    with pytest.raises(Exception, match="no question type 'teleport'; the types are"):
        pigeon_brain.answer("teleport")


FICTION = Gazetteer(
    drafts={"draft-example-owl": ["00", "01", "02"], "draft-example-owl-bis": ["00", "01"]},
    became={"draft-example-owl": 9990, "draft-example-owl-bis": 9991},
    rfcs={9990: "2030-01", 9991: "2034-05"},
    people=[
        ("urn:p:hoot", "Hedwig Hoot", ["hh", "hootie"]),
        ("urn:p:feather", "Fern Feather", ["ff"]),
        ("urn:p:two", "Fern Other", []),
    ],
    threads=[7, 42],
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("what changed between draft-20 and draft-21?", {"revisions": ()}),
        # Two series hold revision 01 and nothing picks one: the question must say which.
        (
            "draft-01 section 2.1",
            {
                "revisions": (),
                "ambiguous": (("01", ("draft-example-owl", "draft-example-owl-bis")),),
            },
        ),
        (
            "diff between -00 and -01 of draft-example-owl-bis section 3",
            {"revisions": (("draft-example-owl-bis", "00"), ("draft-example-owl-bis", "01"))},
        ),
        ("what did hootie say about section 4.2?", {"people": ("Hedwig Hoot",)}),
        ("what did Fern change?", {"people": ()}),  # two people named Fern
        ("is RFC 9990 4.2.1 still valid", {"rfcs": (9990,), "sections": ("4.2.1",)}),
        ("TLS 1.3 and HTTP/2.1 and version 2.0.1", {"sections": ()}),
        ("what is PR #42 and issue 7 and #99?", {"threads": (42, 7), "unknown_threads": (99,)}),
        ("RFC 1234 and draft-ietf-other-thing", {"unknown_rfcs": (1234,)}),
        ("appendix B.3 of RFC 9991", {"sections": ("B.3",), "rfcs": (9991,)}),
        # A revision written as the tail of its draft's name, as a working group writes it.
        ("what did section 2.1 of owl-01 become?", {"revisions": (("draft-example-owl", "01"),)}),
        ("owl-bis-01 section 3", {"revisions": (("draft-example-owl-bis", "01"),)}),
        (
            "example-owl-02 and bis-00",
            {"revisions": (("draft-example-owl", "02"), ("draft-example-owl-bis", "00"))},
        ),
        ("section 2 of owl-07", {"revisions": (), "unknown_drafts": ("draft-example-owl-07",)}),
        ("draft-example-owl-bis-01", {"revisions": (("draft-example-owl-bis", "01"),)}),
        ("posted 2030-01 about hoot-01 and owlish-01", {"revisions": (), "unknown_drafts": ()}),
    ],
)
def test_the_gazetteer_reads_what_a_question_names(question: str, expected: dict) -> None:
    mentions = FICTION.read(question)
    for field, value in expected.items():
        found = getattr(mentions, field)
        if field == "people":
            found = tuple(p.name for p in found)
        assert found == value, field


def _entry(rfc: int, number: str, heading: str) -> HeadingEntry:
    return HeadingEntry(
        section=f"urn:rfc{rfc}:{number}",
        heading=heading,
        number=number,
        document=f"RFC {rfc}",
        is_rfc=True,
        final=f"urn:rfc{rfc}:{number}",
        page=f"https://example.org/rfc{rfc}#section-{number}",
    )


INDEXED = Gazetteer(
    drafts={"draft-example-owl": ["00", "01"]},
    became={"draft-example-owl": 9990},
    rfcs={9991: "2034-05", 9990: "2030-01"},
    people=[("urn:p:hoot", "Hedwig Hoot", ["hootie"])],
    threads=[7],
    headings=HeadingIndex.build(
        [
            _entry(9990, "2.1", "Night Flight"),
            _entry(9991, "2.1", "Night Flight"),
            _entry(9991, "5", "Moulting Season"),
        ]
    ),
)


def test_a_section_without_its_rfc_goes_to_the_earliest_rfc_with_the_others_offered() -> None:
    chosen = route("history of section 2.1", INDEXED)
    assert (chosen.intent, chosen.rfc, chosen.other_rfcs) == ("section_history", 9990, (9991,))
    named = route("history of RFC 9991 section 2.1", INDEXED)
    assert (named.rfc, named.other_rfcs) == (9991, ())
    only = route("history of section 5", INDEXED)
    assert (only.rfc, only.other_rfcs) == (9991, ())


def test_a_person_and_a_section_keep_both() -> None:
    chosen = route("what did hootie change in section 2.1?", INDEXED)
    assert chosen.intent == "person_section"
    assert (chosen.who, chosen.person, chosen.section, chosen.rfc) == (
        "Hedwig Hoot",
        "urn:p:hoot",
        "2.1",
        9990,
    )


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("why is night flight like this?", "discussion"),
        ("which section covers night flight?", "where_is"),
        ("who should I ask about moulting season?", "who_to_ask"),
        ("how did night flight evolve", "section_history"),
        ("open issues about night flight", "threads"),
        ("when was RFC 9990 published?", "document"),
        ("who are the editors of draft-example-owl", "document"),
        ("list the revisions of draft-example-owl", "revisions"),
        ("what changed between draft-00 and draft-01 in section 2.1?", "section_diff"),
        ("what is #7?", "thread"),
        ("who knows most about owls?", "experts"),
        ("which people matter most in this group?", "experts"),
        ("who are the most important people here?", "experts"),
        ("RFC 9990", "entity"),
        ("hootie", "person"),
        ("what did the IESG say about RFC 9990?", "not_held"),
        ("why is the sky blue?", "out_of_scope"),
    ],
)
def test_each_type_is_chosen_by_its_cue_and_entities(question: str, intent: str) -> None:
    assert route(question, INDEXED).intent == intent


@pytest.mark.parametrize(
    "question",
    [
        "who would know about moulting season?",
        "who might know about night flight?",
        "who's the person to talk to about night flight?",
        "who is the right person to ask about moulting season?",
        "who can tell me about night flight?",
        "which person should I speak with about moulting season?",
        "is there someone I could consult on night flight?",
        "whom should I talk to about moulting season?",
        "night flight: who are the experts?",
    ],
)
def test_asking_for_a_person_to_ask_is_who_to_ask_however_worded(question: str) -> None:
    # Each names a topic and asks for someone to ask: before, those without "should I ask"
    # or "who knows" were read as "why is it so" and got the discussion card.
    assert route(question, INDEXED).intent == "who_to_ask"


NAMED = Gazetteer(
    drafts={
        "draft-ietf-owl-perch": ["00", "01"],
        "draft-ietf-owl-hoot": ["00"],
        "draft-ietf-owl-nest": ["00"],
        "draft-tawny-owl-nest": ["00"],
    },
    became={"draft-ietf-owl-perch": 9990, "draft-ietf-owl-hoot": 9991},
    rfcs={9990: "2030-01", 9991: "2034-05", 9992: "2035-01"},
    people=[],
    threads=[],
    headings=INDEXED.headings,
    subject_words={"owl"},
    rfc_titles={
        9990: "Perching Rules for Owls",
        9991: "OWL/2",
        9992: "HOOTPACK: Call Compression for OWL/2",
    },
)


@pytest.mark.parametrize(
    ("question", "rfcs", "drafts"),
    [
        ("what is OWL/2?", (9991,), ()),
        ("what is HOOTPACK?", (9992,), ()),
        ("tell me about hootpack", (9992,), ()),
        # A draft that became an RFC is asked about as that RFC; of two drafts of one name
        # (an individual draft the group adopted), the group's.
        ("what is perch about?", (9990,), ()),
        ("what is the perch draft about?", (), ("draft-ietf-owl-perch",)),
        ("tell me about the nest draft", (), ("draft-ietf-owl-nest",)),
    ],
)
def test_an_rfc_or_draft_named_by_its_title_or_nickname_gets_its_card(
    question: str, rfcs: tuple[int, ...], drafts: tuple[str, ...]
) -> None:
    # Asked by the name people call it, not its number: before, "doesn't know".
    chosen = route(question, NAMED)
    # A document called by its name is the document a type that needs one reads, so "what
    # is" picks the document's card (before, the fallback drew the same card as "entity").
    assert chosen.intent == "document"
    assert (chosen.mentions.rfcs, chosen.mentions.drafts) == (rfcs, drafts)


@pytest.mark.parametrize(
    "question", ["what is night flight?", "how does moulting season work?", "explain night flight"]
)
def test_a_question_about_nothing_but_a_heading_gets_that_sections_card(question: str) -> None:
    # No card type's cue fits, but all the question is about is one heading: before, the
    # graph "didn't know" a section it holds.
    chosen = route(question, INDEXED)
    assert chosen.intent == "entity"
    assert chosen.topic


@pytest.mark.parametrize("question", ["what is a night train?", "how do moulting owls fly?"])
def test_a_question_only_partly_about_a_heading_still_does_not_know(question: str) -> None:
    assert route(question, INDEXED).intent == "out_of_scope"


def test_the_brains_own_subject_or_a_long_title_names_no_rfc() -> None:
    # "owl" is in most titles: the subject, not a name. A long title is not a name either.
    assert route("what is an owl?", NAMED).intent == "out_of_scope"
    assert route("what are perching rules?", NAMED).intent == "out_of_scope"
    # A name that is only part of what is asked names nothing the brain can answer with.
    assert route("what will the next version of OWL/2 be called?", NAMED).intent == ("out_of_scope")


def test_one_letter_typos_are_mended_only_when_one_word_fits() -> None:
    speller = INDEXED.speller
    assert speller.mend("look up pull requst 7") == "look up pull request 7"
    assert speller.mend("hisotry of night fligth") == "history of night flight"
    # Names and logins are never mended; short words and words two edits away neither.
    assert speller.mend("what did hootie do") == "what did hootie do"
    assert speller.mend("revizzions") == "revizzions"
    assert route("look up pull requst 7", INDEXED).intent == "thread"


def test_a_bare_phrase_gets_the_card_of_the_heading_it_names() -> None:
    assert route("night flight", INDEXED).intent == "entity"
    assert route("moulting season", INDEXED).topic
    # Only one of three words matched: a phrase about something else, not this section.
    assert route("book a night train", INDEXED).intent == "out_of_scope"


def test_another_groups_record_and_unheld_documents_are_out_of_scope() -> None:
    grouped = Gazetteer(
        drafts={"draft-ietf-owl-flight": ["00"]},
        became={},
        rfcs={9990: "2030-01"},
        people=[],
        threads=[],
        headings=INDEXED.headings,
        groups=["owl"],
    )
    assert route("who chairs the hawk working group?", grouped).intent == "out_of_scope"
    assert "not hawk's" in (route("who chairs the hawk working group?", grouped).reason or "")
    assert route("history of RFC 4000 section 2.1", grouped).intent == "out_of_scope"
    assert route("history of RFC 9990 section 2.1", grouped).intent == "section_history"


# --- a named revision's own facts ------------------------------------------------------------
# A question naming one revision ("when was draft-x-01 posted?", "who wrote draft-x-01?") gets
# that revision's date and byline first; a revision the brain does not hold is "doesn't know",
# naming the revisions it holds. Pigeon's -00 to -02 are tagged on 2029-01-10, 2029-06-01 and
# 2029-11-20; -00's byline names Alice and Bob, -01's Alice alone.


@pytest.mark.parametrize(
    "question",
    ["when was draft-example-pigeon-01 posted?", "who wrote draft-example-pigeon-01?"],
)
def test_a_named_revision_gets_its_own_date_and_byline(pigeon_brain: Brain, question: str) -> None:
    answer = pigeon_brain.ask(question)
    assert answer.verdict is Verdict.ANSWERED, answer.summary
    assert answer.intent == "document"
    assert answer.summary.startswith(
        "draft-example-pigeon-01 is dated 2029-06-01 in the record; its byline names "
        "Alice Example. "
    ), answer.summary
    assert any(e.label == "draft-example-pigeon-01" for e in answer.evidence), answer.evidence


def test_the_first_revision_names_both_editors(pigeon_brain: Brain) -> None:
    answer = pigeon_brain.ask("who were the authors of draft-example-pigeon-00?")
    assert "its byline names Alice Example and Bob Example. " in answer.summary, answer.summary


def test_a_revision_not_held_is_doesnt_know(pigeon_brain: Brain) -> None:
    answer = pigeon_brain.ask("who wrote draft-example-pigeon-07?")
    assert answer.verdict is Verdict.UNKNOWN, answer.summary
    assert "it holds no revision draft-example-pigeon-07 (of draft-example-pigeon, it holds " in (
        answer.summary
    ), answer.summary
    assert "-00 to -02" in answer.summary
