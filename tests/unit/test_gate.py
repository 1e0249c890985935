"""The SHACL gate: a violating batch is rejected whole, with a readable report, and the store
is left byte-for-byte as it was."""

from __future__ import annotations

import gc
import hashlib
import io
import os
import re
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pyshacl
import pytest
import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple

from ratified_rdf import Brain, BrainError, GateRejected
from ratified_rdf._errors import InputError
from ratified_rdf.graph import gate as gate_module
from ratified_rdf.graph.gate import (
    GateWorkerDied,
    PreparedBatch,
    ShaclGate,
    StagedBatch,
    StagedRun,
    Violation,
    load_shapes,
)
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.shacl_engines import ENGINES, verdict
from ratified_rdf.graph.store import OxigraphStore, TripleStore
from ratified_rdf.graph.violations import violations_of
from ratified_rdf.graph.vocab import RR, term
from ratified_rdf.graph.writer import STAGING_PREFIX, MappingChanged, Writer
from tests.pigeon import MANIFEST, make_pigeon_repo, reviewed_pigeon_store
from tests.recording import RecordingGate, recorded_build


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    """The pigeon brain, built once; the tests write to copies of it."""
    repo = make_pigeon_repo(tmp_path_factory.mktemp("gate-git"))
    brain, _ = Brain.build(MANIFEST, source=str(repo))
    return brain


@pytest.fixture()
def brain(built: Brain) -> Brain:
    """A brain of the test's own: every graph of the built one, copied into a fresh store."""
    store = OxigraphStore()
    for graph in built._store.graphs():
        store.add(graph, list(built._store.triples([graph])))
    return Brain.from_store(store)


def _snapshot(brain: Brain) -> bytes:
    buffer = io.BytesIO()
    brain._store.dump(buffer, sorted(brain._store.graphs()), RdfFormat.N_QUADS)
    return b"\n".join(sorted(buffer.getvalue().splitlines()))


def _bad_revision_batch(graph: str) -> Batch:
    """A revision with a three-digit number, no date, no link and no sections."""
    batch = Batch(graph, "revision draft-example-pigeon-123 (test)")
    iri = "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon/123"
    batch.add(iri, "rdf:type", term("rr:Revision").value)
    batch.add(iri, "rr:revisionOf", "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon")
    batch.text(iri, "rr:revisionNumber", "123")
    batch.add(iri, "prov:wasDerivedFrom", "https://w3id.org/ratified-rdf/id/doc/not-a-commit")
    # A valid triple for another subject in the same batch must not be written either.
    batch.text("https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon", "rr:anchor", "x")
    return batch


def test_rejected_batch_leaves_store_byte_for_byte(brain: Brain) -> None:
    before = _snapshot(brain)
    writer = Writer(brain._store, ShaclGate(), brain.brain_id, brain.reader.tenant)
    run = writer.begin_run()
    with pytest.raises(GateRejected) as rejected:
        writer.write_all([_bad_revision_batch(run.graph("spec"))])
    assert _snapshot(brain) == before
    report = rejected.value
    assert report.source == "revision draft-example-pigeon-123 (test)"
    paths = {
        (v.focus_node.rsplit("/", 1)[-1], re.split(r"[#/]", v.path)[-1])
        for v in report.violations
        if v.path
    }
    assert ("123", "revisionNumber") in paths
    assert ("123", "generatedAtTime") in paths
    assert ("123", "page") in paths
    # No sections and no reading gap saying why (the node's sh:or, which has no path).
    assert any(
        v.focus_node.endswith("/123") and "has sections, or says why" in v.message
        for v in report.violations
    )
    assert ("123", "wasDerivedFrom") in paths  # points at something that is not a commit
    text = str(report)
    assert text.startswith(
        "The SHACL gate rejected the batch from revision draft-example-pigeon-123"
    )
    assert "nothing of it was written" in text
    assert "A revision has exactly one two-digit number, or 'latest'" in text
    assert all(v.source_record == report.source for v in report.violations)


def _chair_batches(graph: str) -> tuple[Batch, Batch]:
    """A person, and a draft whose rr:chair must be a foaf:Person: the second refers to the
    first, which another batch of the same run carries."""
    carol = "https://w3id.org/ratified-rdf/id/person/carol"
    person = Batch(graph, "a person (test)")
    person.add(carol, "rdf:type", term("foaf:Person").value)
    person.text(carol, "foaf:name", "Carol Example")
    draft = "https://w3id.org/ratified-rdf/id/doc/draft-example-other"
    pointer = Batch(graph, "a draft chaired by her (test)")
    pointer.add(draft, "rdf:type", term("rr:Draft").value)
    pointer.text(draft, "rr:draftName", "draft-example-other")
    pointer.add(draft, "foaf:page", "https://datatracker.ietf.org/doc/draft-example-other/")
    pointer.add(draft, "rr:chair", carol)
    return person, pointer


@pytest.mark.parametrize("engine", ENGINES)
def test_the_gate_reports_what_pyshacl_validate_reports(brain: Brain, engine: str) -> None:
    # The gate runs pyshacl's Validator itself, with the focus nodes in a set (pyshacl's list
    # made a batch's check quadratic in its size), or the compiled engine: either way its
    # report must be pyshacl.validate's.
    gate = ShaclGate(engine=engine)
    batch = _bad_revision_batch("https://example.org/graph/fictional/spec")
    prepared = gate.prepare(batch, brain._store, sorted(brain._store.graphs()))
    data = rdflib.Graph().parse(data=prepared.ntriples, format="nt")
    conforms, report, _text = pyshacl.validate(
        data,
        shacl_graph=load_shapes(),
        inference="none",
        focus_nodes=[rdflib.URIRef(s) for s in prepared.focus_nodes],
        allow_warnings=True,
    )
    expected = violations_of(report, prepared.source)
    assert not conforms and expected
    found = gate.engine.validate(prepared)
    assert verdict(found) == verdict(expected)
    if engine != "native":  # pyshacl's own messages; the compiled engine words its own
        assert sorted(found, key=repr) == sorted(expected, key=repr)


def test_a_reference_to_another_batch_of_the_run_is_typed_from_it(brain: Brain) -> None:
    """Only the batch's own subjects are focus nodes; what they point at is typed from the
    whole run, so a reference into another batch is no false violation."""
    writer = Writer(brain._store, ShaclGate(), brain.brain_id, brain.reader.tenant)
    run = writer.begin_run()
    person, pointer = _chair_batches(run.graph("records"))
    writer.write_all([pointer, person])  # order does not matter: the run is staged first
    assert run.graph("records") in writer._written


def test_a_dangling_reference_rejects_the_whole_run(brain: Brain) -> None:
    before = _snapshot(brain)
    writer = Writer(brain._store, ShaclGate(), brain.brain_id, brain.reader.tenant)
    run = writer.begin_run()
    _person, pointer = _chair_batches(run.graph("records"))
    fine = Batch(run.graph("spec"), "an unrelated good batch (test)")
    fine.text("https://w3id.org/ratified-rdf/id/person/dan", "foaf:name", "Dan Example")
    with pytest.raises(GateRejected) as rejected:
        writer.write_all([fine, pointer])  # the chair is nowhere in the run
    assert rejected.value.source == "a draft chaired by her (test)"
    assert any((v.path or "").endswith("chair") for v in rejected.value.violations)
    assert _snapshot(brain) == before  # not even the good batch was written


def test_a_run_mapped_afresh_for_each_pass_writes_what_a_list_would(brain: Brain) -> None:
    # At scale a run's batches do not fit in memory: the writer may take a function that maps
    # them again for each pass instead of a list it holds: stage and validate in the embedded
    # store the run is for (its staged graphs are kept), and write too for a server.
    writer = Writer(brain._store, ShaclGate(), brain.brain_id, brain.reader.tenant)
    run = writer.begin_run()
    passes = [0]

    def batches() -> Iterator[Batch]:
        passes[0] += 1
        yield from reversed(_chair_batches(run.graph("records")))

    person, pointer = _chair_batches(run.graph("records"))
    expected = len(person.triples) + len(pointer.triples)
    assert writer.write_all(batches) == expected
    in_place = isinstance(brain._store, OxigraphStore) and not brain._store.shared
    # Mapped once to stage (validation prepares each batch from the staged run), and once
    # more to write a store other than the one it staged in.
    assert passes[0] == (1 if in_place else 2)
    assert sum(1 for _ in brain._store.triples([run.graph("records")])) == expected


class _StoreElsewhere:
    """The brain's store seen as a store the writer does not stage in (a server's): every
    call goes to it, but it is no :class:`OxigraphStore`, so a run is staged apart and mapped
    again to be written."""

    def __init__(self, store: TripleStore) -> None:
        self._inner = store

    def __getattr__(self, name: str) -> object:
        return getattr(self._inner, name)


def test_a_run_that_maps_differently_the_second_time_is_refused(brain: Brain) -> None:
    before = _snapshot(brain)
    store = _StoreElsewhere(brain._store)
    writer = Writer(store, ShaclGate(), brain.brain_id, brain.reader.tenant)  # type: ignore[arg-type]
    run = writer.begin_run()
    person, pointer = _chair_batches(run.graph("records"))
    mapped = iter([[person, pointer], [pointer, person]])
    with pytest.raises(MappingChanged, match="mapping must be deterministic"):
        writer.write_all(lambda: next(mapped))
    assert _snapshot(brain) == before


def test_a_staged_batch_is_prepared_as_the_batch_itself_would_be(brain: Brain) -> None:
    # Validation prepares each batch from the staged run instead of mapping it again: the
    # document checked must be the one prepare() gives the batch, triple for triple.
    gate = ShaclGate()
    graph = "https://example.org/graph/fictional/records"
    person, pointer = _chair_batches(graph)
    loose = Batch(graph, "a blank node's triple (test)", triples=[])
    loose.triples.append(Triple(BlankNode("b1"), term("foaf:name"), Literal("Nobody Example")))
    loose.add(
        "https://w3id.org/ratified-rdf/id/person/carol",
        "foaf:knows",
        "https://w3id.org/ratified-rdf/id/person/dan",
    )
    store = brain._store
    for batch in (person, pointer, loose):
        store.add(batch.graph, batch.triples)
    graphs = sorted(store.graphs())
    for batch in (person, pointer, loose):
        staged = gate.staged(batch)
        from_batch = gate.prepare(batch, store, graphs)
        from_store = gate.prepare_staged(staged, store, graphs)
        assert from_store.focus_nodes == from_batch.focus_nodes
        assert sorted(from_store.ntriples.splitlines()) == sorted(from_batch.ntriples.splitlines())
        assert from_batch.ntriples  # something was compared
    assert gate.staged(loose).loose == (loose.triples[0],)


@pytest.fixture()
def staging_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ``TMPDIR`` of the test's own, where builds stage their runs."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def test_a_store_on_disk_stages_in_place_and_a_rejection_leaves_nothing(
    tmp_path: Path, staging_root: Path
) -> None:
    # A run is staged in its own graphs of the embedded store it is for, which no one reads
    # before the run commits: no copy in a staging store, no second write. A rejected run's
    # graphs are dropped, and no staging folder is ever made.
    built, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=tmp_path / "db")
    store = built._store
    writer = Writer(store, ShaclGate(), built.brain_id, built.reader.tenant)
    run = writer.begin_run()
    person, pointer = _chair_batches(run.graph("records"))
    assert writer.write_all([person, pointer]) == len(person.triples) + len(pointer.triples)
    assert run.graph("records") in store.graphs()
    assert run.graph("records") not in built.scope.read_graphs  # not committed: unread
    before = sorted(store.graphs())
    rejected = writer.begin_run()
    with pytest.raises(GateRejected):
        writer.write_all([_bad_revision_batch(rejected.graph("spec"))])
    assert sorted(store.graphs()) == before
    assert list(staging_root.iterdir()) == []


def test_a_run_staged_in_memory_reaches_the_disk_as_it_is_staged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A run for a store on disk is staged in memory (the view reads it there) and loaded into
    # the disk from the same documents as they come, on the loader's thread: it is never read
    # back from memory to be copied once staged. The brain is the one a copy gave.
    repo = make_pigeon_repo(tmp_path / "git")
    copied, _ = Brain.build(MANIFEST, source=str(repo), path=tmp_path / "copied")
    expected = copied.content_hash()
    copied.close()

    def copying(self: OxigraphStore, *_: object) -> None:
        raise AssertionError("the run was copied from memory to the disk")

    monkeypatch.setattr(OxigraphStore, "load_from", copying)
    built, _ = Brain.build(MANIFEST, source=str(repo), path=tmp_path / "db")
    assert built.content_hash() == expected
    built.close()


def test_a_run_that_fails_while_it_is_loaded_leaves_nothing_loading(
    tmp_path: Path, staging_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Staged on disk, a run's documents are loaded on a thread of their own while the next
    # batches are mapped. A mapping that fails mid-run lets the load under way finish, and
    # loads nothing after it, before the run's graphs are dropped: none is left behind.
    from ratified_rdf.graph import store as store_module

    built, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=tmp_path / "db")
    store = built._store
    monkeypatch.setattr(store_module, "LOAD_CHUNK_QUADS", 2)  # a chunk per batch
    loads: list[str] = []
    loading = threading.Event()
    bulk_load = OxigraphStore._bulk_load

    def slowly(self: OxigraphStore, data: bytes, graph: str) -> None:
        loads.append("started")
        loading.set()
        time.sleep(0.3)  # still loading when the mapping fails
        bulk_load(self, data, graph)
        loads.append("ended")

    monkeypatch.setattr(OxigraphStore, "_bulk_load", slowly)
    writer = Writer(store, ShaclGate(), built.brain_id, built.reader.tenant)
    before = sorted(store.graphs())
    run = writer.begin_run()
    person, pointer = _chair_batches(run.graph("records"))

    def failing() -> Iterator[Batch]:
        yield person
        yield pointer
        # The mapping fails once a load is under way, however slow its thread is to start
        # (a hang guard bounds the wait, not a speed).
        assert loading.wait(timeout=120), "no load started while the run was mapped"
        raise RuntimeError("a fictional mapping error")

    with pytest.raises(RuntimeError, match="fictional mapping error"):
        writer.write_all(failing)
    finished = list(loads)
    assert finished and finished[-1] == "ended"  # a load was under way, and was let finish
    assert finished.count("started") == finished.count("ended")
    assert sorted(store.graphs()) == before
    time.sleep(0.5)
    assert loads == finished  # nothing was loaded after the run was dropped
    assert sorted(store.graphs()) == before


def test_staging_left_by_a_killed_build_is_cleared_by_the_next(
    tmp_path: Path, staging_root: Path
) -> None:
    # A build killed mid-run (SIGKILL, out of memory) cannot remove its staging folder, and at
    # scale one holds gigabytes; the next build on the machine removes those whose process is
    # gone, and leaves a running build's alone.
    dead = subprocess.Popen(["true"])  # a process that has ended
    dead.wait()
    # The gate context's folder (its spool of every batch) is named and cleared the same way.
    from ratified_rdf.graph.gate_context import GATE_PREFIX

    kept = []
    for prefix in (STAGING_PREFIX, GATE_PREFIX):
        abandoned = staging_root / f"{prefix}{dead.pid}-x1y2z3"
        running = staging_root / f"{prefix}{os.getppid()}-a1b2c3"
        for folder in (abandoned, running):
            (folder / "000001.sst").parent.mkdir()
            (folder / "000001.sst").write_bytes(b"fictional")
        kept.append(running.name)
    unrelated = staging_root / "someone-elses-folder"
    (unrelated / "000001.sst").parent.mkdir()
    (unrelated / "000001.sst").write_bytes(b"fictional")
    Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=tmp_path / "db")
    assert sorted(p.name for p in staging_root.iterdir()) == sorted([*kept, unrelated.name])


def test_catalog_switch_is_checked_against_the_state_after_it(brain: Brain) -> None:
    """The run record names its graphs and the brain has exactly one current run."""
    writer = Writer(brain._store, ShaclGate(), brain.brain_id, brain.reader.tenant)
    run = writer.begin_run()
    before = _snapshot(brain)
    with pytest.raises(GateRejected) as rejected:
        writer.commit(run, used=[])  # wrote no graph and used no source
    paths = {v.path or "" for v in rejected.value.violations}
    assert any(p.endswith("wroteGraph") for p in paths)
    assert any(p.endswith("used") for p in paths)
    assert _snapshot(brain) == before


def test_every_class_in_the_ontology_has_a_shape() -> None:
    shapes = load_shapes()
    ontology = rdflib.Graph().parse(
        Path(__file__).resolve().parents[2] / "ontology" / "ratified.ttl"
    )
    classes = {
        str(c)
        for c in ontology.subjects(rdflib.RDF.type, rdflib.OWL.Class)
        # Rules, clearance levels and trust states are the ontology's own individuals, never
        # written by a batch; alignment records are validated through the sections they align.
        if str(c).startswith(RR)
        and str(c)
        not in {
            RR + "AlignmentRecord",
            RR + "AlignmentRule",
            RR + "ClearanceLevel",
            RR + "TrustState",
        }
    }
    targeted = {
        str(t)
        for t in shapes.objects(None, rdflib.URIRef("http://www.w3.org/ns/shacl#targetClass"))
    }
    assert classes, "the ontology declares no classes"
    assert classes <= targeted, f"classes without a shape: {sorted(classes - targeted)}"


def test_parallel_checks_prepare_only_a_few_batches_ahead() -> None:
    # A run's prepared batches do not fit in memory at scale: the gate must pull them from the
    # generator as workers free up, not all at once.
    gate = ShaclGate()
    pulled, done, ahead = [0], [0], []

    def batches() -> Iterator[PreparedBatch]:
        for index in range(40):
            pulled[0] += 1
            yield PreparedBatch(source=f"batch {index}", ntriples=b"", focus_nodes=())

    def progress() -> None:
        done[0] += 1
        ahead.append(pulled[0] - done[0])

    gate.check_all(batches(), workers=2, progress=progress)
    assert done[0] == 40
    assert max(ahead) <= 2 * 2


def test_a_killed_gate_worker_is_a_sentence_not_a_broken_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(gate_module, "_validate_in_worker", _die)
    batch = PreparedBatch(source="batch", ntriples=b"", focus_nodes=())
    with pytest.raises(GateWorkerDied, match="nothing of this run was written"):
        ShaclGate().check_all(iter([batch, batch]), workers=2)


def _die(_prepared: PreparedBatch) -> list[Violation]:
    os._exit(9)


def test_gate_workers_leave_the_builds_heap_to_the_build(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A forked worker whose collector walks the objects it inherited copies them all; at
    # scale that ran the machine out of memory. The build's heap is frozen before the fork,
    # so a worker's collector has nothing inherited to walk, and the build's is thawed after.
    monkeypatch.setattr(gate_module, "_validate_in_worker", _report_inherited)
    heap = [{"record": index} for index in range(10_000)]  # stands for a build's records
    batch = PreparedBatch(source="batch", ntriples=b"", focus_nodes=())
    with pytest.raises(GateRejected) as rejected:
        ShaclGate().check_all(iter([batch, batch]), workers=2)
    frozen_in_worker = int(rejected.value.violations[0].message)
    assert frozen_in_worker >= len(heap)
    assert gc.get_freeze_count() == 0


def _report_inherited(_prepared: PreparedBatch) -> list[Violation]:
    """How many objects this worker's collector leaves alone, as a violation's message."""
    return [
        Violation(
            focus_node="worker",
            path=None,
            message=str(gc.get_freeze_count()),
            value=None,
            shape=None,
            source_record="worker",
        )
    ]


# ------------------------------------------------------------ staged runs, memory and workers


def _prepared_lines(limit: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple:
    """Every document the gate prepared for the Pigeon build on disk, with the memory copy
    limited to ``limit`` quads, and whether the gate read a copy in memory."""
    monkeypatch.setenv("RATIFIED_MEMORY_COPY_QUADS", limit)
    repo = make_pigeon_repo(tmp_path / f"git-{limit}")
    batches, _, _ = recorded_build(MANIFEST, str(repo))
    (_, run), *others = RecordingGate.runs
    assert others == []
    documents = sorted(
        (_same_run(p.source), _same_run(" ".join(p.focus_nodes)), _lines(p.ntriples))
        for p in batches
    )
    return documents, run.in_memory


_RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")
_NOW = re.compile(r'"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z"')  # when a build computed


def _same_run(text: str) -> str:
    """``text`` with the run's id and the moments it computed something spelt alike for
    every build."""
    return _NOW.sub('"NOW"', _RUN_ID.sub("RUN", text))


def _lines(ntriples: bytes) -> tuple[str, ...]:
    return tuple(sorted({_same_run(line) for line in ntriples.decode().splitlines()}))


def test_a_run_on_disk_is_checked_the_same_from_its_memory_copy_or_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gate and the card view read a copy in memory of a run staged on disk, while it fits;
    # past the limit the copy is dropped and they read the disk. Either way each batch must be
    # checked against the same document, and the limit 0 means no copy at all.
    copied, in_memory = _prepared_lines("", tmp_path, monkeypatch)
    assert in_memory
    from_disk, in_memory = _prepared_lines("0", tmp_path, monkeypatch)
    assert not in_memory
    # The run is larger, which its records would tell (staging it on disk from the start):
    # told nothing, it is copied until it passes the limit.
    from ratified_rdf import build as build_module

    monkeypatch.setattr(build_module, "QUADS_PER_SPEC_RECORD", 0)
    dropped, in_memory = _prepared_lines("500", tmp_path, monkeypatch)
    assert not in_memory
    assert len(copied) > 10
    assert copied == from_disk == dropped


def test_a_run_its_records_say_will_not_fit_is_staged_on_disk_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Told by its records that the run passes the limit, the writer stages it on disk from its
    # first batch: no copy in memory to fill and then move. The documents are the same.
    from ratified_rdf import build as build_module
    from ratified_rdf.graph import writer as writer_module

    copied, _ = _prepared_lines("", tmp_path, monkeypatch)
    moved: list[int] = []
    spill = writer_module._Staging._spill

    def spilling(self: object, rest: object) -> None:
        moved.append(1)
        spill(self, rest)  # type: ignore[arg-type]

    monkeypatch.setattr(writer_module._Staging, "_spill", spilling)
    monkeypatch.setattr(build_module, "QUADS_PER_SPEC_RECORD", 0)
    dropped, in_memory = _prepared_lines("500", tmp_path / "b", monkeypatch)
    assert not in_memory and moved == [1]  # told nothing by the records: filled, then moved
    monkeypatch.setattr(build_module, "QUADS_PER_SPEC_RECORD", 20)
    expected, in_memory = _prepared_lines("500", tmp_path / "c", monkeypatch)
    assert not in_memory and moved == [1]  # never in memory, so nothing moved
    monkeypatch.setattr(build_module, "QUADS_PER_SPEC_RECORD", 1_000_000)
    default_limit, in_memory = _prepared_lines("", tmp_path / "d", monkeypatch)
    assert not in_memory and moved == [1]
    assert expected == default_limit == copied == dropped


def test_a_run_staged_in_memory_is_loaded_there_beside_the_mapping_of_the_next_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Staging a run for a store on disk in memory, each chunk of batches is loaded into the
    # memory store on a thread of its own while the build maps the next (loaded in the
    # build's own thread, it was half of staging's time); once the staging is waited for,
    # the memory store holds every batch.
    from ratified_rdf.graph import store as store_module
    from ratified_rdf.graph import writer as writer_module

    monkeypatch.setattr(store_module, "LOAD_CHUNK_QUADS", 2)  # each batch below a chunk
    loaded_on: list[str] = []
    bulk_load = OxigraphStore._bulk_load

    def recording(self: OxigraphStore, data: bytes, graph: str) -> None:
        if self.path is None:
            loaded_on.append(threading.current_thread().name)
        bulk_load(self, data, graph)

    monkeypatch.setattr(OxigraphStore, "_bulk_load", recording)
    graph = "https://example.org/graph/fictional/pigeons"
    batches = [
        Batch(
            graph=graph,
            triples=[
                Triple(
                    NamedNode(f"https://example.org/fictional/pigeon-{n}"),
                    NamedNode(RR + "name"),
                    Literal(f"P{n}{i}"),
                )
                for i in range(2)
            ],
            source=f"pigeon {n}",
        )
        for n in range(3)
    ]
    disk = OxigraphStore(tmp_path / "disk")
    try:
        with writer_module._Staging(disk, 1_000) as place:
            place.load((b.graph, b.triples, b.ntriples()) for b in batches)
            place.wait()
            assert len(place.reading) == 6
    finally:
        disk.close()
    assert len(loaded_on) == 3
    assert threading.current_thread().name not in loaded_on


def test_a_memory_copy_limit_that_is_not_a_number_is_a_sentence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_pigeon_repo(tmp_path / "git")
    for asked in ("lots", "-1", "1e6", "²"):
        monkeypatch.setenv("RATIFIED_MEMORY_COPY_QUADS", asked)
        with pytest.raises(BrainError, match="must be a whole number of quads"):
            Brain.build(MANIFEST, source=str(repo), path=tmp_path / "db")


def _staged_run(brain: Brain, *batches: Batch) -> StagedRun:
    """``batches`` staged in ``brain``'s store (in memory), as the gate is handed a run."""
    store = brain._store
    for batch in batches:
        store.add(batch.graph, batch.triples)
    return StagedRun(store, tuple(sorted(store.graphs())))


def test_a_run_staged_in_memory_is_prepared_in_the_gate_workers(
    brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Preparing costs about what validating does, so a run staged in memory is prepared by the
    # workers, from the store each inherited; a batch that cannot be prepared there stops the
    # check as it would in the build's own process.
    gate = ShaclGate()
    person, pointer = _chair_batches("https://example.org/graph/fictional/records")
    run = _staged_run(brain, person, pointer)
    assert run.in_memory
    gate.check_staged([gate.staged(person), gate.staged(pointer)], run, workers=2)

    def where(self: ShaclGate, staged: StagedBatch, *_: object) -> PreparedBatch:
        raise RuntimeError(f"prepared in process {os.getpid()}")

    monkeypatch.setattr(ShaclGate, "prepare_staged", where)
    with pytest.raises(RuntimeError, match=r"prepared in process (\d+)") as failed:
        gate.check_staged([gate.staged(person)], run, workers=2)
    assert str(os.getpid()) not in str(failed.value)


def test_a_rejected_batch_of_a_run_staged_in_memory_is_named_in_run_order(brain: Brain) -> None:
    gate = ShaclGate()
    store = brain._store
    graph = "https://example.org/graph/fictional/records"
    _person, pointer = _chair_batches(graph)
    bad = _bad_revision_batch(graph)
    for batch in (pointer, bad):  # the chair's person is missing too
        store.add(batch.graph, batch.triples)
    run = StagedRun(store, tuple(sorted(store.graphs())))
    with pytest.raises(GateRejected) as rejected:
        gate.check_staged([gate.staged(pointer), gate.staged(bad)], run, workers=2)
    assert rejected.value.source == pointer.source


def test_a_rebuild_is_checked_with_the_reviews_from_its_memory_copy_as_from_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Reviews outlive runs, so a rebuild's batches are checked in the state they leave with the
    # reviews graphs: the memory copy the gate reads must hold those too.
    from ratified_rdf import build as build_module

    repo, store = reviewed_pigeon_store(tmp_path)
    reviews = [g for g in store.graphs() if "/reviews" in g]
    assert reviews
    monkeypatch.setattr(build_module, "ShaclGate", RecordingGate)
    seen = []
    for limit in ("", "0"):
        monkeypatch.setenv("RATIFIED_MEMORY_COPY_QUADS", limit)
        RecordingGate.seen, RecordingGate.runs = [], []
        build_module.build(MANIFEST, source=str(repo), store=store)
        seen.append(sorted((_same_run(p.source), _lines(p.ntriples)) for p in RecordingGate.seen))
        (_, run), *_ = RecordingGate.runs
        assert run.in_memory is (limit == "")
        assert set(run.graphs) >= set(reviews)
        for graph in reviews:
            assert set(run.store.triples([graph])) == set(store.triples([graph])) != set()
    copied, from_disk = seen
    assert copied == from_disk


def test_what_runs_alongside_the_check_has_ended_when_it_returns(brain: Brain) -> None:
    # The build writes a run staged in memory to disk while the workers check it: the write
    # has finished when the check returns, what it raises is raised, and a rejection wins.
    gate = ShaclGate()
    person, pointer = _chair_batches("https://example.org/graph/fictional/records")
    run = _staged_run(brain, person, pointer)
    ran: list[int] = []
    for workers in (2, 1):
        gate.check_staged(
            [gate.staged(person), gate.staged(pointer)],
            run,
            workers=workers,
            alongside=lambda: ran.append(os.getpid()),
        )
    assert ran == [os.getpid(), os.getpid()]

    def broken() -> None:
        raise OSError("the disk is full")

    with pytest.raises(OSError, match="the disk is full"):
        gate.check_staged([gate.staged(person)], run, workers=2, alongside=broken)
    bad = _bad_revision_batch("https://example.org/graph/fictional/records")
    run = _staged_run(brain, bad)
    with pytest.raises(GateRejected):
        gate.check_staged([gate.staged(bad)], run, workers=2, alongside=broken)


def _document_digest(_engine: object, prepared: PreparedBatch) -> list[Violation]:
    """A stand-in for the engine: rejects every batch with a digest of the document it was
    prepared as, and the process that prepared it, as the violation's message."""
    lines = b"\n".join(sorted(set(prepared.ntriples.splitlines())))
    return [
        Violation(
            focus_node=prepared.focus_nodes[0],
            path=None,
            message=f"{os.getpid()} {hashlib.sha256(lines).hexdigest()}",
            value=None,
            shape=None,
            source_record=prepared.source,
        )
    ]


def test_a_run_staged_on_disk_is_prepared_in_the_workers_from_their_own_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A store on disk is not read through a handle the fork inherited: each worker opens the
    # staged folder read-only for itself, after the build has flushed every write to it (one
    # here was never flushed: a single write's, as a review's is).
    store = OxigraphStore(tmp_path / "db")
    graph = "https://example.org/graph/fictional/records"
    person, pointer = _chair_batches(graph)
    store.load([(graph, person.triples)])
    store.replace(graph, [], pointer.triples)  # unflushed
    run = StagedRun(store, (graph,))
    assert run.folder == tmp_path / "db" and not run.in_memory
    gate = ShaclGate()
    monkeypatch.setattr(gate_module, "checked", _document_digest)
    expected = _document_digest(None, gate.prepare_staged(gate.staged(pointer), store, [graph]))
    with pytest.raises(GateRejected) as rejected:
        gate.check_staged([gate.staged(pointer), gate.staged(person)], run, workers=2)
    worker, digest = rejected.value.violations[0].message.split()
    assert digest == expected[0].message.split()[1]
    assert int(worker) != os.getpid()
    assert rejected.value.source == pointer.source


def test_the_gate_workers_are_one_per_core_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    # Measured on a busy machine, a build with a worker per core still took less time than one
    # checking in its own process, so the count does not follow the load; an operator sets it.
    monkeypatch.delenv("RATIFIED_GATE_WORKERS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert gate_module._workers(None) == 4
    assert gate_module._workers(3) == 3
    monkeypatch.setenv("RATIFIED_GATE_WORKERS", "1")
    monkeypatch.setenv("RATIFIED_GATE_FRESH_WORKERS", "1")
    assert gate_module._workers(None) == 1
    assert not ShaclGate().checks_early()  # one worker: checked in the build's own process
    monkeypatch.setenv("RATIFIED_GATE_WORKERS", "two")
    with pytest.raises(InputError, match="RATIFIED_GATE_WORKERS is 'two'"):
        gate_module._workers(None)
