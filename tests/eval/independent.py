"""An independent reading of the TLS and QUIC corpora, used only to compute the evaluation's
expected answers.

This module deliberately shares no code with ``ratified_rdf``: it reads the git bundle with the
``git`` command line, finds headings with its own simple rules and numbers them itself, so that
an error in the production parser cannot also hide in the expectations it is scored against.

Rules, kept simple on purpose:

* A document is the Markdown file at a tag (``git show <tag>:<file>``). Text before
  ``--- middle`` (the YAML front matter and the abstract) holds no numbered sections.
* A heading is a line starting with one or more ``#`` outside a fenced code block; its level is
  the number of ``#``. A line starting ``%%#`` is one too: the TLS sources write the headings
  of the appendix their protocol data structures are extracted into that way (RFC 8446's
  B.1 Record Layer … B.3.5 Updating Keys). The number is built by counting headings per
  level: ``1``, ``1.2``, ...
  After ``--- back`` the top level counts in letters: ``A``, ``A.1``, ...
* ``{#anchor}`` and ``{: ...}`` attribute blocks are removed from the title; a heading carrying
  ``numbered="false"`` (on its own line or the next) gets no number and does not advance counts.
* In an RFC's text, a top-level back heading the RFC Editor always prints without a letter
  (RFC 7322: Acknowledgments, Contributors, Authors' Addresses, Index) gets no number and does
  not advance counts, whatever the markdown says: RFC 8446 has no appendix F "Contributors".
  A draft's headings are numbered as its markdown says.
* Headings are compared after normalisation: lower case, anchors dropped, punctuation and runs of
  white space folded to one space.

Discussion counts are an approximation the parser cannot know exactly (the production pipeline
links posts to sections with its own rules). :func:`count_posts_mentioning` counts GitHub issue
and pull-request posts (bodies, comments, reviews) that contain the section number as a word,
written between the tag date of the first revision in which the section's text changed and the
tag date of the last one, and inline review comments whose line (found from the comment's place
in the reviewed diff) sits under a heading titled like the section, on a change that landed in
one of those revisions. The evaluation therefore scores counts with a tolerance.

The QUIC corpus (``quicwg/base-drafts``) is read the same way: its six draft series that became
RFCs, their tags ``draft-ietf-quic-<x>-NN`` and the RFC texts ``rfcNNNN.md`` on ``main``. Which
RFC a draft became, when an RFC was published and what it obsoletes are public facts no
repository holds: they are read from ``records/<brain>/manifest.toml`` (checked against the
tags). The DTLS 1.3 corpus (``tlswg/dtls13-spec``, a held-out corpus the router was not tuned
on) is read the same way from its manifest: each ``[[draft]]`` with its ``file`` and tags, and
RFC 9147 at the ``ref`` and ``file`` its ``[[rfc]]`` entry names (the bis draft's first
revision); its default branch is ``master``. Beside headings, this module reads:

* **bylines**: the ``author:`` entries of a draft's YAML front matter at its last tag (each
  entry's ``name``, else its ``ins``);
* **threads**: issue and pull request numbers, titles and states from ``archive.json`` (TLS
  and DTLS; its states ``OPEN``, ``CLOSED`` and ``MERGED`` are compared lower-cased), and pull
  request numbers from the first-parent merge commits of ``main`` ("Merge pull request #N
  from ...") where there is no archive (QUIC);
* **people**: git authors joined into one person when they share an address or a full name,
  with their commits;
* **which commits touched a section**: each non-merge commit's ``-U0`` hunks, added lines
  placed under the heading they follow in the commit's text and removed lines in the
  parent's, the heading compared by its normalised title (a simplification of the pipeline's
  placement: same-titled sections are one here);
* **a section at two tags** (for diffs) and **the revision current on a day** (the newest tag
  dated, by its commit date, no later than that day).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BUNDLE = REPO.parent / "shared" / "corpus" / "tls13-spec" / "tls13-spec.bundle"
CLONE = Path("/tmp") / "ratified-eval-independent.git"
QUIC_BUNDLE = REPO.parent / "shared" / "corpus" / "quic-base-drafts" / "base-drafts.bundle"
QUIC_CLONE = Path("/tmp") / "ratified-eval-independent-quic.git"
DTLS_BUNDLE = REPO.parent / "shared" / "corpus" / "tlswg" / "dtls13-spec" / "dtls13-spec.bundle"
DTLS_CLONE = Path("/tmp") / "ratified-eval-independent-dtls.git"


@dataclass(frozen=True)
class Corpus:
    """One repository: its bundle, the bare clone read from, and the manifest of public facts."""

    name: str
    bundle: Path
    clone: Path
    manifest: Path
    branch: str = "main"


CORPORA: dict[str, Corpus] = {
    "tls": Corpus("tls", BUNDLE, CLONE, REPO / "records" / "tls13" / "manifest.toml"),
    "quic": Corpus("quic", QUIC_BUNDLE, QUIC_CLONE, REPO / "records" / "quic" / "manifest.toml"),
    "dtls": Corpus(
        "dtls",
        DTLS_BUNDLE,
        DTLS_CLONE,
        REPO / "records" / "tlswg" / "dtls13-spec" / "manifest.toml",
        branch="master",
    ),
}

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

_HEADING = re.compile(r"^(?:%%)?(#+)\s+(.*?)\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_ATTR = re.compile(r"\{[#:][^}]*\}")
_NUMBERED_FALSE = re.compile(r"numbered\s*=\s*[\"']?false")
# RFC 7322's back matter the RFC Editor prints unnumbered, by normalised title (``normalise``).
_RFC_UNLETTERED = frozenset(
    {
        "acknowledgments",
        "acknowledgements",
        "acknowledgments and contributors",
        "contributors",
        "contributors and acknowledgments",
        "author s address",
        "authors address",
        "authors addresses",
        "editor s address",
        "editors address",
        "editors addresses",
        "index",
    }
)


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


def git_dir(corpus: str = "tls") -> Path:
    """A bare clone of the bundle, made once (git cannot ``show`` from a bundle directly)."""
    where = CORPORA[corpus]
    if not (where.clone / "HEAD").is_file():
        if not where.bundle.is_file():
            raise FileNotFoundError(
                f"The {corpus.upper()} corpus is missing: {where.bundle} does not exist."
            )
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", str(where.bundle), str(where.clone)],
            check=True,
        )
    return where.clone


def git(*args: str, corpus: str = "tls") -> str:
    """Run git against the corpus's clone and return its standard output."""
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir(corpus)), *args],
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout


@cache
def _show(ref: str, file: str, corpus: str = "tls") -> str:
    return git("show", f"{ref}:{file}", corpus=corpus)


@cache
def headings_at(
    tag: str, file: str, corpus: str = "tls", *, rfc: bool = False
) -> tuple[Heading, ...]:
    """The numbered headings of ``file`` at ``tag``, by this module's own rules; ``rfc``
    when the file is an RFC's text (its unlettered back matter gets no number)."""
    return tuple(
        Heading(number, _ATTR.sub("", raw).strip(), "\n".join(text).strip())
        for _, number, raw, text in _parse(_show(tag, file, corpus), rfc=rfc)
        if number
    )


def _parse(document: str, *, rfc: bool = False) -> list[tuple[int, str, str, list[str]]]:
    """(line index, number or "" when unnumbered, raw title, body lines) of each heading;
    ``rfc``: the document is an RFC's text, read as the RFC Editor prints its back matter."""
    lines = document.splitlines()
    # Sections start at "--- middle"; a document without the marker starts after its front matter.
    start = next((i + 1 for i, line in enumerate(lines) if line.startswith("--- middle")), 0)
    counts: list[int] = []
    back = False
    fenced = False
    found: list[tuple[int, str, str, list[str]]] = []
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
        unnumbered = (
            bool(_NUMBERED_FALSE.search(raw))
            or (following.startswith("{:") and bool(_NUMBERED_FALSE.search(following)))
            or (rfc and back and level == 1 and normalise(raw) in _RFC_UNLETTERED)
        )
        body = []
        if unnumbered:
            found.append((i, "", raw, body))
            continue
        # Count per level: deeper counters reset, a skipped level counts as 0.
        counts = (counts + [0] * level)[:level]
        counts[level - 1] += 1
        first = chr(ord("A") + counts[0] - 1) if back else str(counts[0])
        number = ".".join([first, *(str(n) for n in counts[1:])])
        found.append((i, number, raw, body))
    return found


def revision_tag(series: str, revision: int) -> str:
    """The git tag of one revision, e.g. ``draft-ietf-tls-tls13-21``."""
    return f"{series}-{revision:02d}"


@cache
def manifest(corpus: str) -> dict[str, object]:
    """The brain's manifest of public facts (which RFC each draft became, publication months)."""
    return tomllib.loads(CORPORA[corpus].manifest.read_text(encoding="utf-8"))


@cache
def _tag_numbers(corpus: str) -> dict[str, list[int]]:
    """Revision numbers of every draft series tagged ``<series>-NN`` in the corpus."""
    found: dict[str, list[int]] = {}
    for tag in git("tag", "--list", corpus=corpus).split():
        match = re.fullmatch(r"(draft-[a-z0-9-]+)-(\d{2})", tag)
        if match:
            found.setdefault(match.group(1), []).append(int(match.group(2)))
    return {name: sorted(numbers) for name, numbers in found.items()}


@cache
def quic_series() -> dict[str, tuple[str, int, int, int]]:
    """The QUIC draft series that became RFCs, as in :data:`SERIES`: from the manifest's
    ``became`` facts, checked against the tags (every revision from the first to the last)."""
    tags = _tag_numbers("quic")
    table: dict[str, tuple[str, int, int, int]] = {}
    for draft in manifest("quic")["draft"]:  # type: ignore[union-attr]
        if "became" not in draft:
            continue
        name = draft["name"]
        numbers = tags[name]
        if numbers != list(range(numbers[0], numbers[-1] + 1)):
            raise ValueError(f"The tags of {name} skip a revision: {numbers}.")
        table[name] = (f"{name}.md", numbers[0], numbers[-1], int(draft["became"][3:]))
    return table


@cache
def quic_rfcs() -> dict[int, tuple[str, str]]:
    """The QUIC RFCs: ``rfcNNNN.md`` on ``main`` for every RFC a QUIC series became."""
    files = set(git("ls-tree", "--name-only", "main", corpus="quic").split())
    table: dict[int, tuple[str, str]] = {}
    for _, _, _, rfc in sorted(quic_series().values(), key=lambda row: row[3]):
        if f"rfc{rfc}.md" not in files:
            raise ValueError(f"main holds no rfc{rfc}.md.")
        table[rfc] = ("main", f"rfc{rfc}.md")
    return table


def _entries(corpus: str, key: str) -> list[dict[str, Any]]:
    """The manifest's ``[[draft]]`` or ``[[rfc]]`` tables."""
    found = manifest(corpus).get(key, [])
    return found if isinstance(found, list) else []


@cache
def dtls_series() -> dict[str, tuple[str, int, int, int]]:
    """The DTLS draft series, as in :data:`SERIES`, from the manifest: each ``[[draft]]`` with
    its ``file``, its revisions read from the tags (checked to skip none) and the RFC it
    became (0 for a draft that became none, so no RFC's lineage holds it)."""
    tags = _tag_numbers("dtls")
    table: dict[str, tuple[str, int, int, int]] = {}
    for draft in _entries("dtls", "draft"):
        name = draft["name"]
        numbers = tags[name]
        if numbers != list(range(numbers[0], numbers[-1] + 1)):
            raise ValueError(f"The tags of {name} skip a revision: {numbers}.")
        became_rfc = int(draft["became"][3:]) if "became" in draft else 0
        table[name] = (draft["file"], numbers[0], numbers[-1], became_rfc)
    return table


@cache
def dtls_rfcs() -> dict[int, tuple[str, str]]:
    """The DTLS RFCs: (ref, file) of each ``[[rfc]]`` entry of the manifest, checked to exist."""
    table: dict[int, tuple[str, str]] = {}
    for entry in _entries("dtls", "rfc"):
        ref, file = str(entry["ref"]), str(entry["file"])
        if file not in git("ls-tree", "--name-only", ref, corpus="dtls").split():
            raise ValueError(f"{ref} holds no {file}.")
        table[int(entry["number"])] = (ref, file)
    return table


def _in_dtls_manifest(name: str | int) -> bool:
    """Whether the DTLS manifest names this draft or RFC (read without git)."""
    if not CORPORA["dtls"].manifest.is_file():
        return False
    drafts = {d["name"] for d in _entries("dtls", "draft")}
    rfcs = {int(r["number"]) for r in _entries("dtls", "rfc")}
    return name in drafts or name in rfcs


def corpus_of(name: str | int) -> str:
    """Which corpus a draft series (by name) or an RFC (by number) belongs to."""
    if name in SERIES or name in RFCS:
        return "tls"
    if _in_dtls_manifest(name):
        return "dtls"
    if isinstance(name, str) and name.startswith("draft-") and "-quic-" in name:
        return "quic"
    if name in quic_rfcs():
        return "quic"
    raise KeyError(f"No corpus holds {name!r}.")


def series_row(series: str) -> tuple[str, int, int, int]:
    """(file, first revision, last revision, RFC it became) of a draft series of either corpus."""
    if series in SERIES:
        return SERIES[series]
    return dtls_series()[series] if corpus_of(series) == "dtls" else quic_series()[series]


def rfc_row(rfc: int) -> tuple[str, str]:
    """(ref, file) of an RFC's published text, in either corpus."""
    if rfc in RFCS:
        return RFCS[rfc]
    return dtls_rfcs()[rfc] if corpus_of(rfc) == "dtls" else quic_rfcs()[rfc]


def all_series(corpus: str) -> dict[str, tuple[str, int, int, int]]:
    """Every draft series of a corpus that became an RFC."""
    if corpus == "dtls":
        return {name: row for name, row in dtls_series().items() if row[3]}
    return dict(SERIES) if corpus == "tls" else quic_series()


def all_rfcs(corpus: str) -> dict[int, tuple[str, str]]:
    """Every RFC of a corpus."""
    if corpus == "dtls":
        return dtls_rfcs()
    return dict(RFCS) if corpus == "tls" else quic_rfcs()


def revision_headings(series: str, revision: int) -> tuple[Heading, ...]:
    """Headings of one revision of a draft series."""
    return headings_at(revision_tag(series, revision), series_row(series)[0], corpus_of(series))


def rfc_headings(rfc: int) -> tuple[Heading, ...]:
    """Headings of a published RFC."""
    return headings_at(*rfc_row(rfc), corpus_of(rfc), rfc=True)


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
    rfc = series_row(series)[3]
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
    _, start, last, _ = series_row(series)
    return [revision_tag(series, n) for n in range(start if first is None else first, last + 1)]


def obsoletes(rfc: int) -> list[int]:
    """The RFCs ``rfc`` obsoletes, as its manifest records them."""
    for entry in manifest(corpus_of(rfc))["rfc"]:  # type: ignore[union-attr]
        if entry["number"] == rfc:
            return [int(n) for n in entry.get("obsoletes", [])]
    raise KeyError(f"No manifest records RFC {rfc}.")


def lineage(rfc: int) -> list[str]:
    """The draft series whose revisions lead to ``rfc``, oldest first: those of the RFCs it
    obsoletes, then its own (RFC 9846 descends from RFC 8446's drafts)."""
    earlier = [name for old in obsoletes(rfc) for name in lineage(old)]
    own = [name for name, row in all_series(corpus_of(rfc)).items() if row[3] == rfc]
    return earlier + own


def related_rfcs(rfc: int) -> list[int]:
    """The other RFCs of the same line (one obsoleting the other): where a same-headed section
    is the same section, for a lenient match. QUIC's RFCs are six documents, related to none."""
    corpus = corpus_of(rfc)
    return [
        other
        for other in all_rfcs(corpus)
        if other != rfc and (other in obsoletes(rfc) or rfc in obsoletes(other))
    ]


def _revision_sections(rfc: int, number: str) -> list[tuple[str, Heading]]:
    """(revision, heading) for every revision in the lineage holding a same-headed section."""
    target = section(rfc_headings(rfc), number)
    if target is None:
        return []
    found: list[tuple[str, Heading]] = []
    for series in lineage(rfc):
        _, first, last, _ = series_row(series)
        for n in range(first, last + 1):
            match = by_key(revision_headings(series, n), target.key)
            if match:
                found.append((revision_tag(series, n), match))
    return found


def history(rfc: int, number: str, renamed: bool = False) -> list[str]:
    """Revisions in the RFC's lineage that hold a section headed like RFC ``rfc`` ``number``;
    with ``renamed``, also the revisions before the first of them that hold the same section
    under an earlier heading (:func:`_renamed_before`)."""
    found = [tag for tag, _ in _revision_sections(rfc, number)]
    return [*_renamed_before(rfc, number), *found] if renamed and found else found


def _first_paragraph(text: str) -> str:
    return _squash(text.strip().split("\n\n")[0])


def _renamed_before(rfc: int, number: str) -> list[str]:
    """The revisions, walking back from the first that holds a section headed like RFC
    ``rfc`` ``number``, whose section at the same number opens with the same paragraph as
    the next revision's: the same section under an earlier heading (git shows a rename)."""
    sections = _revision_sections(rfc, number)
    first_tag, held = sections[0]
    for series in lineage(rfc):
        _, first, last, _ = series_row(series)
        numbers = [n for n in range(first, last + 1) if revision_tag(series, n) == first_tag]
        if not numbers:
            continue
        earlier: list[str] = []
        for n in range(numbers[0] - 1, first - 1, -1):
            before = section(revision_headings(series, n), held.number)
            if before is None or _first_paragraph(before.text) != _first_paragraph(held.text):
                break
            earlier.insert(0, revision_tag(series, n))
            held = before
        return earlier
    return []


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
def _tag_date(tag: str, corpus: str = "tls") -> datetime:
    return datetime.fromisoformat(git("log", "-1", "--format=%cI", tag, corpus=corpus).strip())


def tag_date(tag: str) -> datetime:
    """The commit date of a revision's tag (either corpus)."""
    return _tag_date(tag, corpus_of(tag.rsplit("-", 1)[0]))


@cache
def archive(corpus: str = "tls") -> dict[str, list[dict[str, object]]]:
    """The corpus's GitHub archive (``gh-pages:archive.json``); empty where there is none."""
    if corpus == "quic":
        return {"issues": [], "pulls": []}
    return json.loads(git("show", "gh-pages:archive.json", corpus=corpus))


@cache
def _posts(corpus: str = "tls") -> tuple[tuple[datetime, str], ...]:
    posts: list[tuple[datetime, str]] = []
    for item in [*archive(corpus)["issues"], *archive(corpus)["pulls"]]:
        for post in [item, *item.get("comments", []), *item.get("reviews", [])]:
            stamp = post.get("createdAt") or post.get("submittedAt")
            if stamp:
                when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
                posts.append((when, post.get("body") or ""))
    return tuple(posts)


@cache
def _public_to_local(corpus: str) -> dict[str, str]:
    """GitHub commit id -> the bundle's, from ``commit-map.tsv`` beside the bundle (empty when
    there is none: the ids are the same)."""
    path = CORPORA[corpus].bundle.parent / "commit-map.tsv"
    if not path.is_file():
        return {}
    rows = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    return {public: local for local, public in rows}


def _local_commit(corpus: str, oid: object) -> str | None:
    """The bundle's commit for a (possibly abbreviated) GitHub id, when exactly one fits."""
    if not isinstance(oid, str) or not re.fullmatch(r"[0-9a-f]{7,40}", oid):
        return None
    table = _public_to_local(corpus)
    if not table:
        return oid
    found = [local for public, local in table.items() if public.startswith(oid)]
    return found[0] if len(found) == 1 else None


def _position(diff: str, position: int) -> tuple[str, str, int] | None:
    """(side, path, 1-based line) of a review comment's ``originalPosition`` in a one-file
    diff: counted from 1 at the line after the first ``@@`` header, every later line (later
    headers too) one more; a removed line is the old text's, any other the new text's."""
    path, old, new, count, started = "", 0, 0, 0, False
    for line in diff.split("\n"):
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else path
            continue
        header = _HUNK.match(line)
        if header:
            old, new = int(header.group(1)), int(header.group(3))
            if started:
                count += 1
            started = True
            continue
        if not started or line.startswith("\\"):
            continue
        count += 1
        if line.startswith("-"):
            spot = ("old", path, old)
            old += 1
        else:
            spot = ("new", path, new)
            new += 1
            if not line.startswith("+"):
                old += 1
        if count == position:
            return spot
    return None


@cache
def _on_main(corpus: str) -> frozenset[str]:
    """Every commit reachable from main: a reviewed commit elsewhere never landed."""
    return frozenset(git("rev-list", CORPORA[corpus].branch, corpus=corpus).split())


@cache
def review_comments(corpus: str = "tls") -> tuple[tuple[str, str], ...]:
    """(reviewed commit, normalised title of the section its line sits in) of each inline
    review comment
    that can be placed: on a reviewed commit that landed on main, the commit's diff from its
    merge base with the pull request's base, over the Markdown files; a diff of more than one
    file is left out (the archive does not say which file a comment is on); the line's section
    read in the text of its side."""
    placed: list[tuple[str, str]] = []
    for pull in archive(corpus)["pulls"]:
        base = _local_commit(corpus, pull.get("baseRefOid"))
        for review in pull.get("reviews") or []:  # type: ignore[union-attr]
            comments = [c for c in review.get("comments") or [] if c.get("originalPosition")]
            commit = _local_commit(corpus, (review.get("commit") or {}).get("abbreviatedOid"))
            if not comments or not base or not commit or commit not in _on_main(corpus):
                continue
            try:
                start = git("merge-base", base, commit, corpus=corpus).strip()
                diff = git(
                    "diff",
                    "-U3",
                    "--no-color",
                    "--no-renames",
                    start,
                    commit,
                    "--",
                    "*.md",
                    corpus=corpus,
                )
            except subprocess.CalledProcessError:
                continue
            if diff.count("diff --git ") != 1:
                continue
            for comment in comments:
                spot = _position(diff, int(comment["originalPosition"]))
                if spot is None:
                    continue
                side, path, line = spot
                text = _show(start if side == "old" else commit, path, corpus)
                key = _key_at(_heading_keys(text), line - 1)
                if key:
                    placed.append((commit, key))
    return tuple(placed)


@cache
def _tag_history(tag: str, corpus: str) -> frozenset[str]:
    return frozenset(git("rev-list", tag, corpus=corpus).split())


def landed(rfc: int, commit: str) -> str | None:
    """The first revision of the RFC's lineage, in order, whose tag's history holds
    ``commit``: the revision a change landed in."""
    corpus = corpus_of(rfc)
    for series in lineage(rfc):
        for tag in series_revisions(series):
            if commit in _tag_history(tag, corpus):
                return tag
    return None


def count_posts_mentioning(rfc: int, number: str, reviews: bool = False) -> int:
    """Posts about the section while it was changing (approximate): posts naming its
    then-current number, and with ``reviews`` inline review comments on a line of it (the
    pipeline has counted those as discussion since review lines were read; questions.toml's
    older recipe ``count`` leaves them out).

    The window runs from the first revision whose text under the heading changed to the last
    such revision. A post counts when it was written between their tag dates and its body
    holds, as a whole token, the number the section had in the newest revision tagged before
    the post; a review comment counts when its line sits under a heading titled like the
    section and the change it reviewed landed in a revision of the window.
    """
    holders = _revision_sections(rfc, number)
    changed = changed_revisions(rfc, number)
    if not holders or not changed:
        return 0
    start, end = tag_date(changed[0]), tag_date(changed[-1])
    key = holders[-1][1].key
    order = [tag for series in lineage(rfc) for tag in series_revisions(series)]
    first, last = order.index(changed[0]), order.index(changed[-1])
    on_lines = 0
    for commit, found in review_comments(corpus_of(rfc)) if reviews else ():
        where = landed(rfc, commit) if found == key else None
        on_lines += where is not None and first <= order.index(where) <= last
    dated = sorted((tag_date(tag), found.number) for tag, found in holders)
    total = 0
    for when, body in _posts(corpus_of(rfc)):
        if not start <= when <= end:
            continue
        current = [num for date, num in dated if date <= when]
        if not current:
            continue
        pattern = rf"(?<![\w.]){re.escape(current[-1])}(?![\w]|\.\d)"
        if re.search(pattern, body):
            total += 1
    return total + on_lines


# ------------------------------------------------------------------------------ documents


def front_matter_authors(text: str) -> list[str]:
    """The byline: each top-level ``author:`` entry's ``name``, else its ``ins``, in order."""
    entries: list[dict[str, str]] = []
    inside = False
    for line in text.splitlines()[1:]:
        if line.startswith("--- "):  # "--- abstract": the front matter is over
            break
        if not inside:
            inside = bool(re.match(r"^author:\s*$", line))
            continue
        if not line.strip():
            continue
        if not line.startswith((" ", "-")):  # the next top-level key
            break
        item = line.strip()
        if item.startswith("-"):
            entries.append({})
            item = item[1:].strip()
        match = re.match(r"^(\w+):\s*(.*?)\s*$", item)
        if match and entries:
            entries[-1][match.group(1)] = match.group(2).strip('"')
    return [e.get("name") or e["ins"] for e in entries if e.get("name") or e.get("ins")]


def bylines(series: str) -> list[str]:
    """The names on the byline of a draft series' last revision."""
    file, _, last, _ = series_row(series)
    return front_matter_authors(_show(revision_tag(series, last), file, corpus_of(series)))


def _manifest_rfc(rfc: int) -> dict[str, object]:
    for entry in manifest(corpus_of(rfc))["rfc"]:  # type: ignore[union-attr]
        if entry["number"] == rfc:
            return entry
    raise KeyError(f"No manifest records RFC {rfc}.")


def _manifest_draft(corpus: str, name: str) -> dict[str, object] | None:
    drafts = manifest(corpus)["draft"]  # type: ignore[union-attr]
    return next((d for d in drafts if d["name"] == name), None)


def published(rfc: int) -> str:
    """The RFC's publication month, ``2018-08``, from its manifest."""
    return str(_manifest_rfc(rfc)["published"])


def draft_facts(series: str) -> dict[str, object]:
    """What a draft series is, as a document: the RFC it became (the manifest's fact, checked
    against this module's table), when that was published, its byline, its revisions and the
    drafts it replaced."""
    corpus = corpus_of(series)
    _, first, last, rfc = series_row(series)
    entry = _manifest_draft(corpus, series)
    if entry is None or entry.get("became") != f"rfc{rfc}":
        raise ValueError(f"The manifest does not say {series} became RFC {rfc}.")
    numbers = _tag_numbers(corpus)[series]
    if numbers != list(range(first, last + 1)):
        raise ValueError(f"The tags of {series} are {numbers}, not {first}-{last}.")
    replaces = [
        d["name"]
        for d in manifest(corpus)["draft"]  # type: ignore[union-attr]
        if d.get("replaced_by") == series
    ]
    return {
        "name": series,
        "became": rfc,
        "published": published(rfc),
        "editors": bylines(series),
        "revisions_count": last - first + 1,
        "first": revision_tag(series, first),
        "last": revision_tag(series, last),
        "replaces": replaces,
    }


def rfc_facts(rfc: int) -> dict[str, object]:
    """What an RFC is, as a document: its number, month, drafts, the byline of the last
    revision of its own draft, and what it obsoletes or is obsoleted by."""
    corpus = corpus_of(rfc)
    own = [name for name, row in all_series(corpus).items() if row[3] == rfc]
    if len(own) != 1:
        raise ValueError(f"RFC {rfc} has {len(own)} draft series, not one.")
    return {
        "name": f"RFC {rfc}",
        "became": rfc,
        "published": published(rfc),
        "editors": bylines(own[0]),
        "drafts": own,
        "obsoletes": obsoletes(rfc),
        "obsoleted_by": [other for other in all_rfcs(corpus) if rfc in obsoletes(other)],
    }


# -------------------------------------------------------------------------------- threads


@dataclass(frozen=True)
class Thread:
    """An issue or pull request: from the archive, or a pull request from its merge commit."""

    number: int
    title: str
    state: str
    """``open``, ``closed`` or ``merged`` (lower-cased from the archive); ``merged`` for a pull
    request known only from its merge commit."""
    is_pull_request: bool

    @property
    def key(self) -> str:
        """The normalised title, for topic matching."""
        return normalise(self.title)


_MERGE = re.compile(r"^Merge pull request #(\d+) from ")


@cache
def merged_pull_requests(corpus: str) -> dict[int, str]:
    """Pull request number -> merge commit, from the first-parent merges of ``main`` that
    GitHub wrote ("Merge pull request #N from ..."): pull requests merged in the repository
    (where the archive holds that number, only when it holds it as a pull request)."""
    found: dict[int, str] = {}
    log = git(
        "log",
        "--first-parent",
        "--merges",
        "--format=%H%x09%s",
        CORPORA[corpus].branch,
        corpus=corpus,
    )
    pulls = {int(item["number"]) for item in archive(corpus)["pulls"]}  # type: ignore[call-overload]
    # The bundle's own pull request heads, read from the bundle file (its bare clone keeps
    # branches and tags only).
    listed = subprocess.run(
        ["git", "ls-remote", str(CORPORA[corpus].bundle), "refs/pull/*/head"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    heads = {int(n) for n in re.findall(r"refs/pull/(\d+)/head$", listed, re.MULTILINE)}
    for line in log.splitlines():
        sha, _, subject = line.partition("\t")
        match = _MERGE.match(subject)
        # Where an archive exists, a number it holds as an issue (not a pull request) was a
        # fork's pull request, merged there and brought in later: not this repository's. So
        # is a number the bundle holds no pull request head for, where it holds any.
        if (
            match
            and (not pulls or int(match.group(1)) in pulls)
            and (not heads or int(match.group(1)) in heads)
        ):
            found.setdefault(int(match.group(1)), sha)
    return found


@cache
def threads(corpus: str = "tls") -> dict[int, Thread]:
    """Every issue and pull request the corpus's record holds, by number."""
    held = archive(corpus)
    table: dict[int, Thread] = {}
    for kind, is_pull in (("issues", False), ("pulls", True)):
        for item in held[kind]:
            number = int(item["number"])  # type: ignore[call-overload]
            table[number] = Thread(number, str(item["title"]), str(item["state"]).lower(), is_pull)
    if not table:
        for number, sha in merged_pull_requests(corpus).items():
            subject = git("log", "-1", "--format=%b", sha, corpus=corpus).strip()
            table[number] = Thread(
                number, subject.splitlines()[0] if subject else "", "merged", True
            )
    return table


def threads_about(
    corpus: str, words: str, state: str | None = None, pull_requests: bool | None = None
) -> list[Thread]:
    """Threads whose normalised title holds every word of ``words`` (as whole words), in that
    state and of that kind when given."""
    wanted = normalise(words).split()
    return [
        t
        for t in threads(corpus).values()
        if all(w in t.key.split() for w in wanted)
        and (state is None or t.state == state)
        and (pull_requests is None or t.is_pull_request == pull_requests)
    ]


# --------------------------------------------------------------------------------- people


@cache
def commit_authors(corpus: str) -> tuple[tuple[str, str, str], ...]:
    """(commit, author name, author address) of every non-merge commit reachable from main."""
    log = git(
        "log", "--no-merges", "--format=%H%x09%an%x09%ae", CORPORA[corpus].branch, corpus=corpus
    )
    return tuple(tuple(line.split("\t", 2)) for line in log.splitlines())  # type: ignore[misc]


@cache
def people(corpus: str) -> tuple[frozenset[str], ...]:
    """Git identities joined into people: two signatures are one person when they share an
    address (lower-cased) or a full name (case-folded, two words or more), or when one's name
    is a login (one word of six letters or more) that is the other's address's local part."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    locals_: dict[str, list[str]] = {}
    for _, name, email in commit_authors(corpus):
        keys = [f"email:{email.lower()}"]
        if len(name.split()) >= 2:
            keys.append(f"name:{name.casefold()}")
        keys.append(f"sig:{name.casefold()}")
        for other in keys[1:]:
            parent[find(other)] = find(keys[0])
        locals_.setdefault(email.lower().split("@")[0], []).append(keys[0])
    # A login-like signature (one word, six letters or more) is the person whose address has
    # that local part: "ianswett" and Ian Swett <ianswett@...>.
    for key in [k for k in parent if k.startswith("sig:")]:
        login = key[4:]
        if " " not in login and len(login) >= 6:
            for other in locals_.get(login, []):
                parent[find(other)] = find(key)
    groups: dict[str, set[str]] = {}
    for key in list(parent):
        groups.setdefault(find(key), set()).add(key)
    return tuple(frozenset(g) for g in groups.values())


def person_of(corpus: str, alias: str) -> frozenset[str] | None:
    """The person (set of identity keys) one of whose names or addresses is ``alias``."""
    folded = alias.casefold()
    for group in people(corpus):
        for key in group:
            kind, _, value = key.partition(":")
            if value == folded or (kind == "email" and value.split("@")[0] == folded):
                return group
    return None


def commits_by(corpus: str, person: frozenset[str]) -> list[str]:
    """Commits whose author signature belongs to the person."""
    return [
        sha for sha, name, email in commit_authors(corpus) if f"email:{email.lower()}" in person
    ]


def check_aliases(corpus: str, aliases: list[str]) -> frozenset[str]:
    """The one git person the aliases name (names, addresses' local parts, archive logins,
    bylines); raises when an alias is unknown or the names belong to two people."""
    logins = {
        str(item.get("author", "")).casefold()
        for kind in ("issues", "pulls")
        for item in archive(corpus)[kind]
    }
    names = {n.casefold() for series in all_series(corpus) for n in bylines(series)}
    found: set[frozenset[str]] = set()
    for alias in aliases:
        person = person_of(corpus, alias)
        if person is not None:
            found.add(person)
        elif alias.casefold() not in logins | names:
            raise ValueError(f"No one in the {corpus} corpus is called {alias!r}.")
    if len(found) != 1:
        raise ValueError(f"The aliases {aliases} name {len(found)} git people, not one.")
    return found.pop()


def top_committers(corpus: str, n: int) -> list[tuple[frozenset[str], int]]:
    """The ``n`` people with the most non-merge commits reachable from main."""
    counts: dict[frozenset[str], int] = {}
    for _, _, email in commit_authors(corpus):
        person = person_of(corpus, email)
        if person is not None:
            counts[person] = counts.get(person, 0) + 1
    return sorted(counts.items(), key=lambda item: -item[1])[:n]


# -------------------------------------------------------------------- commits on sections

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def _blobs(corpus: str, specs: list[str]) -> dict[str, str]:
    """``rev:path`` -> text, read through one ``git cat-file --batch``; missing ones are empty."""
    out = subprocess.run(
        ["git", "--git-dir", str(git_dir(corpus)), "cat-file", "--batch"],
        input="".join(f"{spec}\n" for spec in specs).encode(),
        capture_output=True,
        check=True,
    ).stdout
    texts: dict[str, str] = {}
    position = 0
    for spec in specs:
        end = out.index(b"\n", position)
        header = out[position:end].decode()
        position = end + 1
        if header.endswith(" missing"):
            texts[spec] = ""
            continue
        size = int(header.split()[2])
        texts[spec] = out[position : position + size].decode("utf-8", "replace")
        position += size + 1
    return texts


def _heading_keys(text: str) -> list[tuple[int, str]]:
    """(line index, normalised title) of every heading of a text, numbered or not."""
    return [(index, normalise(raw)) for index, _, raw, _ in _parse(text)]


def _key_at(headings: list[tuple[int, str]], line: int) -> str | None:
    """The title of the section a 0-based line sits in: the last heading at or before it."""
    found = None
    for index, key in headings:
        if index > line:
            break
        found = key
    return found


@cache
def section_commits(corpus: str, file: str) -> dict[str, tuple[str, frozenset[str]]]:
    """Commit -> (author address, normalised titles of the sections its diff of ``file``
    touched): added lines placed in the commit's text, removed lines in its parent's."""
    log = git(
        "log",
        "--no-merges",
        "--full-history",
        "-p",
        "-U0",
        "--format=@@@%H%x09%P%x09%ae",
        CORPORA[corpus].branch,
        "--",
        file,
        corpus=corpus,
    )
    hunks: dict[str, list[tuple[int, int, int, int]]] = {}
    meta: dict[str, tuple[str, str]] = {}
    current = ""
    for line in log.splitlines():
        if line.startswith("@@@"):
            sha, parents, email = line[3:].split("\t")
            current = sha
            meta[sha] = (parents.split()[0] if parents else "", email)
            hunks[sha] = []
            continue
        match = _HUNK.match(line)
        if match and current:
            a, b, c, d = match.groups()
            hunks[current].append((int(a), int(b or 1), int(c), int(d or 1)))
    specs = sorted(
        {f"{sha}:{file}" for sha in meta} | {f"{p}:{file}" for p, _ in meta.values() if p}
    )
    texts = _blobs(corpus, specs)
    result: dict[str, tuple[str, frozenset[str]]] = {}
    for sha, (parent, email) in meta.items():
        new = _heading_keys(texts.get(f"{sha}:{file}", ""))
        old = _heading_keys(texts.get(f"{parent}:{file}", "")) if parent else []
        keys: set[str] = set()
        for a, b, c, d in hunks[sha]:
            keys.update(k for k in (_key_at(old, a - 1 + i) for i in range(b)) if k)
            keys.update(k for k in (_key_at(new, c - 1 + i) for i in range(d)) if k)
        result[sha] = (email, frozenset(keys))
    return result


def commits_on_section(rfc: int, number: str) -> list[str]:
    """Commits to the files of the RFC's lineage whose diff touched a section headed like RFC
    ``rfc`` section ``number`` (by normalised title)."""
    target = section(rfc_headings(rfc), number)
    if target is None:
        raise ValueError(f"RFC {rfc} has no section {number}.")
    corpus = corpus_of(rfc)
    found: list[str] = []
    for series in lineage(rfc):
        for sha, (_, keys) in section_commits(corpus, series_row(series)[0]).items():
            if target.key in keys and sha not in found:
                found.append(sha)
    return found


def person_changed_section(rfc: int, number: str, aliases: list[str]) -> int:
    """How many commits of the person the aliases name touched RFC ``rfc`` ``number``."""
    corpus = corpus_of(rfc)
    person = check_aliases(corpus, aliases)
    mine = set(commits_by(corpus, person))
    return sum(sha in mine for sha in commits_on_section(rfc, number))


@cache
def _merge_commits(corpus: str) -> dict[int, frozenset[str]]:
    """Pull request number -> the commits its first-parent merge brought in (``M^1..M^2``)."""
    found: dict[int, frozenset[str]] = {}
    for number, sha in merged_pull_requests(corpus).items():
        brought = git("rev-list", f"{sha}^1..{sha}^2", corpus=corpus).split()
        found[number] = frozenset(brought)
    return found


def pull_requests_on_section(rfc: int, number: str) -> list[int]:
    """Pull requests (merged on main's first-parent line) one of whose commits touched a
    section headed like RFC ``rfc`` section ``number``."""
    touched = set(commits_on_section(rfc, number))
    return sorted(n for n, brought in _merge_commits(corpus_of(rfc)).items() if brought & touched)


# ------------------------------------------------------------------- sections over time


def section_pair(series: str, older: int, newer: int, number: str) -> tuple[Heading, Heading]:
    """A section of revision ``older`` and the same-titled section of revision ``newer``."""
    old = section(revision_headings(series, older), number)
    if old is None:
        raise ValueError(f"{revision_tag(series, older)} has no section {number}.")
    new = by_key(revision_headings(series, newer), old.key)
    if new is None:
        raise ValueError(f"{revision_tag(series, newer)} has no section titled {old.title!r}.")
    return old, new


def revision_on_day(rfc: int, number: str, day: str, margin_days: int = 4) -> str:
    """The revision of the RFC's lineage current on ``day`` (the last, in revision order,
    tagged no later than it) when it holds a section titled like RFC ``rfc`` ``number``.
    Raises when the day lies within ``margin_days`` of a tag (where time zones and dates could
    disagree), when tag dates run backwards around it (a later revision tagged on an earlier
    commit), when the revision's RFC was already published that month (the RFC is then the
    current text), or when that revision holds no such section."""
    target = section(rfc_headings(rfc), number)
    if target is None:
        raise ValueError(f"RFC {rfc} has no section {number}.")
    when = datetime.fromisoformat(day).date()
    ordered = [
        (tag_date(tag).date(), tag) for series in lineage(rfc) for tag in series_revisions(series)
    ]
    for date, tag in ordered:
        if abs((date - when).days) < margin_days:
            raise ValueError(f"{day} is within {margin_days} days of {tag} ({date}).")
    dates = [date for date, _ in ordered]
    for i in range(1, len(dates)):
        # A tag dated before the one before it: which was current is not plain from the tag
        # dates from there to the next revision (the pipeline spreads such a window evenly).
        if dates[i] < max(dates[:i]):
            end = dates[i + 1] if i + 1 < len(dates) else when
            if min(dates[i], dates[i - 1]) <= when <= end:
                raise ValueError(f"Tag dates around {day} run backwards; choose another day.")
    out = [date <= when for date in dates]
    if not any(out):
        raise ValueError(f"No revision of RFC {rfc}'s lineage was out on {day}.")
    current = [tag for (_, tag), done in zip(ordered, out, strict=True) if done]
    series, _, revision = current[-1].rpartition("-")
    became_rfc = series_row(series)[3]
    if day[:7] >= published(became_rfc):
        raise ValueError(f"On {day} RFC {became_rfc} was out, not {current[-1]}.")
    if by_key(revision_headings(series, int(revision)), target.key) is None:
        raise ValueError(f"{current[-1]} has no section titled {target.title!r}.")
    return current[-1]


if __name__ == "__main__":
    # A quick look at one document's headings: python tests/eval/independent.py TAG FILE
    for h in headings_at(sys.argv[1], sys.argv[2]):
        print(h.number, h.title)
