"""Check the card view against the full graph: every view query against the full-path query it
says it reproduces, on every section a card can be asked about, and every shortcut against the
path it says it stands for.

Shared by the unit tests (the fictional Pigeon brain) and the corpus tests (TLS and QUIC). The
sections to ask about are read from the spec graph here, not from the view, and rows are
compared as multisets of normalised rows and, for the ordered queries, in order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ratified_rdf.graph.store import Queryable, Term
from ratified_rdf.queries.files import view_queries
from ratified_rdf.queries.run import run_query, source_of

RR = "https://w3id.org/ratified-rdf/ontology#"

_RFC_SECTIONS = f"""PREFIX rr: <{RR}>
SELECT ?rfc ?final ?number WHERE {{
  ?rfc rr:rfcNumber ?n ; rr:hasSection ?final .
  OPTIONAL {{ ?final rr:sectionNumber ?number }}
}}"""

_REVISION_SECTIONS = f"""PREFIX rr: <{RR}>
SELECT DISTINCT ?revision ?number WHERE {{
  ?revision rr:revisionOf ?draft ; rr:hasSection ?section .
  ?section rr:sectionNumber ?number .
}}"""

# A shortcut whose path is not in the full graph: each kind, checked against its own path.
_BROKEN_PATHS = f"""PREFIX rr: <{RR}>
PREFIX prov: <http://www.w3.org/ns/prov#>
SELECT ?shortcut WHERE {{
  {{
    ?shortcut a rr:AlignmentShortcut ; prov:wasDerivedFrom ?alignment ; rr:shortcutFrom ?section ;
              rr:viewDocument ?document .
    FILTER NOT EXISTS {{ ?alignment rr:alignedSection ?section . ?document rr:hasSection ?section }}
  }} UNION {{
    ?shortcut a rr:AlignmentShortcut ; prov:wasDerivedFrom ?alignment ; rr:shortcutTo ?final .
    FILTER NOT EXISTS {{ ?alignment rr:finalSection ?final }}
  }} UNION {{
    ?shortcut a rr:CitationShortcut ; prov:wasDerivedFrom ?citation ; rr:shortcutFrom ?post ;
              rr:viewSection ?section ; rr:shortcutTo ?final .
    FILTER NOT EXISTS {{
      ?citation rr:inPost ?post ; rr:citesSection ?section .
      ?section rr:alignsWith? ?final .
    }}
  }} UNION {{
    ?shortcut a rr:ChangeShortcut ; rr:shortcutFrom ?commit ; rr:viewSection ?section ;
              rr:shortcutTo ?final .
    FILTER NOT EXISTS {{ ?commit rr:changedSection ?section . ?section rr:alignsWith? ?final }}
  }}
}}"""


@dataclass
class ViewCheck:
    """What the comparison found: how many cases and rows each query was compared on, and
    every case where the view's rows differ from the full path's."""

    cases: Counter[str] = field(default_factory=Counter)
    rows: Counter[str] = field(default_factory=Counter)
    differences: list[str] = field(default_factory=list)
    broken_paths: list[str] = field(default_factory=list)


def _normalised(rows: Sequence[dict[str, Term]]) -> list[tuple[tuple[str, str], ...]]:
    return [tuple(sorted((name, str(value)) for name, value in row.items())) for row in rows]


def _ordered_by(rows: Sequence[dict[str, Term]], keys: Sequence[str]) -> list[tuple[str, ...]]:
    return [tuple(str(row.get(key, "")) for key in keys) for row in rows]


ORDERED = {"section_posts": ("created", "post"), "section_commits": ("date", "commit")}
"""The full-path queries with an ORDER BY, and the columns it orders by."""


def check_view(store: Queryable, graphs: Sequence[str], *, became: bool = True) -> ViewCheck:
    """Compare every view query with the full-path query it reproduces over ``graphs`` (one
    run's), on every RFC section (posts, commits, history) and, with ``became``, on every
    numbered section of every revision."""
    check = ViewCheck()
    spec = [g for g in graphs if source_of(g) in ("spec", "records")]
    finals = store.query(_RFC_SECTIONS, spec).rows
    calls: list[tuple[str, dict[str, str]]] = []
    for row in finals:
        final = row["final"].value
        calls += [("section_posts", {"final": final}), ("section_commits", {"final": final})]
        if "number" in row:
            calls.append(
                ("section_history", {"rfc": row["rfc"].value, "sectionNumber": row["number"].value})
            )
    if became:
        revisions = sorted(
            {row["revision"].value for row in store.query(_REVISION_SECTIONS, spec).rows}
        )
        calls += [("revision_chain", {"start": revision}) for revision in revisions]
        for row in store.query(_REVISION_SECTIONS, spec).rows:
            calls.append(
                (
                    "section_became",
                    {"revision": row["revision"].value, "sectionNumber": row["number"].value},
                )
            )
    views = view_queries()
    for name, params in calls:
        full, _ = run_query(store, graphs, name, dict(params))
        view, record = run_query(store, graphs, views[name], dict(params))
        check.cases[name] += 1
        check.rows[name] += len(full)
        assert record.reproduces == name
        if Counter(_normalised(full)) != Counter(_normalised(view)):
            check.differences.append(
                f"{name} {params}: {len(full)} rows by the full path, {len(view)} by the view"
            )
        elif name in ORDERED and _ordered_by(full, ORDERED[name]) != _ordered_by(
            view, ORDERED[name]
        ):
            check.differences.append(f"{name} {params}: the same rows in another order")
    check.broken_paths = [
        row["shortcut"].value for row in store.query(_BROKEN_PATHS, list(graphs)).rows
    ]
    return check
