"""The answer object every surface returns: verdict, summary, typed results, evidence, queries.

Field names are a public contract: ``ratified ask --json`` prints this model, and other tools
script against ``verdict``, ``summary``, ``results``, ``evidence`` (``iri``, ``label``, ``url``)
and ``queries`` (``name``, ``sparql``, ``params``, ``rows``, ``engine_ms``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ratified_rdf.queries import QueryRun


class Intent(StrEnum):
    """What a question asks for: one per registered question type, and the two fallbacks."""

    SECTION_BECAME = "section_became"
    SECTION_HISTORY = "section_history"
    SECTION_AT = "section_at"
    SECTION_DIFF = "section_diff"
    DISCUSSION = "discussion"
    WHO_TO_ASK = "who_to_ask"
    EXPERTS = "experts"
    THREAD = "thread"
    THREADS = "threads"
    PERSON = "person"
    PERSON_SECTION = "person_section"
    COUNT = "count"
    DOCUMENT = "document"
    WHERE_IS = "where_is"
    REVISION_CHAIN = "revision_chain"
    REVISIONS = "revisions"
    HOLDINGS = "holdings"
    NOT_HELD = "not_held"
    ENTITY = "entity"
    OUT_OF_SCOPE = "out_of_scope"


class Verdict(StrEnum):
    """What kind of answer this is."""

    ANSWERED = "answered"
    UNKNOWN = "unknown"
    """The graph doesn't know: a traversal came back empty or the question is out of scope."""
    AMBIGUOUS = "ambiguous"
    """More than one reading fits; the alternatives say which."""


class Evidence(BaseModel):
    """One node on the answer's path, with a link a stranger can open."""

    model_config = ConfigDict(frozen=True)

    iri: str
    label: str
    url: str | None
    role: str
    """What the node is on the path: revision, section, rfc, rfc-section, commit, draft."""


class Alternative(BaseModel):
    """Another reading of the question, as a question that can be asked as it is."""

    model_config = ConfigDict(frozen=True)

    question: str
    reason: str


class ChainStep(BaseModel):
    """One step of a revision chain."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["chain_step"] = "chain_step"
    label: str
    iri: str
    url: str


class SectionFate(BaseModel):
    """What a section of a revision became in the final RFC."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["section_fate"] = "section_fate"
    revision: str
    section_number: str
    heading: str
    rfc: str
    final_section_number: str | None
    final_heading: str | None
    similarity: float | None
    still_changing: bool | None
    rule: str


class HistoryEntry(BaseModel):
    """How one revision (or older RFC) numbered and titled a section, and how close it was."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["history_entry"] = "history_entry"
    document: str
    revision_number: str | None
    date: str | None
    section_number: str | None
    heading: str
    similarity: float
    still_changing: bool
    rule: str
    url: str


class SectionText(BaseModel):
    """A section's text as it stood in one revision (or RFC), and from when to when that
    document was the current one."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["section_text"] = "section_text"
    document: str
    section_number: str | None
    heading: str
    text: str
    current_from: str
    current_until: str | None
    """When the next document in the chain appeared; None while it is still the latest."""
    url: str


class Holding(BaseModel):
    """How many of one kind of thing the graph holds."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["holding"] = "holding"
    what: str
    count: int
    names: list[str] = Field(default_factory=list)


class RevisionEntry(BaseModel):
    """A revision of a draft."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["revision"] = "revision"
    label: str
    revision_number: str
    date: str
    url: str
    became: str | None = None


class DiscussionPost(BaseModel):
    """A post that referred to the section, through the revision it meant."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["post"] = "post"
    document: str
    """The revision (or RFC) whose section the post referred to."""
    section_number: str | None
    thread_number: int | None
    """The issue or pull request number; None for a mail thread."""
    thread_title: str
    thread_url: str
    post_url: str
    post_kind: str
    author: str | None
    created: str
    cited_text: str
    rule: str
    while_changing: bool
    about_published: bool


class CommitChange(BaseModel):
    """A commit whose diff touched the section, in the revision it landed in."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["commit"] = "commit"
    iri: str
    document: str
    commit_url: str | None
    """Set for the commits a card lists (the most recent); None for those it only counts."""
    subject: str | None
    author: str | None
    date: str
    pull_request: int | None = None
    pull_request_title: str | None = None
    pull_request_url: str | None = None


EvidenceKind = Literal["cited it", "changed it", "commented on a pull request that changed it"]
"""The kinds of evidence a person's entry on a why card can rest on."""


class PersonActivity(BaseModel):
    """Someone who wrote posts or commits about the section while it was changing."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["person"] = "person"
    name: str
    posts: int
    commits: int
    pull_requests_discussed: int = 0
    """Pull requests that changed the section in whose threads they wrote."""
    rests_on: tuple[EvidenceKind, ...] = ()
    """What their entry rests on: ``cited it`` (posts referring to the section), ``changed
    it`` (commits), ``commented on a pull request that changed it``."""


class Expert(BaseModel):
    """Someone to ask about a section, and why the graph suggests them."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["expert"] = "expert"
    name: str
    iri: str
    role: Literal["participant", "editor", "chair", "area director"]
    reason: str
    posts: int = 0
    commits: int = 0
    pagerank: float | None = None
    betweenness: float | None = None


class ThreadInfo(BaseModel):
    """An issue or pull request."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["thread"] = "thread"
    number: int
    title: str
    state: str
    url: str
    author: str | None
    created: str
    """When it was opened; empty for a pull request known only from its merge commit."""
    is_pull_request: bool
    merged: str | None = None
    merged_by: str | None = None
    """The login that merged a pull request, when the GitHub archive records it."""
    merge_commit: str | None = None
    """The merge commit's page, for a pull request read from the history alone."""


class SectionActivity(BaseModel):
    """A section someone (or something) touched, with how much."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["section_activity"] = "section_activity"
    section: str
    url: str
    posts: int = 0
    commits: int = 0
    pagerank: float | None = None


class DraftedQuestion(BaseModel):
    """A question to the people a card names, with its sources: text only, never sent."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["drafted_question"] = "drafted_question"
    to: list[str]
    text: str


class Count(BaseModel):
    """The number a counting question asked for; the list behind it follows in results."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["count"] = "count"
    what: str
    count: int


class DocumentFacts(BaseModel):
    """What the graph holds about one draft or RFC as a document: what it became or replaced,
    when it was published, who edited it and its revisions."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["document"] = "document"
    name: str
    """``draft-ietf-tls-tls13`` or ``RFC 8446``."""
    title: str | None
    url: str
    is_rfc: bool
    rfc_number: int | None
    """The RFC it is, or the RFC the draft became (None for a draft that became none)."""
    published: str | None
    """That RFC's publication month, ``2018-08``."""
    editors: list[str] = Field(default_factory=list)
    """The names on the byline of the draft's last revision (for an RFC: of the last revision
    of the draft that became it)."""
    bylines: dict[str, list[str]] = Field(default_factory=dict)
    """Each revision's byline, by revision name (editors change between revisions)."""
    revisions: int = 0
    first_revision: str | None = None
    first_date: str | None = None
    last_revision: str | None = None
    last_date: str | None = None
    replaces: list[str] = Field(default_factory=list)
    replaced_by: list[str] = Field(default_factory=list)
    obsoletes: list[str] = Field(default_factory=list)
    obsoleted_by: list[str] = Field(default_factory=list)
    drafts: list[str] = Field(default_factory=list)
    """For an RFC: the drafts that became it."""


class SectionDiff(BaseModel):
    """How one section's text differs between two revisions (the older one's section followed
    to the newer one by heading, as the history card follows it)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["section_diff"] = "section_diff"
    older: str
    newer: str
    older_number: str | None
    newer_number: str | None
    heading: str
    newer_heading: str | None
    similarity: float | None
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    older_url: str
    newer_url: str | None


Result = Annotated[
    ChainStep
    | SectionFate
    | HistoryEntry
    | SectionText
    | Holding
    | RevisionEntry
    | DiscussionPost
    | CommitChange
    | PersonActivity
    | Expert
    | ThreadInfo
    | SectionActivity
    | DraftedQuestion
    | Count
    | DocumentFacts
    | SectionDiff,
    Field(discriminator="kind"),
]


TimelineMarkKind = Literal["post", "review", "message", "commit"]
"""What a mark on a timeline stands for: an issue or pull request post (its opening or a
comment), a review or review comment, a mail message, or a commit."""


class TimelineRevision(BaseModel):
    """One revision (or older RFC) on a section's timeline: a tick, and a step of the
    similarity line. Everything here is one of the card's :class:`HistoryEntry` results."""

    model_config = ConfigDict(frozen=True)

    document: str
    revision_number: str | None
    date: str
    """As the card's result has it (ISO 8601, with the revision's own offset)."""
    section_number: str | None
    heading: str
    similarity: float
    settled: bool
    """At or above the settled line: the card did not count it as still changing."""
    renumbered: bool
    """Its section number differs from the revision before it on the card."""
    renamed: bool
    """Its heading differs from the revision before it on the card."""
    through: str | None = None
    """The older RFC section its similarity is measured against, when the card reached this
    revision through an older RFC (its similarity is to that text, not the final one)."""
    url: str


class TimelineMark(BaseModel):
    """A post, review comment, mail message or commit on its date, linked to its source: one
    of the card's :class:`DiscussionPost` or :class:`CommitChange` results."""

    model_config = ConfigDict(frozen=True)

    kind: TimelineMarkKind
    date: str
    url: str
    label: str
    """What it is, in words: who, what and where (the link's accessible name)."""
    document: str
    """The revision (or RFC) it referred to or landed in."""


class TimelinePublication(BaseModel):
    """The publication of the RFC the section ended in: the timeline's last mark."""

    model_config = ConfigDict(frozen=True)

    document: str
    """``RFC 8446``."""
    date: str
    """The publication month as the card has it, ``2018-08``."""
    url: str


class Timeline(BaseModel):
    """A section's life as one series: its revisions (with their similarity to the final
    text), the posts and commits on their dates, and the publication. Computed from the card's
    results alone (:mod:`ratified_rdf.answers.timeline`), so any client can draw it and
    everything drawn is on the card."""

    model_config = ConfigDict(frozen=True)

    section: str
    """What the timeline is of: ``RFC 8446 §4.2.10 Early Data Indication``."""
    start: str
    """The earliest date drawn (the first revision, or an earlier commit)."""
    end: str
    """The last date drawn: the publication, or the latest revision or mark."""
    settled_at: float
    """The similarity at and above which the text counts as settled (the 98% line)."""
    settled: str | None
    """The revision from which the text stayed settled to the end; None if it never did
    before the RFC."""
    revisions: list[TimelineRevision] = Field(default_factory=list)
    """In the card's order (along the chain), which is by date but for a revision dated out
    of turn."""
    marks: list[TimelineMark] = Field(default_factory=list)
    """By date."""
    publication: TimelinePublication | None = None
    """None when the card does not carry the RFC's publication date."""
    not_drawn: list[str] = Field(default_factory=list)
    """What the card holds that the picture leaves out, and why, each in a sentence."""
    description: str
    """The picture in words: its text alternative."""


TrustStateName = Literal["derived", "ratified", "disputed", "withdrawn"]
"""A card's or claim's trust state; derived unless a person's review says otherwise."""


class Trust(BaseModel):
    """How far a card may be relied on, and on whose word."""

    model_config = ConfigDict(frozen=True)

    state: TrustStateName
    card: str
    """The card's IRI: what reviews of it point at."""
    content_hash: str
    """SHA-256 of the card's canonical content, as it is now."""
    reviewer: str | None = None
    reviewed_at: str | None = None
    review: str | None = None
    """The latest review's IRI."""
    note: str | None = None
    stale: bool = False
    """A review exists, but of content that has changed since: the state fell back to
    derived, and ``reviewer`` says who had reviewed the earlier content."""
    reviewed_state: TrustStateName | None = None
    """What the latest review said, stale or not."""

    def state_word(self) -> str:
        """What the latest review said (ratified, disputed, withdrawn), or derived."""
        return self.reviewed_state or "derived"


class Answer(BaseModel):
    """A complete answer: what was asked, the verdict, and everything needed to check it."""

    model_config = ConfigDict(frozen=True)

    question: str
    intent: Intent | str = Field(union_mode="left_to_right")
    """The question type that drew the card: an :class:`Intent`, or the name of a type
    registered outside the package."""
    verdict: Verdict
    summary: str
    results: list[Result] = Field(default_factory=list)
    evidence: list[Evidence] = Field(default_factory=list)
    queries: list[QueryRun] = Field(default_factory=list)
    alternatives: list[Alternative] = Field(default_factory=list)
    note: str | None = None
    """A caveat on how to read the answer (connection, not causation)."""
    trust: Trust | None = None
    """The card's trust state, from its latest human review."""
    withheld: str | None = None
    """Set only under the acknowledge redaction policy, when more exists above the reader's
    clearance; it never says how much, how sure, or where."""
    timeline: Timeline | None = None
    """A section's history or why card: the same results as one series to draw
    (:class:`Timeline`). Derived from ``results``, so it is not part of the content hash."""

    def to_dict(self) -> dict[str, Any]:
        """The card as plain dicts, lists, strings, numbers and None, as ``ratified ask
        --json`` prints it: ``json.dumps(card.to_dict())`` works (the standard library's json
        knows none of pydantic's models), and ``Answer.model_validate`` reads it back."""
        return self.model_dump(mode="json")
