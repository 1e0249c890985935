"""Expertise scores → RDF: n-ary score nodes with the computation that produced them (PROV)."""

from __future__ import annotations

from collections.abc import Iterator
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

SCORES_PER_BATCH = 150


def expertise_batches(
    records: ExpertiseRecords, sections: SectionIris, run: RunContext
) -> Iterator[Batch]:
    """The computation, then its scores in batches small enough to validate in parallel."""
    activity = f"{v.run_iri(run.run_id)}/computation/expertise"
    batch = Batch(run.graph("expertise"), "the expertise computation")
    batch.add(activity, "rdf:type", term("rr:Computation").value)
    batch.text(activity, "rr:algorithm", records.algorithm)
    batch.typed(activity, "prov:endedAtTime", datetime.now(UTC), XSD_DT)
    for source in DERIVED_FROM["expertise"]:
        batch.add(activity, "prov:used", run.graph(source))
    yield batch
    for start in range(0, len(records.scores), SCORES_PER_BATCH):
        chunk = records.scores[start : start + SCORES_PER_BATCH]
        batch = Batch(run.graph("expertise"), f"expertise scores {start + 1}–{start + len(chunk)}")
        for score in chunk:
            _score(batch, score, sections, activity)
        yield batch


def _score(batch: Batch, score: ExpertiseScore, sections: SectionIris, activity: str) -> None:
    person = v.person_iri(score.person)
    scope = sections(score.section) if score.section else None
    iri = f"{person}/expertise/" + (scope.split("/id/", 1)[-1] if scope else "overall")
    batch.add(iri, "rdf:type", term("rr:ExpertiseScore").value)
    batch.add(iri, "rr:aboutPerson", person)
    if scope:
        batch.add(iri, "rr:scopeSection", scope)
    batch.typed(iri, "rr:postCount", score.posts, XSD_INT)
    batch.typed(iri, "rr:commitCount", score.commits, XSD_INT)
    batch.typed(iri, "rr:pageRank", canonical_decimal(score.pagerank), XSD_DEC)
    batch.typed(iri, "rr:betweenness", canonical_decimal(score.betweenness), XSD_DEC)
    batch.add(iri, "prov:wasGeneratedBy", activity)
