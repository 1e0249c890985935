"""Gated, all-or-nothing writes: ingest runs, their named graphs, and the current-run switch.

A run writes each source into fresh named graphs of its own, every batch through the SHACL gate.
Readers keep reading the previous run's graphs until the run completes; then one atomic update
of the catalog graph makes the new run current. Earlier runs stay, with their graphs, so a
reader can ask what the brain said before an ingest (transaction time); ``prune`` forgets all
but the latest runs. A build that dies half-way leaves the previous complete state in force,
and its orphaned graphs (written by no committed run) are cleared by the next build.

Every graph belongs to one tenant (its IRI starts with the tenant's prefix) and carries a
clearance level in the catalog, which is how readers choose the graphs they may see.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import UTC, datetime
from itertools import chain
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict
from pyoxigraph import NamedNode, Triple

from ratified_rdf._errors import BrainError, StoreError
from ratified_rdf._memory import give_back
from ratified_rdf._temporary import clear_abandoned
from ratified_rdf._version import __version__
from ratified_rdf.audit import AuditLog, capture
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.mapping import XSD_DT, Batch, RunContext
from ratified_rdf.graph.spool import Spool
from ratified_rdf.graph.store import (
    LOAD_CHUNK_QUADS,
    DocumentLoader,
    OxigraphStore,
    TripleStore,
    ntriples,
)
from ratified_rdf.graph.vocab import term
from ratified_rdf.queries.run import run_query, source_of
from ratified_rdf.trust import Clearance, TenantId

if TYPE_CHECKING:
    # The gate (pyshacl, rdflib) is imported where a run is staged: reading a brain's runs
    # (read_runs) must not cost a reader the SHACL engine.
    from ratified_rdf.graph.gate import EarlyCheck, ShaclGate, StagedBatch
    from ratified_rdf.graph.gate_context import GateContext


class MappingChanged(StoreError):
    """A run mapped again did not give the batches it gave when staged (a bug: mapping must be
    deterministic); the run is not committed."""


class Writer:
    """Writes one brain's runs into a store, every batch through the gate."""

    def __init__(
        self,
        store: TripleStore,
        gate: ShaclGate,
        brain_id: str,
        tenant: TenantId | None = None,
        *,
        levels: Mapping[str, Clearance] | None = None,
        licences: Mapping[str, str] | None = None,
        audit: AuditLog | None = None,
        actor: str = "unknown",
    ) -> None:
        """``levels`` maps a graph's name (``github``) to its clearance (public when not
        named), ``licences`` a source to its content's licence URL; ``audit`` records every
        batch written, as ``actor``."""
        self.store = store
        self.gate = gate
        self.brain_id = brain_id
        self.tenant = tenant or TenantId.default()
        self.levels = dict(levels or {})
        self.licences = dict(licences or {})
        self.audit = audit
        self.actor = actor
        self.catalog = v.catalog_graph(self.tenant, brain_id)
        self._written: list[str] = []

    def begin_run(self) -> RunContext:
        """Start a run with a fresh id; nothing is visible to readers until it commits."""
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self._started = datetime.now(UTC)
        self._written = []
        return RunContext(self.tenant, self.brain_id, f"{stamp}-{secrets.token_hex(3)}")

    @property
    def passes(self) -> int:
        """How many times :meth:`write_all` maps a run's batches (calls the function it is
        given): once when the run is staged in the embedded store it is for, twice otherwise
        (staged, then written)."""
        return 1 if isinstance(self.store, OxigraphStore) and not self.store.shared else 2

    def write_all(
        self,
        batches: Sequence[Batch] | Callable[[], Iterable[Batch]],
        progress: Callable[[], None] | None = None,
        derive: Callable[[Callable[[], OxigraphStore], list[str]], Iterable[Batch]] | None = None,
        expected_quads: int = 0,
        spool: Spool | None = None,
    ) -> int:
        """Validate every batch of a run, then write them all; a rejection writes nothing.
        Returns the number of distinct triples the run wrote (per graph).

        The run is staged first, so each batch is validated against the state the whole run
        will leave (its references may sit in any batch), and the batches are checked in
        parallel processes. A store in memory stages in memory; a store on disk stages in a
        temporary store on disk (``TMPDIR``), so a large run's staging does not sit in the
        memory the gate's workers share (at ×100, about 8 GiB). Only when every batch passes
        does anything reach the store; the run then still becomes visible only at
        :meth:`commit`.

        ``batches`` may be a function that maps the run's batches afresh each time it is
        called: the run is then mapped once to stage it (validation prepares each batch from
        the staged run, keeping only the nodes each touches) and, for a store other than the
        embedded one it stages in, once more to write it; it is never held as batches, which
        at scale take twice the memory of the staged triples.

        ``derive`` makes the batches derived from the staged run (the card view,
        :mod:`~ratified_rdf.graph.views`), given a function that returns the store the run is
        staged in (staging a derived batch may move the run from memory to disk) and the
        graphs the run wrote: each is staged as it comes, then validated and written with the
        run's own.

        ``expected_quads``: how many quads the run will at least stage, when the caller can
        tell from its records; a run expected past :func:`memory_copy_quads` is staged on disk
        from its first batch, not in memory until it passes the limit (at scale that memory
        and the move to disk came on top of the run's records, at the build's peak).

        ``spool`` is given every batch as it is staged, with its N-Triples, for ``derive`` to
        read back (the card view's partitioned views, :mod:`~ratified_rdf.graph.spool`).
        """
        again: Callable[[], Iterable[Batch]] = batches if callable(batches) else lambda: batches
        if self.passes == 1:
            assert isinstance(self.store, OxigraphStore)
            return self._write_in_place(self.store, again, progress, derive, expected_quads, spool)
        with _staging_for(self.store) as staging:
            sources, derived, written = self._stage_and_check(
                again, staging, progress, derive, expected_quads=expected_quads, spool=spool
            )
        for batch in chain(_same_run(again(), sources, "written"), derived):
            with self._audited(batch):
                self.store.add(batch.graph, batch.triples)
            if batch.graph not in self._written:
                self._written.append(batch.graph)
        return written

    def _write_in_place(
        self,
        store: OxigraphStore,
        again: Callable[[], Iterable[Batch]],
        progress: Callable[[], None] | None,
        derive: Callable[[Callable[[], OxigraphStore], list[str]], Iterable[Batch]] | None,
        expected_quads: int = 0,
        spool: Spool | None = None,
    ) -> int:
        """Stage the run in its own graphs of the embedded store it is for, validate it there
        and keep it: no copy, no second write. The run's graphs are read by no one until
        :meth:`commit` names the run current, so what is staged is as unseen as in a store of
        its own; a rejection (or any error) drops them, and a build that dies leaves them for
        the next build to clear (:meth:`drop_orphaned_graphs`). Each batch's audit record is
        written once the whole run has passed the gate, before it can be read."""
        _clear_abandoned_staging()  # left by builds of versions that staged elsewhere
        written: list[_Written] = []

        def record(batch: Batch, document: bytes) -> None:
            written.append(_Written.of(batch, digest=self.audit is not None, document=document))

        before = set(store.graphs())
        counted: dict[str, int] = {}  # triples per graph, counted beside the last check
        try:
            self._stage_and_check(
                again,
                store,
                progress,
                derive,
                in_place=True,
                on_staged=record,
                expected_quads=expected_quads,
                spool=spool,
                counted=counted,
            )
        except BaseException:
            for graph in set(store.graphs()) - before:
                store.drop_graph(graph)
            raise
        for entry in written:
            with self._audited_write(entry):
                pass  # already staged in the run's graphs, which no one reads before commit
        graphs = list(dict.fromkeys(entry.graph for entry in written))
        for graph in graphs:
            if graph not in self._written:
                self._written.append(graph)
        return sum(counted[g] if g in counted else store.graph_size(g) for g in graphs)

    def _stage_and_check(
        self,
        again: Callable[[], Iterable[Batch]],
        staging: OxigraphStore,
        progress: Callable[[], None] | None,
        derive: Callable[[Callable[[], OxigraphStore], list[str]], Iterable[Batch]] | None = None,
        *,
        in_place: bool = False,
        on_staged: Callable[[Batch, bytes], None] | None = None,
        expected_quads: int = 0,
        spool: Spool | None = None,
        counted: dict[str, int] | None = None,
    ) -> tuple[list[str], Sequence[Batch], int]:
        """Stage the run and what is derived from it, then validate each batch against it all;
        returns the batches' sources in order (what the later passes must map again), the
        derived batches and the number of quads staged (the reviews graphs' included; 0 in
        place, where each graph the run wrote is counted into ``counted`` instead, by the
        engine, while the gate's workers check the last batches: at ×100, counting the
        run's 30 million once the check was done took a quarter of a minute of one core).

        The brain's reviews graphs are staged beside the run: they outlive every run, so the
        state a run leaves is its own graphs and them. ``in_place``: ``staging`` is the store
        the run is for, which holds them already, and the run must end up in it."""
        graphs = set(self._written)
        # The card view reads the staged run, and a store on disk decodes each term it
        # returns from its strings table: several times slower than a store in memory. So a
        # run for a store on disk is staged in memory while it fits (memory_copy_quads), and
        # only a larger one in ``staging`` itself.
        reviews = self.review_graphs()
        limit = memory_copy_quads() if staging.path is not None else 0
        place = _Staging(
            staging,
            limit if expected_quads <= limit else 0,
            on_disk=reviews if in_place else (),
            mirror=in_place,
        )
        with place:
            # What the gate needs of each batch once it is staged, kept as it is staged: the
            # batches are then prepared from it, neither mapped a second time nor read back
            # from the staged run (slow once that is on disk). Let go of with this call's frame
            # (a recorded run keeps it, to check it again).
            from ratified_rdf.graph.gate import StagedRun
            from ratified_rdf.graph.gate_context import GateContext

            context = GateContext(self.gate)

            def outside() -> Iterator[tuple[str, Sequence[Triple], bytes]]:
                for graph in reviews:
                    triples = list(self.store.triples([graph]))
                    context.outside(triples)
                    yield graph, triples, ntriples(triples)

            place.load(outside())
            graphs.update(reviews)
            kept: list[StagedBatch] = []

            def staged() -> Iterator[tuple[str, Sequence[Triple], bytes]]:
                for batch in again():
                    # Written once: spooled for the gate and loaded into the staged run.
                    document = batch.ntriples()
                    kept.append(context.stage(batch, document))
                    graphs.add(batch.graph)
                    if on_staged is not None:
                        on_staged(batch, document)
                    if spool is not None:
                        spool.add(batch, document)
                    yield batch.graph, batch.triples, document

            place.load(staged())
            place.wait()  # the view reads the run
            give_back()  # what the loader's thread freed, before the view fills the heap
            # Read from disk by the views after the partitioned ones (which read the spool):
            # brought into the page cache meanwhile (OxigraphStore.warm).
            place.reading.warm()
            # A run staged in memory is checked early from its copy on disk (the store the
            # gate's workers can open), once that holds the run's own batches.
            early_from = place.reading
            if early_from.path is None and derive is not None and self.gate.checks_early():
                early_from = place.mirrored() or early_from
            early = (
                self._check_early(context, kept, early_from, sorted(graphs), progress)
                if derive is not None
                else None
            )
            # The positions in ``kept`` of the batches the early check was given, in order.
            given = list(range(len(kept))) if early is not None else []
            part_start, part_quads = len(kept), 0
            # The derived batches are staged as they come (a view at a time); only a run to be
            # written elsewhere keeps them, to write them. In place, nothing needs them again,
            # and the gate's workers are about to fork.
            # They are loaded a group at a time, not one by one: on disk each load writes files
            # of its own, and at ×100 thousands of small loads took longer than the view.
            derived: list[Batch] = []
            grouped = 0
            count = 0
            group: list[tuple[str, Sequence[Triple], bytes]] = []
            derived_batches = derive(lambda: place.reading, sorted(graphs)) if derive else ()
            stopping = early.stop if early is not None else None
            with _on_error(stopping):
                for batch in derived_batches:
                    document = batch.ntriples()
                    batch.document = None  # held once, in the group to load
                    kept.append(context.stage(batch, document))
                    graphs.add(batch.graph)
                    if on_staged is not None:
                        on_staged(batch, document)
                    count += 1
                    if not in_place:
                        derived.append(batch)
                    group.append((batch.graph, batch.triples, document))
                    grouped += len(batch.triples)
                    part_quads += len(batch.triples)
                    if grouped >= LOAD_CHUNK_QUADS:
                        place.load(group)
                        group, grouped = [], 0
                    if early is not None and part_quads >= EARLY_PART_QUADS:
                        # The view's batches so far, checked early too when they can be.
                        files = context.checkpoint_since()
                        if files is not None:
                            early.add(kept[part_start:], files)
                            given.extend(range(part_start, len(kept)))
                        part_start, part_quads = len(kept), 0
                place.load(group)
                del group
                place.wait()
                give_back()
                place.reading.warm()  # the view's files too, for the descriptions read next
                run = StagedRun(place.reading, tuple(sorted(graphs)), context)
                context.complete(run.store, run.graphs)
            left = kept
            if early is not None:
                # What it has not checked yet is checked below on every core; so is what it
                # passed without a node a later batch touched (holds_for).
                early.stop()
                standing: set[int] = set()
                doubted: list[int] = []
                for position, passed in zip(given, early.passed(), strict=False):
                    if not passed:
                        doubted.append(position)
                    elif context.holds_for(position):
                        standing.add(position)
                if doubted:
                    # Checked again first, with the whole context (a part of the view is
                    # checked without the types later parts add): a run the gate refuses
                    # fails here, before the rest is checked.
                    self.gate.check_staged([kept[p] for p in doubted], run, progress=progress)
                    standing.update(doubted)
                left = [k for position, k in enumerate(kept) if position not in standing]

            # A run for the store it is staged in must end up there: while the gate's workers
            # check it from memory, this process finishes writing it to disk (loaded from its
            # documents as they were staged; dropped if it is rejected), then counts the
            # triples of each graph the run wrote (a scan of each, which the engine does
            # without the interpreter lock).
            def settle_and_count() -> None:
                place.settle()
                if counted is not None:
                    for graph in sorted(graphs - set(reviews) - set(self._written)):
                        counted[graph] = place.disk.graph_size(graph)

            self.gate.check_staged(
                left,
                run,
                progress=progress,
                alongside=settle_and_count if in_place else None,
            )
            staged_quads = 0 if in_place else len(place.reading)
            return [k.source for k in kept[: len(kept) - count]], derived, staged_quads

    def _check_early(
        self,
        context: GateContext,
        kept: Sequence[StagedBatch],
        store: OxigraphStore,
        graphs: Sequence[str],
        progress: Callable[[], None] | None,
    ) -> EarlyCheck | None:
        """Begin checking the run's own batches (``kept``, staged in ``graphs`` of ``store``)
        while the card view is derived, where the gate checks early
        (:meth:`~ratified_rdf.graph.gate.ShaclGate.checks_early`): the view adds nothing to a
        node of the run, so the run's batches are prepared as the whole context would prepare
        them (:meth:`GateContext.checkpoint`); if a view batch does touch one, the early
        verdicts are dropped and every batch is checked once the view is staged. Only from a
        store on disk: a run staged in memory may move to the disk while the view is staged,
        closing the store the check's thread reads, so such a run is checked from its copy
        on disk (:meth:`_Staging.mirrored`), made as it was staged.

        At ×100 the view keeps one core busy for most of its ten minutes, and the gate's
        workers had both cores for three minutes after it; now they use the core the view
        leaves."""
        from ratified_rdf.graph.gate import StagedRun

        if store.path is None or not self.gate.checks_early():
            return None
        checkpoint = context.checkpoint()
        return self.gate.check_early(
            list(kept), checkpoint, StagedRun(store, tuple(graphs)), progress=progress
        )

    def review_graphs(self) -> list[str]:
        """The brain's reviews graphs that exist, one per clearance level written at."""
        names = {v.reviews_graph(self.tenant, self.brain_id, level.value) for level in Clearance}
        return sorted(g for g in self.store.graphs() if g in names)

    def state_graphs(self) -> list[str]:
        """Every graph of the brain's current state, whoever reads it: the current run's
        graphs (every clearance level), every reviews graph and the catalog. What any reader
        validates is part of this union, so a batch that conforms in it leaves every reader's
        graphs conforming."""
        current = [
            g
            for r in read_runs(self.store, self.tenant, self.brain_id)
            if r.current
            for g in r.graphs
        ]
        return sorted({*current, *self.review_graphs(), self.catalog})

    def write_batch(self, batch: Batch, removing: Sequence[Triple] = ()) -> None:
        """Write one batch outside a run (a review, say) in one atomic update, removing
        ``removing`` from its graph: validated first by the gate with the stored description
        of every node it touches across :meth:`state_graphs` and the batch's own graph, so it
        cannot leave the brain non-conforming for any reader. Raises
        :class:`~ratified_rdf.graph.gate.GateRejected`, writing nothing, when it would."""
        graphs = sorted({*self.state_graphs(), batch.graph})
        self.gate.check(batch, self.store, graphs, removing=removing)
        with self._audited(batch):
            self.store.replace(batch.graph, list(removing), batch.triples)

    def _audited(self, batch: Batch) -> AbstractContextManager:
        return self._audited_write(_Written.of(batch, digest=self.audit is not None))

    def _audited_write(self, entry: _Written) -> AbstractContextManager:
        if self.audit is None:
            return nullcontext()
        source = entry.graph.rsplit("/", 1)[-1]
        return capture(
            self.audit,
            "write_batch",
            {
                "graph": entry.graph,
                "record": entry.source,
                "triples": entry.triples,
                "ntriples_sha256": entry.sha256,
            },
            tenant=self.tenant,
            clearance=self.levels.get(source, Clearance.PUBLIC).value,
            actor=self.actor,
        )

    def commit(
        self, run: RunContext, used: list[str], included: Mapping[str, Clearance] | None = None
    ) -> None:
        """Record the run and the clearance of each graph it wrote, make it current in one
        atomic update, and clear orphaned graphs.

        ``included``: graphs other brains' runs wrote that this run reads as its own, with
        their clearance (a group brain's members, :mod:`ratified_rdf.group`): recorded with
        ``rr:includedGraph``, never dropped or pruned with this brain's runs."""
        brain = v.brain_iri(self.tenant, self.brain_id)
        run_iri = v.run_iri(run.run_id)
        batch = Batch(self.catalog, f"ingest run {run.run_id}")
        batch.add(run_iri, "rdf:type", term("rr:IngestRun").value)
        batch.text(run_iri, "rr:runId", run.run_id)
        batch.text(run_iri, "rr:softwareVersion", __version__)
        batch.add(brain, "rr:run", run_iri)
        batch.typed(run_iri, "prov:startedAtTime", self._started, XSD_DT)
        batch.typed(run_iri, "prov:endedAtTime", datetime.now(UTC), XSD_DT)
        for source in used:
            batch.add(run_iri, "prov:used", source)
        for graph in self._written:
            name = graph.rsplit("/", 1)[-1]
            level = self.levels.get(name, Clearance.PUBLIC)
            batch.add(run_iri, "rr:wroteGraph", graph)
            batch.add(graph, "rdf:type", term("rr:SourceGraph").value)
            batch.text(graph, "rr:sourceKind", source_of(graph))
            if source_of(graph) in self.licences:
                batch.add(graph, "dcterms:license", self.licences[source_of(graph)])
            batch.add(graph, "rr:clearance", v.clearance_iri(level.value))
        for graph, level in (included or {}).items():
            batch.add(run_iri, "rr:includedGraph", graph)
            batch.add(graph, "rr:clearance", v.clearance_iri(level.value))
        batch.add(brain, "rr:currentRun", run_iri)
        previous = [
            Triple(NamedNode(brain), term("rr:currentRun"), NamedNode(r))
            for r in self._current_runs()
        ]
        self.gate.check(batch, self.store, [*self._written, self.catalog], removing=previous)
        self.store.replace(self.catalog, previous, batch.triples)
        self.drop_orphaned_graphs()

    def drop_orphaned_graphs(self) -> None:
        """Drop this brain's run graphs that no committed run wrote (a build that died)."""
        keep = {g for run in read_runs(self.store, self.tenant, self.brain_id) for g in run.graphs}
        keep.add(self.catalog)
        reviews = v.reviews_graph(self.tenant, self.brain_id, "")  # the common prefix
        prefix = v.graph_iri(self.tenant, self.brain_id, "", "").rstrip("/")
        for graph in self.store.graphs():
            if (
                graph.startswith(prefix + "/")
                and not graph.startswith(reviews)
                and graph not in keep
            ):
                self.store.drop_graph(graph)

    def prune(self, keep: int) -> list[str]:
        """Forget all but the latest ``keep`` runs (at least the current one): their catalog
        records and their graphs. Returns the run ids forgotten."""
        runs = read_runs(self.store, self.tenant, self.brain_id)
        forgotten = [r for r in runs[: max(len(runs) - max(keep, 1), 0)] if not r.current]
        if not forgotten:
            return []
        brain = v.brain_iri(self.tenant, self.brain_id)
        gone = {r.iri for r in forgotten}
        graphs = {g for r in forgotten for g in r.graphs}
        # The catalog's subjects and the runs a brain links to are IRIs.
        remove = [
            t
            for t in self.store.triples([self.catalog])
            if isinstance(t.subject, NamedNode)
            and (
                t.subject.value in gone
                or (
                    isinstance(t.object, NamedNode)
                    and t.object.value in gone
                    and t.subject.value == brain
                )
                or t.subject.value in graphs
            )
        ]
        self.store.replace(self.catalog, remove, [])
        # A group's run reads its members' graphs too: only its own are dropped with it.
        own = v.graph_iri(self.tenant, self.brain_id, "", "").rstrip("/") + "/"
        for run in forgotten:
            for graph in run.graphs:
                if graph.startswith(own):
                    self.store.drop_graph(graph)
        return [r.run_id for r in forgotten]

    def _current_runs(self) -> list[str]:
        return [r.iri for r in read_runs(self.store, self.tenant, self.brain_id) if r.current]


class _Written(BaseModel):
    """What the audit log records of one batch written: where, from what, how much, and the
    SHA-256 of its sorted N-Triples lines."""

    model_config = ConfigDict(frozen=True)

    graph: str
    source: str
    triples: int
    sha256: str

    @classmethod
    def of(cls, batch: Batch, *, digest: bool, document: bytes | None = None) -> _Written:
        """The record of ``batch`` (its digest only when ``digest``: sorting every line costs).
        ``document``: its triples as N-Triples, when the caller has written them already."""
        sha = ""
        if digest:
            # Oxigraph writes each line as a term's text gives it ("<s> <p> <o> ."), faster
            # than formatting them here; sorting UTF-8 bytes sorts the text the same way.
            text = batch.ntriples() if document is None else document
            lines = sorted(text.splitlines())
            sha = hashlib.sha256(b"\n".join(lines)).hexdigest()
        return cls(graph=batch.graph, source=batch.source, triples=len(batch.triples), sha256=sha)


class RunRecord(BaseModel):
    """One committed ingest run of a brain, as its catalog records it."""

    model_config = ConfigDict(frozen=True)

    iri: str
    run_id: str
    ended: datetime
    current: bool
    graphs: dict[str, Clearance]
    """Each graph the run wrote, with its clearance level."""


def read_runs(store: TripleStore, tenant: TenantId, brain_id: str) -> list[RunRecord]:
    """Every committed run of a brain, oldest first, read from its catalog graph only."""
    catalog = v.catalog_graph(tenant, brain_id)
    rows, _ = run_query(store, [catalog], "runs", {"brain": v.brain_iri(tenant, brain_id)})
    runs: dict[str, dict] = {}
    for row in rows:
        entry = runs.setdefault(
            row["run"].value,
            {
                "iri": row["run"].value,
                "run_id": row["runId"].value,
                "ended": datetime.fromisoformat(row["ended"].value),
                "current": "currentRun" in row and row["currentRun"] == row["run"],
                "graphs": {},
            },
        )
        level = row["clearance"].value.rsplit("clearance-", 1)[-1]
        entry["graphs"][row["graph"].value] = Clearance(level)
    return sorted((RunRecord(**r) for r in runs.values()), key=lambda r: r.ended)


EARLY_PART_QUADS = 1_000_000
"""About how many quads of the card view's batches are given to the early check at a time
(:meth:`GateContext.checkpoint_since`): each part costs its worker a type table to read."""

MEMORY_COPY_QUADS = 4_000_000
"""The most quads of a run for a store on disk that are staged in memory, where the gate and
the card view read them (about 300 bytes a quad in Oxigraph's memory store, so some 1.2 GB);
``$RATIFIED_MEMORY_COPY_QUADS`` sets another limit, 0 none. A larger run is staged on disk.
(benchmarks/RESULTS.md compares the two at ×10: in memory was quicker and peaked lower.)"""


def memory_copy_quads() -> int:
    """The limit in force: ``$RATIFIED_MEMORY_COPY_QUADS``, else :data:`MEMORY_COPY_QUADS`."""
    asked = os.environ.get("RATIFIED_MEMORY_COPY_QUADS", "").strip()
    if not asked:
        return MEMORY_COPY_QUADS
    if not (asked.isascii() and asked.isdigit()):  # '²' is a digit int() refuses
        raise BrainError(
            f"RATIFIED_MEMORY_COPY_QUADS must be a whole number of quads (0 for none), not "
            f"{asked[:40]!r}; unset it to use the default of {MEMORY_COPY_QUADS:,}."
        )
    return int(asked)


class _Staging:
    """Where a run is staged: in memory while it holds at most ``limit`` quads, else in
    ``disk``, to which what memory held is moved the moment it would hold more.

    In memory as on disk, what is given is loaded on a thread of its own
    (:class:`DocumentLoader`) while the caller maps, serialises and derives what comes next:
    :meth:`wait` before reading what was staged. (The card view, derived while its batches
    are loaded, reads only the run's own graphs, never a view's.) Used as a context manager,
    it lets a load in progress finish when the block raises, so that the caller can drop
    what was staged.

    Graphs named ``on_disk`` are already in ``disk`` (a brain's reviews graphs, when the run is
    staged in the store it is for): they are staged in memory for reading, never written.

    With ``mirror`` (a run for the store on disk it is staged in), what is staged in memory is
    loaded into the disk too, as it comes, so the run is on disk by the time it is checked."""

    def __init__(
        self,
        disk: OxigraphStore,
        limit: int,
        on_disk: Iterable[str] = (),
        *,
        mirror: bool = False,
    ) -> None:
        """``mirror``: what is staged in memory is also loaded into ``disk`` as it comes, on
        a thread of its own (:class:`DocumentLoader`), so that :meth:`settle` has only to
        wait for it (for a run staged in memory for the store it is for)."""
        self.disk = disk
        self.memory: OxigraphStore | None = OxigraphStore() if limit > 0 else None
        self.limit = limit
        self.on_disk = frozenset(on_disk)
        self.mirror = mirror and self.memory is not None
        self._added = 0  # triples given, an upper bound on the quads held; cheaper than len
        self._loader: DocumentLoader | None = None
        self._mirror: DocumentLoader | None = None
        self._in_memory: DocumentLoader | None = None

    def __enter__(self) -> _Staging:
        return self

    def __exit__(self, *raised: object) -> None:
        for loader in (self._loader, self._mirror, self._in_memory):
            if loader is not None:
                loader.abandon()
        self._loader = self._mirror = self._in_memory = None

    @property
    def reading(self) -> OxigraphStore:
        """The store holding everything staged: memory while the run fits, else the disk."""
        return self.memory if self.memory is not None else self.disk

    def load(self, batches: Iterable[tuple[str, Sequence[Triple], bytes]]) -> None:
        """Stage every (graph, triples, the triples as N-Triples) of ``batches``, readable
        once :meth:`wait` returns."""
        pending = iter(batches)
        if self.memory is not None:
            for graph, triples, document in pending:
                self._added += len(triples)
                if self._added > self.limit:
                    self._spill(chain([(graph, triples, document)], pending))
                    return
                # Loaded on a thread of its own too (the bulk loader lets go of the
                # interpreter lock), while this one maps and serialises the next batches:
                # loaded here, one batch at a time, it was half of staging's time.
                if self._in_memory is None:
                    self._in_memory = DocumentLoader(self.memory)
                self._in_memory.add(graph, document, len(triples))
                if self.mirror and graph not in self.on_disk:
                    # Copied to the disk by the bulk loader from the same N-Triples, beside
                    # what this thread maps and derives next, rather than read back from
                    # memory a quad at a time once the run is staged (:meth:`settle`).
                    if self._mirror is None:
                        self._mirror = DocumentLoader(self.disk)
                    self._mirror.add(graph, document, len(triples))
            return
        if self._loader is None:
            self._loader = DocumentLoader(self.disk)
        for graph, triples, document in pending:
            if graph not in self.on_disk:
                self._loader.add(graph, document, len(triples))

    def mirrored(self) -> OxigraphStore | None:
        """The disk, once it holds (flushed) everything staged in memory so far, when what is
        staged is copied there as it comes (``mirror``); else None. What is staged after
        goes on being copied."""
        if not self.mirror:
            return None
        loader, self._mirror = self._mirror, None
        if loader is not None:
            loader.wait()
        return self.disk

    def wait(self) -> None:
        """Return once everything given to :meth:`load` is staged and readable."""
        if self._in_memory is not None:
            self._in_memory.wait()  # on an error, the other is let finish on leaving
            self._in_memory = None
        if self._loader is not None:
            self._loader.wait()
            self._loader = None

    def _spill(self, rest: Iterable[tuple[str, Sequence[Triple], bytes]]) -> None:
        memory = self.memory
        assert memory is not None
        self.wait()  # what is being loaded into memory, before it is copied and closed
        self.settle()
        self.memory = None
        self.mirror = False
        memory.close()
        self.load(rest)

    def settle(self) -> None:
        """Write what is staged in memory to the disk (nothing when it was staged there)."""
        if self.memory is None:
            return
        if self._in_memory is not None:  # read below, unless mirrored as it came
            self._in_memory.wait()
            self._in_memory = None
        if self.mirror:
            loader, self._mirror = self._mirror, None
            if loader is not None:
                loader.wait()
            return
        self.disk.load_from(self.memory, [g for g in self.memory.graphs() if g not in self.on_disk])


STAGING_PREFIX = "ratified-staging-"
"""How a run's staging folder under ``TMPDIR`` is named: the prefix, the building process's
id, then a random part."""


@contextmanager
def _staging_for(store: TripleStore) -> Iterator[OxigraphStore]:
    """A store to stage a run in: in memory for a store in memory (or a server), on disk in a
    temporary folder, removed afterwards, for a store on disk."""
    on_disk = isinstance(store, OxigraphStore) and store.path is not None
    if on_disk:
        _clear_abandoned_staging()
    place: AbstractContextManager[str | None] = (
        tempfile.TemporaryDirectory(prefix=f"{STAGING_PREFIX}{os.getpid()}-")
        if on_disk
        else nullcontext()
    )
    with place as folder:
        staging = OxigraphStore(folder)
        try:
            yield staging
        finally:
            staging.close()


def _clear_abandoned_staging() -> None:
    """Remove the staging folders of builds whose process is gone (killed, out of memory):
    nothing removes them otherwise, and at ×100 one holds gigabytes."""
    clear_abandoned(STAGING_PREFIX)


@contextmanager
def _on_error(cleanup: Callable[[], None] | None) -> Iterator[None]:
    """Run ``cleanup`` (when given) if the block raises, then let the error go on."""
    try:
        yield
    except BaseException:
        if cleanup is not None:
            cleanup()
        raise


def _same_run(batches: Iterable[Batch], sources: list[str], step: str) -> Iterator[Batch]:
    """``batches`` as mapped again, checked to be the run that was staged, batch by batch."""
    count = 0
    for count, batch in enumerate(batches, 1):
        if count > len(sources) or batch.source != sources[count - 1]:
            raise MappingChanged(
                f"The run's batches came out differently when {step} (batch {count}: "
                f"{batch.source}); mapping must be deterministic. The run was not committed."
            )
        yield batch
    if count != len(sources):
        raise MappingChanged(
            f"The run had {len(sources)} batches when staged but {count} when {step}; mapping "
            "must be deterministic. The run was not committed."
        )


MAX_KEEP = 2**53 - 1
"""The most runs a prune can be told to keep: the largest count an audit record holds exactly."""


def check_prune(keep: object, *, withheld: bool) -> None:
    """Raise :class:`BrainError` unless a reader may prune (nothing is withheld from it: a
    prune forgets whole runs) and ``keep`` is a whole number of runs to keep."""
    if withheld:
        raise BrainError("Pruning forgets whole runs; only a restricted-clearance reader may.")
    if isinstance(keep, bool) or not isinstance(keep, int) or not 0 < keep <= MAX_KEEP:
        raise BrainError(
            f"Say how many runs to keep as a whole number from 1 to {MAX_KEEP:,}, not "
            f"{str(keep)[:40]}; the current run is always kept."
        )
