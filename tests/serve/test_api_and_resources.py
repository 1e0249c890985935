"""The answer API, dereferenceable IRIs and the page's files, on the pigeon brain."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, parse
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.graph import vocab as v
from ratified_rdf.surfaces import server
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import GENEROUS_S

BECAME = "what did section 2.1 of draft-example-pigeon-00 become in the RFC?"
SECTION = v.ID + "doc/draft-example-pigeon/00/section/2.1"


@pytest.fixture(scope="module")
def client(pigeon_brain: Brain) -> Iterator[TestClient]:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as test_client:
        yield test_client


def _without_timings(answer: dict[str, Any]) -> dict[str, Any]:
    return {
        **answer,
        "queries": [{k: q[k] for k in q if k != "engine_ms"} for q in answer["queries"]],
    }


# --- /api -----------------------------------------------------------------------------------


def test_ask_returns_the_answer_model_as_json(client: TestClient, pigeon_brain: Brain) -> None:
    response = client.get("/api/ask", params={"q": BECAME})
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json"
    expected = pigeon_brain.ask(BECAME).model_dump(mode="json")
    assert _without_timings(response.json()) == _without_timings(expected)
    body = response.json()
    assert body["verdict"] == "answered"
    assert {"name", "sparql", "params", "rows", "engine_ms"} <= set(body["queries"][0])


def test_an_out_of_scope_question_is_unknown(client: TestClient) -> None:
    body = client.get("/api/ask", params={"q": "how did the IESG vote on this?"}).json()
    assert body["verdict"] == "unknown"


@pytest.mark.parametrize("params", [{}, {"q": "   "}, {"q": "why " * 200}])
def test_ask_without_a_proper_question_is_400(client: TestClient, params: dict[str, str]) -> None:
    response = client.get("/api/ask", params=params)
    assert response.status_code == 400
    assert response.json()["error"].endswith(".")


def test_holdings(client: TestClient) -> None:
    body = client.get("/api/holdings").json()
    assert body["verdict"] == "answered"
    assert {r["kind"] for r in body["results"]} == {"holding"}


# --- /id and /doc ---------------------------------------------------------------------------


def test_a_resource_iri_redirects_303_to_its_description(client: TestClient) -> None:
    response = client.get("/id/doc/draft-example-pigeon/00/section/2.1", follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == "/doc/doc/draft-example-pigeon/00/section/2.1"
    kept = client.get("/id/doc/draft-example-pigeon/00?format=ttl", follow_redirects=False)
    assert kept.headers["location"] == "/doc/doc/draft-example-pigeon/00?format=ttl"


@pytest.mark.parametrize(
    ("accept", "rdf_format"),
    [
        ("text/turtle", RdfFormat.TURTLE),
        ("application/ld+json", RdfFormat.JSON_LD),
        ("application/n-triples", RdfFormat.N_TRIPLES),
    ],
)
def test_descriptions_in_rdf_hold_what_the_brain_says(
    client: TestClient, pigeon_brain: Brain, accept: str, rdf_format: RdfFormat
) -> None:
    response = client.get("/id/doc/draft-example-pigeon/00/section/2.1", headers={"Accept": accept})
    assert response.status_code == 200
    assert response.headers["content-type"].split(";")[0] == accept
    assert "Accept" in response.headers["vary"].split(", ")
    got = {str(t) for t in parse(response.content, rdf_format)}
    assert got == {str(t) for t in pigeon_brain.describe(SECTION)}
    assert got


def test_the_html_description_links_resources_and_public_pages(client: TestClient) -> None:
    response = client.get(
        "/id/doc/draft-example-pigeon/00/section/2.1", headers={"Accept": "text/html"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page = response.text
    assert f"<code>{SECTION}</code>" in page
    assert 'href="/id/doc/draft-example-pigeon/00"' in page
    assert (
        'href="https://datatracker.ietf.org/doc/html/draft-example-pigeon-00#section-2.1"' in page
    )
    assert "<h2>Linked from</h2>" in page


def test_a_browser_gets_html_by_default(client: TestClient) -> None:
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    response = client.get("/doc/doc/draft-example-pigeon/00", headers={"Accept": browser})
    assert response.headers["content-type"].startswith("text/html")


def test_an_unknown_resource_is_404_with_a_sentence(client: TestClient) -> None:
    plain = client.get("/id/doc/no-such-draft/00", headers={"Accept": "text/turtle"})
    assert plain.status_code == 404
    assert plain.text.startswith("The brain knows nothing about https://w3id.org/")
    page = client.get("/doc/doc/no-such-draft/00", headers={"Accept": "text/html"})
    assert page.status_code == 404
    assert "<p class='error'>The brain knows nothing about" in page.text
    bad = client.get("/id/doc/%3Cbad%3E%20iri")
    assert bad.status_code == 404


def test_resource_pages_escape_what_the_graph_says() -> None:
    iri = v.ID + "doc/x"
    found = server._Resource(
        iri=iri,
        triples=[
            Triple(
                NamedNode(iri), NamedNode(v.RDFS + "label"), Literal("<script>alert(1)</script>")
            ),
            Triple(NamedNode(iri), NamedNode(v.FOAF + "page"), NamedNode("https://e.org/?a=1&b=2")),
            Triple(NamedNode(iri), NamedNode(v.RR + "note"), NamedNode("javascript:alert(1)")),
        ],
        incoming=[],
    )
    page = server._resource_page(found, "doc/x")
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'href="https://e.org/?a=1&amp;b=2"' in page
    assert 'href="javascript:' not in page


# --- the page -------------------------------------------------------------------------------


def test_the_page_and_its_files_are_served_locally(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert '<script src="/static/app.js" defer></script>' in page.text
    assert "http://" not in page.text.replace("https://w3id.org/ratified-rdf/id/", "")
    for asset in ("/static/app.js", "/static/style.css"):
        response = client.get(asset)
        assert response.status_code == 200
        assert "https://" not in response.text.replace("https://w3id.org/ratified-rdf/id/", "")
    script = client.get("/static/app.js").text
    assert "innerHTML" not in script and "insertAdjacentHTML" not in script


def test_create_app_checks_its_limits(pigeon_brain: Brain) -> None:
    with pytest.raises(ValueError, match="query_timeout_s"):
        create_app(pigeon_brain, query_timeout_s=0)
    with pytest.raises(ValueError, match="max_rows"):
        create_app(pigeon_brain, max_rows=0)
