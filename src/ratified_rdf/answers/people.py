"""Answers about people: who to ask about a section, what someone worked on, and the
drafts' editors and group officers."""

from __future__ import annotations

from collections.abc import Sequence

from ratified_rdf.answers.draft_finals import Final, final_name
from ratified_rdf.answers.heading_search import HeadingEntry
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import (
    Alternative,
    Answer,
    Evidence,
    Expert,
    PersonActivity,
    SectionActivity,
    Verdict,
)
from ratified_rdf.answers.sections import no_section, rfc_section_row, text_not_held, which_rfc
from ratified_rdf.answers.session import Call, Session, text_of
from ratified_rdf.answers.wording import activity_counts, drafted_question, plural
from ratified_rdf.graph.store import Term


def who_to_ask(
    session: Session,
    question: str,
    rfc: Final | None,
    section: str,
    known: HeadingEntry | None = None,
) -> Answer:
    """People ranked by how central they were to a section's discussion while it changed,
    then the editors of the drafts it came from, each with the reason. ``known`` is the
    section as the heading index found it (see ``discussion``)."""
    if rfc is None:
        holders = session.run("rfc_sections_numbered", sectionNumber=section)
        if len(holders) != 1:
            return which_rfc(session, question, section).model_copy(update={"intent": "who_to_ask"})
        rfc = int(text_of(holders[0], "rfcNumber") or 0)
    found = rfc_section_row(session, rfc, section, known)
    if not found:
        return out_of_scope(session, question, no_section(session, section, rfc))
    final = text_of(found[0], "section") or ""
    title = f"{final_name(rfc)} §{section} {text_of(found[0], 'heading')}"
    ranked, *contact_rows = session.run_together(
        ("section_experts", {"final": final}), *contact_calls(session, final)
    )
    experts = _ranked(ranked, "on this section while it was changing", betweenness=True)
    experts += contacts_from(*contact_rows)
    evidence = [Evidence(iri=final, label=title, url=text_of(found[0], "page"), role="rfc-section")]
    if not experts:
        return Answer(
            question=question,
            intent="who_to_ask",
            verdict=Verdict.UNKNOWN,
            summary=f"The graph doesn't know who to ask about {title}: nobody is recorded "
            "discussing or changing it, and its drafts list no editors."
            + text_not_held(session, rfc),
            evidence=evidence,
            queries=session.queries,
        )
    top = [e for e in experts if e.role == "participant"][:3]
    named = ", ".join(f"{e.name} ({activity_counts(e.posts, e.commits)})" for e in top)
    officers = ", ".join(
        dict.fromkeys(f"{e.name} ({e.role})" for e in experts if e.role != "participant")
    )
    summary = (
        f"For {title}, the people most central to its discussion while it changed were "
        f"{named or 'nobody the graph records'}"
        + (f"; the drafts' editors and group: {officers}" if officers else "")
        + ". Ranked by co-discussion PageRank personalised to this section."
        + text_not_held(session, rfc)
    )
    drafted = drafted_question(
        question,
        title,
        [e.name for e in top] + [e.name for e in experts if e.role != "participant"],
        evidence,
        "The record shows you discussed or changed this section while its text was still "
        "changing, or were responsible for the document.",
        # The reader asked whom to ask: the note asks them about the section instead.
        asking=f"why does {title} say what it says, and what should I read to understand it?",
    )
    return Answer(
        question=question,
        intent="who_to_ask",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[*experts, drafted],
        evidence=evidence,
        queries=session.queries,
        note=(
            "Activity in the record, not a measure of knowledge: these people referred to or "
            "changed the section while it was changing."
        ),
    )


def person_lookup(session: Session, question: str, who: str) -> Answer:
    """What a person was most active on while the text changed."""
    found = session.run("person", who=who)
    if not found:
        return out_of_scope(session, question, f"it knows nobody named or logged in as {who!r}")
    if len({text_of(r, "person") for r in found}) > 1:
        return Answer(
            question=question,
            intent="person",
            verdict=Verdict.AMBIGUOUS,
            summary=f"Several people are known as {who!r}; say which one.",
            alternatives=[
                Alternative(question=f"what did {text_of(r, 'name')} work on?", reason="same name")
                for r in found
            ],
            queries=session.queries,
        )
    person = text_of(found[0], "person") or ""
    name = text_of(found[0], "name") or who
    rows = session.run("person_activity", person=person)
    # A group brain holds one overall standing per member repository: they add up.
    standings = [r for r in rows if text_of(r, "section") is None]
    overall = (
        {
            "posts": sum(int(text_of(r, "posts") or 0) for r in standings),
            "commits": sum(int(text_of(r, "commits") or 0) for r in standings),
        }
        if standings
        else None
    )
    sections = [
        SectionActivity(
            section=_section_label(r),
            url=text_of(r, "sectionPage") or "",
            posts=int(text_of(r, "posts") or 0),
            commits=int(text_of(r, "commits") or 0),
            pagerank=float(text_of(r, "pageRank") or 0),
        )
        for r in rows
        if text_of(r, "section") is not None
    ]
    if overall is None:
        summary = f"The graph knows {name}, but records no posts or commits by them on a section."
    else:
        top = ", ".join(
            f"{s.section} ({activity_counts(s.posts, s.commits)})" for s in sections[:5]
        )
        posts, commits = overall["posts"], overall["commits"]
        summary = (
            f"On sections while they were changing, {name} is credited with "
            f"{activity_counts(posts, commits)} (each post and commit counted once); most on "
            f"{top}."
        )
    evidence = [
        Evidence(iri=person, label=name, url=None, role="person"),
        *(
            Evidence(iri=s.url, label=s.section, url=s.url, role="rfc-section")
            for s in sections[:10]
        ),
    ]
    drafted = drafted_question(
        question,
        f"your work on {sections[0].section}" if sections else "your part in the record",
        [name],
        evidence,
        "The record shows your posts and commits on these sections while they were changing.",
        asking="what were you trying to settle in these sections, and where was it decided?",
    )
    return Answer(
        question=question,
        intent="person",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[
            PersonActivity(
                name=name,
                posts=overall["posts"] if overall else 0,
                commits=overall["commits"] if overall else 0,
            ),
            *sections,
            *([drafted] if sections else []),
        ],
        evidence=evidence,
        queries=session.queries,
        note="Activity in the record: posts and commits, not a measure of knowledge.",
    )


def _section_label(row: dict[str, Term]) -> str:
    """``RFC 9000 §10.1 Idle Timeout``: a heading alone is ambiguous across RFCs."""
    title = text_of(row, "sectionTitle") or ""
    rfc, number = text_of(row, "rfcNumber"), text_of(row, "sectionNumber")
    if rfc and number:
        return f"RFC {rfc} §{number} {title}"
    return f"RFC {rfc} {title}" if rfc else title


def contact_calls(session: Session, final: str) -> list[Call]:
    """The lookups :func:`contacts_from` reads, for a card to run beside its own: the editors,
    and the group's officers when the records name any officer at all (a whole-graph question,
    answered once per set of graphs and shown as reused after)."""
    calls: list[Call] = [("section_editors", {"final": final})]
    if session.run("group_officers"):
        calls.append(("section_group", {"final": final}))
    return calls


def contacts_from(
    editor_rows: list[dict[str, Term]], group_rows: Sequence[dict[str, Term]] = ()
) -> list[Expert]:
    """The drafts' editors, then the group's chairs and area directors when records hold
    them, from the rows of :func:`contact_calls`."""
    found = [
        Expert(
            name=text_of(row, "name") or "",
            iri=text_of(row, "person") or "",
            role="editor",
            reason=f"an editor of the draft (author list through {text_of(row, 'lastRevision')})",
        )
        for row in editor_rows
    ]
    for row in group_rows:
        role = text_of(row, "role") or ""
        group = text_of(row, "group")
        found.append(
            Expert(
                name=text_of(row, "name") or "",
                iri=text_of(row, "person") or "",
                role="chair" if role == "chair" else "area director",
                reason=f"{role} of the {group or 'working'} group (Datatracker record)",
            )
        )
    return found


def _ranked(rows: list[dict[str, Term]], where: str, *, betweenness: bool = False) -> list[Expert]:
    """The participants a ranking query gives, in its order, each with the reason in words:
    the posts and commits they are credited with ``where``, and their PageRank and rank;
    with ``betweenness``, the rows' betweenness too (0 where unbound)."""
    ranked: list[Expert] = []
    for rank, row in enumerate(rows, start=1):
        posts, commits = int(text_of(row, "posts") or 0), int(text_of(row, "commits") or 0)
        pagerank = float(text_of(row, "pageRank") or 0)
        ranked.append(
            Expert(
                name=text_of(row, "name") or "",
                iri=text_of(row, "person") or "",
                role="participant",
                reason=(
                    f"{activity_counts(posts, commits)} {where}; co-discussion PageRank "
                    f"{pagerank:.3f} (rank {rank})"
                ),
                posts=posts,
                commits=commits,
                pagerank=pagerank,
                betweenness=float(text_of(row, "betweenness") or 0) if betweenness else None,
            )
        )
    return ranked


def experts(session: Session, question: str) -> Answer:
    """Who was most central to the whole brain's discussion, from the stored overall scores."""
    rows = session.run("top_people")
    if not rows:
        return out_of_scope(session, question, "it holds no expertise scores")
    people = _ranked(rows, "on sections while they were changing")
    top = ", ".join(f"{p.name} ({activity_counts(p.posts, p.commits)})" for p in people[:5])
    evidence = [Evidence(iri=p.iri, label=p.name, url=None, role="person") for p in people]
    drafted = drafted_question(
        question,
        "how the working group's texts came to say what they say",
        [p.name for p in people[:3]],
        evidence,
        "The record shows you were among the most central to the discussion while the texts "
        "were changing.",
        asking="which sections, and which discussions of them, would you read first to "
        "understand how the texts came to say what they say?",
    )
    return Answer(
        question=question,
        intent="experts",
        verdict=Verdict.ANSWERED,
        summary=(
            f"Most central to the discussion of every section while the texts changed: {top}. "
            "Ask about one section for the people central to it."
        ),
        results=[*people, drafted],
        evidence=evidence,
        queries=session.queries,
        note="Activity in the record (co-discussion PageRank over posts and commits), not a "
        "measure of knowledge.",
    )


def person_on_section(
    session: Session,
    question: str,
    person: str,
    name: str,
    section_card: Answer,
) -> Answer:
    """What one person did on one section while it was changing: the section's discussion
    card (``section_card``) kept to that person's posts and commits."""
    from ratified_rdf.answers.models import CommitChange, DiscussionPost

    if section_card.verdict is not Verdict.ANSWERED:
        return section_card.model_copy(update={"intent": "person_section"})
    section = next((e for e in section_card.evidence if e.role == "rfc-section"), None)
    label = section.label if section else "the section"
    mine = [
        r
        for r in section_card.results
        if (isinstance(r, PersonActivity) and r.name == name)
        or (isinstance(r, DiscussionPost | CommitChange) and r.author == name)
    ]
    activity = next((r for r in mine if isinstance(r, PersonActivity)), None)
    commits = [r for r in mine if isinstance(r, CommitChange)]
    posts = [r for r in mine if isinstance(r, DiscussionPost)]
    if activity is None:
        summary = f"The graph records no post or commit by {name} on {label} while it was changing."
        results: list = [PersonActivity(name=name, posts=0, commits=0)]
    else:
        summary = (
            f"{name} wrote {plural(activity.posts, 'post')} referring to {label} and "
            f"{plural(activity.commits, 'commit')} that changed it while it was changing"
            + (
                f"; in {plural(activity.pull_requests_discussed, 'pull request')} that changed "
                "it they commented"
                if activity.pull_requests_discussed
                else ""
            )
            + "."
        )
        if commits:
            summary += (
                " Latest commits listed: "
                + "; ".join(f"{(c.subject or '')[:60]} ({c.date[:10]})" for c in commits[:5])
                + "."
            )
        results = [activity, *commits, *posts]
    evidence = [
        *([section] if section else []),
        Evidence(iri=person, label=name, url=None, role="person"),
        *(
            Evidence(iri=c.iri, label=f"commit {c.subject or ''}", url=c.commit_url, role="commit")
            for c in commits
        ),
        *(
            Evidence(
                iri=p.post_url, label=f"post in #{p.thread_number}", url=p.post_url, role="post"
            )
            for p in posts
        ),
    ]
    return Answer(
        question=question,
        intent="person_section",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=results,
        evidence=evidence,
        queries=section_card.queries,
        note="Connection, not causation: these posts referred to the section and these "
        "commits changed it while it was still changing.",
    )
