"""The QUIC working group's repository: six drafts in one repository, each credited its own
commits, checked against the independent checker (tests/independent), which reads git alone."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.answers.models import CommitChange, SectionActivity
from tests.conftest import QUIC_CORPUS
from tests.independent.attribution import Attribution

pytestmark = pytest.mark.corpus

DRAFTS = [f"draft-ietf-quic-{name}" for name in ("transport", "tls", "recovery", "http")] + [
    "draft-ietf-quic-qpack",
    "draft-ietf-quic-invariants",
]
GITHUB = "https://github.com/quicwg/base-drafts"


@pytest.fixture(scope="module")
def quic_brain(quic_build: tuple[Path, BuildReport]) -> Iterator[Brain]:
    brain = Brain.open(quic_build[0])
    yield brain
    brain.close()


@pytest.fixture(scope="module")
def checker(quic_checker: Attribution) -> Attribution:
    return quic_checker


def test_each_draft_has_the_commits_the_checker_finds(
    quic_brain: Brain, checker: Attribution
) -> None:
    """Every commit the checker credits to a draft's revision is credited to it here too.
    Two documented differences remain, each checked: commits to a replaced draft's file
    after its last tag (draft-thomson-quic-invariants, draft-ietf-quic-qcram) are credited
    here to the draft that replaced it, whose first revision holds their text; and commits
    reachable only from a tag, not from main, are here and not among the checker's."""
    rows = quic_brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "SELECT ?id ?revision WHERE { ?commit rr:commitId ?id ; rr:landedIn ?revision }"
    ).rows
    ours: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        found = re.search(r"/doc/(draft-[a-z0-9-]+?)/\d\d$", row["revision"].value)
        if found:
            ours[found.group(1)].add(row["id"].value)
    public = _commit_map()
    replaced = {
        "draft-ietf-quic-invariants": {"draft-thomson-quic-invariants"},
        "draft-ietf-quic-qpack": {"draft-ietf-quic-qcram"},
    }
    for draft in DRAFTS:
        theirs = {
            public.get(sha, sha)
            for sha, record in checker.commits.items()
            if any(t.draft == draft and t.revision for t in record.touches)
        }
        assert theirs and theirs <= ours[draft], (draft, sorted(theirs - ours[draft])[:5])
        bundle_id = {github: bundle for bundle, github in public.items()}
        for extra in ours[draft] - theirs:
            record = checker.commits.get(bundle_id.get(extra, extra))
            if record is None:
                continue  # reachable from a tag only: the checker walks main
            drafts = {t.draft for t in record.touches}
            assert drafts & replaced.get(draft, set()), (draft, extra, drafts)


def _commit_map() -> dict[str, str]:
    lines = (QUIC_CORPUS / "commit-map.tsv").read_text().splitlines()[1:]
    return dict(line.split("\t") for line in lines if "\t" in line)


def test_idle_timeout_lists_the_commits_that_changed_it(quic_brain: Brain) -> None:
    answer = quic_brain.ask("who discussed RFC 9000 section 10.1?")
    assert answer.verdict is Verdict.ANSWERED
    assert "RFC 9000 §10.1 Idle Timeout" in answer.summary
    commits = [r for r in answer.results if isinstance(r, CommitChange)]
    assert len(commits) >= 10
    assert all(c.commit_url.startswith(f"{GITHUB}/commit/") for c in commits)
    assert all(c.document.startswith(("draft-ietf-quic-transport-", "RFC 9000")) for c in commits)
    # No GitHub archive in this corpus: the card says its evidence is commits alone, and
    # does not count the posts it has none of.
    assert "Partial: no post refers to this section" in answer.summary
    assert answer.summary.startswith("RFC 9000 §10.1 Idle Timeout was changed by ")
    assert "0 posts" not in answer.summary and "0 threads" not in answer.summary


def test_who_to_ask_counts_only_what_a_brain_without_posts_holds(quic_brain: Brain) -> None:
    # QUIC's brain holds commits and no posts: each person is credited with the commits
    # alone, never with "0 posts".
    answer = quic_brain.ask("who should I ask about RFC 9001 section 5.2?")
    assert answer.intent == "who_to_ask" and answer.verdict is Verdict.ANSWERED
    assert "Martin Thomson (" in answer.summary and " commits)" in answer.summary
    assert "0 posts" not in answer.summary
    assert all("0 posts" not in e.reason for e in answer.results if hasattr(e, "reason"))


def test_martin_thomsons_work_is_on_the_transport_and_invariants(quic_brain: Brain) -> None:
    answer = quic_brain.ask("what did Martin Thomson work on?")
    assert answer.verdict is Verdict.ANSWERED
    sections = [r for r in answer.results if isinstance(r, SectionActivity)][:10]
    assert sections and all(s.section.startswith(("RFC 9000 ", "RFC 8999 ")) for s in sections)
    credited = re.search(r"credited with ([\d,]+) commits \(", answer.summary)
    assert credited is not None, answer.summary  # commits alone: QUIC's brain has no posts
    assert int(credited[1].replace(",", "")) > 1000
