"""Any text to the question router and the heading search: always an answer (a ``Route``, a
``SearchResult``), the same one every time and in every process, and in bounded time even for
100 kB of text built to make regular expressions backtrack.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import ratified_rdf
from ratified_rdf import Brain, InputError
from ratified_rdf.answers.asking import MAX_QUESTION_CHARS
from ratified_rdf.answers.heading_search import HeadingIndex, SearchResult
from ratified_rdf.answers.router import Route, route
from tests.fuzz.brain_checks import pigeon_brain
from tests.fuzz.harness import (
    QUESTIONS_PATHOLOGICAL,
    REPO,
    STRETCH,
    Pathological,
    Verdict,
    bound_for,
    known,
    observe,
)
from tests.fuzz.strategies import ROUTER_TOKENS, questions

# Deterministic examples, no example database, no deadline (see test_readers.py).
SHORT = settings(
    max_examples=150,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
ROUTE_BOUND_S = 1.0
"""Seconds routing the two examples of the issue may take (a real question takes microseconds,
100 kB of ordinary text about 0.1 s)."""


def _routed(question: str, bound: float | None = None) -> Route:
    """The route of ``question``, failing the test on an exception or a hang."""
    found: list[Route] = []

    def call() -> Route:
        found.append(route(question))
        return found[-1]

    outcome = observe(
        call,
        documented=(),
        bound=bound or bound_for(len(question.encode("utf-8", "surrogatepass"))),
        check_result=lambda r: [] if isinstance(r, Route) else ["route returned no Route"],
    )
    assert outcome.verdict is Verdict.PARSED, outcome.describe(question)
    return found[0]


@SHORT
@given(questions)
def test_any_text_gets_one_route_deterministically(question: str) -> None:
    first = _routed(question)
    assert route(question) == first
    # The router reads words, not spacing: the same words spaced differently route the same.
    assert route("  \n".join(question.split())) == first
    if first.section is not None:
        assert first.section in " ".join(question.split()).upper()


def _sample_questions(count: int) -> list[str]:
    """Questions from the router's vocabulary, the same ones every time."""
    rng = random.Random(4)
    return [
        " ".join(rng.choice(ROUTER_TOKENS) for _ in range(rng.randint(1, 12))) for _ in range(count)
    ]


def test_routes_are_the_same_in_another_process_with_another_hash_seed() -> None:
    sample = _sample_questions(400)
    here = [route(q).model_dump(mode="json") for q in sample]
    script = (
        "import json, sys\n"
        "from ratified_rdf.answers.router import route\n"
        "questions = json.load(sys.stdin)\n"
        "json.dump([route(q).model_dump(mode='json') for q in questions], sys.stdout)\n"
    )
    # The same package this process imports, whatever the installed one is.
    source = str(Path(ratified_rdf.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (source, os.environ.get("PYTHONPATH", "")) if p)
    environment = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": path}
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(sample),
        capture_output=True,
        text=True,
        env=environment,
        cwd=REPO,
        timeout=300,  # a hang guard: a fresh interpreter's imports, on a busy machine
        check=True,
    )
    assert json.loads(done.stdout) == here


def _cases(target: str) -> list[object]:
    return [
        pytest.param(
            case,
            id=case.name,
            marks=[pytest.mark.xfail(strict=True, reason=known(case.bug))] if case.bug else [],
        )
        for case in QUESTIONS_PATHOLOGICAL
        if case.reader == target and case.ci
    ]


@pytest.mark.parametrize("case", _cases("router"))
def test_pathological_question_is_routed_in_bounded_time(case: Pathological) -> None:
    _routed(case.build(STRETCH).decode("utf-8"), bound=case.bound)


def test_the_examples_of_the_issue_are_routed_quickly() -> None:
    for question in ("section " * 10000, "§1." * 5000):
        _routed(question, bound=ROUTE_BOUND_S)


# ---------------------------------------------------------------------------- heading search


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Brain]:
    """The pigeon brain, built once for this module."""
    built, _store = pigeon_brain(tmp_path_factory.mktemp("pigeon"))
    yield built
    built.close()


@pytest.fixture(scope="module")
def index(brain: Brain) -> HeadingIndex:
    built, _run = brain.reading.heading_index()
    assert len(built) > 0
    return built


def _searched(index: HeadingIndex, question: str, bound: float | None = None) -> SearchResult:
    found: list[SearchResult] = []

    def call() -> SearchResult:
        found.append(index.search(question))
        return found[-1]

    def check(result: object) -> list[str]:
        if not isinstance(result, SearchResult):
            return ["search returned no SearchResult"]
        scores = [hit.score for hit in result.hits]
        problems = [] if scores == sorted(scores, reverse=True) else ["hits are not best first"]
        if len(result.hits) > 10:
            problems.append(f"{len(result.hits)} hits, over the limit of 10")
        return problems

    outcome = observe(
        call,
        documented=(),
        bound=bound or bound_for(len(question.encode("utf-8", "surrogatepass"))),
        check_result=check,
    )
    assert outcome.verdict is Verdict.PARSED, outcome.describe(question)
    return found[0]


@SHORT
@given(questions)
def test_heading_search_answers_any_text_deterministically(
    index: HeadingIndex, question: str
) -> None:
    first = _searched(index, question)
    assert index.search(question) == first
    assert first.question == question


@pytest.mark.parametrize("case", _cases("heading_search"))
def test_pathological_heading_search_is_bounded(index: HeadingIndex, case: Pathological) -> None:
    _searched(index, case.build(STRETCH).decode("utf-8"), bound=case.bound)


def test_asking_100_kb_is_refused_in_bounded_time(brain: Brain) -> None:
    # The router reads 100 KB in bounded time (above); the brain refuses a question that long
    # before routing it (MAX_QUESTION_CHARS), and one at the limit is answered.
    unit = "early data work this way "
    question = "why does " + unit * (STRETCH // len(unit))
    outcome = observe(lambda: brain.ask(question), documented=(InputError,), bound=ROUTE_BOUND_S)
    assert outcome.verdict is Verdict.ERROR, outcome.describe(question)
    assert "characters long" in outcome.detail
    longest = question[:MAX_QUESTION_CHARS]
    outcome = observe(lambda: brain.ask(longest), documented=(), bound=2 * ROUTE_BOUND_S)
    assert outcome.verdict is Verdict.PARSED, outcome.describe(longest)
