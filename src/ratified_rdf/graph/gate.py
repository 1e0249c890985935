"""The SHACL gate: every batch is validated before any of it reaches the store.

Validating the whole store on each write is too slow (pyshacl manages about 30k triples/s) and
validating the batch alone is wrong (referenced nodes arrive untyped, so ``sh:class`` fails). The
gate therefore validates the batch together with what it references: the stored description of
every node the batch touches (its subjects, and the objects of its triples through predicates a
shape reads backwards, such as a section's one ``rr:hasSection``; with, for those inverse paths,
the triples pointing at them) and the types of every node it points at, with pyshacl's focus
nodes set to the touched nodes.

The description is read from the graphs of the whole state the write leaves, never from the
batch's graph alone: a run's batches against the staged run (and the brain's reviews graphs,
which outlive runs), a single write against every graph of the brain's current state
(``Writer.state_graphs``), so a value written beside one stored in another graph is seen.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import rdflib
from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, serialize
from pyshacl import validate

from ratified_rdf._errors import InputError, StoreError
from ratified_rdf._forked import die_with, ensure_fork_server
from ratified_rdf._memory import thaw
from ratified_rdf.graph.gate_context import (
    Checkpoint,
    ContextFiles,
    Described,
    OpenedContext,
    TypeTable,
)
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.shacl_engines import EnginesDisagree, ShaclEngine, engine_named
from ratified_rdf.graph.store import OxigraphStore, TripleStore
from ratified_rdf.graph.violations import SH, PreparedBatch, Violation, violations_of
from ratified_rdf.resources import resource_dir

if TYPE_CHECKING:
    from ratified_rdf.graph.gate_context import GateContext, OpenedContext

_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


class GateWorkerDied(StoreError):
    """A gate worker process died (killed, out of memory); the run was not written."""


class GateRejected(InputError):
    """A batch broke the shapes; nothing of it was written."""

    def __init__(self, source: str, violations: Sequence[Violation]) -> None:
        self.source = source
        self.violations = tuple(violations)
        lines = [
            f"The SHACL gate rejected the batch from {source}; nothing of it was written. "
            f"{len(self.violations)} problem(s):"
        ]
        lines += [f"  - {v.sentence()}" for v in self.violations[:20]]
        if len(self.violations) > 20:
            lines.append(f"  … and {len(self.violations) - 20} more.")
        super().__init__("\n".join(lines))


@lru_cache(maxsize=4)
def load_shapes(folder: Path | None = None) -> rdflib.Graph:
    """Every ``*.ttl`` file of ``shapes/`` as one graph."""
    shapes = rdflib.Graph()
    for path in sorted((folder or resource_dir("shapes")).glob("*.ttl")):
        shapes.parse(path, format="turtle")
    return shapes


def to_rdflib(triples: Iterable[Triple], graph: rdflib.Graph | None = None) -> rdflib.Graph:
    """Copy pyoxigraph triples into an rdflib graph."""
    out = graph if graph is not None else rdflib.Graph()
    for triple in triples:
        out.add((_term(triple.subject), _term(triple.predicate), _term(triple.object)))
    return out


def _term(node: object) -> rdflib.term.Node:
    if isinstance(node, NamedNode):
        return rdflib.URIRef(node.value)
    if isinstance(node, BlankNode):
        return rdflib.BNode(node.value)
    if isinstance(node, Literal):
        if node.language:
            return rdflib.Literal(node.value, lang=node.language)
        if node.datatype.value == _XSD_STRING:
            # RDF 1.1: a simple literal is an xsd:string; rdflib compares them as different.
            return rdflib.Literal(node.value)
        return rdflib.Literal(node.value, datatype=rdflib.URIRef(node.datatype.value))
    raise TypeError(f"unsupported RDF term {node!r}")


@dataclass(frozen=True)
class StagedBatch:
    """What the gate keeps of a staged batch to prepare it later (:meth:`ShaclGate.staged`)."""

    source: str
    touched: frozenset[str] | None
    """The nodes it touches (:meth:`ShaclGate.touched`); None for a batch staged through a
    gate context, which reads them off the batch's spooled lines when it prepares it
    (at ×100, kept for every batch until the gate ran, they took about a gigabyte)."""
    loose: tuple[Triple, ...]
    spooled: tuple[int, int] | None = None
    """Where a :class:`~ratified_rdf.graph.gate_context.GateContext` spooled its triples
    (offset, length), when it was staged through one."""


@dataclass(frozen=True)
class StagedRun:
    """Where a run's batches are staged: the store to prepare them from and the graphs of
    the whole state the run leaves (:meth:`ShaclGate.check_staged`)."""

    store: TripleStore
    graphs: tuple[str, ...]
    context: GateContext | None = None
    """What was kept of the run as it was staged, to prepare its batches from instead of the
    store (:mod:`~ratified_rdf.graph.gate_context`); None: they are read from the store."""

    @property
    def in_memory(self) -> bool:
        """Whether the store is held in this process's memory, so a forked gate worker reads
        the same store."""
        return isinstance(self.store, OxigraphStore) and self.store.path is None

    @property
    def folder(self) -> Path | None:
        """The folder of an embedded store on disk, which a gate worker opens read-only for
        itself (a store on disk is not read through a handle the fork inherited)."""
        return self.store.path if isinstance(self.store, OxigraphStore) else None


class _Preparer:
    """Prepares the staged batches of ``run`` in a gate worker: from the run's gate context
    when it has one (which the worker inherited), else from the store the worker inherited
    when it is in memory, else from its folder, opened read-only by the worker at its first
    batch. Nothing writes to the staged run while the gate checks it, and
    :meth:`ShaclGate.check_staged` flushes it before the workers fork, so that opening sees
    it all."""

    def __init__(self, gate: ShaclGate, run: StagedRun) -> None:
        self.gate, self.run = gate, run
        self._opened: OxigraphStore | None = None

    def __call__(self, staged: StagedBatch) -> PreparedBatch:
        """``staged``, prepared (:meth:`ShaclGate.prepare_staged`)."""
        if self.run.context is not None:
            return self.run.context.prepare(staged)
        store = self.run.store
        if not self.run.in_memory:
            if self._opened is None:
                assert self.run.folder is not None
                self._opened = OxigraphStore(self.run.folder, shared=True)
            store = self._opened
        return self.gate.prepare_staged(staged, store, self.run.graphs)


class ShaclGate:
    """Validates batches against the shapes, in the context of what is already stored."""

    def __init__(
        self,
        shapes: rdflib.Graph | None = None,
        engine: str | None = None,
        workers: int | None = None,
    ) -> None:
        """``engine``: one of :data:`~ratified_rdf.graph.shacl_engines.ENGINES`; by default
        ``$RATIFIED_GATE_ENGINE``, else the compiled engine (``native``). ``workers``: how many
        processes check a run's batches when a call does not say (1: in this process); by
        default ``$RATIFIED_GATE_WORKERS``, else one per core."""
        self.workers = workers
        self.shapes = shapes if shapes is not None else load_shapes()
        self.engine_name = engine or os.environ.get("RATIFIED_GATE_ENGINE") or "native"
        self.engine = engine_named(self.engine_name, self.shapes)
        # Only inverse paths look at triples pointing *to* a node; fetching every incoming
        # triple would pull in, say, all of a prolific account's posts on every batch.
        self.inverse_predicates = sorted(
            str(p)
            for p in self.shapes.objects(None, SH.inversePath)
            if isinstance(p, rdflib.URIRef)
        )

    def prepare(
        self,
        batch: Batch,
        store: TripleStore,
        context_graphs: Sequence[str],
        removing: Sequence[Triple] = (),
    ) -> PreparedBatch:
        """Gather what ``batch`` must be validated with: its triples, the stored description
        of the nodes it touches and the types of what it references, as one N-Triples document.

        ``removing`` lists stored triples the same transaction deletes, so the check sees the
        state after the write (a switched pointer, not the old and new one side by side).
        """
        return self._prepared(
            batch.source, self.touched(batch), batch.triples, store, context_graphs, removing
        )

    def prepare_staged(
        self, staged: StagedBatch, store: TripleStore, context_graphs: Sequence[str]
    ) -> PreparedBatch:
        """:meth:`prepare` for a batch already staged in ``store``, from what
        :meth:`staged` kept of it: its triples are in the stored description of the nodes it
        touches (every subject it names is one), so the same document comes out without
        mapping the batch again."""
        if staged.touched is None:
            raise ValueError(
                "A batch staged through a gate context was prepared from the store without "
                "the nodes it touches; this is a bug in the caller (GateContext.touched_of)."
            )
        return self._prepared(staged.source, staged.touched, staged.loose, store, context_graphs)

    def staged(self, batch: Batch) -> StagedBatch:
        """What :meth:`prepare_staged` needs of ``batch`` once it is staged: the nodes it
        touches, and any triple of it whose subject is not one of them (a blank node)."""
        return StagedBatch(
            source=batch.source,
            touched=frozenset(self.touched(batch)),
            loose=tuple(t for t in batch.triples if not isinstance(t.subject, NamedNode)),
        )

    def _prepared(
        self,
        source: str,
        subjects: AbstractSet[str],
        own: Sequence[Triple],
        store: TripleStore,
        context_graphs: Sequence[str],
        removing: Sequence[Triple] = (),
    ) -> PreparedBatch:
        described = store.describe(subjects, context_graphs, self.inverse_predicates)
        if removing:
            gone = set(removing)
            described = [t for t in described if t not in gone]
        referenced: set[str] = set()
        for t in chain(own, described):
            # Each attribute read makes a new term object: read each once.
            subject, value = t.subject, t.object
            if isinstance(subject, NamedNode):
                referenced.add(subject.value)
            if isinstance(value, NamedNode):
                referenced.add(value.value)
        referenced.difference_update(subjects)
        triples = {*own, *described, *store.types_of(referenced, context_graphs)}
        return PreparedBatch(
            source=source,
            ntriples=serialize(triples, format=RdfFormat.N_TRIPLES) or b"",
            focus_nodes=tuple(sorted(subjects)),
        )

    def touched(self, batch: Batch) -> set[str]:
        """The nodes whose conformance ``batch`` can change: the subjects of its triples, and
        the objects of its triples through a predicate some shape reads backwards (a section
        given a second ``rr:hasSection`` parent breaks the section, not the parent). Each is
        validated with its stored description."""
        from ratified_rdf.graph.gate_context import _predicate_terms, read_batch  # imports us

        inverse = self.inverse_predicates
        touched, _types, _loose = read_batch(
            batch.triples, frozenset(inverse), _predicate_terms(inverse)
        )
        return set(touched)

    def check(
        self,
        batch: Batch,
        store: TripleStore,
        context_graphs: Sequence[str],
        removing: Sequence[Triple] = (),
    ) -> None:
        """Raise :class:`GateRejected` unless ``batch`` conforms together with the stored
        description, in ``context_graphs``, of every node it touches (:meth:`touched`).

        ``context_graphs`` is the whole state the write leaves (for a single write to a brain,
        :meth:`~ratified_rdf.graph.writer.Writer.state_graphs`), and must include the graph
        the batch is written to: a batch checked without its own graph's triples would pass
        a second value beside a stored one."""
        if batch.graph not in context_graphs:
            raise ValueError(
                f"The gate was asked to check a batch for {batch.graph} without that graph in "
                "its context; this is a bug in the caller: pass the whole state the write "
                "leaves (Writer.state_graphs())."
            )
        violations = checked(self.engine, self.prepare(batch, store, context_graphs, removing))
        if violations:
            raise GateRejected(batch.source, violations)

    def check_staged(
        self,
        staged: Iterable[StagedBatch],
        run: StagedRun,
        workers: int | None = None,
        progress: Callable[[], None] | None = None,
        alongside: Callable[[], None] | None = None,
    ) -> None:
        """Validate every batch of a staged run (:meth:`check_all`), each prepared from the
        staged run (:meth:`prepare_staged`), and run ``alongside`` (writing the run to disk,
        say) meanwhile; it has finished when this returns or raises, and what it raises is
        raised unless a batch was rejected.

        A run with a gate context, or staged in the embedded store (in memory or on disk), is
        prepared in the gate's workers (:class:`_Preparer`): preparing a batch costs about as
        much as validating it, and this way both are spread over the cores, with
        ``alongside`` on a thread of this process. A run staged in any other store (a server)
        without one is read here, one batch ahead of the workers, and ``alongside`` runs after
        the check."""
        workers = _workers(self.workers if workers is None else workers)
        if workers > 1 and run.context is not None and fresh_workers():
            # Workers started afresh, each opening the context from its files: forked from
            # this process, each would come to hold pages of all it holds (the view, the
            # staged run in memory), copied as its own allocations land among them.
            files = run.context.files()
            self._check_in_workers(staged, workers, progress, files, alongside, fresh=True)
            return
        if workers > 1 and (run.context is not None or isinstance(run.store, OxigraphStore)):
            if isinstance(run.store, OxigraphStore):
                # RocksDB replays its log when opened too; flushed, nothing relies on that.
                run.store.flush()
            self._check_in_workers(staged, workers, progress, _Preparer(self, run), alongside)
            return
        context = run.context
        self.check_all(
            (
                context.prepare(k) if context else self.prepare_staged(k, run.store, run.graphs)
                for k in staged
            ),
            workers=workers,
            progress=progress,
        )
        if alongside is not None:
            alongside()

    def checks_early(self, workers: int | None = None) -> bool:
        """Whether :meth:`check_early` checks: in workers started afresh, several of them
        (the build's process then has the view to derive while they check)."""
        return _workers(self.workers if workers is None else workers) > 1 and fresh_workers()

    def check_early(
        self,
        staged: Sequence[StagedBatch],
        checkpoint: Checkpoint,
        run: StagedRun,
        workers: int = 1,
        progress: Callable[[], None] | None = None,
    ) -> EarlyCheck:
        """Begin checking ``staged`` (a run's batches, staged in ``run``) from a thread of
        this process, while the caller goes on (to derive and stage the card view): the
        thread reads the descriptions the gate context's ``checkpoint`` needs from the staged
        run, then checks each batch in ``workers`` started afresh, which prepare it from the
        checkpoint's files, and then each batch given to :meth:`EarlyCheck.add` (the view's,
        a part at a time) the same way; :meth:`EarlyCheck.stop` ends it, and
        :meth:`EarlyCheck.passed` says which passed. The workers run at a lower priority
        than this process, so the view takes what it needs of the cores and they take the
        rest.

        One worker by default: the view keeps about one core busy, and each worker holds the
        run's type table while the view is at its largest (at ×100, the build's peak)."""
        early = EarlyCheck()

        def check(stop: threading.Event) -> None:
            files = checkpoint.describe(run.store, run.graphs)
            self._check_in_workers(
                early.stream(staged),
                workers,
                progress,
                files,
                fresh=True,
                stop=stop,
                niceness=EARLY_NICENESS,
                verdicts=early.verdicts,
            )

        early.start(check)
        return early

    def check_all(
        self,
        prepared: Iterable[PreparedBatch],
        workers: int | None = None,
        progress: Callable[[], None] | None = None,
    ) -> None:
        """Validate many prepared batches, in parallel processes when there are cores to spare.

        ``prepared`` may be a generator: each batch goes to a worker as soon as it is ready,
        so preparing the next overlaps validating the last, and at most two per worker are
        prepared ahead of the results (``Executor.map`` would prepare them all at once, and a
        run's batches with their context do not fit in memory at scale). Raises
        :class:`GateRejected` for the first rejected batch in the given order, and
        :class:`GateWorkerDied` when a worker process is killed.
        """
        workers = _workers(self.workers if workers is None else workers)
        if workers <= 1:
            found: list[tuple[str, list[Violation]]] = []
            for item in prepared:
                found.append((item.source, checked(self.engine, item)))
                (progress or (lambda: None))()
            _raise_first(found)
            return
        self._check_in_workers(prepared, workers, progress, None)

    def _check_in_workers(
        self,
        items: Iterable[PreparedBatch] | Iterable[StagedBatch | _InContext],
        workers: int,
        progress: Callable[[], None] | None,
        prepare: Callable[[StagedBatch], PreparedBatch] | ContextFiles | None,
        alongside: Callable[[], None] | None = None,
        *,
        fresh: bool = False,
        stop: threading.Event | None = None,
        niceness: int = 0,
        verdicts: list[list[Violation]] | None = None,
    ) -> None:
        """Validate ``items`` in ``workers`` processes; each staged batch is prepared by the
        worker with ``prepare``. Forked from this process (by default), a worker inherits
        ``prepare`` (a closure is not sent, the fork copies it); ``fresh``, it is started by
        a fork server (a small process of its own, :data:`FRESH_START`) and opens the gate
        context ``prepare`` names (:class:`ContextFiles`, sent pickled) at its first batch.
        ``alongside`` starts on a thread once every worker has started (a fork while another
        thread writes to a store would copy its locks held). Once ``stop`` is set, no more
        batches are sent (:class:`EarlyCheck`); the workers run at ``niceness``. Given
        ``verdicts``, each batch's violations are added to it in order, none raised."""
        tick = progress or (lambda: None)
        beside: _Beside | None = None
        sources: list[str] = []
        results: list[list[Violation]] = []
        if fresh:
            context: multiprocessing.context.BaseContext = multiprocessing.get_context(FRESH_START)
            # Only what a worker needs is imported into the server once, for every worker it
            # starts: not the program's main module (a script without a main guard would
            # run again in it). The server is started here, bound to die with this process,
            # rather than by the pool on whichever thread runs this check.
            ensure_fork_server([__name__])
        else:
            context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(
            max_workers=workers,
            mp_context=context,
            initializer=_init_worker,
            initargs=(
                self.shapes.serialize(format="nt"),
                self.engine_name,
                None if fresh else os.getpid(),
                prepare,
                niceness,
            ),
        ) as pool:
            pending: deque[Future[list[Violation]]] = deque()
            # Workers fork at the first submit and share the build's heap copy-on-write,
            # but a worker's garbage collector writes to every object it inherited, and so
            # copies them all, once per worker: at scale (14 GiB of records and batches)
            # that runs the machine out of memory. The collector leaves frozen objects
            # alone; objects made from here on are not frozen.
            if not fresh:
                gc.freeze()
            try:
                for item in items:
                    if stop is not None and stop.is_set():
                        break
                    sources.append(item.source)
                    pending.append(pool.submit(_validate_in_worker, item))
                    if beside is None and alongside is not None:
                        # A fork context's pool forks all its workers at the first submit.
                        beside = _Beside(alongside)
                    if len(pending) >= 2 * workers:
                        results.append(pending.popleft().result())
                        tick()
                while pending:
                    results.append(pending.popleft().result())
                    tick()
            except BrokenProcessPool:
                raise GateWorkerDied(
                    "A SHACL gate worker process died before it answered (killed, or out "
                    "of memory); nothing of this run was written. Free memory, or build "
                    "with fewer gate workers, and build again."
                ) from None
            finally:
                if not fresh:
                    thaw()
                failed = beside.join() if beside is not None else None
        if verdicts is not None:
            verdicts.extend(results)
        else:
            _raise_first(zip(sources, results, strict=True))
        if beside is None and alongside is not None:  # nothing to check
            alongside()
        if failed is not None:
            raise failed

    def validate_graph(self, data: rdflib.Graph, source: str) -> list[Violation]:
        """Validate a whole graph (``ratified validate``); return every violation."""
        conforms, results, _text = validate(
            data, shacl_graph=self.shapes, inference="none", allow_warnings=True
        )
        return [] if conforms else violations_of(results, source)


EARLY_NICENESS = 10
"""How much lower the priority of the workers of an :class:`EarlyCheck` is than the build's:
enough that the view's one busy thread is not made to wait for them."""


class EarlyCheck:
    """A check running on a thread of its own (:meth:`ShaclGate.check_early`): the run's
    batches, then those given to :meth:`add`, in order, until :meth:`stop`."""

    def __init__(self) -> None:
        self.verdicts: list[list[Violation]] = []
        """Each batch's violations, in the order they were given, as they are checked."""
        self._stop = threading.Event()
        self._raised: BaseException | None = None
        self._stages: queue.SimpleQueue[list[_InContext] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def start(self, check: Callable[[threading.Event], None]) -> None:
        """Run ``check`` (given the event :meth:`stop` sets) on the check's thread."""

        def run() -> None:
            try:
                check(self._stop)
            except BaseException as error:  # handed to passed's caller
                self._raised = error

        self._thread = threading.Thread(target=run, name="gate-early", daemon=True)
        self._thread.start()

    def stream(self, first: Sequence[StagedBatch]) -> Iterator[StagedBatch | _InContext]:
        """``first``, then each part given to :meth:`add`, until :meth:`stop`."""
        yield from first
        while (part := self._stages.get()) is not None:
            yield from part

    def add(self, staged: Sequence[StagedBatch], files: ContextFiles) -> None:
        """Check ``staged`` too once what was given before is checked, preparing each from
        ``files`` (:meth:`~ratified_rdf.graph.gate_context.GateContext.checkpoint_since`)."""
        self._stages.put([_InContext(item, files) for item in staged])

    def passed(self) -> list[bool]:
        """Once stopped: whether each batch given, in order, was checked and passed (False
        for one rejected or never sent). Raises what the check raised (a worker that died)."""
        if self._thread is not None and self._thread.is_alive():
            raise RuntimeError("An early check was asked what passed before it was stopped.")
        if self._raised is not None:
            raise self._raised
        return [not found for found in self.verdicts]

    def stop(self) -> None:
        """Send no more batches, and wait for those sent to be answered."""
        self._stop.set()
        self._stages.put(None)
        if self._thread is not None:
            self._thread.join()


@dataclass(frozen=True)
class _InContext:
    """A staged batch to prepare from a gate context's files other than the worker's first
    (a later part of an early check)."""

    staged: StagedBatch
    files: ContextFiles

    @property
    def source(self) -> str:
        """The record the batch came from."""
        return self.staged.source


class _Beside:
    """A function run on a thread of its own; :meth:`join` waits for it and returns what it
    raised, if anything."""

    def __init__(self, work: Callable[[], None]) -> None:
        self.error: BaseException | None = None

        def run() -> None:
            try:
                work()
            except BaseException as error:  # handed to join's caller
                self.error = error

        self.thread = threading.Thread(target=run, name="gate-alongside", daemon=True)
        self.thread.start()

    def join(self) -> BaseException | None:
        """Wait for the function to end; what it raised, or None."""
        self.thread.join()
        return self.error


def _workers(asked: int | None) -> int:
    """How many gate workers: as asked, else ``$RATIFIED_GATE_WORKERS``, else one per core (at
    most four). Also on a machine that is not idle: there the workers check the run's own
    batches while the build derives the card view, and a build with them took less time than
    one checking in its own process (benchmarks/RESULTS.md, ``benchmarks.build_vs_load``)."""
    if asked is not None:
        return asked
    given = os.environ.get("RATIFIED_GATE_WORKERS", "").strip()
    if not given:
        return min(os.cpu_count() or 1, 4)
    try:
        return max(1, int(given))
    except ValueError:
        raise InputError(
            f"RATIFIED_GATE_WORKERS is {given!r}; set it to a whole number of gate workers "
            "(1 checks in the build's own process), or unset it for one per core."
        ) from None


def _raise_first(found: Iterable[tuple[str, list[Violation]]]) -> None:
    """Raise :class:`GateRejected` for the first batch, in the given order, with violations."""
    for source, violations in found:
        if violations:
            raise GateRejected(source, violations)


FRESH_START = "forkserver"
"""The start method of gate workers that prepare from a gate context's files: forked by a
server process that holds nothing of the build (Unix; elsewhere they are forked from it)."""


def fresh_workers() -> bool:
    """Whether a staged run's gate workers are started afresh by a fork server rather than
    forked from the build: ``RATIFIED_GATE_FRESH_WORKERS=1`` (``0``: never), else inside
    :func:`workers_start_afresh` (the CLI's build), and only where there is a fork server.

    Not by default: a process the fork server starts runs the program's main script again
    (as ``__mp_main__``), as every ``spawn`` or ``forkserver`` child does, so a script that
    calls ``Brain.build`` without an ``if __name__ == "__main__":`` guard would build again in
    each worker. The CLI and ``python -m`` entry points are guarded; a large build run from
    them saves the memory forked workers copy (docs/design.md)."""
    asked = os.environ.get("RATIFIED_GATE_FRESH_WORKERS", "").strip()
    wanted = asked == "1" or (asked == "" and _AFRESH[0])
    return wanted and FRESH_START in multiprocessing.get_all_start_methods()


_AFRESH = [False]
"""Whether the caller said its main script is guarded (:func:`workers_start_afresh`)."""


@contextmanager
def workers_start_afresh() -> Iterator[None]:
    """Within this block, gate workers start afresh (:func:`fresh_workers`) unless
    ``RATIFIED_GATE_FRESH_WORKERS`` says otherwise: for a caller whose main script is guarded
    (the CLI), so a worker holds only what it reads, not pages of the whole build."""
    before = _AFRESH[0]
    _AFRESH[0] = True
    try:
        yield
    finally:
        _AFRESH[0] = before


_WORKER_ENGINE: ShaclEngine | None = None
_WORKER_PREPARE: Callable[[StagedBatch], PreparedBatch] | None = None
_WORKER_OPENED: dict[ContextFiles, OpenedContext] = {}
_WORKER_READ: dict[Path, TypeTable | Described] = {}


def _opened_for(files: ContextFiles) -> OpenedContext:
    """The gate context ``files`` names, opened in this worker; only the last one opened is
    kept (an early check's parts come one after another, each with one more type table:
    the files read for the one before are not read again)."""
    opened = _WORKER_OPENED.get(files)
    if opened is None:
        _WORKER_OPENED.clear()
        opened = _WORKER_OPENED[files] = files.open(_WORKER_READ)
    return opened


class _OpenedOnFirstBatch:
    """Prepares from a gate context's files, opened at the first batch (:class:`ContextFiles`)."""

    def __init__(self, files: ContextFiles) -> None:
        self.files = files

    def __call__(self, staged: StagedBatch) -> PreparedBatch:
        return _opened_for(self.files).prepare(staged)


def _init_worker(
    shapes: str,
    engine: str,
    parent: int | None,
    prepare: Callable[[StagedBatch], PreparedBatch] | ContextFiles | None,
    niceness: int = 0,
) -> None:
    """Set a gate worker up: die with the process that started it (``parent``, or the fork
    server, which dies with the build), lower its priority by ``niceness``,
    build its engine, keep how it prepares."""
    global _WORKER_ENGINE, _WORKER_PREPARE
    die_with(parent)
    if niceness:
        with suppress(OSError):  # a priority is a wish: a system may refuse it
            os.nice(niceness)
    _WORKER_ENGINE = engine_named(engine, rdflib.Graph().parse(data=shapes, format="nt"))
    _WORKER_PREPARE = _OpenedOnFirstBatch(prepare) if isinstance(prepare, ContextFiles) else prepare


def _validate_in_worker(item: PreparedBatch | StagedBatch | _InContext) -> list[Violation]:
    assert _WORKER_ENGINE is not None
    if isinstance(item, _InContext):
        return checked(_WORKER_ENGINE, _opened_for(item.files).prepare(item.staged))
    if isinstance(item, StagedBatch):
        # A batch that cannot be prepared raises here and again in the build, as it would
        # were it prepared there: the run is not written.
        assert _WORKER_PREPARE is not None
        return checked(_WORKER_ENGINE, _WORKER_PREPARE(item))
    return checked(_WORKER_ENGINE, item)


def checked(engine: ShaclEngine, prepared: PreparedBatch) -> list[Violation]:
    """``engine``'s violations of ``prepared``, failing closed: an engine that raises (or two
    that disagree) rejects the batch with a violation saying so, never passes it unchecked."""
    try:
        return engine.validate(prepared)
    except Exception as error:
        reason = str(error) if isinstance(error, EnginesDisagree) else repr(error)[:300]
        return [
            Violation(
                focus_node=prepared.focus_nodes[0] if prepared.focus_nodes else prepared.source,
                path=None,
                message=(
                    f"the SHACL engine ({engine.name}) could not check this batch, so it is "
                    f"rejected rather than written unchecked: {reason}"
                ),
                value=None,
                shape=None,
                source_record=prepared.source,
                constraint="engine-error",
            )
        ]
