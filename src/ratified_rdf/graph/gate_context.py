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

None of it sits in a store, which at scale held gigabytes in the build and again in each gate
worker (benchmarks/RESULTS.md, 2026-12-05). The types are a sorted table of two 64-bit halves
of each IRI's 128-bit BLAKE2b hash and a number for its type (:class:`TypeTable`). The shared
descriptions are read from the staged run once it is complete and written, node by node, to a
file beside the spool, with an index of where each node's lines are; a batch's document is
read back by offset.
Once the run is complete the table and the index are also written beside the spool, in a
private temporary folder (:meth:`GateContext.files`), from which a gate worker started afresh
opens its own copy (:class:`ContextFiles`): a worker forked from the build process would
inherit its whole heap, and at ×10 came to hold 0.8 GiB of it privately (each allocation it
made landing in a page it shared), against 0.15 GiB for a fresh one.
Preparing a batch from them gives, triple for triple, the document preparing it from the
staged run gives (tests/unit/test_gate_context.py and tests/corpus/test_gate_context_corpus.py
compare them on every batch), however and wherever the run is staged.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import weakref
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from pyoxigraph import NamedNode, Triple

from ratified_rdf._temporary import make_folder, no_room
from ratified_rdf.graph.mapping import Batch, DocumentTriples, MappedTriples
from ratified_rdf.graph.store import TripleStore, ntriples
from ratified_rdf.graph.violations import PreparedBatch

if TYPE_CHECKING:
    from ratified_rdf.graph.gate import ShaclGate, StagedBatch

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
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
        self._types = TypeTable()
        self._described: DescribedParts | None = None
        self._first_toucher: dict[int, int] = {}
        self._inverse_lines = _predicate_terms(self._inverse)
        self._inverse_set = frozenset(self._inverse)
        self.shared: set[str] = set()
        """Nodes more than one batch touches (or a batch and the state outside the run)."""
        self._batches = 0
        self._completed = False
        self._run_types: TypeTable | None = None
        self._taken: Checkpoint | None = None
        self._joined = False  # the checkpoint's descriptions are part of the complete context
        self._checkpoint: int | None = None  # batches staged when the run was checked early
        # Each later checkpoint (checkpoint_since): the batches staged when it was taken, and
        # the file of the types sealed then; and those a batch staged after it crossed.
        self._later: list[tuple[int, str, TypeTable]] = []
        self._crossed: set[int] = set()
        self._shared_at_checkpoint = 0
        self.run_touched_after: str | None = None
        """A node of the run (or of the state outside it) that a batch staged after
        :meth:`checkpoint` touched, if one did: the run's batches checked early were then
        checked without it, and must be checked again."""

    def stage(self, batch: Batch, document: bytes | None = None) -> StagedBatch:
        """Keep what preparing ``batch`` later needs; what the gate keeps of it to prepare
        it (:meth:`ShaclGate.staged`), with where its triples are spooled. ``document``:
        the batch's triples as N-Triples (:func:`ntriples`), when the caller has them."""
        self._check_open("stage a batch")
        data = batch.ntriples() if document is None else document
        touched, types, loose = read_batch(batch.triples, self._inverse_set, self._inverse_lines)
        self._touch(touched, self._batches)
        self._batches += 1
        try:
            self._spool.write(data)
        except OSError as error:
            raise no_room(error, "for the SHACL gate") from error
        span = (self._spooled, len(data))
        self._spooled += len(data)
        for iri, type_term in types:
            self._types.add(iri, type_term)
        from ratified_rdf.graph.gate import StagedBatch  # the gate imports this module

        return StagedBatch(source=batch.source, touched=None, loose=loose, spooled=span)

    def outside(self, triples: Iterable[Triple]) -> None:
        """Count ``triples`` (a graph of the state the run leaves that is not the run's) as
        describing every node they would touch: a batch touching one of those needs its
        whole description, theirs included."""
        self._check_open("add the state outside the run")
        touched, types, _loose = read_terms(triples, self._inverse_set)
        self._touch(touched, _OUTSIDE)
        for iri, type_term in types:
            self._types.add(iri, type_term)

    def complete(self, store: TripleStore, graphs: Sequence[str]) -> None:
        """Read the whole description of every shared node from the staged run (``store``,
        in ``graphs``: the state the run leaves), once every batch of it is staged.

        After a :meth:`checkpoint` that :attr:`holds`, only the nodes shared since are
        described: the batches staged since touch no other (the batches before it are
        prepared from the checkpoint's files)."""
        self._check_open("complete")
        # The checkpoint's descriptions, when they hold and are read (on another thread:
        # until they are, every shared node is described here).
        taken = self._taken if self.holds else None
        earlier = taken.described if taken is not None else None
        self._joined = earlier is not None
        described = self.shared - taken.shared if taken and earlier else self.shared
        try:
            self._spool.flush()
            since = Described.write(
                self._folder / HELD,
                self._folder / SHARED,
                (
                    (node, store.describe([node], graphs, self._inverse))
                    for node in sorted(described)
                ),
            )
            self._described = DescribedParts([since] if earlier is None else [earlier, since])
            self._types.seal()
            self._types.write(self._folder / TYPES)
        except OSError as error:
            raise no_room(error, "for the SHACL gate") from error
        self._completed = True
        self._first_toucher = {}  # what it was for is in self.shared; its memory is not needed

    def checkpoint(self) -> Checkpoint:
        """Seal what the batches staged so far (the run's own) need to be prepared, so that
        they can be checked while more are staged (the card view, derived from the run):
        their types now, and which nodes they share, to be described by
        :meth:`Checkpoint.describe` (on any thread) before the files are opened.

        The batches staged after it must touch no node touched before it (the view adds
        nothing to a node of the run): then the state they leave describes every earlier
        batch's nodes, and types what those point at, as the checkpoint does, and the
        earlier batches' verdicts stand. Whether they did is :attr:`holds`."""
        self._check_open("take a checkpoint")
        if self._checkpoint is not None:
            raise RuntimeError("A gate context takes one checkpoint; this is a bug in the caller.")
        self._seal_types(RUN_TYPES)
        self._run_types, self._types = self._types, TypeTable()
        self._checkpoint = self._batches
        self._shared_at_checkpoint = len(self.shared)
        self._taken = Checkpoint(self._folder, tuple(self._inverse), frozenset(self.shared))
        return self._taken

    def checkpoint_since(self) -> ContextFiles | None:
        """Seal the types of the batches staged since the last checkpoint (after
        :meth:`checkpoint`: a part of the card view), so that they too can be checked while
        more are staged; the files to prepare them from, or None when they cannot be: a
        node became shared since :meth:`checkpoint` (its whole description would have to be
        read from the staged run, where they may not be loaded yet), or none was staged.

        Their verdicts stand if no batch staged after touches a node touched before
        (:meth:`holds_for`). The types of what they point at are those staged so far: a
        type a later batch adds is missing (the shapes only ever ask that a node has a type,
        so a batch may be rejected for it, never passed), which is why a batch rejected by
        an early check is checked again with the whole context."""
        self._check_open("take a checkpoint")
        if self._checkpoint is None:
            raise RuntimeError("checkpoint_since follows checkpoint; this is a bug in the caller.")
        last = self._later[-1][0] if self._later else self._checkpoint
        if self._batches == last:
            return None
        name = f"types-{len(self._later) + 1}.bin"
        self._seal_types(name)
        self._later.append((self._batches, name, self._types))
        self._types = TypeTable()
        if len(self.shared) != self._shared_at_checkpoint:
            return None
        return ContextFiles(
            str(self._folder), tuple(self._inverse), ((RUN_HELD, RUN_SHARED),), self._sealed()
        )

    def _seal_types(self, name: str) -> None:
        """Seal the type table of the batches staged since the last checkpoint into the file
        ``name`` of the context's folder, their lines all spooled."""
        try:
            self._spool.flush()
            self._types.seal()
            self._types.write(self._folder / name)
        except OSError as error:
            raise no_room(error, "for the SHACL gate") from error

    def holds_for(self, batch: int) -> bool:
        """Whether the verdict of the ``batch``-th batch staged (from 0), checked early from
        the checkpoint after it, stands: no batch staged after that checkpoint touched a
        node touched before it. False for a batch no checkpoint follows."""
        if self._checkpoint is None:
            return False
        ends = (self._checkpoint, *(staged for staged, _, _ in self._later))
        following = next((end for end in ends if batch < end), None)
        return following is not None and following not in self._crossed

    @property
    def holds(self) -> bool:
        """Whether a :meth:`checkpoint` was taken and no batch staged since touched a node
        touched before it."""
        return self._checkpoint is not None and self.run_touched_after is None

    def files(self) -> ContextFiles:
        """Where a process started afresh opens this context (once it is complete)."""
        if not self._completed:
            raise RuntimeError(
                "A gate context's files were asked for before the run was complete; this is a "
                "bug in the caller."
            )
        parts: tuple[tuple[str, str], ...] = ((HELD, SHARED),)
        if self._joined:
            parts = ((RUN_HELD, RUN_SHARED), *parts)
        return ContextFiles(str(self._folder), tuple(self._inverse), parts, self._type_files())

    def _sealed(self) -> tuple[str, ...]:
        """The type tables' files sealed at checkpoints, in order."""
        return (RUN_TYPES, *(file for _, file, _ in self._later))

    def _type_files(self) -> tuple[str, ...]:
        return (TYPES,) if self._run_types is None else (*self._sealed(), TYPES)

    def _type_tables(self) -> TypeTables:
        if self._run_types is None:
            return TypeTables([self._types])
        return TypeTables([self._run_types, *(table for _, _, table in self._later), self._types])

    def prepare(self, staged: StagedBatch) -> PreparedBatch:
        """``staged``'s document: its own triples, the description of the nodes it touches
        and the types of what they point at (what :meth:`ShaclGate.prepare_staged` reads of
        the staged run)."""
        if not self._completed or staged.spooled is None:
            raise RuntimeError(
                "A batch was prepared from a gate context before the run was complete, or was "
                "not staged through it; this is a bug in the caller."
            )
        assert self._described is not None
        return _prepared(
            staged, self._spool.fileno(), self._described, self._type_tables(), self._inverse_lines
        )

    def touched_of(self, staged: StagedBatch) -> frozenset[str]:
        """The nodes a batch staged through this context touches (:meth:`ShaclGate.touched`),
        read off its spooled lines."""
        if staged.spooled is None:
            raise RuntimeError("The batch was not staged through a gate context.")
        offset, length = staged.spooled
        self._spool.flush()
        return touched_in(os.pread(self._spool.fileno(), length, offset), self._inverse_lines)

    def _touch(self, nodes: Iterable[str], toucher: int) -> None:
        # A node by its hash, not its IRI: the IRIs of every node of a run, held until the
        # gate ran, took hundreds of megabytes at ×100. Two IRIs with one hash can only make
        # a node that one batch touches count as shared (its description is then read whole,
        # as a shared node's is), never the reverse: a node two batches touch always finds
        # the first of them under its hash.
        first = self._first_toucher
        after = self._checkpoint
        for node in nodes:
            seen = first.setdefault(hash(node), toucher)
            if seen != toucher:
                self.shared.add(node)
                if after is not None and seen < after <= toucher:
                    if self.run_touched_after is None:
                        self.run_touched_after = node
                    self._crossed.add(after)
                for staged, _, _ in self._later:
                    if seen < staged <= toucher:
                        self._crossed.add(staged)

    def _check_open(self, doing: str) -> None:
        if self._completed:
            raise RuntimeError(
                f"Cannot {doing} once the gate context is complete; this is a bug in the caller."
            )


def read_batch(
    triples: Sequence[Triple], inverse: frozenset[str], inverse_lines: frozenset[bytes]
) -> tuple[Iterable[str], Iterable[tuple[str, str]], tuple[Triple, ...]]:
    """What the gate reads of a batch's triples, as :func:`read_terms` gives it (the nodes it
    touches, its types, its triples whose subject is no IRI), without parsing lines into
    terms: a mapped batch kept its subjects and types as it was mapped (read off its lines,
    they cost twice as much where the lines hold a section's text); a view's batch is read
    off its lines. ``inverse`` names the predicates shapes read backwards; ``inverse_lines``
    the same, as :func:`_predicate_terms` writes them."""
    if isinstance(triples, MappedTriples) and not triples.parsed:
        return (
            triples.subjects | _inverse_objects(triples.document, inverse_lines),
            triples.types,
            (),
        )
    if isinstance(triples, DocumentTriples) and not triples.parsed:
        data = triples.document
        loose: tuple[Triple, ...] = ()
        # Off its lines, looked for first: a batch with none is not parsed to find them.
        if _has_loose_lines(data):
            loose = tuple(t for t in triples if not isinstance(t.subject, NamedNode))
        return touched_in(data, inverse_lines), _types_in(data), loose
    return read_terms(triples, inverse)


def read_terms(
    triples: Iterable[Triple], inverse: frozenset[str]
) -> tuple[set[str], list[tuple[str, str]], tuple[Triple, ...]]:
    """What staging keeps of a mapped batch, read off its terms in one pass: the nodes it
    touches (:meth:`ShaclGate.touched`: its IRI subjects, and the IRIs it points at through
    one of the ``inverse`` predicates), the (IRI, type as N-Triples writes it) of each of its
    ``rdf:type`` triples with an IRI subject, and its triples whose subject is no IRI. (Three
    passes took a minute and a half of the staging core at ×100.)"""
    touched: set[str] = set()
    types: list[tuple[str, str]] = []
    loose: list[Triple] = []
    last = None  # a record's triples come subject by subject
    for triple in triples:
        subject = triple.subject
        predicate = triple.predicate.value
        if isinstance(subject, NamedNode):
            value = subject.value
            if value != last:
                touched.add(value)
                last = value
            if predicate == _RDF_TYPE:
                types.append((value, str(triple.object)))
        else:
            loose.append(triple)
        if predicate in inverse:
            obj = triple.object
            if isinstance(obj, NamedNode):
                touched.add(obj.value)
    return touched, types, tuple(loose)


def _object_iris(document: bytes) -> set[str]:
    """The IRIs an N-Triples document as Oxigraph writes it holds as objects (its subjects
    are the nodes it touches, which a batch's context never needs the types of): a line's
    object is an IRI when the line ends ``<…> .`` with a space before the ``<`` (a literal's
    datatype has ``^^`` there, and a literal cannot end a line with ``> .``). Found from
    each such ending (in C), not line by line."""
    if not document.endswith(b"\n"):
        document += b"\n"
    found: set[bytes] = set()
    before = document.rfind
    for ending in _IRI_ENDING.finditer(document):
        end = ending.start()
        start = before(b"<", 0, end)
        if start > 0 and document[start - 1] == 32 and document.find(b"\n", start, end) < 0:
            found.add(document[start + 1 : end])
    return {iri.decode() for iri in found}


_IRI_ENDING = re.compile(rb"> \.\n")


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


def _predicate_terms(predicates: Iterable[str]) -> frozenset[bytes]:
    """``predicates`` as N-Triples writes them (``<iri>``)."""
    return frozenset(f"<{p}>".encode() for p in predicates)


def touched_in(document: bytes, inverse: frozenset[bytes]) -> frozenset[str]:
    """The nodes a batch touches (:meth:`ShaclGate.touched`: the IRIs it has as subjects, and
    those it has as objects through one of the ``inverse`` predicates, as
    :func:`_predicate_terms` writes them), read off its N-Triples lines as Oxigraph writes
    them: a subject IRI opens its line (a quoted triple, ``<<``, is no node) and runs to its
    first space (no IRI holds one), the predicate, an IRI, to the next; an object through an
    inverse predicate is a node when it is an IRI, the rest of the line but its `` .``.

    Read by searches over the whole document (in C) rather than line by line: subjects by a
    pattern that starts with a line's break, the rare inverse predicates by finding them."""
    found = {iri.decode() for iri in set(_SUBJECT_IRI.findall(b"\n" + document))}
    return frozenset(found | _inverse_objects(document, inverse))


def _inverse_objects(document: bytes, inverse: frozenset[bytes]) -> set[str]:
    """The IRIs ``document`` (N-Triples as Oxigraph writes it) has as objects through one of
    the ``inverse`` predicates (as :func:`_predicate_terms` writes them): the rest of such a
    line but its `` .``, when that is an IRI."""
    found: set[str] = set()
    for predicate in inverse:
        for _start, at, end in _lines_with(document, predicate):
            obj = document[at + len(predicate) + 2 : end - 2]
            if obj.startswith(b"<") and not obj.startswith(b"<<"):
                found.add(obj[1:-1].decode())
    return found


_SUBJECT_IRI = re.compile(rb"\n<(?!<)([^ \n]*)> ")
_TYPE = f"<{_RDF_TYPE}>".encode()


def _lines_with(document: bytes, predicate: bytes) -> Iterator[tuple[int, int, int]]:
    """Each line of ``document`` whose predicate is ``predicate`` (written ``<iri>``): where
    it starts, where the space before the predicate is, and where it ends (its break).
    The predicate is found anywhere, then taken only where it follows the line's first
    space: a literal may hold its text."""
    needle = b" " + predicate + b" "
    at = document.find(needle)
    while at >= 0:
        start = document.rfind(b"\n", 0, at) + 1
        end = document.find(b"\n", at)
        if end < 0:
            end = len(document)
        if document.find(b" ", start) == at:
            yield start, at, end
        at = document.find(needle, at + 1)


def _types_in(document: bytes) -> Iterator[tuple[str, str]]:
    """Each (IRI, its type as N-Triples writes it) of ``document``'s ``rdf:type`` lines
    whose subject is an IRI."""
    for start, at, end in _lines_with(document, _TYPE):
        if document.startswith(b"<", start) and not document.startswith(b"<<", start):
            yield (
                document[start + 1 : at - 1].decode(),
                document[at + len(_TYPE) + 2 : end - 2].decode(),
            )


def _has_loose_lines(document: bytes) -> bool:
    """Whether a line of ``document`` has a subject that is no IRI (a blank node, or a
    quoted triple)."""
    return any(
        document.startswith(opening) or b"\n" + opening in document for opening in (b"_:", b"<<")
    )


GATE_PREFIX = "ratified-gate-"
"""How a gate context's folder under ``TMPDIR`` is named: the prefix, the building process's id,
then a random part (:mod:`ratified_rdf._temporary`)."""
SPOOL = "spool.nt"
"""The file of a context's folder holding every staged batch's N-Triples, one after another."""
HELD = "held.nt"
"""The file of a context's folder holding each shared node's description, as N-Triples, one
node's lines after another."""
SHARED = "shared.txt"
"""The file of a context's folder naming its shared nodes, one a line: where its lines start
in :data:`HELD`, how many bytes they take, and the IRI."""
TYPES = "types.bin"
"""The file of a context's folder holding its :class:`TypeTable` (after a checkpoint, of the
batches staged since)."""
RUN_HELD = "run-held.nt"
RUN_SHARED = "run-shared.txt"
RUN_TYPES = "run-types.bin"
"""The files of a :meth:`GateContext.checkpoint`, as :data:`HELD`, :data:`SHARED` and
:data:`TYPES` are of the whole context."""


def _open_spool(path: Path) -> IO[bytes]:
    """The spool, opened to write and read, readable by this user alone."""
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    return os.fdopen(descriptor, "w+b")


def _remove(spool: IO[bytes], folder: Path) -> None:
    spool.close()
    shutil.rmtree(folder, ignore_errors=True)


class TypeTable:
    """The ``rdf:type`` values of every IRI of a run, compact: each (IRI, type) is the two
    64-bit halves of the IRI's 128-bit BLAKE2b hash and the type's number, in three arrays
    sorted once the run is staged (:meth:`seal`): some twenty bytes a type, a small part of
    what a store in memory takes. A type is kept as its N-Triples term, so a type that is not an IRI
    (a literal, in a broken batch) comes back as it was written."""

    def __init__(self) -> None:
        self._high = array("Q")
        self._low = array("Q")
        self._type = array("I")
        self._terms: list[str] = []
        self._numbers: dict[str, int] = {}
        self._sealed = False

    def add(self, iri: str, type_term: str) -> None:
        """Keep that ``iri`` has the type ``type_term`` (N-Triples: ``<…>``, or a literal)."""
        number = self._numbers.get(type_term)
        if number is None:
            number = self._numbers[type_term] = len(self._terms)
            self._terms.append(type_term)
        high, low = _halves(iri)
        self._high.append(high)
        self._low.append(low)
        self._type.append(number)

    def seal(self) -> None:
        """Sort the table and drop repeats; nothing is added after."""
        # One integer a row sorts as (high, low, type) would: Python sorts ints in C.
        rows = sorted(
            {
                (h << 96) | (lo << 32) | t
                for h, lo, t in zip(self._high, self._low, self._type, strict=True)
            }
        )
        mask32, mask64 = (1 << 32) - 1, (1 << 64) - 1
        self._high = array("Q", (row >> 96 for row in rows))
        self._low = array("Q", ((row >> 32) & mask64 for row in rows))
        self._type = array("I", (row & mask32 for row in rows))
        self._numbers = {}
        self._sealed = True

    def lines(self, iris: Iterable[str]) -> Iterator[bytes]:
        """The N-Triples line of each type each of ``iris`` has."""
        return self.lines_hashed((iri, *_halves(iri)) for iri in iris)

    def lines_hashed(self, hashed: Iterable[tuple[str, int, int]]) -> Iterator[bytes]:
        """:meth:`lines`, for IRIs given with their hash's two halves (each IRI hashed once
        for several tables, :class:`TypeTables`)."""
        assert self._sealed, "a type table is read once it is sealed"
        high, low, types, terms = self._high, self._low, self._type, self._terms
        end = len(high)
        for iri, h, lo in hashed:
            at = bisect_left(high, h)
            while at < end and high[at] == h:
                if low[at] == lo:
                    yield f"<{iri}> <{_RDF_TYPE}> {terms[types[at]]} .".encode()
                at += 1

    def write(self, path: Path) -> None:
        """Write the sealed table to ``path`` (read back by :meth:`read`)."""
        with open(path, "xb") as file:
            terms = "\n".join(self._terms).encode()
            file.write(len(self._high).to_bytes(8, "little"))
            file.write(len(terms).to_bytes(8, "little"))
            file.write(terms)
            self._high.tofile(file)
            self._low.tofile(file)
            self._type.tofile(file)

    @classmethod
    def read(cls, path: Path) -> TypeTable:
        """The table :meth:`write` wrote."""
        table = cls()
        with open(path, "rb") as file:
            rows = int.from_bytes(file.read(8), "little")
            size = int.from_bytes(file.read(8), "little")
            text = file.read(size).decode()
            table._terms = text.split("\n") if text else []
            table._high.fromfile(file, rows)
            table._low.fromfile(file, rows)
            table._type.fromfile(file, rows)
        table._sealed = True
        return table


def _halves(iri: str) -> tuple[int, int]:
    digest = hashlib.blake2b(iri.encode(), digest_size=16).digest()
    return int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little")


class Described:
    """Each shared node's description in the state the run leaves, as N-Triples lines in a
    file (:data:`HELD`), and where each node's lines are (:data:`SHARED`): only the index is
    in memory, the lines are read by offset."""

    def __init__(self, where: dict[str, tuple[int, int]], held: int) -> None:
        self.where = where
        """Shared node → (offset, length) of its lines in the file."""
        self._held = held
        weakref.finalize(self, os.close, held)

    @classmethod
    def write(
        cls, held: Path, index: Path, descriptions: Iterable[tuple[str, Sequence[Triple]]]
    ) -> Described:
        """Write each (node, its description) of ``descriptions`` to ``held`` and the index
        to ``index``; the result reads them back."""
        where: dict[str, tuple[int, int]] = {}
        offset = 0
        with open(held, "xb") as lines, open(index, "x", encoding="utf-8") as listing:
            for node, triples in descriptions:
                data = ntriples(triples)
                lines.write(data)
                where[node] = (offset, len(data))
                listing.write(f"{offset} {len(data)} {node}\n")
                offset += len(data)
        return cls(where, os.open(held, os.O_RDONLY))

    @classmethod
    def read(cls, held: Path, index: Path) -> Described:
        """The description files :meth:`write` wrote."""
        where: dict[str, tuple[int, int]] = {}
        with open(index, encoding="utf-8") as listing:
            for line in listing:
                offset, length, node = line.rstrip("\n").split(" ", 2)
                where[node] = (int(offset), int(length))
        return cls(where, os.open(held, os.O_RDONLY))

    @property
    def shared(self) -> frozenset[str]:
        """The shared nodes."""
        return frozenset(self.where)

    def lines(self, nodes: Iterable[str]) -> list[bytes]:
        """The description lines of those of ``nodes`` that are shared."""
        out: list[bytes] = []
        for node in nodes:
            span = self.where.get(node)
            if span is not None and span[1]:
                out.extend(os.pread(self._held, span[1], span[0]).splitlines())
        return out


class TypeTables:
    """Several :class:`TypeTable` read as one (a checkpoint's and the batches' since)."""

    def __init__(self, tables: Sequence[TypeTable]) -> None:
        self.tables = tuple(tables)

    def lines(self, iris: Sequence[str]) -> Iterator[bytes]:
        """The N-Triples line of each type each of ``iris`` has, in any of the tables (table
        by table). Each IRI is hashed once: an early check's last parts read a dozen tables."""
        hashed = [(iri, *_halves(iri)) for iri in iris]
        for table in self.tables:
            yield from table.lines_hashed(hashed)


class DescribedParts:
    """Several :class:`Described` read as one: a checkpoint's and the shared nodes' since,
    which are other nodes (:meth:`GateContext.checkpoint`)."""

    def __init__(self, parts: Sequence[Described]) -> None:
        self.parts = tuple(parts)

    @property
    def shared(self) -> frozenset[str]:
        """The shared nodes of every part."""
        return frozenset().union(*(part.shared for part in self.parts))

    def lines(self, nodes: Iterable[str]) -> list[bytes]:
        """The description lines of those of ``nodes`` that are shared, in any part."""
        if len(self.parts) == 1:
            return self.parts[0].lines(nodes)
        wanted = list(nodes)
        return [line for part in self.parts for line in part.lines(wanted)]


@dataclass(frozen=True)
class ContextFiles:
    """A complete gate context as files, for a process that did not stage the run (a gate
    worker started afresh) to open as its own (:meth:`open`); sent to it pickled."""

    folder: str
    inverse: tuple[str, ...]
    described: tuple[tuple[str, str], ...] = ((HELD, SHARED),)
    """Its files in ``folder`` of shared descriptions, each with its index."""
    types: tuple[str, ...] = (TYPES,)
    """Its type tables' files in ``folder``."""

    def open(self, read: dict[Path, TypeTable | Described] | None = None) -> OpenedContext:
        """The context read from its files: its type tables and the index of its shared
        descriptions read into this process's memory, its spool and descriptions read by
        offset. ``read``: the files read for contexts opened before, by path, reused rather
        than read again (an early check's parts share all but their last type table);
        what this reads is added to it."""
        folder = Path(self.folder)
        known = {} if read is None else read

        def table(path: Path) -> TypeTable:
            found = known.get(path)
            if not isinstance(found, TypeTable):
                found = known[path] = TypeTable.read(path)
            return found

        def described(held: Path, index: Path) -> Described:
            found = known.get(index)
            if not isinstance(found, Described):
                found = known[index] = Described.read(held, index)
            return found

        return OpenedContext(
            DescribedParts([described(folder / h, folder / i) for h, i in self.described]),
            TypeTables([table(folder / name) for name in self.types]),
            os.open(folder / SPOOL, os.O_RDONLY),
            _predicate_terms(self.inverse),
        )


class Checkpoint:
    """What :meth:`GateContext.checkpoint` sealed: :meth:`describe` writes the descriptions
    of the nodes the batches staged before it share, and gives the files to prepare them
    from (any of those batches, as the whole context would once complete)."""

    def __init__(self, folder: Path, inverse: tuple[str, ...], shared: frozenset[str]) -> None:
        self._folder, self._inverse, self.shared = folder, inverse, shared
        """The nodes the batches before the checkpoint share."""
        self.described: Described | None = None
        """The descriptions, once :meth:`describe` has read them."""

    def describe(self, store: TripleStore, graphs: Sequence[str]) -> ContextFiles:
        """Read each shared node's description from ``store`` (in ``graphs``: the state the
        batches before the checkpoint leave) into the checkpoint's files; their names."""
        try:
            self.described = Described.write(
                self._folder / RUN_HELD,
                self._folder / RUN_SHARED,
                (
                    (node, store.describe([node], graphs, list(self._inverse)))
                    for node in sorted(self.shared)
                ),
            )
        except OSError as error:
            raise no_room(error, "for the SHACL gate") from error
        return ContextFiles(
            str(self._folder), self._inverse, ((RUN_HELD, RUN_SHARED),), (RUN_TYPES,)
        )


class OpenedContext:
    """A gate context opened from its files (:class:`ContextFiles`): prepares any staged
    batch exactly as the context it was written from does."""

    def __init__(
        self, described: DescribedParts, types: TypeTables, spool: int, inverse: frozenset[bytes]
    ) -> None:
        self._described, self._types, self._spool = described, types, spool
        self._inverse = inverse
        weakref.finalize(self, os.close, spool)

    @property
    def shared(self) -> frozenset[str]:
        """The nodes more than one batch touches."""
        return self._described.shared

    def prepare(self, staged: StagedBatch) -> PreparedBatch:
        """``staged``'s document (:meth:`GateContext.prepare`)."""
        if staged.spooled is None:
            raise RuntimeError(
                "A batch not staged through a gate context was prepared from one; this is a "
                "bug in the caller."
            )
        return _prepared(staged, self._spool, self._described, self._types, self._inverse)


def _prepared(
    staged: StagedBatch,
    spool: int,
    described: DescribedParts,
    types: TypeTables,
    inverse: frozenset[bytes],
) -> PreparedBatch:
    """``staged``'s own triples, the description of the nodes it touches and the types of
    what they point at (what :meth:`ShaclGate.prepare_staged` reads of the staged run)."""
    assert staged.spooled is not None
    offset, length = staged.spooled
    own = os.pread(spool, length, offset)
    touched = staged.touched if staged.touched is not None else touched_in(own, inverse)
    lines = described.lines(touched)
    # Its own subjects are all touched (touched_in): only its objects may need types.
    referenced = _object_iris(own)
    referenced.update(_named_nodes(b"\n".join(lines)))
    referenced.difference_update(touched)
    context = dict.fromkeys(lines)
    context.update(dict.fromkeys(types.lines(sorted(referenced))))
    # The batch's own lines as they were spooled, then its context: a triple in both is
    # written twice, which an N-Triples document may do (it is the same graph).
    return PreparedBatch(
        source=staged.source,
        ntriples=own + b"".join(line + b"\n" for line in context),
        focus_nodes=tuple(sorted(touched)),
    )
