"""Expertise scores → RDF: n-ary score nodes with the computation that produced them (PROV)."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from datetime import UTC, datetime

from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.discussion_mapping import SectionIris
from ratified_rdf.graph.mapping import (
    XSD_DEC,
    XSD_DT,
    XSD_INT,
    Batch,
    RunContext,
    canonical_decimal,
)
from ratified_rdf.graph.vocab import term
from ratified_rdf.records.expertise import ExpertiseRecords, ExpertiseScore
from ratified_rdf.records.manifest import DERIVED_FROM
from ratified_rdf.trust import Clearance

SCORES_PER_BATCH = 150


def expertise_source(level: Clearance) -> str:
    """The graph name of the scores computed for readers cleared for ``level``: ``expertise``
    for public, ``expertise-internal`` and so on above it."""
    return "expertise" if level is Clearance.PUBLIC else f"expertise-{level.value}"


def expertise_batches(
    records: ExpertiseRecords,
    sections: SectionIris,
    run: RunContext,
    level: Clearance = Clearance.PUBLIC,
    used: Collection[str] = DERIVED_FROM["expertise"],
    ended: datetime | None = None,
) -> Iterator[Batch]:
    """The computation (for readers cleared for ``level``, from the ``used`` sources' graphs,
    ended at ``ended``, default now), then its scores in batches small enough to validate in
    parallel. A run that maps its batches more than once passes ``ended``, so every mapping
    says the same time."""
    name = expertise_source(level)
    graph = run.graph(name)
    activity = f"{v.run_iri(run.run_id)}/computation/{name}"
    batch = Batch(graph, f"the {name} computation")
    batch.add(activity, "rdf:type", term("rr:Computation").value)
    batch.text(activity, "rr:algorithm", records.algorithm)
    batch.typed(activity, "prov:endedAtTime", ended or datetime.now(UTC), XSD_DT)
    for source in sorted(used):
        batch.add(activity, "prov:used", run.graph(source))
    yield batch
    for start in range(0, len(records.scores), SCORES_PER_BATCH):
        chunk = records.scores[start : start + SCORES_PER_BATCH]
        batch = Batch(graph, f"{name} scores {start + 1}–{start + len(chunk)}")
        for score in chunk:
            _score(batch, score, sections, activity, name, run.brain_id)
        yield batch


def _score(
    batch: Batch,
    score: ExpertiseScore,
    sections: SectionIris,
    activity: str,
    name: str,
    brain_id: str,
) -> None:
    person = v.person_iri(score.person)
    scope = sections(score.section) if score.section else None
    # A person's standing over a whole brain is that brain's: a group reads several brains'
    # at once, and one node with each brain's counts would mix them.
    iri = f"{person}/{name}/" + (scope.split("/id/", 1)[-1] if scope else f"overall/{brain_id}")
    batch.add(iri, "rdf:type", term("rr:ExpertiseScore").value)
    batch.add(iri, "rr:aboutPerson", person)
    if scope:
        batch.add(iri, "rr:scopeSection", scope)
    batch.typed(iri, "rr:postCount", score.posts, XSD_INT)
    batch.typed(iri, "rr:commitCount", score.commits, XSD_INT)
    batch.typed(iri, "rr:pageRank", canonical_decimal(score.pagerank), XSD_DEC)
    batch.typed(iri, "rr:betweenness", canonical_decimal(score.betweenness), XSD_DEC)
    batch.add(iri, "prov:wasGeneratedBy", activity)
