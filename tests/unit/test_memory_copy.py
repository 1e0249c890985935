"""A brain opened ``in_memory`` answers from a copy of its reader's graphs: the same answers as
the store on disk, never an older state after a write, and nothing beyond the reader's graphs."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ratified_rdf import Brain, BrainError
from ratified_rdf.graph.memory import MemoryDataset
from ratified_rdf.graph.store import OxigraphStore, StoreError
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTIONS = (
    "who discussed RFC 9999 section 3.1?",
    "history of RFC 9999 section 3.1",
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
    "who should I ask about take-off?",
    "how many commits changed RFC 9999 section 3.1?",
    "what does the graph hold?",
    "what is the airspeed of an unladen swallow?",
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("g"))
    store = tmp_path_factory.mktemp("store") / "store"
    built, _ = Brain.build(
        MANIFEST, source=str(repo), path=store, reader=Reader(clearance="internal")
    )
    built.close()
    return store


def _content(brain: Brain, question: str) -> dict[str, object]:
    answer = brain.ask(question)
    return {
        "intent": answer.intent,
        "verdict": answer.verdict,
        "summary": answer.summary,
        "results": [r.model_dump() for r in answer.results],
        "evidence": [e.model_dump() for e in answer.evidence],
        "rows": [(q.name, q.sparql, q.rows) for q in answer.queries if q.name != "headings"],
    }


@pytest.mark.parametrize("question", QUESTIONS)
def test_the_copy_answers_as_the_store_on_disk_does(folder: Path, question: str) -> None:
    with Brain.open(folder) as on_disk:
        expected = _content(on_disk, question)
    with Brain.open(folder, in_memory=True) as copied:
        assert isinstance(copied.reading.session().store, MemoryDataset)
        assert _content(copied, question) == expected


def test_a_review_is_seen_by_the_next_question(folder: Path) -> None:
    question = QUESTIONS[0]
    with Brain.open(folder, in_memory=True, reader=Reader(clearance="internal")) as brain:
        before = brain.ask(question)
        assert before.trust is not None and before.trust.state == "derived"
        reviewed = brain.review(question, reviewer="Dana Fictional", verdict="ratified")
        assert reviewed.trust is not None and reviewed.trust.state == "ratified"
        assert brain.ask(question).trust.state == "ratified"  # type: ignore[union-attr]
    with Brain.open(folder, reader=Reader(clearance="internal")) as on_disk:
        assert on_disk.ask(question).trust.state == "ratified"  # type: ignore[union-attr]


def test_each_reader_gets_a_copy_of_its_own_graphs(folder: Path) -> None:
    with Brain.open(folder, in_memory=True, reader=Reader(clearance="internal")) as brain:
        public = brain.read_as(brain.reader.but(clearance="public"))
        inside, outside = brain.reading.session().store, public.reading.session().store
        assert isinstance(inside, MemoryDataset) and isinstance(outside, MemoryDataset)
        assert inside is not outside
        assert set(outside.graphs) == set(public.read_graphs)
        # A copy cannot be asked for a graph it was not made from.
        withheld = sorted(set(inside.graphs) - set(outside.graphs)) or [brain.catalog]
        with pytest.raises(StoreError, match="not made from"):
            outside.query("ASK { ?s ?p ?o }", withheld)


def test_a_server_url_is_not_copied() -> None:
    with pytest.raises(BrainError, match="copies a store folder"):
        Brain.open("http://127.0.0.1:9/", in_memory=True)


def test_readers_on_many_threads_share_one_copy(folder: Path) -> None:
    with Brain.open(folder, in_memory=True) as brain:
        brain.reading.copies.wrote()  # start without the copy made at open
        readers = [brain.read_as(brain.reader.but()) for _ in range(8)]
        with ThreadPoolExecutor(max_workers=8) as pool:
            stores = list(pool.map(lambda reader: reader.reading.session().store, readers))
            summaries = set(pool.map(lambda reader: reader.ask(QUESTIONS[0]).summary, readers))
        assert len({id(store) for store in stores}) == 1
        assert len(brain.reading.copies.copies) == 1
        assert len(summaries) == 1


def _holders() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "ratified-copy"]


def _ended(holders: list[threading.Thread]) -> bool:
    for holder in holders:
        holder.join(timeout=120)  # a hang guard: it ends at once
    return not any(holder.is_alive() for holder in holders)


def test_a_copy_is_held_by_a_thread_of_its_own_until_let_go(folder: Path) -> None:
    before = _holders()
    brain = Brain.open(folder, in_memory=True)
    try:
        first = [t for t in _holders() if t not in before]
        assert len(first) == 1  # loaded there, so its blocks stay out of answering threads
        brain.reading.copies.wrote()  # a write forgets the copy, and its thread ends
        assert _ended(first)
        assert brain.ask(QUESTIONS[0]).verdict.value == "answered"  # copied afresh
        second = [t for t in _holders() if t not in before]
        assert len(second) == 1
    finally:
        brain.close()
    assert _ended(second)
    assert not brain.reading.copies.copies


def test_a_copy_that_cannot_be_made_says_why(folder: Path) -> None:
    store = OxigraphStore(folder)
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        MemoryDataset(store, ["https://example.org/graph"])


@pytest.fixture()
def held_copy(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Copies into memory wait until the returned event is set."""
    from ratified_rdf.graph import copies

    release = threading.Event()

    class HeldCopy(MemoryDataset):
        def __init__(self, *args: object, **kwargs: object) -> None:
            assert release.wait(timeout=120)  # a hang guard: the test releases it
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(copies, "MemoryDataset", HeldCopy)
    return release


def test_without_waiting_for_the_copy_the_store_answers_alike_meanwhile(
    folder: Path, held_copy: threading.Event
) -> None:
    question = QUESTIONS[0]
    with Brain.open(folder) as on_disk:
        expected = _content(on_disk, question)
    with Brain.open(folder, in_memory=True, wait_for_copy=False) as brain:
        assert isinstance(brain.reading.session().store, OxigraphStore)  # being copied
        assert _content(brain, question) == expected
        held_copy.set()
        pending = brain.reading.copies.prepare(brain.reading.store, brain.read_graphs)
        assert isinstance(pending.result(timeout=120), MemoryDataset)
        assert isinstance(brain.reading.session().store, MemoryDataset)
        assert _content(brain, question) == expected


def test_an_export_is_written_from_the_copy_in_memory(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The query workers' export of the reader's graphs comes from the copy in memory when the
    brain keeps one (the engine writes it, without handing each quad to Python), and holds
    the same quads as the store's."""
    from pyoxigraph import RdfFormat, parse

    from ratified_rdf.graph import publish

    on_disk = Brain.open(folder)
    in_memory = Brain.open(folder, in_memory=True)
    try:
        graphs = list(in_memory.read_graphs)
        expected = set(parse(on_disk.reading.export(graphs), RdfFormat.N_QUADS))

        def from_the_store(*args: object) -> bytes:
            raise AssertionError("exported quad by quad from the store")

        monkeypatch.setattr(publish, "nquads", from_the_store)
        exported = set(parse(in_memory.reading.export(graphs), RdfFormat.N_QUADS))
    finally:
        on_disk.close()
        in_memory.close()
    assert expected
    assert exported == expected
