"""``ratified serve``: the brain over HTTP.

One Starlette app, run by uvicorn, with four faces:

- ``/sparql``: a read-only SPARQL 1.1 Protocol endpoint over exactly the reader's graphs
  (GET, form POST and direct POST; results by content negotiation or a ``format`` parameter).
- ``/api/ask?q=…`` and ``/api/holdings``: answer cards as JSON, the same object
  ``ratified ask --json`` prints.
- ``/id/…``: the brain's IRIs (``https://w3id.org/ratified-rdf/id/…``) made dereferenceable:
  303 to ``/doc/…``, a description in HTML, Turtle, N-Triples or JSON-LD.
- ``/``: one small page that asks questions and shows the cards with their links and SPARQL.

Besides, what clients expect of any such server (:mod:`ratified_rdf.surfaces._http`): CORS,
gzip, validators with conditional GET, ``/health`` and ``/openapi.json``.

Bounds of ``/sparql``: every reader query runs in a worker process of the query sandbox
(:mod:`ratified_rdf.queries.sandbox`), sealed off the network, checked by its parse tree, and
ended (killed and replaced) past its deadline or its memory ceiling, so an expensive query
costs the server one worker for at most ``--query-timeout`` seconds and never the server's own
memory. One client holds at most ``--per-client`` workers at a time, and a client known to
send quick queries finds one kept for it when heavy clients hold the rest; all
workers together grow by at most ``--query-memory-total``. Request bodies are capped (413), and
so are questions. Answer cards run in the server process, on its own hand-written queries, at a
higher priority than the workers. ``ratified serve`` listens at once (once its warm-up cards
are drawn, a fraction of a second): a reader's graphs are
copied into memory on a thread (the anonymous reader's at start, another's on their first
request, everyone's again after a write), and the store on disk answers their cards until the
copy is ready. A ``/sparql`` query waits for a worker to load the reader's graphs at most its
deadline, then gets 503 with a sentence to retry; the load goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import html
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TypeVar
from urllib.parse import parse_qsl, urlsplit

import click
from pydantic import JsonValue
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryResultsFormat,
    RdfFormat,
    Triple,
    serialize,
)
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import (
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ratified_rdf._errors import BrainError, RatifiedError
from ratified_rdf.audit import AuditError, DetailSidecar, capture
from ratified_rdf.audit.signer import PeriodicSigner, stop_on_sigterm
from ratified_rdf.brain import Brain
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.queries.files import QueryError, load_query
from ratified_rdf.queries.guard import audited_text
from ratified_rdf.queries.offline import NETWORK_SEALED
from ratified_rdf.queries.sandbox import (
    WARM_UP_S,
    QueryReply,
    QueryRequest,
    QuerySandbox,
    SandboxError,
    SandboxLimits,
)
from ratified_rdf.surfaces import _http, section_text, timeline_svg
from ratified_rdf.surfaces.access import AccessFile, AccessList, ReaderGrant, reload_on_sighup
from ratified_rdf.trust import Reader

WEB = Path(__file__).resolve().parent / "web"
YOUNG_OBJECTS = 20_000
"""The collector's youngest-generation threshold in a settled server (Python's default: 700)."""
MAX_QUESTION_CHARS = 500
"""Longer questions are refused: the router reads a sentence, not a document."""
WARM_UP_QUESTIONS = (
    "history of section 1",
    "why does section 1 work this way?",
    "who should I ask about section 1?",
)
"""Questions whose cards a server draws for nobody before the first real one
(:func:`warm_answers`): the kinds people ask most, of a section every brain holds."""
WARM_UP_WAIT_S = 10.0
"""Longest a server waits for its warm-up cards before it listens (it listens then anyway)."""
UNSEALED_WARNING = (
    "; WARNING: this platform cannot seal query workers off the network, so the parse-tree "
    "guard against SERVICE stands alone"
)
MAX_BODY_BYTES = 512 * 1024
"""Largest request body read (a query form or text); a larger one is refused with 413 unread."""
INCOMING_LIMIT = 200
"""How many incoming links a resource page lists."""

_T = TypeVar("_T")

# Offers in order of preference: with ``*/*`` (or no Accept) the first one wins. Aliases
# that clients send in practice (SPARQLWrapper sends application/json, rdflib text/xml) map
# to the same format and are answered with the canonical media type.
_RESULTS: dict[str, tuple[str, QueryResultsFormat]] = {
    "application/sparql-results+json": ("application/sparql-results+json", QueryResultsFormat.JSON),
    "application/sparql-results+xml": ("application/sparql-results+xml", QueryResultsFormat.XML),
    "text/csv": ("text/csv; charset=utf-8", QueryResultsFormat.CSV),
    "text/tab-separated-values": (
        "text/tab-separated-values; charset=utf-8",
        QueryResultsFormat.TSV,
    ),
    "application/json": ("application/sparql-results+json", QueryResultsFormat.JSON),
    "application/xml": ("application/sparql-results+xml", QueryResultsFormat.XML),
    "text/xml": ("application/sparql-results+xml", QueryResultsFormat.XML),
}
_GRAPHS: dict[str, tuple[str, RdfFormat]] = {
    "text/turtle": ("text/turtle", RdfFormat.TURTLE),
    "application/n-triples": ("application/n-triples", RdfFormat.N_TRIPLES),
    "application/ld+json": ("application/ld+json", RdfFormat.JSON_LD),
    "application/rdf+xml": ("application/rdf+xml", RdfFormat.RDF_XML),
    "application/turtle": ("text/turtle", RdfFormat.TURTLE),
    "application/x-turtle": ("text/turtle", RdfFormat.TURTLE),
    "text/n3": ("text/turtle", RdfFormat.TURTLE),
    "text/plain": ("application/n-triples", RdfFormat.N_TRIPLES),
    "application/json": ("application/ld+json", RdfFormat.JSON_LD),
    "application/x-json+ld": ("application/ld+json", RdfFormat.JSON_LD),
    "application/xml": ("application/rdf+xml", RdfFormat.RDF_XML),
}
# The ``format`` parameter's short names (SPARQLWrapper sends format=json, xml, turtle, n3,
# csv, tsv, json-ld, rdf+xml); a full media type is accepted too.
_RESULTS_NAMES = {"json": "application/json", "xml": "application/xml", "csv": "text/csv"}
_RESULTS_NAMES |= {"tsv": "text/tab-separated-values"}
_GRAPH_NAMES = {
    "turtle": "text/turtle",
    "ttl": "text/turtle",
    "n3": "text/turtle",
    "nt": "application/n-triples",
    "ntriples": "application/n-triples",
    "n-triples": "application/n-triples",
    "json-ld": "application/ld+json",
    "jsonld": "application/ld+json",
    "json": "application/ld+json",
    "xml": "application/rdf+xml",
    "rdf": "application/rdf+xml",
    "rdf+xml": "application/rdf+xml",
    "rdfxml": "application/rdf+xml",
}
_PAGE = "text/html"
_DOCS: dict[str, tuple[str, RdfFormat | None]] = {
    _PAGE: ("text/html; charset=utf-8", None),
    "application/xhtml+xml": ("text/html; charset=utf-8", None),
    **{k: _GRAPHS[k] for k in ("text/turtle", "application/ld+json", "application/n-triples")},
    "application/turtle": _GRAPHS["application/turtle"],
    "application/json": _GRAPHS["application/json"],
}
_DOC_NAMES = {"html": _PAGE, **{k: _GRAPH_NAMES[k] for k in ("turtle", "ttl", "nt", "ntriples")}}
_DOC_NAMES |= {"jsonld": "application/ld+json", "json-ld": "application/ld+json"}

_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
_PAGE_HEADERS = {"Content-Security-Policy": _CSP, "X-Content-Type-Options": "nosniff"}


class EndpointError(Exception):
    """A request the server refuses, with the HTTP status and a sentence saying what to do."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = dict(headers or {})


# --- which brain serves a request -----------------------------------------------------------


def _reader(request: Request) -> Brain:
    """The brain (a reader's view of the store) that serves ``request``: the reader its
    bearer token stands for in the access list (tenant, clearance, redaction, and the name the
    audit records), or, without a token, the anonymous reader the server was started as."""
    brain: Brain = request.app.state.brain
    brain.reading.follow()  # a build or review by another process: serve what it made current
    header = request.headers.get("authorization")
    if not header:
        return brain
    scheme, _, token = header.partition(" ")
    access: AccessList | AccessFile | None = request.app.state.access
    grant = access.grant_for(token.strip()) if access and scheme.lower() == "bearer" else None
    if grant is None:
        raise EndpointError(
            401,
            "This server does not accept that token. Send 'Authorization: Bearer <token>' "
            "with a token from its access list, or no Authorization header to read as the "
            "anonymous (public) reader.",
            {"WWW-Authenticate": 'Bearer error="invalid_token"'},
        )
    # Keyed by the whole grant: a token whose clearance the access file lowers is read anew.
    readers: dict[ReaderGrant, Brain] = request.app.state.readers
    if grant not in readers:
        try:
            readers[grant] = brain.read_as(
                Reader(grant.tenant, grant.clearance, grant.redaction, grant.name)
            )
        except BrainError as error:
            raise EndpointError(403, str(error)) from None
    reader = readers[grant]
    reader.reading.follow()
    return reader


# --- content negotiation --------------------------------------------------------------------


def _accept_ranges(header: str) -> list[tuple[str, float]]:
    """The media ranges of an Accept header with their q-values, in the order given."""
    ranges = []
    for part in header.split(","):
        fields = [f.strip() for f in part.split(";")]
        media = fields[0].lower()
        if not media:
            continue
        quality = 1.0
        for param in fields[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        ranges.append((media, quality))
    return ranges


def _negotiate(header: str | None, offers: Sequence[str]) -> str | None:
    """The offer an Accept header prefers, the first offer when there is no header, or
    ``None`` when nothing offered is acceptable.

    Each offer takes the q-value of the most specific range that matches it (``type/sub``
    over ``type/*`` over ``*/*``); among equal q-values the server's order decides.
    """
    if not header or not header.strip():
        return offers[0] if offers else None
    ranges = _accept_ranges(header)
    chosen: str | None = None
    best = 0.0
    for offer in offers:
        kind = offer.split("/")[0]
        specificity, quality = 0, 0.0
        for media, q in ranges:
            level = {offer: 3, f"{kind}/*": 2, "*/*": 1}.get(media, 0)
            if level > specificity:
                specificity, quality = level, q
        if quality > best:
            chosen, best = offer, quality
    return chosen


def _choose(
    offers: Mapping[str, _T],
    names: Mapping[str, str],
    accept: str | None,
    formats: Sequence[str],
) -> _T | None:
    """Pick a format: the first usable ``format`` parameter value, else the Accept header."""
    if formats:
        for value in formats:
            key = names.get(value.strip().lower(), value.strip().lower())
            if key in offers:
                return offers[key]
        return None
    negotiated = _negotiate(accept, list(offers))
    return offers[negotiated] if negotiated is not None else None


def _not_acceptable(form: str, offers: Iterable[tuple[str, object]]) -> EndpointError:
    canonical = sorted({media.split(";")[0] for media, _ in offers})
    return EndpointError(
        406,
        f"No acceptable format for a {form} result: ask for one of {', '.join(canonical)} "
        "(Accept header or format parameter).",
    )


# --- refusals ------------------------------------------------------------------------------


def _update_refused() -> EndpointError:
    # The SPARQL 1.1 Protocol's "Failure Responses" say the applicable codes *include* 400
    # (text that is not legal SPARQL) and 500 (the service failed, or refuses, to execute).
    # An update sent here is neither broken nor a server fault: it is understood and refused
    # by policy, which is HTTP's 403 Forbidden. A 500 would read as a fault worth retrying.
    return EndpointError(
        403,
        "This SPARQL endpoint is read-only: updates (INSERT, DELETE, LOAD, CLEAR, …) are "
        "refused. Change the brain with `ratified build` instead.",
    )


@dataclass(frozen=True)
class _Choice:
    results: tuple[str, QueryResultsFormat] | None
    graph: tuple[str, RdfFormat] | None


def _client_key(request: Request) -> str:
    """Who a request counts against for the fair share of query workers: its bearer token
    (by digest), or else the address it came from."""
    header = request.headers.get("authorization")
    if header:
        return "token:" + hashlib.sha256(header.encode("utf-8", "replace")).hexdigest()
    return "address:" + (request.client.host if request.client else "unknown")


async def _copied(brain: Brain, deadline: float) -> None:
    """Wait until ``brain``'s graphs are copied into memory (started now on a reader's first
    request, or after a write; at once when the copy exists or none is kept, or when the store
    answers meanwhile, as under ``ratified serve``), until ``deadline``
    (``time.monotonic()`` seconds) at most: then 503, saying to retry, while the copy goes on
    for the next request."""
    reading = brain.reading
    pending = reading.copies.prepare(reading.store, brain.read_graphs)
    if pending.done() or reading.copies.meanwhile:  # meanwhile the store itself answers
        return
    waiting = asyncio.wrap_future(pending)
    try:
        await asyncio.wait_for(asyncio.shield(waiting), max(0.0, deadline - time.monotonic()))
    except TimeoutError:
        raise EndpointError(
            503,
            "This server is still copying your graphs into memory (it does so once, on a "
            "reader's first request and after the brain changes), and that took longer than a "
            "request may wait here; try again in a few seconds.",
            {"Retry-After": "5"},
        ) from None
    except Exception:
        return  # a copy that failed: the read that follows tries again, or says why not


async def _ready(request: Request) -> Brain:
    """The reader ``request`` reads as (:func:`_reader`), once its graphs are copied into
    memory: within the query timeout, else 503 saying to retry (:func:`_copied`)."""
    brain = _reader(request)
    await _copied(brain, time.monotonic() + request.app.state.limits.timeout_s)
    return brain


def _sandbox_for(request: Request, brain: Brain) -> QuerySandbox:
    """The query workers for ``brain``'s store, started on first use."""
    return _sandbox_of(request.app)


def _sandbox_of(app: Starlette) -> QuerySandbox:
    """``app``'s query workers, made on first use."""
    state = app.state
    with state.sandbox_lock:
        if state.sandbox is None:
            store = state.brain.reading.store
            state.sandbox = QuerySandbox(
                limits=state.sandbox_limits,
                generation=lambda: state.brain.reading.write_generation,
                # Workers read a checkpoint of a store on disk: ready at once, where loading
                # an export of a large brain's graphs took each of them seconds.
                store=store.path if isinstance(store, OxigraphStore) else None,
            )
        sandbox: QuerySandbox = state.sandbox
    return sandbox


async def _audited_evaluation(
    request: Request,
    brain: Brain,
    sparql: str,
    choice: _Choice,
    deadline: float | None = None,
    dataset: QueryRequest | None = None,
) -> QueryReply:
    """Evaluate ``sparql`` for ``brain``'s reader in the query sandbox, audited as
    ``Brain.query`` is: the record is written before anything runs (no record, no query),
    refusals, timeouts and ended queries end as failed outcomes, and the row count follows in
    a detail sidecar. A long text is recorded by digest and length, not copied."""
    subject: dict[str, JsonValue] = {
        **audited_text(sparql),
        "brain": brain.brain_id,
        "via": "/sparql",
    }
    audit = brain.audit
    stack = contextlib.ExitStack()
    record = None
    if audit is not None:
        record = await asyncio.to_thread(
            stack.enter_context,
            capture(
                audit,
                "query",
                subject,
                tenant=brain.reader.tenant,
                clearance=brain.reader.clearance.value,
                actor=brain.reader.actor,
            ),
        )
    query = QueryRequest(
        sparql=sparql,
        graphs=tuple(brain.read_graphs) if dataset is None else dataset.graphs,
        results_media=choice.results[0] if choice.results else None,
        graph_media=choice.graph[0] if choice.graph else None,
        named=None if dataset is None else dataset.named,
        views=() if dataset is None else dataset.views,
    )
    try:
        reply = await _sandbox_for(request, brain).run(
            _client_key(request), query, brain.reading.export, deadline=deadline
        )
    except BaseException as error:
        if not await asyncio.to_thread(stack.__exit__, type(error), error, error.__traceback__):
            raise
        raise  # pragma: no cover - capture never swallows
    try:
        if audit is not None and record is not None:
            sidecar = DetailSidecar(annotates=record.id, detail={"rows": reply.rows})
            await asyncio.to_thread(audit.append, sidecar)
    finally:
        await asyncio.to_thread(stack.close)
    return reply


def _sandbox_refusal(error: SandboxError) -> EndpointError:
    if error.reason == "not-acceptable":
        offers = _RESULTS.values() if "SELECT" in error.message or "ASK" in error.message else None
        return _not_acceptable(error.message, offers or _GRAPHS.values())
    if error.reason == "update":
        return _update_refused()
    return EndpointError(error.status, error.message, error.headers)


# --- /sparql --------------------------------------------------------------------------------


async def _bounded_body(request: Request) -> bytes:
    """The request body, read up to :data:`MAX_BODY_BYTES`; past that, 413 before the rest is
    read (a declared Content-Length over the limit is refused before anything is read)."""
    too_large = EndpointError(
        413,
        f"The request body is over the {MAX_BODY_BYTES // 1024:,} KiB this endpoint reads; send "
        "a shorter query (split long VALUES lists over several queries).",
        {"Connection": "close"},
    )
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise too_large
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _one(values: Sequence[str], name: str) -> str | None:
    if len(values) > 1:
        raise EndpointError(400, f"Send one {name} per request; this one has {len(values)}.")
    return values[0] if values else None


class _ProtocolRequest(NamedTuple):
    """What a SPARQL Protocol query request asks: the query text, its ``format`` values, its
    ``timeout`` values, and its dataset (the ``default-graph-uri`` and ``named-graph-uri``
    values given, by parameter)."""

    query: str
    formats: list[str]
    timeouts: list[str]
    dataset: dict[str, list[str]]


async def _protocol_request(request: Request) -> _ProtocolRequest:
    """The SPARQL Protocol query request ``request`` makes (GET and HEAD read the URL; POST a
    form or a query body)."""
    url = request.query_params
    if request.method in {"GET", "HEAD"}:
        fields: QueryParams | None = None
        if url.getlist("update"):
            raise _update_refused()
        query = _one(url.getlist("query"), "query")
    else:
        content_type = request.headers.get("content-type", "")
        media, *params = [p.strip() for p in content_type.split(";")]
        media = media.lower()
        if media == "application/x-www-form-urlencoded":
            try:
                body = (await _bounded_body(request)).decode("utf-8")
            except UnicodeDecodeError:
                raise EndpointError(400, "The form body is not valid UTF-8.") from None
            # Parsed here: Starlette's own form parser needs python-multipart.
            fields = QueryParams(parse_qsl(body, keep_blank_values=True))
            if fields.getlist("update") or url.getlist("update"):
                raise _update_refused()
            query = _one(fields.getlist("query"), "query")
        elif media == "application/sparql-query":
            fields = None
            charsets = [p.split("=", 1)[1] for p in params if p.lower().startswith("charset=")]
            if any(c.strip().strip("\"'").lower() not in {"utf-8", "utf8"} for c in charsets):
                raise EndpointError(
                    415, "Send the query as UTF-8 (Content-Type: application/sparql-query)."
                )
            try:
                query = (await _bounded_body(request)).decode("utf-8")
            except UnicodeDecodeError:
                raise EndpointError(400, "The query body is not valid UTF-8.") from None
        elif media == "application/sparql-update":
            raise _update_refused()
        else:
            raise EndpointError(
                415,
                "POST a query as application/x-www-form-urlencoded (query=…) or as "
                f"application/sparql-query; this request was {media or 'untyped'}.",
            )
    if query is None or not query.strip():
        raise EndpointError(
            400,
            "Send a SPARQL query: GET /sparql?query=…, or POST it as a query= form field or "
            "as an application/sparql-query body.",
        )
    dataset: dict[str, list[str]] = {}
    for name in ("default-graph-uri", "named-graph-uri"):
        given = [*url.getlist(name), *(fields.getlist(name) if fields else [])]
        if given:
            dataset[name] = given
    formats = [*url.getlist("format"), *(fields.getlist("format") if fields else [])]
    timeouts = [*url.getlist("timeout"), *(fields.getlist("timeout") if fields else [])]
    return _ProtocolRequest(query, formats, timeouts, dataset)


def _audit_unavailable(error: AuditError) -> EndpointError:
    return EndpointError(
        503, f"{error} The server answers nothing it cannot audit; try again once it can."
    )


def _error_response(error: EndpointError) -> Response:
    return PlainTextResponse(error.message + "\n", error.status, headers=error.headers)


async def sparql_endpoint(request: Request) -> Response:
    """The SPARQL 1.1 Protocol query operation, read-only, over the reader's graphs; without
    a query, the service description or the graph store protocol
    (:mod:`ratified_rdf.surfaces.standard`)."""
    from ratified_rdf.surfaces import standard

    started = time.monotonic()
    surface = await standard.before_query(request)
    if surface is not None:
        return surface
    if _wants_form(request):
        return HTMLResponse(
            (WEB / "sparql.html").read_text(encoding="utf-8"), headers=_PAGE_HEADERS
        )
    try:
        sparql, formats, timeouts, given = await _protocol_request(request)
        try:
            seconds = _http.requested_timeout(timeouts, request.app.state.limits.timeout_s)
        except ValueError as error:
            raise EndpointError(400, str(error)) from None
        deadline = started + seconds
        accept = request.headers.get("accept")
        choice = _Choice(
            results=_choose(_RESULTS, _RESULTS_NAMES, accept, formats),
            graph=_choose(_GRAPHS, _GRAPH_NAMES, accept, formats),
        )
        if choice.results is None and choice.graph is None:
            raise _not_acceptable("query", [*_RESULTS.values(), *_GRAPHS.values()])
        brain = _reader(request)
        # rdflib's SPARQLStore iterates a graph with one triple-pattern SELECT and no paging:
        # those stream, under their own row limit, instead of meeting max_rows (over the
        # reader's graphs, so not when the request names a dataset of its own).
        if not given:
            streamed = await standard.stream_pattern(request, brain, sparql, choice.results)
            if streamed is not None:
                return streamed
        dataset = standard.query_dataset(
            brain, given.get("default-graph-uri"), given.get("named-graph-uri")
        )
        try:
            reply = await _audited_evaluation(request, brain, sparql, choice, deadline, dataset)
        except SandboxError as error:
            server_s = request.app.state.limits.timeout_s
            # The sandbox words a timeout by the server's limit; this one was the client's.
            if seconds < server_s and error.message.startswith("The query ran longer"):
                raise EndpointError(
                    503,
                    f"The query ran past the {seconds:g} s its timeout parameter asked for "
                    "(waiting for a free worker included) and was ended. Send a longer "
                    f"timeout (this server allows up to {server_s:g} s) or make it more "
                    "selective.",
                    error.headers,
                ) from None
            raise _sandbox_refusal(error) from None
        except AuditError as error:
            raise _audit_unavailable(error) from None
    except EndpointError as error:
        return _error_response(error)
    return Response(reply.body, media_type=reply.media_type, headers={"Vary": "Accept"})


def _wants_form(request: Request) -> bool:
    """Whether ``request`` is a browser opening ``/sparql`` without a query (a client taking
    RDF got the service description before this): it gets the query form."""
    url = request.query_params
    if request.method not in {"GET", "HEAD"} or any(
        url.getlist(name) for name in ("query", "update", "format")
    ):
        return False
    accept = request.headers.get("accept")
    return bool(accept) and _negotiate(accept, [_PAGE]) == _PAGE


# --- the answer API -------------------------------------------------------------------------


def _api_error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


async def api_ask(request: Request) -> Response:
    """``GET /api/ask?q=…``: the answer card as JSON (the ``Answer`` model).

    With ``&timeline=svg``, a card that has a timeline also carries it drawn, as the SVG text
    ``timeline_svg`` beside the model's fields (what the page shows, and what
    ``ratified ask --plot`` writes): one request, one answer, no query more."""
    question = request.query_params.get("q", "").strip()
    if not question:
        return _api_error(400, "Ask a question: GET /api/ask?q=your+question.")
    if len(question) > MAX_QUESTION_CHARS:
        return _api_error(
            400, f"Keep the question under {MAX_QUESTION_CHARS} characters; it is one sentence."
        )
    drawing = request.query_params.get("timeline")
    if drawing not in (None, "svg"):
        return _api_error(400, "The timeline is drawn as SVG: add &timeline=svg, or leave it out.")
    brain = await _ready(request)
    answer = await run_in_threadpool(brain.ask, question)
    body = answer.model_dump(mode="json")
    if drawing and answer.timeline is not None:
        body["timeline_svg"] = timeline_svg.timeline_svg(answer.timeline)
    return JSONResponse(body)


async def api_holdings(request: Request) -> Response:
    """``GET /api/holdings``: what the graph holds, as an answer card in JSON."""
    brain = await _ready(request)
    answer = await run_in_threadpool(brain.holdings)
    return JSONResponse(answer.model_dump(mode="json"))


# --- dereferenceable IRIs -------------------------------------------------------------------


def _rest_of(request: Request, prefix: str) -> str:
    """The path after ``prefix``, exactly as sent (percent-escapes kept, as IRIs keep them)."""
    raw = request.scope.get("raw_path")
    path = raw.decode("latin-1") if raw else request.url.path
    return path.split(prefix, 1)[1] if prefix in path else ""


@dataclass(frozen=True)
class _Resource:
    iri: str
    triples: list[Triple]
    incoming: list[tuple[str, str]]


def _resource(brain: Brain, rest: str) -> _Resource:
    """What the reader's graphs say about ``ID + rest``; 404 when they say nothing."""
    iri = v.ID + rest
    try:
        node = NamedNode(iri)
    except ValueError:
        raise EndpointError(404, f"{iri} is not an IRI this brain could hold.") from None
    from ratified_rdf.surfaces import standard

    # Runs, named graphs and the brain are described in the catalog, which no query reads.
    triples = brain.describe(iri) + standard.scoped_description(brain, iri)
    rows = brain.query(
        f"SELECT ?s ?p WHERE {{ ?s ?p {node} }} ORDER BY ?p ?s LIMIT {INCOMING_LIMIT}"
    ).rows
    incoming = [(row["s"].value, row["p"].value) for row in rows]
    if not triples and not incoming:
        raise EndpointError(
            404,
            f"The brain knows nothing about {iri}. Check the link, or ask a question at / to "
            "find the resource you want.",
        )
    return _Resource(iri, triples, incoming)


async def resource(request: Request) -> Response:
    """``GET /id/…``: the resource itself, so 303 See Other to its description.

    The IRIs name things that are not documents (a revision, a section, a person), and they
    are slash IRIs, so per "Cool URIs for the Semantic Web" (§4.3, 303 URIs forwarding to one
    generic document) the server does not answer 200 for the thing; it redirects to
    ``/doc/…``, one document about it that negotiates HTML, Turtle, N-Triples or JSON-LD.
    An unknown IRI gets its 404 here, not after a redirect.
    """
    rest = _rest_of(request, "/id/")
    try:
        await run_in_threadpool(_resource, await _ready(request), rest)
    except EndpointError as error:
        return _page_or_text_error(request, error)
    target = "/doc/" + rest + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(target, status_code=303, headers={"Vary": "Accept"})


async def document(request: Request) -> Response:
    """``GET /doc/…``: the description of one resource, by content negotiation."""
    rest = _rest_of(request, "/doc/")
    try:
        formats = request.query_params.getlist("format")
        chosen = _choose(_DOCS, _DOC_NAMES, request.headers.get("accept"), formats)
        if chosen is None:
            raise _not_acceptable("resource description", _DOCS.values())
        found = await run_in_threadpool(_resource, await _ready(request), rest)
    except EndpointError as error:
        return _page_or_text_error(request, error)
    media, rdf_format = chosen
    headers = {"Vary": "Accept", "Link": f'<{found.iri}>; rel="describes"'}
    if rdf_format is None:
        page = await run_in_threadpool(_resource_page, found, rest, _reader(request))
        return HTMLResponse(page, headers={**headers, **_PAGE_HEADERS})
    body = serialize(found.triples, format=rdf_format, prefixes=v.PREFIXES)
    return Response(body, media_type=media, headers=headers)


def _page_or_text_error(request: Request, error: EndpointError) -> Response:
    if _negotiate(request.headers.get("accept"), ["text/plain", _PAGE]) == _PAGE:
        body = (
            f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{error.status}"
            "</title><link rel='stylesheet' href='/static/style.css'></head><body><main>"
            f"<p class='error'>{html.escape(error.message)}</p><p><a href='/'>Ask a question"
            "</a></p></main></body></html>"
        )
        return HTMLResponse(body, error.status, headers={**error.headers, **_PAGE_HEADERS})
    return _error_response(error)


_PREFIX_BY_LENGTH = sorted(v.PREFIXES.items(), key=lambda item: -len(item[1]))
_LABELS = (v.RDFS + "label", v.DCTERMS + "title", v.FOAF + "name")


def _compact(iri: str) -> str:
    for prefix, namespace in _PREFIX_BY_LENGTH:
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def _fallback_label(iri: str) -> str:
    """Words for an IRI no label was found for: a brain IRI by its path, a vocabulary term
    by its prefixed name, a public page by its host (never the address itself)."""
    if iri.startswith(v.ID):
        return iri[len(v.ID) :]
    compact = _compact(iri)
    if compact != iri:
        return compact
    parts = urlsplit(iri)
    return f"page at {parts.netloc}" if parts.netloc else iri


def _link(iri: str, labels: Mapping[str, str] | None = None) -> str:
    """An IRI as a link whose text is its label: brain IRIs to their page here, others
    (public pages) as they are."""
    text = html.escape((labels or {}).get(iri) or _fallback_label(iri))
    title = f' title="{html.escape(iri)}"'
    if iri.startswith(v.ID):
        return f'<a href="/id/{html.escape(iri[len(v.ID) :])}"{title}>{text}</a>'
    if urlsplit(iri).scheme in {"http", "https"}:
        return f'<a href="{html.escape(iri)}"{title} rel="noopener noreferrer">{text}</a>'
    return text


def _term_html(term: object, labels: Mapping[str, str] | None = None) -> str:
    if isinstance(term, NamedNode):
        return _link(term.value, labels)
    if isinstance(term, BlankNode):
        return html.escape(str(term))
    if isinstance(term, Literal):
        text = f'<span class="literal">{html.escape(term.value)}</span>'
        if term.language:
            return f'{text} <span class="muted">@{html.escape(term.language)}</span>'
        datatype = term.datatype.value
        if datatype != v.XSD + "string":
            return f'{text} <span class="muted">{html.escape(_compact(datatype))}</span>'
        return text
    return html.escape(str(term))


_LABEL_QUERY = """PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>
SELECT ?s ?label ?title ?name ?number WHERE {
  VALUES ?s { %s }
  OPTIONAL { ?s rdfs:label ?label }
  OPTIONAL { ?s dcterms:title ?title }
  OPTIONAL { ?s foaf:name ?name }
  OPTIONAL { ?s rr:sectionNumber ?number }
}"""

_ANCHOR_QUERY = """PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>
SELECT ?section ?number ?heading ?anchor ?appendix WHERE {
  %s rr:hasSection ?section .
  ?section rr:sectionNumber ?number ; dcterms:title ?heading .
  OPTIONAL { ?section rr:anchor ?anchor }
  OPTIONAL { ?section rr:isAppendix ?appendix }
}"""


def _document_of(iri: str) -> str:
    """The document a section IRI belongs to, by name: ``rfc8446``, ``draft-x-y-11``."""
    parts = iri[len(v.ID) :].split("/section/", 1)[0].split("/") if iri.startswith(v.ID) else []
    if len(parts) >= 2 and parts[0] == "doc":
        name = "-".join(parts[1:3])
        return re.sub(r"^rfc(\d+)$", r"RFC \1", name)
    return ""


def _section_label(iri: str, number: str, heading: str) -> str:
    return " ".join(w for w in (_document_of(iri), f"§{number}", heading) if w)


def _labels_of(brain: Brain, iris: Iterable[str]) -> dict[str, str]:
    """A readable label for each brain IRI the graph labels (a section by number and title)."""
    wanted = sorted({i for i in iris if i.startswith(v.ID)})[:400]
    if not wanted:
        return {}
    values = " ".join(str(NamedNode(i)) for i in wanted)
    labels: dict[str, str] = {}
    for row in brain.query(_LABEL_QUERY % values).rows:
        words = [row.get(k) for k in ("label", "title", "name")]
        found = next((w.value for w in words if w is not None), None)
        number = row.get("number")
        if found and number is not None:
            found = _section_label(row["s"].value, number.value, found)
        if found:
            labels.setdefault(row["s"].value, found)
    return labels


def _kramdown_anchor(heading: str) -> str:
    """The anchor kramdown gives a heading that names none: lower case, words joined by -."""
    kept = re.sub(r"[^a-z0-9 _-]", "", heading.lower())
    return re.sub(r"\s+", "-", kept.strip())


def _anchor_resolver(brain: Brain, section_iri: str) -> section_text.Resolver:
    """Cross references in a section's text (``{{cipher-suites}}``) to the sections of the
    same document they name, by explicit ``{#anchor}`` or by the anchor kramdown makes of
    the heading; a reference to anything else is left to the renderer."""
    document = section_iri.split("/section/", 1)[0]
    targets: dict[str, tuple[str, str]] = {}
    if document != section_iri:
        rows = brain.query(_ANCHOR_QUERY % NamedNode(document)).rows
        for pass_explicit in (True, False):
            for row in rows:
                iri = row["section"].value
                appendix = row.get("appendix") is not None and row["appendix"].value == "true"
                words = f"{'Appendix' if appendix else 'Section'} {row['number'].value}"
                href = "/id/" + iri[len(v.ID) :] if iri.startswith(v.ID) else None
                anchor = row.get("anchor")
                key = anchor.value if pass_explicit and anchor is not None else None
                if not pass_explicit:
                    key = _kramdown_anchor(row["heading"].value)
                if key and key not in targets and href:
                    targets[key] = (words, href)

    def resolve(target: str) -> tuple[str, str | None] | None:
        return targets.get(target)

    return resolve


def _resource_page(found: _Resource, rest: str, brain: Brain | None = None) -> str:
    """A small HTML page: the resource's label, its text (a section's, rendered for reading),
    public pages, triples and incoming links, every link worded by its label."""
    title = next(
        (
            t.object.value
            for t in found.triples
            if t.predicate.value in _LABELS and not isinstance(t.object, Triple)
        ),
        None,
    )
    number = next(
        (
            t.object.value
            for t in found.triples
            if t.predicate.value == v.RR + "sectionNumber" and not isinstance(t.object, Triple)
        ),
        None,
    )
    label = (
        _section_label(found.iri, number, title)
        if title and number
        else title or _fallback_label(found.iri)
    )
    mentioned = [found.iri, *(s for s, _ in found.incoming)]
    mentioned += [t.object.value for t in found.triples if isinstance(t.object, NamedNode)]
    labels = _labels_of(brain, mentioned) if brain is not None else {}
    pages = [
        t.object.value
        for t in found.triples
        if t.predicate.value == v.FOAF + "page" and isinstance(t.object, NamedNode)
    ]
    public = "".join(
        f'<li><a href="{html.escape(p)}" rel="noopener noreferrer">'
        f"{html.escape(label)} at {html.escape(urlsplit(p).netloc or 'its public page')}"
        "</a></li>"
        for p in pages
    )
    texts = [
        t.object.value
        for t in found.triples
        if t.predicate.value == v.RR + "text" and isinstance(t.object, Literal)
    ]
    resolve = _anchor_resolver(brain, found.iri) if brain is not None and texts else None
    rendered = "".join(section_text.to_html(text, resolve) for text in texts)
    rows = "".join(
        f"<tr><td>{_link(t.predicate.value)}</td><td>"
        + (
            '<a href="#text">the text above</a>'
            if t.predicate.value == v.RR + "text"
            else _term_html(t.object, labels)
        )
        + "</td></tr>"
        for t in sorted(found.triples, key=lambda t: (t.predicate.value, str(t.object)))
    )
    incoming = "".join(
        f"<tr><td>{_link(s, labels)}</td><td>{_link(p)}</td></tr>" for s, p in found.incoming
    )
    more = (
        f"<p class='muted'>The first {INCOMING_LIMIT} are listed.</p>"
        if len(found.incoming) >= INCOMING_LIMIT
        else ""
    )
    doc = "/doc/" + html.escape(rest)
    sections = [
        f'<h2 id="text">Text</h2>{rendered}' if rendered else "",
        f'<h2>Public page</h2><ul class="links">{public}</ul>' if public else "",
        "<h2>What the graph says</h2>",
        _table(("property", "value"), rows or '<tr><td colspan="2">Nothing as subject.</td></tr>'),
    ]
    if incoming:
        sections += ["<h2>Linked from</h2>", _table(("resource", "property"), incoming), more]
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(label)} · ratified-rdf</title>
<link rel="stylesheet" href="/static/style.css">
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="alternate" type="text/turtle" href="{doc}?format=turtle">
<link rel="alternate" type="application/ld+json" href="{doc}?format=jsonld">
</head><body><main class="resource">
<p><a href="/">← Ask a question</a></p>
<h1>{html.escape(label)}</h1>
<p class="iri"><code>{html.escape(found.iri)}</code></p>
{"".join(sections)}
<p class="muted">Also as <a href="{doc}?format=turtle">Turtle</a>,
<a href="{doc}?format=nt">N-Triples</a>, <a href="{doc}?format=jsonld">JSON-LD</a>.</p>
</main></body></html>
"""


def _table(header: tuple[str, str], body: str) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    table = f'<table class="triples"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    # The wrapper scrolls a wide table on a narrow screen instead of the whole page.
    return f'<div class="table-wrap">{table}</div>'


# --- the page -------------------------------------------------------------------------------


async def index(request: Request) -> Response:
    """``GET /``: the question page."""
    return HTMLResponse((WEB / "index.html").read_text(encoding="utf-8"), headers=_PAGE_HEADERS)


async def query_file(request: Request) -> Response:
    """``GET /queries/<name>.rq``: the text of one of the library's query files, as every
    card's "how this was computed" names them (the card view's queries link to the full-path
    query that reproduces their rows). No brain is read."""
    try:
        query = load_query(request.path_params["name"])
    except QueryError as error:
        return PlainTextResponse(str(error), status_code=404)
    return PlainTextResponse(query.text, media_type="application/sparql-query")


# --- the app and the command ----------------------------------------------------------------


async def _audit_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, AuditError)
    refused = _audit_unavailable(error)
    if request.url.path.startswith("/api/"):
        return _api_error(refused.status, refused.message)
    return _error_response(refused)


async def _endpoint_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, EndpointError)
    if request.url.path.startswith("/api/"):
        response = _api_error(error.status, error.message)
        response.headers.update(error.headers)
        return response
    return _error_response(error)


async def _internal_error(request: Request, error: Exception) -> Response:
    message = (
        f"The server failed on this request ({type(error).__name__}: {error}). This is a bug "
        "in ratified-rdf; the server log has the details."
    )
    if request.url.path.startswith("/api/"):
        return _api_error(500, message)
    return PlainTextResponse(message + "\n", 500)


def default_query_workers() -> int:
    """Query workers by default: two per CPU, at least four. They run at a lower priority than
    the server and spend much of a query's life waiting on it, so more workers than CPUs keep
    one slow query from holding up everyone else's; each holds its own copy of the graphs."""
    return max(4, 2 * (os.cpu_count() or 1))


def create_app(
    brain: Brain,
    *,
    query_timeout_s: float = 10.0,
    max_rows: int = 10_000,
    query_workers: int | None = None,
    per_client: int | None = None,
    query_memory_mib: int = 1_024,
    access: AccessList | AccessFile | None = None,
    max_stream_rows: int = 1_000_000,
    query_memory_total_mib: int | None = None,
    stream_deadline_s: float = 300.0,
    stream_min_bytes_s: float = 4_096,
    stream_window_s: float = 10.0,
    cors_origins: Sequence[str] = (),
) -> Starlette:
    """The ASGI app serving ``brain``: run it with uvicorn.

    ``query_timeout_s``, ``max_rows`` and ``query_memory_mib`` bound each ``/sparql`` query
    (the time includes waiting for a worker; memory is what its worker may grow by);
    ``query_workers`` is how many run at once (default :func:`default_query_workers`) and
    ``per_client`` how many of them one client may hold (default one: a client's further
    queries wait for its own turn, so one client never holds more than its share).
    ``access`` maps bearer tokens to readers (an :class:`AccessFile` is read again when it
    changes); without a token a request reads as ``brain``.
    ``query_memory_total_mib`` is how far all workers together may grow (default
    ``query_memory_mib``: the largest query is ended past it).
    ``max_stream_rows`` bounds what streams past ``max_rows`` instead (a whole graph from the
    graph store protocol, a triple pattern's rows): see :mod:`ratified_rdf.surfaces.standard`.
    A stream ends ``stream_deadline_s`` after it started, and once it has waited
    ``stream_window_s`` on a client reading less than ``stream_min_bytes_s`` bytes a second;
    a client (a token, else an address) streams one answer at a time.
    ``cors_origins`` are the origins browser pages may query from (``*`` for any, ``none``
    for none); by default any when there is no ``access`` list, none when there is.
    """
    from ratified_rdf.surfaces import standard

    workers = query_workers if query_workers is not None else default_query_workers()
    if query_timeout_s <= 0:
        raise ValueError("query_timeout_s must be a positive number of seconds.")
    if max_rows < 1:
        raise ValueError("max_rows must be at least 1.")
    if workers < 1:
        raise ValueError("query_workers must be at least 1.")
    limits = SandboxLimits(
        timeout_s=query_timeout_s,
        max_rows=max_rows,
        memory_mib=query_memory_mib,
        workers=workers,
        per_client=per_client if per_client is not None else 1,
        total_memory_mib=query_memory_total_mib,
    )
    app = Starlette(
        routes=[
            Route("/", index, methods=["GET"]),
            Route("/sparql", sparql_endpoint, methods=["GET", "POST"]),
            Route("/api/ask", api_ask, methods=["GET"]),
            Route("/api/holdings", api_holdings, methods=["GET"]),
            Route("/id/{path:path}", resource, methods=["GET"]),
            Route("/doc/{path:path}", document, methods=["GET"]),
            Route("/queries/{name}.rq", query_file, methods=["GET"]),
            Route("/health", _http.health, methods=["GET"]),
            Route("/openapi.json", _http.openapi_json, methods=["GET"]),
            *standard.routes(),
            Mount("/static", StaticFiles(directory=WEB), name="static"),
        ],
        middleware=_http.middleware(
            _http.cors_origins(cors_origins, token_protected=access is not None)
        ),
        exception_handlers={
            AuditError: _audit_error,
            EndpointError: _endpoint_error,
            Exception: _internal_error,
        },
    )
    app.state.brain = brain
    app.state.access = access
    app.state.readers = {}
    app.state.limits = limits
    app.state.sandbox = None
    app.state.sandbox_limits = limits
    app.state.sandbox_lock = threading.Lock()
    standard.install(
        app,
        max_stream_rows=max_stream_rows,
        deadline_s=stream_deadline_s,
        min_bytes_s=stream_min_bytes_s,
        window_s=stream_window_s,
    )
    return app


def warm_query_workers(app: Starlette, settled: threading.Thread | None = None) -> threading.Thread:
    """Start ``app``'s query workers on a thread of its own (returned), so the first queries
    find them ready instead of spending their time on it: one worker at once, ready for the
    anonymous reader's graphs (on a store on disk: its checkpoint opened, a first query
    answered); then, once ``settled`` (the server's own start: :func:`settle_in_background`)
    has ended, the export the workers' copies in memory load from and the other workers, one
    at a time. Until then no worker copies anything into memory (they answer from their
    checkpoints), so the first answers, ``/api/ask``'s and ``/sparql``'s, do not share the
    processors with that work. Queries that come meanwhile wait for a worker as usual."""
    brain: Brain = app.state.brain
    sandbox, export, graphs = _sandbox_of(app), _exported_once(brain), brain.read_graphs
    if settled is not None:
        sandbox.hold_copies()

    async def warming() -> None:
        first = QueryRequest("ASK {}", tuple(graphs), "application/sparql-results+json", None)
        with contextlib.suppress(Exception):  # a failed start is retried by the next query
            far = time.monotonic() + WARM_UP_S
            await sandbox.run("warm-up:first", first, export, deadline=far, fresh=True)
        if settled is not None:
            settled.join()  # this loop runs nothing else meanwhile: it may block
            sandbox.allow_copies()
        await sandbox.warm(graphs, export)

    thread = threading.Thread(target=asyncio.run, args=(warming(),), name="ratified-warm")
    thread.daemon = True
    thread.start()
    return thread


def _exported_once(brain: Brain) -> Callable[[Sequence[str]], bytes]:
    """``brain``'s export (:meth:`Reading.export`), made once for every worker warmed up
    with the same graphs at the same write generation: each worker was sent an export of its
    own, and making them all at once held the server's start back."""
    made: dict[tuple[object, ...], bytes] = {}
    lock = threading.Lock()

    def export(graphs: Sequence[str]) -> bytes:
        key = (brain.reading.write_generation, *graphs)
        with lock:  # the first worker's export is the others' too
            if key not in made:
                made.clear()
                made[key] = brain.reading.export(graphs)
            return made[key]

    return export


def settle_in_background(
    brain: Brain, answers_warm: threading.Event | None = None
) -> threading.Thread:
    """Settle ``brain`` for serving (:func:`settle_for_serving`) on a thread of its own
    (returned), so that the server answers meanwhile: first the lookups the first questions
    use and the warm-up cards (:func:`warm_answers`; then ``answers_warm`` is set, whether
    they were drawn or not), then, once the copy of the reader's graphs in memory is made
    (``Brain.open`` without ``wait_for_copy``; the store on disk answers until then), the
    frozen heap."""

    def settle() -> None:
        reading = brain.reading
        try:
            try:
                reading.read_lookups()
                warm_answers(brain)
                _warm_request_path()
            finally:
                if answers_warm is not None:
                    answers_warm.set()
            reading.copies.prepare(reading.store, brain.read_graphs).result()
            settle_for_serving(brain)
        except Exception as error:  # the server goes on; each question builds what it needs
            click.echo(f"Could not prepare the brain for the first questions: {error}", err=True)

    thread = threading.Thread(target=settle, name="ratified-settle", daemon=True)
    thread.start()
    return thread


def warm_answers(brain: Brain) -> None:
    """Draw the cards of :data:`WARM_UP_QUESTIONS` for ``brain``'s reader and serialise them
    as ``/api/ask`` does, answering nobody, so that the first real question finds the answer
    path warm: the gazetteer and its speller, every question type's module, the serialisers
    of the answer models, a session's worker threads. Without it the first ask did all that
    and took several times the tenth. Nothing is audited: nothing is asked, and no answer
    leaves the server. A card that cannot be drawn is skipped (the question will say why)."""
    from ratified_rdf.answers import asking

    reading = brain.reading
    session = reading.session()
    for question in WARM_UP_QUESTIONS:
        with contextlib.suppress(RatifiedError):
            drawn = asking.routed(question, None, reading.indexes)(session)
            asking.with_trust(session, drawn).model_dump(mode="json")


def _warm_request_path() -> None:
    """Hand a call to a worker thread once as a request does (Starlette's
    ``run_in_threadpool``, through anyio): the first one imports anyio's event loop backend,
    which took the first request most of its time."""
    import anyio
    import anyio.to_thread

    anyio.run(anyio.to_thread.run_sync, lambda: None)


def settle_for_serving(brain: Brain) -> None:
    """Build what the first questions would (:meth:`Reading.read_lookups`: the reader's heading
    index and the rows why cards look details up in; ``Brain.open`` with ``in_memory`` has made
    the copy already), then freeze the heap for Python's collector and let the youngest
    generation grow before it is collected.

    A brain in a server keeps about a hundred thousand long-lived objects (the heading index,
    kept rows), and a card allocates enough to set off collections during most asks; every
    full collection walked them all, with the GIL held. Frozen, the collector leaves them
    alone, and cards are answered measurably faster (benchmarks/RESULTS.md). Objects made later
    (copies after a write) are collected as usual. A card's objects are freed by reference
    counting once it is answered, so with room for many more young objects than the default
    the collector almost never runs during a card, and garbage in cycles still goes within
    :data:`YOUNG_OBJECTS` allocations."""
    brain.reading.read_lookups()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS, *gc.get_threshold()[1:])


@click.command("serve")
@click.option(
    "--store",
    default="brain",
    show_default=True,
    envvar="RATIFIED_STORE",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the embedded Oxigraph store holding the brain.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    default=8000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on (0: any free port).",
)
@click.option(
    "--query-timeout",
    default=10.0,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a /sparql query may run before it is abandoned with 503.",
)
@click.option(
    "--max-rows",
    default=10_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Most rows (or triples) a /sparql query may return; more is refused with 422.",
)
@click.option(
    "--max-stream-rows",
    default=1_000_000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Most rows a streamed answer may hold (a graph from the Graph Store Protocol, a bare "
    "triple pattern such as rdflib's SPARQLStore sends); counted first, more is refused with "
    "422.",
)
@click.option(
    "--query-memory",
    default=1_024,
    show_default=True,
    type=click.IntRange(min=16),
    help="MiB a /sparql query's worker may grow by; past that it is ended with 503.",
)
@click.option(
    "--query-memory-total",
    type=click.IntRange(min=16),
    help="MiB all /sparql workers together may grow by; past it the largest query is ended "
    "with 503 [default: --query-memory].",
)
@click.option(
    "--query-workers",
    type=click.IntRange(min=1),
    help="Worker processes for /sparql queries [default: two per CPU, at least four].",
)
@click.option(
    "--per-client",
    type=click.IntRange(min=1),
    help="Workers one client (token or address) may hold at once [default: 1].",
)
@click.option(
    "--access",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Access list (TOML): bearer tokens' SHA-256 mapped to tenant, clearance, name and "
    "expiry; read again when it changes or on SIGHUP. Requests without a token read as the "
    "anonymous public reader.",
)
@click.option(
    "--in-memory/--on-disk",
    default=True,
    show_default=True,
    help="Answer from a copy of each reader's graphs in memory (made at start for the "
    "anonymous reader, on first use for others; it takes time and memory in proportion to "
    "the brain), or straight from the store on disk.",
)
@click.option(
    "--cors-origin",
    "cors_origin",
    multiple=True,
    metavar="ORIGIN",
    help="An origin (https://host[:port]) whose pages may query this server from a browser; "
    "repeat for more, * for any, none for none [default: any origin without --access, none "
    "with it].",
)
def serve_command(
    store: Path,
    host: str,
    port: int,
    query_timeout: float,
    max_rows: int,
    max_stream_rows: int,
    query_memory: int,
    query_memory_total: int | None,
    query_workers: int | None,
    per_client: int | None,
    access: Path | None,
    in_memory: bool,
    cors_origin: tuple[str, ...],
) -> None:
    """Serve the brain over HTTP: a SPARQL endpoint, the answer API, resource pages and a
    question page."""
    import uvicorn

    try:
        _http.cors_origins(cors_origin, token_protected=access is not None)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--cors-origin") from None
    try:
        grants = AccessFile(access) if access is not None else None
        # The CLI's log opening: one `Note:` line when signing matters, not the log's warning.
        from ratified_rdf.surfaces.cli import _audit_log

        with _audit_log(store) as log:
            # The copy in memory is made on a thread: the store on disk answers until it is
            # ready.
            brain = Brain.open(store, in_memory=in_memory, audit=log, wait_for_copy=False)
    except RatifiedError as error:
        raise click.ClickException(str(error)) from None
    with brain:
        app = create_app(
            brain,
            query_timeout_s=query_timeout,
            max_rows=max_rows,
            max_stream_rows=max_stream_rows,
            query_memory_mib=query_memory,
            query_memory_total_mib=query_memory_total,
            query_workers=query_workers,
            per_client=per_client,
            access=grants,
            cors_origins=cors_origin,
        )
        answers_warm = threading.Event()
        app.state.settling = settle_in_background(brain, answers_warm)
        warm_query_workers(app, settled=app.state.settling)
        # Listen once the first question finds the answer path warm (a fraction of a second),
        # so that the first ask is answered as fast as the tenth: the one before it, answered
        # while the warm-up drew its cards on another thread, took several times as long.
        answers_warm.wait(WARM_UP_WAIT_S)
        where = (
            "a copy in memory, made now (the store on disk answers until it is ready)"
            if in_memory
            else "the store on disk"
        )
        click.echo(
            f"Serving brain '{brain.brain_id}' from {store} at http://{host}:{port}/ "
            f"(answers from {where}; SPARQL at /sparql; queries stop after "
            f"{query_timeout:g} s, {max_rows:,} rows or {query_memory:,} MiB"
            f"{'' if NETWORK_SEALED else UNSEALED_WARNING}).",
            err=True,
        )
        # A tree head every 30 s or 1,000 records, and a last one on SIGTERM or SIGINT.
        with stop_on_sigterm(), PeriodicSigner(brain.audit), reload_on_sighup(grants):
            uvicorn.run(app, host=host, port=port, log_level="info")


__all__ = [
    "EndpointError",
    "create_app",
    "default_query_workers",
    "serve_command",
    "settle_for_serving",
    "settle_in_background",
    "warm_answers",
    "warm_query_workers",
]

if __name__ == "__main__":
    serve_command()
