"""The guard and the engine read one query alike: a differential test of their two parsers.

The guard (rdflib's SPARQL parser) approves a text and the engine (Oxigraph) runs it; any place
where they read the same text differently is a place to hide a SERVICE or a FROM from the
guard. Each generated query mixes comments ended by every line terminator (and by escapes
spelling them), SERVICE and FROM clauses, keywords, string literals and IRIs spelled with
``\\u``/``\\U`` escapes (code points at and past U+10FFFF, surrogate halves, escapes spelling
escapes, rdflib's eight-digit ``\\u``), and the test holds the two readings of what the guard
returns against each other:

- a query the guard lets through makes Oxigraph call no SERVICE (every one here names port 9,
  which Oxigraph refuses to call, so the attempt is an error and nothing leaves the machine),
  honour no FROM (the test's store holds its one triple only in a named graph, and is not given
  the dataset the library always gives it), and read no SILENT SERVICE (each binds a marker);
- and Oxigraph's rows are rdflib's own rows for the same text, so every literal and IRI was
  read to the same value (where Oxigraph, stricter in places, cannot read a text the guard let
  through, nothing runs: that is no disagreement that matters);
- a query the guard refuses as syntax once its text was made canonical is one Oxigraph cannot
  read either.
"""

from __future__ import annotations

import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, QuerySolutions, Store

from ratified_rdf.queries.guard import QueryRefused, canonical_text, check_reader_query
from ratified_rdf.queries.offline import run_offline

# Deterministic examples, no example database, no deadline (see test_readers.py).
DIFFERENTIAL = settings(
    max_examples=400,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)

GRAPH = "http://pigeon.example/graph/loft"
SERVICE_URL = "http://127.0.0.1:9/sparql"  # Oxigraph refuses port 9 before any socket

# Every character either parser could take for the end of a line, and escapes spelling them.
TERMINATORS = ["\n", "\r", "\r\n", "\n\r", "\x0b", "\x0c", "\x85", "\u2028", "\u2029", "\x00"]
SPELLED_TERMINATORS = [
    "\\u000A",
    "\\u000a",
    "\\u000D",
    "\\U0000000A",
    "\\U0000000D",
    "\\u0085",
    "\\u2028",
    "\\u2029",
    "\\u000B",
    "\\u000C",
    "\\u000A0010",  # rdflib once read these eight digits as one escape, Oxigraph four
    "\\u000D0041",
    "\\U000A",  # \U with four digits: rdflib once read it, Oxigraph does not
    "\\u005Cu000A",  # an escape spelling an escape
]


def _escape(code: int) -> str:
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


# Code points an escape may name, with the edges: the last one, past it, surrogate halves.
CODE_POINTS = st.one_of(
    st.integers(0x20, 0x7E),
    st.sampled_from([0x0, 0xA, 0xD, 0x22, 0x27, 0x3C, 0x3E, 0x5C, 0x7B, 0x7D, 0x23, 0x85]),
    st.sampled_from([0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000, 0xFFFD, 0xFFFF, 0x10000]),
    st.sampled_from([0x10FFFF, 0x110000, 0x7FFFFFFF, 0xFFFFFFFF]),
    st.integers(0x80, 0x10FFFF),
)
ODD_ESCAPES = st.sampled_from(
    [
        "\\\\u0041",  # a backslash pair, then what looks like an escape
        "\\\\\\u0041",
        "\\u005Cu0053",  # an escape spelling an escape
        "\\u005C\\u0075\\u0030\\u0030\\u0034\\u0031",
        "\\u00410041",  # eight digits after a lower-case u
        "\\U0041",  # four digits after an upper-case U
        "\\U0041zzzz",
        "\\u00",
        "\\u",
        "\\uD83D\\uDE00",  # a surrogate pair spelled as two escapes
        "\\U0001F600",
        "\\n",
        "\\r",
        '\\"',
        "\\'",
        "\\\\",
    ]
)
ESCAPES = st.one_of(CODE_POINTS.map(_escape), ODD_ESCAPES, st.sampled_from(SPELLED_TERMINATORS))


def _spelled(word: str) -> st.SearchStrategy[str]:
    """``word`` with each letter as itself, in lower case, or as an escape."""
    letters = [
        st.sampled_from(
            [letter, letter.lower(), _escape(ord(letter)), _escape(ord(letter.lower()))]
        )
        for letter in word
    ]
    return st.tuples(*letters).map("".join)


SERVICE = st.builds(
    lambda keyword, silent: f"{keyword} {silent}<{SERVICE_URL}> {{ ?a ?b ?c }}",
    _spelled("SERVICE"),
    st.sampled_from(["", "SILENT "]),
)
SILENT_SERVICE = _spelled("SERVICE").map(
    lambda keyword: f"{keyword} SILENT <{SERVICE_URL}> {{ ?a ?b ?c }} BIND(1 AS ?called)"
)
FROM = st.builds(
    lambda keyword, named: f"{keyword} {named}<{GRAPH}>",
    _spelled("FROM"),
    st.sampled_from(["", "NAMED "]),
)
# Text inside a comment or a literal: words, quotes, braces, escapes, hidden clauses.
FILLER = st.lists(
    st.one_of(
        st.sampled_from(["x", " ", "'", '"', "'''", '"""', "{", "}", "#", "<", ">", "\\", "."]),
        st.sampled_from(TERMINATORS),
        ESCAPES,
        SERVICE,
        SILENT_SERVICE,
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=3),
    ),
    max_size=6,
).map("".join)
COMMENT = st.builds(
    lambda body, end: f"#{body}{end}",
    FILLER,
    st.one_of(st.sampled_from(TERMINATORS), st.sampled_from(SPELLED_TERMINATORS)),
)
QUOTES = ["'", '"', "'''", '"""']
LITERAL_TEXT = st.lists(
    st.one_of(
        # No tab: rdflib's parser expands tabs to spaces everywhere, a known harmless difference.
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=4).map(
            lambda text: text.replace("\t", " ")
        ),
        ESCAPES,
        st.sampled_from(TERMINATORS),
    ),
    max_size=4,
).map("".join)
IRI_TEXT = st.lists(
    st.one_of(st.sampled_from(["a", "b", "/", "#", "-", "é", "%41"]), ESCAPES), max_size=4
).map("".join)


@st.composite
def queries(draw: st.DrawFn) -> str:
    """One SELECT, its parts drawn from the pieces above."""
    pieces: list[str] = []
    for index in range(draw(st.integers(1, 5))):
        kind = draw(st.sampled_from(["comment", "literal", "iri", "service", "triple", "mark"]))
        if kind == "comment":
            pieces.append(draw(COMMENT))
        elif kind == "literal":
            quote = draw(st.sampled_from(QUOTES))
            pieces.append(f"BIND({quote}{draw(LITERAL_TEXT)}{quote} AS ?text{index})")
        elif kind == "iri":
            pieces.append(f"BIND(<http://pigeon.example/{draw(IRI_TEXT)}> AS ?iri{index})")
        elif kind == "service":
            pieces.append(draw(st.one_of(SERVICE, SILENT_SERVICE)))
        elif kind == "triple":
            pieces.append("OPTIONAL { ?s ?p ?o }")
        else:
            pieces.append(f"BIND({index} AS ?mark{index})")
    dataset = draw(st.one_of(st.just(""), FROM, st.builds(lambda c, f: c + f, COMMENT, FROM)))
    gaps = draw(st.lists(st.sampled_from([" ", "\n", "\r", "\t"]), min_size=len(pieces)))
    body = "".join(gap + piece for gap, piece in zip(gaps, pieces, strict=False))
    # The first BIND gives every reading a row (rdflib answers an empty group with none).
    return f"SELECT * {dataset}\nWHERE {{ BIND(0 AS ?start){body}\n}}"


def _store() -> Store:
    store = Store()
    store.add(
        Quad(
            NamedNode("http://pigeon.example/pigeon/1"),
            NamedNode("http://pigeon.example/flies"),
            Literal("home"),
            NamedNode(GRAPH),
        )
    )
    return store


STORE = _store()

Row = frozenset[tuple[str, str]]


def oxigraph_reading(text: str) -> tuple[str, list[Row]]:
    """What Oxigraph makes of ``text``: ``("rows", …)``, ``("syntax", message)`` or
    ``("called", message)`` when it tried to call a SERVICE. Run on a thread sealed off the
    network, over the store's own dataset (FROM honoured: nothing overrides it here)."""

    def job() -> tuple[str, list[Row]]:
        try:
            result = STORE.query(text)
            assert isinstance(result, QuerySolutions)
            names = [variable.value for variable in result.variables]
            rows = [
                frozenset(
                    (name, _term(term)) for name, term in zip(names, row, strict=True) if term
                )
                for row in result
            ]
        except SyntaxError as error:
            return "syntax", [frozenset({("error", str(error))})]
        except OSError as error:
            return "called", [frozenset({("error", str(error))})]
        return "rows", rows

    return run_offline(job)


def _term(term: object) -> str:
    if isinstance(term, NamedNode):
        return f"<{term.value}>"
    if isinstance(term, BlankNode):
        return "_:"
    assert isinstance(term, Literal)
    return f"{term.value!r}^^{term.datatype.value}@{term.language or ''}"


def rdflib_rows(text: str) -> list[Row]:
    """rdflib's own rows for ``text``, over an empty dataset, as :func:`oxigraph_reading`
    gives Oxigraph's."""
    rows = []
    for row in rdflib.Dataset().query(text):
        assert isinstance(row, rdflib.query.ResultRow)
        kept = set()
        for name, value in row.asdict().items():
            if isinstance(value, rdflib.URIRef):
                kept.add((name, f"<{value}>"))
            elif isinstance(value, rdflib.Literal):
                datatype = str(value.datatype or rdflib.XSD.string)
                if value.language:
                    datatype = str(rdflib.RDF.langString)
                kept.add((name, f"{str(value)!r}^^{datatype}@{value.language or ''}"))
            else:
                kept.add((name, "_:"))
        rows.append(frozenset(kept))
    return rows


def disagreement(sparql: str) -> str | None:
    """How the guard's reading of ``sparql`` and the engine's differ, or ``None``."""
    try:
        checked = check_reader_query(sparql)
    except QueryRefused as refused:
        if refused.reason != "syntax":
            return None  # SERVICE or FROM seen by the guard: refused, whatever Oxigraph reads
        try:
            text = canonical_text(sparql)
        except QueryRefused:
            return None  # refused before any parser reads it
        kind, _ = oxigraph_reading(text)
        if kind != "syntax":
            return f"the guard refused as syntax ({refused}) a text Oxigraph reads: {text!r}"
        return None
    kind, rows = oxigraph_reading(checked.text)
    if kind == "called":
        return f"the guard let through a text on which Oxigraph calls a SERVICE: {rows}"
    if kind == "syntax":
        # Oxigraph is stricter in places (it checks an IRI against RFC 3987, where rdflib's
        # parser takes most characters): it then runs nothing, and the reader gets its error.
        return None
    read = {name for row in rows for name, _ in row}
    if "called" in read:
        return "the guard let through a text on which Oxigraph calls a SILENT SERVICE"
    if "s" in read:
        return "the guard let through a text on which Oxigraph honours a FROM"
    theirs = rdflib_rows(checked.text)
    if sorted(rows, key=sorted) != sorted(theirs, key=sorted):
        return f"the two read different values: Oxigraph {rows}, rdflib {theirs}"
    return None


@DIFFERENTIAL
@given(queries())
def test_the_guard_and_the_engine_read_every_query_alike(sparql: str) -> None:
    problem = disagreement(sparql)
    assert problem is None, f"{problem}\nquery: {sparql!r}"


# The findings of issue 50's attack, and what was found beside them, as explicit examples.
FOUND = [
    f"SELECT * WHERE {{ # x\r SERVICE <{SERVICE_URL}> {{ ?x ?y ?w }} \n }}",
    f"SELECT * WHERE {{ # x\r SERVICE SILENT <{SERVICE_URL}> {{ ?x ?y ?w }} BIND(1 AS ?called)\n"
    " }",
    f"SELECT * # x\r FROM <{GRAPH}> \n WHERE {{ OPTIONAL {{ ?s ?p ?o }} }}",
    # rdflib expanded the escape everywhere (the string runs on, over SERVICE, to the next
    # quote), Oxigraph only inside the string (a string holding one backslash).
    f'SELECT * WHERE {{ BIND("\\u005C" AS ?a) SERVICE <{SERVICE_URL}> {{ ?x ?y ?w }} '
    'BIND(" AS ?b) #" AS ?c)\n }',
    f"SELECT * WHERE {{ BIND( # \\u000A0010 AS ?z) SERVICE <{SERVICE_URL}> {{ ?a ?b ?c }} "
    "BIND( \n 1 AS ?y) }",
    "SELECT * WHERE { BIND('\\U00110000' AS ?x) }",
    "SELECT * WHERE { BIND('\\uD800' AS ?x) }",
    "SELECT * WHERE { BIND('\\\\u0041' AS ?x) }",
    "SELECT * WHERE { BIND('''a\r\nb\rc''' AS ?x) }",
]


def test_the_findings_read_alike() -> None:
    problems = [(text, disagreement(text)) for text in FOUND]
    assert [(text, problem) for text, problem in problems if problem] == []
