"""Turn a specification repository plus its manifest into records of truth.

Each draft's revisions are found where its manifest entry says (``<draft>-NN`` tags by
default; per-revision files, docnames: :mod:`ratified_rdf.sources.revisions`), each dated by
its commit; the document there is parsed into sections; every section is aligned with the RFC
its draft became.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from ratified_rdf.records.alignment import align_document, forget_texts
from ratified_rdf.records.manifest import DraftEntry, Manifest, RfcEntry
from ratified_rdf.records.models import (
    AlignmentRecord,
    CommitRef,
    DraftRecord,
    KeptRevision,
    RevisionRecord,
    RfcRecord,
    SpecRecords,
)
from ratified_rdf.records.rfc_texts import locate_rfc_text, unread_document_files
from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.formats import format_of, parse_document
from ratified_rdf.sources.git_repo import GitRepository, SourceError, TagInfo
from ratified_rdf.sources.revisions import (
    FoundRevision,
    RepositoryScan,
    find_revisions,
    pick,
)

Progress = Callable[[str], None]


def read_spec(
    manifest: Manifest,
    repo: GitRepository,
    commit_map: dict[str, str],
    progress: Progress | None = None,
    records_folder: Path | None = None,
    posted: Mapping[str, datetime] | None = None,
) -> SpecRecords:
    """Read every revision and RFC the manifest names, and align their sections; an RFC's
    ``text`` kept as a record is read from ``records_folder`` (the manifest's folder), and so
    is a revision listed as missing whose text is kept there (``texts/<draft>-NN.*``), dated
    by its posting (``posted``: revision name → when the Datatracker says it was posted)."""
    step = progress or (lambda _label: None)
    found = _found(manifest, repo)
    revisions: list[RevisionRecord] = []
    for entry in manifest.draft:
        for number, revision in _entry_revisions(entry, found, repo):
            step(f"{entry.name}-{number}")
            file = revision.path or entry.file_at(number)
            revisions.append(
                RevisionRecord(
                    draft=entry.name,
                    number=number,
                    tag=revision.tag,
                    provenance=revision.provenance,
                    file=file,
                    commit=_commit(revision, commit_map),
                    document=_read(repo, revision, file, gap=True),
                )
            )
    kept = (
        [k for e in manifest.draft for k in _kept_revisions(e, records_folder, posted or {})]
        if records_folder is not None
        else []
    )
    filled = {k.name for k in kept}
    rfcs: list[RfcRecord] = []
    for rfc in manifest.rfc:
        step(rfc.name)
        rfcs.append(_rfc_record(manifest, rfc, repo, commit_map, revisions, records_folder))
    drafts = [
        DraftRecord(
            name=entry.name,
            title=next(
                (r.document.title for r in reversed(revisions) if r.draft == entry.name), None
            ),
            became=entry.became,
            replaced_by=entry.replaced_by,
            missing_revisions=tuple(n for n in entry.missing if f"{entry.name}-{n}" not in filled),
        )
        for entry in manifest.draft
    ]
    step("aligning sections")
    return SpecRecords(
        brain=manifest.brain,
        source=repo.source,
        drafts=tuple(drafts),
        revisions=tuple(revisions),
        rfcs=tuple(rfcs),
        alignments=tuple(_alignments(manifest, revisions, rfcs, kept)),
        kept_revisions=tuple(kept),
        unread_files=unread_document_files(repo, _read_paths(manifest, revisions, rfcs)),
    )


def _read_paths(
    manifest: Manifest, revisions: list[RevisionRecord], rfcs: list[RfcRecord]
) -> set[str]:
    """Every path a draft's revisions or an RFC's own text is read from (a per-revision
    file included, which the entry's own file names do not list)."""
    paths = {path for entry in manifest.draft for path in entry.document_files()}
    paths.update(revision.file for revision in revisions)
    paths.update(rfc.file for rfc in rfcs if rfc.text_held and rfc.file is not None)
    return paths


def spec_commits(manifest: Manifest, repo: GitRepository) -> list[str]:
    """The commits :func:`read_spec` reads the manifest's revisions and RFCs at, sorted, from
    the repository's tags alone: what a build needs to start reading the documents' history
    before their texts are read. Raises as :func:`read_spec` does for a missing revision."""
    found = _found(manifest, repo)
    commits = {
        revision.commit
        for entry in manifest.draft
        for _, revision in _entry_revisions(entry, found, repo)
    }
    for rfc in manifest.rfc:
        where = _rfc_text_at(manifest, rfc, repo)
        if where is not None:
            commits.add(repo.resolve(where[0]).commit)
    return sorted(commits)


def _rfc_text_at(
    manifest: Manifest, rfc: RfcEntry, repo: GitRepository
) -> tuple[str, str, str | None] | None:
    """(ref, file, how it was found) of the RFC's text: the manifest's, else where
    :func:`locate_rfc_text` finds it; None when the repository does not hold it."""
    if rfc.ref is not None and rfc.file is not None:
        return rfc.ref, rfc.file, None
    documents = [
        path
        for entry in manifest.draft
        if manifest.final_rfc(entry.name) == rfc.name
        for path in entry.document_files()
    ]
    found = locate_rfc_text(repo, rfc.number, documents)
    return None if found is None else (found.ref, found.file, found.how)


def _rfc_record(
    manifest: Manifest,
    rfc: RfcEntry,
    repo: GitRepository,
    commit_map: dict[str, str],
    revisions: list[RevisionRecord],
    records_folder: Path | None = None,
) -> RfcRecord:
    """The RFC with its text where the repository holds it; else as the records folder keeps
    it (``text``); else with the sections of the last revision of the draft that became it
    standing for its own; else a fact alone."""
    # The facts alone: no text, no sections, no commit (what is left when nothing holds it).
    fact = RfcRecord(
        number=rfc.number,
        title=rfc.title,
        published=rfc.published,
        obsoletes=rfc.obsoletes,
        ref=None,
        file=None,
        commit=None,
        document=ParsedDocument(),
    )
    where = _rfc_text_at(manifest, rfc, repo)
    if where is not None:
        ref, file, how = where
        tag = repo.resolve(ref)
        return fact.model_copy(
            update={
                "ref": ref,
                "file": file,
                "commit": _commit(tag, commit_map),
                "document": _read(repo, tag, file, published=True),
                "found": how,
            }
        )
    if rfc.text is not None and records_folder is not None:
        return fact.model_copy(
            update={"file": rfc.text, "document": _kept_text(rfc, records_folder)}
        )
    # The chain's revisions in the order the text evolved: a replaced draft's before its
    # replacement's, then by number; the last is the text the RFC was published from.
    chain = sorted(
        (r for r in revisions if manifest.final_rfc(r.draft) == rfc.name),
        key=lambda r: (-manifest.replacements(r.draft), r.number),
    )
    if not chain:
        return fact
    last = chain[-1]
    return fact.model_copy(
        update={
            "ref": last.tag,
            "file": last.file,
            "commit": last.commit,
            "document": last.document,
            "sections_from": last.name,
        }
    )


def _kept_text(rfc: RfcEntry, records_folder: Path) -> ParsedDocument:
    """The RFC's text as the records folder keeps it, read by its suffix's reader as an
    RFC's own; a file that is not there is a sentence saying how to fetch it."""
    path = records_folder / rfc.text if rfc.text is not None else records_folder
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, IsADirectoryError):
        raise SourceError(
            f"RFC {rfc.number}'s [[rfc]] entry names text = {rfc.text!r}, but there is no such "
            f"file in {records_folder}. Fetch it with `ratified fetch rfc {rfc.number} "
            f"--records {records_folder}`, or remove the line."
        ) from None
    return parse_document(path.name, text, published=True)


KEPT_SUFFIXES = (".xml", ".txt", ".md")
"""The suffixes a kept revision text may have, the preferred (the source) first."""


def _kept_revisions(
    entry: DraftEntry, records_folder: Path, posted: Mapping[str, datetime]
) -> list[KeptRevision]:
    """The revisions ``entry`` lists as missing whose text the records folder keeps
    (``texts/<draft>-NN.xml``, as ``ratified fetch draft`` keeps it), each read by its
    suffix's reader; one its reader cannot read is a gap, as a repository's would be."""
    from ratified_rdf.sources.online.ietf_texts import ARCHIVE_URL, TEXTS_FOLDER

    out: list[KeptRevision] = []
    for number in entry.missing:
        name = f"{entry.name}-{number}"
        path = next(
            (
                p
                for s in KEPT_SUFFIXES
                if (p := records_folder / TEXTS_FOLDER / f"{name}{s}").is_file()
            ),
            None,
        )
        if path is None:
            continue
        when = posted.get(name)
        if when is None:
            raise SourceError(
                f"{records_folder / TEXTS_FOLDER} keeps {path.name}, the text of {name}, which "
                "the repository lacks, but nothing dates it: no commit made it, and the "
                "Datatracker facts kept beside the manifest do not give its posting. Run "
                f"`ratified fetch datatracker {entry.name} --records {records_folder}`, or "
                "remove the kept text."
            )
        file = f"{TEXTS_FOLDER}/{path.name}"
        label = f"kept record {file}"
        try:
            document = parse_document(path.name, path.read_text(encoding="utf-8"))
        except (ParseError, UnicodeDecodeError) as error:
            document = ParsedDocument(gap=f"{file} ({label}) could not be read: {error}")
        out.append(
            KeptRevision(
                draft=entry.name,
                number=number,
                file=file,
                url=f"{ARCHIVE_URL}{path.name}",
                posted_at=when,
                document=document,
            )
        )
    return out


def _found(manifest: Manifest, repo: GitRepository) -> dict[str, list[FoundRevision]]:
    """Every revision the sources the manifest's drafts name find, by source."""
    names = list(dict.fromkeys(n for entry in manifest.draft for n in entry.revisions_from))
    return find_revisions(RepositoryScan(repo), names)


def _entry_revisions(
    entry: DraftEntry, found: dict[str, list[FoundRevision]], repo: GitRepository
) -> list[tuple[str, FoundRevision]]:
    """(number, revision) of ``entry``'s revisions, by number, but those it lists as missing
    (what a source finds of one is not read: the manifest's word wins); raises when one it
    expects is neither found nor listed as missing."""
    chosen = pick(entry.name, entry.revisions_from, found)
    absent = [n for n in entry.held_revisions() if n not in chosen]
    if absent:
        where = " or ".join(entry.revisions_from)
        raise SourceError(
            f"{repo.source} holds no revision {', '.join(absent)} of {entry.name} (looked in: "
            f"{where}); fix the 'revisions' range in the manifest, list those it lacks in "
            "'missing', or fetch the missing tags."
        )
    return [(n, r) for n, r in chosen.items() if n not in entry.missing]


def _alignments(
    manifest: Manifest,
    revisions: list[RevisionRecord],
    rfcs: list[RfcRecord],
    kept: Sequence[KeptRevision] = (),
) -> list[AlignmentRecord]:
    by_name = {r.name: r for r in rfcs}
    last = _standing_revisions(manifest, revisions)
    out: list[AlignmentRecord] = []
    # A kept revision's sections align as a repository's revision's do.
    read: list[RevisionRecord | KeptRevision] = [*revisions, *kept]
    for revision in read:
        final = manifest.final_rfc(revision.draft)
        if final is not None:
            out += align_document(revision.name, revision.document, final, by_name[final].document)
        elif (head := last.get(manifest.head(revision.draft))) is not None:
            # A draft that became no RFC: its last revision is the final text its sections
            # are cards about, so every revision of its chain aligns with that one.
            out += align_document(revision.name, revision.document, head.name, head.document)
    for rfc in rfcs:
        for old in rfc.obsoletes:
            out += align_document(
                f"rfc{old}", by_name[f"rfc{old}"].document, rfc.name, rfc.document
            )
    forget_texts()
    return out


def _standing_revisions(
    manifest: Manifest, revisions: Sequence[RevisionRecord]
) -> dict[str, RevisionRecord]:
    """Draft name → its last revision, for each draft that became no RFC and was replaced by
    no other (the head of a chain of drafts that became no RFC): the revision whose sections
    stand for the chain's own, as the last revision's stand for an RFC whose text is not held."""
    out: dict[str, RevisionRecord] = {}
    for revision in revisions:
        entry = manifest.draft_entry(revision.draft)
        if entry.became is None and entry.replaced_by is None:
            held = out.get(revision.draft)
            if held is None or revision.number > held.number:
                out[revision.draft] = revision
    return out


def _commit(at: TagInfo | FoundRevision, commit_map: dict[str, str]) -> CommitRef:
    return CommitRef(
        commit=at.commit,
        public_commit=commit_map.get(at.commit),
        committed_at=at.committed_at,
    )


def _read(
    repo: GitRepository,
    at: TagInfo | FoundRevision,
    path: str,
    *,
    gap: bool = False,
    published: bool = False,
) -> ParsedDocument:
    """The document ``path`` holds at ``at`` (a tag, or wherever a revision source found it);
    ``published`` when it is an RFC's own text. With ``gap``, a text its reader cannot read is
    a document with no sections saying why (a gap the build notes) instead of an error: one
    unreadable revision of a long history leaves the rest worth building."""
    label = at.name if isinstance(at, TagInfo) else at.provenance
    text = repo.read_text(at.commit, path)
    if text is None:
        raise SourceError(f"{label} has no file {path}; check 'file' in the manifest.")
    try:
        return parse_document(path, text, published=published)
    except ParseError as error:
        if gap and format_of(path) is not None:
            return ParsedDocument(gap=f"{path} ({label}) could not be read: {error}")
        raise ParseError(f"{path} ({label}): {error}") from None


def last_revisions(manifest: Manifest, repo: GitRepository) -> list[tuple[str, str, str, str]]:
    """(draft, number, commit, file) of each draft's last revision the manifest names, read
    as :func:`read_spec` reads it: what a group brain reads each draft's references from."""
    found = _found(manifest, repo)
    last = []
    for entry in manifest.draft:
        chosen = _entry_revisions(entry, found, repo)
        if chosen:
            number, revision = chosen[-1]
            last.append(
                (entry.name, number, revision.commit, revision.path or entry.file_at(number))
            )
    return last
