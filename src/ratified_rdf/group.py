"""A working group's brain: every repository of a group built into one store, each its own.

A group file (``group.toml`` in a records folder) names the group and the repository folders
it holds. Building it builds each repository as its own brain (its own catalog, runs and
graphs, as ``ratified build`` of that folder would), then commits a run of the group's own
brain that writes what only the group can say (its members, and the edges between their
documents: references, ``updates``, section citations) and *includes* each member's current
graphs (``rr:includedGraph``). A reader of the group reads all of them as one brain.

So rebuilding one repository rewrites only that repository's graphs, and the group's readers
keep reading the member graphs its current run includes until the group's next run commits:
the last complete group brain, never a half-built one. The group's run then reads again only
the rebuilt repository's texts for references, keeping the other members' edges. A member
already built in another store (its own, say) can be copied from there instead of built
(``build_group``'s ``reuse``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field
from pyoxigraph import NamedNode

from ratified_rdf._build_report import BuildReport
from ratified_rdf._version import __version__
from ratified_rdf.audit import AuditLog
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import XSD_URI, Batch, RunContext
from ratified_rdf.graph.scope import current_run
from ratified_rdf.graph.store import OxigraphStore, TripleStore
from ratified_rdf.graph.vocab import term
from ratified_rdf.graph.writer import Writer, read_runs
from ratified_rdf.queries import run_query
from ratified_rdf.queries.run import source_of
from ratified_rdf.records.manifest import (
    Manifest,
    ManifestError,
    load_manifest,
    read_toml_record,
)
from ratified_rdf.records.reference_formats import references_in
from ratified_rdf.records.references import DocumentReferences
from ratified_rdf.records.spec import last_revisions
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.trust import Clearance, TenantId

__all__ = ["GROUP_FILE", "GroupFile", "GroupReport", "build_group", "is_group", "load_group"]

GROUP_FILE = "group.toml"
"""The name of a group file in its records folder."""


class GroupInfo(BaseModel):
    """The ``[group]`` table: the group's brain and the repository folders it holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
    title: str
    tenant: TenantId = TenantId.default()
    working_group: str | None = None
    members: tuple[str, ...] = Field(min_length=1)
    """Records folders holding a ``manifest.toml``, relative to the group file's folder
    (``tls-record-limit``, ``../tls13``)."""


class GroupFile(BaseModel):
    """A group file (``group.toml``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    group: GroupInfo


class GroupReport(BaseModel):
    """What a group build did: each member built, and the group's own run."""

    model_config = ConfigDict(frozen=True)

    group_id: str
    run_id: str
    members: tuple[str, ...]
    """Every member brain's id, in the group file's order."""
    built: tuple[BuildReport, ...]
    """The members built this time (all, or those asked for)."""
    documents: int
    """How many documents' last revisions were read for references."""
    edges: int
    """How many reference, updates, obsoletes and section-citation edges the group wrote."""
    triples: int
    reused: tuple[str, ...] = ()
    """The members copied from another store rather than built (``build_group``'s
    ``reuse``)."""


def is_group(path: str | Path) -> bool:
    """Whether ``path`` is a group file or a folder holding one."""
    path = Path(path)
    return (path / GROUP_FILE).is_file() if path.is_dir() else path.name == GROUP_FILE


def load_group(path: str | Path) -> tuple[GroupFile, list[tuple[Path, Manifest]]]:
    """The group file at ``path`` (the file or its folder) and each member's manifest folder
    and manifest, in the file's order; raises :class:`ManifestError` saying what to fix."""
    path = Path(path)
    file = path / GROUP_FILE if path.is_dir() else path
    if not file.is_file():
        raise ManifestError(
            f"There is no group file at {file}. Write one naming the repositories' records "
            f"folders ([group] id, title, members), as records/tlswg/{GROUP_FILE} does."
        )
    group = read_toml_record(file, GroupFile, "a group")
    members = []
    for name in group.group.members:
        folder = (file.parent / name).resolve()
        manifest, _ = load_manifest(folder)
        members.append((folder, manifest))
    ids = [m.brain.id for _, m in members]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice or group.group.id in ids:
        clash = ", ".join(twice or [group.group.id])
        raise ManifestError(
            f"{file}: brain id {clash} is used twice (by the group or its members); every "
            "member's brain and the group's need ids of their own."
        )
    return group, members


def find_source(source: str | Path, manifest: Manifest) -> str:
    """The bundle or clone of a member's repository under ``source``: a folder holding, for a
    repository ``…/<name>``, ``<name>/<name>.bundle`` (or a clone ``<name>/``), directly or
    one folder down (``corpus/tlswg/<name>/<name>.bundle``)."""
    name = manifest.brain.repository.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    root = Path(source)
    for folder in [root, *sorted(p for p in root.iterdir() if p.is_dir())]:
        bundle = folder / name / f"{name}.bundle"
        if bundle.is_file():
            return str(bundle)
        if (folder / name / ".git").exists():
            return str(folder / name)
    raise ManifestError(
        f"No copy of {name} under {source}: expected {name}/{name}.bundle (or a clone "
        f"{name}/) there or one folder down. Fetch it, or leave the member out of the group."
    )


def build_group(
    path: str | Path,
    *,
    source: str | Path,
    store: TripleStore,
    only: Sequence[str] = (),
    progress: bool = False,
    audit: AuditLog | None = None,
    actor: str = "unknown",
    log: Callable[[str], None] | None = None,
    workers: int | None = None,
    reuse: Sequence[TripleStore] = (),
) -> GroupReport:
    """Build the group at ``path`` into ``store`` from the copies under ``source``
    (:func:`find_source`): every member, or only the member brains ``only`` names (the
    others' current runs are kept as they are), then the group's own run.

    ``reuse``: stores where members are already built (each member's own store, say, built
    with ``ratified build records/tlswg/<member>`` from the same copy). A member this store
    holds no run of yet is copied from the first of them whose current run of it
    :func:`_reusable` finds made by this version of ratified-rdf from the same repository,
    holding the last revision of each draft the copy under ``source`` has: its catalog and
    graphs, by the bulk loader, which costs far less than building it. The others are built.

    Each member is read in a child process of its own, up to ``workers`` at once (the
    machine's cores when None), and written into the store in the group file's order
    (:func:`~ratified_rdf.build.build_many`): one embedded store takes one writer at a time."""
    from ratified_rdf.build import build_many  # what a build runs is imported when one does

    group, members = load_group(path)
    ids = [m.brain.id for _, m in members]
    unknown = sorted(set(only) - set(ids))
    if unknown:
        raise ManifestError(
            f"The group {group.group.id} has no member {', '.join(unknown)}; its members are "
            f"{', '.join(ids)}."
        )
    say = log or (lambda _line: None)
    chosen = [(f, m) for f, m in members if not only or m.brain.id in only]
    reused = []
    for folder, manifest in list(chosen):
        found = next((o for o in reuse if _reusable(manifest, source, store, o)), None)
        if found is not None:
            say(f"copying {manifest.brain.id}")
            _copy_member(manifest, found, store)
            reused.append(manifest.brain.id)
            chosen.remove((folder, manifest))
    built = list(
        build_many(
            [(folder, find_source(source, manifest)) for folder, manifest in chosen],
            store=store,
            progress=progress,
            audit=audit,
            actor=actor,
            workers=workers,
            log=say,
        )
    )
    say(f"linking {group.group.id}'s documents")
    manifests = [m for _, m in members]
    previous = _current_links(group.group, store) if only else None
    kept: list[Edge] = []
    reread, into = set(ids), set[str]()
    if previous is not None:
        reread = set(only)
        into = _documents_of(manifests, reread)
        kept = [
            e
            for e in previous
            if _member_of(manifests, e[0]) not in reread
            and not any(e[2].startswith(f"{document}/") for document in into)
        ]
    references = {
        manifest.brain.id: _read_references(find_source(source, manifest), manifest)
        for _, manifest in members
        if manifest.brain.id in reread
    }
    report = _commit_group(group.group, manifests, references, store, built, kept, into)
    return report.model_copy(update={"reused": tuple(reused)})


def _reusable(
    manifest: Manifest, source: str | Path, store: TripleStore, other: TripleStore
) -> bool:
    """Whether ``other``'s current run of the member may be copied into ``store`` instead of
    building the member: ``store`` holds no run of it (a copy never replaces a run readers
    may be reading), and ``other``'s current run was made by this version of ratified-rdf from
    the manifest's repository and holds, for each draft, the last revision the copy under
    ``source`` has (:func:`~ratified_rdf.records.spec.last_revisions`)."""
    tenant, brain = manifest.brain.tenant, manifest.brain.id
    if other is store or read_runs(store, tenant, brain):
        return False
    current = current_run(read_runs(other, tenant, brain))
    if current is None:
        return False
    made, _ = run_query(
        other,
        [v.catalog_graph(tenant, brain)],
        "group_reusable_run",
        {"run": NamedNode(current.iri)},
    )
    repository = v.repository_iri(manifest.brain.repository)
    if {(_value(r.get("version")), _value(r.get("repository"))) for r in made} != {
        (__version__, repository)
    }:
        return False
    repo = GitRepository.open(find_source(source, manifest))
    last = {draft: number for draft, number, _, _ in last_revisions(manifest, repo)}
    held = _SectionFinder(other, list(current.graphs))
    return all(
        [n for _, n, _, _ in held.revisions(draft)][-1:] == [number]
        for draft, number in last.items()
    )


def _value(node: object) -> str | None:
    """A row's term's lexical value or IRI; None where the row has none."""
    return getattr(node, "value", None)


def _copy_member(manifest: Manifest, other: TripleStore, store: TripleStore) -> None:
    """Copy a member's brain from ``other`` into ``store``: every run's graphs and its
    reviews, then its catalog, so that the member has no current run here until all that
    run's graphs are in. Each was gated when ``other``'s build wrote it, against the member's
    whole state, which is the same here: a member's graphs are its own."""
    tenant, brain = manifest.brain.tenant, manifest.brain.id
    graphs = {g for run in read_runs(other, tenant, brain) for g in run.graphs}
    reviews = v.reviews_graph(tenant, brain, "")
    graphs |= {g for g in other.graphs() if g.startswith(reviews)}
    ordered = [*sorted(graphs), v.catalog_graph(tenant, brain)]
    if isinstance(store, OxigraphStore) and isinstance(other, OxigraphStore):
        # Each graph dumped and bulk-loaded as N-Triples, read and written in Rust: copying
        # it quad by quad through Python took longer than building a small member.
        for graph in ordered:
            store.load_documents([(graph, other.dump_graph(graph))])
        return
    for graph in ordered:
        store.add(graph, list(other.triples([graph])))


_LINKS = ("dcterms:requires", "dcterms:references", "rr:updates", "rr:declaresObsoletes")
"""The predicates of the edges the group's link step writes between documents."""
_PREDICATES = {term(p).value: p for p in _LINKS}

IN_PROCESS_TRIPLES = 20_000
"""The most triples of the group's own run that the SHACL gate checks in this process rather
than in its worker processes, whose start costs more than checking a run this small
(benchmarks/RESULTS.md, the group's link step)."""


Edge = tuple[str, str, str]
"""An edge between documents: its subject, predicate and object IRIs."""


def _current_links(group: GroupInfo, store: TripleStore) -> list[Edge] | None:
    """The edges between documents the group's current run wrote, or None when the group has
    no current run (its first build links every member)."""
    current = current_run(read_runs(store, group.tenant, group.id))
    if current is None:
        return None
    written = [g for g in current.graphs if source_of(g) == "references"]
    edges = []
    for triple in store.triples(written):
        s, p, o = triple.subject, triple.predicate, triple.object
        # Every edge the link step writes is between IRIs.
        if isinstance(s, NamedNode) and isinstance(o, NamedNode):
            edges.append((s.value, p.value, o.value))
    return edges


def _member_of(members: list[Manifest], revision: str) -> str | None:
    """The member brain whose draft ``revision`` (a revision's IRI) is a revision of."""
    document = revision.rsplit("/", 1)[0]
    return next(
        (m.brain.id for m in members for d in m.draft if v.document_iri(d.name) == document),
        None,
    )


def _documents_of(members: list[Manifest], chosen: set[str]) -> set[str]:
    """The IRIs of the documents (drafts and RFCs) the ``chosen`` members hold."""
    return {
        v.document_iri(name)
        for m in members
        if m.brain.id in chosen
        for name in [*(d.name for d in m.draft), *(r.name for r in m.rfc)]
    }


def _draft_section_page(draft: str, section: str) -> str:
    """A draft's section on the Datatracker's page of its latest revision: how a citation of
    the section is written whichever revision it resolves to (and where it resolves to none)."""
    return f"{v.DATATRACKER}html/{draft}{v.fragment(section)}"


def _cited_page(page: str) -> tuple[str, str] | None:
    """(document, section number) of a section page :func:`_reference_batch` wrote an edge
    to (:func:`~ratified_rdf.graph.vocab.rfc_section_url`, :func:`_draft_section_page`)."""
    for prefix in (v.rfc_section_url("", None), f"{v.DATATRACKER}html/"):
        if page.startswith(prefix) and "#" in page:
            document, anchor = page[len(prefix) :].split("#", 1)
            kind, _, number = anchor.partition("-")
            if kind in ("section", "appendix") and number:
                return document, number
    return None


def _read_references(
    source: str, manifest: Manifest
) -> list[tuple[str, str, str, DocumentReferences]]:
    """(draft, number, its commit, what it cites) of each draft's last revision, read by its
    format's reader (:func:`~ratified_rdf.records.reference_formats.references_in`)."""
    repo = GitRepository.open(source)
    read = []
    for draft, number, commit, file in last_revisions(manifest, repo):
        text = repo.read_text(commit, file)
        cited = references_in(file, text) if text is not None else None
        if cited is not None:
            read.append((draft, number, commit, cited))
    return read


def _commit_group(
    group: GroupInfo,
    members: list[Manifest],
    references: dict[str, list[tuple[str, str, str, DocumentReferences]]],
    store: TripleStore,
    built: list[BuildReport],
    kept: list[Edge],
    into: set[str],
) -> GroupReport:
    tenant = group.tenant
    included: dict[str, Clearance] = {}
    for manifest in members:
        current = current_run(read_runs(store, tenant, manifest.brain.id))
        if current is None:
            raise ManifestError(
                f"{manifest.brain.id} has no complete build in this store yet, so the group "
                f"cannot include it: build the whole group, or {manifest.brain.id} first."
            )
        included.update(current.graphs)
    writer = Writer(store, ShaclGate(), group.id, tenant)
    run = writer.begin_run()
    records = _group_records(group, members, run)
    links, documents, edges = _reference_batch(
        members, references, run, store, included, kept, into
    )
    if len(records.triples) + len(links.triples) <= IN_PROCESS_TRIPLES:
        # Starting the gate's worker processes costs more than checking a batch this small.
        writer.gate.workers = 1
    triples = writer.write_all([records, links])
    writer.commit(
        run, used=[v.repository_iri(m.brain.repository) for m in members], included=included
    )
    return GroupReport(
        group_id=group.id,
        run_id=run.run_id,
        members=tuple(m.brain.id for m in members),
        built=tuple(built),
        documents=documents,
        edges=edges,
        triples=triples,
    )


def _group_records(group: GroupInfo, members: list[Manifest], run: RunContext) -> Batch:
    """The group's brain, its members' brains, the repositories they were built from and the
    documents each repository holds."""
    batch = Batch(run.graph("records"), f"group {group.id}", shared=True)
    brain = v.brain_iri(group.tenant, group.id)
    batch.add(brain, "rdf:type", term("void:Dataset").value)
    batch.text(brain, "dcterms:title", group.title)
    for manifest in members:
        repo = v.repository_iri(manifest.brain.repository)
        batch.add(brain, "dcterms:source", repo)
        batch.add(brain, "rr:member", v.brain_iri(group.tenant, manifest.brain.id))
        batch.add(repo, "rdf:type", term("rr:SourceRepository").value)
        batch.add(repo, "foaf:page", manifest.brain.repository)
        batch.typed(repo, "rr:repositoryUrl", manifest.brain.repository, XSD_URI)
        # Which repository holds which document: what the group holds per repository.
        for document in [*(d.name for d in manifest.draft), *(r.name for r in manifest.rfc)]:
            batch.add(repo, "dcterms:hasPart", v.document_iri(document))
    return batch


def _reference_batch(
    members: list[Manifest],
    references: dict[str, list[tuple[str, str, str, DocumentReferences]]],
    run: RunContext,
    store: TripleStore,
    graphs: dict[str, Clearance],
    kept: list[Edge] = [],  # noqa: B006 (never changed)
    into: set[str] = set(),  # noqa: B006 (never changed)
) -> tuple[Batch, int, int]:
    """The edges from each draft's last revision to the documents and sections it cites.

    A section is cited by its public page (rfc-editor.org's ``#section-N`` for an RFC's, the
    Datatracker's for a draft's), which every reader can open; where the group holds the RFC,
    also by the brain's own section; where it holds the draft, through the draft's revision
    current at the citing revision's date (the rule the discussion's citations follow): the
    section of that number in that revision.

    ``references`` may hold only some members' (a rebuild's): ``kept`` are the other members'
    edges from the group's last run, less those into the sections of the documents ``into``
    names (the rebuilt members'), which are found again from the pages the kept edges cite:
    the rebuilt members' sections and revisions may have changed, the citing texts have not."""
    batch = Batch(run.graph("references"), "references between the group's documents")
    held = {rfc.name for m in members for rfc in m.rfc}
    drafts = {d.name for m in members for d in m.draft}
    names = {v.document_iri(d): d for d in drafts}
    sections = _SectionFinder(store, list(graphs))
    documents = edges = 0

    def resolved(draft: str, number: str, document: str, section: str) -> list[str]:
        """The group's own sections a citation by ``draft``-``number`` of ``section`` of
        ``document`` is to."""
        if document.startswith("rfc"):
            return sections.of(v.document_iri(document), section) if document in held else []
        if document not in drafts:
            return []
        when = sections.date_of(draft, number)
        at = sections.revision_at(document, when) if when else None
        return sections.of(at, section) if at is not None else []

    for subject, predicate, target in kept:
        batch.add(subject, _PREDICATES[predicate], target)
        edges += 1
        page = _cited_page(target)
        citing = names.get(subject.rsplit("/", 1)[0])
        if page is None or citing is None or v.document_iri(page[0]) not in into:
            continue
        for section in resolved(citing, subject.rsplit("/", 1)[1], *page):
            batch.add(subject, "dcterms:references", section)
            edges += 1
    for manifest in members:
        for draft, number, _commit, cited in references.get(manifest.brain.id, []):
            documents += 1
            revision = v.revision_iri(draft, number)
            pairs = [
                *(("dcterms:requires", v.document_iri(d)) for d in cited.normative if d != draft),
                *(
                    ("dcterms:references", v.document_iri(d))
                    for d in cited.informative
                    if d != draft
                ),
                *(("rr:updates", v.document_iri(f"rfc{n}")) for n in cited.updates),
                *(("rr:declaresObsoletes", v.document_iri(f"rfc{n}")) for n in cited.obsoletes),
            ]
            for document, section in cited.sections:
                if document == draft:
                    continue  # a draft's own sections, named with its own name
                shown = (
                    v.rfc_section_url(document, section)
                    if document.startswith("rfc")
                    else _draft_section_page(document, section)
                )
                pairs.append(("dcterms:references", shown))
                found = resolved(draft, number, document, section)
                pairs += [("dcterms:references", s) for s in found]
            for predicate, target in dict.fromkeys(pairs):
                batch.add(revision, predicate, target)
                edges += 1
    return batch, documents, edges


class _SectionFinder:
    """The sections and revisions the group's member graphs hold, looked up as the edges
    are made (each draft's revisions, and each document's sections, read once)."""

    def __init__(self, store: TripleStore, graphs: list[str]) -> None:
        self.store, self.graphs = store, graphs
        self._revisions: dict[str, list[tuple[str, str, str, str]]] = {}
        self._sections: dict[str, dict[str, list[str]]] = {}

    def revisions(self, draft: str) -> list[tuple[str, str, str, str]]:
        """(revision IRI, number, date, start) of each revision of ``draft``, by start."""
        if draft not in self._revisions:
            rows, _ = run_query(
                self.store,
                self.graphs,
                "group_revision_starts",
                {"draft": v.document_iri(draft)},
            )
            self._revisions[draft] = [
                (r["revision"].value, r["revisionNumber"].value, r["date"].value, r["start"].value)
                for r in rows
            ]
        return self._revisions[draft]

    def date_of(self, draft: str, number: str) -> str | None:
        """The date of revision ``number`` of ``draft``."""
        return next((d for _, n, d, _ in self.revisions(draft) if n == number), None)

    def revision_at(self, draft: str, when: str) -> str | None:
        """The revision of ``draft`` current at ``when``: the last to have started by then."""
        moment = _instant(when)
        started = [iri for iri, _, _, start in self.revisions(draft) if _instant(start) <= moment]
        return started[-1] if started else None

    def of(self, document: str, section: str) -> list[str]:
        """The section numbered ``section`` of ``document`` (an RFC's or a revision's IRI)."""
        if document not in self._sections:
            rows, _ = run_query(
                self.store, self.graphs, "group_document_sections", {"document": document}
            )
            numbered: dict[str, list[str]] = {}
            for row in rows:
                numbered.setdefault(row["sectionNumber"].value, []).append(row["section"].value)
            self._sections[document] = numbered
        return self._sections[document].get(section, [])


def _instant(stamp: str) -> datetime:
    """An ``xsd:dateTime``'s instant, comparable whatever its zone (a date alone is UTC)."""
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
