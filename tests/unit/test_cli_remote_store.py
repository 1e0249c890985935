"""``--store http(s)://…`` on the CLI: every read command against a real ``oxigraph serve``
loaded with a brain's dump (by ``oxigraph load``, as a user publishes one), both as an
Oxigraph server's root and as a plain SPARQL 1.1 endpoint's address, giving the same cards as
the folder the dump came from."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result

from ratified_rdf.surfaces.cli import main
from tests.pigeon import MANIFEST, make_pigeon_repo

# A real oxigraph server and a ratified process per command: minutes, not seconds.
pytestmark = pytest.mark.slow

QUESTIONS = [
    "who discussed RFC 9999 section 3.1?",
    "why does the take-off rule look like this?",
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
]


def _ratified(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """The command line as a user types it: a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "ratified_rdf", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _command(*args: str, env: dict[str, str]) -> Result:
    """The same command in this process (the same parsing and code, without a second's
    start-up for each of the many runs here)."""
    return CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment, with remote stores' audit logs kept in a folder of the test's."""
    return {**os.environ, "XDG_STATE_HOME": str(tmp_path_factory.mktemp("state"))}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, env: dict[str, str]) -> Path:
    base = tmp_path_factory.mktemp("remote-cli")
    repo = make_pigeon_repo(base / "git")
    store = base / "brain"
    done = _ratified(
        "build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet", env=env
    )
    assert done.returncode == 0, done.stderr
    return store


@pytest.fixture(scope="module")
def oxigraph(
    folder: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """``oxigraph serve`` on a fresh folder that ``oxigraph load`` filled with the dump."""
    binary = shutil.which("oxigraph")
    if binary is None:
        pytest.fail("The oxigraph command is missing: pip install oxigraph (a test extra).")
    base = tmp_path_factory.mktemp("oxigraph")
    dump = base / "brain.nq"
    done = _ratified(
        "dump", "--store", str(folder), "--clearance", "restricted", "--format", "nquads",
        "--output", str(dump), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    location = base / "data"
    loaded = subprocess.run(
        [binary, "load", "--location", str(location), "--file", str(dump)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/query", params={"query": "ASK {}"}, timeout=1).is_success:
                break
        except httpx.HTTPError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.fail(f"oxigraph serve-read-only did not come up at {url}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)


def _card(store: str, question: str, env: dict[str, str]) -> dict:
    done = _ratified(
        "ask", question, "--store", store, "--json", "--clearance", "restricted", env=env
    )
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    # The engine's time is the one thing that differs between two engines.
    for query in card["queries"]:
        query.pop("engine_ms")
    return card


def test_ratified_ask_with_a_url_as_typed(folder: Path, oxigraph: str, env: dict[str, str]) -> None:
    question = QUESTIONS[1]
    done = _ratified("ask", question, "--store", oxigraph, "--json", env=env)
    assert done.returncode == 0, done.stderr
    there = json.loads(done.stdout)
    here = json.loads(_command("ask", question, "--store", str(folder), "--json", env=env).stdout)
    assert there["summary"] == here["summary"] and there["evidence"] == here["evidence"]


@pytest.fixture(scope="module")
def folder_cards(folder: Path, env: dict[str, str]) -> dict[str, dict]:
    return {question: _card(str(folder), question, env) for question in QUESTIONS}


@pytest.mark.parametrize("form", ["server root", "endpoint address"])
def test_ask_against_a_server_gives_the_folders_card(
    folder_cards: dict[str, dict], oxigraph: str, env: dict[str, str], form: str
) -> None:
    store = oxigraph if form == "server root" else f"{oxigraph}/query"
    for question, here in folder_cards.items():
        there = _card(store, question, env)
        assert there["verdict"] == here["verdict"] and there["summary"] == here["summary"]
        assert there["evidence"] == here["evidence"] and there["results"] == here["results"]
        assert [(q["name"], q["rows"]) for q in there["queries"]] == [
            (q["name"], q["rows"]) for q in here["queries"]
        ]


def test_the_other_read_commands_take_a_url(
    folder: Path, oxigraph: str, env: dict[str, str], tmp_path: Path
) -> None:
    query = tmp_path / "count.rq"
    query.write_text("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n")
    counts = []
    for store in (str(folder), oxigraph, f"{oxigraph}/query"):
        done = _ratified(
            "query", str(query), "--store", store, "--clearance", "restricted", "--json", env=env
        )
        assert done.returncode == 0, done.stderr
        counts.append(done.stdout)
        checked = _ratified("validate", "--store", store, "--clearance", "restricted", env=env)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        dumped = _ratified(
            "dump", "--store", store, "--clearance", "restricted", "--format", "nquads", env=env
        )
        assert dumped.returncode == 0, dumped.stderr
        counts.append(str(len(set(dumped.stdout.splitlines()))))
    assert counts[0::2] == [counts[0]] * 3 and counts[1::2] == [counts[1]] * 3


@pytest.mark.parametrize(
    ("given", "says"),
    [
        ("http://", "names no host"),
        ("ftp://example.org/sparql", "a store is a folder, or an http:// or https:// SPARQL"),
    ],
)
def test_a_store_that_is_no_folder_or_http_url_is_refused(
    given: str, says: str, env: dict[str, str]
) -> None:
    done = CliRunner().invoke(main, ["ask", "what does the graph hold?", "--store", given], env=env)
    assert done.exit_code == 2 and says in done.output
