"""Run a named query against a store and keep the record of what ran."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict
from pyoxigraph import NamedNode

from ratified_rdf.graph.store import Queryable, Term
from ratified_rdf.queries.files import ParamValue, load_query
from ratified_rdf.queries.packed import unpack_rows


class QueryRun(BaseModel):
    """What one query execution was: its name, the exact SPARQL, parameters, rows, engine time."""

    model_config = ConfigDict(frozen=True)

    name: str
    sparql: str
    params: dict[str, str]
    rows: int
    engine_ms: float
    reused: bool = False
    """The rows came from an earlier run of this query on the same graphs (a run's graphs never
    change once written); ``engine_ms`` is that run's."""
    reproduces: str | None = None
    """The query read the card view: the full-path query named here (``sparql/<name>.rq``,
    the same parameters) gives the same rows from the full graph."""


def source_of(graph: str) -> str:
    """The source a graph holds, from its name: ``…/<run>/github`` and ``…/reviews-public``
    hold ``github`` and ``reviews``."""
    return graph.rsplit("/", 1)[-1].split("-", 1)[0]


POSTS = "posts"
"""In a query's ``# Reads:``, every source whose graph holds posts citing sections: ``github``,
``mail`` and any registered source that holds posts (:func:`ratified_rdf.sources.base.
post_sources`), so a new source's posts reach the cards that list posts."""


VIEW_POSTS = "view-posts"
"""In a query's ``# Reads:``, the card view's graph of every source of posts
(``view-github``, ``view-mail`` …)."""


def read_sources(reads: Sequence[str]) -> frozenset[str]:
    """The sources a query's ``# Reads:`` names, with :data:`POSTS` and :data:`VIEW_POSTS`
    spelt out. A name with a hyphen names one graph of a kind (``view-spec``)."""
    if POSTS not in reads and VIEW_POSTS not in reads:
        return frozenset(reads)
    posts = _post_sources()
    return (
        (frozenset(reads) - {POSTS, VIEW_POSTS})
        | (posts if POSTS in reads else frozenset())
        | ({f"view-{s}" for s in posts} if VIEW_POSTS in reads else frozenset())
    )


BUILT_IN_POST_SOURCES = frozenset({"github", "mail"})
"""The built-in sources whose graphs hold posts (``Source.holds_posts``): what
:data:`POSTS` reads while no other source is registered (a test holds it to the classes)."""


def _post_sources() -> frozenset[str]:
    """The registered sources that hold posts. A source registers itself through the
    registry's module, so while that is not imported (or not yet whole) only the built-in ones
    can be; answering a question then imports no source's code, much of a cold ``ratified
    ask``'s imports, just to learn their names."""
    registry = sys.modules.get("ratified_rdf.sources.base")
    post_sources = getattr(registry, "post_sources", None)
    if post_sources is None:
        return BUILT_IN_POST_SOURCES
    posts: frozenset[str] = post_sources()
    return posts


def reads_graph(graph: str, sources: frozenset[str]) -> bool:
    """Whether a query reading ``sources`` (:func:`read_sources`) reads ``graph``: by its
    source (``github``), or by its whole name for a name with a hyphen (``view-github``)."""
    return source_of(graph) in sources or graph.rsplit("/", 1)[-1] in sources


def _shown(value: str | int | NamedNode) -> str:
    """A parameter value as the record shows it: an IRI as its text, without brackets."""
    return value.value if isinstance(value, NamedNode) else str(value)


def run_query(
    store: Queryable,
    graphs: Sequence[str] | None,
    name: str,
    params: dict[str, ParamValue] | None = None,
) -> tuple[list[dict[str, Term]], QueryRun]:
    """Bind ``params`` into ``sparql/<name>.rq``, run it over ``graphs``, return rows and record."""
    values = params or {}
    query = load_query(name)
    sparql = query.bind(values)
    if graphs is not None and query.reads:
        reads = read_sources(query.reads)
        graphs = [g for g in graphs if reads_graph(g, reads)]
    result = store.query(sparql, graphs)
    rows = list(result.rows)
    engine_ms = result.engine_ms
    if query.packed is not None:
        # Unpacking is part of reading the rows: its time counts as the engine's.
        started = time.perf_counter()
        rows = unpack_rows(rows, query.packed, query.packed_order)
        engine_ms += (time.perf_counter() - started) * 1000
    record = QueryRun(
        name=name,
        sparql=sparql,
        params={
            k: ", ".join(map(_shown, v)) if isinstance(v, tuple) else _shown(v)
            for k, v in values.items()
        },
        rows=len(rows),
        engine_ms=round(engine_ms, 3),
        reproduces=query.reproduces,
    )
    return rows, record
