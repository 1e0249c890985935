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
from ratified_rdf.graph.store import Term


def holdings(session: Session, question: str) -> Answer:
    """What the graph holds, and what it does not although its records name it: issues and
    pull requests when no archive was read, the RFCs whose own text is not held, and the
    files that look like drafts that no entry reads."""
    results, evidence = _holdings(session)
    gaps, said = _gaps(session) if results else ([], "")
    return Answer(
        question=question,
        intent="holdings",
        verdict=Verdict.ANSWERED,
        summary="The graph holds " + _describe(results) + "." + said,
        results=[*results, *gaps],
        evidence=evidence,
        queries=session.queries,
    )


UNREAD_NAMED = 10
"""Unread files the holdings card names at most (it counts them all)."""


def _gaps(session: Session) -> tuple[list[Holding], str]:
    """What the brain does not hold although its repository or records name it, as results
    and as sentences (each with a leading space)."""
    threads = session.run("gazetteer_threads")
    rows = session.run("held_gaps")
    not_held = [r for r in rows if text_of(r, "rfcNumber") is not None]
    unread = [text_of(r, "file") or "" for r in rows if text_of(r, "file") is not None]
    gaps: list[Holding] = []
    said = ""
    kinds = {(text_of(r, "kind") or "").rsplit("#", 1)[-1] for r in threads}
    missing = [
        n for k, n in (("Issue", "issues"), ("PullRequest", "pull requests")) if k not in kinds
    ]
    if missing:
        what = " or ".join(missing)
        gaps.extend(Holding(what=n, count=0) for n in missing)
        said += (
            f" It holds no {what} at all (no discussion archive was read into it that holds "
            f"any), so it cannot say which are open."
        )
    if not_held:
        names = [f"RFC {text_of(r, 'rfcNumber')}" for r in not_held]
        gaps.append(Holding(what="RFC texts not held", count=len(names), names=names))
        for row, name in zip(not_held, names, strict=True):
            standing = text_of(row, "standsIn")
            said += f" {name}'s own text is not in the records" + (
                f": the sections of {standing}, the last revision of the draft that "
                "became it, stand for its own."
                if standing
                else ", and no revision it holds stands for it: it has no sections."
            )
    unnumbered = [text_of(r, "unnumbered") or "" for r in rows if text_of(r, "unnumbered")]
    if unnumbered:
        gaps.append(
            Holding(
                what="revisions not numbered in the repository",
                count=len(unnumbered),
                names=unnumbered,
            )
        )
        said += (
            f" Its repository numbers no revision of {', '.join(unnumbered)}: each is held as "
            "its text as last committed (named latest), not as the revisions published."
        )
    if unread:
        gaps.append(Holding(what="unread files", count=len(unread), names=unread))
        shown = ", ".join(unread[:UNREAD_NAMED])
        more = f" and {len(unread) - UNREAD_NAMED:,} more" if len(unread) > UNREAD_NAMED else ""
        said += (
            f" It does not read {counted(len(unread), 'files')} on the repository's default "
            f"branch that look like a draft's or an RFC's text: {shown}{more}."
        )
    return gaps, said


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
            label=_document_label(d),
            url=text_of(d, "page"),
            role="draft" if text_of(d, "rfcNumber") is None else "rfc",
        )
        for d in documents
    ]
    return results, evidence


def _document_label(row: dict[str, Term]) -> str:
    """A document by its name, then its title: a draft, the RFC it became and the RFC's
    revision often share one title, which alone would label them all the same."""
    rfc = text_of(row, "rfcNumber")
    name = f"RFC {rfc}" if rfc is not None else text_of(row, "name") or ""
    title = text_of(row, "title")
    return f"{name}: {title}" if title and name else name or title or ""


def _describe(results: list[Holding]) -> str:
    if not results:
        return "nothing yet: build a brain first"
    parts = []
    for holding in results:
        names = f" ({', '.join(holding.names)})" if holding.names else ""
        parts.append(f"{counted(holding.count, holding.what)}{names}")
    return ", ".join(parts)
