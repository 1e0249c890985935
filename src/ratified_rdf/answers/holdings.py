"""What the graph holds, and the "graph doesn't know" answer that lists it."""

from __future__ import annotations

from ratified_rdf.answers.models import (
    Answer,
    Evidence,
    Holding,
    Verdict,
)
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.answers.wording import counted


def holdings(session: Session, question: str) -> Answer:
    """What the graph holds."""
    results, evidence = _holdings(session)
    return Answer(
        question=question,
        intent="holdings",
        verdict=Verdict.ANSWERED,
        summary="The graph holds " + _describe(results) + ".",
        results=list(results),
        evidence=evidence,
        queries=session.queries,
    )


def out_of_scope(session: Session, question: str, reason: str) -> Answer:
    """The graph doesn't know; say why, and what it does hold."""
    results, evidence = _holdings(session)
    return Answer(
        question=question,
        intent="out_of_scope",
        verdict=Verdict.UNKNOWN,
        summary=f"The graph doesn't know: {reason}. It holds {_describe(results)}.",
        results=list(results),
        evidence=evidence,
        queries=session.queries,
    )


def not_built(question: str, reason: str) -> Answer:
    """The graph doesn't know, because the brain held nothing yet at the time asked about."""
    return Answer(
        question=question,
        intent="out_of_scope",
        verdict=Verdict.UNKNOWN,
        summary=f"The graph doesn't know: {reason}",
    )


def _holdings(session: Session) -> tuple[list[Holding], list[Evidence]]:
    counts = session.run("holdings")
    documents = session.run("documents")
    drafts = [text_of(d, "name") or "" for d in documents if text_of(d, "rfcNumber") is None]
    rfcs = [
        f"RFC {text_of(d, 'rfcNumber')}" for d in documents if text_of(d, "rfcNumber") is not None
    ]
    names = {"drafts": drafts, "RFCs": rfcs}
    results = [
        Holding(
            what=text_of(c, "kind") or "",
            count=int(text_of(c, "count") or 0),
            names=names.get(text_of(c, "kind") or "", []),
        )
        for c in counts
    ]
    evidence = [
        Evidence(
            iri=text_of(d, "document") or "",
            label=text_of(d, "title") or text_of(d, "name") or "",
            url=text_of(d, "page"),
            role="draft" if text_of(d, "rfcNumber") is None else "rfc",
        )
        for d in documents
    ]
    return results, evidence


def _describe(results: list[Holding]) -> str:
    if not results:
        return "nothing yet: build a brain first"
    parts = []
    for holding in results:
        names = f" ({', '.join(holding.names)})" if holding.names else ""
        parts.append(f"{counted(holding.count, holding.what)}{names}")
    return ", ".join(parts)
