"""Where each inline review comment sits: the independent checker's reading, from git and the
GitHub archive alone (nothing from ``ratified_rdf`` is imported).

A review comment in the archive carries ``originalPosition``: its line's place in the diff of
the pull request as it was reviewed, counted GitHub's way (1 is the line after the first ``@@``
header; every later line of the diff, a later ``@@`` header included, is one more). The review
names the commit it reviewed (an abbreviated id) and the pull request its base.

For each such comment :func:`place_review_comments`:

1. resolves the reviewed commit and the base to the repository's ids (a unique prefix among the
   GitHub ids of ``commit-map.tsv``; as they are when there is no map);
2. takes ``git diff <merge base> <reviewed commit>`` over the document files (three lines of
   context, as GitHub shows); a diff over more than one file is left out, since the archive
   does not say which file a comment is on;
3. walks the diff to the position: a removed line is a line of the merge base's text, any
   other a line of the reviewed commit's;
4. finds that line's section in that text (:func:`parse_sections`), then that section in the
   revision the change landed in (the first of the draft's tags holding the reviewed commit,
   else the pull request's merge commit) with :func:`match_section`.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tests.independent.attribution import Attribution, match_section, parse_sections

__all__ = ["ReviewPlace", "place_review_comments"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


@dataclass(frozen=True)
class ReviewPlace:
    """One placed review comment: its pull request, when it was written, the start of its
    text, the revision its change landed in and the section's label there."""

    pull: int
    created: str
    body_start: str
    revision: str
    section: str


def _git(git_dir: Path, *args: str) -> str | None:
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), *args], capture_output=True, check=False
    )
    return done.stdout.decode("utf-8", errors="replace") if done.returncode == 0 else None


def _diff_line(diff: str, position: int) -> tuple[str, str, int] | None:
    """``(side, path, 1-based line)`` of diff position ``position``; None when out of range."""
    lines = diff.split("\n")
    path, old, new, count, started = "", 0, 0, 0, False
    for line in lines:
        if not started:
            if line.startswith("+++ b/"):
                path = line[6:]
            hunk = _HUNK.match(line)
            if hunk:
                old, new, started = int(hunk.group(1)), int(hunk.group(2)), True
            continue
        count += 1
        hunk = _HUNK.match(line)
        if hunk:
            if count == position:
                return None  # a comment on a hunk header has no line
            old, new = int(hunk.group(1)), int(hunk.group(2))
            continue
        if line.startswith("\\"):
            count -= 1  # "\ No newline at end of file" takes no position
            continue
        if count == position:
            if line.startswith("-"):
                return "old", path, old
            return "new", path, new
        if line.startswith("-"):
            old += 1
        elif line.startswith("+"):
            new += 1
        else:
            old, new = old + 1, new + 1
    return None


_HISTORIES: dict[tuple[str, str], frozenset[str]] = {}


def _landed(result: Attribution, draft: str, commit: str, git_dir: Path) -> str | None:
    """The first of ``draft``'s tags (in order of NN) whose history holds ``commit``."""
    for tag in result.revisions.get(draft, ()):
        key = (str(git_dir), tag)
        if key not in _HISTORIES:
            listed = _git(git_dir, "rev-list", f"{tag}^{{commit}}", "--") or ""
            _HISTORIES[key] = frozenset(listed.split())
        if commit in _HISTORIES[key]:
            return tag
    return None


def place_review_comments(
    git_dir: Path,
    archive: dict,
    result: Attribution,
    public_ids: dict[str, str],
    files: tuple[str, ...] = ("*.md",),
    draft_of: dict[str, str] | None = None,
    rfc_texts: dict[str, tuple[str, str, str]] | None = None,
) -> tuple[list[ReviewPlace], int]:
    """Every inline review comment of ``archive`` that can be placed, and how many could
    not. ``public_ids``: repository id → GitHub id (empty when they are the same);
    ``draft_of``: a document file's name → its draft (by default the file's own stem);
    ``rfc_texts``: a file's name → (RFC, ref, path) of an RFC text read with
    ``attribute(texts=…)``: a comment on a change no tag of the draft holds, in that ref's
    history, lands in that text."""
    local_of = {public: local for local, public in public_ids.items()}

    def local(oid: str | None) -> str | None:
        if not oid or not _HEX.match(oid):
            return None
        if not local_of:
            return oid
        found = [p for p in local_of if p.startswith(oid)]
        return local_of[found[0]] if len(found) == 1 else None

    placed: list[ReviewPlace] = []
    missed = 0
    texts: dict[str, object] = {}
    for pull in archive.get("pulls", []):
        base = local(pull.get("baseRefOid"))
        merge = local((pull.get("mergeCommit") or {}).get("oid"))
        for review in pull.get("reviews", []):
            comments = [c for c in review.get("comments", []) if c.get("originalPosition")]
            if not comments:
                continue
            commit = local((review.get("commit") or {}).get("abbreviatedOid"))
            start = _git(git_dir, "merge-base", base, commit) if base and commit else None
            diff = (
                _git(
                    git_dir,
                    "diff",
                    "-U3",
                    "--no-color",
                    "--no-renames",
                    start.strip(),
                    commit,
                    "--",
                    *files,
                )
                if start and commit
                else None
            )
            if not diff or diff.count("\ndiff --git ") + diff.startswith("diff --git ") != 1:
                missed += len(comments)
                continue
            for comment in comments:
                spot = _diff_line(diff, int(comment["originalPosition"]))
                if spot is None or commit is None or start is None:
                    missed += 1
                    continue
                side, path, line = spot
                revision_of = start.strip() if side == "old" else commit
                key = f"{revision_of}:{path}"
                if key not in texts:
                    text = _git(git_dir, "show", key)
                    texts[key] = parse_sections(text, path) if text is not None else None
                tree = texts[key]
                section = tree.at(line) if tree is not None else None  # type: ignore[attr-defined]
                name = Path(path).name
                draft = (draft_of or {}).get(name) or re.sub(r"\.(md|xml)$", "", name)
                landed = _landed(result, draft, commit, git_dir) or (
                    _landed(result, draft, merge, git_dir) if merge else None
                )
                target = result.revision_trees.get(landed or "")
                text = (rfc_texts or {}).get(name)
                if landed is None and text is not None:
                    rfc, ref, text_path = text
                    if commit in result.reachable.get(ref, frozenset()):
                        landed, target = rfc, result.text_trees.get((ref, text_path))
                found = (
                    match_section(
                        section.number, section.path, section.occurrence, section.appendix, target
                    )
                    if section is not None and target is not None
                    else None
                )
                if found is None or landed is None:
                    missed += 1
                    continue
                placed.append(
                    ReviewPlace(
                        int(pull["number"]),
                        comment.get("createdAt", ""),
                        (comment.get("body") or "")[:40],
                        landed,
                        found.label,
                    )
                )
    return placed, missed
