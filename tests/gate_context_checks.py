"""Comparing what the gate prepares from a run's gate context with what it prepares from the
staged run itself: shared by the unit and corpus tests of
:mod:`ratified_rdf.graph.gate_context`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ratified_rdf.graph.gate import ShaclGate, StagedBatch, StagedRun
from ratified_rdf.graph.gate_context import ContextFiles, GateContext
from ratified_rdf.graph.store import TripleStore


def assert_prepared_alike(gate: ShaclGate, staged: Sequence[StagedBatch], run: StagedRun) -> int:
    """Every batch of ``run`` prepared from its context is, line for line, the document
    prepared from the staged store (a line said twice counts once: the same graph), with the
    same focus nodes; returns the lines compared."""
    assert run.context is not None
    # What a gate worker started afresh prepares from: the context's files, opened anew.
    opened = run.context.files().open()
    compared = 0
    for item in staged:
        from_context = run.context.prepare(item)
        # The nodes it touches, read off its spooled lines as a worker reads them (the
        # reading is checked against ShaclGate.touched in tests/unit/test_gate_context.py).
        touched = run.context.touched_of(item)
        from_store = gate.prepare_staged(replace(item, touched=touched), run.store, run.graphs)
        assert from_context.focus_nodes == from_store.focus_nodes, item.source
        got = sorted(set(from_context.ntriples.splitlines()))
        expected = sorted(set(from_store.ntriples.splitlines()))
        assert got == expected, item.source
        from_files = opened.prepare(item)
        assert (from_files.source, from_files.focus_nodes) == (
            item.source,
            from_context.focus_nodes,
        )
        assert sorted(set(from_files.ntriples.splitlines())) == got, item.source
        compared += len(got)
    return compared


def assert_files_prepare_alike(
    gate: ShaclGate,
    context: GateContext,
    files: ContextFiles,
    staged: Sequence[StagedBatch],
    store: TripleStore,
    graphs: Sequence[str],
) -> None:
    """Every batch of ``staged`` prepared from ``files`` (a checkpoint's, opened anew) is,
    line for line, the document prepared from ``graphs`` of ``store``, the whole state."""
    opened = files.open()
    for item in staged:
        touched = context.touched_of(item)
        expected = gate.prepare_staged(replace(item, touched=touched), store, graphs)
        got = opened.prepare(item)
        assert got.focus_nodes == expected.focus_nodes, item.source
        assert sorted(set(got.ntriples.splitlines())) == sorted(
            set(expected.ntriples.splitlines())
        ), item.source
