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
from typing import Any

import pytest

from ratified_rdf.queries import sandbox as sandbox_module
from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits
from ratified_rdf.surfaces.mcp_server import default_limits
from tests.serve.deadlines import GENEROUS_S

LOWEST = 19
"""The lowest scheduling priority (highest nice value) Linux has."""
_NEVER_LOWERS = "tests.serve.never_lowers"
"""A module run as a stand-in worker: it waits, and changes no priority of its own."""


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


def test_a_heavy_worker_is_lowered_before_any_code_of_its_own_runs(
    sandbox_of: list[QuerySandbox], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A replaced worker's start (an interpreter and the engine's imports) took a good part of
    # a second of CPU at the server's priority until the worker lowered itself. A stand-in
    # that never lowers itself shows the priority the server gave it at once.
    real = sandbox_module.start_module

    def stand_in(module: str, args: Sequence[str], **popen: Any) -> Any:
        return real(_NEVER_LOWERS, [], **popen)

    monkeypatch.setattr(sandbox_module, "start_module", stand_in)
    sandbox = QuerySandbox(SandboxLimits(workers=2, quick_workers=1))
    sandbox_of.append(sandbox)
    for worker in sandbox._all:
        sandbox._start(worker)
    nice = {
        "quick" if worker.quick else "general": os.getpriority(os.PRIO_PROCESS, worker.process.pid)
        for worker in sandbox._all
        if worker.process is not None
    }
    assert nice == {"quick": os.getpriority(os.PRIO_PROCESS, 0), "general": LOWEST}
