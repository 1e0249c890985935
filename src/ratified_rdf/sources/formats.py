"""The document formats a brain reads, one reader each, chosen by the file's name.

Each format is one module (:mod:`~ratified_rdf.sources.kramdown`,
:mod:`~ratified_rdf.sources.mmark`, :mod:`~ratified_rdf.sources.xml2rfc`,
:mod:`~ratified_rdf.sources.rfc_text`) giving two things:
a full read of a text into a :class:`ParsedDocument`, and a quick outline of the same text (its
headings with their lines, :data:`Outline`), which change attribution places each commit's
diff lines in. The two agree on every section they both find, so a change is credited, by
position, to the section the revision holds. A new format is one more module and one entry in
:data:`FORMATS`. A format whose files share their name's ending with another's (mmark's ``.md``
with kramdown-rfc's) is known by its text instead (:attr:`DocumentFormat.sniff`): the format
the name calls for hands such a text to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TypeVar

from ratified_rdf.sources import mmark, xml2rfc
from ratified_rdf.sources.document import Outline, ParsedDocument, ParseError
from ratified_rdf.sources.kramdown import outline_and_breaks, parse_kramdown
from ratified_rdf.sources.rfc_text import parse_rfc_text, rfc_text_outline
from ratified_rdf.sources.xml2rfc import parse_xml2rfc, xml2rfc_outline

__all__ = ["FORMATS", "DocumentFormat", "format_of", "parse_document"]


@dataclass(frozen=True)
class DocumentFormat:
    """One document format: the file names it is chosen for and what reads it."""

    name: str
    suffixes: tuple[str, ...]
    """File name endings (lower case, with the dot) that are in this format."""
    parse: Callable[[str], ParsedDocument]
    """The full read; raises :class:`ParseError` for a text it cannot read."""
    outline: Callable[[str], Outline]
    """Headings with their 0-based lines, and the lines where a section ends with no other
    starting; empty for a text it cannot read (never raises for bad input)."""
    outline_line: Callable[[str], bool] | None
    """Whether a line a commit added or removed can change the outline; None when any line
    can. When none of a change's lines can, and the text's outline is
    :attr:`~ratified_rdf.sources.document.Outline.fixed`, the new text's outline is the old
    one's, moved by the change's hunks, and the new text need not be read."""
    parse_published: Callable[[str], ParsedDocument] | None = None
    """The full read of an RFC's own text where it differs from :attr:`parse` (kramdown: the
    RFC Editor's unnumbered back matter gets no appendix letter); None where it does not."""
    sniff: Callable[[str], bool] | None = None
    """For a format chosen by its text, not its name (its :attr:`suffixes` empty): whether a
    text is in it."""


_T = TypeVar("_T")


def _or_sniffed(
    own: Callable[[str], _T], theirs: Callable[[DocumentFormat], Callable[[str], _T]]
) -> Callable[[str], _T]:
    """``own``, unless a format known by its text (:attr:`DocumentFormat.sniff`) knows the
    text: then that format's reader, as ``theirs`` picks it."""

    def read(text: str) -> _T:
        other = next((f for f in FORMATS.values() if f.sniff is not None and f.sniff(text)), None)
        return own(text) if other is None else theirs(other)(text)

    return read


FORMATS: dict[str, DocumentFormat] = {
    "kramdown": DocumentFormat(
        name="kramdown",
        suffixes=(".md", ".mkd", ".markdown"),
        parse=_or_sniffed(parse_kramdown, lambda f: f.parse),
        outline=_or_sniffed(outline_and_breaks, lambda f: f.outline),
        # mmark's own lines (``.#``, ``{backmatter}``) can change an outline too.
        outline_line=mmark.outline_line,
        parse_published=_or_sniffed(
            functools.partial(parse_kramdown, published=True),
            lambda f: f.parse_published or f.parse,
        ),
    ),
    "mmark": DocumentFormat(
        name="mmark",
        suffixes=(),
        parse=mmark.parse_mmark,
        outline=mmark.mmark_outline,
        outline_line=mmark.outline_line,
        parse_published=functools.partial(mmark.parse_mmark, published=True),
        sniff=mmark.is_mmark,
    ),
    "xml2rfc": DocumentFormat(
        name="xml2rfc",
        suffixes=(".xml",),
        parse=parse_xml2rfc,
        parse_published=functools.partial(parse_xml2rfc, published=True),
        outline=xml2rfc_outline,
        outline_line=xml2rfc.outline_line,
    ),
    "text": DocumentFormat(
        name="text",
        suffixes=(".txt",),
        parse=parse_rfc_text,
        outline=rfc_text_outline,
        # A heading is known by the blank lines around it: any line can make or unmake one.
        outline_line=None,
    ),
}
"""Every format read, by name."""


@functools.lru_cache(maxsize=1024)
def format_of(path: str) -> DocumentFormat | None:
    """The format a file is in, by its name's ending; None when no reader reads it (asked for
    every line of a history's diffs, so the answer is kept)."""
    suffix = PurePosixPath(path).suffix.lower()
    return next((f for f in FORMATS.values() if suffix in f.suffixes), None)


def parse_document(path: str, text: str, *, published: bool = False) -> ParsedDocument:
    """Parse ``text`` with the reader its file name calls for; ``published`` when it is an
    RFC's own text (read as the RFC prints it)."""
    found = format_of(path)
    if found is None:
        known = ", ".join(s for f in FORMATS.values() for s in f.suffixes)
        raise ParseError(
            f"{path}: no reader reads '{PurePosixPath(path).suffix}' files; name the file "
            f"with one of {known}."
        )
    if published and found.parse_published is not None:
        return found.parse_published(text)
    return found.parse(text)
