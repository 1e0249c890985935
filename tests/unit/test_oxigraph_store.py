"""The embedded store on disk flushes what it is given as it goes, not only when closed."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Store, Triple

from ratified_rdf.graph import store as store_module
from ratified_rdf.graph.store import OxigraphStore

GRAPH = "https://example.org/graph/fictional"


class CountingStore:
    """An Oxigraph store that counts its flushes."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        self.inner.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def __len__(self) -> int:
        return len(self.inner)


def _triples(count: int) -> list[Triple]:
    return [
        Triple(NamedNode(f"https://example.org/thing/{i}"), NamedNode(GRAPH + "#n"), Literal(i))
        for i in range(count)
    ]


def test_a_store_on_disk_flushes_every_so_many_quads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Left alone, Oxigraph's RocksDB held everything written in memory (1.2 KiB a quad).
    monkeypatch.setattr(store_module, "FLUSH_EVERY_QUADS", 10)
    store = OxigraphStore(tmp_path / "store")
    counting = CountingStore(store._store)
    store._open = counting  # type: ignore[assignment]
    for start in range(0, 35, 7):
        store.add(GRAPH, _triples(35)[start : start + 7])
    assert counting.flushes == 2  # at 14 and 28 quads; the last 7 wait for the next
    assert len(store) == 35


def test_a_store_in_memory_has_nothing_to_flush(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store_module, "FLUSH_EVERY_QUADS", 1)
    store = OxigraphStore()
    counting = CountingStore(store._store)
    store._open = counting  # type: ignore[assignment]
    store.add(GRAPH, _triples(5))
    assert counting.flushes == 0


class ChunkRecordingStore(CountingStore):
    """An Oxigraph store that records what each bulk load was given."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.given: list[object] = []

    def bulk_extend(self, quads: object) -> None:
        self.given.append(quads)
        self.inner.bulk_extend(quads)


@pytest.mark.parametrize("on_disk", [False, True])
def test_a_bulk_load_is_given_chunks_not_the_whole_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: bool
) -> None:
    # Given an iterator, Oxigraph's bulk loader gathered 1.3 GiB for 2 M quads before writing.
    monkeypatch.setattr(store_module, "LOAD_CHUNK_QUADS", 4)
    store = OxigraphStore(tmp_path / "store" if on_disk else None)
    recording = ChunkRecordingStore(store._store)
    store._open = recording  # type: ignore[assignment]
    triples = _triples(10)
    store.load([(GRAPH, triples[:3]), (GRAPH, triples[3:9]), (GRAPH + "/2", triples[9:])])
    assert all(isinstance(chunk, list) for chunk in recording.given)
    assert [len(chunk) for chunk in recording.given] == [4, 4, 2]  # type: ignore[arg-type]
    assert set(store.triples([GRAPH])) == set(triples[:9])
    assert set(store.triples([GRAPH + "/2"])) == {triples[9]}


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("on_disk", [False, True])
def test_documents_load_as_their_triples_do(
    on_disk: bool, background: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Loading batches' N-Triples documents gives the store loading their triples gives:
    each in its graph, literals that hold " .", line breaks and quotes intact, and a blank
    node keeping its label (the loader would give it a fresh one)."""
    from pyoxigraph import BlankNode

    from ratified_rdf.graph.store import ntriples

    monkeypatch.setattr(store_module, "LOAD_CHUNK_QUADS", 7)  # several chunks, across graphs
    ex = "https://example.org/fictional/"
    batches = []
    for n in range(6):
        node = NamedNode(f"{ex}node/{n}")
        triples = [
            Triple(node, NamedNode(ex + "says"), Literal(f'ends with a dot .\n"{n}" .')),
            Triple(node, NamedNode(ex + "lang"), Literal("über .", language="de")),
            Triple(node, NamedNode(ex + "next"), NamedNode(f"{ex}node/{n + 1}")),
        ]
        if n == 3:
            triples.append(Triple(BlankNode("kept3"), NamedNode(ex + "about"), node))
        batches.append((f"{ex}graph/{n % 2}", triples))
    by_documents = OxigraphStore(tmp_path / "a" if on_disk else None)
    by_documents.load_documents(
        ((graph, ntriples(triples)) for graph, triples in batches), background=background
    )
    by_triples = OxigraphStore(tmp_path / "b" if on_disk else None)
    by_triples.load(batches)
    for graph in {g for g, _ in batches}:
        assert sorted(map(str, by_documents.triples([graph]))) == sorted(
            map(str, by_triples.triples([graph]))
        )
    assert any(
        isinstance(t.subject, BlankNode) and t.subject.value == "kept3"
        for t in by_documents.triples([f"{ex}graph/1"])
    )
    assert len(by_documents) == sum(len(t) for _, t in batches)


def test_a_chunk_holds_one_graphs_documents_loaded_as_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each chunk goes to the bulk loader as the documents' own N-Triples, with its graph:
    a document for another graph sends the chunk before it, a full chunk is sent at once,
    and the count the caller gives stands for the document's lines."""
    from ratified_rdf.graph.store import DocumentLoader, ntriples

    monkeypatch.setattr(store_module, "LOAD_CHUNK_QUADS", 4)
    store = OxigraphStore(tmp_path / "db")
    sent: list[tuple[bytes, str]] = []
    bulk_load = OxigraphStore._bulk_load

    def recorded(self: OxigraphStore, data: bytes, graph: str) -> None:
        sent.append((data, graph))
        bulk_load(self, data, graph)

    monkeypatch.setattr(OxigraphStore, "_bulk_load", recorded)
    triples = _triples(7)
    documents = [ntriples(triples[:2]), ntriples(triples[2:5]), ntriples(triples[5:6])]
    other = ntriples(triples[6:])
    loader = DocumentLoader(store, background=False)
    loader.add(GRAPH, documents[0])
    loader.add(GRAPH, documents[1], 3)  # 5 lines: full, sent
    loader.add(GRAPH + "/2", other)
    loader.add(GRAPH, documents[2], 1)  # another graph: the one before is sent
    loader.wait()
    assert sent == [
        (documents[0] + documents[1], GRAPH),
        (other, GRAPH + "/2"),
        (documents[2], GRAPH),
    ]
    assert set(store.triples([GRAPH])) == set(triples[:6])
    assert set(store.triples([GRAPH + "/2"])) == {triples[6]}


def test_a_chunk_the_loader_cannot_read_fails_the_load_that_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chunks are loaded on a thread of their own: what loading one raised is raised by the
    # next call that waits for it, never lost with the thread.
    from pyoxigraph import RdfFormat, parse

    from ratified_rdf.graph.store import DocumentLoader, ntriples

    monkeypatch.setattr(store_module, "LOAD_CHUNK_QUADS", 2)
    store = OxigraphStore(tmp_path / "db")
    said = NamedNode(GRAPH + "/p")
    good = ntriples([Triple(NamedNode(f"{GRAPH}/s{n}"), said, Literal("o")) for n in range(2)])
    broken = b"<https://example.org/fictional/s> <not an iri> .\n" * 2
    with pytest.raises(SyntaxError):
        list(parse(broken, format=RdfFormat.N_TRIPLES))  # the fixture is what it says
    loader = DocumentLoader(store)
    loader.add(GRAPH, good)  # sent
    loader.add(GRAPH, broken)  # sent once the first has loaded
    with pytest.raises(SyntaxError):
        loader.wait()
    assert len(store) == 2  # the chunk before it was loaded
    loader.abandon()  # and letting it go again raises nothing more
    assert len(store) == 2


def test_warming_a_store_on_disk_reads_each_of_its_files_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store just bulk-loaded is read into the page cache, file by file, on a thread."""
    store = OxigraphStore(tmp_path / "store")
    try:
        store.load([(GRAPH, _triples(5_000))])
        store.flush()
        given: list[list[str]] = []
        read_through = store_module._read_through

        def recorded(paths: list[str]) -> int:
            given.append(sorted(paths))
            return read_through(paths)

        monkeypatch.setattr(store_module, "_read_through", recorded)
        files = sorted(str(p) for p in (tmp_path / "store").iterdir() if p.is_file())
        thread = store.warm()
        assert thread is not None
        thread.join(timeout=60)
        assert not thread.is_alive()
        assert given == [files] and len(files) > 1
    finally:
        store.close()


def test_a_store_is_not_warmed_in_memory_or_past_half_the_memory_available(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Nothing to read for a store in memory; and a store larger than half the memory the
    system has free would push out of the cache what it reads, so it is left as it is."""
    assert OxigraphStore().warm() is None
    store = OxigraphStore(tmp_path / "store")
    try:
        store.load([(GRAPH, _triples(100))])
        store.flush()
        size = sum(p.stat().st_size for p in (tmp_path / "store").iterdir() if p.is_file())
        monkeypatch.setattr(store_module, "_memory_available", lambda: 2 * size - 2)
        assert store.warm() is None
        monkeypatch.setattr(store_module, "_memory_available", lambda: None)
        assert store.warm() is None
        monkeypatch.setattr(store_module, "_memory_available", lambda: 2 * size)
        thread = store.warm()
        assert thread is not None
        thread.join(timeout=60)
    finally:
        store.close()


def test_reading_through_passes_over_a_file_gone_and_reads_the_rest(tmp_path: Path) -> None:
    """A file compacted away between listing and reading is passed over, not an error."""
    kept = tmp_path / "kept.sst"
    kept.write_bytes(b"x" * 3_000_000)
    assert store_module._read_through([str(tmp_path / "gone.sst"), str(kept)]) == 3_000_000
