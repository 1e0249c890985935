"""The remote backend on a real Oxigraph server: scoping holds through the protocol's dataset
parameters, and ``Brain.open`` takes the server's URL."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog
from ratified_rdf.build import build
from ratified_rdf.graph.remote import SparqlProtocolStore
from ratified_rdf.graph.store import StoreError
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo


def _tenant_records(folder: Path, tenant: str) -> Path:
    shutil.copytree(MANIFEST.parent, folder)
    manifest = folder / "manifest.toml"
    manifest.write_text(
        manifest.read_text().replace('id = "pigeon"', f'id = "pigeon"\ntenant = "{tenant}"')
    )
    return manifest


@pytest.mark.slow
def test_scoping_holds_on_the_server(oxigraph_url: str, tmp_path: Path) -> None:
    repo = make_pigeon_repo(tmp_path / "git")
    store = SparqlProtocolStore.oxigraph(oxigraph_url)
    build(_tenant_records(tmp_path / "a", "remote-a"), source=str(repo), store=store)
    build(_tenant_records(tmp_path / "b", "remote-b"), source=str(repo), store=store)
    with AuditLog.open(tmp_path / "audit") as log:
        a = Brain.open(
            oxigraph_url, audit=log, reader=Reader(tenant="remote-a", clearance="restricted")
        )
        b = a.read_as(a.reader.but(tenant="remote-b"))
        theirs = next(g for g in b.read_graphs if g.endswith("/spec"))
        # The protocol's dataset parameters win over GRAPH and FROM in the text.
        assert a.query(f"SELECT ?s WHERE {{ GRAPH <{theirs}> {{ ?s ?p ?o }} }}").rows == ()
        from_theirs = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
        assert theirs not in {r["g"].value for r in a.query(from_theirs).rows}
        graphs = a.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }").rows
        assert {r["g"].value for r in graphs} == set(a.read_graphs)
        assert a.ask("who discussed RFC 9999 section 3.1?").verdict.value == "answered"


def test_an_unreachable_server_is_a_sentence() -> None:
    store = SparqlProtocolStore.oxigraph("http://127.0.0.1:9")
    with pytest.raises(StoreError, match="cannot be reached"):
        store.graphs()
