"""Publishing: a VoID/DCAT description whose counts are the store's, a dump that plain
``pyshacl`` validates, and a dump that round-trips into a fresh store with equal counts."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from pyoxigraph import RdfFormat, Store

from ratified_rdf import Brain
from ratified_rdf.surfaces.cli import main
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

REPO = Path(__file__).resolve().parents[2]
VOID = rdflib.Namespace("http://rdfs.org/ns/void#")
DCAT = rdflib.Namespace("http://www.w3.org/ns/dcat#")
DCTERMS = rdflib.Namespace("http://purl.org/dc/terms/")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("published")
    repo = make_pigeon_repo(folder / "git")
    brain, _ = Brain.build(MANIFEST, path=folder / "brain", source=str(repo))
    brain.close()
    return folder / "brain"


def test_the_description_counts_what_the_store_holds(store: Path, tmp_path: Path) -> None:
    out = tmp_path / "void.ttl"
    result = CliRunner().invoke(
        main,
        [
            "void",
            "--store",
            str(store),
            "--dump-url",
            "https://example.org/pigeon.nq",
            "--endpoint",
            "https://example.org/sparql",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    described = rdflib.Graph().parse(out)
    with Brain.open(store) as brain:
        graphs = brain.read_graphs
        dataset = rdflib.URIRef(next(iter(described.subjects(VOID.subset, None))))
        subsets = set(described.objects(dataset, VOID.subset))
        assert {str(s) for s in subsets} == set(graphs)
        for graph in graphs:
            stored = sum(1 for _ in brain._store.triples([graph]))
            assert described.value(rdflib.URIRef(graph), VOID.triples).toPython() == stored
        total = sum(1 for _ in brain._store.triples(graphs))
    assert described.value(dataset, VOID.triples).toPython() == total
    vocabularies = {str(v) for v in described.objects(dataset, VOID.vocabulary)}
    assert {"http://www.w3.org/ns/prov#", "http://rdfs.org/sioc/ns#"} <= vocabularies
    spec = next(g for g in subsets if str(g).endswith("/spec"))
    assert str(described.value(spec, DCTERMS.license)) == (
        "https://example.org/licences/fictional-pigeon-text"
    )
    assert (
        described.value(next(g for g in subsets if str(g).endswith("/mail")), DCTERMS.license)
        is None
    )
    assert (dataset, VOID.sparqlEndpoint, rdflib.URIRef("https://example.org/sparql")) in described
    assert (dataset, VOID.dataDump, rdflib.URIRef("https://example.org/pigeon.nq")) in described
    assert any(described.triples((None, DCAT.downloadURL, None)))


def test_a_dump_validates_with_plain_pyshacl_and_round_trips(store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    nquads, ntriples = tmp_path / "dump.nq", tmp_path / "dump.nt"
    for fmt, path in (("nquads", nquads), ("ntriples", ntriples)):
        dumped = runner.invoke(
            main, ["dump", "--store", str(store), "--format", fmt, "-o", str(path)]
        )
        assert dumped.exit_code == 0, dumped.output
    # Nothing but pyshacl's own command and the shapes.
    checked = subprocess.run(
        [Path(sys.executable).with_name("pyshacl"), "-s", REPO / "shapes" / "core.ttl", ntriples],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert "Conforms: True" in checked.stdout
    fresh = Store()
    fresh.load(path=str(nquads), format=RdfFormat.N_QUADS)
    with Brain.open(store, reader=Reader(clearance="restricted")) as brain:
        assert len(fresh) == sum(1 for _ in brain._store.triples(brain.graphs))
        assert {g.value for g in fresh.named_graphs()} == set(brain.graphs)
        buffer = io.BytesIO()
        brain.dump(buffer, RdfFormat.N_QUADS)
    assert len(buffer.getvalue().splitlines()) == len(fresh)
