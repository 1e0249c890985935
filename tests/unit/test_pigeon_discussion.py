"""Discussions end to end on the fictional repository: posts resolved through the revision
current when they were written, commits tied to the sections they touched, people merged."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.answers.models import (
    Answer,
    CommitChange,
    Count,
    DiscussionPost,
    DraftedQuestion,
    Expert,
    PersonActivity,
)
from ratified_rdf.records.discussion import revision_windows
from ratified_rdf.records.manifest import load_manifest
from ratified_rdf.records.spec import read_spec
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.online.datatracker import read_facts_record
from tests.pigeon import MANIFEST, build_pigeon, make_pigeon_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


@pytest.fixture(scope="module", params=["embedded", "copied-in-memory", "oxigraph-server"])
def built(repo: Path, request: pytest.FixtureRequest) -> tuple[Brain, BuildReport]:
    # Every test here runs on the embedded store and on an Oxigraph server.
    return build_pigeon(repo, request.param, request)


@pytest.fixture(scope="module")
def brain(built: tuple[Brain, BuildReport]) -> Brain:
    return built[0]


def test_a_message_that_cannot_be_placed_is_reported_not_ingested(
    built: tuple[Brain, BuildReport],
) -> None:
    # The mail reader records the missing Date; the discussion records say it was left out.
    problems = built[1].problems
    assert len(problems) == 2
    assert all("undated@example.com" in problem for problem in problems)
    assert "has no Date header" in problems[0]
    assert "no date" in problems[1] and "not ingested" in problems[1]


def test_posts_resolve_through_the_revision_current_when_written(brain: Brain) -> None:
    answer = brain.ask("who discussed RFC 9999 section 3.1?")
    assert answer.verdict is Verdict.ANSWERED
    posts = [r for r in answer.results if isinstance(r, DiscussionPost)]
    # Issue #1 (February 2029) and Alice's review (March 2029) both say "Section 2.1": in
    # -00, current then, that is Take-off, which became RFC 9999 §3.1. Her review's comment
    # sits on a line of the diff, in Take-off of the text reviewed, which landed in -01.
    cited = [p for p in posts if p.rule != "review-line"]
    assert [(p.thread_number, p.post_kind, p.document, p.section_number) for p in cited] == [
        (1, "opening", "draft-example-pigeon-00", "2.1"),
        (None, "message", "draft-example-pigeon-00", "2.1"),
        (2, "review", "draft-example-pigeon-00", "2.1"),
    ]
    assert all(p.while_changing and p.rule == "current-revision" for p in cited)
    (line,) = [p for p in posts if p.rule == "review-line"]
    assert (line.thread_number, line.post_kind, line.document, line.section_number) == (
        2,
        "review-comment",
        "draft-example-pigeon-01",
        "3.1",
    )
    assert cited[2].post_url == "https://github.com/example/pigeon-spec/pull/2#pullrequestreview-42"
    assert "Connection, not causation" in (answer.note or "")
    assert "discussed while still changing in 4 posts across 3 threads" in answer.summary
    mail = posts[1]
    assert mail.author == "Alice Example"  # the sender's address is one of her identities
    assert mail.post_url.startswith("https://mailarchive.ietf.org/arch/msg/pigeon/")


def test_commits_are_tied_to_the_sections_they_touched(brain: Brain) -> None:
    answer = brain.ask("who discussed RFC 9999 section 3.1?")
    commits = [r for r in answer.results if isinstance(r, CommitChange)]
    bob = next(c for c in commits if c.subject == "Tie datagrams securely")
    assert bob.document == "draft-example-pigeon-01"  # the first tag containing it
    assert (bob.pull_request, bob.pull_request_title) == (2, "Clarify take-off")
    assert bob.author == "Bob Example"
    assert bob.commit_url.startswith("https://github.com/example/pigeon-spec/commit/")
    # The -01 commit renamed "Homing Signal"; a hunk starting on that heading line is not a
    # change to the section above it.
    assert not any(c.subject == "revision 01" for c in commits)
    issues = [e for e in answer.evidence if e.role == "issue"]
    assert [e.label for e in issues] == ["issue #1 Take-off rule is unclear"]
    # The commits' links and subjects come from every commit's row, read once per set of
    # graphs: the next card says it reused them, and its commits are the same.
    again = brain.ask("who discussed RFC 9999 section 3.1?")
    details = next(q for q in again.queries if q.name == "commit_details")
    assert details.reused and details.params == {} and details.rows >= len(commits)
    assert [r for r in again.results if isinstance(r, CommitChange)] == commits


def test_traps_do_not_become_citations(brain: Brain) -> None:
    rows = brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "SELECT ?text WHERE { ?c rr:citedText ?text "
        'FILTER NOT EXISTS { ?c rr:citationRule "review-line" } }'
    ).rows
    cited = sorted(r["text"].value for r in rows)
    # Issue #1, the review, Alice's mail, the errata issue and Dave's reply; "TLS 1.3" and
    # "version 1.2" are not sections, and Eve's undated message was not ingested.
    assert cited == ["Section 2.1", "Section 2.1", "Section 2.1", "Section 4", "section 2.2"]


def test_posts_after_publication_are_a_separate_relation(brain: Brain) -> None:
    answer = brain.ask("who discussed RFC 9999 section 4?")
    posts = [r for r in answer.results if isinstance(r, DiscussionPost)]
    assert [(p.thread_number, p.while_changing, p.about_published) for p in posts] == [
        (3, False, True)
    ]
    assert "1 more post referred to it after publication" in answer.summary


def test_counting_question_returns_the_number_and_the_list(brain: Brain) -> None:
    answer = brain.ask("how many posts referred to RFC 9999 §3.1 while it was changing?")
    assert answer.intent == "count"
    count = answer.results[0]
    assert isinstance(count, Count) and (count.what, count.count) == ("posts", 4)
    posts = [r for r in answer.results if isinstance(r, DiscussionPost) and r.while_changing]
    assert len(posts) == count.count
    assert answer.summary.startswith("4 posts referred to RFC 9999 §3.1 Take-off")


def test_a_login_and_a_git_signature_are_one_person_when_a_pull_request_links_them(
    brain: Brain,
) -> None:
    rows = brain.query(
        "PREFIX sioc: <http://rdfs.org/sioc/ns#> PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "SELECT ?login ?name ?rule WHERE { ?a foaf:accountName ?login ; sioc:account_of ?p . "
        "?p foaf:name ?name . OPTIONAL { ?m rr:mergedInto ?p ; rr:mergeRule ?rule } }"
    ).rows
    found = {
        (r["login"].value, r["name"].value, r["rule"].value if "rule" in r else None) for r in rows
    }
    assert ("bob-example", "Bob Example", "login-linked-by-commit") in found
    # Alice's login never carried her commits: it stays a person of its own, not guessed.
    alice = {name for login, name, _ in found if login == "alice-example"}
    assert alice == {"alice-example"}


def test_people_are_ranked_by_what_they_did(brain: Brain) -> None:
    answer = brain.ask("who discussed RFC 9999 section 3.1?")
    people = [r for r in answer.results if isinstance(r, PersonActivity)]
    assert people[0].name == "Alice Example"
    assert {p.name for p in people} >= {"Bob Example", "carol-example"}


def test_the_brain_with_discussions_validates(brain: Brain) -> None:
    assert brain.validate() == []


def test_mail_links_in_github_posts_become_message_nodes(brain: Brain) -> None:
    rows = brain.query(
        "PREFIX sioc: <http://rdfs.org/sioc/ns#> PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        "SELECT DISTINCT ?post ?page ?kind WHERE { ?post sioc:links_to ?m . ?m foaf:page ?page . "
        "OPTIONAL { ?m <https://w3id.org/ratified-rdf/ontology#postKind> ?kind } }"
    ).rows
    assert len(rows) == 1
    # The link names Alice's message, which is held: the two are one node.
    assert rows[0]["page"].value.startswith("https://mailarchive.ietf.org/arch/msg/pigeon/")
    assert rows[0]["kind"].value == "message"


def test_an_explicit_revision_wins_and_final_text_is_not_still_changing(brain: Brain) -> None:
    rows = brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "SELECT ?rule ?changing WHERE { ?c rr:citedText 'section 2.2' ; rr:citationRule ?rule ; "
        "rr:whileChanging ?changing }"
    ).rows
    # Dave named draft -00; its Homing Signal text was already the final Loft Beacon text.
    assert [(r["rule"].value, r["changing"].value) for r in rows] == [
        ("explicit-revision", "false")
    ]


def test_who_to_ask_ranks_people_with_reasons_and_lists_editors(brain: Brain) -> None:
    answer = brain.ask("who should I ask about RFC 9999 section 3.1?")
    assert answer.intent == "who_to_ask" and answer.verdict is Verdict.ANSWERED
    experts = [r for r in answer.results if isinstance(r, Expert)]
    participants = [e for e in experts if e.role == "participant"]
    assert participants[0].name == "Alice Example"
    assert (participants[0].posts, participants[0].commits) == (1, 2)
    scores = [e.pagerank or 0 for e in participants]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) > 1
    assert all("while it was changing" in e.reason for e in participants)
    editors = {e.name for e in experts if e.role == "editor"}
    assert editors == {"Alice Example", "Bob Example"}  # -00 listed Bob, -01 on did not


def test_expertise_scores_carry_their_computation(brain: Brain) -> None:
    rows = brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT (COUNT(?s) AS ?n) (SAMPLE(?algorithm) AS ?a) WHERE { "
        "?s a rr:ExpertiseScore ; prov:wasGeneratedBy ?c . ?c rr:algorithm ?algorithm }"
    ).rows
    assert int(rows[0]["n"].value) > 4
    assert "pagerank" in rows[0]["a"].value


def test_a_question_without_a_number_finds_its_section_by_heading(brain: Brain) -> None:
    answer = brain.ask("why does the take-off rule look like this?")
    assert answer.intent == "discussion" and answer.verdict is Verdict.ANSWERED
    assert answer.summary.startswith("Matched the words 'take-off' to the heading of RFC 9999 §3.1")
    assert answer.queries[0].name == "headings"


def test_a_card_found_by_heading_takes_its_link_from_the_index(brain: Brain) -> None:
    # A reader of its own builds its heading index for the router: asked by number or by
    # heading, the card starts from the index's row and looks nothing up again.
    fresh = Brain(brain._store, brain.brain_id, reader=brain.reader)
    by_number = fresh.ask("who discussed RFC 9999 section 3.1?")
    assert "rfc_section" not in [q.name for q in by_number.queries]
    by_heading = brain.ask("why does the take-off rule look like this?")
    assert "rfc_section" not in [q.name for q in by_heading.queries]
    assert by_heading.evidence[0].url and by_heading.evidence[0].url.startswith("https://")
    assert by_heading.evidence[0] == by_number.evidence[0]


@pytest.mark.parametrize(
    ("question", "lookup"),
    [
        ("who discussed RFC 9999 section 3.1?", lambda b: b.section_discussion(9999, "3.1")),
        (
            "who should I ask about RFC 9999 §3.1?",
            lambda b: b.answer("who_to_ask", rfc=9999, section="3.1"),
        ),
    ],
)
def test_a_card_asked_by_number_starts_from_the_index(
    brain: Brain, question: str, lookup: Callable[[Brain], Answer]
) -> None:
    fresh = Brain(brain._store, brain.brain_id, reader=brain.reader)
    first = fresh.ask(question)
    again = fresh.ask(question)
    names = [q.name for q in again.queries]
    assert first.queries[0].name == "headings"
    assert "rfc_section" not in names and names[0] == "headings" and again.queries[0].reused
    # Where the why card's posts and commits sit comes from the index too: it holds every
    # section with a heading.
    assert "section_places" not in names
    # The same card either way, and the same as the typed method's (no words in between).
    typed = lookup(fresh)
    assert again.verdict is Verdict.ANSWERED

    # (The drafted question quotes the question as it was asked: wording, as for the card's
    # hash, so it is compared apart.)
    def content(answer: Answer) -> list:
        return [r for r in answer.results if not isinstance(r, DraftedQuestion)]

    for other in (first, typed):
        assert (content(again), again.evidence) == (content(other), other.evidence)
        assert [type(r) for r in again.results] == [type(r) for r in other.results]
    assert again.summary.split(". ", 1)[-1] == typed.summary.split(". ", 1)[-1]
    # A number the RFC lacks is not in the index: the card looks it up and says so.
    missing = brain.ask(question.replace("3.1", "77.7"))
    assert missing.verdict is Verdict.UNKNOWN
    assert "rfc_section" in [q.name for q in missing.queries]


def test_a_topic_no_heading_matches_is_unknown(brain: Brain) -> None:
    answer = brain.ask("why does the quantum teleporter work this way?")
    assert answer.verdict is Verdict.UNKNOWN
    assert "no RFC section heading matches" in answer.summary


def test_pull_request_lookup_lists_the_sections_its_commits_changed(brain: Brain) -> None:
    answer = brain.ask("what is PR #2?")
    assert answer.intent == "thread" and answer.verdict is Verdict.ANSWERED
    assert answer.summary.startswith('#2 is a pull request, merged: "Clarify take-off"')
    assert [e.label for e in answer.evidence if e.role == "rfc-section"] == [
        "RFC 9999 §3.1 Take-off"
    ]
    missing = brain.ask("what is issue #77?")
    assert missing.verdict is Verdict.UNKNOWN


def test_person_lookup_by_name_or_login(brain: Brain) -> None:
    by_name = brain.ask("what did Bob Example work on?")
    by_login = brain.ask("who is bob-example?")
    assert by_name.verdict is Verdict.ANSWERED and by_login.summary == by_name.summary
    # Bob made a commit and wrote no post there: the card says what there is.
    assert "RFC 9999 §3.1 Take-off (1 commit)" in by_name.summary
    assert "0 posts" not in by_name.summary


def test_why_card_names_editors_and_the_group_from_records_and_drafts_a_question(
    brain: Brain,
) -> None:
    answer = brain.ask("why does the take-off rule look like this?")
    contacts = {(e.name, e.role) for e in answer.results if isinstance(e, Expert)}
    assert {
        ("Alice Example", "editor"),
        ("Carol Example", "chair"),
        ("Dana Example", "chair"),
        ("Erin Example", "area director"),
    } <= contacts
    # The records name officers, so the card asks for the section's group.
    assert {"group_officers", "section_group"} <= {q.name for q in answer.queries}
    drafted = next(r for r in answer.results if isinstance(r, DraftedQuestion))
    assert "Carol Example" in drafted.to and "Alice Example" in drafted.to
    assert "why does the take-off rule look like this?" in drafted.text
    assert "https://www.rfc-editor.org/rfc/rfc9999#section-3.1" in drafted.text


def test_revision_windows_start_when_the_datatracker_says(repo: Path) -> None:
    manifest, folder = load_manifest(MANIFEST)
    facts = {
        "draft-example-pigeon": read_facts_record(folder / "datatracker/draft-example-pigeon.json")
    }
    spec = read_spec(manifest, GitRepository.open(str(repo)), {})
    posted = {
        w.revision: w.start.date().isoformat() for w in revision_windows(manifest, spec, facts)
    }
    tagged = {w.revision: w.start.date().isoformat() for w in revision_windows(manifest, spec)}
    assert posted["draft-example-pigeon-01"] == "2029-06-03"  # the Datatracker's date
    assert tagged["draft-example-pigeon-01"] == "2029-06-01"  # the tagged commit's date


def test_a_review_comment_on_a_line_discusses_the_section_that_line_is_in(brain: Brain) -> None:
    # Alice's "Nit: comma." sits at position 3 of pull request #2's diff, in Take-off.
    answer = brain.ask("who discussed RFC 9999 section 3.1?")
    posts = [r for r in answer.results if isinstance(r, DiscussionPost)]
    review = [p for p in posts if p.rule == "review-line"]
    assert len(review) == 1 and review[0].while_changing
    assert review[0].thread_url.endswith("/pull/2")
    assert "Take-off" in review[0].cited_text


def test_the_span_runs_from_the_earliest_document(brain: Brain) -> None:
    """ "from X to Y" starts at the document of the earliest post or commit the card lists and
    never runs backwards."""
    answer = brain.ask("who discussed RFC 9999 section 3.1?")
    dated = sorted(
        (r.created if isinstance(r, DiscussionPost) else r.date, r.document)
        for r in answer.results
        if isinstance(r, CommitChange) or (isinstance(r, DiscussionPost) and r.while_changing)
    )
    span = re.search(r", from (\S+(?: \d+)?) to (\S+(?: \d+)?)[ .(]", answer.summary)
    assert span is not None, answer.summary
    assert span.group(1) == dated[0][1]
    order = [*(f"draft-example-pigeon-0{n}" for n in range(3)), "RFC 9999"]
    assert order.index(span.group(1)) <= order.index(span.group(2))


def test_documents_are_ordered_by_their_first_dated_post_or_commit() -> None:
    """Posts on the published RFC come first in the card's rows, commits on the drafts after;
    the span still starts at the draft, and a revision only counted (no row listed) sits
    with the dated revisions of its draft."""
    from ratified_rdf.answers.discussion import _in_time

    def post(document: str, created: str) -> DiscussionPost:
        return DiscussionPost(
            document=document, section_number="1", thread_number=1, thread_title="t",
            thread_url="u", post_url="u", post_kind="comment", author=None, created=created,
            cited_text="", rule="current-revision", while_changing=True, about_published=False,
        )  # fmt: skip

    def commit(document: str, date: str) -> CommitChange:
        return CommitChange(
            iri=f"urn:c:{date}", document=document, commit_url=None, subject=None,
            author=None, date=date,
        )  # fmt: skip

    posts = [post("RFC 9990", "2031-05-01"), post("draft-example-owl-03", "2030-02-01")]
    commits = [commit("draft-example-owl-01", "2029-07-01"), commit("RFC 9990", "2031-04-01")]
    documents = ["RFC 9990", "draft-example-owl-03", "draft-example-owl-01", "draft-example-owl-02"]
    assert sorted(documents, key=_in_time(posts, commits)) == [
        "draft-example-owl-01",
        "draft-example-owl-02",
        "draft-example-owl-03",
        "RFC 9990",
    ]


def test_reading_the_spec_leaves_no_section_text_cached(repo: Path) -> None:
    """The alignment's caches of whole section texts are emptied once the run's sections are
    aligned: nothing reads them after, and at scale they held hundreds of MiB to the end."""
    from ratified_rdf.records.alignment import comparable_text, text_similarity

    manifest, _ = load_manifest(MANIFEST)
    spec = read_spec(manifest, GitRepository.open(str(repo)), {})
    assert spec.alignments  # the texts were compared
    assert comparable_text.cache_info().currsize == 0
    assert text_similarity.cache_info().currsize == 0
