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

Oxigraph parses the text again with its own parser, so the guard first rewrites the text into
one both parsers read alike, parses that, and hands it back (:class:`ReaderQuery`): callers
run the text the guard returned, never the one they were sent. In that text

- every ``\\u``/``\\U`` code point escape is expanded, wherever it is, as SPARQL 1.1 says
  (``\\u`` takes four hex digits, ``\\U`` eight; a backslash and the character after it
  otherwise stay together as a pair), and an escape naming no character (a surrogate half,
  past U+10FFFF) is refused. rdflib's parser expands escapes everywhere, Oxigraph only inside
  string literals and IRIs, so ``"\\u005C"`` was one backslash to Oxigraph and the start of an
  escaped quote to rdflib: after expansion both read ``"\\"`` alike;
- no escape is left: a text whose expansion would spell one (``\\u005Cu0053``), or that holds
  an escape only one parser would read (rdflib's parser also reads ``\\u`` with eight digits and
  ``\\U`` with four), is refused, so neither parser expands anything a second time;
- every line ends in ``\\n``: ``\\r\\n`` and a lone ``\\r`` become ``\\n``. Oxigraph ends a
  comment at ``\\r``, rdflib's parser only at ``\\n``; neither ends one at any other character
  (the differential test ``tests/fuzz/test_guard_differential.py`` holds both parsers to
  that). A carriage return inside a long string literal so reads as a line feed: spell it
  ``\\r``.

Where the two parsers might still disagree, the second wall stands: readers' queries run on
threads sealed off the network (:mod:`ratified_rdf.queries.offline`), so a SERVICE the guard
missed still cannot connect, and the embedded store is always given the dataset, which
overrides any FROM or FROM NAMED the engine reads.
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass
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


@dataclass(frozen=True)
class ReaderQuery:
    """A reader's query the guard let through: its form, and the text to run, which is the
    text the guard read (the sent text with its escapes expanded and its line ends made
    ``\\n``). Run :attr:`text`, never the text that was sent."""

    form: QueryForm
    text: str


def check_reader_query(sparql: str) -> ReaderQuery:
    """The query ``sparql`` as a :class:`ReaderQuery` (its form, and the one text to run) if a
    reader may run it; otherwise raise :class:`QueryRefused` saying why and what to do
    instead."""
    if len(sparql) > MAX_QUERY_CHARS:
        raise QueryRefused(
            "size",
            f"The query is {len(sparql):,} characters long, over the {MAX_QUERY_CHARS:,} this "
            "brain reads; send a shorter query (long VALUES lists can be split over several).",
        )
    text = canonical_text(sparql)
    return ReaderQuery(_checked(text), text)


# A backslash and what follows it: a code point escape (four hex digits after u, eight after
# U), or any other pair, kept as it is (so the second backslash of "\\" starts nothing).
_ESCAPE: Final = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|.)", re.DOTALL)
# What either parser could still read as an escape: rdflib's parser reads \u and \U alike,
# with four or eight digits. None may be left in the text both parsers read.
_ANY_ESCAPE: Final = re.compile(r"\\[uU][0-9A-Fa-f]{4}")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_LINE_END: Final = re.compile(r"\r\n?|\n")


def canonical_text(sparql: str) -> str:
    """``sparql`` as both parsers read it alike: code point escapes expanded, none left, and
    every line ended by ``\\n`` (see the module's notes). Raise :class:`QueryRefused` for a
    text that cannot be made so: a lone surrogate, an escape naming no character, an escape
    left after expansion."""
    lone = _SURROGATE.search(sparql)
    if lone:
        raise QueryRefused(
            "syntax",
            f"The query holds a lone surrogate (U+{ord(lone[0]):04X}) at "
            f"{_where(sparql, lone.start())}, half of a UTF-16 pair and no character; send "
            "the query as valid Unicode text.",
        )

    def expand(escape: re.Match[str]) -> str:
        digits = escape[1] or escape[2]
        if digits is None:
            return escape[0]
        code = int(digits, 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            why = (
                "past U+10FFFF, the last Unicode code point"
                if code > 0x10FFFF
                else "half of a UTF-16 surrogate pair, not a character"
            )
            raise QueryRefused(
                "syntax",
                f"The escape {escape[0]} at {_where(sparql, escape.start())} names no "
                f"character (U+{code:04X} is {why}); write the character "
                "itself, or its escape: \\u with four hex digits, \\U with eight (\\U0001F600 "
                "for U+1F600).",
            )
        return chr(code)

    expanded = _ESCAPE.sub(expand, sparql) if "\\" in sparql else sparql
    left = _ANY_ESCAPE.search(expanded)
    if left:
        raise QueryRefused(
            "syntax",
            f"The query still holds the escape {left[0]} once its escapes are expanded (an "
            "escape spelled by another, or after a backslash, or with the wrong number of "
            "digits), which SPARQL parsers read differently; write the character itself, or "
            'build such a string with CONCAT (CONCAT("\\\\", "u0041")).',
        )
    return _LINE_END.sub("\n", expanded) if "\r" in expanded else expanded


def _where(text: str, at: int) -> str:
    """``at`` in ``text`` as a line and a column, both from 1 (any line end counts)."""
    ends = list(_LINE_END.finditer(text, 0, at))
    column = at - (ends[-1].end() if ends else 0) + 1
    return f"line {len(ends) + 1}, column {column}"


RDFLIB_PARSING: Final = threading.Lock()
"""Held around every use of rdflib's SPARQL parser in this process. Its pyparsing grammar keeps
state while it parses, so two threads parsing at once break each other's parse (a TypeError
from a parse action, not a syntax error): a server reads queries on many threads."""


@functools.lru_cache(maxsize=512)
def _checked(sparql: str) -> QueryForm:
    try:
        with RDFLIB_PARSING:
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


def _is_update(sparql: str) -> bool:
    try:
        with RDFLIB_PARSING:
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
    "RDFLIB_PARSING",
    "QueryForm",
    "QueryRefused",
    "ReaderQuery",
    "Refusal",
    "audited_text",
    "canonical_text",
    "check_reader_query",
]
