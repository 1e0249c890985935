"""The sparql tool's audit records: a call cancelled at any point, even while its record is
being written, closes its record with how it ended, and the audit log's lock is held only
for each line, never across a call, so a server on the same brain is never kept waiting."""

from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import pytest

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog, AuditRecord, audit_dir
from ratified_rdf.queries.sandbox import QuerySandbox
from ratified_rdf.surfaces.mcp_server import _OpenCalls, _run_sparql, default_limits
from tests.mcp.conftest import audit_entries

SMALL = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"

_GUARD_S = 120
"""How long a test waits for something it expects, so a broken server fails the test instead
of hanging the suite; far above what any of it takes on a loaded machine."""


def test_a_call_cancelled_while_its_record_is_written_closes_it_and_frees_the_log(
    brain: Brain, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writing, cancelled = threading.Event(), threading.Event()
    audited = brain.reading.audited

    def slow_audited(kind: Any, subject: Any) -> AbstractContextManager[AuditRecord | None]:
        # The record is being written when the client cancels the call.
        writing.set()
        assert cancelled.wait(_GUARD_S)
        return audited(kind, subject)

    monkeypatch.setattr(brain.reading, "audited", slow_audited)
    sandbox = QuerySandbox(default_limits())
    calls = _OpenCalls()

    async def main() -> None:
        with anyio.fail_after(_GUARD_S):
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await _run_sparql(brain, threading.Lock(), sandbox, SMALL, calls)

                group.start_soon(call)
                assert await anyio.to_thread.run_sync(writing.wait, _GUARD_S)
                group.cancel_scope.cancel()
                cancelled.set()

    try:
        anyio.run(main)
    finally:
        sandbox.close()
    entries = audit_entries(tmp_path / "store")
    (record,) = [e for e in entries if e.get("kind") == "query"]
    outcomes = [e for e in entries if e.get("type") == "outcome"]
    assert [(o["annotates"], o["outcome"]) for o in outcomes] == [(record["id"], "failed")]
    assert outcomes[0]["error_class"] == "CancelledError"
    assert not calls._calls  # nothing left for a closing server to end
    # Nothing holds the log: another process (a second open stands in for one) appends.
    other = AuditLog.open(audit_dir(tmp_path / "store"))
    try:
        other.append(
            AuditRecord(kind="ask", tenant="t", clearance="public", actor="a", subject="q")
        )
    finally:
        other.close()
