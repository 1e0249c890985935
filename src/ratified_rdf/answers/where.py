"""Which section covers a topic: the section found by its heading, its number, heading and
link, and the runner-up."""

from __future__ import annotations

from ratified_rdf.answers.heading_search import HeadingIndex, runner_ups
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import Alternative, Answer, Evidence, HistoryEntry, Verdict
from ratified_rdf.answers.session import Session


def where_is(session: Session, question: str, rfc: int | None, index: HeadingIndex) -> Answer:
    """The RFC section whose heading best matches the question's words (in ``rfc`` when the
    question names one), with the runner-up as the alternative."""
    found = index.search(question, limit=20)
    hits = index.rfc_hits(found, rfc)
    if not hits:
        terms = ", ".join(found.query_terms) or "none"
        scope = f" of RFC {rfc}" if rfc else ""
        return out_of_scope(
            session, question, f"no section heading{scope} matches its words (terms: {terms})"
        )
    best = hits[0]
    entry = best.entry
    matched = ", ".join(f"'{w}'" for w in best.matched)
    summary = (
        f"{entry.document} §{entry.number} {entry.heading} covers it: its heading matched the "
        f"words {matched}"
        + (
            f" (as '{best.matched_heading}' in an earlier text)"
            if best.matched_heading != entry.heading
            else ""
        )
        + "."
    )
    runner = next(iter(runner_ups(hits)), None)
    if runner is not None:
        summary += (
            f" Next best: {runner.entry.document} §{runner.entry.number} {runner.entry.heading}."
        )
    result = HistoryEntry(
        document=entry.document,
        revision_number=None,
        date=None,
        section_number=entry.number,
        heading=entry.heading,
        similarity=1.0,
        still_changing=False,
        rule="heading search",
        url=entry.page or "",
    )
    alternatives = [
        Alternative(
            question=f"which section of {h.entry.document} covers {h.entry.heading.lower()}?",
            reason=f"runner-up: {h.entry.document} §{h.entry.number} {h.entry.heading}",
        )
        for h in ([runner] if runner else [])
    ]
    return Answer(
        question=question,
        intent="where_is",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[result],
        evidence=[
            Evidence(
                iri=entry.section,
                label=f"{entry.document} §{entry.number} {entry.heading}",
                url=entry.page,
                role="rfc-section",
            ),
            *(
                Evidence(
                    iri=h.entry.section,
                    label=f"{h.entry.document} §{h.entry.number} {h.entry.heading} (runner-up)",
                    url=h.entry.page,
                    role="section",
                )
                for h in ([runner] if runner else [])
            ),
        ],
        alternatives=alternatives,
        queries=session.queries,
        note="Found by the words of section headings (BM25 over every heading the brain holds).",
    )
