"""Reader for RFCs and Internet-Drafts in the plain-text form the RFC Editor publishes.

Both layouts xml2rfc produces are understood: the unpaginated v3 text (RFC 8650 onwards, e.g.
RFC 9846) and the older paginated v2 text, whose form feeds, running page headers
(``RFC 8446   TLS   August 2018``) and footers (``Rescorla   Standards Track   [Page 12]``) are
removed before anything else looks at the lines.

Plain text carries no markup, so headings are recognised by shape: a section number, a dot,
two spaces or more (a title written with a no-break space before it is rendered with three)
and the title, starting at column 0, after the Table of Contents.  ASCII art can put
arbitrary text at column 0, so the shape is strict and the numbers the text prints are checked
against the numbering :func:`assemble_sections` computes; a disagreement is a parse error rather
than a silently wrong section tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ratified_rdf.sources.document import (
    Author,
    Outline,
    OutlineHeading,
    ParsedDocument,
    ParseError,
    RawHeading,
    assemble_sections,
)
from ratified_rdf.sources.kramdown import UNNUMBERED_BACK

__all__ = ["parse_rfc_text", "rfc_text_outline"]

_NUMBERED = re.compile(
    r"^(?P<appendix>Appendix )?(?P<number>(?:\d+|[A-Z]{1,2})(?:\.\d+)*)\."
    r"  +(?P<title>[A-Za-z0-9(\"'].*)$"
)
_FOOTER = re.compile(r"^\S.*\s\[Page \d+\]\s*$")
# Running header of a paginated document: three columns separated by wide gaps.
_RUNNING_HEADER = re.compile(r"^(?:RFC \d+|Internet-Draft)\s{2,}\S.*\s{2,}\S.*$")
_THREE_COLUMNS = re.compile(r"^\S.*?\S\s{2,}\S.*?\S\s{2,}\S")
_DOCNAME = re.compile(r"^draft-[a-z0-9-]+$")
_RFC_NUMBER = re.compile(r"^Request for Comments:\s*(\d+)")
# Right-hand header column entries that are names ("E. Rescorla", "J. Doe, Ed.", "A-B. Cde").
# The initials and the rest of the name overlap, so a long entry of initials ("A.A.A.…!")
# backtracks quadratically: entries longer than _AUTHOR_NAME_LIMIT are not names at all.
_AUTHOR_NAME = re.compile(
    r"^(?:[A-Z][A-Za-z]?\.(?:[ -]?[A-Z][A-Za-z]?\.)*)\s*[A-Z][\w'’.\- ]*?(?:, Ed\.)?$"
)
_DATE = re.compile(
    r"^(?:\d{1,2} )?(?:January|February|March|April|May|June|July|August|September|October"
    r"|November|December) (?:\d{1,2}, )?\d{4}$"
)
_AUTHOR_NAME_LIMIT = 100

_FRONT_TITLES = frozenset(
    {"abstract", "status of this memo", "copyright notice", "table of contents"}
)
# Unnumbered headings xml2rfc emits (or authors commonly add) at column 0 in the back matter.
_BACK_TITLES = UNNUMBERED_BACK | {"references", "normative references", "informative references"}

# xml2rfc indents body text by three spaces.
_BODY_INDENT = 3


@dataclass(frozen=True)
class _Line:
    """A line of the original text, remembered with its 1-based line number (in line feeds,
    as git counts) for messages and outlines."""

    lineno: int
    text: str


@dataclass
class _Heading:
    """A heading found in the text, with the number it printed (``None`` if unnumbered)."""

    index: int
    """Position in the cleaned lines."""
    lineno: int
    level: int
    title: str
    printed: str | None
    appendix: bool
    body_start: int


def parse_rfc_text(text: str) -> ParsedDocument:
    """Read an RFC or Internet-Draft in RFC Editor plain-text form.

    Returns the title, the authors named in the first-page header, the docname (``rfc9846`` or
    ``draft-…``) and every section after the Table of Contents.  Raises :class:`ParseError` when
    no section can be found or when the numbers printed in the text disagree with xml2rfc
    numbering of the headings found, since that means a heading was missed or misread.
    """
    lines = _strip_page_furniture(text)
    first = next((i for i, line in enumerate(lines) if line.text.strip()), None)
    if first is None:
        raise ParseError("The text is empty, so it cannot be read as an RFC.")
    header_end = _blank_after(lines, first)
    authors, docname = _read_header_block(lines[first:header_end])
    title, title_docname, title_end = _read_title(lines, header_end)
    docname = docname or title_docname

    start, toc_titles = _front_matter_end(lines, title_end)
    headings = _find_headings(lines, start, toc_titles)
    if not headings:
        raise ParseError("No section headings were found after the front matter of the text.")

    raw: list[RawHeading] = []
    for index, (heading, appendix) in enumerate(zip(headings, _in_back(headings), strict=True)):
        end = headings[index + 1].index if index + 1 < len(headings) else len(lines)
        raw.append(
            RawHeading(
                level=heading.level,
                heading=heading.title,
                anchor=None,
                appendix=appendix,
                numbered=heading.printed is not None,
                body=_body(lines[heading.body_start : end]),
            )
        )
    sections = assemble_sections(raw)
    for heading, section in zip(headings, sections, strict=True):
        if section.number != heading.printed:
            printed = heading.printed or "unnumbered"
            computed = section.number or "unnumbered"
            raise ParseError(
                f'The heading "{heading.title}" on line {heading.lineno} is printed as '
                f"{printed}, but xml2rfc numbering of the headings found gives {computed}; "
                "a heading was probably missed or misread."
            )
    return ParsedDocument(title=title, docname=docname, authors=authors, sections=sections)


def rfc_text_outline(text: str) -> Outline:
    """Every heading :func:`parse_rfc_text` finds, on its line of ``text`` (page furniture
    skipped, lines counted as written), in order. Plain text has no mark that ends a section
    without starting one, so there are no breaks; text with no heading has an empty outline.
    The printed numbers are not checked: the outline places lines, the full read judges."""
    lines = _strip_page_furniture(text)
    first = next((i for i, line in enumerate(lines) if line.text.strip()), None)
    if first is None:
        return Outline([], fixed=False)
    _title, _docname, title_end = _read_title(lines, _blank_after(lines, first))
    start, toc_titles = _front_matter_end(lines, title_end)
    headings = _find_headings(lines, start, toc_titles)
    found = [
        OutlineHeading(heading.lineno - 1, heading.level, heading.title, appendix)
        for heading, appendix in zip(headings, _in_back(headings), strict=True)
    ]
    return Outline(found, fixed=False)


def _in_back(headings: list[_Heading]) -> list[bool]:
    """Whether each heading is in the back matter: an appendix, or an unnumbered section after
    the references or appendices began (like the numbered="false" sections of <back> in the
    XML; they never get letters)."""
    flags: list[bool] = []
    in_back = False
    for heading in headings:
        if heading.appendix or (
            heading.printed is not None
            and heading.level == 1
            and "references" in heading.title.lower()
        ):
            in_back = True
        flags.append(heading.appendix or (heading.printed is None and in_back))
    return flags


def _strip_page_furniture(text: str) -> list[_Line]:
    """Remove form feeds, page footers and running headers, keeping paragraphs that span pages.

    A page break leaves padding blank lines on both sides; they are dropped, and a single blank
    line is put back unless the text reads as one paragraph running on across the break.
    """
    raw: list[_Line] = []
    lineno = 1
    # Form feeds (and the other breaks str.splitlines knows) split lines here, but a line's
    # number is git's, counted in line feeds: the outline places a diff's lines by it.
    for piece in text.splitlines(keepends=True):
        raw.append(_Line(lineno, piece.rstrip()))
        lineno += piece.endswith("\n")
    out: list[_Line] = []
    expect_header = False
    pending_break = False
    for line in raw:
        content = line.text.replace("\f", "")
        if "\f" in line.text:
            expect_header = True
            pending_break = True
            _trim_trailing_blanks(out)
            if not content.strip():
                continue
        if expect_header:
            if not content.strip():
                continue
            expect_header = False
            # The first line after a form feed is the running header when it has the columns
            # of one; the first page of a document has none.
            if _THREE_COLUMNS.match(content):
                continue
        if _FOOTER.match(content):
            _trim_trailing_blanks(out)
            pending_break = True
            # Without form feeds (text that lost them) the header follows the footer.
            expect_header = True
            continue
        if pending_break:
            if not content.strip():
                continue
            pending_break = False
            if out and not _continues_paragraph(out[-1].text, content):
                out.append(_Line(line.lineno, ""))
        if _RUNNING_HEADER.match(content) and out and not out[-1].text:
            # A running header in a text whose form feeds were lost.
            continue
        out.append(_Line(line.lineno, content))
    return out


def _trim_trailing_blanks(lines: list[_Line]) -> None:
    """Drop the blank padding lines at the bottom of a page."""
    while lines and not lines[-1].text.strip():
        lines.pop()


def _continues_paragraph(before: str, after: str) -> bool:
    """Whether the line after a page break continues the paragraph before it."""
    indent_before = len(before) - len(before.lstrip())
    indent_after = len(after) - len(after.lstrip())
    return (
        indent_before > 0
        and indent_before == indent_after
        and not before.rstrip().endswith((".", ":", ";"))
    )


def _blank_after(lines: list[_Line], start: int) -> int:
    """Index of the first blank line at or after ``start`` (or the end)."""
    for index in range(start, len(lines)):
        if not lines[index].text.strip():
            return index
    return len(lines)


def _read_header_block(block: list[_Line]) -> tuple[tuple[Author, ...], str | None]:
    """Authors (with organisations) and the RFC number from the first-page header block.

    The right column lists author names, each group followed by their organisation, and ends
    with the date; the left column carries the stream, the RFC number or draft status.
    """
    left: list[str] = []
    right: list[str] = []
    for line in block:
        if line.text.startswith(" "):
            right.append(line.text.strip())
            continue
        parts = re.split(r"\s{2,}", line.text.strip(), maxsplit=1)
        left.append(parts[0])
        if len(parts) > 1:
            right.append(parts[1].strip())
    docname = None
    for entry in left:
        match = _RFC_NUMBER.match(entry)
        if match:
            docname = f"rfc{match.group(1)}"
    names: list[str] = []
    authors: list[Author] = []
    for entry in right:
        if not entry or _DATE.match(entry):
            continue
        if len(entry) <= _AUTHOR_NAME_LIMIT and _AUTHOR_NAME.match(entry):
            names.append(entry)
            continue
        authors.extend(Author(name=name, organization=entry) for name in names)
        names = []
    authors.extend(Author(name=name) for name in names)
    return tuple(authors), docname


def _read_title(lines: list[_Line], start: int) -> tuple[str | None, str | None, int]:
    """The centred title after the header block, the draft name under it, and where it ends."""
    index = start
    while index < len(lines) and not lines[index].text.strip():
        index += 1
    title_parts: list[str] = []
    docname = None
    while index < len(lines) and lines[index].text.strip():
        line = lines[index].text
        if not line.startswith(" "):
            # Something at column 0 (e.g. "Abstract") means there was no centred title.
            break
        stripped = line.strip()
        if _DOCNAME.match(stripped):
            docname = stripped
        else:
            title_parts.append(stripped)
        index += 1
    title = " ".join(title_parts) or None
    return title, docname, index


def _front_matter_end(lines: list[_Line], start: int) -> tuple[int, dict[str, int]]:
    """Index of the first line after the front matter, and the unnumbered titles in the TOC.

    The TOC ends at the first line at column 0 after it.  Unnumbered TOC entries (with their
    depth) let the reader recognise unnumbered headings that are not in the usual list.
    """
    toc_at = next(
        (
            i
            for i in range(start, len(lines))
            if lines[i].text.strip().lower() == "table of contents" and lines[i].text[0] != " "
        ),
        None,
    )
    if toc_at is None:
        # Short documents can omit the TOC: skip the known front-matter sections instead.
        for index in range(start, len(lines)):
            text = lines[index].text
            if text and not text.startswith(" ") and text.strip().lower() not in _FRONT_TITLES:
                return index, {}
        return len(lines), {}
    toc_titles: dict[str, int] = {}
    entries: list[tuple[int, str]] = []
    index = toc_at + 1
    while index < len(lines):
        text = lines[index].text
        if text and not text.startswith(" "):
            break
        if text.strip():
            indent = len(text) - len(text.lstrip())
            entry = _strip_toc_leaders(text.strip())
            if entries and indent > entries[-1][0] + 2 and not _looks_numbered(entry):
                # A wrapped TOC entry: its continuation is indented past the entry itself.
                entries[-1] = (entries[-1][0], f"{entries[-1][1]} {entry}")
            else:
                entries.append((indent, entry))
        index += 1
    for indent, entry in entries:
        if not _looks_numbered(entry):
            toc_titles[entry.lower()] = max(1, (indent - _BODY_INDENT) // 2 + 1)
    return index, toc_titles


def _strip_toc_leaders(entry: str) -> str:
    """A TOC entry without its page number and the dot leaders before it.

    What ``re.sub(r"(?:\\s*\\.)*\\s*\\.\\s+\\d+\\s*$|\\s{2,}\\d+\\s*$", "", entry)`` removes:
    the page number (digits, then only blanks) with the blanks before it, and with them the
    run of dots and blanks before those blanks when that run holds a dot; without a dot, the
    blanks must be two or more. That expression is tried from every position of the entry and
    backtracks over a long run of dots, so the run is found here from the right instead.
    """
    text = entry.rstrip()  # \s*$
    digits = len(text)
    while digits > 0 and text[digits - 1].isdecimal():  # \d, as re reads it in str patterns
        digits -= 1
    blanks = digits
    while blanks > 0 and text[blanks - 1].isspace():  # \s
        blanks -= 1
    if digits == len(text) or blanks == digits:  # no page number, or nothing before it
        return entry
    leaders = blanks
    while leaders > 0 and (text[leaders - 1] == "." or text[leaders - 1].isspace()):
        leaders -= 1
    if "." in text[leaders:blanks]:  # the dots of a leader end where the blanks begin
        return entry[:leaders]
    if digits - blanks >= 2:
        return entry[:blanks]
    return entry


def _looks_numbered(entry: str) -> bool:
    """Whether a TOC entry starts with a section number (TOC entries may use one space)."""
    return re.match(r"^(?:Appendix )?(?:\d+|[A-Z]{1,2})(?:\.\d+)*\.\s", entry) is not None


def _find_headings(lines: list[_Line], start: int, toc_titles: dict[str, int]) -> list[_Heading]:
    """Headings after the front matter: strict numbered shape or a known unnumbered title.

    Headings always stand between blank lines (after joining a wrapped title), which keeps
    column-0 lines inside figures from being taken for headings.
    """
    found: list[_Heading] = []
    index = start
    while index < len(lines):
        text = lines[index].text
        if not text or text.startswith(" ") or (index > 0 and lines[index - 1].text.strip()):
            index += 1
            continue
        heading = _match_heading(text, toc_titles)
        if heading is None:
            index += 1
            continue
        printed, title, level, appendix, title_column = heading
        end = index + 1
        # A long title wraps onto lines indented to where the title text starts.
        while (
            printed is not None
            and end < len(lines)
            and lines[end].text.strip()
            and len(lines[end].text) - len(lines[end].text.lstrip()) == title_column
        ):
            title = f"{title} {lines[end].text.strip()}"
            end += 1
        if end < len(lines) and lines[end].text.strip():
            index += 1
            continue
        found.append(
            _Heading(
                index=index,
                lineno=lines[index].lineno,
                level=level,
                title=title,
                printed=printed,
                appendix=appendix,
                body_start=end,
            )
        )
        index = end
    return found


def _match_heading(
    text: str, toc_titles: dict[str, int]
) -> tuple[str | None, str, int, bool, int] | None:
    """(printed number, title, level, appendix, title column) if the line is a heading."""
    match = _NUMBERED.match(text)
    if match:
        number = match.group("number")
        parts = number.split(".")
        lettered = parts[0].isalpha()
        # "Appendix" prefixes exactly the top-level lettered sections; anything else with this
        # shape (a bare "A.  " or "Appendix 1.1.  ") is not a heading xml2rfc writes.
        if lettered and (len(parts) == 1) != bool(match.group("appendix")):
            return None
        if not lettered and match.group("appendix"):
            return None
        title = match.group("title").strip()
        return number, title, len(parts), lettered, match.start("title")
    title = text.strip()
    key = title.lower()
    # The TOC knows the depth (e.g. an unnumbered "Normative References" under "References").
    if key in toc_titles and key not in _FRONT_TITLES:
        return None, title, toc_titles[key], False, 0
    if key in _BACK_TITLES:
        return None, title, 1, False, 0
    return None


def _body(lines: list[_Line]) -> str:
    """A section's own text with xml2rfc's three-space indent removed.

    A block (lines between blank lines) holding a line left of the indent is ASCII art drawn
    from column 0; it stays as printed so that its columns keep lining up.
    """
    out: list[str] = []
    block: list[str] = []
    for line in [*lines, _Line(0, "")]:
        if line.text.strip():
            block.append(line.text)
            continue
        if all(text.startswith(" " * _BODY_INDENT) for text in block):
            block = [text[_BODY_INDENT:] for text in block]
        out.extend(block)
        out.append("")
        block = []
    return "\n".join(out).strip("\n")
