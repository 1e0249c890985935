"""The query session behind one answer, and reading values out of its rows."""

from __future__ import annotations

from collections.abc import Sequence

from ratified_rdf.graph.store import Queryable, Term
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue, load_query
from ratified_rdf.queries.run import source_of

Kept = dict[tuple[object, ...], tuple[list[dict[str, Term]], QueryRun]]
"""Rows of whole-graph queries, by query, graphs and parameters (see :class:`Session`)."""

KEPT_AT_MOST = 64
"""Whole-graph rows kept at once; a server that outlives many builds starts afresh past it."""


class Session:
    """The queries run for one answer, over one reader's graphs.

    ``kept`` holds the rows of queries marked ``# Whole graph:`` (what the graph holds, for
    "the graph doesn't know"), which cost as much as the graphs are large: a run's graphs never
    change once written, so the same query on the same graphs gives the same rows, and later
    answers reuse them, saying so (``QueryRun.reused``)."""

    def __init__(self, store: Queryable, graphs: Sequence[str], kept: Kept | None = None) -> None:
        self.store = store
        self.graphs = list(graphs)
        self.queries: list[QueryRun] = []
        self.kept = kept

    def has_reviews(self) -> bool:
        """Whether the reader may see any graph of reviews (no query is needed otherwise)."""
        return any(source_of(g) == "reviews" for g in self.graphs)

    def run(self, name: str, **params: ParamValue) -> list[dict[str, Term]]:
        """Run ``sparql/<name>.rq`` with ``params`` and keep the record."""
        if self.kept is None or not load_query(name).whole_graph:
            rows, record = run_query(self.store, self.graphs, name, params)
            self.queries.append(record)
            return rows
        key = (name, tuple(self.graphs), tuple(sorted(params.items())))
        if key in self.kept:
            rows, record = self.kept[key]
            self.queries.append(record.model_copy(update={"reused": True}))
            return list(rows)
        rows, record = run_query(self.store, self.graphs, name, params)
        self.queries.append(record)
        if len(self.kept) >= KEPT_AT_MOST:  # graphs of runs long gone; clear is atomic
            self.kept.clear()
        self.kept[key] = (rows, record)
        return list(rows)


def text_of(row: dict[str, Term], key: str) -> str | None:
    """The lexical value of ``key`` in a result row, or None when unbound."""
    value = row.get(key)
    return None if value is None else value.value


def is_true(row: dict[str, Term], key: str) -> bool:
    """Whether ``key`` holds an xsd:boolean true. Virtuoso returns booleans as 1 and 0."""
    return text_of(row, key) in {"true", "1"}
