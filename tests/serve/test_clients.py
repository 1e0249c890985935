"""Real SPARQL clients against a running server: SPARQLWrapper and rdflib's SPARQLStore, used
as their documentation shows, must see what the embedded store sees."""

from __future__ import annotations

import io
import urllib.error
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager

import pytest
import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from rdflib.query import Result
from SPARQLWrapper import JSON, POST, POSTDIRECTLY, TURTLE, XML, SPARQLWrapper
from starlette.applications import Starlette

from ratified_rdf import Brain
from ratified_rdf.graph.store import Term
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import FOREVER_ROWS, GENEROUS_S, tight_budget

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
LITERALS = "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }"
SECTIONS = (
    "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
    "SELECT ?revision ?section WHERE { ?revision rr:hasSection ?section }"
)
CONSTRUCT = (
    "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
    "CONSTRUCT { ?revision rr:hasSection ?section } WHERE { ?revision rr:hasSection ?section }"
)
Row = tuple[tuple[str, tuple[str, str, str]], ...]


def _json_term(term: Term) -> tuple[str, str, str]:
    """A term as (type, value, datatype or language), the shape of SPARQL JSON results."""
    if isinstance(term, NamedNode):
        return ("uri", term.value, "")
    if isinstance(term, BlankNode):
        return ("bnode", term.value, "")
    assert isinstance(term, Literal)
    extra = term.language or ("" if term.datatype.value == XSD_STRING else term.datatype.value)
    return ("literal", term.value, extra)


def embedded(brain: Brain, sparql: str) -> list[Row]:
    """What ``brain.query`` returns, as sorted rows of comparable tuples."""
    rows = [
        tuple(sorted((k, _json_term(t)) for k, t in row.items()))
        for row in brain.query(sparql).rows
    ]
    return sorted(rows)


def as_rdflib_reads(rows: list[Row]) -> list[Row]:
    """Rows with every literal as rdflib reads it off the wire (it normalises lexical forms:
    a dateTime ending in Z comes back ending in +00:00)."""

    def term(value: tuple[str, str, str]) -> tuple[str, str, str]:
        kind, text, extra = value
        if kind != "literal":
            return value
        is_datatype = extra.startswith(("http://", "https://"))
        literal = rdflib.Literal(
            text,
            lang=None if is_datatype or not extra else extra,
            datatype=rdflib.URIRef(extra) if is_datatype else None,
        )
        return (kind, str(literal), extra)

    return sorted(tuple((name, term(value)) for name, value in row) for row in rows)


def from_json(bindings: list[dict[str, dict[str, str]]]) -> list[Row]:
    """SPARQL JSON bindings as sorted rows of comparable tuples."""
    rows = []
    for binding in bindings:
        row = []
        for name, term in binding.items():
            kind = "literal" if term["type"] == "typed-literal" else term["type"]
            extra = term.get("xml:lang") or term.get("datatype", "")
            row.append((name, (kind, term["value"], "" if extra == XSD_STRING else extra)))
        rows.append(tuple(sorted(row)))
    return sorted(rows)


def from_rdflib(result: Result) -> list[Row]:
    """rdflib result rows as sorted rows of comparable tuples."""
    rows = []
    names = [str(var) for var in result.vars or []]
    for solution in result:
        row = []
        for name, term in zip(names, solution, strict=True):
            if term is None:
                continue
            if isinstance(term, rdflib.URIRef):
                row.append((name, ("uri", str(term), "")))
            elif isinstance(term, rdflib.BNode):
                row.append((name, ("bnode", str(term), "")))
            else:
                extra = term.language or (str(term.datatype) if term.datatype else "")
                row.append((name, ("literal", str(term), "" if extra == XSD_STRING else extra)))
        rows.append(tuple(sorted(row)))
    return sorted(rows)


def wrapper(endpoint: str, sparql: str, return_format: str) -> SPARQLWrapper:
    """A SPARQLWrapper set up the way its documentation shows."""
    client = SPARQLWrapper(endpoint)
    client.setQuery(sparql)
    client.setReturnFormat(return_format)
    return client


@pytest.fixture(scope="module")
def served(pigeon_brain: Brain) -> Starlette:
    """The app the module's clients talk to."""
    return create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=10**9)


@pytest.fixture(scope="module")
def endpoint(
    served: Starlette, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> Iterator[str]:
    with serve(served) as base:
        yield f"{base}/sparql"


@pytest.mark.parametrize("sparql", [LITERALS, SECTIONS])
def test_sparqlwrapper_json_sees_the_embedded_rows(
    endpoint: str, pigeon_brain: Brain, sparql: str
) -> None:
    result = wrapper(endpoint, sparql, JSON).queryAndConvert()
    assert isinstance(result, dict)
    assert from_json(result["results"]["bindings"]) == embedded(pigeon_brain, sparql)


def test_sparqlwrapper_xml_sees_the_embedded_rows(endpoint: str, pigeon_brain: Brain) -> None:
    client = wrapper(endpoint, LITERALS, XML)
    client.setMethod(POST)
    raw = client.query().response.read()
    parsed = from_rdflib(Result.parse(io.BytesIO(raw), format="xml"))
    assert parsed == as_rdflib_reads(embedded(pigeon_brain, LITERALS))


def test_sparqlwrapper_construct_in_turtle(endpoint: str, pigeon_brain: Brain) -> None:
    client = wrapper(endpoint, CONSTRUCT, TURTLE)
    client.setMethod(POST)
    client.setRequestMethod(POSTDIRECTLY)
    graph = rdflib.Graph().parse(data=client.queryAndConvert(), format="turtle")
    expected = {(row[0][1][1], row[1][1][1]) for row in embedded(pigeon_brain, SECTIONS)}
    assert {(str(s), str(o)) for s, _, o in graph} == expected
    assert len(graph) == len(expected) > 20


def test_rdflib_sparqlstore_sees_the_embedded_rows(endpoint: str, pigeon_brain: Brain) -> None:
    graph = rdflib.Graph(store=SPARQLStore(endpoint))
    expected = as_rdflib_reads(embedded(pigeon_brain, LITERALS))
    assert from_rdflib(graph.query(LITERALS)) == expected
    ask = graph.query("ASK { ?s ?p ?o }")
    assert ask.askAnswer is True


def test_an_update_through_sparqlwrapper_is_refused(endpoint: str, pigeon_brain: Brain) -> None:
    before = len(pigeon_brain.query(LITERALS).rows)
    client = wrapper(endpoint, 'INSERT DATA { <http://e/s> <http://e/p> "o" }', JSON)
    client.setMethod(POST)
    with pytest.raises(urllib.error.HTTPError) as refused:
        client.query()
    assert refused.value.code == 403
    assert b"read-only" in refused.value.read()
    assert len(pigeon_brain.query(LITERALS).rows) == before


def test_an_overlong_query_through_sparqlwrapper_times_out_cleanly(
    endpoint: str, served: Starlette
) -> None:
    client = wrapper(endpoint, FOREVER_ROWS, JSON)
    with tight_budget(served, 2.0), pytest.raises(urllib.error.HTTPError) as timed_out:
        client.query()
    assert timed_out.value.code == 503
    assert b"longer than the 2 s" in timed_out.value.read()


def test_an_overlarge_result_through_sparqlwrapper_is_refused(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    with serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=500)) as base:
        # (A bare triple pattern streams under its own limit: see test_standard_surfaces.py.)
        query = "SELECT * WHERE { ?s ?p ?o FILTER(isIRI(?s)) }"
        client = wrapper(f"{base}/sparql", query, JSON)
        with pytest.raises(urllib.error.HTTPError) as refused:
            client.query()
    assert refused.value.code == 422
    assert b"more than 500 rows" in refused.value.read()


# --- the card queries on the real brain -------------------------------------------------------

EXAMPLES = (
    "why does early data work this way?",
    "who should I ask about key share?",
    "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
    "how did the IESG vote on draft-ietf-tls-tls13?",
)


def without_comment_lines(sparql: str) -> str:
    """The query without its header comments.

    SPARQLWrapper 2.0 strips comments with a pattern that eats the newline ending each one,
    so of several comment lines in a row it removes every other; it then finds "add" in a
    remaining line's "address" and sends the query as an update (which this endpoint
    refuses). The card queries open with such comments, so SPARQLWrapper gets them without.
    """
    return "\n".join(line for line in sparql.splitlines() if not line.lstrip().startswith("#"))


@pytest.mark.corpus
def test_card_queries_over_http_equal_the_embedded_store(
    tls_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    queries = {q.sparql: q.name for question in EXAMPLES for q in tls_brain.ask(question).queries}
    assert len(queries) >= 10
    with serve(create_app(tls_brain, max_rows=100_000, query_timeout_s=GENEROUS_S)) as base:
        store = rdflib.Graph(store=SPARQLStore(f"{base}/sparql"))
        for sparql, name in queries.items():
            expected = embedded(tls_brain, sparql)
            client = wrapper(f"{base}/sparql", without_comment_lines(sparql), JSON)
            result = client.queryAndConvert()
            assert isinstance(result, dict)
            assert from_json(result["results"]["bindings"]) == expected, name
            assert from_rdflib(store.query(sparql)) == as_rdflib_reads(expected), name
