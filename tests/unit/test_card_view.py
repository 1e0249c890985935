"""The card view on the fictional Pigeon brain: derived with every run, gated, traceable to
the full graph, read by the cards, and never read where the reader may not read all of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Triple

from ratified_rdf import Brain
from ratified_rdf.graph.gate import GateRejected, ShaclGate
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.store import OxigraphStore, StoreError
from ratified_rdf.graph.views import is_view_graph, usable_views, view_levels
from ratified_rdf.queries.files import key_of, load_query, view_queries
from ratified_rdf.trust import Clearance
from tests.conftest import BACKENDS
from tests.pigeon import MANIFEST, build_pigeon, make_pigeon_repo
from tests.view_check import check_view

RR = "https://w3id.org/ratified-rdf/ontology#"
RUN = "https://w3id.org/ratified-rdf/id/tenant/default/graph/pigeon/r1/"


@pytest.fixture(scope="module")
def pigeon_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("git"))


@pytest.fixture(scope="module", params=BACKENDS)
def brain(pigeon_repo: Path, request: pytest.FixtureRequest) -> Brain:
    built, _report = build_pigeon(pigeon_repo, request.param, request)
    return built


def test_every_view_query_gives_the_rows_of_the_full_path(brain: Brain) -> None:
    graphs = brain.scope.read_graphs
    assert {g.rsplit("/", 1)[-1] for g in graphs if is_view_graph(g)} == {
        "view-spec",
        "view-git",
        "view-github",
        "view-mail",
    }
    check = check_view(brain.reading.store, graphs)
    assert check.differences == []
    assert check.broken_paths == []
    # The comparison was about something: the Pigeon RFC's sections have history, posts and
    # commits, and every revision section became something or vanished.
    assert set(check.rows) == {
        "revision_chain",
        "section_posts",
        "section_commits",
        "section_history",
        "section_became",
    }
    assert all(count > 0 for count in check.rows.values()), check.rows


def test_cards_read_the_view_and_name_the_full_path(brain: Brain) -> None:
    answer = brain.ask("history of RFC 9999 section 2.1")
    runs = {q.name: q for q in answer.queries}
    assert "view_section_history" in runs and "section_history" not in runs
    assert runs["view_section_history"].reproduces == "section_history"
    assert runs["view_section_history"].rows == sum(
        1 for r in answer.results if r.kind == "history_entry"
    )


def test_every_view_query_names_a_full_path_query_with_its_parameters() -> None:
    views = view_queries()
    assert set(views) == {
        "revision_chain",
        "section_became",
        "section_history",
        "section_posts",
        "section_commits",
    }
    for full_path, view in views.items():
        assert load_query(full_path).params == load_query(view).params
        assert load_query(full_path).reproduces is None


def test_the_became_view_finds_its_shortcut_by_one_key(brain: Brain) -> None:
    # Two patterns (document, number) cost a lookup for each match of the first, which
    # grows with the brain either way round; the key is one lookup. Every shortcut of a
    # numbered section carries the key the library binds for its document and number.
    query = load_query("view_section_became")
    assert dict(query.keys) == {"sectionKey": ("revision", "sectionNumber")}
    where = query.text.split("WHERE", 1)[1]
    assert "?shortcut rr:viewSectionKey ?sectionKey ;" in where
    assert "viewDocument" not in where and "viewSectionNumber" not in where
    rows = brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "SELECT ?document ?number ?key WHERE { ?s a rr:AlignmentShortcut ; "
        "rr:viewDocument ?document . OPTIONAL { ?s rr:viewSectionNumber ?number } "
        "OPTIONAL { ?s rr:viewSectionKey ?key } }"
    ).rows
    assert len(rows) > 20
    for row in rows:
        if row.get("number") is None:
            assert row.get("key") is None, row
        else:
            assert row["key"].value == key_of(row["document"], row["number"].value), row


def test_a_view_graph_is_at_the_highest_clearance_of_what_it_reads() -> None:
    levels = view_levels(
        {"spec": Clearance.PUBLIC, "git": Clearance.PUBLIC, "people": Clearance.CONFIDENTIAL}
    )
    assert levels["view-spec"] == Clearance.PUBLIC
    assert levels["view-git"] == Clearance.CONFIDENTIAL  # commits' authors come from people
    assert view_levels({"github": Clearance.INTERNAL})["view-github"] == Clearance.INTERNAL


def test_the_view_runs_wherever_it_gives_the_reader_the_full_paths_rows() -> None:
    run = [RUN + name for name in ("spec", "records", "git", "people", "github", "mail")]
    views = [RUN + name for name in ("view-spec", "view-git", "view-github", "view-mail")]
    everything = frozenset(view_queries())
    assert usable_views([*run, *views], [*run, *views]) == everything
    # Kept from the mail and its view: the view of GitHub gives what the full path gives this
    # reader, as a brain without mail would (nothing shows that something is withheld).
    no_mail = [g for g in [*run, *views] if not g.endswith("mail")]
    assert usable_views(no_mail, [*run, *views]) == everything
    # Git readable, but not its view (the people behind it are above the reader): the view
    # would lose the commits whose author the reader may not see, so the full path runs.
    no_view_git = [g for g in [*run, *views] if not g.endswith("view-git")]
    assert usable_views(no_view_git, [*run, *views]) == everything - {"section_commits"}
    # A run built before the view existed has none to read.
    assert usable_views(run, run) == frozenset()


def _pathless_shortcut() -> Batch:
    """A change shortcut that names no path: no start, no end, no section changed."""
    batch = Batch(RUN + "view-git", "a test")
    node = "https://example.org/shortcut/1"
    batch.add(node, "rdf:type", RR + "ChangeShortcut")
    date = NamedNode("http://www.w3.org/2001/XMLSchema#dateTime")
    batch.add(node, "rr:viewDate", Literal("2020-01-01T00:00:00Z", datatype=date))
    return batch


def test_the_gate_refuses_a_shortcut_that_names_no_path(brain: Brain) -> None:
    store = brain.reading.store
    with pytest.raises(GateRejected) as refused:
        ShaclGate().check(_pathless_shortcut(), store, [RUN + "view-git"])
    paths = {v.path for v in refused.value.violations}
    assert {RR + "shortcutFrom", RR + "shortcutTo", RR + "viewSection"} <= paths
    assert "starts from exactly one node of the full graph" in str(refused.value)


def test_the_view_lives_and_goes_with_its_run(pigeon_repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "store"
    first, _ = Brain.build(MANIFEST, source=str(pigeon_repo), path=folder)
    first.close()
    second, report = Brain.build(MANIFEST, source=str(pigeon_repo), path=folder)
    try:
        views = [g for g in second.scope.read_graphs if is_view_graph(g)]
        assert len(views) == 4 and all(f"/{report.run_id}/" in g for g in views)
        older = [
            g
            for run in second.scope.runs
            if not run.current
            for g in run.graphs
            if is_view_graph(g)
        ]
        assert len(older) == 4 and not set(older) & set(views)
        second.prune(1)
        assert not set(older) & set(second.reading.store.graphs())
    finally:
        second.close()


def test_the_view_is_derived_one_view_at_a_time(pigeon_repo: Path) -> None:
    """Each view's batches come before the next view's query runs, and each query asks for
    the staged run's store afresh (staging a view's batches may move the run to disk)."""
    from ratified_rdf.graph.mapping import RunContext
    from ratified_rdf.graph.views import VIEWS, view_batches

    built, report = Brain.build(MANIFEST, source=str(pigeon_repo))
    try:
        store = built.reading.store
        assert isinstance(store, OxigraphStore)
        run_graphs = [g for g in built.scope.read_graphs if f"/{report.run_id}/" in g]
        run = RunContext(built.reader.tenant, "pigeon", report.run_id)
        asked: list[int] = []

        def reading() -> OxigraphStore:
            asked.append(len(asked))
            return store

        batches = view_batches(reading, run, [g for g in run_graphs if not is_view_graph(g)])
        first = next(batches)
        assert len(asked) == 1 and first.source.startswith(f"card view: {VIEWS[0].query} ")
        rest = list(batches)
        derived = {b.source.rsplit(", part ", 1)[0] for b in [first, *rest]}
        assert len(asked) == len(derived) >= len(VIEWS)  # once per view of each source
        # The same view the build wrote, shortcut for shortcut.
        written = {t for g in run_graphs if is_view_graph(g) for t in store.triples([g])}
        assert {t for b in [first, *rest] for t in b.triples} == written
    finally:
        built.close()


@pytest.mark.parametrize("query", ["view_alignments", "view_changes"])
def test_a_partitioned_view_gives_the_whole_runs_solutions_each_once(
    pigeon_repo: Path, monkeypatch: pytest.MonkeyPatch, query: str
) -> None:
    """A partitioned view (the alignments, the commits' changes), derived a batch at a time
    from the run's spooled batches beside the shared ones (the manifest's, each RFC's, the
    people, every rr:alignsWith), gives exactly the solutions its query gives over the whole
    staged run: none lost, none twice, a shared batch's own nodes' included."""
    from collections import Counter

    from pyoxigraph import BlankNode

    from ratified_rdf import build as build_module
    from ratified_rdf.graph import discussion_mapping, views
    from ratified_rdf.graph.spool import Spool
    from ratified_rdf.queries.run import source_of
    from ratified_rdf.queries.template import construct_template

    spools: list[Spool] = []

    def kept(run: object) -> Spool:
        spool = views.view_spool(run)  # type: ignore[arg-type]
        spools.append(spool)
        return spool

    monkeypatch.setattr(build_module, "view_spool", kept)
    monkeypatch.setattr(Spool, "close", lambda self: None)  # read it again below
    monkeypatch.setattr(views, "PARTITION_QUADS", 1)  # every batch a group of its own
    monkeypatch.setattr(discussion_mapping, "COMMITS_PER_BATCH", 2)  # the Pigeon has few
    built, report = Brain.build(MANIFEST, source=str(pigeon_repo))
    try:
        (spool,) = spools
        view = next(v for v in views.VIEWS if v.query == query)
        assert view.partition_by is not None
        run = f"{RUN.rsplit('/r1/', 1)[0]}/{report.run_id}/"
        graphs = [run + name for name in view.inputs(view.over)]
        beside = set(view.beside)
        entries = [e for e in spool if e.graph in graphs]
        grouped = [e for e in entries if not e.shared and source_of(e.graph) not in beside]
        assert len(grouped) >= 2 and len(entries) > len(grouped)
        store = built.reading.store
        assert isinstance(store, OxigraphStore)
        template = construct_template(view.query)

        def plain(values: tuple[object, ...]) -> tuple[object, ...]:
            return tuple("row" if isinstance(v, BlankNode) else v for v in values)

        whole = Counter(plain(s) for s in views._solutions(view.query, template, store, graphs))
        assert len(whole) > 20

        def parted(spooled: Spool) -> Counter[tuple[object, ...]]:
            found = views.partitioned_solutions(view, template, spooled, graphs)
            return Counter(plain(s) for s in found)

        assert parted(spool) == whole
        # Each group's store is filled on a thread, one ahead unless what every group is
        # read beside is large: the same solutions either way, and a reader that stops part
        # way leaves none of the stores open.
        filled: list[OxigraphStore] = []
        fill = views._filled

        def recorded(documents: list[tuple[str, bytes]]) -> OxigraphStore:
            filled.append(fill(documents))
            return filled[-1]

        monkeypatch.setattr(views, "_filled", recorded)
        for beside in (0, 10**9):
            monkeypatch.setattr(views, "AHEAD_CONTEXT_QUADS", beside)
            assert parted(spool) == whole
            filled.clear()
            stopped = views.partitioned_solutions(view, template, spool, graphs)
            for _ in stopped:
                if len(filled) >= 3:
                    break
            # One ahead: the third store is filled while the second's solutions are read.
            stopped.close()
            assert len(filled) == 3
            for held in filled:
                with pytest.raises(StoreError, match="closed"):
                    len(held)
        monkeypatch.setattr(views, "_filled", fill)
        # A shared batch whose own nodes start solutions (an RFC aligned with the RFC that
        # obsoletes it, as RFC 8446 with 9846: the Pigeon has one RFC) gives them once, not
        # again with every group: the first grouped batch, spooled as shared.
        again = Spool(keeps=lambda batch: True)
        for entry in entries:
            marked = entry.shared or entry is grouped[0]
            stand_in = Batch(entry.graph, "spooled", [None] * entry.triples, shared=marked)  # type: ignore[list-item]
            again.add(stand_in, entry.document)
        try:
            assert parted(again) == whole
        finally:
            again.close()
    finally:
        built.close()


def test_a_views_beside_filter_keeps_only_triples_of_its_properties() -> None:
    """The lines a partitioned view reads beside its groups are chosen by their predicate
    alone: a section text that spells out a triple of that property, or a longer property
    name starting with it, is not read as one."""
    from pyoxigraph import BlankNode

    from ratified_rdf.graph.store import ntriples
    from ratified_rdf.graph.views import _only

    aligns = NamedNode(RR + "alignsWith")
    forged = f'x\n<https://e.example/s> <{RR}alignsWith> <https://e.example/o> .\n"'
    triples = [
        Triple(NamedNode("https://e.example/a"), NamedNode(RR + "text"), Literal(forged)),
        Triple(NamedNode("https://e.example/b"), aligns, NamedNode("https://e.example/c")),
        Triple(BlankNode("b1"), aligns, Literal("z")),
        Triple(NamedNode("https://e.example/d"), NamedNode(RR + "alignsWithX"), aligns),
    ]
    document = ntriples(triples)
    kept = _only(document, (RR + "alignsWith",))
    assert kept == ntriples([triples[1], triples[2]])
    assert _only(document, None) == document  # any property: all of it
    assert _only(document, ()) == b""


def test_a_full_temporary_folder_stops_the_build_with_a_sentence(
    pigeon_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spool of the batches the card view reads again cannot be written (no room under
    TMPDIR): the build stops with an error that says where and what to do, and writes
    nothing."""
    import errno
    import tempfile
    from types import SimpleNamespace

    from ratified_rdf import build as build_module
    from ratified_rdf._errors import StoreError
    from ratified_rdf.graph import spool

    class Full:
        def __init__(self, **options: object) -> None:
            self.file = tempfile.TemporaryFile()  # noqa: SIM115

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, "No space left on device")

        def __getattr__(self, name: str) -> object:
            return getattr(self.file, name)

    # The spool's own temporary files only: the build's other files are written as ever.
    monkeypatch.setattr(spool, "tempfile", SimpleNamespace(TemporaryFile=Full))
    store = OxigraphStore(tmp_path / "db")
    try:
        with pytest.raises(StoreError, match=r"for the card view: No space left on device\. "):
            build_module.build(MANIFEST, source=str(pigeon_repo), store=store)
        assert store.graphs() == []
    finally:
        store.close()


def test_a_batch_made_from_its_lines_counts_them_and_reads_them_back_as_terms() -> None:
    """A view batch holds its triples as N-Triples lines: it counts them without parsing
    them, gives them back as the terms they were written from, and takes no triple more."""
    from pyoxigraph import BlankNode

    from ratified_rdf.graph.mapping import DocumentTriples
    from ratified_rdf.graph.store import ntriples

    ex = "https://example.org/fictional/"
    triples = [
        Triple(NamedNode(ex + "pigeon"), NamedNode(ex + "says"), Literal('coo "twice"\nthen')),
        Triple(NamedNode(ex + "pigeon"), NamedNode(ex + "nests"), NamedNode(ex + "é-loft")),
        Triple(BlankNode("egg"), NamedNode(ex + "in"), NamedNode(ex + "é-loft")),
    ]
    held = DocumentTriples(ntriples(triples))
    assert len(held) == 3 and held._parsed is None
    assert list(held) == triples and held[1] == triples[1] and held[1:] == triples[1:]
    batch = Batch(ex + "graph/run/view-spec", "card view: fictional", held)
    with pytest.raises(TypeError, match="takes no more triples"):
        batch.add(ex + "pigeon", "rdfs:label", Literal("a pigeon"))
