"""The OWL ontology loads in owlready2 and HermiT finds it consistent, every class satisfiable."""

from __future__ import annotations

import shutil
from pathlib import Path

import owlready2
import pytest
import rdflib

ONTOLOGY = Path(__file__).resolve().parents[2] / "ontology" / "ratified.ttl"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> owlready2.World:
    if shutil.which("java") is None:
        pytest.fail(
            "HermiT needs Java: install a Java runtime (.ci/run installs default-jre-headless)."
        )
    # owlready2 reads RDF/XML, not Turtle: convert with rdflib first.
    rdfxml = tmp_path_factory.mktemp("owl") / "ratified.owl"
    rdflib.Graph().parse(ONTOLOGY, format="turtle").serialize(rdfxml, format="xml")
    world = owlready2.World()
    world.get_ontology(rdfxml.as_uri()).load()
    return world


@pytest.mark.slow
def test_hermit_finds_the_ontology_consistent(world: owlready2.World) -> None:
    # Raises OwlReadyInconsistentOntologyError if the axioms contradict each other.
    owlready2.sync_reasoner_hermit(world, infer_property_values=False, debug=0)
    assert list(world.inconsistent_classes()) == []


def test_our_classes_are_loaded_with_their_superclasses(world: owlready2.World) -> None:
    names = {c.iri.rsplit("#", 1)[-1] for c in world.classes() if "ratified-rdf" in c.iri}
    assert {
        "Draft",
        "Revision",
        "RFC",
        "Section",
        "SectionAlignment",
        "NoCounterpart",
        "IngestRun",
    } <= names
    revision = world.search_one(iri="https://w3id.org/ratified-rdf/ontology#Revision")
    assert "http://www.w3.org/ns/prov#Entity" in {c.iri for c in revision.ancestors()}


@pytest.mark.slow
def test_disjointness_makes_a_bad_individual_inconsistent(
    world: owlready2.World, tmp_path: Path
) -> None:
    """The reasoner is really checking: a thing both a Revision and a Section is caught."""
    graph = rdflib.Graph().parse(ONTOLOGY, format="turtle")
    rr = rdflib.Namespace("https://w3id.org/ratified-rdf/ontology#")
    bad = rdflib.URIRef("https://example.org/both")
    graph.add((bad, rdflib.RDF.type, rr.Revision))
    graph.add((bad, rdflib.RDF.type, rr.Section))
    path = tmp_path / "bad.owl"
    graph.serialize(path, format="xml")
    other = owlready2.World()
    other.get_ontology(path.as_uri()).load()
    with pytest.raises(owlready2.OwlReadyInconsistentOntologyError):
        owlready2.sync_reasoner_hermit(other, infer_property_values=False, debug=0)
