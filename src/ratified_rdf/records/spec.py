"""Turn a specification repository plus its manifest into records of truth.

Every tag ``<draft>-NN`` is a revision, dated by its tagged commit; the document at that tag is
parsed into sections; every section is aligned with the RFC its draft became.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ratified_rdf.records.alignment import align_document, forget_texts
from ratified_rdf.records.manifest import DraftEntry, Manifest, RfcEntry
from ratified_rdf.records.models import (
    AlignmentRecord,
    CommitRef,
    DraftRecord,
    RevisionRecord,
    RfcRecord,
    SpecRecords,
)
from ratified_rdf.records.rfc_texts import locate_rfc_text, unread_document_files
from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.git_repo import GitRepository, SourceError, TagInfo
from ratified_rdf.sources.kramdown import parse_kramdown
from ratified_rdf.sources.rfc_text import parse_rfc_text
from ratified_rdf.sources.xml2rfc import parse_xml2rfc

Progress = Callable[[str], None]


def parse_document(path: str, text: str) -> ParsedDocument:
    """Parse ``text`` with the reader its file name calls for."""
    suffix = Path(path).suffix.lower()
    if suffix in {".md", ".mkd", ".markdown"}:
        return parse_kramdown(text)
    if suffix == ".txt":
        return parse_rfc_text(text)
    if suffix == ".xml":
        return parse_xml2rfc(text)
    raise ParseError(f"{path}: no reader for '{suffix}' files (markdown, .txt and .xml are read)")


def read_spec(
    manifest: Manifest,
    repo: GitRepository,
    commit_map: dict[str, str],
    progress: Progress | None = None,
) -> SpecRecords:
    """Read every revision and RFC the manifest names, and align their sections."""
    step = progress or (lambda _label: None)
    tags = repo.tags()
    revisions: list[RevisionRecord] = []
    for entry in manifest.draft:
        for number, tag in _entry_tags(entry, tags, repo):
            step(f"{entry.name}-{number}")
            revisions.append(
                RevisionRecord(
                    draft=entry.name,
                    number=number,
                    tag=tag.name,
                    file=entry.file_at(number),
                    commit=_commit(tag, commit_map),
                    document=_read(repo, tag, entry.file_at(number)),
                )
            )
    rfcs: list[RfcRecord] = []
    for rfc in manifest.rfc:
        step(rfc.name)
        rfcs.append(_rfc_record(manifest, rfc, repo, commit_map, revisions))
    drafts = [
        DraftRecord(
            name=entry.name,
            title=next(
                (r.document.title for r in reversed(revisions) if r.draft == entry.name), None
            ),
            became=entry.became,
            replaced_by=entry.replaced_by,
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
        alignments=tuple(_alignments(manifest, revisions, rfcs)),
        unread_files=unread_document_files(repo, _read_paths(manifest, rfcs)),
    )


def _read_paths(manifest: Manifest, rfcs: list[RfcRecord]) -> set[str]:
    """Every path a draft's revisions or an RFC's own text is read from."""
    paths = {path for entry in manifest.draft for path in entry.document_files()}
    paths.update(rfc.file for rfc in rfcs if rfc.text_held and rfc.file is not None)
    return paths


def spec_commits(manifest: Manifest, repo: GitRepository) -> list[str]:
    """The commits :func:`read_spec` reads the manifest's revisions and RFCs at, sorted, from
    the repository's tags alone: what a build needs to start reading the documents' history
    before their texts are read. Raises as :func:`read_spec` does for a missing revision."""
    tags = repo.tags()
    commits = {tag.commit for entry in manifest.draft for _, tag in _entry_tags(entry, tags, repo)}
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
) -> RfcRecord:
    """The RFC with its text where the repository holds it; else with the sections of the
    last revision of the draft that became it standing for its own; else a fact alone."""
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
                "document": _read(repo, tag, file),
                "found": how,
            }
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


def _entry_tags(
    entry: DraftEntry, tags: dict[str, TagInfo], repo: GitRepository
) -> list[tuple[str, TagInfo]]:
    """(number, tag) of ``entry``'s revisions, by number; raises when one it expects is
    missing."""
    found = _revision_tags(entry.name, tags)
    missing = [n for n in entry.expected_revisions() if n not in found]
    if missing:
        raise SourceError(
            f"{repo.source} has no tag for {entry.name} revision(s) {', '.join(missing)}; "
            "fix the 'revisions' range in the manifest or fetch the missing tags."
        )
    return sorted(found.items())


def _alignments(
    manifest: Manifest, revisions: list[RevisionRecord], rfcs: list[RfcRecord]
) -> list[AlignmentRecord]:
    by_name = {r.name: r for r in rfcs}
    out: list[AlignmentRecord] = []
    for revision in revisions:
        final = manifest.final_rfc(revision.draft)
        if final is not None:
            out += align_document(revision.name, revision.document, final, by_name[final].document)
    for rfc in rfcs:
        for old in rfc.obsoletes:
            out += align_document(
                f"rfc{old}", by_name[f"rfc{old}"].document, rfc.name, rfc.document
            )
    forget_texts()
    return out


def _revision_tags(draft: str, tags: dict[str, TagInfo]) -> dict[str, TagInfo]:
    pattern = re.compile(rf"^{re.escape(draft)}-(\d{{2}})$")
    found: dict[str, TagInfo] = {}
    for name, tag in tags.items():
        match = pattern.match(name)
        if match:
            found[match.group(1)] = tag
    return found


def _commit(tag: TagInfo, commit_map: dict[str, str]) -> CommitRef:
    return CommitRef(
        commit=tag.commit,
        public_commit=commit_map.get(tag.commit),
        committed_at=tag.committed_at,
    )


def _read(repo: GitRepository, tag: TagInfo, path: str) -> ParsedDocument:
    text = repo.read_text(tag.commit, path)
    if text is None:
        raise SourceError(f"{tag.name} has no file {path}; check 'file' in the manifest.")
    try:
        return parse_document(path, text)
    except ParseError as error:
        raise ParseError(f"{path} at {tag.name}: {error}") from None
