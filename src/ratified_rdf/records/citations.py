"""Citations in discussion text: which section of which revision a post refers to.

A post on the TLS 1.3 GitHub tracker cites the specification in many ways: "Section 4.2.9",
"§4.2.9", "Sec. 4.2.9", "S 8.5", "s7.3.2", "Appendix A.1", "Sections 2.3 and 8.1", a link to
``draft-ietf-tls-tls13-21#section-4.2.9``, or a kramdown cross-reference
``{{early-data-indication}}``. Some citations name the revision ("section 4.2.9 of draft-21",
"-21 §4.2.9") or another document ("RFC 5246 section 7.4", "Section 3 of [RFC6066]").
:func:`find_citations` finds them all with patterns, not a model, so every result can be traced
to a rule here.

The rules are deliberately narrow: a number is a section only when a word or sign says so, so
"TLS 1.3", "OpenSSL 1.1.1", "192.0.2.1", "2017-03-04" and "1.5 RTT" never become citations. A
citation of another document keeps that document (``rfc`` or ``draft``) so the caller can drop it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict

__all__ = ["Citation", "drafts_named", "find_citations", "revision_mentions"]


class Citation(BaseModel):
    """One reference to a section (or anchor) found in a post, with the document it names."""

    model_config = ConfigDict(frozen=True)

    start: int
    """Offset of the reference in the text: the keyword and number, the whole URL or xref."""
    end: int
    text: str
    """``text[start:end]`` of the searched text."""
    section: str | None
    """Section number as xml2rfc writes it (``4.2.9``, ``A.1``); appendix letters upper-case."""
    anchor: str | None
    """Anchor of the cited section (``early-data-indication``) when cited by anchor."""
    draft: str | None
    """Draft name the citation names (or the caller's default), e.g. ``draft-ietf-tls-tls13``."""
    revision: str | None
    """Two-digit revision the citation names explicitly, e.g. ``21``."""
    rfc: int | None
    """RFC number the citation names, e.g. ``8446``; another RFC means another document."""
    kind: str
    """How it was written: ``section``, ``appendix``, ``url`` or ``xref``."""


# --- document names ---------------------------------------------------------------------------

# Short names people use for the two TLS drafts; "tls13-21" and "rfc8446bis-03" mean these.
_SHORT_DRAFTS = {
    "tls13": "draft-ietf-tls-tls13",
    "ietf-tls-tls13": "draft-ietf-tls-tls13",
    "rfc8446bis": "draft-ietf-tls-rfc8446bis",
    "ietf-tls-rfc8446bis": "draft-ietf-tls-rfc8446bis",
}


def _draft_name(name: str) -> str:
    name = name.lower()
    return _SHORT_DRAFTS.get(name, name)


# A full draft name with an optional two-digit revision. The name part is lazy so that the last
# "-NN" becomes the revision: draft-ietf-tls-tls13-21 is (draft-ietf-tls-tls13, 21). The word after
# "draft-" starts with a letter, so "draft-21" is a revision of an unnamed draft, not a name.
_FULL_DRAFT = (
    r"(?P<name>draft-[a-z][a-z0-9]*(?:-[a-z0-9]+)*?|(?:ietf-tls-)?(?:tls13|rfc8446bis))"
    r"(?:-(?P<rev>\d{2}))?(?![\w-])"
)
_FULL_DRAFT_RE = re.compile(r"(?<![\w.-])" + _FULL_DRAFT, re.IGNORECASE)
# "draft 21", "draft-21", "Draft -18", "draft 4" (one digit is padded).
_SHORT_DRAFT = r"\bdraft[ \t]*-?[ \t]*(?P<srev>\d{1,2})(?!\d|\.\d|\w)"
# A bare "-21". Trap rule: exponents ("2^-32", "2^(-32)", "2^{-32}"), ranges ("[-10,10]",
# "-10 .. 10"), dates ("2017-03-04") and assignments ("x = -10") are not revisions, so the dash
# must follow a space, "(" or "[" that is not itself part of an exponent.
_BARE_REVISION = (
    r"(?:^|(?<=[\s(\[]))(?<!\^\()(?<![=<>+*/]\s)-(?P<brev>\d{2})(?!\d|\.\d|\w|,\s*-?\d|\s*\.\.)"
)
_SHORT_REVISION_RE = re.compile(f"{_SHORT_DRAFT}|{_BARE_REVISION}", re.IGNORECASE | re.MULTILINE)
_RFC = r"(?:\[|\{\{)?[?!]?RFC[ \t]*-?[ \t]*(?P<rfc>\d{3,5})\b(?:\]|\}\})?"
# Documents that are neither RFCs nor drafts but have sections of their own ("PKCS #3 section
# 8.3", "SP 800-56A section C.1", "SECG SEC 1"): their sections are never this spec's.
_FOREIGN = r"(?:PKCS[ \t]*#[ \t]*\d+|SP[ \t]*800-\d+\w*|FIPS[ \t]*\d+(?:-\d)?|X9\.\d+|SECG)"


@dataclass(frozen=True)
class _Document:
    """The document a citation names: an RFC, a draft (maybe with a revision), or a foreign one."""

    draft: str | None = None
    revision: str | None = None
    rfc: int | None = None
    foreign: bool = False


def _document_at(match: re.Match[str]) -> _Document:
    groups = match.groupdict()
    if groups.get("rfc"):
        return _Document(rfc=int(groups["rfc"]))
    if groups.get("name"):
        return _Document(draft=_draft_name(groups["name"]), revision=groups.get("rev"))
    revision = groups.get("srev") or groups.get("brev")
    if revision:
        return _Document(revision=revision.zfill(2))
    return _Document(foreign=True)


# The document written just before the keyword: "RFC 5246 section", "[RFC5280], Section",
# "draft-ietf-quic-tls section", "draft 14 section", "-21 §", "in draft 21, Section".
_PREFIX = re.compile(
    rf"(?:{_RFC}|(?<![\w.-]){_FULL_DRAFT}|{_SHORT_DRAFT}|{_BARE_REVISION}|(?P<foreign>{_FOREIGN}))"
    r"(?:'s)?[ \t]*,?[ \t]*\Z",
    re.IGNORECASE | re.MULTILINE,
)
# The document written just after the numbers: "of RFC 5116", "of [RFC6066]", "of {{?RFC9847}}",
# "of draft-21", "in draft 18", "of -21", "of draft-ietf-tls-tls13-21".
_SUFFIX = re.compile(
    r"\s+(?:of|in|from)\s+(?:the\s+)?"
    rf"(?:{_RFC}|{_FULL_DRAFT}|{_SHORT_DRAFT}|-(?P<brev>\d{{2}})\b|(?P<foreign>{_FOREIGN}))",
    re.IGNORECASE,
)
_SUFFIX_URL = re.compile(r"\s+(?:of|in|from)\s+(?:the\s+)?(?=https?://)", re.IGNORECASE)


# --- URLs -----------------------------------------------------------------------------------

_URL = re.compile(r"https?://[^\s<>\"'`()\[\]{}]+")
_MD_LINK = re.compile(r"\[(?P<label>[^\[\]\n]{1,300})\]\((?P<url>https?://[^\s()]+)\)")
_URL_RFC = re.compile(r"(?:^|/)rfc(?P<rfc>\d{3,5})(?:\.(?:html|txt|xml|pdf))?/?$", re.IGNORECASE)
_URL_DRAFT = re.compile(
    r"(?:^|/)(?P<name>draft-[a-z0-9]+(?:-[a-z0-9]+)*?)(?:-(?P<rev>\d{2}))?"
    r"(?:\.(?:html|txt|xml|pdf))?/?$",
    re.IGNORECASE,
)
# The editor's copy (tlswg.github.io/tls13-spec/) is this spec without a fixed revision.
_EDITOR_COPY_HOSTS = {"tlswg.github.io", "tlswg.org"}
# Fragments: "section-4.2.9" (with an optional paragraph suffix, "section-1.3-2.6.1"),
# "appendix-A.1", xml2rfc v2 "rfc.section.4.2.9" / "rfc.appendix.F" (".p.3" is a paragraph).
_FRAGMENT_SECTION = re.compile(
    r"^(?:(?:rfc\.)?(?:section|appendix)[-.])(?P<num>(?:\d{1,2}|[a-z])(?:\.\d{1,2})*)"
    r"(?:-\d+(?:\.\d+)*|\.p\.\d+)?$",
    re.IGNORECASE,
)
# Trap rule: fragments that point at a page, a line, a table or figure, or a bibliography entry
# ("#RFC6066", "#SHS", "#ref-GCM": references are written in capitals or start "ref-") are not
# sections.
_FRAGMENT_NOT_SECTION = re.compile(
    r"^(?:page-\d+|L\d+(?:-L?\d+)?|(?:table|figure)-\d+|ref-.*|[^a-z]*)$"
)
_FRAGMENT_ANCHOR = re.compile(r"^[A-Za-z][\w.:-]*$")


@dataclass(frozen=True)
class _Link:
    """What a URL points at: a document of the spec family (or another) and a place in it."""

    document: _Document
    section: str | None
    anchor: str | None


def _parse_url(url: str) -> _Link | None:
    """The document and place a URL names, or ``None`` for URLs that are not specifications."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    # GitHub issue, pull and blob links carry comment and line fragments, never sections.
    if host.endswith("github.com"):
        return None
    path = unquote(parts.path)
    if (match := _URL_RFC.search(path)) is not None:
        document = _Document(rfc=int(match.group("rfc")))
    elif (match := _URL_DRAFT.search(path)) is not None:
        document = _Document(draft=_draft_name(match.group("name")), revision=match.group("rev"))
    elif host in _EDITOR_COPY_HOSTS and path.startswith("/tls13-spec"):
        document = _Document()
    else:
        return None
    fragment = unquote(parts.fragment)
    if (match := _FRAGMENT_SECTION.match(fragment)) is not None:
        return _Link(document, _normalise(match.group("num")), None)
    if _FRAGMENT_NOT_SECTION.match(fragment) or not _FRAGMENT_ANCHOR.match(fragment):
        return _Link(document, None, None)
    return _Link(document, None, fragment)


def _url_end(text: str, start: int) -> int:
    """End of the URL starting at ``start``, without sentence punctuation after it."""
    match = _URL.match(text, start)
    assert match is not None
    end = match.end()
    while end > start and text[end - 1] in ".,;:!?*_":
        end -= 1
    return end


# --- prose references -----------------------------------------------------------------------

# The number of a section: "4.2.9", "A.1", "A". Top-level letters stop at H (the spec has no
# appendix beyond that), so "section I will" is not section I.
_NUMBER = r"(?:\d{1,2}|[A-H])(?:\.\d{1,2}){0,6}"
# Trap rule: a number continues into more digits or letters ("sect571r1", "sec2001", "4.2.9a")
# is not a section number.
_NUMBER_END = r"(?![.\d]*\d)(?![A-Za-z])"
# Keywords, case-sensitive where case matters. "SEC 1" (all caps) is the SECG standard, not a
# section; "S 8.5" and "s7.3.2" are editors' shorthands (a capital S needs one space and a
# digit, a small s needs a dotted number right after it, so "client's 0-RTT" never matches).
_KEYWORD = re.compile(
    r"(?<![\w-])(?:"
    r"(?P<section>(?:[Ss]ub-?)?[Ss]ections?|SECTIONS?|[Ss]ects?\.|[Ss]ect\b|[Ss]ecs?\.|[Ss]ec\b"
    r"|§§?)"
    r"|(?P<appendix>[Aa]ppendix|[Aa]ppendices|APPENDIX|APPENDICES)"
    r"|(?P<shorthand>S(?=[ ]\d)|s(?=\d{1,2}\.\d))"
    r")"
)
_AFTER_SECTION = re.compile(rf"[ \t\xa0]*(?:\r?\n[ \t>]*)?(?P<num>{_NUMBER}){_NUMBER_END}")
_AFTER_APPENDIX = re.compile(
    rf"[ \t\xa0]*(?:\r?\n[ \t>]*)?(?P<num>[A-H](?:\.\d{{1,2}}){{0,6}}){_NUMBER_END}"
)
_AFTER_SHORTHAND = re.compile(rf"[ ]?(?P<num>\d{{1,2}}(?:\.\d{{1,2}}){{0,6}}){_NUMBER_END}")
# Trap rule: "1.5 RTT", "0.5 RTT", "2.5%" are quantities even in a list after "Sections".
_QUANTITY = re.compile(r"\s*-?(?:RTTs?|ms|s|sec|seconds|%|bytes?|bits?|times)\b|%", re.I)
_CONTINUATION = re.compile(
    r"(?P<sep>\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or|&)\s|/)\s*)(?:§\s*)?"
    rf"(?P<num>{_NUMBER}){_NUMBER_END}"
)
# Trap rule: markdown list numbering. When the number sits on the next line and is written
# "1. foo", it is the list item after a line ending in "section", not a section number.
_LIST_ITEM = re.compile(r"\.[ \t]+\S")
_XREF = re.compile(r"\{\{\s*(?P<anchor>[A-Za-z][\w-]*)\s*\}\}")


def _normalise(number: str) -> str:
    head, _, rest = number.partition(".")
    head = head.upper() if head.isalpha() else head
    return f"{head}.{rest}" if rest else head


@dataclass
class _Found:
    """A citation under construction."""

    start: int
    end: int
    section: str | None
    anchor: str | None
    document: _Document
    kind: str


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span blanked out, so prose rules never read inside a URL."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _prose(text: str, masked: str, urls: dict[int, _Link | None]) -> list[_Found]:
    found: list[_Found] = []
    consumed = 0
    for keyword in _KEYWORD.finditer(masked):
        # A "§" inside "Sections 4.2.9, §4.2.10" was read as part of the list already.
        if keyword.start() < consumed:
            continue
        kind = "appendix" if keyword.group("appendix") else "section"
        after = (
            _AFTER_APPENDIX
            if keyword.group("appendix")
            else _AFTER_SHORTHAND
            if keyword.group("shorthand")
            else _AFTER_SECTION
        )
        first = after.match(masked, keyword.end())
        if first is None:
            continue
        gap = masked[keyword.end() : first.start("num")]
        if "\n" in gap and _LIST_ITEM.match(masked, first.end("num")):
            continue
        if _QUANTITY.match(masked, first.end("num")):
            continue
        numbers = [(first.start("num"), first.end("num"))]
        plural = keyword.group().lower().endswith(("s", "§§", "ces")) and not keyword.group(
            "shorthand"
        )
        position = first.end()
        while (more := _CONTINUATION.match(masked, position)) is not None:
            number = more.group("num")
            # A singular keyword only continues into dotted numbers ("Section 4.2.1, 4.2.3"),
            # so "Section 4, 5 times" stays one citation.
            if not plural and "." not in number:
                break
            if _QUANTITY.match(masked, more.end("num")) or (
                kind == "appendix" and not number[0].isalpha()
            ):
                break
            numbers.append((more.start("num"), more.end("num")))
            position = more.end()
        consumed = position
        document = _prefix_document(masked, keyword.start())
        if document is None:
            document = _suffix_document(text, masked, position, urls)
        if document is not None and document.foreign:
            continue
        for index, (start, end) in enumerate(numbers):
            found.append(
                _Found(
                    start=keyword.start() if index == 0 else start,
                    end=end,
                    section=_normalise(masked[start:end]),
                    anchor=None,
                    document=document or _Document(),
                    kind=kind,
                )
            )
    return found


# Words that make a document name the object of an earlier citation: in "Section 3 of RFC9847
# Section 4", RFC 9847 belongs to section 3, not to section 4.
_OWNED = re.compile(r"(?:\d|\b[A-H])\s+(?i:of|in|from)\s+(?i:the\s+)?(?:\{\{\s*)?\Z")


def _prefix_document(masked: str, start: int) -> _Document | None:
    window = masked[max(0, start - 80) : start]
    match = _PREFIX.search(window)
    if match is None or _OWNED.search(window, 0, match.start()):
        return None
    return _document_at(match)


def _suffix_document(
    text: str, masked: str, position: int, urls: dict[int, _Link | None]
) -> _Document | None:
    if (match := _SUFFIX_URL.match(text, position)) is not None and match.end() in urls:
        link = urls[match.end()]
        return link.document if link else None
    match = _SUFFIX.match(masked, position)
    return _document_at(match) if match else None


def find_citations(text: str, *, default_draft: str | None = None) -> list[Citation]:
    """Every section or anchor reference in ``text``, in order of appearance.

    Citations that name no document get ``draft=default_draft``; those that name a revision
    only ("-21 §4.2.9") keep that revision with the default draft. Citations of other RFCs and
    drafts carry that RFC or draft so the caller can tell them apart.
    """
    url_spans: list[tuple[int, int]] = []
    urls: dict[int, _Link | None] = {}
    for match in _URL.finditer(text):
        end = _url_end(text, match.start())
        url_spans.append((match.start(), end))
        urls[match.start()] = _parse_url(text[match.start() : end])
    masked = _mask(text, url_spans)
    found = _prose(text, masked, urls)

    # A markdown link whose label is a citation: the URL says which document the label means,
    # and the link is one citation, not two. A link with a plain label is cited by its URL.
    labelled: set[int] = set()
    for link in _MD_LINK.finditer(text):
        target = urls.get(link.start("url"))
        inside = [f for f in found if link.start("label") <= f.start < link.end("label")]
        if not inside or target is None:
            continue
        labelled.add(link.start("url"))
        for citation in inside:
            if citation.document == _Document():
                citation.document = target.document
            if citation.anchor is None and target.anchor is not None:
                citation.anchor = target.anchor
    for (start, end), target in zip(url_spans, urls.values(), strict=True):
        if target is None or start in labelled:
            continue
        if target.section is None and target.anchor is None:
            continue
        kind = "url"
        found.append(_Found(start, end, target.section, target.anchor, target.document, kind))

    for xref in _XREF.finditer(masked):
        anchor = xref.group("anchor")
        # Trap rule: {{RFC6066}}, {{SLOTH}}, {{PSK-FINISHED}} are bibliography references, which
        # kramdown-rfc writes in capitals; section anchors always have a small letter.
        if not any(c.islower() for c in anchor):
            continue
        found.append(_Found(xref.start(), xref.end(), None, anchor, _Document(), "xref"))

    citations = []
    for item in sorted(found, key=lambda f: (f.start, f.end)):
        document = item.document
        draft = document.draft
        if draft is None and document.rfc is None:
            draft = default_draft
        citations.append(
            Citation(
                start=item.start,
                end=item.end,
                text=text[item.start : item.end],
                section=item.section,
                anchor=item.anchor,
                draft=draft,
                revision=document.revision,
                rfc=document.rfc,
                kind=item.kind,
            )
        )
    return citations


def revision_mentions(text: str) -> list[tuple[str | None, str]]:
    """Every explicit revision mention in ``text``, in order: (draft name or None, "NN").

    Full names ("draft-ietf-tls-tls13-21", "rfc8446bis-03") give the draft; short forms ("draft
    21", "draft-21", "-21") give only the number. A name without a revision is not a mention.
    """
    mentions: list[tuple[int, str | None, str]] = []
    spans: list[tuple[int, int]] = []
    for match in _FULL_DRAFT_RE.finditer(text):
        spans.append(match.span())
        if match.group("rev"):
            mentions.append((match.start(), _draft_name(match.group("name")), match.group("rev")))
    masked = _mask(text, spans)
    for match in _SHORT_REVISION_RE.finditer(masked):
        number = match.group("srev") or match.group("brev")
        mentions.append((match.start(), None, number.zfill(2)))
    return [(draft, number) for _, draft, number in sorted(mentions, key=lambda m: m[0])]


def drafts_named(text: str) -> set[str]:
    """Every draft ``text`` names, with or without a revision, in prose or in a link
    ("draft-ietf-tls-tls13-21", "draft-ietf-tls-rfc8446bis", ".../draft-foo-bar-03#section-2",
    and the TLS short names "tls13-21", "rfc8446bis"). Used to tell which draft a post is
    about; "draft 21" or a bare "-21" names no draft."""
    return {_draft_name(match.group("name")) for match in _FULL_DRAFT_RE.finditer(text)}
