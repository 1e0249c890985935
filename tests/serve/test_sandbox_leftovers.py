"""A server killed outright leaves no checkpoint folder behind for good (issue 50 item 7).

A query worker reads a checkpoint of the brain's store, made in a folder of the server's; a
server ended by SIGKILL (or the OOM killer) cannot remove it. Each folder is named by the
process that made it and when that process started, and the next server to make one removes
those whose maker is provably gone, and no other.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from pyoxigraph import NamedNode, Quad, Store

from ratified_rdf.queries import sandbox as sandbox_module
from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits

GRAPH = "urn:x-test:tenant/pigeons/graph/lofts"
JSON = "application/sparql-results+json"
WAIT_S = 600.0
"""How long the test waits for the child server's first answer at most (a hang fails it)."""
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    folder = tmp_path / "brain"
    made = Store(str(folder))
    made.add(
        Quad(
            NamedNode("urn:x-test:loft/1"),
            NamedNode("urn:x-test:holds"),
            NamedNode("urn:x-test:pigeon/1"),
            NamedNode(GRAPH),
        )
    )
    made.flush()
    del made
    return folder


def _ended_process() -> tuple[int, int]:
    """The number and start time of a process that has ended since."""
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    started = sandbox_module._started(child.pid)
    assert started is not None
    assert child.stdin is not None
    child.stdin.close()
    child.wait()
    return child.pid, started


def _made(parent: Path, pid: int, started: int) -> Path:
    folder = parent / f"ratified-sandbox-{pid}-{started}-x1y2z3"
    (folder / "worker-0").mkdir(parents=True)
    (folder / "worker-0" / "CURRENT").write_text("MANIFEST-000001\n")
    return folder


def test_the_folders_of_gone_servers_are_removed_and_no_other(tmp_path: Path) -> None:
    ours = os.getpid()
    our_start = sandbox_module._started(ours)
    assert our_start is not None
    pid, started = _ended_process()
    dead = _made(tmp_path, pid, started)
    reused = _made(tmp_path, ours, our_start + 1)  # our number, another process's start
    live = _made(tmp_path, ours, our_start)
    unknown = tmp_path / "ratified-sandbox-1234-0-abcd"  # its maker's start was not known
    unknown.mkdir()
    older = tmp_path / "ratified-sandbox-k3j4h5g6"  # named before makers were
    older.mkdir()
    other = tmp_path / "somebody-else"
    other.mkdir()
    sandbox_module._sweep(str(tmp_path))
    assert not dead.exists() and not reused.exists()
    assert live.exists() and unknown.exists() and older.exists() and other.exists()


def test_a_killed_servers_checkpoint_is_removed_by_the_next(
    tmp_path: Path, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    child_code = textwrap.dedent(
        f"""
        import asyncio, sys, time
        from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits
        sandbox = QuerySandbox(SandboxLimits(workers=1, timeout_s={WAIT_S}), store={str(store)!r})
        request = QueryRequest("ASK {{ ?s ?p ?o }}", ({GRAPH!r},), {JSON!r}, None)
        asyncio.run(sandbox.run("address:127.0.0.9", request, lambda graphs: b""))
        print(sandbox._all[0].folder, flush=True)
        time.sleep({WAIT_S})
        """
    )
    env = {**os.environ, "TMPDIR": str(temporary), "PYTHONPATH": str(REPO / "src")}
    child = subprocess.Popen(
        [sys.executable, "-c", child_code], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        assert child.stdout is not None
        checkpoint = Path(child.stdout.readline().strip())
        assert checkpoint.is_dir() and checkpoint.parent.parent == temporary
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    # Its worker ends with it (it reads the end of its socket pair); its folder stays.
    assert checkpoint.parent.is_dir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    sandbox = QuerySandbox(SandboxLimits(workers=1, timeout_s=WAIT_S), store=store)
    try:
        request = QueryRequest("ASK { ?s ?p ?o }", (GRAPH,), JSON, None)
        asyncio.run(sandbox.run("address:127.0.0.9", request, lambda graphs: b""))
        ours = sandbox._all[0].folder
        assert ours is not None and Path(ours).is_dir()
    finally:
        sandbox.close()
    assert not checkpoint.parent.exists()
