"""The sparql tool's bounds over a real stdio session: a runaway query is ended at the
deadline the server was started with (or past its memory) with a sentence, the calls after it
are answered, and an answer stays under the byte cap with a note that says how to page.

Cancellation, closing stdin and SIGTERM while a query runs are in ``test_lifecycle.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.types import CallToolResult, TextContent

from ratified_rdf.surfaces.mcp_server import MAX_ANSWER_BYTES
from tests.mcp.conftest import with_session

RUNAWAY = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }"
"""A cartesian product counted in little memory: only a deadline ends it."""

SORTED_RUNAWAY = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g"
"""The attack as reported: sorting a cartesian product holds all of it in memory."""

SMALL = "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1"

LONG_ROWS = (
    "SELECT ?a ?b (CONCAT(STR(?a), STR(?b), STR(?a), STR(?b)) AS ?long) "
    "WHERE { ?a ?p ?o . ?b ?q ?r } LIMIT 1000"
)
"""A thousand rows of a few hundred bytes each: well over the byte cap, under the row cap."""

_GUARD_S = 300
"""How long a session may take before the test fails instead of hanging the suite; far above
what it takes on a loaded machine."""


def _calls(
    store: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *options: str,
    tight_query: str | None = None,
) -> list[CallToolResult]:
    async def script(session: ClientSession) -> list[CallToolResult]:
        with anyio.fail_after(_GUARD_S):
            return [await session.call_tool(name, args) for name, args in calls]

    return with_session(store, script, *options, tight_query=tight_query)


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def test_a_runaway_query_is_ended_at_the_deadline_and_later_calls_are_answered(
    pigeon_store: Path,
) -> None:
    runaway, after, question = _calls(
        pigeon_store,
        [
            ("sparql", {"query": RUNAWAY}),
            ("sparql", {"query": SMALL}),
            ("ask", {"question": "history of RFC 9999 section 3.1"}),
        ],
        "--query-timeout",
        "2",
        # Only the runaway meets the two seconds: the calls after it must be answered, and on
        # a busy machine a replaced worker takes longer than that to answer a small query.
        tight_query=RUNAWAY,
    )
    assert runaway.is_error and runaway.structured_content is None
    text = _text(runaway)
    assert text.startswith("The query ran longer than the 2 s this server gives one query")
    assert "--query-timeout" in text and "LIMIT" in text
    assert not after.is_error, after.content
    assert after.structured_content is not None
    assert len(after.structured_content["rows"]) == 1
    assert not question.is_error and question.structured_content is not None
    assert question.structured_content["verdict"] == "answered"


def test_a_query_past_its_memory_is_ended_with_a_sentence(pigeon_store: Path) -> None:
    # The deadline is far away: only the worker's memory ceiling can end this query.
    ended, after = _calls(
        pigeon_store,
        [("sparql", {"query": SORTED_RUNAWAY}), ("sparql", {"query": SMALL})],
        "--query-timeout",
        "600",
        "--query-memory",
        "16",
    )
    assert ended.is_error
    assert _text(ended).startswith("The query needed more than the 16 MiB of memory")
    assert "--query-memory" in _text(ended)
    assert not after.is_error, after.content


def test_an_answer_past_the_byte_cap_is_cut_and_says_how_to_page(pigeon_store: Path) -> None:
    (result,) = _calls(pigeon_store, [("sparql", {"query": LONG_ROWS})])
    assert not result.is_error, result.content
    got = result.structured_content
    assert got is not None
    # The whole answer as sent, structured content and text block together, fits the cap.
    assert len(result.model_dump_json(by_alias=True).encode()) <= MAX_ANSWER_BYTES
    shown = len(got["rows"])
    assert 0 < shown < got["row_count"] == 1000
    assert got["truncated"] is True
    assert got["note"].startswith(f"Only the first {shown:,} of 1,000 rows are shown")
    assert f"{MAX_ANSWER_BYTES // 1024:,} KiB" in got["note"]
    assert f"OFFSET {shown:,}" in got["note"]
    # The text block is the same JSON, for clients that read only text.
    assert json.loads(_text(result)) == got
