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
from ratified_rdf.sources.git_repo import GitRepository, SourceError, TagInfo

DOCUMENT_SUFFIXES = (".md", ".mkd", ".markdown", ".xml", ".txt")
"""Suffixes of files that can hold a draft's text, the preferred (the source) first."""

_REVISION_TAG = re.compile(r"^(draft-[a-z0-9]+(?:-[a-z0-9]+)+)-(\d{2})$")
_RFC_FILE = re.compile(r"^rfc(\d{1,5})\.(md|xml|txt)$")
_NOT_DOCUMENTS = ("readme", "contributing", "license", "licence", "changelog", "code_of_conduct")
_ADOPTED = {"ietf", "irtf", "iab", "iesg"}
"""The second word of a draft name that marks a group's document rather than a person's."""
_FRONT_MATTER_FIELD = re.compile(r"^(docname|date|obsoletes)\s*:\s*(.*?)\s*$", re.IGNORECASE)

PLACEHOLDER_URL = "https://example.invalid/fill-in-the-public-url"
"""Written as ``[brain] repository`` when init read a local copy with no public remote: a
reserved name (RFC 2606), so no link built from it points at anyone's repository."""

FileEvidence = Literal["name", "followed", "only-changed", "only-document", "unknown"]


class InitError(SourceError):
    """The repository cannot be described by a manifest (no draft tags, say)."""


class RevisionFile(BaseModel):
    """Which file holds one revision of a draft, and how that was found."""

    model_config = ConfigDict(frozen=True)

    revision: str
    tag: str
    commit: str
    committed_at: datetime
    path: str | None
    how: FileEvidence
    """``name``: the file is named after the draft; ``followed``: the previous revision's file,
    renamed or moved if it was; ``only-changed``: the one document file changed since the
    previous revision (a guess); ``only-document``: the one document file in the tree (a
    guess); ``unknown``: none of these."""


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

    @property
    def numbers(self) -> list[str]:
        """The revision numbers tagged, in order."""
        return [r.revision for r in self.revisions]

    @property
    def promised(self) -> tuple[str, str]:
        """The first revision and the last of the unbroken run from it: what the manifest's
        ``revisions`` range promises (the build reads tags past a gap too)."""
        first = last = int(self.numbers[0])
        present = {int(n) for n in self.numbers}
        while last + 1 in present:
            last += 1
        return f"{first:02d}", f"{last:02d}"

    @property
    def missing(self) -> list[str]:
        """Revision numbers with no tag between the first tagged and the last."""
        present = {int(n) for n in self.numbers}
        low, high = min(present), max(present)
        return [f"{n:02d}" for n in range(low, high + 1) if n not in present]

    @property
    def file(self) -> str | None:
        """The document at the first revision whose file is known."""
        return next((r.path for r in self.revisions if r.path), None)

    @property
    def moved(self) -> dict[str, str]:
        """Revision → path, for each revision whose file differs from the one before."""
        moves: dict[str, str] = {}
        current = self.file
        for revision in self.revisions:
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
    other_tags: tuple[str, ...]
    """Tags that are no draft revision (``as-published``): one may hold an RFC's text."""
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
    """Whether the text is a valid manifest as written (nothing required left to fill in)."""


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
    """Read the draft series, their files, the RFC texts, the default branch and the GitHub
    archive of ``repo``."""
    tags = repo.tags()
    by_draft: dict[str, dict[str, TagInfo]] = {}
    other_tags: list[str] = []
    for tag_name, tag in sorted(tags.items()):
        match = _REVISION_TAG.match(tag_name)
        if match:
            by_draft.setdefault(match.group(1), {})[match.group(2)] = tag
        else:
            other_tags.append(tag_name)
    if not by_draft:
        shown = ", ".join(sorted(tags)[:5]) or "none"
        raise InitError(
            f"{repo.source} has no draft revision tags (draft-<name>-NN, such as "
            f"draft-ietf-quic-transport-00); its tags are: {shown}. Tag each submitted "
            "revision in the repository (or fetch the tags), then run 'ratified init' again."
        )
    branches = tuple(repo.branches())
    default = repo.default_branch()
    series = [_series(repo, draft, found) for draft, found in by_draft.items()]
    series.sort(key=lambda s: (s.revisions[0].committed_at, s.name))
    series = _guess_replacements(repo, series)
    rfcs = _rfc_texts(repo, default, branches)
    series = _became_hints(series, rfcs)
    archive = (
        "gh-pages:archive.json"
        if "gh-pages" in branches and "archive.json" in repo.list_files("gh-pages")
        else None
    )
    groups = Counter(
        s.name.split("-")[2] for s in series if not s.individual and len(s.name.split("-")) > 3
    )
    url = _public_url(repo.source) or _public_url(repo.remote_url() or "")
    return RepositorySurvey(
        source=repo.source,
        default_branch=default,
        branches=branches,
        drafts=tuple(series),
        rfcs=tuple(rfcs),
        github_archive=archive,
        other_tags=tuple(other_tags),
        working_group=groups.most_common(1)[0][0] if groups else None,
        repository_url=url,
    )


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
    pure = PurePosixPath(path)
    return (
        pure.suffix.lower() in DOCUMENT_SUFFIXES
        and not pure.name.lower().startswith(_NOT_DOCUMENTS)
        and not path.startswith(".")
    )


def _preference(path: str) -> tuple[int, int, str]:
    pure = PurePosixPath(path)
    return (DOCUMENT_SUFFIXES.index(pure.suffix.lower()), len(pure.parts), path)


def _series(repo: GitRepository, name: str, found: dict[str, TagInfo]) -> DraftSeries:
    """The draft's file at each tag: named after it, else the previous revision's (followed
    through a rename or move), else the one document changed, else the one document there."""
    revisions: list[RevisionFile] = []
    previous: RevisionFile | None = None
    for number, tag in sorted(found.items()):
        files = repo.list_files(tag.commit)
        documents = [f for f in files if _is_document(f)]
        stems = {name, f"{name}-{number}"}
        named = [f for f in documents if PurePosixPath(f).stem in stems]
        path: str | None = None
        how: FileEvidence = "unknown"
        if named:
            exact = [f for f in named if PurePosixPath(f).stem == name] or named
            path = previous.path if previous and previous.path in exact else None
            path, how = path or min(exact, key=_preference), "name"
        elif previous is not None and previous.path is not None and previous.path in files:
            path, how = previous.path, "followed"
        else:
            before = previous.commit if previous else None
            changes = repo.changed_files(before, tag.commit)
            renamed = [
                c.path
                for c in changes
                if previous and c.old_path == previous.path and _is_document(c.path)
            ]
            changed = sorted({c.path for c in changes if c.status != "D" and c.path in documents})
            if renamed:
                path, how = renamed[0], "followed"
            elif len(changed) == 1:
                path, how = changed[0], "only-changed"
            elif len(documents) == 1:
                path, how = documents[0], "only-document"
        current = RevisionFile(
            revision=number,
            tag=tag.name,
            commit=tag.commit,
            committed_at=tag.committed_at,
            path=path,
            how=how,
        )
        revisions.append(current)
        if path is not None:
            previous = current
        elif previous is None:
            previous = None
    return DraftSeries(name=name, revisions=tuple(revisions))


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
        last = old.revisions[-1]
        later = [
            new
            for new in series
            if new.name != old.name and new.revisions[0].committed_at >= last.committed_at
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
                reason = f"{first.path} at {first.tag} was once {last.path}, {old.name}'s file"
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
            "and when it was published): fill them in by hand or from `ratified fetch "
            "datatracker <draft>`, then uncomment them. Lines marked guess were inferred "
            "from names and history: check them."
        )
    )
    out.append("")
    out.append("[brain]")
    out.append(f"id = {_value(name)}")
    wg = survey.working_group
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
    for series in survey.drafts:
        out.append("")
        _render_draft(series, survey, out, fill)
    out.append("")
    if not survey.rfcs:
        say(
            _wrap(
                "This repository holds no RFC text (no rfcNNNN.md, .xml or .txt on any "
                "branch). The build reads the draft chains, but their sections cannot be "
                "followed into an RFC. If a draft became an RFC, add an [[rfc]] entry whose "
                "ref and file hold the RFC's text and set the draft's became."
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
        complete = True
    except ValidationError:
        complete = False
    return InitResult(survey=survey, text=text, to_fill=tuple(fill), complete=complete)


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
    tags = f"{series.name}-{first}" + (f" … -{last}" if first != last else "")
    start, end = series.revisions[0].committed_at.date(), series.revisions[-1].committed_at.date()
    dates = f"{start} to {end}" if start != end else f"{start}"
    out.append(f"revisions = {_value(span)}   # tags {_comment(tags)}, {dates}")
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
        out.extend(
            _wrap(
                f"No tag for revision(s) {', '.join(series.missing)}: the range promises the "
                "unbroken run from the first; the build still reads every tag after it."
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
    else:
        if series.replaced_because:
            out.extend(_wrap(f"replaced_by: not set, {series.replaced_because}"))
        rfc = series.became_hint
        if rfc:
            out.append(f"# became = {_value(rfc)}")
            out.extend(
                _wrap(
                    f"^ FILL IN: the RFC this draft became, if any. Hint: {series.became_because}. "
                    f"Check with `ratified fetch datatracker {series.name}`."
                )
            )
            fill.append(f"which RFC {series.name} became (became; the repository hints {rfc})")
        elif survey.rfcs:
            out.append('# became = "rfcNNNN"')
            out.extend(
                _wrap(
                    "^ FILL IN if this draft became an RFC (`ratified fetch datatracker "
                    f"{series.name}` says which): set became and, if that RFC has no [[rfc]] "
                    "entry below, add one (a tag may hold its text); else leave it out."
                )
            )
            fill.append(f"whether {series.name} became an RFC (became)")


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
