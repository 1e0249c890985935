"""The deterministic router: a question in, one intent and its parameters out.

Patterns, not a language model: every route can be read here and reproduced. A section number
only counts when a word says it is one ("section 4.2.9", "§4.2.9", "sec. 4.2.9"), so "TLS 1.3"
is never section 1.3. Questions that match no pattern route to ``out_of_scope``, which answers
"the graph doesn't know" with what the graph does hold.
"""

from __future__ import annotations

import re
from datetime import date
from enum import StrEnum

from pydantic import BaseModel, ConfigDict


class Intent(StrEnum):
    """What a question asks for."""

    SECTION_BECAME = "section_became"
    SECTION_HISTORY = "section_history"
    SECTION_AT = "section_at"
    DISCUSSION = "discussion"
    WHO_TO_ASK = "who_to_ask"
    THREAD = "thread"
    PERSON = "person"
    COUNT = "count"
    REVISION_CHAIN = "revision_chain"
    REVISIONS = "revisions"
    HOLDINGS = "holdings"
    OUT_OF_SCOPE = "out_of_scope"


class Route(BaseModel):
    """An intent with the parameters the question supplied."""

    model_config = ConfigDict(frozen=True)

    intent: Intent
    draft: str | None = None
    revision: str | None = None
    rfc: int | None = None
    section: str | None = None
    number: int | None = None
    """An issue or pull request number."""
    who: str | None = None
    """A person's name or login."""
    topic: bool = False
    """The question names no section: find it by searching section headings."""
    count: str | None = None
    """What a counting question counts: posts, threads, commits, pull requests, people."""
    reason: str | None = None
    """Why the question is out of scope, in words."""
    valid_at: date | None = None
    """The day a question asks about ("what did §4.2.1 say on 2017-06-01?")."""


_SECTION = re.compile(
    r"(?:\bsections?|\bsec\.?|§)\s*((?:\d{1,2}|[A-H])(?:\.\d{1,2}){0,5})(?![\d.]*\d)",
    re.IGNORECASE,
)
# Words of a name are taken whole (possessive) and a name has at most 31 of them (real ones have
# under ten): unbounded, the shortest name before "-NN" was sought from every "draft" of a long
# hyphenated run, re-reading the rest of it each time (quadratic).
_REVISION = re.compile(r"\b(draft-[a-z0-9]++(?:-[a-z0-9]++){0,30}?)-(\d{2})\b", re.IGNORECASE)
_DRAFT = re.compile(r"\b(draft-[a-z0-9]+(?:-[a-z0-9]+)+)\b", re.IGNORECASE)
_RFC = re.compile(r"\bRFC\s*-?\s*(\d{3,5})\b", re.IGNORECASE)
_BECAME = re.compile(r"\b(becom\w*|became|end(?:ed)? up|turn(?:ed)? into|in the rfc|final)\b", re.I)
_HISTORY = re.compile(
    r"\b(history|evolv\w*|chang\w*|revisions?\s+of\s+(?:rfc|section)|over time|trace)\b", re.I
)
_REVISIONS = re.compile(r"\b(revisions|versions|drafts)\b", re.I)
_CHAIN = re.compile(r"\b(chain|lead\w* to|path to|superseded)\b", re.I)
_DISCUSSION = re.compile(
    r"\b(who|why|discuss\w*|talk\w*|debat\w*|argu\w*|conversation|look(?:s)? like|"
    r"this way|threads?|posts?|commits?|pull requests?|people)\b",
    re.I,
)
_THREAD = re.compile(r"\b(?:pr|pull request|pull|issue)\s*#?\s*(\d{1,5})\b", re.I)
_PERSON = re.compile(
    r"^(?:what (?:did|has|does)|which sections did)\s+(.+?)\s+"
    r"(?:work(?:ed)? on|do|change|discuss|touch)\b|^who is\s+(.+?)\??$",
    re.I,
)
_WHY = re.compile(r"\b(why|who discussed|who changed|how come)\b", re.I)
_WHO_TO_ASK = re.compile(r"\bwho (?:should i|could i|can i|to) ask\b|\bwho knows\b", re.I)
_COUNT = re.compile(
    r"\bhow many (posts|comments|messages|threads|commits|pull requests|prs|people|issues)\b",
    re.I,
)
_COUNTED = {"comments": "posts", "messages": "posts", "prs": "pull requests", "issues": "threads"}
_ON_DAY = re.compile(r"\b(?:on|as of|at)\s+(\d{4}-\d{2}-\d{2})\b", re.I)
_SAID = re.compile(r"\b(say|said|read|text|wording|look(?:ed)? like|written)\b", re.I)
_HOLDINGS = re.compile(r"\bwhat (?:do you|does the graph|does the brain) (?:know|hold)\b", re.I)


def _section(question: str) -> str | None:
    match = _SECTION.search(question)
    return match.group(1).upper() if match else None


def route(question: str) -> Route:
    """Map ``question`` to one intent; the same question always maps to the same route."""
    text = " ".join(question.split())
    section = _section(text)
    revision = _REVISION.search(text)
    rfc = _RFC.search(text)
    if _HOLDINGS.search(text):
        return Route(intent=Intent.HOLDINGS)
    day = _ON_DAY.search(text)
    if section and day and _SAID.search(text) and not revision:
        try:
            when = date.fromisoformat(day.group(1))
        except ValueError:
            return Route(intent=Intent.OUT_OF_SCOPE, reason=f"{day.group(1)} is not a date")
        return Route(
            intent=Intent.SECTION_AT,
            rfc=int(rfc.group(1)) if rfc else None,
            section=section,
            valid_at=when,
        )
    thread = _THREAD.search(text)
    if thread and not section:
        return Route(intent=Intent.THREAD, number=int(thread.group(1)))
    person = _PERSON.search(text)
    if person and not section:
        return Route(intent=Intent.PERSON, who=(person.group(1) or person.group(2)).strip())
    if revision and section and (_BECAME.search(text) or not _HISTORY.search(text)):
        return Route(
            intent=Intent.SECTION_BECAME,
            draft=revision.group(1).lower(),
            revision=revision.group(2),
            section=section,
        )
    if not revision and _WHO_TO_ASK.search(text):
        return Route(
            intent=Intent.WHO_TO_ASK,
            rfc=int(rfc.group(1)) if rfc else None,
            section=section,
            topic=section is None,
        )
    counted = _COUNT.search(text)
    if section and not revision and counted:
        what = counted.group(1).lower()
        return Route(
            intent=Intent.COUNT,
            rfc=int(rfc.group(1)) if rfc else None,
            section=section,
            count=_COUNTED.get(what, what),
        )
    if section and not revision and _DISCUSSION.search(text) and not _HISTORY.search(text):
        return Route(
            intent=Intent.DISCUSSION, rfc=int(rfc.group(1)) if rfc else None, section=section
        )
    if section and (_HISTORY.search(text) or rfc):
        return Route(
            intent=Intent.SECTION_HISTORY,
            rfc=int(rfc.group(1)) if rfc else None,
            section=section,
        )
    if revision and _CHAIN.search(text):
        return Route(
            intent=Intent.REVISION_CHAIN,
            draft=revision.group(1).lower(),
            revision=revision.group(2),
        )
    draft = _DRAFT.search(text)
    if draft and _REVISIONS.search(text) and not revision:
        return Route(intent=Intent.REVISIONS, draft=draft.group(1).lower())
    if section and not revision and _BECAME.search(text):
        return Route(
            intent=Intent.SECTION_BECAME,
            draft=draft.group(1).lower() if draft else None,
            section=section,
        )
    if not section and not revision and _WHY.search(text):
        return Route(intent=Intent.DISCUSSION, topic=True)
    return Route(
        intent=Intent.OUT_OF_SCOPE,
        reason="no question this brain answers matches it",
    )
