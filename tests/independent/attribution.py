"""Which draft, revision and section each commit changed, worked out from git alone.

This checker is written apart from the pipeline (it imports nothing from ``ratified_rdf``) so
that tests can compare the pipeline's discussion counts with an answer reached another way.

Call it as::

    from tests.independent.attribution import attribute

    result = attribute("path/to/repo-or.bundle")   # a bundle, a clone, or a bare git dir
    result.commits["30bb5004…"].touches             # (file, draft, revision, section) rows
    result.commits_per_draft()                      # {"draft-ietf-tls-tls13": 1836, …}
    result.commits_per_section("draft-ietf-tls-tls13-28")          # landed in -28
    result.carried_section_commits("draft-ietf-tls-tls13-28")      # all revisions, in -28

What it decides, and how:

* **Commits.** Every non-merge commit reachable from the default branch (the branch ``HEAD``
  names; pass ``branch=`` to choose): first-parent commits and the commits of merged branches
  alike. Merge commits are not attributed: what a merge brings in is the merged branches'
  commits, which are counted themselves (``git log --follow`` lists no merges either).
* **Document files.** ``.md`` and ``.xml`` files named ``draft-…`` or ``rfcNNNN…``, and any
  file git's rename detection (``-M``, 50%) shows was renamed from or to one.
* **Draft of a file.** ``[dir/]draft-NAME[-NN].ext`` belongs to ``draft-NAME`` when that draft
  has ``draft-NAME-NN`` tags (so ``archive/draft-x.md`` is still ``draft-x``), except that a
  file named with a revision number that no tag holds (a copy of ``-26`` kept beside the
  draft for a while) is a snapshot, not a document of any draft; any other
  document file belongs to the nearest file it was renamed from, else renamed to, whose draft
  has tags; else to its own ``draft-NAME`` (a draft never tagged), else to no draft (``None``).
* **Revision landed.** Per draft, the first of its ``draft-NAME-NN`` tags, in order of NN,
  whose history contains the commit; ``None`` when none does (work after the last tag).
* **Sections, by position.** Each ``--unified=0`` hunk's removed lines are placed in the
  parent's text and its added lines in the commit's text, each in the section tree parsed
  from that exact text (:func:`parse_sections`); a hunk that crosses a heading is split at it,
  each part going to the deepest section containing it. A section is named by its number in
  that text (``5.1``, ``B.3.1``; ``None`` when unnumbered) and its heading path; two sections
  with one heading are two sections. Changes outside every section (the front matter), pure
  renames and binary changes give one row with an empty path, so the commit still counts for
  its file.
* **A section in a revision.** To count per section of a tagged revision, a row's section is
  looked up in the section tree of the draft's file at that tag by :func:`match_section`: the
  same heading path (and the same occurrence of it), else the same number and title, else a
  title that is unique among the revision's sections on the same side of ``--- back`` (a
  section whose parent was renamed or removed). Never by the title alone when it repeats.
"""

from __future__ import annotations

import bisect
import html
import re
import subprocess
import tempfile
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

__all__ = [
    "Attribution",
    "CommitRecord",
    "Section",
    "SectionTree",
    "Touch",
    "attribute",
    "match_section",
    "parse_sections",
]

DOCUMENT_SUFFIXES = (".md", ".xml")
_DRAFT_FILE = re.compile(r"^(draft-[A-Za-z0-9-]+?)(?:-(\d{2}))?\.(?:md|xml)$")
_RFC_FILE = re.compile(r"^rfc\d+[A-Za-z0-9-]*\.(?:md|xml)$")
_DRAFT_TAG = re.compile(r"^(draft-[A-Za-z0-9-]+)-(\d{2,3})$")


# --------------------------------------------------------------------------- section trees


@dataclass(frozen=True)
class Section:
    """One section of one text: its number there (``None`` when unnumbered), its heading
    path from the top level, which occurrence of that path it is (0 for the first), whether it
    is an appendix, and the 1-based lines it spans (heading line to last line)."""

    number: str | None
    path: tuple[str, ...]
    occurrence: int
    appendix: bool
    start: int
    end: int
    parent: int | None

    @property
    def title(self) -> str:
        """The section's own heading."""
        return self.path[-1]

    @property
    def label(self) -> str:
        """Its number, or for an unnumbered section ``(unnumbered) Top > … > Heading``."""
        return self.number if self.number else "(unnumbered) " + " > ".join(self.path)


@dataclass(frozen=True)
class SectionTree:
    """The sections of one text in document order, with a line-to-section lookup."""

    sections: tuple[Section, ...]
    _starts: tuple[int, ...] = field(repr=False, compare=False, default=())
    open_fence: bool = False
    """A fence is left open at the end of the text: a reader of the file cannot be sure which
    lines are code (this checker reads the rest of the file as code, as it stands)."""
    blank_lines: frozenset[int] = field(repr=False, compare=False, default=frozenset())
    """Lines of an XML text that hold only white space: the layout between elements, no
    section's text, so a change to them changes no section."""

    @classmethod
    def of(cls, sections: Iterable[Section]) -> SectionTree:
        """A tree from sections listed in document order."""
        ordered = tuple(sections)
        return cls(ordered, tuple(s.start for s in ordered))

    def at(self, line: int) -> Section | None:
        """The deepest section containing 1-based ``line``, or ``None`` outside them all."""
        index = bisect.bisect_right(self._starts, line) - 1
        while index >= 0:
            section = self.sections[index]
            if section.end >= line:
                return section
            index = section.parent if section.parent is not None else -1
        return None

    def numbered(self, number: str) -> Section | None:
        """The section numbered ``number`` (e.g. ``"B.3.1"``), if there is one."""
        return next((s for s in self.sections if s.number == number), None)


@dataclass
class _Heading:
    line: int
    level: int
    title: str
    region: str
    numbered: bool = True


_MD_CANDIDATE = re.compile(r"\n(?:[#%~`{=-]|[ \t]+[~`])[^\n]*")
_MD_HEADING = re.compile(r"^(?:%%)?(#{1,6})(?!#)[ \t]*(.*?)[ \t]*$")
_IAL = re.compile(r"[ \t]*\{[:#][^}]*\}[ \t]*$")
_UNNUMBERED = re.compile(r"numbered\s*=\s*[\"']?(?:false|no)\b|\bunnumbered\b")
_FENCE = re.compile(r"^[ \t]*(~{3,}|`{3,})")
_MARKER = re.compile(r"^---(?:[ \t]+([A-Za-z][\w-]*))?[ \t]*$")
_SETEXT = re.compile(r"^(=+|-{2,})[ \t]*$")  # a lone "- " is an empty list item
_NOT_SETEXT_TEXT = re.compile(r"^(?:[ \t]{4}|[ \t]*(?:[-*+|>]|\d+\.)[ \t]|[ \t]*$|[ \t]*\{:)")


def _candidate_lines(text: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for the lines that may be a heading, fence, marker or
    attribute list (the scan runs in the regex engine: drafts are large)."""
    padded = "\n" + text
    line, previous = 0, 0
    for found in _MD_CANDIDATE.finditer(padded):
        line += padded.count("\n", previous, found.start() + 1)
        previous = found.start() + 1
        yield line, found.group(0)[1:].rstrip("\r")


def _markdown_headings(text: str) -> tuple[list[_Heading], list[int], bool]:
    """Headings of kramdown-rfc markdown, the lines of region markers (``--- back`` …), and
    whether a fence is still open at the end (the text's fences do not pair up).

    Skips the YAML front matter and fenced code; reads ``{:numbered="false"}`` on the line
    after a heading; takes tls13-spec's ``%%##`` lines (headings its build expands into the
    appendix of data structures) as headings."""
    headings: list[_Heading] = []
    markers: list[int] = []
    region = "middle"
    in_yaml = text.startswith("---\n") or text.startswith("---\r\n")
    fence = ""
    lines: list[str] | None = None
    for line, raw in _candidate_lines(text):
        if line == 1 and in_yaml:
            continue
        if fence:
            found = _FENCE.match(raw)
            if (
                found
                and found.group(1)[0] == fence[0]
                and len(found.group(1)) >= len(fence)
                and not raw[found.end() :].strip()
            ):
                fence = ""
            continue
        underline = None if in_yaml else _SETEXT.match(raw)
        if underline and region != "front" and line >= 2:
            # A setext heading (``Title`` over ``===`` or ``---``): kramdown reads the line
            # above as the heading when it is text that starts a block (a blank line before).
            if lines is None:
                lines = text.split("\n")
            above = lines[line - 2].rstrip("\r")
            before = lines[line - 3].strip() if line >= 3 else ""
            # A merge conflict committed as it was ("<<<<<<< HEAD" over "=======") is text.
            conflict = above.startswith(("<<<<<<<", ">>>>>>>", "|||||||"))
            if (
                not _NOT_SETEXT_TEXT.match(above)
                and not before
                and not above.startswith("#")
                and not conflict
            ):
                title = above.strip()
                attributes = _IAL.search(title)
                if attributes:
                    title = title[: attributes.start()].strip()
                level = 1 if underline.group(1)[0] == "=" else 2
                numbered = not (attributes and _UNNUMBERED.search(attributes.group(0)))
                if title:
                    headings.append(_Heading(line - 1, level, title, region, numbered))
                continue
        marker = _MARKER.match(raw)
        if marker:
            name = marker.group(1) or ""
            if in_yaml or name:
                in_yaml = False
                markers.append(line)
                if name == "middle":
                    region = "middle"
                elif name == "back":
                    region = "back"
                elif name == "abstract" or name.startswith("note"):
                    region = "front"
            continue
        if in_yaml:
            continue
        found = _FENCE.match(raw)
        if found:
            fence = found.group(1)
            continue
        if raw[0] in " \t":
            continue
        if raw.startswith("{:"):
            if headings and headings[-1].line == line - 1 and _UNNUMBERED.search(raw):
                headings[-1].numbered = False
            continue
        heading = _MD_HEADING.match(raw)
        if heading is None or region == "front":
            continue
        title = heading.group(2)
        attributes = _IAL.search(title)
        if attributes:
            title = title[: attributes.start()]
        title = title.rstrip("#").strip()
        if not title:
            continue
        numbered = not (attributes and _UNNUMBERED.search(attributes.group(0)))
        headings.append(_Heading(line, len(heading.group(1)), title, region, numbered))
    return headings, markers, bool(fence)


_XML_TOKEN = re.compile(
    r"<!--.*?-->|<(/?)(section|references|middle|back|name)\b([^>]*?)(/?)>",
    re.S | re.IGNORECASE,
)
_XML_ATTRIBUTE = re.compile(r"""(\w+)\s*=\s*(?:"([^"]*)"|'([^']*)')""")


def _xml_sections(text: str) -> list[tuple[int, int, int, str, str, bool]]:
    """``(start, end, depth, title, region, numbered)`` for every ``<section>`` of an RFC XML
    text (v2 ``title=`` or v3 ``<name>``), in document order."""
    found: list[list] = []
    stack: list[int] = []
    region = "middle"
    line, offset = 1, 0
    naming: int | None = None
    for token in _XML_TOKEN.finditer(text):
        line += text.count("\n", offset, token.start())
        offset = token.start()
        closing, tag, attributes, empty = token.groups()
        if tag is None:
            continue
        tag = tag.lower()
        if tag in ("middle", "back") and not closing:
            region = tag
        elif tag == "name" and not closing and naming is not None and not found[naming][3]:
            end = text.find("</name>", token.end())
            name = re.sub(r"<[^>]+>", "", text[token.end() : end if end >= 0 else token.end()])
            found[naming][3] = html.unescape(" ".join(name.split()))
        elif tag == "references" and not closing:
            # A reference list is a numbered section of the body's numbering, after its last
            # section (xml2rfc renders it so); its title is ``title=`` (v2) or ``<name>``.
            values = {
                m.group(1): m.group(2) or m.group(3) or ""
                for m in _XML_ATTRIBUTE.finditer(attributes)
            }
            title = html.unescape(" ".join(values.get("title", "").split()))
            found.append([line, line, len(stack), title, "references", True])
            naming = len(found) - 1
            if empty:
                naming = None
            else:
                stack.append(len(found) - 1)
        elif tag == "section" and not closing:
            values = {
                m.group(1): m.group(2) or m.group(3) or ""
                for m in _XML_ATTRIBUTE.finditer(attributes)
            }
            title = html.unescape(" ".join(values.get("title", "").split()))
            numbered = values.get("numbered", "true").lower() not in ("false", "no")
            found.append([line, line, len(stack), title, region, numbered])
            naming = len(found) - 1
            if empty:
                naming = None
            else:
                stack.append(len(found) - 1)
        elif tag in ("section", "references") and closing and stack:
            found[stack.pop()][1] = text.count("\n", 0, token.end()) + 1
            naming = None
    return _reference_lists([tuple(entry) for entry in found])  # type: ignore[misc]


def _reference_lists(
    found: list[tuple[int, int, int, str, str, bool]],
) -> list[tuple[int, int, int, str, str, bool]]:
    """The reference lists numbered as xml2rfc numbers them: one list is one section of the
    body's numbering (``9. Normative References``); several side by side (v2) are
    subsections of one ``References`` section it makes up, spanning them all."""
    lists = [i for i, entry in enumerate(found) if entry[4] == "references"]
    top = [i for i in lists if found[i][2] == 0]
    marked = [
        (s, e, d, t or "References", "middle", n) if r == "references" else (s, e, d, t, r, n)
        for s, e, d, t, r, n in found
    ]
    if len(top) < 2:
        return marked
    first, last = top[0], top[-1]
    end = max(found[i][1] for i in lists)
    parent = (found[first][0], end, 0, "References", "middle", True)
    nested = [
        (s, e, d + 1, t, r, n) if first <= i <= last or i in lists else (s, e, d, t, r, n)
        for i, (s, e, d, t, r, n) in enumerate(marked)
    ]
    return [*nested[:first], parent, *nested[first:]]


_DOCTYPE = re.compile(r"<!DOCTYPE[^\[>]*\[(.*?)\]\s*>", re.S)
_ENTITY = re.compile(r"""<!ENTITY\s+([\w.-]+)\s+(?:"([^"]*)"|'([^']*)')\s*>""")
_ENTITY_USE = re.compile(r"&([\w.-]+);")


def expand_entities(text: str, rounds: int = 4, limit: int = 4_000_000) -> str:
    """``text`` with the general entities its DOCTYPE declares inline (``<!ENTITY MAY
    "<bcp14>MAY</bcp14>">``) replaced by their values, as an XML parser would; external
    (``SYSTEM``) and parameter entities are left as written. The expansion is bounded (a few
    rounds, a size cap) and keeps every line where it was: a value's line breaks become
    spaces, so a line of the expanded text is the same line of the file."""
    doctype = _DOCTYPE.search(text)
    if doctype is None:
        return text
    values = {
        m.group(1): " ".join((m.group(2) if m.group(2) is not None else m.group(3)).split("\n"))
        for m in _ENTITY.finditer(doctype.group(1))
    }
    if not values:
        return text
    head, body = text[: doctype.end()], text[doctype.end() :]
    for _ in range(rounds):
        expanded = _ENTITY_USE.sub(lambda m: values.get(m.group(1), m.group(0)), body)
        if expanded == body or len(expanded) > limit:
            break
        body = expanded
    return head + body


_TEXT_HEADING = re.compile(
    r"^(?:Appendix[ \t]+([A-Z]{1,2})\.?|(\d+|[A-Z]{1,2}(?=\.\d))((?:\.\d+)*)\.?)"
    r"[ \t]+(\S.*?)[ \t]*$"
)
_TEXT_PAGE_LINE = re.compile(
    r"\[Page \d+\][ \t]*$|^(?:Internet[- ]Draft|INTERNET[- ]DRAFT|RFC[ \t]+\d+)[ \t]{2,}"
)
_TOC_LEADER = re.compile(r"(?:\.[ \t]?){3,}[ \t]*\d+[ \t]*$|[ \t]{2,}\d+[ \t]*$")


def _successor(previous: tuple[str, ...] | None, number: tuple[str, ...]) -> bool:
    """Whether section ``number`` may follow ``previous`` in a text: the next at some level
    (``3.2`` after ``3.1.4``, ``4`` after ``3.2``), the first child (``3.2.1`` after
    ``3.2``), or the first appendix (``A`` after any numbered section)."""

    def following(part: str) -> str:
        if part.isdigit():
            return str(int(part) + 1)
        return _letters(sum((ord(c) - 64) * 26**i for i, c in enumerate(reversed(part))))

    if previous is None:
        return number == ("1",)
    if number == (*previous, "1"):
        return True
    if len(number) == 1 and number[0] == "A" and previous[0].isdigit():
        return True
    for depth in range(len(previous)):
        if number == (*previous[:depth], following(previous[depth])):
            return True
    return False


def _text_tree(text: str) -> SectionTree:
    """The sections of a plain-text draft or RFC, as the IETF lays one out: a heading
    starts at the left margin (body text is indented) with its number and a full stop
    (``3.2.``), appendices as ``Appendix A.`` and ``A.1.``; the table of contents is
    indented, so it is not read. A number is only taken when it can follow the one before
    (a line of a figure that starts with a number is not a heading). After the first
    section, a short line at the margin between blank lines (``Acknowledgments``,
    ``Authors' Addresses``) is an unnumbered section; page headers and footers are not. A
    heading follows a blank line (or a page header), never a line of a paragraph."""
    lines = text.split("\n")
    found: list[tuple[int, tuple[str, ...] | None, str, bool]] = []  # line, number, title, back
    previous: tuple[str, ...] | None = None
    appendix = False
    for index, raw in enumerate(lines):
        line = raw.rstrip("\r").replace("\f", "")
        if not line or line[0] in " \t" or _TEXT_PAGE_LINE.search(line):
            continue
        above = lines[index - 1].replace("\f", "").strip() if index else ""
        # A heading stands after a blank line (or a page's header); a line of a paragraph
        # that starts at the margin with a number does not.
        after_break = not above or bool(_TEXT_PAGE_LINE.search(above))
        heading = _TEXT_HEADING.match(line) if after_break else None
        if heading and not _TOC_LEADER.search(line):
            letter, top, rest, title = heading.groups()
            parts: tuple[str, ...] = (letter or top, *[p for p in (rest or "").split(".") if p])
            if _successor(previous, parts):
                previous = parts
                appendix = appendix or not parts[0].isdigit()
                found.append((index + 1, parts, title, appendix))
                continue
        if previous is None:
            continue
        below = lines[index + 1].strip().replace("\f", "") if index + 1 < len(lines) else ""
        if not above and not below and len(line) <= 60 and line[-1] not in ".:,;":
            found.append((index + 1, None, line.strip(), appendix))
    last_line = len(lines)
    sections: list[Section] = []
    seen: dict[tuple[str, ...], int] = {}
    parents: dict[tuple[str, ...], int] = {}
    for position, (start, given, heading_text, back) in enumerate(found):
        end = found[position + 1][0] - 1 if position + 1 < len(found) else last_line
        parent = parents.get(given[:-1]) if given and len(given) > 1 else None
        path = (*(sections[parent].path if parent is not None else ()), heading_text)
        occurrence = seen.get(_folded(path), 0)
        seen[_folded(path)] = occurrence + 1
        number = ".".join(given) if given else None
        sections.append(Section(number, path, occurrence, back, start, end, parent))
        if given:
            parents[given] = len(sections) - 1
    # A parent's span runs to its last descendant's end.
    for index in range(len(sections) - 1, -1, -1):
        child = sections[index]
        if child.parent is not None:
            holder = sections[child.parent]
            if holder.end < child.end:
                sections[child.parent] = Section(
                    holder.number, holder.path, holder.occurrence, holder.appendix,
                    holder.start, child.end, holder.parent,
                )  # fmt: skip
    return SectionTree.of(sections)


def _letters(index: int) -> str:
    """Appendix letters as xml2rfc writes them: A … Z, then AA, AB …"""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def parse_sections(
    text: str, filename: str = "draft.md", *, published: bool = False
) -> SectionTree:
    """The section tree of one document text, numbered as xml2rfc numbers it.

    ``filename`` picks the scanner: ``.xml`` reads ``<section>`` nesting, anything else is
    kramdown-rfc markdown (``#`` headings; ``--- back`` starts the appendices, lettered A, B …;
    ``{:numbered="false"}`` sections, and everything under them, take no number).

    ``published``: the text is an RFC's as the RFC Editor published it, whose back matter
    after the appendices (Acknowledgments, Contributors, Authors' Addresses, Index) is never
    lettered, however the source left it (RFC 7322, the RFC Style Guide)."""
    raw: list[tuple[int, int | None, int, str, str, bool]] = []  # start, end, depth, …
    open_fence = False
    if filename.lower().endswith(".txt"):
        return _text_tree(text)
    if filename.lower().endswith(".xml"):
        blank = frozenset(i for i, line in enumerate(text.split("\n"), 1) if not line.strip())
        tree = _number(
            published,
            [
                (s, e, d, t or "(untitled)", r, n)
                for s, e, d, t, r, n in _xml_sections(expand_entities(text))
            ],
        )
        return SectionTree(tree.sections, tree._starts, False, blank)
    headings, markers, open_fence = _markdown_headings(text)
    last_line = text.count("\n") + (0 if text.endswith("\n") else 1)
    events = sorted([(h.line, h) for h in headings] + [(m, None) for m in markers],
                    key=lambda event: event[0])  # fmt: skip
    open_sections: list[tuple[int, int]] = []  # (heading level, index into raw)
    for line, heading in events:
        level = 0 if heading is None else heading.level
        while open_sections and open_sections[-1][0] >= level:
            index = open_sections.pop()[1]
            raw[index] = (*raw[index][:1], line - 1, *raw[index][2:])
        if heading is not None:
            raw.append((line, None, len(open_sections), heading.title, heading.region,
                        heading.numbered))  # fmt: skip
            open_sections.append((level, len(raw) - 1))
    for _, index in open_sections:
        raw[index] = (*raw[index][:1], last_line, *raw[index][2:])
    tree = _number(published, raw)
    return SectionTree(tree.sections, tree._starts, open_fence)


BACK_MATTER = frozenset(
    {"acknowledgments", "acknowledgements", "contributors", "authors' addresses",
     "author's address", "index"}
)  # fmt: skip
"""Headings (case folded) of the RFC Editor's unnumbered sections after the appendices."""


def _number(published: bool, raw: list[tuple[int, int | None, int, str, str, bool]]) -> SectionTree:
    """Number sections given in document order as (start, end, depth, title, region,
    numbered); in a published RFC, back matter (:data:`BACK_MATTER`) takes no letter."""
    sections: list[Section] = []
    parents: list[int] = []  # index of the open section at each depth
    counters: dict[tuple[int | None, str], int] = {}
    seen: dict[tuple[str, ...], int] = {}
    for start, end, depth, title, region, numbered in raw:
        if published and region == "back" and depth == 0:
            numbered = numbered and " ".join(title.casefold().split()) not in BACK_MATTER
        depth = min(depth, len(parents))
        del parents[depth:]
        parent = parents[-1] if parents else None
        parent_section = sections[parent] if parent is not None else None
        number: str | None = None
        if numbered and (parent_section is None or parent_section.number is not None):
            key = (parent, region)
            counters[key] = counters.get(key, 0) + 1
            count = counters[key]
            if parent_section is not None:
                number = f"{parent_section.number}.{count}"
            else:
                number = _letters(count - 1) if region == "back" else str(count)
        path = (*(parent_section.path if parent_section else ()), title)
        occurrence = seen.get(_folded(path), 0)  # counted without case, as it is matched
        seen[_folded(path)] = occurrence + 1
        sections.append(
            Section(number, path, occurrence, region == "back", start, int(end or start), parent)
        )
        parents.append(len(sections) - 1)
    return SectionTree.of(sections)


def match_section(
    number: str | None, path: tuple[str, ...], occurrence: int, appendix: bool, tree: SectionTree
) -> Section | None:
    """The section of ``tree`` that a section of another text (given by its number, heading
    path, occurrence of that path and appendix flag) is: the same path and occurrence; else
    the same path when it is unique in ``tree``; else the same number and title; else the same
    title when it is unique among the sections of ``tree`` on the same side of ``--- back``;
    else ``None``."""
    if not path:
        return None
    wanted = _folded(path)
    same_path = [s for s in tree.sections if _folded(s.path) == wanted]
    for section in same_path:
        if section.occurrence == occurrence:
            return section
    if len(same_path) == 1:
        return same_path[0]
    if number is not None:
        numbered = tree.numbered(number)
        if numbered is not None and _folded(numbered.path)[-1] == wanted[-1]:
            return numbered
    same_title = [
        s for s in tree.sections if _folded(s.path)[-1] == wanted[-1] and s.appendix == appendix
    ]
    if len(same_title) == 1:
        return same_title[0]
    return None


def _folded(path: tuple[str, ...]) -> tuple[str, ...]:
    """A heading path compared without case, runs of spaces or a closing colon or full stop
    ("an Older Server" is "an older server", "Since -01:" is "Since -01"): editors recase and
    repunctuate headings between revisions."""
    return tuple(" ".join(name.casefold().split()).rstrip(":.") for name in path)


# --------------------------------------------------------------------------- attribution


@dataclass(frozen=True)
class Touch:
    """One row of a commit's attribution: a file it changed, that file's draft, the draft's
    revision the commit landed in, and one section the change sits in. ``side`` says which
    text the section was read from: ``"new"`` (the commit's, for added lines), ``"old"`` (the
    parent's, for removed lines) or ``"none"`` (no lines: a pure rename or binary change).
    ``path`` is empty for a change outside every section."""

    file: str
    draft: str | None
    revision: str | None
    side: str
    number: str | None
    path: tuple[str, ...]
    occurrence: int = 0
    appendix: bool = False


@dataclass(frozen=True)
class CommitRecord:
    """A non-merge commit that changed at least one document file, and its rows."""

    sha: str
    parents: tuple[str, ...]
    author_email: str
    author_date: str
    touches: tuple[Touch, ...]
    commit_date: str = ""
    """When it was committed (ISO 8601): what "before publication" is judged by."""
    open_fence: bool = False
    """A text its rows were read from leaves a fence open: which lines are code there is a
    guess (this checker takes the rest of the file as code; kramdown, the opener as text)."""

    @property
    def drafts(self) -> frozenset[str | None]:
        """The drafts whose files it changed."""
        return frozenset(t.draft for t in self.touches)


@dataclass
class Attribution:
    """Everything the checker found in one repository. Commits are keyed by full commit id
    (the repository's own: a bundle's ids, not GitHub's). ``revisions``: each draft's tags in
    order of NN; ``renames``: ``(commit, old path, new path)``; ``revision_files`` and
    ``revision_trees``: the draft's file at each tag and its section tree;
    ``empty_revisions``: tags no commit landed in (their history is all in earlier tags)."""

    branch: str
    commits: dict[str, CommitRecord]
    revisions: dict[str, tuple[str, ...]]
    renames: tuple[tuple[str, str, str], ...]
    revision_files: dict[str, str]
    revision_trees: dict[str, SectionTree]
    empty_revisions: frozenset[str] = frozenset()
    text_trees: dict[tuple[str, str], SectionTree] = field(default_factory=dict)
    """The section tree of each RFC text asked for, by ``(ref, path)``."""
    reachable: dict[str, frozenset[str]] = field(default_factory=dict)
    """The commits in each such ref's history."""

    def file_commits(self, path: str) -> frozenset[str]:
        """Commits that changed the file at ``path`` under that name."""
        return frozenset(
            sha
            for sha, record in self.commits.items()
            if any(t.file == path for t in record.touches)
        )

    def names_of(self, path: str) -> tuple[str, ...]:
        """``path`` and every name it had before, following renames backwards."""
        names = [path]
        earlier = {new: old for _, old, new in self.renames}
        while names[-1] in earlier and earlier[names[-1]] not in names:
            names.append(earlier[names[-1]])
        return tuple(names)

    def document_commits(self, path: str) -> frozenset[str]:
        """Commits that changed the document now at ``path``, under this or any earlier name:
        what ``git log --follow -- path`` means to list."""
        return frozenset().union(*(self.file_commits(name) for name in self.names_of(path)))

    def commits_per_draft(self) -> dict[str | None, int]:
        """Distinct commits per draft (``None``: document files of no draft)."""
        counts: dict[str | None, set[str]] = {}
        for sha, record in self.commits.items():
            for draft in record.drafts:
                counts.setdefault(draft, set()).add(sha)
        return {draft: len(shas) for draft, shas in counts.items()}

    def commits_per_author(self, draft: str | None = None) -> dict[str, int]:
        """Distinct commits per author email, over every draft or the one named."""
        counts: dict[str, int] = {}
        for record in self.commits.values():
            if draft is None or draft in record.drafts:
                counts[record.author_email] = counts.get(record.author_email, 0) + 1
        return counts

    def landed(self, sha: str, draft: str) -> str | None:
        """The revision of ``draft`` that commit ``sha`` landed in, from its rows."""
        record = self.commits.get(sha)
        revisions = {t.revision for t in record.touches if t.draft == draft} if record else set()
        return next(iter(revisions), None)

    def _draft_of(self, revision: str) -> str:
        found = _DRAFT_TAG.match(revision)
        if found is None or found.group(1) not in self.revisions:
            raise KeyError(f"{revision} is not a revision tag of a draft found here")
        return found.group(1)

    def commits_per_section(
        self, revision: str, *, include_subsections: bool = False
    ) -> dict[str, frozenset[str]]:
        """Per section of ``revision`` (a ``draft-NAME-NN`` tag; keys are section labels in
        that revision's text), the commits that landed in it and changed that section. Rows
        whose section is not found there are under ``"? " + label in the commit's text``.
        With ``include_subsections``, a commit also counts for every enclosing section."""
        draft = self._draft_of(revision)
        tree = self.revision_trees[revision]
        found: dict[str, set[str]] = {}
        for sha, touch in self._rows(draft):
            if touch.revision != revision or not touch.path:
                continue
            section = match_section(
                touch.number, touch.path, touch.occurrence, touch.appendix, tree
            )
            if section is None:
                found.setdefault("? " + _row_label(touch), set()).add(sha)
            for key in _labels(section, tree, include_subsections):
                found.setdefault(key, set()).add(sha)
        return {key: frozenset(shas) for key, shas in found.items()}

    def carried_section_commits(
        self, revision: str, *, include_subsections: bool = False
    ) -> dict[str, frozenset[str]]:
        """Per section of ``revision``, the commits of every revision up to and including it
        that changed that section: each row is placed in the revision it landed in, then
        carried revision by revision to ``revision`` with :func:`match_section`. Rows lost on
        the way (a section renamed and renumbered at once, or removed) are dropped. Revisions
        nothing landed in (a tag older than an earlier one's) are stepped over. With
        ``include_subsections``, a commit also counts for every enclosing section."""
        draft = self._draft_of(revision)
        chain = tuple(
            t for t in self.revisions[draft] if t == revision or t not in self.empty_revisions
        )
        final = chain.index(revision)
        carry: dict[str, dict[int, Section | None]] = {}
        for index, tag in enumerate(chain[:final]):
            target = self.revision_trees.get(chain[index + 1])
            source = self.revision_trees.get(tag)
            carry[tag] = {
                position: (
                    match_section(s.number, s.path, s.occurrence, s.appendix, target)
                    if target
                    else None
                )
                for position, s in enumerate(source.sections if source else ())
            }
        found: dict[str, set[str]] = {}
        for sha, touch in self._rows(draft):
            if touch.revision is None or not touch.path or touch.revision not in chain[: final + 1]:
                continue
            step = chain.index(touch.revision)
            tree = self.revision_trees.get(touch.revision)
            section = (
                match_section(touch.number, touch.path, touch.occurrence, touch.appendix, tree)
                if tree
                else None
            )
            while section is not None and step < final:
                tree = self.revision_trees[chain[step]]
                section = carry[chain[step]][tree.sections.index(section)]
                step += 1
            for key in _labels(section, self.revision_trees[revision], include_subsections):
                found.setdefault(key, set()).add(sha)
        return {key: frozenset(shas) for key, shas in found.items()}

    def text_section_commits(
        self, ref: str, path: str, draft: str, until: str
    ) -> dict[str, frozenset[str]]:
        """Per section of the RFC text at ``ref:path`` (asked for with ``texts=``), the commits
        that changed ``draft``'s document after its last revision (no tag of it holds them),
        are in ``ref``'s history and were committed before ``until`` (an ISO date, UTC: the
        first day after the publication month), placed in that text's sections with
        :func:`match_section`."""
        tree = self.text_trees[(ref, path)]
        history = self.reachable[ref]
        found: dict[str, set[str]] = {}
        for sha, touch in self._rows(draft):
            record = self.commits[sha]
            if touch.revision is not None or not touch.path or sha not in history:
                continue
            committed = datetime.fromisoformat(record.commit_date).astimezone(UTC)
            if committed >= datetime.fromisoformat(until).replace(tzinfo=UTC):
                continue
            section = match_section(
                touch.number, touch.path, touch.occurrence, touch.appendix, tree
            )
            for key in _labels(section, tree, False):
                found.setdefault(key, set()).add(sha)
        return {key: frozenset(shas) for key, shas in found.items()}

    def _rows(self, draft: str) -> Iterator[tuple[str, Touch]]:
        for sha, record in self.commits.items():
            for touch in record.touches:
                if touch.draft == draft:
                    yield sha, touch


def _labels(section: Section | None, tree: SectionTree, enclosing: bool) -> list[str]:
    """The label of ``section`` and, with ``enclosing``, those of the sections around it."""
    labels: list[str] = []
    while section is not None:
        labels.append(section.label)
        if not enclosing or section.parent is None:
            break
        section = tree.sections[section.parent]
    return labels


def _row_label(touch: Touch) -> str:
    return (touch.number or "(unnumbered)") + " " + " > ".join(touch.path)


class _Git:
    """``git`` on one git directory, with a ``cat-file --batch`` process for blobs."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir
        self._batch: subprocess.Popen[bytes] | None = None

    def run(self, *args: str, stdin: str | None = None) -> str:
        """Output of ``git args`` (raises on failure)."""
        done = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args],
            input=stdin.encode() if stdin is not None else None,
            capture_output=True,
            check=True,
        )
        return done.stdout.decode("utf-8", errors="replace")

    def blob(self, sha: str) -> str:
        """The text of blob ``sha``."""
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "--git-dir", str(self.git_dir), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(sha.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            raise KeyError(f"no blob {sha}")
        data = self._batch.stdout.read(int(header[2]) + 1)[:-1]
        return data.decode("utf-8", errors="replace")

    def close(self) -> None:
        """End the ``cat-file`` process."""
        if self._batch is not None:
            assert self._batch.stdin is not None
            self._batch.stdin.close()
            self._batch.wait()
            self._batch = None


@dataclass
class _Change:
    status: str
    old_path: str | None
    new_path: str | None
    old_blob: str | None
    new_blob: str | None
    hunks: list[tuple[int, int, int, int]] = field(default_factory=list)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NULL = "0" * 40


def _walk(
    git: _Git, branch: str, suffixes: tuple[str, ...] = DOCUMENT_SUFFIXES
) -> Iterator[tuple[list[str], list[_Change]]]:
    """``([sha, parents, email, date], changes)`` for every non-merge commit of ``branch``
    that changed a file ending in one of ``suffixes`` (``.md``, ``.xml``), with its
    ``--unified=0`` hunks."""
    commits = git.run("rev-list", "--no-merges", branch)
    output = git.run(
        "diff-tree", "--stdin", "--root", "-r", "-M", "--raw", "-p", "--unified=0",
        "--full-index", "--no-color", "--no-ext-diff", "--no-textconv",
        "--src-prefix=a/", "--dst-prefix=b/", "--format=%x1e%H%x09%P%x09%ae%x09%aI%x09%cI",
        "--", *(f"*{suffix}" for suffix in suffixes),
        stdin=commits,
    )  # fmt: skip
    header: list[str] | None = None
    changes: list[_Change] = []
    patch = -1
    for line in output.split("\n"):
        if line.startswith("\x1e"):
            if header is not None and changes:
                yield header, changes
            header, changes, patch = line[1:].split("\t"), [], -1
        elif line.startswith(":"):
            meta, *paths = line.split("\t")
            _, _, old_blob, new_blob, status = meta.split()
            old_path = paths[0] if status[0] != "A" else None
            new_path = paths[-1] if status[0] != "D" else None
            changes.append(_Change(
                status[0], old_path, new_path,
                None if old_blob == _NULL else old_blob, None if new_blob == _NULL else new_blob,
            ))  # fmt: skip
        elif line.startswith("diff --git "):
            patch += 1
        elif line.startswith("@@ ") and 0 <= patch < len(changes):
            hunk = _HUNK.match(line)
            if hunk:
                a, b, c, d = hunk.groups()
                changes[patch].hunks.append(
                    (int(a), 1 if b is None else int(b), int(c), 1 if d is None else int(d))
                )
    if header is not None and changes:
        yield header, changes


class _Resolver:
    """Which draft a document file belongs to (see the module's docstring)."""

    def __init__(
        self,
        tagged: Iterable[str],
        renames: Iterable[tuple[str, str, str]],
        paths_at_tags: frozenset[str] | None = None,
    ) -> None:
        self.tagged = set(tagged)
        self.paths_at_tags = paths_at_tags
        self.earlier: dict[str, set[str]] = {}
        self.later: dict[str, set[str]] = {}
        for _, old, new in renames:
            self.earlier.setdefault(new, set()).add(old)
            self.later.setdefault(old, set()).add(new)
        self._cache: dict[str, str | None] = {}

    def _by_name(self, path: str, tagged_only: bool) -> str | None:
        found = _DRAFT_FILE.match(PurePosixPath(path).name)
        if self._snapshot(path):
            return None
        if found and (not tagged_only or found.group(1) in self.tagged):
            return found.group(1)
        return None

    def _nearest(self, path: str, links: dict[str, set[str]]) -> str | None:
        frontier, seen = [path], {path}
        while frontier:
            following: list[str] = []
            for name in sorted(frontier):
                for linked in sorted(links.get(name, ())):
                    if linked in seen:
                        continue
                    seen.add(linked)
                    draft = self._by_name(linked, tagged_only=True)
                    if draft:
                        return draft
                    following.append(linked)
            frontier = following
        return None

    def _snapshot(self, path: str) -> bool:
        found = _DRAFT_FILE.match(PurePosixPath(path).name)
        return bool(
            found
            and found.group(2)
            and self.paths_at_tags is not None
            and path not in self.paths_at_tags
        )

    def is_document(self, path: str) -> bool:
        """Whether ``path`` is a document file."""
        name = PurePosixPath(path).name
        if self._snapshot(path):
            return False
        if _DRAFT_FILE.match(name) or _RFC_FILE.match(name):
            return True
        return bool(self.draft(path)) and name.endswith(DOCUMENT_SUFFIXES)

    def draft(self, path: str) -> str | None:
        """The draft of the document file ``path``."""
        if path not in self._cache:
            self._cache[path] = (
                self._by_name(path, tagged_only=True)
                or self._nearest(path, self.earlier)
                or self._nearest(path, self.later)
                or self._by_name(path, tagged_only=False)
            )
        return self._cache[path]


def _rows_for(
    change: _Change, trees: _TreeCache, open_fences: set[str]
) -> list[tuple[str, str, Section | None]]:
    """``(side, file, section)`` for every section a change's hunks sit in; the blobs read
    whose fences do not pair up are added to ``open_fences``."""
    rows: list[tuple[str, str, Section | None]] = []
    seen: set[tuple[str, int | None, tuple[str, ...]]] = set()

    def place(side: str, path: str, blob: str, first: int, count: int) -> None:
        tree = trees.get(blob, path)
        if tree.open_fence:
            open_fences.add(blob)
        for line in range(first, first + count):
            if line in tree.blank_lines:
                continue
            section = tree.at(line)
            placed = [section]
            # A section xml2rfc makes up (References over two lists) has no line of its own
            # but the line its first subsection opens on: a change there is in both.
            while section is not None and section.parent is not None:
                section = tree.sections[section.parent]
                if section.start != line:
                    break
                placed.append(section)
            for found in placed:
                key = (side, None, ()) if found is None else (side, found.start, found.path)
                if key not in seen:
                    seen.add(key)
                    rows.append((side, path, found))

    for a, b, c, d in change.hunks:
        if d and change.new_blob and change.new_path:
            place("new", change.new_path, change.new_blob, c, d)
        if b and change.old_blob and change.old_path:
            place("old", change.old_path, change.old_blob, a, b)
    if not rows:
        rows.append(("none", change.new_path or change.old_path or "", None))
    return rows


class _TreeCache:
    """Parsed section trees of blobs, the most recently used few kept."""

    def __init__(self, git: _Git, size: int = 64) -> None:
        self.git = git
        self.size = size
        self._trees: OrderedDict[str, SectionTree] = OrderedDict()

    def get(self, blob: str, path: str) -> SectionTree:
        """The section tree of blob ``blob`` (a file named ``path``)."""
        key = blob + ":" + PurePosixPath(path).suffix.lower()  # a .txt is read as text
        tree = self._trees.get(key)
        if tree is None:
            tree = parse_sections(self.git.blob(blob), path)
            self._trees[key] = tree
            if len(self._trees) > self.size:
                self._trees.popitem(last=False)
        else:
            self._trees.move_to_end(key)
        return tree


def _landings(git: _Git, tags: tuple[str, ...]) -> dict[str, str]:
    """Commit → the first of ``tags`` (in the order given) whose history contains it."""
    landed: dict[str, str] = {}
    for index, tag in enumerate(tags):
        earlier = [f"{t}^{{commit}}" for t in tags[:index]]
        listed = git.run("rev-list", f"{tag}^{{commit}}", "--not", *earlier, "--")
        for sha in listed.split():
            landed.setdefault(sha, tag)
    return landed


def attribute(
    repository: str | Path,
    *,
    branch: str | None = None,
    texts: Iterable[tuple[str, str]] = (),
) -> Attribution:
    """Attribute every commit of ``repository`` (a git bundle, a working clone or a bare
    git directory) to drafts, revisions and sections; see the module's docstring for the
    rules. A bundle is cloned (``git clone --mirror``) into a temporary folder first.
    ``texts``: ``(ref, path)`` of RFC texts to read as well (see
    :meth:`Attribution.text_section_commits`)."""
    source = Path(repository)
    if source.is_file():
        with tempfile.TemporaryDirectory(prefix="independent-attribution-") as folder:
            mirror = Path(folder) / "repository.git"
            subprocess.run(
                ["git", "clone", "--quiet", "--mirror", str(source), str(mirror)],
                check=True, capture_output=True,
            )  # fmt: skip
            return _attribute(mirror, branch, tuple(texts))
    found = subprocess.run(
        ["git", "-C", str(source), "rev-parse", "--absolute-git-dir"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return _attribute(Path(found.stdout.strip()), branch, tuple(texts))


def _attribute(
    git_dir: Path, branch: str | None, texts: tuple[tuple[str, str], ...] = ()
) -> Attribution:
    git = _Git(git_dir)
    try:
        if branch is None:
            branch = git.run("symbolic-ref", "--short", "HEAD").strip()
        revisions: dict[str, list[tuple[int, str]]] = {}
        for tag in git.run("tag", "--list").split():
            found = _DRAFT_TAG.match(tag)
            if found:
                revisions.setdefault(found.group(1), []).append((int(found.group(2)), tag))
        chains = {draft: tuple(t for _, t in sorted(tags)) for draft, tags in revisions.items()}
        walked = list(_walk(git, branch))
        renames = tuple(
            (header[0], change.old_path, change.new_path)
            for header, changes in walked
            for change in changes
            if change.status == "R" and change.old_path and change.new_path
        )
        paths_at_tags = frozenset(
            path
            for tags in chains.values()
            for tag in tags
            for path in git.run("ls-tree", "-r", "--name-only", "-z", f"{tag}^{{commit}}").split(
                "\0"
            )
            if path
        )
        resolver = _Resolver(chains, renames, paths_at_tags)  # type: ignore[arg-type]
        landings = {draft: _landings(git, tags) for draft, tags in chains.items()}
        trees = _TreeCache(git)
        commits: dict[str, CommitRecord] = {}
        for header, changes in walked:
            sha, parents, email, date, committed = [*header, "", "", "", ""][:5]
            touches: list[Touch] = []
            open_fences: set[str] = set()
            for change in changes:
                path = change.new_path or change.old_path or ""
                if not resolver.is_document(path) and not (
                    change.old_path and resolver.is_document(change.old_path)
                ):
                    continue
                for side, file, section in _rows_for(change, trees, open_fences):
                    draft = resolver.draft(file)
                    revision = landings.get(draft, {}).get(sha) if draft else None
                    touches.append(Touch(
                        file, draft, revision, side,
                        section.number if section else None,
                        section.path if section else (),
                        section.occurrence if section else 0,
                        section.appendix if section else False,
                    ))  # fmt: skip
            if touches:
                commits[sha] = CommitRecord(
                    sha, tuple(parents.split()), email, date, _dedupe(touches), committed,
                    bool(open_fences),
                )  # fmt: skip
        revision_files: dict[str, str] = {}
        revision_trees: dict[str, SectionTree] = {}
        for draft, tags in chains.items():
            for tag in tags:
                files = git.run("ls-tree", "-r", "--name-only", "-z", f"{tag}^{{commit}}")
                mine = [
                    f
                    for f in files.split("\0")
                    if f.endswith(DOCUMENT_SUFFIXES) and resolver.draft(f) == draft
                ]
                if not mine:
                    continue
                mine.sort(key=lambda f: (PurePosixPath(f).stem != draft, f.endswith(".xml"), f))
                revision_files[tag] = mine[0]
                text = git.run("show", f"{tag}^{{commit}}:{mine[0]}")
                revision_trees[tag] = parse_sections(text, mine[0])
        empty = frozenset(
            tag
            for draft, tags in chains.items()
            for tag in tags
            if tag not in set(landings[draft].values())
        )
        text_trees = {
            (ref, path): parse_sections(git.run("show", f"{ref}:{path}"), path, published=True)
            for ref, path in texts
        }
        reachable = {ref: frozenset(git.run("rev-list", ref, "--").split()) for ref, _ in texts}
        return Attribution(
            branch, commits, chains, renames, revision_files, revision_trees, empty,
            text_trees, reachable,
        )  # fmt: skip
    finally:
        git.close()


def _dedupe(touches: list[Touch]) -> tuple[Touch, ...]:
    """Drop an old-side row naming the same section (number and path) as a new-side row of
    the same file, and rows without a section where the file has rows with one."""
    with_section = {t.file for t in touches if t.path}
    new_sides = {(t.file, t.number, t.path, t.occurrence) for t in touches if t.side == "new"}
    kept: list[Touch] = []
    for touch in touches:
        if (
            touch.side == "old"
            and (touch.file, touch.number, touch.path, touch.occurrence) in new_sides
        ):
            continue
        if not touch.path and touch.file in with_section:
            continue
        if touch not in kept:
            kept.append(touch)
    return tuple(kept)
