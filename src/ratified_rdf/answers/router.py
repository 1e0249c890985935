"""The deterministic router: one loop over the registered question types.

A question is read for entities first (:mod:`ratified_rdf.answers.entities`): the RFCs,
drafts, revisions, sections, people, threads and days it names. Then every registered
:class:`QuestionType` is scored, and the best one answers. **The scoring rule**:

1. A type is a candidate only when the entities it needs are there (and those it cannot take
   are not): a diff needs a section and two revisions, a thread card a thread number.
2. Its score is the weight of the strongest of its cue patterns the question matches
   (3: a phrase only this type's questions use, "who should I ask", "how many"; 2: a strong
   word, "history", "discussed"; 1: a weak one, "why", "changed"), or its ``base`` when none
   matches (0 for most types: a type without a cue is not a candidate).
3. Each entity kind the type uses adds 0.25: the type that takes more of what the question
   names wins over a vaguer one ("what did ekr change in §4.4.1" is a person's work on a
   section, not the person's card, nor the section's history).
4. The highest score wins; a tie goes to the type registered first (:data:`REGISTRY` order).
5. When no type is a candidate, a question that names something the brain holds gets that
   thing's card (``entity``); anything else gets "the graph doesn't know", with what it holds.

Nothing here runs a query: the gazetteer and heading index were built from the graph before.
A section named without its RFC goes to the earliest published RFC holding that number (then
the lower number), and the others are offered as alternatives; a heading found by its words
goes to the best heading hit, with the runner-up offered.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from ratified_rdf.answers.entities import Gazetteer, Mentions
from ratified_rdf.answers.heading_search import HeadingHit, SearchResult, heading_terms
from ratified_rdf.answers.models import Intent

if TYPE_CHECKING:
    from ratified_rdf.answers.models import Answer
    from ratified_rdf.answers.session import Session


class Route(BaseModel):
    """The chosen type with everything the question supplied for it."""

    model_config = ConfigDict(frozen=True)

    intent: Intent | str
    """A built-in type's :class:`Intent`, or the name a type of your own registered."""
    mentions: Mentions = Mentions()
    draft: str | None = None
    revision: str | None = None
    rfc: int | None = None
    """The RFC the question is about: named, or chosen for a section by the rule above."""
    other_rfcs: tuple[int, ...] = ()
    """Other RFCs holding the section number asked about without an RFC: the alternatives."""
    section: str | None = None
    number: int | None = None
    """An issue or pull request number."""
    who: str | None = None
    """A person's name or login, as the question wrote it."""
    person: str | None = None
    """The IRI of the person named, when the gazetteer knows them."""
    topic: bool = False
    """No section number: find the section by searching headings."""
    count: str | None = None
    """What a counting question counts: posts, threads, commits, pull requests, people."""
    state: str | None = None
    """The thread state a list of threads is limited to (open, closed, merged)."""
    changed_only: bool = False
    """A list of pull requests limited to those whose commits changed the section."""
    older: str | None = None
    newer: str | None = None
    """The two revision numbers a diff compares (of ``draft``)."""
    valid_at: date | None = None
    """The day a question asks about ("what did §4.2.1 say on 2017-06-01?")."""
    reason: str | None = None
    """Why the question is out of scope, in words."""
    score: float = 0.0
    cue: str | None = None
    """The words that chose the type, for the card's "how this was read"."""


Needs = Callable[[Mentions, "Reading"], bool]
Answering = Callable[["Session", str, Route], "Answer"]


@dataclass(frozen=True)
class Cue:
    """A pattern that says what a question asks, and how strongly."""

    pattern: re.Pattern[str]
    weight: float


def cue(pattern: str, weight: float) -> Cue:
    """A case-insensitive :class:`Cue`."""
    return Cue(re.compile(pattern, re.IGNORECASE), weight)


@dataclass(frozen=True)
class QuestionType:
    """One kind of question: its cues, the entities it needs, its queries, its card."""

    intent: Intent | str
    """Its name: a built-in :class:`Intent`, or a new name for a type of your own."""
    answers: str
    """What it answers, in a sentence (for docs and ``ratified types``)."""
    cues: tuple[Cue, ...]
    needs: Needs
    """Whether the question supplies what the type needs."""
    uses: int
    """How many kinds of entity it takes (the specificity bonus of the scoring rule)."""
    answer: Answering
    queries: tuple[str, ...]
    """The ``sparql/*.rq`` files its card runs."""
    results: tuple[type[BaseModel], ...]
    """The result models its card carries."""
    base: float = 0.0
    """Its score when no cue matches (0: a cue is required)."""
    blocked_by: re.Pattern[str] | None = None
    """Words that rule the type out whatever else matches."""
    bind: Callable[[Route, Mentions, Reading], Route] | None = None
    """Fills type-specific parameters into the route (a count's noun, a thread state)."""
    asked: str | None = None
    """How a card drawn from entities alone words its question (``str.format`` over the
    route's fields), so ``Brain.answer`` and ``Brain.ask`` of that question give one card."""
    examples: tuple[str, ...] = field(default=())

    ceiling: float = field(init=False, repr=False, compare=False)
    """The most it can score: its strongest cue (or base) and its entities."""

    def __post_init__(self) -> None:
        top = max([self.base, *(one.weight for one in self.cues)]) + 0.25 * self.uses
        object.__setattr__(self, "ceiling", top)


READ_AT_MOST = 2000
"""Characters of a question the router reads."""


REGISTRY: list[QuestionType] = []
"""Every registered question type, in tie-break order."""


def register(kind: QuestionType) -> QuestionType:
    """Add ``kind`` to :data:`REGISTRY` (replacing a type of the same intent)."""
    for position, held in enumerate(REGISTRY):
        if held.intent is kind.intent:
            REGISTRY[position] = kind
            return kind
    REGISTRY.append(kind)
    return kind


def unregister(intent: Intent | str) -> None:
    """Remove the type of ``intent`` (for tests that register a toy one)."""
    REGISTRY[:] = [k for k in REGISTRY if k.intent != intent]


def question_type(intent: Intent | str) -> QuestionType:
    """The registered type of ``intent``."""
    for kind in REGISTRY:
        if kind.intent == intent:
            return kind
    raise KeyError(f"No question type is registered for {intent!r}.")


class Reading:
    """A question as the router reads it: its text, its mentions and, when needed, the
    section its heading words find (searched once, on first use)."""

    def __init__(self, text: str, mentions: Mentions, gazetteer: Gazetteer | None) -> None:
        self.text = text
        self.mentions = mentions
        self.gazetteer = gazetteer

    @cached_property
    def _found(self) -> SearchResult | None:
        """The heading search of the question's words (None without a heading index)."""
        if self.gazetteer is None or self.gazetteer.headings is None:
            return None
        return self.gazetteer.headings.search(self.text)

    @cached_property
    def topic(self) -> HeadingHit | None:
        """The best RFC heading the question's words match (where no RFC heading does, the best
        heading of the last revision of a draft that became no RFC), or None (no heading
        index, or no heading word but the brain's own subject)."""
        if self._found is None or self.gazetteer is None:
            return None
        return _topic(self._found, self.gazetteer)

    @cached_property
    def _best_rfc_heading(self) -> frozenset[str] | None:
        """The search terms its best RFC heading hit matched, when the words find a topic."""
        if self.topic is None or self._found is None or self.gazetteer is None:
            return None
        assert self.gazetteer.headings is not None
        hits = self.gazetteer.headings.rfc_hits(self._found) or [self.topic]
        return frozenset(heading_terms(" ".join(hits[0].matched)))

    @property
    def names_heading(self) -> bool:
        """The words name a heading outright: its best RFC heading hit matched more than half
        of the question's search terms ("key share", "the supported versions extension"; not
        "show me the ngtcp2 source code", where only "code" matched)."""
        matched, found = self._best_rfc_heading, self._found
        if not matched or found is None or not found.query_terms:
            return False
        return 2 * len(matched) > len(found.query_terms)

    @cached_property
    def about(self) -> frozenset[str]:
        """The search terms of what the question is about: its words' terms but the brain's
        own subject's ("quic")."""
        if self.gazetteer is None:
            return frozenset(heading_terms(self.text))
        subject = set(heading_terms(" ".join(self.gazetteer.subject_words)))
        headings = self.gazetteer.headings
        text = headings.unjoin(self.text) if headings is not None else self.text
        return frozenset(heading_terms(text)) - subject

    @property
    def names_heading_wholly(self) -> bool:
        """All the question is about is in its best RFC heading hit ("what is the spin
        bit?" names Latency Spin Bit; "what changed in the last transport draft?" names no
        heading, only a word of one)."""
        matched = self._best_rfc_heading
        if not matched or not self.about:
            return False
        return self.about <= matched

    @property
    def may_have_topic(self) -> bool:
        """Its words find a heading, or there is no heading index to tell (the router read
        without a brain: a section may be found by heading when the card is drawn)."""
        if self.gazetteer is None or self.gazetteer.headings is None:
            return True
        return self.topic is not None

    @property
    def has_section(self) -> bool:
        """The question names a section number, or its words may find a heading."""
        return bool(self.mentions.sections) or self.may_have_topic


# fmt: off
ASKING_WORDS = frozenset({
    "active", "author", "authors", "best", "brain", "chair", "chairs", "change", "changed",
    "changes", "changing", "closed", "commit", "commits", "compare", "compared", "contributed",
    "contribution", "contributions", "contributor", "contributors", "difference", "differences",
    "discussed", "discussion", "document", "documents", "draft", "drafts", "editor", "editors",
    "expert", "expertise", "experts", "graph", "group", "groups", "history", "issue", "issues",
    "know", "knows", "merged", "most", "open", "people", "protocol", "publication", "published",
    "rank", "revision", "revisions", "rfc", "rfcs", "spec", "specification", "status",
    "version", "versions", "work", "worked", "working",
})
# fmt: on
"""Words that say what a question asks, not what it is about: a heading they alone match
("Changes for this RFC") is not the question's topic."""


def _named_by_title(text: str, mentions: Mentions, gazetteer: Gazetteer | None) -> Reading | None:
    """The reading of ``text`` with the documents it calls by a name of their titles as its
    documents, when it names none by number or draft name; None when it names none so."""
    if gazetteer is None or mentions.rfcs or mentions.drafts or mentions.unheld:
        return None
    rfcs, drafts, _ = gazetteer.documents_named(text)
    if not (rfcs or drafts):
        return None
    named = mentions.model_copy(update={"rfcs": rfcs, "drafts": drafts, "named_drafts": drafts})
    return Reading(text, named, gazetteer)


def _topic(found: SearchResult, gazetteer: Gazetteer) -> HeadingHit | None:
    for hit in found.hits:
        entry = hit.entry
        if not (entry.is_rfc and entry.number):
            continue
        if {w.casefold() for w in hit.matched} <= gazetteer.subject_words | ASKING_WORDS:
            return None
        return hit
    # A brain of drafts that became no RFC: their last revisions' sections are the sections
    # its cards are about (answers.draft_finals), so their headings are topics too.
    if any(hit.entry.is_rfc for hit in found.hits):
        return None
    last = gazetteer.unpublished_last_revisions
    for hit in found.hits:
        entry = hit.entry
        if not entry.number or entry.document not in last:
            continue
        if {w.casefold() for w in hit.matched} <= gazetteer.subject_words | ASKING_WORDS:
            return None
        return hit
    return None


def route(question: str, gazetteer: Gazetteer | None = None) -> Route:
    """Map ``question`` to one registered type; the same question and gazetteer always give
    the same route. Without a gazetteer only what the words alone say is read (section and
    RFC numbers, full draft names, thread numbers, days)."""
    # The built-in types register themselves when their module is first imported.
    from ratified_rdf.answers import group, types  # noqa: F401

    # A question is read up to its first READ_AT_MOST characters: past a paragraph it is not a
    # question, and the reading stays linear and bounded whatever is sent.
    said = " ".join(question[: 2 * READ_AT_MOST].split())[:READ_AT_MOST]
    said = _CONTRACTION.sub(_expanded, said)
    reader = gazetteer or Gazetteer.permissive_reader()
    # One-letter typos are mended against the cue and heading words first ("requst").
    text = reader.speller.mend(said) if gazetteer is not None else said
    mentions = reader.read(text)
    reading = Reading(text, mentions, gazetteer)
    other_group = _other_group(text, gazetteer)
    if other_group:
        return Route(intent=Intent.OUT_OF_SCOPE, mentions=mentions, reason=other_group)
    named = mentions.rfcs or mentions.drafts or mentions.people or mentions.threads
    if mentions.unheld and not named:
        # "History of RFC 9000 section 4" in a brain without RFC 9000: the section number
        # alone must not find another RFC's section.
        return Route(intent=Intent.OUT_OF_SCOPE, mentions=mentions, reason=_unheld_reason(mentions))
    for day in mentions.days:
        try:
            date.fromisoformat(day)
        except ValueError:
            return Route(
                intent=Intent.OUT_OF_SCOPE, mentions=mentions, reason=f"{day} is not a date"
            )
    best: tuple[float, int, QuestionType, str | None, Reading | None] | None = None
    titled: Reading | None = None
    titled_read = False  # the names of titles are read when first needed
    # The types are read strongest first, so most are passed over unread once one fits; the
    # winner is the same as reading them in registry order (ties go to the earlier type).
    for order, kind in sorted(enumerate(REGISTRY), key=lambda pair: -pair[1].ceiling):
        if best is not None and (kind.ceiling, -order) <= (best[0], -best[1]):
            continue  # it cannot win: its cues need not be read
        if kind.blocked_by is not None and kind.blocked_by.search(text):
            continue
        weight, words = kind.base, None
        for one in kind.cues:
            match = one.pattern.search(text)
            if match is None and said != text:
                match = one.pattern.search(said)
            if match and one.weight > weight:
                weight, words = one.weight, match.group(0)
        score = weight + 0.25 * kind.uses
        # Cues first: they are cheap, and a type no cue fits needs no entity check (which may
        # search the headings).
        if weight <= 0 or (best is not None and (score, -order) <= (best[0], -best[1])):
            continue
        chosen_reading: Reading | None = None
        if not kind.needs(mentions, reading):
            # A type that needs a document may find it named as people call it ("what RFC did
            # the DNSSEC chain extension become?"), where nothing names one by number.
            if not titled_read:
                titled, titled_read = _named_by_title(text, mentions, gazetteer), True
            if titled is None or not kind.needs(titled.mentions, titled):
                continue
            chosen_reading = titled
        best = (score, order, kind, words, chosen_reading)
    if best is None:
        if not mentions.held and gazetteer is not None:
            # Nothing asked fits and nothing is named by number: an RFC or draft may be
            # named as people call it ("what is HTTP/3?", "the QPACK draft"). Its card is
            # the answer when its name is all the question is about ("what will the next
            # version of HTTP be called?" is about more than RFC 9114).
            rfcs, drafts, terms = gazetteer.documents_named(text)
            if (rfcs or drafts) and reading.about - _OVERVIEW_TERMS <= terms:
                mentions = mentions.model_copy(
                    update={"rfcs": rfcs, "drafts": drafts, "named_drafts": drafts}
                )
                named_reading = Reading(text, mentions, gazetteer)
                return _bind(Route(intent=Intent.ENTITY, mentions=mentions), named_reading)
        # A phrase naming a heading gets its card; so does a question no type fits ("what
        # is the spin bit?", "how does flow control work?") when all it is about is one
        # heading's words: the brain holds that section, so it is no "doesn't know".
        holds_any = bool(mentions.held) or (
            reading.names_heading_wholly if _ASKS.search(text) else reading.names_heading
        )
        intent = Intent.ENTITY if holds_any else Intent.OUT_OF_SCOPE
        reason = (
            _unheld_reason(mentions)
            if mentions.unheld and not mentions.held
            else _unmatched_reason(text, gazetteer)
        )
        return _bind(Route(intent=intent, mentions=mentions, reason=reason), reading)
    score, _, kind, words, titled_reading = best
    if titled_reading is not None:
        mentions, reading = titled_reading.mentions, titled_reading
    chosen = _bind(Route(intent=kind.intent, mentions=mentions, score=score, cue=words), reading)
    return kind.bind(chosen, mentions, reading) if kind.bind else chosen


_CONTRACTION = re.compile(
    r"\b(where|what|who|how|when|which|why|that|there|it|here)['’]s\b|"
    r"\b(is|are|was|were|do|does|did|has|have|had|could|should|would)n['’]t\b|"
    r"\b(where|what|who|how|when|which|why|they|you|we)['’](re|ve|d|ll)\b",
    re.IGNORECASE,
)
_SPELLED = {"re": "are", "ve": "have", "ll": "will"}
_NEXT_WORD = re.compile(r"\s+([A-Za-z]+)")
_SUBJECTS = frozenset(
    ["i", "you", "he", "she", "it", "we", "they", "the", "this", "that", "these", "those"]
)


def _expanded(match: re.Match[str]) -> str:
    """A contraction written out ("where's" → "where is"), so cues read it as they read the
    words spelled out; a name's possessive ("ekr's") is left alone. "'d" is read by the word
    after it: "how'd it change" (did), "who'd changed it" (had), "who'd know" (would)."""
    if match.group(1):
        return f"{match.group(1)} is"
    if match.group(2):
        return f"{match.group(2)} not"
    ending = match.group(4).casefold()
    if ending != "d":
        return f"{match.group(3)} {_SPELLED[ending]}"
    following = _NEXT_WORD.match(match.string, match.end())
    word = following.group(1).casefold() if following else ""
    spelled = "did" if word in _SUBJECTS else "had" if word.endswith(("ed", "en")) else "would"
    return f"{match.group(3)} {spelled}"


_OVERVIEW_WORDS = (
    "list show tell explain describe overview summary summarise summarize last latest current final"
)
_OVERVIEW_TERMS = frozenset(heading_terms(" ".join([*ASKING_WORDS, _OVERVIEW_WORDS])))
"""Terms that ask for a document's card rather than say what it is about ("list the QPACK
drafts", "what changed in the last transport draft?")."""

_ASKS = re.compile(
    r"\b(?:what|why|who|whom|whose|how|when|where|which|does|did|do|is|are|was|were|can|"
    r"could|should|would|will|tell|explain)\b|\?",
    re.IGNORECASE,
)
"""Words that make a question of a phrase: a bare phrase naming a heading ("key share") gets
that section's card; a question its cues do not fit does not."""

_GROUP = re.compile(r"\b([a-z][a-z0-9]{1,15})\s+(?:working\s+group|wg)\b", re.IGNORECASE)


def _other_group(text: str, gazetteer: Gazetteer | None) -> str | None:
    """Why a question about another working group is out of scope, when it is one."""
    if gazetteer is None or not gazetteer.groups:
        return None
    for match in _GROUP.finditer(text):
        name = match.group(1).casefold()
        if name in {"the", "this", "our", "your", "a", "which", "what", "that", "ietf", "same"}:
            continue
        if name not in gazetteer.groups:
            held = ", ".join(sorted(gazetteer.groups))
            return f"it holds the record of the {held} working group only, not {name}'s"
    return None


def _unmatched_reason(text: str, gazetteer: Gazetteer | None) -> str:
    """Why nothing fits: the words a heading search would use found no section, or the
    question asks nothing a type answers."""
    if gazetteer is None or gazetteer.headings is None:
        return "no question this brain answers matches it"
    terms = heading_terms(text)
    if terms:
        return f"no RFC section heading matches its words (terms: {', '.join(terms)})"
    return "no question this brain answers matches it"


def _unheld_reason(mentions: Mentions) -> str:
    named = [
        *(f"RFC {n}" for n in mentions.unknown_rfcs),
        *mentions.unknown_drafts,
        *(f"#{n}" for n in mentions.unknown_threads),
    ]
    return f"it holds nothing about {', '.join(named)}"


def _bind(chosen: Route, reading: Reading) -> Route:
    """The parameters every type reads the same way: the RFC and section (by the ambiguity
    rule), the draft and revision, the thread, the person, the day."""
    mentions, gazetteer = reading.mentions, reading.gazetteer
    update: dict[str, object] = {}
    revisions = mentions.revisions
    if revisions:
        update["draft"], update["revision"] = revisions[0]
    elif mentions.drafts:
        update["draft"] = mentions.drafts[0]
    if mentions.sections:
        number = mentions.sections[0]
        update["section"] = number
        holders = (
            gazetteer.headings.rfcs_numbering(number) if gazetteer and gazetteer.headings else ()
        )
        named = [r for r in mentions.rfcs if r in holders] or list(mentions.rfcs)
        if named:
            update["rfc"] = named[0]
        elif revisions or mentions.drafts:
            became = gazetteer.became.get(str(update.get("draft"))) if gazetteer else None
            update["rfc"] = became
        elif holders and gazetteer is not None:
            ordered = sorted(holders, key=gazetteer.rfc_order)
            update["rfc"], update["other_rfcs"] = ordered[0], tuple(ordered[1:])
    elif mentions.rfcs:
        update["rfc"] = mentions.rfcs[0]
        update["topic"] = True
    else:
        update["topic"] = True
    if mentions.unknown_rfcs and "rfc" not in update and mentions.sections:
        update["rfc"] = mentions.unknown_rfcs[0]
    if mentions.threads or mentions.unknown_threads:
        update["number"] = (mentions.threads or mentions.unknown_threads)[0]
    if mentions.people:
        update["who"], update["person"] = mentions.people[0].name, mentions.people[0].iri
    if mentions.days:
        try:
            update["valid_at"] = date.fromisoformat(mentions.days[0])
        except ValueError:
            update["reason"] = f"{mentions.days[0]} is not a date"
    return chosen.model_copy(update=update)
