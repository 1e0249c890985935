"""``--store http(s)://…`` on the CLI: every read command against three SPARQL 1.1 engines a
user may put a brain on, giving the same cards as the folder the brain is in: a real
``oxigraph serve-read-only`` loaded with the brain's dump (by ``oxigraph load``, as a user
publishes one), both as an Oxigraph server's root and as a plain endpoint's address;
``ratified serve`` on the folder itself (its ``/sparql``); and OpenLink Virtuoso (Debian's
``virtuoso-opensource``) loaded with the same dump by its bulk loader."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from pyoxigraph import Literal, RdfFormat, parse

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


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def _running(server: subprocess.Popen[bytes], endpoint: str, name: str) -> Iterator[None]:
    """Wait until ``endpoint`` answers an ASK (``server`` started it), then stop the server
    once the block ends."""
    try:
        deadline = time.monotonic() + 300  # a hang guard, far above a loaded start
        while True:
            try:
                if httpx.get(endpoint, params={"query": "ASK {}"}, timeout=60).is_success:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{name} did not come up at {endpoint}")
            time.sleep(0.1)
        yield
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture(scope="module")
def dump(folder: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The brain's dump as N-Quads, alone in a folder of its own (as a bulk loader takes it)."""
    dump = tmp_path_factory.mktemp("dump") / "brain.nq"
    done = _ratified(
        "dump", "--store", str(folder), "--clearance", "restricted", "--format", "nquads",
        "--output", str(dump), env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return dump


@pytest.fixture(scope="module")
def oxigraph(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``oxigraph serve-read-only`` on a fresh folder that ``oxigraph load`` filled with the
    dump: the server's root URL."""
    binary = shutil.which("oxigraph")
    if binary is None:
        pytest.fail("The oxigraph command is missing: pip install oxigraph (a test extra).")
    location = tmp_path_factory.mktemp("oxigraph") / "data"
    loaded = subprocess.run(
        [binary, "load", "--location", str(location), "--file", str(dump)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert loaded.returncode == 0, loaded.stderr
    port = _free_port()
    server = subprocess.Popen(
        [binary, "serve-read-only", "--location", str(location), "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    with _running(server, f"{url}/query", "oxigraph serve-read-only"):
        yield url


@pytest.fixture(scope="module")
def served(folder: Path, env: dict[str, str]) -> Iterator[str]:
    """``ratified serve`` on the folder: its ``/sparql``, read as the anonymous reader."""
    port = _free_port()
    server = subprocess.Popen(
        [
            sys.executable, "-m", "ratified_rdf", "serve", "--store", str(folder),
            "--port", str(port), "--query-workers", "1",
            # Its queries must succeed: a roomy budget, not the 10 s a busy machine meets.
            "--query-timeout", "300",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    endpoint = f"http://127.0.0.1:{port}/sparql"
    with _running(server, endpoint, "ratified serve"):
        yield endpoint


_VIRTUOSO_INI = """\
[Database]
DatabaseFile = {db}/virtuoso.db
ErrorLogFile = {db}/virtuoso.log
LockFile = {db}/virtuoso.lck
TransactionFile = {db}/virtuoso.trx
xa_persistent_file = {db}/virtuoso.pxa
[TempDatabase]
DatabaseFile = {db}/virtuoso-temp.db
TransactionFile = {db}/virtuoso-temp.trx
[Parameters]
ServerPort = 127.0.0.1:{sql}
DisableUnixSocket = 1
DirsAllowed = ., {load}
NumberOfBuffers = 10000
MaxDirtyBuffers = 6000
[HTTPServer]
ServerPort = 127.0.0.1:{http}
ServerThreads = 4
[SPARQL]
ResultSetMaxRows = 1000000
"""


@pytest.fixture(scope="module")
def virtuoso(dump: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """OpenLink Virtuoso on a fresh database of its own, the dump loaded by its bulk loader
    (``ld_dir`` and ``rdf_loader_run``, which keep each quad's graph): its ``/sparql``."""
    binary, isql = shutil.which("virtuoso-t"), shutil.which("isql-vt")
    if binary is None or isql is None:
        pytest.fail(
            "Virtuoso is missing (virtuoso-t, isql-vt): apt-get install virtuoso-opensource "
            "(.ci/run installs it)."
        )
    base = tmp_path_factory.mktemp("virtuoso")
    (base / "db").mkdir()
    sql, http = _free_port(), _free_port()
    ini = base / "virtuoso.ini"
    ini.write_text(_VIRTUOSO_INI.format(db=base / "db", load=dump.parent, sql=sql, http=http))
    server = subprocess.Popen(
        [binary, "+foreground", "+configfile", str(ini)],
        cwd=base,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{http}/sparql"
    with _running(server, endpoint, "Virtuoso"):
        # A fresh database's administrator is dba, password dba; it listens on loopback only.
        load = (
            f"ld_dir('{dump.parent}', '{dump.name}', 'urn:ratified-rdf:no-graph'); "
            "rdf_loader_run(); checkpoint; "
            "SELECT COUNT(*) FROM DB.DBA.LOAD_LIST WHERE ll_state <> 2 OR ll_error IS NOT NULL;"
        )
        loaded = subprocess.run(
            [isql, f"127.0.0.1:{sql}", "dba", "dba", f"exec={load}"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert loaded.returncode == 0, loaded.stdout + loaded.stderr
        yield endpoint


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


ENGINES = ["oxigraph root", "oxigraph endpoint", "ratified serve", "virtuoso"]
"""The stores the read commands are run against: an Oxigraph server by its root and by its
endpoint's address, ``ratified serve``'s ``/sparql`` and Virtuoso's."""


@pytest.fixture(params=ENGINES)
def store(request: pytest.FixtureRequest) -> str:
    """The ``--store`` URL of one engine holding the brain. The pigeon brain's graphs are all
    public, so ``ratified serve``'s anonymous reader sees what the dump holds."""
    if request.param.startswith("oxigraph"):
        root: str = request.getfixturevalue("oxigraph")
        return root if request.param == "oxigraph root" else f"{root}/query"
    url: str = request.getfixturevalue(
        "served" if request.param == "ratified serve" else "virtuoso"
    )
    return url


def test_ask_against_a_server_gives_the_folders_card(
    folder_cards: dict[str, dict], store: str, env: dict[str, str]
) -> None:
    for question, here in folder_cards.items():
        there = _card(store, question, env)
        assert there["verdict"] == here["verdict"] and there["summary"] == here["summary"]
        assert there["evidence"] == here["evidence"] and there["results"] == here["results"]
        assert [(q["name"], q["rows"]) for q in there["queries"]] == [
            (q["name"], q["rows"]) for q in here["queries"]
        ]


def _read(store: str, query: Path, env: dict[str, str]) -> tuple[str, str, set[str]]:
    """What ``query``, ``validate`` and ``dump`` print for ``store``."""
    done = _ratified(
        "query", str(query), "--store", store, "--clearance", "restricted", "--json", env=env
    )
    assert done.returncode == 0, done.stderr
    checked = _ratified("validate", "--store", store, "--clearance", "restricted", env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    dumped = _ratified(
        "dump", "--store", store, "--clearance", "restricted", "--format", "nquads", env=env
    )
    assert dumped.returncode == 0, dumped.stderr
    return done.stdout, checked.stdout, set(dumped.stdout.splitlines())


@pytest.fixture(scope="module")
def folder_reads(
    folder: Path, env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, tuple[str, str, set[str]]]:
    """A query file, and what the read commands print for the folder."""
    query = tmp_path_factory.mktemp("query") / "count.rq"
    query.write_text("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }\n")
    return query, _read(str(folder), query, env)


def test_the_other_read_commands_take_a_url(
    folder_reads: tuple[Path, tuple[str, str, set[str]]], store: str, env: dict[str, str]
) -> None:
    query, here = folder_reads
    counted, checked, dumped = _read(store, query, env)
    assert counted == here[0] and checked == here[1]
    # The same quads, the catalog's among them (its graph holds the reader's view of it).
    assert _by_value(dumped) == _by_value(here[2]), sorted(dumped ^ here[2])
    assert any("/catalog>" in line for line in dumped)


_DATE_TIME = "http://www.w3.org/2001/XMLSchema#dateTime"


def _by_value(lines: set[str]) -> set[tuple[str, str, str, str]]:
    """Dumped quads with each ``xsd:dateTime`` as its value: Virtuoso writes some times with
    trailing zeros of the fraction dropped (``.900`` for ``.900000``), the same time in
    another lexical form."""
    out = set()
    for quad in parse("\n".join(lines).encode(), RdfFormat.N_QUADS):
        value = quad.object
        term = str(value)
        if isinstance(value, Literal) and value.datatype.value == _DATE_TIME:
            term = datetime.fromisoformat(value.value.replace("Z", "+00:00")).isoformat()
        out.add((str(quad.subject), str(quad.predicate), term, str(quad.graph_name)))
    return out


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
