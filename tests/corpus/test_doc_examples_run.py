"""Every shell example of README.md and docs/*.md runs as written, on the real TLS corpus.

The examples run through ``bash`` in a scratch copy of the repository's root (its folders
linked, ``records/`` copied since ``fetch`` writes there, ``../shared`` beside it), with
``ratified`` on the PATH running this checkout's code and a home of the test's own, so
``./brain``, ``dump.nt`` and ``~/.config`` land in a temporary folder, never in the checkout.
Only the environment changes, never the example:

* the quick start's build runs once and every later example reads its ``./brain``; an example
  shown twice runs once;
* a server (``ratified serve``, a line ending in ``&``) runs in the background until the end of
  its block, the ``curl`` lines beside it asking it, and is then stopped; client lines shown
  without their server ask the one the README starts;
* ports and folders outside the checkout the docs name are swapped for free ports and
  temporary folders (:data:`SWAPS`), so runs side by side do not collide;
* the IETF's services are a loopback fake (``RATIFIED_ONLINE_BASE``, docs/building.md);
* the reader set ``RATIFIED_AUDIT_KEY`` as docs/trust.md says, so its key exists.

The few examples that cannot run unchanged are in :data:`NOT_RUN`, each with its reason. An
example must exit 0 and, where the docs show what it prints, print it (:data:`SHOWN`).
"""

from __future__ import annotations

import functools
import http.server
import io
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from ratified_rdf._forked import die_with
from tests.conftest import require_corpus
from tests.doc_examples import ROOT, Block, blocks, is_synopsis

pytestmark = pytest.mark.corpus

QUICK_START_BUILD = (
    "ratified build records/tls13 --source ../shared/corpus/tls13-spec/tls13-spec.bundle"
)

README_SERVER = "ratified serve --store brain --port 8000"

NOT_RUN: dict[str, str] = {
    "pip install": "installs into the environment the tests run in; they run the checkout's code",
    "bash .ci/run": "is the whole CI, which runs this test",
    "ratified build records/tls13  ": (
        "clones https://github.com/tlswg/tls13-spec over the network; the bundle line below it "
        "builds the same repository"
    ),
    "ratified init https://github.com/": (
        "clones from GitHub over the network; tests/corpus/test_init_corpus.py runs init on the "
        "QUIC bundle"
    ),
    "ratified build records/tlswg --source ../shared/corpus ": (
        "builds every member of the TLS working group, many times the quick start's build; the "
        "one-member line beside it runs"
    ),
    "ratified fetch datatracker": (
        "its fake would have to serve the Datatracker's API for draft-ietf-tls-tls13; "
        "tests/unit/test_online.py drives the client with fictional fixtures"
    ),
}
"""Examples (by how their command starts) that do not run here, and why."""

SWAPS: tuple[tuple[str, str], ...] = (
    ("/tmp/tls-oxigraph", "{scratch}/tls-oxigraph"),
    ("/mnt/other-disk/witness", "{scratch}/witness"),
    ("127.0.0.1:8000", "127.0.0.1:{port8000}"),
    ("--port 8000", "--port {port8000}"),
    ("127.0.0.1:7878", "127.0.0.1:{port7878}"),
    # The queries of the client lines must succeed: a roomy budget, not the 10 s default that
    # a busy machine (this tier runs beside the others in CI) meets. An example that sets its
    # own gives it later on the line, and that one counts.
    ("ratified serve ", "ratified serve --query-timeout 300 "),
)
"""Ports and folders outside the checkout the docs name, and what they become here; and the
query budget of the servers the examples start."""

SHOWN: dict[str, str] = {
    'ratified ask "what did section 4.2.9 of draft-ietf-tls-tls13-21': "4.2.10",
    'ratified ask --json "how did the IESG vote': "The graph doesn't know",
    'ratified ask "why does early data work this way?"': "4.2.10",
    "curl -s http://127.0.0.1:{port8000}/sparql": "8446",
    "ratified ask --store http://127.0.0.1:{port7878}": "Early Data Indication",
    "ratified fetch rfc 9147": "now names it",
    "ratified fetch mail tls": "2017-01.mbox",
}
"""What an example prints (a key line of it), by how the example starts."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class _FakeIetf(http.server.BaseHTTPRequestHandler):
    """The RFC Editor, the drafts' archive and the mail archive, as ``RATIFIED_ONLINE_BASE``
    asks them (``/<host>/<path>``): fictional texts under the names the docs fetch."""

    files: ClassVar[dict[str, bytes]] = {}

    def do_GET(self) -> None:
        body = self.files.get(self.path.split("?")[0])
        self.send_response(404 if body is None else 200)
        payload = b"Not found" if body is None else body
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def _mbox_export() -> bytes:
    mbox = (
        b"From alice@example.com Tue Jan 10 10:00:00 2017\n"
        b"From: Alice Example <alice@example.com>\nSubject: Pigeons\n\nCoo.\n\n"
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("mbox0101_abcde/tls/2017-01.mbox")
        info.size = len(mbox)
        tar.addfile(info, io.BytesIO(mbox))
    return buffer.getvalue()


def _xml(name: str) -> bytes:
    return (
        f'<?xml version="1.0"?>\n<rfc docName="{name}" ipr="trust200902">\n'
        "<front><title>Heron Wading</title><author fullname='Bob Example'/></front>\n"
        "<middle>\n<section title='Introduction'><t>Herons wade.</t></section>\n"
        "<section title='Details'><t>Long legs.</t></section>\n</middle>\n</rfc>\n"
    ).encode()


@dataclass
class Scratch:
    """The scratch root the examples run in, their environment, and what ran already."""

    root: Path
    env: dict[str, str]
    swaps: dict[str, str]
    ran: dict[str, subprocess.CompletedProcess[str]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def fake_ietf() -> Iterator[str]:
    _FakeIetf.files = {
        "/www.rfc-editor.org/rfc/rfc9147.xml": _xml("draft-ietf-tls-dtls13-43"),
        "/www.ietf.org/archive/id/draft-ietf-tls-dtls13-07.xml": _xml("draft-ietf-tls-dtls13-07"),
        "/mailarchive.ietf.org/arch/export/mbox/": _mbox_export(),
    }
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeIetf)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory, fake_ietf: str) -> Scratch:
    """The scratch root with the quick start's brain built in it."""
    bundle = require_corpus()
    top = tmp_path_factory.mktemp("doc-examples")
    root = top / "root"
    root.mkdir()
    (top / "shared").symlink_to(bundle.parents[2])
    for entry in ROOT.iterdir():
        if entry.name == "records":
            shutil.copytree(entry, root / "records")
        elif not entry.name.startswith("."):
            (root / entry.name).symlink_to(entry)
    bin_folder = top / "bin"
    bin_folder.mkdir()
    shim = bin_folder / "ratified"
    shim.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m ratified_rdf "$@"\n')
    shim.chmod(0o755)
    home = top / "home"
    # A reader's own clone, for the example that builds from one, made as docs/building.md
    # says (a mirror keeps GitHub's pull-request heads, as the bundle does).
    clone = home / "src" / "tls13-spec"
    subprocess.run(["git", "clone", "-q", "--mirror", str(bundle), str(clone)], check=True)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RATIFIED_", "XDG_", "PYTEST_"))
    }
    env |= {
        "HOME": str(home),
        "PATH": f"{bin_folder}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(ROOT / "src"),
        "RATIFIED_AUDIT_KEY": str(home / ".config" / "ratified-rdf" / "audit-key.pem"),
        "RATIFIED_ONLINE_BASE": fake_ietf,
    }
    state = Scratch(root, env, {"scratch": str(top)})
    done = _run(state, QUICK_START_BUILD)
    assert done.returncode == 0, f"The quick start's build failed:\n{done.stderr[-3000:]}"
    return state


def _swapped(command: str, swaps: dict[str, str]) -> str:
    for given, ours in SWAPS:
        command = command.replace(given, ours.format(**swaps))
    return command


def _run(state: Scratch, command: str) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in the scratch root, once: an example shown twice (its comment aside)
    gives the first run's result. A build runs each time, as a reader's would: the brain the
    later examples read is the last one a block built (the ``~/src`` clone's commits carry
    the bundle's ids, not GitHub's, so the bundle's build after it must run again)."""
    key = shlex.join(shlex.split(command, comments=True))
    if key not in state.ran or command.startswith("ratified build"):
        state.ran[key] = subprocess.run(
            ["bash", "-c", command],
            cwd=state.root,
            env=state.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    return state.ran[key]


_LOGS: dict[int, Path] = {}


def _command_of(server: subprocess.Popen[str]) -> str:
    args = server.args
    return str(args[-1]) if isinstance(args, list) else str(args)


def _log_tail(server: subprocess.Popen[str]) -> str:
    log = _LOGS.get(server.pid)
    return log.read_text(errors="replace")[-2000:] if log and log.is_file() else ""


def _wait_for(url: str, server: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 300  # a hang guard, far above a loaded machine's start
    while time.monotonic() < deadline and server.poll() is None:
        try:
            httpx.get(url, timeout=60)
            return
        except httpx.HTTPError:
            time.sleep(0.2)
    raise AssertionError(
        f"The server of `{_command_of(server)}` did not answer at {url}:\n{_log_tail(server)}"
    )


def _not_run(command: str) -> str | None:
    return next((why for start, why in NOT_RUN.items() if command.startswith(start)), None)


def _commands(block: Block) -> list[str]:
    """The block's commands: a chain split, a synopsis left out."""
    return [
        part.strip()
        for line in block.lines
        for part in line.split(" && ")
        if part.strip() and not is_synopsis(part)
    ]


BLOCKS = [b for b in blocks() if _commands(b)]


def test_every_example_left_out_is_one_the_docs_show() -> None:
    shown = [c for b in BLOCKS for c in _commands(b)]
    for start in NOT_RUN:
        assert any(c.startswith(start) for c in shown), f"No example starts {start!r}."


@pytest.mark.parametrize("block", BLOCKS, ids=[b.where for b in BLOCKS])
def test_a_documented_example_runs_as_written(block: Block, scratch: Scratch) -> None:
    servers: list[subprocess.Popen[str]] = []
    failures: list[str] = []
    # Free ports of this block's own, chosen when it starts, not minutes before.
    scratch.swaps |= {"port8000": str(_free_port()), "port7878": str(_free_port())}
    try:
        commands = _commands(block)
        if any("127.0.0.1:8000" in c for c in commands) and not any(
            c.startswith("ratified serve") for c in commands
        ):
            # Client lines shown without their server ask the one the README starts.
            servers.append(_start(scratch, _swapped(README_SERVER, scratch.swaps)))
        for given in commands:
            if _not_run(given):
                continue
            command = _swapped(given, scratch.swaps)
            background = command.rstrip().endswith("&") or command.startswith("ratified serve")
            if background:
                servers.append(_start(scratch, command.rstrip().rstrip("&")))
                continue
            done = _run(scratch, command)
            if done.returncode != 0:
                failures.append(f"`{given}` exited {done.returncode}:\n{done.stderr[-2000:]}")
                break
            for server in servers:
                if server.poll() is not None:
                    failures.append(f"`{_command_of(server)}` stopped:\n{_log_tail(server)}")
            for start, key in SHOWN.items():
                if command.startswith(start.format(**scratch.swaps)) and key not in done.stdout:
                    failures.append(f"`{given}` did not print {key!r}:\n{done.stdout[-2000:]}")
    finally:
        for server in servers:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
    assert not failures, f"{block.where}:\n" + "\n".join(failures)


def _start(state: Scratch, command: str) -> subprocess.Popen[str]:
    """A server the example starts, in a process group of its own (so stopping it stops
    everything it started), once it answers."""
    log = Path(state.swaps["scratch"]) / f"server-{_free_port()}.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            ["bash", "-c", f"exec {command}"],
            cwd=state.root,
            env=state.env,
            stdout=output,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
            # A session of its own is out of reach of .ci/run's stopping of its process
            # groups: should this test's process be killed before its finally runs, the
            # server dies with it instead of running on.
            preexec_fn=functools.partial(die_with, os.getpid()),
        )
    _LOGS[server.pid] = log
    try:
        port = re.search(r"(?:127\.0\.0\.1:|--port )(\d+)", command)
        assert port is not None, f"`{command}`: no port to wait on"
        _wait_for(f"http://127.0.0.1:{port.group(1)}/", server)
    except BaseException:
        # Not yet among the block's servers, which the test stops: stopped here.
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        raise
    return server
