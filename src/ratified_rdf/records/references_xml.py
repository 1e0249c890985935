"""What an xml2rfc draft says of other documents (:mod:`~ratified_rdf.records.references`'s
reader of the XML format).

The root says what the draft updates and obsoletes (``<rfc updates="8446, 8447">``). Its
``<references>`` lists are normative or informative by their title (``<references
title="Normative References">``, v2) or name (``<name>Normative References</name>``, v3); an
entry is a ``<reference>`` (named by its anchor, or by its ``seriesInfo``: ``RFC 8446``,
``draft-ietf-tls-esni-05``), an ``<xi:include>`` of the RFC Editor's bibliography
(``reference.RFC.8446.xml``), or, in v2, an external entity (``&RFC2119;``), which the XML
reader stands in for with an entry of the entity's name, or a processing instruction
(``<?rfc include='reference.RFC.8174'?>``), read from the raw text. An anchor that is not a
document's own name (``TLS13``) stands for the document its entry names.

The text cites sections with ``<xref target="RFC8446" section="4.2"/>`` (v3), or in words
around a plain ``<xref target="RFC8446"/>`` ("Section 4.2 of <xref …/>"). The body is rendered
as xml2rfc renders it ("Section 4.2 of [RFC8446]") and read by the same rules as markdown.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from ratified_rdf.records.references import DocumentReferences, cited_sections, document_name
from ratified_rdf.sources.document import ParseError

# The XML reader's safe parse (entities measured and expanded, nothing fetched) is the one
# every XML text in a brain goes through; a second parser here would be a second attack surface.
from ratified_rdf.sources.xml2rfc import _parse_safely

__all__ = ["read_xml_references"]

_NUMBER = re.compile(r"\d{1,5}")
# The RFC Editor's bibliography files, by the end of an include's address: reference.RFC.8446.xml,
# reference.I-D.ietf-tls-esni.xml (v2's processing instruction leaves out the ".xml").
_BIBXML = re.compile(
    r"reference\.(?:RFC\.(?P<rfc>\d{1,5})|I-D\.(?:draft-)?(?P<draft>[a-z0-9][a-z0-9\-]*?)"
    r"(?:-\d{2})?)(?:\.xml)?$",
    re.IGNORECASE,
)
# v2's includes, <?rfc include='reference.RFC.8174'?>, which the XML reader does not keep:
# read from the raw text of each <references> element.
_RAW_LIST = re.compile(r"<references\b([^>]*)>(.*?)</references>", re.DOTALL)
_RAW_TITLE = re.compile(r"""\btitle\s*=\s*["']([^"']*)["']""")
_RAW_INCLUDE = re.compile(r"""<\?rfc\s+include\s*=\s*["']([^"']+)["']""")


def read_xml_references(text: str) -> DocumentReferences:
    """What an xml2rfc document's root, reference lists and text say of other documents; an
    empty answer for a text that is not well-formed XML (its revision is read, or refused, by
    the document reader, which says why)."""
    try:
        root = _parse_safely(text).root
    except ParseError:
        return DocumentReferences()
    lists: dict[str, list[str]] = {"normative": [], "informative": []}
    aliases: dict[str, str] = {}
    for references in root.iter("references"):
        kind = _kind(_title(references))
        if kind is None:
            continue
        for entry in references:
            for anchor, key in _entries(entry):
                name = document_name(key)
                if name is None:
                    continue
                lists[kind].append(name)
                if anchor and document_name(anchor) != name:
                    aliases[anchor] = key
    for attributes, inside in _RAW_LIST.findall(text):
        title = _RAW_TITLE.search(attributes)
        kind = _kind(title.group(1) if title else "")
        for address in _RAW_INCLUDE.findall(inside) if kind is not None else ():
            included = _bibxml_key(address)
            name = document_name(included) if included else None
            if kind is not None and name is not None:
                lists[kind].append(name)
    if lists["normative"]:
        normative = set(lists["normative"])
        lists["informative"] = [n for n in lists["informative"] if n not in normative]
    body = "".join(_rendered(part) for tag in ("middle", "back") for part in root.iter(tag))
    return DocumentReferences(
        normative=tuple(dict.fromkeys(lists["normative"])),
        informative=tuple(dict.fromkeys(lists["informative"])),
        updates=_numbers(root.get("updates")),
        obsoletes=_numbers(root.get("obsoletes")),
        sections=cited_sections(body, aliases),
    )


def _bibxml_key(address: str) -> str | None:
    """The reference key a bibliography file's address names (``RFC8446``,
    ``I-D.ietf-tls-esni``); None for any other address."""
    found = _BIBXML.search(address.strip())
    if found is None:
        return None
    return f"RFC{found['rfc']}" if found["rfc"] else f"I-D.{found['draft']}"


def _numbers(value: str | None) -> tuple[int, ...]:
    return tuple(dict.fromkeys(int(n) for n in _NUMBER.findall(value or "")))


def _title(references: ET.Element) -> str:
    """A reference list's title: its ``title`` attribute, its ``<name>``, or its anchor."""
    name = references.find("name")
    if references.get("title"):
        return references.get("title") or ""
    if name is not None:
        return "".join(name.itertext())
    return references.get("anchor") or ""


def _kind(title: str) -> str | None:
    title = title.casefold()
    if "informative" in title or "non-normative" in title:
        return "informative"
    return "normative" if "normative" in title else None


def _entries(entry: ET.Element) -> Iterator[tuple[str | None, str]]:
    """(anchor, key) of the documents one child of a reference list names: ``RFC8446`` or
    ``I-D.ietf-tls-esni``, by the entry's series information before its anchor."""
    tag = re.split(r"[}:]", entry.tag)[-1]  # "xi:include", or namespaced "{…}include"
    if tag == "include":
        key = _bibxml_key(entry.get("href") or "")
        if key:
            yield None, key
    elif tag == "referencegroup":
        for child in entry:
            yield from _entries(child)
    elif tag == "reference":
        anchor = entry.get("anchor")
        for info in entry.iter("seriesInfo"):
            series, value = (info.get("name") or "").casefold(), (info.get("value") or "")
            if series == "rfc" and value.strip().isdigit():
                yield anchor, f"RFC{int(value)}"
                return
            if series == "internet-draft" and value.startswith("draft-"):
                yield anchor, f"I-D.{value}"
                return
        if anchor:
            yield anchor, anchor


def _rendered(element: ET.Element) -> str:
    """An element's text as xml2rfc renders it: a cross-reference to a document is
    ``[TARGET]``, and one naming a section ``Section N of [TARGET]``; reference lists are
    left out (their entries are not citations)."""
    tag = element.tag if isinstance(element.tag, str) else ""
    if tag == "references":
        return " " + (element.tail or "")
    if tag in ("xref", "relref"):
        target = element.get("target") or ""
        section = element.get("section")
        cited = f"[{target}]"
        if section:
            cited = f"Section {section} of {cited}"
        return cited + (element.tail or "")
    parts = [element.text or ""]
    parts += [_rendered(child) for child in element]
    return "".join(parts) + (element.tail or "") + " "
