"""Whole-graph rows saved in a store's folder: a later process answers from them alike, without
running those queries again, and never from rows a write or a changed query made stale."""

from __future__ import annotations

import json
import pickle
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyoxigraph import BaseDirection, BlankNode, Literal, NamedNode

from ratified_rdf import Brain
from ratified_rdf.answers import lookups, session
from ratified_rdf.answers.saved_rows import FOLDER, SavedRows, values_of
from ratified_rdf.graph.store import GENERATION_FILE, OxigraphStore, Term
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import load_query
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTIONS = (
    "who discussed RFC 9999 section 3.1?",
    "history of RFC 9999 section 3.1",
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
    "who should I ask about take-off?",
    "what does the graph hold?",
)
INTERNAL = Reader(clearance="internal")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("g"))
    store = tmp_path_factory.mktemp("store") / "store"
    brain, _ = Brain.build(MANIFEST, source=str(repo), path=store, reader=INTERNAL)
    brain.close()
    return store


@pytest.fixture()
def folder(built: Path, tmp_path: Path) -> Path:
    """A copy of the built store of this test's own, with nothing saved in it yet."""
    copy = tmp_path / "store"
    shutil.copytree(built, copy)
    assert not (copy / FOLDER).exists()
    return copy


@pytest.fixture()
def ran(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the queries the lookups and sessions run from now on."""
    names: list[str] = []

    def recorded(*args: object, **kwargs: object) -> object:
        names.append(str(args[2]))
        return run_query(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(lookups, "run_query", recorded)
    monkeypatch.setattr(session, "run_query", recorded)
    yield names


def _card(brain: Brain, question: str) -> dict[str, object]:
    """The answer as ``ratified ask --json`` prints it, but for what says how long each query
    took and whether this process ran it."""
    card = brain.ask(question).model_dump(mode="json")
    for query in card["queries"]:
        del query["engine_ms"], query["reused"]
    return card


def _whole_graph(names: list[str]) -> set[str]:
    return {name for name in names if load_query(name).whole_graph}


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_later_process_answers_alike_without_the_whole_graph_queries(
    folder: Path, ran: list[str], question: str
) -> None:
    with Brain.open(folder) as first:
        expected = _card(first, question)
    assert _whole_graph(ran)  # the first process ran them, and saved their rows
    ran.clear()
    with Brain.open(folder) as later:  # a new brain shares nothing in memory with the first
        assert _card(later, question) == expected
    assert not _whole_graph(ran)


def test_the_card_shows_the_saved_run_as_reused(folder: Path) -> None:
    question = QUESTIONS[1]
    with Brain.open(folder) as first:
        first.ask(question)
        headings = first.reading.heading_index()[1]
    with Brain.open(folder) as later:
        shown = {q.name: q for q in later.ask(question).queries}
    assert shown["headings"].reused
    assert shown["headings"].engine_ms == headings.engine_ms  # the run the rows came from


def test_a_write_makes_the_saved_rows_stale(folder: Path, ran: list[str]) -> None:
    question = QUESTIONS[0]
    with Brain.open(folder) as first:
        first.ask(question)
    saved_before = set((folder / FOLDER).iterdir())
    writer = OxigraphStore(folder, shared=True)  # another process's write, say a review
    with writer.writing():
        pass
    writer.close()
    ran.clear()
    with Brain.open(folder) as later:
        later.ask(question)
    assert "headings" in ran  # saved at the generation before the write: not read
    assert not saved_before & set((folder / FOLDER).iterdir())  # and removed once replaced


def test_a_review_saves_the_rows_anew(folder: Path, ran: list[str]) -> None:
    question = QUESTIONS[0]
    with Brain.open(folder, reader=INTERNAL) as brain:
        brain.review(question, reviewer="Dana Fictional", verdict="ratified")
    ran.clear()
    with Brain.open(folder, reader=INTERNAL) as later:
        card = later.ask(question)
    assert card.trust is not None and card.trust.state == "ratified"
    assert not _whole_graph(ran)  # the reviewer's process saved them after its write


def test_rows_of_a_query_whose_text_changed_are_not_read(folder: Path, ran: list[str]) -> None:
    question = QUESTIONS[1]
    with Brain.open(folder) as first:
        first.ask(question)
    (saved,) = (folder / FOLDER).glob("*-headings.json")
    data = json.loads(saved.read_text())
    data["run"]["sparql"] += "\n# an older text of the query"
    saved.write_text(json.dumps(data))
    _set_aside_saved_lookups(folder)  # built from the rows of the text of today: see below
    ran.clear()
    with Brain.open(folder) as later:
        later.ask(question)
    assert "headings" in ran and "gazetteer_people" not in ran


def test_terms_come_back_as_they_were(tmp_path: Path) -> None:
    (tmp_path / GENERATION_FILE).write_text("1 2\n")
    rows: list[dict[str, Term]] = [
        {
            "iri": NamedNode("https://example.org/pigeon"),
            "plain": Literal("Take-off"),
            "typed": Literal("3", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
            "worded": Literal("Abflug", language="de"),
            "blank": BlankNode("b1"),
        },
        {"iri": NamedNode("https://example.org/swallow")},
    ]
    saved = SavedRows(tmp_path)
    run = run_query_record()
    saved.save(["g"], saved.generation(), rows, run)
    found = saved.load("documents", ["g"], saved.generation())
    assert found is not None
    assert found.terms() == rows
    assert found.values() == values_of(rows)
    assert found.run == run
    assert saved.load("documents", ["g", "h"], saved.generation()) is None


def test_a_saved_file_that_cannot_be_read_means_the_query_runs(
    folder: Path, ran: list[str]
) -> None:
    question = QUESTIONS[1]
    with Brain.open(folder) as first:
        expected = _card(first, question)
    for saved in (folder / FOLDER).glob("*.json"):
        data = json.loads(saved.read_text())
        data["rows"] = [
            ["not an IRI" if isinstance(c, str) else 7 for c in row] for row in data["rows"]
        ]
        saved.write_text(json.dumps(data))
    _set_aside_saved_lookups(folder)
    ran.clear()
    with Brain.open(folder) as later:
        assert _card(later, question) == expected
    assert "headings" in ran and "commit_details" in ran


def test_a_term_the_layout_cannot_hold_is_not_saved(tmp_path: Path) -> None:
    (tmp_path / GENERATION_FILE).write_text("1 2\n")
    worded = Literal("مرحبا", language="ar", direction=BaseDirection.RTL)
    saved = SavedRows(tmp_path)
    saved.save(["g"], saved.generation(), [{"x": worded}], run_query_record())
    assert saved.load("documents", ["g"], saved.generation()) is None


def test_a_folder_that_cannot_be_written_saves_nothing(tmp_path: Path) -> None:
    (tmp_path / GENERATION_FILE).write_text("1 2\n")
    (tmp_path / FOLDER).write_text("a file where the folder would be")
    saved = SavedRows(tmp_path)
    saved.save(["g"], saved.generation(), [{"x": Literal("1")}], run_query_record())
    assert saved.load("documents", ["g"], saved.generation()) is None


def test_a_store_without_a_generation_saves_nothing(tmp_path: Path) -> None:
    saved = SavedRows(tmp_path)
    assert saved.generation() is None
    saved.save(["g"], None, [{"x": Literal("1")}], run_query_record())
    assert not (tmp_path / FOLDER).exists()


def run_query_record() -> QueryRun:
    """A record of a run of ``documents``, with the text the query binds today."""
    return QueryRun(
        name="documents", sparql=load_query("documents").bind({}), params={}, rows=2, engine_ms=1.5
    )


def test_ratified_build_saves_what_the_first_ask_reads(tmp_path: Path, ran: list[str]) -> None:
    from click.testing import CliRunner

    from ratified_rdf.surfaces.cli import main

    store = tmp_path / "brain"
    repo = make_pigeon_repo(tmp_path / "git")
    argv = ["build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet"]
    built = CliRunner().invoke(main, argv)
    assert built.exit_code == 0, built.output
    saved = {path.name.rsplit("-", 1)[-1] for path in (store / FOLDER).glob("*.json")}
    assert {"headings.json", "pull_requests.json", "commit_details.json"} <= saved
    ran.clear()
    with Brain.open(store) as first:  # the first reader after the build
        first.ask(QUESTIONS[1])
    assert not _whole_graph(ran)


# --- the heading index and gazetteer, saved built ----------------------------------------------


def _set_aside_saved_lookups(folder: Path) -> None:
    """Remove the saved heading index and gazetteer, so the lookups read the rows files."""
    for path in (folder / FOLDER).glob("*-lookups.pickle"):
        path.unlink()


@pytest.fixture()
def builds(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many headings each heading index built from now on was built from."""
    from ratified_rdf.answers.heading_search import HeadingIndex

    built: list[int] = []
    build = HeadingIndex.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[HeadingIndex], entries: object) -> HeadingIndex:
        listed = list(entries)  # type: ignore[call-overload]
        built.append(len(listed))
        return build(cls, listed)

    monkeypatch.setattr(HeadingIndex, "build", classmethod(counted))
    yield built


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_later_process_reads_the_index_and_gazetteer_built(
    folder: Path, builds: list[int], question: str
) -> None:
    with Brain.open(folder) as first:
        expected = _card(first, question)
    assert builds
    assert any((folder / FOLDER).glob("*-lookups.pickle"))
    builds.clear()
    with Brain.open(folder) as later:
        assert _card(later, question) == expected
        gazetteer = later.reading.gazetteer()
        assert gazetteer.headings is later.reading.heading_index()[0]
    assert not builds  # nothing was stemmed or ranked again


def test_saved_lookups_built_by_other_code_are_not_read(
    folder: Path, builds: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    with Brain.open(folder) as first:
        expected = _card(first, QUESTIONS[1])
    builds.clear()
    # Another version of the code that builds them: its modules' files differ.
    monkeypatch.setattr(lookups, "_builders", lambda: (lookups, session))
    with Brain.open(folder) as later:
        assert _card(later, QUESTIONS[1]) == expected
    assert builds


def test_a_write_makes_the_saved_lookups_stale(folder: Path, builds: list[int]) -> None:
    with Brain.open(folder) as first:
        first.ask(QUESTIONS[0])
    writer = OxigraphStore(folder, shared=True)
    with writer.writing():
        pass
    writer.close()
    builds.clear()
    with Brain.open(folder) as later:
        later.ask(QUESTIONS[0])
    assert builds


class _Planted:
    """What a crafted pickle would make: unpickling it calls ``_planted``."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_planted, ("ran",))


PLANTED: list[str] = []


def _planted(word: str) -> str:
    PLANTED.append(word)
    return word


def test_a_crafted_pickle_runs_nothing_and_the_lookups_are_built(
    folder: Path, builds: list[int]
) -> None:
    with Brain.open(folder) as first:
        expected = _card(first, QUESTIONS[1])
    (saved,) = (folder / FOLDER).glob("*-lookups.pickle")
    header, _, _ = saved.read_bytes().partition(b"\n")
    # A file with a current header, whose body names a callable outside the allowed classes.
    saved.write_bytes(header + b"\n" + pickle.dumps(_Planted()))
    builds.clear()
    with Brain.open(folder) as later:
        assert _card(later, QUESTIONS[1]) == expected
    assert builds and not PLANTED


def test_only_the_allowed_classes_are_read_back(tmp_path: Path) -> None:
    (tmp_path / GENERATION_FILE).write_text("1 2\n")
    saved = SavedRows(tmp_path)
    generation = saved.generation()
    code = (lookups,)
    saved.save_object("lookups", ["g"], generation, ["documents"], code, _Planted())
    assert saved.load_object("lookups", ["g"], generation, ["documents"], code) is None
    assert not PLANTED  # the save read it back through the restricted reader, and dropped it
    kept = {"counts": Counter({"a": 2})}
    saved.save_object("lookups", ["g"], generation, ["documents"], code, kept)
    assert saved.load_object("lookups", ["g"], generation, ["documents"], code) == kept
    assert saved.load_object("lookups", ["g"], generation, ["headings"], code) is None
    assert saved.load_object("lookups", ["h"], generation, ["documents"], code) is None
