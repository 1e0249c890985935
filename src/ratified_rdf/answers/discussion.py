"""The why card: who discussed or changed a section while it was still changing."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from pyoxigraph import NamedNode

from ratified_rdf.answers.draft_finals import Final, final_name
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import (
    Answer,
    CommitChange,
    Count,
    DiscussionPost,
    DocumentFacts,
    DraftedQuestion,
    Evidence,
    EvidenceKind,
    Expert,
    PersonActivity,
    Verdict,
)
from ratified_rdf.answers.people import contact_calls, contacts_from
from ratified_rdf.answers.sections import (
    SectionHistory,
    history_of,
    no_section,
    publication,
    rfc_section_row,
    text_not_held,
    which_rfc,
)
from ratified_rdf.answers.session import Session, iri_of, is_true, text_of
from ratified_rdf.answers.wording import activity_counts, drafted_question, plural
from ratified_rdf.graph.store import Term

LISTED_COMMITS = 12
"""A card counts every commit but lists (and links) only the most recent ones."""

Found = TypeVar("Found")

# The whole-graph queries a card finds its pull requests' and commits' details in, each with
# the variable it looks them up by (Session.rows_about).
PULL_REQUESTS = ("pull_requests", "pr")
COMMITS = ("commit_details", "commit")
PULL_REQUEST_PEOPLE = ("pull_request_people", "pr")

DISCUSSION_NOTE = (
    "Connection, not causation: these posts referred to the section, and these commits "
    "changed it, while its text was still changing (or, where marked, after the RFC was "
    "published). That they are linked does not mean they caused the final wording. How it "
    "counts: a post once however often it cites the section; a commit once however many "
    "sections it changed (commits whose diff changed this section, placed by line, in the "
    "revision they landed in, before publication); a pull request once; people once each, "
    "with what their entry rests on (cited it, changed it, or commented on a pull request "
    "that changed it)."
)


def discussion(
    session: Session,
    question: str,
    rfc: Final | None,
    section: str,
    count: str | None = None,
    known: HeadingEntry | None = None,
    timeline: bool = True,
) -> Answer:
    """Posts, threads, commits and people connected to an RFC section while it was changing.

    ``count`` ("posts", "commits", "threads", "pull requests", "people") turns the card into a
    counting answer: the number first, the list behind it after. ``known`` is the section as
    the heading index found it: its IRI, heading and link come from the index's rows, so only
    what hangs off it is looked up. Without ``timeline`` (a card built on this one that shows
    neither) the section's history and the RFC's publication are not looked up.
    """
    if rfc is None:
        holders = session.run("rfc_sections_numbered", sectionNumber=section)
        if len(holders) != 1:
            answer = which_rfc(session, question, section)
            return answer.model_copy(update={"intent": "discussion"})
        rfc = int(text_of(holders[0], "rfcNumber") or 0)
    found = rfc_section_row(session, rfc, section, known)
    if not found:
        return out_of_scope(session, question, no_section(session, section, rfc))
    final = text_of(found[0], "section") or ""
    heading = text_of(found[0], "heading") or ""
    not_held = text_not_held(session, rfc)
    # A counting card draws no timeline: no history, no publication.
    listed = count is None and timeline

    def meanwhile() -> tuple[
        list[dict[str, Term]],
        list[list[dict[str, Term]]],
        SectionHistory | None,
        tuple[DocumentFacts, Evidence] | None,
    ]:
        later = session.run("section_later_commits", final=final)
        contacts = [session.run(name, **params) for name, params in contact_calls(session, final)]
        history = history_of(session, rfc, section) if listed else None
        published = publication(session, rfc) if listed else None
        return later, contacts, history, published

    discussed, (later_commit_rows, contact_rows, history, published) = posts_and_commits(
        session, final, meanwhile
    )
    posts, commits, changed = discussed.posts, discussed.commits, discussed.changed
    pull_iris = tuple(changed.pulls)
    reviewer_rows = session.rows_about(*PULL_REQUEST_PEOPLE, pull_iris) if pull_iris else []
    places = discussed.places
    pull_rows = discussed.pull_rows
    commit_count = discussed.commit_count
    changing = discussed.changing
    threads = {p.thread_url: p for p in changing}
    pulls = _pull_requests(changed, pull_rows)
    issues = _fixed_issues(pull_rows)
    people = _people(discussed.changing_once, changed, reviewer_rows)
    title = f"{final_name(rfc)} §{section} {heading}"
    evidence = [
        Evidence(iri=final, label=title, url=text_of(found[0], "page"), role="rfc-section"),
        *discussed.thread_evidence(),
        *(
            Evidence(
                iri=text_of(row, "prPage") or "",
                label=f"PR #{n} {text_of(row, 'prTitle')}",
                url=text_of(row, "prPage"),
                role="pull-request",
            )
            for n, row in sorted(pulls.items())
        ),
        *(Evidence(iri=i.url or "", label=i.label, url=i.url, role="issue") for i in issues),
        *discussed.commit_evidence(),
        *(
            Evidence(
                iri=text_of(row, "commit") or "",
                label=f"{text_of(row, 'title') or 'commit'} (after publication)",
                url=text_of(row, "page"),
                role="commit",
            )
            for row in later_commit_rows[:LISTED_COMMITS]
        ),
    ]
    # The earlier texts and the RFC the timeline draws, linked as the history card links
    # them; after the discussion's own links, which the drafted question cites.
    drawn = [*(history.evidence() if history else []), *([published[1]] if published else [])]
    if not posts and not commits:
        summary = (
            f"The graph doesn't know of any discussion of {title}: no post referred to it and "
            "no commit touched it in the revisions held."
        ) + not_held
        return Answer(
            question=question,
            intent="discussion",
            verdict=Verdict.UNKNOWN,
            summary=summary,
            evidence=evidence[:1],
            queries=session.queries,
            note=DISCUSSION_NOTE,
        )
    documents = list(
        dict.fromkeys(
            [p.document for p in changing]
            + [places.get(s.value, ("", None))[0] for s in changed.sections]
        )
    )
    documents.sort(key=_in_time(changing, commits))
    span = f", from {documents[0]} to {documents[-1]}" if documents else ""
    # Only what there is: "discussed … in 0 posts across 0 threads" read oddly on a brain
    # with no posts (QUIC's), and _coverage says what is missing.
    clauses = []
    if discussed.changing_count:
        clauses.append(
            f"discussed while still changing in {plural(discussed.changing_count, 'post')} "
            f"across {plural(len(threads), 'thread')}"
        )
    if commit_count:
        # "through 0 pull requests" says nothing: a repository without them is not named so.
        through = f" through {plural(len(pulls), 'pull request')}" if pulls else ""
        clauses.append(f"changed by {plural(commit_count, 'commit')}{through}")
    summary = (
        f"{title} was "
        + (", and ".join(clauses) or "neither discussed nor changed while it was still changing")
        + span
        + (
            f" (the {LISTED_COMMITS} most recent commits are listed)."
            if commit_count > LISTED_COMMITS
            else "."
        )
        + (
            f" {plural(discussed.later_count, 'more post')} referred to it after publication."
            if discussed.later_count
            else ""
        )
        + _later_commits(later_commit_rows)
        + (
            " Most involved: " + ", ".join(_involvement(p) for p in people[:5]) + "."
            if people
            else ""
        )
        + _coverage(discussed.changing_count, commit_count, len(pulls), people)
        + not_held
    )
    officers = contacts_from(*contact_rows)
    results: list = [
        *people,
        *officers,
        *posts,
        *commits,
        *(history.entries if history else ()),
        *([published[0]] if published else []),
    ]
    if officers and count is None:
        names = ", ".join(dict.fromkeys(f"{c.name} ({c.role})" for c in officers))
        summary += f" Editors and group: {names}."
    if count is None:
        results.append(_drafted_question(question, title, people, officers, evidence))
    evidence += drawn
    if count is not None:
        counts = {
            "posts": discussed.changing_count,
            "threads": len(threads),
            "commits": commit_count,
            "pull requests": len(pulls),
            "people": len(people),
        }
        number = counts.get(count, discussed.changing_count)
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


@dataclass(frozen=True)
class Discussed:
    """A section's posts and commits while it was changing, built once from their rows for the
    why card and the history card alike."""

    posts: list[DiscussionPost]
    """Every post that referred to the section, while it was changing or after."""
    commits: list[CommitChange]
    """The changes listed: those of the :data:`LISTED_COMMITS` most recent commits."""
    commit_count: int
    """Every commit that changed the section, listed or not."""
    changed: _Changes
    post_rows: list[dict[str, Term]]
    pull_rows: list[dict[str, Term]]
    """The rows of the pull requests the commits came through."""
    places: dict[str, tuple[str, str | None]]
    """Section IRI → (its document's label, its number there), for every section named."""

    @property
    def changing(self) -> list[DiscussionPost]:
        """The posts written while the section was still changing."""
        return [p for p in self.posts if p.while_changing]

    @property
    def later(self) -> list[DiscussionPost]:
        """The posts that referred to it after the RFC was published."""
        return [p for p in self.posts if not p.while_changing]

    def _by_post(self) -> Iterator[tuple[str, DiscussionPost]]:
        """Each listed entry with the post it is of (:attr:`posts` lists a post once per
        section it cites)."""
        entries = zip(_post_entries(self.post_rows), self.posts, strict=True)
        return ((post, entry) for ((post, _), _), entry in entries)

    @property
    def changing_once(self) -> list[DiscussionPost]:
        """The posts written while it was changing, one entry per post (its first)."""
        once: dict[str, DiscussionPost] = {}
        for post, entry in self._by_post():
            if entry.while_changing:
                once.setdefault(post, entry)
        return list(once.values())

    @property
    def changing_count(self) -> int:
        """How many posts were written while it was changing: each once, however many of the
        section's earlier numberings it cites."""
        return len(self.changing_once)

    @property
    def later_count(self) -> int:
        """How many posts referred to it after publication only, each once."""
        changing = {post for post, entry in self._by_post() if entry.while_changing}
        return len({post for post, _ in self._by_post()} - changing)

    def thread_evidence(self) -> list[Evidence]:
        """Each thread a post written while it was changing is in, once."""
        return [
            Evidence(
                iri=text_of(r, "thread") or "",
                label=(
                    f"#{p.thread_number} {p.thread_title}"
                    if p.thread_number
                    else f"mail thread: {p.thread_title}"
                ),
                url=p.thread_url,
                role="thread",
            )
            for p, r in _unique_threads(self.changing, self.post_rows)
        ]

    def commit_evidence(self) -> list[Evidence]:
        """Each listed commit, once."""
        return [
            Evidence(
                iri=c.iri, label=f"{c.subject} ({c.document})", url=c.commit_url, role="commit"
            )
            for c in {c.iri: c for c in self.commits}.values()
        ]


def posts_and_commits(
    session: Session, final: str, meanwhile: Callable[[], Found]
) -> tuple[Discussed, Found]:
    """The posts and commits connected to RFC section ``final`` (its IRI), and what
    ``meanwhile`` returns.

    The commits are the longest lookup: they run on a worker thread while this one looks up
    the posts and their authors, then runs ``meanwhile`` (the card's other lookups, which do
    not need the commits)."""
    changes = session.start("section_commits", final=final)
    post_rows = session.run("section_posts", final=final)
    posts_seen = tuple(dict.fromkeys(p for r in post_rows if (p := iri_of(r, "post"))))
    author_rows = session.run("post_authors", post=posts_seen) if posts_seen else []
    found = meanwhile()
    commit_rows = changes.rows()
    changed = _changes(commit_rows)
    pull_iris = tuple(changed.pulls)
    latest = changed.latest
    sections = tuple(
        dict.fromkeys([*(s for r in post_rows if (s := iri_of(r, "section"))), *changed.sections])
    )
    # Where each section sits: from the heading index when the reader has built it, which
    # holds every section with a heading; the rest, or all without the index, by query.
    indexed = session.from_index(lambda index: _indexed_places(index, sections)) or {}
    unplaced = tuple(s for s in sections if s.value not in indexed)
    # The pull requests' and commits' details come from rows read once per set of graphs.
    pull_rows = session.rows_about(*PULL_REQUESTS, pull_iris) if pull_iris else []
    detail_rows = session.rows_about(*COMMITS, latest[:LISTED_COMMITS]) if latest else []
    place_rows = session.run("section_places", section=unplaced) if unplaced else []
    places = {**_places(place_rows), **indexed}
    discussed = Discussed(
        posts=_posts(post_rows, _authors(author_rows), places),
        commits=commit_changes(commit_rows, pull_rows, detail_rows, places),
        commit_count=len(changed.authors),
        changed=changed,
        post_rows=post_rows,
        pull_rows=pull_rows,
        places=places,
    )
    return discussed, found


def _later_commits(rows: list[dict[str, Term]]) -> str:
    """The sentence for commits that changed the RFC's text after it was published."""
    commits = {text_of(r, "commit") for r in rows}
    if not commits:
        return ""
    return (
        f" {plural(len(commits), 'commit')} changed its text after publication (errata or later"
        " work); they are counted apart, not as changes while it was still changing."
    )


def read_lookups(session: Session) -> None:
    """Read now the rows a card looks its pull requests and commits up in (kept per set of
    graphs), as the first card would."""
    for name, key in (PULL_REQUESTS, COMMITS, PULL_REQUEST_PEOPLE):
        session.rows_about(name, key, ())


@dataclass(frozen=True)
class _Changes:
    """What a card reads off its commit rows, in one pass over them."""

    authors: dict[str, str | None]
    """Each commit (IRI) → its author's name (from its last row), in the order of the rows."""
    pulls: dict[NamedNode, None]
    """The pull requests the commits came through, in the order of the rows."""
    sections: dict[NamedNode, None]
    """The sections the commits changed, in the order of the rows."""
    latest: tuple[NamedNode, ...]
    """The commits, the most recent first."""


def _changes(rows: list[dict[str, Term]]) -> _Changes:
    """Read the rows of ``section_commits.rq`` (oldest first) once."""
    authors: dict[str, str | None] = {}
    pulls: dict[NamedNode, None] = {}
    sections: dict[NamedNode, None] = {}
    last_seen: dict[NamedNode, None] = {}  # each commit moved to the end on every row of it
    for row in rows:
        commit, section, pull = row.get("commit"), row.get("section"), row.get("pr")
        if isinstance(commit, NamedNode):
            author = row.get("author")
            authors[commit.value] = None if author is None else author.value
            last_seen.pop(commit, None)
            last_seen[commit] = None
        if isinstance(section, NamedNode):
            sections[section] = None
        if isinstance(pull, NamedNode):
            pulls[pull] = None
    return _Changes(
        authors=authors, pulls=pulls, sections=sections, latest=tuple(reversed(last_seen))
    )


def _authors(rows: list[dict[str, Term]]) -> dict[str, str]:
    """Post IRI → the best name for its writer: a resolved person, a sender, or the login."""
    names: dict[str, str] = {}
    for row in rows:
        name = text_of(row, "personName") or text_of(row, "senderName") or text_of(row, "login")
        if name:
            names.setdefault(text_of(row, "post") or "", name)
    return names


def _indexed_places(
    index: HeadingIndex, sections: tuple[NamedNode, ...]
) -> dict[str, tuple[str, str | None]]:
    """Section IRI → (its document's label, its number there), for the sections the heading
    index holds."""
    return {s.value: place for s in sections if (place := index.place(s.value))}


def _places(rows: list[dict[str, Term]]) -> dict[str, tuple[str, str | None]]:
    """Section IRI → (its document's label, its number there), from section_places rows."""
    return {
        text_of(row, "section") or "": (
            text_of(row, "documentLabel") or "",
            text_of(row, "sectionNumber"),
        )
        for row in rows
    }


def _post_entries(
    rows: list[dict[str, Term]],
) -> Iterator[tuple[tuple[str, str], dict[str, Term]]]:
    """The rows a card lists a post for, with their (post, cited section): one per post and
    section it cites, in the rows' order."""
    seen: set[tuple[str, str]] = set()
    for row in rows:
        key = (text_of(row, "post") or "", text_of(row, "section") or "")
        if key not in seen:
            seen.add(key)
            yield key, row


def _posts(
    rows: list[dict[str, Term]],
    authors: dict[str, str],
    places: dict[str, tuple[str, str | None]],
) -> list[DiscussionPost]:
    # Two of a post's cited sections in one place (the same words resolved through two
    # section nodes, say) make one entry: a card lists each line a reader tells apart once.
    posts: dict[DiscussionPost, None] = {}
    for key, row in _post_entries(rows):
        document, number = places.get(key[1], ("", None))
        posts.setdefault(
            DiscussionPost(
                document=document,
                section_number=number,
                thread_number=int(text_of(row, "threadNumber") or 0) or None,
                thread_title=text_of(row, "threadTitle") or "",
                thread_url=text_of(row, "threadPage") or "",
                post_url=text_of(row, "postPage") or "",
                post_kind=text_of(row, "kind") or "",
                author=authors.get(text_of(row, "post") or ""),
                created=text_of(row, "created") or "",
                cited_text=text_of(row, "citedText") or "",
                rule=text_of(row, "rule") or "",
                while_changing=is_true(row, "whileChanging"),
                about_published=is_true(row, "aboutPublished"),
            )
        )
    return list(posts)


def commit_changes(
    rows: list[dict[str, Term]],
    pulls: list[dict[str, Term]],
    details: list[dict[str, Term]],
    places: dict[str, tuple[str, str | None]],
) -> list[CommitChange]:
    """The changes a card lists: one per (commit, pull request) for the commits ``details``
    describes (the most recent); a commit that came through no pull request is listed once.
    The others are only counted, from the rows, so no model is built for them."""
    pull_of = {text_of(p, "pr"): p for p in pulls if text_of(p, "prNumber")}
    detail_of = {text_of(d, "commit"): d for d in details}
    changes: dict[tuple[str, str | None], CommitChange] = {}
    for row in rows:
        commit = text_of(row, "commit") or ""
        detail = detail_of.get(commit)
        if detail is None:
            continue
        pull = pull_of.get(text_of(row, "pr"), {})
        changes.setdefault(
            (commit, text_of(pull, "prNumber")),
            CommitChange(
                iri=commit,
                document=places.get(text_of(row, "section") or "", ("", None))[0],
                commit_url=text_of(detail, "commitPage"),
                subject=text_of(detail, "subject"),
                author=text_of(row, "author"),
                date=text_of(row, "date") or "",
                pull_request=int(text_of(pull, "prNumber") or 0) or None,
                pull_request_title=text_of(pull, "prTitle"),
                pull_request_url=text_of(pull, "prPage"),
            ),
        )
    return list(changes.values())


def _unique_threads(
    posts: list[DiscussionPost], rows: list[dict[str, Term]]
) -> list[tuple[DiscussionPost, dict[str, Term]]]:
    by_post = {text_of(r, "postPage"): r for r in rows}
    out: dict[str, tuple[DiscussionPost, dict[str, Term]]] = {}
    for post in posts:
        row = by_post.get(post.post_url)
        if row is not None:
            out.setdefault(post.thread_url, (post, row))
    return list(out.values())


def _fixed_issues(pulls: list[dict[str, Term]]) -> list[Evidence]:
    """The issues the pull requests fixed or closed, each once, by number."""
    found = {
        text_of(row, "issue") or "": row for row in pulls if text_of(row, "issueNumber") is not None
    }
    return [
        Evidence(
            iri=iri,
            label=f"issue #{text_of(row, 'issueNumber')} {text_of(row, 'issueTitle')}",
            url=text_of(row, "issuePage"),
            role="issue",
        )
        for iri, row in sorted(
            found.items(), key=lambda item: int(text_of(item[1], "issueNumber") or 0)
        )
    ]


def _pull_requests(changed: _Changes, pulls: list[dict[str, Term]]) -> dict[int, dict[str, Term]]:
    """Pull request number → its row (title, link), for the pull requests the commits came
    through."""
    through = {pr.value for pr in changed.pulls}
    return {
        int(text_of(p, "prNumber") or 0): p
        for p in pulls
        if text_of(p, "prNumber") and text_of(p, "pr") in through
    }


def _people(
    posts: list[DiscussionPost], changed: _Changes, reviewer_rows: list[dict[str, Term]]
) -> list[PersonActivity]:
    """Everyone connected to the section, once each, with what their entry rests on: posts
    that cited it, commits that changed it, and pull requests that changed it in whose
    threads they wrote (counted after the first two, never instead of them)."""
    tally: dict[str, list[int]] = {}
    for post in posts:
        if post.author:
            tally.setdefault(post.author, [0, 0, 0])[0] += 1
    for author in changed.authors.values():
        if author:
            tally.setdefault(author, [0, 0, 0])[1] += 1
    discussed: dict[str, set[str]] = {}
    for row in reviewer_rows:
        name = text_of(row, "personName") or text_of(row, "login")
        if name:
            discussed.setdefault(name, set()).add(text_of(row, "pr") or "")
    for name, pulls in discussed.items():
        tally.setdefault(name, [0, 0, 0])[2] = len(pulls)
    kinds: tuple[EvidenceKind, ...] = (
        "cited it",
        "changed it",
        "commented on a pull request that changed it",
    )
    return sorted(
        (
            PersonActivity(
                name=name,
                posts=p,
                commits=c,
                pull_requests_discussed=r,
                rests_on=tuple(kind for kind, n in zip(kinds, (p, c, r), strict=True) if n),
            )
            for name, (p, c, r) in tally.items()
        ),
        key=lambda person: (
            -(person.posts + person.commits),
            -person.pull_requests_discussed,
            person.name,
        ),
    )


def _involvement(person: PersonActivity) -> str:
    """One person's share, in the words of what it rests on."""
    if person.posts or person.commits:
        return f"{person.name} ({activity_counts(person.posts, person.commits)})"
    return f"{person.name} (commented on {plural(person.pull_requests_discussed, 'pull request')})"


def _coverage(posts: int, commits: int, pulls: int, people: list[PersonActivity]) -> str:
    """The card's statement of thin evidence, or nothing when posts and commits both stand."""
    if posts and commits:
        return ""
    if commits:
        commenters = sum(1 for p in people if p.rests_on == (PR_KIND,))
        more = (
            f", and {plural(commenters, 'person', 'people')} who commented on them"
            if commenters
            else ""
        )
        return (
            " Partial: no post refers to this section while it was changing; the evidence is "
            f"{plural(commits, 'commit')}"
            + (f" through {plural(pulls, 'pull request')}" if pulls else "")
            + f"{more}."
        )
    return (
        " Partial: no commit is recorded as changing this section; the evidence is "
        f"{plural(posts, 'post')} referring to it."
    )


PR_KIND = "commented on a pull request that changed it"


def _drafted_question(
    question: str,
    title: str,
    people: list[PersonActivity],
    officers: list[Expert],
    evidence: list[Evidence],
) -> DraftedQuestion:
    """A note the reader could send to the people the card names (never sent by us)."""
    return drafted_question(
        question,
        title,
        [p.name for p in people[:3]] + [c.name for c in officers],
        evidence,
        "The record shows you discussed or changed this section while its text was still "
        "changing, or were responsible for the document.",
    )


_REVISION_LABEL = re.compile(r"^(.+)-(\d{2})$")


def _in_time(
    posts: list[DiscussionPost], commits: list[CommitChange]
) -> Callable[[str], tuple[str, str]]:
    """A sort key putting documents earliest first: by the first post or commit dated in
    each; a revision with none listed sits after the latest dated earlier revision of its
    draft (or with the earliest later one); anything else last."""
    first: dict[str, str] = {}
    for document, day in [
        *((p.document, p.created) for p in posts),
        *((c.document, c.date) for c in commits),
    ]:
        if document and day:
            first[document] = min(first.get(document, day), day)

    def key(document: str) -> tuple[str, str]:
        if document in first:
            return (first[document], document)
        own = _REVISION_LABEL.match(document)
        if own:
            series = [
                (m.group(2), day)
                for other, day in first.items()
                if (m := _REVISION_LABEL.match(other)) and m.group(1) == own.group(1)
            ]
            before = [day for n, day in series if n < own.group(2)]
            after = [day for n, day in series if n > own.group(2)]
            if before or after:
                return (max(before) if before else min(after), document)
        return ("9999", document)

    return key
