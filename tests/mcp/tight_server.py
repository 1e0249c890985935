"""The MCP server as ``python -m ratified_rdf.surfaces.mcp_server`` runs it, except that only
one query meets the server's ``--query-timeout``: the one named by the environment variable
:data:`TIGHT_QUERY_ENV`, a query that must be ended. Every other query is given
:data:`ROOMY_S`, so that a query that must succeed never meets a short budget on a busy
machine (where a query worker, niced below the server and replaced after an ended query,
took more than a second for a small query).

Run as a script (``python tests/mcp/tight_server.py --store ... --query-timeout 1``).
"""

from __future__ import annotations

import os
import runpy
import time
from typing import Any

from ratified_rdf.queries import sandbox

TIGHT_QUERY_ENV = "RATIFIED_TEST_TIGHT_QUERY"
ROOMY_S = 300.0
"""The budget of every query but the tight one: far above what any of them takes."""


def _roomy_but_one(tight: str) -> None:
    real = sandbox.QuerySandbox.run

    async def run(
        self: sandbox.QuerySandbox,
        client: str,
        request: sandbox.QueryRequest,
        export: Any,
        *,
        deadline: float | None = None,
        fresh: bool = False,
    ) -> sandbox.QueryReply:
        if request.sparql != tight:
            deadline = max(deadline or 0.0, time.monotonic() + ROOMY_S)
        return await real(self, client, request, export, deadline=deadline, fresh=fresh)

    sandbox.QuerySandbox.run = run  # type: ignore[method-assign]


if __name__ == "__main__":
    _roomy_but_one(os.environ[TIGHT_QUERY_ENV])
    runpy.run_module("ratified_rdf.surfaces.mcp_server", run_name="__main__", alter_sys=True)
