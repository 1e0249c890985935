"""The entities an xml2rfc document declares in its DOCTYPE, expanded safely before parsing.

expat would expand an internal subset's entities itself, without bound (the version the
stdlib links has no amplification limit Python lets a caller set), and would ask for external
ones. So the internal subset is read here instead: every internal entity's expansion is measured
first, from the lengths of the entities it names, without building any text; a document whose
references would expand past :data:`ENTITY_EXPANSION_LIMIT` characters in all is refused. Only
then are the references replaced, in the text, and the subset blanked (its line breaks kept),
so expat sees a document with no declaration to expand and every line where it was.

What is not expanded is never fetched: an external (``SYSTEM`` or ``PUBLIC``) entity is left
out, its reference and address noted; a parameter entity is neither declared nor read.
"""

from __future__ import annotations

import html.entities
import re
from typing import Final

from ratified_rdf.sources.document import ParseError

__all__ = ["ENTITY_DEPTH_LIMIT", "ENTITY_EXPANSION_LIMIT", "expand_entities"]

ENTITY_EXPANSION_LIMIT: Final = 1_000_000
"""How many characters a document's entity references may expand into, over the whole
document. Real drafts' entities (BCP 14 keywords, a version number, a boilerplate
paragraph) expand into a few thousand characters at most."""

ENTITY_DEPTH_LIMIT: Final = 32
"""How deeply entities may name other entities; real drafts' nest one or two deep."""

_PREDEFINED: Final = frozenset({"amp", "lt", "gt", "quot", "apos"})
_NAME = r"[A-Za-z_:][\w.\-:]*"
_DOCTYPE = re.compile(r"<!DOCTYPE\s")
# The DOCTYPE's opening, up to the '[' of its internal subset or its closing '>'.
_DOCTYPE_HEAD = re.compile(r"""<!DOCTYPE\s(?:"[^"]*"|'[^']*'|[^"'\[>])*([\[>])""")
_SUBSET_TOKEN = re.compile(
    r"""
    (?P<blank>\s+)
    | (?P<entity><!ENTITY\s+(?P<parameter>%\s+)?(?P<name>[^\s%;&<>"']+)\s+
        (?:"(?P<double>[^"]*)"|'(?P<single>[^']*)'
        |(?P<external>(?:SYSTEM|PUBLIC)(?:\s+(?:"[^"]*"|'[^']*'))+)(?:\s+NDATA\s+\S+)?)\s*>)
    | (?P<declaration><!(?:"[^"]*"|'[^']*'|[^"'>])*>)
    | (?P<reference>%[^\s;]*;)
    | (?P<end>\]\s*>)
    """,
    re.DOTALL | re.VERBOSE,
)
_QUOTED = re.compile(r"""["']([^"']*)["']\s*$""")
# Where a general entity reference, or a comment or CDATA section (inside which XML expands
# none), starts in the document. Each comment or section is skipped with one search for its
# end, so that a text of unclosed ones is not searched to its end from each of them.
_BODY_TOKEN = re.compile(rf"(<!--)|(<!\[CDATA\[)|&({_NAME});")
_REFERENCE = re.compile(rf"&({_NAME});")
_ANCHOR = re.compile(r"[A-Za-z_][\w.\-]*")


def expand_entities(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with its DOCTYPE's internal subset blanked and every general entity reference
    replaced, and the notes on what was left out (sentences).

    Replaced: internal entities by their expansion (line breaks in it flowed into spaces, so
    that no line moves), undeclared names of the XHTML entity sets by character references,
    external entities by an empty ``<reference>`` of their name (an unresolved reference).
    Noted: external entities, parameter entities, and names nobody declared (left out).
    Kept: the five predefined entities and character references, which expat reads itself.
    Raises :class:`ParseError` for a subset that cannot be read, an entity that names itself,
    nesting past :data:`ENTITY_DEPTH_LIMIT` or an expansion past :data:`ENTITY_EXPANSION_LIMIT`.
    """
    internal: dict[str, str] = {}
    external: dict[str, str] = {}
    notes: dict[str, None] = {}
    start = 0
    root = text.find("<rfc")
    doctype = _DOCTYPE.search(text, 0, root if root >= 0 else len(text))
    if doctype is not None:
        head = _DOCTYPE_HEAD.match(text, doctype.start())
        if head is None:
            raise ParseError(_unreadable(text, doctype.start(), "its DOCTYPE never ends"))
        start = head.end()
        if head.group(1) == "[":
            end = _read_subset(text, head.end(), internal, external, notes)
            # The subset's line breaks stay, so every later line keeps its number.
            breaks = "\n" * text.count("\n", head.end(), end)
            text = text[: head.end()] + breaks + text[end:]
            start = head.end() + len(breaks)
    if "&" not in text[start:]:
        return text, tuple(notes)
    expansion = _Expansion(internal, external, notes)
    pieces = [text[:start]]
    at = copied = start
    while (token := _BODY_TOKEN.search(text, at)) is not None:
        if token.group(3) is None:  # a comment or CDATA section: nothing in it is expanded
            end = text.find("-->" if token.group(1) else "]]>", token.end())
            if end < 0:
                break  # never closed: expat says so
            at = end + 3
            continue
        at = token.end()
        if token.group(3) in _PREDEFINED:
            continue
        pieces += [text[copied : token.start()], expansion.of(token.group(3), 0).replace("\n", " ")]
        copied = at
    pieces.append(text[copied:])
    unfetched = expansion.unfetched_note()
    if unfetched is not None:
        notes.setdefault(unfetched)
    return "".join(pieces), tuple(notes)


def _read_subset(
    text: str,
    start: int,
    internal: dict[str, str],
    external: dict[str, str],
    notes: dict[str, None],
) -> int:
    """Read the internal subset from ``start`` (just after its ``[``) into ``internal`` and
    ``external``; return where its closing ``]`` is. The first declaration of a name holds, as
    XML says. A comment or processing instruction is skipped with one search for its end."""
    at = start
    while at < len(text):
        skipped = _skipped(text, at)
        if skipped is not None:
            at = skipped
            continue
        token = _SUBSET_TOKEN.match(text, at)
        if token is None:
            raise ParseError(
                _unreadable(text, at, "its DOCTYPE holds something that is no declaration")
            )
        if token.group("end") is not None:
            return token.start()
        at = token.end()
        name = token.group("name")
        if token.group("reference") is not None:
            notes.setdefault(
                f"The DOCTYPE names the parameter entity {token.group('reference')}, which was "
                "not read: parameter entities are never read."
            )
        elif name is None or token.group("parameter"):
            continue  # another declaration, or a parameter entity's: for the DTD alone
        elif token.group("external") is not None:
            address = _QUOTED.search(token.group("external"))
            external.setdefault(name, address.group(1) if address else token.group("external"))
        else:
            value = token.group("double")
            internal.setdefault(name, value if value is not None else token.group("single"))
    raise ParseError(_unreadable(text, start, "its DOCTYPE's internal subset never ends"))


def _skipped(text: str, at: int) -> int | None:
    """Where the comment or processing instruction at ``at`` ends (None if none starts there)."""
    for opening, closing in (("<!--", "-->"), ("<?", "?>")):
        if text.startswith(opening, at):
            end = text.find(closing, at + len(opening))
            if end < 0:
                raise ParseError(_unreadable(text, at, f"a {opening} in its DOCTYPE never ends"))
            return end + len(closing)
    return None


class _Expansion:
    """Entity expansions, each measured before it is made and made once."""

    def __init__(
        self, internal: dict[str, str], external: dict[str, str], notes: dict[str, None]
    ) -> None:
        self.internal = internal
        self.external = external
        self.notes = notes
        self.lengths: dict[str, int] = {}
        self.made: dict[str, str] = {}
        self.total = 0
        self.unfetched: list[str] = []
        """The external entities the document names, in order, each once."""

    def unfetched_note(self) -> str | None:
        """One sentence for every external entity the document named (None if it named none)."""
        if not self.unfetched:
            return None
        first = self.unfetched[0]
        if len(self.unfetched) == 1:
            return (
                f"The entity &{first}; refers to {self.external[first]}, which was not fetched; "
                "it stands in the document as an unresolved reference."
            )
        names = ", ".join(f"&{n};" for n in self.unfetched[:3])
        if len(self.unfetched) > 3:
            names += f" and {len(self.unfetched) - 3} more"
        return (
            f"{len(self.unfetched)} external entities ({names}) refer to files that were "
            f"not fetched (such as {self.external[first]}); each stands in the document as an "
            "unresolved reference."
        )

    def of(self, name: str, depth: int) -> str:
        """What a reference to ``name`` in the document becomes (counted against the limit)."""
        text = self._text(name, depth)
        self.total += len(text)
        if self.total > ENTITY_EXPANSION_LIMIT:
            raise _too_large(name)
        return text

    def _text(self, name: str, depth: int) -> str:
        if name in self.made:
            return self.made[name]
        if name in _PREDEFINED:
            return f"&{name};"
        if name in self.internal:
            if self._length(name, ()) > ENTITY_EXPANSION_LIMIT:
                raise _too_large(name)
            value = self.internal[name]
            made = _REFERENCE.sub(lambda found: self._text(found.group(1), depth + 1), value)
        elif name in self.external:
            self.unfetched.append(name)
            # Where the template puts one, in <references>, it reads as the entry "[name]";
            # inside text, a <reference> element renders as nothing.
            made = f'<reference anchor="{name}"/>' if _ANCHOR.fullmatch(name) else ""
        elif name in html.entities.name2codepoint:
            made = f"&#{html.entities.name2codepoint[name]};"
        else:
            self.notes.setdefault(
                f"The entity &{name}; is declared nowhere the reader looks, so it is left out."
            )
            made = ""
        self.made[name] = made
        return made

    def _length(self, name: str, naming: tuple[str, ...]) -> int:
        """How long ``name``'s expansion is, from its parts' lengths (no text is built)."""
        if name in self.lengths:
            return self.lengths[name]
        if name in naming:
            raise ParseError(
                f"The XML's entity &{name}; names itself (through "
                f"{' → '.join(f'&{n};' for n in (*naming, name))}), so it has no expansion; "
                "fix the DOCTYPE."
            )
        if len(naming) >= ENTITY_DEPTH_LIMIT:
            raise ParseError(
                f"The XML's entities name one another more than {ENTITY_DEPTH_LIMIT} deep "
                f"(at &{name};); xml2rfc documents nest them a level or two, so write the text "
                "out instead."
            )
        value = self.internal.get(name)
        if value is None:  # external, XHTML or unknown: short, whatever it becomes
            return len(f"&{name};")
        length = len(value)
        for found in _REFERENCE.finditer(value):
            length += self._length(found.group(1), (*naming, name)) - len(found.group(0))
            if length > ENTITY_EXPANSION_LIMIT:
                raise _too_large(name)
        self.lengths[name] = length
        return length


def _too_large(name: str) -> ParseError:
    return ParseError(
        f"The XML's DOCTYPE declares entities that would expand to more than "
        f"{ENTITY_EXPANSION_LIMIT:,} characters (at &{name};), which is how an entity-expansion "
        'attack ("billion laughs") looks, so the document is refused; write the text out '
        "instead of nesting entities."
    )


def _unreadable(text: str, at: int, what: str) -> str:
    return f"The XML cannot be read: {what} (line {text.count(chr(10), 0, at) + 1}); fix it."
