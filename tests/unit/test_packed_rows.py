"""A card view row packed into one rdf:JSON literal and unpacked again: terms come back
exactly, equal rows are one literal, ordered rows sort by value, and mistakes are refused."""

from __future__ import annotations

import json

import pytest
from pyoxigraph import BlankNode, Literal, NamedNode, Quad, Store, Triple

from ratified_rdf.graph.store import ntriples
from ratified_rdf.graph.views import COLUMN, packed_rows
from ratified_rdf.queries.files import QueryError, parse_query_file
from ratified_rdf.queries.packed import (
    RDF_JSON,
    PackedRowError,
    pack_row,
    pack_rows,
    unpack_row,
    unpack_rows,
)
from ratified_rdf.queries.template import template_of

XSD = "http://www.w3.org/2001/XMLSchema#"
DATE = NamedNode(XSD + "dateTime")
EX = "https://example.org/pigeon/"


def test_every_kind_of_term_comes_back_as_it_went_in() -> None:
    row = {
        "post": NamedNode(EX + "post/1"),
        "created": Literal("2017-03-06T14:51:40-08:00", datatype=DATE),
        "similarity": Literal("0.98", datatype=NamedNode(XSD + "decimal")),
        "heading": Literal('Pigeon "post" \\ rules\n'),
        "title": Literal("Taubenpost", language="de"),
    }
    packed = pack_row(row)
    assert packed.datatype == RDF_JSON
    back = unpack_row(packed)
    assert {k: str(v) for k, v in back.items()} == {k: str(v) for k, v in row.items()}


def test_equal_rows_are_one_literal_whatever_the_order_of_their_columns() -> None:
    first = {"a": Literal("1"), "b": NamedNode(EX + "b")}
    second = {"b": NamedNode(EX + "b"), "a": Literal("1")}
    assert pack_row(first) == pack_row(second)
    assert pack_row(first) != pack_row({"a": Literal("2"), "b": NamedNode(EX + "b")})


def test_a_blank_node_cannot_be_packed() -> None:
    with pytest.raises(PackedRowError, match="blank node"):
        pack_row({"a": BlankNode()})


@pytest.mark.parametrize(
    "literal",
    [
        Literal("{not json", datatype=RDF_JSON),
        Literal('{"a": 1}', datatype=RDF_JSON),
        Literal("{}"),
    ],
)
def test_what_is_not_a_packed_row_is_refused(literal: Literal) -> None:
    with pytest.raises(PackedRowError, match="not a packed row"):
        unpack_row(literal)


def test_ordered_rows_sort_by_value_not_by_their_text() -> None:
    # 14:51 at -08:00 is 22:51 UTC: after 20:00 UTC, though its text sorts first.
    late = Literal("2017-03-06T14:51:40-08:00", datatype=DATE)
    early = Literal("2017-03-06T20:00:00Z", datatype=DATE)
    rows = [
        {"row": pack_row({"date": late, "commit": NamedNode(EX + "c/1")})},
        {"row": pack_row({"date": early, "commit": NamedNode(EX + "c/2")})},
        {"row": pack_row({"commit": NamedNode(EX + "c/3")})},  # no date: unbound sorts first
    ]
    unpacked = unpack_rows(rows, "row", ("date", "commit"))
    assert [r["commit"].value.rsplit("/", 1)[1] for r in unpacked] == ["3", "2", "1"]
    numbers = [
        {"row": pack_row({"n": Literal(str(n), datatype=NamedNode(XSD + "integer"))})}
        for n in (10, 9, 100)
    ]
    assert [r["n"].value for r in unpack_rows(numbers, "row", ("n",))] == ["9", "10", "100"]


def test_a_row_keeps_the_columns_bound_beside_its_packed_one() -> None:
    rows = [{"shortcut": NamedNode(EX + "s"), "row": pack_row({"a": Literal("x")})}]
    assert unpack_rows(rows, "row") == [{"shortcut": NamedNode(EX + "s"), "a": Literal("x")}]
    with pytest.raises(PackedRowError, match="has no \\?row"):
        unpack_rows([{"a": Literal("x")}], "row")


def test_a_views_row_nodes_are_folded_into_literals() -> None:
    shortcut, row = NamedNode(EX + "shortcut"), BlankNode()
    has_row = NamedNode("https://w3id.org/ratified-rdf/ontology#changeRow")
    triples = [
        Triple(shortcut, has_row, row),
        Triple(row, NamedNode(COLUMN + "commit"), NamedNode(EX + "c/1")),
        Triple(row, NamedNode(COLUMN + "author"), Literal("Ada Pigeon")),
    ]
    [folded] = packed_rows("view_changes", [triples])
    assert folded.subject == shortcut and folded.predicate == has_row
    assert unpack_row(folded.object) == {
        "commit": NamedNode(EX + "c/1"),
        "author": Literal("Ada Pigeon"),
    }


def test_a_view_query_that_writes_a_row_wrongly_is_named() -> None:
    shortcut, row = NamedNode(EX + "shortcut"), BlankNode()
    has_row = NamedNode("https://w3id.org/ratified-rdf/ontology#changeRow")
    not_a_column = [Triple(row, NamedNode(EX + "author"), Literal("x"))]
    with pytest.raises(QueryError, match=r"view_changes\.rq writes a row with"):
        list(packed_rows("view_changes", [not_a_column]))
    twice = [
        Triple(shortcut, has_row, row),
        Triple(row, NamedNode(COLUMN + "a"), Literal("1")),
        Triple(row, NamedNode(COLUMN + "a"), Literal("2")),
    ]
    with pytest.raises(QueryError, match="a second"):
        list(packed_rows("view_changes", [twice]))
    with pytest.raises(QueryError, match="row with no columns"):
        list(packed_rows("view_changes", [[Triple(shortcut, has_row, row)]]))


def _folded_whole(triples: list[Triple]) -> set[Triple]:
    """The rows folded with the whole view in hand: the reference the stream must equal."""
    columns: dict[BlankNode, dict[str, object]] = {}
    for triple in triples:
        if isinstance(triple.subject, BlankNode):
            columns.setdefault(triple.subject, {})[triple.predicate.value.removeprefix(COLUMN)] = (
                triple.object
            )
    return {
        Triple(t.subject, t.predicate, pack_row(columns[t.object]))  # type: ignore[arg-type]
        if isinstance(t.object, BlankNode)
        else t
        for t in triples
        if not isinstance(t.subject, BlankNode)
    }


def test_a_construct_run_solution_by_solution_gives_what_oxigraph_constructs() -> None:
    # The view runs a CONSTRUCT as the SELECT of its WHERE and instantiates the template per
    # solution, to fold each row within its solution. Asked of Oxigraph itself: the same
    # triples as its own CONSTRUCT (rows folded alike), with two rows a solution (one
    # optional), a value copied onto a shared node each solution, a template blank node, a
    # constant, a literal where a subject goes (left out) and rows of equal columns.
    store = Store()
    for n in range(60):
        post = NamedNode(f"{EX}post/{n}")
        store.add(Quad(post, NamedNode(EX + "in"), NamedNode(f"{EX}thread/{n % 7}")))
        store.add(Quad(post, NamedNode(EX + "n"), Literal(str(n % 5))))
        if n % 3:
            store.add(Quad(post, NamedNode(EX + "title"), Literal(f"Post {n}")))
    query = f"""PREFIX ex: <{EX}>
PREFIX col: <{COLUMN}>
# A brace in a comment: {{
CONSTRUCT {{
  ?shortcut a ex:Shortcut ; ex:from ?post ; ex:to ?thread ; ex:row ?row ; ex:titled ?titled ;
    ex:note [ ex:says "pigeon {{ }}"@en ] .
  ?thread ex:threadOf ?post .
  ?n ex:isNot ?post .
  ?row col:post ?post ; col:n ?n .
  ?titled col:title ?title ; col:n ?n .
}}
WHERE {{
  ?post ex:in ?thread ; ex:n ?n .
  OPTIONAL {{ ?post ex:title ?title }}
  BIND(IRI(CONCAT(STR(?post), "/shortcut")) AS ?shortcut)
  BIND(BNODE() AS ?row)
  BIND(IF(BOUND(?title), BNODE(), ?nothing) AS ?titled)
}}"""
    template = template_of("view_pigeons", query)
    assert template.select.lstrip().startswith("PREFIX") and "CONSTRUCT" not in template.select
    solutions = [template.instances(tuple(s)) for s in store.query(template.select)]
    # A template's own blank node is fresh in each solution (the packer takes every blank
    # subject for a row, so the view queries have none: these are checked, then left out).
    notes = [o for triples in solutions for _, p, o in triples if p.value == EX + "note"]
    assert len(notes) == 60 and len(set(notes)) == 60
    assert all(isinstance(o, BlankNode) for o in notes)
    streamed = set(
        packed_rows("view_pigeons", [_without_notes([Triple(*t) for t in s]) for s in solutions])
    )
    constructed = list(store.query(query))
    assert streamed == _folded_whole(_without_notes(constructed))
    assert len({t for t in streamed if t.predicate.value == EX + "titled"}) == 40
    assert not any(t.predicate.value == EX + "isNot" for t in streamed)


def _without_notes(triples: list[Triple]) -> list[Triple]:
    """Triples with the template's blank nodes left out (fresh on every run: not comparable)."""
    return [t for t in triples if t.predicate.value not in (EX + "note", EX + "says")]


def test_the_packed_header_names_the_column_and_its_order() -> None:
    text = "# Answers: rows.\n# Packed: ?row, ordered by ?created ?post\nSELECT ?row {}"
    query = parse_query_file("q", text)
    assert query.packed == "row" and query.packed_order == ("created", "post")
    plain = parse_query_file("q", "# Answers: rows.\n# Packed: ?row\nSELECT ?row {}")
    assert plain.packed == "row" and plain.packed_order == ()
    assert parse_query_file("q", "# Answers: rows.\nSELECT ?x {}").packed is None
    with pytest.raises(QueryError, match="write its Packed line"):
        parse_query_file("q", "# Answers: rows.\n# Packed: row by date\nSELECT ?row {}")


def test_gathered_rows_are_one_list_each_row_once_in_order() -> None:
    late = pack_row({"date": Literal("2017-03-06T14:51:40-08:00", datatype=DATE)})
    early = pack_row({"date": Literal("2017-03-06T20:00:00Z", datatype=DATE)})
    gathered = pack_rows([late, early, late], ("date",))
    assert gathered.datatype == RDF_JSON
    assert gathered == pack_rows([early, late], ("date",))  # the same rows: the same literal
    assert [r["date"] for r in unpack_rows([{"rows": gathered}], "rows")] == [
        Literal("2017-03-06T20:00:00Z", datatype=DATE),
        Literal("2017-03-06T14:51:40-08:00", datatype=DATE),
    ]
    with pytest.raises(PackedRowError, match="holds 2 rows, not one"):
        unpack_row(gathered)


def test_lists_from_several_graphs_merge_each_row_once() -> None:
    one = pack_row({"post": NamedNode(EX + "post/1"), "n": Literal("1")})
    two = pack_row({"post": NamedNode(EX + "post/2"), "n": Literal("2")})
    mail, github = pack_rows([one]), pack_rows([one, two])
    rows = unpack_rows([{"rows": mail}, {"rows": github}], "rows", ("n",))
    assert [r["post"].value for r in rows] == [EX + "post/1", EX + "post/2"]


def test_a_views_properties_are_every_one_its_where_can_match() -> None:
    """Every property a WHERE names (its patterns, property paths, OPTIONAL and FILTER NOT
    EXISTS parts) is found, and none it does not name; a variable or negated property makes
    it any. The solutions over only those properties' triples are the solutions over all."""
    head = f"PREFIX ex: <{EX}>\nCONSTRUCT {{ ?a ex:out ?b }}\n"
    where = """WHERE {
  ?a ex:in/ex:next ?b .
  OPTIONAL { ?b ^ex:back ?c }
  OPTIONAL { ?b (ex:alt1|ex:alt2)* ?d }
  FILTER NOT EXISTS { ?a ex:hidden ?b }
  FILTER (EXISTS { ?a ex:seen [] })
}"""
    names = {"in", "next", "back", "alt1", "alt2", "hidden", "seen"}
    template = template_of("view_paths", head + where)
    assert template.properties == {EX + name for name in names}
    for any_property in ("?a ?p ?b", "?a !ex:in ?b", "?a ex:in/!(ex:x|^ex:y) ?b"):
        loose = template_of("view_any", head + "WHERE { ?a ex:in ?c . " + any_property + " }")
        assert loose.properties is None, any_property

    store = Store()
    for n in range(30):
        a, b, c = (NamedNode(f"{EX}{kind}/{n}") for kind in "abc")
        store.add(Quad(a, NamedNode(EX + "in"), c))
        store.add(Quad(c, NamedNode(EX + "next"), b))
        store.add(Quad(a, NamedNode(EX + "other"), b))  # read by no pattern
        if n % 2:
            store.add(Quad(a, NamedNode(EX + "seen"), Literal("x")))
        if n % 3 == 0:
            store.add(Quad(a, NamedNode(EX + "hidden"), b))
        if n % 5 == 0:
            store.add(Quad(c, NamedNode(EX + "back"), b))
            store.add(Quad(b, NamedNode(EX + "alt2"), c))
    only = Store()
    only.extend(q for q in store if q.predicate.value in (template.properties or ()))
    assert len(only) < len(store)
    whole = {tuple(s) for s in store.query(template.select)}
    assert whole and {tuple(s) for s in only.query(template.select)} == whole


def test_a_view_held_as_lines_gives_back_its_triples_term_for_term() -> None:
    # A view is held as N-Triples lines until its batches are made (smaller than terms); read
    # back, each triple is the one held: quotes, line breaks, backslashes, characters beyond
    # the BMP, control characters, language tags, datatypes and blank-node labels alike.
    from ratified_rdf.graph.views import _by_node, _chunked

    about = NamedNode("https://example.org/fictional/shortcut/1")
    says = NamedNode("https://example.org/fictional/says")
    values = ['a "quoted" .', "two\nlines\r\tand a tab", "back\\slash", "é€😀", "\x00\x1f\x7f", ""]
    triples = [Triple(about, says, Literal(value)) for value in values]
    triples += [
        Triple(BlankNode("row7"), says, Literal("über", language="de")),
        Triple(
            about,
            says,
            Literal("1", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        ),
        Triple(about, says, BlankNode("row8")),
        triples[0],  # held once
    ]
    by_node = _by_node(triples)
    assert list(by_node) == [str(about), "_:row7"]
    [batch] = _chunked("https://example.org/fictional/graph", "a view", by_node)
    assert list(batch.triples) == [t for t in triples[:-1] if t.subject == about] + [triples[6]]
    # Staged as it was held: the document is the one the writer would have written.
    assert batch.document == ntriples(batch.triples)
    assert by_node == {}  # let go of as the batch was made


def test_a_views_lists_are_gathered_as_it_is_held_each_row_once() -> None:
    # The change view's rows, gathered per section while the view is held: a triple that
    # comes twice counts once, a shortcut's end may come after its rows, and the lists
    # follow the order the shortcuts were first held in.
    from ratified_rdf.graph.views import VIEWS, Gathering, _by_node
    from ratified_rdf.graph.vocab import RR

    rows = next(v.gathers for v in VIEWS if v.query == "view_changes")
    assert rows is not None
    to = NamedNode(RR + "shortcutTo")
    row = NamedNode(rows.row)
    first, second, third = (NamedNode(f"https://example.org/fictional/cut/{n}") for n in "123")
    one, two = (NamedNode(f"https://example.org/fictional/section/{n}") for n in "12")

    def packed(commit: str) -> Literal:
        return pack_row({"commit": NamedNode(f"https://example.org/fictional/c/{commit}")})

    triples = [
        Triple(second, row, packed("b")),
        Triple(second, to, two),
        Triple(first, to, one),
        Triple(first, row, packed("a")),
        Triple(first, row, packed("a")),  # the same row again: held once
        Triple(third, row, packed("c")),
        Triple(third, to, two),  # its end after its row
    ]
    gathering = Gathering("view_changes", rows, "view-git")
    by_node = _by_node(triples, gathering)
    lists = gathering.lists(by_node)
    into = NamedNode(rows.into)
    # Each list on its section's own view node: the view adds nothing to the run's nodes.
    views = [NamedNode(f"{section.value}/view-git/changes") for section in (two, one)]
    rdf_type = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    node_view = NamedNode(RR + "NodeView")
    view_of = NamedNode(RR + "viewOf")
    assert [(t.subject, t.predicate) for t in lists] == [
        (view, predicate) for view in views for predicate in (rdf_type, view_of, into)
    ]
    assert [t.object for t in lists if t.predicate != into] == [node_view, two, node_view, one]
    assert [len(json.loads(t.object.value)) for t in lists if t.predicate == into] == [2, 1]
    assert not {t.subject for t in lists} & {one, two, first, second, third}

    nowhere = Gathering("view_changes", rows, "view-git")
    _by_node([Triple(first, row, packed("a"))], nowhere)
    with pytest.raises(QueryError, match="which leads nowhere"):
        nowhere.lists([str(first)])
    with pytest.raises(QueryError, match="that is no row"):
        _by_node([Triple(first, row, one)], Gathering("view_changes", rows, "view-git"))
