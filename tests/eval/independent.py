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


def heading_with_words(rfc: int, words: str) -> list[str]:
    """Numbers of the RFC sections whose heading contains every content word of ``words``."""
    wanted = [w for w in normalise(words).split() if w not in _STOP]
    return [h.number for h in rfc_headings(rfc) if all(w in h.key.split() for w in wanted)]


def series_revisions(series: str) -> list[str]:
    """Every revision name of a series, from its first to its last tag."""
    _, first, last, _ = SERIES[series]
    return [revision_tag(series, n) for n in range(first, last + 1)]


def history(rfc: int, number: str, series: str = "draft-ietf-tls-tls13") -> list[str]:
    """Revisions of ``series`` that hold a section headed like RFC ``rfc`` section ``number``."""
    target = section(rfc_headings(rfc), number)
    if target is None:
        return []
    return [
        revision_tag(series, n)
        for n in range(SERIES[series][1], SERIES[series][2] + 1)
        if by_key(revision_headings(series, n), target.key)
    ]


def _squash(text: str) -> str:
    return " ".join(text.split())


def changed_revisions(rfc: int, number: str, series: str = "draft-ietf-tls-tls13") -> list[str]:
    """Revisions in which the text under the matching heading differs from the revision before."""
    target = section(rfc_headings(rfc), number)
    if target is None:
        return []
    changed: list[str] = []
    previous: str | None = None
    for n in range(SERIES[series][1], SERIES[series][2] + 1):
        found = by_key(revision_headings(series, n), target.key)
        text = _squash(found.text) if found else None
        if text is not None and text != previous:
            changed.append(revision_tag(series, n))
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
                posts.append((when, f"{item.get('title', '')}\n{post.get('body') or ''}"))
    return tuple(posts)


def count_posts_mentioning(rfc: int, number: str, series: str = "draft-ietf-tls-tls13") -> int:
    """Posts naming the section number as a word while the section was changing (approximate)."""
    revisions = changed_revisions(rfc, number, series)
    if not revisions:
        return 0
    start, end = _tag_date(revisions[0]), _tag_date(revisions[-1])
    pattern = re.compile(rf"(?<![\w.]){re.escape(number)}(?![\w]|\.\d)")
    return sum(1 for when, text in _posts() if start <= when <= end and pattern.search(text))


if __name__ == "__main__":
    # A quick look at one document's headings: python tests/eval/independent.py TAG FILE
    for h in headings_at(sys.argv[1], sys.argv[2]):
        print(h.number, h.title)
