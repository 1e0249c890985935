"""A card view row's values packed into one literal, and unpacked into columns again.

The card view stores each row a card reads as one ``rdf:JSON`` literal on its shortcut node
(``rr:historyRow``, ``rr:citationRow`` …): an object of column name → JSON-LD value object
(``{"@id": iri}``, ``{"@value": text, "@type": datatype}``, ``{"@value": text,
"@language": tag}``; no ``@type`` for ``xsd:string``), its keys sorted, so equal rows are the
same literal. A card then reads one triple a row where it read one per column: on Oxigraph each
pattern is an index lookup, and on disk a lookup is what a card's time goes to.

A view query says which column holds the packed row (``# Packed: ?row``) and, when its rows are
ordered, by which columns (SPARQL cannot sort by values inside a literal); :func:`unpack_rows`
turns its rows back into the full-path query's columns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

import orjson
from pyoxigraph import BlankNode, Literal, NamedNode

from ratified_rdf._errors import InputError
from ratified_rdf.graph.store import Term
from ratified_rdf.graph.vocab import XSD

RDF_JSON = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")
_STRING = XSD + "string"
_NUMBERS = {XSD + name for name in ("integer", "decimal", "double", "float", "int", "long")}
_DATES = {XSD + "dateTime", XSD + "date"}


class PackedRowError(InputError):
    """A packed row is not what :func:`pack_row` writes."""


def pack_row(columns: Mapping[str, Term]) -> Literal:
    """``columns`` as one ``rdf:JSON`` literal (keys sorted). A blank node cannot be packed:
    it names nothing outside its graph, so a card could not link it."""
    return Literal(
        orjson.dumps(
            {name: _value(term) for name, term in columns.items()}, option=orjson.OPT_SORT_KEYS
        ).decode(),
        datatype=RDF_JSON,
    )


def _value(term: Term) -> dict[str, str]:
    if isinstance(term, NamedNode):
        return {"@id": term.value}
    if isinstance(term, Literal):
        if term.language:
            return {"@value": term.value, "@language": term.language}
        if term.datatype.value == _STRING:
            return {"@value": term.value}
        return {"@value": term.value, "@type": term.datatype.value}
    raise PackedRowError(f"A card view row cannot hold the blank node {term}: name it with an IRI.")


def unpack_row(packed: Term) -> dict[str, Term]:
    """The columns of one packed row."""
    return _Unpacker().row(packed)


class _Unpacker:
    """Turns packed rows into terms, making each distinct value's term once (a card's rows
    repeat their sections, documents and dates), for one call of :func:`unpack_rows`."""

    def __init__(self) -> None:
        self.iris: dict[str, NamedNode] = {}
        self.literals: dict[tuple[str, str, str], Literal] = {}

    def row(self, packed: Term) -> dict[str, Term]:
        if not isinstance(packed, Literal) or packed.datatype != RDF_JSON:
            raise PackedRowError(f"{str(packed)[:80]} is not a packed row (an rdf:JSON literal).")
        try:
            values: dict[str, dict[str, str]] = orjson.loads(packed.value)
            return {name: self.term(value) for name, value in values.items()}
        except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError) as error:
            raise PackedRowError(f"{packed.value[:80]!r} is not a packed row: {error}.") from None

    def term(self, value: Mapping[str, str]) -> Term:
        iri = value.get("@id")
        if iri is not None:
            node = self.iris.get(iri)
            if node is None:
                node = self.iris[iri] = NamedNode(iri)
            return node
        key = (value["@value"], value.get("@type", ""), value.get("@language", ""))
        literal = self.literals.get(key)
        if literal is None:
            text, datatype, language = key
            if language:
                literal = Literal(text, language=language)
            elif datatype:
                literal = Literal(text, datatype=_datatype(datatype))
            else:
                literal = Literal(text)
            self.literals[key] = literal
        return literal


@lru_cache(maxsize=256)
def _datatype(iri: str) -> NamedNode:
    return NamedNode(iri)


def unpack_rows(
    rows: Iterable[dict[str, Term]], column: str, order: Sequence[str] = ()
) -> list[dict[str, Term]]:
    """Rows with ``column``'s packed row spread into columns (beside the row's others), in
    the order an ``ORDER BY`` of ``order`` gives (stable: ties keep the query's order)."""
    unpacker = _Unpacker()
    unpacked = []
    for row in rows:
        packed = row.get(column)
        if packed is None:
            raise PackedRowError(
                f"A row of the card view has no ?{column}; its query must bind it."
            )
        rest = {name: term for name, term in row.items() if name != column}
        unpacked.append({**rest, **unpacker.row(packed)})
    if order:
        keys: dict[Term, tuple[Any, ...]] = {}
        unpacked.sort(key=lambda row: tuple(_cached_key(keys, row.get(name)) for name in order))
    return unpacked


def _cached_key(keys: dict[Term, tuple[Any, ...]], term: Term | None) -> tuple[Any, ...]:
    if term is None:
        return (0,)
    key = keys.get(term)
    if key is None:
        key = keys[term] = _order_key(term)
    return key


def _order_key(term: Term | None) -> tuple[Any, ...]:
    """SPARQL's order of terms (unbound, blank nodes, IRIs, literals), literals by value
    where their datatype has one (numbers, dates), else by their text."""
    if term is None:
        return (0,)
    if isinstance(term, BlankNode):
        return (1, term.value)
    if isinstance(term, NamedNode):
        return (2, term.value)
    datatype = term.datatype.value
    if datatype in _NUMBERS:
        try:
            return (3, 0, Decimal(term.value), "")
        except InvalidOperation:
            pass
    elif datatype in _DATES:
        try:
            moment = datetime.fromisoformat(term.value)
            aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
            return (3, 1, aware.timestamp(), "")
        except ValueError:
            pass
    return (3, 2, term.value, datatype)
