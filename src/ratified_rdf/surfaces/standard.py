"""The standard linked-data surfaces of ``ratified serve``, for clients that know only the
W3C recommendations:

- a SPARQL 1.1 Service Description at ``GET /sparql`` without a query (when the client takes
  RDF), with VoID statistics of exactly the graphs the reader may see;
- the VoID description (:meth:`Brain.describe_dataset`) at ``/void`` and ``/.well-known/void``;
- a read-only SPARQL 1.1 Graph Store Protocol (indirect identification) at
  ``/sparql?graph=<iri>`` and ``/sparql?default``, GET and HEAD; writes are refused with 405;
- the ontology (``/ontology``) and the SHACL shapes (``/shapes``) as documents, and the
  catalog's word on runs, named graphs and the brain itself in the descriptions of ``/id/…``;
- a streamed answer for one-triple-pattern SELECTs, the queries rdflib's ``SPARQLStore``
  sends when a program iterates a graph, under their own row limit.

Bounds: a streamed answer (a graph, or a triple pattern's rows) is produced by a thread of its
own, sealed off the network, into a queue of at most :data:`QUEUE_CHUNKS` chunks of
:data:`CHUNK_BYTES`, so it never holds more than about a MiB however large the graph; it is
counted before it starts and refused with 422 past ``max_stream_rows``; it ends at
:data:`STREAM_DEADLINE_S` seconds whatever the client does, and sooner when the client reads
slower than :data:`STREAM_MIN_BYTES_S` for :data:`STREAM_WINDOW_S` seconds of the producer
waiting on it; and at most as many streams run at once as there are query workers, one of
them for one client (a token, else an address, however many connections it opens), and one
of them kept for clients whose latest stream was read to its end. What is streamed
is never the client's text: a triple pattern is recognised on rdflib's parse tree (one basic
graph pattern of one triple, plain variables, IRIs and literals, nothing else) and the query
that runs is rewritten from those terms alone. Everything else goes to the query sandbox.
See ``docs/standard-surfaces.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import html
import queue
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Final, cast

from pydantic import JsonValue
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryResultsFormat,
    QuerySolutions,
    RdfFormat,
    Triple,
    parse,
    serialize,
)
from rdflib import Literal as RdfLiteral
from rdflib import URIRef, Variable
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.plugins.sparql.parser import parseQuery
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route

from ratified_rdf._errors import BrainError
from ratified_rdf.audit import AuditError, DetailSidecar, capture
from ratified_rdf.audit.records import Kind
from ratified_rdf.brain import Brain
from ratified_rdf.graph import vocab as v
from ratified_rdf.queries.guard import (
    RDFLIB_PARSING,
    QueryRefused,
    audited_text,
    check_reader_query,
)
from ratified_rdf.queries.offline import forbid_network
from ratified_rdf.queries.sandbox import QueryRequest
from ratified_rdf.resources import resource_dir
from ratified_rdf.surfaces import _http
from ratified_rdf.surfaces import server as s
from ratified_rdf.trust import can_read

SD: Final = "http://www.w3.org/ns/sparql-service-description#"
FORMATS: Final = "http://www.w3.org/ns/formats/"
ENTAILMENT: Final = "http://www.w3.org/ns/entailment/"
PREFIXES: Final = {**v.PREFIXES, "sd": SD, "formats": FORMATS}

MAX_STREAM_ROWS: Final = 1_000_000
"""Most rows (or triples) a streamed answer holds by default; more is refused with 422."""
STREAM_DEADLINE_S: Final = 300.0
"""A streamed answer ends this many seconds after it started, read to the end or not."""
STREAM_MIN_BYTES_S: Final = 4_096
"""A client reading a stream slower than this (bytes a second) is cut off..."""
STREAM_WINDOW_S: Final = 10.0
"""...once the stream has waited on it this many seconds reading less."""
CHUNK_BYTES: Final = 64 * 1024
QUEUE_CHUNKS: Final = 16
"""Chunks a stream keeps ready for a slow client; its producer waits once they are full."""

_ENDPOINT: Final = "urn:ratified-rdf:this-endpoint"
"""Stands for the endpoint's URL in a cached description; replaced by the request's own."""
_ENDPOINT_NODE: Final = NamedNode(_ENDPOINT)
_ONTOLOGY: Final = v.BASE + "ontology"
_SHAPES: Final = v.BASE + "shapes"
_RESULT_FORMATS: Final = (
    "SPARQL_Results_JSON",
    "SPARQL_Results_XML",
    "SPARQL_Results_CSV",
    "SPARQL_Results_TSV",
    "Turtle",
    "N-Triples",
    "JSON-LD",
    "RDF_XML",
)
_RDF_OFFERS: Final = [
    "text/turtle",
    "application/n-triples",
    "application/ld+json",
    "application/rdf+xml",
]
_VARIABLE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_MAX_SLICE: Final = 10**12
MAX_PATTERN_CHARS: Final = 4_000
"""Longer texts are not looked at as triple patterns (rdflib's are a line or two), so no
request makes the server parse a long text twice."""
_RDF_TYPE: Final = NamedNode(v.RDF + "type")
_RDFS_LABEL: Final = NamedNode(v.RDFS + "label")
_RDFS_COMMENT: Final = NamedNode(v.RDFS + "comment")


def _node(iri: str) -> NamedNode:
    return NamedNode(iri)


def _int(value: int) -> Literal:
    return Literal(str(value), datatype=NamedNode(v.XSD + "integer"))


# --- state: cached descriptions and stream slots ----------------------------------------------


@dataclass(frozen=True)
class _Described:
    """What one reader's scope looks like: the VoID (endpoint as a placeholder), the
    default graph's size, and the catalog's as the reader may know it."""

    void: list[Triple]
    default_triples: int
    catalog_triples: int = 0


@dataclass
class _State:
    max_stream_rows: int
    max_streams: int
    wait_s: float
    deadline_s: float = STREAM_DEADLINE_S
    min_bytes_s: float = STREAM_MIN_BYTES_S
    window_s: float = STREAM_WINDOW_S
    lock: threading.Lock = field(default_factory=threading.Lock)
    busy: dict[str, int] = field(default_factory=dict)
    kept_for: set[str] = field(default_factory=set)
    """Who holds the slot kept for clients whose latest stream was read to its end."""
    read_well: dict[str, bool] = field(default_factory=dict)
    """Whether each client's latest stream was read to its end (not cut off, not dropped)."""

    @property
    def kept(self) -> int:
        """Slots kept, once the others are taken, for clients whose latest stream was read to
        its end: one when there are two or more. A slow reader's streams are cut off, and a
        new address has read none, so slow readers from many addresses wait for the other
        slots and a normal client's small stream does not wait behind them."""
        return 1 if self.max_streams >= 2 else 0

    def take(self, client: str) -> bool:
        """Take a stream slot for ``client`` if one is free: one per client, since a client
        that opens more connections is no more clients."""
        with self.lock:
            held = sum(self.busy.values())
            if held >= self.max_streams or client in self.busy:
                return False
            if held - len(self.kept_for) >= self.max_streams - self.kept:
                if len(self.kept_for) >= self.kept or not self.read_well.get(client, False):
                    return False
                self.kept_for.add(client)
            self.busy[client] = 1
            return True

    def give_back(self, client: str) -> None:
        """Free ``client``'s slot."""
        with self.lock:
            left = self.busy.get(client, 0) - 1
            if left > 0:
                self.busy[client] = left
            else:
                self.busy.pop(client, None)
                self.kept_for.discard(client)

    def ended(self, client: str, *, read_well: bool) -> None:
        """Remember how ``client``'s latest stream ended: read to its end, or not."""
        with self.lock:
            self.read_well.pop(client, None)  # the latest last, so the oldest go first
            self.read_well[client] = read_well
            if len(self.read_well) > 10_000:  # forget the oldest, so addresses cannot grow it
                for name in list(self.read_well)[:5_000]:
                    del self.read_well[name]


def install(
    app: Starlette,
    *,
    max_stream_rows: int = MAX_STREAM_ROWS,
    deadline_s: float = STREAM_DEADLINE_S,
    min_bytes_s: float = STREAM_MIN_BYTES_S,
    window_s: float = STREAM_WINDOW_S,
) -> None:
    """Give ``app`` (made by :func:`~ratified_rdf.surfaces.server.create_app`) what these
    surfaces keep: the descriptions computed per reader scope, and the stream slots (as many
    as query workers, one per client) with their bounds: a stream ends ``deadline_s`` after
    it started, and once it has waited ``window_s`` on a client reading less than
    ``min_bytes_s`` a second."""
    if max_stream_rows < 1:
        raise ValueError("max_stream_rows must be at least 1.")
    if deadline_s <= 0 or window_s <= 0 or min_bytes_s < 0:
        raise ValueError("A stream's deadline and window must be positive, its rate not negative.")
    limits = app.state.limits
    app.state.standard = _State(
        max_stream_rows=max_stream_rows,
        max_streams=limits.workers,
        wait_s=limits.timeout_s,
        deadline_s=deadline_s,
        min_bytes_s=min_bytes_s,
        window_s=window_s,
    )


def _state(request: Request) -> _State:
    state: _State = request.app.state.standard
    return state


# Per reader (a server keeps one Brain per token), with the store state it was computed at.
_DESCRIBED: weakref.WeakKeyDictionary[Brain, tuple[tuple[object, ...], _Described]] = (
    weakref.WeakKeyDictionary()
)
_DESCRIBED_LOCK = threading.Lock()
_COMPUTING = threading.Lock()


def _described(brain: Brain) -> _Described:
    """The reader's VoID and default-graph size, computed once per reader and store state."""
    key = (tuple(brain.read_graphs), brain.reading.write_generation)
    with _DESCRIBED_LOCK:
        found = _DESCRIBED.get(brain)
    if found is not None and found[0] == key:
        return found[1]
    # One description at a time: a burst of first requests costs one computation, not many.
    with _COMPUTING:
        with _DESCRIBED_LOCK:
            found = _DESCRIBED.get(brain)
        if found is not None and found[0] == key:
            return found[1]
        void = brain.describe_dataset(endpoint=_ENDPOINT)
        rows, _ = brain.run("default_graph_size")
        described = _Described(
            void, int(rows[0]["triples"].value) if rows else 0, brain.reading.catalog_size()
        )
        with _DESCRIBED_LOCK:
            _DESCRIBED[brain] = (key, described)
    return described


def _with_endpoint(triples: list[Triple], endpoint: str) -> list[Triple]:
    here = NamedNode(endpoint)
    return [
        Triple(t.subject, t.predicate, here) if t.object == _ENDPOINT_NODE else t for t in triples
    ]


def _endpoint_url(request: Request) -> str:
    return str(request.base_url).rstrip("/") + "/sparql"


# --- the service description ------------------------------------------------------------------


def service_description(brain: Brain, described: _Described, endpoint: str) -> list[Triple]:
    """The SPARQL 1.1 Service Description of ``endpoint`` as ``brain``'s reader sees it: the
    language, result formats and features, and the default dataset (the reader's graphs,
    their union the default graph, and the catalog as the reader may know it among the named
    graphs) with the VoID description of each graph."""
    service = _node(endpoint)
    dataset = _node(v.brain_iri(brain.reader.tenant, brain.brain_id))
    default = BlankNode("defaultGraph")

    def sd(local: str) -> NamedNode:
        return NamedNode(SD + local)

    out = [
        Triple(service, _RDF_TYPE, sd("Service")),
        Triple(service, sd("endpoint"), service),
        Triple(service, sd("supportedLanguage"), sd("SPARQL11Query")),
        Triple(service, sd("feature"), sd("UnionDefaultGraph")),
        Triple(service, sd("defaultEntailmentRegime"), NamedNode(ENTAILMENT + "Simple")),
        Triple(service, sd("defaultDataset"), dataset),
        Triple(dataset, _RDF_TYPE, sd("Dataset")),
        Triple(dataset, sd("defaultGraph"), default),
        Triple(default, _RDF_TYPE, sd("Graph")),
        Triple(default, NamedNode(v.VOID + "triples"), _int(described.default_triples)),
        Triple(service, _RDFS_LABEL, Literal(f"SPARQL endpoint of the brain {brain.brain_id}")),
        Triple(
            service,
            _RDFS_COMMENT,
            Literal(
                "Read-only. The graph store protocol reads a graph at ?graph=<iri> (or the "
                "default graph at ?default); VoID at /void."
            ),
        ),
    ]
    out += [Triple(service, sd("resultFormat"), NamedNode(FORMATS + f)) for f in _RESULT_FORMATS]
    for number, graph in enumerate([*brain.read_graphs, brain.catalog]):
        named = BlankNode(f"namedGraph{number}")
        out += [
            Triple(dataset, sd("namedGraph"), named),
            Triple(named, _RDF_TYPE, sd("NamedGraph")),
            Triple(named, sd("name"), _node(graph)),
            Triple(named, sd("graph"), _node(graph)),
            Triple(_node(graph), _RDF_TYPE, sd("Graph")),
        ]
    # The VoID describes the graphs a query's default graph merges; the catalog is counted here.
    size = NamedNode(v.VOID + "triples")
    out.append(Triple(_node(brain.catalog), size, _int(described.catalog_triples)))
    return out + _with_endpoint(described.void, endpoint)


async def _describe_service(request: Request, chosen: tuple[str, RdfFormat]) -> Response:
    brain = s._reader(request)
    described = await run_in_threadpool(_described, brain)
    triples = service_description(brain, described, _endpoint_url(request))
    media, rdf_format = chosen
    body = serialize(triples, format=rdf_format, prefixes=PREFIXES)
    return Response(body, media_type=media, headers={"Vary": "Accept, Authorization"})


async def void_description(request: Request) -> Response:
    """``GET /void`` and ``/.well-known/void``: the VoID and DCAT description of what the
    reader may see (:meth:`Brain.describe_dataset`), by content negotiation."""
    try:
        chosen = s._choose(
            s._GRAPHS, s._GRAPH_NAMES, request.headers.get("accept"), _formats(request)
        )
        if chosen is None:
            raise s._not_acceptable("VoID description", s._GRAPHS.values())
        brain = s._reader(request)
        described = await run_in_threadpool(_described, brain)
    except s.EndpointError as error:
        return s._error_response(error)
    except AuditError as error:
        return s._error_response(s._audit_unavailable(error))
    except BrainError as error:  # no complete run to describe yet
        return s._error_response(s.EndpointError(503, f"{error} Try again once a build ends."))
    media, rdf_format = chosen
    body = serialize(
        _with_endpoint(described.void, _endpoint_url(request)),
        format=rdf_format,
        prefixes=PREFIXES,
    )
    return Response(body, media_type=media, headers={"Vary": "Accept, Authorization"})


def _formats(request: Request) -> list[str]:
    return request.query_params.getlist("format")


# --- /sparql without a query: service description or graph store -------------------------------


def _read_only() -> s.EndpointError:
    return s.EndpointError(
        405,
        "This endpoint is read-only: the graph store protocol here answers GET and HEAD only "
        "(PUT, POST, DELETE and PATCH are refused). Change the brain with `ratified build`.",
        {"Allow": "GET, HEAD"},
    )


async def refuse_write(request: Request) -> Response:
    """``PUT``, ``DELETE`` or ``PATCH`` on ``/sparql``: 405, the endpoint is read-only."""
    return s._error_response(_read_only())


async def before_query(request: Request) -> Response | None:
    """What ``/sparql`` answers before it reads a query: the graph store protocol (a
    ``graph`` or ``default`` parameter), or the service description (GET or HEAD without a
    query, for a client that takes RDF rather than HTML). ``None``: a query request."""
    url = request.query_params
    store = "graph" in url or "default" in url
    try:
        if store and request.method == "POST":
            raise _read_only()
        if store and (url.getlist("query") or url.getlist("update")):
            raise s.EndpointError(
                400,
                "Send either a query (query=…) or a graph store request (graph=<iri> or "
                "default), not both.",
            )
        if request.method not in {"GET", "HEAD"}:
            return None
        if store:
            return await graph_store(request)
        if url.getlist("query") or url.getlist("update"):
            return None
        accept = request.headers.get("accept")
        formats = _formats(request)
        if not formats and s._negotiate(accept, [*_RDF_OFFERS, s._PAGE]) in {None, s._PAGE}:
            return None  # a browser: the endpoint's own answer (a sentence asking for a query)
        chosen = s._choose(s._GRAPHS, s._GRAPH_NAMES, accept, formats)
        if chosen is None:
            return None
        return await _describe_service(request, chosen)
    except s.EndpointError as error:
        return s._error_response(error)
    except AuditError as error:
        return s._error_response(s._audit_unavailable(error))
    except BrainError as error:  # no complete run to describe yet
        return s._error_response(s.EndpointError(503, f"{error} Try again once a build ends."))


def _missing_graph(iri: str) -> s.EndpointError:
    # The same words whether the graph does not exist or the reader may not read it.
    return s.EndpointError(
        404,
        f"No graph named {iri[:300]} is here for you to read. The service description "
        "(GET /sparql with Accept: text/turtle) lists the named graphs you may read.",
    )


async def graph_store(request: Request) -> Response:
    """The graph store protocol's GET and HEAD: one named graph the reader may read
    (``?graph=<iri>``, the catalog among them, as the reader may know it) or the default
    graph, their union (``?default``), streamed in the negotiated RDF format."""
    url = request.query_params
    graphs = url.getlist("graph")
    if len(graphs) > 1 or (graphs and "default" in url):
        raise s.EndpointError(
            400, "Name one graph per request: either ?graph=<iri> or ?default, not both."
        )
    chosen = s._choose(s._GRAPHS, s._GRAPH_NAMES, request.headers.get("accept"), _formats(request))
    if chosen is None:
        raise s._not_acceptable("graph", s._GRAPHS.values())
    brain = s._reader(request)
    graph = graphs[0] if graphs else None
    if graph is not None and graph not in brain.read_graphs and graph != brain.catalog:
        raise _missing_graph(graph)
    media, rdf_format = chosen
    headers = {"Vary": "Accept, Authorization"}
    if request.method == "HEAD":
        response = Response(None, media_type=media, headers=headers)
        del response.headers["content-length"]
        return response
    pattern = f"GRAPH {NamedNode(graph)} {{ ?s ?p ?o }}" if graph else "?s ?p ?o"
    state = _state(request)

    def job(stream: _Stream) -> int:
        if graph == brain.catalog:  # as the reader's dump holds it
            catalog = brain.reading.catalog_triples()
            stream.ready()
            serialize(catalog, stream.file(), rdf_format, prefixes=v.PREFIXES)
            return len(catalog)
        _check_size(brain, pattern, state.max_stream_rows, 0, None)
        solutions = brain.reading.evaluate(f"SELECT ?s ?p ?o WHERE {{ {pattern} }}")
        assert isinstance(solutions, QuerySolutions)
        rows: _Rows | None = None
        try:
            stream.ready()
            rows = _Rows(solutions)
            serialize(rows, stream.file(), rdf_format, prefixes=v.PREFIXES)
            return rows.count
        finally:
            # The engine's result may only be dropped on the thread that made it.
            rows = None
            del solutions

    subject: dict[str, JsonValue] = {
        "graphs": [graph] if graph else list(brain.read_graphs),
        "format": media,
        "via": "/sparql graph store",
    }
    return await _streamed(request, brain, "dump", subject, job, media, headers)


class _Rows:
    """The triples of ``?s ?p ?o`` solutions, counted as they are read."""

    def __init__(self, solutions: QuerySolutions) -> None:
        self._solutions = solutions
        self.count = 0

    def __iter__(self) -> Iterator[Triple]:
        for row in self._solutions:
            self.count += 1
            yield Triple(row[0], row[1], row[2])


# --- streams ------------------------------------------------------------------------------------


class _Ended(Exception):
    """A stream stopped early: its client went away, or its deadline passed."""


_READY: Final = object()
_DONE: Final = object()


class _Stream:
    """A file-like the serialiser writes into, on the producer thread, and the response
    reads from: at most :data:`QUEUE_CHUNKS` chunks wait in between. The producer is stopped
    at ``deadline`` and, while it waits on a full queue, once it has waited ``window_s`` over
    which the client took fewer than ``min_bytes_s`` bytes a second."""

    def __init__(
        self,
        deadline: float,
        min_bytes_s: float = STREAM_MIN_BYTES_S,
        window_s: float = STREAM_WINDOW_S,
        *,
        coding: str | None = None,
    ) -> None:
        self.deadline = deadline
        # Compressed here, on the producer thread, rather than by the server's compression
        # middleware: the chunks counted against the byte-rate floor are then the bytes the
        # client reads, so compression gives a slow reader no more time, and the event loop
        # compresses nothing.
        self._compressor = None if coding is None else _http.compressor(coding)
        self.queue: queue.Queue[object] = queue.Queue(maxsize=QUEUE_CHUNKS)
        self.stopped = threading.Event()
        self.why = ""
        """Why the producer stopped early, for the response to say."""
        self.read = False
        """Whether the client took the stream to its end."""
        self._buffer = bytearray()
        self._floor, self._window = min_bytes_s, window_s
        self._taken = 0  # bytes the response has taken
        self._waited = 0.0  # seconds the producer waited on the client in this window
        self._taken_before = 0  # what had been taken when the window began

    def write(self, data: bytes) -> int:
        """Take serialised bytes; pass them on a chunk at a time."""
        self._buffer += data if self._compressor is None else self._compressor.compress(data)
        if len(self._buffer) >= CHUNK_BYTES:
            self._put(bytes(self._buffer))
            self._buffer.clear()
        return len(data)

    def flush(self) -> None:
        """Nothing to do: chunks go when full, and the rest at the end."""

    def file(self) -> IO[bytes]:
        """This stream as the binary file pyoxigraph's serialisers write into."""
        # They call only write and flush (which this has), but their stubs ask for an IO.
        return cast(IO[bytes], self)

    def ready(self) -> None:
        """Say the answer is about to start (status 200 can be sent)."""
        self._put(_READY)

    def finish(self) -> None:
        """Pass on what is left, then the end."""
        if self._compressor is not None:
            self._buffer += self._compressor.flush()
        if self._buffer:
            self._put(bytes(self._buffer))
            self._buffer.clear()
        self._put(_DONE)

    def fail(self, error: BaseException) -> None:
        """Pass on why the stream stopped (dropped if the reader has gone)."""
        with contextlib.suppress(_Ended):
            self._put(error)

    def _put(self, item: object) -> None:
        while True:
            if self.stopped.is_set():
                raise _Ended(self.why or "the client stopped reading")
            if time.monotonic() > self.deadline:
                self._stop("the stream ran past its deadline")
            started = time.monotonic()
            try:
                self.queue.put(item, timeout=0.1)
                return
            except queue.Full:
                self._waited_on_client(time.monotonic() - started)

    def _waited_on_client(self, seconds: float) -> None:
        """Count ``seconds`` the producer waited for the client to take a chunk; stop the
        stream when, over a whole window of such waiting, it took less than the floor."""
        self._waited += seconds
        if self._waited < self._window:
            return
        taken = self._taken - self._taken_before
        if taken < self._floor * self._window:
            self._stop(
                f"the client read {taken:,} bytes in {self._window:g} s, slower than the "
                f"{self._floor:,g} bytes a second a stream must be read at"
            )
        self._waited, self._taken_before = 0.0, self._taken

    def _stop(self, why: str) -> None:
        self.why = why
        self.stopped.set()
        raise _Ended(why)

    def get(self) -> object:
        """The next item, waiting at most until the deadline, or until the producer has
        stopped and nothing is left."""
        while True:
            try:
                item = self.queue.get(timeout=0.1)
            except queue.Empty:
                if self.stopped.is_set() or time.monotonic() > self.deadline + 1.0:
                    return _Ended(self.why or "the stream ran past its deadline")
                continue
            if isinstance(item, bytes):
                self._taken += len(item)
            return item


def _produce(
    stream: _Stream,
    brain: Brain,
    kind: Kind,
    subject: dict[str, JsonValue],
    job: Callable[[_Stream], int],
    release: Callable[[], None],
) -> None:
    """The producer thread: sealed off the network, audited like the library's own reads
    (the record is written before anything runs; how it ended follows)."""
    try:
        forbid_network()
        audit = brain.audit
        with contextlib.ExitStack() as stack:
            record = None
            if audit is not None:
                record = stack.enter_context(
                    capture(
                        audit,
                        kind,
                        {**subject, "brain": brain.brain_id},
                        tenant=brain.reader.tenant,
                        clearance=brain.reader.clearance.value,
                        actor=brain.reader.actor,
                        durable=False,
                    )
                )
            rows = job(stream)
            if audit is not None and record is not None:
                audit.append(
                    DetailSidecar(annotates=record.id, detail={"rows": rows}), durable=False
                )
        stream.finish()
    except BaseException as error:  # every ending reaches the response, then the log
        stream.fail(_plain(error))
    finally:
        release()


def _plain(error: BaseException) -> Exception:
    """``error`` as a refusal without its traceback: the frames it holds hold the engine's
    result, which must not reach (and be dropped on) the thread that sends the response."""
    if isinstance(error, s.EndpointError):
        return s.EndpointError(error.status, error.message, error.headers)
    if isinstance(error, AuditError):
        return s._audit_unavailable(error)
    if isinstance(error, BrainError | QueryRefused):
        return s.EndpointError(400, str(error))
    if isinstance(error, _Ended):
        return _Ended(str(error))
    return RuntimeError(f"{type(error).__name__}: {error}")


async def _streamed(
    request: Request,
    brain: Brain,
    kind: Kind,
    subject: dict[str, JsonValue],
    job: Callable[[_Stream], int],
    media: str,
    headers: dict[str, str],
) -> Response:
    """Run ``job`` on a producer thread and stream what it writes; errors before its first
    byte become the usual refusals."""
    state = _state(request)
    client = s._client_key(request)
    # Like a query waiting for a worker, a stream waits its turn up to the query timeout,
    # copying the reader's graphs into memory included.
    waited_until = time.monotonic() + state.wait_s
    await s._copied(brain, waited_until)
    while not state.take(client):
        if time.monotonic() > waited_until:
            raise s.EndpointError(
                503,
                f"Every streaming slot was taken for {state.wait_s:g} s (a client streams "
                f"one graph or triple pattern at a time, the server {state.max_streams}); try "
                "again when your other download ends.",
                {"Retry-After": "1"},
            )
        await asyncio.sleep(0.05)
    coding = _http.content_coding(request.headers)
    headers = {**headers, "Vary": headers.get("Vary", "Accept") + ", Accept-Encoding"}
    if coding is not None:
        headers["Content-Encoding"] = coding
    stream = _Stream(
        time.monotonic() + state.deadline_s, state.min_bytes_s, state.window_s, coding=coding
    )
    threading.Thread(
        target=_produce,
        args=(stream, brain, kind, subject, job, lambda: state.give_back(client)),
        name="ratified-stream",
        daemon=True,
    ).start()
    first = await run_in_threadpool(stream.get)
    if first is not _READY:
        stream.stopped.set()
        if isinstance(first, s.EndpointError):
            raise first
        if isinstance(first, _Ended):
            raise s.EndpointError(503, f"The stream did not start: {first}; try again.")
        raise s.EndpointError(500, f"The stream failed before it started: {first}")

    async def body() -> AsyncIterator[bytes]:
        try:
            while True:
                item = await run_in_threadpool(stream.get)
                if item is _DONE:
                    stream.read = True
                    return
                if isinstance(item, BaseException):
                    # Raised mid-body, so the server cuts the connection: the client sees a
                    # broken download, never a complete-looking partial one.
                    raise item
                assert isinstance(item, bytes)
                yield item
        finally:
            stream.stopped.set()
            state.ended(client, read_well=stream.read)

    return StreamingResponse(body(), media_type=media, headers=headers)


def _check_size(brain: Brain, pattern: str, cap: int, offset: int, limit: int | None) -> int:
    """How many rows the answer holds; 422 before streaming when over ``cap``."""
    counted = brain.reading.evaluate(f"SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}")
    assert isinstance(counted, QuerySolutions)
    total = int(next(iter(counted))[0].value)
    del counted
    rows = max(0, total - offset)
    if limit is not None:
        rows = min(rows, limit)
    if rows > cap:
        raise s.EndpointError(
            422,
            f"This answer would hold {rows:,} rows (or triples), over the {cap:,} a streamed "
            "answer may hold; ask for less (LIMIT and OFFSET page through it).",
        )
    return rows


# --- triple patterns, streamed ----------------------------------------------------------------


@dataclass(frozen=True)
class TriplePattern:
    """A SELECT over one triple pattern, rewritten from its parsed terms alone."""

    projection: tuple[str, ...]
    pattern: str
    offset: int
    limit: int | None

    def sparql(self, cap: int) -> str:
        """The query that runs: never more than ``cap`` rows."""
        limit = cap if self.limit is None else min(self.limit, cap)
        names = " ".join(f"?{name}" for name in self.projection)
        offset = f" OFFSET {self.offset}" if self.offset else ""
        return f"SELECT {names} WHERE {{ {self.pattern} }}{offset} LIMIT {limit}"


def _term(value: object, position: int) -> str | None:
    if isinstance(value, Variable):
        return f"?{value}" if _VARIABLE.fullmatch(str(value)) else None
    try:
        if isinstance(value, URIRef):
            return str(NamedNode(str(value)))
        if isinstance(value, RdfLiteral) and position == 2:
            if value.language:
                return str(Literal(str(value), language=value.language))
            if value.datatype:
                return str(Literal(str(value), datatype=NamedNode(str(value.datatype))))
            return str(Literal(str(value)))
    except ValueError:
        return None
    return None


_NOT_A_PATTERN: Final = re.compile(
    r"(?<![\w:?$.\-])(?:ORDER|GROUP|HAVING|FILTER|OPTIONAL|VALUES|BIND|MINUS|UNION|SERVICE"
    r"|GRAPH|DISTINCT|REDUCED|FROM|CONSTRUCT|DESCRIBE|ASK)(?![\w:\-])",
    re.IGNORECASE,
)
"""Keywords no bare triple pattern holds, outside its IRIs and literals (a prefixed name or a
variable spelled like one is told apart by the character beside it)."""


def could_be_pattern(sparql: str) -> bool:
    """Whether ``sparql`` may be a bare triple pattern, told without parsing it: outside its
    string literals and IRIs it holds exactly one pair of braces, no parenthesis (a function,
    an expression, a path) and none of the keywords a pattern never has (ORDER BY, FILTER,
    DISTINCT, ...). Every other query goes straight to the sandbox, without a second parse on
    the way (rdflib's parser takes milliseconds, with the interpreter's lock held, and a client
    sending heavy queries back to back would make the server spend them on every one). One
    pass over the text, so a hostile one costs time in proportion to its length. It never
    turns a real pattern away: an IRI holds no brace, and a parenthesis outside the literals
    and IRIs of a pattern can only be escaped in a prefixed name."""
    braces = {"{": 0, "}": 0}
    bare: list[str] = []  # the text outside literals and IRIs, for the keywords
    quote = ""  # the delimiter of the string literal being read (one quote or three)
    at = 0
    while at < len(sparql):
        char = sparql[at]
        if quote:
            if char == "\\":
                at += 2
                continue
            if sparql.startswith(quote, at):
                at += len(quote)
                quote = ""
                continue
        elif char in "\"'":
            quote = char * 3 if sparql.startswith(char * 3, at) else char
            at += len(quote)
            bare.append(" ")
            continue
        elif char == "<":
            # An IRI (in a pattern, a "<" opens nothing else); unclosed, the rest is one.
            end = sparql.find(">", at + 1)
            at = len(sparql) if end < 0 else end + 1
            bare.append(" ")
            continue
        elif char == "\\":  # an escaped character of a prefixed name
            at += 2
            bare.append("_")
            continue
        elif char == "(":
            return False
        else:
            if char in braces:
                braces[char] += 1
            bare.append(char)
        at += 1
    if braces["{"] != 1 or braces["}"] != 1:
        return False
    return _NOT_A_PATTERN.search("".join(bare)) is None


def triple_pattern(sparql: str) -> TriplePattern | None:
    """The query as a :class:`TriplePattern` if it is nothing more than a SELECT of one
    triple pattern (with LIMIT and OFFSET, without ORDER BY, DISTINCT, FILTER or anything
    else); ``None`` for every other query, which the query sandbox then answers."""
    if len(sparql) > MAX_PATTERN_CHARS or not could_be_pattern(sparql):
        return None
    try:
        checked = check_reader_query(sparql)
        if checked.form != "SELECT":
            return None
        with RDFLIB_PARSING:
            algebra = translateQuery(parseQuery(checked.text)).algebra
    except Exception:  # the sandbox gives the proper refusal for anything unreadable
        return None
    node = algebra.p
    offset, limit = 0, None
    if node.name == "Slice":
        offset, limit = int(node.start or 0), node.length
        if not 0 <= offset <= _MAX_SLICE or (limit is not None and not 0 <= limit <= _MAX_SLICE):
            return None
        node = node.p
    if node.name != "Project" or node.p.name != "BGP" or len(node.p.triples) != 1:
        return None
    triple = node.p.triples[0]
    terms = [_term(value, position) for position, value in enumerate(triple)]
    if any(t is None for t in terms):
        return None
    present = {str(t) for t in triple if isinstance(t, Variable)}
    projection = tuple(str(name) for name in node.PV)
    if not projection or not set(projection) <= present:
        return None
    return TriplePattern(projection, " ".join(t for t in terms if t), offset, limit)


async def stream_pattern(
    request: Request,
    brain: Brain,
    sparql: str,
    results: tuple[str, QueryResultsFormat] | None,
) -> Response | None:
    """Stream the rows of a one-triple-pattern SELECT (see :func:`triple_pattern`) up to the
    stream limit; ``None`` when the query is not one, or no results format was agreed."""
    if results is None or len(sparql) > MAX_PATTERN_CHARS or not could_be_pattern(sparql):
        return None
    # Parsed off the event loop: a text the guard reads slowly must not stall other requests.
    found = await run_in_threadpool(triple_pattern, sparql)
    if found is None:
        return None
    state = _state(request)
    media, results_format = results
    if request.method == "HEAD":  # the status and type a GET would start with, no rows
        response = Response(None, media_type=media, headers={"Vary": "Accept"})
        del response.headers["content-length"]
        return response

    def job(stream: _Stream) -> int:
        rows = _check_size(brain, found.pattern, state.max_stream_rows, found.offset, found.limit)
        solutions = brain.reading.evaluate(found.sparql(state.max_stream_rows))
        assert isinstance(solutions, QuerySolutions)
        try:
            stream.ready()
            solutions.serialize(stream.file(), results_format)
            return rows
        finally:
            del solutions  # on the thread that made it, as the engine requires

    subject: dict[str, JsonValue] = {**audited_text(sparql), "via": "/sparql stream"}
    return await _streamed(request, brain, "query", subject, job, media, {"Vary": "Accept"})


# --- the ontology and the shapes --------------------------------------------------------------


@functools.cache
def _vocabulary(name: str) -> tuple[bytes, tuple[Triple, ...]]:
    """The shipped Turtle file of the ontology or the shapes, and its triples."""
    folder, file = {"ontology": ("ontology", "ratified.ttl"), "shapes": ("shapes", "core.ttl")}[
        name
    ]
    path: Path = resource_dir(folder) / file
    text = path.read_bytes()
    triples = tuple(q.triple for q in parse(text, RdfFormat.TURTLE, base_iri=v.BASE))
    return text, triples


def _vocabulary_page(name: str, iri: str, triples: tuple[Triple, ...]) -> str:
    """A page with one row per term, its local name as the anchor so ``#Term`` links land."""
    terms: dict[str, dict[str, list[str]]] = {}
    for t in triples:
        if (
            isinstance(t.subject, NamedNode)
            and t.subject.value.startswith(iri + "#")
            and not isinstance(t.object, Triple)
        ):
            entry = terms.setdefault(t.subject.value, {"type": [], "label": [], "comment": []})
            if t.predicate == _RDF_TYPE:
                entry["type"].append(s._compact(t.object.value))
            elif t.predicate == _RDFS_LABEL:
                entry["label"].append(t.object.value)
            elif t.predicate == _RDFS_COMMENT or t.predicate.value.endswith("#message"):
                entry["comment"].append(t.object.value)
    rows = "".join(
        f'<tr id="{html.escape(term.split("#", 1)[1])}"><td><code>'
        f"{html.escape(s._compact(term) if name == 'ontology' else term.split('#', 1)[1])}"
        f"</code></td><td>{html.escape(', '.join(sorted(e['type'])))}</td>"
        f"<td>{html.escape('; '.join(e['label'] + e['comment']))}</td></tr>"
        for term, e in sorted(terms.items())
    )
    title = "ratified-rdf ontology" if name == "ontology" else "ratified-rdf SHACL shapes"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="alternate" type="text/turtle" href="/{name}?format=turtle">
</head><body><main>
<p><a href="/">← Ask a question</a></p>
<h1>{title}</h1>
<p class="iri"><code>{html.escape(iri)}</code></p>
<table class="triples"><thead><tr><th>term</th><th>type</th><th>about</th></tr></thead>
<tbody>{rows}</tbody></table>
<p class="muted">Also as <a href="/{name}?format=turtle">Turtle</a>,
<a href="/{name}?format=nt">N-Triples</a>, <a href="/{name}?format=jsonld">JSON-LD</a>.</p>
</main></body></html>
"""


def _vocabulary_route(name: str, iri: str) -> Callable[[Request], object]:
    async def endpoint(request: Request) -> Response:
        chosen = s._choose(s._DOCS, s._DOC_NAMES, request.headers.get("accept"), _formats(request))
        if chosen is None:
            return s._error_response(s._not_acceptable(name, s._DOCS.values()))
        text, triples = _vocabulary(name)
        media, rdf_format = chosen
        headers = {"Vary": "Accept"}
        if rdf_format is None:
            page = _vocabulary_page(name, iri, triples)
            return HTMLResponse(page, headers={**headers, **s._PAGE_HEADERS})
        if rdf_format == RdfFormat.TURTLE:
            return Response(text, media_type=media, headers=headers)
        body = serialize(triples, format=rdf_format, prefixes=PREFIXES)
        return Response(body, media_type=media, headers=headers)

    endpoint.__doc__ = f"``GET /{name}``: the {name} document ({iri}), by content negotiation."
    return endpoint


# --- the dataset of a query -------------------------------------------------------------------


def query_dataset(
    brain: Brain, default: Sequence[str] | None, named: Sequence[str] | None
) -> QueryRequest:
    """The graphs a ``/sparql`` query of ``brain``'s reader runs over, as a request without
    text or formats. Without ``default-graph-uri`` or ``named-graph-uri``: the reader's graphs
    as the default graph (their union) and as named graphs, with the catalog as the reader
    may know it (:func:`~ratified_rdf.graph.publish.reader_catalog`, the graph their dump
    holds beside them). With them (the SPARQL 1.1 Protocol's dataset, which a store on a
    server sends with every query): the graphs they name, where a name that is no graph the
    reader may read stands for an empty graph, as a graph that does not exist does."""
    readable = [*brain.read_graphs, brain.catalog]
    if default is None and named is None:
        chosen, names = tuple(brain.read_graphs), tuple(readable)
    else:
        chosen, names = (
            tuple(g for g in dict.fromkeys(given or ()) if g in readable)
            for given in (default, named)
        )
    # Workers keep one copy of a graph: the catalog is a different graph for each clearance.
    views = ((brain.catalog, brain.reader.clearance.value),)
    return QueryRequest("", chosen, None, None, named=names, views=views)


# --- runs, graphs and the brain in resource descriptions ---------------------------------------


def visible_graphs(brain: Brain) -> set[str]:
    """Every graph IRI ``brain``'s reader may know of: its current graphs, and the graphs of
    earlier runs at a level it is cleared for."""
    seen = set(brain.read_graphs)
    for run in brain.scope.runs:
        seen.update(g for g, level in run.graphs.items() if can_read(brain.reader.clearance, level))
    return seen


def _catalog_says(brain: Brain, iri: str) -> list[Triple]:
    # The whole catalog's word (the library's queries never read the catalog, and /sparql only
    # the reader's view of it): only what the reader may know of is kept by the caller.
    return brain.reading.describe_in_catalog(iri)


def scoped_description(brain: Brain, iri: str) -> list[Triple]:
    """What the catalog and the VoID say about ``iri`` when it is a run, a named graph or the
    brain itself, as far as ``brain``'s reader may know: a run's graphs above the reader's
    clearance, and graphs it may not read, are left out (a graph it may not read gets no
    description here, as if it did not exist)."""
    visible = visible_graphs(brain)
    brain_iri = v.brain_iri(brain.reader.tenant, brain.brain_id)
    wrote = v.RR + "wroteGraph"
    out: list[Triple] = []
    if iri in {run.iri for run in brain.scope.runs}:
        out += [
            t
            for t in _catalog_says(brain, iri)
            if t.predicate.value != wrote
            or (isinstance(t.object, NamedNode) and t.object.value in visible)
        ]
    elif iri in visible:
        out += _catalog_says(brain, iri)
    elif iri == brain_iri:
        out += _catalog_says(brain, iri)  # its runs, which every reader of the brain sees
    elif iri == brain.catalog and brain.catalog in brain.graphs:
        # Every reader reads the catalog as they may know it (as dump does): its absence or
        # its size would tell a reader that graphs are withheld from them.
        size = brain.reading.catalog_size()
        out += [
            Triple(_node(iri), _RDF_TYPE, NamedNode(v.VOID + "Dataset")),
            Triple(
                _node(iri),
                _RDFS_LABEL,
                Literal(
                    f"The catalog of the brain {brain.brain_id}: its runs, the graphs each "
                    "wrote and the clearance of each."
                ),
            ),
            Triple(_node(iri), NamedNode(v.VOID + "triples"), _int(size)),
            Triple(_node(brain_iri), NamedNode(v.VOID + "subset"), _node(iri)),
        ]
    if iri in brain.read_graphs or iri == brain_iri:
        try:
            void = _described(brain).void
        except BrainError:  # no complete run yet: the catalog's word is all there is
            return out
        out += [
            t
            for t in void
            if isinstance(t.subject, NamedNode)
            and (t.subject.value == iri or t.subject.value.startswith(iri + "#partition-"))
            and t.object != _ENDPOINT_NODE
        ]
    return out


# --- routes -----------------------------------------------------------------------------------


def routes() -> list[Route]:
    """The routes these surfaces add; ``/sparql`` itself stays the server's."""
    return [
        Route("/sparql", refuse_write, methods=["PUT", "DELETE", "PATCH"]),
        Route("/void", void_description, methods=["GET"]),
        Route("/.well-known/void", void_description, methods=["GET"]),
        Route("/ontology", _vocabulary_route("ontology", _ONTOLOGY), methods=["GET"]),
        Route("/shapes", _vocabulary_route("shapes", _SHAPES), methods=["GET"]),
    ]


__all__ = [
    "MAX_PATTERN_CHARS",
    "MAX_STREAM_ROWS",
    "STREAM_DEADLINE_S",
    "STREAM_MIN_BYTES_S",
    "STREAM_WINDOW_S",
    "TriplePattern",
    "before_query",
    "graph_store",
    "install",
    "query_dataset",
    "refuse_write",
    "routes",
    "scoped_description",
    "service_description",
    "stream_pattern",
    "triple_pattern",
    "visible_graphs",
    "void_description",
]
