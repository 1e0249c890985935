"""SPARQL injection through questions, query parameters and tenant ids.

A hostile value must come back as an error (a ``QueryError``, ``BrainError`` or
``TenantIdError`` saying what to do) or travel as data: a literal or IRI inside the ``VALUES``
row of the query, never as query text. Every attack is checked three ways:

* the store is unchanged afterwards: every graph, every triple (hashed), the default graph, and
  the reader's ``Brain.content_hash()``;
* each query an answer ran (its ``QueryRun``) is the query file's text exactly, except the
  ``VALUES`` row, and that row, evaluated on its own, yields exactly the parameters as typed
  RDF terms (so no quote, brace or comment in a value escaped its literal);
* only the documented error types ever escape.

The pigeon brain is built once for the module (in memory).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings

from ratified_rdf import Brain
from ratified_rdf.graph.store import OxigraphStore, StoreError
from ratified_rdf.queries import QueryRun
from ratified_rdf.queries.files import QueryError, QueryFile
from ratified_rdf.trust import Reader, TenantIdError
from tests.fuzz import strategies as fs
from tests.fuzz.brain_checks import DOCUMENTED, fingerprint, pigeon_brain, values_problems
from tests.fuzz.harness import FIXTURES, Verdict, observe

# Deterministic examples, no example database, no deadline (see test_readers.py).
SHORT = settings(
    max_examples=100,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
# function_scoped_fixture: the per-example checks do not depend on the function-scoped
# "untouched" fixture being reset between examples; it checks the store after the whole test.

RFC = "https://w3id.org/ratified-rdf/id/doc/rfc9999"

HOSTILE_QUESTIONS = (
    'who discussed section 4.2.1" } ; DROP ALL ; #',
    'who discussed section 2.1\\" } ; DROP ALL ; #',
    "history of RFC 9999 section 2.1' } DELETE WHERE { ?s ?p ?o } #",
    "what did section 2.1 of draft-example-pigeon-01 become in the RFC? > } DROP ALL { <",
    'who is Bob" } ; DROP ALL ; #?',
    "who is Bob' } ; CLEAR ALL ; #?",
    'what did x") } UNION { GRAPH ?g { ?s ?p ?o } } #  work on?',
    'what did """ } INSERT DATA { <a:b> <a:c> <a:d> } #""" work on?',
    "who is \\u0022 } DROP ALL { \\u0022?",
    "who is <https://x> } DROP ALL { <y>?",
    "who is a\x00b?",
    "who is \u202e\u200b\ufeff?",
    "what is PR #2 } DROP ALL",
    'revisions of draft-example-pigeon"}DROP ALL{',
    'why does early data work this way? "} ; INSERT DATA { <a:b> <a:c> <a:d> } #',
    "who should I ask about key share'; CLEAR DEFAULT; #",
    "how many posts referred to §2.1 ?s ?p ?o } } ; DROP ALL #",
    'what did RFC 9999 section 2.1 say on 2029-06-01"^^<x> } DROP ALL',
    "what did section 2.1 say on 2029-02-30?",
    "who discussed section 2.1 SERVICE <http://127.0.0.1:9/> { ?s ?p ?o }",
    'what does the graph hold" } ; LOAD <file:///etc/passwd> ; #',
)


# ---------------------------------------------------------------------------- the brain


@pytest.fixture(scope="module")
def pigeon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Brain, OxigraphStore]]:
    """The pigeon brain and its store, built once for this module."""
    brain, store = pigeon_brain(tmp_path_factory.mktemp("pigeon"))
    yield brain, store
    brain.close()


@pytest.fixture
def brain(pigeon: tuple[Brain, OxigraphStore]) -> Brain:
    return pigeon[0]


@pytest.fixture
def store(pigeon: tuple[Brain, OxigraphStore]) -> OxigraphStore:
    return pigeon[1]


@pytest.fixture(autouse=True)
def untouched(pigeon: tuple[Brain, OxigraphStore]) -> Iterator[None]:
    """Every test here leaves the store exactly as it found it."""
    before = fingerprint(*pigeon)
    yield
    assert fingerprint(*pigeon) == before, "the store changed"


def test_the_fingerprint_sees_a_change(brain: Brain, store: OxigraphStore) -> None:
    before = fingerprint(brain, store)
    graph = brain.read_graphs[0]
    triple = pyoxigraph.Triple(
        pyoxigraph.NamedNode("a:s"), pyoxigraph.NamedNode("a:p"), pyoxigraph.NamedNode("a:o")
    )
    store.add(graph, [triple])
    try:
        assert fingerprint(brain, store) != before
    finally:
        store.replace(graph, [triple], [])
    assert fingerprint(brain, store) == before


# ---------------------------------------------------------------------------- bound queries


def assert_values_only(run: QueryRun) -> None:
    """``run`` holds the attacker's values only as typed terms (see ``values_problems``)."""
    problems = values_problems(run)
    assert not problems, "\n".join(problems)


def _ask(brain: Brain, question: str) -> None:
    """Ask, allowing only documented errors; check every query the answer ran."""
    answers: list[Any] = []
    outcome = observe(
        lambda: answers.append(brain.ask(question)),
        documented=DOCUMENTED,
        bound=10.0,
    )
    assert outcome.verdict is not Verdict.BUG, outcome.describe(question)
    for answer in answers:
        assert answer.queries, "an answer ran no query"
        for run in answer.queries:
            assert_values_only(run)


# ---------------------------------------------------------------------------- questions


@pytest.mark.parametrize("question", HOSTILE_QUESTIONS)
def test_hostile_question_travels_as_data(brain: Brain, question: str) -> None:
    _ask(brain, question)


@SHORT
@given(question=fs.injection_questions)
def test_any_question_travels_as_data(brain: Brain, store: OxigraphStore, question: str) -> None:
    size = len(store.graphs())
    _ask(brain, question)
    assert len(store.graphs()) == size


@pytest.mark.parametrize("question", ["who is \ud800?", "what did \udfff work on?"])
def test_question_with_a_lone_surrogate_is_an_answer_or_a_query_error(
    brain: Brain, question: str
) -> None:
    _ask(brain, question)


def test_dates_at_the_edges_of_time_are_answered(brain: Brain) -> None:
    def asked(moment: datetime, keyword: str) -> Callable[[], object]:
        question = "what did RFC 9999 section 2.1 say?"
        return lambda: brain.ask(question, **{keyword: moment})

    for moment in (datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59)):
        for keyword in ("as_of", "valid_at"):
            outcome = observe(asked(moment, keyword), documented=DOCUMENTED, bound=10.0)
            assert outcome.verdict is not Verdict.BUG, outcome.detail


# ---------------------------------------------------------------------------- parameters


def test_the_issue_example_is_refused(brain: Brain) -> None:
    with pytest.raises(QueryError, match=r"\?rfc must be an absolute IRI"):
        brain.run(
            "rfc_section",
            rfc="https://x> } DROP ALL {",
            sectionNumber='4" } ; DELETE WHERE { ?s ?p ?o } #',
        )


def test_a_hostile_string_parameter_is_one_literal(brain: Brain) -> None:
    hostile = '4" } ; DELETE WHERE { ?s ?p ?o } #'
    rows, run = brain.run("rfc_section", rfc=RFC, sectionNumber=hostile)
    assert rows == []
    assert_values_only(run)
    assert run.params["sectionNumber"] == hostile


@pytest.mark.parametrize(
    "value",
    ["1 } DROP ALL {", "1.5", "", " 1", "0x10", "1e3", "١٢٣٤٥٦٧٨٩٠١٢٣٤٥٦٧٨٩", 10**19, True, None],
)
def test_an_integer_parameter_takes_only_a_whole_number(brain: Brain, value: object) -> None:
    with pytest.raises(QueryError, match=r"\?number must be a whole number"):
        brain.run("thread", number=value)  # type: ignore[arg-type]


@SHORT
@given(case=fs.query_parameters())
def test_any_parameter_travels_as_a_typed_term_or_is_refused(
    brain: Brain, case: tuple[QueryFile, dict[str, Any]]
) -> None:
    query, params = case
    runs: list[QueryRun] = []
    outcome = observe(
        lambda: runs.append(brain.run(query.name, **params)[1]),
        documented=DOCUMENTED,
        bound=10.0,
    )
    assert outcome.verdict is not Verdict.BUG, outcome.describe(repr(params))
    for run in runs:
        assert_values_only(run)


def test_a_string_parameter_with_a_lone_surrogate_is_a_query_error(brain: Brain) -> None:
    with pytest.raises(QueryError, match=r"\?who holds a lone surrogate"):
        brain.run("person", who="Bob\ud800")


@pytest.mark.parametrize(
    "iri",
    [
        "https://x/\n",
        "https://x/\x00",
        "https://x/\x7f",
        "https://x/%zz",
        "https://x/[",
        "a:\ud800",
    ],
)
def test_an_iri_parameter_that_is_not_an_iri_is_a_query_error(brain: Brain, iri: str) -> None:
    with pytest.raises(QueryError, match=r"\?rfc must be an absolute IRI"):
        brain.run("rfc_section", rfc=iri, sectionNumber="1")


@pytest.mark.parametrize(
    "name", ["holdings; DROP ALL", "holdings.rq", "", " ", "x\x00", "/etc/passwd", "nope"]
)
def test_an_unknown_query_name_is_refused(brain: Brain, name: str) -> None:
    with pytest.raises(QueryError):
        brain.run(name)


def test_a_query_name_cannot_reach_outside_the_query_folder(brain: Brain) -> None:
    with pytest.raises(QueryError):
        brain.run("../sparql/holdings")


def test_unknown_and_missing_parameters_are_refused(brain: Brain) -> None:
    with pytest.raises(QueryError, match="has no parameter"):
        brain.run("rfc_section", rfc=RFC, sectionNumber="1", extra="} DROP ALL {")
    with pytest.raises(QueryError, match="needs a value"):
        brain.run("rfc_section", rfc=RFC)
    with pytest.raises(QueryError, match="of one length"):
        brain.run("rfc_section", rfc=(RFC, RFC), sectionNumber=("1",))


@pytest.mark.parametrize(
    "sparql",
    [
        "DROP ALL",
        "DELETE WHERE { ?s ?p ?o }",
        "INSERT DATA { <a:b> <a:c> <a:d> }",
        "SELECT * WHERE { ?s ?p ?o } ; DROP ALL",
        "LOAD <file:///etc/passwd>",
        "CLEAR DEFAULT",
        "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
        "CONSTRUCT WHERE { ?s ?p ?o }",
    ],
)
def test_a_reader_query_cannot_write(brain: Brain, sparql: str) -> None:
    # pyoxigraph's own SyntaxError is what a reader sees for update syntax: an error either way.
    with pytest.raises((QueryError, StoreError, SyntaxError)):
        brain.query(sparql)


# ---------------------------------------------------------------------------- tenants


def _tenant_attacks() -> list[str]:
    attacks = []
    for line in (FIXTURES / "tenant_attacks.txt").read_text(encoding="ascii").split("\n"):
        if line and not line.startswith("#"):
            attacks.append(codecs.decode(line.split(" ", 1)[1], "unicode_escape"))
    return attacks


TENANT_ATTACKS = _tenant_attacks()


def test_every_hostile_tenant_id_is_refused(brain: Brain, store: OxigraphStore) -> None:
    assert len(TENANT_ATTACKS) > 300
    for attack in [*TENANT_ATTACKS, 5, b"default", ["default"], ""]:
        with pytest.raises(TenantIdError) as caught:
            Brain.from_store(store, reader=Reader(tenant=attack))  # type: ignore[arg-type]
        if isinstance(attack, str) and len(attack) >= 8:
            assert attack not in str(caught.value)
        with pytest.raises(TenantIdError):
            brain.read_as(brain.reader.but(tenant=attack))  # type: ignore[arg-type]


@SHORT
@given(tenant=fs.tenant_ids)
def test_any_tenant_id_is_refused_or_names_a_tenant_without_a_brain(
    store: OxigraphStore, tenant: str
) -> None:
    outcome = observe(
        lambda: Brain.from_store(store, reader=Reader(tenant=tenant)),
        documented=DOCUMENTED,
        bound=5.0,
    )
    assert outcome.verdict is not Verdict.BUG, outcome.describe(tenant)
    if outcome.verdict is Verdict.PARSED:
        assert tenant == "default"
