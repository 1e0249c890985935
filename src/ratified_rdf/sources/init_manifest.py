"""Survey a specification repository and write the manifest that describes it (``ratified init``).

Everything a manifest says that the repository itself records is read from it: the draft
series (every ``<draft>-NN`` tag), which file holds each draft at each of its tags (following
renames and moves), the RFC texts it holds (``rfcNNNN.md``, ``.xml`` or ``.txt`` on a branch),
its default branch and the GitHub archive i-d-template keeps on ``gh-pages``. What no
repository records (which RFC a draft became, and when that RFC was published) is written as a
commented ``FILL IN`` line, with whatever hint the repository gives; what is inferred from names
or history rather than read (an individual draft replaced by an adopted one) is marked as a
guess. Git is read only through :class:`~ratified_rdf.sources.git_repo.GitRepository`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections import Counter
from datetime import datetime
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ratified_rdf.records.manifest import Manifest
from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.formats import parse_document
from ratified_rdf.sources.git_repo import GitRepository, SourceError
from ratified_rdf.sources.revisions import (
    DEFAULT_ORDER,
    DOCUMENT_SUFFIXES,
    REVISION_NAME,
    FoundRevision,
    Rename,
    RepositoryScan,
    find_renames,
    find_revisions,
    is_document,
    pick,
)
from ratified_rdf.sources.revisions.docnames import docname_of, series_of

_REVISION_TAG = REVISION_NAME
_LATEST_FILE = re.compile(r"^(draft-[a-z0-9]+(?:-[a-z0-9]+)+)-latest$")
_DRAFT_STEM = re.compile(r"^draft-[a-z0-9]+(?:-[a-z0-9]+)+$")
_BIS = re.compile(r"^draft-.*-rfc(\d{3,5})-?bis$")
"""A draft revising an RFC: a draft renamed to it had become that RFC, not been replaced."""
_RFC_FILE = re.compile(r"^rfc(\d{1,5})\.(md|xml|txt)$")
_ADOPTED = {"ietf", "irtf", "iab", "iesg"}
"""The second word of a draft name that marks a group's document rather than a person's."""
_FRONT_MATTER_FIELD = re.compile(r"^(docname|date|obsoletes)\s*:\s*(.*?)\s*$", re.IGNORECASE)

PLACEHOLDER_URL = "https://example.invalid/fill-in-the-public-url"
"""Written as ``[brain] repository`` when init read a local copy with no public remote: a
reserved name (RFC 2606), so no link built from it points at anyone's repository."""

FileEvidence = Literal["given", "name", "followed", "only-changed", "only-document", "unknown"]


class InitError(SourceError):
    """The repository cannot be described by a manifest (no draft tags, say)."""


class RevisionFile(BaseModel):
    """Which file holds one revision of a draft, and how that was found."""

    model_config = ConfigDict(frozen=True)

    revision: str
    tag: str | None
    commit: str
    committed_at: datetime
    path: str | None
    how: FileEvidence
    """``given``: the revision source names the file (a per-revision file, or the file whose
    docname names the revision); ``name``: the file is named after the draft; ``followed``:
    the previous revision's file, renamed or moved if it was; ``only-changed``: the one
    document file changed since the previous revision (a guess); ``only-document``: the one
    document file in the tree (a guess); ``unknown``: none of these."""
    source: str = "tags"
    """The revision source that found it (:mod:`ratified_rdf.sources.revisions`)."""
    provenance: str = ""
    """Where its text came from, as a phrase (``tag draft-x-03``, ``file … at commit …``)."""
    guess: bool = False
    """Whether the source inferred the commit (a docname's last commit)."""


class DraftSeries(BaseModel):
    """A draft series: the ``<name>-NN`` tags of one draft, and its file at each."""

    model_config = ConfigDict(frozen=True)

    name: str
    revisions: tuple[RevisionFile, ...]
    replaced_by: str | None = None
    replaced_because: str | None = None
    """Why :attr:`replaced_by` was guessed, as a phrase."""
    became_hint: str | None = None
    """The RFC (``rfc9000``) this draft probably became, when the repository hints at it."""
    became_because: str | None = None

    replaced_read: bool = False
    """Whether :attr:`replaced_by` was read from the repository (a file or its docname
    renamed) rather than guessed."""
    title: str | None = None
    """The title its last revision gives (a hint for the RFC it became, not a fact)."""

    @property
    def numbers(self) -> list[str]:
        """The revision numbers found, in order."""
        return [r.revision for r in self.revisions]

    @property
    def promised(self) -> tuple[str, str]:
        """What the manifest's ``revisions`` range promises: every revision from 00 (each
        draft starts there) to the last found; :attr:`missing` names those the repository
        lacks."""
        return "00", self.numbers[-1]

    @property
    def missing(self) -> list[str]:
        """Revision numbers from 00 to the last found that nothing in the repository holds."""
        present = {int(n) for n in self.numbers}
        return [f"{n:02d}" for n in range(0, max(present) + 1) if n not in present]

    @property
    def sources(self) -> list[str]:
        """The revision sources its revisions came from, in the order they are preferred."""
        used = {r.source for r in self.revisions}
        return [name for name in DEFAULT_ORDER if name in used] + sorted(used - set(DEFAULT_ORDER))

    @property
    def file(self) -> str | None:
        """The document at the first tagged revision whose file is known (the build reads a
        revision whose source names its file from that file), else at the first revision."""
        tagged = (r.path for r in self.revisions if r.path and r.how != "given")
        return next(tagged, None) or next((r.path for r in self.revisions if r.path), None)

    @property
    def moved(self) -> dict[str, str]:
        """Revision → path, for each tagged revision whose file differs from the one before."""
        moves: dict[str, str] = {}
        current = self.file
        for revision in self.revisions:
            if revision.how == "given":
                continue
            if revision.path and revision.path != current:
                moves[revision.revision] = revision.path
                current = revision.path
        return moves

    @property
    def individual(self) -> bool:
        """Whether this is a person's draft (``draft-<person>-…``), not a group's."""
        return self.name.split("-")[1] not in _ADOPTED


class RfcText(BaseModel):
    """An RFC's text found in the repository."""

    model_config = ConfigDict(frozen=True)

    number: int
    ref: str
    path: str
    title: str | None = None
    docname: str | None = None
    """The draft revision the text says it was (``draft-ietf-quic-transport-34``)."""
    date: str | None = None
    """The date the text gives, as written (a hint for ``published``, not a fact)."""
    obsoletes: tuple[int, ...] = ()
    """RFCs the text says it obsoletes."""
    former_paths: tuple[str, ...] = ()
    """Names the file had before, most recent first (following renames)."""
    also_at: tuple[str, ...] = ()
    """Other ``ref:path`` copies of the same RFC (a rendered ``.txt`` on gh-pages, say)."""
    found_as: str | None = None
    """How a text not in an ``rfcNNNN`` file was found, as a phrase (the bis draft's -00):
    a guess the user checks."""

    @property
    def name(self) -> str:
        """``rfc9000``."""
        return f"rfc{self.number}"


class RepositorySurvey(BaseModel):
    """What a repository says about its drafts and RFCs."""

    model_config = ConfigDict(frozen=True)

    source: str
    default_branch: str | None
    branches: tuple[str, ...]
    drafts: tuple[DraftSeries, ...]
    rfcs: tuple[RfcText, ...]
    github_archive: str | None
    """``gh-pages:archive.json`` when that file is there."""
    archive_problem: str | None = None
    """Why that archive holds no issue a build can read (``empty``, ``not JSON``), if so."""
    other_tags: tuple[str, ...]
    """Tags that are no draft revision (``as-published``): one may hold an RFC's text."""
    bogus_tags: tuple[str, ...] = ()
    """Tags that look like a revision's (``draft-01``) but name no draft: not read."""
    not_series: tuple[tuple[str, str], ...] = ()
    """(name, why) of names that look like a draft series but are not one of their own
    (``draft-x-pre-04.xml``, a pre-release of draft-x-04): left out of the manifest."""
    duplicates: tuple[str, ...] = ()
    """Sentences naming revisions of different drafts that are one text (one file at one
    commit): a series under two names."""
    without_revisions: tuple[tuple[str, str], ...] = ()
    """(draft, file) of drafts only a ``-latest`` file names: no numbered revision is held."""
    several_to_one: tuple[str, ...] = ()
    """Sentences naming drafts, none replacing another, that the repository hints became
    one RFC."""
    working_group: str | None
    repository_url: str | None
    """The public URL, when the source is one or a clone's origin remote is one."""


class InitResult(BaseModel):
    """A manifest written for a repository, with what the user still has to fill in."""

    model_config = ConfigDict(frozen=True)

    survey: RepositorySurvey
    text: str
    to_fill: tuple[str, ...]
    """Each fact the repository could not give, as a sentence saying where it goes."""
    complete: bool
    """Whether a build takes the text as written: a valid manifest with nothing left to fill
    in (a build refuses a manifest with a FILL IN line)."""


def brain_name_for(source: str) -> str | None:
    """A brain id made from a source's last path component (``base-drafts.bundle`` →
    ``base-drafts``), or None when nothing usable is left."""
    last = re.split(r"[/:]", source.rstrip("/"))[-1]
    for suffix in (".bundle", ".git"):
        last = last.removesuffix(suffix)
    name = re.sub(r"[^a-z0-9]+", "-", last.lower()).strip("-")[:63].strip("-")
    return name or None


def init_manifest(repo: GitRepository, *, name: str, commit_map: str | None = None) -> InitResult:
    """Read ``repo`` and write the manifest text of a brain called ``name``.

    ``commit_map`` names a commit-id map found beside a local source (``commit-map.tsv``), to
    be recorded in ``[brain]``. Raises :class:`InitError` when the repository has no draft tags.
    """
    survey = survey_repository(repo)
    return render_manifest(survey, name=name, commit_map=commit_map)


def survey_repository(repo: GitRepository) -> RepositorySurvey:
    """Read the draft series (from every registered revision source: tags, per-revision
    files, docnames), their files, renames, the RFC texts, the default branch and the GitHub
    archive of ``repo``."""
    scan = RepositoryScan(repo)
    found = find_revisions(scan, DEFAULT_ORDER)
    names = sorted({r.draft for revisions in found.values() for r in revisions})
    not_series = _not_series(names)
    left_out = {name for name, _ in not_series}
    picked = {n: pick(n, DEFAULT_ORDER, found) for n in names if n not in left_out}
    tags = scan.tags
    bogus = tuple(sorted(t for t in tags if _looks_like_revision_tag(t)))
    other_tags = [t for t in sorted(tags) if not _REVISION_TAG.match(t) and t not in bogus]
    unnumbered = _unnumbered(repo, scan.ref, set(picked) | left_out)
    if not picked and not unnumbered:
        shown = ", ".join(sorted(tags)[:5]) or "none"
        raise InitError(
            f"{repo.source} holds no draft revision: no tag named draft-<name>-NN (such as "
            f"draft-ietf-quic-transport-00; its tags are: {shown}), no file named after a "
            "revision (draft-<name>-NN.md, .xml or .txt) and no document whose docname "
            "names one. Tag each submitted revision in the repository (or fetch the tags), "
            "then run 'ratified init' again."
        )
    branches = tuple(repo.branches())
    default = repo.default_branch()
    series = [_series(repo, draft, revisions) for draft, revisions in picked.items()]
    series.sort(key=lambda s: (s.revisions[0].committed_at, s.name))
    series = _follow_renames(series, find_renames(scan))
    series = _guess_replacements(repo, series)
    rfcs = _rfc_texts(repo, default, branches)
    rfcs += _bis_starting_points(repo, series, {r.number for r in rfcs})
    series = _became_hints(series, rfcs)
    archive = (
        "gh-pages:archive.json"
        if "gh-pages" in branches and "archive.json" in repo.list_files("gh-pages")
        else None
    )
    archive_problem = (
        _archive_problem(repo.read_text("gh-pages", "archive.json")) if archive else None
    )
    every_name = [s.name for s in series] + [draft for draft, _ in unnumbered]
    groups = Counter(
        n.split("-")[2] for n in every_name if n.split("-")[1] in _ADOPTED and len(n.split("-")) > 3
    )
    url = _public_url(repo.source) or _public_url(repo.remote_url() or "")
    return RepositorySurvey(
        source=repo.source,
        default_branch=default,
        branches=branches,
        drafts=tuple(series),
        rfcs=tuple(rfcs),
        github_archive=archive,
        archive_problem=archive_problem,
        other_tags=tuple(other_tags),
        bogus_tags=bogus,
        not_series=tuple(not_series),
        duplicates=tuple(_duplicates(series)),
        without_revisions=tuple(unnumbered),
        several_to_one=tuple(_several_to_one(series)),
        working_group=groups.most_common(1)[0][0] if groups else None,
        repository_url=url,
    )


def _archive_problem(text: str | None) -> str | None:
    """Why an ``archive.json`` holds nothing a build reads (empty, not JSON), or None."""
    if text is None or not text.strip():
        return "empty"
    try:
        json.loads(text)
    except ValueError:
        return "not JSON"
    return None


def _looks_like_revision_tag(tag: str) -> bool:
    """Whether ``tag`` looks meant as a revision's (``draft-01``, ``draft-x-7``) but is not
    ``<draft-name>-NN``."""
    return tag.lower().startswith("draft-") and not _REVISION_TAG.match(tag)


def _not_series(names: list[str]) -> list[tuple[str, str]]:
    """Names that extend another draft's name by one word (``draft-x-pre``, from files named
    ``draft-x-pre-04.xml``): a pre-release or working copy of that draft, not a draft."""
    out: list[tuple[str, str]] = []
    for name in names:
        stem, _, word = name.rpartition("-")
        if stem in names and not word.isdigit() and stem.count("-") >= 2:
            out.append(
                (
                    name,
                    f"{name} extends {stem}'s name by '{word}': a working copy of {stem}, "
                    "not a draft of its own",
                )
            )
    return out


def _duplicates(series: list[DraftSeries]) -> list[str]:
    """Revisions of different drafts that are one file at one commit."""
    seen: dict[tuple[str, str], list[str]] = {}
    for s in series:
        for r in s.revisions:
            if r.path is not None:
                seen.setdefault((r.commit, r.path), []).append(f"{s.name}-{r.revision}")
    out: list[str] = []
    for (commit, path), names in seen.items():
        drafts = {n.rsplit("-", 1)[0] for n in names}
        if len(drafts) > 1:
            out.append(
                f"{' and '.join(names)} are one text ({path} at commit {commit[:12]}): one "
                "series under two names, or a tag on the wrong commit; keep the right one"
            )
    return out


def _unnumbered(repo: GitRepository, ref: str | None, named: set[str]) -> list[tuple[str, str]]:
    """(draft, file) for each document on ``ref`` that names a draft no source found a
    numbered revision of: by its file name (``draft-x-latest.xml``, ``draft-x.md``) or its
    docname (``draft-x-latest``)."""
    if ref is None:
        return []
    documents = [p for p in repo.list_files(ref) if is_document(p)]
    texts = repo.read_texts([(ref, p) for p in documents])
    out: list[tuple[str, str]] = []
    for path, text in zip(documents, texts, strict=True):
        stem = PurePosixPath(path).stem
        numbered = _REVISION_TAG.match(stem) or _LATEST_FILE.match(stem)
        by_name = numbered.group(1) if numbered else stem if _DRAFT_STEM.match(stem) else None
        docname = docname_of(text) if text is not None else None
        draft = series_of(docname) if docname else by_name
        if draft and draft not in named and draft not in {d for d, _ in out}:
            out.append((draft, path))
    return out


def _several_to_one(series: list[DraftSeries]) -> list[str]:
    """Drafts, none replacing another, hinted to have become the same RFC."""
    by_rfc: dict[str, list[str]] = {}
    for s in series:
        if s.became_hint and s.replaced_by is None:
            by_rfc.setdefault(s.became_hint, []).append(s.name)
    return [
        f"{', '.join(drafts)} all seem to have become {rfc}: if one replaced another, say so "
        "with replaced_by; if they were merged, check each became"
        for rfc, drafts in by_rfc.items()
        if len(drafts) > 1
    ]


def _follow_renames(series: list[DraftSeries], renames: list[Rename]) -> list[DraftSeries]:
    """Each draft the repository shows renamed (its file, or the docname in it) is replaced
    by the draft it was renamed to, following renames through names no revision holds."""
    present = {s.name for s in series}
    onward: dict[str, Rename] = {}
    for rename in renames:
        onward.setdefault(rename.old, rename)
    out: list[DraftSeries] = []
    for old in series:
        hop, reasons, seen = onward.get(old.name), [], {old.name}
        while hop is not None and hop.new not in seen:
            reasons.append(hop.because)
            seen.add(hop.new)
            bis = _BIS.match(hop.new)
            if bis and not _BIS.match(old.name):
                # The RFC's text was carried on as its revision's starting point: the draft
                # became that RFC and the bis draft is a new document, not its replacement.
                old = old.model_copy(
                    update={
                        "became_hint": f"rfc{int(bis.group(1))}",
                        "became_because": f"its file went on as {hop.new}, which revises "
                        f"RFC {int(bis.group(1))} ({'; then '.join(reasons)})",
                    }
                )
                break
            if hop.new in present:
                old = old.model_copy(
                    update={
                        "replaced_by": hop.new,
                        "replaced_because": "read from the repository: " + "; then ".join(reasons),
                        "replaced_read": True,
                    }
                )
                break
            hop = onward.get(hop.new)
        out.append(old)
    return out


def _public_url(location: str) -> str | None:
    """The https URL of a repository location (``git@github.com:o/r.git`` →
    ``https://github.com/o/r``), or None for a local path or another scheme."""
    ssh = re.fullmatch(r"git@([^:/]+):(.+?)(?:\.git)?/?", location)
    if ssh:
        return f"https://{ssh.group(1)}/{ssh.group(2)}"
    if location.startswith("https://"):
        return location.rstrip("/").removesuffix(".git")
    return None


def _is_document(path: str) -> bool:
    return is_document(path)


def _preference(path: str) -> tuple[int, int, str]:
    pure = PurePosixPath(path)
    return (DOCUMENT_SUFFIXES.index(pure.suffix.lower()), len(pure.parts), path)


def _series(repo: GitRepository, name: str, found: dict[str, FoundRevision]) -> DraftSeries:
    """The draft's file at each revision: the one its source names (a per-revision file, a
    docname's file); for a tag, named after it, else the previous revision's (followed
    through a rename or move), else the one document changed, else the one document there."""
    revisions: list[RevisionFile] = []
    previous: RevisionFile | None = None
    for number, revision in sorted(found.items()):
        path: str | None = None
        how: FileEvidence = "unknown"
        if revision.path is not None:
            path, how = revision.path, "given"
        else:
            path, how = _tagged_file(repo, name, number, revision.commit, previous)
        current = RevisionFile(
            revision=number,
            tag=revision.tag,
            commit=revision.commit,
            committed_at=revision.committed_at,
            path=path,
            how=how,
            source=revision.source,
            provenance=revision.provenance,
            guess=revision.guess,
        )
        revisions.append(current)
        if path is not None:
            previous = current
    title = None
    if previous is not None and previous.path is not None:
        parsed = _parse(previous.path, repo.read_text(previous.commit, previous.path) or "")
        title = parsed.title if parsed else None
    return DraftSeries(name=name, revisions=tuple(revisions), title=title)


def _tagged_file(
    repo: GitRepository, name: str, number: str, commit: str, previous: RevisionFile | None
) -> tuple[str | None, FileEvidence]:
    files = repo.list_files(commit)
    documents = [f for f in files if _is_document(f)]
    stems = {name, f"{name}-{number}"}
    named = [f for f in documents if PurePosixPath(f).stem in stems]
    if named:
        exact = [f for f in named if PurePosixPath(f).stem == name] or named
        kept = previous.path if previous and previous.path in exact else None
        return kept or min(exact, key=_preference), "name"
    if previous is not None and previous.path is not None and previous.path in files:
        return previous.path, "followed"
    changes = repo.changed_files(previous.commit if previous else None, commit)
    renamed = [
        c.path for c in changes if previous and c.old_path == previous.path and _is_document(c.path)
    ]
    changed = sorted({c.path for c in changes if c.status != "D" and c.path in documents})
    if renamed:
        return renamed[0], "followed"
    if len(changed) == 1:
        return changed[0], "only-changed"
    if len(documents) == 1:
        return documents[0], "only-document"
    return None, "unknown"


def _topic(name: str) -> tuple[str | None, str, str]:
    """(group, topic, all) of a draft name, dashes dropped: ``draft-ietf-tls-rfc8446bis`` is
    ``("tls", "rfc8446bis", "tlsrfc8446bis")``; a person's draft has no group of its own."""
    words = name.split("-")[2:]
    if name.split("-")[1] in _ADOPTED:
        return (words[0] if words else None), "".join(words[1:]), "".join(words)
    return None, "".join(words[1:]), "".join(words)


def _guess_replacements(repo: GitRepository, series: list[DraftSeries]) -> list[DraftSeries]:
    """Guess which draft replaced which: a person's draft whose topic words are those of a
    group's draft tagged after it, or a draft whose file was renamed to a later draft's file
    between the two drafts' tags."""
    formers = {
        s.name: set(repo.former_paths(s.revisions[0].commit, s.revisions[0].path))
        if s.revisions[0].path
        else set()
        for s in series
    }
    out: list[DraftSeries] = []
    for old in series:
        if old.replaced_read:
            out.append(old)
            continue
        last = old.revisions[-1]
        later = [
            new
            for new in series
            if new.name != old.name
            and new.revisions[0].committed_at >= last.committed_at
            and not _BIS.match(new.name)  # it revises an RFC, and replaces no draft
        ]
        reasons: dict[str, str] = {}
        if old.individual:
            _, old_topic, old_all = _topic(old.name)
            for new in later:
                if new.individual:
                    continue
                group, topic, _ = _topic(new.name)
                if (
                    topic
                    and topic in {old_all, old_topic}
                    and (old_all == topic or old_all == f"{group}{topic}")
                ):
                    reasons[new.name] = (
                        f"guess from matching topic words ({old.name} and {new.name}) and tag "
                        f"dates ({old.name}-{last.revision} before {new.name}-"
                        f"{new.revisions[0].revision})"
                    )
        for new in later:
            first = new.revisions[0]
            if last.path is None or first.path is None or first.path == last.path:
                continue
            if last.path in formers[new.name]:
                at = first.tag or f"commit {first.commit[:12]}"
                reason = f"{first.path} at {at} was once {last.path}, {old.name}'s file"
                reasons[new.name] = (
                    f"{reasons[new.name]}; and {reason}"
                    if new.name in reasons
                    else f"guess: {reason}"
                )
        if len(reasons) == 1:
            ((target, why),) = reasons.items()
            old = old.model_copy(update={"replaced_by": target, "replaced_because": why})
        elif reasons:
            why = "; ".join(f"{n}? ({r})" for n, r in sorted(reasons.items()))
            old = old.model_copy(update={"replaced_because": f"several candidates: {why}"})
        out.append(old)
    return out


def _rfc_texts(
    repo: GitRepository, default: str | None, branches: tuple[str, ...]
) -> list[RfcText]:
    """One text per RFC number found on a branch: the default branch's first, the source
    (.md, then .xml) before rendered text."""
    found: dict[int, list[tuple[str, str]]] = {}
    ordered = ([default] if default else []) + [b for b in branches if b != default]
    for branch in ordered:
        for path in repo.list_files(branch):
            match = _RFC_FILE.match(PurePosixPath(path).name)
            if match:
                found.setdefault(int(match.group(1)), []).append((branch, path))
    texts: list[RfcText] = []
    for number, places in sorted(found.items()):
        ref, path = min(places, key=lambda p: (ordered.index(p[0]), _preference(p[1])))
        text = repo.read_text(ref, path) or ""
        parsed = _parse(path, text)
        fields = _front_matter(text) if path.endswith(".md") else {}
        obsoletes = tuple(int(n) for n in re.findall(r"\d+", fields.get("obsoletes", "")))
        texts.append(
            RfcText(
                number=number,
                ref=ref,
                path=path,
                title=parsed.title if parsed else None,
                docname=(parsed.docname if parsed else None) or fields.get("docname"),
                date=fields.get("date"),
                obsoletes=obsoletes,
                former_paths=tuple(repo.former_paths(ref, path)),
                also_at=tuple(f"{r}:{p}" for r, p in places if (r, p) != (ref, path)),
            )
        )
    return texts


def _bis_starting_points(
    repo: GitRepository, series: list[DraftSeries], held: set[int]
) -> list[RfcText]:
    """The RFC texts held as a bis draft's first revision: where a draft's file went on as
    ``draft-…-rfcNNNNbis`` (the draft became RFC NNNN), the bis draft's -00 is usually the
    RFC's text as published, the starting point of its revision. A guess, said so."""
    by_name = {s.name: s for s in series}
    texts: list[RfcText] = []
    for old in series:
        if not (old.became_hint and old.became_because and "went on as" in old.became_because):
            continue
        number = int(old.became_hint.removeprefix("rfc"))
        bis = next(
            (
                s
                for s in by_name.values()
                if (m := _BIS.match(s.name)) and int(m.group(1)) == number
            ),
            None,
        )
        first = bis.revisions[0] if bis and bis.revisions else None
        if number in held or bis is None or first is None or first.revision != "00":
            continue
        if first.path is None:
            continue
        text = repo.read_text(first.commit, first.path) or ""
        parsed = _parse(first.path, text)
        texts.append(
            RfcText(
                number=number,
                ref=first.tag or first.commit,
                path=first.path,
                title=parsed.title if parsed else None,
                found_as=f"{bis.name}-00, the revision of RFC {number} that {old.name} became, "
                f"starts from its text ({first.provenance})",
            )
        )
        held.add(number)
    return texts


def _parse(path: str, text: str) -> ParsedDocument | None:
    try:
        return parse_document(path, text)
    except (ParseError, ValueError):
        return None


def _front_matter(text: str) -> dict[str, str]:
    """``docname``, ``date`` and ``obsoletes`` from a kramdown-rfc YAML header, as written."""
    fields: dict[str, str] = {}
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return fields
    for line in lines[1:]:
        if line.strip() == "---":
            break
        match = _FRONT_MATTER_FIELD.match(line)
        if match and match.group(2):
            fields.setdefault(match.group(1).lower(), match.group(2).strip("\"'"))
    return fields


def _became_hints(series: list[DraftSeries], rfcs: list[RfcText]) -> list[DraftSeries]:
    """Hint which RFC each draft became: the RFC text naming one of its revisions as its
    docname, or an RFC file renamed from the draft's file."""
    hints: dict[str, tuple[str, str]] = {}
    names = {s.name for s in series}
    for rfc in rfcs:
        where = f"{rfc.ref}:{rfc.path}"
        reasons: list[str] = []
        draft: str | None = None
        if rfc.docname:
            match = _REVISION_TAG.match(rfc.docname) or re.match(
                r"^(draft-.+?)(-latest)?$", rfc.docname
            )
            if match and match.group(1) in names:
                draft = match.group(1)
                reasons.append(f"{where} gives docname {rfc.docname}")
        for former in rfc.former_paths:
            owner = next((s.name for s in series if former in _paths(s)), None)
            if owner is not None:
                if draft in (None, owner):
                    draft = owner
                    reasons.append(f"{rfc.path} was renamed from {former}, {owner}'s file")
                break
        if draft is not None and draft not in hints:
            hints[draft] = (rfc.name, " and ".join(reasons))
    return [
        s.model_copy(update={"became_hint": hints[s.name][0], "became_because": hints[s.name][1]})
        if s.name in hints and s.replaced_by is None
        else s
        for s in series
    ]


def _runs(numbers: list[str]) -> str:
    """``00-03, 05, 07-08`` for revision numbers (two digits, in order)."""
    runs: list[list[int]] = []
    for n in (int(x) for x in numbers):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]:02d}-{r[-1]:02d}" if len(r) > 1 else f"{r[0]:02d}" for r in runs)


def _paths(series: DraftSeries) -> set[str]:
    return {r.path for r in series.revisions if r.path}


def _value(text: str) -> str:
    """``text`` as a TOML basic string."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _comment(text: str) -> str:
    """``text`` safe inside a TOML comment: control characters shown as escapes."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _wrap(text: str, indent: str = "# ", width: int = 96) -> list[str]:
    words, lines, line = _comment(text).split(" "), [], indent.rstrip()
    for word in words:
        candidate = f"{line} {word}" if line.strip() != "#" else f"{indent}{word}"
        if len(candidate) > width and line.strip() != "#":
            lines.append(line)
            line = f"{indent}{word}"
        else:
            line = candidate
    lines.append(line)
    return lines


def render_manifest(
    survey: RepositorySurvey, *, name: str, commit_map: str | None = None
) -> InitResult:
    """The manifest text for ``survey``, commented for the user, and what to fill in."""
    fill: list[str] = []
    out: list[str] = []
    say = out.extend
    branch = survey.default_branch
    say(
        _wrap(
            f"Written by `ratified init` from {survey.source}. Format: records/README.md. "
            "Lines marked FILL IN are facts no repository holds (which RFC a draft became, "
            "when it was published, the public URL): fill them in by hand or from `ratified "
            "fetch datatracker <draft>`, uncomment them and delete the FILL IN line; a build "
            "refuses a manifest that still has one. Lines marked guess were inferred from "
            "names and history: check them."
        )
    )
    out.append("")
    out.append("[brain]")
    out.append(f"id = {_value(name)}")
    wg = survey.working_group
    last = _last_draft(survey)
    if last is not None and last.title:
        out.append(f"title = {_value(last.title)}")
        out.extend(
            _wrap(
                f"^ the title of {last.name}-{last.numbers[-1]}, the last draft's last "
                "revision: say what the brain is about if it is more"
            )
        )
    else:
        out.append(f"title = {_value(f'The {wg} working group drafts' if wg else name)}")
        out.append("# ^ a placeholder: say what the brain is about")
    if survey.repository_url:
        out.append(f"repository = {_value(survey.repository_url)}")
    else:
        out.append(f"repository = {_value(PLACEHOLDER_URL)}")
        out.extend(
            _wrap(
                "^ FILL IN: the repository's public https URL (init read a local copy, "
                f"{survey.source}; build from it with --source meanwhile)"
            )
        )
        fill.append("the repository's public URL ([brain] repository; init read a local copy)")
    if wg:
        out.append(f"working_group = {_value(wg)}   # from the draft names")
    else:
        out.append(
            '# working_group = "…"   # optional: no draft-ietf-<group>-… name to read it from'
        )
    if commit_map:
        out.append(f"commit_map = {_value(commit_map)}   # found beside the source")
    out.append("")
    if branch:
        say(_wrap(f"The default branch (HEAD of the repository) is {branch}."))
    else:
        say(_wrap("The repository's HEAD names no branch: there is no default branch to read."))
        fill.append("which branch holds the current text (the repository's HEAD names none)")
    if survey.other_tags:
        say(
            _wrap(
                "Tags that are no draft revision: "
                + ", ".join(survey.other_tags)
                + ". If one holds an RFC's text, give that RFC an [[rfc]] entry with ref = the "
                "tag and file = the file holding it."
            )
        )
    _render_findings(survey, out)
    for series in survey.drafts:
        out.append("")
        _render_draft(series, survey, out, fill)
    for draft, path in survey.without_revisions:
        out.append("")
        _render_unnumbered(draft, path, out, fill)
    out.append("")
    if not survey.rfcs:
        say(
            _wrap(
                "This repository holds no RFC text (no rfcNNNN.md, .xml or .txt on any "
                "branch, no bis draft starting from one). An RFC a draft became is still a "
                "fact: its [[rfc]] entry without ref and file builds, and the sections of "
                "the draft's last revision stand for the RFC's, every card saying so. If a "
                "branch or tag holds the RFC's text, give the entry its ref and file."
            )
        )
    for rfc in survey.rfcs:
        _render_rfc(rfc, out, fill)
        out.append("")
    out.append("[discussion]")
    if survey.github_archive:
        out.append(
            f"github_archive = {_value(survey.github_archive)}   # i-d-template's issue and PR "
            "archive"
        )
        if survey.archive_problem:
            say(
                _wrap(
                    f"^ check: {survey.github_archive} is {survey.archive_problem}, so the brain "
                    "will hold no issues (the build notes it and says so on its cards); keep "
                    "the line if the archive will be filled, else delete it."
                )
            )
    else:
        say(
            _wrap(
                "No archive.json on a gh-pages branch: the discussion is the git history "
                "alone. If i-d-template's archive is kept elsewhere, set github_archive = "
                '"<ref>:<path>".'
            )
        )
    suffixes = sorted(
        {f"*{PurePosixPath(p).suffix}" for s in survey.drafts for p in _paths(s)}
        | {f"*{PurePosixPath(r.path).suffix}" for r in survey.rfcs}
        | {f"*{PurePosixPath(path).suffix}" for _, path in survey.without_revisions}
    )
    out.append(f"document_files = [{', '.join(_value(s) for s in suffixes)}]")
    say(
        _wrap(
            "^ commits to these files are changes to the documents; which file is which "
            "draft's document is each [[draft]]'s file (and moved)."
        )
    )
    out.append("")
    say(
        _wrap(
            "[licence] is left out: name what each source's content is under (records/"
            "README.md) rather than have it guessed."
        )
    )
    text = "\n".join(out) + "\n"
    data = tomllib.loads(text)  # what we write must be TOML, whatever the repository held
    try:
        Manifest.model_validate(data)
        complete = not fill
    except ValidationError:
        complete = False
    return InitResult(survey=survey, text=text, to_fill=tuple(fill), complete=complete)


def _last_draft(survey: RepositorySurvey) -> DraftSeries | None:
    """The draft series whose last revision is the most recent, of those not replaced."""
    current = [s for s in survey.drafts if s.replaced_by is None and s.revisions]
    return max(current, key=lambda s: s.revisions[-1].committed_at, default=None)


def _render_findings(survey: RepositorySurvey, out: list[str]) -> None:
    """Comments on what looks wrong in the repository's record: not read, or to check."""
    notes: list[str] = []
    if survey.bogus_tags:
        notes.append(
            "Tags that look like a revision's but are not <draft-name>-NN, not read (if one "
            "marks a revision, tag its commit <draft-name>-NN too): "
            f"{', '.join(survey.bogus_tags)}."
        )
    notes += [f"Not a draft series: {why}; left out." for _, why in survey.not_series]
    notes += [f"Check: {d}." for d in survey.duplicates]
    notes += [f"Check: {d}." for d in survey.several_to_one]
    for note in notes:
        out.extend(_wrap(note))


def _render_draft(
    series: DraftSeries, survey: RepositorySurvey, out: list[str], fill: list[str]
) -> None:
    first, last = series.promised
    out.append("[[draft]]")
    out.append(f"name = {_value(series.name)}")
    file = series.file
    hows = Counter(r.how for r in series.revisions if r.path)
    if file is None:
        out.append('# file = "…"   # FILL IN: no file is named after this draft at its tags')
        fill.append(f"which file holds {series.name} at its tags ([[draft]] file)")
    else:
        if set(hows) == {"name"}:
            why = "named after the draft at every tag"
        else:
            parts = {
                "given": "the file its revision source names",
                "name": "named after the draft",
                "followed": "the previous revision's file (followed through renames)",
                "only-changed": "guess: the one document file changed since the revision before",
                "only-document": "guess: the one document file in the tree",
            }
            order = sorted(
                hows, key=lambda h: next(r.revision for r in series.revisions if r.how == h)
            )
            why = "; ".join(
                f"{', '.join(r.revision for r in series.revisions if r.how == h)}: {parts[h]}"
                for h in order
            )
        out.append(f"file = {_value(file)}")
        out.extend(_wrap(f"^ {why}"))
    span = f"{first}-{last}" if first != last else first
    start, end = series.revisions[0].committed_at.date(), series.revisions[-1].committed_at.date()
    dates = f"{start} to {end}" if start != end else f"{start}"
    out.append(f"revisions = {_value(span)}   # {dates}")
    sources = series.sources
    if sources != ["tags"]:
        out.append(f"revisions_from = [{', '.join(_value(s) for s in sources)}]")
    tagged = [r.revision for r in series.revisions if r.source == "tags"]
    if tagged:
        out.extend(_wrap(f"  tags {series.name}-NN: {_runs(tagged)}"))
    for revision in series.revisions:
        if revision.source != "tags":
            mark = " (guess)" if revision.guess else ""
            out.extend(_wrap(f"  {revision.revision}: {revision.provenance}{mark}"))
    unknown = [r.revision for r in series.revisions if r.path is None]
    if unknown:
        out.extend(
            _wrap(
                f"FILL IN: no file could be told for revision(s) {', '.join(unknown)}; say "
                'where each is with moved = { "NN" = "path" }.'
            )
        )
        fill.append(f"which file holds {series.name} revision(s) {', '.join(unknown)} (moved)")
    if series.missing:
        out.append(f"missing = [{', '.join(_value(n) for n in series.missing)}]")
        out.extend(
            _wrap(
                "^ revisions nothing in the repository holds (no tag, no per-revision file, "
                "no docname naming them): the brain names them as missing."
            )
        )
    moved = series.moved
    if moved:
        pairs = ", ".join(f"{_value(k)} = {_value(v)}" for k, v in moved.items())
        out.append(f"moved = {{ {pairs} }}")
        out.extend(_wrap("^ from each revision on, the document is that file (renamed or moved)"))
    if series.replaced_by:
        out.append(f"replaced_by = {_value(series.replaced_by)}")
        out.extend(_wrap(f"^ {series.replaced_because}"))
        return
    if series.replaced_because:
        out.extend(_wrap(f"replaced_by: not set, {series.replaced_because}"))
    rfc = series.became_hint
    check = f"`ratified fetch datatracker {series.name}`"
    if rfc:
        out.append(f"# became = {_value(rfc)}")
        out.extend(
            _wrap(
                f"^ FILL IN: the RFC this draft became, if any. Hint: {series.became_because}. "
                f"Check with {check}."
            )
        )
        fill.append(f"which RFC {series.name} became (became; the repository hints {rfc})")
    else:
        out.append('# became = "rfcNNNN"')
        out.extend(
            _wrap(
                f"^ FILL IN: the RFC this draft became, if it became one ({check} says "
                "which), with the [[rfc]] entry below saying when it was published; if it "
                "became none, delete the became line, this note and the entry."
            )
        )
        _render_rfc_to_fill(out, series.title, f"{series.name}-{series.numbers[-1]}")
        fill.append(f"whether {series.name} became an RFC, and which (became)")


def _render_rfc_to_fill(out: list[str], title: str | None, last: str | None) -> None:
    """A commented ``[[rfc]]`` entry for the RFC a draft may have become, with what the
    repository suggests (``title``, that of its revision ``last``) and what only the public
    record knows; indented, so that it is not mistaken for an entry init found."""
    guess = (
        f" (its title a guess: {last}'s, the last revision; the RFC's may differ)"
        if title and last
        else ""
    )
    out.extend(_wrap(f"The [[rfc]] entry to uncomment{guess}:"))
    out.append("# [[rfc]]")
    out.append("#   number = NNNN")
    out.append(f"#   title = {_value(title or '…')}")
    out.append('#   published = "YYYY-MM"')


def _render_unnumbered(draft: str, path: str, out: list[str], fill: list[str]) -> None:
    """A draft only a file names, with no numbered revision anywhere in the repository."""
    out.append("[[draft]]")
    out.append(f"name = {_value(draft)}")
    out.append(f"file = {_value(path)}")
    out.extend(
        _wrap(
            f"^ {path} names this draft, but nothing in the repository holds one of its "
            "numbered revisions (no tag, no per-revision file, no docname naming one)"
        )
    )
    out.append('revisions = "latest"')
    out.append('revisions_from = ["latest"]')
    out.extend(
        _wrap(
            "^ the repository numbers no revision: its document as last committed is read "
            "as one revision named latest, and the brain says the numbered ones are not in "
            "it. If you know them, tag each revision's commit and run init again."
        )
    )
    out.append('# became = "rfcNNNN"')
    out.extend(
        _wrap(
            f"^ FILL IN: the RFC this draft became, if it became one (`ratified fetch "
            f"datatracker {draft}` says which), with the [[rfc]] entry below; if it became "
            "none, delete the became line, this note and the entry."
        )
    )
    _render_rfc_to_fill(out, None, None)
    fill.append(f"whether {draft} became an RFC, and which (became)")


def _render_rfc(rfc: RfcText, out: list[str], fill: list[str]) -> None:
    out.append("[[rfc]]")
    out.append(f"number = {rfc.number}")
    if rfc.title:
        out.append(f"title = {_value(rfc.title)}   # from the text")
    else:
        out.append(f'# title = "…"   # FILL IN: the title of RFC {rfc.number}')
        fill.append(f"the title of RFC {rfc.number} ([[rfc]] title)")
    hint = f" (the text gives {rfc.date})" if rfc.date else ""
    out.append('# published = "YYYY-MM"')
    out.extend(_wrap(f"^ FILL IN: the month RFC {rfc.number} was published{hint}"))
    fill.append(f'when RFC {rfc.number} was published ([[rfc]] published = "YYYY-MM"){hint}')
    out.append(f"ref = {_value(rfc.ref)}")
    out.append(f"file = {_value(rfc.path)}")
    if rfc.found_as:
        out.extend(_wrap(f"^ guess: {rfc.found_as}; check it is the RFC's text"))
    if rfc.also_at:
        out.extend(_wrap(f"^ also at {', '.join(rfc.also_at)}"))
    if rfc.obsoletes:
        numbers = ", ".join(str(n) for n in rfc.obsoletes)
        out.extend(
            _wrap(
                f"obsoletes = [...]: the text says RFC {rfc.number} obsoletes {numbers}; list "
                "those that have an [[rfc]] entry of their own."
            )
        )
