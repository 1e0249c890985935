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
from typing import NamedTuple

from pydantic import BaseModel, ConfigDict

from ratified_rdf.answers.heading_search import (
    PROTOCOL_NAMES,
    STOP_WORDS,
    HeadingIndex,
    heading_terms,
)
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
_PAIRED_REVISION = re.compile(
    r"\s*(?:and|to|vs\.?|versus|->|→)\s*(?:draft\s*-?\s*|revision\s*|rev\.?\s*|-)?"
    r"(\d{1,2})\b(?![.\d])",
    re.IGNORECASE,
)
"""A second revision number written short right after a revision's full name."""
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
_BARE_RFC = re.compile(
    # "9002 section 6.2.1", "section 6.2.1 of 9002": an RFC's number without "RFC".
    r"(?<![\w.#/-])(\d{4,5})(?=(?:'s)?\s*(?:sections?\b|sec\.|§|appendix\b))|"
    r"(?<=\b(?:of|in) )(\d{4,5})\b(?![\w.-])",
    re.IGNORECASE,
)
_MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORDINAL = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_WORDED_DAY = re.compile(
    # "March 15 2017", "March 15th, 2017", "15 March 2017", "the 15th of March, 2017".
    rf"\b(?:{_MONTH}\s+{_ORDINAL}|{_ORDINAL.replace('day', 'd2')}\s+(?:of\s+)?"
    rf"{_MONTH.replace('month', 'm2')}),?\s+(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)
_NUMBERED_DAY = re.compile(
    # "2017/03/15", "2017.03.15", "15/03/2017" and "3/15/2017" when only one order is a day.
    r"(?<![\w./-])(?:(?P<year>(?:19|20)\d\d)[/.](?P<month>\d{1,2})[/.](?P<day>\d{1,2})|"
    r"(?P<a>\d{1,2})[/.](?P<b>\d{1,2})[/.](?P<y2>(?:19|20)\d\d))(?![\w/-]|\.\d)"
)
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
    """ISO days named, as written or in words ("March 15 2017"), as ISO days (a day that
    does not exist is kept: the answer says so)."""
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(revision number, the drafts holding it) for a revision written short that several
    drafts hold when nothing in the question picks one ("draft 25" in a brain of six
    series): the answer asks which is meant, never answers from one of them."""

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
            or self.ambiguous
        )

    @property
    def unheld(self) -> bool:
        """Whether the question names a document or thread the brain does not hold."""
        return bool(self.unknown_rfcs or self.unknown_drafts or self.unknown_threads)


NAME_WORDS = 3
"""The most words a title may have and still be what people call the RFC ("HTTP/3")."""


def _protocol_word(word: str) -> bool:
    """Whether ``word`` of a title only names the protocol: "TLS", "1.3", the "D" of "(D)TLS"."""
    return (
        word.casefold() in PROTOCOL_NAMES
        or len(word) == 1
        or re.fullmatch(r"v?\d+(?:\.\d+)*", word, re.IGNORECASE) is not None
    )


def draft_title_names(title: str) -> list[str]:
    """The names a draft's title gives it, casefolded: the title without a version at its end
    when it is short ("compact tls" for "Compact TLS 1.3"); without the protocol's name, when
    two or three words are left ("encrypted client hello" for "TLS Encrypted Client Hello");
    and then their initials, when three or more ("ech"), as people shorten it."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9.]*", title)
    while words and re.fullmatch(r"v?\d+(?:\.\d+)*", words[-1], re.IGNORECASE):
        words.pop()
    # "Exported Authenticators in TLS", "Delegated Credentials for (D)TLS": what the draft is
    # for ends its own name.
    for at in range(len(words) - 1, 0, -1):
        if words[at].casefold() in {"for", "in", "over", "with"}:
            if all(_protocol_word(w) for w in words[at + 1 :]):
                words = words[:at]
            break
    names: list[str] = []
    if 0 < len(words) <= NAME_WORDS:
        names.append(" ".join(words).casefold())
    own = [w for w in words if w.casefold() not in PROTOCOL_NAMES]
    # Only a name of its own words: "Using TLS to Secure QUIC" leaves "using to secure".
    if any(w.casefold() in STOP_WORDS or not w.isalpha() for w in own):
        return names
    if own != words and 2 <= len(own) <= NAME_WORDS:
        names.append(" ".join(own).casefold())
    if 2 <= len(own) <= NAME_WORDS:
        # "ClientHello" is two words to its initials; "PSKs" is one.
        parts = [
            p
            for w in own
            for p in (
                [w] if re.fullmatch(r"[A-Z]+s?", w) else re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+", w)
            )
        ]
        initials = "".join(p[0] for p in parts if p.casefold() not in STOP_WORDS or p[0].isupper())
        if len(initials) >= 3 and initials.isalpha():
            names.append(initials.casefold())
    return names


def _called_names(
    titles: Mapping[int, str],
    drafts: Iterable[str],
    became: Mapping[str, int],
    subject: frozenset[str],
    draft_titles: Mapping[str, str] | None = None,
) -> list[tuple[str, re.Pattern[str], int | str, str | None]]:
    """(name, its pattern, the RFC number or draft it names, the draft to name instead when a
    question says "draft") for :meth:`Gazetteer.documents_named`: the names one document only is
    called by, none of them the subject's. A draft that became an RFC is that RFC ("qpack"
    is RFC 9204 and its draft) unless the question asks for the draft, and of drafts sharing a
    name the working group's is meant (draft-ietf-quic-invariants, not the individual draft
    it replaced)."""
    called: dict[str, set[int | str]] = {}
    for draft, title in (draft_titles or {}).items():
        for name in draft_title_names(title):
            called.setdefault(name, set()).add(draft)
    for number, title in titles.items():
        short = " ".join(title.split())
        for name in {short, short.split(":", 1)[0]} if ":" in short else {short}:
            if 0 < len(name.split()) <= NAME_WORDS:
                called.setdefault(name.casefold(), set()).add(number)
        for name in draft_title_names(short):  # "dnssec chain extension"
            called.setdefault(name, set()).add(number)
    for draft in drafts:
        match = re.match(r"draft-[a-z0-9]+-[a-z0-9]+-([a-z0-9-]+)$", draft)
        if match:
            called.setdefault(match.group(1).replace("-", " "), set()).add(draft)
            if re.match(r"rfc\d{3,5}[a-z]", match.group(1)):  # "8446bis"
                called.setdefault(match.group(1)[3:].replace("-", ""), set()).add(draft)
    found: list[tuple[str, re.Pattern[str], int | str, str | None]] = []
    for name, named in sorted(called.items()):
        words = re.findall(r"[a-z0-9]+", name)
        # The subject's words name every question's subject where several RFCs share them
        # ("QUIC"); a brain of one RFC is about that RFC, so its title's words name it.
        if len(name) < 3 or not words or (set(words) <= subject and len(titles) > 1):
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


def _days(text: str) -> list[str]:
    """The days ``text`` names, as ISO days in the order written: ISO days as written (a
    day that does not exist is kept, for the answer to say so), days in words ("March 15
    2017") and numbered days whose order is plain ("2017/03/15", "15/03/2017")."""
    found: list[tuple[int, str]] = [(m.start(), m.group(1)) for m in _DAY.finditer(text)]
    for match in islice(_WORDED_DAY.finditer(text), MOST):
        month = _MONTHS[(match.group("month") or match.group("m2")).casefold()]
        day = int(match.group("day") or match.group("d2"))
        found.append((match.start(), f"{match.group('year')}-{month:02d}-{day:02d}"))
    for match in islice(_NUMBERED_DAY.finditer(text), MOST):
        if match.group("year"):
            year, month, day = match.group("year"), int(match["month"]), int(match["day"])
        else:
            first, second = int(match["a"]), int(match["b"])
            if (first <= 12) == (second <= 12):
                continue  # "03/04/2017" is two days: neither is read
            year = match.group("y2")
            month, day = (first, second) if first <= 12 else (second, first)
        found.append((match.start(), f"{year}-{month:02d}-{day:02d}"))
    return [day for _, day in sorted(found)][:MOST]


class SeriesName(NamedTuple):
    """A short name of a draft series, as people write it ("quic-recovery", "8446bis")."""

    said: str
    draft: str
    distinctive: bool
    """Whether the name alone names the series (it holds a digit or joins two words):
    "8446bis" does, "recovery" names it only beside "draft" or a revision number."""


_SERIES_REVISION = re.compile(
    r"\s*(?:'s\s*)?(?:(?:drafts?|revisions?|rev\.?|versions?)\s*(?:number\s*|no\.?\s*)?)?"
    r"[-#]?\s*(\d{1,2})\b(?!\.\d)",
    re.IGNORECASE,
)
_SERIES_DRAFT = re.compile(r"\s*(?:-\s*)?draft\b(?!s)", re.IGNORECASE)


def _series_names(drafts: Iterable[str], excluded: frozenset[str]) -> list[SeriesName]:
    """The short names of each draft series, built from the drafts' own names: the end of
    the name after the working group ("recovery", "rfc8446bis"), that end with the group
    before it ("quic-recovery"), an RFC number's end without "rfc" ("8446bis"), the end
    run together ("rfc8446bis" for "rfc8446-bis") and a version run into a name written out
    ("dtls 1.3" for "dtls13"). A name two series share names the working
    group's draft, else neither; a name that is the group's or the subject's names none."""
    owners: dict[str, set[str]] = {}
    for draft in drafts:
        match = re.match(r"draft-[a-z0-9]+-([a-z0-9]+)-([a-z0-9-]+)$", draft)
        if not match:
            continue
        group, rest = match.groups()
        forms = {rest, f"{group}-{rest}", rest.replace("-", "")}
        for form in list(forms):
            if re.match(r"rfc\d{3,5}[a-z]", form):
                forms.add(form[3:])
            # A protocol's version run into its name is written out: "dtls13" is the
            # "dtls 1.3" (or "dtls1.3") draft.
            if versioned := re.fullmatch(r"([a-z]{2,})(\d)(\d)", form):
                letters, major, minor = versioned.groups()
                forms |= {f"{letters} {major}.{minor}", f"{letters}{major}.{minor}"}
        for form in forms:
            owners.setdefault(form, set()).add(draft)
    names: list[SeriesName] = []
    for form, held in sorted(owners.items()):
        group = {d for d in held if d.startswith("draft-ietf-")} or held
        if len(group) != 1 or form in excluded or len(form) < 3 or form.isdigit():
            continue
        distinctive = bool(re.search(r"\d|-", form))
        names.append(SeriesName(form, next(iter(group)), distinctive))
    return names


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
        mail: bool = True,
        issues: bool = True,
        group: bool = False,
        draft_titles: Mapping[str, str] | None = None,
    ) -> None:
        """``drafts``: each draft's revision numbers; ``became``: the RFC number each draft
        became; ``rfcs``: each RFC's publication month; ``people``: (IRI, name, aliases);
        ``threads``: the issue and pull request numbers; ``headings``: the heading index, for
        section numbers and the words of headings; ``subject_words``: the words of the brain's
        own subject (the words most of its RFCs' titles share: "TLS", "QUIC"), which alone find
        no section; ``permissive``: hold every RFC, draft and thread a question names (the
        router's reading when it has no brain at hand); ``rfc_titles``: each RFC's title, for
        the names people call it by (:meth:`documents_named`); ``mail``: whether it holds a
        mailing list's archive (what a list said is never ingested without one); ``issues``:
        whether it holds any issue (a brain may know pull requests from merge commits alone);
        ``group``: whether it reads several brains' runs (a working group's repositories in
        one brain, :mod:`ratified_rdf.group`); ``draft_titles``: each draft's title, for the
        names people call it by (:func:`draft_title_names`)."""
        self.permissive = permissive
        self.group = group
        self.mail = mail
        self.issues = issues
        self.groups = frozenset(g.casefold() for g in groups)
        """The working groups whose record the brain holds ("tls")."""
        self.subject_words = frozenset(w.casefold() for w in subject_words)
        self.drafts = {name: tuple(sorted(numbers)) for name, numbers in drafts.items()}
        self.became = dict(became)
        self.unpublished_last_revisions = frozenset(
            f"{name}-{numbers[-1]}"
            for name, numbers in self.drafts.items()
            if numbers and name not in self.became
        )
        """The names of the last revisions of the drafts that became no RFC the brain holds
        ("draft-example-pigeon-02"): their sections stand for their drafts' own."""
        self.rfcs = dict(rfcs)
        self.threads = frozenset(threads)
        self.headings = headings
        self._called = _called_names(
            rfc_titles or {}, self.drafts, self.became, self.subject_words, draft_titles
        )
        series = _series_names(self.drafts, self.groups | self.subject_words | _COMMON)
        self._series = {name.said: name for name in series}
        # One pattern for every short name, the longest first ("quic-recovery" before
        # "recovery"), so a question is scanned once whatever the number of series: whole
        # words, a revision number may follow a hyphen ("quic-recovery-25").
        forms = sorted(self._series, key=lambda form: (-len(form), form))
        self._series_pattern = (
            re.compile(
                rf"(?<![\w./-])({'|'.join(map(re.escape, forms))})(?![\w/]|-(?!\d))",
                re.IGNORECASE,
            )
            if forms
            else None
        )
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
        if not self.permissive:
            text = _BARE_RFC.sub(self._called_rfc, text)
        rfcs, unknown_rfcs = self._rfcs(text)
        revisions: list[tuple[str, str]] = []
        named: list[str] = []
        unknown_drafts: list[str] = []
        for match in islice(_REVISION.finditer(text), MOST):
            draft, number = match.group(1).lower(), match.group(2)
            if self.holds_draft(draft):
                revisions.append((draft, number))
                named.append(draft)
                # "between draft-ietf-tls-dtls13-20 and 21": the second number is the same
                # draft's revision, written short.
                paired = _PAIRED_REVISION.match(text, match.end())
                second = paired.group(1).zfill(2) if paired else ""
                held = self.permissive or second in self.drafts.get(draft, ())
                if second and held and (draft, second) not in revisions:
                    revisions.append((draft, second))
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
        self._series_named(text, revisions, named, unknown_drafts)
        named = list(dict.fromkeys(named))
        in_play = named or [d for d, rfc in self.became.items() if rfc in rfcs]
        spans = [m.span() for m in islice(_DRAFT.finditer(text), MOST)]
        ambiguous: list[tuple[str, tuple[str, ...]]] = []
        shorts = [
            match
            for match in islice(_SHORT_REVISION.finditer(text), MOST)
            if not any(start <= match.start() < end for start, end in spans)
        ]
        if shorts and not in_play and not self.permissive:
            # A document called by its title's name ("HTTP/3 draft 20") puts its draft in play.
            called_rfcs, called_drafts, _ = self.documents_named(text)
            in_play = [*called_drafts, *(d for d, rfc in self.became.items() if rfc in called_rfcs)]
        sections, rfc_sections = self._sections(text)
        numbered = [n for n in sections if "." in n or n[:1].isdigit()]
        numbers = [
            number.zfill(2)
            for match in shorts
            for number in (match.group(1), match.group(2))
            if number is not None
        ]
        # The revisions a question writes short belong to one draft ("between draft-20 and
        # 21"): the drafts holding all of them are its candidates, read together.
        together = self._short_revisions(numbers, in_play, numbered)
        for number in numbers:
            found: tuple[str, str] | list[str] | None
            if isinstance(together, str):
                found = (together, number)
            elif together is not None:
                found = together
            else:
                found = self._short_revision(number, in_play, numbered)
            if isinstance(found, tuple) and found not in revisions:
                revisions.append(found)
            elif isinstance(found, list) and not revisions:
                ambiguous.append((number, tuple(found)))
        drafts = list(dict.fromkeys([*named, *(d for d, _ in revisions)]))
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
            days=tuple(_days(text)),
            ambiguous=tuple(dict.fromkeys(ambiguous)) if not revisions else (),
        )

    def _called_rfc(self, match: re.Match[str]) -> str:
        """A bare number beside a section read as the RFC it is, when the brain holds it."""
        number = match.group(1) or match.group(2)
        return f"RFC {number}" if int(number) in self.rfcs else match.group(0)

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

    def _series_named(
        self,
        text: str,
        revisions: list[tuple[str, str]],
        named: list[str],
        unknown_drafts: list[str],
    ) -> None:
        """Add the drafts and revisions written by a series' short name ("quic-recovery
        draft 25", "the 8446bis draft", "qpack draft 10"): a distinctive name anywhere, a plain
        word only beside "draft" or a revision number."""
        if self._series_pattern is None:
            return
        short_revision = _SHORT_REVISION.search(text) is not None
        for match in islice(self._series_pattern.finditer(text), MOST):
            name = self._series[match.group(1).casefold()]
            revision = _SERIES_REVISION.match(text, match.end())
            if revision is None:
                # Without a revision, "the 8446bis draft" names the draft, and so does a
                # name beside a revision written short ("draft 25 of quic-recovery"); the
                # name alone ("what is tls13?", "the qpack drafts") is read as people call
                # a document, the RFC it became first (see documents_named).
                if _SERIES_DRAFT.match(text, match.end()) or (name.distinctive and short_revision):
                    named.append(name.draft)
                continue
            named.append(name.draft)
            number = revision.group(1).zfill(2)
            if number in self.drafts.get(name.draft, ()):
                if (name.draft, number) not in revisions:
                    revisions.append((name.draft, number))
            else:
                unknown_drafts.append(f"{name.draft}-{number}")

    def _short_revisions(
        self, numbers: Sequence[str], in_play: Sequence[str], sections: Sequence[str]
    ) -> str | list[str] | None:
        """The one draft holding every revision of ``numbers`` when none is in play (the
        drafts, when several do and none is picked), or None to read them one by one."""
        if len(set(numbers)) < 2 or in_play or self.permissive:
            return None
        candidates = sorted(
            (d for d, held in self.drafts.items() if set(numbers) <= set(held)),
            key=self.draft_order,
        )
        if len(candidates) > 1 and sections and self.headings is not None:
            index = self.headings
            holding = [
                d
                for d in candidates
                if any(n in index.numbers(f"{d}-{r}") for n in sections for r in numbers)
            ]
            candidates = holding or candidates
        if not candidates:
            return None
        return candidates[0] if len(candidates) == 1 else candidates

    def _short_revision(
        self, number: str, in_play: Sequence[str], sections: Sequence[str] = ()
    ) -> tuple[str, str] | list[str] | None:
        """The revision ``number`` of the draft in play, or else the drafts holding it: one
        is the answer, several are returned for the question to say which (unless its
        section number is held by one of their revisions only)."""
        candidates = [d for d in in_play if number in self.drafts.get(d, ())]
        if candidates:
            return (candidates[0], number)
        if in_play:
            return None
        candidates = sorted(
            (d for d, numbers in self.drafts.items() if number in numbers), key=self.draft_order
        )
        if len(candidates) > 1 and sections and self.headings is not None:
            index = self.headings
            holding = [
                d for d in candidates if any(n in index.numbers(f"{d}-{number}") for n in sections)
            ]
            candidates = holding or candidates
        if len(candidates) > 1 and not self.permissive:
            return candidates
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
