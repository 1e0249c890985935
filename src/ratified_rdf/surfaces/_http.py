"""The HTTP conventions of ``ratified serve`` that clients expect of any SPARQL server:
CORS for pages on other origins, Brotli and gzip, validators (ETag, Last-Modified) with
conditional GET, a ``timeout`` parameter, ``/health`` and an OpenAPI description at
``/openapi.json``.

Answers are fixed by the brain's state and the reader: the same request, by the same reader,
against the same run and store generation, gets the same bytes. So a validator is computed
from those before the app runs, and a conditional GET that matches is answered 304 without
running the query at all.
"""

from __future__ import annotations

import hashlib
import math
import time
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from email.utils import format_datetime, parsedate_to_datetime
from functools import cache
from typing import Any, Protocol
from urllib.parse import urlsplit

import brotli
from starlette.datastructures import Headers, MutableHeaders
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.middleware.gzip import GZipResponder, IdentityResponder
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ratified_rdf._errors import RatifiedError
from ratified_rdf._version import __version__
from ratified_rdf.surfaces.access import AccessFile

GZIP_LEVEL = 6
"""zlib's level for compressed answers: most of level 9's gain for much less CPU."""
GZIP_MINIMUM_BYTES = 1_024
"""Smaller answers go uncompressed: the header costs more than it saves."""
BROTLI_QUALITY = 5
"""Brotli's quality for compressed answers: smaller than gzip's level above at a like CPU
cost (benchmarks/RESULTS.md); the top qualities are for files compressed once, not answers."""
ENCODINGS = ("br", "gzip")
"""The content codings the server sends, preferred first when a client takes both alike."""
CORS_MAX_AGE_S = 600
"""How long a browser may keep a preflight's answer."""

# Paths whose GET answers depend only on the request, the reader and the brain's state.
_VALIDATED: tuple[str, ...] = ("/sparql", "/api/ask", "/api/holdings", "/doc/", "/void")
_VALIDATED += ("/.well-known/void", "/ontology", "/shapes")
_CORS_HEADERS = [
    "Accept",
    "Authorization",
    "Content-Type",
    "If-None-Match",
    "If-Modified-Since",
]
_EXPOSED = ["ETag", "Last-Modified", "Retry-After", "Link", "Content-Length"]


# --- CORS -----------------------------------------------------------------------------------


def cors_origins(given: Sequence[str], *, token_protected: bool) -> list[str]:
    """The origins a browser page may query from: ``given`` (``*`` for any, ``none`` for
    none), else any for a server without an access list (its anonymous reads are public) and
    none for a token-protected one. Raises ``ValueError`` naming a value that is no origin."""
    if not given:
        return [] if token_protected else ["*"]
    origins: list[str] = []
    for value in given:
        origin = value.strip().rstrip("/")
        if origin.lower() == "none":
            continue
        if origin == "*":
            return ["*"]
        parts = urlsplit(origin)
        if parts.scheme not in {"http", "https"} or not parts.netloc or parts.path:
            raise ValueError(
                f"{value!r} is not an origin: give a scheme and host (and port if any), such "
                "as https://example.org or http://localhost:3000, or * for any origin."
            )
        origins.append(origin)
    return origins


def middleware(origins: Sequence[str]) -> list[Middleware]:
    """The middleware stack, outermost first: CORS (when any origin is allowed), compression
    (Brotli or gzip), then the validators. Streamed answers compress themselves
    (``standard._Stream``), so the byte-rate floor they keep counts the bytes that go on the
    wire; the compression middleware passes them on."""
    stack: list[Middleware] = []
    if origins:
        stack.append(
            Middleware(
                CORSMiddleware,
                allow_origins=list(origins),
                allow_methods=["GET", "HEAD", "POST", "OPTIONS"],
                allow_headers=_CORS_HEADERS,
                expose_headers=_EXPOSED,
                max_age=CORS_MAX_AGE_S,
            )
        )
    stack.append(Middleware(Compression))
    stack.append(Middleware(Validators))
    return stack


# --- compression ----------------------------------------------------------------------------


def content_coding(headers: Headers) -> str | None:
    """The coding to send for the request's Accept-Encoding: ``"br"`` or ``"gzip"``, whichever
    the client gives the higher q (Brotli on a tie), or ``None`` for the answer as it is.

    RFC 9110: a coding named with q=0 is refused, ``*`` stands for the codings not named, and
    a q that is not a number counts as 0, so a malformed header never earns a coding."""
    weights: dict[str, float] = {}
    for part in headers.get("accept-encoding", "").split(","):
        coding, *params = [p.strip() for p in part.split(";")]
        coding = coding.lower()
        if not coding:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
                if not math.isfinite(q):
                    q = 0.0
        weights["gzip" if coding == "x-gzip" else coding] = q
    best, best_q = None, 0.0
    for coding in ENCODINGS:
        q = weights.get(coding, weights.get("*", 0.0))
        if q > best_q:
            best, best_q = coding, q
    return best


class Compressor(Protocol):
    """What a stream's producer compresses its chunks with: zlib's and Brotli's objects."""

    def compress(self, data: bytes, /) -> bytes: ...
    def flush(self) -> bytes: ...


class _BrotliStream:
    def __init__(self) -> None:
        self._compressor = brotli.Compressor(quality=BROTLI_QUALITY)

    def compress(self, data: bytes, /) -> bytes:
        return bytes(self._compressor.process(data))

    def flush(self) -> bytes:
        return bytes(self._compressor.finish())


def compressor(coding: str) -> Compressor:
    """A fresh compressor writing ``coding`` (``"br"`` or ``"gzip"``): ``flush`` ends it."""
    if coding == "br":
        return _BrotliStream()
    if coding == "gzip":
        return zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    raise ValueError(f"No compressor for the content coding {coding!r}.")


class _BrotliResponder(IdentityResponder):
    """Starlette's gzip responder with Brotli in its place: the same rules on small answers,
    answers already encoded and excluded media types, so the two codings cannot disagree."""

    content_encoding = "br"

    def __init__(self, app: ASGIApp) -> None:
        super().__init__(app, GZIP_MINIMUM_BYTES)
        self._brotli = brotli.Compressor(quality=BROTLI_QUALITY)

    async def apply_compression(self, body: bytes, *, more_body: bool) -> bytes:
        if more_body:
            return bytes(self._brotli.process(body)) + bytes(self._brotli.flush())
        return bytes(self._brotli.process(body)) + bytes(self._brotli.finish())


class Compression:
    """ASGI middleware: an answer over :data:`GZIP_MINIMUM_BYTES` goes in the coding
    :func:`content_coding` picks from the request's Accept-Encoding; an answer that carries a
    Content-Encoding already (a stream its producer compresses) passes through as it is."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        coding = content_coding(Headers(scope=scope))
        responder: ASGIApp
        if coding == "br":
            responder = _BrotliResponder(self.app)
        elif coding == "gzip":
            responder = GZipResponder(self.app, GZIP_MINIMUM_BYTES, compresslevel=GZIP_LEVEL)
        else:
            responder = IdentityResponder(self.app, GZIP_MINIMUM_BYTES)
        await responder(scope, receive, send)


# --- validators and conditional GET ---------------------------------------------------------


class Validators:
    """ASGI middleware: a weak ETag and a Last-Modified on each 200 answer to a GET or HEAD
    of a data route, and 304 Not Modified, before the app runs, for a request whose
    ``If-None-Match`` (or, without one, ``If-Modified-Since``) says the client holds it.

    The ETag digests what decides the answer's bytes: the package version, the brain, its
    current run and store generation, the reader's tenant, clearance and redaction, the path,
    the query string, the Accept header and the content coding the request will get, so a
    Brotli, a gzip and a plain answer each have their own tag (RFC 9110 asks a tag per
    representation, and a cache keeps them apart by it). It is weak: a card's account of how
    it was computed (engine time, a reused result) varies between equal answers.
    Last-Modified is when the store was last written (its generation file), or
    for a store in memory when the current run ended, or when this server saw a write since."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._seen: dict[tuple[str, int], datetime] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in {"GET", "HEAD"}:
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        if not any(path == p or (p.endswith("/") and path.startswith(p)) for p in _VALIDATED):
            await self.app(scope, receive, send)
            return
        found = self._validators(Request(scope))
        if found is None:
            await self.app(scope, receive, send)
            return
        etag, modified = found
        headers = Headers(scope=scope)
        if _not_modified(headers, etag, modified):
            await Response(status_code=304, headers=_validator_headers(etag, modified))(
                scope, receive, send
            )
            return

        async def with_validators(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] == 200:
                MutableHeaders(scope=message).update(_validator_headers(etag, modified))
            await send(message)

        await self.app(scope, receive, with_validators)

    def _validators(self, request: Request) -> tuple[str, datetime] | None:
        from ratified_rdf.surfaces import server

        try:
            brain = server._reader(request)
            run = brain.scope.current
            generation = brain.reading.write_generation
        except (server.EndpointError, RatifiedError):
            return None  # the app answers with its own refusal, which carries no validator
        if run is None:
            return None
        # The generation file's mark as the store last followed it: every writing process
        # replaces the file, so it tells writes apart across processes and restarts, where
        # ``write_generation`` counts within this process only.
        marker = getattr(brain.reading.store, "_seen", None)
        reader = brain.reader
        digest = hashlib.sha256()
        for part in (
            __version__,
            brain.brain_id,
            run.run_id,
            str(generation),
            str(marker),
            reader.tenant,
            reader.clearance.value,
            str(reader.redaction),
            request.url.path,
            request.url.query,
            request.headers.get("accept", ""),
            content_coding(request.headers) or "identity",
        ):
            digest.update(str(part).encode("utf-8", "replace") + b"\0")
        if isinstance(marker, tuple) and len(marker) == 3 and isinstance(marker[2], int):
            written = datetime.fromtimestamp(math.ceil(marker[2] / 1e9), UTC)
            return f'W/"{digest.hexdigest()[:32]}"', max(run.ended, written)
        key = (run.run_id, generation)
        if key not in self._seen:
            # The first generation seen of a run is its build; a later one is a write since.
            first = not any(run_id == run.run_id for run_id, _ in self._seen)
            now = datetime.fromtimestamp(math.ceil(time.time()), UTC)
            self._seen[key] = run.ended if first else max(run.ended, now)
        return f'W/"{digest.hexdigest()[:32]}"', self._seen[key]


def _validator_headers(etag: str, modified: datetime) -> dict[str, str]:
    # no-cache: a cache may keep an answer but asks again before using it, since the next
    # build changes the answers; the ETag makes asking again cheap.
    return {
        "ETag": etag,
        "Last-Modified": format_datetime(modified.astimezone(UTC), usegmt=True),
        "Cache-Control": "no-cache",
    }


def _not_modified(headers: Headers, etag: str, modified: datetime) -> bool:
    """RFC 9110's order: If-None-Match (weak comparison) decides when present; else
    If-Modified-Since against the second the answer last changed."""
    match = headers.get("if-none-match")
    if match is not None:
        wanted = {tag.strip().removeprefix("W/") for tag in match.split(",")}
        return "*" in wanted or etag.removeprefix("W/") in wanted
    since = headers.get("if-modified-since")
    if since is None:
        return False
    try:
        when = parsedate_to_datetime(since)
    except (TypeError, ValueError):
        return False  # an unreadable date is ignored, as RFC 9110 says
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return modified.replace(microsecond=0) <= when


# --- the timeout parameter ------------------------------------------------------------------


def requested_timeout(values: Sequence[str], server_s: float) -> float:
    """The seconds a query may run: the ``timeout`` parameter when it asks for less than the
    server's ``--query-timeout`` (``server_s``), else that. Raises ``ValueError`` with a
    sentence for a value that is not a positive number of seconds."""
    given = [v.strip() for v in values if v.strip()]
    if not given:
        return server_s
    if len(given) > 1:
        raise ValueError(f"Send one timeout per request; this one has {len(given)}.")
    try:
        seconds = float(given[0])
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(
            f"The timeout parameter is a number of seconds above zero (such as 2.5), not "
            f"{given[0][:40]!r}; this server caps it at {server_s:g}."
        )
    return min(seconds, server_s)


# --- /health and /openapi.json --------------------------------------------------------------


async def health(request: Request) -> Response:
    """``GET /health``: 200 with the brain, its current run and the access file's state; 503
    while the brain has no complete run to answer from."""
    brain = request.app.state.brain
    body: dict[str, Any] = {"status": "ok", "brain": brain.brain_id, "version": __version__}
    try:
        brain.reading.follow()
        run = brain.scope.current
    except RatifiedError as error:
        run, body["problem"] = None, str(error)
    if run is None:
        body["status"] = "unavailable"
        body.setdefault("problem", "The brain has no complete run yet; wait for a build to end.")
    else:
        body["run"] = {"id": run.run_id, "iri": run.iri, "ended": run.ended.isoformat()}
    access = request.app.state.access
    if isinstance(access, AccessFile):
        access.current()  # a changed file is read again here, as on a request with a token
    problem = getattr(access, "problem", None)
    if access is not None:
        # The details (file, line) are in the server log, not on this public route.
        body["access"] = (
            {"status": "ok"}
            if problem is None
            else {
                "status": "stale",
                "problem": "The access file's latest version cannot be read, so the tokens "
                "read from it before stay in force; the server log says what is wrong.",
            }
        )
        if problem is not None and body["status"] == "ok":
            body["status"] = "degraded"
    code = 503 if body["status"] == "unavailable" else 200
    return JSONResponse(body, status_code=code, headers={"Cache-Control": "no-store"})


async def openapi_json(request: Request) -> Response:
    """``GET /openapi.json``: the OpenAPI 3.1 description of the JSON routes and /sparql."""
    return JSONResponse(openapi_document())


JSON_ROUTES = ("/api/ask", "/api/holdings", "/health", "/openapi.json")
"""The routes that answer JSON of their own: each is described in :func:`openapi_document`."""


def _error(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
    }


@cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document: the answer card's schema is generated from the ``Answer``
    model, so the two cannot drift apart."""
    from pydantic.json_schema import models_json_schema

    from ratified_rdf.answers.models import Answer

    _, generated = models_json_schema(
        [(Answer, "serialization")], ref_template="#/components/schemas/{model}"
    )
    schemas: dict[str, Any] = dict(generated.get("$defs", {}))
    schemas["Error"] = {
        "type": "object",
        "required": ["error"],
        "properties": {"error": {"type": "string", "description": "What to do instead."}},
    }
    schemas["AskAnswer"] = {
        "allOf": [{"$ref": "#/components/schemas/Answer"}],
        "properties": {
            "timeline_svg": {
                "type": "string",
                "description": "The card's timeline drawn as SVG (with timeline=svg).",
            }
        },
    }
    schemas["Health"] = {
        "type": "object",
        "required": ["status", "brain", "version"],
        "properties": {
            "status": {"enum": ["ok", "degraded", "unavailable"]},
            "brain": {"type": "string"},
            "version": {"type": "string"},
            "problem": {"type": "string"},
            "run": {
                "type": "object",
                "required": ["id", "iri", "ended"],
                "properties": {
                    "id": {"type": "string"},
                    "iri": {"type": "string", "format": "uri"},
                    "ended": {"type": "string", "format": "date-time"},
                },
            },
            "access": {
                "type": "object",
                "required": ["status"],
                "properties": {
                    "status": {"enum": ["ok", "stale"]},
                    "problem": {"type": "string"},
                },
            },
        },
    }

    def card(ref: str, summary: str) -> dict[str, Any]:
        return {
            "description": summary,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{ref}"}}},
        }

    sparql_params = [
        {"name": "query", "in": "query", "schema": {"type": "string"}, "description": "SPARQL."},
        {
            "name": "format",
            "in": "query",
            "schema": {"type": "string"},
            "description": "json, xml, csv, tsv, turtle, nt, json-ld, rdf+xml, or a media "
            "type; the Accept header otherwise.",
        },
        {
            "name": "timeout",
            "in": "query",
            "schema": {"type": "number", "exclusiveMinimum": 0},
            "description": "Seconds the query may run, capped by the server's --query-timeout.",
        },
    ]
    sparql_answers = {
        "200": {"description": "The query's answer in the negotiated format."},
        "304": {"description": "Not modified (If-None-Match or If-Modified-Since)."},
        "400": {"description": "A bad request, with a sentence saying what to send."},
        "403": {"description": "An update: the endpoint is read-only."},
        "406": {"description": "No acceptable format."},
        "422": {"description": "More rows than the server's --max-rows."},
        "503": {"description": "The query ran out of time or memory; see Retry-After."},
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "ratified-rdf server",
            "version": __version__,
            "description": "A standards working group's record as a knowledge graph: answer "
            "cards as JSON, and a read-only SPARQL 1.1 endpoint. Without a token a request "
            "reads as the anonymous public reader.",
        },
        "components": {
            "schemas": schemas,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
        "paths": {
            "/api/ask": {
                "get": {
                    "summary": "Ask a question; the answer card.",
                    "operationId": "ask",
                    "parameters": [
                        {
                            "name": "q",
                            "in": "query",
                            "required": True,
                            "schema": {"type": "string", "maxLength": 500},
                        },
                        {"name": "timeline", "in": "query", "schema": {"enum": ["svg"]}},
                    ],
                    "responses": {
                        "200": card("AskAnswer", "The answer card."),
                        "304": {"description": "Not modified."},
                        "400": _error("No question, one too long, or a bad timeline value."),
                        "401": _error("A token this server does not accept."),
                        "503": _error("The server cannot answer now; try again."),
                    },
                }
            },
            "/api/holdings": {
                "get": {
                    "summary": "What the graph holds, as an answer card.",
                    "operationId": "holdings",
                    "responses": {
                        "200": card("Answer", "The holdings card."),
                        "304": {"description": "Not modified."},
                        "401": _error("A token this server does not accept."),
                        "503": _error("The server cannot answer now; try again."),
                    },
                }
            },
            "/health": {
                "get": {
                    "summary": "The server's state: brain, current run, access file.",
                    "operationId": "health",
                    "security": [{}],
                    "responses": {
                        "200": card("Health", "Serving."),
                        "503": card("Health", "No complete run to answer from yet."),
                    },
                }
            },
            "/openapi.json": {
                "get": {
                    "summary": "This document.",
                    "operationId": "openapi",
                    "security": [{}],
                    "responses": {"200": {"description": "The OpenAPI 3.1 document."}},
                }
            },
            "/sparql": {
                "get": {
                    "summary": "SPARQL 1.1 Protocol query (read-only).",
                    "operationId": "sparqlGet",
                    "parameters": sparql_params,
                    "responses": sparql_answers,
                },
                "post": {
                    "summary": "SPARQL 1.1 Protocol query, as a form or a query body.",
                    "operationId": "sparqlPost",
                    "parameters": sparql_params[1:],
                    "requestBody": {
                        "content": {
                            "application/x-www-form-urlencoded": {
                                "schema": {
                                    "type": "object",
                                    "required": ["query"],
                                    "properties": {
                                        "query": {"type": "string"},
                                        "format": {"type": "string"},
                                        "timeout": {"type": "number"},
                                    },
                                }
                            },
                            "application/sparql-query": {"schema": {"type": "string"}},
                        }
                    },
                    "responses": {k: a for k, a in sparql_answers.items() if k != "304"},
                },
            },
        },
    }
