"""``GraphCopies``: what every reader of one store shares, in memory: copies of the graphs
readers read (for a brain opened ``in_memory``), and the count of writes that makes them stale.

Other layers keep things derived from a store's graphs (the answers' heading index and kept
rows); they register a callback here, so one write forgets them all together.

A copy is made on a thread of its own (:meth:`GraphCopies.prepare`), so a caller with a
deadline (the server) waits for it at most that long, and readers whose copy exists already
never wait for another reader's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from ratified_rdf.graph.memory import MemoryDataset
from ratified_rdf.graph.store import OxigraphStore, Queryable, TripleStore


class GraphCopies:
    """Copies of graphs kept in memory, one per distinct set of graphs, shared by readers."""

    MAX_COPIES = 4
    """Copies kept at once (one per distinct set of graphs: a tenant, a clearance level);
    the oldest goes first."""

    def __init__(self, in_memory: bool = False) -> None:
        self.in_memory = in_memory
        self.meanwhile = False
        """Whether a read whose copy is still being made reads the store itself instead of
        waiting for it (the same answers: a copy holds exactly the graphs it was made of).
        A server sets it, so that it answers at once while the copies are made."""
        self.copies: dict[tuple[str, ...], MemoryDataset] = {}
        self.generation = 0
        """Counts writes through this store's readers: what was copied before is stale."""
        self.store_generation = 0
        """The opening of a shared store the copies were made from."""
        self._on_write: list[Callable[[], None]] = []
        self._on_reopen: list[Callable[[], None]] = []
        self._pending: dict[tuple[str, ...], Future[Queryable]] = {}
        # The server answers on several threads: one copy per graph set at a time, made
        # outside the lock; a copy finished after a write is dropped, not kept (see _copy).
        self._copying = threading.Lock()

    def when_written(self, forget: Callable[[], None], *, reopened: bool = False) -> None:
        """Call ``forget`` after every write (``reopened``: only when the store was opened
        afresh after another process wrote to it)."""
        (self._on_reopen if reopened else self._on_write).append(forget)

    def reads(self, store: TripleStore, graphs: Sequence[str]) -> Queryable:
        """Where to read ``graphs`` from: their copy in memory when copies are kept (made now
        if missing; with :attr:`meanwhile`, started and read from the store until it is
        ready), otherwise the store itself."""
        pending = self.prepare(store, graphs)
        if self.meanwhile and not pending.done():
            return store
        return pending.result()

    def prepare(self, store: TripleStore, graphs: Sequence[str]) -> Future[Queryable]:
        """Where to read ``graphs`` from, as a future: done at once when no copy is kept or
        the copy exists, otherwise done when the copy being made (started now if it is not
        under way) is ready. A caller with a deadline waits for it at most that long; the copy
        goes on being made for the next call."""
        if not self.in_memory or not isinstance(store, OxigraphStore) or not graphs:
            return _done(store)
        key = tuple(sorted(graphs))
        with self._copying:
            if key in self.copies:
                return _done(self.copies[key])
            pending = self._pending.get(key)
            if pending is None:
                pending = self._pending[key] = Future()
                pending.set_running_or_notify_cancel()  # a waiter giving up cannot cancel it
                threading.Thread(
                    target=self._copy,
                    args=(store, key, pending, self.generation),
                    name="ratified-copy-start",
                    daemon=True,
                ).start()
            return pending

    def _copy(
        self,
        store: OxigraphStore,
        key: tuple[str, ...],
        pending: Future[Queryable],
        generation: int,
    ) -> None:
        """Make the copy of ``key`` and keep it, unless the store was written meanwhile: then
        the callers waiting read the store itself (current by definition) and nothing stale
        is kept."""
        try:
            copy = MemoryDataset(store, key)
        except BaseException as error:
            with self._copying:
                if self._pending.get(key) is pending:
                    del self._pending[key]
            pending.set_exception(error)
            return
        with self._copying:
            if self._pending.get(key) is pending:
                del self._pending[key]
            if generation != self.generation:
                copy.close()
                pending.set_result(store)
                return
            while len(self.copies) >= self.MAX_COPIES:
                self.copies.pop(next(iter(self.copies))).close()
            self.copies[key] = copy
        pending.set_result(copy)

    def follow(self, store_generation: int) -> None:
        """Forget what was copied or derived from the store before it was opened afresh
        (``store_generation`` is its count of openings), once per opening."""
        with self._copying:
            if store_generation == self.store_generation:
                return
            self.store_generation = store_generation
            for forget in self._on_reopen:
                forget()
        self.wrote()

    def wrote(self) -> None:
        """Forget every copy and everything derived after a write: the next read copies the
        graphs afresh."""
        with self._copying:
            self.generation += 1
            self._pending.clear()  # copies under way finish and are dropped (see _copy)
            self.drop()
            for forget in self._on_write:
                forget()

    def drop(self) -> None:
        """Let go of every copy (each one's holding thread ends; queries still running on
        one finish first)."""
        while self.copies:
            self.copies.popitem()[1].close()


def _done(where: Queryable) -> Future[Queryable]:
    done: Future[Queryable] = Future()
    done.set_result(where)
    return done
