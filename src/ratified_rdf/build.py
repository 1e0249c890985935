"""The main job: read a repository through its manifest and write a brain, batch by gated batch."""

from __future__ import annotations

import heapq
import os
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import BaseModel, ConfigDict, JsonValue
from tqdm import tqdm

from ratified_rdf._build_report import BuildReport
from ratified_rdf._forked import Forked
from ratified_rdf._memory import collections_spared, give_back
from ratified_rdf.audit import AuditLog, DetailSidecar, capture
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.discussion_mapping import PeopleIndex, SectionIris, discussion_batches
from ratified_rdf.graph.expertise_mapping import expertise_batches, expertise_source
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import Batch, RunContext, spec_batches
from ratified_rdf.graph.store import OxigraphStore, TripleStore
from ratified_rdf.graph.views import view_batches, view_levels, view_spool
from ratified_rdf.graph.writer import Writer
from ratified_rdf.records.discussion import DiscussionRecords, GitEvidence, read_discussion
from ratified_rdf.records.expertise import ExpertiseRecords, compute_expertise
from ratified_rdf.records.identity import (
    Identity,
    PeopleTable,
    identities_from_git,
    load_overrides,
    resolve_people,
)
from ratified_rdf.records.manifest import (
    CORE_SOURCES,
    Manifest,
    SourceName,
    check_buildable,
    load_manifest,
)
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.records.spec import read_spec, spec_commits
from ratified_rdf.sources.base import ReadContext, Source, registered_sources
from ratified_rdf.sources.document import ParsedDocument
from ratified_rdf.sources.git_history import (
    BranchCommits,
    commit_parents,
    first_containing,
    first_parent_line,
    held_pull_requests,
    own_pull_requests,
    place_changes,
    pull_request_heads,
    read_history,
    read_pull_merges,
    signatures,
)
from ratified_rdf.sources.git_repo import GitRepository, load_commit_map
from ratified_rdf.sources.online.datatracker import (
    DraftFacts,
    facts_record_path,
    read_facts_record,
)
from ratified_rdf.trust import Clearance


def build(
    manifest_path: str | Path,
    *,
    source: str | None = None,
    store: TripleStore,
    cache_dir: Path | None = None,
    progress: bool = False,
    audit: AuditLog | None = None,
    actor: str = "unknown",
) -> BuildReport:
    """Build (or rebuild) the brain a manifest describes into ``store``.

    ``source`` overrides the manifest's repository URL with a local clone or a bundle, for
    offline builds. The new run becomes current only once every batch has passed the gate.
    With ``audit``, the build is recorded before it starts (and fails if it cannot be), each
    batch written is recorded, and a tree head is signed when the build ends.
    """
    manifest, folder = load_manifest(manifest_path)
    check_buildable(manifest, manifest_path)
    return _audited(
        manifest,
        manifest_path,
        source,
        audit,
        actor,
        lambda: _build(manifest, folder, source, store, cache_dir, progress, audit, actor),
    )


def build_many(
    members: Sequence[tuple[str | Path, str | None]],
    *,
    store: TripleStore,
    progress: bool = False,
    audit: AuditLog | None = None,
    actor: str = "unknown",
    workers: int | None = None,
    log: Callable[[str], None] | None = None,
) -> Iterator[BuildReport]:
    """Build several brains into one store (``members``: each manifest's path and source, as
    :func:`build` takes them), yielding each one's report, in order, once it has committed.

    Reading is most of a build and touches no store: each brain is read in a child process
    of its own (:class:`~ratified_rdf._forked.Forked`), up to ``workers`` at once (the
    machine's cores when None), while those read before it are written, one after another
    in order (one embedded store takes one writer at a time). Each brain's run commits on its
    own, as :func:`build`'s does: a reader never sees a brain half written. With ``audit``,
    each build is recorded before its run is written (its reading, in a child, writes
    nothing), its batches are recorded, and a tree head is signed when it ends.
    """
    say = log or (lambda _line: None)
    loaded = []
    for path, source in members:
        manifest, folder = load_manifest(path)
        check_buildable(manifest, path)
        loaded.append((path, source, manifest, folder))
    width = max(1, workers or os.cpu_count() or 1)
    ahead: dict[int, tuple[_Begun, Forked[tuple[_RunMapping, _ReadSummary]]]] = {}
    started = 0
    try:
        for index, (path, source, manifest, _folder) in enumerate(loaded):
            while started < min(len(loaded), index + width):
                _, copy, next_manifest, next_folder = loaded[started]
                say(f"reading {next_manifest.brain.id}")
                begun = _begin(next_manifest, next_folder, copy, store, None, audit, actor)
                reading = Forked(partial(_read, begun, False), f"reading {next_manifest.brain.id}")
                ahead[started] = (begun, reading)
                started += 1
            begun, reading = ahead.pop(index)

            def written(begun: _Begun = begun, reading: Forked[Any] = reading) -> BuildReport:
                mapping, summary = reading.result()
                return _write(begun, mapping, summary, progress)

            say(f"writing {manifest.brain.id}")
            yield _audited(manifest, path, source, audit, actor, written)
    finally:
        # A build that failed, or was left unfinished, ends the reading it started ahead.
        for _, reading in ahead.values():
            reading.cancel()


def _audited(
    manifest: Manifest,
    manifest_path: str | Path,
    source: str | None,
    audit: AuditLog | None,
    actor: str,
    run: Callable[[], BuildReport],
) -> BuildReport:
    """``run()``, recorded in ``audit`` (when given) before it starts, with its run and
    triples after it; a tree head is signed when it ends."""
    if audit is None:
        return run()
    subject: dict[str, JsonValue] = {
        "manifest": str(manifest_path),
        "brain": manifest.brain.id,
        "source": source or manifest.brain.repository,
    }
    top = max(source_levels(manifest).values(), key=lambda c: c.rank)
    try:
        with capture(
            audit,
            "build",
            subject,
            tenant=manifest.brain.tenant,
            clearance=top.value,
            actor=actor,
        ) as record:
            report = run()
            audit.append(
                DetailSidecar(
                    annotates=record.id,
                    detail={"run": report.run_id, "triples": report.triples},
                )
            )
            return report
    finally:
        # checkpoint, not sign_tree_head: a stranger's record found in the log is logged and
        # left unsigned, without hiding the build's own outcome behind an AuditError.
        audit.checkpoint()


# The run's records and view live for minutes: the collector's full passes skip them.
@collections_spared()
def _build(
    manifest: Manifest,
    folder: Path,
    source: str | None,
    store: TripleStore,
    cache_dir: Path | None,
    progress: bool,
    audit: AuditLog | None,
    actor: str,
) -> BuildReport:
    begun = _begin(manifest, folder, source, store, cache_dir, audit, actor)
    mapping, read = _read(begun, progress)
    return _write(begun, mapping, read, progress)


@dataclass
class _Begun:
    """A build begun: its repository, writer and run, before anything is read or written."""

    manifest: Manifest
    folder: Path
    origin: str
    repo: GitRepository
    commit_map: dict[str, str]
    gate: ShaclGate
    writer: Writer
    run: RunContext
    begin_seconds: float
    """How long opening the repository and beginning the run took (counted as reading)."""


def _begin(
    manifest: Manifest,
    folder: Path,
    source: str | None,
    store: TripleStore,
    cache_dir: Path | None,
    audit: AuditLog | None,
    actor: str,
) -> _Begun:
    started = time.perf_counter()
    origin = source or manifest.brain.repository
    repo = GitRepository.open(origin, cache_dir)
    commit_map = _commit_map(origin, manifest.brain.commit_map)
    gate = ShaclGate()
    levels = source_levels(manifest)
    writer = Writer(
        store,
        gate,
        manifest.brain.id,
        manifest.brain.tenant,
        levels={
            **levels,
            **view_levels(levels),
            **{expertise_source(level): level for level, _ in manifest.expertise_levels()},
        },
        licences={
            **manifest.licence,
            **{s.name: licence for s in registered_sources() if (licence := s.licence(manifest))},
        },
        audit=audit,
        actor=actor,
    )
    run = writer.begin_run()
    took = time.perf_counter() - started
    return _Begun(manifest, folder, origin, repo, commit_map, gate, writer, run, took)


def _read(begun: _Begun, progress: bool) -> tuple[_RunMapping, _ReadSummary]:
    """Read a begun build's records: touches no store, so it may run in a child process."""
    manifest = begun.manifest
    read_started = time.perf_counter()
    bar = tqdm(
        total=sum(len(d.expected_revisions()) for d in manifest.draft) + len(manifest.rfc) + 1,
        desc="reading",
        unit="doc",
        disable=not progress,
        file=sys.stderr,
    )

    def step(label: str) -> None:
        bar.set_postfix_str(label, refresh=False)
        bar.update(1)

    # Only the mapping holds the records from here: it lets go of them once it has mapped
    # the run as often as the writer maps it, before the gate's workers fork.
    mapping, read = _read_run(
        manifest,
        begun.folder,
        begun.repo,
        begun.commit_map,
        step,
        begun.run,
        begun.writer.passes,
    )
    bar.close()
    took = begun.begin_seconds + time.perf_counter() - read_started
    return mapping, read.model_copy(update={"read_seconds": took})


def _write(begun: _Begun, mapping: _RunMapping, read: _ReadSummary, progress: bool) -> BuildReport:
    """Write and commit a begun build's run from what :func:`_read` read."""
    manifest, run, writer, gate = begun.manifest, begun.run, begun.writer, begun.gate
    read_done = time.perf_counter()
    derived = [0]
    spool = view_spool(run)

    def derive(reading: Callable[[], OxigraphStore], graphs: list[str]) -> Iterator[Batch]:
        for batch in view_batches(reading, run, graphs, spool):
            derived[0] += 1
            yield batch

    with (
        closing(spool),
        tqdm(
            desc="validating (SHACL gate)",
            unit="batch",
            disable=not progress,
            file=sys.stderr,
        ) as gate_bar,
    ):
        triples = writer.write_all(
            mapping,
            progress=lambda: gate_bar.update(1),
            derive=derive,
            expected_quads=QUADS_PER_SPEC_RECORD * (read.sections + read.alignments),
            spool=spool,
        )
    writer.commit(run, used=[v.repository_iri(manifest.brain.repository)])
    done = time.perf_counter()
    write_seconds = done - read_done
    return BuildReport(
        brain_id=manifest.brain.id,
        tenant=manifest.brain.tenant,
        run_id=run.run_id,
        source=begun.origin,
        **read.model_dump(exclude={"read_seconds"}),
        batches=mapping.batches + derived[0],
        triples=triples,
        gate=gate.engine.name,
        read_seconds=round(read.read_seconds, 3),
        write_seconds=round(write_seconds, 3),
        total_seconds=round(read.read_seconds + write_seconds, 3),
    )


QUADS_PER_SPEC_RECORD = 20
"""At least how many quads a run stages for each section and alignment it read, to tell
before staging whether the run will fit in memory (:meth:`Writer.write_all`): every brain
measured stages more (benchmarks/RESULTS.md, 2026-12-05). Fewer is only a run staged in
memory first and moved to disk when it passes the limit, as before."""


class _ReadSummary(BaseModel):
    """What a build report says of the records read (counted before they are let go of)."""

    model_config = ConfigDict(frozen=True)

    revisions: int
    rfcs: int
    sections: int
    alignments: int
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    read_seconds: float = 0.0


def _read_run(
    manifest: Manifest,
    folder: Path,
    repo: GitRepository,
    commit_map: dict[str, str],
    step: Callable[[str], None],
    run: RunContext,
    passes: int,
) -> tuple[_RunMapping, _ReadSummary]:
    """Read the records and compute the expertise scores; the run's mapping, which alone
    holds them, and what the report says of them."""
    history = None
    if manifest.discussion is not None:
        # The documents' history needs only the commits the texts are read at: it is read in
        # a child process, on the other core, while this one reads and aligns the texts.
        refs = spec_commits(manifest, repo)
        files = tuple(manifest.discussion.document_files)
        history = Forked(
            lambda: ReadHistory(refs, read_git_evidence(repo, refs, files)),
            "reading the documents' history",
        )
    facts = _draft_facts(manifest, folder)
    posted = {
        f"{name}-{revision.rev}": revision.time
        for name, known in facts.items()
        for revision in known.revisions
    }
    records = read_spec(manifest, repo, commit_map, step, records_folder=folder, posted=posted)
    discussion = (
        read_discussion_sources(manifest, records, repo, commit_map, folder, facts, history)
        if manifest.discussion is not None
        else None
    )
    scores = []  # each computation with the time it ended, said alike by every mapping
    if discussion is not None:
        for level, sources in manifest.expertise_levels():
            computed = compute_expertise(discussion.visible_to(sources), records)
            scores.append((level, sources, computed, datetime.now(UTC)))
    summary = _ReadSummary(
        revisions=len(records.revisions) + len(records.kept_revisions),
        rfcs=len(records.rfcs),
        sections=sum(len(r.document.sections) for r in records.revisions)
        + sum(len(r.document.sections) for r in records.kept_revisions)
        + sum(len(r.document.sections) for r in records.rfcs),
        alignments=len(records.alignments),
        problems=discussion.problems if discussion else (),
        notes=build_notes(manifest, records, discussion),
    )
    people = PeopleIndex(discussion.people) if discussion is not None else None
    parts = _MappingParts(records, discussion, people, facts, scores, run, registered_sources())
    return _RunMapping(parts, passes), summary


@dataclass(frozen=True)
class _MappingParts:
    """Everything a run's batches are mapped from (:func:`_run_batches`'s arguments)."""

    records: SpecRecords
    discussion: DiscussionRecords | None
    people: PeopleIndex | None
    facts: dict[str, DraftFacts]
    scores: list[tuple[Clearance, frozenset[SourceName], ExpertiseRecords, datetime]]
    run: RunContext
    sources: Sequence[Source[Any]]


class _RunMapping:
    """A run's batches, mapped afresh each time it is called (one pass of the writer), from
    records it lets go of once it has been called ``passes`` times.

    Held as batches, a run takes about twice the memory of its staged triples (10 GiB at
    ×100), so it is mapped for each pass instead; and the records themselves (some 7 GiB at
    ×100) are needed by no step after the last pass. Let go of then, with their memory given
    back to the system (:func:`~ratified_rdf._memory.give_back`), they are not in the process
    the gate's workers fork from, whose pages each worker would otherwise come to hold."""

    def __init__(self, parts: _MappingParts, passes: int) -> None:
        self._parts: _MappingParts | None = parts
        self._left = passes
        self.batches = 0
        """How many batches the last pass mapped."""

    def __call__(self) -> Iterator[Batch]:
        """One pass: every batch of the run, in order."""
        parts = self._parts
        if parts is None:
            raise RuntimeError(
                "The run was mapped more often than the writer said it would map it; this is "
                "a bug in the caller (Writer.passes)."
            )
        self._left -= 1
        if self._left <= 0:
            self._parts = None
        return self._mapped(parts, last=self._parts is None)

    def _mapped(self, parts: _MappingParts, *, last: bool) -> Iterator[Batch]:
        mapped = 0
        for batch in _run_batches(
            parts.records,
            parts.discussion,
            parts.people,
            parts.facts,
            parts.scores,
            parts.run,
            parts.sources,
        ):
            mapped += 1
            yield batch
        self.batches = mapped
        if last:
            del parts
            give_back()


def source_levels(manifest: Manifest) -> dict[SourceName, Clearance]:
    """The clearance every source's graph is written at: the core sources' from the
    manifest, each registered source's as it says (:meth:`Source.clearance`)."""
    return {
        **{name: manifest.clearance_of(name) for name in CORE_SOURCES},
        **{source.name: source.clearance(manifest) for source in registered_sources()},
    }


def build_notes(
    manifest: Manifest, records: SpecRecords, discussion: DiscussionRecords | None
) -> tuple[str, ...]:
    """The sentences of :attr:`BuildReport.notes`."""
    last: dict[str, str] = {}
    for revision in records.revisions:
        if revision.name > last.get(revision.draft, ""):
            last[revision.draft] = revision.name
    notes = [
        f"{draft.name} became no RFC in the records, so its sections cannot be followed into "
        + (
            f"an RFC: they are followed to those of {last[head]}, the last revision of "
            f"{'it' if head == draft.name else head}, which its section cards are about."
            if (head := manifest.head(draft.name)) in last
            else "an RFC: its revisions and their history are built."
        )
        + " Add 'became' to its [[draft]] entry when it has one."
        for draft in manifest.draft
        if manifest.final_rfc(draft.name) is None
    ]
    notes += [
        f"{draft.name} lacks revision(s) {', '.join(draft.missing_revisions)}: the manifest "
        "lists them as missing (the repository holds them nowhere, or in no form read), so "
        "they are recorded as missing (rr:missingRevision) rather than read."
        for draft in records.drafts
        if draft.missing_revisions
    ]
    notes += [
        f"{kept.name}, which the repository lacks, is read from {kept.file} (fetched from the "
        "IETF archive) and dated by its posting; no commit is credited to it."
        for kept in records.kept_revisions
    ]
    notes += [
        f"{draft.name}: revisions not numbered in the repository (no tag, no per-revision "
        "file, no docname naming one), so its document as last committed is read as one "
        "revision named 'latest' and which numbered revisions the IETF published is not "
        "guessed: tag each revision's commit and give the numbered range to read them."
        for draft in manifest.draft
        if draft.unnumbered
    ]
    notes += [
        f"{', '.join(names)} all became {rfc}, and none is replaced by another: if they were "
        "one draft renamed, or one replaced another, say so with replaced_by; if they were "
        "merged, their sections are each followed into it."
        for rfc, names in manifest.parallel_drafts().items()
    ]
    notes += rfc_text_notes(records)
    notes += document_notes(records)
    if discussion is None:
        return tuple(notes)
    commit_of = {r.name: r.commit for r in records.revisions}
    for window in discussion.windows:
        if window.dated_by == "spread":
            tagged = commit_of[window.revision].committed_at.date().isoformat()
            notes.append(
                f"{window.revision}'s tag is on a commit dated {tagged}, not after the revision "
                "before it, so its window was placed by the one rule for dates that run "
                f"backwards (spread evenly to the next revision): from "
                f"{window.start.date().isoformat()} to {window.end.date().isoformat()}. Record "
                "its posting date (ratified fetch datatracker) to use that instead."
            )
    later = sum(1 for c in discussion.commits if c.after_publication)
    if later:
        notes.append(
            f"{later:,} commits changed a document after the RFC it became was published; they "
            "are kept, but not counted as changing a section while it was changing."
        )
    return tuple(notes)


def rfc_text_notes(records: SpecRecords) -> list[str]:
    """What the build says of each RFC whose text the manifest did not say where to find:
    where it found it, or which revision's sections stand for it, or that it has none."""
    notes = []
    for rfc in records.rfcs:
        if rfc.found is not None:
            notes.append(
                f"RFC {rfc.number}'s text was read from {rfc.file} at {rfc.ref} ({rfc.found}). "
                "Write ref and file in its [[rfc]] entry if that is right."
            )
        elif rfc.sections_from is not None:
            notes.append(
                f"The repository does not hold RFC {rfc.number}'s own text, so the sections of "
                f"{rfc.sections_from}, the last revision of the draft that became it, stand for "
                "its own, and every section card says so. Give its [[rfc]] entry a ref and file "
                "if a branch or tag holds the text."
            )
        elif rfc.commit is None and not rfc.document.sections:
            notes.append(
                f"The repository does not hold RFC {rfc.number}'s own text and no draft in the "
                "manifest became it, so it is recorded as a fact alone, without sections."
            )
    return notes


def document_notes(records: SpecRecords) -> list[str]:
    """What the readers said of the documents: each revision that could not be read (a gap,
    built without sections), and each note a reader left (a note shared by several
    revisions is said once, naming them)."""
    notes = [
        f"{revision.name} is a gap: {revision.document.gap.rstrip('.')}. It is built as a "
        "revision without sections and the build went on; fix the file at that revision to "
        "fill the gap."
        for revision in records.revisions
        if revision.document.gap is not None
    ]
    said: dict[str, list[str]] = {}
    read: list[tuple[str, ParsedDocument]] = [
        *((r.name, r.document) for r in records.revisions),
        *((r.name, r.document) for r in records.rfcs),
    ]
    for name, document in read:
        for note in document.notes:
            said.setdefault(note, []).append(name)
    notes += [f"{', '.join(names)}: {note}" for note, names in said.items()]
    return notes


def _run_batches(
    records: SpecRecords,
    discussion: DiscussionRecords | None,
    people: PeopleIndex | None,
    facts: dict[str, DraftFacts],
    scores: list[tuple[Clearance, frozenset[SourceName], ExpertiseRecords, datetime]],
    run: RunContext,
    sources: Sequence[Source[Any]],
) -> Iterator[Batch]:
    """Every batch of a run, in order: the spec, the discussion (people, each source's
    posts, commits), expertise per level."""
    written: set[str] = set()
    for batch in spec_batches(
        records,
        run,
        (lambda a: people.iri(Identity(kind="document", name=a.name, email=a.email)))
        if people
        else None,
        facts,
        # The dates the discussion was placed by: cards date revisions the same way.
        {w.revision: w.start for w in discussion.windows} if discussion is not None else None,
    ):
        written.add(batch.graph)
        yield batch
    if discussion is not None:
        for batch in discussion_batches(discussion, records, run, sources):
            written.add(batch.graph)
            yield batch
        for level, used_by, computed, ended in scores:
            # Its provenance names only graphs this run wrote: TLS has no mail graph, so its
            # expertise was not computed from one.
            used = frozenset(s for s in used_by if run.graph(s) in written)
            yield from expertise_batches(computed, SectionIris(records), run, level, used, ended)


def read_discussion_sources(
    manifest: Manifest,
    spec: SpecRecords,
    repo: GitRepository,
    commit_map: dict[str, str],
    folder: Path,
    facts: dict[str, DraftFacts] | None = None,
    history: Forked[ReadHistory] | None = None,
) -> DiscussionRecords:
    """Read the document history and every registered source the manifest's discussion
    wants, and resolve the people behind every git signature, login and byline.

    ``history``: the documents' history being read already (:func:`read_git_evidence`), used
    when it was read at the commits ``spec`` was; otherwise it is read here."""
    assert manifest.discussion is not None
    refs = sorted({ref for _, ref in _text_order(manifest, spec)})
    files = tuple(manifest.discussion.document_files)
    context = ReadContext(
        manifest=manifest,
        folder=folder,
        spec=spec,
        repo=repo,
        commit_map=commit_map,
        facts=facts or {},
        landing=_landing(repo, manifest, spec),
        document_files=files,
    )
    sources = [source for source in registered_sources() if source.wanted(context)]
    # The sources (GitHub's archive, mail) are read in a child process, on the other core,
    # while this one reads the document's history and places each commit's changes.
    reading = Forked(
        lambda: [source.read(context) for source in sources], "reading the discussion sources"
    )
    posts = list(zip(sources, reading.result(), strict=True))
    people = _people(context, posts)  # needs no history: resolved while it is still read
    read = history.result() if history is not None else None
    # The texts were read at the commits the history was read for, unless a tag moved
    # between the two reads of the tags.
    evidence = read.evidence if read is not None and read.refs == refs else None
    if evidence is None:
        evidence = read_git_evidence(repo, refs, files)
    return read_discussion(context, people, evidence, posts)


@dataclass(frozen=True)
class ReadHistory:
    """The documents' history (:func:`read_git_evidence`) and the commits it was read at."""

    refs: list[str]
    evidence: GitEvidence


def read_git_evidence(repo: GitRepository, refs: list[str], files: Sequence[str]) -> GitEvidence:
    """What git says of the history of the document ``files`` up to ``refs`` (the commits the
    revisions and RFCs are read at): every commit that changed them, with its pull request,
    where each change sat, and which merges brought in which commits."""
    changed = read_history(repo, refs, list(files))
    # The main line's pull request merges that changed no document file still say which pull
    # request was merged and who merged it; they credit no section.
    merges = read_pull_merges(repo, refs, {c.commit for c in changed})
    history = held_pull_requests(
        own_pull_requests(
            list(heapq.merge(changed, merges, key=lambda c: c.committed_at)),
            first_parent_line(repo, refs),
        ),
        pull_request_heads(repo),
    )
    return GitEvidence(
        commits=history,
        places=place_changes(repo, history),
        branch_commits=_branch_commits_of(repo, refs),
    )


def _people(context: ReadContext, posts: Sequence[tuple[Source[Any], Any]]) -> PeopleTable:
    """Everyone behind a git signature, a byline (the documents', the chairs' and area
    directors' the Datatracker names) and what each source saw, resolved into people with
    the overrides beside the manifest."""
    manifest, spec = context.manifest, context.spec
    assert manifest.discussion is not None
    documents = [r.document for r in spec.revisions] + [r.document for r in spec.rfcs]
    bylines = {
        Identity(kind="document", name=a.name, email=a.email)
        for document in documents
        for a in document.authors
    } | {
        Identity(kind="document", name=name)
        for known in context.facts.values()
        for name in (*known.chairs, *known.area_directors)
    }
    seen = [source.people(read, context) for source, read in posts]
    overrides = context.path(manifest.discussion.people)
    return resolve_people(
        [
            *identities_from_git(signatures(context.repo)),
            *(identity for evidence in seen for identity in evidence.identities),
            *sorted(bylines, key=Identity.sort_key),
        ],
        [link for evidence in seen for link in evidence.links],
        load_overrides(overrides) if overrides.is_file() else None,
    )


@dataclass(frozen=True)
class _Landing:
    """Which text a commit's change to a file landed in, draft by draft.

    A file is the document of the drafts (and RFC texts) the manifest says it is, by name
    wherever it sits (a draft moved into ``archive/`` is the same document); a change to it
    landed in the first revision *of that draft* whose tag contains the commit, else in the
    RFC text whose ref contains it (the RFC's own file, or the file of the draft that became
    it), else nowhere (a commit after that draft's last revision that no RFC text holds).
    """

    documents_of: dict[str, tuple[str, ...]]
    """A file's name to the drafts (first) and RFCs whose document it is."""
    first_in: dict[str, dict[str, str]]
    """For a draft or RFC: each commit to the first of its texts that contains it."""

    def __call__(self, commit: str, file: str) -> str | None:
        for series in self.documents_of.get(PurePosixPath(file).name, ()):
            found = self.first_in[series].get(commit)
            if found is not None:
                return found
        return None


def _landing(repo: GitRepository, manifest: Manifest, spec: SpecRecords) -> _Landing:
    documents_of: dict[str, list[str]] = defaultdict(list)
    first_in: dict[str, dict[str, str]] = {}
    draft_files: dict[str, list[str]] = {}
    for draft in manifest.draft:
        revisions = sorted(
            (r for r in spec.revisions if r.draft == draft.name), key=lambda r: r.number
        )
        # The names its document had before its first revision count too (git's renames:
        # draft-ietf-quic-transport-protocol.md became draft-ietf-quic-transport.md).
        former = repo.former_paths(revisions[0].commit.commit, draft.file) if revisions else []
        draft_files[draft.name] = [
            PurePosixPath(p).name for p in dict.fromkeys([*draft.document_files(), *former])
        ]
        for name in draft_files[draft.name]:
            documents_of[name].append(draft.name)
        first_in[draft.name] = first_containing(
            repo, [(r.name, r.commit.commit) for r in revisions]
        )
        # A file named for one revision (draft-x-05.xml, and its .txt beside it) is that
        # revision's working copy: a change to it lands in that revision, whichever revision
        # the draft's own file is named for.
        for revision in revisions:
            if revision.tag is None and PurePosixPath(revision.file).stem == revision.name:
                for suffix in (".md", ".mkd", ".xml", ".txt"):
                    documents_of[revision.name + suffix].insert(0, revision.name)
                first_in[revision.name] = first_containing(
                    repo, [(revision.name, revision.commit.commit)]
                )
    # An RFC whose text is not held has no text for a change to land in: its sections are
    # a revision's, whose changes land in that revision.
    held = [rfc for rfc in spec.rfcs if rfc.text_held]
    for rfc in held:
        assert rfc.file is not None and rfc.commit is not None  # what text_held says
        documents_of[PurePosixPath(rfc.file).name].append(rfc.name)
        first_in[rfc.name] = first_containing(repo, [(rfc.name, rfc.commit.commit)])
    # A change to a draft's document after its last revision, in the history of the text of
    # the RFC it became (the RFC editor's fixes on the draft file), is a change to that text.
    rfcs = {rfc.name for rfc in held}
    for draft in manifest.draft:
        if draft.became in rfcs:
            for name in draft_files[draft.name]:
                if draft.became not in documents_of[name]:
                    documents_of[name].append(draft.became)
    return _Landing({k: tuple(v) for k, v in documents_of.items()}, first_in)


def _draft_facts(manifest: Manifest, folder: Path) -> dict[str, DraftFacts]:
    """Datatracker facts kept as records beside the manifest (``ratified fetch datatracker``)."""
    found: dict[str, DraftFacts] = {}
    for draft in manifest.draft:
        path = facts_record_path(folder, draft.name)
        if path.is_file():
            found[draft.name] = read_facts_record(path)
    return found


def _branch_commits_of(repo: GitRepository, refs: list[str]) -> Callable[[str], list[str]]:
    """The commits each merge brought in (none for a squash merge, which has one parent), from
    one listing of every commit's parents: a git process per merge cost seconds a build."""
    return BranchCommits(commit_parents(repo, refs))


def _text_order(manifest: Manifest, spec: SpecRecords) -> list[tuple[str, str]]:
    """(name, commit) of every revision and RFC in the order the text evolved.

    Each chain's revisions (a replaced draft's before its replacement's, then by number) are
    followed by the RFC they became; chains come in the manifest's RFC order.
    """
    commits = {r.name: r.commit.commit for r in spec.rfcs if r.commit is not None}
    order: list[tuple[str, str]] = []
    for rfc in manifest.rfc:
        chain = [r for r in spec.revisions if manifest.final_rfc(r.draft) == rfc.name]
        chain.sort(key=lambda r: (-manifest.replacements(r.draft), r.number))
        order += [(r.name, r.commit.commit) for r in chain]
        if rfc.name in commits:
            order.append((rfc.name, commits[rfc.name]))
    order += [
        (r.name, r.commit.commit) for r in spec.revisions if manifest.final_rfc(r.draft) is None
    ]
    return order


def _commit_map(origin: str, name: str | None) -> dict[str, str]:
    """The commit-id map shipped beside a local bundle or clone, if the manifest names one."""
    local = Path(origin).expanduser()
    if name is None or not local.exists():
        return {}
    folder = local if local.is_dir() else local.parent
    return load_commit_map(folder / name)
