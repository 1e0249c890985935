"""Gated, all-or-nothing writes: ingest runs, their named graphs, and the current-run switch.

A run writes each source into fresh named graphs of its own, every batch through the SHACL gate.
Readers keep reading the previous run's graphs until the run completes; then one atomic update
of the catalog graph makes the new run current, and the old run's graphs are dropped. A build
that dies half-way leaves the previous complete state in force, and its orphaned graphs are
cleared by the next build.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from pyoxigraph import Literal, NamedNode, Triple

from ratified_rdf._version import __version__
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import XSD_DT, Batch, RunContext
from ratified_rdf.graph.store import OxigraphStore, TripleStore
from ratified_rdf.graph.vocab import term
from ratified_rdf.queries.run import run_query


class Writer:
    """Writes one brain's runs into a store, every batch through the gate."""

    def __init__(self, store: TripleStore, gate: ShaclGate, brain_id: str) -> None:
        self.store = store
        self.gate = gate
        self.brain_id = brain_id
        self.catalog = v.catalog_graph(brain_id)
        self._written: list[str] = []

    def current_graphs(self) -> list[str]:
        """The graphs readers see: the current run's, plus the catalog."""
        return current_graphs(self.store, self.brain_id)

    def begin_run(self) -> RunContext:
        """Start a run with a fresh id; nothing is visible to readers until it commits."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self._started = datetime.now(UTC)
        self._written = []
        return RunContext(self.brain_id, f"{stamp}-{secrets.token_hex(3)}")

    def write_all(
        self, batches: Sequence[Batch], progress: Callable[[], None] | None = None
    ) -> None:
        """Validate every batch of a run, then write them all; a rejection writes nothing.

        The run's batches are staged in memory first, so each is validated against the state
        the whole run will leave (its references may sit in any batch), and the batches are
        checked in parallel processes. Only when every batch passes does anything reach the
        store; the run then still becomes visible only at :meth:`commit`.
        """
        staging = OxigraphStore()
        for batch in batches:
            staging.add(batch.graph, batch.triples)
        graphs = sorted({b.graph for b in batches} | set(self._written))
        prepared = (self.gate.prepare(b, staging, graphs) for b in batches)
        self.gate.check_all(prepared, progress=progress)
        staging.close()
        for batch in batches:
            self.store.add(batch.graph, batch.triples)
            if batch.graph not in self._written:
                self._written.append(batch.graph)

    def commit(self, run: RunContext, used: list[str]) -> None:
        """Record the run, make it current in one atomic update, drop superseded graphs."""
        brain = v.brain_iri(self.brain_id)
        run_iri = v.run_iri(run.run_id)
        batch = Batch(self.catalog, f"ingest run {run.run_id}")
        batch.add(run_iri, "rdf:type", term("rr:IngestRun").value)
        batch.text(run_iri, "rr:runId", run.run_id)
        batch.text(run_iri, "rr:softwareVersion", __version__)
        batch.add(
            run_iri, "prov:startedAtTime", Literal(self._started.isoformat(), datatype=XSD_DT)
        )
        batch.add(
            run_iri, "prov:endedAtTime", Literal(datetime.now(UTC).isoformat(), datatype=XSD_DT)
        )
        for source in used:
            batch.add(run_iri, "prov:used", source)
        for graph in self._written:
            batch.add(run_iri, "rr:wroteGraph", graph)
        batch.add(brain, "rr:currentRun", run_iri)
        previous = [
            Triple(NamedNode(brain), term("rr:currentRun"), NamedNode(r))
            for r in self._current_runs()
        ]
        self.gate.check(batch, self.store, [*self._written, self.catalog], removing=previous)
        self.store.replace(self.catalog, previous, batch.triples)
        self.drop_stale_graphs()

    def drop_stale_graphs(self) -> None:
        """Drop this brain's graphs that no current run owns (superseded or orphaned)."""
        keep = set(self.current_graphs())
        prefix = v.graph_iri(self.brain_id, "", "").rstrip("/")
        for graph in self.store.graphs():
            if graph.startswith(prefix + "/") and graph not in keep:
                self.store.drop_graph(graph)

    def _current_runs(self) -> list[str]:
        rows, _ = run_query(self.store, None, "current_graphs", _catalog_params(self.brain_id))
        return sorted({row["run"].value for row in rows})


def _catalog_params(brain_id: str) -> dict[str, str | int]:
    return {"brain": v.brain_iri(brain_id), "catalog": v.catalog_graph(brain_id)}


def current_graphs(store: TripleStore, brain_id: str) -> list[str]:
    """The graphs a reader of brain ``brain_id`` sees: the current run's and the catalog."""
    rows, _ = run_query(store, None, "current_graphs", _catalog_params(brain_id))
    return [v.catalog_graph(brain_id), *(row["graph"].value for row in rows)]
