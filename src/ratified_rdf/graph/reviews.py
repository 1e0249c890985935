"""Writing a person's review of an answer card or a derived claim: a PROV activity in the
reviews graph of the reviewer's clearance level, through the SHACL gate against the brain's
whole current state.

A review says things about itself and its reviewer only: what it is of (``rr:reviewOf``), the
verdict, the hash of what was read, when, by whom, the title the reviewer saw and their note.
It writes nothing onto the node it reviews. That node is described by the build (an RFC
section's title lives in the spec graph) or by reviews at other clearance levels, and a second
title, state or pointer written beside those would leave the brain non-conforming for every
reader who sees both. A card's or claim's state is its latest review's verdict, read by
``sparql/card_review.rq`` and ``sparql/cards_in_state.rq`` over the reviews a reader may see.

Names and notes are plain text: no control characters (an ANSI escape, a NUL byte), no lone
surrogates (bytes that were not UTF-8), no bidirectional overrides, and of a bounded length.
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from typing import Final

from pyoxigraph import NamedNode

from ratified_rdf._errors import InputError
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.mapping import XSD_DT, Batch
from ratified_rdf.graph.vocab import term
from ratified_rdf.graph.writer import Writer

VERDICTS = {"ratified": "rr:Ratified", "disputed": "rr:Disputed", "withdrawn": "rr:Withdrawn"}

MAX_NAME_CHARS: Final = 200
"""The longest reviewer name recorded."""
MAX_NOTE_CHARS: Final = 4_000
"""The longest review note recorded."""
MAX_TITLE_CHARS: Final = 2_000
"""The longest title a review keeps of what it reviewed; a longer one is cut, with an ellipsis."""

# C0 and C1 controls (DEL included), lone surrogates, and the bidirectional embeddings,
# overrides and isolates that make a terminal or a page show text other than what is stored.
_NOT_PLAIN = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")
# A note may run over several lines: newline and tab are the only controls it may hold.
_NOT_PLAIN_NOTE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


class ReviewError(InputError):
    """A review the brain will not record (an unknown verdict; a name or note that is not
    plain text); nothing of it was written."""


def plain_text(value: str, what: str, *, limit: int, multiline: bool = False) -> str:
    """``value`` if it is plain text of at most ``limit`` characters; otherwise raise
    :class:`ReviewError` naming the first character refused (by code point, never echoed)."""
    if not isinstance(value, str):
        raise ReviewError(f"The {what} must be text, not {type(value).__name__}.")
    if not value.strip():
        raise ReviewError(f"The {what} is empty; give it in words.")
    if len(value) > limit:
        raise ReviewError(
            f"The {what} is {len(value):,} characters long; keep it to {limit:,} or fewer."
        )
    bad = (_NOT_PLAIN_NOTE if multiline else _NOT_PLAIN).search(value)
    if bad is not None:
        char = bad.group()
        kind = (
            "a byte that was not UTF-8"
            if "\ud800" <= char <= "\udfff"
            else "a bidirectional control"
            if char >= "\u202a"
            else "a control character"
        )
        allowed = " (a note may hold newlines and tabs, nothing else of the kind)"
        raise ReviewError(
            f"The {what} holds {kind} (U+{ord(char):04X} at position {bad.start()}); "
            f"write it as plain text{allowed if multiline else ''}."
        )
    return value


def check_review(
    *, reviewer: str, verdict: str, note: str | None = None, claim: str | None = None
) -> None:
    """Raise :class:`ReviewError` unless a review with these could be recorded as far as its
    own words go: a known verdict, a plain-text name and note, and a claim named by an IRI.
    Checked before anything is audited or read, so hostile text never reaches either."""
    if verdict not in VERDICTS:
        shown = verdict[:40] if isinstance(verdict, str) else type(verdict).__name__
        raise ReviewError(f"A review's verdict is one of {', '.join(VERDICTS)}, not {shown!r}.")
    plain_text(reviewer, "reviewer's name", limit=MAX_NAME_CHARS)
    if note is not None:
        plain_text(note, "review note", limit=MAX_NOTE_CHARS, multiline=True)
    if claim is not None:
        if not isinstance(claim, str):
            raise ReviewError(f"A claim is named by its IRI, as text, not {type(claim).__name__}.")
        try:
            NamedNode(claim)
        except ValueError:
            raise ReviewError(
                "A claim is named by its absolute IRI (such as one a query returned), and "
                "this is not one; copy the IRI whole, without spaces or angle brackets."
            ) from None


def write_review(
    writer: Writer,
    graph: str,
    *,
    card: str,
    title: str,
    content_hash: str,
    verdict: str,
    reviewer: str,
    note: str | None = None,
    is_card: bool = True,
) -> str:
    """Record ``reviewer``'s ``verdict`` on the card (or derived claim) whose content has
    ``content_hash`` in the reviews graph ``graph``; returns the review's IRI.

    The batch goes through ``writer``'s gate against the brain's whole current state, so a
    review that would leave any reader's graphs non-conforming is refused whole
    (:class:`~ratified_rdf.graph.gate.GateRejected`), as is a malformed hash. A reviewer name
    or note that is not plain text, or an unknown verdict, is refused before that
    (:class:`ReviewError`). ``is_card`` False leaves ``card`` untyped (a claim has a type of
    its own)."""
    check_review(reviewer=reviewer, verdict=verdict, note=note)
    shown = _NOT_PLAIN.sub(" ", title)
    if len(shown) > MAX_TITLE_CHARS:
        shown = shown[: MAX_TITLE_CHARS - 1] + "…"
    review = v.review_iri(uuid.uuid4().hex)
    agent = v.reviewer_iri(reviewer)
    batch = Batch(graph, f"review of {card} by reviewer {agent.rsplit('/', 1)[-1]}")
    batch.add(review, "rdf:type", term("rr:Review").value)
    batch.add(review, "rr:reviewOf", card)
    batch.add(review, "rr:verdict", term(VERDICTS[verdict]).value)
    batch.text(review, "rr:contentHash", content_hash)
    batch.add(review, "prov:wasAssociatedWith", agent)
    batch.typed(review, "prov:endedAtTime", datetime.now(UTC), XSD_DT)
    batch.text(review, "dcterms:title", shown)
    if note:
        batch.text(review, "rdfs:comment", note)
    batch.add(agent, "rdf:type", term("prov:Agent").value)
    batch.text(agent, "foaf:name", reviewer)
    if is_card:
        batch.add(card, "rdf:type", term("rr:AnswerCard").value)
    writer.write_batch(batch)
    return review
