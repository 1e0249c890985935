"""Tenant and clearance from the request: a bearer token from the access list chooses the
reader; without one a request reads as the anonymous public reader; an unknown token is
refused; and what a reader may not see stays out of every route."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.records.manifest import ManifestError
from ratified_rdf.surfaces.access import AccessList, ReaderGrant, load_access, token_digest
from ratified_rdf.surfaces.server import create_app, serve_command
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "who discussed RFC 9999 section 3.1?"
MAIL = "SELECT ?t WHERE { ?t a <https://w3id.org/ratified-rdf/ontology#MailThread> }"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    folder = tmp_path_factory.mktemp("access")
    records = folder / "records"
    shutil.copytree(MANIFEST.parent, records)
    manifest = records / "manifest.toml"
    manifest.write_text(manifest.read_text() + '\n[clearance]\nmail = "restricted"\n')
    built, _ = Brain.build(manifest, source=str(make_pigeon_repo(folder / "git")))
    anonymous = built.read_as(built.reader.but(clearance="public"))
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
    return TestClient(create_app(anonymous, access=access))


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
