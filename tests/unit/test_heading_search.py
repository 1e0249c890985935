"""Heading search over the fictional Pigeon Transport Protocol's headings.

RFC 9999 and its drafts draft-example-pigeon-01…05 never existed; their headings are made up so
that every expected ranking here can be worked out by hand.
"""

from __future__ import annotations

import math
import random

import pytest

from ratified_rdf.answers.heading_search import (
    ALIASES,
    STOP_WORDS,
    HeadingEntry,
    HeadingIndex,
    heading_terms,
)

RFC = "https://example.org/doc/rfc9999"
DRAFT = "https://example.org/doc/draft-example-pigeon"


def rfc(number: str, heading: str, *, rfc: int = 9999) -> HeadingEntry:
    iri = f"https://example.org/doc/rfc{rfc}/section/{number}"
    return HeadingEntry(
        section=iri, heading=heading, number=number, document=f"RFC {rfc}", is_rfc=True, final=iri
    )


def draft(revision: int, number: str, heading: str, became: str | None) -> HeadingEntry:
    return HeadingEntry(
        section=f"{DRAFT}/{revision:02d}/section/{number}",
        heading=heading,
        number=number,
        document=f"draft-example-pigeon-{revision:02d}",
        is_rfc=False,
        final=f"{RFC}/section/{became}" if became else None,
    )


FLOCK = [
    rfc("1", "Feather Count"),
    rfc("2", "Feather Color Count"),
    rfc("3", "Nest Building"),
    rfc("4", "Feather Molting Schedule Details"),
]


def test_stemming_matches_word_forms() -> None:
    index = HeadingIndex.build([rfc("5", "Retry Perch"), *FLOCK])
    best = index.search("why do pigeons need retries?").best
    assert best is not None
    assert best.entry.heading == "Retry Perch"
    assert best.matched == ("retries",)


def test_stop_words_are_not_terms_and_never_match() -> None:
    index = HeadingIndex.build([rfc("5", "Retry Perch"), rfc("6", "Why Pigeons Work")])
    result = index.search("why does the perch retry?")
    assert result.query_terms == ("perch", "retri")
    assert [hit.entry.heading for hit in result.hits] == ["Retry Perch"]
    assert result.hits[0].matched == ("perch", "retry")
    assert index.search("how does this work, and who should I ask about it?").hits == ()


def test_words_that_name_protocol_things_are_not_stop_words() -> None:
    for word in ("key", "share", "early", "data", "finished", "end", "new", "hello", "done"):
        assert word not in STOP_WORDS
    assert heading_terms("Key Share, Early Data, Finished") == (
        "key",
        "share",
        "earli",
        "data",
        "finish",
        "~key-share",
        "~early-data",
    )


def test_any_shared_term_makes_a_candidate() -> None:
    hits = HeadingIndex.build(FLOCK).search("feather nest").hits
    assert {hit.entry.heading for hit in hits} == {
        "Feather Count",
        "Feather Color Count",
        "Nest Building",
        "Feather Molting Schedule Details",
    }


def test_bm25_order_and_scores_worked_out_by_hand() -> None:
    # Four headings of 2, 3, 2 and 4 terms: avgdl = 11/4. "feather" is in 3, "count" in 2.
    # idf(t) = ln(1 + (N - n + 0.5) / (n + 0.5))
    # gain = idf * 2.2 / (1 + 1.2 (0.25 + 0.75 dl / avgdl)) for a term found once
    idf_feather = math.log(1 + 1.5 / 3.5)  # 0.35667
    idf_count = math.log(1 + 2.5 / 2.5)  # 0.69315

    def gain(length: int) -> float:
        return 2.2 / (1 + 1.2 * (0.25 + 0.75 * length / 2.75))

    expected = {
        "Feather Count": (idf_feather + idf_count) * gain(2),  # 1.18165
        "Feather Color Count": (idf_feather + idf_count) * gain(3),  # 1.01216
        "Feather Molting Schedule Details": idf_feather * gain(4),  # 0.30075
    }
    result = HeadingIndex.build(FLOCK).search("feather count")
    assert [hit.entry.heading for hit in result.hits] == list(expected)
    for hit in result.hits:
        assert hit.score == pytest.approx(expected[hit.entry.heading], abs=1e-6)
    assert expected["Feather Count"] == pytest.approx(1.18165, abs=1e-4)
    # With one term, the shorter heading wins: length normalisation, not luck.
    only_count = HeadingIndex.build(FLOCK).search("count").hits
    assert [hit.entry.heading for hit in only_count] == ["Feather Count", "Feather Color Count"]


def test_revisions_of_one_section_are_one_hit_represented_by_the_rfc() -> None:
    entries = [draft(n, "3.1", "Early Landing", became="3.2") for n in range(1, 6)]
    entries.append(rfc("3.2", "Early Landing"))
    result = HeadingIndex.build(entries).search("early landing")
    assert len(result.hits) == 1
    [hit] = result.hits
    assert hit.entry == rfc("3.2", "Early Landing")
    assert hit.documents == 6
    assert hit.matched == ("early", "landing")


def test_sections_that_became_nothing_group_by_heading_under_the_latest_draft() -> None:
    entries = [draft(n, "7", "Landing Lights", became=None) for n in (1, 2, 3)]
    [hit] = HeadingIndex.build(entries).search("landing lights").hits
    assert hit.entry.document == "draft-example-pigeon-03"
    assert hit.documents == 3


def test_runner_up_became_a_different_rfc_section() -> None:
    entries = [
        rfc("3.2", "Early Landing"),
        rfc("3.3", "Landing Approval"),
        draft(1, "4.1", "Premature Landing", became="3.2"),
        draft(2, "4.1", "Early Landing", became="3.2"),
    ]
    result = HeadingIndex.build(entries).search("what about premature landing?")
    assert result.best is not None and result.runner_up is not None
    # The old draft's wording matched best; the hit is the RFC section it became.
    assert result.best.entry.number == "3.2"
    assert result.best.matched_heading == "Premature Landing"
    assert result.best.matched == ("premature", "landing")
    assert result.runner_up.entry.heading == "Landing Approval"
    assert result.runner_up.entry.final != result.best.entry.final


def test_the_same_heading_in_two_rfcs_shows_once_but_one_document_keeps_both() -> None:
    entries = [
        rfc("3.2", "Early Landing"),
        *(draft(n, "3.1", "Early Landing", became="3.2") for n in (1, 2)),
        rfc("3.2", "Early Landing", rfc=10001),
        rfc("8.1", "External References"),
        rfc("9.1", "External References"),
    ]
    index = HeadingIndex.build(entries)
    [landing] = index.search("early landing").hits
    assert landing.entry.document == "RFC 9999"  # found in three documents, not one
    references = index.search("external references").hits
    assert [hit.entry.number for hit in references] == ["8.1", "9.1"]


@pytest.mark.parametrize(
    ("heading", "question", "matched"),
    [
        ("Zero-RTT Seed Drop", "why does early data work this way?", ("early", "data")),
        ("Early Data Cooing", "how does 0-RTT work?", ("0-RTT",)),
        ("Hello Retry Request Flutter", "HRR", ("HRR",)),
        ("PSK Perch", "who knows about the pre-shared key?", ("pre-shared", "key")),
        ("Pre-Shared Key Perch", "PSKs", ("PSKs",)),
        ("Key Share Feathers", "key_share", ("key_share",)),
        ("Session Resumption Roost", "resuming a flight", ("resuming",)),
        ("New Session Ticket Seed", "NewSessionTicket", ("NewSessionTicket",)),
    ],
)
def test_aliases_connect_what_people_type_to_headings(
    heading: str, question: str, matched: tuple[str, ...]
) -> None:
    index = HeadingIndex.build([rfc("6", heading), rfc("7", "Unrelated Pecking")])
    best = index.search(question).best
    assert best is not None and best.entry.heading == heading
    assert best.matched == matched


def test_aliases_apply_to_headings_and_questions_alike() -> None:
    for concept, phrases in ALIASES.items():
        for phrase in phrases:
            assert f"~{concept}" in heading_terms(phrase), phrase
            assert f"~{concept}" in heading_terms(f"Why {phrase}?"), phrase


def test_code_spellings_score_as_the_spaced_heading() -> None:
    index = HeadingIndex.build([rfc("4.1.4", "Hello Retry Request"), *FLOCK])
    spaced = index.search("hello retry request").best
    camel = index.search("HelloRetryRequest").best
    assert spaced is not None and camel is not None
    assert camel.score == spaced.score
    assert camel.matched == ("HelloRetryRequest",)


def test_version_numbers_are_never_terms() -> None:
    entries = [rfc("1.3", "Updates Affecting TLS 1.2"), rfc("4.2.1", "Supported Versions")]
    index = HeadingIndex.build(entries)
    for question in ("TLS 1.3", "tls 1.3", "TLSv1.3", "section 1.3", "1.3", "RFC 9999 §1.3"):
        result = index.search(question)
        assert result.query_terms == (), question
        assert result.hits == (), question
    assert heading_terms("Compatibility with TLS 1.0/1.1 and SSL 3.0") == ("compat",)
    # Without a version "TLS" is an ordinary word, and a word can find §1.3.
    [hit] = index.search("what updates affect TLS 1.3 deployments?").hits
    assert hit.entry.number == "1.3"
    assert hit.matched == ("updates", "affect")


def test_punctuation_inside_words() -> None:
    assert heading_terms("(EC)DHE Shared Secret") == heading_terms("ECDHE shared secrets")
    assert heading_terms("the server's cookie") == ("server", "cooki")
    assert heading_terms("0-RTT and Anti-Replay")[:2] == ("rtt", "0-rtt")


def test_same_input_same_output_whatever_the_entry_order() -> None:
    entries = [
        *FLOCK,
        rfc("3.2", "Early Landing"),
        rfc("3.3", "Landing Approval"),
        *(draft(n, "3.1", "Early Landing", became="3.2") for n in range(1, 6)),
        *(draft(n, "7", "Landing Lights", became=None) for n in (1, 2, 3)),
        draft(1, "4.1", "Premature Landing", became="3.2"),
    ]
    questions = ["early landing lights", "feather count", "count landing", "nest", "zebra"]
    first = HeadingIndex.build(entries)
    again = HeadingIndex.build(entries)
    backwards = HeadingIndex.build(list(reversed(entries)))
    shuffled = list(entries)
    random.Random(7).shuffle(shuffled)
    mixed = HeadingIndex.build(shuffled + entries[:3])  # repeated entries count once
    for question in questions:
        expected = first.search(question)
        assert again.search(question) == expected
        assert first.search(question) == expected
        assert backwards.search(question) == expected
        assert mixed.search(question) == expected


@pytest.mark.parametrize("question", ["", "   ", "why does this work?", "zebra", "1.3", "§4.2"])
def test_no_terms_or_no_match_gives_no_hits(question: str) -> None:
    result = HeadingIndex.build(FLOCK).search(question)
    assert result.hits == ()
    assert result.best is None
    assert result.runner_up is None


def test_an_empty_index_answers_with_no_hits() -> None:
    assert HeadingIndex.build([]).search("feather").hits == ()


def test_limit() -> None:
    index = HeadingIndex.build(FLOCK)
    assert len(index.search("feather", limit=2).hits) == 2
    assert index.search("feather", limit=0).hits == ()


def test_the_index_finds_a_section_by_rfc_and_number_and_any_section_s_place() -> None:
    nest = draft(2, "2.4", "Nest Building", became="3")
    unnumbered = HeadingEntry(
        section=f"{DRAFT}/02/section/acks",
        heading="Acknowledgements",
        number=None,
        document="draft-example-pigeon-02",
        is_rfc=False,
        final=None,
    )
    index = HeadingIndex.build([*FLOCK, nest, unnumbered])
    found = index.rfc_section(9999, "3")
    assert found is not None and found.heading == "Nest Building"
    assert found.section == f"{RFC}/section/3"
    assert index.rfc_section(9999, "3.9") is None
    assert index.rfc_section(9998, "3") is None
    # A draft's section is never found by an RFC's number.
    assert index.rfc_section(9999, "2.4") is None
    assert index.place(nest.section) == ("draft-example-pigeon-02", "2.4")
    assert index.place(found.section) == ("RFC 9999", "3")
    assert index.place(unnumbered.section) == ("draft-example-pigeon-02", None)
    assert index.place(f"{DRAFT}/02/section/9.9") is None
