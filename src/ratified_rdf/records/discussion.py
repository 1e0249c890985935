"""Who discussed or changed each section while it was still changing.

Section numbers lie, headings mostly don't: a post's "Section 4.2.9" means that section of the
revision current when the post was written (unless it names a revision), so every citation is
resolved through a revision, then through that revision's alignment to the RFC.

"Current" is per draft chain (the drafts that became one RFC). A citation that names no draft
(a bare number or anchor, or a revision number alone, "-21 §4.2") is resolved in the chain
the post is about: the only chain with a current revision when it was written; else, of the
chains then open, the one the post's own text names (a draft's full or short name, in prose
or a link; for a message, in its subject or body), else the one its thread's title names,
else its labels, else its opening post (a list thread's first message): see
:mod:`ratified_rdf.records.citation_documents` for the names and where each counts. One
GitHub archive (and one list) serves every draft of the manifest's repository, so where it
came from tells no chain apart. When several chains stay possible the
citation is left unresolved and says so. A citation naming a draft but no revision ("Section 4
of draft-foo") is read against that draft's current revision, whatever else was open.

A post counts as discussing a section *while it was still changing* only if it was written
while the revision it points to was current (before the next revision, or before the RFC's
publication month) and that revision's text of the section was not yet final. Posts about a
published RFC are a separate relation. Commits are tied to the sections their diffs touched,
in the revision they landed in.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypedDict

from pydantic import BaseModel, ConfigDict

from ratified_rdf.records.alignment import STILL_CHANGING_BELOW
from ratified_rdf.records.citation_documents import DraftNames
from ratified_rdf.records.citations import Citation, find_citations
from ratified_rdf.records.identity import PeopleTable
from ratified_rdf.records.manifest import Manifest
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.sources.document import (
    ParsedDocument,
    SectionKey,
    normalise_heading,
    section_keys,
)
from ratified_rdf.sources.git_history import ChangePlace, CommitRecord
from ratified_rdf.sources.github_archive import GitHubArchive, GitHubThread
from ratified_rdf.sources.mail import MailMessage

if TYPE_CHECKING:
    from ratified_rdf.sources.base import ReadContext
    from ratified_rdf.sources.online.datatracker import DraftFacts  # httpx: a build's alone

CitationRule = Literal[
    "explicit-revision", "current-revision", "named-rfc", "anchor", "review-line"
]
"""How a citation found its section; ``review-line`` is a review comment on a line of the
pull request's diff, placed by that line's position in the text reviewed."""


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
    dated_by: Literal["datatracker", "tag", "spread"] = "tag"
    """Where its start came from: the Datatracker's posting time, its tag's commit date, or,
    when that date ran backwards along the chain, the rule of :func:`revision_windows`."""


def github_post_key(thread: int, index: int) -> str:
    """The key of a GitHub post in citation records."""
    return f"github/{thread}/{index}"


def mail_post_key(message_id: str) -> str:
    """The key of a mail message in citation records."""
    return f"mail/{message_id}"


class _Where(TypedDict):
    """Where a citation sits: the post and the span of its text."""

    post: str
    start: int
    end: int
    text: str


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
    """The revision (or RFC text) its first credited change landed in."""
    landed: tuple[str, ...] = ()
    """Every revision (or RFC text) it landed in: one per draft whose file it changed."""
    sections: tuple[SectionRef, ...] = ()
    """Sections it changed while they were still changing (before the RFC was published)."""
    after_publication: tuple[SectionRef, ...] = ()
    """Sections it changed after the RFC they became was published: not "while changing"."""
    unresolved_headings: tuple[str, ...] = ()
    pull_requests: tuple[int, ...] = ()


_NO_ARCHIVE = GitHubArchive(repository="", timestamp=None, threads=())


class DiscussionRecords(BaseModel):
    """Everything one read of the discussion sources produced."""

    model_config = ConfigDict(frozen=True)

    windows: tuple[RevisionWindow, ...]
    commits: tuple[CommitEvidence, ...]
    citations: tuple[CitationRecord, ...]
    people: PeopleTable
    posts: dict[str, Any] = {}
    """What each post source read (:class:`ratified_rdf.sources.base.Source`), by its name,
    in the registry's order: ``github``'s archive, ``mail``'s messages, a registered one's."""
    problems: tuple[str, ...] = ()
    """Records the sources reported and skipped (a malformed mail message, say), as
    sentences."""

    @property
    def archive(self) -> GitHubArchive:
        """The GitHub archive's threads (none without one): the commit evidence links commits
        to the pull requests among them, and expertise credits their posts' authors."""
        read = self.posts.get("github")
        return read.archive if read is not None else _NO_ARCHIVE

    @property
    def mail(self) -> tuple[MailMessage, ...]:
        """Messages held from the lists' archives (with a date and a permalink)."""
        read = self.posts.get("mail")
        return read.messages if read is not None else ()

    def visible_to(self, sources: Collection[str]) -> DiscussionRecords:
        """Only what the given sources (``github``, ``mail``, ``git``) hold: what a reader
        cleared for just those may be shown, and what is computed for them."""
        return self.model_copy(
            update={
                "posts": {name: read for name, read in self.posts.items() if name in sources},
                "commits": self.commits if "git" in sources else (),
                "citations": tuple(c for c in self.citations if c.post.split("/", 1)[0] in sources),
            }
        )


def revision_windows(
    manifest: Manifest, spec: SpecRecords, facts: Mapping[str, DraftFacts] | None = None
) -> list[RevisionWindow]:
    """Each revision's window of being current, chain by chain.

    A revision starts when the Datatracker says it was posted, when the records hold that;
    otherwise at its tagged commit's date. Tag dates can run backwards: the tag of
    draft-ietf-tls-tls13-18 is on a commit older than -17's. One rule then keeps every window
    open and none overlapping: the revisions whose dates ran backwards are spread evenly over
    the span from the last revision dated in order to the next one (or to publication), in
    revision order, and are marked ``dated_by="spread"`` so the build can say so.
    """
    posted = {
        f"{name}-{revision.rev}": revision.time.astimezone(UTC)
        for name, draft_facts in (facts or {}).items()
        for revision in draft_facts.revisions
    }
    published = {r.name: _month_start(r.published) for r in spec.rfcs}
    chains: dict[str, list[tuple[str, datetime, bool]]] = defaultdict(list)
    # Replaced drafts first: their revisions come before the replacing draft's.
    for draft in sorted((d.name for d in manifest.draft), key=lambda n: -manifest.replacements(n)):
        final = manifest.final_rfc(draft)
        if final is None:
            continue
        for revision in sorted(
            (r for r in spec.revisions if r.draft == draft), key=lambda r: r.number
        ):
            known = revision.name in posted
            date = posted.get(revision.name, revision.commit.committed_at.astimezone(UTC))
            chains[final].append((revision.name, date, known))
    windows: list[RevisionWindow] = []
    for final, revisions in chains.items():
        starts, spread = _spread_backwards([date for _, date, _ in revisions], published[final])
        for index, (name, _date, known) in enumerate(revisions):
            end = starts[index + 1] if index + 1 < len(revisions) else published[final]
            windows.append(
                RevisionWindow(
                    revision=name,
                    start=starts[index],
                    end=max(end, starts[index]),
                    final_rfc=final,
                    published=published[final],
                    dated_by="spread" if index in spread else "datatracker" if known else "tag",
                )
            )
    return windows


def _spread_backwards(dates: list[datetime], last: datetime) -> tuple[list[datetime], set[int]]:
    """Starts for revisions dated ``dates`` (in revision order): a date not after the last
    one kept in order ran backwards, and each run of those shares, evenly and in order, the
    span from the revision before the run to the next date in order (or to ``last``)."""
    starts = list(dates)
    spread: set[int] = set()
    kept = 0  # index of the last date kept in order
    index = 1
    while index < len(dates):
        if dates[index] > starts[kept]:
            kept = index
            index += 1
            continue
        run_end = index
        while run_end < len(dates) and dates[run_end] <= starts[kept]:
            run_end += 1
        until = dates[run_end] if run_end < len(dates) else max(last, starts[kept])
        step = (until - starts[kept]) / (run_end - index + 1)
        for offset, position in enumerate(range(index, run_end), 1):
            starts[position] = starts[kept] + step * offset
            spread.add(position)
        kept, index = run_end - 1, run_end
    return starts, spread


def _month_after(year_month: str) -> datetime:
    """The first instant after the month ``YYYY-MM``."""
    year, month = (int(p) for p in year_month.split("-"))
    return datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)


def _month_start(year_month: str) -> datetime:
    year, month = (int(p) for p in year_month.split("-"))
    return datetime(year, month, 1, tzinfo=UTC)


class PostContext(BaseModel):
    """What a post says about which drafts it is about: the drafts its own text names, those
    its thread's title and labels name, and those its thread names as a whole (opening post
    too). Only consulted when more than one draft chain had a current revision when the post
    was written."""

    model_config = ConfigDict(frozen=True)

    names: frozenset[str] = frozenset()
    title_names: frozenset[str] = frozenset()
    """The drafts the thread's title names (:meth:`DraftNames.in_title`)."""
    label_names: frozenset[str] = frozenset()
    """The drafts the thread's labels name (:meth:`DraftNames.in_labels`)."""
    thread_names: frozenset[str] = frozenset()

    @property
    def in_order(self) -> tuple[frozenset[str], ...]:
        """Where a draft may be named, most telling first: the post's own text, its
        thread's title, its labels, then its thread as a whole."""
        return (self.names, self.title_names, self.label_names, self.thread_names)


class CitationResolver:
    """Resolves citations against the spec records: what a post's "Section 4.2" meant, in
    the revision current when it was written (see the module docstring). One per read of the
    discussion, shared by every post source."""

    def __init__(self, manifest: Manifest, spec: SpecRecords, windows: list[RevisionWindow]):
        self.documents: dict[str, ParsedDocument] = {r.name: r.document for r in spec.revisions}
        self.documents.update({r.name: r.document for r in spec.rfcs})
        self.drafts = {d.name for d in manifest.draft}
        self.draft_names = DraftNames(self.drafts)
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
        self.draft_of: dict[str, str] = {}
        for revision in spec.revisions:
            self.revisions_of[revision.draft].append(revision.number)
            self.draft_of[revision.name] = revision.draft
        # Windows by revision and by chain (each chain's windows follow one another, starts
        # never going back), so finding the current one is a bisection, not a scan.
        self.window_of: dict[str, RevisionWindow] = {w.revision: w for w in windows}
        by_chain: dict[str, list[RevisionWindow]] = defaultdict(list)
        for window in windows:
            by_chain[window.final_rfc].append(window)
        self.chains = {c: sorted(ws, key=lambda w: w.start) for c, ws in by_chain.items()}
        self.starts = {c: [w.start for w in ws] for c, ws in self.chains.items()}
        self.chain_of: dict[str, str] = {
            d.name: final for d in manifest.draft if (final := manifest.final_rfc(d.name))
        }
        self.published_ends = {r.name: _month_after(r.published) for r in spec.rfcs}
        # Which chains are open (have a current revision) between consecutive boundaries.
        spans = {c: (ws[0].start, max(w.end for w in ws)) for c, ws in self.chains.items()}
        self.boundaries = sorted({t for span in spans.values() for t in span})
        self.open_between = [
            tuple(sorted(c for c, (first, last) in spans.items() if first <= t < last))
            for t in self.boundaries
        ]

    def published_end(self, document: str) -> datetime | None:
        """When the RFC a document's text became had been published (the end of its
        publication month): from then on, changing it is no longer "while it was changing".
        For an RFC's own text, its own publication; None for a draft that became no RFC."""
        final = document if document in self.published_ends else None
        if final is None:
            final = self.chain_of.get(self.draft_of.get(document, ""))
        return self.published_ends.get(final or "")

    def current_in(self, chain: str, when: datetime) -> RevisionWindow | None:
        """The revision of ``chain`` current at ``when`` (the latest window that had started,
        if it had not ended)."""
        index = bisect.bisect_right(self.starts.get(chain, []), when) - 1
        if index < 0:
            return None
        window = self.chains[chain][index]
        return window if when < window.end else None

    def open_chains(self, when: datetime) -> tuple[str, ...]:
        """The chains with a current revision at ``when``."""
        index = bisect.bisect_right(self.boundaries, when) - 1
        return self.open_between[index] if index >= 0 else ()

    def thread_names(self, thread: GitHubThread) -> frozenset[str]:
        """The held drafts a GitHub thread names: by its labels, its title and its opening
        post (:class:`DraftNames`)."""
        opening = thread.posts[0].body if thread.posts else ""
        return (
            self.draft_names.in_labels(thread.labels)
            | self.draft_names.in_title(thread.title)
            | self.names_in(opening)
        )

    def thread_context(self, thread: GitHubThread) -> PostContext:
        """What a GitHub thread says of the drafts its posts are about, each place apart, so
        the title is heard before the labels (a post's own names are added per post)."""
        return PostContext(
            title_names=self.draft_names.in_title(thread.title),
            label_names=self.draft_names.in_labels(thread.labels),
            thread_names=self.thread_names(thread),
        )

    def names_in(self, text: str) -> frozenset[str]:
        """The held drafts ``text`` names (in prose or a link, by full or short name)."""
        return self.draft_names.in_text(text)

    def cite(
        self, post: str, when: datetime, text: str, thread_text: str | None = None
    ) -> list[CitationRecord]:
        """Every citation in ``text``, written in ``post`` at ``when``, resolved; the drafts
        ``thread_text`` names (its thread's subject or opening) break a tie between chains
        then open. What a post source with no thread context of its own calls."""
        found = find_citations(text)
        if not found:
            return []
        context = PostContext(
            names=self.names_in(text),
            thread_names=self.names_in(thread_text) if thread_text else frozenset(),
        )
        return [self.resolve(post, when, c, context) for c in found]

    def _chain_for(
        self, when: datetime, context: PostContext, what: str
    ) -> tuple[RevisionWindow | None, str | None]:
        """The current revision of the chain the post is about, or why that cannot be told."""
        candidates = self.open_chains(when)
        if not candidates:
            return None, "written when no held revision was current"
        open_count, narrowed = len(candidates), False
        for names in context.in_order:
            if len(candidates) == 1:
                break
            named = {self.chain_of[n] for n in names if n in self.chain_of}
            if named & set(candidates):
                # Naming several open drafts narrows the choice without making it.
                candidates = tuple(c for c in candidates if c in named)
                narrowed = True
        if len(candidates) == 1:
            window = self.current_in(candidates[0], when)
            return window, None if window else "written when no held revision was current"
        drafts = sorted(
            self.draft_of[w.revision]
            for c in candidates
            if (w := self.current_in(c, when)) is not None
        )
        shown = ", ".join(drafts[:3]) + (", …" if len(drafts) > 3 else "")
        said = (
            f"the post and its thread name {len(candidates)} of them"
            if narrowed
            else "neither the post nor its thread names one of them"
        )
        return None, f"{what} written while {open_count} drafts were open ({shown}); {said}"

    def resolve(
        self, post: str, when: datetime, c: Citation, context: PostContext | None = None
    ) -> CitationRecord:
        """What ``c``, written in ``post`` at ``when``, refers to (see the module docstring
        for which draft a citation naming none is read against)."""
        base: _Where = {"post": post, "start": c.start, "end": c.end, "text": c.text}
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
        if c.draft is not None:
            # The draft is named: its chain, whatever else was open.
            chain = self.chain_of.get(c.draft)
            window = self.current_in(chain, when) if chain else None
            why = None if window else f"written when no revision of {c.draft} was current"
        else:
            what = (
                f"revision {c.revision} without a draft name"
                if c.revision is not None
                else "bare section number"
                if c.section is not None
                else "bare anchor"
            )
            window, why = self._chain_for(when, context or PostContext(), what)
        rule: CitationRule
        if c.revision is not None:
            draft = c.draft or (self.draft_of[window.revision] if window else None)
            if draft is None or c.revision not in self.revisions_of.get(draft, []):
                return CitationRecord(
                    **base,
                    rule=None,
                    target=None,
                    unresolved=f"names revision {c.revision}, which is not held"
                    if why is None or c.draft is not None
                    else why,
                )
            revision = f"{draft}-{c.revision}"
            rule = "explicit-revision"
        elif window is not None and (c.draft is None or self.draft_of[window.revision] == c.draft):
            revision = window.revision
            rule = "anchor" if c.section is None else "current-revision"
        else:
            return CitationRecord(
                **base,
                rule=None,
                target=None,
                unresolved=why or f"written when no revision of {c.draft} was current",
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
        held = self.window_of.get(revision)
        in_window = held is not None and held.start <= when < held.end
        changing = similarity is not None and similarity < STILL_CHANGING_BELOW
        return CitationRecord(
            **base,
            rule=rule,
            target=target,
            final=final,
            while_changing=in_window and changing,
            about_published=held is not None and when >= held.published,
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


@dataclass(frozen=True)
class GitEvidence:
    """What git said about the documents' history, read in ``sources/``: the commits that
    changed the document files, where each change sat, and which merges brought in which
    commits. Records run no git themselves."""

    commits: Sequence[CommitRecord]
    """The commits that changed the document files (``git_history.read_history``)."""
    places: Mapping[str, Sequence[ChangePlace]]
    """Where each commit's changes sat, by commit (``git_history.place_changes``)."""
    branch_commits: Callable[[str], list[str]]
    """The commits a merge brought in (none for a squash merge)."""


class PostSource(Protocol):
    """What :func:`read_discussion` asks of a post source (the citation half of
    :class:`ratified_rdf.sources.base.Source`): its citations, resolved, and its problems."""

    @property
    def name(self) -> str:
        """The source's name in the manifest, and the prefix of its post keys."""
        ...

    def citations(self, read: Any, resolver: CitationResolver) -> list[CitationRecord]:
        """Every citation in the posts ``read`` holds, resolved by ``resolver``."""
        ...

    def problems(self, read: Any) -> tuple[str, ...]:
        """The records ``read`` reported and skipped, as sentences."""
        ...


def read_discussion(
    context: ReadContext,
    people: PeopleTable,
    git: GitEvidence,
    posts: Sequence[tuple[PostSource, Any]] = (),
) -> DiscussionRecords:
    """Resolve every post's citations and every commit's touched headings.

    ``posts`` is each post source with what it read, in the registry's order: each resolves
    its own posts' citations through the one resolver, so a post means the same section
    whichever source holds it.
    """
    windows = revision_windows(context.manifest, context.spec, context.facts)
    resolver = CitationResolver(context.manifest, context.spec, windows)
    citations = [c for source, read in posts for c in source.citations(read, resolver)]
    records = DiscussionRecords(
        windows=tuple(windows),
        commits=(),
        citations=tuple(citations),
        people=people,
        posts={source.name: read for source, read in posts},
        problems=tuple(p for source, read in posts for p in source.problems(read)),
    )
    commits = _commit_evidence(
        resolver,
        records.archive,
        git.commits,
        context.landing,
        git.places,
        context.commit_map,
        git.branch_commits,
    )
    return records.model_copy(update={"commits": tuple(commits)})


def review_line_citations(
    resolver: CitationResolver, archive: GitHubArchive, lines: Mapping[str, tuple[ChangePlace, str]]
) -> list[CitationRecord]:
    """A review comment on a line is discussion of the section that line sits in, in the
    revision the reviewed change landed in (``lines``: post key → where, which revision).
    It was written while that text was still changing when it came before the RFC was
    published: a change to it was under review."""
    created = {
        github_post_key(t.number, p.index): p.created for t in archive.threads for p in t.posts
    }
    records: list[CitationRecord] = []
    keys: dict[str, dict[SectionKey, int]] = {}
    ends: dict[str, dict[tuple[bool, tuple[str, ...]], list[int]]] = {}
    for post, (place, document_name) in lines.items():
        document = resolver.documents.get(document_name)
        if document is None or post not in created:
            continue
        if document_name not in keys:
            keys[document_name] = section_keys(document.sections)
            ends[document_name] = _path_ends(keys[document_name])
        # As for commits: by its place in the outline, else a path that lost one renamed
        # ancestor or the longest unique end of its path, never a heading that repeats.
        position = keys[document_name].get(place.key)
        if position is None:
            position = _by_path_end(ends[document_name], place.key)
        text = f"a review comment on a line of {place.file} (section {place.heading})"
        # Offset -1: not in the text (a text citation at offset 0 of the same post is another).
        base: _Where = {"post": post, "start": -1, "end": -1, "text": text}
        if position is None:
            records.append(
                CitationRecord(
                    **base,
                    rule=None,
                    target=None,
                    unresolved=f"its line's section ({place.heading}) is not in {document_name}",
                )
            )
            continue
        final_position, _similarity, final_rfc = resolver.alignment.get(
            (document_name, position), (None, None, "")
        )
        published = resolver.published_end(document_name)
        when = created[post]
        records.append(
            CitationRecord(
                **base,
                rule="review-line",
                target=SectionRef(document=document_name, position=position),
                final=SectionRef(document=final_rfc, position=final_position)
                if final_position is not None
                else None,
                # A comment on a change under review was made while the text was changing
                # (the change was pending), even when that change made it final.
                while_changing=published is not None and when < published,
                about_published=published is not None and when >= published,
            )
        )
    return records


class Landing(Protocol):
    """Which document text a commit's change to a file landed in (a revision's name, or an
    RFC's), or None when that file is no document the manifest follows."""

    def __call__(self, commit: str, file: str) -> str | None:
        """The revision or RFC text ``commit``'s change to ``file`` landed in."""
        ...


def _path_ends(
    keys: Mapping[SectionKey, int],
) -> dict[tuple[bool, tuple[str, ...]], list[int]]:
    """The index :func:`_by_path_end` looks a section up in: per side of the text, every end
    of every section's heading path, and every path with one ancestor left open."""
    ends: dict[tuple[bool, tuple[str, ...]], list[int]] = defaultdict(list)
    for (appendix, path, _rank), position in keys.items():
        for length in range(1, len(path) + 1):
            ends[(appendix, path[-length:])].append(position)
        for renamed in _renamable(path):
            ends[(appendix, _masked(path, renamed))].append(position)
        ends[(appendix, (_WHOLE, *path))].append(position)
    return ends


_WHOLE = "\1"
"""Marks a whole path in :func:`_path_ends` (no heading holds it), apart from path ends."""


def _renamable(path: tuple[str, ...]) -> range:
    """The ancestors of a path that may have been renamed: any one of them, so long as one
    other heading above the section stays to match on (a depth-two path would be matched by
    its own heading alone)."""
    return range(len(path) - 1) if len(path) >= 3 else range(0)


def _masked(path: tuple[str, ...], renamed: int) -> tuple[str, ...]:
    """A heading path with the heading at ``renamed`` (an ancestor) left open."""
    return (*path[:renamed], "\0", *path[renamed + 1 :])


def _by_path_end(
    ends: Mapping[tuple[bool, tuple[str, ...]], list[int]], key: SectionKey
) -> int | None:
    """The section ``key`` names in a text where its path is not found, on the same side of
    the text: the one section whose path differs from it in one ancestor's heading only, else
    the longest end of its path that only one section has (``("setting the alarm",
    "pseudocode")`` when "Pseudocode" alone repeats), else the one section with its whole path
    on the other side of ``--- back``, else None."""
    appendix, path, _rank = key
    # One ancestor renamed, the rest of the path as it was ("Algorithm Details" became
    # "Pseudocode" above "Constants of interest", a heading Congestion Control has too).
    renamed_one = {
        p for renamed in _renamable(path) for p in ends.get((appendix, _masked(path, renamed)), [])
    }
    if len(renamed_one) == 1:
        return renamed_one.pop()
    for length in range(len(path), 0, -1):
        found = ends.get((appendix, path[-length:]), [])
        if len(found) == 1:
            return found[0]
        if found:
            return None  # a shorter end is shared by these and more
    # Moved across "--- back" (Contributors, from the body to an appendix): the whole path,
    # on the other side, when one section there has it.
    moved = ends.get((not appendix, (_WHOLE, *path)), [])
    return moved[0] if len(moved) == 1 else None


def _commit_evidence(
    resolver: CitationResolver,
    archive: GitHubArchive,
    commits: Sequence[CommitRecord],
    landed: Landing,
    places: Mapping[str, Sequence[ChangePlace]],
    public_ids: Mapping[str, str],
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
    keys: dict[str, dict[SectionKey, int]] = {}
    headings: dict[str, dict[str, list[int]]] = {}
    sides: dict[str, dict[tuple[bool, tuple[str, ...]], list[int]]] = {}
    for commit in commits:
        files = dict.fromkeys(
            [*(c.file for c in commit.changes), *(t.file for t in commit.touched)]
        )
        landed_in: str | None = None
        landed_all: list[str] = []
        changing: list[SectionRef] = []
        later: list[SectionRef] = []
        unresolved: list[str] = []
        for file in files:
            document_name = landed(commit.commit, file)
            document = resolver.documents.get(document_name or "")
            file_places = [p for p in places.get(commit.commit, ()) if p.file == file]
            file_headings = [t.heading for t in commit.touched if t.file == file]
            if document is None or document_name is None:
                unresolved += [p.heading for p in file_places] or file_headings
                continue
            landed_in = landed_in or document_name
            landed_all.append(document_name)
            if document_name not in keys:
                keys[document_name] = section_keys(document.sections)
                by_heading: dict[str, list[int]] = defaultdict(list)
                for section in document.sections:
                    by_heading[normalise_heading(section.heading)].append(section.position)
                headings[document_name] = by_heading
                sides[document_name] = _path_ends(keys[document_name])
            found: list[int] = []
            if file_places:
                # By position: the section the change sat in at that commit, found in the
                # landed text by its place in the outline (heading path and rank), never by its
                # heading alone; for a section whose parent was renamed in between, the longest
                # end of its heading path that is unique on its side (body or appendix) of the
                # landed text.
                for place in file_places:
                    position = keys[document_name].get(place.key)
                    if position is None:
                        position = _by_path_end(sides[document_name], place.key)
                    if position is None:
                        unresolved.append(place.heading)
                    else:
                        found.append(position)
            else:
                # A file whose outline could not be read: git's heading names, where unique.
                for heading in file_headings:
                    same = headings[document_name].get(normalise_heading(heading), [])
                    if len(same) == 1:
                        found.append(same[0])
                    else:
                        unresolved.append(heading)
            refs = [SectionRef(document=document_name, position=p) for p in found]
            published = resolver.published_end(document_name)
            if published is not None and commit.committed_at >= published:
                later += refs
            else:
                changing += refs
        evidence.append(
            CommitEvidence(
                commit=commit,
                public_commit=public_ids.get(commit.commit),
                landed_in=landed_in,
                landed=tuple(dict.fromkeys(landed_all)),
                sections=tuple(dict.fromkeys(changing)),
                after_publication=tuple(dict.fromkeys(later)),
                unresolved_headings=tuple(dict.fromkeys(unresolved)),
                pull_requests=tuple(sorted(pulls.get(commit.commit, ()))),
            )
        )
    return evidence
