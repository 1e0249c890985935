"""One store folder, many processes: shared (read-only) openings beside a writer, taking the
write lock only to write, and following what another process finished writing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pyoxigraph import Literal, NamedNode, Triple

from ratified_rdf import Brain
from ratified_rdf.graph.store import GENERATION_FILE, OxigraphStore, StoreError
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

GRAPH = "https://example.org/graph/pigeon-notes"
COUNT = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{GRAPH}> {{ ?s ?p ?o }} }}"


def _note(n: int) -> Triple:
    return Triple(
        NamedNode(f"https://example.org/note/{n}"),
        NamedNode("https://example.org/says"),
        Literal(f"coo {n}"),
    )


def _count(store: OxigraphStore) -> int:
    return int(store.query(COUNT).rows[0]["n"].value)


WRITE_IN_ANOTHER_PROCESS = """
import sys
from pyoxigraph import Literal, NamedNode, Triple
from ratified_rdf.graph.store import OxigraphStore
store = OxigraphStore(sys.argv[1])
store.add(sys.argv[2], [Triple(NamedNode(f"https://example.org/note/x{i}"),
                               NamedNode("https://example.org/says"), Literal("x"))
                        for i in range(int(sys.argv[3]))])
store.close()
"""


def _write_elsewhere(folder: Path, n: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITE_IN_ANOTHER_PROCESS, str(folder), GRAPH, str(n)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "store"
    store = OxigraphStore(path)
    store.add(GRAPH, [_note(1), _note(2)])
    store.close()
    return path


@pytest.mark.slow
def test_readers_read_beside_a_writer_and_follow_once_it_is_done(folder: Path) -> None:
    readers = [OxigraphStore(folder, shared=True) for _ in range(3)]
    try:
        writer = OxigraphStore(folder)  # takes the write lock: readers do not hold it
        writer.add(GRAPH, [_note(3)])
        assert [_count(r) for r in readers] == [2, 2, 2]  # not finished: nothing to follow
        assert not any(r.follow() for r in readers)
        writer.close()
        assert all(r.follow() for r in readers)
        assert [_count(r) for r in readers] == [3, 3, 3]
        assert not any(r.follow() for r in readers)  # once per finished write
        _write_elsewhere(folder, 5)  # another process, start to finish
        assert all(r.follow() for r in readers)
        assert [_count(r) for r in readers] == [8, 8, 8]
    finally:
        for reader in readers:
            reader.close()


@pytest.mark.slow
def test_a_shared_store_takes_the_lock_only_while_it_writes(folder: Path) -> None:
    shared = OxigraphStore(folder, shared=True)
    try:
        marker = (folder / GENERATION_FILE).read_text()
        with shared.writing():
            shared.add(GRAPH, [_note(4)])
            assert _count(shared) == 3  # reads in the block see the block's writes
            with pytest.raises(StoreError, match="Another process is writing to it"):
                OxigraphStore(folder)
        assert (folder / GENERATION_FILE).read_text() != marker  # readers elsewhere follow
        other = OxigraphStore(folder)  # the lock is free again
        other.drop_graph(GRAPH)
        other.close()
        assert shared.follow() and _count(shared) == 0
        shared.add(GRAPH, [_note(5)])  # a write outside a block takes the lock for itself
        assert _count(shared) == 1
        _write_elsewhere(folder, 2)
        assert shared.follow() and _count(shared) == 3
    finally:
        shared.close()


def test_a_missing_or_foreign_folder_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="Is it a folder that `ratified build` wrote"):
        OxigraphStore(tmp_path / "nothing-here", shared=True)


@pytest.mark.slow
def test_a_brain_open_beside_a_rebuild_answers_from_the_new_run(tmp_path: Path) -> None:
    repo = make_pigeon_repo(tmp_path / "git")
    folder = tmp_path / "brain"
    built, first = Brain.build(MANIFEST, path=folder, source=str(repo))
    built.close()
    with (
        Brain.open(folder) as reader,
        Brain.open(folder, reader=Reader(clearance="restricted")) as other,
    ):
        before = reader.ask("what does the graph hold?")
        assert next(r for r in reader.scope.runs if r.current).run_id == first.run_id
        rebuilt, second = Brain.build(MANIFEST, path=folder, source=str(repo))
        rebuilt.close()
        after = reader.ask("what does the graph hold?")
        assert next(r for r in reader.scope.runs if r.current).run_id == second.run_id
        assert (
            next(r for r in other.scope.runs if r.current).run_id == first.run_id
        )  # not asked yet
        other.query("ASK { ?s ?p ?o }")
        assert next(r for r in other.scope.runs if r.current).run_id == second.run_id
        assert after.summary == before.summary  # same sources, same card
        # A review from a reader beside them is written, and both see it.
        card = reader.review("what does the graph hold?", reviewer="Ada Pigeon", verdict="ratified")
        assert card.trust is not None and card.trust.reviewer == "Ada Pigeon"
        seen = other.read_as(other.reader.but(clearance="public")).ask("what does the graph hold?")
        assert seen.trust is not None and seen.trust.state == "ratified"
