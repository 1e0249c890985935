"""Heavy queries are isolated by scheduling priority (issue 50): a query worker that may grind
a heavy query runs at the lowest priority there is, so the server's event loop and the worker
kept for light clients take the CPU whenever they want it; the kept worker runs at the
server's own priority. The MCP server's workers are all of the first kind.

Each test starts real worker processes and reads their priority from the kernel; nothing here
depends on how long anything takes.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator, Sequence

import pytest

from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits
from ratified_rdf.surfaces.mcp_server import default_limits
from tests.serve.deadlines import GENEROUS_S

LOWEST = 19
"""The lowest scheduling priority (highest nice value) Linux has."""


def _nothing(graphs: Sequence[str]) -> bytes:
    return b""


def _priorities(sandbox: QuerySandbox) -> dict[str, list[int]]:
    """Every worker's nice value, by kind (``quick`` or ``general``), once all are started."""
    asyncio.run(sandbox.warm((), _nothing))
    seen: dict[str, list[int]] = {"quick": [], "general": []}
    for worker in sandbox._all:
        assert worker.process is not None and worker.alive(), "every worker is started"
        kind = "quick" if worker.quick else "general"
        seen[kind].append(os.getpriority(os.PRIO_PROCESS, worker.process.pid))
    return seen


@pytest.fixture()
def sandbox_of() -> Iterator[list[QuerySandbox]]:
    made: list[QuerySandbox] = []
    yield made
    for sandbox in made:
        sandbox.close()


def test_heavy_workers_run_at_the_lowest_priority_and_the_kept_one_at_the_servers(
    sandbox_of: list[QuerySandbox],
) -> None:
    sandbox = QuerySandbox(SandboxLimits(workers=3, quick_workers=1))
    sandbox_of.append(sandbox)
    ours = os.getpriority(os.PRIO_PROCESS, 0)
    assert _priorities(sandbox) == {"quick": [ours], "general": [LOWEST, LOWEST]}


def test_the_mcp_servers_workers_all_run_at_the_lowest_priority(
    sandbox_of: list[QuerySandbox],
) -> None:
    sandbox = QuerySandbox(default_limits(workers=2))
    sandbox_of.append(sandbox)
    assert _priorities(sandbox) == {"quick": [], "general": [LOWEST, LOWEST]}


def test_a_query_waits_on_its_worker_from_a_thread_of_the_sandboxs_own(
    sandbox_of: list[QuerySandbox], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A query holds the thread that waits on its worker for as long as it runs. On the event
    # loop's shared pool (a few threads on a small machine) heavy queries left the server's
    # short jobs, an audit record's write for every query among them, queueing for the rest.
    sandbox = QuerySandbox(SandboxLimits(workers=2, timeout_s=GENEROUS_S))  # must succeed
    sandbox_of.append(sandbox)
    seen: list[str] = []
    real = QuerySandbox._exchange

    def exchange(self: QuerySandbox, *args: object, **kwargs: object) -> object:
        seen.append(threading.current_thread().name)
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(QuerySandbox, "_exchange", exchange)
    request = QueryRequest("ASK {}", (), "application/sparql-results+json", None)
    reply = asyncio.run(sandbox.run("address:127.0.1.1", request, _nothing))
    assert reply.media_type.startswith("application/sparql-results+json")
    assert [name.startswith("ratified-sandbox") for name in seen] == [True]
