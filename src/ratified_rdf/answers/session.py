"""The query session behind one answer, and reading values out of its rows."""

from __future__ import annotations

from collections.abc import Sequence

from ratified_rdf.graph.store import Queryable, Term
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue
from ratified_rdf.queries.run import source_of


class Session:
    """The queries run for one answer, over one reader's graphs."""

    def __init__(self, store: Queryable, graphs: Sequence[str]) -> None:
        self.store = store
        self.graphs = list(graphs)
        self.queries: list[QueryRun] = []

    def has_reviews(self) -> bool:
        """Whether the reader may see any graph of reviews (no query is needed otherwise)."""
        return any(source_of(g) == "reviews" for g in self.graphs)

    def run(self, name: str, **params: ParamValue) -> list[dict[str, Term]]:
        """Run ``sparql/<name>.rq`` with ``params`` and keep the record."""
        rows, record = run_query(self.store, self.graphs, name, params)
        self.queries.append(record)
        return rows


def text_of(row: dict[str, Term], key: str) -> str | None:
    """The lexical value of ``key`` in a result row, or None when unbound."""
    value = row.get(key)
    return None if value is None else value.value


def is_true(row: dict[str, Term], key: str) -> bool:
    """Whether ``key`` holds an xsd:boolean true. Virtuoso returns booleans as 1 and 0."""
    return text_of(row, key) in {"true", "1"}
