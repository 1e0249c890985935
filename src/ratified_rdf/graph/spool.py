"""A run's batches as they were staged, kept for the derivations that read them a group at a time.

The card view's largest part, the alignment shortcuts, reads each alignment with its section,
its revision and the final section it leads to. Read from the staged run once that is on disk,
every solution decodes its terms from RocksDB (at ×100, some 20 lookups and 500 µs an
alignment); read from a small store in memory that holds a group of revisions beside the
batches every revision's alignments lead to, it takes a fifth of that. A :class:`Spool` keeps
the N-Triples of the batches such a derivation reads, in the order they were staged, in a file
in a private temporary folder (``TMPDIR``), so the view reads them back from there, never from
the staged run; and a process of its own can read them from there too, up to where they were
when it started (:func:`read_spooled`), while the build goes on staging.
"""

from __future__ import annotations

import pickle
import shutil
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ratified_rdf._temporary import make_folder, no_room
from ratified_rdf.graph.mapping import Batch

SPOOL_PREFIX = "ratified-spool-"
"""How the folder of a spool's file under ``TMPDIR`` is named (then the building process's id
and a random part: :mod:`ratified_rdf._temporary`)."""


@dataclass(frozen=True)
class Spooled:
    """One batch as staged."""

    graph: str
    """The named graph it was staged in."""
    shared: bool
    """Whether every other batch's records may lead to its nodes (:attr:`Batch.shared`)."""
    triples: int
    """How many triples it holds."""
    document: bytes
    """Its triples as N-Triples, one a line, as Oxigraph wrote them when it was staged."""


class Spool:
    """The batches ``keeps`` chooses, as they are staged, read back in that order any number
    of times (one reading at a time). No file is made while ``keeps`` has chosen none."""

    def __init__(self, keeps: Callable[[Batch], bool]) -> None:
        self.keeps = keeps
        self._folder: Path | None = None
        self._file: IO[bytes] | None = None
        self._end = 0
        self._last: dict[str, int] = {}
        self.count = 0
        """How many batches it holds."""

    @property
    def path(self) -> Path | None:
        """The file it is kept in (None while it holds nothing), for another process to read
        with :func:`read_spooled`."""
        return None if self._folder is None else self._folder / "batches.pickle"

    def add(self, batch: Batch, document: bytes) -> None:
        """Keep ``batch`` (its triples as N-Triples: ``document``) if it is one to keep."""
        if not self.keeps(batch):
            return
        entry = Spooled(batch.graph, batch.shared, len(batch.triples), document)
        try:
            if self._file is None:
                # A folder of its own (mode 0700), removed when the spool is closed or let go
                # of, or by the next build if this one is killed.
                self._folder = make_folder(SPOOL_PREFIX)
                weakref.finalize(self, shutil.rmtree, self._folder, True)
                self._file = open(self._folder / "batches.pickle", "xb")  # noqa: SIM115
            data = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
            self._file.write(data)
        except OSError as error:
            raise no_room(error, "for the card view") from error
        self._last[batch.graph] = self._end
        self._end += len(data)
        self.count += 1

    def mark(self) -> int:
        """Where what it holds now ends, written through to its file, so that another process
        reads every batch added so far (:func:`read_spooled`)."""
        if self._file is not None:
            self._file.flush()
        return self._end

    def complete_before(self, graphs: Iterable[str], mark: int) -> bool:
        """Whether every batch it holds of ``graphs`` was added before ``mark``."""
        return all(self._last.get(graph, -1) < mark for graph in graphs)

    def __iter__(self) -> Iterator[Spooled]:
        """Every batch kept, in the order it was added."""
        path = self.path
        if path is None:
            return
        yield from read_spooled(path, self.mark())

    def close(self) -> None:
        """Remove its file and folder."""
        if self._file is not None:
            self._file.close()
            self._file = None
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def read_spooled(path: Path, end: int) -> Iterator[Spooled]:
    """The batches a spool kept in the file ``path`` (:attr:`Spool.path`), up to ``end``
    (:meth:`Spool.mark`), in the order they were added."""
    with open(path, "rb") as file:
        while file.tell() < end:
            entry = pickle.load(file)  # written by this build, in a folder only it may read
            if not isinstance(entry, Spooled):
                raise TypeError("The spool holds something other than a staged batch.")
            yield entry
