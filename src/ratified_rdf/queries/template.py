"""A CONSTRUCT query run as a SELECT of its WHERE, its template instantiated per solution.

A CONSTRUCT's result is a stream of triples in which nothing marks where one solution's end
and the next one's begin, and Oxigraph writes a solution's triples in an order of its own (the
template's, reversed). The card view folds each row, a ``BNODE()`` of one solution, into one
literal, which needs exactly that boundary. So a view query is read as it is written, a
CONSTRUCT, and run as the SELECT of its own WHERE clause; its template is instantiated here,
solution by solution, as SPARQL 1.1 (16.2) says a CONSTRUCT is: a triple with an unbound
variable, or that is not a valid RDF triple, is left out, and each blank node of the template
is a fresh one in every solution.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pyoxigraph import BlankNode, Literal, NamedNode, Triple
from rdflib import BNode as RdflibBlankNode
from rdflib import Literal as RdflibLiteral
from rdflib import URIRef
from rdflib import Variable as RdflibVariable
from rdflib.paths import AlternativePath, InvPath, MulPath, SequencePath
from rdflib.plugins.sparql import prepareQuery
from rdflib.plugins.sparql.parserutils import CompValue

from ratified_rdf.graph.store import Term
from ratified_rdf.queries.files import QueryError, load_query
from ratified_rdf.queries.guard import RDFLIB_PARSING

TemplatePart = Term | int
"""A part of a compiled template: a constant, a template blank node, or the index of a
variable among :attr:`ConstructTemplate.variables`."""

Statement = tuple[NamedNode | BlankNode, NamedNode, Term]
"""A triple of the template's instance, as a tuple (subject, predicate, object)."""

_CONSTRUCT = re.compile(r"^CONSTRUCT\s*\{", re.MULTILINE)


@dataclass(frozen=True)
class ConstructTemplate:
    """A CONSTRUCT query as a SELECT of its WHERE and the template it instantiates."""

    select: str
    """The query's text with its ``CONSTRUCT { … }`` replaced by a ``SELECT`` of
    :attr:`variables`, in that order."""
    variables: tuple[str, ...]
    """The variables the template uses, as the SELECT gives them."""
    template: tuple[tuple[TemplatePart, TemplatePart, TemplatePart], ...]
    """The template's triple patterns, in no particular order."""
    properties: frozenset[str] | None = None
    """Every property (an IRI) a triple pattern or property path of the WHERE names, its
    ``FILTER (NOT) EXISTS`` included: the WHERE matches no triple of any other property, so
    it gives the same solutions over only the triples of these. None when a pattern's
    property is a variable or a negated property set (``!rdf:type``), which match any."""

    def instances(self, values: Sequence[Term | Triple | None]) -> list[Statement]:
        """The template's triples for one solution of :attr:`select` (its values in the
        order of :attr:`variables`: ``tuple(solution)``), as plain tuples: most are folded
        into a row at once, and a :class:`~pyoxigraph.Triple` costs more to make than the
        rest of the work on it."""
        fresh: dict[BlankNode, BlankNode] = {}
        triples: list[Statement] = []
        for pattern in self.template:
            terms: list[Term] = []
            for part in pattern:
                if isinstance(part, int):
                    value = values[part]
                    if value is None or isinstance(value, Triple):
                        break
                    terms.append(value)
                elif isinstance(part, BlankNode):
                    terms.append(fresh.setdefault(part, BlankNode()))
                else:
                    terms.append(part)
            else:
                subject, predicate, obj = terms
                if isinstance(subject, Literal) or not isinstance(predicate, NamedNode):
                    continue  # not an RDF triple: CONSTRUCT leaves it out
                triples.append((subject, predicate, obj))
        return triples


@lru_cache(maxsize=64)
def construct_template(name: str) -> ConstructTemplate:
    """The query ``sparql/<name>.rq``, a CONSTRUCT, as a :class:`ConstructTemplate`."""
    return template_of(name, load_query(name).text)


def template_of(name: str, text: str) -> ConstructTemplate:
    """The CONSTRUCT query ``text`` (``name`` in errors) as a :class:`ConstructTemplate`."""
    found = _CONSTRUCT.search(text)
    if found is None:
        raise QueryError(
            f"{name}.rq is not a CONSTRUCT (no line starting 'CONSTRUCT {{'); a view query must "
            "be one."
        )
    end = _closing_brace(text, found.end() - 1)
    with RDFLIB_PARSING:  # rdflib's parser is not safe to share between threads
        algebra = prepareQuery(text).algebra
    patterns = algebra.template
    names = sorted(
        {str(part) for pattern in patterns for part in pattern if isinstance(part, RdflibVariable)}
    )
    index = {variable: i for i, variable in enumerate(names)}
    template = tuple(
        (_part(s, name, index), _part(p, name, index), _part(o, name, index))
        for s, p, o in patterns
    )
    select = "SELECT " + " ".join(f"?{variable}" for variable in names)
    return ConstructTemplate(
        select=text[: found.start()] + select + text[end + 1 :],
        variables=tuple(names),
        template=template,
        properties=properties_read(algebra.p),
    )


def properties_read(pattern: object) -> frozenset[str] | None:
    """Every property a query's algebra (rdflib's, ``pattern``) names in a triple pattern or
    property path, anywhere in it; None when one may match any property.

    The algebra is walked whole, not by the kinds of node this version of rdflib makes: a
    ``FILTER NOT EXISTS`` keeps its patterns as parsed (``TriplesBlock``, not ``BGP``), and a
    part missed here would drop triples the query reads."""
    found: set[str] = set()
    todo: list[object] = [pattern]
    while todo:
        node = todo.pop()
        if isinstance(node, Mapping):
            # dict's own get: CompValue's resolves what it finds against a query context.
            triples = dict.get(node, "triples") if isinstance(node, CompValue) else None
            for triple in triples or ():
                if not _properties_of(triple[1], found):
                    return None
            todo.extend(node.values())
        elif isinstance(node, list | tuple | set | frozenset):
            todo.extend(node)
    return frozenset(found)


def _properties_of(predicate: object, found: set[str]) -> bool:
    """Add the properties ``predicate`` (an IRI or a property path) names to ``found``;
    False when it may match any property (a variable, a negated property set)."""
    if isinstance(predicate, URIRef):
        found.add(str(predicate))
        return True
    if isinstance(predicate, SequencePath | AlternativePath):
        return all(_properties_of(part, found) for part in predicate.args)
    if isinstance(predicate, InvPath):
        return _properties_of(predicate.arg, found)
    if isinstance(predicate, MulPath):
        return _properties_of(predicate.path, found)
    return False  # a variable, a negated property set, or something unforeseen


def _closing_brace(text: str, opening: int) -> int:
    """Where the brace opened at ``opening`` closes (IRIs and strings skipped)."""
    depth = 0
    i = opening
    while i < len(text):
        char = text[i]
        if char in "<\"'":
            close = ">" if char == "<" else char
            i = text.index(close, i + 1)
        elif char == "#":
            i = text.find("\n", i)
            if i < 0:
                break
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise QueryError("A CONSTRUCT's template has no closing brace.")


def _part(part: object, name: str, index: dict[str, int]) -> TemplatePart:
    if isinstance(part, RdflibVariable):
        return index[str(part)]
    if isinstance(part, URIRef):
        return NamedNode(str(part))
    if isinstance(part, RdflibBlankNode):
        return BlankNode(str(part))
    if isinstance(part, RdflibLiteral):
        if part.language:
            return Literal(str(part), language=part.language)
        if part.datatype is not None:
            return Literal(str(part), datatype=NamedNode(str(part.datatype)))
        return Literal(str(part))
    raise QueryError(f"{name}.rq's template holds {part!r}, which is not an RDF term.")
