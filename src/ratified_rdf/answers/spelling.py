"""One-letter typos mended before a question is routed: "pull requst 1169", "revisons of".

A word is mended only when all of these hold: it has five letters or more; it is not itself a
word the router knows (a cue word, a heading word, a stop word) nor a person's name or login,
nor a known word's plural ("numbers" is no typo of "number"); and exactly one known word is
one edit away (a letter added, dropped, changed, or two neighbours swapped). The known words
are the routers' cue words and every word of the brain's section headings. Lookups use the
symmetric-delete index: each known word is filed under itself and every string one deletion
away, so mending a word costs a few dictionary lookups.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ratified_rdf.answers.heading_search import STOP_WORDS

# fmt: off
CUE_WORDS = frozenset({
    "about", "argued", "argument", "author", "authors", "became", "become", "between", "chain",
    "change", "changed", "changes", "changing", "closed", "comment", "comments", "commit",
    "commits", "compare", "compared", "contributed", "contribution", "contributors",
    "conversation", "could", "count", "covered", "covers", "debate", "debated", "defined",
    "described", "difference", "differences", "different", "discuss", "discussed", "discussion",
    "discussions", "earlier", "edited", "editor", "editors", "enumerate", "evolution", "evolve",
    "evolved", "expert", "experts", "follow", "following", "histories", "history", "involved",
    "issue", "issues", "merged", "messages", "modified", "number", "obsolete", "obsoleted",
    "obsoletes", "participants", "people", "posts", "previous", "publication", "published",
    "pull", "rationale", "reasoning", "replaced", "replaces", "request", "requests", "revision",
    "revisions", "section", "sections", "should", "specified", "steps", "still", "talked",
    "thread", "threads", "timeline", "timeout", "touched", "version", "versions", "where",
    "which", "while", "would", "written", "wrote",
})
# fmt: on
"""The words of the router's cues that people misspell."""

_WORD = re.compile(r"[A-Za-z]+")


def _deletes(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are one insertion, deletion, substitution or swap of two
    neighbouring letters apart."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return True
        return (
            len(diffs) == 2
            and diffs[1] == diffs[0] + 1
            and a[diffs[0]] == b[diffs[1]]
            and a[diffs[1]] == b[diffs[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    return any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


class Speller:
    """Mends one-letter typos against a fixed vocabulary (see the module docstring)."""

    def __init__(self, words: Iterable[str], protected: Iterable[str] = ()) -> None:
        self.known = frozenset(w.casefold() for w in words if len(w) >= 4)
        self.protected = frozenset(w.casefold() for w in protected) | STOP_WORDS
        self._index: dict[str, set[str]] = {}
        for word in self.known:
            for key in (word, *_deletes(word)):
                self._index.setdefault(key, set()).add(word)

    def mend(self, text: str) -> str:
        """``text`` with each word that is one typo from exactly one known word replaced."""
        return _WORD.sub(self._mend_match, text)

    def _mend_match(self, match: re.Match[str]) -> str:
        word = match.group(0)
        lower = word.casefold()
        if len(lower) < 5 or lower in self.known or lower in self.protected:
            return word
        if lower.endswith("s") and lower[:-1] in self.known:
            return word  # a plural ("numbers") is the word it is one letter from, not a typo
        found: set[str] = set(self._index.get(lower, ()))
        for key in _deletes(lower):
            found |= self._index.get(key, set())
        found.discard(lower)
        # Two deletions can meet from two edits apart: keep the words truly one edit away.
        found = {known for known in found if _one_edit(lower, known)}
        if len(found) != 1:
            return word
        (fixed,) = found
        return fixed.upper() if word.isupper() else fixed
