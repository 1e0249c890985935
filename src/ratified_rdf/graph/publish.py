"""A brain's graphs as a whole, for publishing: their content hash, N-Quads of them, and the
VoID description of what a reader sees."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Sequence
from typing import NamedTuple

from pyoxigraph import RdfFormat, Triple

from ratified_rdf._errors import BrainError
from ratified_rdf.graph import void
from ratified_rdf.graph.scope import Scope
from ratified_rdf.graph.store import TripleStore
from ratified_rdf.graph.vocab import term
from ratified_rdf.graph.writer import RunRecord
from ratified_rdf.queries import run_query
from ratified_rdf.queries.files import ParamValue
from ratified_rdf.queries.run import source_of


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
