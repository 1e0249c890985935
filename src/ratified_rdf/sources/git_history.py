"""Commits as evidence: where in the text each commit's diff changed it, and what it belongs to.

One ``git log --raw -p --unified=0`` over the document files gives, per commit and file, the
blobs before and after and the line ranges of every hunk. Where a change sits is then read by
position: the hunk's lines are placed in the sections of the text *at that commit* (the new
text for lines added or changed, the old one for lines only removed), from that text's own
heading outline (:func:`place_changes`). So two sections with one heading stay two sections.

Every format read (:mod:`ratified_rdf.sources.formats`: kramdown-rfc markdown, xml2rfc XML,
plain text) gives such an outline. A diff driver whose ``xfuncname`` matches markdown headings
also makes git print, on each hunk line, the heading the change sits under; those headings are
kept as the fallback for files whose outline cannot be read. The driver is set through
``core.attributesFile`` and ``-c``, so nothing is written into the repository.
"""

from __future__ import annotations

import bisect
import heapq
import re
import subprocess
import tempfile
from array import array
from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ratified_rdf.sources.document import OutlineHeading, SectionKey, outline_keys
from ratified_rdf.sources.formats import DocumentFormat, format_of
from ratified_rdf.sources.git_repo import GitRepository, SourceError
from ratified_rdf.sources.kramdown import heading_of

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_RAW = re.compile(r"^:\d+ \d+ ([0-9a-f]+) ([0-9a-f]+) (\w+)\t([^\t]+)(?:\t(.+))?$")
_NO_BLOB = re.compile(r"^0+$")
_MERGED_PR = re.compile(r"Merge pull request #(\d+)")
_SQUASHED_PR = re.compile(r"\(#(\d+)\)\s*$")
_HEADING_FUNCNAME = r"^(%%)?#{1,6}[ \t].*$"


class TouchedHeading(BaseModel):
    """A heading whose section a commit changed, in one file."""

    model_config = ConfigDict(frozen=True)

    file: str
    heading: str


class Hunk(BaseModel):
    """One hunk of a diff: where its lines were in the old text and are in the new one
    (1-based first lines, and counts; a count of 0 means the hunk only adds or only removes)."""

    model_config = ConfigDict(frozen=True)

    old_start: int
    old_lines: int
    new_start: int
    new_lines: int
    outline: bool = True
    """Whether a line it adds or removes can change the text's outline (in markdown a heading,
    a part marker, a fence or a comment mark; :attr:`DocumentFormat.outline_line`). When no
    hunk of a change can, the new text's outline is the old one's, moved by the hunks'
    lengths."""


class FileChange(BaseModel):
    """What one commit did to one document file."""

    model_config = ConfigDict(frozen=True)

    file: str
    """The file's path after the commit (before it, for a file the commit deleted)."""
    old_blob: str | None
    new_blob: str | None
    hunks: tuple[Hunk, ...] = ()


class CommitRecord(BaseModel):
    """A commit to the document files."""

    model_config = ConfigDict(frozen=True)

    commit: str
    parents: tuple[str, ...]
    author_name: str
    author_email: str
    authored_at: datetime
    committed_at: datetime
    subject: str
    message: str
    touched: tuple[TouchedHeading, ...] = ()
    """The headings git names for each hunk: the fallback where a file's outline is unread."""
    changes: tuple[FileChange, ...] = ()
    pull_request: int | None = None
    """The pull request a merge or squash commit names in its message."""
    committer_name: str = ""
    committer_email: str = ""
    """Who put the commit on its branch: for a pull request's merge or squash commit, who
    merged it, unless GitHub's web-flow committed it (then a merge's author did)."""


def read_history(repo: GitRepository, refs: list[str], files: list[str]) -> list[CommitRecord]:
    """Every commit reachable from ``refs`` that changed one of ``files``, oldest first."""
    with tempfile.NamedTemporaryFile("w", suffix=".gitattributes", delete=False) as attributes:
        attributes.write("".join(f"{f} diff=rfcdoc\n" for f in files))
    try:
        command = [
            "git",
            "--git-dir",
            str(repo.git_dir),
            "-c",
            f"core.attributesFile={attributes.name}",
            "-c",
            f"diff.rfcdoc.xfuncname={_HEADING_FUNCNAME}",
            # A long history of one file is stored as deltas of deltas: with git's default
            # cache of delta bases (96 MiB) a large history rebuilds the same bases over and
            # over (benchmarks/RESULTS.md, 2026-12-05).
            "-c",
            "core.deltaBaseCacheLimit=256m",
            "log",
            *refs,
            # Every commit that changed a file, not git's simplified history: a change and its
            # revert on a merged branch leave the tree as it was, and would be skipped.
            "--full-history",
            "--reverse",
            "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%cn%x1f%ce%x1f%B%x1d",
            "--raw",
            "--no-abbrev",
            "-p",
            "--unified=0",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            "--",
            *files,
        ]
        return [_fold_renames(repo, _commit(record)) for record in _log_records(repo, command)]
    finally:
        Path(attributes.name).unlink(missing_ok=True)


def read_pull_merges(
    repo: GitRepository, refs: list[str], known: Collection[str]
) -> list[CommitRecord]:
    """The merge commits on the first-parent line of ``refs`` whose message names a pull
    request ("Merge pull request #N from …") and that are not among ``known`` (the commits
    :func:`read_history` read), oldest first, without their changes. A merge that changed no
    document file is not in the file-filtered history, yet it is how a repository whose
    discussion is only git says which pull request was merged, and who merged it: the
    tls-record-limit repository's #15 is one."""
    if not refs:
        return []
    command = [
        "git",
        "--git-dir",
        str(repo.git_dir),
        "log",
        *refs,
        "--first-parent",
        "--merges",
        "--reverse",
        "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1f%cn%x1f%ce%x1f%B%x1d",
        "--",
    ]
    held = set(known)
    merges = (_commit(record) for record in _log_records(repo, command))
    return [
        m
        for m in merges
        if m.commit not in held and m.pull_request is not None and _MERGED_PR.search(m.subject)
    ]


LOG_READ_BYTES = 1 << 20
"""How much of ``git log``'s output :func:`_log_records` reads at a time."""


def _log_records(repo: GitRepository, command: list[str]) -> Iterator[str]:
    """The records of ``git log`` ``command``'s output (each commit's, after a ``\\x1e``),
    decoded as they come: at ×100 the whole log, held as bytes, then text, then split, took
    gigabytes. Raises :class:`SourceError` once the output ends if git failed."""
    with (
        tempfile.TemporaryFile() as errors,
        subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors) as git,
    ):
        assert git.stdout is not None
        parts: list[bytes] = []
        started = False  # what comes before the first separator is no record
        while chunk := git.stdout.read(LOG_READ_BYTES):
            pieces = chunk.split(b"\x1e")
            parts.append(pieces[0])
            for piece in pieces[1:]:
                record, parts = b"".join(parts), [piece]
                if started:
                    yield record.decode("utf-8", errors="replace")
                started = True
        if git.wait() != 0:
            errors.seek(0)
            reason = errors.read().decode(errors="replace").strip().splitlines()[-1:]
            raise SourceError(f"git log failed on {repo.source}: {' '.join(reason)}")
        if started:
            yield b"".join(parts).decode("utf-8", errors="replace")


def _fold_renames(repo: GitRepository, commit: CommitRecord) -> CommitRecord:
    """A commit that renamed or moved a document file, read as the change it made to the text.

    The log is read without rename detection (so a path filter cannot hide a file's old name),
    which shows a rename as one file removed and another added: every line of both. A rename
    changes no section, so the pair becomes what git's rename detection would show: the added
    file with the removed one's blob before it and the hunks between the two texts (none for a
    pure rename). Both paths stay, so the commit still lands in each file's draft.
    """
    removed = {c.old_blob: c for c in commit.changes if c.old_blob and not c.new_blob}
    added = [c for c in commit.changes if c.new_blob and not c.old_blob]
    if not removed or not added:
        return commit
    replaced: dict[str, FileChange] = {}
    for change in added:
        assert change.new_blob is not None
        source = removed.get(change.new_blob)
        if source is None and len(removed) == 1 and len(added) == 1:
            source = next(iter(removed.values()))
        if source is None or source.file in replaced:
            continue
        assert source.old_blob is not None
        hunks = () if source.old_blob == change.new_blob else _blob_hunks(repo, source, change)
        if hunks is None:  # not similar enough to be one text: a file removed, another added
            continue
        replaced[change.file] = FileChange(
            file=change.file, old_blob=source.old_blob, new_blob=change.new_blob, hunks=hunks
        )
        replaced[source.file] = FileChange(
            file=source.file, old_blob=source.old_blob, new_blob=None
        )
    if not replaced:
        return commit
    return commit.model_copy(
        update={
            "changes": tuple(replaced.get(c.file, c) for c in commit.changes),
            "touched": tuple(t for t in commit.touched if t.file not in replaced),
        }
    )


def _blob_hunks(repo: GitRepository, old: FileChange, new: FileChange) -> tuple[Hunk, ...] | None:
    """The ``--unified=0`` hunks from ``old``'s text to ``new``'s, or None when fewer than
    half their lines are kept (git's rename detection, by lines)."""
    result = subprocess.run(
        [
            "git",
            "--git-dir",
            str(repo.git_dir),
            "diff",
            "--unified=0",
            "--no-color",
            "--no-ext-diff",
            str(old.old_blob),
            str(new.new_blob),
        ],
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        return None
    hunks = tuple(
        Hunk(
            old_start=int(found.group(1)),
            old_lines=1 if found.group(2) is None else int(found.group(2)),
            new_start=int(found.group(3)),
            new_lines=1 if found.group(4) is None else int(found.group(4)),
        )
        for line in result.stdout.decode("utf-8", errors="replace").splitlines()
        if (found := _HUNK.match(line))
    )
    lines = _line_counts(repo, [str(old.old_blob), str(new.new_blob)])
    changed = sum(h.old_lines + h.new_lines for h in hunks)
    return hunks if changed * 2 <= sum(lines) else None


def _line_counts(repo: GitRepository, blobs: Sequence[str]) -> list[int]:
    """How many lines each blob has."""
    return [text.count("\n") + 1 for text in _texts(repo, blobs).values()]


def _commit(record: str) -> CommitRecord:
    header, _, diff = record.partition("\x1d")
    fields = header.split("\x1f", 8)
    commit, parents, name, email, authored, committed, committer, committer_email, message = fields
    touched: dict[tuple[str, str], None] = {}
    blobs: dict[str, tuple[str | None, str | None]] = {}
    hunks: dict[str, list[Hunk]] = {}
    current_file = ""
    context: str | None = None
    # A file's header ("--- a/…", "+++ b/…") runs from its "diff --git" line to its first
    # hunk; inside hunks, a removed line reading "-- text" shows as "--- text" and is content.
    in_header = False
    for line in diff.splitlines():
        raw = _RAW.match(line)
        if raw:
            old, new, _status, path, renamed = raw.groups()
            blobs[renamed or path] = (
                None if _NO_BLOB.match(old) else old,
                None if _NO_BLOB.match(new) else new,
            )
            continue
        if line.startswith("diff --git "):
            in_header = True
            continue
        if in_header and line.startswith("+++ "):
            path = line[4:].strip()
            if path != "/dev/null":
                current_file = path[2:] if path.startswith("b/") else path
            continue
        if in_header and line.startswith("--- "):
            path = line[4:].strip()
            if path != "/dev/null":
                current_file = path[2:] if path.startswith("a/") else path
            continue
        hunk = _HUNK.match(line)
        if hunk:
            in_header = False
            old_start, old_count, new_start, new_count, funcname = hunk.groups()
            hunks.setdefault(current_file, []).append(
                Hunk(
                    old_start=int(old_start),
                    old_lines=1 if old_count is None else int(old_count),
                    new_start=int(new_start),
                    new_lines=1 if new_count is None else int(new_count),
                    outline=False,
                )
            )
            # The heading git names is the last one *above* the hunk. It is the touched section
            # unless the hunk starts on a heading line, in which case that section is.
            context = heading_of(funcname.strip())
            continue
        if line[:1] in {"+", "-"}:
            file_hunks = hunks.get(current_file)
            if file_hunks and not file_hunks[-1].outline and _outline_line(current_file, line[1:]):
                file_hunks[-1] = file_hunks[-1].model_copy(update={"outline": True})
            heading = heading_of(line[1:])
            if context and not heading:
                touched[(current_file, context)] = None
            context = None
            if heading:
                touched[(current_file, heading)] = None
    subject = message.strip().splitlines()[0] if message.strip() else ""
    pr = _MERGED_PR.search(subject) or _SQUASHED_PR.search(subject)
    return CommitRecord(
        commit=commit.strip(),
        parents=tuple(parents.split()),
        author_name=name,
        author_email=email,
        authored_at=datetime.fromisoformat(authored),
        committed_at=datetime.fromisoformat(committed),
        subject=subject,
        message=message.strip(),
        touched=tuple(TouchedHeading(file=f, heading=h) for f, h in touched),
        changes=tuple(
            FileChange(file=path, old_blob=old, new_blob=new, hunks=tuple(hunks.get(path, ())))
            for path, (old, new) in blobs.items()
        ),
        pull_request=int(pr.group(1)) if pr else None,
        committer_name=committer,
        committer_email=committer_email,
    )


def _outline_line(file: str, line: str) -> bool:
    """Whether a line of ``file``, added or removed, can change the file's outline (what its
    format says; any line, for a format that cannot tell or a file no reader reads)."""
    found = format_of(file)
    return found is None or found.outline_line is None or found.outline_line(line)


class ChangePlace(BaseModel):
    """A section a commit changed, as the text at that commit has it: its heading path from
    the top (normalised headings) and which of the sections with that path it is, in the
    middle or the back matter."""

    model_config = ConfigDict(frozen=True)

    file: str
    key: SectionKey
    heading: str


def place_changes(
    repo: GitRepository, commits: Sequence[CommitRecord]
) -> dict[str, list[ChangePlace]]:
    """For each commit, the sections its hunks changed, placed by line: the lines a hunk adds
    in the sections of the text at that commit, the lines it removes in those of the text
    before it (a change that rewrites the end of one section and the start of the next changed
    both). Files whose outline cannot be read (no reader for their format, or no heading
    found) get no places: their ``touched`` headings stand in."""
    # A text whose change touched no outline line has its parent text's outline, moved: only
    # the others are read and parsed (in history order, so a parent comes first).
    derived: dict[str, tuple[str, tuple[Hunk, ...], DocumentFormat]] = {}
    wanted: dict[str, DocumentFormat] = {}
    for commit in commits:
        for change in commit.changes:
            reader = format_of(change.file)
            if reader is None:
                continue
            old, new = change.old_blob, change.new_blob
            if old and old not in derived:
                wanted.setdefault(old, reader)
            if not new or new in wanted or new in derived:
                continue
            if (
                old
                and change.hunks
                and not any(h.outline or h.new_start <= 1 for h in change.hunks)
            ):
                derived[new] = (old, change.hunks, reader)
            else:
                wanted[new] = reader
    outlines = _outlines(repo, wanted)
    # An outline that is not fixed (a setext title line is no marked line) cannot be moved:
    # the texts made from it, and those made from them, are read as well.
    unmoved: dict[str, DocumentFormat] = {}
    for new, (old, _hunks, reader) in derived.items():
        parent = outlines.get(old)
        if old in unmoved or (parent is not None and not parent.fixed):
            unmoved[new] = reader
    outlines.update(_outlines(repo, unmoved))
    for new, (old, hunks, _reader) in derived.items():
        if new in unmoved:
            continue
        parent = outlines.get(old)
        outlines[new] = parent.moved(hunks) if parent is not None else _Outline([])
    places: dict[str, list[ChangePlace]] = {}
    for commit in commits:
        found: dict[tuple[str, SectionKey], ChangePlace] = {}
        for change in commit.changes:
            for hunk in change.hunks:
                sides = (
                    (change.new_blob, hunk.new_start, hunk.new_lines),
                    (change.old_blob, hunk.old_start, hunk.old_lines),
                )
                for side, first, count in sides:
                    outline = outlines.get(side or "")
                    if not count or not outline:
                        continue
                    for key, heading in outline.covering(first - 1, first - 1 + count):
                        found.setdefault(
                            (change.file, key),
                            ChangePlace(file=change.file, key=key, heading=heading),
                        )
        places[commit.commit] = list(found.values())
    return places


class ReviewLine(BaseModel):
    """A review comment to place: the pull request's base, the commit reviewed, and the
    comment's position in the diff between them (GitHub's ``originalPosition``)."""

    model_config = ConfigDict(frozen=True)

    key: str
    base: str
    commit: str
    position: int


def place_review_lines(
    repo: GitRepository, lines: Sequence[ReviewLine], files: Sequence[str]
) -> dict[str, ChangePlace]:
    """Each review comment's section, by position: its line is found by walking the pull
    request's diff (``git diff base...commit`` over the document ``files``, three lines of
    context, as GitHub shows it) to its position, then placed in the outline of the text it
    sits in (the reviewed commit's for added and context lines, the base's for removed ones).
    The archive does not say which file a comment is on, so a diff over more than one document
    file places nothing; nor does a commit the repository does not hold."""
    by_pair: dict[tuple[str, str], list[ReviewLine]] = {}
    for line in lines:
        by_pair.setdefault((line.base, line.commit), []).append(line)
    found: dict[str, tuple[str, str, int]] = {}  # key -> (revision spec, file, 0-based line)
    for (base, commit), wanted in by_pair.items():
        diff = _pull_diff(repo, base, commit, files)
        if diff is None:
            continue
        start, path, rows = diff
        for line in wanted:
            if 1 <= line.position <= len(rows):
                side, number = rows[line.position - 1]
                found[line.key] = (commit if side == "new" else start, path, number)
    texts = _texts(repo, sorted({f"{rev}:{path}" for rev, path, _ in found.values()}))
    outlines = {
        spec: _Outline(*reader.outline(text))
        for spec, text in texts.items()
        if (reader := format_of(spec.partition(":")[2])) is not None
    }
    places: dict[str, ChangePlace] = {}
    for key, (rev, path, number) in found.items():
        outline = outlines.get(f"{rev}:{path}")
        if outline:
            for section_key, heading in outline.covering(number, number + 1):
                places[key] = ChangePlace(file=path, key=section_key, heading=heading)
    return places


def _pull_diff(
    repo: GitRepository, base: str, commit: str, files: Sequence[str]
) -> tuple[str, str, list[tuple[str, int]]] | None:
    """The merge base, the one file and, per diff position, (side, 0-based line) of the pull
    request diff ``base...commit``; None when it is not one document file or git cannot."""
    git = ["git", "--git-dir", str(repo.git_dir)]
    merge_base = subprocess.run(
        [*git, "merge-base", base, commit], capture_output=True, text=True, check=False
    )
    if merge_base.returncode != 0:
        return None
    start = merge_base.stdout.strip()
    out = subprocess.run(
        [
            *git,
            "diff",
            "-U3",
            "--no-color",
            "--no-renames",
            "--no-ext-diff",
            start,
            commit,
            "--",
            *files,
        ],
        capture_output=True,
        check=False,
    )
    if out.returncode != 0:
        return None
    text = out.stdout.decode("utf-8", errors="replace")
    if text.count("\ndiff --git ") + text.startswith("diff --git ") != 1:
        return None
    path = ""
    rows: list[tuple[str, int]] = []
    old = new = 0
    started = False
    for line in text.splitlines():
        if not started:
            if line.startswith("+++ "):
                path = line[6:] if line.startswith("+++ b/") else line[4:]
            hunk = _HUNK.match(line)
            if hunk:
                old, new, started = int(hunk.group(1)) - 1, int(hunk.group(3)) - 1, True
            continue
        hunk = _HUNK.match(line)
        if hunk:  # a later hunk's header takes a position of its own
            rows.append(("new", new))
            old, new = int(hunk.group(1)) - 1, int(hunk.group(3)) - 1
        elif line.startswith("-"):
            rows.append(("old", old))
            old += 1
        elif line.startswith("+"):
            rows.append(("new", new))
            new += 1
        elif not line.startswith("\\"):
            rows.append(("new", new))
            old, new = old + 1, new + 1
    return (start, path, rows) if path and path != "/dev/null" else None


def _texts(repo: GitRepository, specs: Sequence[str]) -> dict[str, str]:
    """Texts by object name (a blob id or ``rev:path``), read with one ``git cat-file
    --batch``; names git does not hold are left out."""
    if not specs:
        return {}
    result = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "cat-file", "--batch"],
        input="".join(f"{spec}\n" for spec in specs).encode(),
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise SourceError(f"git could not read the document texts of {repo.source}.")
    out, offset, texts = result.stdout, 0, {}
    for spec in specs:
        end = out.index(b"\n", offset)
        header = out[offset:end].split()
        offset = end + 1
        if len(header) < 3 or header[-1] == b"missing":
            continue
        size = int(header[2])
        texts[spec] = out[offset : offset + size].decode("utf-8", errors="replace")
        offset += size + 1
    return texts


class _Outline:
    """A text's headings with their lines and section keys, for placing line ranges; a part
    marker (``--- back``) ends the section above it without starting one."""

    def __init__(
        self,
        headings: Sequence[OutlineHeading],
        breaks: Sequence[int] = (),
        fixed: bool = True,
        *,
        shared: dict[tuple[SectionKey, str], tuple[SectionKey, str]] | None = None,
    ) -> None:
        """``fixed``: :attr:`Outline.fixed`. ``shared``: sections already made for other
        outlines, to use instead of equal new ones (a history's thousands of texts repeat the
        same sections)."""
        self.fixed = fixed
        keys = outline_keys(headings)
        known = shared if shared is not None else {}
        marks: list[tuple[int, tuple[SectionKey, str] | None]] = [
            (h.line, known.setdefault((key, h.heading), (key, h.heading)))
            for h, key in zip(headings, keys, strict=True)
        ]
        marks += [(line, None) for line in breaks]
        # A section that starts on the line another one's text ends (an XML </section> over
        # the next <section>) holds that line: a heading sorts after a break on its line.
        marks.sort(key=lambda mark: (mark[0], mark[1] is not None))
        self.lines: Sequence[int] = array("l", [line for line, _ in marks])
        self.sections = tuple(section for _, section in marks)
        self._any = bool(headings)

    def __bool__(self) -> bool:
        return self._any

    def moved(self, hunks: Sequence[Hunk]) -> _Outline:
        """This outline in the text ``hunks`` (none of which touches an outline line) made of
        this one's: every mark after a hunk moves by the lines the hunk added or removed."""
        ends = sorted(
            (h.old_start + h.old_lines - 1 if h.old_lines else h.old_start,
             h.new_lines - h.old_lines)
            for h in hunks
        )  # fmt: skip
        last = [end for end, _ in ends]
        total = [0]
        for _, delta in ends:
            total.append(total[-1] + delta)
        moved = _Outline([])
        # 0-based line L is 1-based L + 1; hunks ending before it move it.
        moved.lines = array(
            "l", [line + total[bisect.bisect_left(last, line + 1)] for line in self.lines]
        )
        moved.sections = self.sections
        moved._any = self._any
        moved.fixed = self.fixed
        return moved

    def covering(self, start: int, end: int) -> list[tuple[SectionKey, str]]:
        """The sections holding lines ``start`` to ``end - 1`` (0-based): the one the first line
        sits in, and every section whose heading lies in the range. Lines above the first
        heading (the front matter), and between a part marker and the next heading, are in no
        section."""
        first = bisect.bisect_right(self.lines, start) - 1
        last = bisect.bisect_left(self.lines, end) - 1
        return [
            section
            for i in range(max(first, 0), last + 1)
            if i >= 0 and (section := self.sections[i]) is not None
        ]


TEXTS_PER_READ = 200
"""How many texts :func:`_outlines` reads with one git process: a large history's texts do
not fit in memory all at once (at ×100, gigabytes), their outlines do."""


def _outlines(repo: GitRepository, blobs: Mapping[str, DocumentFormat]) -> dict[str, _Outline]:
    """The outline of each blob (read with :func:`_texts`, :data:`TEXTS_PER_READ` at a time),
    equal sections of different outlines held once. A long history's second half is read in
    a forked child, on the other core: each text's outline is its own."""
    ordered = sorted(blobs.items(), key=lambda item: item[0])
    if len(ordered) < 2 * TEXTS_PER_READ:
        return _read_outlines(repo, ordered)
    from ratified_rdf._forked import Forked  # multiprocessing: a build's, never a reader's

    middle = len(ordered) // 2
    second = ordered[middle:]
    other = Forked(lambda: _read_outlines(repo, second), "reading the texts' outlines")
    outlines = _read_outlines(repo, ordered[:middle])
    outlines.update(other.result())
    return outlines


def _read_outlines(
    repo: GitRepository, ordered: Sequence[tuple[str, DocumentFormat]]
) -> dict[str, _Outline]:
    shared: dict[tuple[SectionKey, str], tuple[SectionKey, str]] = {}
    outlines: dict[str, _Outline] = {}
    for start in range(0, len(ordered), TEXTS_PER_READ):
        batch = dict(ordered[start : start + TEXTS_PER_READ])
        for blob, text in _texts(repo, list(batch)).items():
            outlines[blob] = _Outline(*batch[blob].outline(text), shared=shared)
    return outlines


def first_containing(repo: GitRepository, ordered_refs: list[tuple[str, str]]) -> dict[str, str]:
    """For every commit, the name of the first ref (in the given order) that contains it.

    ``ordered_refs`` is (name, ref) in revision order, e.g. ("draft-ietf-tls-tls13-00", tag).
    Each ref lists only what no earlier ref holds (``rev-list ref --not earlier…``).
    """
    landed: dict[str, str] = {}
    earlier: list[str] = []
    for name, ref in ordered_refs:
        out = subprocess.run(
            ["git", "--git-dir", str(repo.git_dir), "rev-list", ref, "--not", *earlier],
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        )
        if out.returncode != 0:
            raise SourceError(f"git cannot list the history of {ref} in {repo.source}.")
        for commit in out.stdout.split():
            landed.setdefault(commit, name)
        earlier.append(ref)
    return landed


def first_parent_line(repo: GitRepository, refs: Sequence[str]) -> set[str]:
    """The commits on the first-parent line of any of ``refs``: the merges made in this
    repository itself. A merge reached only through a second parent was made elsewhere (a
    fork merging upstream into itself), and the "#N" its message names is that fork's."""
    if not refs:
        return set()
    result = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "rev-list", "--first-parent", *refs, "--"],
        capture_output=True,
        text=True,
        check=False,
    )
    return set(result.stdout.split()) if result.returncode == 0 else set()


def own_pull_requests(commits: Sequence[CommitRecord], mainline: set[str]) -> list[CommitRecord]:
    """``commits`` with the pull request number dropped from every merge or squash message
    that is not on ``mainline`` (:func:`first_parent_line`): "Merge pull request #5 from
    quicwg/master", made in a fork, names the fork's pull request #5, not this repository's."""
    return [
        c
        if c.pull_request is None or c.commit in mainline
        else c.model_copy(update={"pull_request": None})
        for c in commits
    ]


def pull_request_refs(source: str | Path) -> set[int]:
    """The numbers of the ``refs/pull/N/head`` refs a bundle, clone or server holds (as
    GitHub serves them and bundles made from its repositories carry them), listed with
    ``git ls-remote``, so nothing is fetched and a bundle needs no clone. A SourceError when
    git cannot list them."""
    try:
        listed = subprocess.run(
            ["git", "ls-remote", "--refs", str(source), "refs/pull/*/head"],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
    except (OSError, subprocess.SubprocessError) as error:
        raise SourceError(f"git could not list the refs of {source} ({error}).") from None
    return {int(n) for n in re.findall(r"refs/pull/(\d+)/head$", listed, re.MULTILINE)}


def pull_request_heads(repo: GitRepository) -> set[int] | None:
    """The pull requests whose heads the repository's source holds (:func:`pull_request_refs`);
    None when it holds none or cannot be asked (a plain clone, a server out of reach): then
    there is nothing to check numbers against."""
    try:
        return pull_request_refs(repo.source) or None
    except SourceError:
        return None


def held_pull_requests(
    commits: Sequence[CommitRecord], heads: set[int] | None
) -> list[CommitRecord]:
    """``commits`` with the pull request number dropped where the source holds pull request
    heads (:func:`pull_request_heads`) but none for that number: quicwg/base-drafts' main line
    holds "Merge pull request #6 from ekr/migration_threat_model_todos", merged in a fork and
    brought in whole, which names the fork's pull request, not this repository's #6."""
    if heads is None:
        return list(commits)
    return [
        c
        if c.pull_request is None or c.pull_request in heads
        else c.model_copy(update={"pull_request": None})
        for c in commits
    ]


def branch_commits(repo: GitRepository, merge_commit: str) -> list[str]:
    """Commits a merge brought in, as git names them (``rev-list <merge>^1..<merge>^2``): the
    reference :class:`BranchCommits`, which builds use, is tested against."""
    out = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "rev-list", f"{merge_commit}^1..{merge_commit}^2"],
        capture_output=True,
        text=True,
        errors="replace",  # git's messages quote bytes that need not be UTF-8
        check=False,
    )
    return out.stdout.split() if out.returncode == 0 else []


class BranchCommits:
    """:func:`branch_commits` for any merge reachable from one parents map
    (:func:`commit_parents`), computed here instead of by a git process per merge.

    Each commit gets a generation number (one more than its parents' highest), so a walk from
    a merge's two parents that always takes the highest-numbered commit next has met every
    child of a commit before the commit itself: whether it is reachable from the first parent
    is settled when it is taken. The walk stops when every commit left to take is reachable
    from the first parent, as ``git rev-list A..B`` does with commit dates."""

    def __init__(self, parents: Mapping[str, tuple[str, ...]]) -> None:
        self.parents = parents
        self.generation: dict[str, int] = {}
        for start in parents:
            if start in self.generation:
                continue
            stack = [start]
            while stack:  # depth first, without recursion: histories run to 10,000s deep
                commit = stack[-1]
                waiting = [
                    p for p in parents.get(commit, ()) if p not in self.generation and p in parents
                ]
                if waiting:
                    stack.extend(waiting)
                    continue
                stack.pop()
                self.generation[commit] = 1 + max(
                    (self.generation.get(p, 0) for p in parents.get(commit, ())), default=0
                )

    def __call__(self, merge: str) -> list[str]:
        """Commits reachable from ``merge``'s second parent and not from its first (none
        when it has one parent, or is not in the map), newest generation first."""
        merge_parents = self.parents.get(merge, ())
        if len(merge_parents) < 2:
            return []
        return self.between(merge_parents[1], merge_parents[0])

    def between(self, second: str, first: str) -> list[str]:
        """Commits reachable from ``second`` and not from ``first`` (``git rev-list
        first..second``), newest generation first; both must be in the map."""
        excluded: set[str] = set()  # reachable from the first parent
        queued: dict[str, bool] = {}  # commit → reachable from the first parent (so far)
        heap: list[tuple[int, str]] = []
        hidden_left = 0  # queued commits not (yet) known to be reachable from the first

        def push(commit: str, from_first: bool) -> None:
            nonlocal hidden_left
            if commit in queued:
                if from_first and not queued[commit]:
                    queued[commit] = True
                    hidden_left -= 1
                return
            queued[commit] = from_first
            hidden_left += 0 if from_first else 1
            heapq.heappush(heap, (-self.generation.get(commit, 0), commit))

        push(first, True)
        push(second, False)
        found: list[str] = []
        while heap and hidden_left:
            _, commit = heapq.heappop(heap)
            from_first = queued.pop(commit)
            if from_first:
                excluded.add(commit)
            else:
                hidden_left -= 1
                found.append(commit)
            for parent in self.parents.get(commit, ()):
                if parent not in excluded:
                    push(parent, from_first)
        return [c for c in found if c not in excluded]


def commit_parents(repo: GitRepository, refs: list[str]) -> dict[str, tuple[str, ...]]:
    """Every commit reachable from ``refs`` with its parents, from one ``git rev-list``."""
    out = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "rev-list", "--parents", *refs],
        capture_output=True,
        text=True,
        errors="replace",  # git's messages quote bytes that need not be UTF-8
        check=False,
    )
    if out.returncode != 0:
        raise SourceError(f"git cannot list the commits of {repo.source}.")
    parents: dict[str, tuple[str, ...]] = {}
    for line in out.stdout.splitlines():
        commit, *rest = line.split()
        parents[commit] = tuple(rest)
    return parents


def signatures(repo: GitRepository) -> list[tuple[str, str]]:
    """Every commit's author and committer, as (name, email), on every ref of the repository,
    in git's order with repeats: what git says about who wrote the history. Turning them into
    identities (and leaving out what is no person) is :mod:`ratified_rdf.records.identity`'s.
    """
    pairs: list[tuple[str, str]] = []
    for line in _log_all(repo, "%an%x09%ae%x09%cn%x09%ce").splitlines():
        fields = line.split("\t")
        pairs += [(fields[0], fields[1]), (fields[2], fields[3])]
    return pairs


def _log_all(repo: GitRepository, line_format: str) -> str:
    """``git log --all`` with one line of ``line_format`` per commit, on every ref."""
    return _git_output(repo, "read", "log", "--all", f"--format={line_format}")


def _git_output(repo: GitRepository, doing: str, *args: str) -> str:
    """What ``git <args>`` prints on ``repo``; a :class:`SourceError` saying git could not
    ``doing`` it, with git's reason, when it fails."""
    result = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        reason = (result.stderr.strip().splitlines() or ["no reason given"])[-1]
        raise SourceError(f"git could not {doing} {repo.source}: {reason}.")
    return result.stdout


_FULL_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
"""A whole SHA-1 or SHA-256 object id, as git writes it."""


class PullAuthorsFromHistory:
    """:func:`pull_authors` for any pull request, from one listing of every commit on every
    ref with its parents and author, instead of a git process per pull request (100,000 at
    ×100: minutes of a build).

    A head or base that the listing lacks is looked up once among every object git holds
    (one ``git cat-file --batch-all-objects``, made the first time one is lacking): an id git
    does not hold gets git's answer, none (``git log`` refuses it), without a git process;
    one git holds that no ref reaches is asked of git, as before, so the answer is git's
    whenever the listing cannot give it. (Most pull requests' heads are GitHub's commits,
    never fetched: at ×100 a git process each, forked from a build holding gigabytes, took
    minutes.)"""

    def __init__(self, repo: GitRepository) -> None:
        listing = _log_all(repo, "%H %P%x09%an%x09%ae")
        self.repo = repo
        self.authors: dict[str, tuple[str, str]] = {}
        parents: dict[str, tuple[str, ...]] = {}
        for line in listing.splitlines():
            ids, _, rest = line.partition("\t")
            commit, *of = ids.split(" ")
            name, _, email = rest.partition("\t")
            parents[commit] = tuple(p for p in of if p)
            self.authors[commit] = (name, email)
        self._walk = BranchCommits(parents)
        self._objects: frozenset[str] | None = None

    def __call__(self, head: str, base: str | None) -> list[tuple[str, str]]:
        """What :func:`pull_authors` answers for ``head`` and ``base``."""
        lacking = [c for c in (head, base) if c is not None and c not in self.authors]
        if lacking:
            # Only a full object id can be missing for certain: anything else (a ref name,
            # an abbreviation) is git's to resolve.
            if any(_FULL_ID.fullmatch(c) is None or c in self._held() for c in lacking):
                return pull_authors(self.repo, head, base)
            return []  # git holds no such commit, and its log refuses the range
        commits = self._walk.between(head, base) if base is not None else []
        return [self.authors[c] for c in commits] or [self.authors[head]]

    def _held(self) -> frozenset[str]:
        """Every commit and tag id git holds, reached by a ref or not (what ``git log``
        could start from), listed the first time it is asked."""
        if self._objects is None:
            listing = _git_output(
                self.repo,
                "list the objects of",
                "cat-file",
                "--batch-all-objects",
                "--unordered",
                "--batch-check=%(objecttype) %(objectname)",
            )
            self._objects = frozenset(
                name
                for kind, _, name in (line.partition(" ") for line in listing.splitlines())
                if kind in ("commit", "tag")
            )
        return self._objects


def pull_authors(repo: GitRepository, head: str, base: str | None) -> list[tuple[str, str]]:
    """The author of each of a pull request's commits, as (name, email), newest first: the
    commits between ``base`` and ``head`` (the head alone when the base is unknown, or when
    the base already holds it: merged before the archive was taken). Empty when git does not
    hold ``head`` (GitHub's head commit is not in this repository). What a branch of a given
    size says about its author is :mod:`ratified_rdf.records.identity`'s to decide."""
    exclude = [f"^{base}"] if base else ["-1"]
    result = subprocess.run(
        ["git", "--git-dir", str(repo.git_dir), "log", "--format=%an%x09%ae", head, *exclude, "--"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        return []
    lines = result.stdout.splitlines()
    if not lines:
        return pull_authors(repo, head, None) if base else []
    return [(name, email) for name, _, email in (line.partition("\t") for line in lines)]
