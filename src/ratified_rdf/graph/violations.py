"""What the SHACL gate hands an engine and gets back: a prepared batch, and violations in
words a person can act on."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    import rdflib

    SH: rdflib.Namespace

SHACL: Final = "http://www.w3.org/ns/shacl#"


def __getattr__(name: str) -> object:
    """``SH``, the SHACL namespace as rdflib's, made on first use: a reader imports this module
    for :class:`Violation`, and never rdflib."""
    if name == "SH":
        import rdflib

        return rdflib.Namespace(SHACL)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


SHOWN_VALUE_CHARS: Final = 200
"""How much of a refused value a violation's sentence shows."""

# What a sentence never prints as it is: controls (a terminal acts on an escape), lone
# surrogates, bidirectional embeddings, overrides and isolates.
_UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff\u202a-\u202e\u2066-\u2069]")


class Violation(BaseModel):
    """One SHACL result, in words a person can act on."""

    model_config = ConfigDict(frozen=True)

    focus_node: str
    path: str | None
    message: str
    value: str | None
    shape: str | None
    source_record: str
    constraint: str | None = None
    """The SHACL constraint component it broke (``sh:MinCountConstraintComponent``)."""

    def sentence(self) -> str:
        """``<focus> <path>: message (value …)``, the value as :func:`shown_value` shows it:
        a value refused for the control characters or the length it has would otherwise
        reach the terminal or the log that prints the sentence."""
        where = f" {self.path}" if self.path else ""
        value = f" (value: {shown_value(self.value)})" if self.value else ""
        return f"{self.focus_node}{where}: {self.message}{value}"


def shown_value(value: str) -> str:
    """``value`` with each control or bidirectional character written as a ``\\uXXXX``
    escape, cut after :data:`SHOWN_VALUE_CHARS` characters (saying how long it was)."""
    shown = _UNSHOWABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", value[:SHOWN_VALUE_CHARS])
    if len(value) > SHOWN_VALUE_CHARS:
        shown += f"… ({len(value):,} characters)"
    return shown


class PreparedBatch(BaseModel):
    """A batch with its validation context, ready for pyshacl in any process."""

    model_config = ConfigDict(frozen=True)

    source: str
    ntriples: bytes
    focus_nodes: tuple[str, ...]


def violations_of(results: rdflib.Graph, source: str) -> list[Violation]:
    """The violations (not warnings) of a SHACL validation report, sorted."""
    import rdflib

    SH = rdflib.Namespace(SHACL)
    out: list[Violation] = []
    for result in results.subjects(rdflib.RDF.type, SH.ValidationResult):
        if results.value(result, SH.resultSeverity) != SH.Violation:
            continue

        def text(predicate: rdflib.URIRef, node: rdflib.term.Node = result) -> str | None:
            value = results.value(node, predicate)
            return None if value is None else str(value)

        path = results.value(result, SH.resultPath)
        path_text: str | None
        if isinstance(path, rdflib.BNode):
            inverse = results.value(path, SH.inversePath)
            path_text = f"^{inverse}" if inverse is not None else "(complex path)"
        else:
            path_text = None if path is None else str(path)
        out.append(
            Violation(
                focus_node=text(SH.focusNode) or "?",
                path=path_text,
                message=text(SH.resultMessage) or "does not conform",
                value=text(SH.value),
                shape=text(SH.sourceShape),
                source_record=source,
                constraint=text(SH.sourceConstraintComponent),
            )
        )
    return sorted(out, key=lambda v: (v.focus_node, v.path or "", v.message))
