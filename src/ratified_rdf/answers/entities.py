"""Entities first: read a question for everything the brain holds before choosing what it asks.

The :class:`Gazetteer` is built from the graph once per set of graphs (like the heading index,
and beside it): the drafts and their revisions, the RFCs with their publication months, the
section numbers each RFC holds, the people by full name, login and address, and the issue and
pull request numbers. Nothing in it is written for one working group: a brain of any group
gets its own.

:meth:`Gazetteer.read` turns a question into :class:`Mentions`, the things it names:

* **RFCs** by number ("RFC 8446", "rfc9000"); a number the brain does not hold is kept apart
  (``unknown_rfcs``), so the answer can say the brain holds no such RFC.
* **Drafts** by full name, with a revision ("draft-ietf-tls-tls13-21") or without; short
  revisions ("draft-20", "-21", "revision 20", "between draft-20 and 21") belong to the *draft
  in play*: the one named, else the one that became a named RFC, else the drafts holding that
  revision number, the one that became the earliest RFC first.
* **Sections** by number when a word says it is one ("section 4.2.9", "§4.2.9", "sec. 4.2.9",
  "appendix B.3"), or bare when it has two dots or more ("4.2.11"), or one dot right after an
  RFC or draft ("RFC 9000 10.1"); never after a protocol or version word, so "TLS 1.3" and
  "HTTP/3" are never sections.
* **People** by full name anywhere, and by a one-word login, first name or address only when
  the word is not a word of section headings nor a common English word ("ekr", "mnot").
* **Threads**: "#785", "PR 785", "pull request 785", "issue 1003", when the brain holds one.
* **Dates**: ISO days ("2017-06-01").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from itertools import islice

from pydantic import BaseModel, ConfigDict

from ratified_rdf.answers.heading_search import STOP_WORDS, HeadingIndex, heading_terms
from ratified_rdf.answers.spelling import CUE_WORDS, Speller

_RFC = re.compile(r"\bRFC\s*-?\s*(\d{3,5})\b", re.IGNORECASE)
# Words of a name are taken whole (possessive) and a name has at most 31 of them: unbounded,
# the shortest name before "-NN" was sought from every "draft" of a long hyphenated run.
_REVISION = re.compile(r"\b(draft-[a-z0-9]++(?:-[a-z0-9]++){0,30}?)-(\d{2})\b", re.IGNORECASE)
_DRAFT = re.compile(r"\b(draft-[a-z0-9]++(?:-[a-z0-9]++){1,30})\b", re.IGNORECASE)
_NICKNAMED_REVISION = re.compile(
    # "tls13-21", "quic-transport-29": the tail of a draft's name and a revision number, as
    # people write a revision in a working group that knows which draft it means.
    r"(?<![\w.-])([a-z][a-z0-9]*+(?:-[a-z0-9]++){0,4}?)-(\d{2})\b(?!\.\d)",
    re.IGNORECASE,
)
_SHORT_REVISION = re.compile(
    r"(?:\b(?:draft|revision|rev\.?)\s*-?\s*|(?<![\w.-])-)(\d{1,2})\b(?!\.\d)"
    r"(?:\s*(?:and|to|vs\.?|versus|->|→)\s*(?:draft\s*-?\s*|-)?(\d{1,2})\b)?",
    re.IGNORECASE,
)
_SECTION_WORD = re.compile(
    # "s4.2.10" (glued to a dotted number) is the shortest way people write a section.
    r"(?:\bsections?|\bsec\.?|\bs(?=\d{1,2}\.\d)|§|\bappendix|\bappendices)\s*"
    # An appendix letter is a capital standing alone ("section C", not "section covers").
    r"((?:\d{1,2}|(?-i:[A-H]))(?:\.\d{1,2}){0,5})(?![\d.]*\d)(?!\w)",
    re.IGNORECASE,
)
_RFC_BEFORE = re.compile(
    r"\bRFC\s*-?\s*\d{3,5}(?:'s)?[\s,:]*(?:sections?|sec\.?|s|§|appendix)?\s*$", re.I
)
_RFC_AFTER = re.compile(r"\s*(?:,\s*)?(?:of|in|from)\s+(?:the\s+)?RFC\s*-?\s*\d{3,5}\b", re.I)
"""A section number written beside an RFC's name: "RFC 8446 §4.2.10", "section 4.2.10 of RFC
8446" (the RFC's own numbering, not a revision's)."""
_BARE_SECTION = re.compile(r"(?<![\w./-])(\d{1,2}(?:\.\d{1,2}){1,5})(?![\w/]|\.\d)")
_VERSION_WORDS = frozenset(
    {"tls", "ssl", "dtls", "http", "quic", "version", "v", "tlsv", "ver", "python", "ietf"}
)
_THREAD = re.compile(
    r"(?:#\s?|\b(?:prs?|pull\s+requests?|pulls?|issues?|tickets?)\s*(?:no\.?|number)?\s*#?\s*)"
    r"(\d{1,5})\b",
    re.IGNORECASE,
)
_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_WORD = re.compile(r"[\w@.+'-]+")
_COMMON = frozenset(
    {
        "what",
        "which",
        "who",
        "whom",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "is",
        "was",
        "were",
        "are",
        "be",
        "been",
        "has",
        "have",
        "had",
        "can",
        "could",
        "should",
        "would",
        "will",
        "say",
        "said",
        "show",
        "list",
        "tell",
        "give",
        "find",
        "change",
        "changed",
        "changes",
        "work",
        "worked",
        "wrote",
        "write",
        "edit",
        "edited",
        "draft",
        "drafts",
        "rfc",
        "rfcs",
        "section",
        "sections",
        "issue",
        "issues",
        "pr",
        "prs",
        "pull",
        "request",
        "requests",
        "commit",
        "commits",
        "post",
        "posts",
        "people",
        "person",
        "editor",
        "editors",
        "author",
        "authors",
        "chair",
        "chairs",
        "most",
        "much",
        "many",
        "about",
        "history",
        "discussion",
        "discussed",
        "talk",
        "talked",
        "open",
        "closed",
        "merged",
        "know",
        "knows",
        "ask",
        "published",
        "publish",
        "became",
        "become",
        "between",
        "since",
        "still",
        "while",
        "changing",
        "text",
        "mean",
        "means",
        "me",
        "all",
        "any",
        "some",
        "one",
        "two",
        "new",
        "old",
        "first",
        "last",
        "next",
        "brain",
        "graph",
        "group",
        "working",
        "wg",
        "tls",
        "quic",
        "http",
        "please",
        "thanks",
    }
)


MOST = 16
"""Mentions of one kind read at most: a question names a few things; a long text built to
make the reader work gets its first few read, in time linear in its length."""


class PersonMention(BaseModel):
    """A person the question names, as the brain holds them."""

    model_config = ConfigDict(frozen=True)

    iri: str
    name: str
    said: str
    """The words the question used ("ekr", "Martin Thomson")."""


class Mentions(BaseModel):
    """Everything a question names that the brain holds (or was asked for and does not)."""

    model_config = ConfigDict(frozen=True)

    rfcs: tuple[int, ...] = ()
    unknown_rfcs: tuple[int, ...] = ()
    drafts: tuple[str, ...] = ()
    """Drafts named or in play, named ones first."""
    named_drafts: tuple[str, ...] = ()
    """Drafts the question wrote out by name."""
    unknown_drafts: tuple[str, ...] = ()
    revisions: tuple[tuple[str, str], ...] = ()
    """(draft, revision number) pairs, in question order."""
    sections: tuple[str, ...] = ()
    rfc_sections: tuple[str, ...] = ()
    """The sections written beside an RFC's name ("RFC 8446 section 4.2.10", "section 4.2.10
    of RFC 8446"): numbered as in that RFC, not as in a revision the question names."""
    people: tuple[PersonMention, ...] = ()
    threads: tuple[int, ...] = ()
    unknown_threads: tuple[int, ...] = ()
    days: tuple[str, ...] = ()
    """ISO days named, as written (a day that does not exist is kept: the answer says so)."""

    @property
    def held(self) -> bool:
        """Whether the question names anything the brain holds."""
        return bool(
            self.rfcs
            or self.drafts
            or self.revisions
            or self.sections
            or self.people
            or self.threads
        )

    @property
    def unheld(self) -> bool:
        """Whether the question names a document or thread the brain does not hold."""
        return bool(self.unknown_rfcs or self.unknown_drafts or self.unknown_threads)


NAME_WORDS = 3
"""The most words a title may have and still be what people call the RFC ("HTTP/3")."""


def _called_names(
    titles: Mapping[int, str],
    drafts: Iterable[str],
    became: Mapping[str, int],
    subject: frozenset[str],
) -> list[tuple[str, re.Pattern[str], int | str, str | None]]:
    """(name, its pattern, the RFC number or draft it names, the draft to name instead when a
    question says "draft") for :meth:`Gazetteer.documents_named`: the names one document only is
    called by, none of them the subject's. A draft that became an RFC is that RFC ("qpack"
    is RFC 9204 and its draft) unless the question asks for the draft, and of drafts sharing a
    name the working group's is meant (draft-ietf-quic-invariants, not the individual draft
    it replaced)."""
    called: dict[str, set[int | str]] = {}
    for number, title in titles.items():
        short = " ".join(title.split())
        for name in {short, short.split(":", 1)[0]} if ":" in short else {short}:
            if 0 < len(name.split()) <= NAME_WORDS:
                called.setdefault(name.casefold(), set()).add(number)
    for draft in drafts:
        match = re.match(r"draft-[a-z0-9]+-[a-z0-9]+-([a-z0-9-]+)$", draft)
        if match:
            called.setdefault(match.group(1).replace("-", " "), set()).add(draft)
    found: list[tuple[str, re.Pattern[str], int | str, str | None]] = []
    for name, named in sorted(called.items()):
        words = re.findall(r"[a-z0-9]+", name)
        if len(name) < 3 or not words or set(words) <= subject:
            continue
        named_drafts = {d for d in named if isinstance(d, str)}
        group = {d for d in named_drafts if d.startswith("draft-ietf-")} or named_drafts
        rfcs = {d for d in named if isinstance(d, int)} | {became[d] for d in group if d in became}
        if len(rfcs) > 1 or (not rfcs and len(group) != 1):
            continue  # two documents go by this name: it names neither
        document: int | str = next(iter(rfcs)) if rfcs else next(iter(group))
        instead: str | None = next(iter(group)) if rfcs and len(group) == 1 else None
        # Whole words only, and not part of a longer name ("http" in "http/3").
        pattern = re.compile(rf"(?<![\w/-]){re.escape(name)}s?(?![\w/-])")
        found.append((name, pattern, document, instead))
    return found


class Gazetteer:
    """What a brain holds, by the names questions use for it (see the module docstring)."""

    def __init__(
        self,
        *,
        drafts: Mapping[str, Sequence[str]],
        became: Mapping[str, int],
        rfcs: Mapping[int, str | None],
        people: Iterable[tuple[str, str, Sequence[str]]],
        threads: Iterable[int],
        headings: HeadingIndex | None = None,
        subject_words: Iterable[str] = (),
        groups: Iterable[str] = (),
        permissive: bool = False,
        rfc_titles: Mapping[int, str] | None = None,
    ) -> None:
        """``drafts``: each draft's revision numbers; ``became``: the RFC number each draft
        became; ``rfcs``: each RFC's publication month; ``people``: (IRI, name, aliases);
        ``threads``: the issue and pull request numbers; ``headings``: the heading index, for
        section numbers and the words of headings; ``subject_words``: the words of the brain's
        own subject (the words most of its RFCs' titles share: "TLS", "QUIC"), which alone find
        no section; ``permissive``: hold every RFC, draft and thread a question names (the
        router's reading when it has no brain at hand); ``rfc_titles``: each RFC's title, for
        the names people call it by (:meth:`documents_named`)."""
        self.permissive = permissive
        self.groups = frozenset(g.casefold() for g in groups)
        """The working groups whose record the brain holds ("tls")."""
        self.subject_words = frozenset(w.casefold() for w in subject_words)
        self.drafts = {name: tuple(sorted(numbers)) for name, numbers in drafts.items()}
        self.became = dict(became)
        self.rfcs = dict(rfcs)
        self.threads = frozenset(threads)
        self.headings = headings
        self._called = _called_names(rfc_titles or {}, self.drafts, self.became, self.subject_words)
        self.names: dict[str, list[tuple[str, str]]] = {}
        """Lower-case name or alias → (IRI, name) of every person it may mean."""
        self._longest = 1
        self._first_names: dict[str, set[tuple[str, str]]] = {}
        """A first name alone ("Eric"), when it is the first name of one person only."""
        for iri, name, aliases in people:
            # A login is often the name run together ("martinduke").
            for said in {name, *aliases, name.replace(" ", "")}:
                key = " ".join(said.casefold().split())
                if len(key) < 2:
                    continue
                entry = (iri, name)
                if entry not in self.names.setdefault(key, []):
                    self.names[key].append(entry)
                self._longest = max(self._longest, len(key.split()))
            first = name.split()[0].casefold() if len(name.split()) > 1 else None
            if first and len(first) > 2:
                self._first_names.setdefault(first, set()).add((iri, name))

    @cached_property
    def speller(self) -> Speller:
        """The typo mender over the cue words and this brain's heading words; names, logins
        and draft names are never mended."""
        words = set(CUE_WORDS)
        if self.headings is not None:
            words |= self.headings.words()
        protected = set(_COMMON)
        for key in self.names:
            protected.update(key.split())
        for draft in self.drafts:
            protected.update(draft.split("-"))
        return Speller(words, protected)

    @classmethod
    def permissive_reader(cls) -> Gazetteer:
        """A gazetteer of no brain that takes every RFC, draft and thread a question names
        as held: what the words alone say."""
        return cls(drafts={}, became={}, rfcs={}, people=(), threads=(), permissive=True)

    def documents_named(
        self, question: str
    ) -> tuple[tuple[int, ...], tuple[str, ...], frozenset[str]]:
        """The RFCs and drafts ``question`` calls by name rather than number: an RFC by a
        short title ("HTTP/3") or the name before its title's colon ("QPACK"), a draft by
        the end of its name ("invariants" for draft-ietf-quic-invariants). A name made only
        of the brain's subject words ("QUIC") names nothing, and a name two documents share
        names neither. A question that says "draft" gets the draft an RFC came from. Also
        the search terms of the names found (:func:`heading_terms`), to weigh them against a
        heading the same words match."""
        text = " ".join(question.casefold().split())
        asks_for_draft = re.search(r"\bdrafts?\b", text) is not None
        rfcs: list[int] = []
        drafts: list[str] = []
        terms: set[str] = set()
        for name, pattern, document, draft in self._called:
            if pattern.search(text):
                terms.update(heading_terms(name))
                if asks_for_draft and draft is not None:
                    drafts.append(draft)
                elif isinstance(document, int):
                    rfcs.append(document)
                else:
                    drafts.append(document)
        return tuple(dict.fromkeys(rfcs)), tuple(dict.fromkeys(drafts)), frozenset(terms)

    def holds_draft(self, draft: str) -> bool:
        """Whether ``draft`` is a draft of this brain (any draft, when permissive)."""
        return draft in self.drafts or (self.permissive and not re.search(r"-\d{2}$", draft))

    def rfc_order(self, rfc: int) -> tuple[str, int]:
        """How RFCs rank when a question does not say which: the earliest published first,
        then the lower number."""
        return (self.rfcs.get(rfc) or "9999", rfc)

    def draft_order(self, draft: str) -> tuple[tuple[str, int], str]:
        """Drafts rank by the RFC they became (as :meth:`rfc_order`), then by name."""
        rfc = self.became.get(draft)
        return (self.rfc_order(rfc) if rfc else ("9999", 99999), draft)

    def read(self, question: str) -> Mentions:
        """The things ``question`` names (see the module docstring)."""
        text = " ".join(question.split())
        rfcs, unknown_rfcs = self._rfcs(text)
        revisions: list[tuple[str, str]] = []
        named: list[str] = []
        unknown_drafts: list[str] = []
        for match in islice(_REVISION.finditer(text), MOST):
            draft, number = match.group(1).lower(), match.group(2)
            if self.holds_draft(draft):
                revisions.append((draft, number))
                named.append(draft)
            elif f"{draft}-{number}" in self.drafts:
                named.append(f"{draft}-{number}")
            else:
                unknown_drafts.append(f"{draft}-{number}")
        for match in islice(_DRAFT.finditer(text), MOST):
            draft = match.group(1).lower()
            if self.holds_draft(draft):
                named.append(draft)
            elif not any(f"{d}-{n}" == draft for d, n in revisions) and not any(
                draft == u for u in unknown_drafts
            ):
                unknown_drafts.append(draft)
        self._nicknamed(text, revisions, named, unknown_drafts)
        named = list(dict.fromkeys(named))
        in_play = named or [d for d, rfc in self.became.items() if rfc in rfcs]
        spans = [m.span() for m in islice(_DRAFT.finditer(text), MOST)]
        for match in islice(_SHORT_REVISION.finditer(text), MOST):
            if any(start <= match.start() < end for start, end in spans):
                continue
            for number in (match.group(1), match.group(2)):
                if number is None:
                    continue
                found = self._short_revision(number.zfill(2), in_play)
                if found and found not in revisions:
                    revisions.append(found)
        drafts = list(dict.fromkeys([*named, *(d for d, _ in revisions)]))
        sections, rfc_sections = self._sections(text)
        threads, unknown_threads = self._threads(text)
        return Mentions(
            rfcs=tuple(rfcs),
            unknown_rfcs=tuple(unknown_rfcs),
            drafts=tuple(drafts),
            named_drafts=tuple(named),
            unknown_drafts=tuple(dict.fromkeys(unknown_drafts)),
            revisions=tuple(revisions),
            sections=tuple(sections),
            rfc_sections=tuple(rfc_sections),
            people=tuple(self._people(text)),
            threads=tuple(threads),
            unknown_threads=tuple(unknown_threads),
            days=tuple(m.group(1) for m in islice(_DAY.finditer(text), MOST)),
        )

    def _rfcs(self, text: str) -> tuple[list[int], list[int]]:
        held: list[int] = []
        unknown: list[int] = []
        for match in islice(_RFC.finditer(text), MOST):
            number = int(match.group(1))
            target = held if number in self.rfcs or self.permissive else unknown
            if number not in target:
                target.append(number)
        return held, unknown

    def _nicknamed(
        self,
        text: str,
        revisions: list[tuple[str, str]],
        named: list[str],
        unknown_drafts: list[str],
    ) -> None:
        """Add the revisions written as the tail of a draft's name and a number
        ("tls13-21" for draft-ietf-tls-tls13-21), where that tail ends the name of one of
        this brain's drafts only (or of one only that holds that revision)."""
        for match in islice(_NICKNAMED_REVISION.finditer(text), MOST):
            tail, number = match.group(1).lower(), match.group(2)
            if tail.startswith("draft-") or tail == "draft":
                continue
            ends = [d for d in self.drafts if d.endswith(f"-{tail}")]
            holding = [d for d in ends if number in self.drafts[d]]
            if len(holding) == 1:
                if (holding[0], number) not in revisions:
                    revisions.append((holding[0], number))
                named.append(holding[0])
            elif len(ends) == 1 and not holding:
                unknown_drafts.append(f"{ends[0]}-{number}")

    def _short_revision(self, number: str, in_play: Sequence[str]) -> tuple[str, str] | None:
        candidates = [d for d in in_play if number in self.drafts.get(d, ())]
        if not candidates and not in_play:
            candidates = sorted(
                (d for d, numbers in self.drafts.items() if number in numbers),
                key=self.draft_order,
            )
        return (candidates[0], number) if candidates else None

    def _sections(self, text: str) -> tuple[list[str], list[str]]:
        """The section numbers the question names, and those of them written beside an
        RFC's name."""
        found: list[str] = []
        beside_rfc: list[str] = []
        taken: set[int] = set()

        def by_rfc(match: re.Match[str]) -> bool:
            # Only the characters just around count (a look further is quadratic).
            before = text[max(0, match.start() - 40) : match.start()]
            return bool(_RFC_BEFORE.search(before) or _RFC_AFTER.match(text, match.end()))

        for match in islice(_SECTION_WORD.finditer(text), MOST):
            found.append(match.group(1).upper())
            taken.add(match.start(1))
            if by_rfc(match):
                beside_rfc.append(match.group(1).upper())
        for match in islice(_BARE_SECTION.finditer(text), MOST):
            if match.start() in taken:
                continue
            number = match.group(1)
            # Only the words just before count (a look further back is quadratic on long text).
            before = text[max(0, match.start() - 48) : match.start()].rstrip()
            word = re.search(r"([A-Za-z]+)[\s/v]*$", before)
            previous = word.group(1).lower() if word else ""
            if previous in _VERSION_WORDS or before.endswith(("/", "v")):
                continue
            after_document = bool(
                re.search(r"(?:\bRFC\s*-?\s*\d{3,5}|draft-[\w-]+)\s*$", before, re.I)
            )
            if number.count(".") >= 2 or after_document:
                found.append(number)
                if by_rfc(match):
                    beside_rfc.append(number)
        return list(dict.fromkeys(found)), list(dict.fromkeys(beside_rfc))

    def _threads(self, text: str) -> tuple[list[int], list[int]]:
        held: list[int] = []
        unknown: list[int] = []
        for match in islice(_THREAD.finditer(text), MOST):
            # "RFC 8446 section 4.2" never reads as a thread; "draft-20" neither (no # or word).
            number = int(match.group(1))
            target = held if number in self.threads or self.permissive else unknown
            if number not in target:
                target.append(number)
        return held, unknown

    def _people(self, text: str) -> list[PersonMention]:
        words = [
            w.strip(".,;:!?()[]\"'").removesuffix("'s").removesuffix("’s")
            for w in _WORD.findall(text)
        ]
        words = [w for w in words if w]
        found: list[PersonMention] = []
        seen: set[str] = set()
        position = 0
        starts = self._starts
        while position < len(words):
            matched = False
            first = words[position].casefold()
            if first not in starts and "@" not in first:
                position += 1  # no name, login or first name begins with this word
                continue
            for size in range(min(self._longest, len(words) - position), 0, -1):
                said = " ".join(words[position : position + size])
                key = said.casefold()
                if "@" in key:
                    key = key.split("@", 1)[0]
                people = self.names.get(key)
                if people is None and size == 1:
                    people = sorted(self._first_names.get(key, ()))
                if not people or (size == 1 and not self._may_be_person(key)):
                    continue
                if len(people) == 1 and people[0][0] not in seen:
                    seen.add(people[0][0])
                    found.append(PersonMention(iri=people[0][0], name=people[0][1], said=said))
                position += size
                matched = True
                break
            if not matched:
                position += 1
        return found

    @cached_property
    def _starts(self) -> frozenset[str]:
        """The first word of every name, login and first name the gazetteer holds."""
        return frozenset([key.split()[0] for key in self.names] + list(self._first_names))

    def _may_be_person(self, word: str) -> bool:
        """A single word names a person only when it is not a word questions or headings use."""
        if word in STOP_WORDS or word in _COMMON or word.isdigit() or len(word) < 3:
            return False
        return not (self.headings is not None and self.headings.is_heading_word(word))
