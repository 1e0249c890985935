"""What the gate keeps of a run while it is staged, so that any batch can be prepared later
without reading the staged run back.

A batch is validated with the description, in the whole state the run leaves, of every node it
touches, and the types of every node it points at (:mod:`ratified_rdf.graph.gate`). Reading
those from the staged run costs a lookup per node, and once a run outgrows memory it is staged
on disk, where each lookup decodes its terms from RocksDB: at ×100 that made the gate several
times slower than the same run staged in memory. But a node that one batch alone touches is
described by that batch alone (every triple with it as subject, or pointing at it through a
predicate a shape reads backwards, touches it), so only three things are needed besides each
batch's own triples:

- the ``rdf:type`` triples of every node, for what a batch points at;
- the whole description of each node that more than one batch touches (a person a spec batch
  names as an author and the discussion describes, a commit two pull requests share), or that
  the state outside the run describes too (a brain's reviews graphs, which outlive runs);
- each batch's own triples, spooled as N-Triples to an unnamed temporary file as it is staged.

The first two sit in a small store in memory (at ×10, some 575,000 triples of a 2.9 million
triple run); the spool is read back by offset. Once the run is complete they are also written
beside the spool, in a private temporary folder (:meth:`GateContext.files`), from which a gate
worker started afresh opens its own copy (:class:`ContextFiles`): a worker forked from the build
process would inherit its whole heap, and at ×10 came to hold 0.8 GiB of it privately (each
allocation it made landing in a page it shared), against 0.15 GiB for a fresh one.
Preparing a batch from them gives, triple for triple, the document preparing it from the
staged run gives (tests/unit/test_gate_context.py and tests/corpus/test_gate_context_corpus.py
compare them on every batch), however and wherever the run is staged.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pyoxigraph import NamedNode, RdfFormat, Triple, serialize

from ratified_rdf._errors import StoreError
from ratified_rdf._temporary import make_folder
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.store import OxigraphStore, TripleStore
from ratified_rdf.graph.violations import PreparedBatch

if TYPE_CHECKING:
    from ratified_rdf.graph.gate import ShaclGate, StagedBatch

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_HELD = "urn:x-ratified-rdf:gate-context"
"""The one graph of the context's store (it holds what it holds for every graph of the run)."""
_OUTSIDE = -1
"""The toucher standing for the state outside the run (its reviews graphs)."""


class GateContext:
    """The types, shared descriptions and spooled batches of one staged run.

    Call :meth:`stage` for every batch of the run as it is staged and :meth:`outside` for
    every graph of the state it leaves that is not the run's own, then :meth:`complete` once
    with the staged run; after that :meth:`prepare` gives any staged batch's document, in
    this process or a worker forked from it. Nothing is written to it after
    :meth:`complete`, so forked workers read it safely."""

    def __init__(self, gate: ShaclGate) -> None:
        """``gate`` decides which nodes a batch touches and which predicates it reads
        backwards."""
        self.gate = gate
        self._inverse = list(gate.inverse_predicates)
        # A folder of its own (mode 0700), removed with the spool when the context is let go
        # of or the process ends, or by the next build if this one is killed.
        self._folder = make_folder(GATE_PREFIX)
        self._spool = _open_spool(self._folder / SPOOL)
        weakref.finalize(self, _remove, self._spool, self._folder)
        self._spooled = 0
        self._held = OxigraphStore()
        self._first_toucher: dict[str, int] = {}
        self.shared: set[str] = set()
        """Nodes more than one batch touches (or a batch and the state outside the run)."""
        self._batches = 0
        self._completed = False

    def stage(self, batch: Batch) -> StagedBatch:
        """Keep what preparing ``batch`` later needs; what the gate keeps of it to prepare
        it (:meth:`ShaclGate.staged`), with where its triples are spooled."""
        self._check_open("stage a batch")
        staged = self.gate.staged(batch)
        self._touch(staged.touched, self._batches)
        self._batches += 1
        data = serialize(batch.triples, format=RdfFormat.N_TRIPLES) or b""
        try:
            self._spool.write(data)
        except OSError as error:
            raise _no_room(error) from error
        span = (self._spooled, len(data))
        self._spooled += len(data)
        self._keep_types(batch.triples)
        return replace(staged, spooled=span)

    def outside(self, triples: Iterable[Triple]) -> None:
        """Count ``triples`` (a graph of the state the run leaves that is not the run's) as
        describing every node they would touch: a batch touching one of those needs its
        whole description, theirs included."""
        self._check_open("add the state outside the run")
        kept = list(triples)
        self._touch(self.gate.touched(Batch("", "outside the run", kept)), _OUTSIDE)
        self._keep_types(kept)

    def complete(self, store: TripleStore, graphs: Sequence[str]) -> None:
        """Read the whole description of every shared node from the staged run (``store``,
        in ``graphs``: the state the run leaves), once every batch of it is staged."""
        self._check_open("complete")
        described = store.describe(sorted(self.shared), graphs, self._inverse)
        self._held.load([(_HELD, described)])
        try:
            self._spool.flush()
            self._held.write_graph(_HELD, self._folder / HELD)
            (self._folder / SHARED).write_text(
                "".join(f"{node}\n" for node in sorted(self.shared)), encoding="utf-8"
            )
        except OSError as error:
            raise _no_room(error) from error
        self._completed = True
        self._first_toucher = {}  # what it was for is in self.shared; its memory is not needed

    def files(self) -> ContextFiles:
        """Where a process started afresh opens this context (once it is complete)."""
        if not self._completed:
            raise RuntimeError(
                "A gate context's files were asked for before the run was complete; this is a "
                "bug in the caller."
            )
        return ContextFiles(str(self._folder), tuple(self._inverse))

    def prepare(self, staged: StagedBatch) -> PreparedBatch:
        """``staged``'s document: its own triples, the description of the nodes it touches
        and the types of what they point at (what :meth:`ShaclGate.prepare_staged` reads of
        the staged run)."""
        if not self._completed or staged.spooled is None:
            raise RuntimeError(
                "A batch was prepared from a gate context before the run was complete, or was "
                "not staged through it; this is a bug in the caller."
            )
        return _prepared(staged, self._spool.fileno(), self._held, self.shared, self._inverse)

    def _touch(self, nodes: Iterable[str], toucher: int) -> None:
        first = self._first_toucher
        for node in nodes:
            seen = first.setdefault(node, toucher)
            if seen != toucher:
                self.shared.add(node)

    def _keep_types(self, triples: Iterable[Triple]) -> None:
        types = [t for t in triples if t.predicate.value == _RDF_TYPE]
        if types:
            self._held.add(_HELD, types)

    def _check_open(self, doing: str) -> None:
        if self._completed:
            raise RuntimeError(
                f"Cannot {doing} once the gate context is complete; this is a bug in the caller."
            )


def _named_nodes(document: bytes) -> set[str]:
    """The IRIs an N-Triples document as Oxigraph writes it (one triple a line, IRIs as they
    are) holds as a subject or an object, read off its lines without parsing them into
    terms: a line's subject IRI runs from its first ``<`` to the first ``>``, and its object
    is an IRI when the line ends ``<…> .`` with a space before the ``<`` (a literal's
    datatype has ``^^`` there, and a literal cannot end a line with ``> .``: it ends with a
    quote, or its language or datatype)."""
    found: set[str] = set()
    for line in document.splitlines():
        if line.startswith(b"<"):
            found.add(line[1 : line.index(b">")].decode())
        if line.endswith(b"> ."):
            start = line.rindex(b"<", 0, len(line) - 3)
            if line[start - 1 : start] == b" ":
                found.add(line[start + 1 : -3].decode())
    return found


GATE_PREFIX = "ratified-gate-"
"""How a gate context's folder under ``TMPDIR`` is named: the prefix, the building process's id,
then a random part (:mod:`ratified_rdf._temporary`)."""
SPOOL = "spool.nt"
"""The file of a context's folder holding every staged batch's N-Triples, one after another."""
HELD = "held.nt"
"""The file of a context's folder holding its types and shared descriptions, as N-Triples."""
SHARED = "shared.txt"
"""The file of a context's folder naming its shared nodes, one IRI a line."""


def _open_spool(path: Path) -> IO[bytes]:
    """The spool, opened to write and read, readable by this user alone."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    return os.fdopen(descriptor, "w+b")


def _remove(spool: IO[bytes], folder: Path) -> None:
    spool.close()
    shutil.rmtree(folder, ignore_errors=True)


def _no_room(error: OSError) -> StoreError:
    return StoreError(
        f"The build could not keep the run's batches in the temporary folder "
        f"({tempfile.gettempdir()}) for the SHACL gate: {error.strerror or error}. "
        "Nothing of this run was written. Free space there, or set TMPDIR to a folder "
        "with room (about 100 bytes a triple), and build again."
    )


@dataclass(frozen=True)
class ContextFiles:
    """A complete gate context as files, for a process that did not stage the run (a gate
    worker started afresh) to open as its own (:meth:`open`); sent to it pickled."""

    folder: str
    inverse: tuple[str, ...]

    def open(self) -> OpenedContext:
        """The context read from its files: its types and shared descriptions loaded into a
        store in this process's memory, its spool read by offset."""
        folder = Path(self.folder)
        held = OxigraphStore()
        held.load_file(folder / HELD, _HELD)
        shared = set((folder / SHARED).read_text(encoding="utf-8").split())
        return OpenedContext(held, shared, os.open(folder / SPOOL, os.O_RDONLY), self.inverse)


class OpenedContext:
    """A gate context opened from its files (:class:`ContextFiles`): prepares any staged
    batch exactly as the context it was written from does."""

    def __init__(
        self, held: OxigraphStore, shared: set[str], spool: int, inverse: Sequence[str]
    ) -> None:
        self._held, self.shared, self._spool, self._inverse = held, shared, spool, list(inverse)
        weakref.finalize(self, os.close, spool)

    def prepare(self, staged: StagedBatch) -> PreparedBatch:
        """``staged``'s document (:meth:`GateContext.prepare`)."""
        if staged.spooled is None:
            raise RuntimeError(
                "A batch not staged through a gate context was prepared from one; this is a "
                "bug in the caller."
            )
        return _prepared(staged, self._spool, self._held, self.shared, self._inverse)


def _prepared(
    staged: StagedBatch,
    spool: int,
    held: OxigraphStore,
    shared: set[str],
    inverse: Sequence[str],
) -> PreparedBatch:
    """``staged``'s own triples, the description of the nodes it touches and the types of
    what they point at (what :meth:`ShaclGate.prepare_staged` reads of the staged run)."""
    assert staged.spooled is not None
    offset, length = staged.spooled
    own = os.pread(spool, length, offset)
    graphs = [_HELD]
    described = held.describe([node for node in staged.touched if node in shared], graphs, inverse)
    referenced = _named_nodes(own)
    for t in described:
        subject, value = t.subject, t.object
        if isinstance(subject, NamedNode):
            referenced.add(subject.value)
        if isinstance(value, NamedNode):
            referenced.add(value.value)
    referenced.difference_update(staged.touched)
    context = {*described, *held.types_of(referenced, graphs)}
    # The batch's own lines as they were spooled, then its context: a triple in both is
    # written twice, which an N-Triples document may do (it is the same graph).
    return PreparedBatch(
        source=staged.source,
        ntriples=own + (serialize(context, format=RdfFormat.N_TRIPLES) or b""),
        focus_nodes=tuple(sorted(staged.touched)),
    )
