"""The main job: read a repository through its manifest and write a brain, batch by gated batch."""

from __future__ import annotations

import json
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path, PurePosixPath
from typing import get_args

from pydantic import BaseModel, ConfigDict, JsonValue
from tqdm import tqdm

from ratified_rdf.audit import AuditLog, DetailSidecar, capture
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.discussion_mapping import PeopleIndex, SectionIris, discussion_batches
from ratified_rdf.graph.expertise_mapping import expertise_batches, expertise_source
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import Batch, RunContext, spec_batches
from ratified_rdf.graph.store import TripleStore
from ratified_rdf.graph.writer import Writer
from ratified_rdf.records.discussion import DiscussionRecords, github_post_key, read_discussion
from ratified_rdf.records.expertise import ExpertiseRecords, compute_expertise
from ratified_rdf.records.identity import (
    Identity,
    identities_from_archive,
    identities_from_git,
    link_evidence_from_prs,
    load_overrides,
    resolve_people,
)
from ratified_rdf.records.manifest import MailEntry, Manifest, Source, load_manifest
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.records.spec import read_spec
from ratified_rdf.sources.git_history import (
    ChangePlace,
    ReviewLine,
    branch_commits,
    commit_parents,
    first_containing,
    first_parent_line,
    held_pull_requests,
    own_pull_requests,
    place_changes,
    place_review_lines,
    pull_authors,
    pull_request_heads,
    read_history,
    signatures,
)
from ratified_rdf.sources.git_repo import GitRepository, SourceError, load_commit_map
from ratified_rdf.sources.github_archive import GitHubArchive, read_archive
from ratified_rdf.sources.mail import MailReadResult, read_mailman_text, read_mbox
from ratified_rdf.sources.online.datatracker import (
    DraftFacts,
    facts_record_path,
    read_facts_record,
)
from ratified_rdf.trust import Clearance


class BuildReport(BaseModel):
    """What a build did, for the CLI and the benchmarks."""

    model_config = ConfigDict(frozen=True)

    brain_id: str
    tenant: str
    run_id: str
    source: str
    revisions: int
    rfcs: int
    sections: int
    alignments: int
    batches: int
    triples: int
    """Distinct triples written (a commit shared by two batches counts once)."""
    problems: tuple[str, ...] = ()
    """Records reported and skipped (a malformed mail message, say), as sentences."""
    notes: tuple[str, ...] = ()
    """What the build decided that a reader of its answers should know, as sentences: dates
    that ran backwards along a chain, drafts whose sections cannot be followed into an RFC,
    changes made after publication."""
    read_seconds: float
    write_seconds: float
    total_seconds: float


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
    if audit is None:
        return _build(manifest, folder, source, store, cache_dir, progress, None, actor)
    subject: dict[str, JsonValue] = {
        "manifest": str(manifest_path),
        "brain": manifest.brain.id,
        "source": source or manifest.brain.repository,
    }
    top = max((manifest.clearance_of(s) for s in get_args(Source)), key=lambda c: c.rank)
    try:
        with capture(
            audit,
            "build",
            subject,
            tenant=manifest.brain.tenant,
            clearance=top.value,
            actor=actor,
        ) as record:
            report = _build(manifest, folder, source, store, cache_dir, progress, audit, actor)
            audit.append(
                DetailSidecar(
                    annotates=record.id,
                    detail={"run": report.run_id, "triples": report.triples},
                )
            )
            return report
    finally:
        audit.sign_tree_head()


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
    started = time.perf_counter()
    origin = source or manifest.brain.repository
    repo = GitRepository.open(origin, cache_dir)
    commit_map = _commit_map(origin, manifest.brain.commit_map)
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

    records = read_spec(manifest, repo, commit_map, step)
    facts = _draft_facts(manifest, folder)
    discussion = (
        read_discussion_sources(manifest, records, repo, commit_map, folder, facts)
        if manifest.discussion is not None
        else None
    )
    bar.close()
    read_done = time.perf_counter()
    writer = Writer(
        store,
        ShaclGate(),
        manifest.brain.id,
        manifest.brain.tenant,
        levels={
            **{source: manifest.clearance_of(source) for source in get_args(Source)},
            **{expertise_source(level): level for level, _ in manifest.expertise_levels()},
        },
        licences=dict(manifest.licence),
        audit=audit,
        actor=actor,
    )
    run = writer.begin_run()
    people = PeopleIndex(discussion.people) if discussion is not None else None
    scores = []  # each computation with the time it ended, said alike by every mapping
    if discussion is not None:
        for level, sources in manifest.expertise_levels():
            computed = compute_expertise(discussion.visible_to(sources), records)
            scores.append((level, sources, computed, datetime.now(UTC)))
    counted: list[int] = []

    def batches() -> Iterator[Batch]:
        # Mapped afresh for each pass of the writer (stage, validate, write): held as batches,
        # a run takes about twice the memory of its staged triples (10 GiB at ×100).
        mapped = 0
        for batch in _run_batches(records, discussion, people, facts, scores, run):
            mapped += 1
            yield batch
        counted.append(mapped)

    with tqdm(
        desc="validating (SHACL gate)",
        unit="batch",
        disable=not progress,
        file=sys.stderr,
    ) as gate_bar:
        triples = writer.write_all(batches, progress=lambda: gate_bar.update(1))
    writer.commit(run, used=[v.repository_iri(manifest.brain.repository)])
    done = time.perf_counter()
    return BuildReport(
        brain_id=manifest.brain.id,
        tenant=manifest.brain.tenant,
        run_id=run.run_id,
        source=origin,
        revisions=len(records.revisions),
        rfcs=len(records.rfcs),
        sections=sum(len(r.document.sections) for r in records.revisions)
        + sum(len(r.document.sections) for r in records.rfcs),
        alignments=len(records.alignments),
        batches=counted[0],
        triples=triples,
        problems=tuple(p.reason for p in discussion.mail_problems) if discussion else (),
        notes=build_notes(manifest, records, discussion),
        read_seconds=round(read_done - started, 3),
        write_seconds=round(done - read_done, 3),
        total_seconds=round(done - started, 3),
    )


def build_notes(
    manifest: Manifest, records: SpecRecords, discussion: DiscussionRecords | None
) -> tuple[str, ...]:
    """The sentences of :attr:`BuildReport.notes`."""
    notes = [
        f"{draft.name} became no RFC in the records, so its sections cannot be followed into "
        "an RFC: its revisions and their history are built, and its discussion is not "
        "credited to any RFC section. Add 'became' to its [[draft]] entry when it has one."
        for draft in manifest.draft
        if manifest.final_rfc(draft.name) is None
    ]
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


def _run_batches(
    records: SpecRecords,
    discussion: DiscussionRecords | None,
    people: PeopleIndex | None,
    facts: dict[str, DraftFacts],
    scores: list[tuple[Clearance, frozenset[Source], ExpertiseRecords, datetime]],
    run: RunContext,
) -> Iterator[Batch]:
    """Every batch of a run, in order: the spec, the discussion, expertise per level."""
    written: set[str] = set()
    for batch in spec_batches(
        records,
        run,
        (lambda a: people.iri(Identity(kind="document", name=a.name, email=a.email)))
        if people
        else None,
        facts,
    ):
        written.add(batch.graph)
        yield batch
    if discussion is not None:
        for batch in discussion_batches(discussion, records, run):
            written.add(batch.graph)
            yield batch
        for level, sources, computed, ended in scores:
            # Its provenance names only graphs this run wrote: TLS has no mail graph, so its
            # expertise was not computed from one.
            used = frozenset(s for s in sources if run.graph(s) in written)  # type: ignore[arg-type]
            yield from expertise_batches(computed, SectionIris(records), run, level, used, ended)


def read_discussion_sources(
    manifest: Manifest,
    spec: SpecRecords,
    repo: GitRepository,
    commit_map: dict[str, str],
    folder: Path,
    facts: dict[str, DraftFacts] | None = None,
) -> DiscussionRecords:
    """Read the GitHub archive and the document history named by the manifest's discussion,
    and resolve the people behind every git signature, login and byline."""
    assert manifest.discussion is not None
    threads = GitHubArchive(repository="", timestamp=None, threads=())
    raw: dict[str, object] = {}
    if manifest.discussion.github_archive:
        ref, path = manifest.discussion.github_archive.split(":", 1)
        text = repo.read_text(repo.resolve(ref).commit, path)
        if text is None:
            raise SourceError(f"{repo.source} has no {path} at {ref}; fix github_archive.")
        threads = read_archive(text)
        raw = json.loads(text)
    overrides_file = folder / manifest.discussion.people
    bylines = {
        Identity(kind="document", name=a.name, email=a.email)
        for r in (*spec.revisions, *spec.rfcs)
        for a in r.document.authors
    } | {
        Identity(kind="document", name=name)
        for known in (facts or {}).values()
        for name in (*known.chairs, *known.area_directors)
    }
    people = resolve_people(
        [
            *identities_from_git(signatures(repo)),
            *identities_from_archive(raw),
            *sorted(bylines, key=Identity.sort_key),
        ],
        link_evidence_from_prs(partial(pull_authors, repo), raw, commit_map) if raw else [],
        load_overrides(overrides_file) if overrides_file.is_file() else None,
    )
    order = _text_order(manifest, spec)
    refs = sorted({ref for _, ref in order})
    files = list(manifest.discussion.document_files)
    history = held_pull_requests(
        own_pull_requests(read_history(repo, refs, files), first_parent_line(repo, refs)),
        pull_request_heads(repo),
    )
    landing = _landing(repo, manifest, spec)
    # Placing review lines mostly waits on git (a diff per reviewed commit): it runs on a
    # thread of its own while this one reads every commit's text and places its hunks.
    with ThreadPoolExecutor(max_workers=1) as pool:
        review_lines = pool.submit(_review_lines, repo, threads, commit_map, files, landing)
        places = place_changes(repo, history)
        lines = review_lines.result()
    return read_discussion(
        manifest,
        spec,
        threads,
        history,
        landing,
        commit_map,
        _branch_commits_of(repo, refs),
        people,
        [_read_mail(entry, folder) for entry in manifest.discussion.mail],
        facts or {},
        places,
        lines,
    )


_COMMIT_ID = re.compile(r"[0-9a-f]{7,64}")


def _review_lines(
    repo: GitRepository,
    archive: GitHubArchive,
    public_ids: dict[str, str],
    files: list[str],
    landing: _Landing,
) -> dict[str, tuple[ChangePlace, str]]:
    """Where each review comment's line sits, and the revision its change landed in (the
    reviewed commit's, else the pull request's merge commit's), by post key."""
    local_of = {public: local for local, public in public_ids.items()}
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for public in local_of:
        by_prefix[public[:7]].append(public)

    def local(commit: str | None) -> str | None:
        # Archive text reaches git's command line here: only a commit id may (never "-…").
        if not commit or not _COMMIT_ID.fullmatch(commit):
            return None
        if not local_of:  # the repository's own ids are GitHub's
            return commit
        if commit in local_of:
            return local_of[commit]
        matches = [p for p in by_prefix.get(commit[:7], []) if p.startswith(commit)]
        return local_of[matches[0]] if len(matches) == 1 else None

    wanted: list[ReviewLine] = []
    merged: dict[str, str | None] = {}
    reviewed: dict[str, str] = {}
    for thread in archive.threads:
        base = local(thread.base_commit)
        if thread.kind != "pull" or base is None:
            continue
        for post in thread.posts:
            commit = local(post.review_commit)
            if post.kind != "review-comment" or post.diff_position is None or commit is None:
                continue
            key = github_post_key(thread.number, post.index)
            wanted.append(
                ReviewLine(key=key, base=base, commit=commit, position=post.diff_position)
            )
            merged[key], reviewed[key] = local(thread.merge_commit), commit
    places = place_review_lines(repo, wanted, files)
    lines: dict[str, tuple[ChangePlace, str]] = {}
    for key, place in places.items():
        landed = landing(reviewed[key], place.file)
        if landed is None and merged[key] is not None:
            landed = landing(merged[key] or "", place.file)
        if landed is not None:
            lines[key] = (place, landed)
    return lines


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
    for rfc in spec.rfcs:
        entry = next(e for e in manifest.rfc if e.name == rfc.name)
        documents_of[PurePosixPath(entry.file).name].append(rfc.name)
        first_in[rfc.name] = first_containing(repo, [(rfc.name, rfc.commit.commit)])
    # A change to a draft's document after its last revision, in the history of the text of
    # the RFC it became (the RFC editor's fixes on the draft file), is a change to that text.
    rfcs = {rfc.name for rfc in spec.rfcs}
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


def _read_mail(entry: MailEntry, folder: Path) -> MailReadResult:
    """One list's archive file, read leniently: bad messages become problems, not failures."""
    path = Path(entry.file) if Path(entry.file).is_absolute() else folder / entry.file
    if not path.is_file():
        raise SourceError(
            f"The mail archive {path} for list {entry.list} does not exist; fix 'file' in the "
            "manifest's [[discussion.mail]] entry."
        )
    reader = read_mbox if entry.format == "mbox" else read_mailman_text
    return reader(path, entry.list)


def _branch_commits_of(repo: GitRepository, refs: list[str]) -> Callable[[str], list[str]]:
    """``branch_commits`` that only asks git about true merges (squash merges have one parent)."""
    parents = commit_parents(repo, refs)

    def commits_of(merge: str) -> list[str]:
        return branch_commits(repo, merge) if len(parents.get(merge, ())) > 1 else []

    return commits_of


def _text_order(manifest: Manifest, spec: SpecRecords) -> list[tuple[str, str]]:
    """(name, commit) of every revision and RFC in the order the text evolved.

    Each chain's revisions (a replaced draft's before its replacement's, then by number) are
    followed by the RFC they became; chains come in the manifest's RFC order.
    """
    commits = {r.name: r.commit.commit for r in spec.rfcs}
    order: list[tuple[str, str]] = []
    for rfc in manifest.rfc:
        chain = [r for r in spec.revisions if manifest.final_rfc(r.draft) == rfc.name]
        chain.sort(key=lambda r: (-manifest.replacements(r.draft), r.number))
        order += [(r.name, r.commit.commit) for r in chain]
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
