"""Issue 53 on the real corpora, for what the paraphrase suite cannot express: a revision
number several QUIC drafts hold gets the ambiguous card, who merged a pull request is the
archive's merger, and a brain without issues does not count them. Checked against git and the
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

REPO = Path(__file__).resolve().parents[2]


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
