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
from collections.abc import Iterator, Sequence

import pytest

from ratified_rdf.queries.sandbox import QuerySandbox, SandboxLimits
from ratified_rdf.surfaces.mcp_server import default_limits

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
