"""Query workers that read a checkpoint of the brain's store on disk (issue 54): ready without
loading an export of the reader's graphs, and still confined to them.

A worker's checkpoint holds every graph of the store, other tenants' and the full catalog
among them; each query's dataset is restricted to the reader's graphs by the engine's dataset
arguments, and the catalog is replaced by the reader's view of it. These tests try to reach
the graphs that are not the reader's by every query form, and check that a write to the store
reaches the next query.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import NamedNode, Quad, Store

from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits

OURS = "urn:x-test:tenant/pigeons/graph/lofts"
THEIRS = "urn:x-test:tenant/sparrows/graph/nests"
CATALOG = "urn:x-test:tenant/pigeons/graph/catalog"
SECRET = "urn:x-test:sparrow/secret"
HIDDEN_RUN = "urn:x-test:run/restricted"
JSON = "application/sparql-results+json"
TURTLE = "text/turtle"
GUARD_TRIES = 2_000
"""How many times a test looks for the copy in memory at most, so that a copy that is never
made fails the test instead of hanging it."""


def _quad(s: str, p: str, o: str, g: str) -> Quad:
    return Quad(NamedNode(s), NamedNode(p), NamedNode(o), NamedNode(g))


class Exports:
    """The reader's export: the catalog as the reader may know it (no restricted run), or
    the reader's own graph as the store holds it (what the copy in memory loads)."""

    def __init__(self, store: Path) -> None:
        self.calls: list[tuple[str, ...]] = []
        self._store = store

    def __call__(self, graphs: Sequence[str]) -> bytes:
        self.calls.append(tuple(graphs))
        if tuple(graphs) == (CATALOG,):
            return f"<urn:x-test:run/public> <urn:x-test:wrote> <{OURS}> <{CATALOG}> .\n".encode()
        assert tuple(graphs) == (OURS,), "only the reader's graphs are exported"
        held = Store.read_only(str(self._store))
        return b"".join(
            f"{q.subject} {q.predicate} {q.object} <{OURS}> .\n".encode()
            for q in held.quads_for_pattern(None, None, None, NamedNode(OURS))
        )


class Generation:
    """The store's write generation, moved by the test."""

    def __init__(self) -> None:
        self.value = 0

    def __call__(self) -> int:
        return self.value


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    folder = tmp_path / "brain"
    made = Store(str(folder))
    made.extend(
        [
            _quad("urn:x-test:loft/1", "urn:x-test:holds", "urn:x-test:pigeon/1", OURS),
            _quad(SECRET, "urn:x-test:says", "urn:x-test:nest/hidden", THEIRS),
            _quad("urn:x-test:run/public", "urn:x-test:wrote", OURS, CATALOG),
            _quad(HIDDEN_RUN, "urn:x-test:wrote", THEIRS, CATALOG),
        ]
    )
    made.flush()
    del made
    return folder


@pytest.fixture()
def generation() -> Generation:
    return Generation()


@pytest.fixture()
def sandbox(store: Path, generation: Generation) -> Iterator[QuerySandbox]:
    made = QuerySandbox(SandboxLimits(workers=1, timeout_s=600), generation, store=store)
    yield made
    made.close()


def _ask(sandbox: QuerySandbox, sparql: str, export: Exports, media: str = JSON) -> bytes:
    graph_form = media == TURTLE
    request = QueryRequest(
        sparql,
        (OURS,),
        None if graph_form else media,
        media if graph_form else None,
        named=(OURS, CATALOG),
        views=((CATALOG, "public"),),
    )
    deadline = time.monotonic() + 600
    return asyncio.run(sandbox.run("address:127.0.0.9", request, export, deadline=deadline)).body


def _values(body: bytes) -> set[str]:
    rows = json.loads(body)["results"]["bindings"]
    return {term["value"] for row in rows for term in row.values()}


def test_a_worker_reads_the_store_and_loads_only_the_readers_view(
    sandbox: QuerySandbox, store: Path
) -> None:
    export = Exports(store)
    assert _values(_ask(sandbox, "SELECT ?o { ?s ?p ?o }", export)) == {"urn:x-test:pigeon/1"}
    # Answered from the checkpoint: the catalog as the reader may know it was loaded into it;
    # the reader's own graph is exported (for the copy in memory) on a thread, not waited for.
    assert (CATALOG,) in export.calls and set(export.calls) <= {(CATALOG,), (OURS,)}
    (worker,) = sandbox._all
    assert worker.snapshot == 0 and worker.folder is not None
    assert Path(worker.folder).is_dir()


@pytest.mark.parametrize(
    "sparql",
    [
        "SELECT ?g { GRAPH ?g { ?s ?p ?o } }",
        "SELECT ?g { GRAPH ?g { } }",
        "SELECT ?s ?p ?o { GRAPH ?g { ?s ?p ?o } }",
        f"SELECT ?s ?p ?o {{ GRAPH <{THEIRS}> {{ ?s ?p ?o }} }}",
        f"SELECT ?p ?o {{ <{SECRET}> ?p ?o }}",
        "SELECT ?s ?o { ?s <urn:x-test:says> ?o }",
        f"SELECT ?s {{ GRAPH <{CATALOG}> {{ ?s ?p ?o }} }}",
        "SELECT ?s ?p ?o { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }",
    ],
)
def test_a_query_never_sees_another_tenants_graph_or_the_full_catalog(
    sandbox: QuerySandbox, store: Path, sparql: str
) -> None:
    seen = _values(_ask(sandbox, sparql, Exports(store)))
    assert THEIRS not in seen and SECRET not in seen and HIDDEN_RUN not in seen
    assert "urn:x-test:nest/hidden" not in seen


@pytest.mark.parametrize(
    "sparql",
    [
        f"ASK {{ <{SECRET}> ?p ?o }}",
        f"ASK {{ GRAPH <{THEIRS}> {{ ?s ?p ?o }} }}",
        f"ASK {{ GRAPH ?g {{ <{SECRET}> ?p ?o }} }}",
        f"ASK {{ GRAPH <{CATALOG}> {{ <{HIDDEN_RUN}> ?p ?o }} }}",
    ],
)
def test_an_ask_cannot_tell_that_another_tenants_data_exists(
    sandbox: QuerySandbox, store: Path, sparql: str
) -> None:
    assert json.loads(_ask(sandbox, sparql, Exports(store)))["boolean"] is False


@pytest.mark.parametrize(
    "sparql",
    [
        f"DESCRIBE <{SECRET}>",
        f"DESCRIBE <{HIDDEN_RUN}>",
        "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }",
        f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{THEIRS}> {{ ?s ?p ?o }} }}",
    ],
)
def test_a_graph_query_cannot_return_another_tenants_triples(
    sandbox: QuerySandbox, store: Path, sparql: str
) -> None:
    body = _ask(sandbox, sparql, Exports(store), media=TURTLE).decode()
    assert "sparrow" not in body and "restricted" not in body


def test_a_write_to_the_store_reaches_the_next_query(
    sandbox: QuerySandbox, store: Path, generation: Generation
) -> None:
    export = Exports(store)
    count = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"
    assert _values(_ask(sandbox, count, export)) == {"1"}
    (worker,) = sandbox._all
    first = worker.folder
    writer = Store(str(store))
    writer.add(_quad("urn:x-test:loft/2", "urn:x-test:holds", "urn:x-test:pigeon/2", OURS))
    writer.flush()
    del writer
    generation.value += 1
    assert _values(_ask(sandbox, count, export)) == {"2"}
    # A fresh checkpoint replaced the stale one, whose folder is gone.
    assert worker.folder != first and first is not None and not Path(first).exists()
    assert export.calls.count((CATALOG,)) == 2  # once for each generation


def test_the_readers_graphs_are_copied_into_memory_and_answered_from_there(
    sandbox: QuerySandbox, store: Path
) -> None:
    export = Exports(store)
    count = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"
    assert _values(_ask(sandbox, count, export)) == {"1"}  # from the checkpoint, at once
    (worker,) = sandbox._all
    for _ in range(GUARD_TRIES):  # the copy is made on the worker's thread
        if OURS in worker.loaded:
            break
        assert _values(_ask(sandbox, count, export)) == {"1"}
        time.sleep(0.05)
    assert worker.loaded[OURS] == (0, "") and worker.copying is None
    # Now from memory, which holds the reader's graph and their view of the catalog only.
    assert worker.loaded[CATALOG] == (0, "public")
    seen = _values(_ask(sandbox, "SELECT ?g ?s { GRAPH ?g { ?s ?p ?o } }", export))
    assert seen == {OURS, CATALOG, "urn:x-test:loft/1", "urn:x-test:run/public"}


def test_held_copies_leave_the_worker_on_its_checkpoint_until_allowed(
    sandbox: QuerySandbox, store: Path
) -> None:
    # A server holds the copies while it starts, so the first queries do not share the
    # processors with an export and a load: they are answered from the checkpoint meanwhile.
    export = Exports(store)
    count = "SELECT (COUNT(*) AS ?n) { ?s ?p ?o }"
    sandbox.hold_copies()
    for _ in range(3):
        assert _values(_ask(sandbox, count, export)) == {"1"}
    (worker,) = sandbox._all
    assert (OURS,) not in export.calls and worker.copying is None and OURS not in worker.loaded
    sandbox.allow_copies()
    for _ in range(GUARD_TRIES):
        if OURS in worker.loaded:
            break
        assert _values(_ask(sandbox, count, export)) == {"1"}
        time.sleep(0.05)
    assert (OURS,) in export.calls and worker.loaded[OURS] == (0, "")


def test_workers_are_warmed_one_at_a_time(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # On a small machine a query that comes during the warm-up shares the processors with one
    # worker's start, not with every worker's at once.
    sandbox = QuerySandbox(SandboxLimits(workers=3, timeout_s=600), store=store)
    real = sandbox._warm
    lock = threading.Lock()
    starting: list[int] = [0]
    most: list[int] = [0]

    def counted(worker: Any, *args: Any) -> None:
        cold = not worker.alive()
        with lock:
            starting[0] += cold
            most[0] = max(most[0], starting[0])
        try:
            if cold:
                time.sleep(0.2)  # long enough for the others to start too, if they do
            real(worker, *args)
        finally:
            with lock:
                starting[0] -= cold

    monkeypatch.setattr(sandbox, "_warm", counted)
    try:
        asyncio.run(sandbox.warm([OURS], Exports(store)))
        assert all(worker.alive() for worker in sandbox._all)
    finally:
        sandbox.close()
    assert most[0] == 1
