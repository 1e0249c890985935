"""Issue 50, item 1, over HTTP: ``/sparql`` runs the text the guard read, so a SERVICE or FROM
hidden from the guard's parser (in a comment ended by a carriage return, or after a string
Oxigraph ended early) is refused or read as the guard read it, and an escape naming no
character is a 400 with a sentence. GET, a form POST and a direct POST alike; the attacker's
listener on loopback sees no connection."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import GENEROUS_S

CR_SERVICE = "SELECT * WHERE { # x\r SERVICE <{url}> { ?x ?y ?w } \n }"
CR_FROM = "SELECT * # x\r FROM <{url}> \n WHERE { ?s ?p ?o }"
STRING_SERVICE = (
    'SELECT ?b WHERE { BIND("\\u005C" AS ?a) SERVICE <{url}> { ?x ?y ?w } '
    'BIND(" AS ?b) #" AS ?c)\n }'
)
PAST_UNICODE = "SELECT * WHERE { ?s ?p '\\U00110000' }"
JSON = {"Accept": "application/sparql-results+json"}


@pytest.fixture(scope="module")
def client(pigeon_brain: Brain) -> Iterator[TestClient]:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as test_client:
        yield test_client


def _sent(client: TestClient, how: str, text: str) -> tuple[int, str]:
    """The status and body of ``text`` sent to ``/sparql`` the way ``how`` names."""
    if how == "get":
        response = client.get("/sparql", params={"query": text}, headers=JSON)
    elif how == "form":
        response = client.post("/sparql", data={"query": text}, headers=JSON)
    else:
        headers = {**JSON, "Content-Type": "application/sparql-query"}
        response = client.post("/sparql", content=text.encode(), headers=headers)
    return response.status_code, response.text


WAYS = ["get", "form", "direct"]


@pytest.mark.parametrize("how", WAYS)
def test_a_service_after_a_carriage_return_is_refused(
    how: str, client: TestClient, listener: tuple[str, list[bytes]]
) -> None:
    url, seen = listener
    status, text = _sent(client, how, CR_SERVICE.replace("{url}", url))
    assert status == 400, text
    assert text.startswith("This query uses SERVICE")
    assert seen == []


@pytest.mark.parametrize("how", WAYS)
def test_a_from_after_a_carriage_return_is_refused(
    how: str, client: TestClient, listener: tuple[str, list[bytes]]
) -> None:
    url, seen = listener
    status, text = _sent(client, how, CR_FROM.replace("{url}", url))
    assert status == 400, text
    assert "fixed dataset" in text
    assert seen == []


@pytest.mark.parametrize("how", WAYS)
def test_a_service_inside_a_string_stays_inside_it(
    how: str, client: TestClient, listener: tuple[str, list[bytes]]
) -> None:
    url, seen = listener
    status, text = _sent(client, how, STRING_SERVICE.replace("{url}", url))
    assert status == 200, text
    rows = json.loads(text)["results"]["bindings"]
    assert [row["b"]["value"] for row in rows] == [f'" AS ?a) SERVICE <{url}> {{ ?x ?y ?w }} BIND(']
    assert seen == []


@pytest.mark.parametrize("how", WAYS)
def test_an_escape_past_unicode_is_a_400_with_a_sentence(how: str, client: TestClient) -> None:
    status, text = _sent(client, how, PAST_UNICODE)
    assert status == 400, text
    assert text.startswith("The escape \\U00110000 at line 1, column 25 names no")
    assert "bug" not in text.lower()
