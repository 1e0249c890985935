"""Hand-written queries: every file is well formed, and parameters are bound as RDF terms."""

from __future__ import annotations

import pytest
from pyoxigraph import NamedNode, Store
from rdflib.plugins.sparql import prepareQuery

from ratified_rdf.queries import QueryError, all_queries, load_query
from ratified_rdf.queries.files import parse_query_file


@pytest.mark.slow
def test_every_query_file_declares_what_it_answers_and_parses() -> None:
    queries = all_queries()
    assert len(queries) >= 8
    for query in queries:
        assert query.answers, query.name
        # Valid SPARQL 1.1 for two independent parsers, as written and once bound.
        prepareQuery(query.text)
        Store().query(query.text)
        values = {
            p.name: 1
            if p.kind == "integer"
            else "https://example.org/x"
            if p.kind == "iri"
            else "x"
            for p in query.params
        }
        bound = query.bind(values)
        prepareQuery(bound)
        Store().query(bound)


def test_string_parameters_become_literals_never_query_text() -> None:
    query = load_query("document_revisions")
    hostile = 'x" } } ; DROP ALL ; SELECT * WHERE { ?s ?p ?o . FILTER("'
    bound = query.bind({"draftName": hostile})
    assert "DROP ALL" in bound  # present, but only inside the literal
    assert list(Store().query(bound)) == []
    prepared = prepareQuery(bound)
    assert prepared.algebra.name == "SelectQuery"
    assert bound.count("VALUES") == 1
    assert '\\"' in bound  # the quote was escaped, not closing the literal


def test_iri_parameters_are_checked() -> None:
    query = load_query("revision_chain")
    for bad in ["not an iri", "http://x> } ; DROP ALL ; <http://y", "relative/path", ""]:
        with pytest.raises(QueryError):
            query.bind({"start": bad})
    assert "<https://example.org/a>" in query.bind({"start": "https://example.org/a"})


def test_an_iri_a_query_returned_binds_as_the_same_term_it_is() -> None:
    query = load_query("post_authors")
    texts = ("https://example.org/post/1", "https://example.org/post/2")
    terms = tuple(NamedNode(t) for t in texts)
    assert query.bind({"post": terms}) == query.bind({"post": texts})
    # A term is an IRI: a string or integer parameter refuses it.
    with pytest.raises(QueryError, match=r"\?draftName is string, not an IRI"):
        load_query("document_revisions").bind({"draftName": terms[0]})


@pytest.mark.parametrize(
    "bad",
    [
        "https://x/\n",
        "https://x/\x00",
        "https://x/\x7f",
        "https://x/\x85",
        "https://x/%zz",
        "a:\ud800",
    ],
)
def test_iri_parameters_pyoxigraph_refuses_are_query_errors(bad: str) -> None:
    with pytest.raises(QueryError, match=r"\?start must be an absolute IRI"):
        load_query("revision_chain").bind({"start": bad})


def test_a_string_parameter_with_a_lone_surrogate_is_a_query_error() -> None:
    with pytest.raises(QueryError, match=r"\?draftName holds a lone surrogate"):
        load_query("document_revisions").bind({"draftName": "draft-\ud800"})


def test_integer_parameters_are_checked() -> None:
    query = load_query("section_history")
    with pytest.raises(QueryError):
        query.bind({"rfc": "https://example.org/rfc1", "sectionNumber": "1"} | {"bogus": 1})
    with pytest.raises(QueryError, match="needs a value for sectionNumber"):
        query.bind({"rfc": "https://example.org/rfc1"})


def test_a_file_without_header_or_placeholder_is_refused() -> None:
    with pytest.raises(QueryError, match="Answers"):
        parse_query_file("bare", "SELECT * WHERE { ?s ?p ?o }")
    with pytest.raises(QueryError, match="no VALUES placeholder"):
        parse_query_file(
            "noplace", "# Answers: x\n# Param ?a string: y\nSELECT * WHERE { ?s ?p ?a }"
        )
    with pytest.raises(QueryError, match="does not match"):
        parse_query_file(
            "mismatch",
            "# Answers: x\n# Param ?a string: y\n"
            "SELECT * WHERE { VALUES (?b) { (UNDEF) } ?s ?p ?b }",
        )


def test_a_query_name_is_never_a_path() -> None:
    from ratified_rdf.queries.files import QueryError, load_query

    for name in ("../sparql/holdings", "/etc/passwd", "holdings.rq", "Holdings", ""):
        with pytest.raises(QueryError, match="is not a query name"):
            load_query(name)
    assert load_query("holdings").name == "holdings"


def test_whole_graph_queries_are_marked_in_their_header() -> None:
    # What the graph holds is counted over everything, and the headings, pull requests and
    # commits are listed whole; those rows are kept per set of graphs.
    assert {q.name for q in all_queries() if q.whole_graph} == {
        "commit_details",
        "documents",
        "gazetteer_people",
        "gazetteer_revisions",
        "gazetteer_threads",
        "group_holdings",
        "group_officers",
        "headings",
        "held_gaps",
        "holdings",
        "pull_request_people",
        "pull_requests",
    }
    marked = parse_query_file("x", "# Answers: everything\n# Whole graph: counts it all\nASK {}")
    assert marked.whole_graph and not parse_query_file("y", "# Answers: y\nASK {}").whole_graph


def test_a_key_is_bound_beside_the_parameters_it_is_made_of() -> None:
    text = (
        "# Answers: rows by key.\n"
        "# Param ?doc iri: a document\n"
        "# Param ?number string: a section number\n"
        "# Key ?key: ?doc ?number\n"
        "SELECT ?row WHERE { VALUES (?doc ?number ?key) { (UNDEF UNDEF UNDEF) } ?s ?p ?key }"
    )
    query = parse_query_file("q", text)
    assert query.keys == (("key", ("doc", "number")),)
    bound = query.bind({"doc": "https://example.org/pigeon/doc/1", "number": "4.2"})
    assert 'VALUES (?doc ?number ?key) { (<https://example.org/pigeon/doc/1> "4.2" ' in bound
    assert '"https://example.org/pigeon/doc/1 4.2") }' in bound
    # A list binds one key a row; the key is no parameter of its own.
    listed = query.bind(
        {"doc": ("https://example.org/a", "https://example.org/b"), "number": ("1", "2")}
    )
    assert '"https://example.org/a 1")' in listed and '"https://example.org/b 2")' in listed
    with pytest.raises(QueryError, match="has no parameter"):
        query.bind({"doc": "https://example.org/a", "number": "1", "key": "x"})
    # Each part is checked as its parameter is, before it goes into the key.
    with pytest.raises(QueryError, match="absolute IRI"):
        query.bind({"doc": "not an iri> } DROP ALL", "number": "1"})


@pytest.mark.parametrize(
    ("key_line", "message"),
    [
        ("# Key ?key: ?doc ?elsewhere", "made of declared parameters"),
        ("# Key key = doc number", "write its Key line"),
    ],
)
def test_a_key_line_that_does_not_fit_is_named(key_line: str, message: str) -> None:
    text = (
        "# Answers: rows by key.\n# Param ?doc iri: a document\n"
        f"{key_line}\n"
        "SELECT ?row WHERE { VALUES (?doc ?key) { (UNDEF UNDEF) } ?s ?p ?key }"
    )
    with pytest.raises(QueryError, match=message):
        parse_query_file("q", text)
