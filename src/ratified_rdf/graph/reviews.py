"""Writing a person's review of an answer card: a PROV activity in the reviews graph of the
reviewer's clearance level, through the SHACL gate, with the card's state switched in the same
atomic update."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from pyoxigraph import NamedNode, Triple

from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import XSD_DT, Batch
from ratified_rdf.graph.store import TripleStore
from ratified_rdf.graph.vocab import term

VERDICTS = {"ratified": "rr:Ratified", "disputed": "rr:Disputed", "withdrawn": "rr:Withdrawn"}
_STATE = ("rr:trustState", "rr:latestReview", "dcterms:title")


def write_review(
    store: TripleStore,
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
    """Record ``reviewer``'s ``verdict`` on the card whose content has ``content_hash``, and
    make it the card's state; returns the review's IRI. Rejected whole by the gate if any of
    it does not conform (an unknown verdict, an empty name, a malformed hash). ``card`` may
    also be a derived claim (an alignment record, say): ``is_card`` False leaves it untyped."""
    if verdict not in VERDICTS:
        raise ValueError(f"A review's verdict is one of {', '.join(VERDICTS)}, not {verdict!r}.")
    review = v.review_iri(uuid.uuid4().hex)
    agent = v.reviewer_iri(reviewer)
    batch = Batch(graph, f"review of {card} by {reviewer}")
    batch.add(review, "rdf:type", term("rr:Review").value)
    batch.add(review, "rr:reviewOf", card)
    batch.add(review, "rr:verdict", term(VERDICTS[verdict]).value)
    batch.text(review, "rr:contentHash", content_hash)
    batch.add(review, "prov:wasAssociatedWith", agent)
    batch.typed(review, "prov:endedAtTime", datetime.now(UTC), XSD_DT)
    if note:
        batch.text(review, "rdfs:comment", note)
    batch.add(agent, "rdf:type", term("prov:Agent").value)
    batch.text(agent, "foaf:name", reviewer)
    if is_card:
        batch.add(card, "rdf:type", term("rr:AnswerCard").value)
    batch.text(card, "dcterms:title", title)
    batch.add(card, "rr:trustState", term(VERDICTS[verdict]).value)
    batch.add(card, "rr:latestReview", review)
    node = NamedNode(card)
    replaced = [
        Triple(node, term(p), o)
        for p in _STATE
        for o in (t.object for t in store.describe([card], [graph]) if t.predicate == term(p))
    ]
    ShaclGate().check(batch, store, [graph], removing=replaced)
    store.replace(graph, replaced, batch.triples)
    return review
