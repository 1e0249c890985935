"""mmark markdown: kramdown-rfc's headings with a TOML title block between ``%%%`` lines,
``.# Abstract`` for the abstract, and ``{mainmatter}`` and ``{backmatter}`` for the parts.

An mmark file shares its name's ending (``.md``) with kramdown-rfc, so it is known by its text
(:func:`is_mmark`). It is read by rewriting those lines, one for one, into kramdown-rfc's (a
YAML header with the title block's ``title`` and ``docName``, ``--- abstract``, ``--- middle``,
``--- back``) and reading the result as kramdown-rfc: every line keeps its place, so the outline
that change attribution places diff lines in is the same text's.
"""

from __future__ import annotations

import json
import re
import textwrap
import tomllib

from ratified_rdf.sources import kramdown
from ratified_rdf.sources.document import Outline, ParsedDocument

_FENCE = "%%%"
_PARTS = {"{mainmatter}": "--- middle", "{backmatter}": "--- back", "{frontmatter}": "--- front"}
_ABSTRACT = re.compile(r"^\.#\s+Abstract\s*$", re.IGNORECASE)
_KEY = re.compile(r'^\s*(title|docname)\s*=\s*"([^"]*)"', re.IGNORECASE | re.MULTILINE)


def is_mmark(text: str) -> bool:
    """Whether ``text`` opens with mmark's ``%%%`` title block."""
    first = text.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
    return first.strip() == _FENCE


def _title_block(block: list[str]) -> dict[str, str]:
    """The title and docName of a TOML title block (lower-case keys); a block that is not
    valid TOML is read line by line for them."""
    found: dict[str, str] = {}
    try:
        data = tomllib.loads(textwrap.dedent("\n".join(block)))
    except tomllib.TOMLDecodeError:
        data = {m.group(1): m.group(2) for m in _KEY.finditer("\n".join(block))}
    for key, value in data.items():
        if key.lower() in ("title", "docname") and isinstance(value, str):
            found[key.lower()] = value
    return found


def as_kramdown(text: str) -> str:
    """``text`` with mmark's own lines rewritten as kramdown-rfc's, line for line (a text
    that is not mmark is returned as it is)."""
    if not is_mmark(text):
        return text
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == _FENCE)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].strip() == _FENCE), None)
    if end is None:
        return text
    header = _title_block(lines[start + 1 : end])
    out = [""] * start + ["---"]
    # The YAML header has the block's lines: its facts first, then blanks.
    facts = [f"{key}: {json.dumps(value)}" for key, value in sorted(header.items())]
    room = end - start - 1
    out += [*(facts[:room] + [""] * room)[:room], "---"]
    for line in lines[end + 1 :]:
        stripped = line.strip()
        if _ABSTRACT.match(stripped):
            out.append("--- abstract")
        elif stripped in _PARTS:
            out.append(_PARTS[stripped])
        else:
            out.append(line)
    return "\n".join(out)


def parse_mmark(text: str, *, published: bool = False) -> ParsedDocument:
    """Parse an mmark document into its title, docname and numbered sections (appendices
    after ``{backmatter}``)."""
    return kramdown.parse_kramdown(as_kramdown(text), published=published)


def mmark_outline(text: str) -> Outline:
    """The outline of an mmark text, by the same reading as :func:`parse_mmark`."""
    return kramdown.outline_and_breaks(as_kramdown(text))


def outline_line(line: str) -> bool:
    """Whether a line, added or removed, can change an mmark text's outline: kramdown-rfc's
    lines, and mmark's own (``.#``, ``{mainmatter}`` and the like)."""
    return kramdown.outline_line(line) or line.startswith(".#") or line.strip() in _PARTS
