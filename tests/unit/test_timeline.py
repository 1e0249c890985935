"""A section's timeline, the series: computed from the card's results alone, on fictional cards
and on the pigeon brain's history and why cards."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from ratified_rdf import Brain, Verdict
from ratified_rdf.answers import asking
from ratified_rdf.answers.models import (
    Answer,
    CommitChange,
    DiscussionPost,
    DocumentFacts,
    Evidence,
    HistoryEntry,
    Intent,
    Timeline,
)
from ratified_rdf.answers.timeline import moment, timeline_of, with_timeline
from ratified_rdf.answers.trust import content_hash
from ratified_rdf.answers.wording import plural
from ratified_rdf.records.alignment import STILL_CHANGING_BELOW
from ratified_rdf.records.manifest import load_manifest
from tests.pigeon import MANIFEST, make_pigeon_repo

SECTION = "RFC 9999 §3.1 Take-off"


def _entry(
    number: str, section: str, heading: str, date: str | None, similarity: float
) -> HistoryEntry:
    return HistoryEntry(
        document=f"draft-example-pigeon-{number}",
        revision_number=number,
        date=date,
        section_number=section,
        heading=heading,
        similarity=similarity,
        still_changing=similarity < STILL_CHANGING_BELOW,
        rule="same-heading",
        url=f"https://datatracker.ietf.org/doc/html/draft-example-pigeon-{number}#section-{section}",
    )


def _post(kind: str, created: str, n: int) -> DiscussionPost:
    return DiscussionPost(
        document="draft-example-pigeon-01",
        section_number="3.1",
        thread_number=n,
        thread_title=f"Fictional thread {n}",
        thread_url=f"https://github.com/example/pigeon-spec/issues/{n}",
        post_url=f"https://github.com/example/pigeon-spec/issues/{n}#post-{kind}",
        post_kind=kind,
        author="Ada Example",
        created=created,
        cited_text="section 3.1",
        rule="current-revision",
        while_changing=True,
        about_published=False,
    )


def _commit(sha: str, date: str, listed: bool = True) -> CommitChange:
    return CommitChange(
        iri=f"https://w3id.org/ratified-rdf/id/repo/pigeon/commit/{sha}",
        document="draft-example-pigeon-02",
        commit_url=f"https://github.com/example/pigeon-spec/commit/{sha}" if listed else None,
        subject=f"Change {sha}" if listed else None,
        author="Bob Example",
        date=date,
    )


HISTORY = [
    _entry("00", "2.1", "Take-off", "2029-01-10T10:00:00+00:00", 0.41),
    _entry("01", "2.1", "Taking off", "2029-06-01T03:00:00-07:00", 0.99),
    _entry("02", "3.1", "Taking off", "2029-08-20T10:00:00Z", 0.90),
    _entry("03", "3.1", "Take-off", "2029-11-20T10:00:00Z", 0.985),
    _entry("04", "3.1", "Take-off", "2030-01-05T10:00:00Z", 1.0),
]
DISCUSSION = [
    _post("opening", "2029-02-01T09:00:00Z", 1),
    _post("review-comment", "2029-03-01T12:00:00Z", 2),
    _post("message", "2029-02-05T10:00:00Z", 3),
    _commit("aaa111", "2029-01-09T10:00:00Z"),
    _commit("bbb222", "2029-09-01T09:00:00-05:00"),
    _commit("ccc333", "2029-04-01T09:00:00Z", listed=False),
]
PUBLISHED = DocumentFacts(
    name="RFC 9999",
    title="The Pigeon Transport Protocol",
    url="https://www.rfc-editor.org/rfc/rfc9999",
    is_rfc=True,
    rfc_number=9999,
    published="2030-03",
)
EVIDENCE = [
    Evidence(
        iri="https://w3id.org/ratified-rdf/id/doc/rfc9999", label="RFC 9999", url=None, role="rfc"
    ),
    Evidence(
        iri="https://w3id.org/ratified-rdf/id/doc/rfc9999/section/3.1",
        label=SECTION,
        url="https://www.rfc-editor.org/rfc/rfc9999#section-3.1",
        role="rfc-section",
    ),
]


def _card(
    results: list, intent: str = "section_history", verdict: Verdict = Verdict.ANSWERED
) -> Answer:
    return Answer(
        question="history of RFC 9999 section 3.1",
        intent=intent,
        verdict=verdict,
        summary="A fictional card.",
        results=results,
        evidence=EVIDENCE,
    )


def _drawn(results: list) -> Timeline:
    timeline = timeline_of(_card(results))
    assert timeline is not None
    return timeline


def test_each_dated_revision_is_a_step_with_its_renumbering_and_renaming() -> None:
    timeline = _drawn(HISTORY)
    assert [r.document for r in timeline.revisions] == [e.document for e in HISTORY]
    assert [r.similarity for r in timeline.revisions] == [e.similarity for e in HISTORY]
    for i, revision in enumerate(timeline.revisions):
        before = HISTORY[i - 1] if i else None
        entry = HISTORY[i]
        assert revision.renumbered is (
            before is not None and before.section_number != entry.section_number
        )
        assert revision.renamed is (before is not None and before.heading != entry.heading)
        assert revision.settled is not entry.still_changing
        assert revision.url == entry.url and revision.date == entry.date
    assert timeline.section == SECTION
    assert timeline.settled_at == STILL_CHANGING_BELOW


def test_the_text_settled_after_the_last_revision_still_changing() -> None:
    # -01 was at 99% but -02 fell back under the line: it settled for good only from -03.
    timeline = _drawn(HISTORY)
    last_changing = max(i for i, e in enumerate(HISTORY) if e.still_changing)
    assert timeline.settled == HISTORY[last_changing + 1].document
    still = [e.model_copy(update={"still_changing": True}) for e in HISTORY]
    assert _drawn(still).settled is None
    done = [e.model_copy(update={"still_changing": False}) for e in HISTORY]
    assert _drawn(done).settled == HISTORY[0].document


def test_marks_are_the_cards_posts_and_listed_commits_by_date() -> None:
    timeline = _drawn([*HISTORY, *DISCUSSION])
    posts = [r for r in DISCUSSION if isinstance(r, DiscussionPost)]
    listed = [r for r in DISCUSSION if isinstance(r, CommitChange) and r.commit_url]
    assert sorted(m.url for m in timeline.marks) == sorted(
        [p.post_url for p in posts] + [c.commit_url or "" for c in listed]
    )
    moments = [moment(m.date) for m in timeline.marks]
    assert moments == sorted(moments)  # type: ignore[type-var]
    kinds = {m.url: m.kind for m in timeline.marks}
    by_post = {"opening": "post", "review-comment": "review", "message": "message"}
    for post in posts:
        assert kinds[post.post_url] == by_post[post.post_kind]
    assert all(kinds[c.commit_url or ""] == "commit" for c in listed)
    # The commit the card only counts has no link: it is said, not drawn.
    unlisted = [r for r in DISCUSSION if isinstance(r, CommitChange) and not r.commit_url]
    assert len(timeline.not_drawn) == 1 and f"{len(unlisted)} commit" in timeline.not_drawn[0]


def test_the_axis_runs_from_the_earliest_thing_to_the_publication() -> None:
    timeline = _drawn([*HISTORY, *DISCUSSION, PUBLISHED])
    # A commit before the first revision starts the axis; the publication ends it.
    dated = [e.date for e in HISTORY] + [
        r.created if isinstance(r, DiscussionPost) else r.date
        for r in DISCUSSION
        if isinstance(r, DiscussionPost) or r.commit_url
    ]
    assert moment(timeline.start) == min(moment(d) for d in dated if d)  # type: ignore[type-var]
    assert timeline.publication is not None
    assert timeline.publication.date == PUBLISHED.published
    assert timeline.publication.url == PUBLISHED.url
    assert timeline.end == PUBLISHED.published
    assert f"published in {PUBLISHED.published}" in timeline.description


def test_without_a_publication_date_the_timeline_says_so() -> None:
    timeline = _drawn(HISTORY)
    assert timeline.publication is None
    assert timeline.end == HISTORY[-1].date
    assert "does not give the RFC's publication date" in timeline.description


def test_a_revision_without_a_date_is_named_not_placed() -> None:
    undated = HISTORY[0].model_copy(update={"date": None, "document": "RFC 9000"})
    timeline = _drawn([undated, *HISTORY[1:]])
    assert [r.document for r in timeline.revisions] == [e.document for e in HISTORY[1:]]
    assert any("RFC 9000" in line for line in timeline.not_drawn)


def test_no_timeline_without_anything_dated_or_an_answer() -> None:
    assert timeline_of(_card([PUBLISHED])) is None
    assert timeline_of(_card(HISTORY, verdict=Verdict.UNKNOWN)) is None
    card = _card([PUBLISHED])
    assert with_timeline(card) is card


def test_the_timeline_does_not_change_the_cards_content_hash() -> None:
    card = _card([*HISTORY, *DISCUSSION])
    drawn = with_timeline(card)
    assert drawn.timeline is not None
    assert content_hash(drawn) == content_hash(card)
    # What the hash covers still moves it: the timeline is not hiding a change.
    moved = card.model_copy(update={"results": HISTORY[:-1]})
    assert content_hash(with_timeline(moved)) != content_hash(drawn)


def test_the_finishing_step_is_registered_for_the_history_and_why_cards() -> None:
    card = _card([*HISTORY, *DISCUSSION])
    for intent in (Intent.SECTION_HISTORY, Intent.DISCUSSION):
        finished = asking.finished(card.model_copy(update={"intent": intent}))
        assert finished.timeline == timeline_of(card)
    assert asking.finished(card.model_copy(update={"intent": Intent.WHO_TO_ASK})).timeline is None


def test_a_finishing_step_of_ones_own_runs_on_its_intent_only() -> None:
    def noted(answer: Answer) -> Answer:
        return answer.model_copy(update={"note": "finished"})

    asking.finish_with(noted, "toy_intent")
    try:
        assert asking.finished(_card(HISTORY, intent="toy_intent")).note == "finished"
        assert asking.finished(_card(HISTORY, intent="other_toy")).note is None
        asking.finish_with(noted, "toy_intent")  # registering twice runs it once
        assert asking.FINISHING["toy_intent"] == [noted]
    finally:
        asking.FINISHING.pop("toy_intent", None)


def test_the_series_survives_the_cards_json() -> None:
    drawn = with_timeline(_card([*HISTORY, *DISCUSSION, PUBLISHED]))
    again = Answer.model_validate_json(drawn.model_dump_json())
    assert again.timeline == drawn.timeline


@pytest.fixture(scope="module")
def pigeon() -> Brain:
    repo = make_pigeon_repo(Path(tempfile.mkdtemp(prefix="pigeon-timeline-")))
    brain, _report = Brain.build(MANIFEST, source=str(repo))
    return brain


@pytest.mark.parametrize(
    "question", ["history of RFC 9999 section 3.1", "who discussed RFC 9999 section 3.1?"]
)
def test_the_pigeon_cards_carry_their_own_results_as_a_timeline(
    pigeon: Brain, question: str
) -> None:
    card = pigeon.ask(question)
    assert card.intent in (Intent.SECTION_HISTORY, Intent.DISCUSSION)
    assert card.timeline is not None and card.timeline == timeline_of(card)
    history = [r for r in card.results if isinstance(r, HistoryEntry) and r.date]
    posts = [r for r in card.results if isinstance(r, DiscussionPost)]
    commits = [r for r in card.results if isinstance(r, CommitChange) and r.commit_url]
    assert [r.document for r in card.timeline.revisions] == [h.document for h in history]
    assert len(card.timeline.marks) == len(posts) + len(commits)
    assert len(card.timeline.revisions) + len(card.timeline.marks) > 0
    # Nothing drawn is missing from the card: every link is one of its results' links.
    linked = (
        {h.url for h in history} | {p.post_url for p in posts} | {c.commit_url for c in commits}
    )
    drawn = {r.url for r in card.timeline.revisions} | {m.url for m in card.timeline.marks}
    assert drawn <= linked
    assert card.timeline.section in {e.label for e in card.evidence}


# --- the history and why cards list the same things, built one way -------------------------

HISTORY_OF = "history of RFC 9999 section {}"
WHY_OF = "who discussed RFC 9999 section {}?"


def _of(card: Answer, kind: type) -> list:
    return [r for r in card.results if isinstance(r, kind)]


def _published_in_the_manifest() -> str:
    (rfc,) = load_manifest(MANIFEST)[0].rfc
    return rfc.published


@pytest.mark.parametrize("section", ["3.1", "4"])
def test_the_history_card_lists_the_why_cards_posts_and_commits(
    pigeon: Brain, section: str
) -> None:
    history, why = pigeon.ask(HISTORY_OF.format(section)), pigeon.ask(WHY_OF.format(section))
    assert (history.intent, why.intent) == (Intent.SECTION_HISTORY, Intent.DISCUSSION)
    for kind in (DiscussionPost, CommitChange):
        assert _of(history, kind) == _of(why, kind)
    posts, commits = _of(history, DiscussionPost), _of(history, CommitChange)
    assert commits, "the pigeon's sections were changed by commits"
    # The entries stay first, in their order: the timeline's settled revision rests on it.
    entries = _of(history, HistoryEntry)
    assert history.results[: len(entries)] == entries
    # Their threads and commits are linked as the why card links them.
    linked = {e.url for e in history.evidence}
    changing = [p for p in posts if p.while_changing]
    assert {p.thread_url for p in changing} <= linked
    assert {c.commit_url for c in commits} <= linked
    # The summary counts them as the why card does.
    commit_count = len({c.iri for c in commits})
    if changing:
        assert (
            f"discussed in {plural(len(changing), 'post')} and changed by "
            f"{plural(commit_count, 'commit')} while it was changing"
        ) in history.summary
    else:
        assert (
            f"changed by {plural(commit_count, 'commit')} while it was changing, "
            "with no post referring to it"
        ) in history.summary
    later = len(posts) - len(changing)
    assert (f"{plural(later, 'more post')} after publication" in history.summary) == bool(later)


@pytest.mark.parametrize("section", ["3.1", "4"])
def test_the_why_card_lists_the_history_cards_earlier_texts(pigeon: Brain, section: str) -> None:
    history, why = pigeon.ask(HISTORY_OF.format(section)), pigeon.ask(WHY_OF.format(section))
    entries = _of(history, HistoryEntry)
    assert entries and _of(why, HistoryEntry) == entries
    assert {e.url for e in entries} <= {e.url for e in why.evidence if e.role == "section"}
    assert why.timeline is not None and history.timeline is not None
    assert why.timeline.revisions == history.timeline.revisions
    assert why.timeline.settled == history.timeline.settled


def test_both_cards_carry_the_rfcs_publication_as_its_document_card_gives_it(
    pigeon: Brain,
) -> None:
    (document,) = _of(pigeon.ask("when was RFC 9999 published?"), DocumentFacts)
    assert document.published == _published_in_the_manifest()
    for question in (HISTORY_OF.format("3.1"), WHY_OF.format("3.1")):
        card = pigeon.ask(question)
        (published,) = _of(card, DocumentFacts)
        assert (published.name, published.is_rfc, published.rfc_number) == (
            document.name,
            True,
            document.rfc_number,
        )
        assert (published.published, published.url, published.title) == (
            document.published,
            document.url,
            document.title,
        )
        assert card.timeline is not None and card.timeline.publication is not None
        assert card.timeline.publication.url in {e.url for e in card.evidence if e.role == "rfc"}
        assert "publication date not on the card" not in card.timeline.description


def test_the_history_cards_timeline_marks_each_listed_post_and_commit_then_publication(
    pigeon: Brain,
) -> None:
    card = pigeon.ask(HISTORY_OF.format("3.1"))
    timeline = card.timeline
    assert timeline is not None and timeline.publication is not None
    posts, commits = _of(card, DiscussionPost), _of(card, CommitChange)
    listed = [p.post_url for p in posts] + [c.commit_url for c in commits if c.commit_url]
    assert sorted(m.url for m in timeline.marks) == sorted(listed)
    assert {m.kind for m in timeline.marks} >= {"commit", "review", "message"}
    assert (timeline.publication.document, timeline.publication.date) == (
        "RFC 9999",
        _published_in_the_manifest(),
    )
    # Nothing of the changing section lies past the month of its publication: the picture
    # ends with it (a month is drawn at its first day, so a commit of that month may follow).
    assert timeline.end[:7] == timeline.publication.date
    assert timeline.description.endswith(f"was published in {timeline.publication.date}.")
