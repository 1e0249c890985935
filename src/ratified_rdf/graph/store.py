"""Where triples live: a small interface, and the embedded Oxigraph store behind it.

The interface is what the rest of the library sees (add a batch to a named graph atomically,
drop a graph, query over chosen graphs, look up context for the gate, dump), so a remote
SPARQL 1.1 engine can stand in for Oxigraph later without touching queries or the gate.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from itertools import islice
from pathlib import Path
from typing import IO, Protocol

from pydantic import BaseModel, ConfigDict
from pyoxigraph import (
    BlankNode,
    DefaultGraph,
    Literal,
    NamedNode,
    Quad,
    QueryBoolean,
    QuerySolutions,
    QueryTriples,
    RdfFormat,
    Store,
    Triple,
    parse,
    serialize,
)

from ratified_rdf._errors import StoreError
from ratified_rdf.graph.vocab import PREFIXES

Term = NamedNode | BlankNode | Literal


def ntriples(triples: Sequence[Triple]) -> bytes:
    """``triples`` as the N-Triples document Oxigraph writes: one triple a line (what
    :meth:`OxigraphStore.load_documents` loads)."""
    return serialize(triples, format=RdfFormat.N_TRIPLES) or b""


class QueryResult(BaseModel):
    """Rows of a SELECT (or the answer of an ASK), with the time the engine took."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    variables: tuple[str, ...]
    rows: tuple[dict[str, Term], ...]
    boolean: bool | None = None
    engine_ms: float


class Queryable(Protocol):
    """What answering needs: SELECT and ASK over chosen graphs (a store, or a copy of some
    of its graphs in memory)."""

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a SELECT or ASK with the union of ``graphs`` as the default graph."""
        ...


class TripleStore(Protocol):
    """What the library needs from a store."""

    def add(self, graph: str, triples: Sequence[Triple]) -> None:
        """Add ``triples`` to ``graph`` in one transaction."""
        ...

    def replace(self, graph: str, remove: Sequence[Triple], add: Sequence[Triple]) -> None:
        """Remove and add triples of ``graph`` in one transaction."""
        ...

    def drop_graph(self, graph: str) -> None:
        """Remove a named graph and everything in it."""
        ...

    def graphs(self) -> list[str]:
        """Names of every named graph."""
        ...

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a SELECT or ASK with the union of ``graphs`` as the default graph."""
        ...

    def triples(self, graphs: Sequence[str]) -> Iterable[Triple]:
        """Every triple of ``graphs``."""
        ...

    def describe(
        self, nodes: Iterable[str], graphs: Sequence[str], incoming: Sequence[str] = ()
    ) -> list[Triple]:
        """Triples in ``graphs`` with one of ``nodes`` as subject, and those with one of them as
        object through one of the ``incoming`` predicates."""
        ...

    def types_of(self, nodes: Iterable[str], graphs: Sequence[str]) -> list[Triple]:
        """The ``rdf:type`` triples of ``nodes`` in ``graphs``."""
        ...

    def dump(self, output: IO[bytes], graphs: Sequence[str], rdf_format: RdfFormat) -> None:
        """Serialise ``graphs`` (quads keep their graph names)."""
        ...

    def close(self) -> None:
        """Flush and release the store."""
        ...


def data_update(graph: str, remove: Sequence[Triple], add: Sequence[Triple]) -> str:
    """One SPARQL update that removes and adds triples of ``graph`` (empty when neither has
    any). Empty ``DATA`` blocks are left out: valid SPARQL 1.1, but Virtuoso refuses them."""
    name = NamedNode(graph)
    return " ; ".join(
        f"{verb} DATA {{ GRAPH {name} {{ "
        + " ".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples)
        + " } }"
        for verb, triples in (("DELETE", remove), ("INSERT", add))
        if triples
    )


def solutions_result(
    result: QuerySolutions | QueryBoolean | QueryTriples, started: float
) -> QueryResult:
    """Read every row of an Oxigraph result; the engine time runs from ``started`` (the
    rows are computed as they are read) to the last row."""
    if isinstance(result, QueryBoolean):
        engine_ms = (time.perf_counter() - started) * 1000
        return QueryResult(variables=(), rows=(), boolean=bool(result), engine_ms=engine_ms)
    if not isinstance(result, QuerySolutions):
        raise StoreError("Only SELECT and ASK queries return rows; use dump for graphs.")
    variables = tuple(v.value for v in result.variables)
    # A solution iterates its values in the order of ``variables``: zipping them is about three
    # times quicker than looking each variable up by name, which a card does for every cell.
    rows = tuple(
        {name: value for name, value in zip(variables, solution, strict=True) if value is not None}
        for solution in result
    )
    engine_ms = (time.perf_counter() - started) * 1000
    # Rows come straight from the engine: validating thousands of terms again is waste.
    return QueryResult.model_construct(
        variables=variables, rows=rows, boolean=None, engine_ms=engine_ms
    )


_RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")

FLUSH_EVERY_QUADS = 100_000
"""Quads added to a store on disk between flushes. Writing the same 562,542 quads: without
flushes the process grew by 662 MiB, flushing every 100,000 by 133 MiB, and took 11% less
time; every 20,000, by 58 MiB and 6% more time."""


LOAD_CHUNK_QUADS = 100_000
"""Quads a :meth:`OxigraphStore.load` call bulk-loads at a time. Given an iterator, the bulk
loader gathers a large part of it before it writes (benchmarks/RESULTS.md: 1.3 GiB for 2 M
quads on disk); chunks of this size keep it to about 0.2 GiB, and on disk load as fast as
smaller ones, or faster (6 M quads: 88 s against 99 s in chunks of 20,000)."""

COPY_CHUNK_QUADS = 20_000
"""Quads a :meth:`OxigraphStore.load_from` call bulk-loads at a time: small enough that the
interpreter lock is let go often (the copy of a run held it for seconds in one call), large
enough that the copy is no slower (docs/design.md, "A run is staged in memory")."""


GENERATION_FILE = "ratified-generation"
"""A file in a store's folder that every writer of this library replaces when it finishes
writing (a build, a review, a prune): readers opened ``shared`` watch it to know that the
store has changed, and open it afresh."""

OPEN_WAIT_S = 3.0
"""How long to wait for another process's write lock before saying who may hold it."""


class OxigraphStore:
    """The embedded default: pyoxigraph on disk (a folder) or in memory (``path=None``).

    A store on disk opened ``shared`` (what every reader of a brain does) reads from a
    read-only opening, so any number of processes read it at once, beside one that writes
    (a build, a review). It takes the folder's write lock only while it writes
    (:meth:`writing`), and it follows what other processes wrote (:meth:`follow`): once a
    writer has finished, the next read opens the store afresh. Opened as it is by default, a
    folder is this process's alone to write until it is closed (what a build does).
    """

    def __init__(self, path: str | Path | None = None, *, shared: bool = False) -> None:
        self.path = Path(path) if path is not None else None
        self.shared = shared and self.path is not None
        self._open: Store | None = None
        self._unflushed = 0
        self._writer: Store | None = None
        self._write_depth = 0
        self._reopen = threading.RLock()
        self.generation = 0
        """How many times this store has been opened afresh to follow another writer."""
        self._seen = self._marker()
        self._open = self._open_read_only() if self.shared else self._open_for_writing()

    def _open_for_writing(self) -> Store:
        if self.path is None:
            return Store()
        # A process that was just killed can hold the store's lock a moment longer (its
        # forked helpers die after it): retry briefly before giving up.
        deadline = time.monotonic() + OPEN_WAIT_S
        while True:
            try:
                return Store(str(self.path))
            except OSError as error:
                if time.monotonic() >= deadline:
                    raise StoreError(
                        f"The store at {self.path} cannot be opened for writing ({error}). "
                        "Another process is writing to it (a build, a review or a prune, or "
                        "a server or MCP server of an older version): wait for it to finish "
                        "and try again."
                    ) from None
                time.sleep(0.05)

    def _open_read_only(self) -> Store:
        assert self.path is not None
        try:
            return Store.read_only(str(self.path))
        except OSError as error:
            raise StoreError(
                f"The store at {self.path} cannot be opened for reading ({error}). Is it a "
                "folder that `ratified build` wrote?"
            ) from None

    def _marker(self) -> tuple[int, int, int] | None:
        if self.path is None:
            return None
        try:
            info = (self.path / GENERATION_FILE).stat()
        except OSError:
            return None
        return (info.st_ino, info.st_size, info.st_mtime_ns)

    def follow(self) -> bool:
        """Open a shared store afresh if another process has finished writing to it since it
        was opened; True when it was (what was read before may be stale). Cheap: one
        ``stat`` of the generation file."""
        if not self.shared or self._write_depth or self._open is None:
            return False
        marker = self._marker()
        if marker == self._seen:
            return False
        with self._reopen:
            if marker == self._seen or self._write_depth:
                return False
            # A read still running on the old opening keeps it alive until it ends.
            self._open = self._open_read_only()
            self._seen = marker
            self.generation += 1
            return True

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Hold the folder's write lock meanwhile: reads and writes in the block go to one
        opening for writing, which sees every write. Afterwards the store is flushed, the
        generation file replaced (so other readers follow) and reading goes on read-only.
        Nested blocks share one opening. A store that is not ``shared`` writes as it is."""
        if not self.shared:
            yield
            return
        with self._reopen:
            if self._write_depth == 0:
                self._writer = self._open_for_writing()
            self._write_depth += 1
        try:
            yield
        finally:
            with self._reopen:
                self._write_depth -= 1
                if self._write_depth == 0:
                    writer, self._writer = self._writer, None
                    assert writer is not None
                    writer.flush()
                    del writer  # releases the folder's lock
                    self._seen = self._bump_generation()
                    self._open = self._open_read_only()
                    self.generation += 1

    def _bump_generation(self) -> tuple[int, int, int] | None:
        """Replace the generation file (atomically: write, then rename) and return its mark."""
        if self.path is None:
            return None
        fresh = self.path / f".{GENERATION_FILE}.{os.getpid()}"
        fresh.write_text(f"{time.time_ns()} {os.getpid()}\n", encoding="ascii")
        os.replace(fresh, self.path / GENERATION_FILE)
        return self._marker()

    def add(self, graph: str, triples: Sequence[Triple]) -> None:
        """Add ``triples`` to ``graph`` in one transaction (Oxigraph's ``extend``).

        A store on disk is flushed after every :data:`FLUSH_EVERY_QUADS` quads added: left to
        itself, Oxigraph's RocksDB kept what was written in memory, about 1.2 KiB a quad, which
        at ×100 (19 million quads) is more than the machine has."""
        if self.shared and not self._write_depth:
            with self.writing():
                self.add(graph, triples)
            return
        name = NamedNode(graph)
        self._store.extend(Quad(t.subject, t.predicate, t.object, name) for t in triples)
        if self.path is not None:
            self._unflushed += len(triples)
            if self._unflushed >= FLUSH_EVERY_QUADS:
                self._store.flush()
                self._unflushed = 0

    def load(self, batches: Iterable[tuple[str, Sequence[Triple]]]) -> None:
        """Add every (graph, triples) of ``batches`` with Oxigraph's bulk loader, in one pass
        that never holds them all: far quicker than :meth:`add` on disk, and not one
        transaction, so only for a store that is thrown away unless every batch is added (a
        run's staging)."""
        quads = (
            Quad(t.subject, t.predicate, t.object, name)
            for graph, triples in batches
            for name in (NamedNode(graph),)
            for t in triples
        )
        while chunk := list(islice(quads, LOAD_CHUNK_QUADS)):  # not the whole iterator
            self._store.bulk_extend(chunk)
        if self.path is not None:
            self._store.flush()

    def load_documents(
        self, documents: Iterable[tuple[str, bytes]], *, background: bool = False
    ) -> None:
        """Add each (graph, N-Triples document) of ``documents`` as :meth:`load` adds triples
        (the bulk loader, not one transaction), from the documents' text: the loader reads
        them in Rust, where making a term of every triple in Python took as long as loading
        them. The documents must be as Oxigraph writes them (one triple a line); they are
        loaded about :data:`LOAD_CHUNK_QUADS` lines a call, one graph's at a time; with
        ``background``, each on a thread of its own while the next is gathered
        (:meth:`loading`). A document
        naming a blank node is read term by term instead, since the loader gives blank nodes
        fresh labels and a staged run must keep the labels its gate context spooled."""
        with self.loading(background=background) as loader:
            for graph, document in documents:
                loader.add(graph, document)

    @contextlib.contextmanager
    def loading(self, *, background: bool = False) -> Iterator[DocumentLoader]:
        """A :class:`DocumentLoader` for this store (loading on a thread of its own with
        ``background``), every document given it loaded (and, on disk, flushed)
        when the block ends; if the block raises, what is being loaded is let finish and
        the rest dropped."""
        loader = DocumentLoader(self, background=background)
        try:
            yield loader
        except BaseException:
            loader.abandon()
            raise
        loader.wait()

    def flush(self) -> None:
        """Write what this opening holds in memory to the folder's files, so an opening made
        after (a gate worker's, read-only) sees every write. Nothing to do in memory."""
        if self.path is not None and self._open is not None:
            self._store.flush()
            self._unflushed = 0

    def warm(self) -> threading.Thread | None:
        """Start reading the store's files once, on a thread of its own, so that the queries
        that follow find them in the system's page cache; returns the thread, or None in
        memory or when the files would take more than half the memory available.

        A bulk load writes its files past the page cache (RocksDB's file writer drops what
        it wrote from it), so a query over a run just staged reads each block from disk as
        it needs it, one small read at a time. Read in order, the files come in at the
        disk's full speed, and the query finds them in memory (benchmarks/RESULTS.md: the
        citation view of ×100 read cold in 75 s, warmed first in 18). The cache is the
        system's, given back whenever memory is wanted, so this holds nothing of the
        process's own; the thread only reads, passing over a file it cannot."""
        if self.path is None:
            return None
        sizes = _file_sizes(self.path)
        available = _memory_available()
        if available is None or sum(sizes.values()) > available // 2:
            return None
        thread = threading.Thread(
            target=_read_through, args=(list(sizes),), name="ratified-warm", daemon=True
        )
        thread.start()
        return thread

    def write_graph(self, graph: str, path: str | Path) -> None:
        """Write ``graph``'s triples to the file ``path``, as N-Triples."""
        self._store.dump(str(path), RdfFormat.N_TRIPLES, from_graph=NamedNode(graph))

    def load_file(self, path: str | Path, graph: str) -> None:
        """Add the triples of the N-Triples file ``path`` to ``graph`` as :meth:`load` does,
        keeping its blank nodes' labels (Oxigraph's own loaders give them fresh ones: a file
        written by :meth:`write_graph` is then the graph it was, blank node for blank node)."""
        name = NamedNode(graph)
        with open(path, "rb") as file:
            quads = (
                Quad(q.subject, q.predicate, q.object, name)
                for q in parse(file, format=RdfFormat.N_TRIPLES)
            )
            while chunk := list(islice(quads, LOAD_CHUNK_QUADS)):
                self._store.bulk_extend(chunk)
        if self.path is not None:
            self._store.flush()

    def load_from(self, other: OxigraphStore, graphs: Iterable[str]) -> None:
        """Copy ``graphs`` of ``other`` here with the bulk loader (as :meth:`load`, not one
        transaction), :data:`COPY_CHUNK_QUADS` quads a call: one call holds Python's
        interpreter lock until it ends, so the build's other threads (feeding the gate's
        workers) run between chunks."""
        for graph in graphs:
            quads = other._store.quads_for_pattern(None, None, None, NamedNode(graph))
            while chunk := list(islice(quads, COPY_CHUNK_QUADS)):
                self._store.bulk_extend(chunk)
        if self.path is not None:
            self._store.flush()

    def replace(self, graph: str, remove: Sequence[Triple], add: Sequence[Triple]) -> None:
        """Remove and add in one SPARQL update, which Oxigraph applies atomically."""
        sparql = data_update(graph, remove, add)
        if sparql:
            with self.writing():
                self._store.update(sparql)

    def remove_subjects_with(self, predicate: str) -> None:
        """Remove every quad about a node that has ``predicate`` (in any graph), in one
        update."""
        sparql = (
            f"DELETE {{ GRAPH ?graph {{ ?node ?p ?o }} }} WHERE {{ "
            f"GRAPH ?any {{ ?node {NamedNode(predicate)} ?x }} GRAPH ?graph {{ ?node ?p ?o }} }}"
        )
        with self.writing():
            self._store.update(sparql)

    def drop_graph(self, graph: str) -> None:
        """Remove a named graph and everything in it."""
        with self.writing():
            self._store.remove_graph(NamedNode(graph))

    def graphs(self) -> list[str]:
        """Names of every named graph."""
        return [g.value for g in self._store.named_graphs() if isinstance(g, NamedNode)]

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a SELECT or ASK; the engine time covers evaluation and reading every row."""
        # A list for each: the stubs declare them lists of different unions.
        default: list[NamedNode | BlankNode | DefaultGraph] | None = None
        named: list[NamedNode | BlankNode] | None = None
        if graphs is not None:
            named = [NamedNode(g) for g in graphs]
            default = list(named)
        started = time.perf_counter()
        result = self._store.query(sparql, default_graph=default, named_graphs=named)
        if isinstance(result, QueryTriples):
            # Let go of it here, on the thread that made it: pyoxigraph's results may not be
            # dropped on another (the error's traceback would carry it to the caller's).
            del result
            raise StoreError("Only SELECT and ASK queries return rows; use dump for graphs.")
        return solutions_result(result, started)

    def evaluate(
        self, sparql: str, graphs: Sequence[str]
    ) -> QuerySolutions | QueryBoolean | QueryTriples:
        """The engine's own lazy result of any read query over ``graphs`` (default graph:
        their union; named graphs: them), for callers that stream rows under a deadline.
        Rows are computed as they are pulled: release the result on the thread that made it."""
        dataset = [NamedNode(g) for g in graphs]
        # A list for each: the stubs declare them lists of different unions.
        return self._store.query(sparql, default_graph=list(dataset), named_graphs=list(dataset))

    def graph_size(self, graph: str) -> int:
        """The number of triples in ``graph`` (counted by the engine: iterating them here
        costs seconds a run)."""
        result = self._store.query(
            f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {NamedNode(graph)} {{ ?s ?p ?o }} }}"
        )
        assert isinstance(result, QuerySolutions)
        return int(next(iter(result))["n"].value)

    def __len__(self) -> int:
        """The number of quads held (a triple in two graphs counts twice)."""
        return len(self._store)

    def dump_graph(self, graph: str) -> bytes:
        """One graph as N-Triples (empty when it holds nothing)."""
        return self._store.dump(format=RdfFormat.N_TRIPLES, from_graph=NamedNode(graph)) or b""

    def triples(self, graphs: Sequence[str]) -> Iterable[Triple]:
        """Every triple of ``graphs``."""
        for graph in graphs:
            for quad in self._store.quads_for_pattern(None, None, None, NamedNode(graph)):
                yield quad.triple

    def describe(
        self, nodes: Iterable[str], graphs: Sequence[str], incoming: Sequence[str] = ()
    ) -> list[Triple]:
        """Triples in ``graphs`` with one of ``nodes`` as subject, and those with one of them as
        object through one of the ``incoming`` predicates."""
        # One pattern over every graph per node, kept when its graph is one of ``graphs``: a
        # pattern per graph costs a call per graph and node, and most nodes sit in one graph.
        wanted = {NamedNode(g) for g in graphs}
        predicates = [NamedNode(p) for p in incoming]
        store = self._store
        out: list[Triple] = []
        for iri in nodes:
            node = NamedNode(iri)
            out.extend(
                q.triple
                for q in store.quads_for_pattern(node, None, None)
                if q.graph_name in wanted
            )
            for predicate in predicates:
                out.extend(
                    q.triple
                    for q in store.quads_for_pattern(None, predicate, node)
                    if q.graph_name in wanted
                )
        return out

    def types_of(self, nodes: Iterable[str], graphs: Sequence[str]) -> list[Triple]:
        """The ``rdf:type`` triples of ``nodes`` in ``graphs``."""
        wanted = {NamedNode(g) for g in graphs}
        store = self._store
        out: list[Triple] = []
        for iri in nodes:
            out.extend(
                q.triple
                for q in store.quads_for_pattern(NamedNode(iri), _RDF_TYPE, None)
                if q.graph_name in wanted
            )
        return out

    def dump(self, output: IO[bytes], graphs: Sequence[str], rdf_format: RdfFormat) -> None:
        """Serialise ``graphs``; a format without graphs (Turtle) gets their union."""
        quads = (
            quad
            for graph in graphs
            for quad in self._store.quads_for_pattern(None, None, None, NamedNode(graph))
        )
        if rdf_format.supports_datasets:
            serialize(quads, output, rdf_format, prefixes=PREFIXES)
        else:
            serialize((q.triple for q in quads), output, rdf_format, prefixes=PREFIXES)

    def _bulk_load(self, data: bytes, graph: str) -> None:
        """Bulk-load ``data``, N-Triples, into ``graph`` (for :class:`DocumentLoader`, on its
        thread)."""
        self._store.bulk_load(data, RdfFormat.N_TRIPLES, to_graph=NamedNode(graph))

    @property
    def _store(self) -> Store:
        if self._open is None:
            raise StoreError(f"The store at {self.path or 'memory'} is closed.")
        writer = self._writer
        return writer if writer is not None else self._open

    def close(self) -> None:
        """Flush pending writes and release the store (its folder can then be opened again).
        A store on disk that was written to says so in its generation file, so readers
        beside it follow."""
        if self._open is not None and self.path is not None and not self.shared:
            self._open.flush()
            self._open = None
            with contextlib.suppress(OSError):  # a read-only disk: nobody can have written
                self._bump_generation()
        self._open = None


class DocumentLoader:
    """Bulk-loads N-Triples documents into an :class:`OxigraphStore` as
    :meth:`~OxigraphStore.load_documents` does, in chunks, each loaded on a thread of its own
    (or, without ``background``, in the calling thread once it is full).

    Oxigraph's bulk loader lets go of Python's interpreter lock while it parses and writes,
    and uses one core; so a build maps and serialises the next batches while the last are
    loaded, on the machine's other core. One chunk is loaded at a time: :meth:`add` waits
    for the one before when the next is full, so at most two chunks are held. A store read
    while documents are being loaded sees some of them and not others; :meth:`wait` before
    reading what was given."""

    def __init__(self, store: OxigraphStore, *, background: bool = True) -> None:
        """``background``: load on a thread of its own; otherwise each chunk is loaded in the
        calling thread when it is full (glibc gives each thread an arena of its own, so the
        loader's working memory on a thread is not reused by what the caller allocates)."""
        self._target = store
        self._background = background
        self._chunk: list[bytes] = []
        self._graph = ""  # the graph of every document in the chunk
        self._lines = 0
        self._pending: Future[None] | None = None
        self._thread: ThreadPoolExecutor | None = None  # made when the first chunk is full

    def add(self, graph: str, document: bytes, triples: int | None = None) -> None:
        """Load ``document`` (N-Triples as Oxigraph writes it, ``triples`` lines when the
        caller knows) into ``graph``, now or with the next chunk.

        A chunk holds one graph's documents, loaded into it as they are (a run's batches
        come graph by graph, so few chunks are cut short): written as N-Quads, each line
        copied once more to name its graph, at ×100 that copy alone took minutes."""
        if b"_:" in document:
            self._settle()
            parsed = parse(document, format=RdfFormat.N_TRIPLES)
            self._target.load([(graph, [quad.triple for quad in parsed])])
            return
        if self._chunk and graph != self._graph:
            self._send()
        self._graph = graph
        self._chunk.append(document)
        self._lines += document.count(b"\n") if triples is None else triples
        if self._lines >= LOAD_CHUNK_QUADS:
            self._send()

    def wait(self) -> None:
        """Return once every document given is loaded, and flushed on disk; raises what
        loading raised."""
        try:
            self._settle()
            if self._chunk:  # the last chunk: nothing is left to overlap it with
                data = b"".join(self._chunk)
                self._chunk, self._lines = [], 0
                self._target._bulk_load(data, self._graph)
        finally:
            self.abandon()  # nothing is left to load; on an error, nothing more is
        if self._target.path is not None:
            self._target.flush()

    def abandon(self) -> None:
        """Drop what is not yet being loaded and let what is finish, without raising (the
        store is being thrown away after an error of the caller's)."""
        self._chunk, self._lines = [], 0
        if self._thread is not None:
            self._thread.shutdown(wait=True, cancel_futures=True)
            self._thread = None

    def _send(self) -> None:
        self._settle()
        data = b"".join(self._chunk)
        self._chunk, self._lines = [], 0
        if not self._background:
            self._target._bulk_load(data, self._graph)
            return
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ratified-load")
        self._pending = self._thread.submit(self._target._bulk_load, data, self._graph)

    def _settle(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()


def _file_sizes(folder: Path) -> dict[str, int]:
    """The size of each file in ``folder`` by its path, passing over one removed as it is
    listed (RocksDB removes the files a compaction merged)."""
    sizes: dict[str, int] = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            with contextlib.suppress(OSError):
                if entry.is_file():
                    sizes[entry.path] = entry.stat().st_size
    return sizes


def _read_through(paths: Sequence[str]) -> int:
    """Read every file of ``paths`` to its end, in large pieces, keeping nothing; a file gone
    (compacted away meanwhile) or unreadable is passed over. Returns the bytes read."""
    piece = bytearray(1 << 20)
    read = 0
    for path in paths:
        try:
            with open(path, "rb", buffering=0) as file:
                while count := file.readinto(piece):
                    read += count
        except OSError:
            continue
    return read


def _memory_available() -> int | None:
    """The memory the system could give now, in bytes (``MemAvailable``), where it says."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
