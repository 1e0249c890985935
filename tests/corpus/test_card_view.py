"""The card view on the real brains: every view query gives the rows of the full-path query it
says it reproduces, on every RFC section of TLS and QUIC (and what every revision section
became), every shortcut's path is in the full graph, and the cards read the view."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf.graph.memory import MemoryDataset
from ratified_rdf.graph.scope import Scope
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.trust import Clearance, TenantId
from tests.view_check import check_view

pytestmark = pytest.mark.corpus


def _checked(folder: Path, brain_id: str) -> tuple[object, list[str]]:
    store = OxigraphStore(folder, shared=True)
    scope = Scope.read(store, TenantId.default(), brain_id, Clearance.RESTRICTED)
    graphs = scope.read_graphs
    return check_view(MemoryDataset(store, graphs), graphs), graphs


@pytest.mark.parametrize("which", ["tls", "quic"])
def test_view_queries_give_the_full_paths_rows(which: str, request: pytest.FixtureRequest) -> None:
    folder, report = request.getfixturevalue(f"{which}_build")
    assert isinstance(report, BuildReport)
    check, graphs = _checked(folder, report.brain_id)
    assert any(g.endswith("/view-spec") for g in graphs)
    assert any(g.endswith("/view-git") for g in graphs)
    # Every RFC section was compared (TLS: 270 numbered sections of RFC 8446 and RFC 9846:
    # RFC 8446's markdown letters its Contributors "F", which the RFC prints unnumbered, as the
    # published text is now read), and the comparisons were about something: rows on both sides.
    if which == "tls":
        assert check.cases["section_history"] == 270
    else:  # RFC 8999 to 9002, 9114 and 9204
        assert check.cases["section_history"] > 500
    assert check.cases["section_became"] > 1_000
    # QUIC has no GitHub archive, so no posts: its post lists are compared empty on both sides.
    assert all(check.rows[n] > 100 for n in check.rows if which == "tls" or n != "section_posts")
    assert check.differences == []
    assert check.broken_paths == []


def test_the_history_and_why_cards_read_the_view(tls_brain: Brain) -> None:
    for question, full_paths in [
        # The history card lists the section's posts and commits too (its timeline's marks).
        (
            "history of RFC 8446 section 4.2.10",
            {"section_history", "section_posts", "section_commits"},
        ),
        # The why card lists the section's history too.
        (
            "why does RFC 8446 section 4.2.10 say what it says?",
            {"section_posts", "section_commits", "section_history"},
        ),
        (
            "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
            {"section_became", "revision_chain"},
        ),
    ]:
        answer = tls_brain.ask(question)
        reproduced = {q.reproduces for q in answer.queries if q.reproduces}
        assert reproduced == full_paths, question
        assert {q.name for q in answer.queries} >= {f"view_{name}" for name in full_paths}
