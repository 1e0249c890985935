"""One function per intent: run the intent's hand-written queries and shape the answer.

Every answer is built only from rows the queries returned; when they return nothing the answer
is "the graph doesn't know", never a guess. Links come from the graph (``foaf:page``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ratified_rdf.answers.models import (
    Alternative,
    Answer,
    ChainStep,
    CommitChange,
    Count,
    DiscussionPost,
    DraftedQuestion,
    Evidence,
    Expert,
    HistoryEntry,
    Holding,
    PersonActivity,
    RevisionEntry,
    SectionActivity,
    SectionFate,
    ThreadInfo,
    Verdict,
)
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import Term, TripleStore
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue

CONNECTION_NOT_CAUSATION = (
    "Alignment says a section became that section of the RFC, matched by the rule shown; "
    "it is a connection between texts, not a claim about why the text changed."
)


class Session:
    """The queries run for one answer, over one reader's graphs."""

    def __init__(self, store: TripleStore, graphs: Sequence[str]) -> None:
        self.store = store
        self.graphs = list(graphs)
        self.queries: list[QueryRun] = []

    def run(self, name: str, **params: ParamValue) -> list[dict[str, Term]]:
        """Run ``sparql/<name>.rq`` with ``params`` and keep the record."""
        rows, record = run_query(self.store, self.graphs, name, params)
        self.queries.append(record)
        return rows


def _s(row: dict[str, Term], key: str) -> str | None:
    value = row.get(key)
    return None if value is None else value.value


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
    final_number = _s(row, "finalNumber")
    final_heading = _s(row, "finalHeading")
    heading = _s(row, "heading") or ""
    rfc_iri = _s(row, "rfc") or ""
    rfc_step = next((c for c in chain if c.iri == rfc_iri), None)
    rfc_label = rfc_step.label if rfc_step else rfc_iri.rsplit("/", 1)[-1].upper()
    similarity = float(_s(row, "similarity")) if _s(row, "similarity") else None
    still = _s(row, "stillChanging") == "true" if _s(row, "stillChanging") else None
    fate = SectionFate(
        revision=name,
        section_number=section,
        heading=heading,
        rfc=rfc_label,
        final_section_number=final_number,
        final_heading=final_heading,
        similarity=similarity,
        still_changing=still,
        rule=_rule(_s(row, "rule")),
    )
    evidence = [
        Evidence(
            iri=_s(row, "section") or "",
            label=f"{name} §{section} {heading}",
            url=_s(row, "sectionPage"),
            role="section",
        ),
        *(
            Evidence(
                iri=c.iri, label=c.label, url=c.url, role="rfc" if c.iri == rfc_iri else "revision"
            )
            for c in chain
        ),
    ]
    if _s(row, "final") is None:
        summary = (
            f"Section {section} ({heading}) of {name} has no counterpart in {rfc_label}: "
            "no section of the final text matched its heading, anchor or text."
        )
    else:
        evidence.append(
            Evidence(
                iri=_s(row, "final") or "",
                label=f"{rfc_label} {_section_label(final_number, final_heading or '')}",
                url=_s(row, "finalPage"),
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
    by_iri = {_s(r, "revision"): r for r in rows}
    steps: list[ChainStep] = []
    current: str | None = start
    rfc_row = None
    while current in by_iri and len(steps) <= len(by_iri):
        row = by_iri[current]
        steps.append(
            ChainStep(
                label=_s(row, "label") or current or "",
                iri=current or "",
                url=_s(row, "page") or "",
            )
        )
        if _s(row, "rfc"):
            rfc_row = row
        current = _s(row, "next")
    if rfc_row is not None:
        steps.append(
            ChainStep(
                label=f"RFC {_s(rfc_row, 'rfcNumber')}",
                iri=_s(rfc_row, "rfc") or "",
                url=_s(rfc_row, "rfcPage") or "",
            )
        )
    return steps


def _missing_revision_section(
    session: Session, question: str, draft: str, revision: str, section: str
) -> Answer:
    revisions = session.run("document_revisions", draftName=draft)
    numbers = [_s(r, "revisionNumber") or "" for r in revisions]
    if not revisions:
        return out_of_scope(session, question, f"it holds no draft named {draft}")
    if revision not in numbers:
        return out_of_scope(
            session,
            question,
            f"it holds revisions {numbers[0]}–{numbers[-1]} of {draft}, not revision {revision}",
        )
    return out_of_scope(session, question, f"{draft}-{revision} has no section numbered {section}")


def section_history(session: Session, question: str, rfc: int | None, section: str) -> Answer:
    """Every revision's number and heading for an RFC section, and where its text differed."""
    if rfc is None:
        return _which_rfc(session, question, section)
    rows = session.run("section_history", rfc=v.document_iri(f"rfc{rfc}"), sectionNumber=section)
    if not rows:
        holders = session.run("rfc_sections_numbered", sectionNumber=section)
        if not any(_s(r, "rfcNumber") == str(rfc) for r in holders):
            return out_of_scope(session, question, f"it holds no section {section} of RFC {rfc}")
        return out_of_scope(
            session, question, f"no revision's section aligns with RFC {rfc} §{section}"
        )
    first = rows[0]
    final_heading = _s(first, "finalHeading") or ""
    starts: dict[str, str] = {}
    for row in rows:
        draft = _s(row, "draft")
        if draft and _s(row, "date"):
            starts[draft] = min(starts.get(draft, "9999"), _s(row, "date") or "9999")

    def order(row: dict[str, Term]) -> tuple[int, str, str]:
        draft = _s(row, "draft")
        if draft is None:  # an older RFC comes before the drafts that revised it
            return (0, "", _s(row, "documentLabel") or "")
        return (1, starts.get(draft, ""), _s(row, "revisionNumber") or "")

    rows.sort(key=order)
    entries = [
        HistoryEntry(
            document=_s(r, "documentLabel") or "",
            revision_number=_s(r, "revisionNumber"),
            date=_s(r, "date"),
            section_number=_s(r, "number"),
            heading=_s(r, "heading") or "",
            similarity=float(_s(r, "similarity") or 0),
            still_changing=_s(r, "stillChanging") == "true",
            rule=_rule(_s(r, "rule")),
            url=_s(r, "sectionPage") or "",
        )
        for r in rows
    ]
    changing = [e for e in entries if e.still_changing]
    numbering = list(dict.fromkeys(e.section_number or e.heading for e in entries))
    titles = list(dict.fromkeys(e.heading for e in entries))
    summary = (
        f"RFC {rfc} §{section} {final_heading}: {len(entries)} earlier texts align with it, "
        f"from {entries[0].document} to {entries[-1].document}. "
        f"Numbered {', '.join(numbering)} along the way"
        + (f"; titled {' / '.join(titles)}" if len(titles) > 1 else "")
        + ". "
        + (
            f"Its text still differed from the final text (under 98% similar) in "
            f"{len(changing)} of them, the last being {changing[-1].document}."
            if changing
            else "Its text was already final (98% or more similar) in every one of them."
        )
    )
    evidence = [
        Evidence(
            iri=v.document_iri(f"rfc{rfc}"),
            label=f"RFC {rfc}",
            url=_s(first, "rfcPage"),
            role="rfc",
        ),
        Evidence(
            iri=_s(first, "final") or "",
            label=f"RFC {rfc} §{section} {final_heading}",
            url=_s(first, "finalPage"),
            role="rfc-section",
        ),
        *(
            Evidence(
                iri=_s(r, "section") or "",
                label=f"{e.document} {_section_label(e.section_number, e.heading)}",
                url=e.url,
                role="section",
            )
            for r, e in zip(rows, entries, strict=True)
        ),
    ]
    return Answer(
        question=question,
        intent="section_history",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=list(entries),
        evidence=evidence,
        queries=session.queries,
        note=CONNECTION_NOT_CAUSATION,
    )


def _which_rfc(session: Session, question: str, section: str) -> Answer:
    holders = session.run("rfc_sections_numbered", sectionNumber=section)
    if not holders:
        return out_of_scope(session, question, f"no RFC it holds has a section {section}")
    alternatives = [
        Alternative(
            question=f"history of RFC {_s(r, 'rfcNumber')} section {section}",
            reason=f"RFC {_s(r, 'rfcNumber')} §{section} is {_s(r, 'heading')}",
        )
        for r in holders
    ]
    if len(alternatives) == 1:
        return section_history(session, question, int(_s(holders[0], "rfcNumber") or 0), section)
    return Answer(
        question=question,
        intent="section_history",
        verdict=Verdict.AMBIGUOUS,
        summary=f"Section {section} exists in {len(holders)} RFCs; say which one you mean.",
        evidence=[
            Evidence(
                iri=_s(r, "section") or "",
                label=f"RFC {_s(r, 'rfcNumber')} §{section} {_s(r, 'heading')}",
                url=_s(r, "page"),
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
        _s(d, "name") or ""
        for d in documents
        if _s(d, "rfcNumber") is None and (draft is None or _s(d, "name") == draft)
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


def revision_chain(session: Session, question: str, draft: str, revision: str) -> Answer:
    """The revisions from ``draft``-``revision`` to the RFC it became."""
    chain = _chain(session, v.revision_iri(draft, revision))
    if not chain:
        return _missing_revision_section(session, question, draft, revision, "")
    labels = " → ".join(c.label for c in chain)
    return Answer(
        question=question,
        intent="revision_chain",
        verdict=Verdict.ANSWERED,
        summary=f"{draft}-{revision} leads through {len(chain)} steps: {labels}.",
        results=list(chain),
        evidence=[Evidence(iri=c.iri, label=c.label, url=c.url, role="revision") for c in chain],
        queries=session.queries,
    )


def revisions(session: Session, question: str, draft: str) -> Answer:
    """The revisions of one draft."""
    rows = session.run("document_revisions", draftName=draft)
    if not rows:
        return out_of_scope(session, question, f"it holds no draft named {draft}")
    entries = [
        RevisionEntry(
            label=_s(r, "label") or "",
            revision_number=_s(r, "revisionNumber") or "",
            date=_s(r, "date") or "",
            url=_s(r, "page") or "",
            became=_s(r, "became"),
        )
        for r in rows
    ]
    return Answer(
        question=question,
        intent="revisions",
        verdict=Verdict.ANSWERED,
        summary=(
            f"{draft} has {len(entries)} revisions, {entries[0].revision_number} "
            f"({entries[0].date[:10]}) to {entries[-1].revision_number} ({entries[-1].date[:10]})."
        ),
        results=list(entries),
        evidence=[
            Evidence(iri=_s(r, "revision") or "", label=e.label, url=e.url, role="revision")
            for r, e in zip(rows, entries, strict=True)
        ],
        queries=session.queries,
    )


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


def _holdings(session: Session) -> tuple[list[Holding], list[Evidence]]:
    counts = session.run("holdings")
    documents = session.run("documents")
    drafts = [_s(d, "name") or "" for d in documents if _s(d, "rfcNumber") is None]
    rfcs = [f"RFC {_s(d, 'rfcNumber')}" for d in documents if _s(d, "rfcNumber") is not None]
    names = {"drafts": drafts, "RFCs": rfcs}
    results = [
        Holding(
            what=_s(c, "kind") or "",
            count=int(_s(c, "count") or 0),
            names=names.get(_s(c, "kind") or "", []),
        )
        for c in counts
    ]
    evidence = [
        Evidence(
            iri=_s(d, "document") or "",
            label=_s(d, "title") or _s(d, "name") or "",
            url=_s(d, "page"),
            role="draft" if _s(d, "rfcNumber") is None else "rfc",
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
        parts.append(f"{holding.count:,} {holding.what}{names}")
    return ", ".join(parts)


DISCUSSION_NOTE = (
    "Connection, not causation: these posts referred to the section, and these commits "
    "changed it, while its text was still changing (or, where marked, after the RFC was "
    "published). That they are linked does not mean they caused the final wording."
)


def discussion(
    session: Session, question: str, rfc: int | None, section: str, count: str | None = None
) -> Answer:
    """Posts, threads, commits and people connected to an RFC section while it was changing.

    ``count`` ("posts", "commits", "threads", "pull requests", "people") turns the card into a
    counting answer: the number first, the list behind it after.
    """
    if rfc is None:
        holders = session.run("rfc_sections_numbered", sectionNumber=section)
        if len(holders) != 1:
            answer = _which_rfc(session, question, section)
            return answer.model_copy(update={"intent": "discussion"})
        rfc = int(_s(holders[0], "rfcNumber") or 0)
    found = session.run("rfc_section", rfc=v.document_iri(f"rfc{rfc}"), sectionNumber=section)
    if not found:
        return out_of_scope(session, question, f"it holds no section {section} of RFC {rfc}")
    final = _s(found[0], "section") or ""
    heading = _s(found[0], "heading") or ""
    post_rows = session.run("section_posts", final=final)
    posts_seen = tuple(dict.fromkeys(_s(r, "post") or "" for r in post_rows))
    authors = _authors(session.run("post_authors", post=posts_seen)) if posts_seen else {}
    commit_rows = session.run("section_commits", final=final)
    posts = _posts(post_rows, authors)
    commit_iris = tuple(dict.fromkeys(_s(r, "commit") or "" for r in commit_rows))
    details = session.run("commit_details", commit=commit_iris) if commit_iris else []
    commits = _commits(commit_rows, details)
    distinct_commits = {c.iri for c in commits}
    changing = [p for p in posts if p.while_changing]
    later = [p for p in posts if not p.while_changing]
    threads = {p.thread_url: p for p in changing}
    pulls = {c.pull_request: c for c in commits if c.pull_request is not None}
    issues = _fixed_issues(session, final)
    people = _people(changing, commits)
    title = f"RFC {rfc} §{section} {heading}"
    evidence = [
        Evidence(iri=final, label=title, url=_s(found[0], "page"), role="rfc-section"),
        *(
            Evidence(
                iri=_s(r, "thread") or "",
                label=(
                    f"#{p.thread_number} {p.thread_title}"
                    if p.thread_number
                    else f"mail thread: {p.thread_title}"
                ),
                url=p.thread_url,
                role="thread",
            )
            for p, r in _unique_threads(changing, post_rows)
        ),
        *(
            Evidence(
                iri=c.pull_request_url or "",
                label=f"PR #{n} {c.pull_request_title}",
                url=c.pull_request_url,
                role="pull-request",
            )
            for n, c in sorted(pulls.items())
        ),
        *(Evidence(iri=i.url or "", label=i.label, url=i.url, role="issue") for i in issues),
        *(
            Evidence(
                iri=c.iri, label=f"{c.subject} ({c.document})", url=c.commit_url, role="commit"
            )
            for c in {c.iri: c for c in commits}.values()
        ),
    ]
    if not posts and not commits:
        summary = (
            f"The graph doesn't know of any discussion of {title}: no post referred to it and "
            "no commit touched it in the revisions held."
        )
        return Answer(
            question=question,
            intent="discussion",
            verdict=Verdict.UNKNOWN,
            summary=summary,
            evidence=evidence[:1],
            queries=session.queries,
            note=DISCUSSION_NOTE,
        )
    documents = [
        d for d in dict.fromkeys([p.document for p in changing] + [c.document for c in commits])
    ]
    span = f", from {documents[0]} to {documents[-1]}" if documents else ""
    summary = (
        f"{title} was discussed while still changing in {len(changing)} posts across "
        f"{len(threads)} threads, and changed by {len(distinct_commits)} commits through "
        f"{len(pulls)} pull requests{span}."
        + (f" {len(later)} more posts referred to it after publication." if later else "")
        + (
            " Most involved: "
            + ", ".join(f"{p.name} ({p.posts} posts, {p.commits} commits)" for p in people[:5])
            + "."
            if people
            else ""
        )
    )
    contacts = _contacts(session, final)
    results: list = [*people, *contacts, *posts, *commits]
    if contacts and count is None:
        names = ", ".join(dict.fromkeys(f"{c.name} ({c.role})" for c in contacts))
        summary += f" Editors and group: {names}."
    if count is None:
        results.append(_drafted_question(question, title, people, contacts, evidence))
    if count is not None:
        counts = {
            "posts": len(changing),
            "threads": len(threads),
            "commits": len(distinct_commits),
            "pull requests": len(pulls),
            "people": len(people),
        }
        number = counts.get(count, len(changing))
        what = count if count in counts else "posts"
        summary = (
            f"{number} {what} {'referred to' if what in {'posts', 'threads'} else 'touched'} "
            f"{title} while it was still changing. " + summary
        )
        results = [Count(what=what, count=number), *results]
    return Answer(
        question=question,
        intent="count" if count is not None else "discussion",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=results,
        evidence=evidence,
        queries=session.queries,
        note=DISCUSSION_NOTE,
    )


def _authors(rows: list[dict[str, Term]]) -> dict[str, str]:
    """Post IRI → the best name for its writer: a resolved person, a sender, or the login."""
    names: dict[str, str] = {}
    for row in rows:
        name = _s(row, "personName") or _s(row, "senderName") or _s(row, "login")
        if name:
            names.setdefault(_s(row, "post") or "", name)
    return names


def _posts(rows: list[dict[str, Term]], authors: dict[str, str]) -> list[DiscussionPost]:
    seen: set[tuple[str, str]] = set()
    posts: list[DiscussionPost] = []
    for row in rows:
        key = (_s(row, "post") or "", _s(row, "section") or "")
        if key in seen:
            continue
        seen.add(key)
        posts.append(
            DiscussionPost(
                document=_s(row, "documentLabel") or "",
                section_number=_s(row, "sectionNumber"),
                thread_number=int(_s(row, "threadNumber") or 0) or None,
                thread_title=_s(row, "threadTitle") or "",
                thread_url=_s(row, "threadPage") or "",
                post_url=_s(row, "postPage") or "",
                post_kind=_s(row, "kind") or "",
                author=authors.get(_s(row, "post") or ""),
                created=_s(row, "created") or "",
                cited_text=_s(row, "citedText") or "",
                rule=_s(row, "rule") or "",
                while_changing=_s(row, "whileChanging") == "true",
                about_published=_s(row, "aboutPublished") == "true",
            )
        )
    return posts


def _commits(rows: list[dict[str, Term]], details: list[dict[str, Term]]) -> list[CommitChange]:
    """One change per (commit, pull request); a commit that came through no pull request is
    listed once."""
    authors = {_s(d, "commit"): _s(d, "author") for d in details if _s(d, "author")}
    pulls: dict[str | None, list[dict[str, Term]]] = {}
    for detail in details:
        if _s(detail, "pr"):
            pulls.setdefault(_s(detail, "commit"), []).append(detail)
    changes: dict[tuple[str, str | None], CommitChange] = {}
    for row in rows:
        commit = _s(row, "commit") or ""
        for pull in pulls.get(commit) or [{}]:
            changes.setdefault(
                (commit, _s(pull, "prNumber")),
                CommitChange(
                    iri=commit,
                    document=_s(row, "documentLabel") or "",
                    commit_url=_s(row, "commitPage") or "",
                    subject=_s(row, "subject") or "",
                    author=authors.get(commit),
                    date=_s(row, "date") or "",
                    pull_request=int(_s(pull, "prNumber") or 0) or None,
                    pull_request_title=_s(pull, "prTitle"),
                    pull_request_url=_s(pull, "prPage"),
                ),
            )
    return list(changes.values())


def _unique_threads(
    posts: list[DiscussionPost], rows: list[dict[str, Term]]
) -> list[tuple[DiscussionPost, dict[str, Term]]]:
    by_post = {_s(r, "postPage"): r for r in rows}
    out: dict[str, tuple[DiscussionPost, dict[str, Term]]] = {}
    for post in posts:
        row = by_post.get(post.post_url)
        if row is not None:
            out.setdefault(post.thread_url, (post, row))
    return list(out.values())


def _fixed_issues(session: Session, final: str) -> list[Evidence]:
    return [
        Evidence(
            iri=_s(row, "issue") or "",
            label=f"issue #{_s(row, 'issueNumber')} {_s(row, 'issueTitle')}",
            url=_s(row, "issuePage"),
            role="issue",
        )
        for row in session.run("fixed_issues", final=final)
    ]


def _people(posts: list[DiscussionPost], commits: list[CommitChange]) -> list[PersonActivity]:
    tally: dict[str, list[int]] = {}
    for post in posts:
        if post.author:
            tally.setdefault(post.author, [0, 0])[0] += 1
    for commit in {c.iri: c for c in commits}.values():
        if commit.author:
            tally.setdefault(commit.author, [0, 0])[1] += 1
    return sorted(
        (PersonActivity(name=n, posts=p, commits=c) for n, (p, c) in tally.items()),
        key=lambda person: (-(person.posts + person.commits), person.name),
    )


def who_to_ask(session: Session, question: str, rfc: int | None, section: str) -> Answer:
    """People ranked by how central they were to a section's discussion while it changed,
    then the editors of the drafts it came from, each with the reason."""
    if rfc is None:
        holders = session.run("rfc_sections_numbered", sectionNumber=section)
        if len(holders) != 1:
            return _which_rfc(session, question, section).model_copy(
                update={"intent": "who_to_ask"}
            )
        rfc = int(_s(holders[0], "rfcNumber") or 0)
    found = session.run("rfc_section", rfc=v.document_iri(f"rfc{rfc}"), sectionNumber=section)
    if not found:
        return out_of_scope(session, question, f"it holds no section {section} of RFC {rfc}")
    final = _s(found[0], "section") or ""
    title = f"RFC {rfc} §{section} {_s(found[0], 'heading')}"
    ranked = session.run("section_experts", final=final)
    editors = session.run("section_editors", final=final)
    experts: list[Expert] = []
    for rank, row in enumerate(ranked, start=1):
        posts, commits = int(_s(row, "posts") or 0), int(_s(row, "commits") or 0)
        pagerank = float(_s(row, "pageRank") or 0)
        experts.append(
            Expert(
                name=_s(row, "name") or "",
                iri=_s(row, "person") or "",
                role="participant",
                reason=(
                    f"{posts} posts and {commits} commits on this section while it was "
                    f"changing; co-discussion PageRank {pagerank:.3f} (rank {rank})"
                ),
                posts=posts,
                commits=commits,
                pagerank=pagerank,
                betweenness=float(_s(row, "betweenness") or 0),
            )
        )
    for row in editors:
        experts.append(
            Expert(
                name=_s(row, "name") or "",
                iri=_s(row, "person") or "",
                role="editor",
                reason=f"an editor of the draft (author list through {_s(row, 'lastRevision')})",
            )
        )
    evidence = [Evidence(iri=final, label=title, url=_s(found[0], "page"), role="rfc-section")]
    if not experts:
        return Answer(
            question=question,
            intent="who_to_ask",
            verdict=Verdict.UNKNOWN,
            summary=f"The graph doesn't know who to ask about {title}: nobody is recorded "
            "discussing or changing it, and its drafts list no editors.",
            evidence=evidence,
            queries=session.queries,
        )
    top = [e for e in experts if e.role == "participant"][:3]
    named = ", ".join(f"{e.name} ({e.posts} posts, {e.commits} commits)" for e in top)
    editor_names = ", ".join(dict.fromkeys(e.name for e in experts if e.role == "editor"))
    summary = (
        f"For {title}, the people most central to its discussion while it changed were "
        f"{named or 'nobody the graph records'}"
        + (f"; the drafts' editors were {editor_names}" if editor_names else "")
        + ". Ranked by co-discussion PageRank personalised to this section."
    )
    return Answer(
        question=question,
        intent="who_to_ask",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=list(experts),
        evidence=evidence,
        queries=session.queries,
        note=(
            "Activity in the record, not a measure of knowledge: these people referred to or "
            "changed the section while it was changing."
        ),
    )


def thread_lookup(session: Session, question: str, number: int) -> Answer:
    """An issue or pull request by number, with the RFC sections its commits changed."""
    rows = session.run("thread", number=number)
    if not rows:
        return out_of_scope(session, question, f"it holds no issue or pull request #{number}")
    row = rows[0]
    is_pull = (_s(row, "kind") or "").endswith("#PullRequest")
    thread = ThreadInfo(
        number=number,
        title=_s(row, "title") or "",
        state=_s(row, "state") or "",
        url=_s(row, "page") or "",
        author=_s(row, "login"),
        created=_s(row, "created") or "",
        is_pull_request=is_pull,
    )
    changes = session.run("thread_changes", thread=_s(row, "thread") or "") if is_pull else []
    touched: dict[str, SectionActivity] = {}
    commits: dict[str, set[str]] = {}
    for change in changes:
        final = _s(change, "finalPage") or ""
        commits.setdefault(final, set()).add(_s(change, "commit") or "")
        touched[final] = SectionActivity(
            section=_s(change, "finalTitle") or "", url=final, commits=len(commits[final])
        )
    kind = "a pull request" if is_pull else "an issue"
    sections = ", ".join(f"{t.section}" for t in touched.values())
    summary = (
        f'#{number} is {kind}, {thread.state.lower()}: "{thread.title}"'
        + (f", opened by {thread.author}" if thread.author else "")
        + f" on {thread.created[:10]}."
        + (f" Its commits changed {len(touched)} RFC sections: {sections}." if touched else "")
    )
    evidence = [
        Evidence(
            iri=_s(row, "thread") or "",
            label=f"#{number} {thread.title}",
            url=thread.url,
            role="pull-request" if is_pull else "issue",
        ),
        *(
            Evidence(iri=t.url, label=t.section, url=t.url, role="rfc-section")
            for t in touched.values()
        ),
    ]
    return Answer(
        question=question,
        intent="thread",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[thread, *touched.values()],
        evidence=evidence,
        queries=session.queries,
    )


def person_lookup(session: Session, question: str, who: str) -> Answer:
    """What a person was most active on while the text changed."""
    found = session.run("person", who=who)
    if not found:
        return out_of_scope(session, question, f"it knows nobody named or logged in as {who!r}")
    if len({_s(r, "person") for r in found}) > 1:
        return Answer(
            question=question,
            intent="person",
            verdict=Verdict.AMBIGUOUS,
            summary=f"Several people are known as {who!r}; say which one.",
            alternatives=[
                Alternative(question=f"what did {_s(r, 'name')} work on?", reason="same name")
                for r in found
            ],
            queries=session.queries,
        )
    person = _s(found[0], "person") or ""
    name = _s(found[0], "name") or who
    rows = session.run("person_activity", person=person)
    overall = next((r for r in rows if _s(r, "section") is None), None)
    sections = [
        SectionActivity(
            section=_s(r, "sectionTitle") or "",
            url=_s(r, "sectionPage") or "",
            posts=int(_s(r, "posts") or 0),
            commits=int(_s(r, "commits") or 0),
            pagerank=float(_s(r, "pageRank") or 0),
        )
        for r in rows
        if _s(r, "section") is not None
    ]
    if overall is None:
        summary = f"The graph knows {name}, but records no posts or commits by them on a section."
    else:
        top = ", ".join(f"{s.section} ({s.posts} posts, {s.commits} commits)" for s in sections[:5])
        summary = (
            f"{name} wrote {_s(overall, 'posts')} posts and {_s(overall, 'commits')} commits "
            f"on sections while they were changing; most on {top}."
        )
    return Answer(
        question=question,
        intent="person",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=list(sections),
        evidence=[
            Evidence(iri=s.url, label=s.section, url=s.url, role="rfc-section")
            for s in sections[:10]
        ],
        queries=session.queries,
        note="Activity in the record: posts and commits, not a measure of knowledge.",
    )


def _contacts(session: Session, final: str) -> list[Expert]:
    """The drafts' editors, and the group's chairs and area directors when records hold them."""
    contacts = [
        Expert(
            name=_s(row, "name") or "",
            iri=_s(row, "person") or "",
            role="editor",
            reason=f"an editor of the draft (author list through {_s(row, 'lastRevision')})",
        )
        for row in session.run("section_editors", final=final)
    ]
    for row in session.run("section_group", final=final):
        role = _s(row, "role") or ""
        group = _s(row, "group")
        contacts.append(
            Expert(
                name=_s(row, "name") or "",
                iri=_s(row, "person") or "",
                role="chair" if role == "chair" else "area director",
                reason=f"{role} of the {group or 'working'} group (Datatracker record)",
            )
        )
    return contacts


def _drafted_question(
    question: str,
    title: str,
    people: list[PersonActivity],
    contacts: list[Expert],
    evidence: list[Evidence],
) -> DraftedQuestion:
    """A note the reader could send to the people the card names (never sent by us)."""
    to = list(dict.fromkeys([p.name for p in people[:3]] + [c.name for c in contacts]))
    sources = "\n".join(f"- {e.label}: {e.url}" for e in evidence[:8] if e.url)
    text = (
        f"Hello {', '.join(to)},\n\n"
        f"I am trying to understand {title}. My question: {question}\n\n"
        "The record shows you discussed or changed this section while its text was still "
        "changing, or were responsible for the document. These are the sources I looked at:\n"
        f"{sources}\n\nThank you."
    )
    return DraftedQuestion(to=to, text=text)
