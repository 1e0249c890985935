"""Discussions on the real TLS record: the §4.2.1 and §4.2.10 cards and the people table."""

from __future__ import annotations

import re

import pytest

from ratified_rdf import Brain, Verdict
from ratified_rdf.answers.discussion import LISTED_COMMITS
from ratified_rdf.answers.models import CommitChange, Count, DiscussionPost, Expert
from tests.conftest import CORPUS

pytestmark = pytest.mark.corpus

GITHUB = "https://github.com/tlswg/tls13-spec"


@pytest.fixture(scope="module")
def public_commits() -> set[str]:
    lines = (CORPUS / "commit-map.tsv").read_text().splitlines()[1:]
    return {line.split("\t")[1] for line in lines if "\t" in line}


@pytest.mark.parametrize(
    ("section", "heading", "known_pull"),
    [
        ("4.2.1", "Supported Versions", 1163),
        ("4.2.10", "Early Data Indication", 373),
    ],
)
def test_card_lists_real_pulls_issues_and_commits_tied_to_revisions(
    tls_brain: Brain, public_commits: set[str], section: str, heading: str, known_pull: int
) -> None:
    answer = tls_brain.ask(f"who discussed RFC 8446 §{section}?")
    assert answer.verdict is Verdict.ANSWERED
    assert heading in answer.summary
    commits = [r for r in answer.results if isinstance(r, CommitChange)]
    assert len(commits) >= 10
    for commit in commits:
        # Every commit is tied to the revision it landed in, and links to GitHub's own id.
        assert re.fullmatch(r"draft-ietf-tls-tls13-\d\d|RFC 8446", commit.document), commit
        sha = commit.commit_url.rsplit("/", 1)[-1]
        assert commit.commit_url == f"{GITHUB}/commit/{sha}" and sha in public_commits
    assert all(
        c.pull_request_url == f"{GITHUB}/pull/{c.pull_request}" for c in commits if c.pull_request
    )
    # The card lists the most recent commits but counts, and links the pull requests of, all.
    assert len(commits) <= LISTED_COMMITS
    pulls = {e.url for e in answer.evidence if e.role == "pull-request"}
    assert f"{GITHUB}/pull/{known_pull}" in pulls
    changed = re.search(r"changed by (\d+) commits? through (\d+) pull requests?", answer.summary)
    assert changed and int(changed[2]) == len(pulls) and int(changed[1]) >= len(commits)
    posts = [r for r in answer.results if isinstance(r, DiscussionPost)]
    assert posts, "no post referred to the section"
    for post in posts:
        assert post.thread_url.startswith(f"{GITHUB}/")
        assert post.document.startswith("draft-ietf-tls-tls13-") or post.about_published
    roles = {e.role for e in answer.evidence}
    assert {"rfc-section", "pull-request", "commit", "thread"} <= roles
    assert all(e.url and e.url.startswith("https://") for e in answer.evidence)


def test_counting_posts_about_early_data(tls_brain: Brain) -> None:
    answer = tls_brain.ask("how many posts referred to §4.2.10 while it was changing?")
    count = answer.results[0]
    assert isinstance(count, Count) and count.what == "posts"
    listed = [r for r in answer.results if isinstance(r, DiscussionPost) and r.while_changing]
    assert count.count == len(listed) > 0


def test_eric_rescorla_is_one_person(tls_brain: Brain) -> None:
    rows = tls_brain.query(
        "PREFIX sioc: <http://rdfs.org/sioc/ns#> PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        "SELECT DISTINCT ?person WHERE { "
        "{ ?a foaf:accountName ?login ; sioc:account_of ?person . FILTER(LCASE(?login) = 'ekr') }"
        " UNION { ?person foaf:mbox <mailto:ekr@rtfm.com> } }"
    ).rows
    assert len(rows) == 1


def test_sean_turner_is_one_person(tls_brain: Brain) -> None:
    rows = tls_brain.query(
        "PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        "SELECT DISTINCT ?person WHERE { ?person a foaf:Person ; foaf:name ?name . "
        "FILTER(CONTAINS(LCASE(?name), 'sean turner')) }"
    ).rows
    assert len(rows) == 1


def test_why_early_data_resolves_by_heading_with_a_runner_up(tls_brain: Brain) -> None:
    answer = tls_brain.ask("why does early data work this way?")
    assert answer.verdict is Verdict.ANSWERED
    assert answer.summary.startswith(
        "Matched the words 'early', 'data' to the heading of RFC 8446 §4.2.10 "
        "Early Data Indication."
    )
    assert answer.alternatives and "End of Early Data" in answer.alternatives[0].reason
    assert "headings" in {q.name for q in answer.queries}
    assert any(
        e.url == "https://www.rfc-editor.org/rfc/rfc8446#section-4.2.10" for e in answer.evidence
    )
    # The TLS records name no chair or area director: the card checks once and skips the
    # section's group, and its editors come from the drafts' author lists.
    names = [q.name for q in answer.queries]
    assert "group_officers" in names and "section_group" not in names
    editors = [r for r in answer.results if isinstance(r, Expert) and r.role == "editor"]
    assert "Eric Rescorla" in {e.name for e in editors}


def test_who_to_ask_about_key_share_ranks_real_people(tls_brain: Brain) -> None:
    answer = tls_brain.ask("who should I ask about key share?")
    assert answer.intent == "who_to_ask" and answer.verdict is Verdict.ANSWERED
    assert "RFC 8446 §4.2.8 Key Share" in answer.summary
    experts = [r for r in answer.results if isinstance(r, Expert) and r.role == "participant"]
    assert experts[0].name == "Eric Rescorla" and experts[0].commits > 10
    assert len(experts) >= 5
    assert all(e.reason and e.pagerank is not None for e in experts)


RR = "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
RFC8446 = "https://w3id.org/ratified-rdf/id/doc/rfc8446/section/"


def _commits_per_section(brain: Brain) -> dict[str, int]:
    rows = brain.query(
        RR + "SELECT ?final (COUNT(DISTINCT ?commit) AS ?n) WHERE { ?section rr:alignsWith? ?final "
        f'. ?commit rr:changedSection ?section . FILTER(STRSTARTS(STR(?final), "{RFC8446}")) }} '
        "GROUP BY ?final"
    ).rows
    return {r["final"].value.removeprefix(RFC8446): int(r["n"].value) for r in rows}


def test_body_sections_keep_their_commits_from_the_appendix_of_the_same_heading(
    tls_brain: Brain,
) -> None:
    # §5.1 and B.1 are both "Record Layer", §4.1 and B.3.1 "Key Exchange Messages", §4.4 and
    # B.3.3 "Authentication Messages": each change is credited where its lines were.
    counts = _commits_per_section(tls_brain)
    for body in ("4.1", "4.4", "5.1"):
        assert counts.get(body, 0) > 0, body
    # Commit 30bb500 (bundle id; the TLSPlaintext length) changed §5.1, in the body.
    rows = tls_brain.query(
        RR + "SELECT ?section ?final WHERE { ?commit rr:commitId ?id ; rr:changedSection ?section "
        '. OPTIONAL { ?section rr:alignsWith ?final } FILTER(STRSTARTS(?id, "0da599f")) }'
    ).rows
    finals = {r["final"].value.removeprefix(RFC8446) for r in rows if r.get("final")}
    assert finals == {"5.1"}


def test_no_commit_after_publication_counts_as_changing_rfc_8446(tls_brain: Brain) -> None:
    rows = tls_brain.query(
        RR + "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT (COUNT(DISTINCT ?commit) AS ?n) WHERE { ?section rr:alignsWith? ?final . "
        "?commit rr:changedSection ?section ; prov:generatedAtTime ?date . "
        f'FILTER(STRSTARTS(STR(?final), "{RFC8446}")) '
        'FILTER(?date >= "2018-09-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime>) }'
    ).rows
    assert int(rows[0]["n"].value) == 0


def test_the_supported_versions_card_says_what_each_person_rests_on(tls_brain: Brain) -> None:
    from ratified_rdf.answers.models import PersonActivity

    answer = tls_brain.ask("who discussed RFC 8446 section 4.2.1?")
    people = [r for r in answer.results if isinstance(r, PersonActivity)]
    assert people and all(p.rests_on for p in people)
    kinds = {kind for p in people for kind in p.rests_on}
    assert {"cited it", "changed it"} <= kinds
    for person in people:
        assert ("cited it" in person.rests_on) == (person.posts > 0)
        assert ("changed it" in person.rests_on) == (person.commits > 0)
    assert "How it counts" in (answer.note or "")
