"""The MCP server on the real TLS brain: a question found by heading resolves to RFC 8446
§4.2.10 with its public links and SPARQL, the same answer the embedded brain gives.

The session's TLS store may be held open by another fixture in this process (``tls_brain``),
so the server is given a copy of it, made while nothing writes to it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from ratified_rdf import BuildReport
from ratified_rdf.brain import Brain
from ratified_rdf.trust import Reader
from tests.mcp.conftest import audit_entries, with_session

pytestmark = pytest.mark.corpus

QUESTION = "why does early data work this way?"


def test_why_early_data_resolves_to_rfc8446_4_2_10_with_links_and_sparql(
    tls_build: tuple[Path, BuildReport], tmp_path: Path
) -> None:
    store = tmp_path / "tls"
    # The audit log (<store>.audit) stays behind: the copy starts a log of its own.
    shutil.copytree(tls_build[0], store)
    with Brain.open(store, reader=Reader(actor="embedded")) as brain:
        want = brain.ask(QUESTION).model_dump(mode="json")

    async def script(session: ClientSession) -> Any:
        return await session.call_tool("ask", {"question": QUESTION})

    result = with_session(store, script)
    assert not result.is_error, result.content
    got = result.structured_content
    # The real card is tens of kilobytes; it is sent once, as structured content, and the
    # text block only summarises it.
    text = result.content[0].text
    assert len(text.encode()) < 5120 < len(json.dumps(got, ensure_ascii=False).encode())
    assert (
        got["summary"] in text and "https://www.rfc-editor.org/rfc/rfc8446#section-4.2.10" in text
    )

    for field in ("verdict", "summary", "results", "evidence", "alternatives", "trust"):
        assert got[field] == want[field], field
    assert [(q["name"], q["sparql"], q["params"], q["rows"]) for q in got["queries"]] == [
        (q["name"], q["sparql"], q["params"], q["rows"]) for q in want["queries"]
    ]
    assert got["verdict"] == "answered"
    assert got["summary"].startswith(
        "Matched the words 'early', 'data' to the heading of RFC 8446 §4.2.10"
    )
    urls = [e["url"] or "" for e in got["evidence"]]
    assert "https://www.rfc-editor.org/rfc/rfc8446#section-4.2.10" in urls
    assert any(url.startswith("https://github.com/") for url in urls)
    names = {q["name"] for q in got["queries"]}
    assert "headings" in names
    assert all("SELECT" in q["sparql"] for q in got["queries"])
    asks = [e for e in audit_entries(store) if e.get("kind") == "ask"]
    assert asks[-1]["actor"] == "mcp" and asks[-1]["subject"]["question"] == QUESTION
