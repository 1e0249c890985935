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


def pack_rows(rows: Iterable[Literal], order: Sequence[str] = ()) -> Literal:
    """Packed rows gathered into one ``rdf:JSON`` array, each once, in the order an
    ``ORDER BY`` of ``order`` gives (ties by their text, so equal lists are one literal)."""
    texts = sorted({row.value for row in rows})
    if order:
        keys = {text: _row_order(_columns(orjson.loads(text)), order) for text in texts}
        texts.sort(key=keys.__getitem__)
    return Literal("[" + ",".join(texts) + "]", datatype=RDF_JSON)


def unpack_row(packed: Term) -> dict[str, Term]:
    """The columns of one packed row."""
    rows = _unpacked(packed)
    if len(rows) != 1:
        raise PackedRowError(f"{str(packed)[:80]} holds {len(rows)} rows, not one.")
    return rows[0]


def _unpacked(packed: Term) -> list[dict[str, Term]]:
    """The rows of a packed row (one) or of gathered rows (an array of them)."""
    if not isinstance(packed, Literal) or packed.datatype != RDF_JSON:
        raise PackedRowError(f"{str(packed)[:80]} is not a packed row (an rdf:JSON literal).")
    try:
        values = orjson.loads(packed.value)
        if isinstance(values, list):
            return [_columns(row) for row in values]
        return [_columns(values)]
    except (orjson.JSONDecodeError, AttributeError, KeyError, TypeError) as error:
        raise PackedRowError(f"{packed.value[:80]!r} is not a packed row: {error}.") from None


def _columns(values: Mapping[str, Mapping[str, str]]) -> dict[str, Term]:
    """One row's columns as terms, made through :func:`_iri` and :func:`_literal`: bounded
    caches of terms by their text (a card's rows repeat their sections, documents and dates,
    and so do the cards after it)."""
    columns: dict[str, Term] = {}
    for name, value in values.items():
        iri = value.get("@id")
        if iri is not None:
            columns[name] = _iri(iri)
        else:
            columns[name] = _literal(
                value["@value"], value.get("@type", ""), value.get("@language", "")
            )
    return columns


TERMS_KEPT = 65_536
"""Terms each cache keeps (the least recently used go first): a few MiB."""


@lru_cache(maxsize=TERMS_KEPT)
def _iri(iri: str) -> NamedNode:
    return NamedNode(iri)


@lru_cache(maxsize=TERMS_KEPT)
def _literal(text: str, datatype: str, language: str) -> Literal:
    if language:
        return Literal(text, language=language)
    if datatype:
        return Literal(text, datatype=_iri(datatype))
    return Literal(text)


def unpack_rows(
    rows: Iterable[dict[str, Term]], column: str, order: Sequence[str] = ()
) -> list[dict[str, Term]]:
    """Rows with ``column``'s packed row (or gathered rows) spread into columns, beside the
    row's others, in the order an ``ORDER BY`` of ``order`` gives (stable: ties keep the
    query's order). Gathered rows from more than one list (one per graph read) are merged,
    each row once, as the full path's ``DISTINCT`` gives them."""
    unpacked: list[dict[str, Term]] = []
    lists = 0
    for row in rows:
        packed = row.get(column)
        if packed is None:
            raise PackedRowError(
                f"A row of the card view has no ?{column}; its query must bind it."
            )
        rest = {name: term for name, term in row.items() if name != column}
        found = _unpacked(packed)
        lists += packed.value.startswith("[")
        unpacked.extend({**rest, **columns} for columns in found)
    if lists > 1:
        seen: set[tuple[tuple[str, Term], ...]] = set()
        distinct = []
        for row in unpacked:
            key = tuple(sorted(row.items(), key=lambda item: item[0]))
            if key not in seen:
                seen.add(key)
                distinct.append(row)
        unpacked = distinct
    if order:
        unpacked.sort(key=lambda row: _row_order(row, order))
    return unpacked


def _row_order(row: Mapping[str, Term], order: Sequence[str]) -> tuple[tuple[Any, ...], ...]:
    return tuple(_order_key(row.get(name)) for name in order)


@lru_cache(maxsize=TERMS_KEPT)
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
