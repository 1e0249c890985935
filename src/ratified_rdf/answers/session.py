"""The query session behind one answer, and reading values out of its rows."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from pyoxigraph import NamedNode

from ratified_rdf.answers.heading_search import HeadingIndex
from ratified_rdf.answers.saved_rows import SavedRows
from ratified_rdf.graph.store import Queryable, Term
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue, QueryError, load_query, view_queries
from ratified_rdf.queries.run import source_of

Fetched = tuple[list[dict[str, Term]], QueryRun]
"""A query's rows and the record of its run."""


class KeptRows:
    """The rows of a whole-graph query on one set of graphs, kept with the record of the run
    that read them, and indexed by a variable once a card looks rows up by it."""

    def __init__(self, rows: list[dict[str, Term]], record: QueryRun) -> None:
        self.rows = rows
        self.record = record
        self._by: dict[str, dict[str, list[dict[str, Term]]]] = {}

    def by(self, key: str) -> dict[str, list[dict[str, Term]]]:
        """The rows by the value of ``key`` (rows without it left out), built on first use.
        Two threads may build it at once; both build the same index, and either is kept."""
        index = self._by.get(key)
        if index is None:
            index = {}
            for row in self.rows:
                value = row.get(key)
                if value is not None:
                    index.setdefault(value.value, []).append(row)
            self._by[key] = index
        return index


Kept = dict[tuple[object, ...], KeptRows]
"""Rows of whole-graph queries, by query, graphs and parameters (see :class:`Session`)."""

KEPT_AT_MOST = 64
"""Whole-graph rows kept at once; a server that outlives many builds starts afresh past it."""

Call = tuple[str, Mapping[str, ParamValue]]
"""A query's name and its parameters, for :meth:`Session.run_together`."""

Found = TypeVar("Found")

_CORES = os.cpu_count() or 1
_POOL = (
    ThreadPoolExecutor(max_workers=min(_CORES, 4), thread_name_prefix="ratified-query")
    if _CORES > 1
    else None
)
"""Threads shared by every session for queries run together; none on a single core."""


class Session:
    """The queries run for one answer, over one reader's graphs.

    ``kept`` holds the rows of queries marked ``# Whole graph:`` (what the graph holds, for
    "the graph doesn't know"; every pull request and commit, for :meth:`rows_about`), which
    cost as much as the graphs are large: a run's graphs never change once written, so the
    same query on the same graphs gives the same rows, and later answers reuse them, saying so
    (``QueryRun.reused``)."""

    def __init__(
        self,
        store: Queryable,
        graphs: Sequence[str],
        kept: Kept | None = None,
        headings: tuple[HeadingIndex, QueryRun] | None = None,
        views: frozenset[str] = frozenset(),
        saved: SavedRows | None = None,
    ) -> None:
        self.store = store
        self.graphs = list(graphs)
        self.views = views
        """The full-path queries whose card view query runs instead, giving this reader the
        same rows (:func:`~ratified_rdf.graph.views.usable_views`)."""
        self.queries: list[QueryRun] = []
        self.kept = kept
        self.headings = headings
        """The heading index of these graphs, when the reader has built it, and the run of the
        query it was built from: a card may take a section's place from it instead of asking."""
        self.saved = saved
        """Where whole-graph rows an earlier process read are saved, when the store is a
        shared folder: rows not kept yet are read from there before the query is run (and
        saved there after), so a one-shot ask does not run them again."""

    def from_index(self, lookup: Callable[[HeadingIndex], Found]) -> Found | None:
        """What ``lookup`` finds in the heading index, when the reader has built it. When it
        finds something, the index's query joins this session's queries (as reused, once), so
        the card shows where it came from."""
        if self.headings is None:
            return None
        index, run = self.headings
        found = lookup(index)
        if found and not any(query.name == run.name for query in self.queries):
            self.queries.append(run.model_copy(update={"reused": True}))
        return found

    def has_reviews(self) -> bool:
        """Whether the reader may see any graph of reviews (no query is needed otherwise)."""
        return any(source_of(g) == "reviews" for g in self.graphs)

    def run(self, name: str, **params: ParamValue) -> list[dict[str, Term]]:
        """Run ``sparql/<name>.rq`` with ``params`` and keep the record."""
        rows, record = self._fetch(name, params)
        self.queries.append(record)
        return rows

    def start(self, name: str, **params: ParamValue) -> Pending:
        """Start ``sparql/<name>.rq`` on a worker thread and go on; :meth:`Pending.rows`
        waits for its rows and keeps its record then, so records follow the order rows are
        taken in. Oxigraph lets go of the GIL while it evaluates, so on more than one core a
        card's longest lookup runs beside the lookups that do not need its rows; on a single
        core it runs here, now."""
        if _POOL is None:
            return Pending(self, self._fetch(name, params))
        return Pending(self, _POOL.submit(self._fetch, name, params))

    def run_together(self, *calls: Call) -> list[list[dict[str, Term]]]:
        """Run queries that do not depend on one another at once (the first here, the others
        started on worker threads); rows and records come back in the order of ``calls``."""
        later = [self.start(name, **params) for name, params in calls[1:]]
        first = [self.run(name, **params) for name, params in calls[:1]]
        return [*first, *(pending.rows() for pending in later)]

    def rows_about(self, name: str, key: str, wanted: Sequence[Term]) -> list[dict[str, Term]]:
        """The rows of the whole-graph query ``sparql/<name>.rq`` whose ``key`` is one of
        ``wanted``, in the order of ``wanted``: the rows a bound query would have given, from
        the query's kept rows (read once per set of graphs, indexed by ``key`` once). Its
        record joins this session's queries, as reused after the first run."""
        kept, record = self._kept(name)
        self.queries.append(record)
        index = kept.by(key)
        return [row for term in wanted for row in index.get(term.value, ())]

    def _fetch(self, name: str, params: Mapping[str, ParamValue]) -> Fetched:
        """Rows and record of one query: run now, or kept from an earlier whole-graph run."""
        if name in self.views:
            name = view_queries()[name]
        if self.kept is None or not load_query(name).whole_graph:
            return run_query(self.store, self.graphs, name, dict(params))
        kept, record = self._kept(name, params)
        return list(kept.rows), record

    def _kept(
        self, name: str, params: Mapping[str, ParamValue] | None = None
    ) -> tuple[KeptRows, QueryRun]:
        """A whole-graph query's kept rows and this session's record of them: run now when
        not kept yet (kept from then on, unless the session keeps nothing), else reused."""
        params = params or {}
        if not load_query(name).whole_graph:
            raise QueryError(f"{name} is not a whole-graph query, so its rows are not kept")
        key = (name, tuple(self.graphs), tuple(sorted(params.items())))
        found = None if self.kept is None else self.kept.get(key)
        saved = self.saved if self.kept is not None and not params else None
        generation = None
        if found is None and saved is not None:
            generation = saved.generation()
            loaded = saved.terms(name, self.graphs, generation)
            if loaded is not None:
                found = self._keep(key, KeptRows(*loaded))
        if found is not None:
            return found, found.record.model_copy(update={"reused": True})
        rows, record = run_query(self.store, self.graphs, name, dict(params))
        found = self._keep(key, KeptRows(rows, record))
        if saved is not None:
            saved.save(self.graphs, generation, rows, record)
        return found, record

    def _keep(self, key: tuple[object, ...], found: KeptRows) -> KeptRows:
        """Keep ``found`` under ``key`` for later answers (unless the session keeps nothing)."""
        if self.kept is not None:
            if len(self.kept) >= KEPT_AT_MOST:  # graphs of runs long gone; clear is atomic
                self.kept.clear()
            self.kept[key] = found
        return found


class Pending:
    """A query a session started (:meth:`Session.start`), its rows not taken yet."""

    def __init__(self, session: Session, fetched: Future[Fetched] | Fetched) -> None:
        self._session = session
        self._fetched = fetched
        self._rows: list[dict[str, Term]] | None = None

    def rows(self) -> list[dict[str, Term]]:
        """The query's rows, once it has run (its error, if it failed); the first call adds
        its record to the session's queries."""
        if self._rows is None:
            fetched = self._fetched
            rows, record = fetched.result() if isinstance(fetched, Future) else fetched
            self._session.queries.append(record)
            self._rows = rows
        return self._rows


def text_of(row: dict[str, Term], key: str) -> str | None:
    """The lexical value of ``key`` in a result row, or None when unbound."""
    value = row.get(key)
    return None if value is None else value.value


def iri_of(row: dict[str, Term], key: str) -> NamedNode | None:
    """The IRI ``key`` holds in a result row, as the term itself (None when unbound or not an
    IRI): bound into the next query as it is, with no text to check again."""
    value = row.get(key)
    return value if isinstance(value, NamedNode) else None


def is_true(row: dict[str, Term], key: str) -> bool:
    """Whether ``key`` holds an xsd:boolean true. Virtuoso returns booleans as 1 and 0."""
    return text_of(row, key) in {"true", "1"}
