"""Issue 53 on the real corpora, for what the paraphrase suite cannot express: a revision
number several QUIC drafts hold gets the ambiguous card, who merged a pull request is the
archive's merger (or, where the discussion is git only, the person who made its merge commit),
a brain without issues does not count them, forty questions about things never ingested that
name a held document all get "doesn't know", and the reading families asked of three more
tlswg repositories (tls-record-limit, dtls-conn-id, tls-subcerts). Checked against git and the
archive, never against the pipeline's own rows (the other examples are in the paraphrase
suite's tuned block)."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.evaluation import Question, score_answer
from tests.conftest import TlswgStores
from tests.independent.revisions import holdings

REPO = Path(__file__).resolve().parents[2]
TLSWG = REPO.parent / "shared" / "corpus" / "tlswg"


@pytest.fixture(scope="module")
def quic_brain(quic_build: tuple[Path, BuildReport]) -> Iterator[Brain]:
    brain = Brain.open(quic_build[0])
    yield brain
    brain.close()


def _tagged(bundle: Path, revision: str) -> set[str]:
    """The drafts with a tag for ``revision`` in the bundle, from git alone."""
    heads = subprocess.run(
        ["git", "bundle", "list-heads", str(bundle)], check=True, capture_output=True, text=True
    ).stdout
    return {
        match.group(1)
        for match in re.finditer(rf"refs/tags/(draft-[a-z0-9-]+?)-{revision}$", heads, re.M)
    }


def test_a_revision_number_several_quic_drafts_hold_is_asked_about(
    quic_brain: Brain, quic_bundle: Path
) -> None:
    card = quic_brain.ask("what did section 5.2 of draft 25 become?")
    assert card.verdict is Verdict.AMBIGUOUS
    offered = {
        found.group(1)
        for alternative in card.alternatives
        if (found := re.search(r"(draft-[a-z0-9-]+)-25\b", alternative.question))
    }
    tagged = _tagged(quic_bundle, "25")
    assert len(offered) >= 2 and offered <= tagged
    assert "draft-ietf-quic-recovery" in offered
    # Named by its short name, the same revision is the recovery draft's alone.
    named = quic_brain.ask("in quic-recovery draft 25, what is section 5.2 in the final RFC?")
    assert named.verdict is Verdict.ANSWERED
    assert "draft-ietf-quic-recovery-25" in named.summary and "RFC 9002" in named.summary


def test_who_merged_a_pull_request_is_the_archive_s_merger(
    tls_brain: Brain, tls_mirror: Path
) -> None:
    shown = subprocess.run(
        ["git", "--git-dir", str(tls_mirror), "show", "gh-pages:archive.json"],
        check=True,
        capture_output=True,
    ).stdout
    pull = next(p for p in json.loads(shown)["pulls"] if p["number"] == 1000)
    card = tls_brain.ask("who merged PR 1000?")
    assert card.verdict is Verdict.ANSWERED
    assert f"It was merged by {pull['mergedBy']} on {pull['mergedAt'][:10]}." in card.summary


def test_a_brain_without_issues_does_not_count_them(quic_brain: Brain) -> None:
    manifest = tomllib.loads((REPO / "records" / "quic" / "manifest.toml").read_text())
    assert "github_archive" not in manifest.get("discussion", {}) | manifest
    card = quic_brain.ask("which issues are still open about connection migration?")
    assert card.verdict is Verdict.UNKNOWN
    assert "never ingested records of issues" in card.summary


def _mirror(bundle: Path, folder: Path) -> Path:
    mirror = folder / "repository.git"
    subprocess.run(
        ["git", "clone", "--quiet", "--mirror", str(bundle), str(mirror)],
        check=True,
        capture_output=True,
    )
    return mirror


def _git_merger(mirror: Path, number: int) -> tuple[str, str]:
    """(who merged pull request ``number``, its merge commit) from git alone: the committer of
    its "Merge pull request #N" commit, or its author when GitHub's web-flow committed it."""
    line = subprocess.run(
        ["git", "--git-dir", str(mirror), "log", "--all", "--format=%H|%an|%cn|%ce",
         f"--grep=^Merge pull request #{number} from"],
        check=True, capture_output=True, text=True,
    ).stdout.splitlines()[0]  # fmt: skip
    commit, author, committer, email = line.split("|")
    return (author if email == "noreply@github.com" else committer), commit


def _public(bundle: Path, commit: str) -> str:
    """The public id of a bundle commit (the corpus's commit map), or the commit itself."""
    for line in (bundle.parent / "commit-map.tsv").read_text().splitlines()[1:]:
        ours, public = line.split("\t")
        if ours == commit:
            return public
    return commit


def test_who_merged_a_quic_pull_request_is_its_merge_commit_s_person(
    quic_brain: Brain, quic_bundle: Path, tmp_path: Path
) -> None:
    # quicwg/base-drafts has no GitHub archive: the pull request is known from its merge
    # commit, and so is who merged it.
    merger, commit = _git_merger(_mirror(quic_bundle, tmp_path), 2000)
    card = quic_brain.ask("who merged PR 2000?")
    assert card.verdict is Verdict.ANSWERED
    assert card.results[0].merged_by == merger  # type: ignore[union-attr]
    assert f"It was merged by {merger} on " in card.summary
    merge = [e.url or "" for e in card.evidence if e.role == "commit"]
    assert len(merge) == 1 and merge[0].endswith(_public(quic_bundle, commit))


@pytest.fixture(scope="module")
def tlswg_brains(tlswg_store: TlswgStores) -> Iterator[dict[str, Brain]]:
    """Brains of three small tlswg repositories: tls-record-limit and tls-subcerts (their
    discussion is git only) and dtls-conn-id (a GitHub archive), built once per session."""
    names = ("tls-record-limit", "tls-subcerts", "dtls-conn-id")
    brains = {name: Brain.open(tlswg_store(name)[0]) for name in names}
    yield brains
    for brain in brains.values():
        brain.close()


def _held(name: str, draft: str, folder: Path) -> list[str]:
    """The numbered revisions of ``draft`` the repository holds (tags, per-revision files,
    docnames), as the independent checker finds them from git alone."""
    clone = folder / f"{name}.git"
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(TLSWG / name / f"{name}.bundle"), str(clone)],
        check=True,
    )
    return sorted(
        h.label for h in holdings(clone).values() if h.draft == draft and h.number.isdigit()
    )


TLSWG_NAMES = [
    ("tls-record-limit", "list every version of the record-limit draft",
     "draft-ietf-tls-record-limit"),
    ("dtls-conn-id", "what revisions of the dtls-connection-id draft are there?",
     "draft-ietf-tls-dtls-connection-id"),
    ("tls-subcerts", "list the versions of the subcerts draft with dates",
     "draft-ietf-tls-subcerts"),
]  # fmt: skip
"""Family "names": a draft by its short name, on three more tlswg repositories."""


@pytest.mark.parametrize(("name", "question", "draft"), TLSWG_NAMES)
def test_tlswg_drafts_are_reached_by_their_short_names(
    tlswg_brains: dict[str, Brain], name: str, question: str, draft: str, tmp_path: Path
) -> None:
    expected = Question.model_validate(
        {"id": "n", "text": question, "intent": "revisions", "block": "tuned", "kind": "list"}
        | {"family": "names", "expect": {"revisions": _held(name, draft, tmp_path)}}
    )
    outcome = score_answer(expected, tlswg_brains[name].ask(question))
    assert outcome.correct, outcome.why


def test_who_merged_is_read_from_git_or_the_archive_on_tlswg_repositories(
    tlswg_brains: dict[str, Brain], tmp_path: Path
) -> None:
    # Family "tolerant" ("merged by" in other words). tls-record-limit and tls-subcerts: the
    # merge commit's person; dtls-conn-id: the archive's mergedBy.
    for name, number, question in [
        ("tls-record-limit", 19, "who merged PR 19?"),
        ("tls-subcerts", 106, "pull request 106: who merged it?"),
    ]:
        bundle = TLSWG / name / f"{name}.bundle"
        merger, _ = _git_merger(_mirror(bundle, tmp_path / name), number)
        card = tlswg_brains[name].ask(question)
        assert card.results[0].merged_by == merger, name  # type: ignore[union-attr]
        assert f"It was merged by {merger} on " in card.summary
    shown = subprocess.run(
        ["git", "--git-dir", str(_mirror(TLSWG / "dtls-conn-id" / "dtls-conn-id.bundle",
         tmp_path / "conn-id")), "show", "gh-pages:archive.json"],
        check=True, capture_output=True,
    ).stdout  # fmt: skip
    pull = next(p for p in json.loads(shown)["pulls"] if p["number"] == 3)
    card = tlswg_brains["dtls-conn-id"].ask("who was PR 3 merged by?")
    assert f"It was merged by {pull['mergedBy']} on {pull['mergedAt'][:10]}." in card.summary


NEVER_INGESTED = {
    "tls": [
        "which TLS libraries were first to implement RFC 8446?",
        "what did the list say during WGLC of draft-ietf-tls-tls13-28?",
        "which TLS stacks shipped draft-ietf-tls-tls13-23?",
        "how many servers negotiate RFC 8446 today?",
        "what did the IESG ballot on draft-ietf-tls-rfc8446bis say?",
        "which browsers support RFC 8446?",
        "what was said at the IETF 101 meeting about draft-ietf-tls-tls13-28?",
        "has anyone deployed RFC 9846 in production?",
    ],
    "quic": [
        "which QUIC libraries implement RFC 9000?",
        "how many websites use RFC 9114?",
        "what did the IESG say about draft-ietf-quic-recovery-34?",
        "which QUIC stacks interoperated at the hackathon on draft-ietf-quic-transport-29?",
        "what did the mailing list say about draft-ietf-quic-transport-29?",
        "was there a hum about draft-ietf-quic-invariants at a meeting?",
        "which CDNs deployed RFC 9000?",
        "what was the adoption rate of RFC 9204?",
    ],
    "dtls": [
        "which dtls 1.3 libraries implement RFC 9147?",
        "what did the mailing list say about draft-ietf-tls-dtls13-43?",
        "what was decided at IETF 105 about the dtls13 draft?",
        "did wolfssl ship RFC 9147?",
        "is there an interop report for draft-ietf-tls-dtls13-43?",
        "how widely deployed is RFC 9147?",
        "what did the secdir review of draft-ietf-tls-dtls13 say?",
        "what were the minutes of the interim on draft-ietf-tls-dtls13-30?",
    ],
    "tls-record-limit": [
        "which browsers implement RFC 8449?",
        "who voted on draft-ietf-tls-record-limit at the telechat?",
        "how many servers support RFC 8449?",
        "what did the tls list say about draft-ietf-tls-record-limit-02?",
        "was RFC 8449 discussed at an IETF meeting?",
    ],
    "dtls-conn-id": [
        "has anyone implemented RFC 9146?",
        "which vendors deployed draft-ietf-tls-dtls-connection-id-13?",
        "what did the IESG ballot on draft-ietf-tls-dtls-connection-id say?",
        "what emails were sent about RFC 9146?",
        "which DTLS stacks shipped RFC 9146 first?",
    ],
    "tls-subcerts": [
        "which CDNs deployed RFC 9345?",
        "what did the working group last call on draft-ietf-tls-subcerts conclude?",
        "which TLS libraries support RFC 9345?",
        "what did the mailing list say about draft-ietf-tls-subcerts-15?",
        "how many websites use RFC 9345?",
        "is there an IPR disclosure on draft-ietf-tls-subcerts?",
    ],
}
"""Family "first_rule": questions about records never ingested (implementations, deployments,
meetings, ballots, reviews, mailing lists where no mail is held), each naming a document the
brain holds."""


def test_forty_never_ingested_questions_naming_a_held_document_say_doesn_t_know(
    tls_brain: Brain, quic_brain: Brain, dtls_build: tuple[Path, BuildReport],
    tlswg_brains: dict[str, Brain],
) -> None:  # fmt: skip
    assert sum(len(questions) for questions in NEVER_INGESTED.values()) >= 40
    dtls = Brain.open(dtls_build[0])
    brains = {"tls": tls_brain, "quic": quic_brain, "dtls": dtls, **tlswg_brains}
    try:
        answered = {}
        for corpus, questions in NEVER_INGESTED.items():
            for question in questions:
                card = brains[corpus].ask(question)
                if card.verdict is not Verdict.UNKNOWN or "never ingested" not in card.summary:
                    answered[question] = card.summary[:160]
                    continue
                # Both ways: the document it names is held, and its card is answered.
                assert card.alternatives, question
                held = brains[corpus].ask(card.alternatives[0].question)
                assert held.verdict is Verdict.ANSWERED, (question, held.summary[:160])
        assert answered == {}
    finally:
        dtls.close()
