"""The card view: shortcut facts derived from a staged run, written with it, read by the cards.

A card walks the full, normalised graph: a post cites a section of the revision current when it
was written, that section aligns with a final RFC section through an alignment record, and the
post sits in a thread. The view folds each such path into one node (an ``rr:CardShortcut``)
carrying ``prov:wasDerivedFrom`` the nodes of the path, the keys a card finds it by, and the
row the card reads, packed as one ``rdf:JSON`` literal (:mod:`ratified_rdf.queries.packed`),
so a card reads one triple per row instead of walking the path.

A view's CONSTRUCT writes each row as a blank node whose properties are its columns, in the
:data:`COLUMN` namespace (``?row col:similarity ?similarity``), linked from its shortcut by
the row's property (``?shortcut rr:historyRow ?row``, ``?row`` a ``BNODE()`` of the solution);
:func:`packed_rows` folds each such node into its literal before the batch is gated, so
column triples never reach a store.

Each view is a hand-written CONSTRUCT in ``sparql/view_*.rq`` run over the staged run before it
is validated; its shortcuts go into a graph of their own (``view-spec``, ``view-git``, one
``view-<source>`` per source of posts), at the highest clearance of the graphs it read, and
through the gate like any batch. The view is rebuilt with every run and lives in that run's
graphs, so it never outlives it. Every view query that reads it names, in its header, the
full-path query that reproduces its rows (``# Reproduces:``); the cards use the view wherever
it gives the reader the full path's rows (:func:`usable_views`), and the full path otherwise.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from pyoxigraph import BlankNode, Literal, NamedNode, QuerySolutions, Triple

from ratified_rdf.graph.mapping import Batch, DocumentTriples, RunContext
from ratified_rdf.graph.spool import Spool
from ratified_rdf.graph.store import OxigraphStore, Term
from ratified_rdf.graph.vocab import RR, term
from ratified_rdf.queries.files import QueryError, load_query, view_queries
from ratified_rdf.queries.packed import pack_row, pack_rows
from ratified_rdf.queries.run import POSTS, read_sources, reads_graph, source_of
from ratified_rdf.trust import Clearance

if TYPE_CHECKING:
    from ratified_rdf.queries.template import ConstructTemplate, Statement

VIEW = "view"
"""The source name of every view graph (``…/<run>/view-spec`` holds source ``view``)."""

COLUMN = "https://w3id.org/ratified-rdf/ontology/column#"
"""The namespace of a row's columns in a view's CONSTRUCT (``col:``): folded into the row's
literal by :func:`packed_rows`, never stored."""

SHORTCUTS_PER_BATCH = 2_000
"""Shortcut nodes per gated batch: batches are what the gate's workers share out."""


@dataclass(frozen=True)
class RowList:
    """A card's list, gathered: every row of ``row`` (``rr:changeRow``) on the shortcuts to
    one section, each once, in one ``rdf:JSON`` array (``rr:changeRows``) on that section's
    view node (:func:`view_node_iri`), ordered as ``read_by``, the view query that reads it,
    orders them. A card then reads one triple for its whole list, where it read one per
    row."""

    row: str
    """The rows' property on the shortcuts (an IRI)."""
    into: str
    """The list's property on the section the shortcuts lead to (an IRI)."""
    read_by: str
    """The view query that reads the list (its ``# Packed:`` line gives the order)."""
    part: str
    """What the list's view node is called after the section and view graph (``changes``)."""


@dataclass(frozen=True)
class CardView:
    """One view: the CONSTRUCT that derives it and the source it is a view of."""

    query: str
    """The CONSTRUCT's name, ``sparql/<query>.rq``; its ``# Reads:`` says what it reads."""
    over: str
    """The source whose facts it shortcuts, naming its graph ``view-<over>``; ``posts`` for
    every source of posts, each in a graph of its own (its clearance is that source's)."""
    gathers: RowList | None = None
    """The rows it gathers into one list per section, if any."""
    partition_by: str | None = None
    """The property (an IRI) of the node each of its solutions starts from, when every
    triple a solution reads is in that node's own batch, in a shared batch
    (:attr:`~ratified_rdf.graph.mapping.Batch.shared`) or in what :attr:`beside` names: the
    view is then derived a group of batches at a time, from the run's batches as staged
    (:class:`~ratified_rdf.graph.spool.Spool`), each group beside the rest in a store in
    memory, never from the staged run (:func:`partitioned_solutions`)."""
    beside: tuple[str, ...] = ()
    """Sources (by name) whose batches a partitioned view reads beside every group, as it
    reads the shared batches. (A commit's changed section may be any revision's, and what
    aligns with it any other's.) Of every batch, a partitioned view reads only the triples
    of the properties its WHERE names (:attr:`~ratified_rdf.queries.template.
    ConstructTemplate.properties`): a section's text, the bulk of a revision, is never
    loaded to be passed over."""

    def inputs(self, source: str) -> tuple[str, ...]:
        """The sources the view of ``source`` is derived from."""
        reads = load_query(self.query).reads
        return tuple(source if name == POSTS else name for name in reads)


VIEWS: tuple[CardView, ...] = (
    # An alignment reads its own revision's batch, the final section's (an RFC's) and the
    # manifest's: mapping.spec_batches puts every other fact it reads there.
    CardView("view_alignments", "spec", partition_by=RR + "alignedSection"),
    CardView("view_chains", "spec"),
    CardView(
        "view_citations",
        POSTS,
        RowList(RR + "citationRow", RR + "citationRows", "view_section_posts", "citations"),
    ),
    # A commit reads its own batch of commits, the people and, of the spec, every
    # rr:alignsWith, and a byline's name or date, should a commit lead there.
    CardView(
        "view_changes",
        "git",
        RowList(RR + "changeRow", RR + "changeRows", "view_section_commits", "changes"),
        partition_by=RR + "changedSection",
        beside=("people", "spec"),
    ),
)
"""The card view's parts, in the order they are written."""


def _sources_of(view: CardView) -> list[str]:
    if view.over != POSTS:
        return [view.over]
    from ratified_rdf.sources.base import post_sources  # the registry imports the mappings

    return sorted(post_sources())


def view_graph_name(source: str) -> str:
    """The name of the view graph of ``source`` in a run (``view-github``)."""
    return f"{VIEW}-{source}"


def view_node_iri(node: str, graph_name: str, part: str) -> str:
    """The IRI of the node holding what the view graph ``graph_name`` (``view-git``) says
    about ``node``, a node of the run, under ``part`` (``changes``): an ``rr:NodeView``,
    ``rr:viewOf`` it. The view adds no triple to a node of the run: were a section's list on
    the section, its view batch would touch the section, which the gate then validates with
    its whole description from the run, and the run's batches only once the view is made.
    One node per view graph and part, so no two batches add to it (``view_alignments.rq``
    and ``view_chains.rq`` make theirs the same way)."""
    return f"{node}/{graph_name}/{part}"


def view_levels(levels: Mapping[str, Clearance]) -> dict[str, Clearance]:
    """The clearance of every view graph a run may write: the highest of the graphs it is
    derived from, so a reader who may read a view graph may read every graph behind it."""
    result: dict[str, Clearance] = {}
    for view in VIEWS:
        for source in _sources_of(view):
            inputs = [levels.get(name, Clearance.PUBLIC) for name in view.inputs(source)]
            result[view_graph_name(source)] = max(inputs, key=lambda level: level.rank)
    return result


def view_batches(
    reading: Callable[[], OxigraphStore],
    run: RunContext,
    written: Iterable[str],
    spool: Spool | None = None,
) -> Iterator[Batch]:
    """The card view of a staged run, as gated batches: each view of each source the run
    wrote, derived from the staged graphs it reads (those the run wrote) in the store
    ``reading()`` gives when that view is derived; a view with a :attr:`~CardView.
    partition_by` is derived from ``spool`` instead, when given (:func:`view_spool` makes
    one for a run, to be filled as it is staged).

    One view is held at a time, packed: the CONSTRUCT's template is instantiated solution
    by solution (:func:`construct_template`) and each solution's rows folded into their
    literals at once (:func:`packed_rows`), so a row's columns are never held as terms
    beyond its own solution, and each packed triple is held once, grouped by the node it is
    about (at ×100 the unpacked rows alone took several gigabytes). Its batches
    are yielded once its query has run, to be staged before the next runs. Staging them may
    move the run to another store (from memory to disk), which is why the store is asked
    for afresh for each view."""
    # rdflib parses the templates: imported by a build, which derives the view, never by a
    # reader, who only asks which views it may use (usable_views).
    from ratified_rdf.queries.template import construct_template

    graphs = set(written)
    for view in VIEWS:
        for source in _sources_of(view):
            if run.graph(source) not in graphs:
                continue
            reads = [run.graph(name) for name in view.inputs(source)]
            readable = [g for g in reads if g in graphs]
            template = construct_template(view.query)
            if view.partition_by is not None and spool is not None:
                found = partitioned_solutions(view, template, spool, readable)
            else:
                found = _solutions(view.query, template, reading(), readable)
            graph = run.graph(view_graph_name(source))
            solutions = (template.instances(values) for values in found)
            gathering = (
                None
                if view.gathers is None
                else Gathering(view.query, view.gathers, view_graph_name(source))
            )
            by_node = _by_node(packed_rows(view.query, solutions), gathering)
            if gathering is not None:
                for triple in gathering.lists(by_node):
                    by_node.setdefault(str(triple.subject), {})[_line(triple)] = None
                del gathering
            yield from _chunked(graph, f"{view.query} of {source}", by_node)
            del by_node


PARTITION_QUADS = 250_000
"""About how many quads of a run's batches a partitioned view reads at a time, beside the
shared batches (in Oxigraph's memory store, some 700 bytes a quad)."""

AHEAD_CONTEXT_QUADS = PARTITION_QUADS
"""A partitioned view fills its next group's store while it reads the last only when what
every group is read beside holds at most this many quads (each store holds it)."""

PARTITION_GRAPH = "https://w3id.org/ratified-rdf/id/partition"
"""The graph a partitioned view's group of batches is read from, in its store in memory."""


def view_spool(run: RunContext) -> Spool:
    """A spool for ``run`` that keeps the batches of the graphs its partitioned views read."""
    graphs = {
        run.graph(name)
        for view in VIEWS
        if view.partition_by is not None
        for source in _sources_of(view)
        for name in view.inputs(source)
    }
    return Spool(keeps=lambda batch: batch.graph in graphs)


def _solutions(
    query: str, template: ConstructTemplate, store: OxigraphStore, graphs: Sequence[str]
) -> Iterator[tuple[Term | Triple | None, ...]]:
    """The values of each solution of ``template``'s WHERE (``query``'s) over ``graphs`` of
    ``store``, in the order of its variables."""
    result = store.evaluate(template.select, graphs)
    if (
        not isinstance(result, QuerySolutions)
        or tuple(v.value for v in result.variables) != template.variables
    ):
        raise QueryError(f"{query}.rq's WHERE did not run as the SELECT asked.")
    for solution in result:
        yield tuple(solution)


def partitioned_solutions(
    view: CardView, template: ConstructTemplate, spool: Spool, graphs: Sequence[str]
) -> Iterator[tuple[Term | Triple | None, ...]]:
    """The solutions of ``view``'s WHERE (``template``) over the batches of ``graphs`` in
    ``spool``, a group of batches at a time, for a view with a :attr:`CardView.partition_by`,
    the property of the node each solution starts from.

    Of every batch, only the triples of the properties the WHERE names are read
    (:attr:`~ratified_rdf.queries.template.ConstructTemplate.properties`): it matches no
    other. The batches every group is read beside (the shared ones, and those of the sources
    the view reads :attr:`~CardView.beside` its groups) are read into a store in memory, and
    their own solutions given first. Their starting nodes are then removed, and every other
    batch is read beside the rest, about :data:`PARTITION_QUADS` quads at a time, each group
    in a store of its own: each group's solutions are its own nodes', each once. (Oxigraph's
    store in memory keeps what is removed from it, so one store reused for every group grew
    by the whole run: 5 GB at ×100.) They are the solutions over the whole run as long as a
    solution reads nothing outside its starting node's batch and what is read beside it,
    which the mapping keeps (tests/unit/test_card_view.py and the view checks on the real
    brains compare the two)."""
    assert view.partition_by is not None
    wanted = set(graphs)
    properties = tuple(sorted(template.properties)) if template.properties is not None else None
    store = OxigraphStore()
    try:
        store.load_documents(
            (entry.graph, _only(entry.document, properties))
            for entry in spool
            if entry.graph in wanted and (entry.shared or source_of(entry.graph) in view.beside)
        )
        yield from _solutions(view.query, template, store, graphs)
        store.remove_subjects_with(view.partition_by)
        context = [(graph, store.dump_graph(graph)) for graph in store.graphs()]
    finally:
        store.close()
    reading = [*graphs, PARTITION_GRAPH]
    groups = _groups(view, spool, wanted, properties)
    # Each group's store is filled on a thread of its own while the last group's solutions
    # are read and packed in this one: Oxigraph's loader lets go of the interpreter lock, so
    # the two share the machine's cores. Two groups' stores are then held, each with the
    # context: where the context is the larger part of a store (the change view's every
    # rr:alignsWith), the groups are filled one at a time instead, to hold one.
    beside = sum(document.count(b"\n") for _, document in context)
    ahead = 2 if beside <= AHEAD_CONTEXT_QUADS else 1
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ratified-view") as filler:
        filling: list[Future[OxigraphStore]] = []
        try:
            for group in groups:
                filling.append(filler.submit(_filled, [*context, *group]))
                if len(filling) == ahead:
                    ready = filling.pop(0).result()
                    yield from _group_solutions(view.query, template, ready, reading)
            while filling:
                ready = filling.pop(0).result()
                yield from _group_solutions(view.query, template, ready, reading)
        finally:
            for left in filling:  # unread: an error, or the caller stopped reading
                with contextlib.suppress(Exception):
                    left.result().close()


def _groups(
    view: CardView, spool: Spool, wanted: set[str], properties: tuple[str, ...] | None
) -> Iterator[list[tuple[str, bytes]]]:
    """The batches of ``wanted`` graphs in ``spool`` that a partitioned view reads in groups
    (neither shared nor read beside every group), each cut to ``properties``, in groups of
    about :data:`PARTITION_QUADS` quads, as (graph, N-Triples) in :data:`PARTITION_GRAPH`."""
    group: list[tuple[str, bytes]] = []
    quads = 0
    for entry in spool:
        if entry.shared or entry.graph not in wanted or source_of(entry.graph) in view.beside:
            continue
        document = _only(entry.document, properties)
        group.append((PARTITION_GRAPH, document))
        quads += document.count(b"\n")
        if quads >= PARTITION_QUADS:
            yield group
            group, quads = [], 0
    if group:
        yield group


def _filled(documents: Sequence[tuple[str, bytes]]) -> OxigraphStore:
    """A store in memory holding ``documents`` (graph, N-Triples)."""
    store = OxigraphStore()
    try:
        store.load_documents(documents)
    except BaseException:
        store.close()
        raise
    return store


def _group_solutions(
    query: str, template: ConstructTemplate, store: OxigraphStore, graphs: Sequence[str]
) -> Iterator[tuple[Term | Triple | None, ...]]:
    """The solutions of ``template``'s WHERE over ``graphs`` of ``store`` (a group's, filled
    by :func:`_filled`), which is let go of once they are read."""
    try:
        yield from _solutions(query, template, store, graphs)
    finally:
        store.close()


def _only(document: bytes, properties: tuple[str, ...] | None) -> bytes:
    """The lines of ``document`` (N-Triples, one triple a line, as Oxigraph writes them)
    whose predicate is one of ``properties``; all of it when ``properties`` is None."""
    if properties is None:
        return document
    if not properties:
        return b""
    return b"".join(_lines_of(properties).findall(document))


@lru_cache(maxsize=16)
def _lines_of(properties: tuple[str, ...]) -> re.Pattern[bytes]:
    """A line whose predicate (the second term: a subject is an IRI or a blank node, neither
    holding a space) is one of ``properties``."""
    names = b"|".join(re.escape(f"<{p}>".encode()) for p in properties)
    return re.compile(rb"^(?:<[^>]*>|_:\S+) (?:" + names + rb") [^\n]*\n", re.MULTILINE)


def packed_rows(query: str, solutions: Iterable[Sequence[Statement | Triple]]) -> Iterator[Triple]:
    """A view's triples, one solution's at a time, with every row (a blank node of
    :data:`COLUMN` properties) folded into one ``rdf:JSON`` literal in its place; ``query``
    names the CONSTRUCT in errors.

    A row is a ``BNODE()`` of one solution, so all of it is in that solution's triples: it
    is folded there, and nothing of it is held once the next solution comes."""
    for triples in solutions:
        columns: dict[BlankNode, dict[str, Term]] = {}
        kept: list[Statement] = []
        for subject, predicate, obj in triples:
            if not isinstance(subject, BlankNode):
                kept.append((subject, predicate, obj))
                continue
            name = predicate.value.removeprefix(COLUMN)
            row = columns.setdefault(subject, {})
            if name == predicate.value or name in row:
                raise QueryError(
                    f"{query}.rq writes a row with {'a second ' if name in row else ''}"
                    f"{predicate}: a row's properties are its columns, one each, in {COLUMN}."
                )
            if isinstance(obj, Triple):
                raise QueryError(f"{query}.rq writes a triple term as a column; a row holds terms.")
            row[name] = obj
        for subject, predicate, obj in kept:
            if isinstance(obj, BlankNode):
                found = columns.get(obj)
                if found is None:
                    raise QueryError(f"{query}.rq links {predicate} to a row with no columns.")
                yield Triple(subject, predicate, pack_row(found))
            else:
                yield Triple(subject, predicate, obj)


def _by_node(
    triples: Iterable[Triple], gathering: Gathering | None = None
) -> dict[str, dict[bytes, None]]:
    """Each distinct triple once, under the node it is about, nodes in the order they first
    came (a node's copied values come once per shortcut to it); each held as its N-Triples
    line (:func:`_line`), a quarter smaller than the term: a view is held whole until its
    batches are made, and at ×100 the largest is millions of triples. ``gathering`` sees
    each distinct triple as it comes, once."""
    by_node: dict[str, dict[bytes, None]] = {}
    for triple in triples:
        node = str(triple.subject)
        lines = by_node.get(node)
        if lines is None:
            lines = by_node[node] = {}
        line = _line(triple)
        if line in lines:
            continue
        lines[line] = None
        if gathering is not None:
            gathering.see(node, triple)
    return by_node


def _line(triple: Triple) -> bytes:
    """``triple`` as an N-Triples line, without its closing `` .`` (a batch's
    :class:`~ratified_rdf.graph.mapping.DocumentTriples` reads it back, if anything asks)."""
    return str(triple).encode()


def _document(lines: Iterable[bytes]) -> bytes:
    """``lines`` written by :func:`_line` as one N-Triples document, as Oxigraph writes it."""
    return b"".join(line + b" .\n" for line in lines)


class Gathering:
    """The lists a view's :class:`RowList` gathers: one per section the shortcuts lead to
    (``rr:shortcutTo``), on that section's view node, shown each of the view's distinct
    triples once, as it is held (:func:`_by_node`), so the view is not read again to gather
    them. A shortcut's end may come before or after its rows."""

    def __init__(self, query: str, rows: RowList, graph_name: str) -> None:
        """``query`` names the view's CONSTRUCT in errors; ``rows`` is what it gathers, into
        the view graph ``graph_name`` (``view-git``)."""
        self.query = query
        self.rows = rows
        self.graph_name = graph_name
        self._ends: dict[str, NamedNode] = {}
        self._rows: dict[str, list[Literal]] = {}

    def see(self, node: str, triple: Triple) -> None:
        """Keep ``triple`` (about ``node``, its subject as text) if it is a shortcut's end
        or one of its rows."""
        predicate = triple.predicate.value
        if predicate == _SHORTCUT_TO and isinstance(triple.object, NamedNode):
            self._ends[node] = triple.object
        elif predicate == self.rows.row:
            if not isinstance(triple.object, Literal):
                raise QueryError(f"{self.query}.rq writes a row on {node} that is no row.")
            self._rows.setdefault(node, []).append(triple.object)

    def lists(self, nodes: Iterable[str]) -> list[Triple]:
        """One list per end, of every row of the shortcuts leading there, on the end's view
        node (with its type and ``rr:viewOf``); ends in the order of ``nodes`` (the view's,
        as held), the first of their shortcuts with rows."""
        found: dict[NamedNode, list[Literal]] = {}
        for shortcut in nodes:
            literals = self._rows.get(shortcut)
            if literals is None:
                continue
            end = self._ends.get(shortcut)
            if end is None:
                raise QueryError(
                    f"{self.query}.rq writes a row on {shortcut}, which leads nowhere."
                )
            found.setdefault(end, []).extend(literals)
        order = load_query(self.rows.read_by).packed_order
        into = NamedNode(self.rows.into)
        triples: list[Triple] = []
        for end, literals in found.items():
            view = NamedNode(view_node_iri(end.value, self.graph_name, self.rows.part))
            triples.append(Triple(view, term("rdf:type"), term("rr:NodeView")))
            triples.append(Triple(view, term("rr:viewOf"), end))
            triples.append(Triple(view, into, pack_rows(literals, order)))
        return triples


_SHORTCUT_TO = RR + "shortcutTo"


def _chunked(graph: str, label: str, by_node: dict[str, dict[bytes, None]]) -> Iterator[Batch]:
    """The view's triples grouped by shortcut, :data:`SHORTCUTS_PER_BATCH` to a batch, in the
    order the shortcuts first came (a shortcut's triples stay in one batch); each group is
    let go of once its batch is made."""
    nodes = list(by_node)
    for start in range(0, len(nodes), SHORTCUTS_PER_BATCH):
        part = nodes[start : start + SHORTCUTS_PER_BATCH]
        number = start // SHORTCUTS_PER_BATCH + 1
        document = _document(line for node in part for line in by_node.pop(node))
        yield Batch(
            graph,
            f"card view: {label}, part {number}",
            DocumentTriples(document),
            document=document,
        )


def usable_views(read: Sequence[str], run_graphs: Iterable[str]) -> frozenset[str]:
    """The full-path queries (``section_posts`` …) whose view query gives a reader of ``read``
    (graphs of one run, which wrote ``run_graphs``) the same rows, and so runs instead.

    A view graph is at the highest clearance of what it was derived from, so a reader may read
    a source's graph without its view graph (commits, but not the people who wrote them): the
    view would then lose rows the full path gives, and the full path runs. A view graph whose
    source the reader may not read either stands for nothing the reader could see, so it does
    not count, and the view still runs (a reader kept from the mail reads the view of GitHub
    as a brain without mail would: nothing shows that something is withheld)."""
    readable = set(read)
    written = list(run_graphs)
    usable: set[str] = set()
    for full_path, view in view_queries().items():
        sources = read_sources(load_query(view).reads)
        graphs = [g for g in written if reads_graph(g, sources)]
        if graphs and all(g in readable or _viewed(g) not in readable for g in graphs):
            usable.add(full_path)
    return frozenset(usable)


def _viewed(graph: str) -> str:
    """The graph a view graph is the view of, in its run (``…/view-git`` → ``…/git``)."""
    run, name = graph.rsplit("/", 1)
    return f"{run}/{name.removeprefix(VIEW + '-')}"


def is_view_graph(graph: str) -> bool:
    """Whether ``graph`` is a card view graph."""
    return source_of(graph) == VIEW
