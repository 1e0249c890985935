"""Turn a specification repository plus its manifest into records of truth.

Every tag ``<draft>-NN`` is a revision, dated by its tagged commit; the document at that tag is
parsed into sections; every section is aligned with the RFC its draft became.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ratified_rdf.records.alignment import align_document, forget_texts
from ratified_rdf.records.manifest import DraftEntry, Manifest
from ratified_rdf.records.models import (
    AlignmentRecord,
    CommitRef,
    DraftRecord,
    RevisionRecord,
    RfcRecord,
    SpecRecords,
)
from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.formats import format_of, parse_document
from ratified_rdf.sources.git_repo import GitRepository, SourceError, TagInfo

Progress = Callable[[str], None]


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
                    document=_read(repo, tag, entry.file_at(number), gap=True),
                )
            )
    rfcs: list[RfcRecord] = []
    for rfc in manifest.rfc:
        step(rfc.name)
        tag = repo.resolve(rfc.ref)
        rfcs.append(
            RfcRecord(
                number=rfc.number,
                title=rfc.title,
                published=rfc.published,
                ref=rfc.ref,
                file=rfc.file,
                commit=_commit(tag, commit_map),
                obsoletes=rfc.obsoletes,
                document=_read(repo, tag, rfc.file),
            )
        )
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
    )


def spec_commits(manifest: Manifest, repo: GitRepository) -> list[str]:
    """The commits :func:`read_spec` reads the manifest's revisions and RFCs at, sorted, from
    the repository's tags alone: what a build needs to start reading the documents' history
    before their texts are read. Raises as :func:`read_spec` does for a missing revision."""
    tags = repo.tags()
    commits = {tag.commit for entry in manifest.draft for _, tag in _entry_tags(entry, tags, repo)}
    commits.update(repo.resolve(rfc.ref).commit for rfc in manifest.rfc)
    return sorted(commits)


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


def _read(repo: GitRepository, tag: TagInfo, path: str, *, gap: bool = False) -> ParsedDocument:
    """The document ``path`` holds at ``tag``. With ``gap``, a text its reader cannot read is
    a document with no sections saying why (a gap the build notes) instead of an error: one
    unreadable revision of a long history leaves the rest worth building."""
    text = repo.read_text(tag.commit, path)
    if text is None:
        raise SourceError(f"{tag.name} has no file {path}; check 'file' in the manifest.")
    try:
        return parse_document(path, text)
    except ParseError as error:
        if gap and format_of(path) is not None:
            return ParsedDocument(gap=f"{path} at {tag.name} could not be read: {error}")
        raise ParseError(f"{path} at {tag.name}: {error}") from None
