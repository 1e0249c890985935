"""What a review is about, before it is written: the card or claim it names, the hash of what
the reviewer read, and the trust state it leaves a derived claim in.

A review of a card is refused when the card changed since it was read; a review of a claim is
hashed over the claim's own triples as the reader sees them now.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import JsonValue
from pyoxigraph import Triple

from ratified_rdf._errors import BrainError
from ratified_rdf.answers.models import Answer, Trust
from ratified_rdf.audit.calls import sha256
from ratified_rdf.graph.reviews import VERDICTS, ReviewError, write_review
from ratified_rdf.graph.vocab import term
from ratified_rdf.graph.writer import Writer


def check_reviewed_question(question: str) -> None:
    """Raise :class:`ReviewError` unless ``question`` asks something: a review is of the card
    a question gets, and a blank question gets the card of what the graph holds, which is no
    one's answer to ratify. Checked before anything is audited or read."""
    if isinstance(question, str) and not question.strip():
        raise ReviewError(
            "The question is empty. A review is of the card a question gets: give the "
            "question whose card you read, in words (as you asked it)."
        )


def card_subject(
    question: str, card: Answer, read_hash: str | None, reviewer: str, verdict: str
) -> dict[str, JsonValue]:
    """What a review of ``card`` records; raises :class:`BrainError` when ``read_hash`` (the
    hash of the card the reviewer read) is not the card's hash now."""
    assert card.trust is not None
    now = card.trust.content_hash
    if read_hash is not None and read_hash != now:
        raise BrainError(
            f"The card has changed since it was read (hash {read_hash[:12]}…, now "
            f"{now[:12]}…). Read it again, then review what it says now."
        )
    return {
        "question": question,
        "card": card.trust.card,
        "content_hash": now,
        "verdict": verdict,
        "reviewer": reviewer,
    }


def claim_subject(claim: str, triples: Sequence[Triple]) -> dict[str, JsonValue]:
    """What a review of ``claim`` records, hashed over ``triples`` (its description as the
    reader sees it); raises :class:`BrainError` when the reader sees nothing of it."""
    if not triples:
        raise BrainError(f"The graph holds nothing about {claim} that you may read.")
    lines = sorted(f"{t.subject} {t.predicate} {t.object} ." for t in triples)
    return {"claim": claim, "content_hash": sha256("\n".join(lines))}


def claim_trust(
    claim: str, subject: Mapping[str, JsonValue], review: str, note: str | None
) -> Trust:
    """The trust state the review ``review`` (recorded as ``subject``) leaves ``claim`` in."""
    verdict = str(subject["verdict"])
    return Trust(
        state=verdict,  # type: ignore[arg-type]
        card=claim,
        content_hash=str(subject["content_hash"]),
        reviewer=str(subject["reviewer"]),
        review=review,
        note=note,
        reviewed_state=verdict,  # type: ignore[arg-type]
    )


def write(
    writer: Writer,
    graph: str,
    subject: Mapping[str, JsonValue],
    card: str,
    title: str,
    note: str | None,
    is_card: bool,
) -> str:
    """Write the review ``subject`` records (its verdict, reviewer and the content hash read)
    about ``card`` into ``graph`` through ``writer``'s gate; returns the review's IRI."""
    return write_review(
        writer,
        graph,
        card=card,
        title=title,
        content_hash=str(subject["content_hash"]),
        verdict=str(subject["verdict"]),
        reviewer=str(subject["reviewer"]),
        note=note,
        is_card=is_card,
    )


def state_term(state: str) -> str:
    """The IRI of a reviewed state named in words (``ratified``, ``disputed``, ``withdrawn``)."""
    if state not in VERDICTS:
        raise BrainError(f"A reviewed state is one of {', '.join(VERDICTS)}, not {state!r}.")
    return term(VERDICTS[state]).value
