"""``ratified mcp``: the brain as a Model Context Protocol server over stdio.

An agent (Claude Desktop, an IDE, any MCP client) starts ``ratified mcp --store DIR`` as a
subprocess and calls four tools:

- ``ask``: a question in words, answered by the deterministic router (``Brain.ask``);
- ``sparql``: a read-only SELECT or ASK over the reader's graphs (``Brain.query``);
- ``section_history``: how an RFC section was numbered and titled in each revision;
- ``section_people``: who to ask about an RFC section, and why.

Every result is the library's own object as JSON in the tool's structured content: an answer
card keeps its verdict, summary, results, evidence links, the SPARQL it ran (with parameters,
rows and engine time) and its trust state. The text block of an answer card is its summary
in a few lines (the answer, the drafted question, the evidence as label and link, one line on
how it was computed), so the card is not sent twice; a ``sparql`` result's text is its JSON,
and the two together stay under :data:`MAX_ANSWER_BYTES` (rows past it are left out, and the
answer says so and how to page).
Answers come only from the graph; "the graph doesn't know" is an answer (verdict
``unknown``), not an error. Errors the library raises on purpose come back as tool errors
whose text is the library's sentence.

Bounds: a ``sparql`` query is the agent's own text, so it runs as ``/sparql`` runs on the HTTP
server, in a worker process of the query sandbox (:mod:`ratified_rdf.queries.sandbox`):
sealed off the network, checked by its parse tree, reading a checkpoint of a store on disk
that the worker takes as it starts (:func:`query_sandbox`, as ``ratified serve``'s workers do),
and ended past ``--query-timeout`` or ``--query-memory`` with a sentence, after which the
next call gets a fresh worker. A call the
client cancels (``notifications/cancelled``) ends its worker at once, and closing stdin or
SIGTERM ends every worker before the server stops. The other tools run the library's own
hand-written queries in the server process, as the HTTP server's answer cards do.

The reader (tenant, clearance, redaction policy, actor) is fixed when the server starts and
holds for its life: stdio is a local channel to the one user who started the process, so
there is nobody else to authenticate, and a different reader is a different server. Every
call is audited by the brain as that actor (default ``mcp``) in ``<store>.audit``, and the
brain is closed, which signs the audit log's tree head, when the client closes stdin or the
process is told to stop (SIGTERM, SIGINT).
"""

import contextlib
import json
import logging
import os
import re
import signal
import sys
import threading
import time as clock
from collections.abc import Callable, Sequence
from datetime import UTC, date, datetime, time
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, TypeVar

import click
from pydantic import BaseModel, ConfigDict, Field, JsonValue
from pyoxigraph import (
    BlankNode,
    Literal,
    NamedNode,
    QueryBoolean,
    QueryResultsFormat,
    parse_query_results,
)

from ratified_rdf._errors import RatifiedError
from ratified_rdf._version import __version__
from ratified_rdf.answers.models import Answer, DraftedQuestion
from ratified_rdf.answers.router import Intent, route
from ratified_rdf.answers.wording import SOURCES_LEAD, plural
from ratified_rdf.audit import AuditRecord, PeriodicSigner
from ratified_rdf.brain import Brain
from ratified_rdf.graph.store import OxigraphStore, QueryResult
from ratified_rdf.graph.vocab import PREFIXES
from ratified_rdf.queries.guard import audited_text
from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxError, SandboxLimits
from ratified_rdf.trust import (
    Clearance,
    Reader,
    RedactionPolicy,
    TenantId,
    TenantIdError,
)

if TYPE_CHECKING:
    # The SDK is imported when a server is made, not with this module: the ``ratified`` CLI
    # imports this module to register the command, and must neither need the optional
    # package nor pay its import time for every other command.
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult

logger = logging.getLogger(__name__)

MCP_MISSING = (
    "The MCP server needs the Model Context Protocol SDK, which is not installed. Install it "
    "with: pip install 'ratified-rdf[mcp]'"
)
"""The sentence ``ratified mcp`` stops with when the ``mcp`` package is missing."""

MAX_ROWS = 1000
"""Most rows the ``sparql`` tool returns; ``row_count`` says how many the query produced."""

MAX_ANSWER_BYTES = 128 * 1024
"""Most bytes a ``sparql`` answer takes as sent (structured content and text block together);
rows that would go past it are left out, and the answer's note says so and how to page."""

READ_ROWS = 10_000
"""Most rows a ``sparql`` query may produce (read by its worker, then cut to :data:`MAX_ROWS`);
a query producing more is refused with a sentence, as ``/sparql``'s ``--max-rows`` refuses."""

QUERY_TIMEOUT_S = 10.0
"""Seconds a ``sparql`` query may take unless ``--query-timeout`` says otherwise."""

QUERY_MEMORY_MIB = 1_024
"""MiB a ``sparql`` query's worker may grow by unless ``--query-memory`` says otherwise."""

QUERY_WORKERS = 2
"""Worker processes (``sparql`` queries at once) unless ``--query-workers`` says otherwise."""

_RESULTS_JSON = "application/sparql-results+json"

DEFAULT_ACTOR = "mcp"
"""Who the audit log says asked, unless ``--actor`` names someone else."""

_T = TypeVar("_T")

_EXPECTED = (RatifiedError,)
"""Errors the library raises on purpose: their message is the sentence the caller reads."""

SECTION_PATTERN = r"^(?:\d{1,2}|[A-Ha-h])(?:\.\d{1,2}){0,5}$"
"""A section number as the router reads one ("4.2.10", appendix "A.1"): a section a tool is
given in this shape reaches the brain unchanged."""
_SECTION = re.compile(SECTION_PATTERN)

RfcNumber = Annotated[int, Field(ge=1, le=99999, description="The RFC number, e.g. 8446.")]
SectionNumber = Annotated[
    str,
    Field(
        description="The RFC's section number, e.g. 4.2.10 (or an appendix, A.1).",
        json_schema_extra={"pattern": SECTION_PATTERN},
    ),
]
"""The two parameters the section tools share, with the schema an agent sees."""

UPDATE_REFUSED = (
    "This tool only reads: SPARQL updates (INSERT, DELETE, LOAD, CLEAR, DROP, …) are refused. "
    "Send a SELECT or ASK query instead; the brain changes only through `ratified build`."
)
"""The sentence an update sent to the ``sparql`` tool gets."""


class SparqlResults(BaseModel):
    """What the ``sparql`` tool returns: the SPARQL 1.1 JSON results shape, flattened.

    Each row maps a bound variable to a term ``{"type": "uri" | "literal" | "bnode",
    "value": …}``, with ``datatype`` on a typed literal (not on a plain string) and
    ``xml:lang`` on a language-tagged one; an unbound variable is absent from its row.
    """

    model_config = ConfigDict(frozen=True)

    variables: list[str] = Field(description="The SELECT's variables, in order; empty for ASK.")
    rows: list[dict[str, dict[str, str]]] = Field(
        description=f"The rows (at most the first {MAX_ROWS:,}): variable → {{type, value, "
        "datatype?, xml:lang?}."
    )
    boolean: bool | None = Field(default=None, description="The answer of an ASK query.")
    row_count: int = Field(description="How many rows the query produced in all.")
    truncated: bool = Field(
        default=False,
        description=f"True when rows were left out: past the first {MAX_ROWS:,}, or past the "
        f"{MAX_ANSWER_BYTES // 1024:,} KiB one answer may take.",
    )
    engine_ms: float = Field(
        description="Milliseconds the query took in its worker process, reading every row "
        "(a worker's start and loading of the graphs included, the first time)."
    )
    note: str | None = Field(default=None, description="What to do when rows were left out.")


class ToolFailure(Exception):
    """A call that cannot be answered; the message is the sentence the agent reads."""


CLIENT_GONE = "ended: the client went away"
"""The error an audited call's outcome names when the client closed its end of stdin while
the call ran."""

SERVER_STOPPED = "ended: the server was stopped"
"""The error an audited call's outcome names when the server was stopped (SIGTERM, SIGINT)
while the call ran."""


class ClientGone(Exception):
    """The client went away, or the server was stopped, while a call ran: how its audit
    record says the call ended."""


class _OpenCalls:
    """The audit records of ``sparql`` calls still running. Their work is awaited without the
    brain's lock, so a server that stops meanwhile closes each with how it ended before it
    closes the brain; otherwise the record would be left without its outcome. Touched only
    under the brain's lock. ``client_gone`` says whether the client has closed its end of
    the channel (a cancellation then comes from the session ending, not from the client)."""

    def __init__(self, client_gone: Callable[[], bool] = lambda: False) -> None:
        self._calls: set[contextlib.ExitStack] = set()
        self.client_gone = client_gone

    def add(self, call: contextlib.ExitStack) -> None:
        """Hold ``call``'s record until :meth:`end`."""
        self._calls.add(call)

    def end(self, call: contextlib.ExitStack, error: BaseException | None) -> None:
        """Close ``call``'s record: succeeded, or failed with ``error``."""
        self._calls.discard(call)
        if error is None:
            call.close()
        else:
            call.__exit__(type(error), error, error.__traceback__)

    def end_all(self, reason: str) -> None:
        """Close every record still open, as ended for ``reason``."""
        while self._calls:
            call = self._calls.pop()
            try:
                call.__exit__(ClientGone, ClientGone(reason), None)
            except RatifiedError as error:
                logger.error("%s", error)


def _hung_up(fd: int) -> Callable[[], bool]:
    """Whether the writer of the pipe (or the peer of the socket) at ``fd`` has closed its
    end; polled without reading, so the protocol's own reader loses nothing."""
    import select

    def closed() -> bool:
        poller = select.poll()
        poller.register(fd, select.POLLHUP | getattr(select, "POLLRDHUP", 0))
        return any(events & ~select.POLLIN for _, events in poller.poll(0))

    return closed


def default_limits(
    timeout_s: float = QUERY_TIMEOUT_S,
    memory_mib: int = QUERY_MEMORY_MIB,
    workers: int = QUERY_WORKERS,
) -> SandboxLimits:
    """What one ``sparql`` query may use, and how many run at once. Every call comes from the
    one client that started the server, so that client may hold every worker, and none is
    kept for quick queries (which would end that client's second query after ``quick_s``)."""
    return SandboxLimits(
        timeout_s=timeout_s,
        max_rows=READ_ROWS,
        memory_mib=memory_mib,
        workers=workers,
        per_client=workers,
        quick_workers=0,
    )


def query_sandbox(brain: Brain, limits: SandboxLimits | None = None) -> QuerySandbox:
    """The query workers for the ``sparql`` tool of ``brain`` (under ``limits``, default
    :func:`default_limits`), as ``ratified serve`` makes its own: for a store on disk each
    worker answers from a checkpoint of it it takes as it starts, each query restricted to the
    reader's graphs by the engine's dataset, where a worker of a brain in memory or on a
    server loads an export of the reader's graphs first (seconds, for a large brain, in the
    first call's time, and a copy of every graph in each worker's memory)."""
    store = brain.reading.store
    return QuerySandbox(
        limits or default_limits(),
        generation=lambda: brain.reading.write_generation,
        store=store.path if isinstance(store, OxigraphStore) else None,
    )


def create_server(
    brain: Brain,
    *,
    lock: "threading.Lock | None" = None,
    sandbox: QuerySandbox | None = None,
) -> "MCPServer":
    """An MCP server whose four tools answer from ``brain``, as ``brain``'s reader.

    Tools run on worker threads, so ``lock`` (a new one unless given) is held around every
    call into ``brain``: one call at a time. Pass your own to close ``brain`` while the
    server may still be running without cutting a call short. ``sandbox`` runs the ``sparql``
    tool's queries in worker processes (a new one from :func:`query_sandbox` unless given;
    pass your own to stop its workers with :meth:`QuerySandbox.close`). The caller owns
    ``brain`` and closes it; :func:`serve_stdio` does all of this for a stdio server.
    """
    return _create_server(brain, lock or threading.Lock(), sandbox, _OpenCalls())


def _create_server(
    brain: Brain, guard: threading.Lock, sandbox: QuerySandbox | None, open_calls: _OpenCalls
) -> "MCPServer":
    """:func:`create_server`, with the records of the calls still running in ``open_calls``."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import CallToolResult, ToolAnnotations

    pool = sandbox or query_sandbox(brain)

    def use(work: Callable[[Brain], _T]) -> _T:
        with guard:
            return work(brain)

    server: MCPServer = MCPServer(
        "ratified-rdf",
        title="ratified-rdf brain",
        version=__version__,
        instructions=(
            f"Answers about brain '{brain.brain_id}': Internet-Draft revisions, the RFCs they "
            "became, how every section moved on the way, and who discussed or changed it. "
            "Every answer comes only from the brain's RDF graph, with the public links and "
            "the SPARQL that produced it; quote those rather than restating them. A verdict "
            "of 'unknown' means the graph holds nothing for the question. The reader is "
            f"tenant {brain.reader.tenant}, clearance {brain.reader.clearance.value}; every "
            "call is audited."
        ),
        log_level="WARNING",
    )
    read_only = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)

    @server.tool(
        title="Ask the brain a question",
        annotations=read_only,
        description=(
            "Answer a question in words about the brain's drafts, RFCs and their discussion, "
            "for example 'what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the "
            "RFC?', 'history of RFC 8446 section 4.2.10', 'why does early data work this "
            "way?', 'who discussed RFC 8446 section 4.2.1?', 'what is PR #1091?'. Answers "
            "come only from the brain's graph, through a deterministic router (no language "
            "model). Returns the answer card as JSON: verdict ('answered'; 'unknown' when the "
            "graph doesn't know, which is not a 'no'; 'ambiguous' with alternative questions "
            "to ask instead), a one-line summary, typed results, the evidence chain with a "
            "public link for each node (datatracker, rfc-editor.org, GitHub), every SPARQL "
            "query it ran with parameters, rows and engine time, and its trust state."
        ),
    )
    def ask(
        question: Annotated[
            str, Field(min_length=1, description="The question, in English words.")
        ],
        as_of: Annotated[
            str | None,
            Field(
                description="Answer from the brain as it was built at this moment (ISO 8601 "
                "date-time such as 2026-11-28T12:00:00Z; UTC unless an offset is given).",
                json_schema_extra={"format": "date-time"},
            ),
        ] = None,
        valid_at: Annotated[
            str | None,
            Field(
                description="For what a section said: the day to read it on (ISO 8601 date "
                "such as 2017-06-01); the text of the revision current that day.",
                json_schema_extra={"format": "date"},
            ),
        ] = None,
    ) -> Annotated[CallToolResult, Answer]:
        """Answer a question in words (see the tool's description)."""

        def work() -> Answer:
            moment = _parse_moment(as_of) if as_of else None
            day = _parse_day(valid_at) if valid_at else None
            return use(lambda b: b.ask(question, as_of=moment, valid_at=day))

        return _respond("ask", work)

    @server.tool(
        title="Run a read-only SPARQL query",
        annotations=read_only,
        description=(
            "Run your own SPARQL 1.1 SELECT or ASK query over the brain's current graphs "
            "(the reader's tenant and clearance decide which; FROM and GRAPH cannot reach "
            "further). Returns JSON: variables, rows of {variable: {type: uri|literal|bnode, "
            "value, datatype?, xml:lang?}} as in the SPARQL 1.1 JSON results format (or the "
            "boolean of an ASK), row_count and engine_ms; at most the first "
            f"{MAX_ROWS:,} rows, and at most {MAX_ANSWER_BYTES // 1024:,} KiB, are returned "
            "(page with ORDER BY, LIMIT and OFFSET). A query runs for a limited time and "
            "memory, then is ended with a sentence. Updates (INSERT, DELETE, LOAD, …), "
            "CONSTRUCT, DESCRIBE and SERVICE are refused. Declare the "
            "prefixes you use: "
            + ", ".join(f"PREFIX {name}: <{iri}>" for name, iri in PREFIXES.items())
            + ". Prefer the ask tool for questions it answers: its cards carry links."
        ),
    )
    async def sparql(
        query: Annotated[
            str, Field(min_length=1, description="The SPARQL 1.1 SELECT or ASK query text.")
        ],
    ) -> Annotated[CallToolResult, SparqlResults]:
        """Run a read-only SELECT or ASK (see the tool's description)."""
        try:
            results = await _run_sparql(brain, guard, pool, query, open_calls)
        except Exception as error:
            return _failure("sparql", error)
        return bounded_answer(results)

    @server.tool(
        title="History of an RFC section",
        annotations=read_only,
        description=(
            "How one section of an RFC was numbered and titled in each draft revision before "
            "it, with how similar each revision's text was to the final text and whether it "
            "was still changing, each with its public link. Answers come only from the "
            "brain's graph; a section the graph does not hold gets verdict 'unknown'. Returns "
            "the answer card as JSON, with the SPARQL it ran."
        ),
    )
    def section_history(
        rfc: RfcNumber,
        section: SectionNumber,
    ) -> Annotated[CallToolResult, Answer]:
        """An RFC section's history (see the tool's description)."""

        def work() -> Answer:
            number = _section_number(section)
            return use(lambda b: b.section_history(rfc, number))

        return _respond("section_history", work)

    @server.tool(
        title="Who to ask about an RFC section",
        annotations=read_only,
        description=(
            "Who to ask about one section of an RFC: the people most central to its "
            "discussion while it was still changing (posts and commits, ranked by "
            "co-discussion PageRank personalised to the section), then the drafts' editors "
            "and the group's chairs and area director where recorded, each with the reason. "
            "Answers come only from the brain's graph; verdict 'unknown' when it records "
            "nobody. Returns the answer card as JSON, with its evidence and SPARQL."
        ),
    )
    def section_people(
        rfc: RfcNumber,
        section: SectionNumber,
    ) -> Annotated[CallToolResult, Answer]:
        """Who to ask about an RFC section (see the tool's description)."""

        def work() -> Answer:
            number = _section_number(section)
            people_question(rfc, number)  # the same refusal as a question naming it
            return use(lambda b: b.answer(Intent.WHO_TO_ASK, rfc=rfc, section=number))

        return _respond("section_people", work)

    return server


def people_question(rfc: int, section: str) -> str:
    """The question the ``section_people`` tool asks the brain for RFC ``rfc`` §``section``.

    Raises :class:`ToolFailure` when the router would not read it back as exactly that RFC
    section (an RFC number under 100, which questions cannot name)."""
    question = f"who should I ask about RFC {rfc} section {section}?"
    target = route(question)
    if target.intent is not Intent.WHO_TO_ASK or (target.rfc, target.section) != (rfc, section):
        raise ToolFailure(
            f"RFC {rfc} section {section} cannot be asked about by number (questions name RFCs "
            "of 3 to 5 digits). Use the ask tool with the section's topic in words instead."
        )
    return question


def _section_number(section: str) -> str:
    """``section`` as the router writes it (appendix letters in capitals), or a sentence."""
    text = section.strip()
    if not _SECTION.fullmatch(text):
        raise ToolFailure(
            "A section number is digits separated by dots, such as 4.2.10, or an appendix "
            "letter A to H followed by them, such as A.1; send the section in that form."
        )
    return text.upper()


def _parse_moment(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ToolFailure(
            "as_of must be an ISO 8601 date or date-time, such as 2026-11-28 or "
            "2026-11-28T12:00:00Z; send it in that form."
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _parse_day(text: str) -> datetime:
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        raise ToolFailure(
            "valid_at must be an ISO 8601 date such as 2017-06-01; send it in that form."
        ) from None
    # The end of the day, as the router reads a day named in the question itself.
    return datetime.combine(day, time(23, 59, 59), UTC)


async def _run_sparql(
    brain: Brain,
    guard: threading.Lock,
    sandbox: QuerySandbox,
    query: str,
    open_calls: _OpenCalls | None = None,
) -> SparqlResults:
    """``query`` in a worker of ``sandbox`` (checked by its parse tree there, sealed off the
    network, ended at its deadline), audited as ``Brain.query`` is: the record is written
    before anything runs, and the call's outcome and row count follow, also when the call is
    cancelled (then even while its record was being written). ``guard`` is held around each
    touch of ``brain``, always on a thread, never the event loop's; the audit log's own lock
    only for each line it writes. ``open_calls`` holds the record while the query runs."""
    import anyio
    import anyio.to_thread

    subject: dict[str, JsonValue] = {**audited_text(query), "via": "mcp"}
    audit = contextlib.ExitStack()
    calls = open_calls or _OpenCalls()

    def use(work: Callable[[Brain], _T]) -> _T:
        with guard:
            return work(brain)

    def open_record(b: Brain) -> AuditRecord | None:
        record = audit.enter_context(b.reading.audited("query", subject))
        calls.add(audit)
        return record

    def export(graphs: Sequence[str]) -> bytes:
        return use(lambda b: b.reading.export(graphs))

    try:
        # anyio's threads are waited for even when the call is cancelled: a cancellation
        # while the record is written lands here, with the record written, and closes it.
        record = await anyio.to_thread.run_sync(use, open_record)
        graphs = await anyio.to_thread.run_sync(lambda: use(lambda b: tuple(b.read_graphs)))
        request = QueryRequest(
            sparql=query, graphs=graphs, results_media=_RESULTS_JSON, graph_media=None
        )
        started = clock.perf_counter()
        try:
            reply = await sandbox.run("mcp", request, export)
        except SandboxError as error:
            raise ToolFailure(_sandbox_sentence(error, sandbox.limits)) from None
        result = _parsed(reply.body, (clock.perf_counter() - started) * 1000)
    except BaseException as error:
        failed = error

        if isinstance(failed, anyio.get_cancelled_exc_class()) and calls.client_gone():
            # Not the client's cancellation: the session ends because stdin closed.
            failed = ClientGone(CLIENT_GONE)

        def record_failure(_: Brain) -> None:
            calls.end(audit, failed)

        # Shielded: in a cancelled call every await would be cancelled at once, and the
        # record left open (to be closed by whatever frees it, wherever that runs).
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(use, record_failure)
        raise

    def close_record(brain: Brain) -> None:
        try:
            brain.reading.calls.detail(record, {"rows": len(result.rows)})
        finally:
            calls.end(audit, None)

    with anyio.CancelScope(shield=True):
        await anyio.to_thread.run_sync(lambda: use(close_record))
    return sparql_results(result)


def _parsed(body: bytes, took_ms: float) -> QueryResult:
    """A worker's SPARQL JSON results as a :class:`QueryResult`."""
    parsed = parse_query_results(body, QueryResultsFormat.JSON)
    if isinstance(parsed, QueryBoolean):
        return QueryResult(variables=(), rows=(), boolean=bool(parsed), engine_ms=took_ms)
    names = tuple(variable.value for variable in parsed.variables)
    rows = tuple(
        {name: term for name, term in zip(names, solution, strict=True) if term is not None}
        for solution in parsed
    )
    return QueryResult(variables=names, rows=rows, engine_ms=took_ms)


_SYNTAX = (
    "The query is not valid SPARQL ({}). Correct it and send it again: a SELECT or ASK query, "
    "with a PREFIX declaration for every prefix it uses."
)


def _sandbox_sentence(error: SandboxError, limits: SandboxLimits) -> str:
    """What the agent reads when the sandbox did not answer: the sandbox's own sentence,
    reworded where it speaks of the HTTP endpoint or names what to send instead."""
    if error.reason == "update":
        return UPDATE_REFUSED
    if error.reason == "syntax":
        return _SYNTAX.format(error.message.rstrip("."))
    if error.reason == "not-acceptable":
        return (
            "This tool answers SELECT and ASK queries only; CONSTRUCT and DESCRIBE are "
            "refused. Select the parts you need as variables instead (SELECT ?s ?p ?o WHERE …)."
        )
    if error.reason == "timeout":
        return (
            f"The query ran longer than the {limits.timeout_s:g} s this server gives one query "
            "(waiting for a free worker included) and was ended. Make it more selective (bind "
            "more of the pattern, add a LIMIT), or start the server with a longer "
            "--query-timeout."
        )
    if error.reason == "rows":
        return (
            f"The query produced more than {limits.max_rows:,} rows, the most this server reads "
            "for one query. Add ORDER BY with LIMIT and OFFSET to page through them, or make "
            "the pattern more selective."
        )
    if error.reason == "memory":
        return (
            f"The query needed more than the {limits.memory_mib:,} MiB of memory this server "
            "gives one query and was ended. Make it more selective (an ORDER BY or GROUP BY "
            "over a large join holds all of it at once), or start the server with a larger "
            "--query-memory."
        )
    if error.reason == "busy":
        return (
            f"All {limits.workers} query workers stayed busy for as long as this query may run "
            "(your other sparql calls hold them); wait for those to finish, or cancel them, "
            "and send it again."
        )
    return error.message


def sparql_results(result: QueryResult, max_rows: int = MAX_ROWS) -> SparqlResults:
    """``result`` in the SPARQL 1.1 JSON results shape, keeping the first ``max_rows`` rows."""
    rows = [{name: term_json(term) for name, term in row.items()} for row in result.rows[:max_rows]]
    truncated = len(result.rows) > max_rows
    return SparqlResults(
        variables=list(result.variables),
        rows=rows,
        boolean=result.boolean,
        row_count=len(result.rows),
        truncated=truncated,
        engine_ms=result.engine_ms,
        note=(
            f"Only the first {max_rows:,} of {len(result.rows):,} rows are shown. Add ORDER BY "
            "with LIMIT and OFFSET to page through them, or make the pattern more selective."
            if truncated
            else None
        ),
    )


_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"


def term_json(term: object) -> dict[str, str]:
    """One RDF term as a SPARQL 1.1 JSON results term."""
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, Literal):
        out = {"type": "literal", "value": term.value}
        if term.language:
            out["xml:lang"] = term.language
        elif term.datatype.value not in (_XSD_STRING, _LANG_STRING):
            out["datatype"] = term.datatype.value
        return out
    # A quoted triple (RDF 1.2) has no SPARQL 1.1 JSON form: give its N-Triples text.
    return {"type": "triple", "value": str(term)}


def _respond(tool: str, work: Callable[[], Answer]) -> "CallToolResult":
    """Run ``work`` and return its answer card as the tool's result, or its failure as a tool
    error whose text is the sentence (the SDK would prefix its own words to a raised error)."""
    try:
        payload = work()
    except Exception as error:
        return _failure(tool, error)
    from mcp.types import CallToolResult, TextContent

    # An answer card's JSON runs to tens of kilobytes (its SPARQL, every row it lists): the
    # structured content carries all of it, and the text block only what a reader needs to
    # answer and cite, so the card is not sent twice.
    return CallToolResult(
        content=[TextContent(type="text", text=card_text(payload))],
        structured_content=payload.model_dump(mode="json"),
    )


def _failure(tool: str, error: Exception) -> "CallToolResult":
    """``error`` as a tool error: the library's sentence, or one that says what to report."""
    if isinstance(error, ToolFailure | RatifiedError):
        return _error(str(error))
    if isinstance(error, OSError):
        return _error(
            f"The store could not be read ({error}). Check the store folder and try again."
        )
    logger.error("The %s tool failed unexpectedly", tool, exc_info=error)
    return _error(
        f"An unexpected {type(error).__name__} stopped the {tool} call. This is a bug in "
        "ratified-rdf; the server's standard error has the traceback to report."
    )


def bounded_answer(results: SparqlResults, max_bytes: int = MAX_ANSWER_BYTES) -> "CallToolResult":
    """``results`` as the ``sparql`` tool's answer: its JSON as structured content and again
    as the text block (the MCP specification asks for both, for clients that read only
    text), the two together at most ``max_bytes`` as sent. Rows that would go past it are
    left out, from the end, and the note says how many are shown and how to read the rest.
    """
    whole = _answer(results)
    if _size(whole) <= max_bytes:
        return whole
    # The most rows that fit, found by bisection: the size grows with every row kept.
    fits, over = 0, len(results.rows)
    while over - fits > 1:
        middle = (fits + over) // 2
        if _size(_answer(_cut(results, middle, max_bytes))) <= max_bytes:
            fits = middle
        else:
            over = middle
    answer = _answer(_cut(results, fits, max_bytes))
    if _size(answer) > max_bytes:
        return _error(
            f"Even without its rows the answer is over the {max_bytes // 1024:,} KiB one answer "
            "may take here: it selects too many variables. Select fewer, and send it again."
        )
    return answer


def _cut(results: SparqlResults, keep: int, max_bytes: int) -> SparqlResults:
    """``results`` with only its first ``keep`` rows, and a note that says so."""
    return results.model_copy(
        update={
            "rows": results.rows[:keep],
            "truncated": True,
            "note": (
                f"Only the first {keep:,} of {results.row_count:,} rows are shown: with more, "
                f"the answer would be over the {max_bytes // 1024:,} KiB one answer may take "
                "here. Add ORDER BY with LIMIT and OFFSET to page through them (the next rows "
                f"start at OFFSET {keep:,}), or select fewer or shorter values."
            ),
        }
    )


def _size(answer: "CallToolResult") -> int:
    """Bytes ``answer`` takes as the result of a JSON-RPC response."""
    return len(answer.model_dump_json(by_alias=True).encode())


def _answer(results: SparqlResults) -> "CallToolResult":
    from mcp.types import CallToolResult, TextContent

    data = results.model_dump(mode="json")
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


MAX_TEXT_EVIDENCE = 12
"""Most evidence links the text block of an answer lists; the structured content has all."""

TEXT_BUDGET = 4000
"""Bytes the text block of an answer aims to stay under: a brief a client's model reads whole.
A card with more to say lists fewer links (and its drafted question without its sources,
which are the evidence's first links) before it goes over."""

_TEXT_STEPS = (
    (MAX_TEXT_EVIDENCE, "whole"),
    (8, "whole"),
    (8, "without sources"),
    (4, "without sources"),
    (0, "without sources"),
    (0, "left out"),
)
"""(evidence links, how much of the drafted question) for each try, fullest first."""

_HEADINGS = {"answered": "Answer", "unknown": "The graph doesn't know", "ambiguous": "Ambiguous"}


def card_text(answer: Answer) -> str:
    """An answer card in a few lines of text: the verdict and summary, the question it drafts
    for the people it names, the alternatives, the evidence (label and link), and one line on
    how it was computed; within :data:`TEXT_BUDGET` where cutting links gets it there.
    Everything else (typed results, each query's SPARQL, parameters and rows, the trust
    state's details, every link) is in the tool's structured content."""
    text = ""
    for links, draft in _TEXT_STEPS:
        text = _card_text(answer, links, draft)
        if len(text.encode()) < TEXT_BUDGET:
            break
    return text


def _card_text(answer: Answer, links: int, drafted: str) -> str:
    lines = [
        f"{_HEADINGS.get(answer.verdict.value, answer.verdict.value)} ({answer.intent}): "
        f"{answer.summary}"
    ]
    for result in answer.results:
        if isinstance(result, DraftedQuestion):
            draft = result.text
            if drafted == "left out":
                draft = "[Too long for this text: the structured content has it.]"
            elif drafted == "without sources" and SOURCES_LEAD in draft:
                head, _, _ = draft.partition(SOURCES_LEAD)
                draft = f"{head} [The sources it lists: the evidence's links.]\n\nThank you."
            lines += [
                "",
                f"A question you could send to {', '.join(result.to)} (drafted, never sent):",
                draft,
            ]
    if answer.alternatives:
        lines += ["", "Did you mean:"]
        lines += [f"- {a.question} ({a.reason})" for a in answer.alternatives]
    if answer.evidence:
        lines += ["", "Evidence:"]
        lines += [
            f"- [{e.role}] {e.label}: {e.url or '(no public link)'}"
            for e in answer.evidence[:links]
        ]
        more = len(answer.evidence) - links
        if more > 0:
            lines.append(f"- and {plural(more, 'more link')} in the structured content")
    if answer.note:
        lines += ["", f"Note: {answer.note}"]
    if answer.withheld:
        lines += ["", f"Withheld: {answer.withheld}"]
    if answer.trust is not None:
        lines += [
            "",
            f"Trust: {answer.trust.state}" + (" (stale review)" if answer.trust.stale else ""),
        ]
    names = ", ".join(f"{q.name}.rq" for q in answer.queries) or "no query"
    lines += [
        "",
        f"How this was computed: {names}; "
        f"{plural(sum(q.rows for q in answer.queries), 'row')}, "
        f"{sum(q.engine_ms for q in answer.queries if not q.reused):.1f} ms engine (rows "
        "reused from an earlier run cost none). The structured content "
        f"has the {plural(len(answer.results), 'result')}, each query's SPARQL and "
        "parameters, and the trust state.",
    ]
    return "\n".join(lines)


def _error(sentence: str) -> "CallToolResult":
    from mcp.types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=sentence)], is_error=True)


def serve_stdio(brain: Brain, limits: SandboxLimits | None = None) -> None:
    """Serve ``brain`` over this process's stdin and stdout until the client closes stdin or
    the process gets SIGTERM or SIGINT, then stop the query workers and close ``brain``
    (which signs the audit log's tree head). ``sparql`` queries run under ``limits`` (default
    :func:`default_limits`). Call it from the main thread: it installs the signal handlers."""
    lock = threading.Lock()
    closing = threading.Event()
    sandbox = query_sandbox(brain, limits)

    def close(reason: str = CLIENT_GONE) -> None:
        # Once closing has begun nothing else may close; the lock is never released, so no
        # call still waiting on a worker thread reaches the closed store.
        if closing.is_set():
            return
        closing.set()
        # The workers first: a query still running must not outlive the server.
        sandbox.close()
        lock.acquire()
        # Calls whose query was still running: their records say how they ended.
        open_calls.end_all(reason)
        brain.close()
        if watch >= 0:
            os.close(watch)

    def stop(signum: int, _frame: FrameType | None) -> None:
        # The handler runs on the main thread, possibly inside close(): then it must not
        # close again (the lock is held), only let close() finish.
        if closing.is_set():
            return
        close(SERVER_STOPPED)
        sys.stderr.flush()
        # Not SystemExit: unwinding the event loop would wait for the thread blocked
        # reading stdin, which may never return. The brain is closed; nothing else is owed.
        os._exit(0)

    # A second descriptor of stdin, never read: polled for the client hanging up, since the
    # SDK's reader only ends the session (cancelling every call) when it does.
    try:
        watch = os.dup(sys.stdin.fileno())
    except (OSError, ValueError, AttributeError):
        watch = -1
    open_calls = _OpenCalls(_hung_up(watch) if watch >= 0 else lambda: False)
    server = _create_server(brain, lock, sandbox, open_calls)
    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        server.run("stdio")
    finally:
        close()
        for number, handler in previous.items():
            signal.signal(number, handler)


class _CommandError(click.ClickException):
    """A reason the server cannot start or stop cleanly; exits with 2, as the ``ratified``
    CLI does for the library's errors."""

    exit_code = 2


@click.command("mcp")
@click.option(
    "--store",
    default="brain",
    show_default=True,
    envvar="RATIFIED_STORE",
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of the embedded Oxigraph store holding the brain.",
)
@click.option(
    "--tenant",
    default=None,
    envvar="RATIFIED_TENANT",
    help="Read this tenant's brain (default: the default tenant).",
)
@click.option(
    "--clearance",
    type=click.Choice([level.value for level in Clearance]),
    default=Clearance.PUBLIC.value,
    show_default=True,
    envvar="RATIFIED_CLEARANCE",
    help="Read only graphs at or below this level.",
)
@click.option(
    "--redaction",
    type=click.Choice([policy.value for policy in RedactionPolicy]),
    default=RedactionPolicy.SILENT.value,
    show_default=True,
    help="What an answer says about evidence above the clearance: nothing, or only that "
    "more exists.",
)
@click.option(
    "--actor",
    default=DEFAULT_ACTOR,
    show_default=True,
    help="Who the audit log records as asking.",
)
@click.option(
    "--query-timeout",
    default=QUERY_TIMEOUT_S,
    show_default=True,
    type=click.FloatRange(min=0, min_open=True),
    help="Seconds a sparql query may run before it is ended with a sentence.",
)
@click.option(
    "--query-memory",
    default=QUERY_MEMORY_MIB,
    show_default=True,
    type=click.IntRange(min=16),
    help="MiB a sparql query's worker may grow by before it is ended with a sentence.",
)
@click.option(
    "--query-workers",
    default=QUERY_WORKERS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Worker processes, so sparql queries that may run at once.",
)
def mcp_command(
    store: Path,
    tenant: str | None,
    clearance: str,
    redaction: str,
    actor: str,
    query_timeout: float,
    query_memory: int,
    query_workers: int,
) -> None:
    """Serve the brain to an MCP client (an agent) over stdin and stdout.

    The client starts this command; the reader (tenant, clearance, redaction, actor) is
    fixed for the life of the server, since stdio is a local channel to the single user who
    started it. Every call is audited beside the store; closing stdin stops the server and
    signs the audit log's tree head. A sparql query runs in a worker process, sealed off
    the network, and is ended past --query-timeout or --query-memory.
    """
    # Checked before anything is opened, so a rejected reader leaves no file behind.
    try:
        scope = TenantId(tenant) if tenant is not None else None
    except TenantIdError as error:
        raise _CommandError(str(error)) from None
    if not actor.strip():
        raise _CommandError("--actor must name who is asking, such as 'mcp'; it is empty.")
    try:
        import mcp.server.mcpserver  # noqa: F401  (only whether it imports)
    except ImportError:
        raise _CommandError(MCP_MISSING) from None
    # The CLI's log opening: one `Note:` line on stderr (never stdout, the client's channel)
    # when signing matters, rather than the log's own warning.
    from ratified_rdf.surfaces.cli import _audit_log

    try:
        with _audit_log(store) as log:
            brain = Brain.open(store, reader=Reader(scope, clearance, redaction, actor), audit=log)
    except (*_EXPECTED, OSError) as error:
        raise _CommandError(str(error)) from None
    try:
        with PeriodicSigner(brain.audit):  # a tree head every 30 s or 1,000 records
            serve_stdio(brain, default_limits(query_timeout, query_memory, query_workers))
    except (*_EXPECTED, OSError) as error:
        # Closing signs the audit log's tree head; if that fails the user must hear of it.
        raise _CommandError(str(error)) from None


__all__ = [
    "CLIENT_GONE",
    "MAX_ANSWER_BYTES",
    "MAX_ROWS",
    "MCP_MISSING",
    "QUERY_MEMORY_MIB",
    "QUERY_TIMEOUT_S",
    "QUERY_WORKERS",
    "READ_ROWS",
    "SERVER_STOPPED",
    "UPDATE_REFUSED",
    "ClientGone",
    "SparqlResults",
    "ToolFailure",
    "bounded_answer",
    "create_server",
    "default_limits",
    "mcp_command",
    "people_question",
    "query_sandbox",
    "serve_stdio",
    "sparql_results",
    "term_json",
]

if __name__ == "__main__":
    mcp_command()
