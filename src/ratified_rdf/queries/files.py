"""The hand-written SPARQL in ``sparql/*.rq`` and how parameters are bound into it.

Each file holds one query with a header comment: ``# Answers: …`` says what it answers and
``# Param ?name kind: …`` declares each parameter (kind ``iri``, ``string`` or ``integer``). The
query names its parameters in one placeholder row, ``VALUES (?a ?b) { (UNDEF UNDEF) }``, which
runs as "any value" when the file is used as it is. Binding replaces that row with typed RDF
terms serialised by the library, so a parameter can never become query text. ``# Reads: …``
names the sources whose graphs it reads (``posts``: every source whose graph holds posts, as
the registry says); ``# Whole graph: …`` marks a query about everything those graphs hold,
whose rows a brain keeps per set of graphs. ``# Key ?k: ?a ?b`` binds ``?k`` too, in the same
placeholder row, to one string made of the parameters' values (see :func:`key_of`): a card
view query finds a shortcut by it in one lookup, where two patterns (one per parameter) cost a
lookup for each match of the first.

A ``VALUES`` block inside the pattern costs the same as an inline IRI on Oxigraph, whereas its
``substitutions=`` argument does not seed property paths from the bound node.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Literal as TypingLiteral

from pydantic import BaseModel, ConfigDict
from pyoxigraph import Literal, NamedNode

from ratified_rdf._errors import InputError
from ratified_rdf.graph.vocab import XSD
from ratified_rdf.resources import resource_dir

ParamKind = TypingLiteral["iri", "string", "integer"]
ParamValue = str | int | NamedNode | tuple[str | int | NamedNode, ...]
"""A value, or a tuple of values: tuples bind one ``VALUES`` row each (all of one length). An
IRI may come as text (checked here) or as the :class:`~pyoxigraph.NamedNode` a query returned
(pyoxigraph checked it when it made it, so it binds as it is)."""

_PARAM = re.compile(r"^#\s*Param\s+\?(\w+)\s+(iri|string|integer)\s*:\s*(.*)$")
_ANSWERS = re.compile(r"^#\s*Answers:\s*(.*)$")
_READS = re.compile(r"^#\s*Reads:\s*(.*)$")
_WHOLE_GRAPH = re.compile(r"^#\s*Whole graph:")
_REPRODUCES = re.compile(r"^#\s*Reproduces:\s*([a-z0-9_]+)\s*$")
_KEY = re.compile(r"^#\s*Key\s+\?(\w+)\s*:((?:\s+\?\w+)+)\s*$")
_PACKED = re.compile(r"^#\s*Packed:\s*\?(\w+)(?:\s*,\s*ordered by((?:\s+\?\w+)+))?\s*$")
_PLACEHOLDER = re.compile(r"VALUES\s*\(([^)]*)\)\s*\{\s*\((?:\s*UNDEF\s*)+\)\s*\}")
# No blanks, control characters (C0, DEL, C1) or characters SPARQL's IRIREF excludes; fullmatch,
# so that a final line break ("$" would let it through) is refused too.
_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s<>\"{}|\\^`\x00-\x1f\x7f-\x9f]*")


class QueryError(InputError):
    """A query file is malformed, or a parameter does not fit its declared kind."""


class Param(BaseModel):
    """A declared query parameter."""

    model_config = ConfigDict(frozen=True)

    name: str
    kind: ParamKind
    description: str


class QueryFile(BaseModel):
    """One ``.rq`` file: its name, what it answers, its parameters and text."""

    model_config = ConfigDict(frozen=True)

    name: str
    answers: str
    params: tuple[Param, ...]
    text: str
    reads: tuple[str, ...] = ()
    """The sources whose graphs the query reads (``# Reads: spec records``); empty means all.
    Fewer graphs in the default graph make every pattern cheaper on Oxigraph."""
    whole_graph: bool = False
    """The query describes everything its graphs hold (``# Whole graph: …``), so its cost
    grows with them; a brain keeps its rows per set of graphs, which never change once a run
    has written them."""
    placeholder: tuple[str, ...] = ()
    """The variables of its ``VALUES`` placeholder row, in the order the row names them."""
    reproduces: str | None = None
    """For a query of the card view (``# Reproduces: section_posts``): the full-path query
    whose rows it gives, with the same parameters, from the view's shortcuts."""
    packed: str | None = None
    """The column holding each row's values packed as one ``rdf:JSON`` literal
    (``# Packed: ?row``): the card view's rows, unpacked into columns by
    :func:`~ratified_rdf.queries.packed.unpack_rows` when the query runs."""
    packed_order: tuple[str, ...] = ()
    """The unpacked columns the rows are ordered by (``# Packed: ?row, ordered by ?created
    ?post``), as an ``ORDER BY`` of them would order them: SPARQL cannot sort by values
    inside a literal."""
    keys: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Keys bound beside the parameters (``# Key ?sectionKey: ?revision ?sectionNumber``):
    each variable with the parameters it is made of, by :func:`key_of`."""

    def bind(self, values: dict[str, ParamValue]) -> str:
        """The query text with ``values`` bound into its ``VALUES`` placeholder."""
        declared = {p.name: p for p in self.params}
        unknown = set(values) - set(declared)
        if unknown:
            raise QueryError(f"{self.name} has no parameter(s) {', '.join(sorted(unknown))}")
        if not self.params:
            return self.text
        missing = [p for p in declared if p not in values]
        if missing:
            raise QueryError(f"{self.name} needs a value for {', '.join(missing)}")
        lengths = {len(v) for v in values.values() if isinstance(v, tuple)}
        if len(lengths) > 1:
            raise QueryError(f"{self.name}: parameters given as lists must be of one length")
        count = lengths.pop() if lengths else 1
        made_of = dict(self.keys)

        def one(name: str, index: int) -> str:
            if name in made_of:
                parts = [one_value(part, index) for part in made_of[name]]
                for part, value in zip(made_of[name], parts, strict=True):
                    render(declared[part], value)  # each part checked as its parameter is
                return str(Literal(key_of(*parts)))
            return render(declared[name], one_value(name, index))

        def one_value(name: str, index: int) -> str | int | NamedNode:
            value = values[name]
            return value[index] if isinstance(value, tuple) else value

        rows = " ".join(
            "(" + " ".join(one(name, index) for name in self.placeholder) + ")"
            for index in range(count)
        )
        return _PLACEHOLDER.sub(
            lambda m: f"VALUES ({m.group(1).strip()}) {{ {rows} }}", self.text, count=1
        )


def key_of(*values: str | int | NamedNode) -> str:
    """The key of ``values`` (``# Key``): each one's text (an IRI without its brackets), joined
    by single spaces: what ``CONCAT(STR(?a), " ", STR(?b))`` gives in the view query that
    writes it."""
    return " ".join(value.value if isinstance(value, NamedNode) else str(value) for value in values)


def render(param: Param, value: str | int | NamedNode) -> str:
    """A parameter value as an RDF term in SPARQL syntax, by its declared kind.

    Raises :class:`QueryError` for a value that does not fit: an IRI that is not absolute or
    that pyoxigraph refuses (bad percent-encoding, brackets outside a host …), a number that is
    not whole, or text holding a lone surrogate (it is not Unicode text, and has no RDF form).
    """
    if isinstance(value, NamedNode):
        # A term pyoxigraph made is a valid IRI (no ">" or blank can be in it): a card binds
        # the IRIs its first queries returned, dozens per card, without checking them again.
        if param.kind != "iri":
            raise QueryError(f"?{param.name} is {param.kind}, not an IRI")
        return str(value)
    if param.kind == "iri":
        text = str(value)
        if not _IRI.fullmatch(text) or not _is_unicode(text):
            raise QueryError(f"?{param.name} must be an absolute IRI, not {text[:80]!r}")
        try:
            return str(NamedNode(text))
        except ValueError as error:
            raise QueryError(
                f"?{param.name} must be an absolute IRI, not {text[:80]!r} ({error})"
            ) from None
    if param.kind == "integer":
        if isinstance(value, bool) or not re.fullmatch(r"[+-]?\d{1,18}", str(value)):
            raise QueryError(f"?{param.name} must be a whole number")
        return str(Literal(str(int(value)), datatype=NamedNode(XSD + "integer")))
    text = str(value)
    if not _is_unicode(text):
        raise QueryError(
            f"?{param.name} holds a lone surrogate, which is not Unicode text; send the value "
            "as valid UTF-8"
        )
    return str(Literal(text))


def _is_unicode(text: str) -> bool:
    """Whether ``text`` is Unicode text: no lone surrogate (pyoxigraph cannot take one)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def parse_query_file(name: str, text: str) -> QueryFile:
    """Read the header and check the placeholder names exactly the declared parameters."""
    answers: list[str] = []
    params: list[Param] = []
    sources: tuple[str, ...] = ()
    whole_graph = False
    reproduces: str | None = None
    packed: str | None = None
    packed_order: tuple[str, ...] = ()
    keys: list[tuple[str, tuple[str, ...]]] = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if _WHOLE_GRAPH.match(line):
            whole_graph = True
            continue
        full_path = _REPRODUCES.match(line)
        if full_path:
            reproduces = full_path.group(1)
            continue
        key = _KEY.match(line)
        if key:
            keys.append((key.group(1), tuple(v.lstrip("?") for v in key.group(2).split())))
            continue
        if line.startswith("# Key"):
            raise QueryError(f"{name}.rq: write its Key line as '# Key ?key: ?param ?param'")
        packing = _PACKED.match(line)
        if packing:
            packed = packing.group(1)
            packed_order = tuple(v.lstrip("?") for v in (packing.group(2) or "").split())
            continue
        if line.startswith("# Packed:"):
            raise QueryError(
                f"{name}.rq: write its Packed line as '# Packed: ?row' or '# Packed: ?row, "
                "ordered by ?a ?b'"
            )
        param = _PARAM.match(line)
        if param:
            # Validated as a mapping: pydantic checks the kind is a ParamKind (the pattern
            # admits only those), which the type of a regular expression's group cannot say.
            fields = dict(zip(("name", "kind", "description"), param.groups(), strict=True))
            params.append(Param.model_validate(fields))
            continue
        reads = _READS.match(line)
        if reads:
            sources = tuple(reads.group(1).split())
            continue
        start = _ANSWERS.match(line)
        if start:
            answers.append(start.group(1))
        elif answers and not params:
            answers.append(line.lstrip("# ").strip())
    if not answers:
        raise QueryError(f"{name}.rq has no '# Answers:' header saying what it answers")
    placeholder: tuple[str, ...] = ()
    if params:
        match = _PLACEHOLDER.search(text)
        if match is None:
            raise QueryError(f"{name}.rq declares parameters but has no VALUES placeholder")
        placeholder = tuple(v.lstrip("?$") for v in match.group(1).split())
        if sorted(placeholder) != sorted([p.name for p in params] + [k for k, _ in keys]):
            raise QueryError(
                f"{name}.rq: the VALUES placeholder does not match its Param and Key lines"
            )
    declared = {p.name for p in params}
    for made, parts in keys:
        if not parts or any(part not in declared for part in parts):
            raise QueryError(f"{name}.rq: the key ?{made} must be made of declared parameters")
    return QueryFile(
        name=name,
        answers=" ".join(answers),
        params=tuple(params),
        text=text,
        reads=sources,
        whole_graph=whole_graph,
        placeholder=placeholder,
        reproduces=reproduces,
        packed=packed,
        packed_order=packed_order,
        keys=tuple(keys),
    )


_QUERY_NAME = re.compile(r"[a-z0-9_]+")
MAX_QUERY_NAME = 100
"""The longest query name (a file name in ``sparql/``, without ``.rq``)."""

_EXTRA_FOLDERS: list[Path] = []
"""Folders of ``.rq`` files registered by extensions (a question type of your own), searched
after ``sparql/``: a built-in query is never shadowed."""


def register_query_folder(folder: str | Path) -> None:
    """Let :func:`load_query` find the ``.rq`` files in ``folder`` too (after the built-in
    ones), for a question type that ships its own queries."""
    path = Path(folder).resolve()
    if not path.is_dir():
        raise QueryError(f"There is no folder {path} to read queries from.")
    if path not in _EXTRA_FOLDERS:
        _EXTRA_FOLDERS.append(path)
        load_query.cache_clear()


@lru_cache(maxsize=128)
def load_query(name: str, folder: Path | None = None) -> QueryFile:
    """The query ``sparql/<name>.rq``; a name is a file name, never a path."""
    # A name longer than any file name is refused here: the file system would raise.
    if len(name) > MAX_QUERY_NAME or not _QUERY_NAME.fullmatch(name):
        raise QueryError(
            f"{name[:60]!r} is not a query name: use the name of a file in sparql/, such as "
            "section_history."
        )
    path = (folder or resource_dir("sparql")) / f"{name}.rq"
    if folder is None and not path.is_file():
        path = next(
            (extra / f"{name}.rq" for extra in _EXTRA_FOLDERS if (extra / f"{name}.rq").is_file()),
            path,
        )
    if not path.is_file():
        raise QueryError(f"There is no query named {name!r} in {path.parent}.")
    return parse_query_file(name, path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def view_queries() -> dict[str, str]:
    """The card view's queries, by the full-path query each reproduces (``section_posts`` →
    ``view_section_posts``): what a session runs instead when its reader reads the view."""
    return {q.reproduces: q.name for q in all_queries() if q.reproduces is not None}


def all_queries(folder: Path | None = None) -> list[QueryFile]:
    """Every query that ships in ``sparql/``."""
    base = folder or resource_dir("sparql")
    return [load_query(p.stem, folder) for p in sorted(base.glob("*.rq"))]
