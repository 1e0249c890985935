"""The pieces of a tool result that need no server: SPARQL terms as SPARQL 1.1 JSON results,
the row cap and the byte cap, the question section_people asks, and the command without the
SDK."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from mcp.types import TextContent
from pyoxigraph import BlankNode, Literal, NamedNode

from ratified_rdf import Answer, Verdict
from ratified_rdf.answers.models import Evidence
from ratified_rdf.answers.wording import drafted_question
from ratified_rdf.graph.store import QueryResult, Term
from ratified_rdf.surfaces.mcp_server import (
    MCP_MISSING,
    TEXT_BUDGET,
    SparqlResults,
    ToolFailure,
    bounded_answer,
    card_text,
    mcp_command,
    people_question,
    sparql_results,
    term_json,
)

XSD = "http://www.w3.org/2001/XMLSchema#"


def _links(count: int) -> list[Evidence]:
    return [
        Evidence(
            iri=f"https://w3id.org/ratified-rdf/id/example/pigeon/post/{n}",
            label=f"A fictional post about pigeon take-off, number {n}",
            url=f"https://github.com/example/pigeon-spec/issues/{n}#issuecomment-{n:012d}",
            role="post",
        )
        for n in range(count)
    ]


@pytest.mark.parametrize("links", [3, 12, 40])
def test_an_answers_text_stays_within_its_budget_and_says_where_the_rest_is(
    links: int,
) -> None:
    evidence = _links(links)
    people = [f"Fictional Person {n}" for n in range(12)]
    draft = drafted_question(
        "who discussed it?", "RFC 9999 §3.1 Take-off", people, evidence, "You discussed it."
    )
    answer = Answer(
        question="who discussed RFC 9999 section 3.1?",
        intent="discussion",
        verdict=Verdict.ANSWERED,
        summary="RFC 9999 §3.1 Take-off was discussed by many fictional people. " * 8,
        results=[draft],
        evidence=evidence,
    )
    text = card_text(answer)
    assert len(text.encode()) < TEXT_BUDGET
    shown = [e.url for e in evidence if f"{e.url}\n" in text + "\n"]
    assert shown == [e.url for e in evidence[: len(shown)]]  # the first links, in order
    if len(shown) < links:
        assert f"and {links - len(shown)} more link" in text
    assert "Fictional Person 11" in text  # the drafted question keeps its addressees


def test_terms_are_written_as_sparql_json_results_terms() -> None:
    assert term_json(NamedNode("https://example.org/a")) == {
        "type": "uri",
        "value": "https://example.org/a",
    }
    assert term_json(BlankNode("b0")) == {"type": "bnode", "value": "b0"}
    assert term_json(Literal("plain")) == {"type": "literal", "value": "plain"}
    assert term_json(Literal("chat", language="fr")) == {
        "type": "literal",
        "value": "chat",
        "xml:lang": "fr",
    }
    assert term_json(Literal("3", datatype=NamedNode(XSD + "integer"))) == {
        "type": "literal",
        "value": "3",
        "datatype": XSD + "integer",
    }


def test_rows_past_the_cap_are_counted_and_said_to_be_left_out() -> None:
    rows: tuple[dict[str, Term], ...] = tuple({"n": Literal(str(i))} for i in range(5))
    result = QueryResult(variables=("n",), rows=rows, engine_ms=1.5)
    shown = sparql_results(result, max_rows=3)
    assert [row["n"]["value"] for row in shown.rows] == ["0", "1", "2"]
    assert (shown.row_count, shown.truncated) == (5, True)
    assert shown.note is not None and "LIMIT and OFFSET" in shown.note
    whole = sparql_results(result)
    assert (whole.row_count, whole.truncated, whole.note) == (5, False, None)


def _long_rows(count: int) -> SparqlResults:
    rows = [
        {"v": {"type": "literal", "value": f"{n}: " + "a pigeon's take-off, told at length " * 9}}
        for n in range(count)
    ]
    return SparqlResults(variables=["v"], rows=rows, row_count=count, engine_ms=1.0)


def test_an_answer_under_the_byte_cap_is_whole_in_both_blocks() -> None:
    results = _long_rows(40)
    answer = bounded_answer(results, max_bytes=1_000_000)
    assert not answer.is_error
    assert answer.structured_content == results.model_dump(mode="json")
    text = answer.content[0]
    assert isinstance(text, TextContent) and json.loads(text.text) == answer.structured_content


def test_an_answer_over_the_byte_cap_keeps_the_first_rows_that_fit_and_says_so() -> None:
    results = _long_rows(40)
    answer = bounded_answer(results, max_bytes=8192)
    size = len(answer.model_dump_json(by_alias=True).encode())
    assert size <= 8192
    got = answer.structured_content
    assert got is not None
    shown = len(got["rows"])
    assert 0 < shown < 40 and got["rows"] == results.model_dump(mode="json")["rows"][:shown]
    # The most that fit: the next row, written in both blocks, would have gone over.
    assert size + 2 * len(json.dumps(results.rows[shown])) > 8192
    assert got["truncated"] is True and got["row_count"] == 40
    assert got["note"].startswith(f"Only the first {shown} of 40 rows are shown")
    assert "8 KiB" in got["note"] and f"OFFSET {shown}" in got["note"]


def test_an_answer_whose_variables_alone_are_over_the_cap_is_a_sentence() -> None:
    names = [f"pigeon_variable_{n}" for n in range(600)]
    results = SparqlResults(variables=names, rows=[], row_count=0, engine_ms=1.0)
    answer = bounded_answer(results, max_bytes=8192)
    assert answer.is_error and answer.structured_content is None
    text = answer.content[0]
    assert isinstance(text, TextContent)
    assert text.text.startswith("Even without its rows the answer is over the 8 KiB")


def test_section_people_asks_the_question_the_router_reads_back() -> None:
    assert people_question(8446, "4.2.10") == "who should I ask about RFC 8446 section 4.2.10?"
    assert people_question(9999, "A.1").endswith("section A.1?")
    with pytest.raises(ToolFailure, match="cannot be asked about by number"):
        people_question(42, "1")


def test_without_the_sdk_the_command_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    result = CliRunner().invoke(mcp_command, ["--store", str(tmp_path)])
    assert result.exit_code == 2
    assert result.output.strip() == f"Error: {MCP_MISSING}"


def test_importing_the_module_does_not_import_the_sdk() -> None:
    # The CLI imports this module to register the command; every other command would
    # otherwise need the optional package and pay for its import.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, ratified_rdf.surfaces.mcp_server; print('mcp' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_a_pasted_page_as_the_question_stays_out_of_the_text() -> None:
    question = "why does RFC 9999 section 3.1 look like this? " + "pigeon " * 8000
    draft = drafted_question(
        question, "RFC 9999 §3.1 Take-off", ["Fictional Person"], _links(3), "You changed it."
    )
    assert len(draft.text) < 3000  # the draft quotes what the router reads, not the page
    answer = Answer(
        question=question,
        intent="discussion",
        verdict=Verdict.ANSWERED,
        summary="RFC 9999 §3.1 Take-off was discussed by a fictional person.",
        results=[draft],
        evidence=_links(3),
    )
    assert len(card_text(answer).encode()) < TEXT_BUDGET
