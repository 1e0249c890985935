"""The SHACL gate: a violating batch is rejected whole, with a readable report, and the store
is left byte-for-byte as it was."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
import rdflib
from pyoxigraph import RdfFormat

from ratified_rdf import Brain, GateRejected
from ratified_rdf.graph.gate import ShaclGate, load_shapes
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.vocab import RR, term
from ratified_rdf.graph.writer import Writer
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture()
def brain(tmp_path: Path) -> Brain:
    built, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)))
    return built


def _snapshot(brain: Brain) -> bytes:
    buffer = io.BytesIO()
    brain.store.dump(buffer, sorted(brain.store.graphs()), RdfFormat.N_QUADS)
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
    writer = Writer(brain.store, ShaclGate(), brain.brain_id)
    run = writer.begin_run()
    with pytest.raises(GateRejected) as rejected:
        writer.write(_bad_revision_batch(run.graph("spec")))
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
    assert ("123", "hasSection") in paths
    assert ("123", "wasDerivedFrom") in paths  # points at something that is not a commit
    text = str(report)
    assert text.startswith(
        "The SHACL gate rejected the batch from revision draft-example-pigeon-123"
    )
    assert "nothing of it was written" in text
    assert "A revision has exactly one two-digit number." in text
    assert all(v.source_record == report.source for v in report.violations)


def test_gate_accepts_a_batch_whose_references_are_stored(brain: Brain) -> None:
    """References to nodes written earlier in the run are typed from the store, not false
    violations; only the batch's own subjects are focus nodes."""
    writer = Writer(brain.store, ShaclGate(), brain.brain_id)
    run = writer.begin_run()
    graph = run.graph("records")
    person = Batch(graph, "a person (test)")
    person.add(
        "https://w3id.org/ratified-rdf/id/person/carol", "rdf:type", term("foaf:Person").value
    )
    person.text("https://w3id.org/ratified-rdf/id/person/carol", "foaf:name", "Carol Example")
    writer.write(person)
    pointer = Batch(graph, "creator link (test)")
    draft = "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon"
    pointer.add(draft, "rdf:type", term("rr:Draft").value)
    pointer.text(draft, "rr:draftName", "draft-example-pigeon")
    pointer.add(draft, "foaf:page", "https://datatracker.ietf.org/doc/draft-example-pigeon/")
    writer.write(pointer)  # no exception
    assert graph in writer._written


def test_catalog_switch_is_checked_against_the_state_after_it(brain: Brain) -> None:
    """The run record names its graphs and the brain has exactly one current run."""
    writer = Writer(brain.store, ShaclGate(), brain.brain_id)
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
        if str(c).startswith(RR) and str(c) not in {RR + "AlignmentRecord", RR + "AlignmentRule"}
    }
    targeted = {
        str(t)
        for t in shapes.objects(None, rdflib.URIRef("http://www.w3.org/ns/shacl#targetClass"))
    }
    assert classes, "the ontology declares no classes"
    assert classes <= targeted, f"classes without a shape: {sorted(classes - targeted)}"
