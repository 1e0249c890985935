"""What a draft says of other documents: its reference lists, ``updates``/``obsoletes`` and
the sections of other documents its text cites.

kramdown-rfc writes them in the YAML header (``normative:``/``informative:`` lists keyed by
``RFC8446`` or ``I-D.ietf-tls-esni``; ``updates: 8446, 8447``) and in the text ("Section
4.2.11 of [RFC8446]", ``{{RFC8446, Section 4.2.11}}``). Section citations are found by the
same rules the discussion uses (:func:`~ratified_rdf.records.citations.find_citations`), so a
citation here is one a reader can trace to a rule. This module reads markdown; the readers of
the other formats (:mod:`~ratified_rdf.records.references_xml`,
:mod:`~ratified_rdf.records.references_text`) share its names and rules, and
:mod:`~ratified_rdf.records.reference_formats` picks one by the file's format.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict

from ratified_rdf.records.citations import find_citations

__all__ = ["DocumentReferences", "cited_sections", "document_name", "read_references"]


class DocumentReferences(BaseModel):
    """The documents one revision's text names, by the names the brain gives documents
    (``rfc8446``, ``draft-ietf-tls-esni``)."""

    model_config = ConfigDict(frozen=True)

    normative: tuple[str, ...] = ()
    informative: tuple[str, ...] = ()
    updates: tuple[int, ...] = ()
    obsoletes: tuple[int, ...] = ()
    sections: tuple[tuple[str, str], ...] = ()
    """(document, section number) of every section of another RFC or draft the text cites
    (``("rfc8446", "4.2.11")``, ``("draft-ietf-tls-esni", "6.1")``), once each, in the order
    first cited."""


_KEY = re.compile(r"^(normative|informative|updates|obsoletes)\s*:\s*(.*)$")
_ENTRY = re.compile(r"^\s+([!?]?)([A-Za-z][\w.\-]*)\s*:")
_RFC_NAME = re.compile(r"^rfc\s*0*(\d{1,5})$", re.IGNORECASE)
_DRAFT_NAME = re.compile(r"^I-D\.(?:draft-)?([a-z0-9][a-z0-9\-]*?)(?:-\d{2})?$", re.IGNORECASE)
_NUMBER = re.compile(r"\d{1,5}")
# kramdown-rfc's references in the text: {{!RFC8446}} is normative, {{?RFC8446}} informative,
# {{RFC8446}} whatever the header says (informative when it says nothing).
_INLINE = re.compile(r"\{\{\s*([!?]?)\s*(RFC\s*\d{1,5}|I-D\.[A-Za-z0-9.\-]+)", re.IGNORECASE)
# An alias the text cites a document by: {{!TLS13=RFC8446}} in the text, or "TLS13: RFC8446"
# in a reference list; later citations say {{TLS13}}, [TLS13] or "Section 4 of {{TLS13}}".
_INLINE_ALIAS = re.compile(
    r"\{\{\s*([!?]?)\s*([A-Za-z][\w\-]*)\s*=\s*(RFC\s*\d{1,5}|I-D\.[A-Za-z0-9.\-]+)\s*\}\}",
    re.IGNORECASE,
)
_ALIAS_ENTRY = re.compile(r"^\s+([A-Za-z][\w\-]*)\s*:\s*(RFC\s*\d{1,5}|I-D\.[A-Za-z0-9.\-]+)\s*$")
_SEMICOLON = re.compile(r"(\}\}|\]);\s*((?:Section|Appendix)\s)", re.IGNORECASE)
# A kramdown citation wrapped over lines ("{{RFC8446,\nSection 4.2.3}}") is one citation.
_BRACED = re.compile(r"\{\{[^{}\n]*\n[^{}]*\}\}")
# Several sections of one document: "Section 4.4.3 and Section 4.4.4 of {{TLS13}}", "Sections
# 5.4 and E.3 of [RFC8446]": each is cited ("Section 4.4.3 of {{TLS13}}, Section 4.4.4 of …").
_SECTION_NUMBER = r"(?:[0-9]+(?:\.[0-9]+)*|[A-Z](?:\.[0-9]+)*)(?![\w])"
_LISTED = re.compile(
    rf"\b(?:Sections?|Appendix|Appendices)\s+({_SECTION_NUMBER}(?:\s*(?:,|and|,\s*and)\s*"
    rf"(?:(?:Section|Appendix)\s+)?{_SECTION_NUMBER})+)\s+of\s+"
    r"(\[[^\]\n]+\]|\{\{[^{}\n]+\}\}|RFC\s?\d{1,5}\b)"
)
_CITING = re.compile(r"\{\{[^{}\n]*\}\}|\[[^\[\]\n]*\]")


def document_name(key: str) -> str | None:
    """The brain's name for a reference key (``RFC8446`` is ``rfc8446``, ``I-D.ietf-tls-esni``
    ``draft-ietf-tls-esni``); None for anything else (a standard of another body, a URL)."""
    if found := _RFC_NAME.match(key):
        return f"rfc{int(found.group(1))}"
    if found := _DRAFT_NAME.match(key):
        return f"draft-{found.group(1).lower()}"
    return None


def read_references(text: str) -> DocumentReferences:
    """What a kramdown-rfc document's header and text say of other documents."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    end = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].startswith("---")), len(lines))
    lists: dict[str, list[str]] = {"normative": [], "informative": []}
    numbers: dict[str, list[int]] = {"updates": [], "obsoletes": []}
    aliases: dict[str, str] = {}
    key: str | None = None
    indent: int | None = None  # the list's own entries' indent (their fields sit deeper)
    for line in lines[1:end]:
        found = _KEY.match(line)
        if found:
            key, indent, rest = found.group(1), None, found.group(2)
            if key in numbers:
                numbers[key] += [int(n) for n in _NUMBER.findall(rest)]
            continue
        if line and not line[0].isspace():
            key = None  # another top-level key ends the list
            continue
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if key in lists:
            indent = _indent(line) if indent is None else indent
            entry = _ENTRY.match(line)
            if entry and _indent(line) == indent:
                alias = _ALIAS_ENTRY.match(line)
                if alias:
                    aliases[alias.group(1)] = alias.group(2).replace(" ", "")
                name = document_name(alias.group(2).replace(" ", "") if alias else entry.group(2))
                if name is not None:
                    lists[key].append(name)
        elif key in numbers:
            numbers[key] += [int(n) for n in _NUMBER.findall(line)]
    body = "\n".join(lines[end + 1 :]) if end else text
    for mark, alias, cited in _INLINE_ALIAS.findall(body):
        aliases[alias] = cited.replace(" ", "")
        lists["normative" if mark == "!" else "informative"].append(
            document_name(aliases[alias]) or ""
        )
    for mark, cited in _INLINE.findall(body):
        name = document_name(cited.replace(" ", ""))
        if name is not None:
            lists["normative" if mark == "!" else "informative"].append(name)
    sections = cited_sections(body, aliases)
    lists = {kind: [n for n in names if n] for kind, names in lists.items()}
    if lists["normative"]:
        normative = set(lists["normative"])
        lists["informative"] = [n for n in lists["informative"] if n not in normative]
    return DocumentReferences(
        normative=tuple(dict.fromkeys(lists["normative"])),
        informative=tuple(dict.fromkeys(lists["informative"])),
        updates=tuple(dict.fromkeys(numbers["updates"])),
        obsoletes=tuple(dict.fromkeys(numbers["obsoletes"])),
        sections=sections,
    )


# A draft cited by its reference key: "[I-D.ietf-tls-esni]" and "{{I-D.ietf-tls-esni}}" become
# the draft's name, which the citation rules know ("Section 6 of draft-ietf-tls-esni"); in
# "{{I-D.ietf-tls-esni, Section 6}}" the braces stay, as they do around an RFC's key.
_DRAFT_KEY_ALONE = re.compile(
    r"(?:\[|\{\{)\s*[!?]?I-D\.(?:draft-)?([a-z0-9][a-z0-9\-]*?)(?:-\d{2})?\s*(?:\]|\}\})",
    re.IGNORECASE,
)
_DRAFT_KEY = re.compile(r"(\{\{\s*)[!?]?I-D\.(?:draft-)?([a-z0-9][a-z0-9\-]*?)(?:-\d{2})?(?=\s*,)")


def cited_sections(body: str, aliases: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """(document, section number) of every section of another RFC or draft ``body`` cites, in
    the order first cited; ``aliases`` maps the keys the text cites documents by (``TLS13``)
    to what they stand for (``RFC8446``, ``I-D.ietf-tls-esni``). Citations are written as the
    formats write them once rendered: "Section 4.2 of [RFC8446]", "[TLS13], Section 4",
    ``{{RFC8446, Section 4}}``."""
    body = _BRACED.sub(lambda m: " ".join(m.group(0).split()), body)
    body = _LISTED.sub(_each_listed, body)
    if aliases:
        body = _CITING.sub(lambda m: _unaliased(m.group(0), aliases), body)
    body = _DRAFT_KEY_ALONE.sub(lambda m: f"draft-{m.group(1).lower()}", body)
    body = _DRAFT_KEY.sub(lambda m: f"{m.group(1)}draft-{m.group(2).lower()}", body)
    # "{{TLS13}}; Section 9.3" cites as "{{TLS13}}, Section 9.3" does (on the next line too).
    body = _SEMICOLON.sub(r"\1, \2", body)
    found: dict[tuple[str, str], None] = {}
    for citation in find_citations(body):
        if citation.section is None:
            continue
        if citation.rfc is not None:
            found[(f"rfc{citation.rfc}", citation.section)] = None
        elif citation.draft is not None:
            found[(citation.draft, citation.section)] = None
    return tuple(found)


def _each_listed(found: re.Match[str]) -> str:
    """Each section of a list of one document's sections, cited on its own."""
    numbers = re.findall(rf"\b{_SECTION_NUMBER}", found.group(1))
    return ", ".join(
        f"{'Appendix' if n[0].isalpha() else 'Section'} {n} of {found.group(2)}" for n in numbers
    )


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _unaliased(cited: str, aliases: dict[str, str]) -> str:
    """A ``{{…}}`` or ``[…]`` citation with each alias in it replaced by what it stands for."""
    for alias, target in aliases.items():
        cited = re.sub(rf"(?<![\w\-=]){re.escape(alias)}(?![\w\-=])", target, cited)
    return cited
