"""Trust states on answer cards: what a card is (its key), what it says (its canonical hash),
and what the latest human review made of it.

A card is named by what it is about, not how it was asked: the intent and the subject the
evidence starts from (the RFC section of a why card), so "why does early data work this way?"
and "who discussed RFC 8446 §4.2.10?" share a card. Its content hash is SHA-256 over the RFC
8785 canonical JSON of its verdict, results and evidence (numbers with a fraction written as
their shortest round-trip decimal text): not the wording of the summary (which
echoes the question), nor timings. A review holds the hash it saw; when the card's hash moves
on, the review is stale and the card is shown as derived again, with who had ratified it.
(The drafted question a why card ends with quotes the question, so it is left out too.)
"""

from __future__ import annotations

import hashlib

from pydantic import JsonValue

from ratified_rdf.answers.models import Answer, Trust
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.audit.records import canonical_json
from ratified_rdf.graph import vocab as v


def card_key(answer: Answer) -> str:
    """What a card is about: its intent and the subject its evidence starts from."""
    subject = answer.evidence[0].iri if answer.evidence else " ".join(answer.question.split())
    return _sha256(canonical_json(["card", answer.intent, subject]))


def content_hash(answer: Answer) -> str:
    """SHA-256 of the RFC 8785 canonical JSON of what the card says."""
    data = answer.model_dump(mode="json", include={"intent", "verdict", "results", "evidence"})
    # The drafted question quotes the question asked: wording, not content.
    data["results"] = [
        _scores_as_text(r) for r in data["results"] if r["kind"] != "drafted_question"
    ]
    return _sha256(canonical_json(data, "answer card"))


def _scores_as_text(result: dict[str, JsonValue]) -> dict[str, JsonValue]:
    """A result with its scores and similarities as their shortest round-trip decimal text,
    so a card's hash needs no float formatting rules (and takes RFC 8785's fast path). They
    are the only floats a card holds, each a field of a result of its own (a test checks the
    models), so no deeper walk is needed."""
    return {key: repr(value) if type(value) is float else value for key, value in result.items()}


def card_title(answer: Answer) -> str:
    """A short human title for the card."""
    return answer.evidence[0].label if answer.evidence else answer.question


def trust_of(session: Session, answer: Answer) -> Trust:
    """The card's trust state from its latest review (in graphs the reader may see)."""
    card = v.card_iri(card_key(answer))
    current = content_hash(answer)
    rows = session.run("card_review", card=card) if session.has_reviews() else []
    if not rows:
        return Trust(state="derived", card=card, content_hash=current)
    row = rows[0]
    verdict = (text_of(row, "verdict") or "").rsplit("#", 1)[-1].lower()
    stale = text_of(row, "hash") != current
    return Trust(
        state="derived" if stale else verdict,  # type: ignore[arg-type]
        reviewed_state=verdict,  # type: ignore[arg-type]
        card=card,
        content_hash=current,
        reviewer=text_of(row, "name"),
        reviewed_at=text_of(row, "at"),
        review=text_of(row, "review"),
        note=text_of(row, "note"),
        stale=stale,
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
