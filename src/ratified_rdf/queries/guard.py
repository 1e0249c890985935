"""Check a reader's own SPARQL by its parse tree before anything runs it.

Every text a reader sends (``Brain.query``, ``ratified query``, MCP's ``sparql`` tool, the
``/sparql`` endpoint) is parsed by rdflib's SPARQL 1.1 parser, and refused on what the parse
tree holds, not on how the text looks:

- an update (INSERT, DELETE, LOAD, CLEAR, …): this brain changes only through its builds;
- SERVICE, with an IRI or a variable, anywhere (subqueries, OPTIONAL, MINUS, EXISTS …): it
  would make the engine fetch from another endpoint;
- FROM and FROM NAMED: the dataset is always the reader's graphs, and answering over another
  dataset than the text names would mislead;
- text the parser cannot read: what the guard cannot read, it does not let through.

Oxigraph parses the text again with its own parser. Where the two might disagree, the second
wall stands: readers' queries run on threads sealed off the network
(:mod:`ratified_rdf.queries.offline`), so a SERVICE the guard missed still cannot connect.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from typing import Final, Literal

from pydantic import JsonValue
from pyparsing import ParseException, ParseResults
from rdflib.plugins.sparql.parser import parseQuery, parseUpdate
from rdflib.plugins.sparql.parserutils import CompValue

from ratified_rdf.queries.files import QueryError

Refusal = Literal["syntax", "update", "service", "dataset", "size"]
QueryForm = Literal["SELECT", "ASK", "CONSTRUCT", "DESCRIBE"]

MAX_QUERY_CHARS: Final = 100_000
"""The longest query text the guard reads; a longer one is refused unread."""

_FORMS: Final[dict[str, QueryForm]] = {
    "SelectQuery": "SELECT",
    "AskQuery": "ASK",
    "ConstructQuery": "CONSTRUCT",
    "DescribeQuery": "DESCRIBE",
}


class QueryRefused(QueryError):
    """A reader's query the guard will not run, with the reason in :attr:`reason`."""

    def __init__(self, reason: Refusal, message: str) -> None:
        super().__init__(message)
        self.reason: Refusal = reason


def check_reader_query(sparql: str) -> QueryForm:
    """The form of ``sparql`` (SELECT, ASK, CONSTRUCT or DESCRIBE) if a reader may run it;
    otherwise raise :class:`QueryRefused` saying why and what to do instead."""
    if len(sparql) > MAX_QUERY_CHARS:
        raise QueryRefused(
            "size",
            f"The query is {len(sparql):,} characters long, over the {MAX_QUERY_CHARS:,} this "
            "brain reads; send a shorter query (long VALUES lists can be split over several).",
        )
    return _checked(sparql)


@functools.lru_cache(maxsize=512)
def _checked(sparql: str) -> QueryForm:
    try:
        tree = parseQuery(sparql)
    except ParseException as error:
        if _is_update(sparql):
            raise QueryRefused(
                "update",
                "This is a SPARQL update (INSERT, DELETE, LOAD, CLEAR, …); readers' queries "
                "only read. Change the brain with `ratified build` instead.",
            ) from None
        raise QueryRefused(
            "syntax",
            f"The query is not valid SPARQL 1.1: {_parse_problem(error)}. Fix the text there "
            "(the guard reads standard SPARQL 1.1 only, and runs nothing it cannot read).",
        ) from None
    except RecursionError:
        raise QueryRefused(
            "syntax",
            "The query nests its groups too deeply to be read; flatten it.",
        ) from None
    query = tree[1]
    for node in _nodes(tree):
        if node.name == "ServiceGraphPattern":
            raise QueryRefused(
                "service",
                "This query uses SERVICE, which would fetch from another endpoint; queries "
                "here read only this brain's graphs. Run the federated part against that "
                "endpoint yourself.",
            )
    if dict.get(query, "datasetClause"):
        raise QueryRefused(
            "dataset",
            "Queries here run over a fixed dataset (the reader's graphs), so FROM and FROM "
            "NAMED are refused; remove them, and use GRAPH inside the query to pick one of "
            "its graphs.",
        )
    return _FORMS[query.name]


AUDITED_TEXT_CHARS: Final = 4_096
"""Query texts up to this length are kept whole in the audit log; a longer one is kept as its
SHA-256 digest and length, so no request can make the log grow by more than about this."""


def audited_text(sparql: str) -> dict[str, JsonValue]:
    """What the audit log keeps of a reader's query text: the text (when short) with its
    SHA-256 digest and length."""
    kept: dict[str, JsonValue] = {
        "sparql_sha256": hashlib.sha256(sparql.encode("utf-8", "surrogatepass")).hexdigest(),
        "sparql_chars": len(sparql),
    }
    if len(sparql) <= AUDITED_TEXT_CHARS:
        kept["sparql"] = sparql
    return kept


def refuse_service(sparql: str) -> None:
    """Raise :class:`QueryRefused` unless a reader may run ``sparql`` (the check of
    :func:`check_reader_query`, for callers that need no form)."""
    check_reader_query(sparql)


def _is_update(sparql: str) -> bool:
    try:
        parseUpdate(sparql)
    except (ParseException, RecursionError):
        return False
    return True


def _parse_problem(error: ParseException) -> str:
    return f"line {error.lineno}, column {error.col}: {error.msg}"


def _nodes(value: object) -> Iterator[CompValue]:
    """Every node of the parse tree, depth first, without recursion (a deep tree is fine)."""
    pending: list[object] = [value]
    while pending:
        current = pending.pop()
        if isinstance(current, CompValue):
            yield current
            pending.extend(current.values())
        elif isinstance(current, ParseResults | list | tuple):
            pending.extend(current)
        elif isinstance(current, dict):
            pending.extend(current.values())


__all__ = [
    "AUDITED_TEXT_CHARS",
    "MAX_QUERY_CHARS",
    "QueryForm",
    "QueryRefused",
    "Refusal",
    "audited_text",
    "check_reader_query",
    "refuse_service",
]
