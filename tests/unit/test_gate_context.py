"""The gate prepares each batch of a run from what it kept as the run was staged
(:class:`GateContext`), and that gives the document reading the staged run gives, triple for
triple: on random fictional runs whose batches share nodes every way a shape can see (a node
described by several batches, a section given its parent by another batch, a blank node's
triples, types of nodes other batches describe, reviews outside the run), and on every batch
of the fictional brain's builds, staged in memory and on disk, with a review."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ratified_rdf import build as build_module
from ratified_rdf.graph.gate import ShaclGate, StagedBatch, StagedRun
from ratified_rdf.graph.gate_context import GateContext
from ratified_rdf.graph.mapping import Batch, MappedTriples
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.graph.vocab import RR
from tests.gate_context_checks import assert_files_prepare_alike, assert_prepared_alike
from tests.pigeon import MANIFEST, make_pigeon_repo, reviewed_pigeon_store
from tests.recording import RecordingGate

EX = "https://example.org/fictional/"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
HAS_SECTION = NamedNode(RR + "hasSection")
PREDICATES = [NamedNode(EX + p) for p in ("names", "cites", "follows", "label")]
CLASSES = [NamedNode(EX + c) for c in ("Person", "Section", "Document")]
FOAF_PERSON = "http://xmlns.com/foaf/0.1/Person"


def _random_run(rng: random.Random) -> tuple[list[Batch], list[Triple]]:
    """Batches of a fictional run in two graphs, and a reviews graph's triples: subjects
    drawn from a small pool, so many nodes are described by several batches."""
    nodes = [NamedNode(f"{EX}node/{i}") for i in range(rng.randrange(10, 60))]
    graphs = [f"{EX}graph/run/spec", f"{EX}graph/run/github"]

    def triple(blank: BlankNode | None = None) -> Triple:
        subject = blank or rng.choice(nodes)
        kind = rng.random()
        if kind < 0.2:
            return Triple(subject, RDF_TYPE, rng.choice(CLASSES))
        if kind < 0.35:
            return Triple(rng.choice(nodes), HAS_SECTION, rng.choice(nodes))
        if kind < 0.45:
            return Triple(subject, rng.choice(PREDICATES), Literal(f"text {rng.randrange(5)}"))
        return Triple(subject, rng.choice(PREDICATES), rng.choice(nodes))

    batches = []
    for index in range(rng.randrange(2, 12)):
        graph, source = rng.choice(graphs), f"fictional batch {index}"
        triples = [triple() for _ in range(rng.randrange(1, 30))]
        if rng.random() < 0.3:
            blank = BlankNode(f"b{index}")
            triples += [Triple(rng.choice(nodes), PREDICATES[0], blank), triple(blank)]
            batches.append(Batch(graph, source, triples=triples))
        elif rng.random() < 0.5:  # as the mapping makes them: lines, with what staging reads
            batches.append(_mapped(graph, source, triples))
        else:
            batches.append(Batch(graph, source, triples=triples))
    reviews = [triple() for _ in range(rng.randrange(0, 6))]
    return batches, reviews


def _mapped(graph: str, source: str, triples: list[Triple]) -> Batch:
    """A batch of ``triples`` (with IRI subjects) held as a mapped batch holds them."""
    batch = Batch(graph, source)
    assert isinstance(batch.triples, MappedTriples)
    for t in triples:
        batch.triples.add(t.subject.value, t.predicate.value, str(t.object))
    return batch


def _staged_random_run(
    rng: random.Random,
) -> tuple[ShaclGate, OxigraphStore, GateContext, list[Batch], list[StagedBatch], str]:
    """A random fictional run (:func:`_random_run`) staged in a store and through a gate
    context, its reviews graph beside it: the gate, store, context, batches, what the
    context kept of each, and the reviews graph's name."""
    batches, reviews = _random_run(rng)
    gate = ShaclGate()
    store = OxigraphStore()
    context = GateContext(gate)
    reviews_graph = f"{EX}graph/reviews"
    store.add(reviews_graph, reviews)
    context.outside(reviews)
    staged = []
    for batch in batches:
        store.add(batch.graph, batch.triples)
        staged.append(context.stage(batch))
    return gate, store, context, batches, staged, reviews_graph


@pytest.mark.parametrize("seed", range(40))
def test_a_random_run_is_prepared_from_its_context_as_from_the_staged_run(seed: int) -> None:
    gate, store, context, batches, staged, reviews_graph = _staged_random_run(random.Random(seed))
    # A graph outside the state the run leaves (an earlier run's) must not be read.
    store.add(
        f"{EX}graph/earlier/spec",
        [
            Triple(n, PREDICATES[3], Literal("old"))
            for n in [
                t.subject for b in batches for t in b.triples if isinstance(t.subject, NamedNode)
            ]
        ],
    )
    graphs = tuple(sorted({reviews_graph, *(b.graph for b in batches)}))
    run = StagedRun(store, graphs, context)
    context.complete(store, graphs)
    assert assert_prepared_alike(gate, staged, run) > 0


def test_shared_nodes_are_those_several_batches_or_the_reviews_touch() -> None:
    gate = ShaclGate()
    context = GateContext(gate)
    alone, twice, reviewed, section = (NamedNode(f"{EX}node/{n}") for n in range(4))
    first = Batch(
        f"{EX}graph/run/spec",
        "first",
        triples=[
            Triple(alone, PREDICATES[0], twice),
            Triple(twice, PREDICATES[3], Literal("a")),
            Triple(alone, HAS_SECTION, section),
        ],
    )
    second = Batch(
        f"{EX}graph/run/spec",
        "second",
        triples=[Triple(twice, PREDICATES[3], Literal("b")), Triple(section, RDF_TYPE, CLASSES[1])],
    )
    context.outside([Triple(reviewed, PREDICATES[3], Literal("reviewed"))])
    third = Batch(
        f"{EX}graph/run/github", "third", triples=[Triple(reviewed, PREDICATES[1], alone)]
    )
    for batch in (first, second, third):
        context.stage(batch)
    assert context.shared == {twice.value, section.value, reviewed.value}


def test_a_context_is_complete_once(tmp_path: Path) -> None:
    gate = ShaclGate()
    context = GateContext(gate)
    batch = Batch(f"{EX}graph/run/spec", "one", triples=[])
    batch.triples.append(Triple(NamedNode(f"{EX}node/1"), PREDICATES[3], Literal("x")))
    staged = context.stage(batch)
    with pytest.raises(RuntimeError, match="before the run was complete"):
        context.prepare(staged)
    store = OxigraphStore()
    store.add(batch.graph, batch.triples)
    context.complete(store, [batch.graph])
    with pytest.raises(RuntimeError, match="once the gate context is complete"):
        context.stage(batch)
    assert context.prepare(staged).ntriples


@pytest.mark.parametrize("limit", ["", "0"])
def test_every_batch_of_a_build_is_prepared_from_its_context_as_from_the_staged_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, limit: str
) -> None:
    # A rebuild after a review: the reviews graph is outside the run, and the run is staged
    # in memory (the default limit) or on disk in the store it is for (no limit).
    repo, store = reviewed_pigeon_store(tmp_path)
    monkeypatch.setattr(build_module, "ShaclGate", RecordingGate)
    monkeypatch.setenv("RATIFIED_MEMORY_COPY_QUADS", limit)
    RecordingGate.seen, RecordingGate.runs = [], []
    build_module.build(MANIFEST, source=str(repo), store=store)
    ((staged, run),) = RecordingGate.runs
    assert run.in_memory is (limit == "")
    assert run.context is not None and run.context.shared
    assert assert_prepared_alike(ShaclGate(), staged, run) > 1000


def test_a_full_temporary_folder_is_a_sentence_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from ratified_rdf import StoreError
    from ratified_rdf.graph import gate_context

    repo = make_pigeon_repo(tmp_path / "git")
    store = OxigraphStore(tmp_path / "db")
    real = gate_context._open_spool

    class Full:
        def __init__(self, path: Path) -> None:
            self.file = real(path)

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name: str) -> object:
            return getattr(self.file, name)

    monkeypatch.setattr(gate_context, "_open_spool", Full)
    with pytest.raises(StoreError, match=r"No space left on device\. Nothing of this run was"):
        build_module.build(MANIFEST, source=str(repo), store=store)
    assert store.graphs() == []


def _awkward_document(seed: int) -> bytes:
    """Fifty random triples as N-Triples: literals that look like the end of an IRI line
    (with and without a space before the ``<``), datatypes, languages, blank nodes and IRIs
    beyond ASCII."""
    from pyoxigraph import RdfFormat, serialize

    rng = random.Random(seed)
    iris = [NamedNode(f"{EX}{name}") for name in ("a", "b", "é-ü/ñ", "x?y=1#z", "q%20r")]
    literals = [
        Literal("ends like an IRI <https://example.org/fictional/a> ."),
        Literal('a "quoted" <b> .\nsecond line'),
        Literal("5", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        Literal("grüße", language="de"),
        Literal("^^<https://example.org/fictional/b> ."),
        Literal(" <https://example.org/fictional/c> ."),
    ]
    triples = [
        Triple(
            rng.choice([*iris, BlankNode("b1")]),
            rng.choice(PREDICATES),
            rng.choice([*iris, *literals, BlankNode("b2")]),
        )
        for _ in range(50)
    ]
    return serialize(triples, format=RdfFormat.N_TRIPLES) or b""


@pytest.mark.parametrize("seed", range(20))
def test_the_iris_read_off_a_document_s_lines_are_those_its_terms_hold(seed: int) -> None:
    # The lines' IRIs (subjects and objects) are those parsing them into terms gives.
    from pyoxigraph import RdfFormat, parse

    from ratified_rdf.graph.gate_context import _named_nodes

    document = _awkward_document(seed)
    expected = set()
    for quad in parse(document, format=RdfFormat.N_TRIPLES):
        for node in (quad.subject, quad.object):
            if isinstance(node, NamedNode):
                expected.add(node.value)
    assert _named_nodes(document) == expected


@pytest.mark.parametrize("seed", range(20))
def test_the_object_iris_read_off_a_document_are_those_its_terms_hold(seed: int) -> None:
    # A batch's own subjects are all nodes it touches, so only its objects are looked up
    # for types: every IRI object, none of a literal that looks like one, with or without
    # the document's last line break.
    from pyoxigraph import RdfFormat, parse

    from ratified_rdf.graph.gate_context import _object_iris

    document = _awkward_document(seed)
    expected = {
        quad.object.value
        for quad in parse(document, format=RdfFormat.N_TRIPLES)
        if isinstance(quad.object, NamedNode)
    }
    assert _object_iris(document) == expected
    assert _object_iris(document.rstrip(b"\n")) == expected


def test_a_staged_runs_workers_start_afresh_and_still_reject(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Asked to (``RATIFIED_GATE_FRESH_WORKERS=1``), the workers that check a run with a gate
    context are started by a fork server (they inherit nothing of the build's heap) and open
    the context from its files; what they find is what the gate in this process finds."""
    import concurrent.futures

    from ratified_rdf import GateRejected
    from ratified_rdf.graph import gate as gate_module

    started: list[str] = []
    real = concurrent.futures.ProcessPoolExecutor

    def recording(*args: object, **kwargs: object) -> concurrent.futures.ProcessPoolExecutor:
        context = kwargs["mp_context"]
        started.append(context.get_start_method())  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gate_module, "ProcessPoolExecutor", recording)
    monkeypatch.setenv("RATIFIED_GATE_FRESH_WORKERS", "1")
    gate = ShaclGate()
    store = OxigraphStore()
    context = GateContext(gate)
    graph = f"{EX}graph/run/spec"
    person = NamedNode(EX + "person/ada")
    good = Batch(
        graph,
        "a person",
        [
            Triple(person, RDF_TYPE, NamedNode(FOAF_PERSON)),
            Triple(person, NamedNode("http://xmlns.com/foaf/0.1/name"), Literal("Ada")),
        ],
    )
    # A section that names no number breaks rr:Section's shape.
    section = NamedNode(EX + "section/1")
    bad = Batch(
        graph, "a numberless section", [Triple(section, RDF_TYPE, NamedNode(RR + "Section"))]
    )
    staged = []
    for batch in (good, bad):
        store.add(batch.graph, batch.triples)
        staged.append(context.stage(batch))
    run = StagedRun(store, (graph,), context)
    context.complete(store, run.graphs)
    in_process = [gate_module.checked(gate.engine, context.prepare(k)) for k in staged]
    assert not in_process[0] and in_process[1]
    with pytest.raises(GateRejected) as rejected:
        gate.check_staged(staged, run, workers=2)
    assert started == [gate_module.FRESH_START]
    assert rejected.value.source == "a numberless section"
    # Not asked for, the workers are forked from this process (a fork server's would run an
    # unguarded main script again), and find the same.
    monkeypatch.delenv("RATIFIED_GATE_FRESH_WORKERS")
    with pytest.raises(GateRejected) as forked:
        gate.check_staged(staged, run, workers=2)
    assert started == [gate_module.FRESH_START, "fork"]
    assert forked.value.source == "a numberless section"
    assert sorted(v.focus_node for v in rejected.value.violations) == sorted(
        v.focus_node for v in in_process[1]
    )


def test_a_script_without_a_main_guard_builds_once(tmp_path: Path) -> None:
    """A library user's script that builds at its top level (no ``if __name__ ==
    "__main__":``) runs once: the gate's workers, by default, do not run the main script again
    (a fork server's would)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(root)!r})\n"
        "from pathlib import Path\n"
        "from ratified_rdf import Brain\n"
        "from tests.pigeon import MANIFEST, make_pigeon_repo\n"
        "print('building', flush=True)\n"
        f"repo = make_pigeon_repo(Path({str(tmp_path / 'git')!r}))\n"
        f"brain, report = Brain.build(MANIFEST, source=str(repo), path={str(tmp_path / 'db')!r})\n"
        "print('built', report.batches, flush=True)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines.count("building") == 1 and len([x for x in lines if x.startswith("built ")]) == 1


def test_the_type_table_gives_back_each_iris_types_as_they_were_written(tmp_path: Path) -> None:
    from ratified_rdf.graph.gate_context import TypeTable

    rdf_type = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
    rng = random.Random(3)
    written: dict[str, set[str]] = {}
    table = TypeTable()
    kinds = [f"<{EX}class/{n}>" for n in range(5)] + ['"not a class"@en', '"4"^^<http://x/n>']
    for _ in range(3000):
        iri = f"{EX}node/{rng.randrange(1200)}"
        kind = rng.choice(kinds)
        written.setdefault(iri, set()).add(kind)
        table.add(iri, kind)
    table.seal()
    table.write(tmp_path / "types.bin")
    again = TypeTable.read(tmp_path / "types.bin")
    asked = [*written, f"{EX}node/never", f"{EX}other"]
    expected = sorted(f"<{iri}> <{rdf_type}> {kind} ." for iri in written for kind in written[iri])
    for one in (table, again):
        got = [line.decode() for line in one.lines(asked)]
        assert sorted(got) == expected  # each once, however often it was added
    assert list(again.lines([f"{EX}node/never"])) == []


@pytest.mark.parametrize(
    ("asked", "limit", "expected"),
    [
        (None, "", ["forkserver", "forkserver"]),
        (None, "0", ["forkserver", "forkserver"]),
        ("0", "0", ["fork"]),
    ],
)
def test_the_cli_builds_with_workers_started_afresh(
    asked: str | None,
    limit: str,
    expected: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The CLI's script is guarded, so its build starts the gate's workers afresh unless
    ``RATIFIED_GATE_FRESH_WORKERS=0`` says fork (afresh, a run has its own batches checked
    by workers of their own while the view is derived, the view's after: one staged on disk,
    or one staged in memory from its copy on disk); a library caller still forks by default."""
    import concurrent.futures

    from click.testing import CliRunner

    from ratified_rdf.graph import gate as gate_module
    from ratified_rdf.surfaces.cli import main
    from tests.pigeon import MANIFEST, make_pigeon_repo

    started: list[str] = []
    real = concurrent.futures.ProcessPoolExecutor

    def recording(*args: object, **kwargs: object) -> concurrent.futures.ProcessPoolExecutor:
        started.append(kwargs["mp_context"].get_start_method())  # type: ignore[attr-defined]
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gate_module, "ProcessPoolExecutor", recording)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("RATIFIED_MEMORY_COPY_QUADS", limit)
    if asked is None:
        monkeypatch.delenv("RATIFIED_GATE_FRESH_WORKERS", raising=False)
    else:
        monkeypatch.setenv("RATIFIED_GATE_FRESH_WORKERS", asked)
    repo = make_pigeon_repo(tmp_path / "repo")
    built = CliRunner().invoke(
        main,
        ["build", str(MANIFEST), "--source", str(repo), "--store", str(tmp_path / "s"), "--quiet"],
    )
    assert built.exit_code == 0, built.output
    assert started == expected
    assert not gate_module.fresh_workers()  # only within the CLI's build


def _batch_of_awkward_lines(seed: int, inverse: list[str]) -> Batch:
    """A fictional batch whose literals and blank nodes look like the lines around them."""
    rng = random.Random(seed)
    iris = [NamedNode(f"{EX}{name}") for name in ("a", "b", "é-ü/ñ", "x?y=1#z", "q%20r")]
    literals = [
        Literal(f"ends like a section <{EX}a> ."),
        Literal(f'a "quoted" <{inverse[0]}> <{EX}b> .\nsecond line'),
        Literal(f"<{EX}a> <{RDF_TYPE.value}> <{EX}b> ."),
        Literal("5", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        Literal("grüße", language="de"),
    ]
    predicates = [*PREDICATES, *(NamedNode(p) for p in inverse), RDF_TYPE]
    batch = Batch(f"{EX}graph/run/spec", "lines", triples=[])
    for _ in range(60):
        subject = rng.choice([*iris, BlankNode("b1")])
        value = rng.choice([*iris, *literals, BlankNode("b2")])
        batch.triples.append(Triple(subject, rng.choice(predicates), value))
    return batch


@pytest.mark.parametrize("seed", range(20))
def test_the_nodes_read_off_a_batchs_lines_are_those_it_touches(seed: int) -> None:
    """What a gate worker reads off a batch's spooled lines as the nodes it touches is what
    the gate finds in its terms (ShaclGate.touched): subjects that are IRIs, and IRI objects
    through a predicate a shape reads backwards, whatever the literals and blank nodes
    around them look like."""
    from ratified_rdf.graph.gate_context import _predicate_terms, touched_in
    from ratified_rdf.graph.store import ntriples

    gate = ShaclGate()
    inverse = list(gate.inverse_predicates)
    assert inverse, "the shapes read some predicate backwards"
    batch = _batch_of_awkward_lines(seed, inverse)
    expected = gate.touched(batch)
    assert any(t.predicate.value in inverse for t in batch.triples)
    assert touched_in(ntriples(batch.triples), _predicate_terms(inverse)) == expected


@pytest.mark.parametrize("seed", range(20))
def test_the_terms_a_mapped_batch_is_staged_with_are_those_the_gate_reads(seed: int) -> None:
    """Staging reads a mapped batch's terms once for the nodes it touches (its IRI
    subjects, and IRI objects through a predicate a shape reads backwards), its rdf:type
    triples on IRIs, and the triples whose subject is not an IRI, in their order."""
    from ratified_rdf.graph.gate_context import read_terms

    gate = ShaclGate()
    inverse = list(gate.inverse_predicates)
    batch = _batch_of_awkward_lines(seed, inverse)
    touched, types, loose = read_terms(batch.triples, frozenset(inverse))
    # Worked out here from the rule itself (ShaclGate.touched now calls read_terms).
    assert touched == {
        t.subject.value for t in batch.triples if isinstance(t.subject, NamedNode)
    } | {
        t.object.value
        for t in batch.triples
        if t.predicate.value in inverse and isinstance(t.object, NamedNode)
    }
    assert types == [
        (t.subject.value, str(t.object))
        for t in batch.triples
        if t.predicate == RDF_TYPE and isinstance(t.subject, NamedNode)
    ]
    assert loose == tuple(t for t in batch.triples if not isinstance(t.subject, NamedNode))


@pytest.mark.parametrize("seed", range(20))
def test_a_staged_batchs_types_and_loose_triples_are_read_off_its_lines(seed: int) -> None:
    """The types a gate context keeps of a batch, read off its lines as it is staged, are
    its rdf:type triples on IRIs (a literal that looks like such a line is none), and the
    triples it keeps aside are those whose subject is not an IRI."""
    from ratified_rdf.graph.store import ntriples

    gate = ShaclGate()
    batch = _batch_of_awkward_lines(seed, list(gate.inverse_predicates))
    context = GateContext(gate)
    staged = context.stage(batch, ntriples(batch.triples))
    context.complete(OxigraphStore(), [batch.graph])
    typed = {t.subject.value for t in batch.triples if isinstance(t.subject, NamedNode)}
    expected = sorted(
        f"{t.subject} {t.predicate} {t.object} .".encode()
        for t in batch.triples
        if t.predicate == RDF_TYPE and isinstance(t.subject, NamedNode)
    )
    assert expected, "the batch types some IRI"
    assert sorted(set(context._type_tables().lines(sorted(typed)))) == sorted(set(expected))
    loose = {t for t in batch.triples if not isinstance(t.subject, NamedNode)}
    assert loose and set(staged.loose) == loose


def _view_of(rng: random.Random, batches: list[Batch], index: int) -> Batch:
    """A fictional view batch: nodes of its own (a few shared with other view batches),
    typed, pointing at the run's nodes, adding nothing to them."""
    run_nodes = [t.subject for b in batches for t in b.triples if isinstance(t.subject, NamedNode)]
    batch = Batch(f"{EX}graph/run/view-spec", f"fictional view batch {index}", triples=[])
    for n in range(rng.randrange(1, 6)):
        node = NamedNode(f"{EX}view/{rng.randrange(8) if n == 0 else f'{index}-{n}'}")
        batch.triples.append(Triple(node, RDF_TYPE, CLASSES[rng.randrange(3)]))
        batch.triples.append(Triple(node, PREDICATES[1], rng.choice(run_nodes)))
        batch.triples.append(Triple(node, PREDICATES[3], Literal(f"row {index}.{n}")))
    return batch


def _staged_with_checkpoint(
    rng: random.Random, touching: bool, described: bool = True
) -> tuple[ShaclGate, GateContext, OxigraphStore, list[StagedBatch], list[StagedBatch], Any]:
    """A random run staged through a context, a checkpoint (described from it unless not
    ``described``: the thread describing it not done yet), then view batches staged (one
    touching a node of the run when ``touching``), the context complete."""
    gate, store, context, batches, run, reviews_graph = _staged_random_run(rng)
    run_graphs = sorted({reviews_graph, *(b.graph for b in batches)})
    checkpoint = context.checkpoint()
    files = checkpoint.describe(store, run_graphs) if described else None
    views = [_view_of(rng, batches, i) for i in range(rng.randrange(1, 6))]
    if touching:
        node = next(t.subject for t in batches[-1].triples if isinstance(t.subject, NamedNode))
        views[-1].triples.append(Triple(node, PREDICATES[3], Literal("the view adds this")))
    derived = []
    for batch in views:
        store.add(batch.graph, batch.triples)
        derived.append(context.stage(batch))
    graphs = tuple(sorted({*run_graphs, views[0].graph}))
    context.complete(store, graphs)
    return gate, context, store, run, derived, (files, graphs)


@pytest.mark.parametrize("seed", range(30))
def test_a_checkpoint_prepares_the_run_as_the_whole_state_it_leaves_does(seed: int) -> None:
    """The run's batches prepared from the checkpoint (before the view is staged) are, line
    for line, what preparing them from the whole state gives; and the complete context
    prepares every batch, the run's and the view's, as that state does."""

    gate, context, store, run, derived, (files, graphs) = _staged_with_checkpoint(
        random.Random(seed), touching=False
    )
    assert context.holds and context.run_touched_after is None
    assert_files_prepare_alike(gate, context, files, run, store, graphs)
    assert assert_prepared_alike(gate, [*run, *derived], StagedRun(store, graphs, context)) > 0


@pytest.mark.parametrize("seed", range(10))
def test_a_view_batch_touching_a_run_node_voids_the_checkpoint(seed: int) -> None:
    """A view batch that adds to a node of the run: the checkpoint does not hold (the run's
    early verdicts are then dropped), and the complete context describes every shared node,
    the run's included, as the whole state does."""
    gate, context, store, run, derived, (_, graphs) = _staged_with_checkpoint(
        random.Random(seed), touching=True
    )
    assert not context.holds and context.run_touched_after is not None
    assert assert_prepared_alike(gate, [*run, *derived], StagedRun(store, graphs, context)) > 0


@pytest.mark.parametrize("seed", range(5))
def test_a_checkpoint_not_yet_described_is_described_whole_at_the_end(seed: int) -> None:
    """Completed before the thread has described the checkpoint, the context describes every
    shared node itself, and prepares every batch as the whole state does."""
    gate, context, store, run, derived, (files, graphs) = _staged_with_checkpoint(
        random.Random(seed), touching=False, described=False
    )
    assert context.holds and files is None
    assert assert_prepared_alike(gate, [*run, *derived], StagedRun(store, graphs, context)) > 0
    assert context.files().described == (("held.nt", "shared.txt"),)


def _view_part(rng: random.Random, batches: list[Batch], first: int, size: int) -> list[Batch]:
    """Fictional view batches ``first``… of their own nodes, none shared, pointing at the
    run's nodes."""
    part = []
    for index in range(first, first + size):
        batch = _view_of(rng, batches, index)
        own = Batch(batch.graph, batch.source, triples=[])
        for t in batch.triples:
            subject = NamedNode(f"{t.subject.value}/of-{index}")  # type: ignore[union-attr]
            own.triples.append(Triple(subject, t.predicate, t.object))
        part.append(own)
    return part


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("later", ["apart", "touching the part", "touching the run"])
def test_a_part_of_the_view_checked_early_holds_unless_a_later_batch_adds_to_it(
    seed: int, later: str
) -> None:
    """A part of the view sealed by checkpoint_since is prepared from its files as the whole
    state prepares it; its verdicts stand (holds_for) unless a batch staged after it adds to
    a node it touched, and the run's stand unless one adds to a node of the run."""

    rng = random.Random(seed)
    gate, store, context, batches, run, reviews_graph = _staged_random_run(rng)
    run_graphs = sorted({reviews_graph, *(b.graph for b in batches)})
    context.checkpoint().describe(store, run_graphs)
    assert context.checkpoint_since() is None  # nothing staged since
    part = _view_part(rng, batches, 0, rng.randrange(1, 5))
    staged_part = []
    for batch in part:
        store.add(batch.graph, batch.triples)
        staged_part.append(context.stage(batch))
    files = context.checkpoint_since()
    assert files is not None
    rest = _view_part(rng, batches, 100, 2)
    if later == "touching the part":
        rest[-1].triples.append(Triple(part[0].triples[0].subject, PREDICATES[3], Literal("x")))
    elif later == "touching the run":
        node = next(t.subject for t in batches[-1].triples if isinstance(t.subject, NamedNode))
        rest[-1].triples.append(Triple(node, PREDICATES[3], Literal("the view adds this")))
    for batch in rest:
        store.add(batch.graph, batch.triples)
        context.stage(batch)
    graphs = tuple(sorted({*run_graphs, part[0].graph}))
    context.complete(store, graphs)
    first_of_part = len(run)
    assert context.holds_for(0) == (later != "touching the run")
    assert context.holds_for(first_of_part) == (later == "apart")
    assert not context.holds_for(first_of_part + len(part))  # no checkpoint after it
    if later == "apart":
        assert_files_prepare_alike(gate, context, files, staged_part, store, graphs)


@pytest.mark.parametrize("seed", range(5))
def test_a_part_of_the_view_sharing_a_node_is_left_for_the_end(seed: int) -> None:
    """Two batches of a part touching one node (whose whole description would have to be
    read from the staged run): the part is not given files to be checked early."""
    rng = random.Random(seed)
    _, _, context, batches, _, _ = _staged_random_run(rng)
    context.checkpoint()
    first, second = _view_part(rng, batches, 0, 2)
    second.triples.append(Triple(first.triples[0].subject, PREDICATES[3], Literal("both")))
    context.stage(first)
    context.stage(second)
    assert context.checkpoint_since() is None


def _quads_of(folder: Path) -> list[str]:
    """Every line of every graph of the store in ``folder``, after its graph's name."""
    store = OxigraphStore(folder)
    try:
        return [
            f"{graph} {line}"
            for graph in store.graphs()
            for line in store.dump_graph(graph).decode().splitlines()
        ]
    finally:
        store.close()


def _without_run_ids(quads: list[str]) -> list[str]:
    """Quads as text with what differs between two builds of one brain (run ids, times)
    taken out."""
    return sorted(
        re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{6}|\d{4}-\d\d-\d\dT[\d:.]+Z", "…", q) for q in quads
    )


def test_a_context_takes_one_checkpoint_before_it_is_complete() -> None:
    context = GateContext(ShaclGate())
    assert not context.holds
    context.checkpoint()
    with pytest.raises(RuntimeError, match="one checkpoint"):
        context.checkpoint()
    context.complete(OxigraphStore(), [])
    with pytest.raises(RuntimeError, match="once the gate context is complete"):
        context.checkpoint()


@pytest.mark.parametrize(
    ("part_quads", "copy_quads"), [(1_000_000, "0"), (40, "0"), (1_000_000, ""), (40, "")]
)
def test_a_build_checks_its_runs_batches_while_it_derives_the_view_and_still_rejects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part_quads: int, copy_quads: str
) -> None:
    """With workers started afresh, a build checks the run's own batches from a checkpoint
    while it derives the view (and, ``part_quads`` at a time, the view's batches staged so
    far), and the rest once the view is staged: every batch once, none that passed early
    checked again, and the brain the same as one checked all at the end. A run batch the
    gate refuses still fails the build, naming it, and the store is left as it was. So too
    for a run staged in memory (``copy_quads`` the default limit): it is checked early from
    its copy on disk."""
    from ratified_rdf import Brain, GateRejected
    from ratified_rdf.graph import gate as gate_module
    from ratified_rdf.graph import writer as writer_module

    monkeypatch.setenv("RATIFIED_GATE_FRESH_WORKERS", "1")
    # "0": staged on disk, as at scale; "": in memory, copied to disk as it is staged.
    monkeypatch.setenv("RATIFIED_MEMORY_COPY_QUADS", copy_quads)
    monkeypatch.setattr(writer_module, "EARLY_PART_QUADS", part_quads)
    calls: list[tuple[str, list[str]]] = []
    early, staged_check = ShaclGate.check_early, ShaclGate.check_staged
    real_add, real_passed = gate_module.EarlyCheck.add, gate_module.EarlyCheck.passed
    verdicts: list[list[bool]] = []

    def recorded_early(self: ShaclGate, staged: Any, files: Any, *args: Any, **kw: Any) -> Any:
        calls.append(("early", [k.source for k in staged]))
        return early(self, staged, files, *args, **kw)

    def recorded_add(self: Any, staged: Any, files: Any) -> None:
        calls.append(("early part", [k.source for k in staged]))
        real_add(self, staged, files)

    def recorded_passed(self: Any) -> list[bool]:
        verdicts.append(real_passed(self))
        return verdicts[-1]

    def recorded_staged(self: ShaclGate, staged: Any, run: Any, *args: Any, **kw: Any) -> Any:
        staged = list(staged)
        calls.append(("after the view", [k.source for k in staged]))
        return staged_check(self, staged, run, *args, **kw)

    monkeypatch.setattr(gate_module.ShaclGate, "check_early", recorded_early)
    monkeypatch.setattr(gate_module.EarlyCheck, "add", recorded_add)
    monkeypatch.setattr(gate_module.EarlyCheck, "passed", recorded_passed)
    monkeypatch.setattr(gate_module.ShaclGate, "check_staged", recorded_staged)
    repo = make_pigeon_repo(tmp_path / "repo")
    built, report = Brain.build(MANIFEST, source=str(repo), path=tmp_path / "store")
    built.close()
    early_built = _quads_of(tmp_path / "store")
    kinds = [kind for kind, _ in calls]
    assert kinds[0] == "early" and kinds[-1] == "after the view"
    parts = [sources for kind, sources in calls if kind == "early part"]
    assert bool(parts) == (part_quads < 1_000_000), kinds
    assert all(s.startswith("card view") for part in parts for s in part)
    given = [s for kind, sources in calls if kind.startswith("early") for s in sources]
    assert calls[0][1] and not any(s.startswith("card view") for s in calls[0][1])
    [passed] = verdicts
    passed_early = [s for s, ok in zip(given, passed, strict=False) if ok]
    after = calls[-1][1]
    assert not set(passed_early) & set(after), "a batch that passed early was checked again"
    assert len(passed_early) + len(after) == report.batches
    assert any(s.startswith("card view") for s in after) or parts

    # The same brain, every batch checked once the view is staged.
    monkeypatch.setenv("RATIFIED_GATE_FRESH_WORKERS", "0")
    again, _ = Brain.build(MANIFEST, source=str(repo), path=tmp_path / "store-late")
    again.close()
    late_built = _quads_of(tmp_path / "store-late")
    assert _without_run_ids(early_built) == _without_run_ids(late_built)
    monkeypatch.setenv("RATIFIED_GATE_FRESH_WORKERS", "1")

    real_batches = build_module._run_batches
    section = NamedNode(EX + "section/numberless")

    def with_a_bad_batch(*args: Any) -> Any:
        yield from real_batches(*args)
        # A section that names no number breaks rr:Section's shape.
        yield Batch(
            args[5].graph("spec"),
            "a numberless section",
            [Triple(section, RDF_TYPE, NamedNode(RR + "Section"))],
        )

    monkeypatch.setattr(build_module, "_run_batches", with_a_bad_batch)
    calls.clear()
    folder = tmp_path / "refused"
    with pytest.raises(GateRejected) as rejected:
        Brain.build(MANIFEST, source=str(repo), path=folder)
    assert rejected.value.source == "a numberless section"
    # Rejected early, it is checked again alone, and fails the build before the rest is
    # checked; not reached early, it is checked with the rest.
    assert calls[0][0] == "early" and "a numberless section" in calls[-1][1]
    store = OxigraphStore(folder)
    try:
        assert not any(g.endswith("/spec") for g in store.graphs())
    finally:
        store.close()
