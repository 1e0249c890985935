"""The standard surfaces of ``ratified serve`` through unmodified clients on a real socket:
the SPARQL 1.1 Service Description, VoID, the Graph Store Protocol (read-only), every kind of
IRI the brain mints made dereferenceable, and rdflib's ``SPARQLStore`` iterating a graph
larger than the server's row limit. Each reader sees what its token allows, and no more."""

from __future__ import annotations

import io
import shutil
import subprocess
import urllib.error
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from urllib.parse import quote

import pytest
import rdflib
from rdflib import RDF, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, SPARQLWrapper
from starlette.applications import Starlette

from ratified_rdf import Brain
from ratified_rdf.graph import vocab as v
from ratified_rdf.surfaces.access import AccessList, ReaderGrant, token_digest
from ratified_rdf.surfaces.server import create_app
from ratified_rdf.surfaces.standard import could_be_pattern, triple_pattern
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.serve.deadlines import GENEROUS_S

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
VOID = Namespace("http://rdfs.org/ns/void#")
FORMATS = Namespace("http://www.w3.org/ns/formats/")
MAX_ROWS = 40
"""The app's row limit: far below the pigeon brain's size, so paging must really happen."""
RITA = "rita-secret"
Serve = Callable[[Starlette], AbstractContextManager[str]]


@dataclass(frozen=True)
class Http:
    """One curl exchange."""

    status: int
    headers: dict[str, str]
    body: bytes


def curl(url: str, *args: str, token: str | None = None) -> Http:
    """``curl`` with ``args``, as a person would type it; status, headers and body."""
    auth = ["-H", f"Authorization: Bearer {token}"] if token else []
    done = subprocess.run(
        ["curl", "-sS", "-D", "-", "-o", "-", *auth, *args, url],
        capture_output=True,
        check=True,
        timeout=120,
    )
    raw = done.stdout
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Http(status, headers, body)


@dataclass(frozen=True)
class Site:
    """The served pigeon brain (mail restricted), and who reads it."""

    base: str
    builder: Brain
    public: Brain
    restricted: Brain
    mail_graph: str


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, serve: Serve) -> Iterator[Site]:
    folder = tmp_path_factory.mktemp("standard")
    records = folder / "records"
    shutil.copytree(MANIFEST.parent, records)
    manifest = records / "manifest.toml"
    manifest.write_text(manifest.read_text() + '\n[clearance]\nmail = "restricted"\n')
    built, _ = Brain.build(manifest, source=str(make_pigeon_repo(folder / "git")))
    public = built.read_as(built.reader.but(clearance="public"))
    # A public review, so card, review and reviewer IRIs exist too.
    public.review("what does the graph hold?", reviewer="Dana Reviewer", verdict="ratified")
    public.reading.refresh()
    restricted = built.read_as(built.reader.but(clearance="restricted"))
    [mail] = [g for g in restricted.read_graphs if g.endswith("/mail")]
    access = AccessList(
        reader=(ReaderGrant(name="Rita", token_sha256=token_digest(RITA), clearance="restricted"),)
    )
    app = create_app(public, access=access, max_rows=MAX_ROWS, query_timeout_s=GENEROUS_S)
    with serve(app) as base:
        yield Site(base, built, public, restricted, mail)


def _parse(body: bytes, media: str) -> rdflib.Graph:
    fmt = {
        "text/turtle": "turtle",
        "application/n-triples": "nt",
        "application/ld+json": "json-ld",
        "application/rdf+xml": "xml",
    }[media]
    return rdflib.Graph().parse(data=body, format=fmt)


def _description(site: Site, token: str | None = None, media: str = "text/turtle") -> rdflib.Graph:
    answer = curl(f"{site.base}/sparql", "-H", f"Accept: {media}", token=token)
    assert answer.status == 200, answer.body[:300]
    assert answer.headers["content-type"].startswith(media)
    return _parse(answer.body, media)


def _graph_store(site: Site, query: str, token: str | None = None) -> rdflib.Graph:
    answer = curl(f"{site.base}/sparql?{query}", "-H", "Accept: application/n-triples", token=token)
    assert answer.status == 200, answer.body[:300]
    return _parse(answer.body, "application/n-triples")


def _named_graphs(description: rdflib.Graph) -> dict[str, int]:
    """Each named graph the description lists, with the VoID triple count it gives."""
    out = {}
    for named in description.objects(None, SD.namedGraph):
        name = description.value(named, SD.name)
        graph = description.value(named, SD.graph)
        out[str(name)] = int(description.value(graph, VOID.triples))
    return out


# --- the service description ------------------------------------------------------------------


@pytest.mark.parametrize(
    "media", ["text/turtle", "application/n-triples", "application/ld+json", "application/rdf+xml"]
)
def test_the_service_description_speaks_the_w3c_vocabulary(site: Site, media: str) -> None:
    description = _description(site, media=media)
    service = URIRef(f"{site.base}/sparql")
    assert (service, RDF.type, SD.Service) in description
    assert (service, SD.endpoint, service) in description
    assert (service, SD.supportedLanguage, SD.SPARQL11Query) in description
    formats = set(description.objects(service, SD.resultFormat))
    assert {FORMATS.SPARQL_Results_JSON, FORMATS.SPARQL_Results_XML, FORMATS.Turtle} <= formats
    assert (service, SD.feature, SD.UnionDefaultGraph) in description
    dataset = description.value(service, SD.defaultDataset)
    default = description.value(dataset, SD.defaultGraph)
    assert int(description.value(default, VOID.triples)) > MAX_ROWS


def test_each_graph_described_is_the_graph_the_store_protocol_gives(site: Site) -> None:
    for token, reader in ((None, site.public), (RITA, site.restricted)):
        description = _description(site, token)
        named = _named_graphs(description)
        # The catalog too, as this reader may know it (what their dump holds of it).
        assert set(named) == {*reader.read_graphs, reader.catalog}
        for graph, triples in named.items():
            fetched = _graph_store(site, "graph=" + quote(graph, safe=""), token)
            counted = (
                reader.reading.catalog_size()
                if graph == reader.catalog
                else int(
                    reader.query(
                        f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph}> {{ ?s ?p ?o }} }}"
                    )
                    .rows[0]["n"]
                    .value
                )
            )
            assert len(fetched) == triples == counted, graph
        service = URIRef(f"{site.base}/sparql")
        default = description.value(description.value(service, SD.defaultDataset), SD.defaultGraph)
        union = _graph_store(site, "default", token)
        assert len(union) == int(description.value(default, VOID.triples))
        every = rdflib.Graph()
        for graph in reader.read_graphs:  # the catalog is no part of the default graph
            every += _graph_store(site, "graph=" + quote(graph, safe=""), token)
        assert set(union) == set(every)


def test_an_anonymous_reader_learns_nothing_of_the_restricted_graph(site: Site) -> None:
    public = curl(f"{site.base}/sparql", "-H", "Accept: text/turtle")
    restricted = curl(f"{site.base}/sparql", "-H", "Accept: text/turtle", token=RITA)
    assert site.mail_graph.encode() in restricted.body
    assert site.mail_graph.encode() not in public.body
    assert b"/mail>" not in public.body
    for path in ("/void", "/.well-known/void"):
        assert site.mail_graph.encode() not in curl(site.base + path).body
        assert site.mail_graph.encode() in curl(site.base + path, token=RITA).body
    # The public totals add up over the public graphs alone.
    described = _parse(public.body, "text/turtle")
    brain = URIRef(v.brain_iri(site.public.reader.tenant, site.public.brain_id))
    named = _named_graphs(described)
    merged = [n for g, n in named.items() if g != site.public.catalog]  # the catalog is apart
    assert int(described.value(brain, VOID.triples)) == sum(merged)
    assert site.mail_graph not in named and site.mail_graph in _named_graphs(
        _parse(restricted.body, "text/turtle")
    )


def test_a_browser_without_a_query_gets_the_query_form(site: Site) -> None:
    browser = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
    answer = curl(f"{site.base}/sparql", "-H", f"Accept: {browser}")
    assert answer.status == 200 and b'<form id="sparql" action="/sparql"' in answer.body
    assert curl(f"{site.base}/sparql").status == 200  # curl's own */*: the description


# --- the graph store protocol -----------------------------------------------------------------


def test_a_restricted_graph_is_a_404_like_one_that_does_not_exist(site: Site) -> None:
    hidden = curl(f"{site.base}/sparql?graph=" + quote(site.mail_graph, safe=""))
    invented = site.mail_graph.replace("/mail", "/nothing")
    missing = curl(f"{site.base}/sparql?graph=" + quote(invented, safe=""))
    assert hidden.status == missing.status == 404
    assert hidden.body.replace(site.mail_graph.encode(), b"G") == missing.body.replace(
        invented.encode(), b"G"
    )
    assert hidden.headers.keys() == missing.headers.keys()
    seen = _graph_store(site, "graph=" + quote(site.mail_graph, safe=""), RITA)
    assert len(seen) > 0
    for url in (site.mail_graph, invented):
        head = curl(f"{site.base}/sparql?graph=" + quote(url, safe=""), "-I")
        assert head.status == 404
    head = curl(f"{site.base}/sparql?graph=" + quote(site.mail_graph, safe=""), "-I", token=RITA)
    assert head.status == 200 and head.headers["content-type"].startswith("text/turtle")


def test_every_rdf_format_of_a_graph_holds_the_same_triples(site: Site) -> None:
    graph = next(g for g in site.public.read_graphs if g.endswith("/spec"))
    url = f"{site.base}/sparql?graph=" + quote(graph, safe="")
    parsed = []
    for media in (
        "text/turtle",
        "application/n-triples",
        "application/ld+json",
        "application/rdf+xml",
    ):
        answer = curl(url, "-H", f"Accept: {media}")
        assert answer.status == 200 and answer.headers["content-type"].startswith(media)
        assert "content-length" not in answer.headers  # streamed
        parsed.append(_parse(answer.body, media))
    assert len(parsed[0]) > MAX_ROWS
    assert all(isomorphic(parsed[0], other) for other in parsed[1:])


@pytest.mark.parametrize("method", ["PUT", "POST", "DELETE", "PATCH"])
def test_writes_to_the_graph_store_are_refused_with_405(site: Site, method: str) -> None:
    graph = site.public.read_graphs[0]
    before = len(_graph_store(site, "graph=" + quote(graph, safe="")))
    for query in ("graph=" + quote(graph, safe=""), "default"):
        answer = curl(
            f"{site.base}/sparql?{query}",
            "-X",
            method,
            "-H",
            "Content-Type: text/turtle",
            "--data-binary",
            "<http://e/s> <http://e/p> <http://e/o> .",
            token=RITA,
        )
        assert answer.status == 405, (method, answer.body)
        assert b"read-only" in answer.body
        assert "GET" in answer.headers["allow"]
    assert len(_graph_store(site, "graph=" + quote(graph, safe=""))) == before


def test_streams_stay_under_their_own_limit(pigeon_brain: Brain, serve: Serve) -> None:
    with serve(
        create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=MAX_ROWS, max_stream_rows=60)
    ) as base:
        graph = next(g for g in pigeon_brain.read_graphs if g.endswith("/spec"))
        refused = curl(f"{base}/sparql?graph=" + quote(graph, safe=""))
        assert refused.status == 422 and b"over the 60" in refused.body
        everything = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
        query = f"{base}/sparql?query=" + quote(everything)
        assert curl(query).status == 422
        paged = curl(
            f"{base}/sparql?query=" + quote(everything + " LIMIT 55 OFFSET 3"),
            "-H",
            "Accept: application/sparql-results+xml",
        )
        assert paged.status == 200
        result = rdflib.query.Result.parse(io.BytesIO(paged.body), format="xml")
        assert len(list(result)) == 55


# --- rdflib and SPARQLWrapper past the row limit ------------------------------------------------


def test_rdflib_sparqlstore_iterates_the_whole_graph(site: Site) -> None:
    union = _graph_store(site, "default")
    assert len(union) > 10 * MAX_ROWS
    graph = rdflib.Graph(store=SPARQLStore(f"{site.base}/sparql"))
    iterated = list(graph)
    assert set(iterated) == set(union)
    typed = list(graph.triples((None, RDF.type, None)))
    assert set(typed) == set(union.triples((None, RDF.type, None)))
    assert len(set(typed)) > MAX_ROWS
    subject = URIRef(v.document_iri("rfc9999"))
    assert set(graph.predicate_objects(subject)) == set(union.predicate_objects(subject))


def test_sparqlwrapper_gets_every_row_of_a_triple_pattern(site: Site) -> None:
    client = SPARQLWrapper(f"{site.base}/sparql")
    client.setQuery("SELECT ?s ?o WHERE { ?s a ?o }")
    client.setReturnFormat(JSON)
    rows = client.queryAndConvert()["results"]["bindings"]
    expected = site.public.query("SELECT ?s ?o WHERE { ?s a ?o }").rows
    assert len(rows) == len(expected) > MAX_ROWS
    assert Counter((r["s"]["value"], r["o"]["value"]) for r in rows) == Counter(
        (r["s"].value, r["o"].value) for r in expected
    )


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o FILTER(true) }",
        "SELECT DISTINCT ?s ?p ?o WHERE { ?s ?p ?o }",
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o } ORDER BY ?o",
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o . ?s ?p ?o }",
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o } VALUES ?x { 1 }",
        "SELECT ?s ?p ?o WHERE { ?s ?p ?o OPTIONAL { ?o ?q ?r } }",
    ],
)
def test_anything_more_than_a_triple_pattern_meets_the_row_limit(site: Site, query: str) -> None:
    client = SPARQLWrapper(f"{site.base}/sparql")
    client.setQuery(query)
    client.setReturnFormat(JSON)
    with pytest.raises(urllib.error.HTTPError) as refused:
        client.query()
    assert refused.value.code == 422


@pytest.mark.parametrize(
    "query",
    [
        "SELECT ?s ?p ?o FROM <{g}> WHERE { ?s ?p ?o }",
        "SELECT ?s ?p ?o WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
    ],
)
def test_a_triple_pattern_does_not_walk_past_the_guard(site: Site, query: str) -> None:
    text = query.replace("{g}", site.mail_graph)
    answer = curl(f"{site.base}/sparql?query=" + quote(text))
    assert answer.status == 400, answer.body


def test_a_triple_pattern_reads_only_the_readers_graphs(site: Site) -> None:
    mail_type = URIRef(v.RR + "MailThread")
    public = rdflib.Graph(store=SPARQLStore(f"{site.base}/sparql"))
    assert list(public.triples((None, RDF.type, mail_type))) == []
    assert len(site.restricted.query(f"SELECT ?t WHERE {{ ?t a <{mail_type}> }}").rows) == 1


# --- every IRI kind dereferences ----------------------------------------------------------------


# The words vocab.py mints IRIs with; every other path segment is a name or an id.
_WORDS = {
    "doc",
    "section",
    "aligns-to",
    "repo",
    "commit",
    "thread",
    "post",
    "cites",
    "person",
    "expertise",
    "expertise-restricted",
    "overall",
    "merge",
    "account",
    "mail",
    "mail-sender",
    "run",
    "computation",
    "tenant",
    "graph",
    "brain",
    "card",
    "review",
    "reviewer",
    "catalog",
}


def _shape(iri: str) -> str:
    """An IRI's kind: its path with every segment that is not one of the words as N."""
    return "/".join(p if p in _WORDS else "N" for p in iri[len(v.ID) :].split("/"))


def _minted(site: Site) -> dict[str, str]:
    """One IRI of each kind the restricted reader's graphs hold or the catalog names."""
    rows = site.restricted.query(
        "SELECT DISTINCT ?x WHERE { { ?x ?p ?o } UNION { ?s ?p ?x } "
        f'FILTER(isIRI(?x) && STRSTARTS(STR(?x), "{v.ID}")) }}'
    ).rows
    found = [row["x"].value for row in rows]
    found += [run.iri for run in site.restricted.scope.runs]
    found += [*site.restricted.read_graphs, site.restricted.catalog]
    kinds: dict[str, str] = {}
    for iri in sorted(found):
        kinds.setdefault(_shape(iri), iri)
    return kinds


def test_every_minted_iri_kind_dereferences(site: Site) -> None:
    kinds = _minted(site)
    for kind in (
        "run/N",
        "run/N/computation/expertise-restricted",
        "card/N",
        "review/N",
        "reviewer/N",
        "tenant/N/brain/N",
        "tenant/N/graph/N/catalog",
        "tenant/N/graph/N/N/N",
        "mail/N/N",
        "mail/N/thread/N",
        "mail-sender/N",
        "person/N/expertise-restricted/overall/N",
        "repo/N/thread/N/post/N/cites/N",
        "doc/N/N/section/N/aligns-to/N",
        "account/N/N",
    ):
        assert kind in kinds, (kind, " ".join(sorted(kinds)))
    for kind, iri in kinds.items():
        rest = iri[len(v.ID) :]
        moved = curl(f"{site.base}/id/{rest}", "-H", "Accept: text/turtle", token=RITA)
        assert moved.status == 303, (kind, moved.body)
        assert moved.headers["location"].endswith(f"/doc/{rest}")
        for media in ("text/turtle", "application/ld+json", "application/n-triples"):
            doc = curl(f"{site.base}/doc/{rest}", "-H", f"Accept: {media}", token=RITA)
            assert doc.status == 200, (kind, media, doc.body[:200])
            said = _parse(doc.body, media)
            assert (URIRef(iri), None, None) in said, (kind, media)
        page = curl(f"{site.base}/doc/{rest}", "-H", "Accept: text/html", token=RITA)
        assert page.status == 200 and page.headers["content-type"].startswith("text/html")


def test_runs_and_graphs_are_described_within_the_readers_clearance(site: Site) -> None:
    [run] = [r.iri for r in site.public.scope.runs if r.current]
    rest = run[len(v.ID) :]
    wrote = URIRef(v.RR + "wroteGraph")
    public = _parse(
        curl(f"{site.base}/doc/{rest}", "-H", "Accept: text/turtle").body, "text/turtle"
    )
    restricted = _parse(
        curl(f"{site.base}/doc/{rest}", "-H", "Accept: text/turtle", token=RITA).body, "text/turtle"
    )
    assert URIRef(site.mail_graph) in set(restricted.objects(URIRef(run), wrote))
    assert URIRef(site.mail_graph) not in set(public.objects(URIRef(run), wrote))
    assert set(public.objects(URIRef(run), wrote)) == {
        URIRef(g) for g in site.public.read_graphs if "/reviews-" not in g
    }
    mail = site.mail_graph[len(v.ID) :]
    said = _parse(
        curl(f"{site.base}/doc/{mail}", "-H", "Accept: text/turtle", token=RITA).body, "text/turtle"
    )
    assert int(said.value(URIRef(site.mail_graph), VOID.triples)) == len(
        _graph_store(site, "graph=" + quote(site.mail_graph, safe=""), RITA)
    )
    # Each reader gets the catalog as they may know it: present for both, and for the public
    # reader as large as it would be if the withheld graphs had never been built.
    catalog = site.public.catalog[len(v.ID) :]
    sizes = []
    for token in (RITA, None):
        answer = curl(f"{site.base}/doc/{catalog}", "-H", "Accept: text/turtle", token=token)
        assert answer.status == 200
        said = _parse(answer.body, "text/turtle")
        sizes.append(int(said.value(URIRef(site.public.catalog), VOID.triples)))
    assert sizes == [site.restricted.reading.catalog_size(), site.public.reading.catalog_size()]
    assert sizes[1] < sizes[0]
    # For the public reader the graph is what the public graphs say of it: links to it at
    # most (a computation that used it), never what the catalog says.
    hidden = curl(f"{site.base}/doc/{mail}", "-H", "Accept: text/turtle")
    linked = site.public.query(f"ASK {{ ?s ?p <{site.mail_graph}> }}").boolean
    assert hidden.status == (200 if linked else 404)
    if linked:
        assert (URIRef(site.mail_graph), None, None) not in _parse(hidden.body, "text/turtle")


@pytest.mark.parametrize(
    ("path", "namespace"), [("ontology", v.RR), ("shapes", v.BASE + "shapes#")]
)
def test_the_vocabularies_dereference(site: Site, path: str, namespace: str) -> None:
    documents = {}
    for media in ("text/turtle", "application/n-triples", "application/ld+json"):
        answer = curl(f"{site.base}/{path}", "-H", f"Accept: {media}")
        assert answer.status == 200 and answer.headers["content-type"].startswith(media)
        documents[media] = _parse(answer.body, media)
    turtle = documents["text/turtle"]
    assert all(len(d) == len(turtle) for d in documents.values())
    page = curl(f"{site.base}/{path}", "-H", "Accept: text/html").body.decode()
    terms = {str(s) for s in turtle.subjects() if str(s).startswith(namespace)}
    assert len(terms) > 10
    for term in terms:
        assert f'id="{term[len(namespace) :]}"' in page, term


def test_every_ontology_term_the_brain_uses_is_in_the_ontology_document(site: Site) -> None:
    ontology = _parse(
        curl(f"{site.base}/ontology", "-H", "Accept: text/turtle").body, "text/turtle"
    )
    defined = {str(s) for s in ontology.subjects()}
    used = {
        row["x"].value
        for row in site.restricted.query(
            "SELECT DISTINCT ?x WHERE { { ?s ?x ?o } UNION { ?s a ?x } UNION { ?s ?p ?x } "
            f'FILTER(isIRI(?x) && STRSTARTS(STR(?x), "{v.RR}")) }}'
        ).rows
    }
    assert used and used <= defined, sorted(used - defined)


# --- the real TLS brain -------------------------------------------------------------------------


@pytest.mark.corpus
def test_the_tls_brain_through_the_standard_surfaces(tls_brain: Brain, serve: Serve) -> None:
    with serve(create_app(tls_brain, query_timeout_s=GENEROUS_S)) as base:
        answer = curl(f"{base}/sparql", "-H", "Accept: text/turtle")
        assert answer.status == 200
        description = _parse(answer.body, "text/turtle")
        named = _named_graphs(description)
        assert set(named) == {*tls_brain.read_graphs, tls_brain.catalog} and len(named) >= 6
        for graph, triples in named.items():
            fetched = curl(
                f"{base}/sparql?graph=" + quote(graph, safe=""),
                "-H",
                "Accept: application/n-triples",
            )
            assert fetched.status == 200
            assert len(_parse(fetched.body, "application/n-triples")) == triples, graph
        kinds: dict[str, str] = {}
        rows = tls_brain.query(
            "SELECT DISTINCT ?x WHERE { ?x ?p ?o "
            f'FILTER(STRSTARTS(STR(?x), "{v.ID}")) }} LIMIT 200000'
        ).rows
        for iri in sorted([r["x"].value for r in rows] + [r.iri for r in tls_brain.scope.runs]):
            kinds.setdefault(_shape(iri), iri)
        for graph in named:
            kinds.setdefault(_shape(graph), graph)
        assert "run/N" in kinds
        for kind, iri in kinds.items():
            rest = iri[len(v.ID) :]
            assert curl(f"{base}/id/{rest}").status == 303, kind
            doc = curl(f"{base}/doc/{rest}", "-H", "Accept: text/turtle")
            assert doc.status == 200, kind
            assert (URIRef(iri), None, None) in _parse(doc.body, "text/turtle"), kind
        for path in ("ontology", "shapes", "void"):
            got = curl(f"{base}/{path}", "-H", "Accept: text/turtle")
            assert got.status == 200 and len(_parse(got.body, "text/turtle")) > 100, path


def test_a_pattern_with_awkward_literals_streams_the_same_rows(site: Site) -> None:
    # The streamed query is rewritten from the parsed terms: quotes, newlines, language tags
    # and datatypes must come through it unchanged.
    rows = site.public.query(
        "SELECT DISTINCT ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o) && "
        '(CONTAINS(STR(?o), "\\n") || CONTAINS(STR(?o), "\\"") || LANG(?o) != "" || '
        "DATATYPE(?o) != <http://www.w3.org/2001/XMLSchema#string>)) }"
    ).rows
    literals = [row["o"] for row in rows]
    assert any("\n" in t.value for t in literals)
    assert any(t.datatype.value != v.XSD + "string" for t in literals)
    for literal in literals[:25]:
        query = f"SELECT ?s ?p WHERE {{ ?s ?p {literal} }}"
        assert triple_pattern(query) is not None, query  # so it is the stream that answers
        client = SPARQLWrapper(f"{site.base}/sparql")
        client.setQuery(query)
        client.setReturnFormat(JSON)
        got = client.queryAndConvert()["results"]["bindings"]
        expected = site.public.query(query).rows
        assert len(got) == len(expected) > 0, query
        assert Counter(r["s"]["value"] for r in got) == Counter(r["s"].value for r in expected)


@pytest.mark.parametrize(
    ("query", "streams"),
    [
        ("SELECT * WHERE { ?s ?p ?o }", True),
        ('SELECT ?s WHERE { ?s ?p "a { b }" }', True),  # braces inside a literal do not count
        ("SELECT ?s WHERE { ?s ?p 'x}' }", True),
        ('SELECT ?s WHERE { ?s ?p """two\n{lines}""" }', True),
        ("SELECT * { { ?s ?p ?o } }", False),
        ("SELECT * WHERE { ?s ?p ?o VALUES ?s { <https://example.org/a> } }", False),
        ("SELECT * WHERE { ?s ?p ?o FILTER EXISTS { ?s a ?t } }", False),
    ],
)
def test_only_a_text_with_one_group_is_parsed_for_a_pattern(query: str, streams: bool) -> None:
    # The cheap look at the text decides which queries pay for a second parse; it must never
    # turn away a real pattern, and what it lets through is still parsed in full.
    assert could_be_pattern(query) is streams
    assert (triple_pattern(query) is not None) is streams


def test_the_look_at_the_text_reads_it_once() -> None:
    # Unclosed strings full of escapes once made a regular expression retry at every quote
    # (quadratic in the text); the scan must count the same whatever the text holds, so a
    # text of quotes and escapes is counted by one pass: its braces sit in strings.
    hostile = "SELECT * WHERE { ?s ?p ?o } #" + '"\\' * 1_800
    assert could_be_pattern(hostile)  # the one group outside the strings
    assert not could_be_pattern('"\\' * 1_800 + "{ { } }")  # all inside an unclosed string
    assert not could_be_pattern("{}" * 1_000)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g",
        'SELECT * WHERE { ?a ?b ?c . ?d ?e ?f FILTER(REGEX(STR(?c), "(a+)+b")) }',
        "SELECT * WHERE { ?s (<urn:x:p>|!<urn:x:p>)* ?o }",
        "SELECT (GROUP_CONCAT(STR(?c)) AS ?all) WHERE { ?a ?b ?c }",
        "SELECT DISTINCT ?s WHERE { ?s ?p ?o }",
        "select ?s where { ?s ?p ?o } order by ?s",
    ],
)
def test_a_query_with_a_keyword_or_expression_no_pattern_has_is_not_parsed_in_the_server(
    query: str,
) -> None:
    # A client sending such queries back to back made the server parse every one with
    # rdflib (milliseconds each, the interpreter's lock held) before the sandbox refused or
    # ran it: the look at the text turns them away without a parse.
    assert not could_be_pattern(query)
    assert triple_pattern(query) is None


@pytest.mark.parametrize(
    "query",
    [
        "PREFIX order: <https://example.org/(a)> SELECT ?p WHERE { order:x ?p <https://e/(x)> }",
        "SELECT ?filter WHERE { ?filter <https://example.org/distinct> ex:ORDER }",
        'SELECT ?s WHERE { ?s ?p "ORDER BY (x)" } LIMIT 3',
    ],
)
def test_a_pattern_spelling_a_keyword_in_its_names_is_still_one(query: str) -> None:
    assert could_be_pattern(query)
