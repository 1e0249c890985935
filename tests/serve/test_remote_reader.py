"""A brain on this server as a store (``SparqlProtocolStore.at(<base>/sparql)``), as
``--store http://…/sparql`` opens it: the reader finds the brain by its catalog, reads whole
graphs past the row limit a CONSTRUCT meets, and answers as the brain itself does."""

from __future__ import annotations

import io
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from pyoxigraph import RdfFormat, parse
from starlette.applications import Starlette

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog
from ratified_rdf.graph import publish
from ratified_rdf.graph.remote import SparqlProtocolStore
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import GENEROUS_S

Serve = Callable[[Starlette], AbstractContextManager[str]]


def test_whole_graphs_come_past_the_row_limit(pigeon_brain: Brain, serve: Serve) -> None:
    # Every graph here holds more triples than a CONSTRUCT may return from this app.
    with serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=5)) as base:
        store = SparqlProtocolStore.at(f"{base}/sparql")
        try:
            for graph in pigeon_brain.read_graphs:
                here = set(pigeon_brain.reading.store.triples([graph]))
                assert set(store.triples([graph])) == here and len(here) > 5, graph
            catalog = publish.reader_catalog(pigeon_brain.reading.store, pigeon_brain.scope)
            assert set(store.triples([pigeon_brain.catalog])) == set(catalog)
        finally:
            store.close()


def test_a_reader_opens_the_brain_by_the_endpoints_address(
    pigeon_brain: Brain, serve: Serve, tmp_path: Path
) -> None:
    question = "why does the take-off rule look like this?"
    with (
        serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as base,
        AuditLog.open(tmp_path / "audit") as log,
    ):
        remote = Brain.open(f"{base}/sparql", audit=log)
        try:
            assert remote.brain_id == pigeon_brain.brain_id
            assert remote.read_graphs == pigeon_brain.read_graphs
            there, here = remote.ask(question), pigeon_brain.ask(question)
            assert there.summary == here.summary and there.evidence == here.evidence
            assert remote.validate() == []
            dumped, expected = io.BytesIO(), io.BytesIO()
            remote.dump(dumped)
            pigeon_brain.dump(expected)
            assert set(parse(dumped.getvalue(), RdfFormat.N_QUADS)) == set(
                parse(expected.getvalue(), RdfFormat.N_QUADS)
            )
        finally:
            remote.close()
