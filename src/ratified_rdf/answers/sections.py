"""Answers about sections: what one became, a section's history, revision chains and lists."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from pyoxigraph import Literal, NamedNode

from ratified_rdf.answers.draft_finals import (
    DraftFinal,
    Final,
    became_no_rfc,
    final_iri,
    final_name,
)
from ratified_rdf.answers.heading_search import HeadingEntry
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import (
    Alternative,
    Answer,
    ChainStep,
    DocumentFacts,
    Evidence,
    HistoryEntry,
    Result,
    RevisionEntry,
    SectionFate,
    SectionText,
    Verdict,
)
from ratified_rdf.answers.session import Session, is_true, text_of
from ratified_rdf.answers.wording import plural
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import Term
from ratified_rdf.records.alignment import STILL_CHANGING_BELOW
from ratified_rdf.records.manifest import UNNUMBERED

CONNECTION_NOT_CAUSATION = (
    "Alignment says a section became that section of the RFC, matched by the rule shown; "
    "it is a connection between texts, not a claim about why the text changed."
)


def _short(revision_label: str) -> str:
    """``draft-ietf-tls-tls13-21`` → ``-21``."""
    return "-" + revision_label.rsplit("-", 1)[-1]


def _rule(iri: str | None) -> str:
    return (iri or "").rsplit("rule-", 1)[-1]


def _section_label(number: str | None, heading: str) -> str:
    return f"§{number} {heading}" if number else heading


def section_became(
    session: Session, question: str, draft: str, revision: str, section: str
) -> Answer:
    """What section ``section`` of ``draft``-``revision`` became in the final RFC."""
    revision_iri = v.revision_iri(draft, revision)
    rows = session.run("section_became", revision=revision_iri, sectionNumber=section)
    name = f"{draft}-{revision}"
    if not rows:
        return _missing_revision_section(session, question, draft, revision, section)
    row = rows[0]
    chain = _chain(session, revision_iri)
    final_number = text_of(row, "finalNumber")
    final_heading = text_of(row, "finalHeading")
    heading = text_of(row, "heading") or ""
    rfc_iri = text_of(row, "rfc") or ""
    rfc_step = next((c for c in chain if c.iri == rfc_iri), None)
    rfc_label = rfc_step.label if rfc_step else rfc_iri.rsplit("/", 1)[-1].upper()
    similar = text_of(row, "similarity")
    similarity = float(similar) if similar else None
    still = is_true(row, "stillChanging") if text_of(row, "stillChanging") else None
    fate = SectionFate(
        revision=name,
        section_number=section,
        heading=heading,
        rfc=rfc_label,
        final_section_number=final_number,
        final_heading=final_heading,
        similarity=similarity,
        still_changing=still,
        rule=_rule(text_of(row, "rule")),
    )
    evidence = [
        Evidence(
            iri=text_of(row, "section") or "",
            label=f"{name} §{section} {heading}",
            url=text_of(row, "sectionPage"),
            role="section",
        ),
        *(
            Evidence(
                iri=c.iri, label=c.label, url=c.url, role="rfc" if c.iri == rfc_iri else "revision"
            )
            for c in chain
        ),
    ]
    if text_of(row, "final") is None:
        summary = (
            f"Section {section} ({heading}) of {name} has no counterpart in {rfc_label}: "
            "no section of the final text matched its heading, anchor or text."
        )
    else:
        evidence.append(
            Evidence(
                iri=text_of(row, "final") or "",
                label=f"{rfc_label} {_section_label(final_number, final_heading or '')}",
                url=text_of(row, "finalPage"),
                role="rfc-section",
            )
        )
        state = "still changing" if still else "already at (or within 2% of) its final text"
        summary = (
            f"Section {section} ({heading}) of {name} became {rfc_label} "
            f"{_section_label(final_number, final_heading or '')} "
            f"(matched by {fate.rule.replace('-', ' ')}; its text was "
            f"{(similarity or 0) * 100:.1f}% similar to the final text, {state} at {name}). "
            f"Chain: {' → '.join(_short(c.label) if c.iri != rfc_iri else c.label for c in chain)}"
            f" → §{final_number or final_heading}."
        )
    return Answer(
        question=question,
        intent="section_became",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[fate, *chain],
        evidence=evidence,
        queries=session.queries,
        note=CONNECTION_NOT_CAUSATION,
    )


def _chain(session: Session, start: str) -> list[ChainStep]:
    """The revision chain from ``start`` to its RFC, walked in order along rr:supersededBy."""
    rows = session.run("revision_chain", start=start)
    by_iri = {text_of(r, "revision"): r for r in rows}
    steps: list[ChainStep] = []
    current: str | None = start
    rfc_row = None
    while current in by_iri and len(steps) <= len(by_iri):
        row = by_iri[current]
        steps.append(
            ChainStep(
                label=text_of(row, "label") or current or "",
                iri=current or "",
                url=text_of(row, "page") or "",
            )
        )
        if text_of(row, "rfc"):
            rfc_row = row
        current = text_of(row, "next")
    if rfc_row is not None:
        steps.append(
            ChainStep(
                label=f"RFC {text_of(rfc_row, 'rfcNumber')}",
                iri=text_of(rfc_row, "rfc") or "",
                url=text_of(rfc_row, "rfcPage") or "",
            )
        )
    return steps


def _missing_revision_section(
    session: Session, question: str, draft: str, revision: str, section: str
) -> Answer:
    revisions = session.run("document_revisions", draftName=draft)
    numbers = [text_of(r, "revisionNumber") or "" for r in revisions]
    if not revisions:
        return out_of_scope(session, question, f"it holds no draft named {draft}")
    if revision not in numbers:
        return out_of_scope(
            session,
            question,
            f"it holds revisions {numbers[0]}–{numbers[-1]} of {draft}, not revision {revision}",
        )
    return out_of_scope(session, question, f"{draft}-{revision} has no section numbered {section}")


@dataclass(frozen=True)
class SectionHistory:
    """An RFC section's earlier texts, as its history card lists them and its why card too."""

    entries: tuple[HistoryEntry, ...]
    """Along the chain: an older RFC's own revisions first (their rule says ", through RFC
    …"), then the older RFC and the drafts that revised it, in the order they came."""
    rows: tuple[dict[str, Term], ...]
    """Each entry's ``section_history`` row, in the same order."""
    final: dict[str, Term]
    """A row of the RFC section itself (its IRI, heading and pages are on every direct row)."""
    through: tuple[str, ...]
    """The older RFC sections some entries were reached through (``RFC 8446 §4.2.1``)."""

    @property
    def earlier(self) -> int:
        """How many entries were reached through an older RFC."""
        return sum(1 for r in self.rows if "through" in r)

    def evidence(self) -> list[Evidence]:
        """Each earlier text's section, as a link."""
        return [
            Evidence(
                iri=text_of(r, "section") or "",
                label=f"{e.document} {_section_label(e.section_number, e.heading)}",
                url=e.url,
                role="section",
            )
            for r, e in zip(self.rows, self.entries, strict=True)
        ]


def history_of(session: Session, rfc: Final, section: str) -> SectionHistory | None:
    """The earlier texts that align with RFC ``rfc`` §``section`` (or with the section of the
    last revision of a draft that became no RFC); None when none does."""
    rows = session.run("section_history", rfc=final_iri(rfc), sectionNumber=section)
    if not rows:
        return None
    final = rows[0]
    starts: dict[str, str] = {}
    for row in rows:
        draft = text_of(row, "draft")
        if draft and text_of(row, "date"):
            starts[draft] = min(starts.get(draft, "9999"), text_of(row, "date") or "9999")

    def order(row: dict[str, Term]) -> tuple[int, str, str]:
        draft = text_of(row, "draft")
        if draft is None:  # an older RFC comes before the drafts that revised it
            return (0, "", text_of(row, "documentLabel") or "")
        return (1, starts.get(draft, ""), text_of(row, "revisionNumber") or "")

    rows.sort(key=order)
    # An older RFC this one revises has a history of its own (RFC 9846 §4.3.1 was RFC 8446
    # §4.2.1, which drafts before it wrote): its revisions come first, marked as reached
    # through it, with their similarity to *its* text.
    earlier: list[dict[str, Term]] = []
    for row in rows:
        older = text_of(row, "documentLabel") or ""
        if text_of(row, "draft") is None and older.startswith("RFC ") and text_of(row, "number"):
            for back in session.run(
                "section_history",
                rfc=v.document_iri("rfc" + older.removeprefix("RFC ")),
                sectionNumber=text_of(row, "number") or "",
            ):
                if text_of(back, "draft") is not None:
                    earlier.append(
                        {**back, "through": Literal(f"{older} §{text_of(row, 'number')}")}
                    )
    earlier.sort(key=lambda r: (text_of(r, "date") or "", text_of(r, "revisionNumber") or ""))
    ordered = [*earlier, *rows]
    entries = tuple(
        HistoryEntry(
            document=text_of(r, "documentLabel") or "",
            revision_number=text_of(r, "revisionNumber"),
            date=text_of(r, "date"),
            section_number=text_of(r, "number"),
            heading=text_of(r, "heading") or "",
            similarity=float(text_of(r, "similarity") or 0),
            still_changing=is_true(r, "stillChanging"),
            # timeline.py reads ", through …" off the rule to tell these entries apart.
            rule=(
                f"{_rule(text_of(r, 'rule'))}, through {text_of(r, 'through')}"
                if "through" in r
                else _rule(text_of(r, "rule"))
            ),
            url=text_of(r, "sectionPage") or "",
        )
        for r in ordered
    )
    return SectionHistory(
        entries=entries,
        rows=tuple(ordered),
        final=final,
        through=tuple(sorted({text_of(r, "through") or "" for r in earlier})),
    )


def publication(session: Session, rfc: Final) -> tuple[DocumentFacts, Evidence] | None:
    """RFC ``rfc``'s publication month as the facts a card's timeline ends on, and the RFC's
    link; None when the records give no publication date (or it is a draft, never published)."""
    if isinstance(rfc, DraftFinal):
        return None
    iri = v.document_iri(f"rfc{rfc}")
    rows = session.run("rfc_published", rfc=iri)
    if not rows:
        return None
    row = rows[0]
    url = text_of(row, "page") or v.rfc_url(f"rfc{rfc}")
    facts = DocumentFacts(
        name=f"RFC {rfc}",
        title=text_of(row, "title"),
        url=url,
        is_rfc=True,
        rfc_number=rfc,
        published=(text_of(row, "issued") or "")[:7],
    )
    return facts, Evidence(iri=iri, label=f"RFC {rfc}", url=url, role="rfc")


def no_section(session: Session, section: str, rfc: Final | None = None) -> str:
    """Why the graph has no section ``section`` (of RFC ``rfc``, or of any RFC), for an
    out-of-scope answer: an RFC held as a fact alone (neither its text nor a revision of a
    draft that became it) has no sections at all, which is not the same as having no such
    section."""
    rows = session.run("held_gaps")
    textless = [
        text_of(r, "rfcNumber") or ""
        for r in rows
        if text_of(r, "rfcNumber") is not None and text_of(r, "standsIn") is None
    ]
    if isinstance(rfc, DraftFinal):
        return f"it holds no section {section} of {rfc.label}"
    if rfc is not None:
        reason = f"it holds no section {section} of RFC {rfc}"
        if str(rfc) in textless:
            reason += (
                f": the records hold neither RFC {rfc}'s own text nor a revision of a draft "
                "that became it, so it has no sections at all"
            )
        return reason
    drafts = [text_of(r, "draftStandsIn") or "" for r in rows if "draftStandsIn" in r]
    if drafts:
        # A brain of drafts that became no RFC: their last revisions are what it reads
        # a bare section number in, and none has this one.
        reason = (
            f"neither an RFC it holds nor {', '.join(drafts)} (the last revision of a draft "
            f"that became no RFC) has a section {section}"
        )
    else:
        reason = f"no RFC it holds has a section {section}"
    if textless:
        names = ", ".join(f"RFC {n}" for n in textless)
        reason += f" (it holds no text of {names}, nor a revision of a draft that became it)"
    return reason


def text_not_held(session: Session, rfc: Final) -> str:
    """The sentence a section card ends with when the records do not hold RFC ``rfc``'s own
    text (its sections are then those of the last revision of the draft that became it), or
    when the card is about a draft that became no RFC, with a leading space; empty when they
    hold the RFC's text."""
    if isinstance(rfc, DraftFinal):
        return became_no_rfc(rfc)
    rows = session.run("rfc_sections_from", rfc=v.document_iri(f"rfc{rfc}"))
    if not rows:
        return ""
    revision = text_of(rows[0], "label") or "its draft's last revision"
    return (
        f" The records do not hold RFC {rfc}'s own text: its sections here are those of "
        f"{revision}, the last revision of the draft that became it, numbered as that "
        "revision numbers them, and its final text is that revision's."
    )


def section_history(session: Session, question: str, rfc: Final | None, section: str) -> Answer:
    """Every revision's number and heading for an RFC section, and where its text differed;
    the posts and commits connected to it while it was changing (as its why card lists
    them), and the RFC's publication."""
    # The why card's module imports this one (for the section's row and its history), so
    # its posts and commits are imported here, when the card is drawn.
    from ratified_rdf.answers.discussion import LISTED_COMMITS, posts_and_commits

    if rfc is None:
        return which_rfc(session, question, section)
    history = history_of(session, rfc, section)
    name = final_name(rfc)
    if history is None and isinstance(rfc, DraftFinal):
        return out_of_scope(
            session, question, f"no revision's section aligns with {name} §{section}"
        )
    if history is None:
        holders = session.run("rfc_sections_numbered", sectionNumber=section)
        if not any(text_of(r, "rfcNumber") == str(rfc) for r in holders):
            return out_of_scope(session, question, no_section(session, section, rfc))
        return out_of_scope(
            session, question, f"no revision's section aligns with RFC {rfc} §{section}"
        )
    first = history.final
    entries = history.entries
    final_heading = text_of(first, "finalHeading") or ""
    discussed, published = posts_and_commits(
        session, text_of(first, "final") or "", lambda: publication(session, rfc)
    )
    direct = [e for e, r in zip(entries, history.rows, strict=True) if "through" not in r]
    changing = [e for e in direct if e.still_changing]
    numbering = list(dict.fromkeys(e.section_number or e.heading for e in entries))
    titles = list(dict.fromkeys(e.heading for e in entries))
    earlier = history.earlier
    summary = (
        f"{name} §{section} {final_heading}: {plural(len(entries), 'earlier text')} "
        f"{'aligns' if len(entries) == 1 else 'align'} with it, "
        f"from {entries[0].document} to {entries[-1].document}"
        + (
            f" ({earlier} of them through {', '.join(history.through)}, the older RFC's own "
            "history, with their similarity to its text)"
            if earlier
            else ""
        )
        + ". "
        f"Numbered {', '.join(numbering)} along the way"
        + (f"; titled {' / '.join(titles)}" if len(titles) > 1 else "")
        + ". "
        + (
            "Its text still differed from the final text (under "
            f"{STILL_CHANGING_BELOW:.0%} similar) in "
            f"{len(changing)} of {'its own' if earlier else 'them'}, the last being "
            f"{changing[-1].document}"
            if changing
            else f"Its text was already final ({STILL_CHANGING_BELOW:.0%} or more similar) in "
            "every one of them"
        )
        + _discussed_clause(
            discussed.changing_count, discussed.commit_count, discussed.later_count, LISTED_COMMITS
        )
        + text_not_held(session, rfc)
    )
    evidence = [
        Evidence(
            iri=final_iri(rfc),
            label=name,
            url=text_of(first, "rfcPage"),
            role="rfc",
        ),
        Evidence(
            iri=text_of(first, "final") or "",
            label=f"{name} §{section} {final_heading}",
            url=text_of(first, "finalPage"),
            role="rfc-section",
        ),
        *history.evidence(),
        *discussed.thread_evidence(),
        *discussed.commit_evidence(),
    ]
    # The history entries come first, in their order: the timeline reads the settled
    # revision off that order.
    results: list[Result] = [*entries, *discussed.posts, *discussed.commits]
    if published is not None:
        results.append(published[0])
    return Answer(
        question=question,
        intent="section_history",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=results,
        evidence=evidence,
        queries=session.queries,
        note=CONNECTION_NOT_CAUSATION,
    )


def _discussed_clause(posts: int, commits: int, later: int, listed: int) -> str:
    """The history card's last clause: the posts and commits it lists (as its why card does),
    counted; ``listed`` is how many of the most recent commits are listed."""
    shown = f" (the {listed} most recent listed)" if commits > listed else ""
    if posts and commits:
        clause = (
            f"; discussed in {plural(posts, 'post')} and changed by "
            f"{plural(commits, 'commit')} while it was changing{shown}"
        )
    elif commits:
        clause = f"; changed by {plural(commits, 'commit')} while it was changing{shown}, "
        clause += "with no post referring to it"
    elif posts:
        clause = f"; discussed in {plural(posts, 'post')} while it was changing, with no "
        clause += "commit recorded as changing it"
    else:
        clause = "; no post referred to it and no commit changed it while it was changing"
    return clause + (f", and {plural(later, 'more post')} after publication." if later else ".")


def which_rfc(session: Session, question: str, section: str) -> Answer:
    holders = session.run("rfc_sections_numbered", sectionNumber=section)
    if not holders:
        return out_of_scope(session, question, no_section(session, section))
    alternatives = [
        Alternative(
            question=f"history of RFC {text_of(r, 'rfcNumber')} section {section}",
            reason=f"RFC {text_of(r, 'rfcNumber')} §{section} is {text_of(r, 'heading')}",
        )
        for r in holders
    ]
    if len(alternatives) == 1:
        return section_history(
            session, question, int(text_of(holders[0], "rfcNumber") or 0), section
        )
    return Answer(
        question=question,
        intent="section_history",
        verdict=Verdict.AMBIGUOUS,
        summary=(
            f"Section {section} exists in {plural(len(holders), 'RFC')}; say which one you mean."
        ),
        evidence=[
            Evidence(
                iri=text_of(r, "section") or "",
                label=f"RFC {text_of(r, 'rfcNumber')} §{section} {text_of(r, 'heading')}",
                url=text_of(r, "page"),
                role="rfc-section",
            )
            for r in holders
        ],
        alternatives=alternatives,
        queries=session.queries,
    )


def which_revision(session: Session, question: str, section: str, draft: str | None) -> Answer:
    """A section number without a revision: every revision numbers sections differently."""
    documents = session.run("documents")
    drafts = [
        text_of(d, "name") or ""
        for d in documents
        if text_of(d, "rfcNumber") is None and (draft is None or text_of(d, "name") == draft)
    ]
    if not drafts:
        return out_of_scope(session, question, f"it holds no draft named {draft}")
    return Answer(
        question=question,
        intent="section_became",
        verdict=Verdict.AMBIGUOUS,
        summary=(
            f"Section numbers move between revisions, so 'section {section}' needs a revision: "
            "say which one (for example draft-…-21)."
        ),
        alternatives=[
            Alternative(
                question=f"what did section {section} of {name}-NN become in the RFC?",
                reason=f"put the number of the revision of {name} you mean in place of NN",
            )
            for name in drafts
        ],
        queries=session.queries,
    )


def which_series(
    session: Session, question: str, intent: str, number: str, drafts: Sequence[str]
) -> Answer:
    """A revision written short ("draft 25") that several drafts hold, with nothing in the
    question to pick one: the card asks which, each reading offered as a question."""
    said = re.compile(rf"(?:\b(?:draft|revision|rev\.?)\s*-?\s*|(?<![\w.-])-)0?{int(number)}\b")
    alternatives = [
        Alternative(
            question=said.sub(f"{draft}-{number}", question, count=1)
            if said.search(question)
            else f"{question} ({draft}-{number})",
            reason=f"{draft}-{number} is a revision the graph holds",
        )
        for draft in drafts
    ]
    names = ", ".join(f"{draft}-{number}" for draft in drafts)
    return Answer(
        question=question,
        intent=intent,
        verdict=Verdict.AMBIGUOUS,
        summary=(
            f"Revision {number} is a revision of {plural(len(drafts), 'draft')} ({names}); say "
            "which draft you mean, by its name or a short name such as the end of its name."
        ),
        alternatives=alternatives,
        queries=session.queries,
    )


def _chain_role(step: ChainStep) -> str:
    """A chain's steps are revisions until the last, which is the RFC they became."""
    return "rfc" if step.iri.rsplit("/", 1)[-1].startswith("rfc") else "revision"


def revision_chain(session: Session, question: str, draft: str, revision: str | None) -> Answer:
    """The revisions from ``draft``-``revision`` to the RFC it became; from the draft's first
    revision the brain holds when the question names the draft alone ("trace
    draft-ietf-tls-tls13 to its RFC")."""
    if revision is None:
        held = session.run("document_revisions", draftName=draft)
        first = text_of(held[0], "revisionNumber") if held else None
        if first is None:
            return out_of_scope(session, question, f"it holds no draft named {draft}")
        revision = first
    chain = _chain(session, v.revision_iri(draft, revision))
    if not chain:
        return _missing_revision_section(session, question, draft, revision, "")
    labels = " → ".join(c.label for c in chain)
    return Answer(
        question=question,
        intent="revision_chain",
        verdict=Verdict.ANSWERED,
        summary=f"{draft}-{revision} leads through {plural(len(chain), 'step')}: {labels}.",
        results=list(chain),
        evidence=[
            Evidence(iri=c.iri, label=c.label, url=c.url, role=_chain_role(c)) for c in chain
        ],
        queries=session.queries,
    )


def revisions(session: Session, question: str, draft: str) -> Answer:
    """The revisions of one draft."""
    rows = session.run("document_revisions", draftName=draft)
    if not rows:
        return out_of_scope(session, question, f"it holds no draft named {draft}")
    entries = [
        RevisionEntry(
            label=text_of(r, "label") or "",
            revision_number=text_of(r, "revisionNumber") or "",
            date=text_of(r, "date") or "",
            url=text_of(r, "page") or "",
            became=text_of(r, "became"),
        )
        for r in rows
    ]
    numbered = [e for e in entries if e.revision_number != UNNUMBERED]
    summary = (
        f"{draft} has {plural(len(entries), 'revision')}, {entries[0].revision_number} "
        f"({entries[0].date[:10]}) to {entries[-1].revision_number} ({entries[-1].date[:10]})."
        if numbered
        # Never a number the repository does not give: the gap is said instead.
        else f"{draft} has revisions not numbered in the repository: the records hold its "
        f"text as last committed ({entries[0].date[:10]}), as {entries[0].label}, and not "
        "which numbered revisions were published."
    )
    return Answer(
        question=question,
        intent="revisions",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=list(entries),
        evidence=[
            Evidence(iri=text_of(r, "revision") or "", label=e.label, url=e.url, role="revision")
            for r, e in zip(rows, entries, strict=True)
        ],
        queries=session.queries,
    )


def section_at(
    session: Session, question: str, rfc: Final | None, section: str, when: datetime
) -> Answer:
    """What an RFC section's text said on a day (valid time): the text of the revision, or
    RFC, that was the current one then, found through the revisions, not the RFC's number."""
    if rfc is None:
        return which_rfc(session, question, section)
    found = session.run("rfc_section", rfc=final_iri(rfc), sectionNumber=section)
    if not found:
        return out_of_scope(session, question, no_section(session, section, rfc))
    final = text_of(found[0], "section") or ""
    title = f"{final_name(rfc)} §{section} {text_of(found[0], 'heading')}"
    texts = lineage_texts(session, final)
    moment = when if when.tzinfo else when.replace(tzinfo=UTC)
    current = [(start, row) for start, row in texts if start <= moment]
    evidence = [Evidence(iri=final, label=title, url=text_of(found[0], "page"), role="rfc-section")]
    if not current:
        first = texts[0] if texts else None
        since = (
            f"; its earliest text is in {text_of(first[1], 'documentLabel')}, of "
            f"{first[0].date().isoformat()}"
            if first
            else ""
        )
        return Answer(
            question=question,
            intent="section_at",
            verdict=Verdict.UNKNOWN,
            summary=(
                f"The graph doesn't know what {title} said on {moment.date().isoformat()}: no "
                f"revision it holds had that text yet{since}."
            ),
            evidence=evidence,
            queries=session.queries,
        )
    start, row = current[-1]
    later = [s for s, _ in texts if s > start]
    label = text_of(row, "documentLabel") or ""
    number = text_of(row, "number")
    heading = text_of(row, "heading") or ""
    entry = SectionText(
        document=label,
        section_number=number,
        heading=heading,
        text=text_of(row, "text") or "",
        current_from=start.isoformat(),
        current_until=later[0].isoformat() if later else None,
        url=text_of(row, "page") or "",
    )
    through = f" (through {text_of(row, 'through')})" if "through" in row else ""
    summary = (
        f"On {moment.date().isoformat()}, the text that became {title}{through} was "
        f"{_section_label(number, heading)} of {label}, current from "
        f"{start.date().isoformat()}"
        + (f" until {later[0].date().isoformat()}" if later else "")
        + "."
    )
    return Answer(
        question=question,
        intent="section_at",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[entry],
        evidence=[
            *evidence,
            Evidence(
                iri=text_of(row, "section") or "",
                label=f"{label} {_section_label(number, heading)}",
                url=entry.url,
                role="revision-section",
            ),
        ],
        queries=session.queries,
        note=(
            "Valid time: a revision's text is taken as current from the day it was posted "
            "until the next revision; an RFC's from the first day of its month of publication."
        ),
    )


def lineage_texts(session: Session, final: str) -> list[tuple[datetime, dict[str, Term]]]:
    """Every text the RFC section ``final`` had, oldest first, with when each appeared: its
    own, each revision's (or older RFC's) section aligned with it and, through an older RFC it
    revises, that RFC section's own earlier texts, marked with ``through`` ("RFC 8446
    §4.2.10"), as the history card follows them."""
    rows = session.run("section_texts", final=final)
    earlier: list[dict[str, Term]] = []
    for row in rows:
        older = text_of(row, "section")
        label = text_of(row, "documentLabel") or ""
        if older and older != final and label.startswith("RFC ") and text_of(row, "issued"):
            mark = Literal(f"{label} §{text_of(row, 'number') or text_of(row, 'heading')}")
            earlier.extend(
                {**back, "through": mark}
                for back in session.run("section_texts", final=older)
                if text_of(back, "section") != older
            )
    return sorted(((_appeared(row), row) for row in [*earlier, *rows]), key=lambda p: p[0])


def final_section(
    session: Session, draft: str, revision: str, section: str
) -> tuple[int, str] | None:
    """(RFC number, section number) that section ``section`` of ``draft``-``revision``
    became, or None when it has no counterpart in an RFC (or the revision has no such
    section)."""
    rows = session.run(
        "section_became", revision=v.revision_iri(draft, revision), sectionNumber=section
    )
    for row in rows:
        rfc = (text_of(row, "rfc") or "").rsplit("rfc", 1)[-1]
        number = text_of(row, "finalNumber")
        if rfc.isdigit() and number:
            return int(rfc), number
    return None


def revision_numbers(
    session: Session, rfc: Final, section: str, revisions: Sequence[str]
) -> list[str | None]:
    """The number the text of RFC ``rfc`` §``section`` had in each of ``revisions``
    ("draft-ietf-tls-tls13-20"), followed through its alignments; None for a revision that
    holds no text aligned with it (all None when the RFC has no such section)."""
    found = session.run("rfc_section", rfc=final_iri(rfc), sectionNumber=section)
    if not found:
        return [None for _ in revisions]
    numbered: dict[str | None, str | None] = {}
    for _, row in lineage_texts(session, text_of(found[0], "section") or ""):
        if text_of(row, "number"):  # the earliest text of a revision, as before
            numbered.setdefault(text_of(row, "documentLabel"), text_of(row, "number"))
    return [numbered.get(revision) for revision in revisions]


def _appeared(row: dict[str, Term]) -> datetime:
    """When a row's document appeared: a revision's timestamp, or an RFC's month."""
    date = text_of(row, "date")
    if date:
        return datetime.fromisoformat(date).astimezone(UTC)
    return datetime.fromisoformat(f"{text_of(row, 'issued')}-01T00:00:00+00:00")


def rfc_section_row(
    session: Session, rfc: Final, section: str, known: HeadingEntry | None = None
) -> list[dict[str, Term]]:
    """Section ``section`` of RFC ``rfc``: one row of its IRI, ``heading`` and ``page`` (none
    when the graph holds no such section).

    ``known`` is the section as the heading index found it: the index's rows (``headings``,
    already in the session's queries) hold its IRI, heading and link, so nothing runs.
    Otherwise ``rfc_section`` looks the section up."""
    if known is not None and known.page:
        return [
            {
                "section": NamedNode(known.section),
                "heading": Literal(known.heading),
                "page": NamedNode(known.page),
            }
        ]
    return session.run("rfc_section", rfc=final_iri(rfc), sectionNumber=section)


def revision_text(
    session: Session, question: str, draft: str, revision: str, section: str
) -> Answer:
    """What section ``section`` of ``draft``-``revision`` said: numbered as that revision
    numbers it (section numbers move between revisions)."""
    name = f"{draft}-{revision}"
    iri = f"{v.revision_iri(draft, revision)}/section/{section}"
    rows = session.run("section_text", section=iri)
    if not rows:
        return out_of_scope(session, question, f"it holds no section {section} of {name}")
    row = rows[0]
    heading = text_of(row, "heading") or ""
    entry = SectionText(
        document=name,
        section_number=section,
        heading=heading,
        text=text_of(row, "text") or "",
        current_from="",
        current_until=None,
        url=text_of(row, "page") or "",
    )
    return Answer(
        question=question,
        intent="section_at",
        verdict=Verdict.ANSWERED,
        summary=f"{name} {_section_label(section, heading)} said (its text as posted):",
        results=[entry],
        evidence=[
            Evidence(
                iri=iri,
                label=f"{name} {_section_label(section, heading)}",
                url=entry.url,
                role="revision-section",
            )
        ],
        queries=session.queries,
    )
