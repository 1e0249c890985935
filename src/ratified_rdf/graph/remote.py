"""A store on a SPARQL server: the SPARQL 1.1 Protocol for queries and updates, the Graph Store
HTTP Protocol for whole graphs. The same ``sparql/*.rq`` files and the same SHACL gate run
against it as against the embedded store.

Every query names its dataset with the protocol's ``default-graph-uri`` and
``named-graph-uri`` parameters, which take precedence over FROM in the text, so scoping by
tenant and clearance holds on the server too. Results come back as SPARQL JSON results (or
N-Triples for graphs) and are parsed with pyoxigraph, so rows hold the same term objects as the
embedded store's. ``engine_ms`` here is the whole round trip as the client sees it: a server's
own evaluation time is not part of the protocol.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterable, Sequence
from typing import IO
from urllib.parse import urlencode, urlsplit

import httpx
from pyoxigraph import (
    NamedNode,
    Quad,
    QueryResultsFormat,
    RdfFormat,
    Triple,
    parse,
    parse_query_results,
    serialize,
)

from ratified_rdf.graph.store import QueryResult, StoreError, data_update, solutions_result
from ratified_rdf.graph.vocab import PREFIXES

_RESULTS = "application/sparql-results+json"
_NTRIPLES = "application/n-triples"
_FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def _form(fields: list[tuple[str, str]]) -> bytes:
    """A form body; repeated names (``default-graph-uri``) stay repeated."""
    return urlencode(fields).encode()


class SparqlProtocolStore:
    """A :class:`~ratified_rdf.graph.store.TripleStore` on a SPARQL 1.1 server.

    ``query_url`` answers the query protocol, ``update_url`` the update protocol and
    ``store_url`` the Graph Store Protocol (for Oxigraph's server: ``/query``, ``/update``,
    ``/store``); without a ``store_url`` whole graphs are read at the endpoint's own address by
    that protocol when it answers so (``ratified serve`` does, past its row limit), else with
    CONSTRUCT, and written with INSERT DATA. ``transport`` lets tests put a server in-process.
    """

    def __init__(
        self,
        query_url: str,
        update_url: str,
        store_url: str | None,
        *,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.query_url = query_url
        self.update_url = update_url
        self.store_url = store_url
        self._client = httpx.Client(timeout=timeout, transport=transport)
        # Until it answers otherwise, an endpoint may serve whole graphs at its own address.
        self._endpoint_has_graphs = store_url is None

    @classmethod
    def at(cls, url: str, **options: object) -> SparqlProtocolStore:
        """The store a URL names: a server's root (``http://127.0.0.1:7878``, nothing after
        the host) is an ``oxigraph serve``; a URL with a path is a SPARQL 1.1 endpoint's own
        address (``https://example.org/sparql``, Fuseki's ``/ds/query``, Oxigraph's
        ``/query``), which answers queries (and updates, if it takes them) at that address."""
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise StoreError(
                f"{url} is not the URL of a SPARQL server: give http(s)://host[:port] for an "
                "Oxigraph server, or the full address of a SPARQL 1.1 endpoint."
            )
        if parts.path in {"", "/"} and not parts.query:
            return cls.oxigraph(url, **options)
        return cls(url, url, None, **options)  # type: ignore[arg-type]

    @classmethod
    def oxigraph(cls, base_url: str, **options: object) -> SparqlProtocolStore:
        """The endpoints of an ``oxigraph serve`` at ``base_url`` (``http://127.0.0.1:7878``)."""
        base = base_url.rstrip("/")
        return cls(f"{base}/query", f"{base}/update", f"{base}/store", **options)  # type: ignore[arg-type]

    def add(self, graph: str, triples: Sequence[Triple]) -> None:
        """POST the triples to the graph (Graph Store Protocol): one request, one transaction;
        to an endpoint without the protocol, one INSERT DATA."""
        if self.store_url is None:
            sparql = data_update(graph, [], triples)
            if sparql:
                self.update(sparql)
            return
        body = io.BytesIO()
        serialize(triples, body, RdfFormat.N_TRIPLES)
        self._send(
            "POST",
            self.store_url,
            params={"graph": graph},
            content=body.getvalue(),
            headers={"Content-Type": _NTRIPLES},
        )

    def replace(self, graph: str, remove: Sequence[Triple], add: Sequence[Triple]) -> None:
        """Remove and add in one SPARQL update request, which the server applies atomically."""
        sparql = data_update(graph, remove, add)
        if sparql:
            self.update(sparql)

    def update(self, sparql: str) -> None:
        """Run a SPARQL update (the library's own writes only)."""
        self._send("POST", self.update_url, content=_form([("update", sparql)]), headers=_FORM)

    def drop_graph(self, graph: str) -> None:
        """Remove a named graph and everything in it (silently when it does not exist)."""
        self.update(f"DROP SILENT GRAPH {NamedNode(graph)}")

    def graphs(self) -> list[str]:
        """Names of every named graph on the server."""
        result = self.query("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
        return [row["g"].value for row in result.rows if isinstance(row.get("g"), NamedNode)]

    def query(self, sparql: str, graphs: Sequence[str] | None = None) -> QueryResult:
        """Run a SELECT or ASK with the union of ``graphs`` as the default graph."""
        params: list[tuple[str, str]] = []
        if graphs is not None:
            # An empty dataset must stay empty: name a graph nobody writes to.
            names = list(graphs) or ["urn:ratified-rdf:no-graph"]
            params += [("default-graph-uri", g) for g in names]
            params += [("named-graph-uri", g) for g in names]
        started = time.perf_counter()
        # POST with a form body: the protocol's most widely implemented way to send a query.
        response = self._send(
            "POST",
            self.query_url,
            content=_form([("query", sparql), *params]),
            headers={**_FORM, "Accept": _RESULTS},
        )
        parsed = parse_query_results(response.content, format=QueryResultsFormat.JSON)
        return solutions_result(parsed, started)

    def triples(self, graphs: Sequence[str]) -> Iterable[Triple]:
        """Every triple of ``graphs`` (Graph Store Protocol GET, one graph at a time)."""
        for graph in graphs:
            yield from self._graph(graph)

    def describe(
        self, nodes: Iterable[str], graphs: Sequence[str], incoming: Sequence[str] = ()
    ) -> list[Triple]:
        """Triples in ``graphs`` with one of ``nodes`` as subject, and those with one of them as
        object through one of the ``incoming`` predicates."""
        values = " ".join(f"({NamedNode(n)})" for n in nodes)
        if not values:
            return []
        into = " ".join(f"({NamedNode(p)})" for p in incoming)
        backwards = (
            f"UNION {{ VALUES (?p) {{ {into} }} ?s ?p ?node . BIND(?node AS ?o) }}" if into else ""
        )
        return self._construct(
            f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ VALUES (?node) {{ {values} }} "
            f"{{ ?node ?p ?o . BIND(?node AS ?s) }} {backwards} }}",
            graphs,
        )

    def types_of(self, nodes: Iterable[str], graphs: Sequence[str]) -> list[Triple]:
        """The ``rdf:type`` triples of ``nodes`` in ``graphs``."""
        values = " ".join(f"({NamedNode(n)})" for n in nodes)
        if not values:
            return []
        return self._construct(
            "CONSTRUCT { ?node a ?type } WHERE "
            f"{{ VALUES (?node) {{ {values} }} ?node a ?type }}",
            graphs,
        )

    def dump(self, output: IO[bytes], graphs: Sequence[str], rdf_format: RdfFormat) -> None:
        """Serialise ``graphs``; a format without graphs (Turtle) gets their union."""
        quads = (
            Quad(t.subject, t.predicate, t.object, NamedNode(graph))
            for graph in graphs
            for t in self._graph(graph)
        )
        if rdf_format.supports_datasets:
            serialize(quads, output, rdf_format, prefixes=PREFIXES)
        else:
            serialize((q.triple for q in quads), output, rdf_format, prefixes=PREFIXES)

    def close(self) -> None:
        """Release the HTTP connections (the server keeps its data)."""
        self._client.close()

    def _graph(self, graph: str) -> list[Triple]:
        if self.store_url is None:
            found = self._graph_at_endpoint(graph) if self._endpoint_has_graphs else None
            if found is not None:
                return found
            return self._construct("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", [graph])
        response = self._client.get(
            self.store_url, params={"graph": graph}, headers={"Accept": _NTRIPLES}
        )
        if response.status_code == 404:
            return []
        self._check(response)
        return [q.triple for q in parse(response.content, RdfFormat.N_TRIPLES)]

    def _graph_at_endpoint(self, graph: str) -> list[Triple] | None:
        """``graph`` by the Graph Store Protocol at the endpoint's own address
        (``?graph=<iri>``, as ``ratified serve`` answers it), which a server streams past the
        row limit it puts on a CONSTRUCT; ``None`` when the endpoint does not answer so (its
        answer is not N-Triples), and it is not asked again."""
        try:
            response = self._client.get(
                self.query_url, params={"graph": graph}, headers={"Accept": _NTRIPLES}
            )
        except httpx.HTTPError:
            response = None
        media = response.headers.get("content-type", "") if response is not None else ""
        if response is None or not response.is_success or not media.startswith(_NTRIPLES):
            if response is None or response.status_code != 404:
                self._endpoint_has_graphs = False
            return None
        return [q.triple for q in parse(response.content, RdfFormat.N_TRIPLES)]

    def _construct(self, sparql: str, graphs: Sequence[str]) -> list[Triple]:
        params = [("default-graph-uri", g) for g in graphs] or [
            ("default-graph-uri", "urn:ratified-rdf:no-graph")
        ]
        response = self._send(
            "POST",
            self.query_url,
            content=_form([("query", sparql), *params]),
            headers={**_FORM, "Accept": _NTRIPLES},
        )
        return [q.triple for q in parse(response.content, RdfFormat.N_TRIPLES)]

    def _send(self, method: str, url: str, **options: object) -> httpx.Response:
        try:
            response = self._client.request(method, url, **options)  # type: ignore[arg-type]
        except httpx.HTTPError as error:
            raise StoreError(
                f"The SPARQL server at {url} cannot be reached ({error}). Is it running?"
            ) from None
        return self._check(response)

    @staticmethod
    def _check(response: httpx.Response) -> httpx.Response:
        if response.status_code >= 400:
            raise StoreError(
                f"The SPARQL server refused a request ({response.status_code}): "
                f"{response.text.strip()[:500]}"
            )
        return response
