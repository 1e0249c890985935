"""The four tools over a real stdio session, checked against the embedded brain's answers.

One server session (started once for the module) makes every call; the expected answers are
computed by an embedded brain before the server starts, since the store is single-process.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.types import CallToolResult, TextContent

from ratified_rdf import Answer, Brain
from ratified_rdf.surfaces.mcp_server import UPDATE_REFUSED, people_question
from ratified_rdf.trust import Reader
from tests.mcp.conftest import audit_entries, tree_heads, with_session

QUESTIONS = [
    "who discussed RFC 9999 section 3.1?",
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
    "history of RFC 9999 section 3.1",
    "how did the IESG vote on draft-example-pigeon?",
]
SELECT = (
    "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>\n"
    "SELECT ?section ?number WHERE { ?section rr:sectionNumber ?number } "
    "ORDER BY ?section LIMIT 5"
)
ASK = "ASK { ?s ?p ?o }"
UPDATE = "PREFIX ex: <http://example.org/>\nINSERT DATA { ex:a ex:b ex:c }"
SERVICE = "SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }"
BROKEN = "SELECT nonsense WHERE"
SAID = "what did RFC 9999 section 3.1 say?"


@dataclass
class Served:
    """What the embedded brain answered, and what the server answered, for the same calls."""

    expected: dict[str, Any]
    tools: list[Any]
    calls: dict[str, CallToolResult]
    started: float
    seconds: float


def _embedded(store: Path) -> dict[str, Any]:
    with Brain.open(store, reader=Reader(actor="embedded")) as brain:
        return {
            **{f"ask:{q}": brain.ask(q) for q in QUESTIONS},
            "history": brain.section_history(9999, "3.1"),
            "history:unknown": brain.section_history(9999, "9.9"),
            "people": brain.ask(people_question(9999, "3.1")),
            "select": brain.query(SELECT),
            # A day given as valid_at is read to its end, as a day named in a question is.
            "said": brain.ask(SAID, valid_at=datetime(2029, 7, 1, 23, 59, 59, tzinfo=UTC)),
        }


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    **{f"ask:{q}": ("ask", {"question": q}) for q in QUESTIONS},
    "history": ("section_history", {"rfc": 9999, "section": "3.1"}),
    "history:unknown": ("section_history", {"rfc": 9999, "section": "9.9"}),
    "history:malformed": ("section_history", {"rfc": 9999, "section": "three"}),
    "people": ("section_people", {"rfc": 9999, "section": "3.1"}),
    "select": ("sparql", {"query": SELECT}),
    "ask-query": ("sparql", {"query": ASK}),
    "update": ("sparql", {"query": UPDATE}),
    "service": ("sparql", {"query": SERVICE}),
    "broken": ("sparql", {"query": BROKEN}),
    "said": ("ask", {"question": SAID, "valid_at": "2029-07-01"}),
    "bad-date": ("ask", {"question": QUESTIONS[0], "as_of": "last tuesday"}),
}


@pytest.fixture(scope="module")
def served(pigeon_store: Path) -> Served:
    expected = _embedded(pigeon_store)

    async def script(session: ClientSession) -> tuple[list[Any], dict[str, CallToolResult]]:
        tools = (await session.list_tools()).tools
        calls = {key: await session.call_tool(name, args) for key, (name, args) in CALLS.items()}
        return tools, calls

    started = time.time()
    tools, calls = with_session(pigeon_store, script)
    return Served(expected, tools, calls, started, time.time() - started)


def _answer(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    # The structured content is the whole card; the text block summarises it (the answer,
    # its evidence as label and link, how it was computed) rather than repeating it.
    card = Answer.model_validate(result.structured_content)
    assert card.model_dump(mode="json") == result.structured_content
    text = _text(result)
    assert card.summary in text
    # The first links, as many as the text's budget holds (at least four), then a count.
    lines = [f"] {e.label}: {e.url or '(no public link)'}" for e in card.evidence]
    shown = [line for line in lines if line in text]
    assert shown == lines[: len(shown)] and len(shown) >= min(len(lines), 4)
    if len(shown) < len(lines):
        assert f"and {len(lines) - len(shown)} more link" in text
    assert "How this was computed: " in text
    assert all(f"{q.name}.rq" in text for q in card.queries)
    assert all(q.sparql.strip() not in text for q in card.queries)
    return result.structured_content


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _assert_same_answer(got: dict[str, Any], want: Answer) -> None:
    expected = want.model_dump(mode="json")
    for field in ("question", "intent", "verdict", "summary", "results", "evidence"):
        assert got[field] == expected[field], field
    for field in ("alternatives", "note", "trust", "withheld"):
        assert got[field] == expected[field], field
    # The SPARQL that ran, with its parameters and rows; engine times differ run to run.
    assert [(q["name"], q["sparql"], q["params"], q["rows"]) for q in got["queries"]] == [
        (q.name, q.sparql, q.params, q.rows) for q in want.queries
    ]


def _error_text(result: CallToolResult) -> str:
    assert result.is_error
    assert result.structured_content is None
    return _text(result)


def test_lists_the_four_tools_with_their_schemas(served: Served) -> None:
    tools = {tool.name: tool for tool in served.tools}
    assert set(tools) == {"ask", "sparql", "section_history", "section_people"}
    ask = tools["ask"].input_schema
    assert ask["required"] == ["question"]
    assert set(ask["properties"]) == {"question", "as_of", "valid_at"}
    assert ask["properties"]["as_of"]["format"] == "date-time"
    assert ask["properties"]["valid_at"]["format"] == "date"
    assert tools["sparql"].input_schema["required"] == ["query"]
    for name in ("section_history", "section_people"):
        schema = tools[name].input_schema
        assert schema["required"] == ["rfc", "section"]
        assert schema["properties"]["rfc"]["type"] == "integer"
        assert "pattern" in schema["properties"]["section"]
    for tool in tools.values():
        assert "graph" in tool.description
        assert tool.annotations is not None and tool.annotations.read_only_hint
        assert tool.output_schema is not None
    assert {"verdict", "summary", "evidence", "queries"} <= set(
        tools["ask"].output_schema["properties"]
    )


@pytest.mark.parametrize("question", QUESTIONS)
def test_ask_returns_the_embedded_answer(served: Served, question: str) -> None:
    got = _answer(served.calls[f"ask:{question}"])
    _assert_same_answer(got, served.expected[f"ask:{question}"])
    assert got["queries"] and all("SELECT" in q["sparql"] for q in got["queries"])


def test_valid_at_reads_the_revision_current_that_day(served: Served) -> None:
    got = _answer(served.calls["said"])
    _assert_same_answer(got, served.expected["said"])
    assert got["intent"] == "section_at"
    assert "draft-example-pigeon-01" in got["summary"]


def test_answers_carry_their_links_and_sparql(served: Served) -> None:
    got = _answer(served.calls[f"ask:{QUESTIONS[1]}"])
    assert got["verdict"] == "answered"
    assert any(e["url"] for e in got["evidence"])
    assert got["queries"][0]["name"] == "view_section_became"
    assert got["queries"][0]["reproduces"] == "section_became"


def test_an_unknown_question_is_an_answer_not_an_error(served: Served) -> None:
    got = _answer(served.calls[f"ask:{QUESTIONS[3]}"])
    assert got["verdict"] == "unknown"
    assert got["summary"].startswith("The graph doesn't know")


def test_section_history_returns_the_embedded_answer(served: Served) -> None:
    got = _answer(served.calls["history"])
    _assert_same_answer(got, served.expected["history"])
    assert got["intent"] == "section_history" and got["verdict"] == "answered"


def test_an_unknown_section_gets_the_graph_does_not_know(served: Served) -> None:
    got = _answer(served.calls["history:unknown"])
    _assert_same_answer(got, served.expected["history:unknown"])
    assert got["verdict"] == "unknown"
    assert "doesn't know" in got["summary"] and "no section 9.9" in got["summary"]


def test_a_malformed_section_number_is_a_tool_error_that_says_the_form(served: Served) -> None:
    text = _error_text(served.calls["history:malformed"])
    assert text.startswith("A section number is digits separated by dots")
    assert "three" not in text


def test_section_people_is_the_who_to_ask_answer(served: Served) -> None:
    got = _answer(served.calls["people"])
    _assert_same_answer(got, served.expected["people"])
    assert got["intent"] == "who_to_ask" and got["verdict"] == "answered"
    assert got["question"] == "who should I ask about RFC 9999 section 3.1?"
    assert any(r["kind"] == "expert" and r["reason"] for r in got["results"])
    # The card names people, so the text block carries the question drafted for them.
    drafted = [r for r in got["results"] if r["kind"] == "drafted_question"]
    assert drafted and drafted[0]["text"] in _text(served.calls["people"])


def test_an_answer_is_sent_once_not_twice(served: Served) -> None:
    for key in [f"ask:{q}" for q in QUESTIONS] + ["history", "people", "said"]:
        result = served.calls[key]
        whole = len(json.dumps(result.structured_content, ensure_ascii=False))
        text = _text(result)
        assert len(text.encode()) < 4096, key
        assert len(text) < whole, key
        assert not text.lstrip().startswith("{"), key


def test_sparql_returns_the_rows_the_embedded_query_returns(served: Served) -> None:
    result = served.calls["select"]
    assert not result.is_error, result.content
    got = result.structured_content
    want = served.expected["select"]
    assert got["variables"] == list(want.variables) and got["row_count"] == len(want.rows)
    assert not got["truncated"] and isinstance(got["engine_ms"], float)
    assert [{k: v["value"] for k, v in row.items()} for row in got["rows"]] == [
        {k: term.value for k, term in row.items()} for row in want.rows
    ]
    first = got["rows"][0]
    assert first["section"]["type"] == "uri"
    # Section numbers are plain strings: no datatype, as SPARQL 1.1 JSON results write them.
    assert first["number"] == {"type": "literal", "value": want.rows[0]["number"].value}


def test_sparql_ask_returns_its_boolean(served: Served) -> None:
    got = served.calls["ask-query"].structured_content
    assert got["boolean"] is True and got["rows"] == [] and got["variables"] == []


def test_an_update_is_refused_with_a_sentence(served: Served) -> None:
    assert _error_text(served.calls["update"]) == UPDATE_REFUSED


def test_a_service_query_is_refused_with_a_sentence(served: Served) -> None:
    text = _error_text(served.calls["service"])
    assert text.startswith("This query uses SERVICE")


def test_invalid_sparql_says_what_to_fix(served: Served) -> None:
    text = _error_text(served.calls["broken"])
    assert text.startswith("The query is not valid SPARQL (") and "SELECT or ASK" in text


def test_a_bad_date_is_a_tool_error_that_says_the_form(served: Served) -> None:
    text = _error_text(served.calls["bad-date"])
    assert "ISO 8601" in text and "last tuesday" not in text


def test_the_session_is_audited_as_mcp_and_closing_signs_a_tree_head(
    served: Served, pigeon_store: Path
) -> None:
    entries = audit_entries(pigeon_store)
    ours = [e for e in entries if e.get("type") == "record" and e["actor"] == "mcp"]
    asks = [e for e in ours if e["kind"] == "ask"]
    assert {e["subject"]["question"] for e in asks} >= set(QUESTIONS)
    assert all(e["tenant"] == "default" and e["clearance"] == "public" for e in ours)
    queries = [e for e in ours if e["kind"] == "query"]
    assert {e["subject"]["sparql"] for e in queries} >= {SELECT, ASK, UPDATE, SERVICE}
    outcomes = {e["annotates"]: e for e in entries if e.get("type") == "outcome"}
    refused = next(e for e in queries if e["subject"]["sparql"] == UPDATE)
    assert outcomes[refused["id"]]["outcome"] == "failed"
    # The brain was closed when the client closed stdin: its last tree head covers every
    # entry, the session's included, and was signed after the session started.
    head = tree_heads(pigeon_store)[-1]
    assert head["tree_size"] == len(entries)
    assert head["timestamp"] >= served.started * 1000
