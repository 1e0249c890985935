"""The SHACL engines the gate validates a prepared batch with.

- :class:`Pyshacl` is the reference: what ``ratified validate`` runs and what a user runs on a
  dump. Every other engine is held to its verdicts.
- :class:`Turbo` is pyshacl-turbo's compiled engine (Rust), the gate's default. It reads the
  shapes and the batch as pyoxigraph stores, so both reach it as Oxigraph holds them (read
  from rdflib, a plain literal of the shapes and the same literal read back from Oxigraph
  compare unequal there). It compares terms, not values, so a batch must spell each value
  as the store does: the mapping writes canonical literals (``canonical_datetime``). Batches
  that touch a shape using a SHACL feature outside :data:`NATIVE_FEATURES` (the ones checked
  against pyshacl) go to pyshacl.
- :class:`CrossCheck` runs both on every batch and rejects the batch when their verdicts
  differ: what the tests build the real corpora with.

Every engine fails closed: one that raises rejects the batch (see ``ShaclGate``).
docs/design.md says why pyshacl-turbo, and how it was chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from importlib.metadata import version
from typing import Any, Protocol

import rdflib
from pyoxigraph import RdfFormat, Store
from pyshacl.graph_abstraction import DataGraph
from pyshacl.pytypes import SHACLExecutor
from pyshacl.validator import Validator

from ratified_rdf._errors import InputError
from ratified_rdf.graph.violations import SH, PreparedBatch, Violation, violations_of

NATIVE_FEATURES = frozenset(
    SH[name]
    for name in [
        # Shapes, targets and paths.
        *["NodeShape", "targetClass", "property", "path", "inversePath", "message"],
        # The constraints the shapes use, each compared with pyshacl on every real batch and
        # on generated violating ones (tests/unit/test_shacl_engines.py).
        *["class", "datatype", "nodeKind", "IRI", "minCount", "maxCount", "in", "hasValue"],
        *["minInclusive", "maxInclusive", "minLength", "maxLength", "pattern", "or"],
    ]
)
"""The SHACL terms the compiled engine is trusted with: a shape using any other term of the
SHACL namespace (``sh:sparql``, ``sh:qualifiedValueShape``, …) sends the batches that may
touch it to pyshacl."""

ENGINES = ("native", "pyshacl", "cross-check")
"""The names :func:`engine_named` knows: the compiled engine (with pyshacl where it lacks a
feature), pyshacl alone, or both compared on every batch."""


class ShaclEngine(Protocol):
    """Validates one prepared batch: its violations, an empty list when it conforms."""

    @property
    def name(self) -> str:
        """The engine and its version, as a build report names it."""
        ...

    def validate(self, prepared: PreparedBatch) -> list[Violation]:
        """The violations of ``prepared``'s focus nodes."""
        ...


class EnginesDisagree(InputError):
    """The compiled engine and pyshacl reached different verdicts on a batch."""


class Pyshacl:
    """pyshacl, the reference, with the focus nodes held in a set (see
    :class:`_FocusSetValidator`)."""

    def __init__(self, shapes: rdflib.Graph) -> None:
        self.shapes = shapes
        self.name = f"pyshacl {version('pyshacl')}"

    def validate(self, prepared: PreparedBatch) -> list[Violation]:
        """Parse the batch into rdflib and run pyshacl on its focus nodes."""
        data = rdflib.Graph()
        data.parse(data=prepared.ntriples, format="nt")
        validator = _FocusSetValidator(
            DataGraph.from_rdflib(data),
            shacl_graph=self.shapes,
            options={
                "inference": "none",
                "focus_nodes": [rdflib.URIRef(s) for s in prepared.focus_nodes],
                "allow_warnings": True,
            },
        )
        conforms, results, _text = validator.run()
        return [] if conforms else violations_of(results, prepared.source)


class _FocusSetValidator(Validator):
    """pyshacl's validator (what ``pyshacl.validate`` runs), with the focus nodes applied to
    the shapes' targets only, and held in a set.

    pyshacl (0.40) applies its ``focus_nodes`` option inside every shape's evaluation,
    including a shape evaluated on the value nodes of ``sh:or``, ``sh:and``, ``sh:not``,
    ``sh:xone``, ``sh:node`` or a qualified value shape: a value node outside the set is
    skipped, so the nested shape conforms without being checked (an ``sh:or`` of two
    ``sh:class`` passes a literal; an ``sh:not`` fails everything). Here the executor carries
    no focus nodes and each shape's own targets are cut down to them instead, which is what
    SHACL's "specified as explicit input" focus nodes mean. pyshacl also keeps the option as
    a list and tests each target against it with rdflib's Python-level equality: quadratic in
    a batch's size; a set gives the same results."""

    def make_executor(self) -> SHACLExecutor:
        executor = super().make_executor()
        executor.focus_nodes = None  # applied to the shapes' targets instead (run)
        return executor

    def run(self) -> Any:
        """pyshacl's run for the options :class:`Pyshacl` sets (no inference, no SHACL-AF,
        rdflib mode), with each shape validated on its targets that are focus nodes."""
        focus = frozenset(rdflib.URIRef(str(n)) for n in self.options.get("focus_nodes") or ())
        if not focus:
            return super().run()
        executor = self.make_executor()
        # As pyshacl's run sets it up with no inference, no ontology graph and no SHACL-AF:
        # the data graph itself, validated in place.
        if self._target_graph is None:
            self._target_graph = self.data_graph
        data = self._target_graph
        conforms, reports = True, []
        for shape in self.shacl_graph.shapes:
            targets = [node for node in shape.focus_nodes(data) if node in focus]
            if targets:
                shape_conforms, shape_reports = shape.validate(executor, data, focus=targets)
                conforms = conforms and shape_conforms
                reports.extend(shape_reports)
        report, text = self.create_validation_report(self.shacl_graph, conforms, reports)
        return conforms, report, text


class Turbo:
    """pyshacl-turbo's compiled engine, with pyshacl for batches that may touch a shape using
    a feature outside :data:`NATIVE_FEATURES`."""

    def __init__(self, shapes: rdflib.Graph, reference: Pyshacl | None = None) -> None:
        from pyshacl_turbo import CompiledShapes

        self.reference = reference or Pyshacl(shapes)
        self.name = f"pyshacl-turbo {version('pyshacl-turbo')}"
        held = Store()
        held.load(shapes.serialize(format="nt").encode(), format=RdfFormat.N_TRIPLES)
        self._compiled = CompiledShapes(held)
        unsupported = _classes_of_unsupported_shapes(shapes)
        self.everything_to_reference = unsupported is None
        self.referred = tuple(f"<{cls}>".encode() for cls in sorted(unsupported or ()))
        """Target classes of the shapes the compiled engine is not trusted with, as they
        appear in N-Triples: a batch naming one goes to pyshacl."""
        self._document = _document_input()

    def validate(self, prepared: PreparedBatch) -> list[Violation]:
        """Validate the batch's focus nodes, reading its N-Triples as Oxigraph does."""
        if self.everything_to_reference or any(c in prepared.ntriples for c in self.referred):
            return self.reference.validate(prepared)
        data: object
        if self._document is not None:
            data = self._document(
                prepared.ntriples.decode(), "oxigraph-nquads", None, {}, preserve_ids=True
            )
        else:
            data = Store()
            data.load(prepared.ntriples, format=RdfFormat.N_TRIPLES)
        conforms, results, _text = self._compiled.validate(
            data,
            allow_warnings=True,
            focus_nodes=[rdflib.URIRef(s) for s in prepared.focus_nodes],
        )
        return [] if conforms else violations_of(results, prepared.source)


def _document_input() -> Callable[..., object] | None:
    """pyshacl-turbo's own input record for a document it reads with Oxigraph's parser, when
    this version has it as 0.6 does; else None, and a batch is handed over as a pyoxigraph
    store instead.

    Given a store, pyshacl-turbo dumps it as N-Quads and parses that: loading the batch into
    a store only to have it dumped again took a third of the engine's time on the TLS build's
    batches. N-Triples is N-Quads, so the batch's document goes in as it is. The record is
    not public API; it is used only when it has the fields relied on, and the engine tests
    hold every verdict reached this way to pyshacl's."""
    try:
        from pyshacl_turbo.rdf import Input
    except ImportError:
        return None
    fields = getattr(Input, "__dataclass_fields__", {})
    needed = {"source", "format", "base", "blank_nodes", "preserve_ids"}
    return Input if needed <= set(fields) else None


class CrossCheck:
    """Both engines on every batch; a batch they disagree on is rejected."""

    def __init__(self, native: Turbo, reference: Pyshacl) -> None:
        self.native, self.reference = native, reference
        self.name = f"{native.name}, cross-checked with {reference.name}"

    def validate(self, prepared: PreparedBatch) -> list[Violation]:
        """The reference's violations, after checking the native engine found the same."""
        native = self.native.validate(prepared)
        reference = self.reference.validate(prepared)
        if verdict(native) != verdict(reference):
            # A node's own constraint (sh:or) has no path: None sorts as "".
            only_native = sorted(verdict(native) - verdict(reference), key=_verdict_order)[:3]
            only_reference = sorted(verdict(reference) - verdict(native), key=_verdict_order)[:3]
            raise EnginesDisagree(
                f"The SHACL engines disagree on the batch from {prepared.source}: "
                f"{self.native.name} alone found {only_native or 'nothing'}, "
                f"{self.reference.name} alone found {only_reference or 'nothing'}. The batch "
                "is rejected; please report it with the batch (build with "
                "RATIFIED_GATE_ENGINE=pyshacl meanwhile)."
            )
        return reference


def verdict(violations: Iterable[Violation]) -> frozenset[tuple[str, str | None, str | None]]:
    """What two engines must agree on: each violation's focus node, path and constraint."""
    return frozenset((v.focus_node, v.path, v.constraint) for v in violations)


def _verdict_order(item: tuple[str, str | None, str | None]) -> tuple[str, str, str]:
    return item[0], item[1] or "", item[2] or ""


def engine_named(name: str, shapes: rdflib.Graph) -> ShaclEngine:
    """The engine called ``name`` (one of :data:`ENGINES`) for ``shapes``."""
    if name == "pyshacl":
        return Pyshacl(shapes)
    reference = Pyshacl(shapes)
    if name == "native":
        return Turbo(shapes, reference)
    if name == "cross-check":
        return CrossCheck(Turbo(shapes, reference), reference)
    raise InputError(
        f"There is no SHACL engine called {name!r}; choose one of {', '.join(ENGINES)} "
        "(set RATIFIED_GATE_ENGINE, or leave it unset for native)."
    )


def _classes_of_unsupported_shapes(shapes: rdflib.Graph) -> set[rdflib.URIRef] | None:
    """The target classes of node shapes that use, themselves or through their property
    shapes, a SHACL term outside :data:`NATIVE_FEATURES`; None when such a shape targets
    something other than classes (then every batch goes to pyshacl)."""
    found: set[rdflib.URIRef] = set()
    for shape in set(shapes.subjects(rdflib.RDF.type, SH.NodeShape)):
        parts = _reachable(shapes, shape)
        terms = {p for part in parts for p in shapes.predicates(part)}
        terms |= {o for part in parts for o in shapes.objects(part, SH.nodeKind)}
        if any(str(t).startswith(str(SH)) and t not in NATIVE_FEATURES for t in terms):
            classes = [c for c in shapes.objects(shape, SH.targetClass)]
            if not classes or any(not isinstance(c, rdflib.URIRef) for c in classes):
                return None  # no class to route its batches by: pyshacl takes them all
            found.update(c for c in classes if isinstance(c, rdflib.URIRef))
    return found


def _reachable(shapes: rdflib.Graph, shape: rdflib.term.Node) -> set[rdflib.term.Node]:
    """``shape`` and every blank node it reaches: its property shapes, the lists and the
    shapes of its ``sh:or``."""
    seen: set[rdflib.term.Node] = set()
    todo = [shape]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        todo.extend(o for o in shapes.objects(node) if isinstance(o, rdflib.BNode))
    return seen
