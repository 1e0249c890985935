"""A run's batches as they were staged, kept for the derivations that read them a group at a time.

The card view's largest part, the alignment shortcuts, reads each alignment with its section,
its revision and the final section it leads to. Read from the staged run once that is on disk,
every solution decodes its terms from RocksDB (at ×100, some 20 lookups and 500 µs an
alignment); read from a small store in memory that holds a group of revisions beside the
batches every revision's alignments lead to, it takes a fifth of that. A :class:`Spool` keeps
the N-Triples of the batches such a derivation reads, in the order they were staged, in a
temporary file (``TMPDIR``), so the view reads them back from there, never from the staged run.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from ratified_rdf._temporary import no_room
from ratified_rdf.graph.mapping import Batch


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
        self._file: IO[bytes] | None = None
        self.count = 0
        """How many batches it holds."""

    def add(self, batch: Batch, document: bytes) -> None:
        """Keep ``batch`` (its triples as N-Triples: ``document``) if it is one to keep."""
        if not self.keeps(batch):
            return
        entry = Spooled(batch.graph, batch.shared, len(batch.triples), document)
        try:
            if self._file is None:
                # Unlinked as it is made: nothing is left behind by a build that is killed.
                self._file = tempfile.TemporaryFile(prefix="ratified-spool-")  # noqa: SIM115
            pickle.dump(entry, self._file, protocol=pickle.HIGHEST_PROTOCOL)
        except OSError as error:
            raise no_room(error, "for the card view") from error
        self.count += 1

    def __iter__(self) -> Iterator[Spooled]:
        """Every batch kept, in the order it was added."""
        file = self._file
        if file is None:
            return
        file.flush()
        end = file.tell()
        file.seek(0)
        try:
            while file.tell() < end:
                entry = pickle.load(file)  # written by this process, above
                if not isinstance(entry, Spooled):
                    raise TypeError("The spool holds something other than a staged batch.")
                yield entry
        finally:
            file.seek(end)

    def close(self) -> None:
        """Remove the file (a temporary file goes when it is closed)."""
        if self._file is not None:
            self._file.close()
            self._file = None
