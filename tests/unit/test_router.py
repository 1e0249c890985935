"""The deterministic router: same question, same route; traps do not read as sections."""

from __future__ import annotations

import pytest

from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingIndex
from ratified_rdf.answers.router import Intent, Reading, route
from tests.unit.test_question_types import _entry

PEOPLE = Gazetteer(
    drafts={},
    became={},
    rfcs={},
    people=[
        ("urn:p:garrett", "Dave Garrett", ["davegarrett"]),
        ("urn:p:ekr", "Eric Rescorla", ["ekr"]),
    ],
    threads=(),
    headings=HeadingIndex.build(
        _entry(8446, number, heading)
        for number, heading in [
            ("4.2.8", "Key Share"),
            ("4.2.10", "Early Data Indication"),
            ("11.1", "Changes for This Document"),
        ]
    ),
    permissive=True,
)
"""Two people the fictional questions name; every RFC, draft and thread number is held."""


@pytest.mark.parametrize(
    ("question", "intent", "fields"),
    [
        (
            "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
            Intent.SECTION_BECAME,
            {"draft": "draft-ietf-tls-tls13", "revision": "21", "section": "4.2.9"},
        ),
        (
            "draft-ietf-tls-rfc8446bis-03 §A.1: where did it end up?",
            Intent.SECTION_BECAME,
            {"draft": "draft-ietf-tls-rfc8446bis", "revision": "03", "section": "A.1"},
        ),
        (
            "history of RFC 8446 section 4.2.10",
            Intent.SECTION_HISTORY,
            {"rfc": 8446, "section": "4.2.10"},
        ),
        (
            "how did sec. 4.2.1 change over time?",
            Intent.SECTION_HISTORY,
            {"rfc": None, "section": "4.2.1"},
        ),
        ("revisions of draft-ietf-tls-tls13", Intent.REVISIONS, {"draft": "draft-ietf-tls-tls13"}),
        (
            "what chain leads from draft-ietf-tls-tls13-21?",
            Intent.REVISION_CHAIN,
            {"revision": "21"},
        ),
        # A draft named alone is traced from its first revision (the card picks it).
        (
            "trace draft-ietf-tls-tls13 to its RFC",
            Intent.REVISION_CHAIN,
            {"draft": "draft-ietf-tls-tls13", "revision": None},
        ),
        (
            "trace draft-ietf-tls-tls13-21 to the RFC",
            Intent.REVISION_CHAIN,
            {"draft": "draft-ietf-tls-tls13", "revision": "21"},
        ),
        ("how did draft-ietf-quic-transport get to the RFC?", Intent.REVISION_CHAIN, {}),
        # What it became, or turned into, is the document's card: the RFC, not the path.
        ("what did draft-ietf-tls-tls13 become?", Intent.DOCUMENT, {}),
        ("when did draft-ietf-tls-tls13 turn into an RFC?", Intent.DOCUMENT, {}),
        ("how did the IESG vote on draft-ietf-tls-tls13?", Intent.NOT_HELD, {}),
        ("what changed in TLS 1.3 compared to version 1.2?", Intent.OUT_OF_SCOPE, {}),
        (
            "is RFC 5246 section 7.4 still valid?",
            Intent.SECTION_HISTORY,
            {"rfc": 5246, "section": "7.4"},
        ),
        ("what does the graph know?", Intent.HOLDINGS, {}),
        ("who discussed RFC 8446 §4.2.1?", Intent.DISCUSSION, {"rfc": 8446, "section": "4.2.1"}),
        (
            "why does section 4.2.10 of RFC 8446 look like this?",
            Intent.DISCUSSION,
            {"rfc": 8446, "section": "4.2.10"},
        ),
        (
            "how many posts referred to §4.2.10 while it was changing?",
            Intent.COUNT,
            {"rfc": 8446, "section": "4.2.10", "count": "posts"},
        ),
        ("how many PRs touched RFC 8446 section 4.2.1?", Intent.COUNT, {"count": "pull requests"}),
        ("who should I ask about RFC 8446 §4.2.8?", Intent.WHO_TO_ASK, {"section": "4.2.8"}),
        ("who should I ask about key share?", Intent.WHO_TO_ASK, {"topic": True}),
        ("why does early data work this way?", Intent.DISCUSSION, {"topic": True}),
        ("what is PR #1091?", Intent.THREAD, {"number": 1091}),
        ("show issue 451", Intent.THREAD, {"number": 451}),
        # A section numbered as the RFC numbers it is the RFC's, not the revision's.
        (
            "in draft-ietf-tls-tls13-20, what was RFC 8446 section 4.2.10?",
            Intent.SECTION_AT,
            {"draft": "draft-ietf-tls-tls13", "revision": "20", "section": "4.2.10"},
        ),
        (
            "how did draft-ietf-tls-tls13-20 word what became RFC 8446 §4.2.10?",
            Intent.SECTION_AT,
            {"revision": "20", "section": "4.2.10"},
        ),
        (
            "what did section 4.2.9 of draft-ietf-tls-tls13-20 become in RFC 8446?",
            Intent.SECTION_BECAME,
            {"revision": "20", "section": "4.2.9"},
        ),
        (
            "what was the debate behind rfc8446 s4.2.10?",
            Intent.DISCUSSION,
            {"rfc": 8446, "section": "4.2.10"},
        ),
        ("what did Dave Garrett work on?", Intent.PERSON, {"who": "Dave Garrett"}),
        ("who is ekr?", Intent.PERSON, {"who": "Eric Rescorla"}),
    ],
)
def test_routes(question: str, intent: Intent, fields: dict[str, object]) -> None:
    target = route(question, PEOPLE)
    assert target.intent is intent
    for name, value in fields.items():
        assert getattr(target, name) == value
    assert route(question, PEOPLE) == target  # deterministic


@pytest.mark.parametrize(
    ("question", "section", "commits"),
    [
        ("which commits changed RFC 8446 section 4.2.10?", "4.2.10", True),
        ("what commits changed section 4.2.8 of rfc8446?", "4.2.8", True),
        ("list the commits that changed RFC 8446 section 7.1", "7.1", True),
        ("show me all commits that touched section 4.1.3 of RFC 8446", "4.1.3", True),
        ("commits that modified RFC 8446 §2.3", "2.3", True),
        ("how did RFC 8446 section 4.2.10 change across its commits?", "4.2.10", False),
        ("list the changes to RFC 8446 section 7.1", "7.1", False),
    ],
)
def test_which_commits_changed_a_section_asks_for_its_commits(
    question: str, section: str, commits: bool
) -> None:
    """ "Which commits changed §X?" wants the card listing the commits (the discussion card),
    not the history card its "changed" would otherwise tie with; "how did §X change" is
    still its history."""
    target = route(question, PEOPLE)
    assert target.intent is (Intent.DISCUSSION if commits else Intent.SECTION_HISTORY)
    assert (target.rfc, target.section) == (8446, section)


@pytest.mark.parametrize(
    "question",
    [
        "TLS 1.3 handshake",
        "version 1.2 downgrade",
        "the 2017-06-01 interim",
        "192.168.1.10 section",
    ],
)
def test_numbers_that_are_not_sections(question: str) -> None:
    assert route(question).section is None


@pytest.mark.parametrize(
    ("question", "beside_rfc"),
    [
        ("RFC 8446 section 4.2.10 in draft-ietf-tls-tls13-20", ("4.2.10",)),
        ("rfc8446 §4.2.10 vs draft-ietf-tls-tls13-20", ("4.2.10",)),
        ("RFC 8446, section 4.2.10", ("4.2.10",)),
        ("rfc 8446 4.2.10 at draft-ietf-tls-tls13-20", ("4.2.10",)),
        ("section 4.2.10 of RFC 8446", ("4.2.10",)),
        ("rfc8446 s4.2.10", ("4.2.10",)),
        ("section 4.2.9 of draft-ietf-tls-tls13-20", ()),
        ("what did section 4.2.9 of draft-ietf-tls-tls13-20 become in RFC 8446?", ()),
        ("draft-ietf-tls-tls13-20 §4.2.9 and RFC 8446 section 4.2.10", ("4.2.10",)),
    ],
)
def test_sections_written_beside_an_rfc(question: str, beside_rfc: tuple[str, ...]) -> None:
    assert PEOPLE.read(question).rfc_sections == beside_rfc


def _three_rfcs() -> Gazetteer:
    """A fictional group of three RFCs; one title names a topic that is also a heading."""
    from ratified_rdf.answers.lookups import _shared_words, _words

    titles = [
        "The Pigeon Transport Protocol",
        "Pigeon Loss Recovery and Congestion Control",
        "Carrying HTTP over Pigeon",
    ]
    headings = [
        (9996, "7", "Congestion Control"),
        (9996, "6", "Loss Recovery"),
        (9997, "2", "Pigeon Versions"),
    ]
    return Gazetteer(
        drafts={},
        became={},
        rfcs={9996: None, 9997: None, 9998: None},
        people=[],
        threads=(),
        headings=HeadingIndex.build(_entry(*one) for one in headings),
        subject_words=_shared_words([_words(title) for title in titles]),
    )


def test_only_words_most_rfc_titles_share_are_the_brains_subject() -> None:
    from ratified_rdf.answers.lookups import _shared_words

    assert _shared_words([{"pigeon", "transport"}, {"pigeon", "loss"}, {"http", "pigeon"}]) == {
        "pigeon"
    }
    # One RFC (or two with one title): every word of it is the subject.
    assert _shared_words([{"tls", "protocol"}, {"tls", "protocol"}]) == {"tls", "protocol"}
    assert _shared_words([{"a", "b"}, {"b", "c"}]) == {"b"}
    assert _shared_words([]) == set()


@pytest.mark.parametrize(
    ("question", "intent", "section"),
    [
        # One title's words are that RFC's topic, not the whole brain's subject.
        ("who should I ask about congestion control?", Intent.WHO_TO_ASK, "7"),
        ("why does loss recovery work this way?", Intent.DISCUSSION, "6"),
        # Words every title shares, with asking words, still name no section.
        ("what changed in pigeon compared to version 2?", Intent.OUT_OF_SCOPE, None),
    ],
)
def test_a_topic_one_rfc_title_names_is_still_a_topic(
    question: str, intent: Intent, section: str | None
) -> None:
    gazetteer = _three_rfcs()
    target = route(question, gazetteer)
    assert target.intent is intent
    reading = Reading(question, gazetteer.read(question), gazetteer)
    topic = reading.topic
    found = (topic.entry.document, topic.entry.number) if topic is not None else None
    assert found == (("RFC 9996", section) if section else None)


@pytest.mark.parametrize(
    ("title", "names"),
    [
        ("TLS Encrypted Client Hello", ["encrypted client hello", "ech"]),
        (
            "TLS Encrypted ClientHello",
            ["tls encrypted clienthello", "encrypted clienthello", "ech"],
        ),
        ("Compact TLS 1.3", ["compact tls"]),
        ("Delegated Credentials for (D)TLS", ["delegated credentials"]),
        ("Importing External PSKs for TLS", ["importing external psks", "iep"]),
        # Titles that are no name: stop words or numbers inside, or too long.
        ("Using TLS to Secure QUIC", []),
        ("Deprecating TLS 1.0 and TLS 1.1", []),
        ("Record Size Limit Extension for Transport Layer Security (TLS)", []),
    ],
)
def test_a_drafts_title_gives_the_names_people_call_it_by(title: str, names: list[str]) -> None:
    from ratified_rdf.answers.entities import draft_title_names

    assert draft_title_names(title) == names


def test_a_draft_is_called_by_its_titles_initials() -> None:
    # A draft that became no RFC, named as people shorten its title ("what is FPM?"), gets
    # its card; a draft whose initials another draft shares is named by neither.
    gazetteer = Gazetteer(
        drafts={"draft-ietf-pigeon-feathers": ("00", "01"), "draft-ietf-pigeon-roost": ("00",)},
        became={},
        rfcs={},
        people=[],
        threads=(),
        draft_titles={
            "draft-ietf-pigeon-feathers": "TLS Feather Post Marks",
            "draft-ietf-pigeon-roost": "Roost Allocation",
        },
    )
    assert gazetteer.documents_named("what is FPM?")[1] == ("draft-ietf-pigeon-feathers",)
    assert gazetteer.documents_named("tell me about roost allocation")[1] == (
        "draft-ietf-pigeon-roost",
    )
    for question in ("what is FPM?", "who wrote FPM?", "how many revisions of FPM are there?"):
        routed = route(question, gazetteer)
        assert routed.intent is Intent.DOCUMENT, question
        assert routed.mentions.drafts == ("draft-ietf-pigeon-feathers",), question
    twins = Gazetteer(
        drafts={"draft-a-pigeon-fpm": ("00",), "draft-b-pigeon-fmp": ("00",)},
        became={},
        rfcs={},
        people=[],
        threads=(),
        draft_titles={
            "draft-a-pigeon-fpm": "Feather Post Marks",
            "draft-b-pigeon-fmp": "Flight Post Maps",
        },
    )
    assert twins.documents_named("what is FPM?")[1] == ()


def test_a_brain_of_one_rfc_is_named_by_its_titles_words() -> None:
    # One RFC: every word of its title is the brain's subject, and still names that RFC for a
    # question that needs a document ("what RFC did ... become?"); several RFCs sharing the
    # words: the subject names none.
    one = Gazetteer(
        drafts={"draft-ietf-pigeon-chain-extension": ("00", "01")},
        became={"draft-ietf-pigeon-chain-extension": 9995},
        rfcs={9995: "2031-02"},
        people=[],
        threads=(),
        subject_words={"tls", "pigeon", "chain", "extension"},
        rfc_titles={9995: "TLS Pigeon Chain Extension"},
    )
    routed = route("what RFC did the pigeon chain extension become?", one)
    assert routed.intent is Intent.DOCUMENT
    assert routed.mentions.rfcs == (9995,)
    assert route("who wrote the pigeon chain extension?", one).mentions.rfcs == (9995,)
    assert route("what rfc did pigeon become?", _three_rfcs()).mentions.rfcs == ()
