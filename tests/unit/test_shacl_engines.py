"""The gate's compiled SHACL engine is held to pyshacl's verdicts: on every batch of the Pigeon
build, and on generated batches each broken in one way its shapes forbid. It fails closed, and
sends a batch touching a shape it is not trusted with to pyshacl.

The real corpora's batches are compared in the corpus tier: the TLS and QUIC brains are built
with ``RATIFIED_GATE_ENGINE=cross-check`` (tests/conftest.py), which rejects any batch the two
engines disagree on.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

import pyshacl
import pytest
import rdflib
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    Quad,
    RdfFormat,
    Store,
    Triple,
    parse,
    serialize,
)

from ratified_rdf import GateRejected
from ratified_rdf.graph.gate import ShaclGate, checked, load_shapes
from ratified_rdf.graph.mapping import XSD_DT, Batch, canonical_datetime
from ratified_rdf.graph.shacl_engines import (
    CrossCheck,
    Pyshacl,
    Turbo,
    engine_named,
    verdict,
)
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.graph.violations import SH, PreparedBatch, Violation, violations_of
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.recording import recorded_build

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
RR = "https://w3id.org/ratified-rdf/ontology#"
XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.fixture(scope="module")
def pigeon_batches(tmp_path_factory: pytest.TempPathFactory) -> list[PreparedBatch]:
    """Every batch of a Pigeon build, as the gate prepared it, built with both engines."""
    repo = make_pigeon_repo(tmp_path_factory.mktemp("engines-git"))
    batches, _, report = recorded_build(MANIFEST, str(repo), engine="cross-check")
    assert "cross-checked with pyshacl" in report.gate
    assert len(batches) == report.batches
    return batches


@pytest.fixture(scope="module")
def engines() -> tuple[Turbo, Pyshacl]:
    shapes = load_shapes()
    reference = Pyshacl(shapes)
    return Turbo(shapes, reference), reference


@pytest.fixture(scope="module")
def store_route(engines: tuple[Turbo, Pyshacl]) -> Turbo:
    """The compiled engine handed each batch as a pyoxigraph store: what it falls back to on
    a pyshacl-turbo without the document input it is otherwise handed."""
    native = Turbo(engines[0].reference.shapes, engines[0].reference)
    native._document = None
    return native


def test_every_pigeon_batch_gets_pyshacls_verdict(
    pigeon_batches: list[PreparedBatch], engines: tuple[Turbo, Pyshacl], store_route: Turbo
) -> None:
    native, reference = engines
    assert len(pigeon_batches) > 10
    for prepared in pigeon_batches:
        expected = verdict(reference.validate(prepared))
        assert verdict(native.validate(prepared)) == verdict(store_route.validate(prepared))
        assert verdict(native.validate(prepared)) == expected == set()


# ------------------------------------------------------------------- generated violations


@dataclass(frozen=True)
class Rule:
    """One property constraint of a node shape: what breaking it means."""

    target: str
    path: str
    kind: str
    value: object


BREAKABLE = (
    *("minCount", "maxCount", "datatype", "class", "nodeKind", "in", "pattern"),
    *("minInclusive", "maxInclusive", "minLength", "maxLength"),
)


def _rules(shapes: rdflib.Graph) -> list[Rule]:
    """Every (class, property, constraint) of the shapes that a one-triple change can break."""
    rules: list[Rule] = []
    for shape in shapes.subjects(rdflib.RDF.type, SH.NodeShape):
        targets = [str(c) for c in shapes.objects(shape, SH.targetClass)]
        for prop in shapes.objects(shape, SH.property):
            path = shapes.value(prop, SH.path)
            if not isinstance(path, rdflib.URIRef):
                continue  # an inverse path: broken from the other end, not by the focus node
            for kind in BREAKABLE:
                value = shapes.value(prop, SH[kind])
                if value is not None:
                    rules += [Rule(t, str(path), kind, value) for t in targets]
    return rules


RULES = _rules(load_shapes())


def _broken(triples: list[Triple], focus: NamedNode, rule: Rule, salt: int) -> list[Triple] | None:
    """``triples`` changed so that ``focus`` breaks ``rule``, or None when it cannot be done
    with this batch (the focus node has no such property to spoil, say)."""
    path = NamedNode(rule.path)
    own = [t for t in triples if t.subject == focus and t.predicate == path]
    rest = [t for t in triples if not (t.subject == focus and t.predicate == path)]
    odd = NamedNode(f"https://example.org/fictional/untyped/{salt}")
    if rule.kind == "minCount" and int(str(rule.value)) >= 1:
        return rest if own else None
    if rule.kind == "maxCount" and own:
        extra = [Triple(focus, path, Literal(f"extra {salt}")), Triple(focus, path, odd)]
        return [*triples, *extra[: int(str(rule.value)) + 1]]
    if not own:
        return None
    spoilers: dict[str, Literal | NamedNode] = {
        "datatype": Literal(f"not a value {salt}", datatype=NamedNode(XSD + "token")),
        "class": odd,
        "nodeKind": Literal(f"not a node {salt}"),
        "in": Literal(f"not one of them {salt}"),
        "pattern": Literal(f"\u0000 fits no pattern {salt}"),
        "minInclusive": Literal("-1", datatype=NamedNode(XSD + "integer")),
        "maxInclusive": Literal("1000000000", datatype=NamedNode(XSD + "decimal")),
        "minLength": Literal(""),
    }
    spoiled = spoilers.get(rule.kind)
    if rule.kind == "maxLength":  # one character over the shape's own limit
        spoiled = Literal("x" * (int(str(rule.value)) + 1))
    if spoiled is None:
        return None
    return [*rest, Triple(focus, path, spoiled), *own[1:]]


def _typed(triples: list[Triple], cls: str) -> list[NamedNode]:
    """The named nodes of ``triples`` typed ``cls``, in a fixed order."""
    found = {
        t.subject.value
        for t in triples
        if isinstance(t.subject, NamedNode)
        and t.predicate.value == RDF_TYPE
        and isinstance(t.object, NamedNode)
        and t.object.value == cls
    }
    return [NamedNode(n) for n in sorted(found)]


@settings(
    max_examples=1000,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
@given(data=st.data())
@pytest.mark.slow
def test_generated_violating_batches_get_pyshacls_verdict(
    pigeon_batches: list[PreparedBatch],
    engines: tuple[Turbo, Pyshacl],
    store_route: Turbo,
    data: st.DataObject,
) -> None:
    """A batch of the Pigeon build, one of its focus nodes made to break one rule of its shape:
    both engines find violations, the same ones (focus node, path, constraint), whichever way
    the batch is handed to the compiled one. Draws that cannot break a rule are discarded
    (``assume``), so 1,000 broken batches are compared."""
    native, reference = engines
    prepared = data.draw(st.sampled_from(pigeon_batches), label="batch")
    triples = list(parse(prepared.ntriples, format=RdfFormat.N_TRIPLES))
    focus_set = set(prepared.focus_nodes)
    usable = [r for r in RULES if any(n.value in focus_set for n in _typed(triples, r.target))]
    assume(usable)
    rule = data.draw(st.sampled_from(usable), label="rule")
    nodes = [n for n in _typed(triples, rule.target) if n.value in focus_set]
    focus = data.draw(st.sampled_from(nodes), label="focus")
    broken = _broken(triples, focus, rule, data.draw(st.integers(0, 10**6), label="salt"))
    assume(broken is not None)
    assert broken is not None
    mutant = PreparedBatch(
        source=f"{prepared.source} with {rule.kind} of {rule.path} broken",
        ntriples=serialize(broken, format=RdfFormat.N_TRIPLES) or b"",
        focus_nodes=prepared.focus_nodes,
    )
    expected = verdict(reference.validate(mutant))
    assert expected, f"pyshacl found nothing wrong with {mutant.source}"
    assert verdict(native.validate(mutant)) == expected
    assert verdict(store_route.validate(mutant)) == expected


# --------------------------------------------------------------------- failing closed


class _Exploding:
    name = "an engine that fails"

    def validate(self, prepared: PreparedBatch) -> list[Violation]:
        raise RuntimeError("native panic")


def test_an_engine_that_fails_rejects_the_batch() -> None:
    prepared = PreparedBatch(source="records/x", ntriples=b"", focus_nodes=("urn:x:a",))
    (violation,) = checked(_Exploding(), prepared)
    assert violation.constraint == "engine-error"
    assert "rejected rather than written unchecked" in violation.message
    assert "native panic" in violation.message


def test_a_failing_engine_stops_a_write() -> None:
    gate = ShaclGate(engine="pyshacl")
    gate.engine = _Exploding()
    batch = Batch("https://example.org/graph/fictional", "records/fictional")
    batch.text("https://example.org/fictional/a", "rdfs:label", "a")
    with pytest.raises(GateRejected, match="could not check this batch"):
        gate.check(batch, OxigraphStore(), [batch.graph])


def test_engines_that_disagree_reject_the_batch(engines: tuple[Turbo, Pyshacl]) -> None:
    native, _ = engines

    class _Lenient(Pyshacl):
        def validate(self, prepared: PreparedBatch) -> list[Violation]:
            return []

    cross = CrossCheck(native, _Lenient(load_shapes()))
    prepared = PreparedBatch(
        source="records/fictional",
        ntriples=(
            b"<https://example.org/fictional/r> "
            b"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
            b"<https://w3id.org/ratified-rdf/ontology#Revision> .\n"
        ),
        focus_nodes=("https://example.org/fictional/r",),
    )
    (violation,) = checked(cross, prepared)
    assert "disagree" in violation.message and violation.constraint == "engine-error"


def test_a_shape_the_native_engine_is_not_trusted_with_goes_to_pyshacl() -> None:
    shapes = rdflib.Graph()
    shapes += load_shapes()
    shapes.parse(
        data="""
        @prefix sh: <http://www.w3.org/ns/shacl#> .
        <https://example.org/fictional/shape> a sh:NodeShape ;
            sh:targetClass <https://example.org/fictional/Owl> ;
            sh:property [ sh:path <https://example.org/fictional/wing> ;
                          sh:qualifiedValueShape [ sh:nodeKind sh:IRI ] ;
                          sh:qualifiedMinCount 2 ] .
        """,
        format="turtle",
    )
    calls: list[str] = []

    class _Spy(Pyshacl):
        def validate(self, prepared: PreparedBatch) -> list[Violation]:
            calls.append(prepared.source)
            return super().validate(prepared)

    native = Turbo(shapes, _Spy(shapes))
    owl = PreparedBatch(
        source="owl",
        ntriples=(
            b"<https://example.org/fictional/o> "
            b"<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
            b"<https://example.org/fictional/Owl> .\n"
        ),
        focus_nodes=("https://example.org/fictional/o",),
    )
    other = PreparedBatch(source="other", ntriples=b"", focus_nodes=())
    found = native.validate(owl)
    native.validate(other)
    assert calls == ["owl"]  # the Owl batch went to pyshacl, the other did not
    assert {v.constraint for v in found} == {str(SH.QualifiedMinCountConstraintComponent)}


def test_unknown_engine_names_say_what_exists() -> None:
    with pytest.raises(ValueError, match="native, pyshacl, cross-check"):
        engine_named("fast", load_shapes())


def test_a_blank_node_value_gets_the_same_verdict(engines: tuple[Turbo, Pyshacl]) -> None:
    """A blank node where the shapes want an IRI of a class: both engines report it alike."""
    native, reference = engines
    revision = NamedNode("https://example.org/fictional/draft-example-owl/01")
    triples = [
        Triple(revision, NamedNode(RDF_TYPE), NamedNode(RR + "Revision")),
        Triple(revision, NamedNode(RR + "revisionOf"), BlankNode("owl")),
    ]
    prepared = PreparedBatch(
        source="blank",
        ntriples=serialize(triples, format=RdfFormat.N_TRIPLES) or b"",
        focus_nodes=(revision.value,),
    )
    expected = verdict(reference.validate(prepared))
    assert (revision.value, RR + "revisionOf", str(SH.ClassConstraintComponent)) in expected
    assert verdict(native.validate(prepared)) == expected


NESTED_SHAPES = """
@prefix sh: <http://www.w3.org/ns/shacl#> .
@prefix ex: <https://example.org/fictional/> .
ex:LoftShape a sh:NodeShape ; sh:targetClass ex:Loft ;
    sh:property [ sh:path ex:keeper ; sh:or ( [ sh:class ex:Person ] [ sh:class ex:Club ] ) ] ;
    sh:property [ sh:path ex:roof ; sh:node ex:RoofShape ] ;
    sh:property [ sh:path ex:neighbour ; sh:not [ sh:class ex:Hawk ] ] .
ex:RoofShape a sh:NodeShape ; sh:property [ sh:path ex:colour ; sh:minCount 1 ] .
"""
NESTED_DATA = """
@prefix ex: <https://example.org/fictional/> .
ex:loft a ex:Loft ; ex:keeper "a name, not a node" ; ex:roof ex:slates ; ex:neighbour ex:dove .
ex:slates ex:height 3 .
ex:dove a ex:Dove .
"""


def test_nested_shapes_check_value_nodes_outside_the_focus_nodes() -> None:
    """pyshacl 0.40 applies its focus-nodes option inside nested shapes too, so a value node
    that is not a focus node passes ``sh:or`` / ``sh:node`` unchecked (and fails ``sh:not``).
    The reference engine applies the focus nodes to the targets only: on a batch whose every
    node is in reach, its verdict is pyshacl's on the whole graph, with no focus nodes."""
    shapes = rdflib.Graph().parse(data=NESTED_SHAPES, format="turtle")
    data = rdflib.Graph().parse(data=NESTED_DATA, format="turtle")
    loft = "https://example.org/fictional/loft"
    prepared = PreparedBatch(
        source="nested", ntriples=data.serialize(format="nt").encode(), focus_nodes=(loft,)
    )
    _conforms, results, _ = pyshacl.validate(data, shacl_graph=shapes, inference="none")
    whole = verdict(violations_of(results, "nested"))
    slates = "https://example.org/fictional/slates"
    assert whole == {
        (loft, "https://example.org/fictional/keeper", str(SH.OrConstraintComponent)),
        (loft, "https://example.org/fictional/roof", str(SH.NodeConstraintComponent)),
        # The roof's own result, which pyshacl reports as the sh:node result's detail.
        (slates, "https://example.org/fictional/colour", str(SH.MinCountConstraintComponent)),
    }
    assert verdict(Pyshacl(shapes).validate(prepared)) == whole
    assert verdict(Turbo(shapes).validate(prepared)) == whole


def test_every_pigeon_batch_is_spelled_as_the_store_spells_it(
    pigeon_batches: list[PreparedBatch],
) -> None:
    """The compiled engine compares terms: a batch must hold each value in the store's
    canonical spelling (a date-time as "…Z", not "…+00:00"), or a value checked beside its
    stored self counts twice. Oxigraph rewrites what is not canonical; nothing here is."""
    for prepared in pigeon_batches:
        triples = {q.triple for q in parse(prepared.ntriples, format=RdfFormat.N_TRIPLES)}
        held = Store()
        held.extend(Quad(t.subject, t.predicate, t.object) for t in triples)
        assert {q.triple for q in held} == triples, prepared.source


@settings(max_examples=300, deadline=None)
@given(
    moment=st.datetimes(timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7))])),
)
def test_a_date_time_is_spelt_as_oxigraph_keeps_it(moment: datetime) -> None:
    # Written one way and stored another, a date-time sits twice in a batch checked beside
    # what is stored (microseconds ending in 0 did: ".997450" against ".99745").
    store = Store()
    written = Literal(canonical_datetime(moment), datatype=XSD_DT)
    store.add(Quad(NamedNode("https://example.org/s"), NamedNode("https://example.org/p"), written))
    (kept,) = (q.object for q in store)
    assert kept == written
