"""``serve_command``: the options it takes and the app it hands to uvicorn."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from click.testing import CliRunner

from ratified_rdf import Brain
from ratified_rdf.graph.memory import MemoryDataset
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.queries.sandbox import SandboxLimits
from ratified_rdf.surfaces.server import YOUNG_OBJECTS, default_query_workers, serve_command
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.serve.deadlines import GENEROUS_S


@pytest.fixture(autouse=True)
def _thawed() -> Iterator[None]:
    """``serve_command`` freezes the heap and raises the collector's threshold for the server
    it starts; this process goes on as it was."""
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


def test_serve_runs_uvicorn_with_the_limits_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    brain.close()
    calls: list[tuple[Any, dict[str, Any]]] = []
    frozen: list[int] = []
    young: list[int] = []
    stores: list[object] = []

    def run(app: Any, **options: Any) -> None:
        calls.append((app, options))
        # The server listens at once and settles on a thread: see it settled.
        app.state.settling.join(600)  # a hang guard: settling takes seconds
        stores.append(app.state.brain.reading.session().store)
        frozen.append(gc.get_freeze_count())
        young.append(gc.get_threshold()[0])

    monkeypatch.setattr(uvicorn, "run", run)
    result = CliRunner().invoke(
        serve_command,
        [
            "--store", str(store), "--port", "8123", "--query-timeout", "2.5", "--max-rows", "99",
            "--max-stream-rows", "5000",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    ((app, options),) = calls
    assert options == {"host": "127.0.0.1", "port": 8123, "log_level": "info"}
    assert app.state.limits == SandboxLimits(
        timeout_s=2.5, max_rows=99, workers=default_query_workers()
    )
    assert app.state.standard.max_stream_rows == 5000
    assert app.state.brain.brain_id == "pigeon"
    assert "Serving brain 'pigeon'" in result.output
    # A server answers from a copy of the reader's graphs in memory unless told otherwise.
    assert isinstance(stores[0], MemoryDataset)
    assert "answers from a copy in memory, made now" in result.output
    assert not app.state.brain.reading.copies.copies  # let go when the server stopped
    # … with its heading index built, the heap frozen and room for a card's young objects
    # once settled.
    assert tuple(app.state.brain.read_graphs) in app.state.brain.reading.lookups.headings
    assert {key[0] for key in app.state.brain.reading.lookups.kept} >= {
        "pull_requests",
        "commit_details",
    }
    assert frozen[0] > 0
    assert young == [YOUNG_OBJECTS] and YOUNG_OBJECTS > 700


def test_serve_on_disk_reads_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    brain.close()
    calls: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: calls.append(app))
    result = CliRunner().invoke(serve_command, ["--store", str(store), "--on-disk"])
    assert result.exit_code == 0, result.output
    assert isinstance(calls[0].state.brain.reading.session().store, OxigraphStore)
    assert "answers from the store on disk" in result.output


def test_serve_without_a_brain_says_what_to_do(tmp_path: Path) -> None:
    result = CliRunner().invoke(serve_command, ["--store", str(tmp_path / "nothing")])
    assert result.exit_code != 0
    assert "There is no brain at" in result.output
    assert "ratified build records/tls13" in result.output


@pytest.mark.parametrize(
    "options", [["--query-timeout", "0"], ["--max-rows", "0"], ["--port", "70000"]]
)
def test_serve_refuses_bad_limits(tmp_path: Path, options: list[str]) -> None:
    result = CliRunner().invoke(serve_command, ["--store", str(tmp_path), *options])
    assert result.exit_code == 2


def test_serve_takes_cors_origins_and_refuses_what_is_no_origin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    brain.close()
    apps: list[Any] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: apps.append(app))
    origin = "https://yasgui.example"
    given = ["--store", str(store), "--cors-origin", origin, "--cors-origin", "http://a.test:3000"]
    assert CliRunner().invoke(serve_command, given).exit_code == 0
    cors = [m for m in apps[0].user_middleware if m.cls.__name__ == "CORSMiddleware"]
    assert cors[0].kwargs["allow_origins"] == [origin, "http://a.test:3000"]
    bad = CliRunner().invoke(serve_command, ["--store", str(store), "--cors-origin", "a.example"])
    assert bad.exit_code == 2
    assert "'a.example' is not an origin: give a scheme and host" in bad.output


def test_the_server_answers_while_the_copy_is_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    from starlette.testclient import TestClient

    from ratified_rdf.graph import copies
    from ratified_rdf.surfaces.server import create_app, settle_in_background

    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    brain.close()
    release = threading.Event()

    class HeldCopy(MemoryDataset):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            assert release.wait(timeout=300)  # a hang guard: the test releases it
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(copies, "MemoryDataset", HeldCopy)
    with Brain.open(store, in_memory=True, wait_for_copy=False) as served:
        app = create_app(served, query_timeout_s=0.5)
        settling = settle_in_background(served)
        try:
            with TestClient(app) as client:
                # Longer than a request may wait for a copy: answered from the store on disk.
                answer = client.get("/api/ask", params={"q": "history of RFC 9999 section 3.1"})
                assert answer.status_code == 200, answer.text
                assert answer.json()["verdict"] == "answered"
                assert settling.is_alive()  # settled only once the copy is made
                release.set()
                settling.join(timeout=300)
                assert not settling.is_alive()
                assert isinstance(served.reading.session().store, MemoryDataset)
                assert gc.get_freeze_count() > 0
        finally:
            release.set()  # a failed check above does not leave the copy held


def test_query_workers_wait_for_the_server_to_settle_but_one(tmp_path: Path) -> None:
    # While the server settles, one worker is readied and no copy into memory (nor its export)
    # is started, so the first answers have the processors to themselves; once it has
    # settled, the other workers start and copies are allowed again.
    import threading

    from ratified_rdf.surfaces.server import _sandbox_of, create_app, warm_query_workers

    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    brain.close()
    release = threading.Event()
    settling = threading.Thread(target=release.wait, args=(300,), daemon=True)  # a hang guard
    settling.start()
    with Brain.open(store, in_memory=True, wait_for_copy=False) as served:
        app = create_app(served, query_timeout_s=GENEROUS_S, query_workers=3)
        sandbox = _sandbox_of(app)
        try:
            warming = warm_query_workers(app, settled=settling)
            for _ in range(6_000):  # the first worker's start, bounded
                if sum(worker.alive() for worker in sandbox._all) and sandbox._free:
                    break
                warming.join(timeout=0.05)
            assert sum(worker.alive() for worker in sandbox._all) == 1
            assert not sandbox._copies.is_set()
            release.set()
            warming.join(timeout=300)
            assert not warming.is_alive()
            assert all(worker.alive() for worker in sandbox._all)
            assert sandbox._copies.is_set()
        finally:
            release.set()
            sandbox.close()
