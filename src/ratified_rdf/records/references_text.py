"""What a plain-text draft or RFC says of other documents (:mod:`~ratified_rdf.records.
references`'s reader of the text format).

The header's left column says what it updates and obsoletes ("Updates: 8446 (if approved)",
"Obsoletes: 5077, 5246"). The "Normative References" and "Informative References" sections
list entries as ``[KEY]  Author, "Title", RFC 8446, DOI …`` or ``…, Work in Progress,
Internet-Draft, draft-ietf-tls-esni-05, …``: a key that is not a document's own name
(``[TLS13]``) stands for the document its entry names after the title. The text before the
references cites sections as "Section 4.2 of [RFC8446]" or "[TLS13], Section 4", read by the
same rules as markdown.
"""

from __future__ import annotations

import re

from ratified_rdf.records.references import DocumentReferences, cited_sections, document_name

__all__ = ["read_text_references"]

HEADER_LINES = 40
"""How many lines from the top the header's "Updates:"/"Obsoletes:" are looked for in."""

# A run of numbers, by commas or single spaces: two spaces or more lead to the right column.
_NUMBERS = r"(\d{1,5}(?:(?:,[ \t]?|[ \t])\d{1,5})*)"
_HEADER = re.compile(rf"^(Updates|Obsoletes):?[ \t]+{_NUMBERS}", re.IGNORECASE)
# A long list goes on under the first, in the left column: "         7030 6750 6749".
_HEADER_MORE = re.compile(rf"^[ \t]+{_NUMBERS}")
# "4.1.  Normative References", "Normative References", "A.2. Informative References"; never a
# table of contents line ("4.1.  Normative References . . . .   12"), which is indented.
_LIST_HEADING = re.compile(
    r"^(?:(?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)\.?\s+)?(Normative|Informative)\s+References\s*$",
    re.IGNORECASE,
)
# A heading that ends a reference list: a numbered or lettered one, or the back matter's own.
_NEXT_HEADING = re.compile(
    r"^(?:\d+(?:\.\d+)*\.?\s+\S|Appendix\s+[A-Z]\b|[A-Z](?:\.\d+)*\.\s+\S|"
    r"Authors?'?\s+Address|Acknowledge?ments|Contributors|Index\s*$)",
    re.IGNORECASE,
)
_ENTRY = re.compile(r"^\s{1,10}\[([^\]\s]{1,80})\]")
_SERIES_RFC = re.compile(r"\bRFC\s?(\d{1,5})\b")
_SERIES_DRAFT = re.compile(r"\b(draft-[a-z0-9][a-z0-9\-]*?)(?:-\d{2})?\b(?![\w\-])", re.IGNORECASE)


def read_text_references(text: str) -> DocumentReferences:
    """What a plain-text document's header, reference lists and text say of other
    documents."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    numbers: dict[str, list[int]] = {"updates": [], "obsoletes": []}
    listing: str | None = None
    for line in lines[:HEADER_LINES]:
        found = _HEADER.match(line)
        more = _HEADER_MORE.match(line) if listing and not found else None
        if found:
            listing = found.group(1).lower()
            numbers[listing] += [int(n) for n in re.findall(r"\d+", found[2])]
        elif more and listing:
            numbers[listing] += [int(n) for n in re.findall(r"\d+", more[1])]
        else:
            listing = None
    lists: dict[str, list[str]] = {"normative": [], "informative": []}
    aliases: dict[str, str] = {}
    first_list: int | None = None
    kind: str | None = None
    entries: list[tuple[str, str, list[str]]] = []  # (kind, key, the entry's lines)
    for index, line in enumerate(lines):
        heading = _LIST_HEADING.match(line)
        if heading:
            kind = heading.group(1).lower()
            first_list = index if first_list is None else first_list
            continue
        if kind is None:
            continue
        if line and not line[0].isspace() and _NEXT_HEADING.match(line):
            kind = None
            continue
        entry = _ENTRY.match(line)
        if entry:
            entries.append((kind, entry.group(1), [line[entry.end() :]]))
        elif entries and line.strip():
            entries[-1][2].append(line)
    for listed, key, entry_lines in entries:
        target = _entry_target(key, " ".join(s.strip() for s in entry_lines))
        name = document_name(target) if target else None
        if name is None:
            continue
        lists[listed].append(name)
        if document_name(key) != name:
            aliases[key] = target or key
    if lists["normative"]:
        normative = set(lists["normative"])
        lists["informative"] = [n for n in lists["informative"] if n not in normative]
    body = "\n".join(lines[:first_list])
    return DocumentReferences(
        normative=tuple(dict.fromkeys(lists["normative"])),
        informative=tuple(dict.fromkeys(lists["informative"])),
        updates=tuple(dict.fromkeys(numbers["updates"])),
        obsoletes=tuple(dict.fromkeys(numbers["obsoletes"])),
        sections=cited_sections(body, aliases),
    )


def _entry_target(key: str, entry: str) -> str | None:
    """What an entry's key stands for: the key itself when it is a document's name
    (``RFC8446``, ``I-D.ietf-tls-esni``), else the RFC or draft its series information after
    the title names (a title may itself name an RFC: "Updates to RFC 8446")."""
    if document_name(key) is not None:
        return key
    series = entry.rsplit('"', 1)[-1] if entry.count('"') >= 2 else entry
    if found := _SERIES_DRAFT.search(series):
        return f"I-D.{found.group(1)}"
    if found := _SERIES_RFC.search(series):
        return f"RFC{found.group(1)}"
    return None
