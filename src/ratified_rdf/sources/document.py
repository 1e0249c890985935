"""What every document reader produces: a parsed document as a flat, ordered list of sections.

Readers for kramdown-rfc markdown, RFC plain text and xml2rfc v3 XML all return a
:class:`ParsedDocument`, so the rest of the pipeline never knows which format a revision was in.
Numbering follows xml2rfc: ``1``, ``1.1`` … in the middle; ``A``, ``A.1`` … in the back matter;
sections marked unnumbered (and everything below them) carry no number.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict

from ratified_rdf._errors import SourceError


class ParseError(SourceError, ValueError):
    """A document could not be read as the format it claims to be."""


class Author(BaseModel):
    """A document author as the document itself lists them."""

    model_config = ConfigDict(frozen=True)

    name: str
    email: str | None = None
    organization: str | None = None


class ParsedSection(BaseModel):
    """One section of one document, in document order."""

    model_config = ConfigDict(frozen=True)

    position: int
    """0-based position in document order."""
    number: str | None
    """xml2rfc section number (``4.2.9``, ``A.1``) or ``None`` for an unnumbered section."""
    heading: str
    anchor: str | None = None
    level: int
    appendix: bool = False
    parent: int | None = None
    """Position of the enclosing section, if any."""
    body: str = ""
    """The section's own text, without the text of its subsections."""


class ParsedDocument(BaseModel):
    """A document reduced to what the brain keeps of it: its title, authors and sections."""

    model_config = ConfigDict(frozen=True)

    title: str | None = None
    docname: str | None = None
    authors: tuple[Author, ...] = ()
    sections: tuple[ParsedSection, ...] = ()
    notes: tuple[str, ...] = ()
    """What the reader could not resolve and left out, as sentences (an external entity it
    did not fetch, say): the document is read, but a reader of it should know."""
    gap: str | None = None
    """Why the document could not be read at all, as a sentence; it then has no sections.
    A revision that is a gap is kept as one instead of failing the build."""


class OutlineHeading(NamedTuple):
    """A section heading of a text and the line it stands on: what change attribution places
    a diff's lines by (every format's reader gives the same kind of outline)."""

    line: int
    """0-based index of the heading's line in the text."""
    level: int
    """The heading's level as written (number of ``#``, nesting of ``<section>``)."""
    heading: str
    appendix: bool
    """Whether it is in the back matter."""


class Outline(NamedTuple):
    """A text's section headings with their lines: what change attribution places a commit's
    diff lines in (each format's reader gives one, :mod:`ratified_rdf.sources.formats`)."""

    headings: list[OutlineHeading]
    """In order of their lines."""
    breaks: Sequence[int] = ()
    """0-based lines where a section ends without another starting (a kramdown ``--- back``
    marker, the line after a ``</section>`` that no section follows)."""
    fixed: bool = True
    """Whether only lines holding the format's outline marks can change this outline (then a
    commit that changes no such line leaves it as it was, moved); False when other lines can
    (a setext heading's title line, any line of plain text)."""


@dataclass
class RawHeading:
    """A heading as a reader found it, before numbering."""

    level: int
    heading: str
    anchor: str | None
    appendix: bool
    numbered: bool
    body: str


def assemble_sections(headings: Iterable[RawHeading]) -> tuple[ParsedSection, ...]:
    """Number headings the way xml2rfc does and link each to its parent.

    A heading deeper than one level below its parent (``#`` followed by ``###``) is treated as
    one level below, as xml2rfc nests it. Appendix top-level sections get letters. The back
    matter never nests in the middle's sections (``<back>`` is an element of its own): the
    first back-matter heading starts from the top, whatever its level.
    """
    sections: list[ParsedSection] = []
    # stack of (level, position, number-parts or None when unnumbered)
    stack: list[tuple[int, int, list[str] | None]] = []
    counters: dict[tuple[str, ...], int] = {}
    appendix_letters = 0
    middle_top = 0
    in_back = False
    for position, raw in enumerate(headings):
        if raw.appendix and not in_back:
            stack.clear()
        in_back = in_back or raw.appendix
        while stack and stack[-1][0] >= raw.level:
            stack.pop()
        parent = stack[-1] if stack else None
        parent_parts = parent[2] if parent else []
        number: str | None
        parts: list[str] | None
        if not raw.numbered or parent_parts is None:
            parts = None
            number = None
        elif parent is None:
            if raw.appendix:
                appendix_letters += 1
                parts = [_letter(appendix_letters)]
            else:
                middle_top += 1
                parts = [str(middle_top)]
            number = ".".join(parts)
        else:
            key = tuple(parent_parts)
            counters[key] = counters.get(key, 0) + 1
            parts = [*parent_parts, str(counters[key])]
            number = ".".join(parts)
        sections.append(
            ParsedSection(
                position=position,
                number=number,
                heading=raw.heading,
                anchor=raw.anchor,
                level=len(stack) + 1,
                appendix=raw.appendix,
                parent=parent[1] if parent else None,
                body=raw.body.strip("\n"),
            )
        )
        stack.append((raw.level, position, parts))
    return tuple(sections)


def _letter(n: int) -> str:
    """1 → A, 26 → Z, 27 → AA (xml2rfc never needs more than a handful)."""
    out = ""
    while n:
        n, rem = divmod(n - 1, 26)
        out = chr(ord("A") + rem) + out
    return out


SectionKey = tuple[bool, tuple[str, ...], int]
"""A section's identity within one text, independent of its number: whether it is in the back
matter, its heading path from the top (normalised headings), and which of the sections with
that path it is (0 for the first). Two sections with one heading have different keys."""


class _Headed(Protocol):
    """A heading as :func:`outline_keys` reads it (a section, or an outline's heading)."""

    @property
    def level(self) -> int: ...
    @property
    def heading(self) -> str: ...
    @property
    def appendix(self) -> bool: ...


def outline_keys(headings: Sequence[_Headed]) -> list[SectionKey]:
    """The :data:`SectionKey` of each heading of a text, in order (parents found by level, as
    :func:`assemble_sections` nests them)."""
    keys: list[SectionKey] = []
    stack: list[tuple[int, str]] = []
    seen: dict[tuple[bool, tuple[str, ...]], int] = {}
    in_back = False
    for heading in headings:
        if heading.appendix and not in_back:  # as assemble_sections starts the back matter
            stack.clear()
        in_back = in_back or heading.appendix
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        stack.append((heading.level, normalise_heading(heading.heading)))
        path = (heading.appendix, tuple(name for _, name in stack))
        keys.append((*path, seen.get(path, 0)))
        seen[path] = seen.get(path, 0) + 1
    return keys


def section_keys(sections: Sequence[ParsedSection]) -> dict[SectionKey, int]:
    """Each section's :data:`SectionKey` mapped to its position, for a parsed document."""
    by_position = {s.position: s for s in sections}
    keys: dict[SectionKey, int] = {}
    seen: dict[tuple[bool, tuple[str, ...]], int] = {}
    for section in sections:
        names: list[str] = []
        current: ParsedSection | None = section
        while current is not None:
            names.append(normalise_heading(current.heading))
            current = by_position.get(current.parent) if current.parent is not None else None
        path = (section.appendix, tuple(reversed(names)))
        keys[(*path, seen.get(path, 0))] = section.position
        seen[path] = seen.get(path, 0) + 1
    return keys


_WS = re.compile(r"\s+")


@functools.lru_cache(maxsize=1 << 16)
def normalise_heading(heading: str) -> str:
    """Heading text reduced for matching across revisions: case, spacing, punctuation."""
    text = heading.lower().replace("&", " and ")
    text = re.sub(r"[\"'`*_]", "", text)
    text = re.sub(r"[^a-z0-9()+.\- ]", " ", text)
    return _WS.sub(" ", text).strip(" .")
