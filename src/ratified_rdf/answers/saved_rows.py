"""The rows of whole-graph queries, saved in the store's folder for the next process.

Every question routes through the heading index and the gazetteer, built from whole-graph
queries (``headings``, ``gazetteer_*``, ``documents``), and the cards that list pull requests
and commits look them up in the kept rows of others (``pull_requests``, ``commit_details`` …):
in a one-shot ``ratified ask`` those queries cost far more than the card itself. Their rows
depend only on the graphs read, so the first process to run one writes its rows to
``<store>/ratified-rows/``, and later processes read a small file instead of asking.

A saved file is used only when it is certainly what the query would give now:

* it names the same graphs (a run's graphs never change once written; a new build is a new run
  with graphs of other names);
* it was written at the store's current generation (the file every writer of this library
  replaces when it finishes a build, a review or a prune): any write makes older files stale,
  and they are removed when the next one is saved;
* its query text is the text ``sparql/<name>.rq`` binds today (a changed query runs again).

Anything else (a missing or unreadable file, another layout) means the query runs as before; a
folder that cannot be written to only means nothing is saved. Each file keeps the record of
the run its rows came from, so a card that lists the query shows that run, marked reused, as a
warm process's card does.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from pyoxigraph import BlankNode, Literal, NamedNode

from ratified_rdf.graph.store import GENERATION_FILE, Term
from ratified_rdf.queries import QueryRun
from ratified_rdf.queries.files import load_query

FOLDER = "ratified-rows"
"""The folder in a store's folder that holds the saved rows."""

LAYOUT = 1
"""The layout of a saved file; a file of another layout is not read."""

_STRING = "http://www.w3.org/2001/XMLSchema#string"

Cell = str | list[str] | dict[str, str] | None
"""One term as saved: an IRI as its text, a literal as ``[lexical]``, ``[lexical, datatype]``
or ``[lexical, "@" + language]``, a blank node as ``{"b": id}``, unbound as null."""

Values = dict[str, str]
"""A row as the lookups read it: each bound variable's lexical value."""


class SavedRows:
    """The rows of one store folder's whole-graph queries, saved by query and set of graphs."""

    def __init__(self, store_folder: Path) -> None:
        self.folder = store_folder / FOLDER
        self._store_folder = store_folder

    def generation(self) -> str | None:
        """The store's generation now (its generation file's text), or None when it has none:
        nothing is saved for a store no writer of this library has finished writing."""
        try:
            return (self._store_folder / GENERATION_FILE).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            return None

    def terms(
        self, name: str, graphs: Sequence[str], generation: str | None
    ) -> tuple[list[dict[str, Term]], QueryRun] | None:
        """The saved rows of ``sparql/<name>.rq`` over ``graphs`` at ``generation``, as the
        query gave them, and the record of its run; None when nothing current is saved (or
        what is saved cannot be read: the query then runs)."""
        found = self.load(name, graphs, generation)
        try:
            return None if found is None else (found.terms(), found.run)
        except Exception:  # a file written by hand or by another layout's writer
            return None

    def values(
        self, name: str, graphs: Sequence[str], generation: str | None
    ) -> tuple[list[Values], QueryRun] | None:
        """As :meth:`terms`, each row's lexical values (what the lookups read)."""
        found = self.load(name, graphs, generation)
        try:
            return None if found is None else (found.values(), found.run)
        except Exception:
            return None

    def load(self, name: str, graphs: Sequence[str], generation: str | None) -> Saved | None:
        """What is saved of ``sparql/<name>.rq`` over ``graphs`` at ``generation`` and still
        current (see the module's docstring), else None."""
        if generation is None:
            return None
        try:
            data = json.loads(self._path(name, graphs, generation).read_bytes())
            if (
                data["layout"] != LAYOUT
                or data["generation"] != generation
                or data["graphs"] != list(graphs)
            ):
                return None
            run = QueryRun.model_validate(data["run"])
            if run.name != name or run.sparql != load_query(name).bind({}):
                return None
            return Saved(data["variables"], data["rows"], run)
        except Exception:  # missing, unreadable, another shape: run the query instead
            return None

    def save(
        self,
        graphs: Sequence[str],
        generation: str | None,
        rows: Sequence[Mapping[str, Term]],
        run: QueryRun,
    ) -> None:
        """Write the rows and record of a run over ``graphs`` read at ``generation``
        (atomically), and remove the files of other generations. A folder that cannot be
        written to saves nothing, silently: the next process runs the query, as it would
        without a saved file."""
        if generation is None or run.params:
            return
        variables = sorted({key for row in rows for key in row})
        try:
            cells = [[_cell(row.get(key)) for key in variables] for row in rows]
        except ValueError:  # a term this layout cannot hold: the query runs next time
            return
        data = {
            "layout": LAYOUT,
            "generation": generation,
            "graphs": list(graphs),
            "run": run.model_dump(mode="json"),
            "variables": variables,
            "rows": cells,
        }
        path = self._path(run.name, graphs, generation)
        with contextlib.suppress(OSError):
            self.folder.mkdir(exist_ok=True)
            fresh = path.with_name(f".{path.name}.{os.getpid()}")
            fresh.write_text(json.dumps(data, separators=(",", ":")), encoding="utf-8")
            os.replace(fresh, path)
            mark = _digest(generation)
            for old in self.folder.glob("*.json"):
                if not old.name.startswith(mark):
                    old.unlink(missing_ok=True)

    def _path(self, name: str, graphs: Sequence[str], generation: str) -> Path:
        return self.folder / f"{_digest(generation)}-{_digest(*graphs)}-{name}.json"


class Saved:
    """The saved rows of one query, read as terms or as their values, and its record."""

    def __init__(self, variables: list[str], cells: list[list[Cell]], run: QueryRun) -> None:
        self._variables = variables
        self._cells = cells
        self.run = run
        """The record of the run the rows came from."""

    def terms(self) -> list[dict[str, Term]]:
        """The rows as the query gave them."""
        made: dict[str, NamedNode] = {}  # datatypes repeat: one term each

        def term(cell: Cell) -> Term:
            if isinstance(cell, str):
                return NamedNode(cell)
            if isinstance(cell, dict):
                return BlankNode(cell["b"])
            assert cell is not None
            if len(cell) == 1:
                return Literal(cell[0])
            kind = cell[1]
            if kind.startswith("@"):
                return Literal(cell[0], language=kind[1:])
            datatype = made.get(kind)
            if datatype is None:
                datatype = made[kind] = NamedNode(kind)
            return Literal(cell[0], datatype=datatype)

        names = self._variables
        return [
            {key: term(cell) for key, cell in zip(names, row, strict=True) if cell is not None}
            for row in self._cells
        ]

    def values(self) -> list[Values]:
        """Each row's lexical values (what the lookups read), without making terms."""
        names = self._variables
        # Most cells are IRIs, saved as their text: checked first, inline, for speed.
        return [
            {
                key: cell if cell.__class__ is str else _value(cell)
                for key, cell in zip(names, row, strict=True)
                if cell is not None
            }
            for row in self._cells
        ]


def values_of(rows: Sequence[Mapping[str, Term]]) -> list[Values]:
    """The lexical values of ``rows`` (what the lookups read of each term)."""
    return [{key: term.value for key, term in row.items()} for row in rows]


def _cell(term: Term | None) -> Cell:
    if term is None:
        return None
    if isinstance(term, NamedNode):
        return term.value
    if isinstance(term, BlankNode):
        return {"b": term.value}
    if term.direction:
        raise ValueError("a literal with a base direction is not saved")
    if term.language:
        return [term.value, "@" + term.language]
    datatype = term.datatype.value
    return [term.value] if datatype == _STRING else [term.value, datatype]


def _value(cell: Cell) -> str:
    if isinstance(cell, str):
        return cell
    if isinstance(cell, dict):
        return cell["b"]
    assert cell is not None
    return cell[0]


def _digest(*texts: str) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()[:16]
