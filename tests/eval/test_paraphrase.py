"""The paraphrase suite (issue 20): its question files, the new expectation shapes, and a full
run against the TLS and QUIC brains.

The corpus run asserts the issue's bar: at least 95% right overall and on the held-out block,
none confidently wrong, every out-of-scope question "doesn't know"; a held-out miss is printed
(a question fixed after it was seen failing moves to the tuned block).

The DTLS 1.3 block (``paraphrase_dtls.toml``) is held out differently: written by someone who
had not read the router or these files, on a corpus the router was not tuned on, scored once
and never edited. Its corpus run does not ask for the bar above, which that block did not meet
when first scored; it asserts that no question is confidently wrong but those that were at that
first scoring and are not mended yet (the list may only shrink; it is empty now), and prints
the score. Run it, with the per-type
tables printed, by::

    python -m pytest tests/eval/test_paraphrase.py -m corpus -s
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf.answers.models import (
    Answer,
    Evidence,
    Expert,
    HistoryEntry,
    PersonActivity,
    ThreadInfo,
    Verdict,
)
from ratified_rdf.evaluation import (
    EvalReport,
    Question,
    format_table,
    format_type_table,
    load_questions,
    run_eval,
    score_answer,
)
from ratified_rdf.evaluation.questions import Expectation, QuestionFileError

HERE = Path(__file__).resolve().parent
FILES = {"tls": HERE / "paraphrase_tls.toml", "quic": HERE / "paraphrase_quic.toml"}
TLSWG = HERE / "paraphrase_tlswg.toml"
"""Issue 53's reading families asked on the DTLS 1.3 corpus (tuned, not held out)."""
FAMILIES = {"names", "numbers", "first_rule", "tolerant"}
HELD_OUT = HERE / "paraphrase_dtls.toml"
"""The outsider's block on the DTLS 1.3 corpus: held-out only, never edited."""
FIRST_SCORE_WRONG: frozenset[str] = frozenset()
"""The DTLS questions still confidently wrong of those wrong when the block was first scored:
a fix removes ids from here; nothing is ever added. The first score, the honest figure, is in
the block's header: 93 right, 3 abstained, 9 confidently wrong (d09, d18, d20, d21, d25, d42,
d45, d85, d98); after the first fixes 7 (d09, d20, d21, d25, d42, d45, d85); after round two
none (d09's expectation corrected against git, as its header says)."""
INTENTS = {
    "section_became",
    "section_history",
    "section_at",
    "section_diff",
    "discussion",
    "who_to_ask",
    "count",
    "thread",
    "threads",
    "person",
    "person_section",
    "experts",
    "document",
    "where_is",
    "revisions",
    "revision_chain",
    "holdings",
    "entity",
    "out_of_scope",
}
RFC = "https://www.rfc-editor.org/rfc/rfc8446#section-"


def _all() -> list[Question]:
    return [q for path in FILES.values() for q in load_questions(path)]


# ------------------------------------------------------------------- the question files


def test_the_suite_is_as_large_as_the_issue_asks() -> None:
    questions = _all()
    assert len(questions) >= 300
    assert sum(q.expect.verdict == "unknown" for q in questions) >= 40
    assert sum(q.block == "held-out" for q in questions) >= 60
    for path in FILES.values():
        assert {q.block for q in load_questions(path)} == {"tuned", "held-out"}


def test_every_question_type_is_asked_ten_ways() -> None:
    ways: dict[str, set[str]] = defaultdict(set)
    for question in _all():
        ways[question.intent].add(question.text.casefold())
    assert set(ways) == INTENTS
    assert {intent: len(texts) for intent, texts in ways.items() if len(texts) < 10} == {}


def test_the_held_out_block_spans_every_type_and_both_corpora() -> None:
    held = [q for q in _all() if q.block == "held-out"]
    assert {q.intent for q in held} == INTENTS
    for path in FILES.values():
        assert sum(q.block == "held-out" for q in load_questions(path)) >= 25


def test_every_expectation_but_unknown_is_derived() -> None:
    for question in _all():
        assert (question.derive is None) == (question.expect.verdict == "unknown"), question.id
        assert (question.intent == "out_of_scope") == (question.expect.verdict == "unknown")


def test_the_issue_s_own_examples_are_asked() -> None:
    texts = {q.text for q in load_questions(FILES["tls"])}
    for example in [
        "what RFC did draft-ietf-tls-tls13 become?",
        "was draft-ietf-tls-tls13 published as an RFC?",
        "when was RFC 8446 published?",
        "what month did RFC 8446 come out?",
        "who are the editors of draft-ietf-tls-rfc8446bis?",
        "who wrote draft-ietf-tls-rfc8446bis?",
        "which section of RFC 9846 covers key derivation and HKDF?",
        "what did #785 change?",
        "how did the key schedule evolve?",
        "who talked about supported versions?",
        "what was the discussion on 0-RTT replay?",
        "which issues are still open about early data?",
        "what PRs changed section 4.2.11?",
        "who discussed RFC 8446 section 4.2.1 while it was still changing?",
        "what changed between draft-20 and draft-21 in section 4.2.9?",
        "what did ekr change in section 4.4.1?",
    ]:
        assert example in texts, example


def test_each_reading_family_is_asked_ten_ways_on_every_corpus() -> None:
    # Issue 53's families, each asked at least ten ways, on TLS, QUIC and DTLS 1.3 alike
    # (tests/corpus/test_issue53_reading.py asks them of three more tlswg repositories).
    by_file = {path.name: load_questions(path) for path in [*FILES.values(), TLSWG]}
    ways: dict[str, set[str]] = defaultdict(set)
    for questions in by_file.values():
        for question in questions:
            if question.family:
                ways[question.family].add(question.text.casefold())
    assert {family: len(texts) for family, texts in ways.items()} == {
        family: len(ways[family]) for family in FAMILIES
    }
    assert min(len(texts) for texts in ways.values()) >= 10
    for name, questions in by_file.items():
        assert {q.family for q in questions if q.family} == FAMILIES, name
    tlswg = load_questions(TLSWG)
    for question in tlswg:
        assert question.family is not None, question.id
        assert (question.derive is None) == (question.expect.verdict == "unknown"), question.id
        assert (question.family == "first_rule") == (question.intent == "out_of_scope")


def test_the_outsider_block_is_held_out_and_asks_every_type() -> None:
    questions = load_questions(HELD_OUT)
    assert len(questions) >= 60
    assert {q.block for q in questions} == {"held-out"}
    assert {q.intent for q in questions} == INTENTS
    assert sum(q.expect.verdict == "unknown" for q in questions) >= 10
    for question in questions:
        assert (question.derive is None) == (question.expect.verdict == "unknown"), question.id
        assert (question.intent == "out_of_scope") == (question.expect.verdict == "unknown")
    header = HELD_OUT.read_text(encoding="utf-8").split("[[question]]")[0]
    assert "NEVER edited" in header and "FIRST SCORE" in header
    assert {q.id for q in questions} >= FIRST_SCORE_WRONG


@pytest.mark.corpus
def test_the_outsider_block_s_expectations_are_current(dtls_bundle: Path) -> None:
    sys.path.insert(0, str(HERE))
    import make_expectations

    for question in load_questions(HELD_OUT):
        if question.derive:
            fresh = Expectation.model_validate(make_expectations.expectation(question.derive))
            assert question.expect == fresh, question.id


@pytest.mark.corpus
def test_the_tlswg_families_expectations_are_current(dtls_bundle: Path) -> None:
    sys.path.insert(0, str(HERE))
    import make_expectations

    for question in load_questions(TLSWG):
        if question.derive:
            fresh = Expectation.model_validate(make_expectations.expectation(question.derive))
            assert question.expect == fresh, question.id


@pytest.mark.corpus
def test_expectations_are_current_with_the_independent_parser(
    tls_bundle: Path, quic_bundle: Path
) -> None:
    sys.path.insert(0, str(HERE))
    import make_expectations

    for path in FILES.values():
        for question in load_questions(path):
            if question.derive:
                fresh = Expectation.model_validate(make_expectations.expectation(question.derive))
                assert question.expect == fresh, question.id


# ------------------------------------------------------------------- the new shapes


def _question(expect: dict[str, object], intent: str = "document") -> Question:
    return Question.model_validate(
        {"id": "p1", "text": "hand-made", "intent": intent, "block": "tuned", "kind": "lookup"}
        | {"expect": expect}
    )


def _answer(
    *results: object, verdict: Verdict = Verdict.ANSWERED, url: str | None = None
) -> Answer:
    evidence = [Evidence(iri="urn:s", label="s", url=url, role="rfc-section")] if url else []
    return Answer(
        question="hand-made",
        intent="x",
        verdict=verdict,
        summary="hand-made",
        results=list(results),
        evidence=evidence,
    )


def _thread(number: int, state: str) -> ThreadInfo:
    return ThreadInfo(
        number=number,
        title="t",
        state=state,
        url=f"https://github.com/x/y/issues/{number}",
        author=None,
        created="",
        is_pull_request=state == "merged",
    )


def _person(name: str) -> PersonActivity:
    return PersonActivity(name=name, posts=1, commits=2)


def test_malformed_shapes_are_refused() -> None:
    for bad in [
        {"document": "RFC 8446", "thread": 785},
        {"became": 8446},
        {"thread": 785, "rfc": 8446, "section": "4.2.1"},
        {"person": ["ekr"], "also": ["9846 4.3.1"]},
        {"person": []},
        {"revisions": ["draft-x-00"], "top": 3},
        {"thread": 785, "empty": True},
        {"rfc": 8446},
    ]:
        with pytest.raises(ValueError):
            _question(bad)
    assert _question({"thread_state": "merged", "rfc": 8446, "section": "4.2.11"}).expect
    assert not _question({"person": ["ekr"], "rfc": 8446, "section": "4.4.1"}).retrievable


def test_a_malformed_file_names_the_question(tmp_path: Path) -> None:
    path = tmp_path / "q.toml"
    path.write_text(
        '[[question]]\nid = "z9"\nblock = "held-out"\nkind = "lookup"\nintent = "thread"\n'
        'text = "x"\nexpect = { thread = 1, document = "RFC 1" }\n',
        encoding="utf-8",
    )
    with pytest.raises(QuestionFileError, match="z9"):
        load_questions(path)


def _document(**fields: object) -> object:
    models = pytest.importorskip("ratified_rdf.answers.models")
    if not hasattr(models, "DocumentFacts"):
        pytest.skip("the answers package has no DocumentFacts yet")
    base = {
        "name": "draft-ietf-tls-tls13",
        "title": "TLS 1.3",
        "url": "https://datatracker.ietf.org/doc/draft-ietf-tls-tls13/",
        "is_rfc": False,
        "rfc_number": 8446,
        "published": "2018-08",
        "editors": ["Eric Rescorla"],
        "revisions": 29,
    }
    return models.DocumentFacts(**(base | fields))


def test_document_facts_are_read_from_the_named_document() -> None:
    became = _question({"document": "draft-ietf-tls-tls13", "became": 8446})
    assert score_answer(became, _answer(_document())).correct
    assert not score_answer(became, _answer(_document(rfc_number=9846))).correct
    assert score_answer(became, _answer(_document(), verdict=Verdict.AMBIGUOUS)).status == (
        "flagged"
    )
    rfc = _question({"document": "RFC 8446", "published": "2018-08"})
    named = _document(name="rfc8446", is_rfc=True)  # names compare without case or spaces
    assert score_answer(rfc, _answer(_document(), named)).correct
    wrong = score_answer(rfc, _answer(_document()))
    assert wrong.status == "confidently_wrong" and "RFC 8446" in (wrong.why or "")
    editors = _question({"document": "draft-ietf-tls-tls13", "editors": ["eric rescorla"]})
    assert score_answer(editors, _answer(_document())).correct
    assert not score_answer(editors, _answer(_document(editors=["A", "B"]))).correct
    count = _question({"document": "draft-ietf-tls-tls13", "revisions_count": 29})
    assert score_answer(count, _answer(_document())).correct
    assert not score_answer(count, _answer(_document(revisions=28))).correct


def test_a_thread_must_come_first() -> None:
    expect = _question({"thread": 785}, "thread")
    assert score_answer(expect, _answer(_thread(785, "closed"), _thread(786, "closed"))).correct
    later = score_answer(expect, _answer(_thread(786, "closed"), _thread(785, "closed")))
    assert not later.correct and "#786" in (later.why or "")
    assert score_answer(expect, _answer()).status == "confidently_wrong"
    assert score_answer(expect, _answer(verdict=Verdict.UNKNOWN)).status == "abstained"


def test_thread_states_every_one_and_the_empty_case() -> None:
    merged = _question({"thread_state": "merged"}, "threads")
    assert score_answer(merged, _answer(_thread(1, "MERGED"), _thread(2, "merged"))).correct
    assert not score_answer(merged, _answer(_thread(1, "merged"), _thread(2, "closed"))).correct
    assert not score_answer(merged, _answer()).correct
    none_open = _question({"thread_state": "open", "empty": True}, "threads")
    assert score_answer(none_open, _answer()).correct
    assert score_answer(none_open, _answer(_thread(3, "closed"))).correct
    assert not score_answer(none_open, _answer(_thread(3, "open"))).correct
    assert not score_answer(none_open, _answer(verdict=Verdict.UNKNOWN)).correct
    from_merge = _thread(4, "").model_copy(update={"merge_commit": "https://x/commit/1"})
    assert score_answer(merged, _answer(from_merge)).correct  # known from its merge alone
    assert not score_answer(merged, _answer(_thread(5, ""))).correct
    on_section = _question({"thread_state": "merged", "rfc": 8446, "section": "4.2.11"}, "threads")
    assert score_answer(on_section, _answer(_thread(1, "merged"), url=RFC + "4.2.11")).correct
    elsewhere = score_answer(on_section, _answer(_thread(1, "merged"), url=RFC + "4.2.10"))
    assert not elsewhere.correct and "4.2.10" in (elsewhere.why or "")


def test_a_person_by_any_alias_among_the_first_top() -> None:
    ekr = _question({"person": ["Eric Rescorla", "ekr"]}, "person")
    assert score_answer(ekr, _answer(_person("EKR "))).correct
    assert score_answer(ekr, _answer(_person("eric  rescorla"))).correct
    assert not score_answer(ekr, _answer(_person("David Benjamin"), _person("ekr"))).correct
    expert = Expert(name="ekr", iri="urn:p", role="editor", reason="r")
    top = _question({"person": ["Eric Rescorla", "ekr"], "top": 3}, "experts")
    assert score_answer(top, _answer(_person("A"), _person("B"), expert)).correct
    assert not score_answer(top, _answer(_person("A"), _person("B"), _person("C"), expert)).correct
    on_section = _question(
        {"person": ["Eric Rescorla", "ekr"], "rfc": 8446, "section": "4.4.1"}, "person_section"
    )
    assert score_answer(on_section, _answer(_person("ekr"), url=RFC + "4.4.1")).correct
    assert not score_answer(on_section, _answer(_person("ekr"), url=RFC + "4.4.2")).correct
    assert not score_answer(on_section, _answer(_person("ekr"))).correct


def test_diffs_and_texts_list_their_revisions() -> None:
    models = pytest.importorskip("ratified_rdf.answers.models")
    if not hasattr(models, "SectionDiff"):
        pytest.skip("the answers package has no SectionDiff yet")
    diff = models.SectionDiff(
        older="draft-ietf-tls-tls13-20",
        newer="draft-ietf-tls-tls13-21",
        older_number="4.2.9",
        newer_number="4.2.9",
        heading="Early Data Indication",
        newer_heading="Early Data Indication",
        similarity=0.8,
        older_url="https://datatracker.ietf.org/doc/html/draft-ietf-tls-tls13-20",
        newer_url=None,
    )
    pair = _question(
        {"revisions": ["draft-ietf-tls-tls13-20", "draft-ietf-tls-tls13-21"]}, "section_diff"
    )
    assert score_answer(pair, _answer(diff)).correct
    text = models.SectionText(
        document="draft-ietf-tls-tls13-20",
        section_number="4.2.9",
        heading="Early Data Indication",
        text="…",
        current_from="2017-04-28",
        current_until="2017-07-03",
        url="https://datatracker.ietf.org/doc/html/draft-ietf-tls-tls13-20",
    )
    one = _question({"revisions": ["draft-ietf-tls-tls13-20"]}, "section_at")
    assert score_answer(one, _answer(text)).correct
    entry = HistoryEntry(
        document="draft-ietf-tls-tls13-21",
        revision_number="21",
        date=None,
        section_number="4.2.9",
        heading="Early Data Indication",
        similarity=1.0,
        still_changing=True,
        rule="same-heading",
        url="https://datatracker.ietf.org/doc/html/draft-ietf-tls-tls13-21",
    )
    assert not score_answer(one, _answer(text, entry)).correct  # two listed, one expected


def test_holdings_are_counted_by_kind() -> None:
    models = pytest.importorskip("ratified_rdf.answers.models")
    rfcs = _question({"count": 2, "what": "RFCs"}, "holdings")
    held = _answer(models.Holding(what="drafts", count=3), models.Holding(what="RFCs", count=2))
    assert score_answer(rfcs, held).correct
    assert not score_answer(rfcs, _answer(models.Holding(what="drafts", count=2))).correct


def test_the_per_type_table_has_a_row_per_intent() -> None:
    questions = [
        _question({"thread": 785}, "thread"),
        _question({"verdict": "unknown"}, "out_of_scope").model_copy(update={"id": "p2"}),
    ]
    from ratified_rdf.evaluation.score import aggregates

    outcomes = [
        score_answer(questions[0], _answer(_thread(785, "closed"))),
        score_answer(questions[1], _answer(verdict=Verdict.UNKNOWN)),
    ]
    report = EvalReport(
        questions_path="x",
        questions=2,
        held_out=0,
        outcomes=outcomes,
        aggregates=aggregates(questions, outcomes),
    )
    assert report.aggregates["type/thread"].correct == 1
    assert report.aggregates["tuned/type/out_of_scope"].n == 1
    table = format_type_table({"tls": report, "quic": report})
    assert "thread" in table and "out_of_scope" in table and "tls" in table
    assert "2/2 (100%)" in format_type_table(report)


# ------------------------------------------------------------------- the corpus run


@pytest.fixture(scope="module")
def quic_brain(quic_build: tuple[Path, BuildReport]) -> Iterator[Brain]:
    # Closed after this module: other modules open the same store (and its audit log).
    brain = Brain.open(quic_build[0])
    yield brain
    brain.close()


@pytest.fixture(scope="module")
def reports(tls_brain: Brain, quic_brain: Brain) -> dict[str, EvalReport]:
    """One run per corpus, without the retrieval baselines (they are test_eval's)."""
    return {
        "tls": run_eval(tls_brain, FILES["tls"], baselines=(), progress=False),
        "quic": run_eval(quic_brain, FILES["quic"], baselines=(), progress=False),
    }


@pytest.mark.corpus
def test_the_paraphrase_suite_meets_the_bar(reports: dict[str, EvalReport]) -> None:
    print()
    print(format_type_table(reports))
    for name, report in reports.items():
        print(f"\n== {name}\n{format_table(report)}")
    outcomes = [o for r in reports.values() for o in r.outcomes]
    held = [o for o in outcomes if o.block == "held-out"]
    wrong = [f"{o.id} {o.text!r}: {o.why}" for o in outcomes if o.status == "confidently_wrong"]
    unknown = {o.id for o in outcomes if o.expected == "verdict unknown"}
    said = Counter(o.verdict for o in outcomes if o.id in unknown)
    for outcome in held:  # a held-out miss is reported; fixing it makes the question tuned
        if not outcome.correct:
            print(f"held-out miss {outcome.id} ({outcome.status}) {outcome.text!r}: {outcome.why}")
    assert sum(o.correct for o in outcomes) >= 0.95 * len(outcomes)
    assert sum(o.correct for o in held) >= 0.95 * len(held)
    assert wrong == []
    assert said == Counter({"unknown": len(unknown)})


@pytest.fixture(scope="module")
def dtls_reports(dtls_build: tuple[Path, BuildReport]) -> Iterator[dict[Path, EvalReport]]:
    """The DTLS block's run, and the tlswg families', on a brain built from
    records/tlswg/dtls13-spec."""
    brain = Brain.open(dtls_build[0])
    try:
        yield {
            path: run_eval(brain, path, baselines=(), progress=False) for path in (HELD_OUT, TLSWG)
        }
    finally:
        brain.close()


@pytest.fixture(scope="module")
def dtls_report(dtls_reports: dict[Path, EvalReport]) -> EvalReport:
    return dtls_reports[HELD_OUT]


@pytest.mark.corpus
def test_the_tlswg_families_are_all_read_right(dtls_reports: dict[Path, EvalReport]) -> None:
    report = dtls_reports[TLSWG]
    print()
    print(format_table(report))
    missed = {f"{o.id} ({o.status}) {o.text!r}: {o.why}" for o in report.outcomes if not o.correct}
    assert missed == set()


@pytest.mark.corpus
def test_the_outsider_block_adds_no_confidently_wrong_answer(dtls_report: EvalReport) -> None:
    print()
    print(format_table(dtls_report))
    right = sum(o.correct for o in dtls_report.outcomes)
    print(f"DTLS held-out block: {right}/{len(dtls_report.outcomes)} right")
    wrong = {
        o.id: f"{o.text!r}: {o.why}"
        for o in dtls_report.outcomes
        if o.status == "confidently_wrong"
    }
    for outcome in dtls_report.outcomes:
        if not outcome.correct:
            print(f"held-out miss {outcome.id} ({outcome.status}) {outcome.text!r}: {outcome.why}")
    mended = sorted(FIRST_SCORE_WRONG - set(wrong))
    if mended:
        print(f"No longer confidently wrong (remove from FIRST_SCORE_WRONG): {', '.join(mended)}")
    assert {k: v for k, v in wrong.items() if k not in FIRST_SCORE_WRONG} == {}
