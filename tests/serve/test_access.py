"""Tenant and clearance from the request: a bearer token from the access list chooses the
reader; without one a request reads as the anonymous public reader; an unknown token is
refused; and what a reader may not see stays out of every route."""

from __future__ import annotations

import gc
import shutil
import signal
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn
from click.testing import CliRunner
from pyoxigraph import RdfFormat, Triple, parse
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.graph import publish
from ratified_rdf.records.manifest import ManifestError
from ratified_rdf.surfaces import access as access_module
from ratified_rdf.surfaces.access import (
    AccessFile,
    AccessList,
    ReaderGrant,
    load_access,
    token_digest,
)
from ratified_rdf.surfaces.server import create_app, serve_command
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.serve.deadlines import GENEROUS_S

QUESTION = "who discussed RFC 9999 section 3.1?"
MAIL = "SELECT ?t WHERE { ?t a <https://w3id.org/ratified-rdf/ontology#MailThread> }"


@pytest.fixture(scope="module")
def anonymous(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    """The pigeon brain with its mail restricted, read as the anonymous public reader."""
    folder = tmp_path_factory.mktemp("access")
    records = folder / "records"
    shutil.copytree(MANIFEST.parent, records)
    manifest = records / "manifest.toml"
    manifest.write_text(manifest.read_text() + '\n[clearance]\nmail = "restricted"\n')
    built, _ = Brain.build(manifest, source=str(make_pigeon_repo(folder / "git")))
    return built.read_as(built.reader.but(clearance="public"))


@pytest.fixture(scope="module")
def client(anonymous: Brain) -> TestClient:
    access = AccessList(
        reader=(
            ReaderGrant(
                name="Rita Restricted",
                token_sha256=token_digest("rita-secret"),
                clearance="restricted",
            ),
            ReaderGrant(name="Pat Public", token_sha256=token_digest("pat-secret")),
        )
    )
    return TestClient(create_app(anonymous, query_timeout_s=GENEROUS_S, access=access))


def _mail_posts(client: TestClient, **headers: str) -> int:
    answer = client.get("/api/ask", params={"q": QUESTION}, headers=headers).json()
    return sum(1 for r in answer["results"] if r.get("post_kind") == "message")


def test_the_token_chooses_the_reader(client: TestClient) -> None:
    assert _mail_posts(client) == 0  # anonymous: public
    assert _mail_posts(client, authorization="Bearer pat-secret") == 0
    assert _mail_posts(client, authorization="Bearer rita-secret") == 1
    sparql = {"query": MAIL}
    accept = {"accept": "application/sparql-results+json"}
    public = client.get("/sparql", params=sparql, headers=accept).json()
    restricted = client.get(
        "/sparql", params=sparql, headers={**accept, "authorization": "Bearer rita-secret"}
    ).json()
    assert public["results"]["bindings"] == [] and len(restricted["results"]["bindings"]) == 1


def test_an_unknown_token_is_refused_everywhere(client: TestClient) -> None:
    for path, params in (("/api/ask", {"q": QUESTION}), ("/sparql", {"query": "ASK {}"})):
        for header in ("Bearer wrong", "Basic cml0YTpzZWNyZXQ=", "Bearer "):
            response = client.get(path, params=params, headers={"authorization": header})
            assert response.status_code == 401, (path, header)
            assert response.headers["www-authenticate"].startswith("Bearer")
            assert "wrong" not in response.text


def test_the_access_file_is_checked_without_echoing_hostile_tenants(tmp_path: Path) -> None:
    good = tmp_path / "access.toml"
    good.write_text(
        f'[[reader]]\nname = "rita"\ntoken_sha256 = "{token_digest("x")}"\n'
        'tenant = "acme"\nclearance = "internal"\n'
    )
    assert load_access(good).reader[0].tenant == "acme"
    hostile = tmp_path / "hostile.toml"
    hostile.write_text(
        f'[[reader]]\nname = "rita"\ntoken_sha256 = "{token_digest("x")}"\n'
        'tenant = "../../etc%2fpasswd"\n'
    )
    with pytest.raises(ManifestError) as refused:
        load_access(hostile)
    assert "etc" not in str(refused.value) and "passwd" not in str(refused.value)
    result = CliRunner().invoke(
        serve_command, ["--store", str(tmp_path / "none"), "--access", str(hostile)]
    )
    assert result.exit_code != 0 and "passwd" not in result.output


def _reader(name: str, token: str, fields: str = "") -> str:
    return f'[[reader]]\nname = "{name}"\ntoken_sha256 = "{token_digest(token)}"\n{fields}\n'


NOON = datetime(2030, 5, 1, 12, 0, tzinfo=UTC)
RESTRICTED = 'clearance = "restricted"'


def test_a_running_server_follows_its_access_file(
    anonymous: Brain, tmp_path: Path, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    path = tmp_path / "access.toml"
    path.write_text(
        _reader("Rita", "rita-secret", RESTRICTED)
        + _reader("Pat", "pat-secret", f"{RESTRICTED}\nexpires = 2030-05-01T12:00:00Z")
        + _reader("Ed", "ed-secret", RESTRICTED)
    )
    now = [NOON - timedelta(seconds=1)]
    app = create_app(
        anonymous, query_timeout_s=GENEROUS_S, access=AccessFile(path, now=lambda: now[0])
    )

    def mail(http: httpx.Client, token: str) -> int | None:
        """How many mail threads the token's reader sees; None when it is refused."""
        answer = http.get(
            "/sparql",
            params={"query": MAIL},
            headers={"accept": "application/sparql-results+json", "authorization": token},
        )
        if answer.status_code == 401:
            assert answer.headers["www-authenticate"].startswith("Bearer")
            return None
        assert answer.status_code == 200, answer.text
        return len(answer.json()["results"]["bindings"])

    with serve(app) as base, httpx.Client(base_url=base, timeout=60) as http:
        assert [mail(http, f"Bearer {t}-secret") for t in ("rita", "pat", "ed")] == [1, 1, 1]
        # Rita's token is taken out of the file: refused from the next request on.
        path.write_text(
            _reader("Pat", "pat-secret", f"{RESTRICTED}\nexpires = 2030-05-01T12:00:00Z")
            + _reader("Ed", "ed-secret", 'clearance = "public"')
        )
        assert mail(http, "Bearer rita-secret") is None
        # Ed's clearance is lowered: the next request reads at the new level.
        assert mail(http, "Bearer ed-secret") == 0
        # Pat's token expires at noon.
        assert mail(http, "Bearer pat-secret") == 1
        now[0] = NOON
        assert mail(http, "Bearer pat-secret") is None
        # A broken edit leaves the list in force, and a fixed one is read.
        path.write_text("[[reader]\n")
        assert mail(http, "Bearer ed-secret") == 0
        path.write_text(_reader("Rita", "rita-secret", RESTRICTED))
        assert [mail(http, f"Bearer {t}-secret") for t in ("rita", "pat", "ed")] == [1, None, None]


def test_serve_reads_its_access_file_again_on_sighup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path / "git")), path=store)
    brain.close()
    path = tmp_path / "access.toml"
    path.write_text(_reader("Rita", "rita-secret"))
    # An edit the file's identity does not show is read only on SIGHUP.
    monkeypatch.setattr(access_module, "_identity", lambda _path: (1, 2, 3, 4, 5))
    seen: list[object] = []

    def run(app: Starlette, **_options: object) -> None:
        access = app.state.access
        assert isinstance(access, AccessFile) and access.grant_for("rita-secret") is not None
        path.write_text(_reader("Pat", "pat-secret"))
        assert access.grant_for("rita-secret") is not None
        hangup = signal.getsignal(signal.SIGHUP)
        assert callable(hangup)
        hangup(signal.SIGHUP, None)
        seen.append(access.grant_for("rita-secret"))

    monkeypatch.setattr(uvicorn, "run", run)
    before, threshold = signal.getsignal(signal.SIGHUP), gc.get_threshold()
    try:
        result = CliRunner().invoke(
            serve_command, ["--store", str(store), "--on-disk", "--access", str(path)]
        )
    finally:  # serve_command freezes the heap for the server it starts; this process goes on
        gc.unfreeze()
        gc.set_threshold(*threshold)
    assert result.exit_code == 0, result.output
    assert seen == [None]
    assert signal.getsignal(signal.SIGHUP) == before


def test_each_reader_queries_the_catalog_as_their_own_dump_holds_it(anonymous: Brain) -> None:
    # One worker answers both readers: the catalog it holds for one is never the other's.
    access = AccessList(
        reader=(
            ReaderGrant(
                name="Rita Restricted",
                token_sha256=token_digest("rita-secret"),
                clearance="restricted",
            ),
        )
    )
    client = TestClient(
        create_app(anonymous, query_timeout_s=GENEROUS_S, access=access, query_workers=1)
    )
    rita = anonymous.read_as(anonymous.reader.but(clearance="restricted"))
    query = f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH <{anonymous.catalog}> {{ ?s ?p ?o }} }}"

    def catalog(params: dict[str, str], **headers: str) -> set[Triple]:
        response = client.get(
            "/sparql", params=params, headers={"Accept": "application/n-triples", **headers}
        )
        assert response.status_code == 200, response.text
        return {q.triple for q in parse(response.content, RdfFormat.N_TRIPLES)}

    rita_sees = set(publish.reader_catalog(rita.reading.store, rita.scope))
    public_sees = set(publish.reader_catalog(anonymous.reading.store, anonymous.scope))
    assert public_sees < rita_sees  # the restricted mail graph is named in Rita's alone
    # By a query (twice over, so the worker swaps views both ways), then the graph store.
    for params in [{"query": query}, {"query": query}, {"graph": anonymous.catalog}]:
        assert catalog(params, authorization="Bearer rita-secret") == rita_sees
        assert catalog(params) == public_sees


def test_a_dataset_naming_a_withheld_graph_reads_nothing(client: TestClient) -> None:
    # As a store on a server names it (default-graph-uri): the same answer as a graph that
    # does not exist, for the reader it is withheld from.
    rita = {"authorization": "Bearer rita-secret"}
    accept = {"accept": "application/sparql-results+json"}
    graphs = {"query": "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"}
    listed = client.get("/sparql", params=graphs, headers={**accept, **rita}).json()
    names = [b["g"]["value"] for b in listed["results"]["bindings"]]
    [mail] = [name for name in names if name.endswith("/mail")]
    query = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"

    def count(graph: str, **headers: str) -> int:
        response = client.post(
            "/sparql",
            data={"query": query, "default-graph-uri": graph},
            headers={**accept, **headers},
        )
        assert response.status_code == 200, response.text
        return int(response.json()["results"]["bindings"][0]["n"]["value"])

    assert count(mail, **rita) > 0
    assert count(mail) == 0 == count(mail + "-none", **rita)
