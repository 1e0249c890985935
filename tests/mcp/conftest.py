"""Fixtures for the MCP server tests: a built pigeon store, and the server run for real.

Every store here is built and closed before a server subprocess opens it. Readers open a
store read-only and share its audit log, so the embedded brain that computes the expected
answers may be open beside a server (``tests/serve/test_many_users.py`` runs several at once).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TypeVar

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ratified_rdf import Brain
from ratified_rdf.audit import audit_dir
from tests.mcp.tight_server import TIGHT_QUERY_ENV
from tests.pigeon import MANIFEST, make_pigeon_repo

T = TypeVar("T")

SERVER_MODULE = "ratified_rdf.surfaces.mcp_server"

ROOMY_TIMEOUT = ("--query-timeout", "300")
"""The query budget of a server whose queries must succeed, unless a test names its own: far
above what any of them takes, where the default 10 s is what a busy machine meets."""


def roomy(options: tuple[str, ...]) -> tuple[str, ...]:
    """The server's ``options``, with :data:`ROOMY_TIMEOUT` unless they set a timeout."""
    return options if "--query-timeout" in options else (*options, *ROOMY_TIMEOUT)


def server_parameters(
    store: Path, *extra: str, tight_query: str | None = None
) -> StdioServerParameters:
    """How a client starts the server on ``store``: this Python, the module, its options.
    With ``tight_query``, only that query meets the server's ``--query-timeout`` (a query that
    must be ended), every other one a roomy budget (``tests/mcp/tight_server.py``)."""
    # A real client passes the server only the environment it is given: here, the tests'
    # own (which names the audit signing key, RATIFIED_AUDIT_KEY).
    env = dict(os.environ)
    start = ["-m", SERVER_MODULE]
    if tight_query is not None:
        start = [str(Path(__file__).with_name("tight_server.py"))]
        env[TIGHT_QUERY_ENV] = tight_query
    return StdioServerParameters(
        command=sys.executable, args=[*start, "--store", str(store), *roomy(extra)], env=env
    )


def with_session(
    store: Path,
    script: Callable[[ClientSession], Awaitable[T]],
    *extra: str,
    tight_query: str | None = None,
) -> T:
    """Start the server on ``store`` as a subprocess, initialise a real MCP client session
    over its stdio, run ``script`` in it and return what it returns. The server has exited
    (stdin closed, brain closed) when this returns. ``tight_query``: as
    :func:`server_parameters` takes it."""

    async def main() -> T:
        async with (
            stdio_client(server_parameters(store, *extra, tight_query=tight_query)) as (
                read,
                write,
            ),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await script(session)

    return anyio.run(main)


def audit_entries(store: Path) -> list[dict]:
    """Every entry of the audit log beside ``store``, oldest first."""
    lines = (audit_dir(store) / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def tree_heads(store: Path) -> list[dict]:
    """The signed tree heads of the audit log beside ``store``, oldest first."""
    path = audit_dir(store) / "sth.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture(scope="session")
def pigeon_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pigeon brain built on disk and closed, ready for a server process to open."""
    folder = tmp_path_factory.mktemp("mcp-pigeon")
    repo = make_pigeon_repo(folder / "git")
    brain, _report = Brain.build(MANIFEST, path=folder / "store", source=str(repo))
    brain.close()
    return folder / "store"


@pytest.fixture
def brain(pigeon_store: Path, tmp_path: Path) -> Iterator[Brain]:
    """A brain of its own (a copy of the pigeon store, with an audit log of its own)."""
    store = tmp_path / "store"
    shutil.copytree(pigeon_store, store)
    opened = Brain.open(store)
    yield opened
    opened.close()
