"""A session runs independent queries of a card at once, and keeps its record in order."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pytest
from pyoxigraph import Literal, NamedNode

from ratified_rdf.answers import session as session_module
from ratified_rdf.answers.session import Session
from ratified_rdf.graph.store import QueryResult
from ratified_rdf.queries.files import QueryError

AUTHORS = ("post_authors", {"post": "https://example.org/post/1"})
GRAPHS = ["https://example.org/graph/fictional/spec", "https://example.org/graph/fictional/github"]


class MeetingStore:
    """Answers a query only once ``meet`` queries are being answered at the same time: a
    session that runs them one after another breaks the barrier instead."""

    def __init__(self, meet: int) -> None:
        self.barrier = threading.Barrier(meet, timeout=120)  # a hang guard
        self.order: list[str] = []

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        name = "documents" if "?document" in sparql else "post_authors"
        self.barrier.wait()
        self.order.append(name)
        return QueryResult(variables=("x",), rows=({"x": Literal(name)},), engine_ms=1.0)


@pytest.fixture()
def two_threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with ThreadPoolExecutor(max_workers=2) as pool:
        monkeypatch.setattr(session_module, "_POOL", pool)
        yield


@pytest.mark.usefixtures("two_threads")
def test_queries_run_together_overlap_and_keep_their_order() -> None:
    store = MeetingStore(meet=2)
    session = Session(store, GRAPHS)
    authors, documents = session.run_together(AUTHORS, ("documents", {}))
    assert [row["x"].value for row in authors] == ["post_authors"]
    assert [row["x"].value for row in documents] == ["documents"]
    assert [q.name for q in session.queries] == ["post_authors", "documents"]


@pytest.mark.usefixtures("two_threads")
def test_whole_graph_rows_run_together_are_kept_and_reused() -> None:
    store = MeetingStore(meet=2)
    session = Session(store, GRAPHS, kept={})
    session.run_together(AUTHORS, ("documents", {}))
    again = Session(store, GRAPHS, kept=session.kept)
    store.barrier = threading.Barrier(1)  # only the per-post query reaches the store now
    again.run_together(AUTHORS, ("documents", {}))
    assert [(q.name, q.reused) for q in again.queries] == [
        ("post_authors", False),
        ("documents", True),
    ]


def test_one_core_runs_them_one_after_another(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "_POOL", None)
    session = Session(MeetingStore(meet=1), GRAPHS)
    session.run_together(AUTHORS, ("documents", {}))
    assert [q.name for q in session.queries] == ["post_authors", "documents"]


@pytest.mark.usefixtures("two_threads")
def test_a_started_query_runs_beside_the_next_and_is_recorded_when_taken() -> None:
    store = MeetingStore(meet=2)
    session = Session(store, GRAPHS)
    documents = session.start("documents")
    authors = session.run("post_authors", post="https://example.org/post/1")
    assert [q.name for q in session.queries] == ["post_authors"]
    assert [row["x"].value for row in documents.rows()] == ["documents"]
    assert documents.rows() is documents.rows()
    assert [row["x"].value for row in authors] == ["post_authors"]
    assert [q.name for q in session.queries] == ["post_authors", "documents"]


class ClosedStore:
    """Fails every query, as a store closed under a card would."""

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        raise RuntimeError("the store is closed")


@pytest.mark.usefixtures("two_threads")
def test_a_started_query_that_failed_raises_when_its_rows_are_taken() -> None:
    pending = Session(ClosedStore(), GRAPHS).start("documents")
    with pytest.raises(RuntimeError, match="the store is closed"):
        pending.rows()


def test_one_core_runs_a_started_query_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_module, "_POOL", None)
    store = MeetingStore(meet=1)
    session = Session(store, GRAPHS)
    documents = session.start("documents")
    assert store.order == ["documents"]
    assert session.queries == []
    documents.rows()
    assert [q.name for q in session.queries] == ["documents"]
    with pytest.raises(RuntimeError, match="the store is closed"):
        Session(ClosedStore(), GRAPHS).start("documents")


class PullRequestStore:
    """Holds three fictional pull requests, one of which fixed two issues; counts its runs."""

    def __init__(self) -> None:
        self.runs = 0

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        self.runs += 1
        pr = "https://example.org/pull/"
        rows = (
            {"pr": NamedNode(pr + "1"), "prNumber": Literal("1")},
            {"pr": NamedNode(pr + "2"), "prNumber": Literal("2")},
            {"pr": NamedNode(pr + "2"), "issue": NamedNode("https://example.org/issue/7")},
            {"pr": NamedNode(pr + "2"), "issue": NamedNode("https://example.org/issue/8")},
            {"pr": NamedNode(pr + "3"), "prNumber": Literal("3")},
            {"issue": NamedNode("https://example.org/issue/9")},
        )
        return QueryResult(variables=("pr", "prNumber", "issue"), rows=rows, engine_ms=2.0)


def test_rows_about_some_things_come_from_rows_read_once() -> None:
    store = PullRequestStore()
    first = Session(store, GRAPHS, kept={})
    wanted = (NamedNode("https://example.org/pull/3"), NamedNode("https://example.org/pull/2"))
    rows = first.rows_about("pull_requests", "pr", wanted)
    # Every row about each wanted one, in the order asked; rows without the key left out.
    assert [(r["pr"].value[-1], "issue" in r) for r in rows] == [
        ("3", False),
        ("2", False),
        ("2", True),
        ("2", True),
    ]
    assert first.rows_about("pull_requests", "pr", (NamedNode("https://example.org/x"),)) == []
    later = Session(store, GRAPHS, kept=first.kept)
    assert len(later.rows_about("pull_requests", "pr", wanted[1:])) == 3
    assert store.runs == 1
    assert [(q.name, q.reused, q.rows) for q in [*first.queries, *later.queries]] == [
        ("pull_requests", False, 6),
        ("pull_requests", True, 6),
        ("pull_requests", True, 6),
    ]


def test_rows_about_needs_a_whole_graph_query() -> None:
    with pytest.raises(QueryError, match="post_authors is not a whole-graph query"):
        Session(PullRequestStore(), GRAPHS, kept={}).rows_about("post_authors", "post", ())
