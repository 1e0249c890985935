"""An independent reading of the TLS corpus, used only to compute the evaluation's expected answers.

This module deliberately shares no code with ``ratified_rdf``: it reads the git bundle with the
``git`` command line, finds headings with its own simple rules and numbers them itself, so that
an error in the production parser cannot also hide in the expectations it is scored against.

Rules, kept simple on purpose:

* A document is the Markdown file at a tag (``git show <tag>:<file>``). Text before
  ``--- middle`` (the YAML front matter and the abstract) holds no numbered sections.
* A heading is a line starting with one or more ``#`` outside a fenced code block; its level is
  the number of ``#``. The number is built by counting headings per level: ``1``, ``1.2``, ...
  After ``--- back`` the top level counts in letters: ``A``, ``A.1``, ...
* ``{#anchor}`` and ``{: ...}`` attribute blocks are removed from the title; a heading carrying
  ``numbered="false"`` (on its own line or the next) gets no number and does not advance counts.
* Headings are compared after normalisation: lower case, anchors dropped, punctuation and runs of
  white space folded to one space.

Discussion counts are an approximation the parser cannot know exactly (the production pipeline
links posts to sections with its own rules). :func:`count_posts_mentioning` counts GitHub issue
and pull-request posts (bodies, comments, reviews) that contain the section number as a word,
written between the tag date of the first revision in which the section's text changed and the
tag date of the last one. The evaluation therefore scores counts with a tolerance.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO.parent / "shared" / "corpus" / "tls13-spec" / "tls13-spec.bundle"
CLONE = Path("/tmp") / "ratified-eval-independent.git"

#: Each draft series: (name, file in the repository, first revision, last revision, RFC it became).
SERIES: dict[str, tuple[str, int, int, int]] = {
    "draft-ietf-tls-tls13": ("draft-ietf-tls-tls13.md", 0, 28, 8446),
    "draft-ietf-tls-rfc8446bis": ("draft-ietf-tls-rfc8446bis.md", 0, 14, 9846),
}
#: Each RFC: (tag, file) where its published text lives.
RFCS: dict[int, tuple[str, str]] = {
    8446: ("as-published", "draft-rescorla-tls-rfc8446-bis.md"),
    9846: ("main", "rfc9846.md"),
}

_HEADING = re.compile(r"^(#+)\s+(.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ATTR = re.compile(r"\{[#:][^}]*\}")
_NUMBERED_FALSE = re.compile(r"numbered\s*=\s*[\"']?false")


@dataclass(frozen=True)
class Heading:
    """One heading of one document: its own number, title and the text under it."""

    number: str
    title: str
    text: str

    @property
    def key(self) -> str:
        """The normalised title used to match a heading across documents."""
        return normalise(self.title)


def normalise(title: str) -> str:
    """Lower case, without attribute blocks, punctuation folded to single spaces."""
    title = _ATTR.sub(" ", title).lower()
    return " ".join(re.sub(r"[^a-z0-9]+", " ", title).split())


def git_dir() -> Path:
    """A bare clone of the bundle, made once (git cannot ``show`` from a bundle directly)."""
    if not (CLONE / "HEAD").is_file():
        if not BUNDLE.is_file():
            raise FileNotFoundError(f"The TLS corpus is missing: {BUNDLE} does not exist.")
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", str(BUNDLE), str(CLONE)],
            check=True,
        )
    return CLONE


def git(*args: str) -> str:
    """Run git against the clone and return its standard output."""
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir()), *args], check=True, capture_output=True, text=True
    )
    return out.stdout


@cache
def headings_at(tag: str, file: str) -> tuple[Heading, ...]:
    """The numbered headings of ``file`` at ``tag``, by this module's own rules."""
    lines = git("show", f"{tag}:{file}").splitlines()
    # Sections start at "--- middle"; a document without the marker starts after its front matter.
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("--- middle")), 0)
    counts: list[int] = []
    back = False
    fenced = False
    found: list[tuple[str, str, list[str]]] = []
    body: list[str] = []
    for i in range(start, len(lines)):
        line = lines[i]
        if _FENCE.match(line):
            fenced = not fenced
        if fenced:
            body.append(line)
            continue
        if line.startswith("--- back"):
            back = True
            counts = []
            continue
        match = _HEADING.match(line)
        if not match:
            body.append(line)
            continue
        level, raw = len(match.group(1)), match.group(2)
        following = lines[i + 1] if i + 1 < len(lines) else ""
        unnumbered = bool(_NUMBERED_FALSE.search(raw)) or (
            following.startswith("{:") and bool(_NUMBERED_FALSE.search(following))
        )
        body = []
        if unnumbered:
            found.append(("", raw, body))
            continue
        # Count per level: deeper counters reset, a skipped level counts as 0.
        counts = (counts + [0] * level)[:level]
        counts[level - 1] += 1
        first = chr(ord("A") + counts[0] - 1) if back else str(counts[0])
        number = ".".join([first, *(str(n) for n in counts[1:])])
        found.append((number, raw, body))
    return tuple(
        Heading(number, _ATTR.sub("", raw).strip(), "\n".join(text).strip())
        for number, raw, text in found
        if number
    )


def revision_tag(series: str, revision: int) -> str:
    """The git tag of one revision, e.g. ``draft-ietf-tls-tls13-21``."""
    return f"{series}-{revision:02d}"


def revision_headings(series: str, revision: int) -> tuple[Heading, ...]:
    """Headings of one revision of a draft series."""
    return headings_at(revision_tag(series, revision), SERIES[series][0])


def rfc_headings(rfc: int) -> tuple[Heading, ...]:
    """Headings of a published RFC."""
    return headings_at(*RFCS[rfc])


def section(headings: tuple[Heading, ...], number: str) -> Heading | None:
    """The heading with this number, if any."""
    return next((h for h in headings if h.number == number), None)


def by_key(headings: tuple[Heading, ...], key: str) -> Heading | None:
    """The first heading whose normalised title equals ``key``."""
    return next((h for h in headings if h.key == key), None)


def became(series: str, revision: int, number: str) -> tuple[int, str] | None:
    """(RFC, section) of the RFC section whose heading equals the draft section's, if one does."""
    source = section(revision_headings(series, revision), number)
    if source is None:
        return None
    rfc = SERIES[series][3]
    target = by_key(rfc_headings(rfc), source.key)
    return (rfc, target.number) if target else None


_STOP = {"the", "a", "an", "of", "and", "this", "way", "work", "look", "like", "does", "why", "is"}


def heading_with_words(rfc: int, words: str) -> str:
    """Number of the one RFC section whose heading equals, or else alone contains, ``words``.

    Raises ``ValueError`` when no heading or more than one fits, so that an ambiguous recipe is
    fixed by naming the heading better, never settled by a silent tie-break.
    """
    key = normalise(words)
    equal = [h.number for h in rfc_headings(rfc) if h.key == key]
    if len(equal) == 1:
        return equal[0]
    wanted = [w for w in key.split() if w not in _STOP]
    hits = [h.number for h in rfc_headings(rfc) if all(w in h.key.split() for w in wanted)]
    if len(equal) > 1 or len(hits) != 1:
        raise ValueError(f"The words {words!r} fit {len(equal) or len(hits)} RFC {rfc} headings.")
    return hits[0]


def series_revisions(series: str, first: int | None = None) -> list[str]:
    """Revision names of a series from ``first`` (default: its first) to its last tag."""
    _, start, last, _ = SERIES[series]
    return [revision_tag(series, n) for n in range(start if first is None else first, last + 1)]


def lineage(rfc: int) -> list[str]:
    """The draft series whose revisions lead to ``rfc``: RFC 9846 descends from RFC 8446's."""
    return [name for name, (_, _, _, became_rfc) in SERIES.items() if became_rfc <= rfc]


def _revision_sections(rfc: int, number: str) -> list[tuple[str, Heading]]:
    """(revision, heading) for every revision in the lineage holding a same-headed section."""
    target = section(rfc_headings(rfc), number)
    if target is None:
        return []
    found: list[tuple[str, Heading]] = []
    for series in lineage(rfc):
        _, first, last, _ = SERIES[series]
        for n in range(first, last + 1):
            match = by_key(revision_headings(series, n), target.key)
            if match:
                found.append((revision_tag(series, n), match))
    return found


def history(rfc: int, number: str) -> list[str]:
    """Revisions in the RFC's lineage that hold a section headed like RFC ``rfc`` ``number``."""
    return [tag for tag, _ in _revision_sections(rfc, number)]


def _squash(text: str) -> str:
    return " ".join(text.split())


def changed_revisions(rfc: int, number: str) -> list[str]:
    """Revisions whose text under the matching heading differs from the previous holder's."""
    changed: list[str] = []
    previous: str | None = None
    for tag, found in _revision_sections(rfc, number):
        text = _squash(found.text)
        if text != previous:
            changed.append(tag)
        previous = text
    return changed


@cache
def _tag_date(tag: str) -> datetime:
    return datetime.fromisoformat(git("log", "-1", "--format=%cI", tag).strip())


@cache
def _posts() -> tuple[tuple[datetime, str], ...]:
    archive = json.loads(git("show", "gh-pages:archive.json"))
    posts: list[tuple[datetime, str]] = []
    for item in [*archive["issues"], *archive["pulls"]]:
        for post in [item, *item.get("comments", []), *item.get("reviews", [])]:
            stamp = post.get("createdAt") or post.get("submittedAt")
            if stamp:
                when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                posts.append((when, post.get("body") or ""))
    return tuple(posts)


def count_posts_mentioning(rfc: int, number: str) -> int:
    """Posts naming the section's then-current number while it was changing (approximate).

    The window runs from the tag date of the first revision whose text under the heading
    changed to the tag date of the last such revision. A post counts when its body holds, as a
    whole token, the number the section had in the newest revision tagged before the post.
    """
    holders = _revision_sections(rfc, number)
    changed = changed_revisions(rfc, number)
    if not holders or not changed:
        return 0
    start, end = _tag_date(changed[0]), _tag_date(changed[-1])
    dated = sorted((_tag_date(tag), found.number) for tag, found in holders)
    total = 0
    for when, body in _posts():
        if not start <= when <= end:
            continue
        current = [num for date, num in dated if date <= when]
        if not current:
            continue
        pattern = rf"(?<![\w.]){re.escape(current[-1])}(?![\w]|\.\d)"
        if re.search(pattern, body):
            total += 1
    return total


if __name__ == "__main__":
    # A quick look at one document's headings: python tests/eval/independent.py TAG FILE
    for h in headings_at(sys.argv[1], sys.argv[2]):
        print(h.number, h.title)
