"""A section's stored text (``rr:text``), rendered for a person to read.

The graph keeps a section's text as its source wrote it: kramdown-rfc markdown for most
drafts (``{{cipher-suites}}`` cross references, ``%%% Hello Messages`` extraction markers,
``{:br}`` attribute lists, indented figures), plain text for RFCs read from their ``.txt``.
This module reads that text into a few kinds of block (headings, paragraphs, lists,
definition lists, quotations, tables, preformatted figures) and writes them as HTML or as
plain text, with cross references turned into readable names.

The text is untrusted (anyone can write a draft): every character of it reaches the HTML
escaped, a link is made only to an ``http(s)`` URL, and a malformed construct (an unclosed
``{{``, a fence that never closes) is shown as the text it is rather than guessed at. It is
a reading aid for the markup these documents use, not a complete kramdown implementation.
A markdown library (markdown-it-py, CommonMark with raw HTML turned off) was weighed: it
would still need kramdown-rfc's ``{{…}}`` references, ``%%%`` markers, ``{: …}`` attribute
lists and definition lists added as plugins or by rewriting the text first, and CommonMark
reads kramdown's indented figures and list continuations differently; this module does just
what these documents need, with tests on hostile input.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Resolver = Callable[[str], tuple[str, str | None] | None]
"""Turns a cross reference's target (``cipher-suites``, ``RFC8446``) into the words to show
and, optionally, a link; ``None`` when it does not know the target."""

RFC_EDITOR = "https://www.rfc-editor.org/rfc/rfc"
DATATRACKER = "https://datatracker.ietf.org/doc/"


@dataclass
class Block:
    """One block of a section's text: ``kind`` is heading, paragraph, pre, list, dl, quote
    or table; ``lines`` hold its inline text (for pre, the lines as written)."""

    kind: str
    lines: list[str] = field(default_factory=list)
    items: list[list[str]] = field(default_factory=list)
    """List items (each its lines); for a dl, term then definition lines; for a table, rows
    of cells."""
    ordered: bool = False
    header: list[str] = field(default_factory=list)


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_ITEM = re.compile(r"^( {0,3})([-*+]|\d{1,9}[.)])\s+(.*)$")
_DEFINITION = re.compile(r"^ {0,3}:\s+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>\s?(.*)$")
_MARKER = re.compile(r"^ {0,3}%%%")
_IAL_LINE = re.compile(r"^ {0,3}\{:[^{}]*\}\s*$|^ {0,3}\{::[^{}]*/?\}\s*$")
_TRAILING_IAL = re.compile(r"\s*\{:[^{}]*\}\s*$|\s*\{#[^{}\s]*\}\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_COMMENT_START = re.compile(r"^ {0,3}(\{::comment\}|<!--)")


def parse(text: str) -> list[Block]:
    """The blocks of a section's text, in order (markers and attribute lists dropped)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").expandtabs(4).split("\n")
    blocks: list[Block] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(Block("paragraph", list(paragraph)))
            paragraph.clear()

    # A closing mark looked for in vain from one line is not found from any later line
    # either: remembering that keeps hostile text (thousands of unclosed fences) linear.
    unclosed: set[str] = set()

    def closing(start: int, mark: str, found: Callable[[str, str], bool]) -> int | None:
        if mark in unclosed:
            return None
        end = next((j for j in range(start, len(lines)) if found(lines[j], mark)), None)
        if end is None:
            unclosed.add(mark)
        return end

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
            i += 1
            continue
        comment = _COMMENT_START.match(line)
        if comment:
            close = "{:/comment}" if comment.group(1).startswith("{") else "-->"
            end = closing(i, close, lambda text, close: close in text)
            if end is not None:
                flush()
                i = end + 1
                continue
        fence = _FENCE.match(line)
        if fence:
            mark = fence.group(1)
            end = closing(i + 1, mark, lambda text, mark: text.strip().startswith(mark))
            if end is not None:
                flush()
                blocks.append(Block("pre", _dedent(lines[i + 1 : end])))
                i = end + 1
                continue
        if _MARKER.match(line) or _IAL_LINE.match(line):
            # %%% marks the structures kramdown-rfc extracts into an appendix; {: …} sets
            # attributes on the block above. Neither is text a reader should see.
            flush()
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            flush()
            blocks.append(Block("heading", [_TRAILING_IAL.sub("", heading.group(2))]))
            i += 1
            continue
        if _indent(line) >= 4 and not paragraph:
            end = i
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) >= 4):
                end += 1
            while end > i and not lines[end - 1].strip():
                end -= 1
            blocks.append(Block("pre", _dedent(lines[i:end])))
            i = end
            continue
        if stripped.startswith("|"):
            flush()
            end = i
            while end < len(lines) and lines[end].strip().startswith("|"):
                end += 1
            blocks.append(_table(lines[i:end]))
            i = end
            continue
        quote = _QUOTE.match(line)
        if quote:
            flush()
            body = []
            while i < len(lines) and lines[i].strip():
                found = _QUOTE.match(lines[i])
                body.append(found.group(1) if found else lines[i].strip())
                i += 1
            blocks.append(Block("quote", body))
            continue
        item = _ITEM.match(line)
        if item and not (paragraph and item.group(2)[0].isdigit()):
            flush()
            i = _list(lines, i, blocks)
            continue
        definition = _DEFINITION.match(line)
        if definition:
            term = paragraph.pop() if paragraph else ""
            flush()
            i = _definition(lines, i, term, blocks)
            continue
        paragraph.append(stripped)
        i += 1
    flush()
    return blocks


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _dedent(lines: list[str]) -> list[str]:
    """Figure lines with their common indentation taken off (kept otherwise, as drawn)."""
    depth = min((_indent(line) for line in lines if line.strip()), default=0)
    return [line[depth:].rstrip() for line in lines]


def _continues(lines: list[str], j: int) -> bool:
    """Whether line ``j`` (after a blank line) still belongs to the item or definition
    above: it is indented, and is not a new item or definition of its own."""
    return j < len(lines) and _indent(lines[j]) >= 2 and bool(lines[j].strip())


def _list(lines: list[str], i: int, blocks: list[Block]) -> int:
    """Read a list starting at line ``i``; return the line after it."""
    first = _ITEM.match(lines[i])
    assert first is not None
    block = Block("list", ordered=first.group(2)[0].isdigit())
    while i < len(lines):
        item = _ITEM.match(lines[i])
        if item is None or item.group(2)[0].isdigit() != block.ordered:
            break
        body = [_TRAILING_IAL.sub("", item.group(3).strip())]
        i += 1
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                if _continues(lines, i + 1) and not _ITEM.match(lines[i + 1]):
                    body.append("")
                    i += 1
                    continue
                break
            if _ITEM.match(line) and _indent(line) <= 3:
                break
            if _MARKER.match(line) or _IAL_LINE.match(line):
                i += 1
                continue
            body.append(line.strip())
            i += 1
        block.items.append(body)
        while i < len(lines) and not lines[i].strip():
            if i + 1 < len(lines) and _ITEM.match(lines[i + 1]):
                i += 1
            else:
                break
    blocks.append(block)
    return i


def _definition(lines: list[str], i: int, term: str, blocks: list[Block]) -> int:
    """Read a definition (``term`` then ``: what it means``) from line ``i``; consecutive
    definitions share one list. Return the line after it."""
    if not blocks or blocks[-1].kind != "dl" or blocks[-1].lines:
        blocks.append(Block("dl"))
    block = blocks[-1]
    found = _DEFINITION.match(lines[i])
    assert found is not None
    body = [found.group(1).strip()]
    i += 1
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            if _continues(lines, i + 1):
                body.append("")
                i += 1
                continue
            break
        if _DEFINITION.match(line) or _IAL_LINE.match(line) or _indent(line) < 2:
            break
        body.append(line.strip())
        i += 1
    block.items.append([term, *body])
    return i


def _cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [cell.strip() for cell in row.split("|")]


def _table(lines: list[str]) -> Block:
    rows = [line for line in lines if line.strip()]
    if len(rows) >= 2 and _TABLE_RULE.match(rows[1]):
        return Block("table", header=_cells(rows[0]), items=[_cells(r) for r in rows[2:]])
    return Block("table", items=[_cells(r) for r in rows if not _TABLE_RULE.match(r)])


# --- inline text ------------------------------------------------------------------------

_INLINE = re.compile(
    r"(?P<xref>\{\{(?P<target>[^{}\n]{1,200})\}\})"
    r"|(?P<code>`(?P<code_text>[^`\n]{1,500})`)"
    r"|(?P<link>\[(?P<link_text>[^\[\]\n]{1,300})\]\((?P<href>[^()\s]{1,500})\))"
    r"|(?P<auto><(?P<auto_url>https?://[^<>\s]{1,500})>)"
    r"|(?P<strong>\*\*(?P<strong_text>[^*\n]{1,300})\*\*)"
    r"|(?P<em>(?<![\w*])\*(?P<em_text>[^*\s](?:[^*\n]{0,300}[^*\s])?)\*(?![\w*]))"
    r"|(?P<ial>\{:[^{}\n]*\})"
    r"|(?P<escape>\\(?P<escaped>[\\`*_{}\[\]()#+\-.!|>]))"
)
_RFC = re.compile(r"^RFC ?(\d{1,5})$", re.IGNORECASE)
_DRAFT = re.compile(r"^I-D\.(?P<name>[A-Za-z0-9][A-Za-z0-9.-]*)$")
_SECTION_OF = re.compile(
    r"^(?P<what>(?:Section|Appendix)s? [A-Za-z0-9.]+(?:(?:, | and | or )[A-Za-z0-9.]+)*) "
    r"(?P<join>of|in) (?P<target>\S+)$",
    re.IGNORECASE,
)


def reference(target: str, resolve: Resolver | None = None) -> tuple[str, str | None]:
    """The words and the link for a kramdown-rfc cross reference ``{{target}}``: an RFC as
    ``RFC 8446`` (linked to its page), a draft by name, ``Section 4 of RFC8446`` kept as
    words, and a section anchor through ``resolve`` (or as its name)."""
    target = target.strip().lstrip("?!").strip()
    within = _SECTION_OF.match(target)
    if within:
        words, link = reference(within.group("target"), resolve)
        return f"{within.group('what')} {within.group('join')} {words}", link
    if resolve is not None:
        known = resolve(target)
        if known is not None:
            return known
    rfc = _RFC.match(target)
    if rfc:
        return f"RFC {int(rfc.group(1))}", f"{RFC_EDITOR}{int(rfc.group(1))}"
    draft = _DRAFT.match(target)
    if draft:
        name = draft.group("name")
        name = name if name.startswith("draft-") else f"draft-{name}"
        return name, f"{DATATRACKER}{name}/"
    return target, None


def _safe_href(url: str) -> str | None:
    """``url`` if a link to it can do no harm: http(s) with a host, or a path on this site."""
    if url.startswith("/") and not url.startswith("//"):
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in {"http", "https"} and parts.netloc else None


def _a(words: str, url: str | None, css: str | None = None) -> str:
    """Words as a link to ``url`` when it is http(s) (the words are the link text), else as
    plain (escaped) words."""
    text = html.escape(words)
    cls = f' class="{css}"' if css else ""
    href = _safe_href(url) if url else None
    if href is None:
        return f"<span{cls}>{text}</span>" if css else text
    if href.startswith("/"):
        return f'<a{cls} href="{html.escape(href)}">{text}</a>'
    return f'<a{cls} href="{html.escape(href)}" rel="noopener noreferrer">{text}</a>'


def inline_html(text: str, resolve: Resolver | None = None) -> str:
    """One run of inline markdown as escaped HTML: references, code, links, emphasis."""
    out: list[str] = []
    last = 0
    for match in _INLINE.finditer(text):
        out.append(html.escape(text[last : match.start()]))
        last = match.end()
        if match.group("xref"):
            words, url = reference(match.group("target"), resolve)
            out.append(_a(words, url, "xref"))
        elif match.group("code"):
            out.append(f"<code>{html.escape(match.group('code_text'))}</code>")
        elif match.group("link"):
            out.append(_a(match.group("link_text"), match.group("href")))
        elif match.group("auto"):
            # A bare URL stays text: link text is always a label, never the address itself.
            out.append(f"<code>{html.escape(match.group('auto_url'))}</code>")
        elif match.group("strong"):
            out.append(f"<strong>{html.escape(match.group('strong_text'))}</strong>")
        elif match.group("em"):
            out.append(f"<em>{html.escape(match.group('em_text'))}</em>")
        elif match.group("escape"):
            out.append(html.escape(match.group("escaped")))
        # An inline attribute list ({: …}) is dropped.
    out.append(html.escape(text[last:]))
    return "".join(out)


def inline_text(text: str, resolve: Resolver | None = None) -> str:
    """One run of inline markdown as plain words (references named, markup dropped)."""
    out: list[str] = []
    last = 0
    for match in _INLINE.finditer(text):
        out.append(text[last : match.start()])
        last = match.end()
        if match.group("xref"):
            out.append(reference(match.group("target"), resolve)[0])
        elif match.group("code"):
            out.append(match.group("code_text"))
        elif match.group("link"):
            out.append(match.group("link_text"))
        elif match.group("auto"):
            out.append(match.group("auto_url"))
        elif match.group("strong"):
            out.append(match.group("strong_text"))
        elif match.group("em"):
            out.append(match.group("em_text"))
        elif match.group("escape"):
            out.append(match.group("escaped"))
    out.append(text[last:])
    return "".join(out)


def _paragraphs_html(lines: list[str], resolve: Resolver | None) -> str:
    """Lines with blank lines between paragraphs, as HTML (a single one without ``<p>``)."""
    groups = [g for g in "\n".join(lines).split("\n\n") if g.strip()]
    rendered = []
    for group in groups:
        if group.startswith(">"):
            quoted = " ".join(line.lstrip(">").strip() for line in group.split("\n"))
            rendered.append(f"<blockquote>{inline_html(quoted, resolve)}</blockquote>")
        else:
            rendered.append(f"<p>{inline_html(' '.join(group.split(chr(10))), resolve)}</p>")
    if len(rendered) == 1 and rendered[0].startswith("<p>"):
        return rendered[0][3:-4]
    return "".join(rendered)


def to_html(text: str, resolve: Resolver | None = None) -> str:
    """A section's text as an HTML fragment (``<div class="section-text">``), every piece of
    the text escaped."""
    parts: list[str] = []
    for block in parse(text):
        if block.kind == "heading":
            parts.append(f"<h3>{inline_html(block.lines[0], resolve)}</h3>")
        elif block.kind == "paragraph":
            parts.append(f"<p>{inline_html(' '.join(block.lines), resolve)}</p>")
        elif block.kind == "pre":
            parts.append(f"<pre>{html.escape(chr(10).join(block.lines))}</pre>")
        elif block.kind == "quote":
            parts.append(f"<blockquote><p>{inline_html(' '.join(block.lines), resolve)}</p>")
            parts.append("</blockquote>")
        elif block.kind == "list":
            tag = "ol" if block.ordered else "ul"
            items = "".join(f"<li>{_paragraphs_html(i, resolve)}</li>" for i in block.items)
            parts.append(f"<{tag}>{items}</{tag}>")
        elif block.kind == "dl":
            entries = "".join(
                f"<dt>{inline_html(item[0], resolve)}</dt>"
                f"<dd>{_paragraphs_html(item[1:], resolve)}</dd>"
                for item in block.items
            )
            parts.append(f"<dl>{entries}</dl>")
        elif block.kind == "table":
            head = "".join(f"<th>{inline_html(c, resolve)}</th>" for c in block.header)
            rows = "".join(
                "<tr>" + "".join(f"<td>{inline_html(c, resolve)}</td>" for c in row) + "</tr>"
                for row in block.items
            )
            thead = f"<thead><tr>{head}</tr></thead>" if head else ""
            parts.append(
                f'<div class="table-wrap"><table>{thead}<tbody>{rows}</tbody></table></div>'
            )
    return f'<div class="section-text">{"".join(parts)}</div>'


def to_text(text: str, resolve: Resolver | None = None) -> str:
    """A section's text as plain text for a terminal: the same blocks as :func:`to_html`,
    references named, markup dropped, figures kept as drawn (indented by four)."""
    parts: list[str] = []
    for block in parse(text):
        if block.kind in {"heading", "paragraph"}:
            parts.append(inline_text(" ".join(block.lines), resolve))
        elif block.kind == "pre":
            parts.append("\n".join(f"    {line}".rstrip() for line in block.lines))
        elif block.kind == "quote":
            parts.append("> " + inline_text(" ".join(block.lines), resolve))
        elif block.kind == "list":
            marks = [f"{n}." if block.ordered else "-" for n in range(1, len(block.items) + 1)]
            parts.append(
                "\n".join(
                    f"{mark} {_joined_text(item, resolve)}"
                    for mark, item in zip(marks, block.items, strict=True)
                )
            )
        elif block.kind == "dl":
            parts.append(
                "\n".join(
                    f"{inline_text(item[0], resolve)}\n    {_joined_text(item[1:], resolve)}"
                    for item in block.items
                )
            )
        elif block.kind == "table":
            rows = [block.header, *block.items] if block.header else block.items
            parts.append(
                "\n".join(" | ".join(inline_text(c, resolve) for c in row) for row in rows)
            )
    return "\n\n".join(parts)


def _joined_text(lines: list[str], resolve: Resolver | None) -> str:
    groups = [g for g in "\n".join(lines).split("\n\n") if g.strip()]
    return "\n    ".join(inline_text(" ".join(g.split("\n")), resolve) for g in groups)


__all__ = [
    "Block",
    "Resolver",
    "inline_html",
    "inline_text",
    "parse",
    "reference",
    "to_html",
    "to_text",
]
