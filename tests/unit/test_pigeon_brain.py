"""End to end on a fictional repository: build, ask, query, validate, dump, and the CLI."""

from __future__ import annotations

import io
import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from pyoxigraph import RdfFormat
from pyshacl import validate

from ratified_rdf import Brain, Verdict
from ratified_rdf.answers.models import HistoryEntry, SectionDiff, SectionFate, SectionText
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.surfaces.cli import main, render_card
from ratified_rdf.trust import Reader
from tests.conftest import BACKENDS
from tests.pigeon import MANIFEST, build_pigeon, make_pigeon_repo

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pigeon_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("git"))


@pytest.fixture(scope="module", params=BACKENDS)
def brain(pigeon_repo: Path, request: pytest.FixtureRequest) -> Brain:
    """The brain in each store (see ``conftest.backend``), built once for the tests that only
    read it: every test of this fixture runs on the embedded store and on an Oxigraph server."""
    built, _report = build_pigeon(pigeon_repo, request.param, request)
    return built


@pytest.fixture()
def fresh_brain(pigeon_repo: Path, backend: str, request: pytest.FixtureRequest) -> Brain:
    """A brain of the test's own in each store, for a test that writes to it or that counts
    what the brain has read before."""
    built, _report = build_pigeon(pigeon_repo, backend, request)
    return built


def test_build_reports_what_it_read(pigeon_repo: Path) -> None:
    _brain, report = Brain.build(MANIFEST, source=str(pigeon_repo))
    assert (report.brain_id, report.revisions, report.rfcs) == ("pigeon", 3, 1)
    # Every text has seven sections; the RFC's own are not aligned.
    assert report.sections == 7 * 4
    assert report.alignments == 7 * 3
    assert report.triples > 300


def test_renumbered_section_became_its_rfc_section(brain: Brain) -> None:
    answer = brain.ask("what did section 2.1 of draft-example-pigeon-00 become in the RFC?")
    assert answer.verdict is Verdict.ANSWERED
    fate = answer.results[0]
    assert isinstance(fate, SectionFate)
    assert (fate.heading, fate.final_section_number, fate.final_heading) == (
        "Take-off",
        "3.1",
        "Take-off",
    )
    assert fate.rule == "same-heading"
    assert fate.still_changing is True and fate.similarity is not None and fate.similarity < 0.98
    labels = [e.label for e in answer.evidence if e.role in {"revision", "rfc"}]
    assert labels == [
        "draft-example-pigeon-00",
        "draft-example-pigeon-01",
        "draft-example-pigeon-02",
        "RFC 9999",
    ]
    urls = {e.role: e.url for e in answer.evidence}
    assert (
        urls["section"]
        == "https://datatracker.ietf.org/doc/html/draft-example-pigeon-00#section-2.1"
    )
    assert urls["rfc-section"] == "https://www.rfc-editor.org/rfc/rfc9999#section-3.1"
    # Read from the card view, which names the full-path query that gives the same rows.
    assert [q.name for q in answer.queries] == ["view_section_became", "view_revision_chain"]
    assert answer.queries[0].reproduces == "section_became"
    became = answer.queries[0]
    assert became.params == {
        "revision": "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon/00",
        "sectionNumber": "2.1",
    }
    assert '"2.1"' in became.sparql and became.rows == 1
    # The SPARQL the card shows is the query that ran: run again, it finds the rows it counted.
    assert len(brain.query(became.sparql).rows) == became.rows


def test_a_section_numbered_as_the_rfc_numbers_it_is_the_rfcs(brain: Brain) -> None:
    """RFC 9999 §3 Flight Rules was §2 in draft-example-pigeon-00, whose own §3 was Security
    Considerations: a question numbering the section as the RFC does means Flight Rules."""
    diff = brain.ask(
        "what changed in RFC 9999 section 3 between draft-example-pigeon-00 and "
        "draft-example-pigeon-01?"
    )
    assert diff.intent == "section_diff" and diff.verdict is Verdict.ANSWERED, diff.summary
    pair = diff.results[0]
    assert isinstance(pair, SectionDiff)
    assert (pair.older_number, pair.newer_number, pair.heading) == ("2", "3", "Flight Rules")
    assert "followed back" in (diff.note or "")
    # Without the RFC, the number is the revisions' own: -00's §3 is Security Considerations.
    literal = brain.ask(
        "what changed in section 3 between draft-example-pigeon-00 and draft-example-pigeon-01?"
    ).results[0]
    assert isinstance(literal, SectionDiff) and literal.heading == "Security Considerations"
    at = brain.ask("in draft-example-pigeon-00, what was RFC 9999 section 3?")
    assert at.intent == "section_at" and at.verdict is Verdict.ANSWERED, at.summary
    text = at.results[0]
    assert isinstance(text, SectionText)
    assert (text.document, text.section_number, text.heading) == (
        "draft-example-pigeon-00",
        "2",
        "Flight Rules",
    )


def test_renamed_section_is_found_by_anchor(brain: Brain) -> None:
    fate = brain.section_became("draft-example-pigeon", "00", "2.2").results[0]
    assert isinstance(fate, SectionFate)
    assert (fate.heading, fate.final_heading, fate.rule) == (
        "Homing Signal",
        "Loft Beacon",
        "same-anchor",
    )


def test_vanished_section_has_no_counterpart(brain: Brain) -> None:
    answer = brain.section_became("draft-example-pigeon", "00", "2.3")
    fate = answer.results[0]
    assert isinstance(fate, SectionFate)
    assert fate.final_section_number is None and fate.rule == "no-counterpart"
    assert "no counterpart in RFC 9999" in answer.summary


def test_history_lists_every_revision_in_order(brain: Brain) -> None:
    answer = brain.ask("history of RFC 9999 section 4")
    assert answer.verdict is Verdict.ANSWERED
    entries = [r for r in answer.results if isinstance(r, HistoryEntry)]
    assert [(e.document, e.section_number, e.still_changing) for e in entries] == [
        ("draft-example-pigeon-00", "3", True),
        ("draft-example-pigeon-01", "4", True),
        ("draft-example-pigeon-02", "4", True),
    ]
    assert "Security Considerations" in answer.summary


def test_out_of_scope_question_lists_what_the_graph_holds(brain: Brain) -> None:
    answer = brain.ask("how did the IESG vote on draft-example-pigeon?")
    assert answer.verdict is Verdict.UNKNOWN
    assert answer.summary.startswith("The graph doesn't know")
    assert "draft-example-pigeon" in answer.summary and "RFC 9999" in answer.summary
    assert {q.name for q in answer.queries} == {"holdings", "documents"}


def test_what_the_graph_holds_is_read_once_per_set_of_graphs(fresh_brain: Brain) -> None:
    brain = fresh_brain
    # Counting everything grows with the graph; a run's graphs never change once written, so
    # the next "doesn't know" reuses the rows, and says so in its "how this was computed".
    question = "how did the IESG vote on draft-example-pigeon?"
    first = brain.ask(question)
    again = brain.ask(question)
    # Counted afresh; "documents" may come from the run the gazetteer made of it, which a
    # store folder keeps (answers/saved_rows.py), and then says so.
    assert [q.name for q in first.queries] == ["holdings", "documents"]
    assert not first.queries[0].reused
    assert [(q.name, q.sparql, q.rows, q.engine_ms, q.reused) for q in again.queries] == [
        (q.name, q.sparql, q.rows, q.engine_ms, True) for q in first.queries
    ]
    assert (again.summary, again.results) == (first.summary, first.results)
    assert "rows reused from its earlier run on the same graphs" in render_card(again)
    # Questions about one section run every query afresh.
    history = brain.ask("history of RFC 9999 section 3.1")
    # (The section itself comes from the heading index the router reads questions with.)
    assert history.queries and not any(q.reused for q in history.queries if q.name != "headings")
    # A write through the brain forgets the rows: the card a review returns counted afresh.
    reviewed = brain.review(question, reviewer="Dana Fictional", verdict="disputed")
    assert [q.reused for q in reviewed.queries if q.name == "holdings"] == [False]


def test_missing_revision_is_unknown_not_guessed(brain: Brain) -> None:
    answer = brain.ask("what did section 2.1 of draft-example-pigeon-07 become in the RFC?")
    assert answer.verdict is Verdict.UNKNOWN
    assert "revisions 00–02" in answer.summary and "not revision 07" in answer.summary


def test_section_number_without_revision_is_ambiguous(brain: Brain) -> None:
    answer = brain.ask("what did section 2.1 become?")
    assert answer.verdict is Verdict.AMBIGUOUS
    assert [a.question for a in answer.alternatives] == [
        "what did section 2.1 of draft-example-pigeon-NN become in the RFC?"
    ]


def test_whole_brain_validates_and_dump_round_trips(brain: Brain) -> None:
    assert brain.validate() == []
    buffer = io.BytesIO()
    brain.dump(buffer, RdfFormat.N_QUADS)
    dataset = rdflib.Dataset()
    dataset.parse(data=buffer.getvalue(), format="nquads")
    triples = sum(len(g) for g in dataset.graphs() if len(g))
    stored = sum(1 for _ in brain._store.triples(brain.graphs))
    assert triples == stored
    fresh = OxigraphStore()
    for graph in brain.graphs:
        fresh.add(graph, list(brain._store.triples([graph])))
    assert sum(1 for _ in fresh.triples(brain.graphs)) == stored
    # A dump validates with nothing but pyshacl and the shapes.
    data = rdflib.Graph()
    for graph in dataset.graphs():
        for triple in graph:
            data.add(triple)
    conforms, _graph, text = validate(data, shacl_graph=str(REPO / "shapes" / "core.ttl"))
    assert conforms, text


def test_rebuild_keeps_history_for_as_of_reads_until_pruned(
    pigeon_repo: Path, tmp_path: Path
) -> None:
    from ratified_rdf.build import build
    from ratified_rdf.graph.writer import Writer

    # The first ingest says the brain had another title; the second corrects it.
    records = tmp_path / "records"
    shutil.copytree(MANIFEST.parent, records)
    manifest = records / "manifest.toml"
    manifest.write_text(
        manifest.read_text().replace('title = "Pigeon Transport Protocol', 'title = "Old Pigeon')
    )
    store = OxigraphStore()
    first = build(manifest, source=str(pigeon_repo), store=store)
    between = datetime.now(UTC)
    second = build(MANIFEST, source=str(pigeon_repo), store=store)
    assert first.run_id != second.run_id
    graphs = store.graphs()
    # records, spec, people, github, mail, git and expertise (one graph per source, per run),
    # and the card view of spec, github, mail and git.
    assert sum(first.run_id in g for g in graphs) == sum(second.run_id in g for g in graphs) == 11
    brain = Brain.from_store(store, reader=Reader(clearance="restricted"))
    assert [r.run_id for r in brain.scope.runs] == [first.run_id, second.run_id]
    assert all(second.run_id in g for g in brain.read_graphs)
    assert sum(1 for _ in store.triples(brain.read_graphs)) == second.triples
    title = (
        "PREFIX dcterms: <http://purl.org/dc/terms/> PREFIX void: <http://rdfs.org/ns/void#> "
        "SELECT ?title WHERE { ?brain a void:Dataset ; dcterms:title ?title }"
    )
    now = brain.query(title).rows[0]["title"].value
    before = brain.query(title, as_of=between).rows[0]["title"].value
    assert (before, now) == (
        "Old Pigeon (fictional test brain)",
        "Pigeon Transport Protocol (fictional test brain)",
    )
    too_early = brain.ask("what does the graph hold?", as_of=datetime(2000, 1, 1, tzinfo=UTC))
    assert too_early.verdict is Verdict.UNKNOWN and "no complete build" in too_early.summary
    # Pruning forgets the first run and its graphs; the current run is untouched.
    writer = Writer(store, ShaclGate(), brain.brain_id, brain.reader.tenant)
    assert writer.prune(keep=1) == [first.run_id]
    assert not any(first.run_id in g for g in store.graphs())
    brain.reading.refresh()
    assert [r.run_id for r in brain.scope.runs] == [second.run_id]
    assert brain.query(title).rows[0]["title"].value == now
    assert brain.validate() == []


def test_cli_build_ask_query_validate_dump(pigeon_repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    runner = CliRunner()
    built = runner.invoke(
        main,
        ["build", str(MANIFEST), "--source", str(pigeon_repo), "--store", str(store), "--quiet"],
    )
    assert built.exit_code == 0, built.output
    assert "Built brain 'pigeon'" in built.output

    asked = runner.invoke(
        main,
        [
            "ask",
            "--store",
            str(store),
            "--json",
            "what did section 2.1 of draft-example-pigeon-00 become?",
        ],
    )
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.output)
    assert answer["verdict"] == "answered"
    assert {"verdict", "summary", "results", "evidence", "queries"} <= answer.keys()
    assert {"iri", "label", "url"} <= answer["evidence"][0].keys()
    assert {"name", "sparql", "params", "rows", "engine_ms"} <= answer["queries"][0].keys()

    card = runner.invoke(
        main, ["ask", "--store", str(store), "--sparql", "history of RFC 9999 section 3.1"]
    )
    assert card.exit_code == 0 and "How this was computed:" in card.output
    assert "section_history.rq" in card.output and "SELECT" in card.output

    queried = runner.invoke(
        main,
        [
            "query",
            str(REPO / "sparql" / "document_revisions.rq"),
            "-p",
            "draftName=draft-example-pigeon",
            "--store",
            str(store),
        ],
    )
    assert queried.exit_code == 0, queried.output
    assert queried.output.count("draft-example-pigeon-0") == 3

    valid = runner.invoke(main, ["validate", "--store", str(store)])
    assert valid.exit_code == 0 and "conforms" in valid.output

    dumped = runner.invoke(main, ["dump", "--store", str(store), "--format", "turtle"])
    assert dumped.exit_code == 0 and "Take-off" in dumped.output


def test_cli_errors_are_sentences_not_tracebacks(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(main, ["ask", "--store", str(tmp_path / "none"), "anything"])
    assert missing.exit_code == 2
    assert "There is no brain at" in missing.output and "Traceback" not in missing.output
    bad_source = runner.invoke(
        main,
        [
            "build",
            str(MANIFEST),
            "--source",
            str(tmp_path / "nowhere"),
            "--store",
            str(tmp_path / "s"),
        ],
    )
    assert bad_source.exit_code == 2
    assert "is neither a folder, a file nor a URL" in bad_source.output
    no_manifest = runner.invoke(main, ["build", str(tmp_path), "--store", str(tmp_path / "s")])
    assert no_manifest.exit_code == 2 and "There is no manifest" in no_manifest.output


def test_cli_turns_an_unexpected_failure_into_a_sentence(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(*_args: object, **_kwargs: object) -> Brain:
        raise RuntimeError("the flux capacitor is missing")

    monkeypatch.setattr(Brain, "open", broken)
    monkeypatch.delenv("RATIFIED_DEBUG", raising=False)
    result = CliRunner().invoke(main, ["ask", "--store", str(tmp_path), "anything"])
    assert result.exit_code == 3
    assert "unexpected RuntimeError: the flux capacitor is missing" in result.output
    assert "RATIFIED_DEBUG=1" in result.output and "Traceback" not in result.output


def test_a_revision_chain_names_its_last_step_an_rfc(brain: Brain) -> None:
    answer = brain.revision_chain("draft-example-pigeon", "00")
    roles = [e.role for e in answer.evidence]
    urls = [e.url for e in answer.evidence]
    assert roles[-1] == "rfc" and urls[-1] == "https://www.rfc-editor.org/rfc/rfc9999"
    assert set(roles[:-1]) == {"revision"} and all("datatracker" in u for u in urls[:-1])


@pytest.mark.parametrize(
    "question",
    [
        "trace draft-example-pigeon to its RFC",
        "how did draft-example-pigeon get to the RFC?",
        "follow draft-example-pigeon to the RFC",
        "track draft-example-pigeon through its revisions to the RFC",
    ],
)
def test_a_draft_named_alone_is_traced_from_its_first_revision(brain: Brain, question: str) -> None:
    answer = brain.ask(question)
    assert answer.intent == "revision_chain" and answer.verdict == "answered", answer.summary
    labels = [e.label for e in answer.evidence]
    # Its first step is the first revision held, its last the RFC, as the chain from -00 has it.
    assert labels == [e.label for e in brain.revision_chain("draft-example-pigeon", "00").evidence]
    assert labels[0] == "draft-example-pigeon-00" and answer.evidence[-1].role == "rfc"
    assert any(q.name.endswith("revision_chain") for q in answer.queries)


def test_tracing_a_draft_the_brain_does_not_hold_says_so(brain: Brain) -> None:
    answer = brain.ask("trace draft-example-sparrow to its RFC")
    assert answer.verdict != "answered"
    assert "draft-example-sparrow" in answer.summary, answer.summary
