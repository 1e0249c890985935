"""Full-text search over section headings: "why does early data work this way?" → §4.2.10.

People ask about a concept ("key share", "0-RTT"), not a section number. This index holds the
heading of every section of every revision and RFC and ranks them against the words of a
question, deterministically and without a language model:

* **Words.** A question or heading is cut into words on anything that is not a letter or digit.
  A hyphenated compound ("0-RTT", "Pre-Shared") is a term of its own *and* yields its parts;
  underscores and CamelCase joints only split ("key_share", "HelloRetryRequest" read as the
  spaced words they spell); parentheses and apostrophes inside a word are dropped ("(EC)DHE"
  → "ecdhe", "server's" → "servers").
* **Numbers are never terms.** Plain and dotted numbers ("8446", "4.2.10") are section or RFC
  numbers, and a protocol name with its version ("TLS 1.3", "SSL 3.0", "TLSv1.2") names the
  protocol, not a section: both are dropped, so "TLS 1.3" can never find section 1.3 nor the
  heading "Updates Affecting TLS 1.2".
* **Stop words** (:data:`STOP_WORDS`): English function words and the words of asking ("why",
  "who", "does", "work", "way", "ask", "section", "rfc" …). Words that name things in protocol
  headings ("key", "share", "early", "data", "end", "new", "finished") are deliberately absent.
* **Stemming** with the Snowball English stemmer, so "retries" finds "Retry".
* **Aliases** (:data:`ALIASES`): a few protocol phrases that people write differently from the
  headings ("0-RTT" for "early data", "HRR" for "Hello Retry Request"). A phrase adds a concept
  term (``~early-data``) to whatever contains it, questions and headings alike.
* **Ranking**: any shared term makes a heading a candidate (OR); candidates are ranked by BM25
  (k1 = 1.2, b = 0.75) over the distinct headings, so a heading repeated by thirty revisions
  weighs as much as one that appeared once.
* **Grouping**: sections that became the same RFC section (same ``final``), or that share a
  heading and became nothing, are one concept and one hit, represented by the RFC section when
  there is one. A hit scores as its best-matching heading; ties go to RFC sections, then to the
  older RFC, then to the concept found in more documents, then to the lower section IRI.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

import snowballstemmer
from pydantic import BaseModel, ConfigDict

from ratified_rdf.sources.document import normalise_heading

K1 = 1.2
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalisation."""

STOP_WORDS: frozenset[str] = frozenset(
    {
        # articles, conjunctions, prepositions
        "a", "an", "the", "and", "or", "but", "nor", "if", "then", "than", "so", "of", "to",
        "in", "on", "at", "by", "for", "with", "from", "as", "into", "onto", "about", "over",
        "under", "between", "through", "via",
        # pronouns and determiners
        "i", "me", "my", "we", "us", "our", "you", "your", "he", "him", "his", "she", "her",
        "it", "its", "they", "them", "their", "this", "that", "these", "those", "there",
        "here", "some", "any", "such", "not", "no", "just", "also", "very", "really",
        # forms of be, have, do and the modal verbs
        "is", "are", "was", "were", "be", "been", "being", "am", "has", "have", "had",
        "having", "do", "does", "did", "doing", "can", "could", "should", "would",
        "will", "shall", "may", "might", "must",
        # question words
        "who", "whom", "whose", "what", "which", "when", "where", "why", "how",
        # the words of asking: they say what the user wants, not what the section is about
        "ask", "asking", "tell", "explain", "know", "understand", "please", "anyone",
        "someone", "somebody", "person", "people", "expert", "work", "works", "working",
        "worked", "way", "ways", "look", "looks", "like", "mean", "means", "meant", "thing",
        "things", "get", "got", "happen", "happens", "happened", "discuss", "discussed",
        "discussion", "talk", "talked",
        # the document's own furniture: no heading is found by saying "section"
        "section", "sections", "sec", "rfc", "rfcs", "draft", "drafts", "revision",
        "revisions", "specification", "document", "appendix",
    }
)  # fmt: skip
"""Words never used as terms, checked lower-cased before stemming.

Kept small on purpose: a word that names a thing in some protocol heading ("key", "share",
"early", "data", "end", "new", "finished", "hello", "update", "done" as in "Server Hello
Done", "spec" as in "Change Cipher Spec") must stay searchable.
"""

ALIASES: Mapping[str, tuple[str, ...]] = {
    "early-data": ("early data", "0-RTT", "zero RTT", "0RTT"),
    "key-share": ("key share", "key_share", "keyshare"),
    "psk": ("PSK", "pre-shared key", "preshared key"),
    "hrr": ("HRR", "hello retry request"),
    "resumption": ("resumption", "resume", "resuming", "resumed"),
    "session-ticket": ("session ticket", "NewSessionTicket"),
}
"""Concept → the phrases that name it. Each phrase found adds the term ``~concept``.

Applied the same way to headings and questions, so "0-RTT" in a question meets "Early Data
Indication" through ``~early-data``, and "HRR" meets "Hello Retry Request" through ``~hrr``.
A phrase matches consecutive words after stemming ("hello retry requests" counts).
"""

PROTOCOL_NAMES: frozenset[str] = frozenset({"tls", "ssl", "dtls", "quic", "http"})
"""Names dropped together with a version number that follows them ("TLS 1.3", "SSL 3.0")."""

_CONCEPT = "~"
# Runs of letters, digits and the marks that may sit inside a word; "/", "§", "?" … separate.
_CHUNK = re.compile(r"[\w'().-]+")
_DROPPED = re.compile(r"['()]")
_JOINERS = re.compile(r"[-_]+")
_VERSION = re.compile(r"v?\d{1,2}(?:\.\d{1,2})+", re.IGNORECASE)
_ATTACHED_VERSION = re.compile(r"([a-z]+?)v?\d{1,2}(?:\.\d{1,2})+", re.IGNORECASE)
# "ClientHello" → Client Hello, "TLSCiphertext" → TLS Ciphertext; "PSKs" stays one word.
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z]{2,})")
# Digits up to the first capital, then the rest, each taken whole: the same words as
# "[A-Z0-9]*[A-Z][A-Z0-9]*s", without its quadratic backtracking on a long capitalised word.
_ACRONYM_PLURAL = re.compile(r"[0-9]*+[A-Z][A-Z0-9]*+s")
_STEMMER = snowballstemmer.stemmer("english")
_ALNUM = re.compile(r"(?<![A-Za-z0-9])[a-z0-9]{6,}(?![A-Za-z0-9])")


# The stemmer is pure Python and questions repeat the same few hundred words; bounded because a
# long-running server sees whatever people type.
@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return word if word.isdigit() else _STEMMER.stemWord(word)


@dataclass(frozen=True, slots=True)
class _Word:
    stem: str
    chunk: int
    """Index of the chunk (whitespace-delimited piece) the word came from."""
    term: bool
    """Whether the word is a term: not a stop word, not a number, more than one character."""


@dataclass(frozen=True, slots=True)
class _Analysis:
    terms: tuple[str, ...]
    """Every term in text order, repeated as often as it occurs (BM25 counts them)."""
    sources: tuple[tuple[str, int], ...]
    """Each term with a chunk it came from, in text order, to report which words matched."""
    chunks: tuple[str, ...]
    """The chunks as written."""


def _words(text: str) -> tuple[list[_Word], list[tuple[str, int]], list[str]]:
    """Words in order, compound terms, and chunks as written."""
    text = unicodedata.normalize("NFKC", text).replace("’", "'")
    chunks: list[str] = []
    words: list[_Word] = []
    compounds: list[tuple[str, int]] = []
    for match in _CHUNK.finditer(text):
        raw = match.group().strip(".-_'()")
        cleaned = _DROPPED.sub("", raw)
        if not cleaned:
            continue
        attached = _ATTACHED_VERSION.fullmatch(cleaned)
        if attached and attached.group(1).lower() in PROTOCOL_NAMES:
            continue  # "TLSv1.3", "tls1.2"
        if _VERSION.fullmatch(cleaned):
            # "TLS 1.3": the name before a version names the protocol, not a section.
            previous = len(chunks) - 1
            if (
                previous >= 0
                and chunks[previous].lower() in PROTOCOL_NAMES
                and words
                and words[-1].chunk == previous
            ):
                words.pop()
                chunks.pop()
            continue
        index = len(chunks)
        chunks.append(raw)
        for piece in cleaned.split("."):
            parts = [p for seg in _JOINERS.split(piece) for p in _CAMEL.split(seg) if p]
            stems: list[str] = []
            for part in parts:
                # An acronym's plural ("PSKs", "IVs") is the acronym: Snowball keeps the "s"
                # of a word without vowels.
                lower = (part[:-1] if _ACRONYM_PLURAL.fullmatch(part) else part).lower()
                stem = _stem(lower)
                stems.append(stem)
                is_term = lower not in STOP_WORDS and not lower.isdigit() and len(lower) > 1
                words.append(_Word(stem, index, is_term))
            # A hyphen is how headings write a compound ("0-RTT", "Pre-Shared"), so the compound
            # is a term too; "key_share" and "HelloRetryRequest" are code spellings of spaced
            # words and give only their words, so they score exactly as "Key Share" does.
            if "-" in piece and len(stems) > 1:
                compounds.append(("-".join(stems), index))
    return words, compounds, chunks


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(w.stem for w in _words(text)[0])


_PHRASES: tuple[tuple[tuple[str, ...], str], ...] = tuple(
    sorted({(_phrase(p), _CONCEPT + concept) for concept, ps in ALIASES.items() for p in ps})
)


def _analyse(text: str) -> _Analysis:
    words, compounds, chunks = _words(text)
    sources = [(w.stem, w.chunk) for w in words if w.term] + compounds
    stems = [w.stem for w in words]
    concepts: set[str] = set()
    for phrase, concept in _PHRASES:
        size = len(phrase)
        for start in range(len(stems) - size + 1):
            if tuple(stems[start : start + size]) == phrase:
                concepts.add(concept)
                sources += [(concept, w.chunk) for w in words[start : start + size]]
    # Text order (by chunk) keeps "show the work" readable; sorted() is stable for ties.
    sources.sort(key=lambda source: source[1])
    # A concept counts once however many of its phrases a text says ("New Session Ticket" is
    # both "session ticket" and "NewSessionTicket"); words and compounds count as often as said.
    terms = [t for t, _ in sources if not t.startswith(_CONCEPT)]
    terms += [t for t in dict.fromkeys(t for t, _ in sources) if t in concepts]
    return _Analysis(tuple(terms), tuple(sources), tuple(chunks))


def heading_terms(text: str) -> tuple[str, ...]:
    """The distinct search terms of ``text``, as questions and headings alike are read.

    Stems of the words that are not stop words or numbers and hyphenated compounds, in text
    order, then a ``~concept`` term for each :data:`ALIASES` phrase found.
    """
    return _query_terms(_analyse(text))


def _query_terms(analysis: _Analysis) -> tuple[str, ...]:
    """Distinct terms: words and compounds in text order, then the concepts they named."""
    distinct = dict.fromkeys(term for term, _ in analysis.sources)
    return tuple(sorted(distinct, key=lambda term: term.startswith(_CONCEPT)))


class HeadingEntry(BaseModel):
    """One section's heading, as the graph holds it."""

    model_config = ConfigDict(frozen=True)

    section: str
    """IRI of the section."""
    heading: str
    page: str | None = None
    """Where a reader can open the section (its ``foaf:page``)."""
    number: str | None
    document: str
    """The document as people name it: "RFC 8446", "draft-ietf-tls-tls13-21"."""
    is_rfc: bool
    final: str | None
    """IRI of the RFC section this section became (itself for an RFC section), if any."""


class HeadingHit(BaseModel):
    """One concept that matched: its representative section and why it matched."""

    model_config = ConfigDict(frozen=True)

    entry: HeadingEntry
    """The RFC section the concept became when there is one, else its latest draft section."""
    score: float
    """BM25 score of the best-matching heading of the concept."""
    matched: tuple[str, ...]
    """The question's words that matched, as the question wrote them, in question order."""
    matched_heading: str
    """The heading that scored (an older draft's wording when that matched better)."""
    documents: int
    """How many documents (revisions and RFCs) hold a section of this concept."""


class SearchResult(BaseModel):
    """The ranked hits for one question, with the terms that were searched."""

    model_config = ConfigDict(frozen=True)

    question: str
    query_terms: tuple[str, ...]
    """The question's terms after stop words, stemming and aliases: the work, shown."""
    hits: tuple[HeadingHit, ...]
    """Best first; one hit per concept."""

    @property
    def best(self) -> HeadingHit | None:
        """The top hit, if any."""
        return self.hits[0] if self.hits else None

    @property
    def runner_up(self) -> HeadingHit | None:
        """The best hit that became a different RFC section than :attr:`best`: the alternative."""
        if not self.hits:
            return None
        top = self.hits[0].entry
        for hit in self.hits[1:]:
            if hit.entry.final is None or hit.entry.final != top.final:
                return hit
        return None


@dataclass(frozen=True, slots=True)
class _Group:
    representative: HeadingEntry
    headings: tuple[int, ...]
    """Indices of the distinct headings the group's sections carry."""
    documents: int
    wording: str
    """The representative's normalised heading."""
    rank: tuple[bool, int, int, str]
    """Tie-break among equal scores: RFC sections, then the older RFC (the one the drafts
    first became: a later RFC that kept the heading revises it), then more documents, then
    the IRI."""


class HeadingIndex:
    """An immutable BM25 index over section headings, grouped by the RFC section they became."""

    def __init__(
        self,
        headings: tuple[str, ...],
        analyses: tuple[_Analysis, ...],
        groups: tuple[_Group, ...],
        numbered: Mapping[tuple[int, str], HeadingEntry],
        places: Mapping[str, tuple[str, str | None]],
    ) -> None:
        """Use :meth:`build`; this stores what it computed."""
        self._headings = headings
        self._groups = groups
        self._numbered = numbered
        self._rfc_headings: dict[tuple[int, str], HeadingEntry] | None = None
        self._holders: dict[str, tuple[int, ...]] | None = None
        self._places = places
        self._documents: dict[str, frozenset[str]] | None = None
        self._frequencies = tuple(Counter(a.terms) for a in analyses)
        count = len(headings)
        lengths = [len(a.terms) for a in analyses]
        average = (sum(lengths) / count) if count else 0.0
        postings: dict[str, list[int]] = defaultdict(list)
        for heading, frequencies in enumerate(self._frequencies):
            for term in frequencies:
                postings[term].append(heading)
        # A question counts each term once, so a term's BM25 gain in a heading never depends on
        # the question: compute every (term, heading) gain here and only add them up in search.
        self._gains: dict[str, tuple[tuple[int, float], ...]] = {}
        for term, found in postings.items():
            idf = math.log(1 + (count - len(found) + 0.5) / (len(found) + 0.5))
            gains = []
            for heading in found:
                frequency = self._frequencies[heading][term]
                norm = K1 * (1 - B + B * lengths[heading] / average)
                gains.append((heading, idf * frequency * (K1 + 1) / (frequency + norm)))
            self._gains[term] = tuple(gains)
        groups_of: dict[int, list[int]] = defaultdict(list)
        for number, group in enumerate(groups):
            for heading in group.headings:
                groups_of[heading].append(number)
        self._groups_of = {heading: tuple(numbers) for heading, numbers in groups_of.items()}

    @classmethod
    def build(cls, entries: Iterable[HeadingEntry]) -> HeadingIndex:
        """Index ``entries``; their order does not matter, a repeated section IRI counts once."""
        unique: dict[str, HeadingEntry] = {}
        for entry in sorted(entries, key=_entry_order):
            unique.setdefault(entry.section, entry)
        members: dict[str, list[HeadingEntry]] = defaultdict(list)
        for entry in unique.values():
            key = entry.final or f"heading:{normalise_heading(entry.heading)}"
            members[key].append(entry)
        # One BM25 document per distinct heading wording, written as its latest RFC/draft says.
        wordings: dict[str, str] = {}
        for entry in sorted(unique.values(), key=_representative_order):
            wordings.setdefault(normalise_heading(entry.heading), entry.heading)
        keys = tuple(sorted(wordings))
        position = {key: i for i, key in enumerate(keys)}
        groups = tuple(_group(key, group, position) for key, group in sorted(members.items()))
        headings = tuple(wordings[key] for key in keys)
        numbered = {
            (_rfc_number(entry.document), entry.number): entry
            for entry in unique.values()
            if entry.is_rfc and entry.number
        }
        places = {entry.section: (entry.document, entry.number) for entry in unique.values()}
        return cls(headings, tuple(_analyse(h) for h in headings), groups, numbered, places)

    def __len__(self) -> int:
        """Number of concepts (groups) indexed."""
        return len(self._groups)

    def place(self, section: str) -> tuple[str, str | None] | None:
        """Where section ``section`` (an IRI) sits: its document's label and its number there
        (None for an unnumbered section), as ``section_places.rq`` gives them; None when the
        index does not hold the section."""
        return self._places.get(section)

    def numbers(self, document: str) -> frozenset[str]:
        """The section numbers ``document`` (an RFC as "RFC 8446", or a revision by name)
        holds with a heading."""
        if self._documents is None:
            held: dict[str, set[str]] = defaultdict(set)
            for label, number in self._places.values():
                if number:
                    held[label].add(number)
            self._documents = {label: frozenset(numbers) for label, numbers in held.items()}
        return self._documents.get(document, frozenset())

    def rfc_section(self, rfc: int, number: str) -> HeadingEntry | None:
        """Section ``number`` of RFC ``rfc`` as the index holds it (IRI, heading, link), or
        None when no such section carries a heading."""
        return self._numbered.get((rfc, number))

    def rfcs_numbering(self, number: str) -> tuple[int, ...]:
        """The RFCs that hold a headed section numbered ``number``, lowest number first."""
        if self._holders is None:
            holders: dict[str, list[int]] = {}
            for rfc, held in sorted(self._numbered):
                holders.setdefault(held, []).append(rfc)
            self._holders = {n: tuple(rfcs) for n, rfcs in holders.items()}
        return self._holders.get(number, ())

    def rfc_hits(self, found: SearchResult, rfc: int | None = None) -> list[HeadingHit]:
        """The hits of ``found`` that are numbered RFC sections, best first; with ``rfc``, each
        hit as that RFC's section of the same heading (the search shows one RFC's section for
        a heading two RFCs share), and hits it has no such section for left out."""
        hits: list[HeadingHit] = []
        for hit in found.hits:
            entry = hit.entry
            if not (entry.is_rfc and entry.number):
                continue
            if rfc is not None and entry.document != f"RFC {rfc}":
                same = self._by_heading().get((rfc, normalise_heading(entry.heading)))
                if same is None:
                    continue
                hit = hit.model_copy(update={"entry": same})
            if all(h.entry.section != hit.entry.section for h in hits):
                hits.append(hit)
        return _body_first(hits, self.frequency)

    def frequency(self, term: str) -> int:
        """How many distinct headings hold search term ``term``."""
        return len(self._gains.get(term, ()))

    def _by_heading(self) -> dict[tuple[int, str], HeadingEntry]:
        if self._rfc_headings is None:
            self._rfc_headings = {
                (rfc, normalise_heading(entry.heading)): entry
                for (rfc, _), entry in sorted(self._numbered.items())
            }
        return self._rfc_headings

    def words(self) -> frozenset[str]:
        """Every word of every heading, lower case (for mending typos)."""
        return frozenset(
            w for heading in self._headings for w in re.findall(r"[a-z]+", heading.casefold())
        )

    def is_heading_word(self, word: str) -> bool:
        """Whether ``word`` is a term some heading holds (after stemming and aliases): such a
        word reads as a topic, never as a person's login."""
        return any(term in self._gains for term in heading_terms(word))

    @cached_property
    def _joined(self) -> dict[str, str]:
        """Two to four consecutive words of a heading run together, lower case, to those words
        spaced ("helloretryrequest" → "Hello Retry Request", "maxstreams" → "MAX STREAMS"):
        how people type a message's or frame's name without its capitals or underscores. A
        run that is itself a heading's term is left alone."""
        joined: dict[str, str] = {}
        for heading in self._headings:
            words = [w for w in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub(" ", heading)) if w]
            for size in range(2, 5):
                for start in range(len(words) - size + 1):
                    run = words[start : start + size]
                    key = "".join(run).casefold()
                    if len(key) >= 6:
                        joined.setdefault(key, " ".join(run))
        # A heading's own word is searched as it is (CamelCase headings are split already).
        return {key: spaced for key, spaced in joined.items() if _stem(key) not in self._gains}

    def unjoin(self, text: str) -> str:
        """``text`` with each word that is a heading's words run together spaced out."""
        joined = self._joined
        return _ALNUM.sub(lambda m: joined.get(m.group(0).casefold(), m.group(0)), text)

    def search(self, question: str, *, limit: int = 10) -> SearchResult:
        """The concepts whose headings share a term with ``question``, best first."""
        analysis = _analyse(self.unjoin(question))
        query = _query_terms(analysis)
        scores: dict[int, float] = {}
        # Sorted so the floating-point sum is the same whatever order the question used.
        for term in sorted(query):
            for heading, gain in self._gains.get(term, ()):
                scores[heading] = scores.get(heading, 0.0) + gain
        best: dict[int, tuple[float, int]] = {}
        for heading, score in scores.items():
            rounded = round(score, 9)  # equal headings must tie exactly
            for number in self._groups_of[heading]:
                held = best.get(number)
                if held is None or (rounded, -heading) > (held[0], -held[1]):
                    best[number] = (rounded, heading)
        groups = self._groups
        ranked = sorted(best.items(), key=lambda item: (-item[1][0], groups[item[0]].rank))
        hits: list[HeadingHit] = []
        kept: dict[str, str] = {}  # normalised heading → document of the hit that showed it
        for group_number, (score, heading) in ranked:
            if len(hits) >= limit:
                break
            group = self._groups[group_number]
            entry = group.representative
            wording = group.wording
            # The same heading under another RFC (RFC 8446 and RFC 9846 both say "Key Share")
            # is the same concept to the reader; two sections of one document stay apart.
            if kept.get(wording, entry.document) != entry.document:
                continue
            kept.setdefault(wording, entry.document)
            hits.append(
                HeadingHit(
                    entry=entry,
                    score=score,
                    matched=_matched(analysis, self._frequencies[heading]),
                    matched_heading=self._headings[heading],
                    documents=group.documents,
                )
            )
        return SearchResult(question=question, query_terms=query, hits=tuple(hits))


def _no_more_distinctive(
    appendix: HeadingHit, body: HeadingHit, frequency: Callable[[str], int]
) -> bool:
    """Whether the words ``appendix`` matched beyond those ``body`` matched are no more
    distinctive (held by no fewer headings) than the rarest they share: "cookie extension"
    adds the common "extension" to §4.2.2 Cookie, "exporter independence" adds a word only
    §E.1.4 Exporter Independence holds to §7.5 Exporters."""
    mine, theirs = _hit_terms(appendix), _hit_terms(body)
    extra, shared = mine - theirs, mine & theirs
    if not extra:
        return True
    if not shared:
        return False
    return min(map(frequency, extra)) >= min(map(frequency, shared))


def _body_first(hits: list[HeadingHit], frequency: Callable[[str], int]) -> list[HeadingHit]:
    """The hits with an appendix section put after a body section that restates it: an RFC's
    appendices repeat the body's subjects ("Cookie Extension" for §4.2.2 "Cookie", "Replay
    Attacks on 0-RTT" beside §8 "0-RTT and Anti-Replay"), and the body is where a thing is
    specified. A body section of the same RFC goes first when its heading's terms are all in
    the appendix hit's heading, or when it matched every word the appendix hit matched; never
    when the appendix matched a more distinctive word besides (:func:`_no_more_distinctive`)."""
    if not hits or not hits[0].entry.number or not hits[0].entry.number[0].isalpha():
        return hits
    top = hits[0]
    wanted = set(heading_terms(top.entry.heading))
    for position, hit in enumerate(hits[1:], start=1):
        number = hit.entry.number or ""
        if (
            hit.entry.document == top.entry.document
            and number[:1].isdigit()
            and hit.matched
            and _no_more_distinctive(top, hit, frequency)
            and (
                set(heading_terms(hit.entry.heading)) <= wanted
                or {w.casefold() for w in top.matched} <= {w.casefold() for w in hit.matched}
            )
        ):
            return [hit, *hits[:position], *hits[position + 1 :]]
    return hits


def runner_ups(hits: Sequence[HeadingHit]) -> list[HeadingHit]:
    """The hits after the first worth offering as another reading: another section, matching
    at least half the terms the best hit matched ("Certificate Request" shares only "request"
    with "HelloRetryRequest" and is no other reading of it)."""
    if not hits:
        return []
    best = hits[0]
    wanted = len(_hit_terms(best))
    return [
        hit
        for hit in hits[1:]
        if hit.entry.section != best.entry.section and 2 * len(_hit_terms(hit)) >= wanted
    ]


def _terms_of(words: Iterable[str]) -> frozenset[str]:
    """The search terms of ``words``."""
    return frozenset(heading_terms(" ".join(words)))


def _hit_terms(hit: HeadingHit) -> frozenset[str]:
    """The terms a hit matched: of the words it matched, those its heading holds (one word
    "HelloRetryRequest" is three terms, of which "Certificate Request" holds one)."""
    return _terms_of(hit.matched) & _terms_of([hit.matched_heading])


def _group(key: str, members: list[HeadingEntry], position: Mapping[str, int]) -> _Group:
    representative = min(members, key=lambda entry: _representative_order(entry, key))
    documents = len({entry.document for entry in members})
    return _Group(
        representative=representative,
        headings=tuple(sorted({position[normalise_heading(e.heading)] for e in members})),
        documents=documents,
        wording=normalise_heading(representative.heading),
        rank=(
            not representative.is_rfc,
            _rfc_number(representative.document),
            -documents,
            representative.section,
        ),
    )


def _rfc_number(document: str) -> int:
    """8446 for "RFC 8446"; drafts sort after every RFC."""
    digits = document.removeprefix("RFC ").strip()
    return int(digits) if digits.isdigit() else 1_000_000


def _matched(analysis: _Analysis, heading_terms: Counter[str]) -> tuple[str, ...]:
    chunks = sorted({chunk for term, chunk in analysis.sources if term in heading_terms})
    return tuple(dict.fromkeys(analysis.chunks[chunk] for chunk in chunks))


def _entry_order(entry: HeadingEntry) -> tuple[str, str, str, str, bool, str]:
    return (
        entry.section,
        entry.document,
        entry.heading,
        entry.number or "",
        entry.is_rfc,
        entry.final or "",
    )


def _representative_order(
    entry: HeadingEntry, final: str | None = None
) -> tuple[bool, bool, str, str]:
    """RFC sections first (the final section itself first of all), then the latest revision."""
    return (not entry.is_rfc, entry.section != final, _descending(entry.document), entry.section)


# Thousands of sections name a few dozen documents: invert each name once.
@lru_cache(maxsize=4096)
def _descending(document: str) -> str:
    """``document`` with each character inverted, so that names sort descending inside an
    ascending key: "draft-x-28" comes before "draft-x-09" without a second sort."""
    return "".join(chr(0x10FFFF - ord(c)) for c in document)
