"""One reading of a reader's query (issue 50): what the engine runs is the text the guard read.

The guard reads a query with rdflib's parser and Oxigraph runs it with its own; the two ended
comments at different characters and expanded ``\\u`` escapes in different places, so a
SERVICE or a FROM hid from the guard in what it took for a comment or a string. The guard now
rewrites the text into one both read alike, and every caller runs that text. An escape naming
no character is a refusal with a sentence, not a bug, in Python, on the command line and over
MCP.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from ratified_rdf import Brain
from ratified_rdf.queries.guard import QueryRefused, ReaderQuery, check_reader_query
from ratified_rdf.queries.sandbox import QuerySandbox
from ratified_rdf.surfaces.cli import main
from ratified_rdf.surfaces.mcp_server import ToolFailure, _run_sparql, default_limits
from tests.pigeon import MANIFEST, make_pigeon_repo

# Port 9 (discard): Oxigraph refuses to call it, and nothing listens on it anyway.
ELSEWHERE = "http://127.0.0.1:9/sparql"
CR_SERVICE = f"SELECT * WHERE {{ # x\r SERVICE <{ELSEWHERE}> {{ ?x ?y ?w }} \n }}"
CR_FROM = f"SELECT * # x\r FROM <{ELSEWHERE}> \n WHERE {{ ?s ?p ?o }}"
# rdflib expanded \u005C everywhere, so its string ran on over SERVICE to the next quote;
# Oxigraph expanded it only inside the string, a string of one backslash, and read SERVICE.
STRING_SERVICE = (
    f'SELECT * WHERE {{ BIND("\\u005C" AS ?a) SERVICE <{ELSEWHERE}> {{ ?x ?y ?w }} '
    'BIND(" AS ?b) #" AS ?c)\n }'
)
PAST_UNICODE = "SELECT * WHERE { ?s ?p '\\U00110000' }"


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("g"))
    built, _ = Brain.build(MANIFEST, source=str(repo))
    return built


def test_the_guard_returns_the_text_it_read() -> None:
    checked = check_reader_query("ASK {\r\n  FILTER('\\u0041' = 'A') # a comment\r}")
    assert checked == ReaderQuery("ASK", "ASK {\n  FILTER('A' = 'A') # a comment\n}")


@pytest.mark.parametrize(
    ("text", "reason"),
    [(CR_SERVICE, "service"), (CR_FROM, "dataset")],
)
def test_a_clause_hidden_from_the_guard_by_its_parser_is_refused(text: str, reason: str) -> None:
    with pytest.raises(QueryRefused) as refused:
        check_reader_query(text)
    assert refused.value.reason == reason


def test_a_string_that_ran_on_in_one_reading_runs_on_in_both(brain: Brain) -> None:
    # Both parsers now read one string holding SERVICE, and no SERVICE outside it.
    checked = check_reader_query(STRING_SERVICE)
    assert checked.text.startswith('SELECT * WHERE { BIND("\\" AS ?a) SERVICE')
    rows = brain.query(STRING_SERVICE).rows
    assert [row["b"].value for row in rows] == [
        f'" AS ?a) SERVICE <{ELSEWHERE}> {{ ?x ?y ?w }} BIND('
    ]


@pytest.mark.parametrize(
    ("escape", "said"),
    [
        ("\\U00110000", "U+110000 is past U+10FFFF"),
        ("\\UFFFFFFFF", "U+FFFFFFFF is past U+10FFFF"),
        ("\\uD800", "U+D800 is half of a UTF-16 surrogate pair"),
        ("\\U0000DFFF", "U+DFFF is half of a UTF-16 surrogate pair"),
    ],
)
def test_an_escape_naming_no_character_is_refused_with_a_sentence(escape: str, said: str) -> None:
    with pytest.raises(QueryRefused) as refused:
        check_reader_query(f"SELECT * WHERE {{\r\n  ?s ?p '{escape}' }}")
    message = str(refused.value)
    assert refused.value.reason == "syntax"
    assert f"The escape {escape} at line 2, column 10 names no character" in message
    assert said in message and "write the character itself" in message
    assert "bug" not in message


@pytest.mark.parametrize(
    "text",
    [
        "ASK { FILTER('\\u005Cu0041' = 'A') }",  # an escape spelling an escape
        "ASK { FILTER('\\\\u0041' = 'A') }",  # a backslash pair, then an escape
        "ASK { FILTER('\\U0041' = 'A') }",  # \U with four digits
    ],
)
def test_an_escape_left_after_expansion_is_refused(text: str) -> None:
    with pytest.raises(QueryRefused, match="still holds the escape") as refused:
        check_reader_query(text)
    assert refused.value.reason == "syntax"


def test_a_lone_surrogate_in_the_text_is_refused_with_a_sentence() -> None:
    # JSON (MCP) can carry one; Oxigraph cannot take it at all.
    with pytest.raises(QueryRefused, match="lone surrogate \\(U\\+D800\\) at line 1") as refused:
        check_reader_query("ASK { FILTER('\ud800' = '') }")
    assert refused.value.reason == "syntax"


@pytest.mark.parametrize("text", [CR_SERVICE, CR_FROM, PAST_UNICODE])
def test_brain_query_refuses_what_the_guard_refuses(brain: Brain, text: str) -> None:
    with pytest.raises(QueryRefused):
        brain.query(text)


def test_brain_query_runs_the_text_the_guard_read(brain: Brain) -> None:
    result = brain.query("SELECT ?x WHERE { BIND('''line\r\nline\rline''' AS ?x) }")
    assert result.rows[0]["x"].value == "line\nline\nline"


def _in_a_loop_of_its_own(function: Any, *args: object) -> object:
    """``anyio.run(function, *args)`` on a thread of its own: a browser test of the same
    session may leave Playwright's event loop running on this one."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(anyio.run, function, *args).result()


def test_mcp_refuses_with_a_sentence(brain: Brain) -> None:
    # The tool's own path: the query goes to a sandbox worker, whose guard refuses it.
    sandbox = QuerySandbox(default_limits(), generation=lambda: brain.reading.write_generation)
    lock = threading.Lock()
    try:
        with pytest.raises(ToolFailure, match="This query uses SERVICE"):
            _in_a_loop_of_its_own(_run_sparql, brain, lock, sandbox, CR_SERVICE)
        with pytest.raises(ToolFailure) as failure:
            _in_a_loop_of_its_own(_run_sparql, brain, lock, sandbox, PAST_UNICODE)
    finally:
        sandbox.close()
    assert "names no character" in str(failure.value) and "bug" not in str(failure.value)


def test_the_cli_reports_an_escape_naming_no_character_as_a_mistake(tmp_path: Path) -> None:
    store = tmp_path / "store"
    repo = make_pigeon_repo(tmp_path / "g")
    runner = CliRunner()
    built = runner.invoke(
        main, ["build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet"]
    )
    assert built.exit_code == 0, built.output
    query = tmp_path / "past.rq"
    query.write_text(PAST_UNICODE, encoding="utf-8")
    result = runner.invoke(main, ["query", str(query), "--store", str(store)])
    assert result.exit_code == 2, result.output
    assert f"Error: {query}: The escape \\U00110000 at line 1, column 25" in result.output
    assert "bug" not in result.output.lower() and "Traceback" not in result.output


def test_the_query_a_worker_parses_as_it_starts_is_one_the_guard_reads() -> None:
    # A query worker parses it before it answers anything: a refusal would end every worker
    # at its start.
    from ratified_rdf.queries.guard import check_reader_query
    from ratified_rdf.queries.sandbox import _WARM_UP_PARSE

    assert check_reader_query(_WARM_UP_PARSE).text == _WARM_UP_PARSE
