"""A VoID and DCAT description of what a reader may see of a brain: one ``void:Dataset`` (also
a ``dcat:Dataset``) with a subset per named graph, each with its counts, property and class
partitions, vocabularies, source, licence and clearance, plus the dump and endpoint as DCAT
distributions. Counts come from SPARQL over each graph (``sparql/graph_*.rq``), so they are
what a query sees."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyoxigraph import BlankNode, NamedNode, Triple

from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.mapping import XSD_INT, Batch
from ratified_rdf.graph.store import Term
from ratified_rdf.graph.vocab import term

MEDIA_TYPES = {
    "nquads": "application/n-quads",
    "trig": "application/trig",
    "turtle": "text/turtle",
    "ntriples": "application/n-triples",
    "jsonld": "application/ld+json",
}

RunQuery = Callable[[str, Sequence[str], dict[str, str]], list[dict[str, Term]]]


def describe(
    *,
    brain: str,
    title: str,
    run: str,
    graphs: dict[str, str],
    run_query: RunQuery,
    dump_url: str | None = None,
    dump_format: str = "nquads",
    endpoint: str | None = None,
) -> list[Triple]:
    """The description of ``brain`` as ``graphs`` (graph IRI → clearance level) show it.

    ``run_query(name, graphs, params)`` runs a named query over the given graphs.
    """
    out = Batch(brain, "dataset description")
    dataset = brain
    out.add(dataset, "rdf:type", term("void:Dataset").value)
    out.add(dataset, "rdf:type", v.DCAT + "Dataset")
    out.text(dataset, "dcterms:title", title)
    out.add(dataset, "prov:wasGeneratedBy", run)
    catalog = {r["graph"].value: r for r in run_query("graph_catalog", [], {"run": run})}
    total = 0
    vocabularies: set[str] = set()
    for graph, level in sorted(graphs.items()):
        [stats] = run_query("graph_statistics", [graph], {})
        count = int(stats["triples"].value)
        total += count
        out.add(dataset, "void:subset", graph)
        out.add(graph, "rdf:type", term("void:Dataset").value)
        out.typed(graph, "void:triples", count, XSD_INT)
        out.typed(graph, "void:distinctSubjects", int(stats["subjects"].value), XSD_INT)
        out.typed(graph, "void:distinctObjects", int(stats["objects"].value), XSD_INT)
        out.add(graph, "rr:clearance", v.clearance_iri(level))
        entry = catalog.get(graph)
        if entry is not None:
            out.text(graph, "rr:sourceKind", entry["source"].value)
            out.add(graph, "dcterms:source", entry["repository"].value)
            ended = entry["ended"]
            if not isinstance(ended, BlankNode):  # a blank node means nothing outside its graph
                out.add(graph, "dcterms:modified", ended)
            if "licence" in entry:
                out.add(graph, "dcterms:license", entry["licence"].value)
                out.add(dataset, "dcterms:license", entry["licence"].value)
        for number, row in enumerate(run_query("graph_partitions", [graph], {})):
            part = f"{graph}#partition-{number}"
            if "property" in row:
                out.add(graph, "void:propertyPartition", part)
                out.add(part, "void:property", row["property"].value)
                out.typed(part, "void:triples", int(row["count"].value), XSD_INT)
                vocabularies.add(_namespace(row["property"].value))
            else:
                out.add(graph, "void:classPartition", part)
                out.add(part, "void:class", row["class"].value)
                out.typed(part, "void:entities", int(row["count"].value), XSD_INT)
    out.typed(dataset, "void:triples", total, XSD_INT)
    # What the brain does not hold although its records name it: a reader of the description
    # should not take an RFC's stand-in sections, or a repository's unread drafts, as held.
    for row in run_query("held_gaps", sorted(graphs), {}) if graphs else []:
        if "file" in row:
            out.text(dataset, "rr:unreadFile", row["file"].value)
        elif "rfc" in row:
            out.add(dataset, "rr:textNotHeld", row["rfc"].value)
    for namespace in sorted(vocabularies):
        out.add(dataset, "void:vocabulary", namespace)
    if dump_url:
        distribution = f"{brain}#dump"
        out.add(dataset, "dcat:distribution", distribution)
        out.add(distribution, "rdf:type", v.DCAT + "Distribution")
        out.add(distribution, "dcat:downloadURL", dump_url)
        out.add(distribution, "dcat:mediaType", _media_type(dump_format))
        out.add(dataset, "void:dataDump", dump_url)
    if endpoint:
        service = f"{brain}#sparql"
        out.add(dataset, "void:sparqlEndpoint", endpoint)
        out.add(dataset, "dcat:distribution", service)
        out.add(service, "rdf:type", v.DCAT + "Distribution")
        out.add(service, "dcat:accessURL", endpoint)
    return list(out.triples)


def _namespace(iri: str) -> str:
    cut = max(iri.rfind("#"), iri.rfind("/"))
    return iri[: cut + 1]


def _media_type(fmt: str) -> NamedNode:
    return NamedNode(f"https://www.iana.org/assignments/media-types/{MEDIA_TYPES[fmt]}")


__all__ = ["MEDIA_TYPES", "describe"]
