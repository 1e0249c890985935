"""A partitioned card view derived ahead, in a process of its own, while the build stages the rest.

The build runs on one core from reading its records to gating the run, and the card view's
largest part (the alignment shortcuts) reads only the spec's batches, all of them staged before
the first batch of the discussion. So once they are, a process started afresh by the fork
server (it holds nothing of the build: :func:`~ratified_rdf.graph.gate.fresh_workers`) derives
that view from the spool's file (:mod:`~ratified_rdf.graph.spool`), on the other core, while the
build stages the discussion; it writes the view's triples, packed, as N-Triples to a private
temporary folder, and the build reads them back when it comes to that view. The triples are
the ones the build would derive itself, in the same order (tests/unit/test_card_view.py builds
a brain both ways and compares them). A child that dies leaves the build to derive the view
itself; one that raises stops the build with what it raised.
"""

from __future__ import annotations

import multiprocessing
import pickle
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from pyoxigraph import RdfFormat, Triple, parse

from ratified_rdf._forked import die_with
from ratified_rdf._temporary import make_folder

AHEAD_PREFIX = "ratified-ahead-"
"""How the folder a view derived ahead is written to under ``TMPDIR`` is named (then the
building process's id and a random part: :mod:`ratified_rdf._temporary`)."""

TRIPLES_PER_WRITE = 50_000
"""How many of a view's triples the child writes at a time (held as terms until then)."""

_TRIPLES, _FAILED, _DONE = "view.nt", "failed.pickle", "done"


class DerivedAhead:
    """The view ``query``, a partitioned one, derived from the batches of ``graphs`` spooled in
    ``spool`` before ``mark``, started at once in a process the fork server starts."""

    def __init__(self, query: str, spool: Path, mark: int, graphs: Sequence[str]) -> None:
        self.query, self.mark, self.graphs = query, mark, tuple(graphs)
        self._folder: Path | None = make_folder(AHEAD_PREFIX)
        context = multiprocessing.get_context("forkserver")
        # What the child runs is imported into the server once (it would otherwise be
        # imported again in every process the server starts: the gate's workers too).
        context.set_forkserver_preload(["ratified_rdf.graph.views", "ratified_rdf.graph.gate"])
        self._process = context.Process(
            target=_derive,
            args=(query, str(spool), mark, self.graphs, str(self._folder)),
            name=f"ratified card view {query}",
            daemon=True,
        )
        self._process.start()

    @property
    def running(self) -> bool:
        """Whether the child is still deriving it."""
        return self._process.is_alive()

    def triples(self) -> Iterator[Triple] | None:
        """The view's triples, in the order the child derived them, once it has; None if the
        child died before it finished (killed, out of memory). Raises what the child raised.
        The folder they were written to is removed once they are read."""
        folder = self._folder
        assert folder is not None, "a view derived ahead is read once"
        self._process.join()
        try:
            if (folder / _FAILED).exists():
                with open(folder / _FAILED, "rb") as file:
                    raise pickle.load(file)  # written by the child, in a folder only we read
            if not (folder / _DONE).exists():
                self.close()
                return None
        except BaseException:
            self.close()
            raise
        return self._read(folder)

    def _read(self, folder: Path) -> Iterator[Triple]:
        try:
            for quad in parse(path=folder / _TRIPLES, format=RdfFormat.N_TRIPLES):
                yield quad.triple
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child, if it still runs, and remove its folder."""
        if self._process.is_alive():
            self._process.kill()
        self._process.join()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _derive(query: str, spool: str, mark: int, graphs: Sequence[str], folder: str) -> None:
    """In the child: derive the view ``query`` and write its packed triples to ``folder``, then
    mark it done; or write what it raised."""
    die_with(None)  # with the fork server, which ends with the build
    from ratified_rdf.graph.store import ntriples
    from ratified_rdf.graph.views import derived_triples

    out = Path(folder)
    try:
        with open(out / _TRIPLES, "xb") as file:
            chunk: list[Triple] = []
            for triple in derived_triples(query, Path(spool), mark, graphs):
                chunk.append(triple)
                if len(chunk) >= TRIPLES_PER_WRITE:
                    file.write(ntriples(chunk))
                    chunk = []
            file.write(ntriples(chunk))
        (out / _DONE).touch()
    except Exception as error:  # sent to the build, which raises it
        try:
            answer = pickle.dumps(error)
        except Exception:
            answer = pickle.dumps(RuntimeError(f"Deriving the card view {query} failed: {error}"))
        (out / _FAILED).write_bytes(answer)
