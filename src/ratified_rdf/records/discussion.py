"""Who discussed or changed each section while it was still changing.

Section numbers lie, headings mostly don't: a post's "Section 4.2.9" means that section of the
revision current when the post was written (unless it names a revision), so every citation is
resolved through a revision, then through that revision's alignment to the RFC. A post counts
as discussing a section *while it was still changing* only if it was written while the revision
it points to was current (before the next revision, or before the RFC's publication month) and
that revision's text of the section was not yet final. Posts about a published RFC are a
separate relation. Commits are tied to the sections their diffs touched, in the revision they
landed in.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ratified_rdf.records.alignment import STILL_CHANGING_BELOW
from ratified_rdf.records.citations import Citation, find_citations
from ratified_rdf.records.identity import PeopleTable
from ratified_rdf.records.manifest import Manifest
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.sources.document import ParsedDocument, normalise_heading
from ratified_rdf.sources.git_history import CommitRecord
from ratified_rdf.sources.github_archive import GitHubArchive
from ratified_rdf.sources.mail import MailMessage, MailProblem, MailReadResult
from ratified_rdf.sources.online.datatracker import DraftFacts

CitationRule = Literal["explicit-revision", "current-revision", "named-rfc", "anchor"]


class SectionRef(BaseModel):
    """A section by document (revision name or ``rfcNNNN``) and position."""

    model_config = ConfigDict(frozen=True)

    document: str
    position: int


class RevisionWindow(BaseModel):
    """When a revision was the current text of its chain."""

    model_config = ConfigDict(frozen=True)

    revision: str
    start: datetime
    end: datetime
    """The next revision's start, or the final RFC's publication month."""
    final_rfc: str
    published: datetime


def github_post_key(thread: int, index: int) -> str:
    """The key of a GitHub post in citation records."""
    return f"github/{thread}/{index}"


def mail_post_key(message_id: str) -> str:
    """The key of a mail message in citation records."""
    return f"mail/{message_id}"


class CitationRecord(BaseModel):
    """One reference to a section in one post, and what it resolved to."""

    model_config = ConfigDict(frozen=True)

    post: str
    """Which post: :func:`github_post_key` or :func:`mail_post_key`."""
    start: int
    end: int
    text: str
    rule: CitationRule | None
    target: SectionRef | None
    """The section of the revision (or RFC) the writer meant, when it resolved."""
    final: SectionRef | None = None
    """The RFC section that section became."""
    while_changing: bool = False
    about_published: bool = False
    unresolved: str | None = None
    """Why the citation did not resolve (a sentence), or None."""


class CommitEvidence(BaseModel):
    """A commit with the sections its diff touched, in the revision it landed in."""

    model_config = ConfigDict(frozen=True)

    commit: CommitRecord
    public_commit: str | None
    landed_in: str | None
    sections: tuple[SectionRef, ...] = ()
    unresolved_headings: tuple[str, ...] = ()
    pull_requests: tuple[int, ...] = ()


class DiscussionRecords(BaseModel):
    """Everything one read of the discussion sources produced."""

    model_config = ConfigDict(frozen=True)

    archive: GitHubArchive
    windows: tuple[RevisionWindow, ...]
    commits: tuple[CommitEvidence, ...]
    citations: tuple[CitationRecord, ...]
    people: PeopleTable
    mail: tuple[MailMessage, ...] = ()
    """Messages held from the lists' archives (with a date and a permalink)."""
    mail_problems: tuple[MailProblem, ...] = ()

    def visible_to(self, sources: Collection[str]) -> DiscussionRecords:
        """Only what the given sources (``github``, ``mail``, ``git``) hold: what a reader
        cleared for just those may be shown, and what is computed for them."""
        kept = {"github": "github" in sources, "mail": "mail" in sources}
        return self.model_copy(
            update={
                "archive": self.archive
                if kept["github"]
                else self.archive.model_copy(update={"threads": ()}),
                "mail": self.mail if kept["mail"] else (),
                "commits": self.commits if "git" in sources else (),
                "citations": tuple(
                    c for c in self.citations if kept.get(c.post.split("/", 1)[0], True)
                ),
            }
        )


def revision_windows(
    manifest: Manifest, spec: SpecRecords, facts: Mapping[str, DraftFacts] | None = None
) -> list[RevisionWindow]:
    """Each revision's window of being current, chain by chain.

    A revision starts when the Datatracker says it was posted, when the records hold that;
    otherwise at its tagged commit's date. Tag dates can run backwards (draft-ietf-tls-tls13-18's
    tagged commit is older than -17's), so a window starts no earlier than the one before it.
    """
    posted = {
        f"{name}-{revision.rev}": revision.time.astimezone(UTC)
        for name, draft_facts in (facts or {}).items()
        for revision in draft_facts.revisions
    }
    published = {r.name: _month_start(r.published) for r in spec.rfcs}
    chains: dict[str, list[tuple[str, datetime]]] = defaultdict(list)
    # Replaced drafts first: their revisions come before the replacing draft's.
    for draft in sorted((d.name for d in manifest.draft), key=lambda n: -manifest.replacements(n)):
        final = manifest.final_rfc(draft)
        if final is None:
            continue
        for revision in sorted(
            (r for r in spec.revisions if r.draft == draft), key=lambda r: r.number
        ):
            date = posted.get(revision.name, revision.commit.committed_at.astimezone(UTC))
            chains[final].append((revision.name, date))
    windows: list[RevisionWindow] = []
    for final, revisions in chains.items():
        starts: list[datetime] = []
        for _name, date in revisions:
            starts.append(max(date, starts[-1]) if starts else date)
        for index, (name, _date) in enumerate(revisions):
            end = starts[index + 1] if index + 1 < len(revisions) else published[final]
            windows.append(
                RevisionWindow(
                    revision=name,
                    start=starts[index],
                    end=max(end, starts[index]),
                    final_rfc=final,
                    published=published[final],
                )
            )
    return windows


def _month_start(year_month: str) -> datetime:
    year, month = (int(p) for p in year_month.split("-"))
    return datetime(year, month, 1, tzinfo=UTC)


class _Resolver:
    """Resolves citations against the spec records."""

    def __init__(self, manifest: Manifest, spec: SpecRecords, windows: list[RevisionWindow]):
        self.windows = windows
        self.documents: dict[str, ParsedDocument] = {r.name: r.document for r in spec.revisions}
        self.documents.update({r.name: r.document for r in spec.rfcs})
        self.drafts = {d.name for d in manifest.draft}
        self.rfcs = {r.number for r in spec.rfcs}
        self.alignment: dict[tuple[str, int], tuple[int | None, float | None, str]] = {
            (a.source_document, a.source_position): (
                a.target_position,
                a.similarity,
                a.target_rfc,
            )
            for a in spec.alignments
        }
        self.by_number: dict[str, dict[str, int]] = {
            name: {s.number: s.position for s in doc.sections if s.number}
            for name, doc in self.documents.items()
        }
        self.by_anchor: dict[str, dict[str, int]] = {}
        for name, doc in self.documents.items():
            anchors: dict[str, int] = {}
            for section in doc.sections:
                anchors.setdefault(_slug(section.heading), section.position)
                if section.anchor:
                    anchors[section.anchor.lower()] = section.position
            self.by_anchor[name] = anchors
        self.revisions_of: dict[str, list[str]] = defaultdict(list)
        for revision in spec.revisions:
            self.revisions_of[revision.draft].append(revision.number)

    def current(self, when: datetime) -> RevisionWindow | None:
        """The revision current at ``when`` (the latest window that had started)."""
        started = [w for w in self.windows if w.start <= when < w.end]
        return max(started, key=lambda w: w.start) if started else None

    def resolve(self, post: str, when: datetime, c: Citation) -> CitationRecord:
        base = {"post": post, "start": c.start, "end": c.end, "text": c.text}
        if c.rfc is not None:
            if c.rfc not in self.rfcs:
                return CitationRecord(
                    **base, rule=None, target=None, unresolved=f"cites RFC {c.rfc}, not held"
                )
            document = f"rfc{c.rfc}"
            position = self._locate(document, c)
            if position is None:
                return CitationRecord(
                    **base, rule=None, target=None, unresolved=f"RFC {c.rfc} has no such section"
                )
            target = SectionRef(document=document, position=position)
            return CitationRecord(
                **base,
                rule="named-rfc",
                target=target,
                final=target,
                about_published=True,
            )
        if c.draft is not None and c.draft not in self.drafts:
            return CitationRecord(
                **base, rule=None, target=None, unresolved=f"cites {c.draft}, not held"
            )
        window = self.current(when)
        rule: CitationRule
        if c.revision is not None:
            draft = c.draft or (window.revision.rsplit("-", 1)[0] if window else None)
            if draft is None or c.revision not in self.revisions_of.get(draft, []):
                return CitationRecord(
                    **base,
                    rule=None,
                    target=None,
                    unresolved=f"names revision {c.revision}, which is not held",
                )
            revision = f"{draft}-{c.revision}"
            rule = "explicit-revision"
        elif window is not None:
            revision = window.revision
            rule = "anchor" if c.section is None else "current-revision"
        else:
            return CitationRecord(
                **base,
                rule=None,
                target=None,
                unresolved="written when no held revision was current",
            )
        position = self._locate(revision, c)
        if position is None:
            return CitationRecord(
                **base, rule=None, target=None, unresolved=f"{revision} has no such section"
            )
        target = SectionRef(document=revision, position=position)
        final_position, similarity, final_rfc = self.alignment.get(
            (revision, position), (None, None, "")
        )
        final = (
            SectionRef(document=final_rfc, position=final_position)
            if final_position is not None
            else None
        )
        in_window = any(w.revision == revision and w.start <= when < w.end for w in self.windows)
        changing = similarity is not None and similarity < STILL_CHANGING_BELOW
        return CitationRecord(
            **base,
            rule=rule,
            target=target,
            final=final,
            while_changing=in_window and changing,
            about_published=any(
                w.revision == revision and when >= w.published for w in self.windows
            ),
        )

    def _locate(self, document: str, c: Citation) -> int | None:
        if c.section is not None:
            return self.by_number.get(document, {}).get(c.section)
        if c.anchor is not None:
            return self.by_anchor.get(document, {}).get(c.anchor.lower())
        return None


def _slug(heading: str) -> str:
    """The anchor kramdown-rfc derives from a heading with no explicit anchor."""
    return re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-")


def read_discussion(
    manifest: Manifest,
    spec: SpecRecords,
    archive: GitHubArchive,
    commits: list[CommitRecord],
    landed: dict[str, str],
    public_ids: dict[str, str],
    branch_commits: Callable[[str], list[str]],
    people: PeopleTable,
    mail: Sequence[MailReadResult] = (),
    facts: Mapping[str, DraftFacts] | None = None,
) -> DiscussionRecords:
    """Resolve every post's and message's citations and every commit's touched headings.

    A message without a date cannot be placed in a revision's window, and one without a
    permalink cannot be linked: both are reported as problems, not ingested.
    """
    windows = revision_windows(manifest, spec, facts)
    resolver = _Resolver(manifest, spec, windows)
    citations: list[CitationRecord] = []
    for thread in archive.threads:
        for post in thread.posts:
            text = post.body if post.index else f"{thread.title}\n{post.body}"
            for citation in find_citations(text):
                citations.append(
                    resolver.resolve(
                        github_post_key(thread.number, post.index), post.created, citation
                    )
                )
    messages: list[MailMessage] = []
    problems: list[MailProblem] = [p for result in mail for p in result.problems]
    for result in mail:
        for message in result.messages:
            if message.date is None or message.permalink is None:
                problems.append(
                    MailProblem(
                        index=-1,
                        message_id=message.message_id,
                        reason=f"message <{message.message_id}> has no "
                        + ("date" if message.date is None else "permalink")
                        + ", so it cannot be placed or linked; it was not ingested.",
                        skipped=True,
                    )
                )
                continue
            messages.append(message)
            for citation in find_citations(f"{message.subject}\n{message.body}"):
                citations.append(
                    resolver.resolve(mail_post_key(message.message_id), message.date, citation)
                )
    return DiscussionRecords(
        mail=tuple(messages),
        mail_problems=tuple(problems),
        archive=archive,
        windows=tuple(windows),
        commits=tuple(
            _commit_evidence(resolver, archive, commits, landed, public_ids, branch_commits)
        ),
        citations=tuple(citations),
        people=people,
    )


def _commit_evidence(
    resolver: _Resolver,
    archive: GitHubArchive,
    commits: list[CommitRecord],
    landed: dict[str, str],
    public_ids: dict[str, str],
    branch_commits: Callable[[str], list[str]],
) -> list[CommitEvidence]:
    local_of = {public: local for local, public in public_ids.items()}
    pulls: dict[str, set[int]] = defaultdict(set)
    for thread in archive.threads:
        if thread.kind != "pull" or thread.merged is None:
            continue
        for oid in (thread.merge_commit, thread.head_commit):
            local = local_of.get(oid or "", oid)
            if local:
                pulls[local].add(thread.number)
        merge = local_of.get(thread.merge_commit or "", thread.merge_commit)
        if merge:
            for local in branch_commits(merge):
                pulls[local].add(thread.number)
    for commit in commits:
        if commit.pull_request is not None:
            pulls[commit.commit].add(commit.pull_request)
            if len(commit.parents) > 1:
                for local in branch_commits(commit.commit):
                    pulls[local].add(commit.pull_request)
    evidence: list[CommitEvidence] = []
    headings: dict[str, dict[str, int]] = {}
    for commit in commits:
        revision = landed.get(commit.commit)
        document = resolver.documents.get(revision or "")
        sections: list[SectionRef] = []
        unresolved: list[str] = []
        if document is not None and revision is not None:
            if revision not in headings:
                headings[revision] = {
                    normalise_heading(s.heading): s.position for s in document.sections
                }
            by_heading = headings[revision]
            for touched in commit.touched:
                position = by_heading.get(normalise_heading(touched.heading))
                if position is None:
                    unresolved.append(touched.heading)
                else:
                    sections.append(SectionRef(document=revision, position=position))
        else:
            unresolved += [t.heading for t in commit.touched]
        evidence.append(
            CommitEvidence(
                commit=commit,
                public_commit=public_ids.get(commit.commit),
                landed_in=revision,
                sections=tuple(dict.fromkeys(sections)),
                unresolved_headings=tuple(dict.fromkeys(unresolved)),
                pull_requests=tuple(sorted(pulls.get(commit.commit, ()))),
            )
        )
    return evidence
