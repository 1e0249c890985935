"""A query's memory never reaches its ceiling where anyone could see it: the sandbox looks at
a worker's memory every few milliseconds, and a sort can take tens of MiB in between, so it
ends the query once the growth it saw would carry it past the ceiling before it could look
again and end it. The worker's memory is a series the test gives (what each look reads); the
query itself runs for real, with a deadline far away."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence

import pytest

from ratified_rdf.queries import sandbox as sandbox_module
from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxError, SandboxLimits

GRAPH = "urn:x-test:pigeon-lofts"
RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
"""Billions of rows to count in little memory: only its deadline or its watcher ends it."""
JSON = "application/sparql-results+json"
MIB = 1024 * 1024
CEILING_MIB = 100
STEP_MIB = 30
"""How much the worker grows between two looks in the test's series."""


def _export(graphs: Sequence[str]) -> bytes:
    return "".join(
        f"<urn:x-test:loft/{n}> <urn:x-test:holds> <urn:x-test:pigeon/{n}> <{GRAPH}> .\n"
        for n in range(200)
    ).encode()


@pytest.fixture()
def sandbox() -> Iterator[QuerySandbox]:
    made = QuerySandbox(SandboxLimits(workers=1, timeout_s=600, memory_mib=CEILING_MIB))
    yield made
    made.close()


def test_a_query_growing_steadily_is_ended_before_any_look_finds_it_past_its_ceiling(
    sandbox: QuerySandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    asyncio.run(sandbox.warm([GRAPH], _export))
    (worker,) = sandbox._all
    base = worker.base_rss
    assert base > 0
    seen: list[int] = []

    def growing(pid: int) -> int:
        seen.append(STEP_MIB * (len(seen) + 1))
        return base + seen[-1] * MIB

    monkeypatch.setattr(sandbox_module, "_rss", growing)
    request = QueryRequest(RUNAWAY, (GRAPH,), JSON, None)
    with pytest.raises(SandboxError) as ended:
        asyncio.run(sandbox.run("address:127.0.0.9", request, _export))
    assert ended.value.reason == "memory"
    assert f"more than the {CEILING_MIB:,} MiB" in str(ended.value)
    assert seen and max(seen) <= CEILING_MIB, seen
