"""Which held draft a post, its thread's title or its thread's labels name, for a citation
that names no draft ("Section 5.1", ``{{anchor}}``) in a repository holding several drafts.

A draft is named by its full name (``draft-ietf-pigeon-homing``) or by a short name built
from it as the question gazetteer builds them: the end after the working group
(``homing``), that end with the group before it (``pigeon-homing``) and the end run
together (``rfc8446bis`` for ``rfc8446-bis``). A short name two drafts share names neither.

Where each may stand differs, because a plain word is also an ordinary word ("loss
recovery"):

- in a post's text, a full name anywhere, a short name joining two words or holding a digit
  anywhere, a plain one only before "draft", "document" or "spec" ("the homing draft");
- in a thread's title, the same, and a leading tag: "Homing: Section 5.1", "[homing] …",
  where a tag may shorten the name ("Hom:" is not enough, "Homi:" is: four letters or more)
  when it begins exactly one draft's short name;
- in a thread's labels, a label equal to a full or short name, with or without a leading
  ``-`` or ``draft-``.

Each returns every held draft named; the resolver takes the post's text first, then the
title, then the labels, and reads a citation against a draft only when the names leave
exactly one of the drafts then open (:class:`ratified_rdf.records.discussion.CitationResolver`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ratified_rdf.records.citations import drafts_named

_DRAFT = re.compile(r"draft-(?:[a-z0-9]+-)?([a-z0-9]+)-([a-z0-9-]+)$")
_WORD_BEFORE = re.compile(r"\s+(?:draft|doc|document|spec|specification)\b", re.IGNORECASE)
_TAG = re.compile(r"\s*(?:\[([^\]\n]{2,40})\]|([A-Za-z][A-Za-z0-9 -]{1,39}):)")
SHORTENED_TAG_MIN = 4
"""The fewest letters a title's tag may shorten a short name to ("Proto" for "protocol")."""


def _short_names(draft: str) -> set[str]:
    match = _DRAFT.match(draft)
    if not match:
        return set()
    group, rest = match.groups()
    forms = {rest, f"{group}-{rest}", rest.replace("-", "")}
    return {f for f in forms if len(f) >= 3 and not f.isdigit() and f != group}


class DraftNames:
    """The names of the held ``drafts`` and where each is recognised (see the module
    docstring)."""

    def __init__(self, drafts: Iterable[str]) -> None:
        self.drafts = frozenset(drafts)
        owners: dict[str, set[str]] = {}
        for draft in self.drafts:
            for form in _short_names(draft):
                owners.setdefault(form, set()).add(draft)
        self.short: dict[str, str] = {
            form: next(iter(held)) for form, held in owners.items() if len(held) == 1
        }
        """Each short name to the one draft it names."""
        self._pattern = (
            re.compile(
                r"(?<![\w-])("
                + "|".join(re.escape(f) for f in sorted(self.short, key=len, reverse=True))
                + r")(?![\w-])",
                re.IGNORECASE,
            )
            if self.short
            else None
        )

    def in_text(self, text: str) -> frozenset[str]:
        """The held drafts ``text`` names: by full name, by a distinctive short name
        anywhere, by a plain one before "draft" (or "document", "spec")."""
        named = set(drafts_named(text) & self.drafts)
        if self._pattern is not None:
            for match in self._pattern.finditer(text):
                form = match.group(1).lower()
                distinctive = bool(re.search(r"\d|-", form))
                if distinctive or _WORD_BEFORE.match(text, match.end()):
                    named.add(self.short[form])
        return frozenset(named)

    def in_title(self, title: str) -> frozenset[str]:
        """The held drafts a thread's title names: as text does, or by its leading tag
        ("Homing: …", "[homing] …"), which may shorten a short name."""
        named = set(self.in_text(title))
        tag = _TAG.match(title)
        if tag is not None:
            said = (tag.group(1) or tag.group(2)).strip().lower()
            named |= self._by_label(said) or self._by_prefix(said)
        return frozenset(named)

    def in_labels(self, labels: Iterable[str]) -> frozenset[str]:
        """The held drafts a thread's labels name: a label that is a draft's full or short
        name, with or without a leading ``-`` or ``draft-``."""
        return frozenset(d for label in labels for d in self._by_label(label.strip().lower()))

    def _by_label(self, said: str) -> set[str]:
        said = said.removeprefix("-")
        for form in (said, f"draft-{said}", said.removeprefix("draft-")):
            if form in self.drafts:
                return {form}
            if form in self.short:
                return {self.short[form]}
        return set()

    def _by_prefix(self, said: str) -> set[str]:
        if len(said) < SHORTENED_TAG_MIN or not said.isalpha():
            return set()
        begun = {d for form, d in self.short.items() if form.startswith(said)}
        return begun if len(begun) == 1 else set()
