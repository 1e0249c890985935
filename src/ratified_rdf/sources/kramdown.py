"""Reader for kramdown-rfc markdown, the format every TLS 1.3 revision was written in.

Real files are messy, so the reader is deliberately tolerant: code fences may be indented or
left unbalanced (revision -18 of draft-ietf-tls-tls13 opens one with four spaces and closes it at
column 0), figures contain lines that look like headings, and headings carry ``{#anchor}`` or
``{:numbered="false"}`` attributes inline or on the next line.
"""

from __future__ import annotations

import bisect
import functools
import re
from typing import TYPE_CHECKING, Any, Final

import yaml

from ratified_rdf.sources.document import (
    Author,
    Outline,
    OutlineHeading,
    ParsedDocument,
    ParseError,
    RawHeading,
    assemble_sections,
)

_FENCE = re.compile(r"^\s*(~{3,}|`{3,})")
# tls13-spec marks appendix B headings "%%## Record Layer": its build script expands them into
# real headings, so they are headings of the published text too. Only the opening is a regular
# expression: the title and its optional closing run of "#" are cut by :func:`_heading`.
# Any blank after the hashes, a no-break space included: an editor that types one writes a
# heading all the same, and dropping it would renumber every later section.
_HEADING_START = re.compile(r"(?:%%)?(#{1,6})\s")
# A setext heading's underline: a run of "=" (level 1) or of two "-" or more (level 2; a lone
# "-" is taken for an empty list item) from column 0.
_UNDERLINE = re.compile(r"^(?:=+|-{2,})[ \t]*$")
_IAL_LINE = re.compile(r"^\{:(.*)\}\s*$")
# (?<!\s): a match never starts inside a run of blanks (the leftmost one starts where the run
# does), so a long run is not re-scanned from each of its positions.
_INLINE_IAL = re.compile(r"(?<!\s)\s*\{:?\s*([^{}]*)\}\s*$")
_ANCHOR = re.compile(r"#([A-Za-z_][\w.\-:]*)")
_PART = re.compile(r"^---\s+(\w+)")
_REFERENCE_KEYS = re.compile(r"^(normative|informative|entity):")
_YAML_TITLE = re.compile(r"^title:\s*(.+)$", re.M)
_YAML_DOCNAME = re.compile(r"^docname:\s*(\S+)", re.M)


UNNUMBERED_BACK = frozenset(
    {
        "acknowledgments",
        "acknowledgements",
        "acknowledgments and contributors",
        "contributors",
        "contributors and acknowledgments",
        "author's address",
        "authors' addresses",
        "editor's address",
        "editors' addresses",
        "index",
    }
)
"""Top-level back-matter headings the RFC Editor publishes unnumbered (RFC 7322): never an
appendix letter in an RFC, whatever the markdown says."""


def parse_kramdown(text: str, *, published: bool = False) -> ParsedDocument:
    """Parse a kramdown-rfc document into its title, authors and numbered sections.

    ``published``: the text is an RFC's, whose back matter the RFC Editor ends with
    unnumbered sections (:data:`UNNUMBERED_BACK`, such as Contributors): they get no
    appendix letter even when the markdown leaves them numbered, so no link names a letter
    the RFC does not have."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    header, body_start = _front_matter(lines)
    in_fence = _fence_mask(lines)
    header["references"] = _cited_lists(header.get("references", ()), lines, in_fence, body_start)
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

    underline: int | None = None
    for index in range(body_start, len(lines)):
        line = lines[index]
        if index == underline:  # a setext heading's underline belongs to its heading
            continue
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
                if part == "back" and not references_placed:
                    # Once: a second "--- back" (drafts have them) goes on with the appendices.
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
                if _heading(nxt) is not None and not in_fence[index + 1]:
                    pending_ial = ial.group(1)
                    continue
            heading = _heading(line)
            if heading is None and index + 1 < len(lines) and not in_fence[index + 1]:
                heading = _setext(
                    lines[index - 1] if index > body_start else None, line, lines[index + 1]
                )
                underline = index + 1 if heading is not None else None
            if heading is not None:
                close_current()
                body = []
                current = _heading_fields(*heading, appendix=part == "back")
                if pending_ial is not None:
                    _apply_attributes(current, pending_ial)
                    pending_ial = None
                if (
                    published
                    and part == "back"
                    and current["level"] == 1
                    and current["heading"].lower() in UNNUMBERED_BACK
                ):
                    current["numbered"] = False
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


def heading_outline(text: str) -> list[OutlineHeading]:
    """Every heading :func:`parse_kramdown` makes a section of, with its line, in order (see
    :func:`outline_and_breaks`)."""
    return outline_and_breaks(text)[0]


def outline_and_breaks(text: str) -> Outline:
    """Every heading :func:`parse_kramdown` makes a section of, with its line, in order; and
    the 0-based lines of the part markers after the front matter (``--- back`` and the like),
    where the section above ends without another starting.

    The same reading of the text (front matter, ``--- middle`` and ``--- back``, comments and
    code fences are skipped the same way), without reading the YAML metadata or any section's
    body, and looking only at the lines that can matter (headings, part markers, fences,
    comment marks): fast enough to run on the text of every commit, to place a diff's lines in
    the sections of the text *at that commit*. The outline is not :attr:`Outline.fixed` when
    the body has a setext underline (its title line is no marked line)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    starts: set[int] = set()
    for mark in _OUTLINE_MARKS:
        at_start = mark.startswith("\n")
        at = text.find(mark)
        while at >= 0:
            starts.add(at + 1 if at_start else text.rfind("\n", 0, at) + 1)
            at = text.find(mark, at + 1)
    if text[:1] in ("#", "%", "-", "="):
        starts.add(0)
    lines: dict[int, str] = {}
    line_starts: dict[int, int] = {}
    number, last = 0, 0
    for start in sorted(starts):
        number += text.count("\n", last, start)
        last = start
        end = text.find("\n", start)
        lines[number] = text[start : end if end >= 0 else len(text)]
        line_starts[number] = start
    first = lines.get(0)
    body_start = 0
    if first is not None and first.strip() == "---":
        body_start = next((i for i in sorted(lines) if i > 0 and lines[i].startswith("---")), 0)
        if body_start == 0:
            return Outline([])
    fenced = _fenced_lines(lines)
    part = "middle" if body_start == 0 else "front"
    in_comment = False
    found: list[OutlineHeading] = []
    breaks: list[int] = []
    underlined = False
    for index in sorted(lines):
        if index < body_start or index in fenced:
            continue
        line = lines[index]
        if in_comment or line.lstrip().startswith("<!--"):
            in_comment = "-->" not in line
            continue
        if line.startswith("---"):
            marker = _PART.match(line)
            if marker:
                part = {"back": "back", "middle": "middle"}.get(marker.group(1), "front")
                breaks.append(index)
                continue
        if part == "front" or not line:
            continue
        if line[0] in "=-":
            underlined = underlined or _UNDERLINE.match(line) is not None
            setext = _outline_setext(text, index, line_starts[index], body_start) if index else None
            if setext is not None:
                found.append(OutlineHeading(index - 1, *setext, part == "back"))
            continue
        if line[0] not in "#%":
            continue
        heading = _outline_heading(line)
        if heading is not None:
            found.append(OutlineHeading(index, heading[0], heading[1], part == "back"))
    return Outline(found, breaks, fixed=not underlined)


@functools.lru_cache(maxsize=1 << 16)
def _outline_heading(line: str) -> tuple[int, str] | None:
    """The level and heading text of a heading line (kept: the texts of every commit repeat
    the same heading lines thousands of times)."""
    heading = _heading(line)
    if heading is None:
        return None
    return heading[0], _heading_fields(*heading, appendix=False)["heading"]


def _outline_setext(text: str, index: int, start: int, body_start: int) -> tuple[int, str] | None:
    """The level and heading text of the setext heading whose underline is line ``index``
    (starting at offset ``start`` of ``text``), or None: the lines above it are read from the
    text, as :func:`parse_kramdown` sees them."""
    title_start = text.rfind("\n", 0, start - 1) + 1
    title = text[title_start : start - 1]
    before = None
    if index - 1 > body_start:
        before = text[text.rfind("\n", 0, title_start - 1) + 1 : title_start - 1]
    end = text.find("\n", start)
    setext = _setext(before, title, text[start : end if end >= 0 else len(text)])
    if setext is None:
        return None
    return setext[0], _heading_fields(*setext, appendix=False)["heading"]


# Every line that can change the outline holds one of these: a heading, a part marker or a
# setext underline starts a line; fences and comment marks may be indented (any line holding
# one is looked at).
_OUTLINE_MARKS = ("\n#", "\n%", "\n--", "\n=", "~~~", "```", "<!--", "-->")


def _fenced_lines(lines: dict[int, str]) -> set[int]:
    """The indices, among ``lines``, that :func:`_fence_mask` marks as inside a fence."""
    fences = [index for index in sorted(lines) if _FENCE.match(lines[index])]
    if len(fences) % 2:
        # An unbalanced file: the full rule, on the lines as they are (rare, so not optimised).
        size = max(lines) + 1
        mask = _fence_mask([lines.get(i, "") for i in range(size)])
        return {index for index in lines if mask[index]}
    ordered = sorted(lines)
    inside: set[int] = set()
    for opener, closer in zip(fences[::2], fences[1::2], strict=True):
        first = bisect.bisect_left(ordered, opener)
        inside.update(ordered[first : bisect.bisect_right(ordered, closer, lo=first)])
    return inside


def heading_of(line: str) -> str | None:
    """The heading text of one markdown line (attributes stripped), or None if it is not one.

    Used where only a line is at hand, such as the context line git prints for a diff hunk.
    """
    heading = _heading(line)
    return _heading_fields(*heading, appendix=False)["heading"] if heading else None


def _heading(line: str) -> tuple[int, str] | None:
    """The level and raw title of an ATX heading line (``## Title ##``), or None.

    The title is what the expression ``\\s+(.+?)\\s*#*\\s*$`` would capture after the hashes
    (any Unicode blank, a no-break space included): from the first non-blank to the shortest end
    leaving only blanks, an optional closing run of ``#`` and blanks (a title of blanks only is
    its last blank). It is cut with string methods, because that expression backtracks
    polynomially on a long run of blanks or hashes.
    """
    if line.endswith("\n"):  # as "$" would: a final line break is not part of the line
        line = line[:-1]
    start = _HEADING_START.match(line)
    if start is None or "\n" in line:
        return None
    rest = line[start.end() - 1 :]  # from the blank after the hashes
    first = len(rest) - len(rest.lstrip())
    if first == len(rest):  # blanks only: the title needs a character of its own
        return (len(start.group(1)), rest[-1]) if len(rest) >= 2 else None
    kept = rest.rstrip().rstrip("#").rstrip()
    return len(start.group(1)), rest[first : max(len(kept), first + 1)]


def _setext(before: str | None, line: str, underline: str) -> tuple[int, str] | None:
    """The level and raw title of a setext heading (``Title`` over a run of ``=`` or ``-``),
    or None; ``before`` is the line above the title (None at the start of the body).

    kramdown reads one only after a block boundary (a blank line, a heading, a part marker),
    with the title indented three blanks at most. A title line that the outline would look at
    for another reason (one starting ``#``, ``%``, ``-`` or ``=``, or holding a fence or comment
    mark) is not taken for one: ``--- middle`` and YAML's closing ``---`` are never titles, and
    the full read and the outline agree on every text."""
    if not _UNDERLINE.match(underline) or not _setext_boundary(before):
        return None
    title = line.strip()
    if not title or line.startswith(("    ", "\t")) or _marked(line) or _IAL_LINE.match(line):
        return None
    if title.startswith(_CONFLICT_MARKERS):  # a merge conflict committed as it was
        return None
    return (1 if underline[0] == "=" else 2), title


# git's conflict markers: "<<<<<<< HEAD" over an empty side's "=======" is no heading.
_CONFLICT_MARKERS = ("<<<<<<<", ">>>>>>>", "|||||||")


def _setext_boundary(before: str | None) -> bool:
    """Whether a block boundary is above a line whose previous line is ``before``."""
    return (
        before is None
        or not before.strip()
        or _heading(before) is not None
        or _PART.match(before) is not None
        or _UNDERLINE.match(before) is not None
        or _IAL_LINE.match(before) is not None
    )


def outline_line(line: str) -> bool:
    """Whether a line, added or removed, can change a text's outline: the lines
    :func:`outline_and_breaks` looks at (a heading, part marker or underline at the start; a
    fence or comment mark anywhere), or a carriage return it would read as a line break. A
    setext title line is none of these: an outline with underlines is not fixed."""
    return (
        line.startswith(("#", "%", "---"))
        or _UNDERLINE.match(line) is not None
        or any(mark in line for mark in ("~~~", "```", "<!--", "-->", "\r"))
    )


def _marked(line: str) -> bool:
    """Whether a line holds something :func:`outline_and_breaks` looks at lines for."""
    return line.lstrip()[:1] in ("#", "%", "-", "=") or any(
        mark in line for mark in ("~~~", "```", "<!--", "-->")
    )


_CITED = {"normative": "{{!", "informative": "{{?"}


def _cited_lists(
    listed: tuple[str, ...], lines: list[str], in_fence: list[bool], body_start: int
) -> tuple[str, ...]:
    """The reference lists a document has: those its header fills, and those its text cites
    into (kramdown-rfc files ``{{!RFC8446}}`` under the normative references and
    ``{{?RFC8446}}`` under the informative ones, listed in the header or not)."""
    cited = set(listed)
    for kind, mark in _CITED.items():
        if kind not in cited and any(
            mark in lines[i] and not in_fence[i] for i in range(body_start, len(lines))
        ):
            cited.add(kind)
    return tuple(k for k in dict.fromkeys(("normative", "informative", *listed)) if k in cited)


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


def _heading_fields(level: int, text: str, *, appendix: bool) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "level": level,
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
    the one whose removal balances the file while hiding the fewest lines is taken (the first
    of equals).

    Any fence line closes any open fence, so fences pair up in order and a file is unbalanced
    exactly when it has an odd number of them. Removing any opener (a fence at an even
    position) then balances it: the pairs before it stay, those after it shift by one. So one
    removal always suffices, and the lines each choice hides are counted from running sums of
    the two pairings instead of a re-scan per opener, which was cubic in the fence lines.
    """
    fences = [index for index, line in enumerate(lines) if _FENCE.match(line)]
    if len(fences) % 2 == 0:
        return _scan_fences(lines, set())[0]

    def span(first: int) -> int:
        """Lines hidden by the pair of fences ``first`` and ``first + 1``, both included."""
        return fences[first + 1] - fences[first] + 1

    count = len(fences)
    # before[j]: lines hidden by the pairs (0, 1) … (2j-2, 2j-1) of the scan as it is.
    before = [0]
    for first in range(0, count - 1, 2):
        before.append(before[-1] + span(first))
    # after[i], i odd: lines hidden by the pairs (i, i+1), (i+2, i+3) … once an opener before
    # fence i is removed.
    after = [0] * (count + 1)
    for first in range(count - 2, 0, -2):
        after[first] = after[first + 2] + span(first)
    _hidden, removed = min(
        (before[position // 2] + after[position + 1], fences[position])
        for position in range(0, count, 2)
    )
    return _scan_fences(lines, {removed})[0]


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
    first_at: dict[str, int] = {}
    for index in range(refs, end):
        first_at.setdefault(lines[index], index)
    references = [
        match.group(1)
        for line in lines[refs:end]
        if (match := _REFERENCE_KEYS.match(line)) and _has_entries(lines, first_at[line])
    ]
    try:
        data = _load_yaml(raw)
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


YAML_HEADER_LIMIT: Final = 65_536
"""Characters of YAML metadata (the header before its reference lists) a document may have.
The largest of the TLS 1.3 drafts' headers is 660 characters."""

YAML_DEPTH_LIMIT: Final = 50
"""How deeply the YAML metadata may nest lists and mappings; real headers nest three deep."""


if TYPE_CHECKING:
    from yaml import SafeLoader as _SafeLoader  # libyaml's, when there, has its interface
else:
    _SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _HeaderLoader(_SafeLoader):
    """PyYAML's safe loader (libyaml's where installed), keeping dates as the text written.

    Only the title, docname and authors are read, so a date is never needed, and an impossible
    one (``date: 2017-02-30``) would otherwise stop the whole header with a ValueError."""


_HeaderLoader.add_constructor("tag:yaml.org,2002:timestamp", yaml.SafeLoader.construct_yaml_str)


def _load_yaml(raw: str) -> Any:
    """The YAML metadata of a header, checked before it is built.

    Three shapes are refused with a :class:`ParseError` before any value is constructed: a
    header over :data:`YAML_HEADER_LIMIT` characters, lists and mappings nested deeper than
    :data:`YAML_DEPTH_LIMIT` (libyaml's parser is quadratic in flow nesting and its composer
    recurses on the C stack, which a deep enough header overflows, killing the process), and
    anchors or aliases (which let a few hundred bytes stand for gigabytes of text once written
    out; real front matter never uses them). The check reads parser events one at a time and
    stops at the first refused one, so a hostile header costs no more than its first levels.
    Invalid YAML raises :class:`yaml.YAMLError` as before.
    """
    if len(raw) > YAML_HEADER_LIMIT:
        raise ParseError(
            f"The YAML header is {len(raw):,} characters long, over the limit of "
            f"{YAML_HEADER_LIMIT:,} for kramdown-rfc metadata; shorten it, or move long "
            "lists into the document body."
        )
    if _bracket_depth(raw) > YAML_DEPTH_LIMIT:
        raise _too_deep()
    try:
        _check_events(raw)
    except yaml.YAMLError as error:
        # Some libyaml builds (PyYAML 6.0.4's) stop at a nesting depth of their own, in the
        # scanner, before any event reaches the check: that is the same refusal, not a header
        # that is merely invalid YAML, so it must not fall through to the line-by-line read.
        if "nesting depth" in str(error):
            raise _too_deep() from None
        raise
    try:
        return yaml.load(raw, Loader=_HeaderLoader) or {}
    except (ValueError, RecursionError) as error:
        # A number too long for int() (over 4,300 digits) is a ValueError; nesting is capped
        # above, so a RecursionError would mean the cap is too generous for this interpreter.
        raise ParseError(
            f"The YAML header holds a value that cannot be read ({type(error).__name__}: "
            f"{str(error)[:200]}); fix that value in the header."
        ) from None


def _too_deep() -> ParseError:
    return ParseError(
        f"The YAML header nests lists or mappings more than {YAML_DEPTH_LIMIT} "
        "deep; kramdown-rfc metadata nests a few levels, so fix the header."
    )


def _bracket_depth(raw: str) -> int:
    """The deepest run of unclosed ``[`` and ``{`` in ``raw``, counted on the bare text.

    Quotes and comments are not told apart, so this can only overstate the nesting of flow
    collections, never miss it: it refuses a deep header whatever the YAML library does."""
    depth = deepest = 0
    for char in raw:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}" and depth:
            depth -= 1
    return deepest


def _check_events(raw: str) -> None:
    """Walk the parser's events, refusing anchors, aliases and nesting past the limit."""
    depth = 0
    for event in yaml.parse(raw, Loader=_HeaderLoader):
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ParseError(
                "The YAML header uses an anchor (&) or alias (*), which kramdown-rfc metadata "
                "has no need for and which could expand into gigabytes; write the values out."
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > YAML_DEPTH_LIMIT:
                raise _too_deep()
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _has_entries(lines: list[str], start: int) -> bool:
    """Whether the ``normative:``/``informative:`` key on line ``start`` lists anything (an
    empty list makes no References section)."""
    for index in range(start + 1, len(lines)):
        if lines[index].strip():
            return lines[index][:1].isspace()
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
