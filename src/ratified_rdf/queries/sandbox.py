"""Readers' own SPARQL, run in worker processes that can be stopped.

pyoxigraph has no timeout, cancellation or memory limit for a query, and a thread cannot be
stopped from outside; so the SPARQL endpoint runs readers' queries in a small pool of worker
processes instead. Each worker:

- is sealed off the network before it loads anything (:func:`~ratified_rdf.queries.offline.
  forbid_network`, for the whole process), so no query text can make it fetch a URL;
- runs at the lowest scheduling priority (nice 19, from its start), so the server's event
  loop and answer cards keep their CPU however many heavy queries grind (the quick worker,
  below, runs at the server's own priority: its queries are short by construction);
- reads its own copy of the graphs. Given the folder of the brain's store on disk, it takes
  a checkpoint of it itself (RocksDB's: hard links to the store's immutable files, nothing
  parsed or copied, so a worker is ready in the time Python takes to start), opens it for
  writing alone, and answers from it at once, each query's dataset restricted by the
  engine's own dataset arguments to the reader's graphs; meanwhile it loads the graphs the
  query named into memory, on a thread (the engine lets go of the interpreter's lock while it
  loads), from the server's one export of them (made on a thread of the server's, never in a
  query's time), and answers from that copy once it is made (the engine reads memory several
  times faster than its files). A write to the brain gives the
  next query a fresh worker and checkpoint. Without a folder (a store in memory, or on a
  server), it answers from an in-memory copy of the graphs queries have named, exported by
  the server once per graph and version, to a file every worker loads from, again after a
  write. Graphs whose content depends on the reader (the catalog as they may know it) are
  always exported and loaded in place of the store's own; so a worker needs nothing of the
  server's store;
- parses and checks every text itself (:mod:`ratified_rdf.queries.guard`) and evaluates it,
  pulling rows under the row limit, and sends back the serialised result.

The server waits for the reply while watching the worker: past the query's deadline, or once
the worker's memory has grown by more than the ceiling, or all workers' together by more than
the total ceiling (then the largest goes), the worker is killed (the query is *ended*, its CPU
and memory are returned at once) and a fresh one takes its place. A worker that dies on its
own (the kernel's OOM killer, a crash in the engine) is replaced the same way, and so is a
worker whose caller stops waiting (a cancelled task): its query is ended at once, not at its
deadline. Loading a
reader's graphs into a worker counts against the query's deadline: past it the client is told
to retry while the load goes on, so the retry finds them loaded.

Slots are shared fairly, with no estimate of what a query costs: one client (a token, or an
address) holds at most ``per_client`` of them; how long each client's queries ran is
remembered (a running average, forgotten by half every :data:`USAGE_HALF_LIFE_S`). A freed
worker goes to a waiting light client (below) if there is one, the one served longest ago
first, in turn: so a client sending quick queries back to back waits its turn behind a client
that asks now and then, instead of going first because its queries are even quicker; else to
the waiting client whose queries ran the shortest. ``quick_workers`` of the
workers are kept for *light* clients (whose queries ran under half of ``quick_s`` lately; a
client with no finished query yet is not one) that ask now and then (had a query with the
sandbox, waiting or running, less than :data:`BACK_TO_BACK` of the time lately) once the
others are all taken, and a query may run there ``quick_s`` at most (an ended query counts as
a whole ``timeout_s``): a client sending heavy queries from many addresses waits for the other
workers with everyone heavy, and one that turns heavy takes the kept worker once, for that
long. A client sending quick queries back to back (as one whose queries are refused in a
moment does, over and over) waits for the other workers too, before the heavy ones: on the
kept worker, each of its queries was one more that a client asking now and then found running
there and waited for, and it kept that worker, at the server's priority, busy for good.
While any other client waits, a light client asking now and then takes the kept worker, or
waits for it, and leaves the others (at the lowest priority) to those waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any, Final

from ratified_rdf._errors import QueryFailed
from ratified_rdf._forked import start_module

USAGE_HALF_LIFE_S: Final = 60.0
"""How long a client's queries ran counts half as much this many seconds later."""
OCCUPANCY_HALF_LIFE_S: Final = 2.0
"""How long the time a client had a query with the sandbox counts half as much: what
:data:`BACK_TO_BACK` is measured over."""
BACK_TO_BACK: Final = 0.9
"""A client that had a query with the sandbox (waiting for a worker or running on one) more
than this share of the time lately sends them back to back: it does not take the worker kept
for light clients. A client asking now and then between other calls stays under it, even on
a quiet machine where those calls take no time; one sending its next query as soon as the
last is answered, waiting for a worker with others like it, stays over it."""
_LATEST: Final = 0.3
"""The weight of a client's latest query in the running average of how long its queries
run: a client that sent one heavy query is heavy for several more."""
QUICK_NICE: Final = 0
GENERAL_NICE: Final = 19
"""How much lower than the server's a worker's scheduling priority is (a quick worker's, and
the others'). The quick worker runs at the server's own: it answers light clients, and a
query may run there ``quick_s`` at most, so it never holds a CPU for long. The others run at
the lowest there is, so however many of them grind heavy queries, the server's event loop,
its cards and the quick worker take the CPU whenever they want it."""
IDLE_EXIT_S: Final = 600.0
"""A worker left idle this long exits by itself (the next query starts a fresh one)."""
WARM_UP_S: Final = 300.0
"""How long a worker may take to start and load the graphs a query names."""
_WATCH_S: Final = 0.02
_LOOKS_AHEAD: Final = 2
"""How many watch periods of growth at the latest rate a worker's memory must stay under its
ceiling by: the one to the next look, and the one its end (a kill, and its exit) takes."""
_GRACE_S: Final = 1.0
"""How long past a deadline the server waits for a worker that is ending a query itself."""
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
    quick_workers: int | None = None
    """Workers kept for light clients once the others are taken (default: one when there are
    two workers or more, else none)."""
    quick_s: float = 1.0
    """A client is light while its queries lately ran under half this many seconds; a query on
    a quick worker may run this long."""
    total_memory_mib: int | None = None
    """How far all workers together may grow past their loaded graphs (default:
    ``memory_mib``); past it the largest query is ended."""

    def __post_init__(self) -> None:
        if self.timeout_s <= 0 or self.quick_s <= 0:
            raise ValueError("timeout_s and quick_s must be positive numbers of seconds.")
        if self.max_rows < 1 or self.workers < 1 or self.per_client < 1 or self.memory_mib < 1:
            raise ValueError("max_rows, workers, per_client and memory_mib must be at least 1.")
        if self.quick_workers is not None and not 0 <= self.quick_workers < self.workers:
            raise ValueError("quick_workers must leave at least one of the workers for others.")
        if self.total_memory_mib is not None and self.total_memory_mib < 1:
            raise ValueError("total_memory_mib must be at least 1.")

    @property
    def quick(self) -> int:
        """How many workers are kept for light clients."""
        if self.quick_workers is not None:
            return self.quick_workers
        return 1 if self.workers >= 2 else 0

    @property
    def total_memory(self) -> int:
        """MiB all workers together may grow by."""
        return self.total_memory_mib if self.total_memory_mib is not None else self.memory_mib


@dataclass(frozen=True)
class QueryRequest:
    """One reader query: its text, the reader's graphs, and the formats the client accepts
    (canonical media types; ``None`` where no format of that kind is acceptable)."""

    sparql: str
    graphs: tuple[str, ...]
    results_media: str | None
    graph_media: str | None
    named: tuple[str, ...] | None = None
    """The named graphs, when they are not ``graphs`` (the default graph's)."""
    views: tuple[tuple[str, str], ...] = ()
    """Graphs whose content depends on the reader (the catalog as they may know it), each
    with the name of this reader's view of it: a worker holding another view reloads it."""

    @property
    def dataset(self) -> tuple[str, ...]:
        """Every graph the query may read: the default graph's and the named ones."""
        named = () if self.named is None else self.named
        return tuple(dict.fromkeys([*self.graphs, *named]))


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
class _Presence:
    """How much of the time since it was first seen a client had a query waiting for a
    worker or running on one (not while a worker started or loaded graphs for it: that is
    the server's cost): both measures decay by half every :data:`OCCUPANCY_HALF_LIFE_S`."""

    busy: float
    """Seconds with a query waiting or running, decayed."""
    window: float
    """Seconds since the client was first seen, decayed alike."""
    at: float
    """When both are as of (the sandbox's clock)."""

    def occupancy(self, now: float) -> float:
        """The share of the time lately the client had a query waiting or running."""
        self._advance(now)
        return self.busy / self.window if self.window > 0 else 0.0

    def add(self, now: float, spans: Sequence[tuple[float, float]]) -> None:
        """Count ``spans`` (start and end, none after ``now``) as busy."""
        self._advance(now)
        rate = math.log(2) / OCCUPANCY_HALF_LIFE_S
        for start, end in spans:
            start, end = min(start, self.at), min(end, self.at)
            if end > start:
                self.busy += (
                    math.exp(rate * (end - self.at)) - math.exp(rate * (start - self.at))
                ) / rate

    def _advance(self, now: float) -> None:
        if now <= self.at:
            return
        keep = 0.5 ** ((now - self.at) / OCCUPANCY_HALF_LIFE_S)
        self.window = self.window * keep + (1 - keep) * OCCUPANCY_HALF_LIFE_S / math.log(2)
        self.busy *= keep
        self.at = now


@dataclass
class _Waiter:
    """A query waiting for a worker; ``lane`` is set (under the sandbox's lock) when one is
    given to it."""

    client: str
    loop: asyncio.AbstractEventLoop
    turn: asyncio.Future[None]
    order: int
    lane: str | None = None


@dataclass
class _Deadline:
    """A query's deadline, moved by the thread that runs it while a worker starts (the
    server's cost), and whether it is loading the reader's graphs (the query's)."""

    at: float
    loading: bool = False
    asked: float | None = None
    """When the query went to the worker (its time is what its client is charged)."""
    sent: float | None = None
    """The same, on the sandbox's clock (what a client's occupancy is measured by)."""


@dataclass
class _Worker:
    quick: bool = False
    process: subprocess.Popen[bytes] | None = None
    conn: Connection | None = None
    loaded: dict[str, tuple[int, str]] = field(default_factory=dict)
    snapshot: int | None = None
    """The write generation the worker's checkpoint of the store was taken at (``None``: it
    holds only the graphs it was sent): every graph but the reader-dependent ones is as of it."""
    on_disk: dict[str, tuple[int, str]] = field(default_factory=dict)
    """The reader-dependent graphs loaded into the checkpoint, in place of the store's own."""
    copying: dict[str, tuple[int, str]] | None = None
    """The graphs the worker is copying from its checkpoint into memory, on a thread."""
    reads: str = "memory"
    """The store the next query reads: ``memory``, or ``checkpoint`` until the copy is made."""
    folder: str | None = None
    """Where the worker's checkpoint is, removed with the worker."""
    base_rss: int = 0
    abandoned: threading.Event = field(default_factory=threading.Event)
    """Set when the caller of the query on this worker stopped waiting for it."""

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
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.process, self.conn, self.loaded, self.base_rss = None, None, {}, 0
        self.snapshot, self.folder, self.on_disk, self.copying = None, None, {}, None
        self.reads = "memory"


def _lower(pid: int) -> None:
    """Give process ``pid`` the lowest scheduling priority (nice 19), set from here as soon as
    it is started, so that its own start (an interpreter and the engine's imports, a good part
    of a second of CPU whenever an ended worker is replaced) runs there too, not at the
    server's priority until the worker lowers itself. Not Linux's idle scheduling class: on a
    busy machine it starves the light queries a heavy worker is lent for altogether."""
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, pid, GENERAL_NICE)


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
    as N-Quads), so a worker is only ever sent graphs the asking reader may read. With
    ``store`` (the folder of the brain's store on disk), a worker reads a checkpoint of it
    instead, each query restricted to the reader's graphs by the engine's dataset, and only
    the reader-dependent graphs (``QueryRequest.views``) are exported. Workers start on first
    use; :meth:`close` stops them (so does collecting the sandbox, and a worker left idle for
    :data:`IDLE_EXIT_S`).
    """

    def __init__(
        self,
        limits: SandboxLimits,
        generation: Callable[[], int] = lambda: 0,
        store: str | os.PathLike[str] | None = None,
    ) -> None:
        self.limits = limits
        self._generation = generation
        self._store = None if store is None else os.fspath(store)
        self._free: list[_Worker] = [_Worker(quick=n < limits.quick) for n in range(limits.workers)]
        self._all = list(self._free)
        self._lock = threading.Lock()
        self._busy: dict[str, int] = {}
        self._quick_held = 0  # slots taken in the quick lane; every other one is general
        self._usage: dict[str, tuple[float, float]] = {}
        self._served: dict[str, int] = {}  # the number of the latest grant to each client
        self._presence: dict[str, _Presence] = {}
        self._clock: Callable[[], float] = time.monotonic
        """What :data:`BACK_TO_BACK` is measured by (a test may hold it)."""
        self._grants = 0
        self._growth: dict[int, int] = {}
        self._waiting: list[_Waiter] = []
        self._arrivals = 0
        self.granted: deque[tuple[str, str]] = deque(maxlen=64)
        """The latest grants of a worker, oldest first: (client, lane), lane ``general`` or
        ``quick``."""
        self.ended = 0
        """Queries ended by the sandbox (deadline or memory) since it started."""
        self._spool = _Spool()
        self._copies = threading.Event()
        self._copies.set()
        # A thread per slot waits on its worker, of the sandbox's own: on the event loop's
        # shared pool, queries running for seconds would leave the server's other short jobs
        # (an audit record's write, for every query) queueing for the few threads left.
        self._threads = ThreadPoolExecutor(
            max_workers=limits.workers + 1, thread_name_prefix="ratified-sandbox"
        )
        self._finalizer = weakref.finalize(self, _stop_all, self._all, self._spool, self._threads)

    @property
    def busy(self) -> int:
        """How many queries hold a worker now."""
        with self._lock:
            return sum(self._busy.values())

    def close(self) -> None:
        """Stop every worker."""
        self._finalizer()

    def hold_copies(self) -> None:
        """Start no worker's copy in memory (nor the export it loads) until
        :meth:`allow_copies`: workers answer from their checkpoints meanwhile. A server holds
        them while it starts, so that its first answers have the processors to themselves."""
        self._copies.clear()

    def allow_copies(self) -> None:
        """Let workers copy the graphs they answer over into memory again (the next query over
        them starts its worker's copy)."""
        self._copies.set()

    # slots ------------------------------------------------------------------------------------

    def _used(self, client: str, now: float) -> float:
        """How long ``client``'s queries have run lately: a running average of their seconds
        (the latest counting for :data:`_LATEST`), halved every half-life since the last."""
        used, at = self._usage.get(client, (0.0, now))
        return used * 0.5 ** ((now - at) / USAGE_HALF_LIFE_S)

    def _charge(self, client: str, seconds: float) -> None:
        """Count a query of ``seconds`` against ``client``."""
        now = time.monotonic()
        with self._lock:
            before = self._used(client, now) if client in self._usage else seconds
            self._usage[client] = (before + _LATEST * (seconds - before), now)
            if len(self._usage) > 10_000:  # forget the lightest, so addresses cannot grow it
                for name in sorted(self._usage, key=lambda c: self._used(c, now))[:5_000]:
                    del self._usage[name]
                    self._served.pop(name, None)

    def _turn(self, waiter: _Waiter, now: float) -> tuple[bool, float, int]:
        """Where ``waiter`` stands among the waiting (lowest first): light clients before the
        others, in turn among them (the one served longest ago first); the others by how
        long their queries ran (the shortest first); then the earliest to ask."""
        if self._light(waiter.client, now):
            return (False, self._served.get(waiter.client, 0), waiter.order)
        return (True, self._used(waiter.client, now), waiter.order)

    def _lane(self, client: str, now: float, crowded: bool | None = None) -> str | None:
        """The lane ``client`` may take a worker in now, if any (lock held); ``crowded`` is
        :meth:`_crowded`, when the caller has it already."""
        limits = self.limits
        held = sum(self._busy.values())
        if held >= limits.workers or self._busy.get(client, 0) >= limits.per_client:
            return None
        kept = self._light(client, now) and self._sparing(client)
        if held - self._quick_held < limits.workers - limits.quick and not (
            kept and limits.quick and (self._crowded(now) if crowded is None else crowded)
        ):
            return "general"
        if self._quick_held < limits.quick and kept:
            return "quick"
        return None

    def _crowded(self, now: float) -> bool:
        """Whether clients other than the light ones asking now and then wait for a worker
        (lock held): then those take the kept worker, or wait for it, and leave the general
        workers to the waiting. A general worker runs at the lowest priority, where on a busy
        machine a light query waited on the processors longer than for the kept worker."""
        # A client waiting only for its own turn (at its per-client share) takes no general
        # worker however many are free: a light one must not wait for the kept worker then.
        return any(
            self._busy.get(w.client, 0) < self.limits.per_client
            and not (self._light(w.client, now) and self._sparing(w.client))
            for w in self._waiting
        )

    def _sparing(self, client: str) -> bool:
        """Whether ``client`` asks now and then, not back to back (lock held)."""
        presence = self._presence.get(client)
        return presence is None or presence.occupancy(self._clock()) <= BACK_TO_BACK

    def _was_busy(self, client: str, first: float, spans: Sequence[tuple[float, float]]) -> None:
        """Count ``spans`` of the sandbox's clock, when a query of ``client``'s asked at
        ``first`` waited for a worker or ran on one, toward its occupancy."""
        now = self._clock()
        with self._lock:
            presence = self._presence.get(client)
            if presence is None:
                presence = self._presence[client] = _Presence(0.0, 0.0, first)
            presence.add(now, spans)
            if len(self._presence) > 10_000:  # forget the oldest, so addresses cannot grow it
                for name in sorted(self._presence, key=lambda c: self._presence[c].at)[:5_000]:
                    del self._presence[name]

    def _light(self, client: str, now: float) -> bool:
        """Whether ``client`` is known to send quick queries: one it has not seen finish a
        query yet (a new address, perhaps one of many) waits for the other workers."""
        return client in self._usage and self._used(client, now) < self.limits.quick_s / 2

    def _may_take(self, client: str) -> bool:
        return self._lane(client, time.monotonic()) is not None

    def _take(self, client: str, lane: str) -> None:
        self._busy[client] = self._busy.get(client, 0) + 1
        self._quick_held += lane == "quick"
        self.granted.append((client, lane))
        self._grants += 1
        self._served[client] = self._grants
        if len(self._served) > 10_000:  # keep the clients still remembered as light or not
            self._served = {c: n for c, n in self._served.items() if c in self._usage}

    async def _acquire(self, client: str, deadline: float) -> str:
        """Wait for a worker slot until ``deadline``; the lane it is in."""
        loop = asyncio.get_running_loop()
        with self._lock:
            lane = self._lane(client, time.monotonic())
            if lane is not None:
                self._take(client, lane)
                return lane
            self._arrivals += 1
            waiter = _Waiter(client, loop, loop.create_future(), self._arrivals)
            self._waiting.append(waiter)
        try:
            await asyncio.wait_for(
                asyncio.shield(waiter.turn), max(0.0, deadline - time.monotonic())
            )
        except asyncio.CancelledError:
            # The caller gave up waiting: leave the queue, or give back a turn granted just
            # now, so the slot is not held for a query nobody runs.
            with self._lock:
                granted = waiter.lane
                if granted is None:
                    self._waiting.remove(waiter)
            if granted is not None:
                self._release(client, granted)
            raise
        except TimeoutError:
            with self._lock:
                if waiter.lane is None:
                    self._waiting.remove(waiter)
                    raise self._busy_error() from None
        assert waiter.lane is not None  # granted (perhaps just as the wait ran out)
        return waiter.lane

    def _busy_error(self) -> SandboxError:
        return SandboxError(
            503,
            "Every query worker stayed busy for as long as this query may run (one client may "
            f"hold {self.limits.per_client} of the {self.limits.workers} at once, and yours or "
            "others' were all in use); try again in a few seconds.",
            {"Retry-After": "5"},
            reason="busy",
        )

    def _release(self, client: str, lane: str | None = None) -> None:
        """Give back ``client``'s slot in ``lane``, and hand free slots to the waiting
        clients in the order of :meth:`_turn`."""
        with self._lock:
            self._busy[client] -= 1
            if not self._busy[client]:
                del self._busy[client]
            self._quick_held -= lane == "quick"
            now = time.monotonic()
            crowded = self._crowded(now)  # once: it is the same for every waiter
            for waiter in sorted(self._waiting, key=lambda w: self._turn(w, now)):
                granted = self._lane(waiter.client, now, crowded)
                if granted is None:
                    continue
                waiter.lane = granted  # before the waiter can wake and read it
                try:
                    waiter.loop.call_soon_threadsafe(_grant, waiter.turn)
                except RuntimeError:  # that waiter's loop has closed
                    waiter.lane = None
                    continue
                self._waiting.remove(waiter)
                self._take(waiter.client, granted)

    # running ----------------------------------------------------------------------------------

    async def run(
        self,
        client: str,
        request: QueryRequest,
        export: Exporter,
        *,
        deadline: float | None = None,
        fresh: bool = False,
    ) -> QueryReply:
        """Run ``request`` for ``client`` (a token digest or an address) on a worker, sending
        it graphs it lacks through ``export``; raise :class:`SandboxError` when the query is
        refused, fails, or is ended. ``deadline`` (``time.monotonic()`` seconds) is when the
        query must be answered, by default ``timeout_s`` from now: a caller that spent some
        of the query's time already (copying the reader's graphs) passes its own. ``fresh``
        runs it on a worker not started yet if a free one is (what a warm-up wants)."""
        if deadline is None:
            deadline = time.monotonic() + self.limits.timeout_s
        arrived = self._clock()
        spans: list[tuple[float, float]] = []  # waiting for a worker, then running on it
        try:
            return await self._run(client, request, export, deadline, spans, fresh)
        finally:
            self._was_busy(client, arrived, spans or [(arrived, self._clock())])

    async def _run(
        self,
        client: str,
        request: QueryRequest,
        export: Exporter,
        deadline: float,
        spans: list[tuple[float, float]],
        fresh: bool,
    ) -> QueryReply:
        arrived = self._clock()
        lane = await self._acquire(client, deadline)
        spans.append((arrived, self._clock()))
        with self._lock:
            worker = self._pick_fresh(lane) if fresh else self._pick(lane)
        worker.abandoned.clear()
        clock = _Deadline(deadline)

        def exchange() -> QueryReply:
            used = 0.0
            try:
                if time.monotonic() >= clock.at:  # the slot came as the time ran out
                    raise self._busy_error()
                return self._exchange(worker, request, export, clock, lane == "quick")
            except SandboxError as error:
                if error.reason in ("timeout", "memory"):
                    # An ended query would have gone on: it counts as a whole query's time.
                    used = self.limits.timeout_s
                raise
            finally:
                if clock.sent is not None:
                    spans.append((clock.sent, self._clock()))
                ran = time.monotonic() - clock.asked if clock.asked is not None else None
                if ran is not None:
                    self._charge(client, max(used, ran))
                if worker.alive():
                    self._give_back(worker, client, lane)
                else:
                    # Ended or dead: its replacement starts now, on this query's slot, so the
                    # next query (perhaps another client's small one) does not wait for it;
                    # on a thread of its own, so this query's caller is answered at once.
                    worker.abandoned.clear()  # the cancelled query is over; the load is not
                    threading.Thread(
                        target=self._replace,
                        args=(worker, request, export, client, lane),
                        name="ratified-sandbox-replace",
                        daemon=True,
                    ).start()

        task = asyncio.get_running_loop().run_in_executor(self._threads, exchange)
        task.add_done_callback(_retrieved)
        while True:
            # Past the deadline the thread may still be restarting an ended worker: look again
            # now and then rather than spin.
            left = clock.at + _GRACE_S - time.monotonic()
            try:
                done, _ = await asyncio.wait({task}, timeout=max(0.1, left))
            except asyncio.CancelledError:
                # The caller stopped waiting (a client's cancellation, a closing server): the
                # thread ends the query at once instead of at its deadline, and gives the
                # worker and the slot back once it has let go of them.
                worker.abandoned.set()
                raise
            if done:
                return task.result()
            if clock.loading and time.monotonic() > clock.at + _GRACE_S:
                # The load goes on (and keeps the slot) so that the retry finds it done.
                raise SandboxError(
                    503,
                    "A query worker is still loading your graphs, which took longer than the "
                    f"{self.limits.timeout_s:g} s a query may take here (it happens once, when "
                    "a reader's graphs are new or changed); send the query again in a few "
                    "seconds.",
                    {"Retry-After": "5"},
                    reason="loading",
                )

    def _give_back(self, worker: _Worker, client: str, lane: str) -> None:
        with self._lock:
            self._free.append(worker)
        self._release(client, lane)

    def _replace(
        self, worker: _Worker, request: QueryRequest, export: Exporter, client: str, lane: str
    ) -> None:
        """Start and load a replacement for an ended ``worker``, holding the ended query's
        slot until it is ready, then give the slot back."""
        try:
            with contextlib.suppress(Exception):
                self._warm(worker, request, export, _Deadline(math.inf))
        finally:
            self._give_back(worker, client, lane)

    async def warm(self, graphs: Sequence[str], export: Exporter) -> None:
        """Start every worker not running yet and ready it for ``graphs`` as a query does (so
        a query waits for a worker meanwhile), one at a time: on a small machine a query
        that comes meanwhile then shares the processors with one worker's start, not with
        every worker's. With a store on disk a worker is ready from its checkpoint, and
        ``graphs`` are exported first (on a thread, unless copies are held: see
        :meth:`hold_copies`) for the copies in memory the workers make as they answer."""
        if self._store is not None and self._copies.is_set():
            # Once, here, not in a query's time. Each worker starts its copy when it answers
            # a query over these graphs: a worker that answers none costs no copy.
            generation = self._generation()
            self._spool.prepare(tuple((g, (generation, "")) for g in dict.fromkeys(graphs)), export)
        request = QueryRequest("ASK {}", tuple(graphs), "application/sparql-results+json", None)
        name = "warm-up:workers"
        for _ in range(self.limits.workers):
            with self._lock:
                if all(worker.alive() for worker in self._all):
                    break
            self._charge(name, 0.0)  # known to be light, so the kept worker is warmed too
            with contextlib.suppress(Exception):  # a failed start is retried by a query
                far = time.monotonic() + WARM_UP_S
                await self.run(name, request, export, deadline=far, fresh=True)
        with self._lock:
            self._usage.pop(name, None)
            self._served.pop(name, None)
            self._presence.pop(name, None)

    def _pick(self, lane: str) -> _Worker:
        """A free worker of ``lane``'s kind if there is one, else any free worker: the one
        freed last, which is the likeliest to be started and loaded already."""
        for at in range(len(self._free) - 1, -1, -1):
            if self._free[at].quick == (lane == "quick"):
                return self._free.pop(at)
        return self._free.pop()

    def _pick_fresh(self, lane: str) -> _Worker:
        """A free worker not started yet, of ``lane``'s kind if there is one; else as
        :meth:`_pick` chooses."""
        for quick in (lane == "quick", lane != "quick"):
            for at in range(len(self._free) - 1, -1, -1):
                if self._free[at].quick == quick and not self._free[at].alive():
                    return self._free.pop(at)
        return self._pick(lane)

    def _start(self, worker: _Worker) -> None:
        """A fresh worker: ``python -m ratified_rdf.queries.sandbox`` on one end of a socket
        pair (a plain subprocess, so it never re-imports the caller's main module), which
        dies with the server, also when the server is killed mid-query."""
        worker.stop()
        ours, theirs = socket.socketpair()
        nice = QUICK_NICE if worker.quick else GENERAL_NICE
        with ours, theirs:
            process = start_module(
                "ratified_rdf.queries.sandbox",
                [str(theirs.fileno()), str(nice)],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                # Not the server's stdout: for ``ratified mcp`` that is the protocol channel,
                # and a worker holding it would keep the client from seeing the server end.
                stdout=subprocess.DEVNULL,
            )
            worker.conn = Connection(os.dup(ours.fileno()))
        if not worker.quick:
            _lower(process.pid)
        worker.process = process

    def _warm(
        self, worker: _Worker, request: QueryRequest, export: Exporter, clock: _Deadline
    ) -> None:
        """Start ``worker`` if it is not running (its start moves ``clock``: it is the
        server's cost) and send it the graphs it lacks (their load is the query's); set which
        of its stores the query reads (:attr:`_Worker.reads`)."""
        generation = self._generation()
        if not worker.alive() or worker.snapshot not in (None, generation):
            # A checkpoint taken before a write is replaced whole: a fresh one costs no more
            # than starting a worker, where exporting every graph again would take seconds.
            starting = time.monotonic()
            self._start(worker)
            assert worker.conn is not None
            if self._store is None:
                worker.conn.send(("load", (), b""))
            else:
                worker.folder = self._spool.place(self._store)
                worker.conn.send(("open", self._store, worker.folder))
            self._loaded(worker, time.monotonic() + WARM_UP_S)
            # The checkpoint was taken after the generation was read, so it holds at least
            # that generation's writes; a later write changes the number, and the worker.
            worker.snapshot = None if self._store is None else generation
            clock.at += time.monotonic() - starting
            assert worker.process is not None
            worker.base_rss = _rss(worker.process.pid)
        views = dict(request.views)
        wanted = {g: (generation, views.get(g, "")) for g in request.dataset}
        target, held = "memory", worker.loaded
        if worker.snapshot is not None:
            self._copied(worker)
            plain = [g for g in wanted if g not in views]
            uncopied = [g for g in plain if worker.loaded.get(g) != wanted[g]]
            if uncopied:
                # Answered from the checkpoint until the copy in memory is made.
                target, held = "checkpoint", worker.on_disk
                if worker.copying is None:
                    self._copy(worker, {g: wanted[g] for g in uncopied}, export)
        worker.reads = target
        missing = [g for g, version in wanted.items() if held.get(g) != version]
        if target == "checkpoint":
            missing = [g for g in missing if g in views]
        if not missing:
            return
        assert worker.conn is not None and worker.process is not None
        clock.loading = True
        try:
            data = self._spool.data(tuple((g, wanted[g]) for g in missing), export)
            worker.conn.send(("load", tuple(missing), data, target))
            self._loaded(worker, time.monotonic() + WARM_UP_S)
        finally:
            clock.loading = False
        held.update({g: wanted[g] for g in missing})
        worker.base_rss = _rss(worker.process.pid)
        if time.monotonic() > clock.at:
            raise SandboxError(
                503,
                "A query worker took longer than this query may run to load your graphs "
                "(it happens once, when a reader's graphs are new or changed); they are loaded "
                "now: send the query again.",
                {"Retry-After": "1"},
                reason="loading",
            )

    def _copy(self, worker: _Worker, graphs: dict[str, tuple[int, str]], export: Exporter) -> None:
        """Have ``worker`` load ``graphs`` into memory, on a thread of its own, from their
        export (the spool's file, as an ended worker's replacement loads; made on a thread
        of the server's the first time, so no query waits for it): it answers meanwhile
        from the checkpoint, and its memory grows as the copy is made, which counts toward
        the ceilings of a query running beside it."""
        if not self._copies.is_set():
            return  # held while the server starts: the checkpoint answers
        key = tuple(graphs.items())
        data = self._spool.ready(key)
        if data is None:
            self._spool.prepare(key, export)
            return
        assert worker.conn is not None
        if not data:  # nothing to copy: the graphs are empty
            worker.loaded.update(graphs)
            return
        worker.conn.send(("copy", tuple(graphs), data))
        self._loaded(worker, time.monotonic() + WARM_UP_S)
        worker.copying = graphs

    def _copied(self, worker: _Worker) -> None:
        """Whether ``worker``'s copy in memory is made: if so its graphs count as loaded,
        and its memory as it is now is what later queries' growth is measured from."""
        if worker.copying is None:
            return
        assert worker.conn is not None and worker.process is not None
        worker.conn.send(("copied",))
        reply = self._receive(worker, time.monotonic() + WARM_UP_S, watch_memory=False)
        if reply[0] == "loaded" and reply[1] == "":
            return  # still copying
        if reply[0] == "loaded":
            worker.loaded.update(worker.copying)
        # A copy that failed leaves the graphs to the checkpoint (the reply says why).
        worker.copying = None
        worker.base_rss = _rss(worker.process.pid)

    def _loaded(self, worker: _Worker, deadline: float) -> None:
        reply = self._receive(worker, deadline, watch_memory=False)
        if reply[0] != "loaded":
            worker.stop()
            # An error reply is ("error", status, message, reason): say its message.
            raise SandboxError(500, f"A query worker could not load the graphs: {reply[2]}")

    def _exchange(
        self,
        worker: _Worker,
        request: QueryRequest,
        export: Exporter,
        clock: _Deadline,
        quick: bool = False,
    ) -> QueryReply:
        self._warm(worker, request, export, clock)
        assert worker.conn is not None
        clock.asked, clock.sent = time.monotonic(), self._clock()
        worker.conn.send(
            (
                "query",
                request.sparql,
                request.graphs,
                request.results_media,
                request.graph_media,
                self.limits.max_rows,
                request.named,
                worker.reads,
            )
        )
        lane_end = time.monotonic() + self.limits.quick_s if quick else clock.at
        reply = self._receive(worker, min(clock.at, lane_end), quick=lane_end < clock.at)
        if reply[0] == "ok":
            return QueryReply(body=reply[1], media_type=reply[2], rows=reply[3])
        raise SandboxError(reply[1], reply[2], reason=reply[3] if len(reply) > 3 else "")

    def _receive(
        self, worker: _Worker, deadline: float, watch_memory: bool = True, quick: bool = False
    ) -> Any:
        """The worker's reply, or :class:`SandboxError` once the worker has been ended for
        running past ``deadline`` (``quick``: the quick lane's), or over its memory ceiling or
        its share of the total one, or has died."""
        try:
            return self._watch(worker, deadline, watch_memory, quick)
        finally:
            with self._lock:
                self._growth.pop(id(worker), None)

    def _watch(self, worker: _Worker, deadline: float, watch_memory: bool, quick: bool) -> Any:
        assert worker.conn is not None and worker.process is not None
        mib = 1024 * 1024
        ceiling = self.limits.memory_mib * mib
        total_ceiling = self.limits.total_memory * mib
        pid = worker.process.pid
        last = 0  # the growth seen at the latest look
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
            if worker.abandoned.is_set():
                worker.stop()
                raise SandboxError(
                    499,
                    "The query was cancelled by its caller and ended.",
                    reason="cancelled",
                )
            if time.monotonic() > deadline:
                worker.stop()
                self.ended += 1
                if quick:
                    raise SandboxError(
                        503,
                        f"The query ran past the {self.limits.quick_s:g} s a query may take on "
                        "the worker kept for quick queries (the others were all busy) and was "
                        "ended. Send it again: it will wait for one of the other workers, up "
                        f"to {self.limits.timeout_s:g} s.",
                        {"Retry-After": "1"},
                        reason="timeout",
                    )
                raise SandboxError(
                    503,
                    f"The query ran longer than the {self.limits.timeout_s:g} s this endpoint "
                    "allows (waiting for a free worker included) and was ended. Make it more "
                    "selective (bind more of the pattern, add a LIMIT) or ask the operator for "
                    "a longer --query-timeout.",
                    {"Retry-After": "1"},
                    reason="timeout",
                )
            if not watch_memory or not worker.base_rss:
                continue
            grown = max(0, _rss(pid) - worker.base_rss)
            # Memory is looked at every few milliseconds, and a sort can take tens of MiB in
            # between: a query is ended once it would pass a ceiling before the look after
            # next (growing as fast as since the last look, with the time its end takes), so
            # that no look, and no reading from outside, finds it past.
            ahead = _LOOKS_AHEAD * max(0, grown - last)
            last = grown
            with self._lock:
                self._growth[id(worker)] = grown
                together = sum(self._growth.values())
                largest = grown >= max(self._growth.values())
            if grown + ahead > ceiling or (together + ahead > total_ceiling and largest):
                worker.stop()
                self.ended += 1
                alone = grown > ceiling
                raise SandboxError(
                    503,
                    (
                        f"The query needed more than the {self.limits.memory_mib:,} MiB of "
                        "memory one query may use here and was ended."
                        if alone
                        else "The queries running here needed more than the "
                        f"{self.limits.total_memory:,} MiB of memory all of them together may "
                        "use, and this one, the largest, was ended."
                    )
                    + " Make it more selective (an ORDER BY or GROUP BY over a large join holds "
                    "all of it at once).",
                    {"Retry-After": "1"},
                    reason="memory",
                )


class _Spool:
    """Graphs exported once, as N-Quads files a worker loads itself, by graph and version.

    An ended query's worker is replaced and loaded again, and exporting a large brain's
    graphs takes seconds of the server's CPU, much of it holding the interpreter's lock that
    the event loop and answer cards need: so a hostile client ending query after query would
    make the server export over and over. The export is done once per graphs and version
    (one at a time, so two replacements do not both do it) and written to a file, not kept in
    the server's memory; a new version (a write) drops the files of the older ones.

    Each file has no name from the start (``O_TMPFILE``, or made and unlinked at once): only
    the server's open descriptor holds it, and a worker opens it as
    ``/proc/<server>/fd/<n>``. So a server that ends any way at all, SIGKILL included, leaves
    nothing behind: the kernel frees the file with the last descriptor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._folder: str | None = None
        self._beside: str | None = None
        self._empty: set[tuple[tuple[str, tuple[int, str]], ...]] = set()
        self._preparing: set[tuple[tuple[str, tuple[int, str]], ...]] = set()
        self._files: dict[tuple[tuple[str, tuple[int, str]], ...], int] = {}

    def data(self, key: tuple[tuple[str, tuple[int, str]], ...], export: Exporter) -> bytes | str:
        """The graphs of ``key`` (each with its version) for a worker to load: the path of
        their file, exported through ``export`` the first time; ``b""`` when they are empty."""
        with self._lock:
            if key in self._files:
                return _fd_path(self._files[key])
            data = export([graph for graph, _ in key])
            if not data:
                self._empty.add(key)
                return b""
            generations = {version[0] for _, version in key}
            for old in [k for k in self._files if {v[0] for _, v in k} != generations]:
                with contextlib.suppress(OSError):
                    os.close(self._files.pop(old))
            with tempfile.TemporaryFile(prefix="ratified-sandbox-", suffix=".nq") as file:
                file.write(data)
                file.flush()
                # A descriptor of our own: the file object's goes when the block ends.
                self._files[key] = os.dup(file.fileno())
            return _fd_path(self._files[key])

    def ready(self, key: tuple[tuple[str, tuple[int, str]], ...]) -> bytes | str | None:
        """The graphs of ``key`` as :meth:`data` gives them if they are exported already,
        else None (nothing waits for an export here)."""
        with self._lock:
            if key in self._files:
                return _fd_path(self._files[key])
            return b"" if key in self._empty else None

    def prepare(self, key: tuple[tuple[str, tuple[int, str]], ...], export: Exporter) -> None:
        """Export the graphs of ``key`` on a thread of their own, once."""

        def exporting() -> None:
            # At the lowest priority, this thread alone (Linux schedules threads): the export
            # is for copies that only make later queries faster, and must not take the
            # processors from the first ones (at nice 19 too) nor from the server's cards.
            with contextlib.suppress(OSError, AttributeError):
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), GENERAL_NICE)
            with contextlib.suppress(Exception):  # the next query asks again
                self.data(key, export)
            with self._lock:
                self._preparing.discard(key)

        with self._lock:
            if key in self._preparing:
                return
            self._preparing.add(key)
        threading.Thread(target=exporting, name="ratified-sandbox-export", daemon=True).start()

    def place(self, store: str) -> str:
        """A path (not made yet) for a worker's checkpoint of ``store``: in the spool's
        private folder when it is on the store's file system (a checkpoint there is hard
        links), else in a private folder beside the store (never a copy of the whole store
        in a temporary file system held in memory).

        A server killed outright (SIGKILL, the OOM killer) cannot remove its folder, so each
        is named by the process that made it and when that process started; making one
        first removes the folders of servers that are gone (:func:`_sweep`)."""
        with self._lock:
            if self._folder is None:
                _sweep(tempfile.gettempdir())
                self._folder = tempfile.mkdtemp(prefix=_folder_prefix())
            folder = self._folder
            if os.stat(folder).st_dev != os.stat(store).st_dev:
                if self._beside is None:
                    parent = os.path.dirname(os.path.abspath(store))
                    _sweep(parent)
                    self._beside = tempfile.mkdtemp(prefix="." + _folder_prefix(), dir=parent)
                folder = self._beside
            return os.path.join(folder, f"worker-{os.urandom(8).hex()}")

    def close(self) -> None:
        """Let every file go."""
        with self._lock:
            for descriptor in self._files.values():
                with contextlib.suppress(OSError):
                    os.close(descriptor)
            for folder in (self._folder, self._beside):
                if folder is not None:
                    shutil.rmtree(folder, ignore_errors=True)
            self._folder, self._beside, self._files = None, None, {}


_OWNED: Final = re.compile(r"\.?ratified-sandbox-(\d+)-([1-9]\d*)-")
"""A checkpoint folder's name: the process that made it and when it started."""


def _started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks since the machine booted, as Linux counts
    them), or None when there is no such process or it cannot be told."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read()
        # The command's name, in parentheses, may hold spaces: count from its end. The start
        # time is the 22nd field, the 20th after the name.
        return int(fields[fields.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _folder_prefix() -> str:
    """The start of this process's checkpoint folders' names (see :data:`_OWNED`); a start
    time that cannot be read is written 0, which no sweep takes for a dead process's."""
    return f"ratified-sandbox-{os.getpid()}-{_started(os.getpid()) or 0}-"


def _sweep(parent: str) -> None:
    """Remove the checkpoint folders in ``parent`` whose server is gone: made by a process of
    this user that no longer runs, or whose number another process has since taken (its start
    time differs). A folder whose maker cannot be told (an older name, no ``/proc``) stays."""
    if _started(os.getpid()) is None:
        return  # no way to tell a live server from a dead one here
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return
    for entry in entries:
        named = _OWNED.match(entry.name)
        if named is None:
            continue
        with contextlib.suppress(OSError):
            if not entry.is_dir(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            if _started(int(named[1])) != int(named[2]):
                shutil.rmtree(entry.path, ignore_errors=True)


def _fd_path(descriptor: int) -> str:
    """The path another process of the same user opens this process's ``descriptor`` by."""
    return f"/proc/{os.getpid()}/fd/{descriptor}"


def _grant(turn: asyncio.Future[None]) -> None:
    if not turn.done():
        turn.set_result(None)


def _retrieved(task: asyncio.Future[QueryReply]) -> None:
    """Read a finished query's outcome, so one its caller stopped waiting for (a load that
    ran out of time) is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


def _stop_all(workers: list[_Worker], spool: _Spool, threads: ThreadPoolExecutor) -> None:
    for worker in workers:
        worker.stop()
    spool.close()
    threads.shutdown(wait=False)


# --- the worker's side ------------------------------------------------------------------------


_WARM_UP_PARSE: Final = (
    "PREFIX dcterms: <http://purl.org/dc/terms/> "
    "SELECT DISTINCT ?s (COUNT(?o) AS ?n) WHERE { ?s a ?t ; dcterms:title ?o . "
    'OPTIONAL { ?s ?p "x"@en } FILTER (lang(?o) = "en" && ?n > 1) } '
    "GROUP BY ?s ORDER BY DESC(?n) ?s LIMIT 10 OFFSET 1"
)
"""A query a worker parses as it starts, for nobody: the forms readers' queries use most."""

_Reply = tuple[Any, ...]
"""What a worker sends back: ``("loaded", "")``, ``("ok", body, media type, rows)`` or
``("error", status, message, reason)``."""


def _worker_main(conn: Connection, nice: int = GENERAL_NICE) -> None:
    """A worker process: sealed, niced by ``nice``, answering ``open``, ``load`` and
    ``query`` messages."""
    from ratified_rdf.queries.offline import forbid_network

    forbid_network()
    if nice:
        with contextlib.suppress(OSError):
            os.nice(nice)
    from pyoxigraph import Store

    from ratified_rdf.queries.guard import check_reader_query

    # Read the parser in now, while the server counts this as the worker's start and not as
    # the first query's time (its import and first parse take a good part of a second); and
    # parse a query of the usual forms, whose grammar's first use took a reader's first
    # query several times what a second one took to parse.
    check_reader_query(_WARM_UP_PARSE)
    stores: dict[str, Any] = {"memory": Store()}
    copy: _Copy | None = None
    while True:
        try:
            if not conn.poll(IDLE_EXIT_S):
                return
            message = conn.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        reply: _Reply
        try:
            if message[0] == "open":
                stores["checkpoint"] = _open(message[1], message[2])
                reply = ("loaded", "")
            elif message[0] == "copy":
                copy = _Copy(stores["memory"], message[1], message[2])
                reply = ("loaded", "")
            elif message[0] == "copied":
                reply = ("loaded", "") if copy is None else copy.state()
            elif message[0] == "load":
                target = message[3] if len(message) > 3 else "memory"
                reply = _load(stores[target], message[1], message[2])
            else:
                target = message[7] if len(message) > 7 else "memory"
                reply = _answer(stores[target], *message[1:7])
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


def _open(store: str, folder: str) -> Any:
    """A checkpoint of the store in ``store`` (a folder), taken into ``folder`` and opened
    for this worker alone: what it answers from, with no graph parsed or copied."""
    from pyoxigraph import Store

    # A read-only opening, as every reader of a brain has (the server's own included), taken
    # only for the checkpoint: the worker's queries never read the brain's own files, so a
    # write to the brain meanwhile cannot change what a query sees.
    Store.read_only(store).backup(folder)
    return Store(folder)


class _Copy:
    """Graphs loaded into a worker's memory store from their export, on a thread, while the
    worker answers from its checkpoint (the engine lets go of the interpreter's lock while it
    loads)."""

    def __init__(self, memory: Any, graphs: Sequence[str], data: bytes | str) -> None:
        self._problem = ""
        self._thread = threading.Thread(target=self._run, args=(memory, graphs, data), daemon=True)
        self._thread.start()

    def _run(self, memory: Any, graphs: Sequence[str], data: bytes | str) -> None:
        try:
            _load(memory, graphs, data)
        except Exception as error:  # the checkpoint answers on; the server is told
            self._problem = f"{type(error).__name__}: {error}"

    def state(self) -> _Reply:
        """``("loaded", "")`` while copying, ``("loaded", "done")`` once done,
        ``("failed", why)`` if it failed."""
        if self._thread.is_alive():
            return ("loaded", "")
        return ("failed", self._problem) if self._problem else ("loaded", "done")


def _load(store: Any, graphs: Sequence[str], data: bytes | str) -> _Reply:
    """Replace ``graphs`` with ``data``: N-Quads, or the path of a file of them."""
    from pyoxigraph import NamedNode, RdfFormat

    for graph in graphs:
        name = NamedNode(graph)
        if store.contains_named_graph(name):
            store.remove_graph(name)
    if isinstance(data, str):
        store.bulk_load(path=data, format=RdfFormat.N_QUADS)
    elif data:
        store.bulk_load(data, format=RdfFormat.N_QUADS)
    return ("loaded", "")


def _answer(
    store: Any,
    sparql: str,
    graphs: Sequence[str],
    results_media: str | None,
    graph_media: str | None,
    max_rows: int,
    named: Sequence[str] | None = None,
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
        sparql = check_reader_query(sparql).text  # run what the guard read, not what came
    except QueryRefused as refused:
        status = {"update": 403, "size": 413}.get(refused.reason, 400)
        return ("error", status, str(refused), refused.reason)
    dataset = [NamedNode(g) for g in graphs]
    named_graphs = dataset if named is None else [NamedNode(g) for g in named]
    try:
        result = store.query(sparql, default_graph=dataset, named_graphs=named_graphs)
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
    _worker_main(
        Connection(int(sys.argv[1])), int(sys.argv[2]) if len(sys.argv) > 2 else GENERAL_NICE
    )
