"""``/sparql`` on the pigeon brain: the SPARQL 1.1 Protocol, its refusals and its limits."""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from urllib.parse import urlencode

import httpx
import pytest
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryResultsFormat,
    RdfFormat,
    Triple,
    parse,
    parse_query_results,
)
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.graph import publish
from ratified_rdf.queries.files import QueryError
from ratified_rdf.queries.sandbox import QuerySandbox
from ratified_rdf.surfaces import server
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import FOREVER_COUNT, FOREVER_ROWS, GENEROUS_S, tight_budget, until

LITERALS = "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o)) } ORDER BY ?s ?p ?o"
LABELS = (
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
    "SELECT ?s ?label WHERE { ?s rdfs:label ?label } ORDER BY ?s ?label"
)
# Queries that run forever, streamed and counted (tests/serve/deadlines.py): a test that needs
# a query ended gives it alone a tight budget, and every query that must succeed a generous one.
CARTESIAN = FOREVER_ROWS
BLOCKING = FOREVER_COUNT


@pytest.fixture(scope="module")
def client(pigeon_brain: Brain) -> Iterator[TestClient]:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as test_client:
        yield test_client


def _key(term: object) -> str:
    return str(term)


def _embedded_rows(brain: Brain, sparql: str) -> list[dict[str, str]]:
    """The embedded store's rows, terms in N-Triples form, in a stable order."""
    result = brain.query(sparql)
    return sorted(
        ({k: _key(t) for k, t in row.items()} for row in result.rows),
        key=lambda r: sorted(r.items()),
    )


def _parsed_rows(body: bytes, results_format: QueryResultsFormat) -> list[dict[str, str]]:
    solutions = parse_query_results(body, results_format)
    names = [variable.value for variable in solutions.variables]
    rows = [
        {name: _key(term) for name, term in zip(names, solution, strict=True) if term is not None}
        for solution in solutions
    ]
    return sorted(rows, key=lambda r: sorted(r.items()))


# --- the protocol's three ways to send a query -----------------------------------------------


def test_get_form_post_and_direct_post_answer_as_the_embedded_store(
    client: TestClient, pigeon_brain: Brain
) -> None:
    expected = _embedded_rows(pigeon_brain, LITERALS)
    assert len(expected) > 100
    responses = [
        client.get("/sparql", params={"query": LITERALS}),
        client.post("/sparql", data={"query": LITERALS}),
        client.post(
            "/sparql", content=LITERALS, headers={"Content-Type": "application/sparql-query"}
        ),
    ]
    for response in responses:
        assert response.status_code == 200, response.text
        assert response.headers["content-type"] == "application/sparql-results+json"
        assert _parsed_rows(response.content, QueryResultsFormat.JSON) == expected


@pytest.mark.parametrize(
    ("accept", "media", "results_format"),
    [
        ("application/sparql-results+json", "application/sparql-results+json", "JSON"),
        ("application/sparql-results+xml", "application/sparql-results+xml", "XML"),
        ("text/tab-separated-values", "text/tab-separated-values", "TSV"),
        ("application/json", "application/sparql-results+json", "JSON"),
        (
            "text/html;q=0.9, application/sparql-results+xml",
            "application/sparql-results+xml",
            "XML",
        ),
        ("*/*", "application/sparql-results+json", "JSON"),
    ],
)
def test_select_results_by_content_negotiation(
    client: TestClient, pigeon_brain: Brain, accept: str, media: str, results_format: str
) -> None:
    response = client.get("/sparql", params={"query": LITERALS}, headers={"Accept": accept})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == media
    assert "Accept" in response.headers["vary"].split(", ")
    parsed = _parsed_rows(response.content, getattr(QueryResultsFormat, results_format))
    assert parsed == _embedded_rows(pigeon_brain, LITERALS)


def test_csv_results_hold_the_plain_values(client: TestClient, pigeon_brain: Brain) -> None:
    response = client.get("/sparql", params={"query": LITERALS}, headers={"Accept": "text/csv"})
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/csv; charset=utf-8"
    rows = list(csv.reader(io.StringIO(response.text, newline="")))
    assert rows[0] == ["s", "p", "o"]
    expected = sorted(
        (row["s"].value, row["p"].value, row["o"].value)
        for row in pigeon_brain.query(LITERALS).rows
    )
    assert sorted(tuple(row) for row in rows[1:]) == expected


def test_format_parameter_wins_over_accept(client: TestClient) -> None:
    response = client.get(
        "/sparql",
        params={"query": LABELS, "format": "xml"},
        headers={"Accept": "application/sparql-results+json"},
    )
    assert response.headers["content-type"] == "application/sparql-results+xml"
    tsv = client.post("/sparql", data={"query": LABELS, "format": "text/tab-separated-values"})
    assert tsv.headers["content-type"].startswith("text/tab-separated-values")


def test_ask_in_json_and_xml(client: TestClient) -> None:
    yes = client.get("/sparql", params={"query": "ASK { ?s ?p ?o }"})
    assert yes.json() == {"head": {}, "boolean": True}
    no = client.get(
        "/sparql",
        params={"query": "ASK { <http://example.org/nothing> ?p ?o }"},
        headers={"Accept": "application/sparql-results+xml"},
    )
    assert no.status_code == 200
    assert "<boolean>false</boolean>" in no.text


@pytest.mark.parametrize(
    ("accept", "media", "rdf_format"),
    [
        ("text/turtle", "text/turtle", RdfFormat.TURTLE),
        ("application/n-triples", "application/n-triples", RdfFormat.N_TRIPLES),
        ("application/ld+json", "application/ld+json", RdfFormat.JSON_LD),
        ("application/rdf+xml", "application/rdf+xml", RdfFormat.RDF_XML),
        ("*/*", "text/turtle", RdfFormat.TURTLE),
    ],
)
def test_construct_by_content_negotiation(
    client: TestClient, pigeon_brain: Brain, accept: str, media: str, rdf_format: RdfFormat
) -> None:
    construct = (
        "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
        "CONSTRUCT { ?s rdfs:label ?label } WHERE { ?s rdfs:label ?label }"
    )
    response = client.post(
        "/sparql",
        content=construct,
        headers={"Content-Type": "application/sparql-query", "Accept": accept},
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].split(";")[0] == media
    got = {str(t) for t in parse(response.content, rdf_format)}
    label = NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    expected = {
        str(Triple(row["s"], label, row["label"])) for row in pigeon_brain.query(LABELS).rows
    }
    assert got == expected


def test_describe_returns_the_resource_triples(client: TestClient, pigeon_brain: Brain) -> None:
    iri = "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon/00"
    response = client.get(
        "/sparql",
        params={"query": f"DESCRIBE <{iri}>"},
        headers={"Accept": "application/n-triples"},
    )
    assert response.status_code == 200, response.text
    got = {str(t) for t in parse(response.content, RdfFormat.N_TRIPLES)}
    assert {str(t) for t in pigeon_brain.describe(iri)} <= got


def test_no_acceptable_format_is_406_with_the_choices(client: TestClient) -> None:
    select = client.get("/sparql", params={"query": LABELS}, headers={"Accept": "text/turtle"})
    assert select.status_code == 406
    assert "application/sparql-results+json" in select.text
    graph = client.get(
        "/sparql",
        params={"query": "CONSTRUCT WHERE { ?s ?p ?o } LIMIT 1", "format": "csv"},
    )
    assert graph.status_code == 406
    assert "text/turtle" in graph.text


# --- refusals --------------------------------------------------------------------------------


def test_malformed_query_is_400_with_the_parser_message(client: TestClient) -> None:
    response = client.get("/sparql", params={"query": "SELECT ?s WHERE { ?s ?p "})
    assert response.status_code == 400
    # The guard's parser reads it first and says where it stopped.
    assert response.text.startswith("The query is not valid SPARQL 1.1: line 1, column")


@pytest.mark.parametrize(
    ("method", "kwargs"),
    [
        ("POST", {"data": {"update": "CLEAR ALL"}}),
        (
            "POST",
            {
                "content": "INSERT DATA { <http://e/s> <http://e/p> <http://e/o> }",
                "headers": {"Content-Type": "application/sparql-update"},
            },
        ),
        ("GET", {"params": {"update": "CLEAR ALL"}}),
        ("GET", {"params": {"query": "# a comment\nINSERT DATA { <http://e/s> <http://e/p> 1 }"}}),
        ("POST", {"data": {"query": "PREFIX e: <http://e/> DELETE WHERE { ?s e:p ?o }"}}),
    ],
)
def test_updates_are_refused_with_403(
    client: TestClient, pigeon_brain: Brain, method: str, kwargs: dict[str, object]
) -> None:
    before = pigeon_brain.query("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }").rows[0]["n"]
    response = client.request(method, "/sparql", **kwargs)  # type: ignore[arg-type]
    assert response.status_code == 403
    assert "read-only" in response.text
    after = pigeon_brain.query("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }").rows[0]["n"]
    assert after == before


@pytest.mark.parametrize(
    "params",
    [
        {"query": "SELECT * FROM <http://example.org/g> WHERE { ?s ?p ?o }"},
        {"query": "select * from named <http://example.org/g> where { graph ?g { ?s ?p ?o } }"},
    ],
)
def test_dataset_clauses_are_refused_with_400(client: TestClient, params: dict[str, str]) -> None:
    response = client.get("/sparql", params=params)
    assert response.status_code == 400
    assert "fixed dataset" in response.text


def _count(client: TestClient, query: str, **dataset: list[str]) -> int:
    """A COUNT query's number, POSTed as a form with the protocol's dataset parameters
    (``default_graph_uri=[…]`` for ``default-graph-uri``), repeated as a store sends them."""
    fields = [("query", query)] + [
        (name.replace("_", "-"), graph) for name, graphs in dataset.items() for graph in graphs
    ]
    response = client.post(
        "/sparql",
        content=urlencode(fields),
        headers={
            "Accept": "application/sparql-results+json",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    assert response.status_code == 200, response.text
    return int(response.json()["results"]["bindings"][0]["n"]["value"])


def test_the_protocols_dataset_chooses_among_the_readers_graphs(
    client: TestClient, pigeon_brain: Brain
) -> None:
    # A store on a server (SparqlProtocolStore) names the graphs of every query this way.
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    first, second = pigeon_brain.read_graphs[:2]

    def here(graphs: list[str]) -> int:
        return int(pigeon_brain.reading.store.query(count, graphs).rows[0]["n"].value)

    assert _count(client, count, default_graph_uri=[first]) == here([first]) > 0
    both = _count(client, count, default_graph_uri=[first, second])
    assert both == here([first, second]) > here([first])
    named = "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
    assert _count(client, named, named_graph_uri=[first, second]) == 2
    # A name that is no graph the reader reads holds nothing, as one that does not exist.
    assert _count(client, count, default_graph_uri=["http://example.org/g"]) == 0
    assert _count(client, named, named_graph_uri=["http://example.org/g"]) == 0
    assert _count(client, count, named_graph_uri=[first]) == 0  # no default graph given


def test_the_protocols_dataset_may_name_the_catalog(
    client: TestClient, pigeon_brain: Brain
) -> None:
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    catalog = _count(client, count, default_graph_uri=[pigeon_brain.catalog])
    assert catalog == pigeon_brain.reading.catalog_size() > 0
    # The default graph stays the reader's graphs: the catalog is no part of their union.
    assert _count(client, count) == int(pigeon_brain.query(count).rows[0]["n"].value)


def test_from_in_names_and_strings_is_not_a_dataset_clause(client: TestClient) -> None:
    query = 'PREFIX ex: <http://e/from> SELECT ?from WHERE { BIND("FROM <x>" AS ?from) }'
    response = client.get("/sparql", params={"query": query})
    assert response.status_code == 200, response.text


def test_the_catalog_is_read_as_the_readers_dump_holds_it_and_never_by_from(
    client: TestClient, pigeon_brain: Brain
) -> None:
    # GRAPH names the catalog (as the reader may know it, publish.reader_catalog); FROM stays
    # refused, and the workers are only ever sent the reader's own view of it.
    catalog = pigeon_brain.catalog
    named = client.get(
        "/sparql",
        params={"query": f"SELECT ?s WHERE {{ GRAPH <{catalog}> {{ ?s ?p ?o }} }}"},
        headers={"Accept": "text/tab-separated-values"},
    )
    assert named.status_code == 200
    assert named.text.count("\n") == 1 + pigeon_brain.reading.catalog_size()
    for query in [
        f"SELECT ?s FROM <{catalog}> WHERE {{ ?s ?p ?o }}",
        f"SELECT ?g FROM NAMED <{catalog}> WHERE {{ GRAPH <{catalog}> {{ ?s ?p ?o }} }}",
    ]:
        assert client.get("/sparql", params={"query": query}).status_code == 400
    exported = pigeon_brain.reading.export([catalog])
    expected = publish.reader_catalog(pigeon_brain.reading.store, pigeon_brain.scope)
    assert {q.triple for q in parse(exported, RdfFormat.N_QUADS)} == set(expected)


def test_graph_names_are_the_read_graphs_and_the_catalog(
    client: TestClient, pigeon_brain: Brain
) -> None:
    response = client.get(
        "/sparql", params={"query": "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"}
    )
    graphs = {b["g"]["value"] for b in response.json()["results"]["bindings"]}
    assert graphs == {*pigeon_brain.read_graphs, pigeon_brain.catalog}


def test_service_never_reaches_out(
    client: TestClient, pigeon_brain: Brain, listener: tuple[str, list[bytes]]
) -> None:
    endpoint, seen = listener
    queries = [
        f"SELECT * WHERE {{ SERVICE <{endpoint}> {{ ?s ?p ?o }} }}",
        f"select * where {{ service silent <{endpoint}> {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ ?s ?p ?o .SERVICE <{endpoint}> {{ ?s ?p ?o }} }}",
        f"PREFIX e: <{endpoint}> SELECT * WHERE {{ ?s ?p ?o SERVICE e: {{ ?s ?p ?o }} }}",
        f"SELECT * WHERE {{ \\u0053ERVICE <{endpoint}> {{ ?s ?p ?o }} }}",
    ]
    for query in queries:
        response = client.get("/sparql", params={"query": query})
        assert response.status_code == 400, (query, response.text)
    time.sleep(0.3)
    assert seen == []
    # Below the endpoint's own check, the library refuses it too (every spelling).
    for query in queries:
        with pytest.raises(QueryError, match="SERVICE"):
            pigeon_brain.reading.evaluate(query)
    time.sleep(0.3)
    assert seen == []


@pytest.mark.parametrize(
    ("method", "kwargs", "status"),
    [
        ("PUT", {"params": {"query": "ASK {}"}}, 405),
        ("GET", {"params": [("query", "ASK {}"), ("query", "ASK {}")]}, 400),
        ("POST", {"content": "ASK {}", "headers": {"Content-Type": "text/plain"}}, 415),
        ("POST", {"content": "ASK {}"}, 415),
        (
            "POST",
            {
                "content": "ASK {}".encode("utf-16"),
                "headers": {"Content-Type": "application/sparql-query; charset=UTF-16"},
            },
            415,
        ),
        # Without a query, a client taking neither RDF nor HTML is asked for one (a browser
        # gets the query form: tests/serve/test_http_conventions.py; a client taking RDF the
        # service description: tests/serve/test_standard_surfaces.py).
        ("GET", {"headers": {"Accept": "text/csv"}}, 400),
    ],
)
def test_protocol_negative_cases(
    client: TestClient, method: str, kwargs: dict[str, object], status: int
) -> None:
    response = client.request(method, "/sparql", **kwargs)  # type: ignore[arg-type]
    assert response.status_code == status, response.text


# --- limits ---------------------------------------------------------------------------------


def test_results_over_the_row_limit_are_refused(pigeon_brain: Brain) -> None:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=5)) as small:
        # (A bare triple pattern streams under its own limit: see test_standard_surfaces.py.)
        query = "SELECT * WHERE { ?s ?p ?o FILTER(isIRI(?s)) }"
        over = small.get("/sparql", params={"query": query})
        assert over.status_code == 422
        assert "more than 5 rows" in over.text and "LIMIT" in over.text
        exact = small.get("/sparql", params={"query": query + " LIMIT 5"})
        assert exact.status_code == 200
        assert len(exact.json()["results"]["bindings"]) == 5
        triples = small.get("/sparql", params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"})
        assert triples.status_code == 422
        assert "more than 5 triples" in triples.text


def _until_replaced(sandbox: QuerySandbox) -> None:
    """Wait until an ended query's worker is replaced: its caller is answered first, and its
    slot is held until the replacement is loaded."""
    until(lambda: sandbox.busy == 0, "the ended query's worker was replaced")


def test_a_streaming_query_past_its_deadline_is_ended(pigeon_brain: Brain) -> None:
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=10**9)
    with TestClient(app) as slow:
        with tight_budget(app, 2.0):
            response = slow.get("/sparql", params={"query": CARTESIAN})
        assert response.status_code == 503
        assert "longer than the 2 s this endpoint allows" in response.text
        assert "was ended" in response.text
        # Ended, not abandoned: its worker was stopped, and none is held once it is replaced.
        assert app.state.sandbox.ended == 1
        _until_replaced(app.state.sandbox)
        assert slow.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200


def test_a_blocking_query_is_ended_and_the_server_keeps_serving(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    # BLOCKING yields no row until it has counted everything: only killing its worker stops it.
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=2)
    with serve(app) as base, httpx.Client(base_url=base, timeout=120) as http:
        with tight_budget(app, 2.0):
            response = http.get("/sparql", params={"query": BLOCKING})
        assert response.status_code == 503
        sandbox = app.state.sandbox
        assert sandbox.ended == 1
        _until_replaced(sandbox)
        # Its worker was killed (ended), and a fresh one started in its place, loaded with the
        # reader's graphs before the next query comes.
        [used] = [worker for worker in sandbox._all if worker.base_rss]
        assert used.alive()
        assert set(used.loaded) == {*pigeon_brain.read_graphs, pigeon_brain.catalog}
        assert http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200
        assert http.get("/api/holdings").status_code == 200


def test_a_query_that_waited_out_its_time_is_refused_as_busy(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    # One worker, held by another client for longer than a query may run: the query waits
    # its whole time budget for it and is refused with Retry-After, without ever running.
    # (The slot is held directly rather than by a second timed query, whose deadline would
    # race the first one's: the first one's worker can come free before the second's runs out.)
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)
    with serve(app) as base, httpx.Client(base_url=base, timeout=120) as http:
        http.get("/sparql", params={"query": "ASK {}"})  # start the worker
        sandbox = app.state.sandbox
        with sandbox._lock:
            sandbox._busy["token:someone-else"] = 1
        with tight_budget(app, 1.0):
            refused = http.get("/sparql", params={"query": BLOCKING})
        assert refused.status_code == 503 and "busy" in refused.text, refused.text
        assert refused.headers["retry-after"] == "5"
        assert sandbox.ended == 0 and not sandbox._waiting
        # Once the slot is given back, a waiting query takes it and runs.
        replies: list[httpx.Response] = []
        waiter = threading.Thread(
            target=lambda: replies.append(http.get("/sparql", params={"query": "ASK {}"})),
            daemon=True,
        )
        waiter.start()
        until(lambda: sandbox._waiting, "the query waits for the held worker")
        sandbox._release("token:someone-else")
        waiter.join(120)
        assert [r.status_code for r in replies] == [200]
        assert sandbox.busy == 0
        # A query that gets its worker and outruns its time is ended, not refused as busy.
        with tight_budget(app, 2.0):
            ended = http.get("/sparql", params={"query": BLOCKING})
        assert ended.status_code == 503 and "was ended" in ended.text, ended.text
        assert sandbox.ended == 1
        assert http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200


def test_one_client_cannot_hold_every_worker(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    # Two workers, one per client: a client's second heavy query waits for its own turn (and
    # runs out of time there), so the other worker stays free for everyone else. Only the two
    # heavy queries, which must be ended or refused, meet a short budget; which workers were
    # held is read as the second one starts to wait, rather than raced for by polling.
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=2, per_client=1)
    replies: list[httpx.Response] = []
    with serve(app) as base, httpx.Client(base_url=base, timeout=120) as http:
        assert http.get("/sparql", params={"query": "ASK {}"}).status_code == 200
        sandbox = app.state.sandbox
        held_as_one_waited = _holders_whenever_one_waits(sandbox)
        heavy = [
            threading.Thread(
                target=lambda: replies.append(http.get("/sparql", params={"query": BLOCKING})),
                daemon=True,
            )
            for _ in range(2)
        ]
        with tight_budget(app, 5.0):
            heavy[0].start()
            until(lambda: sandbox.busy, "the first heavy query holds a worker")
            heavy[1].start()
            until(lambda: held_as_one_waited, "the second heavy query waits")
        assert held_as_one_waited[0] == {"address:127.0.0.1": 1}
        # The other worker is kept for a client known to send quick queries (one that has
        # not sent any yet waits for a general one, which a freed worker gives it first).
        sandbox._charge("token:someone-else", 0.01)
        assert sandbox._may_take("token:someone-else")
        for thread in heavy:
            thread.join(120)
    assert len(replies) == 2 and 503 in {r.status_code for r in replies}
    assert sandbox.ended >= 1


def _holders_whenever_one_waits(sandbox: QuerySandbox) -> list[dict[str, int]]:
    """A list that gets, each time a query starts to wait for a worker, which clients held
    how many workers at that moment (read under the sandbox's lock, as the wait begins)."""
    seen: list[dict[str, int]] = []

    class Watched(list):
        def append(self, waiter: object) -> None:
            seen.append(dict(sandbox._busy))
            super().append(waiter)

    sandbox._waiting = Watched(sandbox._waiting)
    return seen


def test_concurrent_queries_wait_for_a_free_worker(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)
    statuses: list[int] = []
    with serve(app) as base:

        def ask() -> None:
            with httpx.Client(base_url=base, timeout=120) as http:
                for _ in range(5):
                    response = http.get("/sparql", params={"query": LABELS})
                    statuses.append(response.status_code)

        threads = [threading.Thread(target=ask) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(600)
    assert statuses == [200] * 30
    assert app.state.sandbox.busy == 0


# --- negotiation rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "chosen"),
    [
        (None, "a/json"),
        ("", "a/json"),
        ("*/*", "a/json"),
        ("a/xml", "a/xml"),
        ("a/*;q=0.5, a/xml", "a/xml"),
        ("a/json;q=0.2, a/xml;q=0.8", "a/xml"),
        ("a/json;q=0, */*", "a/xml"),
        ("b/html", None),
        ("A/XML", "a/xml"),
    ],
)
def test_negotiate(header: str | None, chosen: str | None) -> None:
    assert server._negotiate(header, ["a/json", "a/xml"]) == chosen


def test_results_survive_the_tsv_hop_unchanged(client: TestClient, pigeon_brain: Brain) -> None:
    # Rows go engine → TSV → pyoxigraph's writer: awkward terms must come out as the engine
    # gave them (it reads 1.5e3 as the double 1500 itself).
    values = [
        Literal('tab\there, newline\nthere, quote " and backslash \\ and CR\r'),
        Literal("chat", language="fr"),
        Literal("1.5e3", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#double")),
        Literal("☃ 𝄞 é"),
        NamedNode("http://example.org/a?b=c#d"),
    ]
    query = (
        "SELECT ?v ?unbound WHERE { VALUES ?v { "
        + " ".join(str(value) for value in values)
        + " } OPTIONAL { ?v <http://example.org/p> ?unbound } }"
    )
    response = client.get(
        "/sparql", params={"query": query}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 200, response.text
    got = [tuple(s) for s in parse_query_results(response.content, QueryResultsFormat.JSON)]
    engine = [(row["v"], None) for row in pigeon_brain.query(query).rows]
    assert got == engine
    assert {values[0], values[1], values[3], values[4]} <= {v for v, _ in got}
    blank = client.get("/sparql", params={"query": "SELECT ?b WHERE { BIND(BNODE() AS ?b) }"})
    (solution,) = parse_query_results(blank.content, QueryResultsFormat.JSON)
    assert isinstance(solution["b"], BlankNode)
