"""``/queries/<name>.rq``: the library's query files, as the cards name them; a card read from
the card view links there to the full-path query that gives the same rows."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.queries.files import load_query
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import GENEROUS_S


@pytest.fixture(scope="module")
def client(pigeon_brain: Brain) -> Iterator[TestClient]:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as test_client:
        yield test_client


def test_a_card_names_the_full_path_query_the_server_serves(client: TestClient) -> None:
    card = client.get("/api/ask", params={"q": "history of RFC 9999 section 2.1"}).json()
    named = [q["reproduces"] for q in card["queries"] if q.get("reproduces")]
    assert named == ["section_history"]
    served = client.get(f"/queries/{named[0]}.rq")
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("application/sparql-query")
    assert served.text == load_query("section_history").text
    view = client.get("/queries/view_section_history.rq").text
    assert "# Reproduces: section_history" in view


@pytest.mark.parametrize(
    "path",
    [
        "/queries/no_such_query.rq",
        "/queries/..%2F..%2Fpyproject.rq",
        "/queries/%2Fetc%2Fpasswd.rq",
        "/queries/Section_History.rq",
        "/queries/" + "a" * 5000 + ".rq",  # longer than a file name may be
    ],
    ids=["unknown", "dot-dot", "absolute", "capitals", "too-long"],
)
def test_nothing_but_a_query_file_is_served(client: TestClient, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 404
    assert "PREFIX" not in answer.text and "[project]" not in answer.text
