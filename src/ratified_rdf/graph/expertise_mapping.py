"""Expertise scores → RDF: n-ary score nodes with the computation that produced them (PROV)."""

from __future__ import annotations

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
from ratified_rdf.records.expertise import ExpertiseRecords


def expertise_batch(records: ExpertiseRecords, sections: SectionIris, run: RunContext) -> Batch:
    """Every score of one computation, in graph ``expertise``."""
    batch = Batch(run.graph("expertise"), f"{len(records.scores)} expertise scores")
    activity = f"{v.run_iri(run.run_id)}/computation/expertise"
    batch.add(activity, "rdf:type", term("rr:Computation").value)
    batch.text(activity, "rr:algorithm", records.algorithm)
    batch.typed(activity, "prov:endedAtTime", datetime.now(UTC), XSD_DT)
    for source in ("github", "mail", "git", "people"):
        batch.add(activity, "prov:used", run.graph(source))
    for score in records.scores:
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
    return batch
