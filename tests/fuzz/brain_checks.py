"""The pigeon brain for the fuzz tests, and the checks an attack on it must pass: the store
unchanged, and every query that ran holding the attacker's values only as typed terms."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Final

import pyoxigraph

from ratified_rdf import Brain, BrainError
from ratified_rdf.build import build
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.queries import QueryRun
from ratified_rdf.queries.files import QueryError, load_query
from ratified_rdf.trust import Reader, TenantIdError
from tests.pigeon import MANIFEST, make_pigeon_repo

DOCUMENTED: Final = (QueryError, BrainError, TenantIdError)
"""What an attack on a brain may raise: each a ValueError or RuntimeError with a sentence."""

_PLACEHOLDER: Final = re.compile(r"VALUES\s*\(([^)]*)\)\s*\{\s*\((?:\s*UNDEF\s*)+\)\s*\}")


def pigeon_brain(folder: Path) -> tuple[Brain, OxigraphStore]:
    """The pigeon brain built in memory from a fresh repository in ``folder``.

    This is what ``Brain.build(MANIFEST, source=…)`` does (a reader cleared for every graph,
    no audit log), except that the store stays in the caller's hand: the injection checks
    count and hash everything in it, catalog and all, before and after each attack.
    """
    store = OxigraphStore()
    build(MANIFEST, source=str(make_pigeon_repo(folder)), store=store)
    return Brain.from_store(store, reader=Reader(clearance="restricted")), store


def fingerprint(brain: Brain, store: OxigraphStore) -> tuple[object, ...]:
    """Everything the store holds, summarised: graph names, triple counts and a hash of every
    triple of every graph, the default graph's size, and the reader's content hash."""
    digest = hashlib.sha256()
    graphs = sorted(store.graphs())
    counts = []
    for graph in graphs:
        lines = sorted(str(triple) for triple in store.triples([graph]))
        counts.append(len(lines))
        digest.update(graph.encode() + b"\n" + "\n".join(lines).encode() + b"\n")
    default = store.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", None).rows[0]["n"].value
    return tuple(graphs), tuple(counts), default, digest.hexdigest(), brain.content_hash()


def values_problems(run: QueryRun) -> list[str]:
    """What is wrong with a query that ran, if anything: it must be its file's text exactly
    but for the ``VALUES`` row, and that row, evaluated on its own, must yield exactly the
    recorded parameters as terms of their declared kinds (IRIs, integers, plain strings).

    So a quote, brace, comment or keyword in a value either made it a different term (and the
    values differ), or it stayed inside its literal or IRI: it can never be query text.
    """
    query = load_query(run.name)
    if not query.params:
        return [] if run.sparql == query.text else [f"{run.name} ran text its file does not hold"]
    placeholder = _PLACEHOLDER.search(query.text)
    if placeholder is None:
        return [f"{run.name}.rq has no VALUES placeholder"]
    prefix, suffix = query.text[: placeholder.start()], query.text[placeholder.end() :]
    if not run.sparql.startswith(prefix) or not run.sparql.endswith(suffix):
        return [f"{run.name}: the text around the VALUES row changed"]
    values = run.sparql[len(prefix) : len(run.sparql) - len(suffix)]
    names = [v.lstrip("?$") for v in placeholder.group(1).split()]
    try:
        solutions = pyoxigraph.Store().query(f"SELECT * WHERE {{ {values} }}")
    except SyntaxError as error:
        return [f"{run.name}: the bound VALUES row does not parse alone ({error}): {values[:200]}"]
    assert isinstance(solutions, pyoxigraph.QuerySolutions)
    if sorted(v.value for v in solutions.variables) != sorted(names):
        return [f"{run.name}: the VALUES row binds other variables: {values[:200]}"]
    rows = list(solutions)
    kinds = {p.name: p.kind for p in query.params}
    problems: list[str] = []
    keys = dict(query.keys)
    for name in names:
        if name in keys:
            # A key is no parameter: in each row, a plain string of the row's values of the
            # parameters it is made of, joined by spaces (# Key), and nothing else.
            for row in rows:
                key, parts = row[name], [row[part] for part in keys[name]]
                if (
                    not isinstance(key, pyoxigraph.Literal)
                    or not key.datatype.value.endswith("#string")
                    or any(part is None for part in parts)
                    or key.value != " ".join(part.value for part in parts if part is not None)
                ):
                    problems.append(f"?{name} is not the key of {keys[name]}: {values[:200]}")
            continue
        terms = [row[name] for row in rows]
        given = run.params[name]
        if not terms:  # an empty tuple: no row at all
            if given != "":
                problems.append(f"?{name} has no value but was given {given!r}")
            continue
        if any(t is None for t in terms):
            problems.append(f"?{name} is unbound in {values[:200]}")
            continue
        kind = kinds[name]
        if kind == "iri":
            ok = all(isinstance(t, pyoxigraph.NamedNode) for t in terms) and (
                ", ".join(t.value for t in terms) == given
            )
        elif kind == "integer":
            given_values = given.split(", ") if len(terms) > 1 else [given]
            ok = all(isinstance(t, pyoxigraph.Literal) for t in terms) and [
                int(t.value) for t in terms
            ] == [int(v) for v in given_values]
        else:
            ok = (
                all(
                    isinstance(t, pyoxigraph.Literal) and t.datatype.value.endswith("#string")
                    for t in terms
                )
                and ", ".join(t.value for t in terms) == given
            )
        if not ok:
            problems.append(f"?{name} ({kind}) is not exactly {given[:100]!r}: {values[:200]}")
    return problems
