"""Fixtures for the MCP server tests: a built pigeon store, and the server run for real.

Every store here is built and closed before a server subprocess opens it. Readers open a
store read-only and share its audit log, so the embedded brain that computes the expected
answers may be open beside a server (``tests/serve/test_many_users.py`` runs several at once).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ratified_rdf import Brain
from ratified_rdf.audit import audit_dir
from tests.pigeon import MANIFEST, make_pigeon_repo

T = TypeVar("T")

SERVER_MODULE = "ratified_rdf.surfaces.mcp_server"


def server_parameters(store: Path, *extra: str) -> StdioServerParameters:
    """How a client starts the server on ``store``: this Python, the module, its options."""
    # A real client passes the server only the environment it is given: here, the tests'
    # own (which names the audit signing key, RATIFIED_AUDIT_KEY).
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", SERVER_MODULE, "--store", str(store), *extra],
        env=dict(os.environ),
    )


def with_session(store: Path, script: Callable[[ClientSession], Awaitable[T]], *extra: str) -> T:
    """Start the server on ``store`` as a subprocess, initialise a real MCP client session
    over its stdio, run ``script`` in it and return what it returns. The server has exited
    (stdin closed, brain closed) when this returns."""

    async def main() -> T:
        async with (
            stdio_client(server_parameters(store, *extra)) as (read, write),
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
