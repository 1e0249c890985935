"""From a question (in words, or a question type with entities) to a card: the steps every
answer takes between the brain's front door and the registered question types.

A question in words is read for entities by the gazetteer and routed to its registered type
(:mod:`ratified_rdf.answers.router`); a question type named with entities is drawn directly,
its question written from the type's template. Either way the card then passes the finishing
steps registered for its intent (:func:`finish_with`: the history and why cards get their
timeline), gets its trust state and, under the acknowledge redaction policy, a note when more
exists above the reader's clearance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Final

from pydantic import JsonValue

from ratified_rdf._errors import BrainError, InputError
from ratified_rdf.answers import sections, timeline, types
from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.models import Answer
from ratified_rdf.answers.router import REGISTRY, Intent, Route, route
from ratified_rdf.answers.session import Session
from ratified_rdf.answers.trust import trust_of
from ratified_rdf.audit.calls import sha256
from ratified_rdf.graph.scope import Scope
from ratified_rdf.graph.store import Queryable
from ratified_rdf.queries import QueryRun
from ratified_rdf.queries.files import load_query
from ratified_rdf.queries.packed import unpack_rows
from ratified_rdf.queries.run import read_sources, reads_graph
from ratified_rdf.trust import Clearance, RedactionPolicy

MAX_QUESTION_CHARS: Final = 2_000
"""The longest question answered in words, on every surface (``Brain.ask``, the command line,
MCP's ``ask``): the router reads a sentence or two, not a document, and a longer one is refused
before it is audited or read. ``ratified serve``'s ``/api/ask`` keeps a stricter limit of its
own (``surfaces.server.MAX_QUESTION_CHARS``)."""

WITHHELD_NOTE = "More exists above your clearance."
"""All the acknowledge policy ever says about withheld evidence: no count, no source."""

Indexes = Callable[[Session], Gazetteer]
"""Gives a session its heading index (set on the session) and returns the gazetteer of the
session's graphs."""

Finishing = Callable[[Answer], Answer]
"""A step every card of some intents passes once drawn: a function of the card alone (it runs
no query), returning the card with what it derives from the card's results."""

FINISHING: dict[Intent | str, list[Finishing]] = {}
"""The finishing steps registered for each intent, in the order they run."""


def finish_with(step: Finishing, *intents: Intent | str) -> Finishing:
    """Register ``step`` to run on every card of ``intents`` (once per intent and step)."""
    for intent in intents:
        steps = FINISHING.setdefault(intent, [])
        if step not in steps:
            steps.append(step)
    return step


def finished(answer: Answer) -> Answer:
    """``answer`` after the finishing steps registered for its intent."""
    for step in FINISHING.get(answer.intent, ()):
        answer = step(answer)
    return answer


# A section's history card and its why card carry the section's life as one series to draw.
finish_with(timeline.with_timeline, Intent.SECTION_HISTORY, Intent.DISCUSSION)


def check_question(question: str) -> None:
    """Raise :class:`InputError` for a question longer than :data:`MAX_QUESTION_CHARS`, and
    :class:`BrainError` unless it is text that UTF-8 can hold. Every question in words passes
    here (the one door of ``Brain.ask`` and every surface on it) before anything is audited
    or run.

    A command line with bytes that are not UTF-8 reaches Python as lone surrogates (its
    ``surrogateescape`` decoding); such a string can be neither audited nor matched, so it is
    refused with where the bad byte is."""
    if not isinstance(question, str):
        raise BrainError(f"A question is text, not {type(question).__name__}.")
    if len(question) > MAX_QUESTION_CHARS:
        raise InputError(
            f"The question is {len(question):,} characters long; ask it in at most "
            f"{MAX_QUESTION_CHARS:,}, as a sentence or two."
        )
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as error:
        char = ord(question[error.start])
        byte = f" (byte 0x{char - 0xDC00:02X})" if 0xDC80 <= char <= 0xDCFF else ""
        raise BrainError(
            f"The question is not UTF-8 text: character {error.start + 1}{byte} is not "
            "UTF-8. Type it again in a UTF-8 terminal, or save it as UTF-8."
        ) from None


def routed(
    question: str, valid_at: datetime | None, indexes: Indexes
) -> Callable[[Session], Answer]:
    """How a question in words is answered in a session: read it for entities, choose its
    registered type, draw that card (the section as it stood on ``valid_at``, if given)."""

    def draw(session: Session) -> Answer:
        chosen = route(question, indexes(session))
        if valid_at is not None and chosen.section and not chosen.draft:
            return finished(
                sections.section_at(session, question, chosen.rfc, chosen.section, valid_at)
            )
        return finished(types.answer(session, question, chosen))

    return draw


def drawn(
    intent: Intent | str, entities: Mapping[str, object], indexes: Indexes
) -> tuple[str, Callable[[Session], Answer]]:
    """The question written for a card of type ``intent`` from ``entities`` (the
    :class:`~ratified_rdf.answers.router.Route` fields it reads), and how it is drawn."""
    try:
        kind = types.question_type(intent)
    except KeyError:
        known = ", ".join(sorted(str(k.intent) for k in REGISTRY))
        raise BrainError(f"There is no question type {intent!r}; the types are {known}.") from None
    fields = {k: v for k, v in entities.items() if v is not None}
    try:
        chosen = Route(intent=kind.intent, **fields)  # type: ignore[arg-type]
    except ValueError as error:
        raise BrainError(f"A {kind.intent} card cannot be drawn from {fields}: {error}") from None
    try:
        question = kind.asked.format(**fields) if kind.asked else ""
    except KeyError:
        question = ""
    question = question or f"{kind.intent}: " + ", ".join(f"{k}={v}" for k, v in fields.items())

    def draw(session: Session) -> Answer:
        gazetteer = indexes(session)
        bound = chosen
        if chosen.who and not chosen.person:
            people = gazetteer.read(chosen.who).people
            if people:
                bound = chosen.model_copy(update={"person": people[0].iri, "who": people[0].name})
        return finished(types.answer(session, question, bound))

    return question, draw


def with_trust(session: Session, answer: Answer) -> Answer:
    """The answer with its card's trust state and the query that looked it up."""
    ran = len(session.queries)
    trust = trust_of(session, answer)
    return answer.model_copy(
        update={"trust": trust, "queries": [*answer.queries, *session.queries[ran:]]}
    )


def acknowledged(answer: Answer, store: Queryable, scope: Scope, policy: RedactionPolicy) -> Answer:
    """Under the acknowledge ``policy``, say (only) that more exists above the reader's
    clearance: the answer's own queries, re-run over every graph of the run, found more
    rows. Under the default policy nothing is said, so nothing is re-run."""
    if not (policy.may_acknowledge_withheld and scope.withheld_graphs):
        return answer
    graphs = scope.graphs_at(scope.current, Clearance.RESTRICTED)
    for run in answer.queries:
        if _rows_over(store, run, graphs) > run.rows:
            return answer.model_copy(update={"withheld": WITHHELD_NOTE})
    return answer


def _rows_over(store: Queryable, run: QueryRun, graphs: list[str]) -> int:
    """How many rows ``run``'s query gives over ``graphs`` read as the session read them: only
    the graphs of the sources its ``# Reads:`` names, a packed row counted as the rows it holds.
    Over every graph, a join across graphs counts rows no reader's answer has (a commit typed
    in two graphs, say): more would be said to exist where nothing is withheld."""
    query = load_query(run.name)
    if query.reads:
        sources = read_sources(query.reads)
        graphs = [g for g in graphs if reads_graph(g, sources)]
    rows = list(store.query(run.sparql, graphs).rows)
    if query.packed is not None:
        rows = unpack_rows(rows, query.packed, query.packed_order)
    return len(rows)


def asked(question: str, as_of: datetime | None, valid_at: datetime | None) -> dict[str, JsonValue]:
    """What the audit log records of a question before it is answered."""
    subject: dict[str, JsonValue] = {"question": question}
    if as_of is not None:
        subject["as_of"] = as_of.isoformat()
    if valid_at is not None:
        subject["valid_at"] = valid_at.isoformat()
    return subject


def answer_detail(answer: Answer) -> dict[str, JsonValue]:
    """What the audit keeps of an answer: its verdict and the queries that produced it."""
    return {
        "intent": answer.intent,
        "verdict": answer.verdict.value,
        "queries": [
            {"name": q.name, "sparql_sha256": sha256(q.sparql), "rows": q.rows}
            for q in answer.queries
        ],
    }
