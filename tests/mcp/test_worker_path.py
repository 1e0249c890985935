"""The ``sparql`` tool's queries take the path ``/sparql``'s take (issue 50): for a brain on
disk each worker answers from a checkpoint of the store it takes as it starts, under the same
limits and guard, instead of loading an export of the reader's graphs that the MCP server
makes in the first call's time (seconds, for a large brain, and a copy of every graph in each
worker's memory)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import anyio
import pytest

from ratified_rdf import Brain
from ratified_rdf.surfaces.mcp_server import _run_sparql, query_sandbox

SMALL = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"


def test_the_sparql_tool_answers_from_a_checkpoint_without_waiting_for_an_export(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No export can be made: a worker that needed one before answering would fail the call.
    # The copy in memory a worker makes later asks for one off the call's path, and fails
    # there alone.
    def no_export(graphs: Sequence[str]) -> bytes:
        raise RuntimeError("no export in a call's time")

    monkeypatch.setattr(brain.reading, "export", no_export)
    sandbox = query_sandbox(brain)
    try:
        results = anyio.run(_run_sparql, brain, threading.Lock(), sandbox, SMALL)
        folders = [worker.folder for worker in sandbox._all if worker.alive()]
    finally:
        sandbox.close()
    assert len(results.rows) == 1
    assert folders and all(folders), "the worker that answered holds a checkpoint"
