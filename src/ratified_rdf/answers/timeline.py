"""A section's life as one series: a card's results, as a :class:`Timeline` any client can draw.

Pure: the timeline is a function of the card's results and evidence, nothing else, so it runs
no query and shows nothing the card does not list. Revisions come from the card's
:class:`HistoryEntry` results, marks from its :class:`DiscussionPost` and :class:`CommitChange`
results, and the publication from a :class:`DocumentFacts` result for the RFC, when the card
has one. A card that holds only some of these gets a timeline of what it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache

from ratified_rdf.answers.models import (
    Answer,
    CommitChange,
    DiscussionPost,
    DocumentFacts,
    HistoryEntry,
    Result,
    Timeline,
    TimelineMark,
    TimelineMarkKind,
    TimelinePublication,
    TimelineRevision,
    Verdict,
)
from ratified_rdf.answers.wording import plural
from ratified_rdf.records.alignment import STILL_CHANGING_BELOW

_MARK_KINDS: dict[str, TimelineMarkKind] = {
    "opening": "post",
    "comment": "post",
    "review": "review",
    "review-comment": "review",
    "message": "message",
}
"""A post's kind on the card → its mark's kind; a kind not listed here is drawn as a post."""

_THROUGH = ", through "
"""How a history entry's rule says it was reached through an older RFC (sections.py)."""


@lru_cache(maxsize=8192)
def moment(text: str) -> datetime | None:
    """A card's date as an aware UTC datetime: a full ISO 8601 date-time (``Z`` or an offset),
    a day, or a month (``2018-08``, the first of it); None for text that is none of these."""
    text = text.strip()
    if len(text) == 7 and text[4] == "-":  # a month, as an RFC's publication is given
        text += "-01"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:  # a bare day, or a date-time without an offset: read as UTC
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def timeline_of(answer: Answer) -> Timeline | None:
    """The card's results as a :class:`Timeline`, or None when it has nothing dated to draw
    (a card that is not answered, or holds no revision, post or commit with a date)."""
    if answer.verdict is not Verdict.ANSWERED:
        return None
    not_drawn: list[str] = []
    revisions = _revisions(answer.results, not_drawn)
    marks = _marks(answer.results, not_drawn)
    if not revisions and not marks:
        return None
    publication = _publication(answer)
    dated = [r.date for r in revisions] + [m.date for m in marks]
    dated += [publication.date] if publication else []
    ordered = sorted(dated, key=_at)
    settled = _settled(revisions)
    section = _section_title(answer)
    return Timeline(
        section=section,
        start=ordered[0],
        end=ordered[-1],
        settled_at=STILL_CHANGING_BELOW,
        settled=settled,
        revisions=revisions,
        marks=marks,
        publication=publication,
        not_drawn=not_drawn,
        description=_description(section, ordered, revisions, marks, publication, settled),
    )


def with_timeline(answer: Answer) -> Answer:
    """The card with its :class:`Timeline` attached (unchanged if there is nothing to draw)."""
    drawn = timeline_of(answer)
    return answer if drawn is None else answer.model_copy(update={"timeline": drawn})


def _at(text: str) -> datetime:
    # Only dates that parsed reach the timeline (_revisions and _marks check), so this holds.
    parsed = moment(text)
    assert parsed is not None, text
    return parsed


def _revisions(results: Sequence[Result], not_drawn: list[str]) -> list[TimelineRevision]:
    entries = [r for r in results if isinstance(r, HistoryEntry)]
    undated = [e.document for e in entries if not e.date or moment(e.date) is None]
    if undated:
        not_drawn.append(
            f"{plural(len(undated), 'earlier text')} without a date on the card "
            f"({', '.join(undated)}) cannot be placed in time."
        )
    drawn: list[TimelineRevision] = []
    before: HistoryEntry | None = None
    for entry in entries:
        if not entry.date or moment(entry.date) is None:
            continue
        through = entry.rule.split(_THROUGH, 1)[1] if _THROUGH in entry.rule else None
        drawn.append(
            TimelineRevision(
                document=entry.document,
                revision_number=entry.revision_number,
                date=entry.date,
                section_number=entry.section_number,
                heading=entry.heading,
                similarity=entry.similarity,
                settled=not entry.still_changing,
                renumbered=before is not None and entry.section_number != before.section_number,
                renamed=before is not None and entry.heading != before.heading,
                through=through,
                url=entry.url,
            )
        )
        before = entry
    return drawn


def _marks(results: Sequence[Result], not_drawn: list[str]) -> list[TimelineMark]:
    marks: list[TimelineMark] = []
    unlinked = 0
    for result in results:
        if isinstance(result, DiscussionPost) and moment(result.created) is not None:
            kind = _MARK_KINDS.get(result.post_kind, "post")
            thread = f"#{result.thread_number} " if result.thread_number else ""
            marks.append(
                TimelineMark(
                    kind=kind,
                    date=result.created,
                    url=result.post_url,
                    label=(
                        f"{result.post_kind or 'post'} by {result.author or 'someone unnamed'} "
                        f"on {result.created[:10]} in {thread}{result.thread_title}, "
                        f"about {result.document}"
                        + (f" §{result.section_number}" if result.section_number else "")
                    ),
                    document=result.document,
                )
            )
        elif isinstance(result, CommitChange) and moment(result.date) is not None:
            if not result.commit_url:
                unlinked += 1  # counted by the card, not listed: no link to draw it with
                continue
            via = f" via pull request #{result.pull_request}" if result.pull_request else ""
            marks.append(
                TimelineMark(
                    kind="commit",
                    date=result.date,
                    url=result.commit_url,
                    label=(
                        f"commit “{result.subject or result.iri.rsplit('/', 1)[-1][:12]}” by "
                        f"{result.author or 'someone unnamed'} on {result.date[:10]}{via}, "
                        f"in {result.document}"
                    ),
                    document=result.document,
                )
            )
    if unlinked:
        one = unlinked == 1
        not_drawn.append(
            f"{plural(unlinked, 'commit')} the card counts but does not list "
            f"{'has' if one else 'have'} no link, so {'it is' if one else 'they are'} not drawn."
        )
    marks.sort(key=lambda m: _at(m.date))
    return marks


def _publication(answer: Answer) -> TimelinePublication | None:
    """The RFC's publication, from the card's own facts about the RFC (if it has them)."""
    for result in answer.results:
        if (
            isinstance(result, DocumentFacts)
            and result.is_rfc
            and result.published
            and moment(result.published) is not None
        ):
            return TimelinePublication(document=result.name, date=result.published, url=result.url)
    return None


def _settled(revisions: Sequence[TimelineRevision]) -> str | None:
    """The revision from which every later one (along the card's chain) was settled."""
    direct = [r for r in revisions if r.through is None]
    settled: str | None = None
    for revision in direct:
        if not revision.settled:
            settled = None
        elif settled is None:
            settled = revision.document
    return settled


def _section_title(answer: Answer) -> str:
    for step in answer.evidence:
        if step.role == "rfc-section":
            return step.label
    return answer.evidence[0].label if answer.evidence else answer.question


def _description(
    section: str,
    ordered: Sequence[str],
    revisions: Sequence[TimelineRevision],
    marks: Sequence[TimelineMark],
    publication: TimelinePublication | None,
    settled: str | None,
) -> str:
    """The picture in a few sentences: what a person looking at it would read off it."""
    parts = [f"Timeline of {section}, {ordered[0][:10]} to {ordered[-1][:10]}."]
    if revisions:
        first, last = revisions[0], revisions[-1]
        renumbered = sum(r.renumbered for r in revisions)
        renamed = sum(r.renamed for r in revisions)
        numbers = [r.section_number or r.heading for r in revisions]
        moves = []
        if renumbered:
            moves.append(f"renumbered {plural(renumbered, 'time')} ({' → '.join(_runs(numbers))})")
        if renamed:
            moves.append(f"renamed {plural(renamed, 'time')}")
        parts.append(
            f"{plural(len(revisions), 'revision')}, from {first.document} to {last.document}"
            + (f", {' and '.join(moves)}" if moves else "")
            + "."
        )
        parts.append(
            f"Similarity to the final text went from {first.similarity:.0%} to "
            f"{last.similarity:.0%}; "
            + (
                f"it stayed at or above {STILL_CHANGING_BELOW:.0%} from {settled}."
                if settled
                else f"it was under {STILL_CHANGING_BELOW:.0%} in every revision shown."
            )
        )
    counts = [
        plural(sum(m.kind == kind for m in marks), noun)
        for kind, noun in (
            ("post", "post"),
            ("review", "review comment"),
            ("message", "mail message"),
            ("commit", "commit"),
        )
        if any(m.kind == kind for m in marks)
    ]
    parts.append(
        f"Marked on their dates: {', '.join(counts)}."
        if counts
        else "The card lists no posts or commits."
    )
    parts.append(
        f"{publication.document} was published in {publication.date}."
        if publication
        else "The card does not give the RFC's publication date."
    )
    return " ".join(parts)


def _runs(values: Sequence[str]) -> list[str]:
    """``[a, a, b, a]`` → ``[a, b, a]``: each value once per run."""
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]
