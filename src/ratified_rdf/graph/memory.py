"""A reader's graphs copied into memory, for a process that answers many questions.

On the store on disk every lookup goes through RocksDB; a card of a dozen queries costs tens
of milliseconds there. A copy of exactly the graphs one reader reads, in an in-memory Oxigraph
store, answers the same queries over the same graphs two to three times faster (see
``benchmarks/core.py``). The copy is read-only: writes go to the store, and the brain drops
its copies whenever it writes, so a copy never answers from an older state than the store.

A copy is loaded, and held, by a thread of its own. C's allocator (glibc's malloc) gives each
thread an arena of its own, and loading two hundred thousand quads leaves the loading thread's
arena full of small free gaps between the copy's blocks, where every later allocation on that
thread costs more: in a process whose main thread had made the copy, the main thread parsed a
card's query 2.5 times slower than a fresh thread did. So the loading thread stays parked for
as long as the copy lives, and its arena stays its own; the threads that answer allocate
elsewhere (``benchmarks/copy_thread.py``: on the TLS brain the history card 1.41× quicker, the
why card 1.04×, and steadier). With another C library the parked thread changes nothing.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import Future

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
    """Some graphs of an :class:`OxigraphStore`, copied into an in-memory Oxigraph store.

    :meth:`close` lets go of the thread that holds the copy (so does the copy's collection);
    the copy answers on until the last reference to it goes."""

    def __init__(self, source: OxigraphStore, graphs: Sequence[str]) -> None:
        self.graphs: tuple[str, ...] = tuple(graphs)
        loaded: Future[Store] = Future()
        release = threading.Event()
        threading.Thread(
            target=_load_and_hold,
            args=(source, self.graphs, loaded, release),
            name="ratified-copy",
            daemon=True,
        ).start()
        self._copy = loaded.result()
        self._release = weakref.finalize(self, release.set)

    def close(self) -> None:
        """Let the thread holding the copy end (queries still running finish on the copy)."""
        self._release()

    def __len__(self) -> int:
        """The number of quads copied."""
        return len(self._copy)

    def nquads(self) -> bytes:
        """Every copied graph as N-Quads, written by the engine itself: it lets go of the
        interpreter's lock while it writes, where a dump that hands each quad to Python holds
        it throughout, and every thread of a server answering meanwhile waits for it."""
        return self._copy.dump(format=RdfFormat.N_QUADS) or b""

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a SELECT or ASK over ``graphs`` (default: every copied graph), their union
        being the default graph, as :meth:`OxigraphStore.query` does on the store."""
        dataset = self._dataset(graphs)
        started = time.perf_counter()
        # A list for each: the stubs declare them lists of different unions.
        result = self._copy.query(sparql, default_graph=list(dataset), named_graphs=list(dataset))
        return solutions_result(result, started)

    def evaluate(
        self, sparql: str, graphs: Sequence[str] | None = None
    ) -> QuerySolutions | QueryBoolean | QueryTriples:
        """The engine's lazy result of any read query over ``graphs`` (default: every copied
        graph), as :meth:`OxigraphStore.evaluate` gives it on the store."""
        dataset = self._dataset(graphs)
        # A list for each: the stubs declare them lists of different unions.
        return self._copy.query(sparql, default_graph=list(dataset), named_graphs=list(dataset))

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


def _load_and_hold(
    source: OxigraphStore, graphs: tuple[str, ...], loaded: Future[Store], release: threading.Event
) -> None:
    """Copy ``graphs`` of ``source`` into a new in-memory store, hand it over through
    ``loaded``, then wait for ``release``: the copy's blocks stay in this thread's arena, and
    no thread that answers is given that arena while this one lives."""
    try:
        copy = Store()
        for graph in graphs:
            # N-Triples through a buffer stays inside Oxigraph: several times quicker than
            # handing every quad to Python and back.
            data = source.dump_graph(graph)
            if data:
                copy.bulk_load(data, RdfFormat.N_TRIPLES, to_graph=NamedNode(graph))
    except BaseException as error:
        loaded.set_exception(error)
        return
    loaded.set_result(copy)
    del copy
    release.wait()
