"""Readers' own SPARQL, run in worker processes that can be stopped.

pyoxigraph has no timeout, cancellation or memory limit for a query, and a thread cannot be
stopped from outside; so the SPARQL endpoint runs readers' queries in a small pool of worker
processes instead. Each worker:

- is sealed off the network before it loads anything (:func:`~ratified_rdf.queries.offline.
  forbid_network`, for the whole process), so no query text can make it fetch a URL;
- runs at a lower scheduling priority than the server, so answer cards keep their CPU while a
  heavy query grinds;
- holds its own in-memory copy of the graphs queries have named (sent by the server once per
  graph, and again after a write), so it needs nothing of the server's store;
- parses and checks every text itself (:mod:`ratified_rdf.queries.guard`) and evaluates it,
  pulling rows under the row limit, and sends back the serialised result.

The server waits for the reply while watching the worker: past the query's deadline, or once
the worker's memory has grown by more than the ceiling, the worker is killed (the query is
*ended*, its CPU and memory are returned at once) and a fresh one takes its place. A worker
that dies on its own (the kernel's OOM killer, a crash in the engine) is replaced the same
way. Slots are shared fairly: one client (a token, or an address) holds at most
``per_client`` of them, so one client cannot hold every worker.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Final

from ratified_rdf._errors import QueryFailed
from ratified_rdf._forked import start_module

IDLE_EXIT_S: Final = 600.0
"""A worker left idle this long exits by itself (the next query starts a fresh one)."""
WARM_UP_S: Final = 300.0
"""How long a worker may take to start and load the graphs a query names."""
_WATCH_S: Final = 0.02
Exporter = Callable[[Sequence[str]], bytes]
"""Graphs as N-Quads, from the reader whose query needs them."""
_PAGE: Final = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


@dataclass(frozen=True)
class SandboxLimits:
    """What one reader query may use, and how many run at once."""

    timeout_s: float = 10.0
    """Seconds a query may take, waiting for a free worker included."""
    max_rows: int = 10_000
    """Most rows (or triples) a result may hold; more is refused with 422."""
    memory_mib: int = 1_024
    """How far a worker's memory may grow past its loaded graphs while it runs one query."""
    workers: int = 2
    """Worker processes, so queries that may run at once."""
    per_client: int = 1
    """Workers one client may hold at once; its further queries wait for its own turn."""

    def __post_init__(self) -> None:
        if self.timeout_s <= 0:
            raise ValueError("timeout_s must be a positive number of seconds.")
        if self.max_rows < 1 or self.workers < 1 or self.per_client < 1 or self.memory_mib < 1:
            raise ValueError("max_rows, workers, per_client and memory_mib must be at least 1.")


@dataclass(frozen=True)
class QueryRequest:
    """One reader query: its text, the reader's graphs, and the formats the client accepts
    (canonical media types; ``None`` where no format of that kind is acceptable)."""

    sparql: str
    graphs: tuple[str, ...]
    results_media: str | None
    graph_media: str | None


@dataclass(frozen=True)
class QueryReply:
    """A serialised result, its media type, and how many rows (or triples) it holds."""

    body: bytes
    media_type: str
    rows: int


class SandboxError(QueryFailed):
    """A query the sandbox did not answer: the HTTP status of the SPARQL Protocol that fits,
    and a sentence saying what happened and what to do."""

    def __init__(
        self,
        status: int,
        message: str,
        headers: dict[str, str] | None = None,
        reason: str = "",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers or {}
        self.reason = reason


# --- the server's side ------------------------------------------------------------------------


@dataclass
class _Worker:
    process: subprocess.Popen[bytes] | None = None
    conn: Connection | None = None
    loaded: dict[str, int] = field(default_factory=dict)
    base_rss: int = 0

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(5)
        if self.conn is not None:
            with contextlib.suppress(OSError):
                self.conn.close()
        self.process, self.conn, self.loaded, self.base_rss = None, None, {}, 0


def _rss(pid: int) -> int:
    """Resident memory of ``pid`` in bytes (0 when it cannot be read)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


class QuerySandbox:
    """A pool of worker processes running readers' queries under :class:`SandboxLimits`.

    ``generation()`` returns a number that changes whenever the store is written, so workers
    reload what changed; each query brings the reader's own ``export(graphs)`` (those graphs
    as N-Quads), so a worker is only ever sent graphs the asking reader may read. Workers
    start on first use; :meth:`close` stops them (so does collecting the sandbox, and a
    worker left idle for :data:`IDLE_EXIT_S`).
    """

    def __init__(self, limits: SandboxLimits, generation: Callable[[], int] = lambda: 0) -> None:
        self.limits = limits
        self._generation = generation
        self._free: list[_Worker] = [_Worker() for _ in range(limits.workers)]
        self._all = list(self._free)
        self._lock = threading.Lock()
        self._busy: dict[str, int] = {}
        self._waiting: deque[tuple[str, asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self.ended = 0
        """Queries ended by the sandbox (deadline or memory) since it started."""
        self._finalizer = weakref.finalize(self, _stop_all, self._all)

    @property
    def busy(self) -> int:
        """How many queries hold a worker now."""
        with self._lock:
            return sum(self._busy.values())

    def close(self) -> None:
        """Stop every worker."""
        self._finalizer()

    # slots ------------------------------------------------------------------------------------

    def _may_take(self, client: str) -> bool:
        return (
            sum(self._busy.values()) < self.limits.workers
            and self._busy.get(client, 0) < self.limits.per_client
        )

    async def _acquire(self, client: str, deadline: float) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._may_take(client):
                self._busy[client] = self._busy.get(client, 0) + 1
                return
            turn: asyncio.Future[None] = loop.create_future()
            entry = (client, loop, turn)
            self._waiting.append(entry)
        try:
            await asyncio.wait_for(asyncio.shield(turn), max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            with self._lock:
                if entry not in self._waiting:
                    return  # granted just as the wait ran out
                self._waiting.remove(entry)
            raise self._busy_error() from None

    def _busy_error(self) -> SandboxError:
        return SandboxError(
            503,
            "Every query worker stayed busy for as long as this query may run (one client may "
            f"hold {self.limits.per_client} of the {self.limits.workers} at once, and yours or "
            "others' were all in use); try again in a few seconds.",
            {"Retry-After": "5"},
            reason="busy",
        )

    def _release(self, client: str) -> None:
        with self._lock:
            self._busy[client] -= 1
            if not self._busy[client]:
                del self._busy[client]
            for entry in list(self._waiting):
                waiter, loop, turn = entry
                if not self._may_take(waiter):
                    continue
                self._waiting.remove(entry)
                try:
                    loop.call_soon_threadsafe(_grant, turn)
                except RuntimeError:  # that waiter's loop has closed
                    continue
                self._busy[waiter] = self._busy.get(waiter, 0) + 1

    # running ----------------------------------------------------------------------------------

    async def run(self, client: str, request: QueryRequest, export: Exporter) -> QueryReply:
        """Run ``request`` for ``client`` (a token digest or an address) on a worker, sending
        it graphs it lacks through ``export``; raise :class:`SandboxError` when the query is
        refused, fails, or is ended."""
        deadline = time.monotonic() + self.limits.timeout_s
        await self._acquire(client, deadline)
        with self._lock:
            worker = self._free.pop()
        try:
            if time.monotonic() >= deadline:  # the slot came as the time ran out
                raise self._busy_error()
            return await asyncio.to_thread(self._exchange, worker, request, export, deadline)
        finally:
            with self._lock:
                self._free.append(worker)
            self._release(client)

    def _start(self, worker: _Worker) -> None:
        """A fresh worker: ``python -m ratified_rdf.queries.sandbox`` on one end of a socket
        pair (a plain subprocess, so it never re-imports the caller's main module), which
        dies with the server, also when the server is killed mid-query."""
        worker.stop()
        ours, theirs = socket.socketpair()
        with ours, theirs:
            process = start_module(
                "ratified_rdf.queries.sandbox",
                [str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
            )
            worker.conn = Connection(os.dup(ours.fileno()))
        worker.process = process

    def _warm(self, worker: _Worker, graphs: Sequence[str], export: Exporter) -> None:
        """Start ``worker`` if it is not running and send it the graphs it lacks."""
        if not worker.alive():
            self._start(worker)
        generation = self._generation()
        missing = [g for g in graphs if worker.loaded.get(g) != generation]
        if not missing and worker.base_rss:
            return
        assert worker.conn is not None and worker.process is not None
        data = export(missing) if missing else b""
        worker.conn.send(("load", tuple(missing), data))
        reply = self._receive(worker, time.monotonic() + WARM_UP_S, watch_memory=False)
        if reply[0] != "loaded":
            worker.stop()
            # An error reply is ("error", status, message, reason): say its message.
            raise SandboxError(500, f"A query worker could not load the graphs: {reply[2]}")
        worker.loaded.update(dict.fromkeys(missing, generation))
        worker.base_rss = _rss(worker.process.pid)

    def _exchange(
        self, worker: _Worker, request: QueryRequest, export: Exporter, deadline: float
    ) -> QueryReply:
        warming = time.monotonic()
        self._warm(worker, request.graphs, export)
        # Starting a worker and loading graphs is the server's cost, not the query's.
        deadline += time.monotonic() - warming
        assert worker.conn is not None
        worker.conn.send(
            (
                "query",
                request.sparql,
                request.graphs,
                request.results_media,
                request.graph_media,
                self.limits.max_rows,
            )
        )
        reply = self._receive(worker, deadline)
        if reply[0] == "ok":
            return QueryReply(body=reply[1], media_type=reply[2], rows=reply[3])
        raise SandboxError(reply[1], reply[2], reason=reply[3] if len(reply) > 3 else "")

    def _receive(self, worker: _Worker, deadline: float, watch_memory: bool = True) -> Any:
        """The worker's reply, or :class:`SandboxError` once the worker has been ended for
        running past ``deadline`` or over its memory ceiling, or has died."""
        assert worker.conn is not None and worker.process is not None
        ceiling = worker.base_rss + self.limits.memory_mib * 1024 * 1024
        pid = worker.process.pid
        while True:
            try:
                if worker.conn.poll(_WATCH_S):
                    return worker.conn.recv()
            except (EOFError, OSError):
                code = worker.process.poll() if worker.process else None
                worker.stop()
                raise SandboxError(
                    503,
                    "The query worker stopped while running this query (exit code "
                    f"{code}); it has been replaced. If the query is heavy, make it more "
                    "selective; otherwise try again.",
                    {"Retry-After": "1"},
                    reason="died",
                ) from None
            if time.monotonic() > deadline:
                worker.stop()
                self.ended += 1
                raise SandboxError(
                    503,
                    f"The query ran longer than the {self.limits.timeout_s:g} s this endpoint "
                    "allows (waiting for a free worker included) and was ended. Make it more "
                    "selective (bind more of the pattern, add a LIMIT) or ask the operator for "
                    "a longer --query-timeout.",
                    {"Retry-After": "1"},
                    reason="timeout",
                )
            if watch_memory and worker.base_rss and _rss(pid) > ceiling:
                worker.stop()
                self.ended += 1
                raise SandboxError(
                    503,
                    f"The query needed more than the {self.limits.memory_mib:,} MiB of memory "
                    "one query may use here and was ended. Make it more selective (an ORDER "
                    "BY or GROUP BY over a large join holds all of it at once).",
                    {"Retry-After": "1"},
                    reason="memory",
                )


def _grant(turn: asyncio.Future[None]) -> None:
    if not turn.done():
        turn.set_result(None)


def _stop_all(workers: list[_Worker]) -> None:
    for worker in workers:
        worker.stop()


# --- the worker's side ------------------------------------------------------------------------


_Reply = tuple[Any, ...]
"""What a worker sends back: ``("loaded", "")``, ``("ok", body, media type, rows)`` or
``("error", status, message, reason)``."""


def _worker_main(conn: Connection) -> None:
    """A worker process: sealed, niced, answering ``load`` and ``query`` messages."""
    from ratified_rdf.queries.offline import forbid_network

    forbid_network()
    with contextlib.suppress(OSError):
        os.nice(10)
    from pyoxigraph import Store

    from ratified_rdf.queries.guard import check_reader_query

    # Read the parser in now, while the server counts this as the worker's start and not as
    # the first query's time (its import and first parse take a good part of a second).
    check_reader_query("ASK {}")
    store = Store()
    while True:
        try:
            if not conn.poll(IDLE_EXIT_S):
                return
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        reply: _Reply
        try:
            if message[0] == "load":
                reply = _load(store, message[1], message[2])
            else:
                reply = _answer(store, *message[1:])
        except Exception as error:  # reported to the server, which says it is a bug
            reply = (
                "error",
                500,
                f"The query worker failed ({type(error).__name__}: {error}). This is a bug "
                "in ratified-rdf.",
                "bug",
            )
        try:
            conn.send(reply)
        except (OSError, ValueError):
            return


def _load(store: Any, graphs: Sequence[str], data: bytes) -> _Reply:
    from pyoxigraph import NamedNode, RdfFormat

    for graph in graphs:
        name = NamedNode(graph)
        if store.contains_named_graph(name):
            store.remove_graph(name)
    if data:
        store.bulk_load(data, format=RdfFormat.N_QUADS)
    return ("loaded", "")


def _answer(
    store: Any,
    sparql: str,
    graphs: Sequence[str],
    results_media: str | None,
    graph_media: str | None,
    max_rows: int,
) -> _Reply:
    from pyoxigraph import (
        NamedNode,
        QueryBoolean,
        QueryResultsFormat,
        QuerySolutions,
        QueryTriples,
        RdfFormat,
        parse_query_results,
        serialize,
    )

    from ratified_rdf.graph.vocab import PREFIXES
    from ratified_rdf.queries.guard import QueryRefused, check_reader_query

    try:
        check_reader_query(sparql)
    except QueryRefused as refused:
        status = {"update": 403, "size": 413}.get(refused.reason, 400)
        return ("error", status, str(refused), refused.reason)
    dataset = [NamedNode(g) for g in graphs]
    try:
        result = store.query(sparql, default_graph=dataset, named_graphs=dataset)
        if isinstance(result, QueryBoolean):
            if results_media is None:
                return _not_acceptable("boolean (ASK)")
            form = QueryResultsFormat.from_media_type(results_media.split(";")[0])
            return ("ok", result.serialize(format=form), results_media, 0)
        if isinstance(result, QuerySolutions):
            if results_media is None:
                return _not_acceptable("SELECT")
            names = [variable.value for variable in result.variables]
            # pyoxigraph serialises only its own result iterator, which cannot be checked row
            # by row; so rows are pulled here within the limit, written as TSV (lossless:
            # terms in N-Triples syntax), and parsed back to write the format asked for.
            lines = ["\t".join(f"?{name}" for name in names)]
            for count, solution in enumerate(result, 1):
                if count > max_rows:
                    return _too_many(max_rows, "rows")
                lines.append("\t".join("" if t is None else str(t) for t in solution))
            tsv = ("\n".join(lines) + "\n").encode()
            solutions = parse_query_results(tsv, QueryResultsFormat.TSV)
            form = QueryResultsFormat.from_media_type(results_media.split(";")[0])
            return ("ok", solutions.serialize(format=form), results_media, len(lines) - 1)
        if isinstance(result, QueryTriples):
            if graph_media is None:
                return _not_acceptable("CONSTRUCT or DESCRIBE")
            triples = []
            for count, triple in enumerate(result, 1):
                if count > max_rows:
                    return _too_many(max_rows, "triples")
                triples.append(triple)
            rdf_format = RdfFormat.from_media_type(graph_media.split(";")[0])
            body = serialize(triples, format=rdf_format, prefixes=PREFIXES)
            return ("ok", body, graph_media, len(triples))
    except SyntaxError as error:
        return ("error", 400, f"The query is not valid SPARQL: {error}.", "syntax")
    except OSError as error:
        return (
            "error",
            500,
            f"The engine failed while evaluating the query: {error}. Try again.",
            "engine",
        )
    return ("error", 500, "The engine returned a result of an unknown kind.", "bug")


def _not_acceptable(form: str) -> _Reply:
    return ("error", 406, form, "not-acceptable")


def _too_many(max_rows: int, what: str) -> _Reply:
    # An error, not a truncated result: a protocol client cannot tell a silently cut result
    # from a complete one. 422: the query is valid, yet asks for more than is returned here.
    return (
        "error",
        422,
        f"The result has more than {max_rows:,} {what}, the most this endpoint returns. Add a "
        "LIMIT (and ORDER BY with OFFSET to page through it) or a more selective pattern.",
        "rows",
    )


__all__ = ["QueryReply", "QueryRequest", "QuerySandbox", "SandboxError", "SandboxLimits"]

if __name__ == "__main__":
    _worker_main(Connection(int(sys.argv[1])))
