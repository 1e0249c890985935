"""Fixtures for the server tests: the fictional pigeon brain, and apps served for real.

``serve(app)`` runs uvicorn on a free loopback port in a background thread, for the clients
that need a real socket (SPARQLWrapper, rdflib's SPARQLStore, a browser).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import uvicorn
from starlette.applications import Starlette

from ratified_rdf import Brain
from tests.pigeon import MANIFEST, make_pigeon_repo

if TYPE_CHECKING:
    from playwright.sync_api import Browser, BrowserContext, Page

ARTEFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "serve"
"""Screenshots and other files a person may want to look at after a run (gitignored)."""


@pytest.fixture(scope="session")
def pigeon_brain(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    """The pigeon brain, built once for the server tests (in memory, about a second)."""
    repo = make_pigeon_repo(tmp_path_factory.mktemp("pigeon-git"))
    brain, _report = Brain.build(MANIFEST, source=str(repo))
    return brain


@contextmanager
def _serving(app: Starlette) -> Iterator[str]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [listener]}, name="uvicorn", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 120  # a hang guard: it starts in well under a second
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start within 120 s; see the log above.")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()


@pytest.fixture(scope="session")
def serve() -> Callable[[Starlette], AbstractContextManager[str]]:
    """``with serve(app) as base_url:`` runs ``app`` on a free loopback port meanwhile."""
    return _serving


@pytest.fixture()
def listener() -> Iterator[tuple[str, list[bytes]]]:
    """The attacker's endpoint: a loopback listener that records every connection."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.1)
    seen: list[bytes] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                connection, _ = sock.accept()
            except OSError:
                continue
            with connection:
                connection.settimeout(1)
                try:
                    seen.append(connection.recv(4096))
                except OSError:
                    seen.append(b"")

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{sock.getsockname()[1]}/sparql", seen
    stop.set()
    thread.join(timeout=2)
    sock.close()


def unavailable(message: str) -> None:
    """Skip on a developer's machine; fail under CI=true, where a skip would hide a check."""
    if os.environ.get("CI") == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright, launched once for each module of page tests and
    closed after it: Playwright keeps an event loop on the main thread while it runs, which the
    later tests' own event loops must not meet (a session-wide browser left open under the
    whole rest of the suite once hung its closing at the session's end)."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("Playwright is not installed: pip install playwright.")
    executable = os.environ.get("CHROMIUM") or shutil.which("chromium")
    if not executable or not Path(executable).is_file():
        unavailable(
            "Chromium is missing: apt-get install -y chromium (or set CHROMIUM to its path). "
            "Playwright's own browser downloads are not used."
        )
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        yield launched
        launched.close()


PAGE_GUARD_MS = 120_000
"""How long a page's step (a navigation, a click, a wait for an element) may take before the
test fails: a hang guard far above what a loaded machine takes, not Playwright's 30 s."""


def roomy(context: BrowserContext) -> BrowserContext:
    """``context`` with :data:`PAGE_GUARD_MS` for every step that names no timeout of its own."""
    context.set_default_timeout(PAGE_GUARD_MS)
    context.set_default_navigation_timeout(PAGE_GUARD_MS)
    return context


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page 1100 px wide; it fails the test if the page logged an error."""
    context = roomy(browser.new_context(viewport={"width": 1100, "height": 900}))
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield opened
    context.close()
    assert problems == [], f"the page logged errors: {problems}"
