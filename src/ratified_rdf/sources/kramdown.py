"""Reader for kramdown-rfc markdown, the format every TLS 1.3 revision was written in.

Real files are messy, so the reader is deliberately tolerant: code fences may be indented or
left unbalanced (revision -18 of draft-ietf-tls-tls13 opens one with four spaces and closes it at
column 0), figures contain lines that look like headings, and headings carry ``{#anchor}`` or
``{:numbered="false"}`` attributes inline or on the next line.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from ratified_rdf.sources.document import (
    Author,
    ParsedDocument,
    ParseError,
    RawHeading,
    assemble_sections,
)

_FENCE = re.compile(r"^\s*(~{3,}|`{3,})")
# tls13-spec marks appendix B headings "%%## Record Layer": its build script expands them into
# real headings, so they are headings of the published text too.
_HEADING = re.compile(r"^(?:%%)?(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
_IAL_LINE = re.compile(r"^\{:(.*)\}\s*$")
_INLINE_IAL = re.compile(r"\s*\{:?\s*([^{}]*)\}\s*$")
_ANCHOR = re.compile(r"#([A-Za-z_][\w.\-:]*)")
_PART = re.compile(r"^---\s+(\w+)")
_REFERENCE_KEYS = re.compile(r"^(normative|informative|entity):")
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_TITLE = re.compile(r"^title:\s*(.+)$", re.M)
_YAML_DOCNAME = re.compile(r"^docname:\s*(\S+)", re.M)


def parse_kramdown(text: str) -> ParsedDocument:
    """Parse a kramdown-rfc document into its title, authors and numbered sections."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header, body_start = _front_matter(lines)
    in_fence = _fence_mask(lines)
    headings: list[RawHeading] = []
    current: dict[str, Any] | None = None
    body: list[str] = []
    part = "middle" if body_start == 0 else "front"
    pending_ial: str | None = None
    in_comment = False
    references_placed = False

    def close_current() -> None:
        if current is not None:
            headings.append(RawHeading(body="\n".join(body), **current))

    for index in range(body_start, len(lines)):
        line = lines[index]
        if not in_fence[index]:
            if in_comment or line.lstrip().startswith("<!--"):
                in_comment = "-->" not in line
                continue
            marker = _PART.match(line)
            if marker:
                part = {"back": "back", "middle": "middle"}.get(marker.group(1), "front")
                if part != "middle":
                    close_current()
                    current, body = None, []
                if part == "back":
                    headings.extend(_reference_sections(header))
                    references_placed = True
                continue
            if part == "front":
                continue
            ial = _IAL_LINE.match(line)
            if ial:
                if current is not None and not body:
                    _apply_attributes(current, ial.group(1))
                    continue
                nxt = lines[index + 1] if index + 1 < len(lines) else ""
                if _HEADING.match(nxt) and not in_fence[index + 1]:
                    pending_ial = ial.group(1)
                    continue
            heading = _HEADING.match(line)
            if heading:
                close_current()
                body = []
                current = _heading_fields(heading, appendix=part == "back")
                if pending_ial is not None:
                    _apply_attributes(current, pending_ial)
                    pending_ial = None
                continue
        if current is not None:
            body.append(line)
    close_current()
    if not references_placed:
        headings.extend(_reference_sections(header))
    if not headings:
        raise ParseError("no section headings were found; is this kramdown-rfc markdown?")
    return ParsedDocument(
        title=header.get("title"),
        docname=header.get("docname"),
        authors=tuple(header.get("authors", ())),
        sections=assemble_sections(headings),
    )


def heading_of(line: str) -> str | None:
    """The heading text of one markdown line (attributes stripped), or None if it is not one.

    Used where only a line is at hand, such as the context line git prints for a diff hunk.
    """
    match = _HEADING.match(line)
    return _heading_fields(match, appendix=False)["heading"] if match else None


def _reference_sections(header: dict[str, Any]) -> list[RawHeading]:
    """The References sections kramdown-rfc generates from the header's reference lists.

    They are not headings in the markdown, but they are numbered sections of the document
    (after the middle, before the appendices), so the numbering must count them.
    """
    kinds = [k for k in ("normative", "informative") if k in header.get("references", ())]
    titles = {"normative": "Normative References", "informative": "Informative References"}
    if len(kinds) == 1:
        return [RawHeading(1, titles[kinds[0]], None, False, True, "")]
    if not kinds:
        return []
    return [
        RawHeading(1, "References", None, False, True, ""),
        *(RawHeading(2, titles[k], None, False, True, "") for k in kinds),
    ]


def _heading_fields(match: re.Match[str], *, appendix: bool) -> dict[str, Any]:
    text = match.group(2)
    fields: dict[str, Any] = {
        "level": len(match.group(1)),
        "anchor": None,
        "appendix": appendix,
        "numbered": True,
    }
    inline = _INLINE_IAL.search(text)
    if inline:
        text = text[: inline.start()]
        _apply_attributes(fields, inline.group(1))
    fields["heading"] = re.sub(r"\s+", " ", text).strip()
    return fields


def _apply_attributes(fields: dict[str, Any], attributes: str) -> None:
    """Apply a kramdown inline attribute list (``#anchor``, ``numbered="false"``)."""
    anchor = _ANCHOR.search(re.sub(r'"[^"]*"', "", attributes))
    if anchor:
        fields["anchor"] = anchor.group(1)
    if re.search(r'numbered\s*=\s*"?false"?|\bunnumbered\b', attributes):
        fields["numbered"] = False


def _fence_mask(lines: list[str]) -> list[bool]:
    """Mark lines inside code fences, fences included.

    A fence left open at the end of the file would swallow every later heading. The opener
    of such a fence is treated as plain text and the rest re-scanned, which is what a reader
    of the rendered draft sees. Which opener was the unbalanced one is not known: a later,
    balanced figure's closer may be what is left open. Of the openers of the failing scan,
    the one whose removal balances the file while hiding the fewest lines is taken.
    """
    ignored: set[int] = set()
    while True:
        mask, openers, opener = _scan_fences(lines, ignored)
        if opener is None:
            return mask
        best: tuple[int, int] | None = None  # (lines hidden, opener)
        for candidate in openers:
            trial, _, still_open = _scan_fences(lines, ignored | {candidate})
            if still_open is None and (best is None or sum(trial) < best[0]):
                best = (sum(trial), candidate)
        ignored.add(best[1] if best is not None else opener)


def _scan_fences(lines: list[str], ignored: set[int]) -> tuple[list[bool], list[int], int | None]:
    """One pass pairing fence lines; returns the mask, every opener, and any left open."""
    mask = [False] * len(lines)
    openers: list[int] = []
    opener: int | None = None
    for index, line in enumerate(lines):
        if index not in ignored and _FENCE.match(line):
            mask[index] = True
            if opener is None:
                opener = index
                openers.append(index)
            else:
                opener = None
            continue
        mask[index] = opener is not None
    return mask, openers, opener


def _front_matter(lines: list[str]) -> tuple[dict[str, Any], int]:
    """Read the YAML header; return what it says and the index of the first line after it."""
    if not lines or lines[0].strip() != "---":
        return {}, 0
    end = next(
        (i for i in range(1, len(lines)) if lines[i].startswith("---")),
        len(lines),
    )
    # The reference lists that follow the metadata are most of the header and are not needed.
    refs = next(
        (i for i in range(1, end) if _REFERENCE_KEYS.match(lines[i])),
        end,
    )
    raw = "\n".join(lines[1:refs])
    references = [
        match.group(1)
        for line in lines[refs:end]
        if (match := _REFERENCE_KEYS.match(line)) and _has_entries(lines, line)
    ]
    try:
        data = yaml.load(raw, Loader=_YAML_LOADER) or {}
    except yaml.YAMLError:
        # Old headers sometimes are not valid YAML; keep what a line-by-line read can find.
        data = {}
        for key, pattern in (("title", _YAML_TITLE), ("docname", _YAML_DOCNAME)):
            found = pattern.search(raw)
            if found:
                data[key] = found.group(1).strip().strip("\"'")
    header: dict[str, Any] = {}
    if isinstance(data, dict):
        if data.get("title"):
            header["title"] = str(data["title"]).strip()
        if data.get("docname"):
            header["docname"] = str(data["docname"]).strip()
        header["authors"] = _authors(data.get("author"))
    header["references"] = tuple(references)
    return header, end


def _has_entries(lines: list[str], key_line: str) -> bool:
    """Whether a ``normative:``/``informative:`` key lists anything (an empty list makes no
    References section)."""
    start = lines.index(key_line)
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        return line[:1].isspace()
    return False


def _authors(raw: Any) -> list[Author]:
    entries = raw if isinstance(raw, list) else [raw] if isinstance(raw, dict) else []
    authors: list[Author] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name = entry.get("name") or entry.get("ins")
        if not name:
            continue
        email = entry.get("email")
        organization = entry.get("organization") or entry.get("org")
        authors.append(
            Author(
                name=str(name).strip(),
                email=str(email).strip() if email else None,
                organization=str(organization).strip() if organization else None,
            )
        )
    return authors
