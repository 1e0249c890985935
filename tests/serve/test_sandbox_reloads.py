"""An ended query's worker is replaced without exporting the reader's graphs again, and its
caller is answered before the replacement is loaded (issue 50): exporting a large brain takes
seconds of the server's CPU and loading it seconds of the worker's, so a hostile client ending
query after query must not make the server export over and over, nor anyone wait for it.

The runaway query is given a deadline the test chooses (two seconds, far less than its billions
of rows take); the query that must succeed is given ten minutes. Nothing asserts how long
anything took.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxError, SandboxLimits

GRAPH = "urn:x-test:pigeon-lofts"
LOFTS = 2_000
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
"""Eight billion rows to count over the lofts: only its deadline ends it."""
COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
JSON = "application/sparql-results+json"
GUARD_S = 60.0
"""How long a held step waits for the test's word at most, so a broken sandbox fails the test
instead of hanging it."""


class Exports:
    """The reader's export, counting how often the sandbox asks for it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ...]] = []

    def __call__(self, graphs: Sequence[str]) -> bytes:
        self.calls.append(tuple(graphs))
        lines = (
            f"<urn:x-test:loft/{n}> <urn:x-test:holds> <urn:x-test:pigeon/{n}> <{GRAPH}> .\n"
            for n in range(LOFTS)
        )
        return "".join(lines).encode()


@pytest.fixture()
def sandbox() -> Iterator[QuerySandbox]:
    made = QuerySandbox(SandboxLimits(workers=1, timeout_s=600))
    yield made
    made.close()


def _run(sandbox: QuerySandbox, sparql: str, export: Exports, within_s: float) -> bytes:
    request = QueryRequest(sparql, (GRAPH,), JSON, None)
    deadline = time.monotonic() + within_s
    reply = asyncio.run(sandbox.run("address:127.0.0.9", request, export, deadline=deadline))
    return reply.body


def test_an_ended_querys_worker_is_reloaded_without_a_second_export(
    sandbox: QuerySandbox,
) -> None:
    export = Exports()
    asyncio.run(sandbox.warm([GRAPH], export))
    assert export.calls == [(GRAPH,)]
    (worker,) = sandbox._all
    assert worker.process is not None
    first = worker.process.pid
    with pytest.raises(SandboxError) as ended:
        _run(sandbox, RUNAWAY, export, within_s=2)
    assert ended.value.reason == "timeout" and sandbox.ended == 1
    # The worker was killed and a fresh one loaded the same graphs, from the one export.
    answer = json.loads(_run(sandbox, COUNT, export, within_s=600))
    assert answer["results"]["bindings"][0]["n"]["value"] == str(LOFTS)
    assert worker.process is not None and worker.process.pid != first
    assert export.calls == [(GRAPH,)]


def test_an_ended_query_is_answered_before_its_worker_is_replaced(
    sandbox: QuerySandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The replacement's start waits for the test's word; the ended query's caller must get
    # its answer without it. (On code that replaces the worker first, the word comes from a
    # timer, and the answer after it.)
    export = Exports()
    asyncio.run(sandbox.warm([GRAPH], export))
    word = threading.Event()
    real = sandbox._warm
    said_before: list[bool] = []

    def held(worker: Any, *args: Any) -> None:
        if not worker.alive():  # a replacement's start, not a query's own check
            word.wait(GUARD_S)
        real(worker, *args)

    monkeypatch.setattr(sandbox, "_warm", held)
    timer = threading.Timer(GUARD_S, word.set)
    timer.start()
    try:
        with pytest.raises(SandboxError) as ended:
            _run(sandbox, RUNAWAY, export, within_s=2)
        said_before.append(not word.is_set())
    finally:
        word.set()
        timer.cancel()
    assert ended.value.reason == "timeout"
    assert said_before == [True]
    # The slot was held for the replacement: the next query runs on it, loaded.
    answer = json.loads(_run(sandbox, COUNT, export, within_s=600))
    assert answer["results"]["bindings"][0]["n"]["value"] == str(LOFTS)
