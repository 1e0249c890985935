"""Issue 18's attacks, kept as regression tests: smuggling SERVICE and FROM past the guard,
exhausting the server, flooding the audit log. Every one must fail closed, and a listener on
loopback (the attacker's endpoint) must see no connection at all."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import httpx
import pytest
from pyoxigraph import Store
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog, AuditRecord
from ratified_rdf.queries import guard, offline, sandbox
from ratified_rdf.queries.guard import AUDITED_TEXT_CHARS, QueryRefused, check_reader_query
from ratified_rdf.surfaces.server import MAX_BODY_BYTES, create_app
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.serve.deadlines import GENEROUS_S, until

# {url} is the attacker's endpoint. Each text is legal SPARQL that some reading of it calls
# that endpoint (or names a dataset); none may run.
SERVICE_DISGUISES = [
    "SELECT * WHERE { SERVICE <{url}> { ?s ?p ?o } }",
    "select * where { service <{url}> { ?s ?p ?o } }",
    "SeLeCt * WhErE { SeRvIcE SiLeNt <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { BIND(1<'>' AS ?z) SERVICE <{url}> { ?x ?y ?w } }",
    'SELECT * WHERE { BIND(1<">" AS ?z) SERVICE <{url}> { ?x ?y ?w } }',
    "SELECT * WHERE { BIND('<' AS ?a) BIND('>' AS ?b) SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o #> comment\n SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p '''#''' SERVICE <{url}> { ?s ?p ?o } }",
    'SELECT * WHERE { ?s ?p """multi\nline""" SERVICE <{url}> { ?s ?p ?o } }',
    "SELECT * WHERE { ?s ?p 'it\\'s' SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { \\u0053ERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { \\U00000053\\U00000045RVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE { SERV\\u0049CE <{url}> { ?s ?p ?o } }",
    "PREFIX e: <{url}> SELECT * WHERE { SERVICE e: { ?s ?p ?o } }",
    "BASE <{url}> SELECT * WHERE { SERVICE <> { ?s ?p ?o } }",
    "SELECT * WHERE { ?s ?p ?o .SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT * WHERE {SERVICE<{url}>{?s ?p ?o}}",
    "SELECT * WHERE { { { { SERVICE <{url}> { ?s ?p ?o } } } } }",
    "SELECT * WHERE { { SELECT * WHERE { SERVICE <{url}> { ?s ?p ?o } } } }",
    "SELECT * WHERE { OPTIONAL { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { { ?s ?p ?o } UNION { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { ?s ?p ?o MINUS { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { ?s ?p ?o FILTER EXISTS { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { GRAPH ?g { SERVICE <{url}> { ?s ?p ?o } } }",
    "SELECT * WHERE { BIND(<{url}> AS ?u) SERVICE ?u { ?s ?p ?o } }",
    "SELECT * WHERE { VALUES ?u { <{url}> } SERVICE ?u { ?s ?p ?o } }",
    "ASK { SERVICE <{url}> { ?s ?p ?o } }",
    "CONSTRUCT { ?s ?p ?o } WHERE { SERVICE <{url}> { ?s ?p ?o } }",
    "DESCRIBE ?s WHERE { SERVICE <{url}> { ?s ?p ?o } }",
    "SELECT (COUNT(*) AS ?n) WHERE { SERVICE <{url}> { ?s ?p ?o } } GROUP BY ?s",
    "SELECT * WHERE { SERVICE\t\n<{url}>\r\n{ ?s ?p ?o } }",
]
DATASET_DISGUISES = [
    "SELECT * FROM <{url}> WHERE { ?s ?p ?o }",
    "select * from named <{url}> where { graph ?g { ?s ?p ?o } }",
    "SELECT * WHERE { BIND(1<'>' AS ?z) } ",  # harmless on its own: the next one is not
    "SELECT * FROM <{url}> WHERE { BIND(1<'>' AS ?z) }",
    "SELECT * \\u0046ROM <{url}> WHERE { ?s ?p ?o }",
    "PREFIX e: <{url}> SELECT * FROM e: WHERE { ?s ?p ?o }",
    "ASK FROM <{url}> { ?s ?p ?o }",
    "CONSTRUCT WHERE { ?s ?p ?o }",  # harmless
    "CONSTRUCT { ?s ?p ?o } FROM <{url}> WHERE { ?s ?p ?o }",
    "DESCRIBE <{url}> FROM <{url}>",
]
HARMLESS = {2, 7}
UPDATES = [
    "INSERT DATA { <http://e/s> <http://e/p> <http://e/o> }",
    "# a comment\nDELETE WHERE { ?s ?p ?o }",
    "PREFIX e: <http://e/> DELETE { ?s e:p ?o } WHERE { ?s e:p ?o }",
    "LOAD <{url}>",
    "CLEAR ALL",
    "DROP GRAPH <http://e/g>",
    "\\u0049NSERT DATA { <http://e/s> <http://e/p> 1 }",
    "WITH <http://e/g> DELETE { ?s ?p ?o } WHERE { ?s ?p ?o }",
]


@pytest.fixture(scope="module")
def client(pigeon_brain: Brain) -> Iterator[TestClient]:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as test_client:
        yield test_client


def test_there_are_at_least_thirty_disguises() -> None:
    assert len(SERVICE_DISGUISES) >= 30
    assert len({text for text in SERVICE_DISGUISES}) == len(SERVICE_DISGUISES)


@pytest.mark.parametrize("template", SERVICE_DISGUISES)
def test_service_in_disguise_is_refused_everywhere(
    template: str,
    client: TestClient,
    pigeon_brain: Brain,
    listener: tuple[str, list[bytes]],
) -> None:
    url, seen = listener
    text = template.replace("{url}", url)
    with pytest.raises(QueryRefused) as refused:
        check_reader_query(text)
    # Refused as SERVICE, or as text the guard cannot read (where rdflib's parser is stricter
    # than Oxigraph's): never run either way.
    assert refused.value.reason in {"service", "syntax"}
    response = client.get("/sparql", params={"query": text})
    assert response.status_code == 400, response.text
    posted = client.post(
        "/sparql", content=text, headers={"Content-Type": "application/sparql-query"}
    )
    assert posted.status_code == 400
    with pytest.raises(QueryRefused):
        pigeon_brain.query(text)
    assert seen == []


@pytest.mark.parametrize("index", range(len(DATASET_DISGUISES)))
def test_dataset_clauses_in_disguise_are_refused(
    index: int, client: TestClient, listener: tuple[str, list[bytes]]
) -> None:
    url, seen = listener
    text = DATASET_DISGUISES[index].replace("{url}", url)
    response = client.get("/sparql", params={"query": text})
    if index in HARMLESS:
        assert response.status_code == 200, response.text
    else:
        assert response.status_code == 400, response.text
        assert "fixed dataset" in response.text
    assert seen == []


@pytest.mark.parametrize("template", UPDATES)
def test_updates_are_refused_as_updates(
    template: str, client: TestClient, pigeon_brain: Brain, listener: tuple[str, list[bytes]]
) -> None:
    url, seen = listener
    text = template.replace("{url}", url)
    with pytest.raises(QueryRefused) as refused:
        check_reader_query(text)
    assert refused.value.reason == "update"
    assert client.get("/sparql", params={"query": text}).status_code == 403
    assert seen == []


def test_a_variable_service_is_a_refusal_not_a_bug(client: TestClient) -> None:
    response = client.get("/sparql", params={"query": "SELECT * WHERE { SERVICE ?u { ?s ?p ?o } }"})
    assert response.status_code == 400
    assert "bug" not in response.text


# --- the second wall: the engine cannot connect even when the guard is bypassed ---------------


def test_a_sealed_thread_cannot_connect_but_the_caller_can(
    listener: tuple[str, list[bytes]],
) -> None:
    if not offline.NETWORK_SEALED:
        pytest.fail("This platform cannot seal threads off the network; the guard stands alone.")
    url, seen = listener
    port = int(url.rsplit(":", 1)[1].split("/")[0])

    def connect() -> str:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
        except OSError as error:
            return type(error).__name__
        return "connected"

    assert offline.run_offline(connect) == "PermissionError"
    assert seen == []
    assert connect() == "connected"  # the caller's own thread keeps its network
    until(lambda: seen, "the listener takes the caller's connection")
    assert len(seen) == 1


def test_the_engine_on_a_sealed_thread_never_reaches_the_listener(
    listener: tuple[str, list[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the sandbox's worker runs a query, but with the guard switched off: the seal alone.
    url, seen = listener
    monkeypatch.setattr(
        guard, "check_reader_query", lambda sparql: guard.ReaderQuery("SELECT", sparql)
    )
    store = Store()

    def run() -> tuple[object, ...]:
        return sandbox._answer(
            store,
            f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
            (),
            "application/sparql-results+json",
            None,
            10,
        )

    reply = offline.run_offline(run)
    assert reply[0] == "error" and reply[1] == 500, reply
    time.sleep(0.3)
    assert seen == []


# --- exhaustion -------------------------------------------------------------------------------

# Every triple against every other, sorted: the engine holds the whole join before a row.
SORTED_JOIN = "SELECT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?a ?d ?c ?f"


def test_a_query_over_its_memory_ceiling_is_ended_and_the_server_stays_up(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    # Only the memory ceiling ends the sorted join; the query after it must succeed, and has
    # the roomy budget (it waits for the ended worker's replacement).
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_memory_mib=32, max_rows=10**9)
    with serve(app) as base, httpx.Client(base_url=base, timeout=GENEROUS_S + 60) as http:
        response = http.get("/sparql", params={"query": SORTED_JOIN})
        assert response.status_code == 503, response.text[:300]
        assert "more than the 32 MiB" in response.text
        assert app.state.sandbox.ended == 1
        # The answer comes at once; the next query waits for the ended worker's replacement.
        assert http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200
        assert app.state.sandbox.busy == 0
        assert http.get("/api/holdings").status_code == 200


def test_an_oversized_body_is_413_and_never_audited(tmp_path: Path) -> None:
    log = AuditLog.open(tmp_path / "audit")
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), audit=log)
    before = sum(f.stat().st_size for f in (tmp_path / "audit").iterdir())
    body = b"SELECT * WHERE { ?s ?p ?o } #" + b"x" * 100_000_000  # the 100 MB of issue 18
    with TestClient(create_app(brain, query_timeout_s=GENEROUS_S)) as client:
        response = client.post(
            "/sparql", content=body, headers={"Content-Type": "application/sparql-query"}
        )
        assert response.status_code == 413, response.text
        small = b"SELECT * WHERE { ?s ?p ?o } #" + b"x" * (MAX_BODY_BYTES * 2)
        form = client.post("/sparql", data={"query": small.decode()})
        assert form.status_code == 413
        # No Content-Length (chunked): the body is read only up to the limit.
        chunks = (b"x" * 65_536 for _ in range(MAX_BODY_BYTES // 65_536 + 2))
        streamed = client.post(
            "/sparql", content=chunks, headers={"Content-Type": "application/sparql-query"}
        )
        assert streamed.status_code == 413
    after = sum(f.stat().st_size for f in (tmp_path / "audit").iterdir())
    assert after - before < 1024


def test_a_long_query_is_audited_by_digest_and_length(tmp_path: Path) -> None:
    log = AuditLog.open(tmp_path / "audit")
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), audit=log)
    long_query = "ASK { ?s ?p ?o } #" + "y" * (AUDITED_TEXT_CHARS * 4)
    with TestClient(create_app(brain, query_timeout_s=GENEROUS_S)) as client:
        assert client.get("/sparql", params={"query": "ASK {}"}).status_code == 200
        before = sum(f.stat().st_size for f in (tmp_path / "audit").iterdir())
        response = client.post(
            "/sparql", content=long_query, headers={"Content-Type": "application/sparql-query"}
        )
        assert response.status_code == 200, response.text
    after = sum(f.stat().st_size for f in (tmp_path / "audit").iterdir())
    assert after - before < 2048
    (record,) = [
        e
        for e in log.entries()
        if isinstance(e, AuditRecord)
        and isinstance(e.subject, dict)
        and e.subject.get("sparql_chars") == len(long_query)
    ]
    assert isinstance(record.subject, dict)
    assert "sparql" not in record.subject
    assert len(str(record.subject["sparql_sha256"])) == 64


def test_a_question_over_the_limit_is_refused(client: TestClient) -> None:
    response = client.get("/api/ask", params={"q": "why " * 400})
    assert response.status_code == 400
    assert "characters" in response.json()["error"]
