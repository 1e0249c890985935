"""Synthetic working-group repositories shaped like the TLS corpus, multiplied by a factor.

``make_corpus(folder, factor=k, seed=s)`` writes, deterministically from the seed, everything
``Brain.build`` reads, the way ``tests/pigeon.py`` makes its fictional repository but at scale:

- a bare git repository (written with ``git fast-import``: one process, no per-commit cost)
  holding ``2·k`` drafts. Each draft is a chain of 15–29 tagged revisions of a kramdown-rfc
  document with about 100–140 numbered sections on its own branch, ending in an RFC whose text is
  added at tag ``rfcNNNNN``. Between revisions, commits edit section text; some insert, remove,
  rename or reorder sections, so numbers move, headings drift (with or without an anchor that
  survives the rename) and alignment has work to do. Pull requests are merged with merge
  commits ("Merge pull request #N …") or squashed ("… (#N)"); some say "Fixes #N";
- ``gh-pages:archive.json`` in i-d-template's format: issues and pull requests with comments,
  reviews and review comments whose text cites sections ("Section 4.2", "Section 4.2 of
  draft-…-07", "draft-…-07 §4.2", a ``#section-4.2`` link, a ``{{anchor}}`` cross-reference)
  by their number in the revision current when the post was written, plus citations that must
  not resolve (another RFC's section, a section that does not exist);
- optionally (``mail=True``) an mbox of a list with the same kind of messages;
- a manifest folder (``manifest.toml`` and the mbox) naming the drafts, RFCs and archive.

People are "Person 0001"…, logins ``person-0001``, addresses ``@example.invalid``; some commit
from a second address under the same name. Activity is heavy-tailed: each draft has two or
three editors who make most direct commits, and a community whose members post with a Zipf
distribution (exponent 1.6, as measured on the TLS archive: the most active person wrote 28%
of its posts), drawn from a global population where a few people belong to many communities.
RFC numbers start at 90000 and every name, text and date (2031 onwards) is invented.

``×1`` is the TLS corpus's shape (see :data:`TLS_SHAPE`, counted read-only from
``tls13-spec.bundle`` with the project's own readers); ``×k`` multiplies the drafts, and with
them the threads, posts, commits and people, over the same span of years. Draft ``i`` is
generated from its own random streams, so draft 0 is the same document with the same
history at every factor. ``shape="tiny"`` (:data:`SHAPES`) makes every draft a miniature of
the same kind of history, built in seconds, for the tests
(``tests/unit/test_synthetic_corpus.py`` checks :class:`Truth` against one) and smoke runs.

Three layout choices keep what the build derives checkable against what was generated (the
benchmark reports how well it matches, :class:`Truth`):

- each draft lives on its own branch, because a commit is attributed to the first revision tag
  (in the manifest's order) that contains it, whatever file it changed; on one shared branch,
  draft B's commits would land in draft A's earlier revisions;
- drafts start in turn over four years and each stays open two to five years, to its RFC
  (at ×1 the two barely overlap, as tls13 then rfc8446bis; at ×10 most of the twenty do). A
  bare "Section 4.2" or ``{{anchor}}`` can only be resolved in the draft its post is about,
  so whether anything written tells that draft apart is part of the truth
  (:attr:`Truth.pinned`): three threads in four carry their draft's name as a label (chosen
  by a hash, so every other draw is unchanged), some posts name their draft ("Section 4.2 of
  draft-…-07"), a list message's subject names it; where several drafts were open and nothing
  written names one, the citation must stay unresolved;
- the RFC text is added by the lead editor in one commit, which the history reads as a change
  to every section of the RFC.

Run alone to generate one corpus and print its counts::

    python -m benchmarks.synthetic --factor 1 --seed 7 --out /tmp/synthetic-x1
    python -m benchmarks.synthetic --shape tiny --out /tmp/synthetic-tiny
"""

from __future__ import annotations

import argparse
import base64
import bisect
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from functools import lru_cache
from pathlib import Path

# --- calibration ---------------------------------------------------------------------------

TLS_SHAPE: dict[str, float] = {
    "chains": 2,  # draft-ietf-tls-tls13 (00-28) → RFC 8446; rfc8446bis (00-14) → RFC 9846
    "revisions": 45,  # 29 + 15, and draft-rescorla-tls-rfc8446-bis-00
    "sections_per_revision_min": 94,
    "sections_per_revision_median": 133,
    "sections_per_revision_max": 139,
    "issues": 446,
    "pulls": 998,
    "merged_pulls": 725,
    "pulls_fixing_issues": 95,
    "posts": 6092,  # 1444 openings, 2363 comments, 979 reviews, 1306 review comments
    "citations": 390,  # in 254 posts; 75 unresolved, 228 while the text was changing
    "commits": 2226,  # 420 of them merges
    "people": 173,  # from 312 identities
    "top_poster_share": 0.28,
    "top_committer_share": 0.56,
}
"""The TLS corpus counted with the project's readers (``read_spec``, ``read_discussion``) on
``tls13-spec.bundle``: counts only, no content. ×1 aims at these."""

CHAINS_PER_FACTOR = 2


@dataclass(frozen=True)
class Shape:
    """How much one draft holds: ×k is ``2·k`` drafts of one shape."""

    revisions: tuple[int, int]
    """Fewest and most revisions of a chain."""
    sections_start: tuple[int, int]
    """Fewest and most sections of -00; a section is removed only above the fewest."""
    sections_max: int
    """No section is inserted at this many."""
    issues: tuple[float, float]
    """Mean and standard deviation of a draft's issues."""
    pulls: tuple[float, float]
    """Mean and standard deviation of its pull requests."""
    direct_commits: tuple[float, float]
    """Mean and standard deviation of its commits outside pull requests."""
    people: int
    """People in the global population, per draft."""
    community: tuple[int, int]
    """Fewest and most people discussing one draft."""
    citing: float = 1.0
    """How many times more often than :data:`CITE_PROBABILITY` says a post cites a section."""


SHAPES: dict[str, Shape] = {
    "tls": Shape((15, 29), (100, 130), 140, (223, 12), (499, 20), (430, 20), 130, (120, 150)),
    "tiny": Shape((3, 4), (10, 13), 16, (6, 1), (12, 2), (10, 2), 12, (6, 9), citing=4.0),
}
"""``tls`` is the TLS corpus's shape (what the scale benchmark builds); ``tiny`` is the same
kind of history in miniature, built in seconds (what the tests and ``--smoke`` build)."""
MERGED_SHARE = 0.726
SQUASH_SHARE = 0.42
FIXES_SHARE = 0.19
POSTER_ZIPF = 1.6
SPAN_DAYS = 8 * 365
REVISION_GAP_DAYS = 55
BASE = datetime(2031, 1, 6, 9, 0, tzinfo=UTC)
RFC_BASE = 90000
REPOSITORY = "https://git.example.invalid/synthetic-wg/synthetic-spec"
ARCHIVE_REPO = "synthetic-wg/synthetic-spec"
LIST = "synthetic"

CITATION_FORMS: tuple[tuple[str, float], ...] = (
    ("section", 0.42),  # "Section 4.2": the current revision of the post's draft
    ("section-of-revision", 0.12),  # "Section 4.2 of draft-synthetic-…-07"
    ("revision-sign", 0.05),  # "draft-synthetic-…-07 §4.2"
    ("url", 0.06),  # "https://datatracker.example.invalid/doc/html/draft-…-07#section-4.2"
    ("xref", 0.13),  # "{{anchor}}": current revision, like a bare number
    ("foreign", 0.12),  # "RFC 80123 Section 3.1": another document; must not resolve
    ("missing", 0.10),  # a section number the revision does not have; must not resolve
)
"""How posts cite, by share. The TLS archive's resolved citations are 59% bare numbers, 14%
anchors and 5% explicit revisions, and 19% do not resolve; with many drafts open at once,
more people name the draft, so explicit forms get a larger share here."""

RESOLVING_FORMS = frozenset({"section", "section-of-revision", "revision-sign", "url", "xref"})
BARE_FORMS = frozenset({"section", "xref"})
"""Forms that name no draft: they resolve only where the post's draft can be told apart."""
NAMING_FORMS = frozenset({"section-of-revision", "revision-sign", "url"})
"""Forms that name the draft, and so tell which draft the whole post is about."""
LABELLED_SHARE = 0.75
"""Threads labelled with their draft's name (as multi-draft repositories often do)."""
CITE_PROBABILITY = {
    "opening-issue": 0.2,
    "opening-pull": 0.075,
    "comment": 0.045,
    "review": 0.055,
    "review-comment": 0.04,
    "message": 0.15,
}

# --- words ---------------------------------------------------------------------------------

NOUNS = (
    "anchor", "archive", "badge", "basket", "beacon", "binding", "block", "bound", "branch",
    "bucket", "budget", "cadence", "canopy", "carrier", "cascade", "channel", "charter", "cipher",
    "clock", "cluster", "codec", "courier", "credit", "cursor", "datagram", "delegate", "digest",
    "domain", "envelope", "epoch", "escrow", "fabric", "fence", "field", "flag", "frame",
    "gateway", "glyph", "grant", "harbor", "header", "horizon", "index", "journal", "kernel",
    "lattice", "ledger", "lease", "lens", "limit", "link", "loft", "manifest", "marker", "meadow",
    "mirror", "nonce", "notice", "offset", "orbit", "packet", "parcel", "path", "pebble",
    "permit", "pillar", "pivot", "policy", "portal", "quorum", "quota", "ranger", "receipt",
    "record", "relay", "replica", "ribbon", "ridge", "route", "sampler", "schedule", "scope",
    "seal", "segment", "sentinel", "signal", "slot", "snapshot", "spool", "stamp", "stream",
    "summit", "tablet", "tally", "ticket", "token", "trace", "trellis", "tunnel", "vault",
    "vector", "voucher", "wafer", "window", "witness",
)  # fmt: skip
ADJECTIVES = (
    "active", "bounded", "brisk", "central", "cold", "compact", "deferred", "direct", "early",
    "empty", "eventual", "external", "final", "fresh", "hidden", "implicit", "initial", "inner",
    "late", "layered", "linked", "local", "mutual", "nested", "open", "optional", "outer",
    "paired", "partial", "passive", "pending", "primary", "quiet", "random", "remote", "sealed",
    "shared", "signed", "silent", "spare", "static", "strict", "sturdy", "tentative", "transient",
    "trusted", "warm", "weighted",
)  # fmt: skip
VERBS = (
    ("accept", "accepted"), ("announce", "announced"), ("attach", "attached"),
    ("carry", "carried"), ("check", "checked"), ("compress", "compressed"),
    ("confirm", "confirmed"), ("derive", "derived"), ("discard", "discarded"),
    ("echo", "echoed"), ("encode", "encoded"), ("forward", "forwarded"), ("hold", "held"),
    ("ignore", "ignored"), ("include", "included"), ("label", "labelled"), ("mark", "marked"),
    ("merge", "merged"), ("negotiate", "negotiated"), ("omit", "omitted"), ("pad", "padded"),
    ("queue", "queued"), ("reject", "rejected"), ("renew", "renewed"), ("reset", "reset"),
    ("retain", "retained"), ("rotate", "rotated"), ("send", "sent"), ("sign", "signed"),
    ("split", "split"), ("store", "stored"), ("verify", "verified"),
)  # fmt: skip
KEYWORDS = ("MUST", "MUST NOT", "SHOULD", "SHOULD NOT", "MAY")
FIXED_FIRST = ("Introduction", "Conventions and Definitions")
FIXED_LAST = ("Security Considerations", "IANA Considerations")
REPLIES = (
    "Agreed.",
    "I think this is fine as it is.",
    "Thanks, this reads better now.",
    "Could we keep the old wording for now?",
    "This looks good to me.",
    "I am not sure this is needed.",
    "Let us discuss this at the interim.",
    "Any objections to merging this?",
    "I would rather not change the wire format here.",
    "Nit: the wording could be tighter.",
    "Is there an implementation of this yet?",
    "Fine with me either way.",
)


@lru_cache(maxsize=64)
def _zipf_table(size: int, exponent: float) -> tuple[float, ...]:
    """Cumulative Zipf weights of ranks ``0 … size-1``."""
    total, out = 0.0, []
    for rank in range(size):
        total += 1.0 / (rank + 1) ** exponent
        out.append(total)
    return tuple(out)


def zipf_index(rng: random.Random, size: int, exponent: float) -> int:
    """A rank drawn from a Zipf distribution over ``size`` ranks (0 is the most likely)."""
    table = _zipf_table(size, exponent)
    return min(bisect.bisect(table, rng.random() * table[-1]), size - 1)


def heavy_count(rng: random.Random, alpha: float, cap: int) -> int:
    """A count ≥ 0 with a Pareto tail (most are 0 or 1, a few are large)."""
    return min(cap, int(rng.paretovariate(alpha)) - 1)


# --- people ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Person:
    """A fictional person: "Person 0042", login ``person-0042``, ``@example.invalid``."""

    number: int
    width: int

    @property
    def tag(self) -> str:
        """The zero-padded number."""
        return f"{self.number:0{self.width}d}"

    @property
    def name(self) -> str:
        """Display name."""
        return f"Person {self.tag}"

    @property
    def login(self) -> str:
        """GitHub login."""
        return f"person-{self.tag}"

    @property
    def email(self) -> str:
        """Main address."""
        return f"person-{self.tag}@example.invalid"

    @property
    def other_email(self) -> str:
        """A second address some people commit from (same name, so the same person)."""
        return f"p{self.tag}@lab-{self.number % 7}.example.invalid"

    def signature(self, rng: random.Random) -> tuple[str, str]:
        """The (name, address) of one commit: every seventh person sometimes uses a second
        address."""
        if self.number % 7 == 3 and rng.random() < 0.3:
            return self.name, self.other_email
        return self.name, self.email


class Population:
    """Everyone, with a mildly skewed global weight: a few people join many drafts."""

    def __init__(self, size: int) -> None:
        width = max(4, len(str(size)))
        self.people = [Person(n + 1, width) for n in range(size)]
        self.weights = [1.0 / (rank + 1) ** 0.7 for rank in range(size)]

    def sample(self, rng: random.Random, count: int) -> list[Person]:
        """``count`` distinct people, heavier weights first (Efraimidis–Spirakis keys)."""
        keys = sorted(
            ((rng.random() ** (1.0 / w), i) for i, w in enumerate(self.weights)), reverse=True
        )
        return [self.people[i] for _, i in keys[: min(count, len(keys))]]


# --- documents -----------------------------------------------------------------------------


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _normal(heading: str) -> str:
    return " ".join(heading.lower().split())


class Words:
    """Sentences and headings made of the fictional vocabulary."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def noun(self) -> str:
        """A noun."""
        return self.rng.choice(NOUNS)

    def adjective(self) -> str:
        """An adjective."""
        return self.rng.choice(ADJECTIVES)

    def heading(self) -> str:
        """A heading of one to three words, title-cased."""
        r = self.rng.random()
        if r < 0.25:
            words = [self.noun(), self.noun() + "s"]
        elif r < 0.6:
            words = [self.adjective(), self.noun()]
        elif r < 0.85:
            words = [self.adjective(), self.noun(), self.noun() + "s"]
        else:
            verb = self.rng.choice(VERBS)[0]
            gerund = (verb[:-1] if verb.endswith("e") else verb) + "ing"
            words = [gerund, "the", self.noun()]
        return " ".join(w if w == "the" else w.capitalize() for w in words)

    def sentence(self) -> str:
        """One normative or descriptive sentence (no digits, so no accidental citations)."""
        rng = self.rng
        verb, done = rng.choice(VERBS)
        a, b, c = self.noun(), self.noun(), self.noun()
        template = rng.randrange(7)
        if template == 0:
            text = (
                f"The {a} {rng.choice(KEYWORDS)} {verb} the {b} before the "
                f"{self.adjective()} {c} is {done}."
            )
        elif template == 1:
            text = (
                f"A {a} that {verb}s a {self.adjective()} {b} {rng.choice(KEYWORDS)} "
                f"include the {c} field."
            )
        elif template == 2:
            text = f"Implementations {rng.choice(KEYWORDS)} {verb} {self.adjective()} {a}s."
        elif template == 3:
            text = f"This field carries the {a} of the {self.adjective()} {b}."
        elif template == 4:
            text = (
                f"When the {a} is {done}, the receiver {rng.choice(KEYWORDS)} {verb} "
                f"every {b} in the {c}."
            )
        elif template == 5:
            text = f"The {a} and the {b} are {done} together so that no {c} is lost."
        else:
            text = (
                f"If no {a} is available, the sender {rng.choice(KEYWORDS)} {verb} a "
                f"{self.adjective()} {b} instead."
            )
        return text

    def paragraphs(self) -> list[list[str]]:
        """A section body: about 700 characters on average, a few much longer."""
        target = min(4000, max(120, int(self.rng.lognormvariate(6.4, 0.6))))
        out: list[list[str]] = []
        size = 0
        while size < target:
            paragraph = [self.sentence() for _ in range(self.rng.randint(2, 5))]
            size += sum(len(s) + 1 for s in paragraph)
            out.append(paragraph)
        return out


@dataclass(frozen=True)
class Edit:
    """A sentence-level change, applicable to two copies of a section (a pull request's
    branch and the main line it merges into); where the copy has changed meanwhile, the
    sentence is appended instead."""

    kind: str
    paragraph: int
    sentence: int
    text: str

    def apply(self, section: Section) -> None:
        """Make the change in ``section``."""
        paragraphs = section.paragraphs
        if self.paragraph >= len(paragraphs):
            if self.text:
                paragraphs[-1].append(self.text)
        else:
            target = paragraphs[self.paragraph]
            if self.kind == "replace" and self.sentence < len(target):
                target[self.sentence] = self.text
            elif self.kind == "insert" and self.sentence <= len(target):
                target.insert(self.sentence, self.text)
            elif self.kind == "delete" and self.sentence < len(target) and len(target) > 1:
                del target[self.sentence]
            elif self.text:
                target.append(self.text)
        section.touch()


@dataclass
class Section:
    """One section of the evolving document; ``key`` is its identity across revisions."""

    key: int
    level: int
    heading: str
    anchor: str | None
    paragraphs: list[list[str]]
    appendix: bool
    heat: float
    fixed: bool = False
    _text: str | None = None

    def touch(self) -> None:
        """Forget the rendered text after a change."""
        self._text = None

    def render(self) -> str:
        """The section's markdown: heading line, then wrapped paragraphs."""
        if self._text is None:
            head = "#" * self.level + " " + self.heading
            if self.anchor:
                head += " {#" + self.anchor + "}"
            body = "\n\n".join(textwrap.fill(" ".join(p), width=72) for p in self.paragraphs)
            self._text = f"{head}\n\n{body}\n"
        return self._text

    def copy(self) -> Section:
        """An independent copy (a pull request's branch edits its own)."""
        return Section(
            key=self.key,
            level=self.level,
            heading=self.heading,
            anchor=self.anchor,
            paragraphs=[list(p) for p in self.paragraphs],
            appendix=self.appendix,
            heat=self.heat,
            fixed=self.fixed,
            _text=self._text,
        )

    def body_length(self) -> int:
        """Characters of text (sentences and spaces)."""
        return sum(len(" ".join(p)) for p in self.paragraphs)


@dataclass
class Snapshot:
    """What a revision (or the RFC) looked like: numbers, headings and anchors by key."""

    name: str
    date: datetime
    number: dict[int, str]
    heading: dict[int, str]
    anchor: dict[int, str]
    top: int
    """How many top-level middle sections it had (for numbers that do not exist)."""

    def keys(self) -> list[int]:
        """Keys of the sections, in document order."""
        return list(self.number)


def render_file(header: str, parts: Sequence[tuple[bool, str]]) -> bytes:
    """Front matter, middle sections, ``--- back`` and the appendices, as bytes."""
    middle = "\n".join(text for appendix, text in parts if not appendix)
    back = "\n".join(text for appendix, text in parts if appendix)
    return (header + middle + "\n--- back\n\n" + back + "\n").encode("ascii")


@dataclass
class Fork:
    """A pull request's branch: the document when it was opened, and its own edits."""

    header: str
    parts: list[tuple[bool, int, str]]
    copies: dict[int, Section]

    def render(self) -> bytes:
        """The branch's file."""
        return render_file(
            self.header,
            [
                (appendix, self.copies[key].render() if key in self.copies else text)
                for appendix, key, text in self.parts
            ],
        )


class Document:
    """A kramdown-rfc document under edit: front matter, middle sections, appendices."""

    def __init__(
        self, rng: random.Random, title: str, authors: list[Person], size: int, shape: Shape
    ) -> None:
        self.rng = rng
        self.shape = shape
        self.words = Words(rng)
        self.title = title
        self.authors = authors
        self.date = BASE
        self.next_key = 0
        self.sections: list[Section] = []
        self.headings: set[str] = set()
        self._build(size)

    def _new(self, level: int, appendix: bool, heading: str | None = None) -> Section:
        heading = heading or self._fresh_heading()
        self.headings.add(_normal(heading))
        anchor = _slug(heading) if self.rng.random() < 0.3 else None
        section = Section(
            key=self.next_key,
            level=level,
            heading=heading,
            anchor=anchor,
            paragraphs=self.words.paragraphs(),
            appendix=appendix,
            heat=min(25.0, self.rng.paretovariate(1.3)),
        )
        self.next_key += 1
        return section

    def _fresh_heading(self) -> str:
        for _ in range(50):
            heading = self.words.heading()
            if _normal(heading) not in self.headings:
                return heading
        return f"{self.words.heading()} {self.words.noun().capitalize()} {self.next_key}"

    def _build(self, size: int) -> None:
        appendix_size = max(3, size // 10)
        middle = size - appendix_size - len(FIXED_LAST)
        intro = self._new(1, False, FIXED_FIRST[0])
        definitions = self._new(2, False, FIXED_FIRST[1])
        intro.fixed = definitions.fixed = True
        self.sections += [intro, definitions]
        level = 2
        while len(self.sections) < middle:
            r = self.rng.random()
            if r < 0.12:
                level = 1
            elif r < 0.45:
                level = min(level + 1, 4)
            elif r > 0.75:
                level = max(1, level - 1)
            self.sections.append(self._new(level, False))
        for heading in FIXED_LAST:
            last = self._new(1, False, heading)
            last.fixed = True
            self.sections.append(last)
        level = 1
        for index in range(appendix_size):
            level = 1 if index == 0 or self.rng.random() < 0.3 else 2
            self.sections.append(self._new(level, True))

    # -- numbering and rendering --

    def numbers(self) -> dict[int, str]:
        """xml2rfc numbers by key: 1, 1.1 … in the middle, A, A.1 … in the back (the References
        kramdown-rfc adds after the middle take the next top-level number, which no section
        here has)."""
        out: dict[int, str] = {}
        stack: list[tuple[int, list[str]]] = []
        counters: dict[tuple[str, ...], int] = {}
        tops = {False: 0, True: 0}
        for section in self.sections:
            while stack and stack[-1][0] >= section.level:
                stack.pop()
            if not stack:
                tops[section.appendix] += 1
                top = tops[section.appendix]
                parts = [chr(ord("A") + top - 1) if section.appendix else str(top)]
            else:
                parent = tuple(stack[-1][1])
                counters[parent] = counters.get(parent, 0) + 1
                parts = [*parent, str(counters[parent])]
            out[section.key] = ".".join(parts)
            stack.append((section.level, parts))
        return out

    def snapshot(self, name: str, date: datetime) -> Snapshot:
        """The numbers, headings and anchors as they stand."""
        numbers = self.numbers()
        return Snapshot(
            name=name,
            date=date,
            number=numbers,
            heading={s.key: s.heading for s in self.sections},
            anchor={s.key: s.anchor for s in self.sections if s.anchor},
            top=sum(1 for s in self.sections if s.level == 1 and not s.appendix),
        )

    def header(self, docname: str) -> str:
        """The front matter up to the middle."""
        authors = "".join(
            f" -\n    ins: {p.name}\n    name: {p.name}\n    org: Synthetic Example Lab\n"
            f"    email: {p.email}\n"
            for p in self.authors
        )
        return (
            f"---\ntitle: {self.title}\nabbrev: {self.title.split()[0]}\ndocname: {docname}\n"
            f"category: std\nipr: trust200902\ndate: {self.date:%Y-%m-%d}\n"
            f"author:\n{authors}\nnormative:\n  SYNTH-CORE:\n    title: A Fictional Core\n"
            "    date: 2030\n\ninformative:\n  SYNTH-NOTES:\n    title: Fictional Notes\n"
            "    date: 2030\n\n--- abstract\n\nThis document is synthetic: it describes "
            "nothing real and exists to load a benchmark.\n\n--- middle\n\n"
        )

    def fork(self, docname: str, keys: Sequence[int]) -> Fork:
        """The document as a pull request's branch starts from it: rendered sections, and
        copies of the ones it will edit."""
        return Fork(
            header=self.header(docname),
            parts=[(s.appendix, s.key, s.render()) for s in self.sections],
            copies={s.key: s.copy() for s in self.sections if s.key in keys},
        )

    def render(self, docname: str) -> bytes:
        """The whole file."""
        parts = [(s.appendix, s.render()) for s in self.sections]
        return render_file(self.header(docname), parts)

    # -- edits --

    def pick(self, count: int = 1, *, editable: bool = False) -> list[Section]:
        """Sections chosen by heat (hot sections are edited and discussed most)."""
        pool = [s for s in self.sections if not (editable and s.fixed)]
        chosen: dict[int, Section] = {}
        for _ in range(count * 3):
            section = self.rng.choices(pool, weights=[s.heat for s in pool])[0]
            chosen[section.key] = section
            if len(chosen) == count:
                break
        return list(chosen.values())

    def edit_op(self, section: Section) -> Edit:
        """A sentence to replace, add or drop, chosen on ``section``'s text."""
        index = self.rng.randrange(len(section.paragraphs))
        paragraph = section.paragraphs[index]
        r = self.rng.random()
        if r < 0.55 or len(paragraph) < 2:
            return Edit("replace", index, self.rng.randrange(len(paragraph)), self.words.sentence())
        if r < 0.85:
            where = self.rng.randrange(len(paragraph) + 1)
            return Edit("insert", index, where, self.words.sentence())
        return Edit("delete", index, self.rng.randrange(len(paragraph)), "")

    def edit_text(self, section: Section) -> Edit:
        """Replace, add or drop a sentence; returns the edit so a copy can get it too."""
        edit = self.edit_op(section)
        edit.apply(section)
        return edit

    def _subtree_end(self, index: int) -> int:
        level = self.sections[index].level
        end = index + 1
        while end < len(self.sections) and self.sections[end].level > level:
            end += 1
        return end

    def insert(self) -> Section | None:
        """A new section after a chosen one's subtree, at the same level."""
        if len(self.sections) >= self.shape.sections_max:
            return None
        anchor = self.pick(1, editable=True)[0]
        index = self.sections.index(anchor)
        # Below top level: the middle keeps its chapters, the back its few appendices (the
        # citation finder reads appendix letters A–H only, as real documents need).
        section = self._new(max(anchor.level, 2), anchor.appendix)
        self.sections.insert(self._subtree_end(index), section)
        return section

    def remove(self) -> Section | None:
        """Drop a leaf section (one with no subsections)."""
        if len(self.sections) <= self.shape.sections_start[0]:
            return None
        leaves = [
            i
            for i, s in enumerate(self.sections)
            if not s.fixed and s.level > 1 and self._subtree_end(i) == i + 1
        ]
        if not leaves:
            return None
        section = self.sections.pop(self.rng.choice(leaves))
        self.headings.discard(_normal(section.heading))
        return section

    def rename(self) -> Section | None:
        """Change a heading's wording (any section, hot or not); an anchor, if it has one,
        stays."""
        section = self.rng.choice([s for s in self.sections if not s.fixed])
        words = section.heading.split()
        r = self.rng.random()
        if r < 0.4 and len(words) > 1:
            words[self.rng.randrange(len(words))] = self.words.noun().capitalize()
        elif r < 0.7:
            words.insert(0, self.words.adjective().capitalize())
        else:
            words = self.words.heading().split()
        heading = " ".join(words)
        if _normal(heading) in self.headings:
            return None
        self.headings.discard(_normal(section.heading))
        self.headings.add(_normal(heading))
        section.heading = heading
        section.touch()
        return section

    def move(self) -> Section | None:
        """Swap a leaf section with the leaf sibling after it (both change number)."""
        candidates = [
            i
            for i in range(len(self.sections) - 1)
            if not self.sections[i].fixed
            and not self.sections[i + 1].fixed
            and self.sections[i].level == self.sections[i + 1].level > 1
            and self._subtree_end(i + 1) == i + 2
        ]
        if not candidates:
            return None
        i = self.rng.choice(candidates)
        self.sections[i], self.sections[i + 1] = self.sections[i + 1], self.sections[i]
        return self.sections[i + 1]


# --- schedule ------------------------------------------------------------------------------


@dataclass
class Post:
    """One post of a thread before its text is written."""

    kind: str
    author: Person
    when: datetime
    state: str | None = None
    replies: list[Post] = field(default_factory=list)
    body: str = ""


@dataclass
class Thread:
    """An issue or pull request of one draft."""

    draft: int
    kind: str
    author: Person
    opened: datetime
    closed: datetime | None
    merged: datetime | None = None
    squash: bool = False
    branch_commits: int = 1
    fixes: Thread | None = None
    fixed_by: Thread | None = None
    merger: Person | None = None
    posts: list[Post] = field(default_factory=list)
    number: int = 0
    targets: list[int] = field(default_factory=list)
    """Section keys the thread is about (an issue's topic, the sections a PR edits)."""
    title: str = ""
    base_mark: int | None = None
    fork: Fork | None = None
    head_mark: int | None = None
    merge_mark: int | None = None
    labelled: bool = True
    """Whether the thread carries its draft's name as a label."""


@dataclass
class Draft:
    """One draft series: its schedule, editors, community and (after writing) snapshots."""

    index: int
    name: str
    rfc: int
    title: str
    editors: list[Person]
    community: list[Person]
    revisions: list[datetime]
    published: datetime
    direct: list[tuple[datetime, Person]]
    threads: list[Thread]
    snapshots: list[Snapshot] = field(default_factory=list)
    rfc_snapshot: Snapshot | None = None
    activity: Counter[int] = field(default_factory=Counter)

    @property
    def file(self) -> str:
        """The document's file name."""
        return f"{self.name}.md"

    def poster(self, rng: random.Random) -> Person:
        """A community member, Zipf by rank (the editors rank first)."""
        return self.community[zipf_index(rng, len(self.community), POSTER_ZIPF)]

    def current(self, when: datetime) -> Snapshot | None:
        """The revision current at ``when`` (None before -00 or from publication on)."""
        if when >= self.published or when < self.revisions[0]:
            return None
        index = bisect.bisect_right(self.revisions, when) - 1
        return self.snapshots[index]


_NAME_A = (
    "amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "heron", "iris", "juniper",
    "kelp", "lumen", "maple", "nimbus", "onyx", "pike", "quartz", "raven", "sorrel", "tundra",
)  # fmt: skip
_NAME_B = (
    "relay", "beacon", "ledger", "harbor", "courier", "lattice", "orbit", "quorum", "spool",
    "trellis",
)  # fmt: skip


def draft_name(index: int) -> str:
    """``draft-synthetic-<word>-<word>`` (and a third word past 200 drafts)."""
    a, rest = _NAME_A[index % len(_NAME_A)], index // len(_NAME_A)
    b, rest = _NAME_B[rest % len(_NAME_B)], rest // len(_NAME_B)
    extra = f"-{_NAME_A[rest % len(_NAME_A)]}" if rest else ""
    return f"draft-synthetic-{a}-{b}{extra}"


def _uniform(rng: random.Random, start: datetime, end: datetime) -> datetime:
    seconds = max(1.0, (end - start).total_seconds())
    return start + timedelta(seconds=int(rng.random() * seconds))


def schedule_draft(
    index: int, count: int, seed: int, population: Population, shape: Shape
) -> Draft:
    """Who does what when, for one draft (its content comes later)."""
    rng = random.Random(f"{seed}/draft/{index}/schedule")
    editors_rng = random.Random(f"{seed}/draft/{index}/people")
    start = BASE + timedelta(days=int(index * (SPAN_DAYS - 4 * 365) / max(1, count - 1)))
    if count == 1:
        start = BASE
    n_revisions = rng.randint(*shape.revisions)
    revisions = [start]
    for _ in range(n_revisions - 1):
        gap = max(12.0, rng.gammavariate(3.0, REVISION_GAP_DAYS / 3.0))
        revisions.append(revisions[-1] + timedelta(days=gap, seconds=rng.randrange(86400)))
    last = revisions[-1]
    published_at = last + timedelta(days=rng.randint(120, 330))
    published = datetime(published_at.year, published_at.month, 1, tzinfo=UTC)
    community = population.sample(editors_rng, editors_rng.randint(*shape.community))
    editors = community[: editors_rng.choice((2, 2, 3))]
    draft = Draft(
        index=index,
        name=draft_name(index),
        rfc=RFC_BASE + index,
        title=Words(rng).heading() + " Protocol",
        editors=editors,
        community=community,
        revisions=revisions,
        published=published,
        direct=[],
        threads=[],
    )
    for _ in range(int(rng.gauss(*shape.direct_commits))):
        author = editors[zipf_index(rng, len(editors), 2.0)]
        if rng.random() < 0.1:
            author = draft.poster(rng)
        draft.direct.append((_uniform(rng, start + timedelta(hours=1), last), author))
    issues: list[Thread] = []
    for _ in range(int(rng.gauss(*shape.issues))):
        after = rng.random() < 0.08
        opened = (
            _uniform(rng, published, published + timedelta(days=700))
            if after
            else _uniform(rng, start + timedelta(hours=2), last)
        )
        closed = opened + timedelta(days=rng.expovariate(1 / 40.0)) if rng.random() < 0.8 else None
        issues.append(Thread(index, "issue", draft.poster(rng), opened, closed))
    issues.sort(key=lambda t: t.opened)
    pulls: list[Thread] = []
    for _ in range(int(rng.gauss(*shape.pulls))):
        author = draft.poster(rng)
        delay = timedelta(days=rng.expovariate(1 / 6.0), seconds=rng.randrange(3600, 86400))
        if rng.random() < MERGED_SHARE:
            merged = _uniform(rng, start + timedelta(hours=3), last - timedelta(minutes=5))
            opened = max(start + timedelta(hours=2), merged - delay)
            thread = Thread(index, "pull", author, opened, merged, merged=merged)
            thread.squash = rng.random() < SQUASH_SHARE
            thread.branch_commits = 1 if thread.squash else rng.choice((1, 1, 1, 2, 2, 3))
            thread.merger = editors[zipf_index(rng, len(editors), 2.0)]
            if rng.random() < FIXES_SHARE:
                open_issues = [
                    i
                    for i in issues
                    if i.opened < opened and i.fixed_by is None and i.opened < last
                ]
                if open_issues:
                    issue = open_issues[-1 - min(len(open_issues) - 1, int(rng.expovariate(0.3)))]
                    issue.fixed_by, thread.fixes = thread, issue
                    issue.closed = merged
        else:
            opened = _uniform(rng, start + timedelta(hours=2), last)
            thread = Thread(index, "pull", author, opened, opened + delay * 3)
        pulls.append(thread)
    for thread in [*issues, *pulls]:
        _schedule_posts(rng, draft, thread)
    draft.threads = sorted([*issues, *pulls], key=lambda t: t.opened)
    return draft


def _schedule_posts(rng: random.Random, draft: Draft, thread: Thread) -> None:
    end = thread.closed or thread.opened + timedelta(days=60)
    thread.posts.append(Post("opening", thread.author, thread.opened))
    when = thread.opened
    for _ in range(heavy_count(rng, 1.4, 150)):
        when = min(end, when + timedelta(hours=rng.expovariate(1 / 30.0)))
        thread.posts.append(Post("comment", draft.poster(rng), when))
    if thread.kind != "pull":
        return
    reviews = rng.choices((0, 1, 2, 3), weights=(30, 50, 15, 5))[0]
    for _ in range(reviews):
        reviewer = draft.poster(rng)
        if reviewer == thread.author:
            reviewer = draft.editors[0] if thread.author != draft.editors[0] else draft.poster(rng)
        review_at = _uniform(rng, thread.opened, end)
        state = rng.choices(("APPROVED", "COMMENTED", "CHANGES_REQUESTED"), (5, 4, 1))[0]
        review = Post("review", reviewer, review_at, state=state)
        review.replies = [
            Post("review-comment", reviewer, review_at) for _ in range(heavy_count(rng, 1.35, 40))
        ]
        thread.posts.append(review)


# --- writing the repository ----------------------------------------------------------------


class FastImport:
    """A ``git fast-import`` process: commits, lightweight tags, marks → commit ids."""

    def __init__(self, git_dir: Path, marks: Path) -> None:
        self.marks_file = marks
        self.next_mark = 1
        self.commits = 0
        self.process = subprocess.Popen(
            [
                "git",
                "--git-dir",
                str(git_dir),
                "fast-import",
                "--quiet",
                "--done",
                f"--export-marks={marks}",
            ],
            stdin=subprocess.PIPE,
            env=_git_env(git_dir),
        )
        assert self.process.stdin is not None
        self.out = self.process.stdin

    def _data(self, payload: bytes) -> None:
        self.out.write(b"data %d\n" % len(payload))
        self.out.write(payload)
        self.out.write(b"\n")

    def commit(
        self,
        ref: str,
        author: tuple[str, str],
        when: datetime,
        message: str,
        files: dict[str, bytes],
        parents: Sequence[int] = (),
        committer: tuple[str, str] | None = None,
        committed: datetime | None = None,
    ) -> int:
        """One commit on ``ref``; returns its mark."""
        mark = self.next_mark
        self.next_mark += 1
        self.commits += 1
        who = committer or author
        stamp = int((committed or when).timestamp())
        lines = [
            f"commit {ref}",
            f"mark :{mark}",
            f"author {author[0]} <{author[1]}> {int(when.timestamp())} +0000",
            f"committer {who[0]} <{who[1]}> {stamp} +0000",
        ]
        self.out.write(("\n".join(lines) + "\n").encode())
        self._data(message.encode())
        if parents:
            self.out.write(f"from :{parents[0]}\n".encode())
            for parent in parents[1:]:
                self.out.write(f"merge :{parent}\n".encode())
        for path, content in files.items():
            self.out.write(f"M 100644 inline {path}\n".encode())
            self._data(content)
        self.out.write(b"\n")
        return mark

    def tag(self, name: str, mark: int) -> None:
        """A lightweight tag at ``mark``."""
        self.out.write(f"reset refs/tags/{name}\nfrom :{mark}\n\n".encode())

    def close(self) -> dict[int, str]:
        """Finish and return every mark's commit id."""
        self.out.write(b"done\n")
        self.out.close()
        if self.process.wait() != 0:
            raise RuntimeError(
                "git fast-import failed while writing the synthetic repository; see its "
                "message above."
            )
        marks: dict[int, str] = {}
        for line in self.marks_file.read_text().splitlines():
            mark, sha = line.split()
            marks[int(mark[1:])] = sha
        return marks


def _git_env(git_dir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(git_dir.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    }


def write_draft(draft: Draft, seed: int, git: FastImport, shape: Shape) -> None:
    """Simulate the draft's text through its schedule, streaming every commit to git.

    A merged pull request's branch starts from the main line as it was when the pull request
    was opened; the main line moves on meanwhile, so a merge commit joins two different trees
    (as on GitHub) and the history keeps it."""
    rng = random.Random(f"{seed}/draft/{draft.index}/content")
    sig_rng = random.Random(f"{seed}/draft/{draft.index}/signatures")
    doc = Document(rng, draft.title, draft.editors, rng.randint(*shape.sections_start), shape)
    ref = f"refs/heads/drafts/{draft.name}"
    revision, direct, issue, opened, merged = range(5)
    events: list[tuple[datetime, int, object]] = []
    events += [(when, revision, number) for number, when in enumerate(draft.revisions)]
    events += [(when, direct, author) for when, author in draft.direct]
    for thread in draft.threads:
        if thread.kind == "issue":
            events.append((thread.opened, issue, thread))
        elif thread.merged is not None:
            events += [(thread.opened, opened, thread), (thread.merged, merged, thread)]
    events.sort(key=lambda e: (e[0], e[1]))
    head: int | None = None
    docname = f"{draft.name}-latest"

    def commit(author: Person, when: datetime, message: str, parents: Sequence[int]) -> int:
        files = {draft.file: doc.render(docname)}
        return git.commit(ref, author.signature(sig_rng), when, message, files, parents)

    for when, kind, item in events:
        if kind == revision:
            number = int(item)  # type: ignore[call-overload]
            doc.date = when
            lead = draft.editors[0]
            message = "Initial version" if number == 0 else f"Prepare {draft.name}-{number:02d}"
            head = commit(lead, when, message, [head] if head else [])
            git.tag(f"{draft.name}-{number:02d}", head)
            draft.snapshots.append(doc.snapshot(f"{draft.name}-{number:02d}", when))
            continue
        if head is None:
            continue
        if kind == direct:
            assert isinstance(item, Person)
            touched = _edit(doc, rng, draft)
            subject = f"{rng.choice(('Clarify', 'Reword', 'Tighten', 'Fix'))} {touched}"
            head = commit(item, when, subject, [head])
            continue
        assert isinstance(item, Thread)
        if kind == issue:
            item.targets = [s.key for s in doc.pick(rng.choice((1, 1, 1, 2)))]
            for key in item.targets:
                draft.activity[key] += 1
        elif kind == opened:
            fixes = item.fixes.targets if item.fixes is not None else []
            keys = [k for k in fixes if any(s.key == k for s in doc.sections)]
            item.targets = keys or [
                s.key for s in doc.pick(rng.choice((1, 1, 2, 3)), editable=True)
            ]
            item.base_mark = head
            item.fork = doc.fork(docname, item.targets)
        else:
            head = _merge_pull(item, doc, rng, draft, git, ref, head, docname, sig_rng)
    # The RFC: the last revision as published, after a few editorial changes.
    doc.date = draft.published
    for section in doc.pick(max(3, len(doc.sections) // 10), editable=True):
        doc.edit_text(section)
    if rng.random() < 0.5:
        doc.rename()
    rfc_file = f"rfc{draft.rfc}.md"
    rfc_mark = git.commit(
        ref,
        draft.editors[0].signature(sig_rng),
        draft.published + timedelta(days=2),
        f"RFC {draft.rfc} as published",
        {rfc_file: doc.render(f"rfc{draft.rfc}")},
        [head] if head else [],
    )
    git.tag(f"rfc{draft.rfc}", rfc_mark)
    draft.rfc_snapshot = doc.snapshot(f"rfc{draft.rfc}", draft.published)


def _edit(doc: Document, rng: random.Random, draft: Draft) -> str:
    """A direct commit's change: mostly text, sometimes structure. Returns a heading it
    touched."""
    r = rng.random()
    changed: Section | None = None
    if r < 0.09:
        changed = doc.insert()
    elif r < 0.135:
        changed = doc.remove()
    elif r < 0.2:
        changed = doc.rename()
    elif r < 0.23:
        changed = doc.move()
    if changed is not None:
        draft.activity[changed.key] += 1
        return changed.heading
    sections = doc.pick(rng.choices((1, 2, 3, 4, 6), (40, 25, 15, 10, 10))[0], editable=True)
    for section in sections:
        doc.edit_text(section)
        draft.activity[section.key] += 1
    return sections[0].heading


def _merge_pull(
    thread: Thread,
    doc: Document,
    rng: random.Random,
    draft: Draft,
    git: FastImport,
    ref: str,
    head: int,
    docname: str,
    sig_rng: random.Random,
) -> int:
    """A merged pull request: commits on its branch (from where it was opened), then a merge
    commit on the main line, or one squashed commit on it."""
    assert thread.merged is not None and thread.merger is not None
    fork = thread.fork
    assert fork is not None and thread.base_mark is not None
    on_main = {s.key: s for s in doc.sections}
    keys = [k for k in thread.targets if k in fork.copies]
    steps = 1 if thread.squash else thread.branch_commits
    branch = thread.base_mark
    span = (thread.merged - thread.opened) / (steps + 1)
    heading = fork.copies[keys[0]].heading if keys else doc.sections[0].heading
    for step in range(steps):
        for key in keys:
            edit = doc.edit_op(fork.copies[key])
            edit.apply(fork.copies[key])
            if key in on_main:
                edit.apply(on_main[key])
            draft.activity[key] += 1
        if thread.squash:
            break
        branch = git.commit(
            "refs/heads/pr-work",
            thread.author.signature(sig_rng),
            thread.opened + span * (step + 1),
            f"{rng.choice(('Edit', 'Reword', 'Address review of'))} {heading}",
            {draft.file: fork.render()},
            [branch],
        )
    thread.fork = None
    thread.title = f"{rng.choice(('Clarify', 'Rework', 'Simplify', 'Fix'))} {heading}"
    files = {draft.file: doc.render(docname)}
    if thread.squash:
        thread.base_mark = head
        thread.merge_mark = git.commit(
            ref,
            thread.author.signature(sig_rng),
            thread.merged,
            f"{thread.title} (#{thread.number})",
            files,
            [head],
            committer=(thread.merger.name, thread.merger.email),
        )
    else:
        thread.head_mark = branch
        thread.merge_mark = git.commit(
            ref,
            (thread.merger.name, thread.merger.email),
            thread.merged,
            f"Merge pull request #{thread.number} from {thread.author.login}/pr-{thread.number}"
            f"\n\n{thread.title}",
            files,
            [head, branch],
        )
    return thread.merge_mark


# --- posts ---------------------------------------------------------------------------------


@dataclass
class Truth:
    """What the generator meant, to check what the build derived against."""

    citations: dict[str, list[tuple[str, str | None, str | None]]] = field(default_factory=dict)
    """Post key (``github/<thread>/<index>`` or ``mail/<message-id>``) → (form, intended
    document name, intended section number) for every citation written into it."""
    revisions: dict[str, dict[str, str]] = field(default_factory=dict)
    """Document name → {section number: heading}, for every revision and RFC."""
    pinned: dict[str, bool] = field(default_factory=dict)
    """Post key → whether what was written tells which draft the post is about, among the
    drafts open when it was written: only its own draft was open, its thread is labelled with
    the draft, it or its thread's opening post names the draft, or it is a list message (whose
    subject names the draft). Where not, its bare numbers and anchors must stay unresolved."""
    written: dict[str, datetime] = field(default_factory=dict)
    """Post key → when it was written, for every post given a citation."""
    naming: set[str] = field(default_factory=set)
    """Keys of posts whose text names their draft."""


class Writer:
    """Writes post texts with citations of the revision current when each was written."""

    def __init__(self, draft: Draft, seed: int, truth: Truth, citing: float = 1.0) -> None:
        self.draft = draft
        self.citing = citing
        self.rng = random.Random(f"{seed}/draft/{draft.index}/posts")
        self.words = Words(self.rng)
        self.truth = truth

    def cite(self, key: int | None, when: datetime, post: str) -> str:
        """A citation written at ``when``: of section ``key`` if it exists then, else of a hot
        section; recorded in the truth under ``post``."""
        rng = self.rng
        draft = self.draft
        self.truth.written[post] = when
        snap = draft.current(when)
        if snap is None:
            if when >= draft.published and draft.rfc_snapshot is not None:
                rfc = draft.rfc_snapshot
                key = key if key in rfc.number else rng.choice(rfc.keys())
                number = rfc.number[key]
                self._record(post, "rfc", rfc.name, number)
                return f"RFC {draft.rfc} Section {number}"
            return ""
        if key not in snap.number:
            keys = snap.keys()
            key = rng.choices(keys, weights=[draft.activity[k] + 1 for k in keys])[0]
        number = snap.number[key]
        form = rng.choices([f for f, _ in CITATION_FORMS], [w for _, w in CITATION_FORMS])[0]
        if form == "xref" and key not in snap.anchor:
            form = "section"
        word = "Appendix" if number[0].isalpha() and rng.random() < 0.6 else "Section"
        if form == "section":
            text = f"{word} {number}"
        elif form == "section-of-revision":
            text = f"{word} {number} of {snap.name}"
        elif form == "revision-sign":
            text = f"{snap.name} §{number}"
        elif form == "url":
            text = f"https://datatracker.example.invalid/doc/html/{snap.name}#section-{number}"
        elif form == "xref":
            text = "{{" + snap.anchor[key] + "}}"
        elif form == "foreign":
            text = (
                f"RFC {80000 + rng.randrange(1000)} Section {rng.randint(1, 9)}.{rng.randint(1, 6)}"
            )
            self._record(post, form, None, None)
            return text
        else:
            text = f"Section {snap.top + rng.randint(3, 9)}.{rng.randint(1, 9)}"
            self._record(post, form, None, None)
            return text
        self._record(post, form, snap.name, number)
        return text

    def _record(self, post: str, form: str, document: str | None, number: str | None) -> None:
        self.truth.citations.setdefault(post, []).append((form, document, number))
        if form in NAMING_FORMS:
            self.truth.naming.add(post)

    def text(self, kind: str, key: int | None, when: datetime, post: str) -> str:
        """A post body: sentences and replies, sometimes a citation."""
        rng = self.rng
        if kind in {"comment", "review-comment"}:
            body = rng.choice(REPLIES)
            if rng.random() < 0.4:
                body += " " + self.words.sentence()
        elif kind == "review":
            body = "" if rng.random() < 0.45 else rng.choice(REPLIES)
        else:
            body = " ".join(self.words.sentence() for _ in range(rng.randint(1, 3)))
        probability = CITE_PROBABILITY.get(kind, CITE_PROBABILITY["comment"]) * self.citing
        if rng.random() < probability:
            citation = self.cite(key, when, post)
            if citation:
                lead = rng.choice(("I think", "As written,", "Looking at", "Regarding"))
                body = f"{lead} {citation}: {body}" if body else f"See {citation}."
                if rng.random() < 0.25:
                    second = self.cite(None, when, post)
                    if second:
                        body += f" See also {second}."
        return body


def archive_item(thread: Thread, writer: Writer, marks: dict[int, str], seed: int) -> dict:
    """One thread as i-d-template's archive.json has it."""
    draft = writer.draft
    rng = writer.rng
    number = thread.number
    url = f"{REPOSITORY}/{'pull' if thread.kind == 'pull' else 'issues'}/{number}"
    key = thread.targets[0] if thread.targets else None
    opening_kind = f"opening-{thread.kind}"
    if not thread.title:
        heading = (
            draft.current(thread.opened) or draft.rfc_snapshot or draft.snapshots[-1]
        ).heading.get(key if key is not None else -1) or writer.words.heading()
        thread.title = (
            f"{heading}: {rng.choice(('unclear', 'missing', 'wrong', 'too strict'))} "
            f"{writer.words.noun()} rule"
        )
    body = writer.text(opening_kind, key, thread.opened, f"github/{number}/0")
    if thread.fixes is not None:
        body += f"\n\nFixes #{thread.fixes.number}."
    item: dict = {
        "number": number,
        "id": f"{'PR' if thread.kind == 'pull' else 'I'}_synthetic_{number}",
        "title": thread.title,
        "url": url,
        "state": "MERGED" if thread.merged else "CLOSED" if thread.closed else "OPEN",
        "author": thread.author.login,
        "authorAssociation": "CONTRIBUTOR",
        "assignees": [],
        "labels": ([draft.name.removeprefix("draft-")] if thread.labelled else [])
        + (["editorial"] if rng.random() < 0.2 else []),
        "body": body,
        "createdAt": _iso(thread.opened),
        "updatedAt": _iso(thread.closed or thread.opened),
        "closedAt": _iso(thread.closed) if thread.closed else None,
        "comments": [],
    }
    index = 1
    reviews: list[dict] = []
    for post in thread.posts[1:]:
        if post.kind == "comment":
            item["comments"].append(
                {
                    "author": post.author.login,
                    "authorAssociation": "CONTRIBUTOR",
                    "body": writer.text("comment", key, post.when, f"github/{number}/{index}"),
                    "createdAt": _iso(post.when),
                    "updatedAt": _iso(post.when),
                }
            )
            index += 1
    for post in thread.posts[1:]:
        if post.kind != "review":
            continue
        review_id = base64.b64encode(f"017:PullRequestReview{number * 10 + len(reviews)}".encode())
        review = {
            "id": review_id.decode(),
            "commit": {"abbreviatedOid": "0000000"},
            "author": post.author.login,
            "authorAssociation": "CONTRIBUTOR",
            "state": post.state,
            "body": writer.text("review", key, post.when, f"github/{number}/{index}"),
            "createdAt": _iso(post.when),
            "updatedAt": _iso(post.when),
            "comments": [],
        }
        index += 1
        for reply in post.replies:
            review["comments"].append(
                {
                    "originalPosition": rng.randint(1, 40),
                    "body": writer.text(
                        "review-comment", key, reply.when, f"github/{number}/{index}"
                    ),
                    "createdAt": _iso(reply.when),
                    "updatedAt": _iso(reply.when),
                }
            )
            index += 1
        reviews.append(review)
    if thread.kind == "pull":
        fake = hashlib.sha1(f"{seed}/pull/{number}".encode()).hexdigest()
        item.update(
            {
                "baseRepository": ARCHIVE_REPO,
                "baseRefName": f"drafts/{draft.name}",
                "baseRefOid": marks[thread.base_mark] if thread.base_mark else fake,
                "headRepository": f"{thread.author.login}/synthetic-spec",
                "headRefName": f"pr-{number}",
                "headRefOid": marks[thread.head_mark] if thread.head_mark else fake,
                "mergedAt": _iso(thread.merged) if thread.merged else None,
                "mergedBy": thread.merger.login if thread.merger else None,
                "mergeCommit": {"oid": marks[thread.merge_mark]} if thread.merge_mark else None,
                "reviews": reviews,
            }
        )
    return item


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- the whole corpus ----------------------------------------------------------------------


@dataclass
class Card:
    """A question target that exists at every factor: draft 0's busiest RFC section."""

    draft: str
    rfc: int
    section: str
    """Its number in the RFC."""
    heading: str
    revision: str
    """A revision (about two thirds along the chain) that had the section."""
    revision_section: str
    """Its number in that revision."""


@dataclass
class Corpus:
    """A generated corpus: where it is, what it holds, what was meant."""

    factor: int
    seed: int
    repo: Path
    manifest: Path
    counts: dict[str, int]
    card: Card
    truth: Truth
    seconds: float
    shape: str = "tls"


def make_corpus(
    folder: Path,
    *,
    factor: int,
    seed: int = 7,
    mail: bool = False,
    log: Callable[[str], None] | None = None,
    shape: str = "tls",
) -> Corpus:
    """Generate the ×``factor`` corpus of drafts of ``shape`` (see :data:`SHAPES`) into
    ``folder`` (created; must not hold one already)."""
    if factor < 1:
        raise ValueError("The factor must be a whole number of at least 1.")
    if shape not in SHAPES:
        raise ValueError(f"No shape {shape!r}; choose from {', '.join(SHAPES)}.")
    drawn = SHAPES[shape]
    say = log or (lambda _message: None)
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    repo = folder / "synthetic-spec.git"
    records = folder / "records"
    if repo.exists() or records.exists():
        raise FileExistsError(
            f"{folder} already holds a synthetic corpus; pass an empty or new folder."
        )
    records.mkdir()
    subprocess.run(
        ["git", "init", "--quiet", "--bare", "--initial-branch=main", str(repo)],
        check=True,
        env=_git_env(repo),
    )
    count = CHAINS_PER_FACTOR * factor
    population = Population(drawn.people * count)
    say(f"×{factor}: scheduling {count} drafts for {len(population.people):,} people")
    drafts = [schedule_draft(i, count, seed, population, drawn) for i in range(count)]
    threads = sorted(
        (t for d in drafts for t in d.threads), key=lambda t: (t.opened, t.draft, t.kind)
    )
    for number, thread in enumerate(threads, 1):
        thread.number = number
    for draft in drafts:
        for index, thread in enumerate(draft.threads):
            share = _hashed_share(f"{seed}/draft/{draft.index}/label/{index}")
            thread.labelled = share < LABELLED_SHARE
    git = FastImport(repo, folder / "marks")
    readme = git.commit(
        "refs/heads/main",
        (drafts[0].editors[0].name, drafts[0].editors[0].email),
        BASE - timedelta(days=30),
        "Synthetic working group repository",
        {"README.md": b"# Synthetic specifications\n\nGenerated for benchmarks; fictional.\n"},
    )
    del readme
    for draft in drafts:
        say(f"×{factor}: writing {draft.name} ({len(draft.revisions)} revisions)")
        write_draft(draft, seed, git, drawn)
    commits = git.commits
    marks = git.close()
    truth = Truth()
    items: dict[str, list[dict]] = {"issues": [], "pulls": []}
    writers = {d.index: Writer(d, seed, truth, drawn.citing) for d in drafts}
    say(f"×{factor}: writing {len(threads):,} threads")
    for thread in threads:
        item = archive_item(thread, writers[thread.draft], marks, seed)
        items["issues" if thread.kind == "issue" else "pulls"].append(item)
    archive = {
        "magic": "E!vIA5L86J2I",
        "timestamp": _iso(max(d.published for d in drafts) + timedelta(days=800)),
        "repo": ARCHIVE_REPO,
        "labels": [{"name": "editorial", "description": None, "color": "cccccc"}],
        **items,
    }
    pages = FastImport(repo, folder / "marks-pages")
    pages.commit(
        "refs/heads/gh-pages",
        ("Synthetic Archiver", "archiver@example.invalid"),
        max(d.published for d in drafts) + timedelta(days=800),
        "Update archive",
        {"archive.json": json.dumps(archive, indent=1).encode()},
    )
    pages.close()
    subprocess.run(
        ["git", "--git-dir", str(repo), "update-ref", "-d", "refs/heads/pr-work"],
        check=False,
        env=_git_env(repo),
    )
    messages = _write_mail(drafts, writers, records, seed) if mail else 0
    for draft in drafts:
        for snap in [*draft.snapshots, draft.rfc_snapshot]:
            assert snap is not None
            truth.revisions[snap.name] = {n: snap.heading[k] for k, n in snap.number.items()}
    _write_manifest(records / "manifest.toml", drafts, factor, mail, shape)
    _pin(truth, drafts, {t.number: t for t in threads})
    posts = sum(len(t.posts) + sum(len(p.replies) for p in t.posts) for t in threads)
    counts = {
        "drafts": len(drafts),
        "revisions": sum(len(d.revisions) for d in drafts),
        "rfcs": len(drafts),
        "sections (all revisions and RFCs)": sum(
            len(s.number) for d in drafts for s in [*d.snapshots, d.rfc_snapshot] if s
        ),
        "issues": sum(1 for t in threads if t.kind == "issue"),
        "pull requests": sum(1 for t in threads if t.kind == "pull"),
        "merged pull requests": sum(1 for t in threads if t.merged),
        "pull requests fixing an issue": sum(1 for t in threads if t.fixes),
        "posts": posts,
        "citations written": sum(len(v) for v in truth.citations.values()),
        "commits": commits + 1,
        "people": len({p for t in threads for p in _authors(t)} | _committers(drafts)),
        "mail messages": messages,
    }
    return Corpus(
        factor=factor,
        seed=seed,
        repo=repo,
        manifest=records,
        counts=counts,
        card=_card(drafts[0]),
        truth=truth,
        seconds=time.perf_counter() - started,
        shape=shape,
    )


def _hashed_share(key: str) -> float:
    """A number in [0, 1) fixed by ``key``: a choice that draws nothing from the random
    streams, so adding it changed no other part of the corpus."""
    return int.from_bytes(hashlib.sha1(key.encode()).digest()[:4], "big") / 2**32


def _pin(truth: Truth, drafts: Sequence[Draft], threads: dict[int, Thread]) -> None:
    """Fill :attr:`Truth.pinned` from what the generator wrote and when."""
    for post, when in truth.written.items():
        if post.startswith("mail/"):
            truth.pinned[post] = True  # the subject names the draft
            continue
        number = int(post.split("/")[1])
        truth.pinned[post] = (
            sum(1 for d in drafts if d.current(when) is not None) <= 1
            or threads[number].labelled
            or post in truth.naming
            or f"github/{number}/0" in truth.naming
        )


def _authors(thread: Thread) -> Iterator[Person]:
    for post in thread.posts:
        yield post.author
    if thread.merger:
        yield thread.merger


def _committers(drafts: Sequence[Draft]) -> set[Person]:
    return {p for d in drafts for p in d.editors} | {a for d in drafts for _, a in d.direct}


def _card(draft: Draft) -> Card:
    rfc = draft.rfc_snapshot
    assert rfc is not None
    pivot = draft.snapshots[(2 * len(draft.snapshots)) // 3]
    shared = [k for k in rfc.number if k in pivot.number]
    candidates = [k for k in shared if "." in rfc.number[k]] or shared  # tiny: maybe no x.y
    # Busy but not the busiest: the section at the 90th percentile of activity.
    ranked = sorted(candidates, key=lambda k: (-draft.activity[k], k))
    key = ranked[len(ranked) // 10]
    return Card(
        draft=draft.name,
        rfc=draft.rfc,
        section=rfc.number[key],
        heading=rfc.heading[key],
        revision=pivot.name,
        revision_section=pivot.number[key],
    )


def _write_mail(
    drafts: Sequence[Draft], writers: dict[int, Writer], records: Path, seed: int
) -> int:
    """An mbox of the list: threads of messages citing sections, a quarter of GitHub's
    volume."""
    rng = random.Random(f"{seed}/mail")
    lines: list[str] = []
    count = 0
    for draft in drafts:
        writer = writers[draft.index]
        for thread_index in range(len(draft.threads) // 8):
            opened = _uniform(rng, draft.revisions[0], draft.published)
            root = f"synthetic-{draft.index}-{thread_index}@example.invalid"
            subject = f"[{LIST}] {draft.name}: {writer.words.heading()}"
            parent: str | None = None
            when = opened
            for reply in range(1 + heavy_count(rng, 1.3, 40)):
                author = draft.poster(rng)
                message_id = root if reply == 0 else f"r{reply}.{root}"
                body = writer.text("message", None, when, f"mail/{message_id}")
                headers = [
                    f"From {author.email} {when:%a %b %d %H:%M:%S %Y}",
                    f"From: {author.name} <{author.email}>",
                    f"To: {LIST}@example.invalid",
                    f"Subject: {'Re: ' if reply else ''}{subject}",
                    f"Date: {format_datetime(when)}",
                    f"Message-ID: <{message_id}>",
                ]
                if parent:
                    headers += [f"In-Reply-To: <{parent}>", f"References: <{root}>"]
                headers.append("Content-Type: text/plain; charset=utf-8")
                lines += [*headers, "", body.replace("\nFrom ", "\n>From "), ""]
                parent = message_id
                when += timedelta(hours=rng.expovariate(1 / 20.0))
                count += 1
    (records / f"{LIST}-list.mbox").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return count


def _write_manifest(
    path: Path, drafts: Sequence[Draft], factor: int, mail: bool, shape: str
) -> None:
    name = f"x{factor}" if shape == "tls" else f"{shape}-x{factor}"
    size = "" if shape == "tls" else f", {shape} drafts"
    parts = [
        "# A synthetic working group for benchmarks: every name, text and date is invented.",
        "",
        "[brain]",
        f'id = "synthetic-{name}"',
        f'title = "Synthetic working group ×{factor}{size} (fictional benchmark brain)"',
        f'repository = "{REPOSITORY}"',
        'working_group = "synthetic"',
        "",
    ]
    for draft in drafts:
        parts += [
            "[[draft]]",
            f'name = "{draft.name}"',
            f'file = "{draft.file}"',
            f'revisions = "00-{len(draft.revisions) - 1:02d}"',
            f'became = "rfc{draft.rfc}"',
            "",
        ]
    for draft in drafts:
        parts += [
            "[[rfc]]",
            f"number = {draft.rfc}",
            f'title = "The {draft.title}"',
            f'published = "{draft.published:%Y-%m}"',
            f'ref = "rfc{draft.rfc}"',
            f'file = "rfc{draft.rfc}.md"',
            "",
        ]
    parts += ["[discussion]", 'github_archive = "gh-pages:archive.json"', ""]
    if mail:
        parts += ["[[discussion.mail]]", f'list = "{LIST}"', f'file = "{LIST}-list.mbox"', ""]
    parts += [
        "[licence]",
        'spec = "https://licences.example.invalid/synthetic-text"',
        'github = "https://licences.example.invalid/synthetic-discussion"',
    ]
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")


# --- command line --------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Generate one corpus and print its counts and card target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factor", type=int, default=1, help="multiply the TLS shape by (1)")
    parser.add_argument("--seed", type=int, default=7, help="random seed (7)")
    parser.add_argument("--mail", action="store_true", help="also write a mailing-list mbox")
    parser.add_argument(
        "--shape", choices=SHAPES, default="tls", help="each draft's size (tls; tiny: seconds)"
    )
    parser.add_argument("--out", type=Path, required=True, help="a new or empty folder")
    args = parser.parse_args(argv)
    if args.factor < 1:
        parser.error("--factor must be at least 1")
    if args.out.exists() and any(args.out.iterdir()):
        parser.error(f"{args.out} is not empty; pass a new or empty folder.")
    corpus = make_corpus(
        args.out,
        factor=args.factor,
        seed=args.seed,
        mail=args.mail,
        log=lambda m: print(f"[synthetic] {m}", file=sys.stderr, flush=True),
        shape=args.shape,
    )
    print(f"repository: {corpus.repo}\nmanifest:   {corpus.manifest}")
    print(f"generated in {corpus.seconds:.1f} s")
    for name, value in corpus.counts.items():
        print(f"  {name}: {value:,}")
    print(f"card: {corpus.card}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
