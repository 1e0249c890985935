"""One brain, many users, for real: ``ratified serve``, two MCP servers and three ``ratified
ask`` processes on one store folder at once, and a rebuild by another process that the running
server serves without a restart. Every process here is a separate program, as a user runs them."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest
import rdflib
from mcp.client.session import ClientSession
from mcp.client.stdio import stdio_client
from rdflib.namespace import RDF, Namespace
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import JSON, SPARQLWrapper

from ratified_rdf import Brain
from ratified_rdf.audit import PUBLIC_KEY_FILE, audit_dir, load_public_key, verify_log
from tests.mcp.conftest import server_parameters
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "what does the graph hold?"
SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"


def _ratified(*args: str) -> list[str]:
    return [sys.executable, "-m", "ratified_rdf", *args]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, Path]:
    """A pigeon brain built on disk by the CLI, and its source repository."""
    repo = make_pigeon_repo(tmp_path / "git")
    store = tmp_path / "brain"
    done = subprocess.run(
        _ratified("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return store, repo


@contextmanager
def _serving(store: Path) -> Iterator[str]:
    """``ratified serve`` on ``store`` in its own process, stopped (SIGTERM) afterwards."""
    port = _free_port()
    process = subprocess.Popen(
        _ratified(
            "serve",
            "--store",
            str(store),
            "--port",
            str(port),
            "--query-workers",
            "1",
            # The queries here must succeed: a roomy budget, not the 10 s a busy machine meets.
            "--query-timeout",
            "300",
        ),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300  # a hang guard: far above a loaded machine's start
    while True:
        if process.poll() is not None:
            raise AssertionError(f"ratified serve stopped: {process.stderr.read()}")  # type: ignore[union-attr]
        try:
            if httpx.get(f"{base}/api/holdings", timeout=60).is_success:
                break
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError("ratified serve did not answer within five minutes")
        time.sleep(0.2)
    try:
        yield base
    finally:
        process.terminate()
        try:
            code = process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()  # not left running past the test, whatever failed
            process.wait()
            raise
        assert code == 0


def _runs_served(base: str, runs: set[str]) -> set[str]:
    """Which of ``runs`` name graphs the server's anonymous reader reads."""
    response = httpx.get(
        f"{base}/sparql",
        params={"query": GRAPHS},
        headers={"Accept": "application/sparql-results+json"},
        timeout=120,
    )
    response.raise_for_status()
    names = [b["g"]["value"] for b in response.json()["results"]["bindings"]]
    return {run for run in runs if any(f"/{run}/" in name for name in names)}


def _current_run(store: Path) -> str:
    with Brain.open(store) as brain:
        return next(r for r in brain.scope.runs if r.current).run_id


def _ask_by_cli(store: Path) -> dict:
    done = subprocess.run(
        _ratified("ask", QUESTION, "--store", str(store), "--json"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.slow
def test_a_server_two_mcp_servers_and_three_readers_share_one_store(
    built: tuple[Path, Path],
) -> None:
    store, repo = built
    with _serving(store) as server:
        _standard_clients(server)
        _share_and_rebuild(store, repo, server)
    # Every process wrote to one audit log; once they have all stopped it verifies whole.
    log = audit_dir(store)
    report = verify_log(log, load_public_key(log / PUBLIC_KEY_FILE))
    assert report.ok, report
    kinds = [json.loads(line).get("kind") for line in (log / "records.jsonl").open()]
    assert kinds.count("ask") >= 8  # the server twice, two MCP servers, three CLI readers...


def _standard_clients(server: str) -> None:
    """curl, SPARQLWrapper and rdflib's SPARQLStore against the real command's server."""
    described = subprocess.run(
        ["curl", "-sf", "-H", "Accept: text/turtle", f"{server}/sparql"],
        capture_output=True,
        timeout=60,
    )
    assert described.returncode == 0, described.stderr
    service = rdflib.Graph().parse(data=described.stdout, format="turtle")
    assert (None, RDF.type, SD.Service) in service
    named = set(service.objects(None, SD.name))
    assert named, "the service description names no graph"
    default = subprocess.run(
        ["curl", "-sf", "-H", "Accept: application/n-triples", f"{server}/sparql?default"],
        capture_output=True,
        timeout=60,
    )
    assert default.returncode == 0, default.stderr
    lines = {line for line in default.stdout.decode().splitlines() if line.strip()}
    everything = rdflib.Graph(store=SPARQLStore(f"{server}/sparql"))
    assert len(set(everything)) == len(lines) > 0
    wrapper = SPARQLWrapper(f"{server}/sparql")
    wrapper.setQuery("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
    wrapper.setReturnFormat(JSON)
    counted = wrapper.queryAndConvert()["results"]["bindings"][0]["n"]["value"]  # type: ignore[index,call-overload]
    assert int(counted) >= len(lines)  # a triple in two graphs counts twice in the union


def _share_and_rebuild(store: Path, repo: Path, server: str) -> None:
    served = httpx.get(f"{server}/api/ask", params={"q": QUESTION}, timeout=60).json()

    async def with_two_mcp_servers() -> tuple[list[dict], list[str]]:
        async with (
            stdio_client(server_parameters(store)) as (read1, write1),
            ClientSession(read1, write1) as first,
            stdio_client(server_parameters(store)) as (read2, write2),
            ClientSession(read2, write2) as second,
        ):
            await first.initialize()
            await second.initialize()
            # Three CLI readers at once, while both MCP servers and the server hold the store.
            with ThreadPoolExecutor(3) as pool:
                cards = await anyio.to_thread.run_sync(
                    lambda: list(pool.map(_ask_by_cli, [store] * 3))
                )
            summaries = []
            for session in (first, second):
                result = await session.call_tool("ask", {"question": QUESTION})
                assert not result.is_error, result.content
                assert result.structured_content is not None
                summaries.append(result.structured_content["summary"])
            return cards, summaries

    cards, mcp_summaries = anyio.run(with_two_mcp_servers)
    assert {card["summary"] for card in cards} == {served["summary"]}
    assert set(mcp_summaries) == {served["summary"]}

    # A rebuild by another process becomes what the running server serves, no restart.
    before = _current_run(store)
    assert _runs_served(server, {before}) == {before}
    done = subprocess.run(
        _ratified("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    after = _current_run(store)
    assert after != before
    assert _runs_served(server, {before, after}) == {after}
    again = httpx.get(f"{server}/api/ask", params={"q": QUESTION}, timeout=60).json()
    assert again["summary"] == served["summary"]  # the same sources give the same card
