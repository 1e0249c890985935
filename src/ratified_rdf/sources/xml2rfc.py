"""Reader for xml2rfc XML (the v3 vocabulary of RFC 7991, with fallbacks for v2 documents).

Sections come from ``<middle>`` and ``<back>``: the ``<section>`` elements of ``<back>`` are
the appendices (lettered), while ``<references>`` in ``<back>`` are numbered on from the last
middle section, as xml2rfc renders them (in RFC 9846, ``12. References`` comes right before
``Appendix A``).

The XML comes from outside, and most older drafts declare entities in their DOCTYPE
(``<!ENTITY MAY "<bcp14>MAY</bcp14>">``, ``&ID-VERSION;``, the v2 template's
``<!ENTITY RFC2119 SYSTEM "http://xml2rfc…">``). expat is never left to expand them: the
internal subset is read here, every internal entity's expansion is measured before any is
made (a document whose entities would expand past :data:`ENTITY_EXPANSION_LIMIT` characters,
the "billion laughs", is refused), and the references are replaced in the text before expat
sees it, the subset blanked so that every line keeps its number. Nothing is fetched: an external
(``SYSTEM``) entity is left out and noted in :attr:`ParsedDocument.notes`, and parameter entities
are never read. Undeclared names of the XHTML entity sets that xml2rfc's DTD includes
(``&nbsp;``, ``&mdash;``) become their characters.
Only the stdlib is used: expat drives an :class:`xml.etree.ElementTree.TreeBuilder` directly so
that its DOCTYPE and entity events can be intercepted; an entity declaration that reaches expat
(none can, once the subset is blanked) is refused.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from typing import NamedTuple
from xml.parsers import expat

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
from ratified_rdf.sources.xml_entities import expand_entities

__all__ = ["outline_line", "parse_xml2rfc", "xml2rfc_outline"]

_WS = re.compile(r"\s+")
# Flowing text: collapsed to one line per paragraph.
_PARAGRAPHS = frozenset({"t", "blockquote", "aside", "li", "dt", "dd"})
_LISTS = frozenset({"ul", "ol", "dl"})
# Preformatted text: line structure is the content, so it is kept as written.
_PREFORMATTED = frozenset({"artwork", "sourcecode"})

# xml2rfc gathers several top-level <references> of <back> under one section of this name
# (the v2 vocabulary has no other way to write "References", "Normative References" …).
_REFERENCES = "References"

DEPTH_LIMIT = 100
"""How deeply elements may nest. RFC XML nests a few dozen levels at most; the reader walks the
tree recursively, so a deeper document is refused as it is parsed instead of exhausting the
interpreter's recursion limit."""


def parse_xml2rfc(text: str | bytes, *, published: bool = False) -> ParsedDocument:
    """Read an xml2rfc document (v3, or v2 where the two differ only in spelling).

    ``published``: the text is an RFC's, whose back matter the RFC Editor ends with
    unnumbered sections (:data:`~ratified_rdf.sources.kramdown.UNNUMBERED_BACK`, such as
    Contributors): they get no appendix letter even where the XML leaves them numbered.

    Returns the title, docname (``docName`` attribute, Internet-Draft ``seriesInfo`` or
    ``rfc<number>``), the ``<front>`` authors and every section of ``<middle>`` and ``<back>``
    in document order, with notes on what was left unresolved (:func:`expand_entities`).
    Raises :class:`ParseError` for malformed XML, a root other than ``<rfc>``, entities that
    cannot be expanded safely, elements nested more than :data:`DEPTH_LIMIT` deep, text that
    cannot be encoded (a lone surrogate) or an encoding the parser cannot use.
    """
    root, notes, _lines = _parse_safely(text)
    if root.tag != "rfc":
        raise ParseError(f"The XML root element is <{root.tag}>, not <rfc>; this is not xml2rfc.")
    front = root.find("front")
    title = None
    authors: tuple[Author, ...] = ()
    docname = root.get("docName")
    if front is not None:
        title_el = front.find("title")
        if title_el is not None:
            title = _collapse(_text(title_el)) or None
        authors = tuple(a for a in (_author(el) for el in front.findall("author")) if a)
        if docname is None:
            for info in front.findall("seriesInfo"):
                if info.get("name") == "Internet-Draft" and info.get("value"):
                    docname = info.get("value")
    if docname is None and root.get("number"):
        docname = f"rfc{root.get('number')}"

    headings: list[RawHeading] = []
    middle = root.find("middle")
    if middle is not None:
        for child in middle:
            if child.tag == "section":
                _collect(child, 1, appendix=False, out=headings)
    back = root.find("back")
    if back is not None:
        # xml2rfc numbers all references before any appendix, whatever their order in <back>.
        references = [child for child in back if child.tag == "references"]
        if len(references) > 1:
            headings.append(RawHeading(1, _REFERENCES, None, False, True, ""))
        for child in references:
            _collect(child, 1 + (len(references) > 1), appendix=False, out=headings)
        for child in back:
            if child.tag == "section":
                start = len(headings)
                _collect(child, 1, appendix=True, out=headings)
                if published and _heading(child).lower() in UNNUMBERED_BACK:
                    headings[start] = dataclasses.replace(headings[start], numbered=False)
    return ParsedDocument(
        title=title,
        docname=docname,
        authors=authors,
        sections=assemble_sections(headings),
        notes=notes,
    )


def xml2rfc_outline(text: str) -> Outline:
    """Every section :func:`parse_xml2rfc` makes, on the line its ``<section>`` (or
    ``<references>``) tag opens, in document order; and the line after each one's closing
    tag, where its text ends (a parent's own text ends at its first subsection, as in every
    format). An XML text that cannot be read has an empty outline."""
    try:
        root, _notes, lines = _parse_safely(text)
    except ParseError:
        return Outline([])
    found: list[OutlineHeading] = []
    breaks: list[int] = []

    def walk(el: ET.Element, level: int, appendix: bool) -> None:
        first, last = lines[el]
        found.append(OutlineHeading(first, level, _heading(el), appendix))
        breaks.append(last + 1)
        for child in el:
            if child.tag in _SECTIONS:
                walk(child, level + 1, appendix)

    if root.tag == "rfc":
        for part in root:
            if part.tag not in {"middle", "back"}:
                continue
            references = [child for child in part if child.tag == "references"]
            grouped = part.tag == "back" and len(references) > 1
            for child in part:
                if child.tag == "section":
                    walk(child, 1, part.tag == "back")
                elif part.tag == "back" and child.tag == "references":
                    # Numbered on from the middle, not lettered; several are grouped under a
                    # "References" section of no text of its own (on its first one's line).
                    if grouped and child is references[0]:
                        found.append(OutlineHeading(lines[child][0], 1, _REFERENCES, False))
                    walk(child, 1 + grouped, False)
    found.sort(key=lambda heading: heading.line)
    return Outline(found, breaks)


# What a line that can change the outline holds: a section's tags, name or title, the parts
# sections sit in, and what can hide or reveal markup (comments, CDATA, the DOCTYPE, entities).
_OUTLINE_MARKS = (
    "section",
    "references",
    "name",
    "title",
    "middle",
    "back",
    "front",
    "rfc",
    "<!",
    "]]>",
    "-->",
    "&",
    "\r",
)


def outline_line(line: str) -> bool:
    """Whether a line, added or removed, can change an XML text's outline
    (:func:`xml2rfc_outline`); a line of a paragraph's text cannot."""
    return any(mark in line for mark in _OUTLINE_MARKS)


class _Parsed(NamedTuple):
    """A parsed document: its root, the reader's notes, and the first and last 0-based lines
    of every ``<section>`` and ``<references>`` element."""

    root: ET.Element
    notes: tuple[str, ...]
    lines: dict[ET.Element, tuple[int, int]]


# Whether a text may name an entity expat would not expand itself (or declare one).
_ENTITY_TEXT = re.compile(r"<!ENTITY|&(?!(?:amp|lt|gt|quot|apos);)[A-Za-z_:]")
_ENTITY_BYTES = re.compile(rb"<!ENTITY|&(?!(?:amp|lt|gt|quot|apos);)[A-Za-z_:]")
_DECLARED_ENCODING = re.compile(rb"""^<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._\-]+)["']""")
_SECTIONS = frozenset({"section", "references"})


def _parse_safely(text: str | bytes) -> _Parsed:
    """Parse with expat, entities expanded beforehand (:func:`expand_entities`) and no
    external DTD or entity ever loaded."""
    notes: tuple[str, ...] = ()
    if isinstance(text, bytes) and _ENTITY_BYTES.search(text):
        text = _decoded(text)
    if isinstance(text, str) and _ENTITY_TEXT.search(text):
        text, notes = expand_entities(text)
    if isinstance(text, str):
        # expat reads text as UTF-8 whatever the XML declaration says; encode it here, as
        # pyexpat would, so that a lone surrogate is a ParseError instead of escaping.
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as error:
            raise ParseError(
                f"The XML text holds a character that is not Unicode text ({error.reason} at "
                f"position {error.start}); read the file as UTF-8 or pass its bytes instead."
            ) from None
        parser = expat.ParserCreate(encoding="utf-8")
    else:
        data = text
        parser = expat.ParserCreate()
    builder = ET.TreeBuilder()
    parser.buffer_text = True
    # Never read an external DTD or parameter entity; a plain DOCTYPE is then inert.
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    depth = 0

    def refuse_entity(name: str, *_: object) -> None:
        raise ParseError(
            f'The XML declares the entity "{name}" in its DOCTYPE; entity declarations are '
            "refused because expanding them is unsafe. Resolve the entities before reading."
        )

    def refuse_external(*_: object) -> bool:
        raise ParseError("The XML refers to an external entity; external entities are refused.")

    lines: dict[ET.Element, tuple[int, int]] = {}

    def start(tag: str, attributes: dict[str, str]) -> None:
        nonlocal depth
        depth += 1
        if depth > DEPTH_LIMIT:
            raise ParseError(
                f"The XML nests elements more than {DEPTH_LIMIT} deep (at <{tag[:40]}>); "
                "xml2rfc documents nest far less, so this is not one."
            )
        element = builder.start(tag, attributes)
        if tag in _SECTIONS:
            lines[element] = (parser.CurrentLineNumber - 1, -1)

    def end(tag: str) -> None:
        nonlocal depth
        depth -= 1
        element = builder.end(tag)
        if tag in _SECTIONS:
            lines[element] = (lines[element][0], parser.CurrentLineNumber - 1)

    parser.EntityDeclHandler = refuse_entity
    parser.UnparsedEntityDeclHandler = refuse_entity
    parser.ExternalEntityRefHandler = refuse_external
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    try:
        parser.Parse(data, True)
    except ParseError:
        raise
    except expat.ExpatError as exc:
        raise ParseError(f"The document is not well-formed XML: {exc}.") from exc
    except (LookupError, UnicodeError, ValueError) as exc:
        # pyexpat decodes an encoding expat lacks with a Python codec: an unknown name is a
        # LookupError, a multi-byte codec a ValueError, a codec that is not text a UnicodeError.
        raise ParseError(
            f"The XML declares an encoding the XML parser cannot use ({exc}); "
            "save the document as UTF-8."
        ) from None
    return _Parsed(builder.close(), notes, lines)


def _decoded(data: bytes) -> str:
    """XML bytes as text, in the encoding their declaration names (UTF-8 when none), so that
    their entities can be expanded before expat reads them."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    declared = _DECLARED_ENCODING.match(data)
    codec = declared.group(1).decode("ascii") if declared else "utf-8"
    try:
        text = data.decode(codec)
    except (LookupError, UnicodeError, ValueError) as exc:
        raise ParseError(
            f"The XML declares an encoding the XML parser cannot use ({exc}); "
            "save the document as UTF-8."
        ) from None
    return text


def _author(el: ET.Element) -> Author | None:
    """An author from ``fullname`` (or initials and surname), organisation and email."""
    org_el = el.find("organization")
    organization = _collapse(_text(org_el)) if org_el is not None else ""
    name = el.get("fullname") or " ".join(
        part for part in (el.get("initials"), el.get("surname")) if part
    )
    # xml2rfc allows an author that is only an organisation (e.g. a working group).
    name = _collapse(name) or organization
    if not name:
        return None
    email_el = el.find("address/email")
    email = _collapse(_text(email_el)) if email_el is not None else ""
    return Author(name=name, email=email or None, organization=organization or None)


def _collect(el: ET.Element, level: int, *, appendix: bool, out: list[RawHeading]) -> None:
    """Append ``el`` and its subsections (``section`` or nested ``references``) in order."""
    out.append(
        RawHeading(
            level=level,
            heading=_heading(el),
            anchor=el.get("anchor"),
            appendix=appendix,
            numbered=el.get("numbered", "true").lower() not in {"false", "no"},
            body=_body(el),
        )
    )
    for child in el:
        if child.tag in {"section", "references"}:
            _collect(child, level + 1, appendix=appendix, out=out)


def _heading(el: ET.Element) -> str:
    """A section's heading: its ``<name>`` (v3), else its ``title`` attribute (v2)."""
    name_el = el.find("name")
    heading = _collapse(_text(name_el)) if name_el is not None else ""
    return heading or _collapse(el.get("title", ""))


def _body(section: ET.Element) -> str:
    """The section's own text: paragraphs, lists, figures and code, not subsections."""
    paragraphs = [p for child in section for p in _paragraphs(child) if p]
    return "\n\n".join(paragraphs)


def _paragraphs(el: ET.Element) -> Iterator[str]:
    """The paragraphs of one body element, flowing text collapsed, preformatted text kept."""
    tag = el.tag
    if tag in _PREFORMATTED:
        yield textwrap.dedent("".join(el.itertext())).strip("\n").rstrip()
    elif tag in _LISTS:
        for item in el:
            if item.tag in {"li", "dt", "dd"}:
                yield from _item(item)
    elif tag == "figure":
        # A figure's own caption is its <name>; its artwork is the content worth keeping.
        for child in el:
            if child.tag in _PREFORMATTED:
                yield from _paragraphs(child)
    elif tag == "table":
        for row in el.iter("tr"):
            yield " | ".join(_collapse(_text(cell)) for cell in row if cell.tag in {"td", "th"})
    elif tag in {"t", "blockquote", "aside"}:
        yield from _item(el)
    elif tag in {"reference", "referencegroup"}:
        # Enough of a bibliography entry to say what is cited; the full entry is metadata.
        title_el = el.find("front/title")
        title = _collapse(_text(title_el)) if title_el is not None else ""
        yield f"[{el.get('anchor', '')}] {title}".strip()


def _item(el: ET.Element) -> Iterator[str]:
    """A paragraph-like element; block children (``<t>`` in ``<li>``) become paragraphs.

    Inline text around block children is gathered into paragraphs of its own, so nothing in
    a list item is lost or glued to a nested list.
    """
    if el.tag == "t":
        yield _collapse(_text(el))
        return
    run: list[str] = [el.text or ""]
    for child in el:
        if child.tag in _PARAGRAPHS | _LISTS | _PREFORMATTED or child.tag in {"figure", "table"}:
            yield _collapse("".join(run))
            run = []
            yield from _item(child) if child.tag in _PARAGRAPHS else _paragraphs(child)
        else:
            run.append(_text(child))
        run.append(child.tail or "")
    yield _collapse("".join(run))


def _text(el: ET.Element) -> str:
    """Rendered text of inline markup: empty ``<xref>``/``<eref>`` show their target."""
    parts: list[str] = [el.text or ""]
    for child in el:
        if child.tag in {"xref", "eref"} and not "".join(child.itertext()).strip():
            target = child.get("target", "")
            parts.append(f"[{target}]" if child.tag == "xref" else target)
        elif child.tag not in {"iref", "cref"}:
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _collapse(text: str) -> str:
    """Whitespace runs to single spaces, as a renderer would flow them."""
    return _WS.sub(" ", text).strip()
