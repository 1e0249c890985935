"""The HTTP conventions clients of a SPARQL server expect, on a real socket where it matters:
CORS for pages on other origins (with the preflight), a query form for a browser at /sparql,
gzip, validators with conditional GET, HEAD, a ``timeout`` parameter, ``/health`` and an
OpenAPI 3.1 description at ``/openapi.json``."""

from __future__ import annotations

import http.server
import threading
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING

import brotli
import httpx
import jsonschema
import pytest
from openapi_spec_validator import validate
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import StreamingResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.surfaces import _http, standard
from ratified_rdf.surfaces.access import AccessFile, AccessList, ReaderGrant, token_digest
from ratified_rdf.surfaces.server import create_app
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.serve.conftest import PAGE_GUARD_MS
from tests.serve.deadlines import GENEROUS_S

if TYPE_CHECKING:
    from playwright.sync_api import Page

Serve = Callable[[Starlette], AbstractContextManager[str]]
ASK = "ASK { ?s ?p ?o }"
ROWS = "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(isIRI(?s)) } LIMIT 400"
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
"""A query no worker finishes in a test's lifetime: four independent scans, multiplied."""
PAGE_ORIGIN = "https://yasgui.example"


@pytest.fixture(scope="module")
def client(pigeon_brain: Brain) -> Iterator[TestClient]:
    with TestClient(
        create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)
    ) as test_client:
        yield test_client


def _access(token: str = "tok") -> AccessList:
    return AccessList(reader=(ReaderGrant(name="alice", token_sha256=token_digest(token)),))


# --- CORS -----------------------------------------------------------------------------------


def test_a_page_on_another_origin_may_query_a_public_server(
    pigeon_brain: Brain, serve: Serve
) -> None:
    with serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)) as base:
        preflight = httpx.options(
            f"{base}/sparql",
            headers={
                "Origin": PAGE_ORIGIN,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, authorization",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == "*"
        assert "POST" in preflight.headers["access-control-allow-methods"]
        allowed = preflight.headers["access-control-allow-headers"].lower()
        assert "content-type" in allowed and "authorization" in allowed
        answer = httpx.post(
            f"{base}/sparql",
            data={"query": ASK},
            headers={"Origin": PAGE_ORIGIN, "Accept": "application/sparql-results+json"},
            timeout=60,
        )
        assert answer.status_code == 200, answer.text
        assert answer.json()["boolean"] is True
        assert answer.headers["access-control-allow-origin"] == "*"
        assert "etag" in answer.headers["access-control-expose-headers"].lower()


def test_a_token_protected_server_allows_no_origin_unless_told(pigeon_brain: Brain) -> None:
    headers = {"Origin": PAGE_ORIGIN, "Access-Control-Request-Method": "GET"}
    with TestClient(
        create_app(pigeon_brain, query_timeout_s=GENEROUS_S, access=_access())
    ) as closed:
        assert (
            "access-control-allow-origin" not in closed.options("/sparql", headers=headers).headers
        )
        assert "access-control-allow-origin" not in closed.get("/health", headers=headers).headers
    opened = create_app(
        pigeon_brain, query_timeout_s=GENEROUS_S, access=_access(), cors_origins=[PAGE_ORIGIN]
    )
    with TestClient(opened) as told:
        preflight = told.options("/sparql", headers=headers)
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == PAGE_ORIGIN
        other = told.options("/sparql", headers={**headers, "Origin": "https://evil.example"})
        assert other.status_code == 400
        assert "access-control-allow-origin" not in other.headers
    none = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, cors_origins=["none"])
    with TestClient(none) as off:
        assert "access-control-allow-origin" not in off.get("/health", headers=headers).headers


def test_a_value_that_is_no_origin_is_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match="is not an origin: give a scheme and host"):
        _http.cors_origins(["yasgui.example/path"], token_protected=False)
    assert _http.cors_origins(["https://a.example/", "*"], token_protected=True) == ["*"]


class _PageHandler(http.server.BaseHTTPRequestHandler):
    """Serves one page, on its own port (another origin), that queries the endpoint."""

    page = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@contextmanager
def _page_server(page: str) -> Iterator[str]:
    handler = type("Handler", (_PageHandler,), {"page": page.encode()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_browser_page_on_another_port_queries_the_endpoint(
    pigeon_brain: Brain, serve: Serve, page: Page
) -> None:
    # What YASGUI or Comunica in a page do: fetch() with a form body and an Accept header
    # (not a "simple" request, so the browser sends a preflight first).
    with serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)) as base:
        script = f"""<!doctype html><meta charset="utf-8"><body><script>
fetch("{base}/sparql", {{method: "POST",
  headers: {{"Content-Type": "application/sparql-query",
             "Accept": "application/sparql-results+json"}},
  body: "{ASK}"}})
  .then(r => r.json()).then(j => {{ document.body.dataset.answer = String(j.boolean); }})
  .catch(e => {{ document.body.dataset.answer = "failed: " + e; }});
</script></body>"""
        with _page_server(script) as page_url:
            page.goto(page_url)
            page.wait_for_selector("body[data-answer]", state="attached", timeout=PAGE_GUARD_MS)
            assert page.get_attribute("body", "data-answer") == "true"


# --- the query form -------------------------------------------------------------------------


def test_a_browser_opening_sparql_gets_a_query_form_that_needs_nothing_else(
    client: TestClient,
) -> None:
    page = client.get("/sparql", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<form id="sparql" action="/sparql" method="get">' in page.text
    assert 'name="query"' in page.text and 'name="timeout"' in page.text
    # Offline: everything it loads is this server's own.
    assert "http://" not in page.text.replace("http://purl.org", "").replace(
        "http://www.w3.org", ""
    )
    assert "https://" not in page.text.replace("https://w3id.org", "")
    assert page.headers["content-security-policy"].startswith("default-src 'none'")
    # Sent as the form sends it, the answer comes back.
    answer = client.get("/sparql", params={"query": ASK, "format": "json", "timeout": ""})
    assert answer.status_code == 200 and answer.json()["boolean"] is True
    # A client taking RDF still gets the service description.
    described = client.get("/sparql", headers={"Accept": "text/turtle"})
    assert described.status_code == 200 and "sd:Service" in described.text


# --- gzip -----------------------------------------------------------------------------------


def test_large_answers_are_gzipped_and_decoded_by_httpx(pigeon_brain: Brain, serve: Serve) -> None:
    with (
        serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)) as base,
        httpx.Client(base_url=base, timeout=60) as web,
    ):
        for url, accept in (
            (f"/sparql?query={ROWS}", "text/csv"),  # an answer from a query worker
            ("/sparql?default", "application/n-triples"),  # a streamed graph
        ):
            zipped = web.get(url, headers={"Accept": accept, "Accept-Encoding": "gzip"})
            plain = web.get(url, headers={"Accept": accept, "Accept-Encoding": "identity"})
            assert zipped.status_code == plain.status_code == 200, zipped.text
            assert zipped.headers["content-encoding"] == "gzip"
            assert "content-encoding" not in plain.headers
            assert "Accept-Encoding" in zipped.headers["vary"]
            assert zipped.text == plain.text  # decoded by httpx
            assert len(zipped.content) > 1_000
            if "default" in url:
                assert int(zipped.num_bytes_downloaded) < len(plain.content) // 2


def test_a_gzipped_stream_counts_the_bytes_on_the_wire_against_its_floor() -> None:
    # The floor judges what the client reads: compressed, the chunks it takes are smaller,
    # so compression does not let a slow reader look faster than it is.
    stream = standard._Stream(deadline=float("inf"), coding="gzip")
    text = b"<https://example.org/pigeon> <https://example.org/p> 'coo' .\n" * 40_000
    stream.write(text)
    stream.finish()
    taken = bytearray()
    while (item := stream.get()) is not standard._DONE:
        assert isinstance(item, bytes)
        taken += item
    assert zlib.decompress(bytes(taken), 16 + zlib.MAX_WBITS) == text
    assert stream._taken == len(taken) < len(text) // 10


# --- Brotli ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept_encoding", "coding"),
    [
        ("gzip, deflate, br", "br"),  # a browser's: a tie goes to Brotli
        ("br;q=0.5, gzip", "gzip"),
        ("gzip;q=0.4, br;q=0.9", "br"),
        ("br;q=0, gzip", "gzip"),
        ("br;q=0, gzip;q=0", None),
        ("*", "br"),
        ("br;q=0, *;q=0.1", "gzip"),
        ("identity", None),
        ("br;q=nope", None),
        ("", None),
    ],
)
def test_the_coding_follows_the_clients_q_values(accept_encoding: str, coding: str | None) -> None:
    headers = Headers({"Accept-Encoding": accept_encoding})
    assert _http.content_coding(headers) == coding


def test_a_client_preferring_brotli_gets_brotli_decoded_by_httpx(
    pigeon_brain: Brain, serve: Serve
) -> None:
    with (
        serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, query_workers=1)) as base,
        httpx.Client(base_url=base, timeout=60) as web,
    ):
        for url, accept in (
            (f"/sparql?query={ROWS}", "text/csv"),  # compressed by the middleware
            ("/sparql?default", "application/n-triples"),  # compressed by its producer
        ):
            plain = web.get(url, headers={"Accept": accept, "Accept-Encoding": "identity"})
            answers = {}
            for coding in ("br", "gzip"):
                sent = f"{coding}, {'gzip' if coding == 'br' else 'br'};q=0.5"
                answers[coding] = web.get(url, headers={"Accept": accept, "Accept-Encoding": sent})
                assert answers[coding].status_code == 200, answers[coding].text
                assert answers[coding].headers["content-encoding"] == coding
                assert "Accept-Encoding" in answers[coding].headers["vary"]
                assert answers[coding].text == plain.text  # decoded by httpx
            # The bytes on the wire are Brotli's own, not gzip's under another name.
            with web.stream("GET", url, headers={"Accept": accept, "Accept-Encoding": "br"}) as raw:
                wire = b"".join(raw.iter_raw())
            assert not wire.startswith(b"\x1f\x8b")
            assert brotli.decompress(wire) == plain.content
            assert len(wire) < len(plain.content)
            tags = {answers["br"].headers.get("etag"), answers["gzip"].headers.get("etag")}
            tags.add(plain.headers.get("etag"))
            if "query" in url:
                assert len(tags) == 3 and None not in tags  # one tag per representation


def test_a_brotli_stream_counts_the_bytes_on_the_wire_against_its_floor() -> None:
    stream = standard._Stream(deadline=float("inf"), coding="br")
    text = b"<https://example.org/pigeon> <https://example.org/p> 'coo' .\n" * 40_000
    stream.write(text)
    stream.finish()
    taken = bytearray()
    while (item := stream.get()) is not standard._DONE:
        assert isinstance(item, bytes)
        taken += item
    assert brotli.decompress(bytes(taken)) == text
    assert stream._taken == len(taken) < len(text) // 10


def test_an_answer_streamed_through_the_middleware_is_one_brotli_stream() -> None:
    # A streamed answer its producer does not compress (a page, say) is compressed chunk by
    # chunk by the middleware; each chunk is flushed, so the client can decode as it reads.
    chunks = [f"line {i} ".encode() * 100 for i in range(50)]

    async def page(request: object) -> StreamingResponse:
        async def body() -> AsyncIterator[bytes]:
            for chunk in chunks:
                yield chunk

        return StreamingResponse(body(), media_type="text/plain")

    app = Starlette(routes=[Route("/", page)], middleware=_http.middleware([]))
    with (
        TestClient(app) as web,
        web.stream("GET", "/", headers={"Accept-Encoding": "br"}) as answer,
    ):
        assert answer.headers["content-encoding"] == "br"
        wire = b"".join(answer.iter_raw())
    assert brotli.decompress(wire) == b"".join(chunks)


def test_conditional_get_and_head_hold_for_a_brotli_answer(client: TestClient) -> None:
    url = f"/sparql?query={ROWS}"
    br = {"Accept": "text/csv", "Accept-Encoding": "br"}
    first = client.get(url, headers=br)
    assert first.status_code == 200 and first.headers["content-encoding"] == "br"
    etag = first.headers["etag"]
    again = client.get(url, headers={**br, "If-None-Match": etag})
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
    # The Brotli answer's tag does not match a request that will get gzip.
    other = client.get(url, headers={**br, "Accept-Encoding": "gzip", "If-None-Match": etag})
    assert other.status_code == 200 and other.headers["content-encoding"] == "gzip"
    head = client.head(url, headers=br)
    assert head.status_code == 200 and head.content == b""
    assert head.headers["etag"] == etag
    assert head.headers["content-type"].startswith("text/csv")


# --- validators, conditional GET, HEAD ------------------------------------------------------


def test_answers_carry_validators_and_a_conditional_get_is_304(client: TestClient) -> None:
    for url in ("/api/holdings", f"/sparql?query={ASK}", "/void"):
        first = client.get(url)
        assert first.status_code == 200, first.text
        etag, modified = first.headers["etag"], first.headers["last-modified"]
        assert etag.startswith('W/"')
        again = client.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b""
        assert again.headers["etag"] == etag
        since = client.get(url, headers={"If-Modified-Since": modified})
        assert since.status_code == 304
        # If-None-Match decides when both are sent: another tag means the answer is sent.
        other = client.get(
            url, headers={"If-None-Match": 'W/"other"', "If-Modified-Since": modified}
        )
        assert other.status_code == 200 and other.content != b""
    # Another representation of the same URL has another tag.
    json_tag = client.get(f"/sparql?query={ASK}", headers={"Accept": "application/json"})
    xml_tag = client.get(f"/sparql?query={ASK}", headers={"Accept": "application/xml"})
    assert json_tag.headers["etag"] != xml_tag.headers["etag"]


def test_the_validators_change_with_the_reader(pigeon_brain: Brain) -> None:
    # The pigeon brain serves its builder's view without a token; rita's is the public one.
    grant = ReaderGrant(name="rita", token_sha256=token_digest("rita"))
    access = AccessList(reader=(grant,))
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, access=access)) as both:
        public = both.get("/api/holdings").headers["etag"]
        rita = both.get("/api/holdings", headers={"Authorization": "Bearer rita"})
        assert rita.headers["etag"] != public
        held = both.get(
            "/api/holdings", headers={"Authorization": "Bearer rita", "If-None-Match": public}
        )
        assert held.status_code == 200
        refused = both.get(
            "/api/holdings", headers={"Authorization": "Bearer nope", "If-None-Match": public}
        )
        assert refused.status_code == 401


def test_head_of_a_query_is_its_get_without_the_body(client: TestClient) -> None:
    head = client.head("/sparql", params={"query": ASK}, headers={"Accept": "text/csv"})
    assert head.status_code == 200
    assert head.headers["content-type"].startswith("text/csv")
    assert head.content == b""
    assert "etag" in head.headers
    pattern = client.head("/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"})
    assert pattern.status_code == 200 and pattern.content == b""
    assert pattern.headers["content-type"] == "application/sparql-results+json"


# --- the timeout parameter ------------------------------------------------------------------


@pytest.mark.parametrize("value", ["soon", "0", "-1", "nan", "inf"])
def test_a_bad_timeout_is_refused_with_a_sentence(client: TestClient, value: str) -> None:
    answer = client.get("/sparql", params={"query": ASK, "timeout": value})
    assert answer.status_code == 400
    assert "timeout parameter is a number of seconds above zero" in answer.text
    assert f"caps it at {GENEROUS_S:g}" in answer.text


def test_a_lower_timeout_is_honoured_and_a_higher_one_capped(pigeon_brain: Brain) -> None:
    # Only queries that must be ended meet a short budget: the one that must succeed is given
    # the roomy server's, so a busy machine cannot turn it into a 503.
    with TestClient(create_app(pigeon_brain, query_workers=1, query_timeout_s=GENEROUS_S)) as roomy:
        lower = roomy.get("/sparql", params={"query": SLOW, "timeout": "2"})
        form = roomy.post("/sparql", data={"query": ASK, "timeout": "600"})
    assert lower.status_code == 503
    assert "past the 2 s its timeout parameter asked for" in lower.text
    assert f"up to {GENEROUS_S:g} s" in lower.text
    assert form.status_code == 200, form.text
    with TestClient(create_app(pigeon_brain, query_workers=1, query_timeout_s=2)) as tight:
        higher = tight.get("/sparql", params={"query": SLOW, "timeout": "600"})
    assert higher.status_code == 503
    assert "longer than the 2 s this endpoint allows" in higher.text


# --- /health and /openapi.json --------------------------------------------------------------


def test_health_names_the_brain_its_run_and_the_access_file(
    pigeon_brain: Brain, tmp_path: Path
) -> None:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as plain:
        body = plain.get("/health").json()
    run = pigeon_brain.scope.current
    assert run is not None
    assert body["status"] == "ok" and body["brain"] == pigeon_brain.brain_id
    assert body["run"]["id"] == run.run_id and "access" not in body
    file = tmp_path / "access.toml"
    file.write_text("")
    access = AccessFile(file)
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S, access=access)) as guarded:
        assert guarded.get("/health").json()["access"] == {"status": "ok"}
        file.write_text("[[reader]]\nname = ")  # an edit that cannot be read
        stale = guarded.get("/health")
    assert stale.status_code == 200
    assert stale.json()["status"] == "degraded"
    assert stale.json()["access"]["status"] == "stale"
    assert str(file) not in stale.text  # the details are in the log, not on a public route


def test_the_openapi_document_is_valid_and_describes_every_json_route(
    client: TestClient,
) -> None:
    document = client.get("/openapi.json").json()
    validate(document)
    served = {r.path for r in client.app.routes if isinstance(r, Route)}  # type: ignore[attr-defined]
    json_routes = {p for p in served if p.startswith("/api/")} | set(_http.JSON_ROUTES)
    assert json_routes <= set(document["paths"])
    assert set(document["paths"]) <= served
    # The answers match their schemas (generated from the models, so they cannot drift).
    components = {"components": document["components"]}
    for url, schema in (
        ("/api/holdings", "Answer"),
        ("/api/ask?q=history+of+RFC+9999+section+1", "AskAnswer"),
        ("/health", "Health"),
    ):
        answer = client.get(url)
        assert answer.status_code == 200, answer.text
        jsonschema.validate(answer.json(), {"$ref": f"#/components/schemas/{schema}", **components})


def test_a_write_to_the_store_changes_the_validators_across_restarts(tmp_path: Path) -> None:
    # Each server process counts the store's generations from zero; the tag must still tell
    # a store written since apart, or a restarted server would confirm a stale copy.
    store = tmp_path / "store"
    built, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    built.close()
    with (
        Brain.open(store) as first,
        TestClient(create_app(first, query_timeout_s=GENEROUS_S)) as before,
    ):
        answer = before.get("/api/holdings")
        etag, modified = answer.headers["etag"], answer.headers["last-modified"]
    with Brain.open(store) as writer:
        on_disk = writer.reading.store
        assert isinstance(on_disk, OxigraphStore)
        with on_disk.writing():
            pass  # a writer finishing (a review, a prune) replaces the generation file
    with (
        Brain.open(store) as second,
        TestClient(create_app(second, query_timeout_s=GENEROUS_S)) as after,
    ):
        again = after.get("/api/holdings", headers={"If-None-Match": etag})
        assert again.status_code == 200
        assert again.headers["etag"] != etag
        assert parsedate_to_datetime(again.headers["last-modified"]) >= parsedate_to_datetime(
            modified
        )
        same = after.get("/api/holdings", headers={"If-None-Match": again.headers["etag"]})
        assert same.status_code == 304
