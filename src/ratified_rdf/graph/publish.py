"""A brain's graphs as a whole, for publishing: their content hash, N-Quads of them, a
reader's dump (their graphs and the catalog as they may know it), and the VoID description of
what a reader sees."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import IO, NamedTuple, TypeVar

from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, serialize

from ratified_rdf._errors import BrainError
from ratified_rdf.graph import void
from ratified_rdf.graph.scope import Scope
from ratified_rdf.graph.store import TripleStore
from ratified_rdf.graph.vocab import PREFIXES, term
from ratified_rdf.graph.writer import RunRecord
from ratified_rdf.queries import run_query
from ratified_rdf.queries.files import ParamValue
from ratified_rdf.queries.run import source_of
from ratified_rdf.trust import can_read

_T = TypeVar("_T")


def content_hash(store: TripleStore, graphs: Sequence[str], run: RunRecord | None) -> str:
    """SHA-256 of what ``graphs`` hold, the same for two builds of the same sources: sorted
    N-Triples lines tagged with their graph's source, with the run id written as ``RUN`` and
    the moments computations ended left out."""
    run_id = run.run_id if run else ""
    ended = term("prov:endedAtTime")
    lines = sorted(
        f"{triple} {source_of(graph)}".replace(run_id, "RUN")
        for graph in graphs
        for triple in store.triples([graph])
        if triple.predicate != ended
    )
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def nquads(store: TripleStore, graphs: Sequence[str]) -> bytes:
    """``graphs`` of ``store`` as N-Quads."""
    output = io.BytesIO()
    store.dump(output, list(graphs), RdfFormat.N_QUADS)
    return output.getvalue()


def hidden_graphs(scope: Scope) -> set[str]:
    """Every graph of the brain withheld from ``scope``'s reader: those of any run (not only the
    current one) and the reviews graphs above their clearance."""
    levels = {g: level for run in scope.runs for g, level in run.graphs.items()}
    levels.update(scope.reviews)
    return {g for g, level in levels.items() if not can_read(scope.clearance, level)}


def reader_catalog(store: TripleStore, scope: Scope) -> list[Triple]:
    """The catalog graph as ``scope``'s reader may know it: every triple but those naming a
    graph withheld from them. It is what the catalog of the same brain built without those
    graphs says, so that its presence, size or content tells the reader nothing of them."""
    hidden = hidden_graphs(scope)
    if not hidden:
        return list(store.triples([scope.catalog]))
    return [
        t
        for t in store.triples([scope.catalog])
        if not any(isinstance(n, NamedNode) and n.value in hidden for n in (t.subject, t.object))
    ]


def catalog_nquads(store: TripleStore, scope: Scope) -> bytes:
    """The catalog as ``scope``'s reader may know it (:func:`reader_catalog`), as N-Quads in
    the catalog graph: what their dump holds of it."""
    catalog = NamedNode(scope.catalog)
    quads = (Quad(t.subject, t.predicate, t.object, catalog) for t in reader_catalog(store, scope))
    output = io.BytesIO()
    serialize(quads, output, RdfFormat.N_QUADS)
    return output.getvalue()


def reader_quads(store: TripleStore, scope: Scope) -> Iterator[Quad]:
    """What ``scope``'s reader validates and dumps: their graphs of the current run, then the
    catalog as they may know it (:func:`reader_catalog`)."""
    for graph in scope.read_graphs:
        name = NamedNode(graph)
        for t in store.triples([graph]):
            yield Quad(t.subject, t.predicate, t.object, name)
    catalog = NamedNode(scope.catalog)
    for t in reader_catalog(store, scope):
        yield Quad(t.subject, t.predicate, t.object, catalog)


def dump(
    store: TripleStore,
    scope: Scope,
    output: IO[bytes],
    rdf_format: RdfFormat,
    count: Callable[[int], object] | None = None,
) -> None:
    """Write :func:`reader_quads` to ``output``; a format without graphs (Turtle) gets their
    union. A reader from whom graphs are withheld gets the same bytes as a reader of the brain
    built without those graphs (run ids and times aside). ``count(1)`` is called for each
    quad read (a progress bar's ``update``)."""
    quads = reader_quads(store, scope)
    if count is not None:
        quads = counting(quads, count)
    if rdf_format.supports_datasets:
        serialize(quads, output, rdf_format, prefixes=PREFIXES)
    else:
        serialize((q.triple for q in quads), output, rdf_format, prefixes=PREFIXES)


def counting(items: Iterable[_T], count: Callable[[int], object]) -> Iterator[_T]:
    """``items`` as they are, calling ``count(1)`` on each (a progress bar's ``update``)."""
    for item in items:
        count(1)
        yield item


class Published(NamedTuple):
    """Where a brain's data is published: its dump (and the dump's format), its endpoint."""

    dump_url: str | None = None
    dump_format: str = "nquads"
    endpoint: str | None = None


def describe_scope(
    store: TripleStore, scope: Scope, brain: str, title: str, where: Published
) -> list[Triple]:
    """A VoID and DCAT description of the graphs a reader's ``scope`` reads: counts,
    partitions, vocabularies, licence, source and clearance of each, where the dump and the
    endpoint are. Raises :class:`BrainError` before the brain's first run is complete."""
    run, levels = scope.current, scope.levels()
    if run is None:
        raise BrainError("The brain has no complete run to describe yet.")

    def run_named(name: str, graphs: Sequence[str], params: dict[str, str]) -> list:
        bound: dict[str, ParamValue] = dict(params)
        return run_query(store, list(graphs) or [scope.catalog], name, bound)[0]

    return void.describe(
        brain=brain,
        title=title,
        run=run.iri,
        graphs={g: levels[g].value for g in scope.read_graphs},
        run_query=run_named,
        dump_url=where.dump_url,
        dump_format=where.dump_format,
        endpoint=where.endpoint,
    )
