"""``Scope``: which graphs of a brain one reader reads, at its clearance, now or at a moment.

Scoping is always on. A query's dataset is built from the reader's tenant (only that tenant's
catalog and graphs are ever named) and clearance (only graphs at or below it): the current
run's readable graphs are the default graph of every query the reader runs.
"""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from ratified_rdf._errors import BrainError
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import TripleStore
from ratified_rdf.graph.writer import RunRecord, read_runs
from ratified_rdf.queries import run_query
from ratified_rdf.queries.run import source_of
from ratified_rdf.trust import Clearance, TenantId, can_read


class Scope(BaseModel):
    """A reader's view of one brain's runs, read from its catalog.

    ``read_graphs`` are the current run's readable graphs (every query's default graph);
    ``withheld_graphs`` those above the reader's clearance; ``graphs`` adds the catalog graph
    (runs and their provenance): what validation and dumps cover. They read the catalog as the
    reader may know it, without a word on the graphs withheld from them
    (:func:`~ratified_rdf.graph.publish.reader_catalog`).
    """

    model_config = ConfigDict(frozen=True)

    catalog: str
    clearance: Clearance
    runs: list[RunRecord]
    reviews: dict[str, Clearance]
    """The reviews graphs that exist for this brain, with the level each was written at."""
    read_graphs: list[str]
    withheld_graphs: list[str]
    graphs: list[str]

    @classmethod
    def read(
        cls, store: TripleStore, tenant: TenantId, brain_id: str, clearance: Clearance
    ) -> Scope:
        """The scope of ``tenant``'s brain ``brain_id`` for a reader at ``clearance``."""
        runs = read_runs(store, tenant, brain_id)
        levels = {v.reviews_graph(tenant, brain_id, c.value): c for c in Clearance}
        reviews = {g: levels[g] for g in store.graphs() if g in levels}
        readable, withheld = split(current_run(runs), reviews, clearance)
        catalog = v.catalog_graph(tenant, brain_id)
        return cls(
            catalog=catalog,
            clearance=clearance,
            runs=runs,
            reviews=reviews,
            read_graphs=readable,
            withheld_graphs=withheld,
            graphs=[*readable, catalog],
        )

    @property
    def current(self) -> RunRecord | None:
        """The current run, if the brain has one."""
        return current_run(self.runs)

    def run_at(self, as_of: datetime | None) -> RunRecord | None:
        """The current run, or the one that was current at ``as_of`` (transaction time)."""
        if as_of is None:
            return self.current
        moment = as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC)
        done = [r for r in self.runs if r.ended <= moment]
        return done[-1] if done else None

    def graphs_as_of(self, as_of: datetime) -> list[str]:
        """The graphs this reader read in the run current at ``as_of``; raises
        :class:`BrainError` when no run had ended by then."""
        run = self.run_at(as_of)
        if run is None:
            first = self.runs[0].ended.isoformat() if self.runs else "never"
            raise BrainError(
                f"The brain had no complete build by {as_of.isoformat()}; its first run ended "
                f"{first}."
            )
        return self.graphs_at(run)

    def graphs_at(self, run: RunRecord | None, clearance: Clearance | None = None) -> list[str]:
        """The graphs of ``run`` a reader at ``clearance`` (default: this scope's) reads."""
        return split(run, self.reviews, clearance or self.clearance)[0]

    def levels(self) -> dict[str, Clearance]:
        """Each graph of the current run and every reviews graph, with its clearance."""
        run = self.current
        return {**(run.graphs if run else {}), **self.reviews}


def current_run(runs: list[RunRecord]) -> RunRecord | None:
    """The run marked current among ``runs``, if any."""
    return next((r for r in runs if r.current), None)


def split(
    run: RunRecord | None, reviews: dict[str, Clearance], clearance: Clearance
) -> tuple[list[str], list[str]]:
    """The graphs of ``run`` (and the reviews graphs) a reader at ``clearance`` reads, and
    those withheld from them."""
    if run is None:
        return [], []
    graphs = {**run.graphs, **reviews}
    readable = [g for g, level in graphs.items() if can_read(clearance, level)]
    # Expertise is computed once per level: read only the highest one cleared for, of each
    # run (a group reads its members' runs, each with its own scores).
    best: dict[str, str] = {}
    for g in readable:
        if source_of(g) == "expertise":
            owner = g.rsplit("/", 1)[0]
            if owner not in best or graphs[g].rank > graphs[best[owner]].rank:
                best[owner] = g
    withheld = [g for g in graphs if not can_read(clearance, graphs[g])]
    kept = set(best.values())
    readable = [g for g in readable if source_of(g) != "expertise" or g in kept]
    return readable, withheld


def choose_brain(store: TripleStore, tenant: TenantId, brain_id: str | None) -> str:
    """The id of ``tenant``'s brain ``brain_id`` in ``store`` (its only one when ``None``);
    raises :class:`BrainError`, saying what the store holds, when there is none such."""
    ids = brain_ids(store, tenant)
    if brain_id is None and len(ids) > 1:
        # A store holding a working group's repositories holds one group brain that reads
        # them all: it is the brain meant when none is named.
        groups = group_ids(store, tenant)
        if len(groups) == 1:
            return groups[0]
    if not ids:
        raise BrainError(
            f"This store holds no brain for tenant {tenant!s} yet. Build one: "
            "ratified build records/tls13"
        )
    if brain_id is None and len(ids) > 1:
        raise BrainError(f"This store holds several brains ({', '.join(ids)}); name one.")
    if brain_id is not None and brain_id not in ids:
        raise BrainError(f"This store holds no brain {brain_id!r}; it holds {', '.join(ids)}.")
    return brain_id or ids[0]


def brain_ids(store: TripleStore, tenant: TenantId) -> list[str]:
    """The brains ``tenant`` holds: read from that tenant's catalog graphs and no others."""
    prefix = v.tenant_graphs(tenant)
    catalogs = [g for g in store.graphs() if g.startswith(prefix) and g.endswith("/catalog")]
    if not catalogs:
        return []
    rows, _ = run_query(store, catalogs, "brains")
    return sorted(row["brain"].value.rsplit("/", 1)[-1] for row in rows)


def group_ids(store: TripleStore, tenant: TenantId) -> list[str]:
    """The brains ``tenant`` holds whose current run includes other brains' graphs (a group
    of repositories, :mod:`ratified_rdf.group`)."""
    prefix = v.tenant_graphs(tenant)
    catalogs = [g for g in store.graphs() if g.startswith(prefix) and g.endswith("/catalog")]
    if not catalogs:
        return []
    rows, _ = run_query(store, catalogs, "group_brains")
    return sorted(row["brain"].value.rsplit("/", 1)[-1] for row in rows)
