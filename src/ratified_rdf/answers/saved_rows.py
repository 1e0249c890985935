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

What the lookups build from those rows (the heading index and the gazetteer: stemming every
heading, ranking tables, a speller) is saved too, as a pickle (:meth:`SavedRows.save_object`),
so a one-shot ask reads the finished structures instead of rebuilding them: it is used only
under the same checks, and only when the code that built it is byte for byte the code running
now (a digest of its modules' files). A pickle can name any callable, so it is read by an
unpickler that resolves only the few classes these structures are made of
(:data:`PICKLED_CLASSES`): a crafted file in a brain's folder can make no call but to them,
and anything else it names makes it unreadable, and the lookups are built from the rows.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import pickle
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType

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

PICKLED_CLASSES: frozenset[tuple[str, str]] = frozenset(
    {
        ("collections", "Counter"),
        ("re", "_compile"),
        ("ratified_rdf.answers.entities", "Gazetteer"),
        ("ratified_rdf.answers.entities", "SeriesName"),
        ("ratified_rdf.answers.heading_search", "HeadingEntry"),
        ("ratified_rdf.answers.heading_search", "HeadingIndex"),
        ("ratified_rdf.answers.heading_search", "_Group"),
        ("ratified_rdf.answers.spelling", "Speller"),
        ("ratified_rdf.queries.run", "QueryRun"),
    }
)
"""The only globals a saved pickle may name (module, name): the classes of the lookups'
structures, ``Counter``, and ``re``'s compiler for their patterns."""


class _Unpickler(pickle.Unpickler):
    """Resolves only :data:`PICKLED_CLASSES`; any other global makes the file unreadable."""

    def find_class(self, module: str, name: str) -> object:
        if (module, name) not in PICKLED_CLASSES:
            raise pickle.UnpicklingError(f"{module}.{name} is not read from a saved file")
        return super().find_class(module, name)


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
            for old in (*self.folder.glob("*.json"), *self.folder.glob("*.pickle")):
                if not old.name.startswith(mark):
                    old.unlink(missing_ok=True)

    def load_object(
        self,
        name: str,
        graphs: Sequence[str],
        generation: str | None,
        queries: Sequence[str],
        code: Sequence[ModuleType],
    ) -> object | None:
        """What :meth:`save_object` saved as ``name`` over ``graphs`` at ``generation``, built
        from ``sparql/<query>.rq`` for each of ``queries`` by ``code`` (modules), if all of
        those are as they are now; else None (also when the file is unreadable or names a
        global outside :data:`PICKLED_CLASSES`)."""
        if generation is None:
            return None
        try:
            data = self._path(name, graphs, generation, "pickle").read_bytes()
            header, _, body = data.partition(b"\n")
            if json.loads(header) != _stamp(generation, graphs, queries, code):
                return None
            return _Unpickler(io.BytesIO(body)).load()
        except Exception:  # missing, unreadable, stale, refused: build it from the rows
            return None

    def save_object(
        self,
        name: str,
        graphs: Sequence[str],
        generation: str | None,
        queries: Sequence[str],
        code: Sequence[ModuleType],
        value: object,
    ) -> None:
        """Save ``value`` (built from ``queries``' rows over ``graphs`` by ``code``) for the
        next process, if it reads back through the restricted unpickler; a value that does
        not, or a folder that cannot be written to, saves nothing."""
        if generation is None:
            return
        try:
            body = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
            _Unpickler(io.BytesIO(body)).load()
            header = json.dumps(_stamp(generation, graphs, queries, code)).encode()
        except Exception:  # something outside the allowed classes: built again next time
            return
        path = self._path(name, graphs, generation, "pickle")
        with contextlib.suppress(OSError):
            self.folder.mkdir(exist_ok=True)
            fresh = path.with_name(f".{path.name}.{os.getpid()}")
            fresh.write_bytes(header + b"\n" + body)
            os.replace(fresh, path)

    def _path(self, name: str, graphs: Sequence[str], generation: str, kind: str = "json") -> Path:
        return self.folder / f"{_digest(generation)}-{_digest(*graphs)}-{name}.{kind}"


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


def _stamp(
    generation: str, graphs: Sequence[str], queries: Sequence[str], code: Sequence[ModuleType]
) -> dict[str, object]:
    """What a saved object must have been built from to be used now: the layout, the store's
    generation, the graphs, the texts of the queries whose rows it was built from, and the
    files of the modules that built it (with the interpreter and pydantic that pickled it)."""
    from pydantic import VERSION

    sources = hashlib.sha256()
    for module in code:
        sources.update(Path(module.__file__ or "").read_bytes())
    return {
        "layout": LAYOUT,
        "generation": generation,
        "graphs": list(graphs),
        "queries": _digest(*(load_query(name).bind({}) for name in queries)),
        "code": sources.hexdigest(),
        "python": list(sys.version_info[:2]),
        "pydantic": VERSION,
    }


def _digest(*texts: str) -> str:
    return hashlib.sha256("\n".join(texts).encode("utf-8")).hexdigest()[:16]
