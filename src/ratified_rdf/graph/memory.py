"""A reader's graphs copied into memory, for a process that answers many questions.

On the store on disk every lookup goes through RocksDB; a card of a dozen queries costs tens
of milliseconds there. A copy of exactly the graphs one reader reads, in an in-memory Oxigraph
store, answers the same queries over the same graphs two to three times faster (see
``benchmarks/core.py``). The copy is read-only: writes go to the store, and the brain drops
its copies whenever it writes, so a copy never answers from an older state than the store.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from pyoxigraph import (
    NamedNode,
    QueryBoolean,
    QuerySolutions,
    QueryTriples,
    RdfFormat,
    Store,
)

from ratified_rdf.graph.store import OxigraphStore, QueryResult, StoreError, solutions_result


class MemoryDataset:
    """Some graphs of an :class:`OxigraphStore`, copied into an in-memory Oxigraph store."""

    def __init__(self, source: OxigraphStore, graphs: Sequence[str]) -> None:
        self.graphs: tuple[str, ...] = tuple(graphs)
        self._copy = Store()
        for graph in self.graphs:
            name = NamedNode(graph)
            # N-Triples through a buffer stays inside Oxigraph: several times quicker than
            # handing every quad to Python and back.
            data = source.dump_graph(graph)
            if data:
                self._copy.bulk_load(data, RdfFormat.N_TRIPLES, to_graph=name)

    def __len__(self) -> int:
        """The number of quads copied."""
        return len(self._copy)

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a SELECT or ASK over ``graphs`` (default: every copied graph), their union
        being the default graph, as :meth:`OxigraphStore.query` does on the store."""
        dataset = self._dataset(graphs)
        started = time.perf_counter()
        result = self._copy.query(sparql, default_graph=dataset, named_graphs=dataset)
        return solutions_result(result, started)

    def evaluate(
        self, sparql: str, graphs: Sequence[str] | None = None
    ) -> QuerySolutions | QueryBoolean | QueryTriples:
        """The engine's lazy result of any read query over ``graphs`` (default: every copied
        graph), as :meth:`OxigraphStore.evaluate` gives it on the store."""
        dataset = self._dataset(graphs)
        return self._copy.query(sparql, default_graph=dataset, named_graphs=dataset)

    def _dataset(self, graphs: Sequence[str] | None) -> list[NamedNode]:
        """The graphs as Oxigraph names; a graph that was not copied is refused, not read as
        empty."""
        if graphs is None:
            return [NamedNode(g) for g in self.graphs]
        if not set(graphs) <= set(self.graphs):
            outside = sorted(set(graphs) - set(self.graphs))
            raise StoreError(
                f"This in-memory copy holds {len(self.graphs)} graphs, not {outside[0]}: query "
                "the store for graphs the copy was not made from."
            )
        return [NamedNode(g) for g in graphs]
