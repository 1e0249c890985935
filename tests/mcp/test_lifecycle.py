"""Starting and stopping the server: a rejected reader never starts it, and however it stops
(the client closes stdin, or SIGTERM) the brain is closed and the audit log's tree head signed.

These speak raw JSON-RPC lines over the pipes, so they see exactly when the process exits.
"""

from __future__ import annotations

import codecs
import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
from click.testing import CliRunner

from ratified_rdf.audit import audit_dir
from ratified_rdf.surfaces.mcp_server import CLIENT_GONE, SERVER_STOPPED, mcp_command
from ratified_rdf.trust import TENANT_ID_MESSAGES, TenantIdRule
from tests.mcp.conftest import SERVER_MODULE, audit_entries, roomy, tree_heads

HOSTILE_TENANTS = [
    (TenantIdRule.PATH_SEPARATOR, "../../../../etc/passwd"),
    (TenantIdRule.LOOK_ALIKE, codecs.decode("a\\uff0fb", "unicode_escape")),
    (TenantIdRule.SHAPE, "Acme-Corp"),
]


def _start(store: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", SERVER_MODULE, "--store", str(store), *roomy(extra)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _send(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write(json.dumps(message).encode() + b"\n")
    process.stdin.flush()


def _receive(stdout: IO[bytes], timeout: float = 120) -> dict[str, Any]:
    ready, _, _ = select.select([stdout], [], [], timeout)
    assert ready, f"the server sent nothing within {timeout} s"
    return json.loads(stdout.readline())


def _initialise(process: subprocess.Popen[bytes]) -> None:
    """The MCP handshake; once it is answered the server is serving (handlers installed)."""
    assert process.stdout is not None
    _send(
        process,
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "lifecycle-test", "version": "0"},
            },
        },
    )
    reply = _receive(process.stdout)
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "ratified-rdf"
    _send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})


def _ask(process: subprocess.Popen[bytes], question: str) -> dict[str, Any]:
    assert process.stdout is not None
    _send(
        process,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": question}},
        },
    )
    reply = _receive(process.stdout)
    assert reply["id"] == 2 and not reply["result"].get("isError"), reply
    return reply["result"]["structuredContent"]


def _assert_closed_and_signed(store: Path, heads_before: int, question: str) -> None:
    entries = audit_entries(store)
    asks = [e for e in entries if e.get("kind") == "ask" and e["actor"] == "mcp"]
    assert asks and asks[-1]["subject"]["question"] == question
    heads = tree_heads(store)
    # A periodic head may be signed while the call runs (a slow machine): the last one is
    # what the closing signed, over every record.
    assert len(heads) > heads_before
    assert heads[-1]["tree_size"] == len(entries)


def test_a_hostile_tenant_stops_the_server_process_with_the_fixed_sentence(
    pigeon_store: Path,
) -> None:
    rule, tenant = HOSTILE_TENANTS[0]
    before = (audit_dir(pigeon_store) / "records.jsonl").read_bytes()
    done = subprocess.run(
        [sys.executable, "-m", SERVER_MODULE, "--store", str(pigeon_store), "--tenant", tenant],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip() == f"Error: {TENANT_ID_MESSAGES[rule]}"
    assert tenant not in done.stderr
    # Rejected before anything was opened: not even an audit record was written.
    assert (audit_dir(pigeon_store) / "records.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    ("rule", "tenant"), HOSTILE_TENANTS[1:], ids=[r for r, _ in HOSTILE_TENANTS[1:]]
)
def test_the_command_never_echoes_a_hostile_tenant(
    pigeon_store: Path, rule: TenantIdRule, tenant: str
) -> None:
    result = CliRunner().invoke(mcp_command, ["--store", str(pigeon_store), "--tenant", tenant])
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: {TENANT_ID_MESSAGES[rule]}"
    assert tenant not in result.output


def test_a_missing_store_stops_the_server_with_what_to_do(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = CliRunner().invoke(mcp_command, ["--store", str(missing)])
    assert result.exit_code == 2
    assert result.output.startswith(f"Error: There is no brain at {missing}.")
    assert "ratified build" in result.output


def test_an_empty_actor_stops_the_server(pigeon_store: Path) -> None:
    result = CliRunner().invoke(mcp_command, ["--store", str(pigeon_store), "--actor", " "])
    assert result.exit_code == 2
    assert result.output.startswith("Error: --actor must name who is asking")


def test_closing_stdin_closes_the_brain_and_signs_a_tree_head(pigeon_store: Path) -> None:
    heads_before = len(tree_heads(pigeon_store))
    process = _start(pigeon_store)
    try:
        _initialise(process)
        question = "history of RFC 9999 section 3.1"
        assert _ask(process, question)["verdict"] == "answered"
        assert process.stdin is not None
        process.stdin.close()
        # Nothing but EOF tells it to stop (no signal is sent); the bound only keeps a hung
        # server from hanging the suite, so it is generous for a loaded CI machine.
        assert process.wait(timeout=120) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    _assert_closed_and_signed(pigeon_store, heads_before, question)


def test_sigterm_closes_the_brain_and_signs_a_tree_head(pigeon_store: Path) -> None:
    heads_before = len(tree_heads(pigeon_store))
    process = _start(pigeon_store)
    try:
        _initialise(process)
        question = "who discussed RFC 9999 section 3.1?"
        assert _ask(process, question)["verdict"] == "answered"
        # stdin stays open: the server is waiting for the next message when it is told to stop.
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=120) == 0  # a hang guard, as above
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdin is not None:
            process.stdin.close()
    _assert_closed_and_signed(pigeon_store, heads_before, question)


# --- a query running when the call is cancelled, stdin closes, or SIGTERM comes -------------

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
"""A cartesian product of every triple with itself, twice: billions of rows to count, in
little memory, so only the query's deadline or its caller can end it."""

SMALL = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"

_SANDBOX_MODULE = "ratified_rdf.queries.sandbox"
_GUARD_S = 300
"""How long a test waits for something it expects, so a broken server fails the test instead
of hanging the suite; far above what any of it takes on a loaded machine."""


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, or None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rpartition(")")[2].split()


def _query_workers(parent: int) -> list[int]:
    """The query sandbox's worker processes that ``parent`` started and that still run."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat(int(entry.name))
        if fields is None or fields[0] == "Z" or int(fields[1]) != parent:
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if _SANDBOX_MODULE.encode() in command:
            found.append(int(entry.name))
    return found


def _cpu_seconds(pid: int) -> float:
    fields = _stat(pid)
    if fields is None:
        return 0.0
    # utime and stime, fields 14 and 15 of stat; the list starts at field 3.
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _wait_for(condition: Callable[[], bool], what: str) -> None:
    waited = 0.0
    while not condition():
        assert waited < _GUARD_S, f"{what} did not happen within {_GUARD_S} s"
        time.sleep(0.05)
        waited += 0.05


def _gone(pid: int) -> bool:
    fields = _stat(pid)
    return fields is None or fields[0] == "Z"


def _start_runaway(process: subprocess.Popen[bytes], request_id: int) -> int:
    """Call the sparql tool with :data:`RUNAWAY`; return its worker's pid once that worker
    has spent a few CPU seconds, so the query itself is running, not the worker's start."""
    _send(
        process,
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "sparql", "arguments": {"query": RUNAWAY}},
        },
    )
    workers: list[int] = []

    def started() -> bool:
        workers[:] = _query_workers(process.pid)
        return bool(workers)

    _wait_for(started, "a query worker starting")
    (worker,) = workers
    _wait_for(lambda: _cpu_seconds(worker) >= 3, "the worker running the query")
    return worker


def test_cancelling_a_call_ends_its_query_worker_and_later_calls_work(
    pigeon_store: Path,
) -> None:
    process = _start(pigeon_store, "--query-timeout", "600")
    try:
        _initialise(process)
        worker = _start_runaway(process, 3)
        _send(
            process,
            {
                "jsonrpc": "2.0",
                "method": "notifications/cancelled",
                "params": {"requestId": 3, "reason": "the agent changed its mind"},
            },
        )
        _wait_for(lambda: _gone(worker), "the cancelled query's worker ending")
        _send(
            process,
            {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "sparql", "arguments": {"query": SMALL}},
            },
        )
        assert process.stdout is not None
        reply = _receive(process.stdout)
        # A cancelled request gets no response: the next one is the later call's.
        assert reply["id"] == 4 and not reply["result"].get("isError"), reply
        assert len(reply["result"]["structuredContent"]["rows"]) == 1
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=_GUARD_S) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # The client cancelled, and is still there: the record says so, not that it went away.
    entries = audit_entries(pigeon_store)
    queries = [e for e in entries if e.get("kind") == "query" and e["actor"] == "mcp"]
    runaway = [e for e in queries if e["subject"].get("sparql") == RUNAWAY][-1]
    (outcome,) = [e for e in entries if e.get("annotates") == runaway["id"]]
    assert (outcome["outcome"], outcome["error_class"]) == ("failed", "CancelledError")


def test_closing_stdin_while_a_query_runs_ends_the_server_and_its_worker(
    pigeon_store: Path,
) -> None:
    heads_before = len(tree_heads(pigeon_store))
    process = _start(pigeon_store, "--query-timeout", "600")
    try:
        _initialise(process)
        worker = _start_runaway(process, 3)
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(timeout=_GUARD_S) == 0
        _wait_for(lambda: _gone(worker), "the worker ending with the server")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # Closed, not killed: the brain signed a last tree head, over the query's records too.
    heads = tree_heads(pigeon_store)
    # A periodic head may be signed while the call runs (a slow machine): the last one is
    # what the closing signed, over every record.
    assert len(heads) > heads_before
    assert heads[-1]["tree_size"] == len(audit_entries(pigeon_store))
    _assert_the_query_ended(pigeon_store, CLIENT_GONE)


def test_sigterm_while_a_query_runs_ends_the_server_and_its_worker(pigeon_store: Path) -> None:
    heads_before = len(tree_heads(pigeon_store))
    process = _start(pigeon_store, "--query-timeout", "600")
    try:
        _initialise(process)
        worker = _start_runaway(process, 3)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=_GUARD_S) == 0
        _wait_for(lambda: _gone(worker), "the worker ending with the server")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdin is not None:
            process.stdin.close()
    heads = tree_heads(pigeon_store)
    assert len(heads) > heads_before  # a periodic head may come first on a slow machine
    assert heads[-1]["tree_size"] == len(audit_entries(pigeon_store))
    _assert_the_query_ended(pigeon_store, SERVER_STOPPED)


def _assert_the_query_ended(store: Path, reason: str) -> None:
    """The runaway's audit record (the latest query) has its outcome: ended for ``reason``."""
    entries = audit_entries(store)
    query = [e for e in entries if e.get("kind") == "query" and e["actor"] == "mcp"][-1]
    assert query["subject"]["sparql"] == RUNAWAY
    outcomes = [e for e in entries if e.get("annotates") == query["id"] and e["type"] == "outcome"]
    assert [(o["outcome"], o["error"]) for o in outcomes] == [("failed", reason)]
