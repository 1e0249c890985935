"""Every write through the gate, against the whole state: each public method of ``Brain`` that
writes is called with hostile input (NUL bytes, ANSI escapes, lone surrogates, huge strings,
IRIs of other kinds of node, a claim on an RFC section, reviews of one node at two clearance
levels), and afterwards the brain conforms for every reader, through ``Brain.validate`` and
through ``ratified validate``.

Which methods write is observed, not assumed: every public method is called once on a store
that records writes, and a test fails when a method writes without being walked here, or when
a public method appears that this file does not call at all.
"""

from __future__ import annotations

import inspect
import io
import shutil
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple

from ratified_rdf import Brain, BrainError, GateRejected, Reading, ReviewError
from ratified_rdf.answers import reviewing
from ratified_rdf.build import build
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.graph.vocab import term
from ratified_rdf.graph.writer import Writer
from ratified_rdf.records.manifest import ManifestError
from ratified_rdf.sources.git_repo import SourceError
from ratified_rdf.surfaces.cli import main
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "who discussed RFC 9999 section 3.1?"
RR = "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
LEVELS = ("public", "internal", "confidential", "restricted")

HOSTILE_TEXT = [
    "",
    "   ",
    "Dana\x00Reviewer",
    "\x1b[31mDana\x1b[0m",
    "\x1b]8;;https://evil.example/\x07Dana\x1b]8;;\x07",
    "Dana\rEve",
    "Dana\nEve",
    "Dana\udcffReviewer",
    "\u202eanaD",
    "\x7fDana",
    "\x85Dana",
    "D" * 100_000,
]
"""Names a reviewer might give that are not plain text; each is refused."""

HOSTILE_NOTES = [
    "",
    "ok\x00",
    "\x1b[2J\x1b[Hcleared",
    "fine\udc80",
    "\u2066isolated\u2069",
    "n" * 100_000,
]
"""Notes that are not plain text (or too long); each is refused. Newlines and tabs are fine."""


class RecordingStore(OxigraphStore):
    """An embedded store in memory that counts the calls that change it."""

    def __init__(self) -> None:
        super().__init__()
        self.writes = 0

    def add(self, graph: str, triples: Sequence[Triple]) -> None:
        self.writes += 1
        super().add(graph, triples)

    def replace(self, graph: str, remove: Sequence[Triple], add: Sequence[Triple]) -> None:
        self.writes += 1
        super().replace(graph, remove, add)

    def drop_graph(self, graph: str) -> None:
        self.writes += 1
        super().drop_graph(graph)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pigeon manifest with the mailing list restricted, so readers at different levels
    see different graphs (and nothing a public reader sees points into what it cannot)."""
    records = tmp_path_factory.mktemp("records") / "pigeon"
    shutil.copytree(MANIFEST.parent, records)
    path = records / "manifest.toml"
    path.write_text(path.read_text() + '\n[clearance]\nmail = "restricted"\n')
    return path


def _one(brain: Brain, sparql: str) -> str:
    rows = brain.query(RR + sparql).rows
    assert rows, sparql
    return next(iter(rows[0].values())).value


def _refused(call: Callable[[], object]) -> None:
    """``call`` must be refused with one of the library's sentences, writing nothing."""
    with pytest.raises((ReviewError, BrainError, GateRejected, ValueError)) as caught:
        call()
    assert type(caught.value).__name__ != "AssertionError"
    assert "bug" not in str(caught.value)


# --- which public methods write ---------------------------------------------------------------

WALKED_WRITES = {"build", "prune", "review", "review_claim"}
"""The public methods that write, each walked with hostile input below."""


def _calls(brain: Brain, repo: Path, manifest: Path) -> dict[str, Callable[[], object]]:
    """One ordinary call of every public method of ``Brain``."""
    section = _one(brain, "SELECT ?s WHERE { ?s rr:headingKey ?k } ORDER BY ?s LIMIT 1")
    return {
        "answer": lambda: brain.answer("section_history", rfc=9999, section="3.1"),
        "ask": lambda: brain.ask(QUESTION),
        "build": lambda: Brain.build(manifest, source=str(repo))[0].close(),
        "cards_in_state": lambda: brain.cards_in_state("ratified"),
        "close": lambda: None,  # checked last, on its own: it ends the brain
        "content_hash": brain.content_hash,
        "describe": lambda: brain.describe(section),
        "describe_dataset": brain.describe_dataset,
        "dump": lambda: brain.dump(io.BytesIO(), RdfFormat.N_QUADS),
        "from_store": lambda: Brain.from_store(brain._store),
        "holdings": brain.holdings,
        "open": lambda: _refused(lambda: Brain.open(repo / "no-such-store")),
        "prune": lambda: brain.prune(1),
        "query": lambda: brain.query("SELECT * WHERE { ?s ?p ?o } LIMIT 1"),
        "read_as": lambda: brain.read_as(brain.reader.but(clearance="public")),
        "review": lambda: brain.review(QUESTION, reviewer="Dana Reviewer", verdict="ratified"),
        "review_claim": lambda: brain.review_claim(
            section, reviewer="Dana Reviewer", verdict="disputed"
        ),
        "revision_chain": lambda: brain.revision_chain("draft-example-pigeon", "00"),
        "run": lambda: brain.run("headings"),
        "section_became": lambda: brain.section_became("draft-example-pigeon", "00", "3"),
        "section_discussion": lambda: brain.section_discussion(9999, "3.1"),
        "section_history": lambda: brain.section_history(9999, "3.1"),
        "validate": brain.validate,
    }


def _reading_calls(brain: Brain) -> dict[str, Callable[[], object]]:
    """One ordinary call of every public method of the ``Reading`` beneath ``brain`` (what
    the surfaces call directly). Its two writers are what Brain.prune, review and
    review_claim go through, and are walked with hostile input there."""
    reading = brain.reading
    section = _one(brain, "SELECT ?s WHERE { ?s rr:headingKey ?k } ORDER BY ?s LIMIT 1")

    def audited() -> None:
        with reading.audited("query", {"query": "headings"}):
            pass

    def writing() -> None:
        with reading.writing():
            pass

    return {
        "answer": lambda: reading.answer(QUESTION, lambda s: brain.holdings()),
        "audited": audited,
        "catalog_size": reading.catalog_size,
        "catalog_triples": reading.catalog_triples,
        "describe_in_catalog": lambda: reading.describe_in_catalog(brain.catalog),
        "dump": lambda: reading.dump(io.BytesIO(), RdfFormat.N_QUADS),
        "evaluate": lambda: reading.evaluate("ASK { ?s ?p ?o }"),
        "export": lambda: reading.export(brain.read_graphs[:1]),
        "follow": reading.follow,
        "gazetteer": reading.gazetteer,
        "heading_index": reading.heading_index,
        "indexes": lambda: reading.indexes(reading.session()),
        "prune": lambda: reading.prune(1),
        "query": lambda: reading.query("SELECT * WHERE { ?s ?p ?o } LIMIT 1", None),
        "read_lookups": reading.read_lookups,
        "refresh": reading.refresh,
        "run": lambda: reading.run("headings", None, {}),
        "session": reading.session,
        "validate": reading.validate,
        "write_review": lambda: reading.write_review(
            reviewing.claim_subject(section, brain.describe(section))
            | {"verdict": "disputed", "reviewer": "Dana Reviewer"},
            section,
            section,
            None,
            False,
        ),
        "writer": reading.writer,
        "writing": writing,
        "wrote": reading.wrote,
    }


def test_every_public_method_of_the_reading_that_writes_goes_through_a_walked_one(
    repo: Path, manifest: Path
) -> None:
    store = RecordingStore()
    build(manifest, source=str(repo), store=store)
    brain = Brain.from_store(store, reader=Reader(clearance="restricted"))
    calls = _reading_calls(brain)
    public = {n for n, _ in inspect.getmembers(Reading, callable) if not n.startswith("_")}
    assert public <= set(calls), f"Reading methods this file does not call: {public - set(calls)}"
    writers = set()
    for name, call in calls.items():
        before = store.writes
        call()
        if store.writes != before:
            writers.add(name)
    # prune is Brain.prune's, write_review is Brain.review's and review_claim's: walked there.
    assert "write_review" in writers and writers <= {"prune", "write_review"}


@pytest.mark.slow
def test_every_public_method_that_writes_is_walked(repo: Path, manifest: Path) -> None:
    store = RecordingStore()
    build(manifest, source=str(repo), store=store)
    brain = Brain.from_store(store, reader=Reader(clearance="restricted"))
    calls = _calls(brain, repo, manifest)
    public = {name for name, _ in inspect.getmembers(Brain, callable) if not name.startswith("_")}
    assert public <= set(calls), (
        "Brain has public methods this file does not call; add each to _calls, and, if it "
        f"writes, walk it with hostile input here: {sorted(public - set(calls))}."
    )
    writers = set()
    for name, call in calls.items():
        if name not in public:  # a method since removed
            continue
        before = store.writes
        call()
        if store.writes != before:
            writers.add(name)
    # build is a classmethod that makes a store of its own: it writes by definition.
    assert writers | {"build"} <= WALKED_WRITES, (
        f"{sorted(writers - WALKED_WRITES)} wrote to the store but are not walked with "
        "hostile input here: add them to WALKED_WRITES and to test_hostile_writes_leave_the_"
        "brain_conforming."
    )
    assert {"review", "review_claim"} <= writers  # the recorder does see writes


# --- the walk -------------------------------------------------------------------------------


@pytest.fixture()
def folder(repo: Path, manifest: Path, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "store"
    built, _ = Brain.build(manifest, source=str(repo), path=path)
    built.close()
    yield path


@pytest.mark.slow
def test_hostile_writes_leave_the_brain_conforming(
    folder: Path, repo: Path, manifest: Path, tmp_path: Path
) -> None:
    with Brain.open(folder, reader=Reader(clearance="restricted")) as brain:
        readers = {level: brain.read_as(brain.reader.but(clearance=level)) for level in LEVELS}
        public, top = readers["public"], readers["restricted"]
        section = _one(
            public,
            "SELECT ?s WHERE { ?rfc rr:rfcNumber 9999 ; rr:hasSection ?s . "
            "?s rr:sectionNumber '3.1' }",
        )
        rfc = _one(public, "SELECT ?r WHERE { ?r rr:rfcNumber 9999 }")
        alignment = _one(public, "SELECT ?a WHERE { ?a rr:alignmentRule ?r } ORDER BY ?a LIMIT 1")
        foaf = "PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        person = _one(readers["internal"], foaf + "SELECT ?p WHERE { ?p a foaf:Person } LIMIT 1")
        brain_iri = v.brain_iri(brain.reader.tenant, brain.brain_id)

        # review: names, notes, verdicts and questions that are not plain text are refused.
        for name in HOSTILE_TEXT:
            _refused(lambda name=name: public.review(QUESTION, reviewer=name, verdict="ratified"))
        for note in HOSTILE_NOTES:
            _refused(
                lambda note=note: public.review(
                    QUESTION, reviewer="Dana", verdict="ratified", note=note
                )
            )
        for verdict in ("RATIFIED", "ratified\x00", "derived", "", "\x1b[1mratified"):
            _refused(
                lambda verdict=verdict: public.review(QUESTION, reviewer="Dana", verdict=verdict)
            )
        _refused(
            lambda: public.review("who discussed \udcff?", reviewer="Dana", verdict="ratified")
        )
        _refused(
            lambda: public.review(QUESTION, reviewer="Dana", verdict="ratified", content_hash="x")
        )

        # ... and plain text goes in: names a slug would merge, scripts it drops, a long note.
        for reviewer in ("Dana Reviewer", "dana reviewer", "李雷", "Ольга", "Dana Reviewer"):
            for reader in (public, readers["confidential"], top):
                reader.review(
                    QUESTION,
                    reviewer=reviewer,
                    verdict="ratified" if reader is public else "disputed",
                    note="Checked the threads.\n\tAnd the commits.",
                )
        assert public.ask(QUESTION).trust.state == "ratified"
        assert top.ask(QUESTION).trust.state == "disputed"
        public.review("\x1b[2J" + QUESTION + "\x00" * 3, reviewer="Eve", verdict="withdrawn")

        # review_claim: an RFC section (the original attack: a second title), the RFC, the
        # brain, an alignment, a person, a review, a card, the catalog's run: each at several
        # levels with different verdicts, so no reader sees two states for one node.
        review = _one(public, "SELECT ?r WHERE { ?r a rr:Review } ORDER BY ?r LIMIT 1")
        card = _one(public, "SELECT ?c WHERE { ?c a rr:AnswerCard } LIMIT 1")
        for claim in (section, rfc, brain_iri, alignment, review, card):
            for reader, verdict in ((public, "ratified"), (top, "disputed")):
                reader.review_claim(claim, reviewer="Dana Reviewer", verdict=verdict)
        score = _one(top, "SELECT ?s WHERE { ?s a rr:ExpertiseScore } ORDER BY ?s LIMIT 1")
        top.review_claim(score, reviewer="Dana Reviewer", verdict="ratified")
        _refused(  # the catalog is no reader's evidence: a run is not a claim
            lambda: top.review_claim(brain.scope.runs[-1].iri, reviewer="Dana", verdict="ratified")
        )
        readers["internal"].review_claim(person, reviewer="Dana Reviewer", verdict="withdrawn")
        for claim in (
            "not an iri",
            "",
            "https://example.org/\x1b[31m",
            "https://example.org/a b",
            "<" + section + ">",
            "https://example.org/" + "a" * 100_000,
            section + "\udcff",
            "https://example.org/nothing-here",
        ):
            _refused(
                lambda claim=claim: public.review_claim(claim, reviewer="Dana", verdict="ratified")
            )
        for name in HOSTILE_TEXT:
            _refused(
                lambda name=name: public.review_claim(section, reviewer=name, verdict="ratified")
            )
        for note in HOSTILE_NOTES:
            _refused(
                lambda note=note: public.review_claim(
                    section, reviewer="Dana", verdict="ratified", note=note
                )
            )
        # A public reader cannot reach what only restricted readers see.
        mail = top.query(
            "SELECT ?p WHERE { GRAPH ?g { ?p a <http://rdfs.org/sioc/ns#Post> } "
            "FILTER(STRENDS(STR(?g), '/mail')) }"
        ).rows
        restricted_post = next(r["p"].value for r in mail if not public.describe(r["p"].value))
        _refused(lambda: public.review_claim(restricted_post, reviewer="Dana", verdict="ratified"))

        # Each level sees its own latest verdict, and one state per node.
        assert section in {c["card"].value for c in public.cards_in_state("ratified")}
        assert section in {c["card"].value for c in top.cards_in_state("disputed")}
        assert section not in {c["card"].value for c in top.cards_in_state("ratified")}

        # The section still has its one heading, for every reader.
        for reader in readers.values():
            titles = reader.query(
                f"SELECT ?t WHERE {{ <{section}> <http://purl.org/dc/terms/title> ?t }}"
            ).rows
            assert len(titles) == 1

        # prune: hostile counts are refused or forget nothing that is current.
        _refused(lambda: public.prune(1))
        for keep in (0, -5, 10**18, 2.5, "1", True):
            _refused(lambda keep=keep: top.prune(keep))  # type: ignore[arg-type]
        assert top.prune(10) == []

    # build: a rebuild over the reviews, and builds from sources that are not there.
    rebuilt, _ = Brain.build(manifest, source=str(repo), path=folder)
    rebuilt.close()
    empty = tmp_path / "empty.bundle"
    empty.write_bytes(b"")
    with pytest.raises(SourceError):
        Brain.build(manifest, source=str(empty), path=folder)
    with pytest.raises(ManifestError):
        Brain.build(tmp_path / "no-manifest.toml", source=str(repo), path=folder)

    for level in LEVELS:
        with Brain.open(folder, reader=Reader(clearance=level)) as reader:
            assert reader.validate() == [], level
        result = CliRunner().invoke(
            main, ["validate", "--store", str(folder), "--clearance", level]
        )
        assert result.exit_code == 0, result.output
        assert "conforms" in result.output


def test_a_second_heading_from_any_write_is_refused_by_the_gate_itself(folder: Path) -> None:
    """A write that bypasses the reviews code (a future write path) still goes through
    Writer.write_batch, whose gate reads every graph of the brain's state: a second title on
    an RFC section, written into a reviews graph, is refused with the section's shape."""
    with Brain.open(folder, reader=Reader(clearance="restricted")) as brain:
        section = _one(
            brain, "SELECT ?s WHERE { ?s rr:sectionNumber '3.1' ; rr:isAppendix ?a } LIMIT 1"
        )
        writer = Writer(brain._store, ShaclGate(), brain.brain_id, brain.reader.tenant)
        batch = Batch(v.reviews_graph(brain.reader.tenant, brain.brain_id, "public"), "test write")
        batch.add(section, "dcterms:title", Literal("A second heading"))
        with pytest.raises(GateRejected, match="exactly one non-empty heading"):
            writer.write_batch(batch)
        # A second parent for the section: touched through the inverse path, refused too.
        other = Batch(v.reviews_graph(brain.reader.tenant, brain.brain_id, "public"), "test parent")
        other.add(brain.scope.runs[-1].iri, "rr:hasSection", section)
        with pytest.raises(GateRejected, match="belongs to exactly one"):
            writer.write_batch(other)
        # The gate will not check a batch without the graph it is written to.
        lone = Batch("https://example.org/graph", "test lone")
        lone.add(section, "rdf:type", term("rr:Section").value)
        with pytest.raises(ValueError, match="without that graph"):
            ShaclGate().check(lone, brain._store, brain.graphs)
        assert brain.validate() == []
    assert NamedNode(section)  # the IRI read back is well formed
