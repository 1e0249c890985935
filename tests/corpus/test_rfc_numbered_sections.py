"""A question that numbers its section as the RFC does, and names revisions, is about that
RFC section in those revisions, whatever number its text had there.

"What changed in RFC 8446 section 4.2.10 between -20 and -21?" is about Early Data Indication,
which those revisions numbered 4.2.9; their own §4.2.10 was Pre-Shared Key Extension. Each
card's section is checked against the independent reader (tests/eval/independent.py: git and
its own heading rules), never against the pipeline's rows: in every revision where a section
is headed as the RFC section is, the card must credit that section's number.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.answers.models import SectionDiff, SectionText
from tests.eval import independent as ind

# (RFC, the draft series, older and newer revision): pairs where sections were renumbered.
PAIRS = [
    (8446, "draft-ietf-tls-tls13", 20, 21),
    (8446, "draft-ietf-tls-tls13", 18, 22),
    (9846, "draft-ietf-tls-rfc8446bis", 2, 10),
]
QUIC_PAIRS = [
    (9000, "draft-ietf-quic-transport", 20, 27),
    (9002, "draft-ietf-quic-recovery", 20, 25),
]


@pytest.fixture(scope="module")
def tls(tls_build: tuple[Path, BuildReport]) -> Iterator[Brain]:
    with Brain.open(tls_build[0]) as brain:
        yield brain


@pytest.fixture(scope="module")
def quic(quic_build: tuple[Path, BuildReport]) -> Iterator[Brain]:
    with Brain.open(quic_build[0]) as brain:
        yield brain


def _cases(rfc: int, series: str, older: int, newer: int) -> Iterator[tuple[str, str, str, str]]:
    """(RFC section, its number in the older and in the newer revision) for each RFC section
    whose heading both revisions hold, by the independent reader; the number differs in at
    least one (the sections a literal reading of the number gets wrong come first)."""
    old = ind.revision_headings(series, older)
    new = ind.revision_headings(series, newer)
    final = ind.rfc_headings(rfc)
    for heading in final:
        # A heading two sections share ("Record Layer": §5.1 and the appendix B.1) does not
        # say which section is which: only headings unique in all three documents count.
        if any([h.key for h in doc].count(heading.key) != 1 for doc in (old, new, final)):
            continue
        before, after = ind.by_key(old, heading.key), ind.by_key(new, heading.key)
        if before and after and (heading.number != before.number):
            yield heading.number, heading.title, before.number, after.number


def _check_pair(brain: Brain, rfc: int, series: str, older: int, newer: int) -> int:
    cases = list(_cases(rfc, series, older, newer))
    assert cases, f"RFC {rfc} has no renumbered section between {older} and {newer}"
    a, b = f"{series}-{older:02d}", f"{series}-{newer:02d}"
    for number, title, was, became in cases:
        diff = brain.ask(f"what changed in RFC {rfc} section {number} between {a} and {b}?")
        assert diff.intent == "section_diff" and diff.verdict is Verdict.ANSWERED, diff.summary
        pair = next(r for r in diff.results if isinstance(r, SectionDiff))
        assert (pair.older_number, pair.newer_number) == (was, became), (number, title)
        at = brain.ask(f"in {a}, what was RFC {rfc} section {number}?")
        assert at.intent == "section_at" and at.verdict is Verdict.ANSWERED, at.summary
        text = next(r for r in at.results if isinstance(r, SectionText))
        assert (text.document, text.section_number) == (a, was), (number, title)
        assert ind.normalise(text.heading) == ind.normalise(title)
    return len(cases)


@pytest.mark.parametrize(("rfc", "series", "older", "newer"), PAIRS)
def test_tls_renumbered_sections(tls: Brain, rfc: int, series: str, older: int, newer: int) -> None:
    _check_pair(tls, rfc, series, older, newer)


@pytest.mark.parametrize(("rfc", "series", "older", "newer"), QUIC_PAIRS)
def test_quic_renumbered_sections(
    quic: Brain, rfc: int, series: str, older: int, newer: int
) -> None:
    _check_pair(quic, rfc, series, older, newer)


def test_a_later_rfc_is_followed_through_the_older_one(tls: Brain) -> None:
    """RFC 9846 §4.3.10 was RFC 8446 §4.2.10, which draft-ietf-tls-tls13-20 numbered 4.2.9:
    the text current on that revision's day is reached through RFC 8446, as the history card
    reaches it."""
    final = ind.section(ind.rfc_headings(9846), "4.3.10")
    assert final is not None
    older = ind.by_key(ind.rfc_headings(8446), final.key)
    in_draft = ind.by_key(ind.revision_headings("draft-ietf-tls-tls13", 20), final.key)
    assert older is not None and in_draft is not None
    answer = tls.ask("what did RFC 9846 section 4.3.10 look like in draft-ietf-tls-tls13-20?")
    assert answer.verdict is Verdict.ANSWERED, answer.summary
    text = next(r for r in answer.results if isinstance(r, SectionText))
    assert (text.document, text.section_number) == ("draft-ietf-tls-tls13-20", in_draft.number)
    assert f"through RFC 8446 §{older.number}" in answer.summary
    diff = tls.ask(
        "what changed in RFC 9846 section 4.3.10 between draft-ietf-tls-tls13-20 and "
        "draft-ietf-tls-tls13-21?"
    )
    pair = next(r for r in diff.results if isinstance(r, SectionDiff))
    assert pair.older_number == in_draft.number
