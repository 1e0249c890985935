"""No orphans: a `ratified build` killed with SIGKILL while its SHACL gate workers run, and a
`ratified serve` killed while a query worker runs a query, leave no process of theirs behind
(the fork server, its gate workers, multiprocessing's resource tracker, the query workers).

Each killed process is started with an environment variable of its own, which every process
it starts inherits (forked, or started from its environment): after the kill, a process
holding it is one of ours, whoever its parent has become. A child that is still there is
given a generous while to go (the kernel kills it at once; a process that exits on its own
when its pipe closes needs the CPU for a moment), so a busy machine does not fail the test.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.pigeon import MANIFEST, make_pigeon_repo

pytestmark = pytest.mark.slow  # five builds and five servers, each killed

TRIALS = 5
LINEAGE = "RATIFIED_TEST_LINEAGE"
"""The variable that marks a killed process's descendants."""
GONE_WITHIN_S = 60.0
"""How long the processes of a killed one may take to go: far above the moment it takes."""
STARTS_WITHIN_S = 300.0
"""How long a process may take to reach what a test waits for (a build's gate workers running,
a server answering, a worker computing): a hang guard, far above what a loaded machine takes."""
FOREVER = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
"""A query no machine finishes on the Pigeon brain: its worker computes until it is killed."""


def _processes_marked(mark: str) -> dict[int, str]:
    """Every process, alive and not a zombie, whose environment holds ``mark``: its command
    line by process id."""
    needle = f"{LINEAGE}={mark}".encode()
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as environ:  # a zombie's is empty
                if needle not in environ.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                found[int(entry)] = cmdline.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # it ended meanwhile, or is not ours to read
            continue
    return found


def _cpu_ticks(pid: int) -> int:
    """The CPU time ``pid`` has used (user and system), in clock ticks; 0 once it has gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def _wait_for(what: str, found: Callable[[], bool], alive: subprocess.Popen[bytes]) -> None:
    """Poll until ``found()``, while ``alive`` runs; fail saying ``what`` never happened."""
    deadline = time.monotonic() + STARTS_WITHIN_S
    while not found():
        if alive.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"{what} never happened (the process exited {alive.poll()}).")
        time.sleep(0.005)


_ATTEMPTS = 5
"""How many builds a trial starts, at most, to catch one while its gate workers run."""


def _caught(found: Callable[[], bool], alive: subprocess.Popen[bytes]) -> bool:
    """Poll until ``found()`` (True), or until ``alive`` has ended without it (False)."""
    deadline = time.monotonic() + STARTS_WITHIN_S
    while not found():
        if alive.poll() is not None:
            return found()
        if time.monotonic() > deadline:
            pytest.fail(f"Nothing was found within {STARTS_WITHIN_S:g} s while it ran.")
        time.sleep(0.005)
    return True


def _left_after_kill(process: subprocess.Popen[bytes], mark: str) -> dict[int, str]:
    """SIGKILL ``process``; the processes of its lineage still alive after a generous while."""
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + GONE_WITHIN_S
    while (left := _processes_marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@pytest.fixture()
def lineages() -> Iterator[Callable[[], dict[str, str]]]:
    """A fresh environment for each process to kill, with a mark of its own; what a test
    leaves running is killed at the end (by process id, this test's processes only)."""
    marks: list[str] = []

    def fresh() -> dict[str, str]:
        marks.append(uuid.uuid4().hex)
        return {**os.environ, LINEAGE: marks[-1]}

    yield fresh
    for mark in marks:
        for pid in _processes_marked(mark):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


def _build(store: Path, repo: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    command = ["build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet"]
    return subprocess.Popen(
        [sys.executable, "-m", "ratified_rdf", *command],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )


def test_a_build_killed_while_its_gate_workers_run_leaves_no_process(
    repo: Path, tmp_path: Path, lineages: Callable[[], dict[str, str]]
) -> None:
    # The gate workers the CLI's build starts afresh: forked by multiprocessing's fork server,
    # a process of the build's own, which used to outlive it with them.
    for trial in range(TRIALS):
        # Its gate workers run for a while only; on a busy machine the look for them may come
        # after they have gone, and the build ends. Then another build, until one is caught
        # with them running: what is checked is what a kill then leaves, never a duration.
        for attempt in range(_ATTEMPTS):
            env = {**lineages(), "RATIFIED_GATE_FRESH_WORKERS": "1"}
            build = _build(tmp_path / f"brain-{trial}-{attempt}", repo, env)
            if _caught(_workers_run(env[LINEAGE]), build):
                break
        else:
            pytest.fail(f"{_ATTEMPTS} builds ended before their gate workers were seen running.")
        running = _processes_marked(env[LINEAGE])
        left = _left_after_kill(build, env[LINEAGE])
        assert left == {}, (
            f"trial {trial}: the killed build left {len(left)} of its {len(running)} "
            f"processes running: {left}"
        )


def _workers_run(mark: str) -> Callable[[], bool]:
    def run() -> bool:
        marked = _processes_marked(mark).values()
        # The server, and at least one worker it forked (which keeps its command line).
        return sum("multiprocessing.forkserver" in line for line in marked) >= 2

    return run


@pytest.fixture(scope="module")
def pigeon_store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("served") / "brain"
    assert _build(store, repo, dict(os.environ)).wait(timeout=300) == 0
    return store


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def test_a_server_killed_while_a_query_worker_runs_leaves_no_process(
    pigeon_store: Path, lineages: Callable[[], dict[str, str]]
) -> None:
    for trial in range(TRIALS):
        env = lineages()
        base = f"http://127.0.0.1:{_free_port()}"
        command = ["serve", "--store", str(pigeon_store), "--port", base.rsplit(":", 1)[1]]
        server = subprocess.Popen(
            [sys.executable, "-m", "ratified_rdf", *command, "--query-timeout", "3600"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        # The server warms its workers (one or more) and the first query is answered; then
        # they idle.
        _wait_for("An answer from the server", _answers(base), server)
        workers = [p for p, line in _processes_marked(env[LINEAGE]).items() if "sandbox" in line]
        assert workers, "the server started no query worker"
        idle = {worker: _cpu_ticks(worker) for worker in workers}
        threading.Thread(target=_ask_forever, args=(base,), daemon=True).start()
        # A worker that is computing, not waiting for its next query, is one that would not
        # notice the server's end by itself.
        _wait_for(
            "A worker running the query",
            _any_computing(idle),
            server,
        )
        running = _processes_marked(env[LINEAGE])
        left = _left_after_kill(server, env[LINEAGE])
        assert left == {}, (
            f"trial {trial}: the killed server left {len(left)} of its {len(running)} "
            f"processes running: {left}"
        )


def _answers(base: str) -> Callable[[], bool]:
    def answered() -> bool:
        try:
            reply = httpx.get(f"{base}/sparql", params={"query": "ASK {}"}, timeout=60)
        except httpx.HTTPError:
            return False
        return reply.status_code == 200

    return answered


def _ask_forever(base: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server is killed under it
        httpx.get(f"{base}/sparql", params={"query": FOREVER}, timeout=STARTS_WITHIN_S)


def _any_computing(idle: dict[int, int]) -> Callable[[], bool]:
    """Whether any of the processes ``idle`` holds (with their idle CPU ticks) computes."""
    return lambda: any(_computing(pid, ticks)() for pid, ticks in idle.items())


def _computing(pid: int, idle: int) -> Callable[[], bool]:
    """Whether ``pid`` has used a second of CPU more than the ``idle`` ticks."""
    return lambda: _cpu_ticks(pid) > idle + os.sysconf("SC_CLK_TCK")
