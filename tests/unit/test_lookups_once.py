"""The lookups of one set of graphs are built once, also when two threads ask at once (a
server's first question and its settling thread)."""

from __future__ import annotations

import threading
import time

from pyoxigraph import Literal, NamedNode

from ratified_rdf.answers.heading_search import HeadingIndex
from ratified_rdf.answers.lookups import Lookups
from ratified_rdf.graph.store import QueryResult, Term
from ratified_rdf.queries import QueryRun

GRAPHS = ("https://example.org/graph/fictional/spec",)


class SlowStore:
    """Gives one fictional heading for any query, slowly, counting the queries."""

    def __init__(self) -> None:
        self.asked = 0
        self.entered = threading.Event()
        self.release = threading.Event()

    def query(self, sparql: str, graphs: object = None) -> QueryResult:
        self.asked += 1
        self.entered.set()
        assert self.release.wait(timeout=120)
        row: dict[str, Term] = {
            "section": NamedNode("https://example.org/pigeon/rfc9999/3.1"),
            "heading": Literal("Take-off"),
            "page": NamedNode("https://example.org/rfc9999#3.1"),
            "documentLabel": Literal("RFC 9999"),
            "rfcNumber": Literal("9999"),
        }
        return QueryResult(variables=tuple(row), rows=(row,), engine_ms=1.0)


def test_two_threads_asking_at_once_build_the_heading_index_once() -> None:
    lookups, store = Lookups(), SlowStore()
    found: list[tuple[HeadingIndex, QueryRun]] = []
    first = threading.Thread(target=lambda: found.append(lookups.heading_index(store, GRAPHS)))
    second = threading.Thread(target=lambda: found.append(lookups.heading_index(store, GRAPHS)))
    first.start()
    assert store.entered.wait(timeout=120)
    second.start()
    time.sleep(0.05)  # let the second thread reach the index (no timing is asserted)
    store.release.set()
    first.join(timeout=120)
    second.join(timeout=120)
    assert store.asked == 1
    (index_a, run_a), (index_b, run_b) = found
    assert index_a is index_b
    assert [run_a.reused, run_b.reused] == [False, True]
