"""Records → RDF: every record becomes triples in a batch bound for one named graph.

Batches are cut along records (one revision with its sections, one RFC, the alignments of one
document) so that a rejected batch names the record that failed and nothing of it is written.
Edge attributes such as similarity live on n-ary alignment nodes, never on RDF-star triples, so
the graph stays plain SPARQL 1.1 for any engine.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, overload

from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, parse

from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import ntriples
from ratified_rdf.graph.vocab import term
from ratified_rdf.records.alignment import STILL_CHANGING_BELOW
from ratified_rdf.records.manifest import UNNUMBERED
from ratified_rdf.records.models import (
    AlignmentRecord,
    CommitRef,
    KeptRevision,
    RevisionRecord,
    RfcRecord,
    SpecRecords,
)
from ratified_rdf.sources.document import Author, ParsedDocument, normalise_heading
from ratified_rdf.trust import TenantId

if TYPE_CHECKING:
    # The online sources bring httpx: a reader imports this module (through the writer's
    # run records) and never fetches.
    from ratified_rdf.sources.online.datatracker import DraftFacts

A = term("rdf:type")
XSD_INT = NamedNode(v.XSD + "integer")
XSD_DEC = NamedNode(v.XSD + "decimal")
XSD_BOOL = NamedNode(v.XSD + "boolean")
XSD_DT = NamedNode(v.XSD + "dateTime")
XSD_GYM = NamedNode(v.XSD + "gYearMonth")
XSD_URI = NamedNode(v.XSD + "anyURI")


@dataclass
class Batch:
    """Triples bound for one named graph, and the record they came from."""

    graph: str
    source: str
    triples: list[Triple] | DocumentTriples | MappedTriples = field(
        default_factory=lambda: MappedTriples()
    )
    """Its triples. A mapped batch holds them as the N-Triples lines it was given
    (:class:`MappedTriples`), a view's as the lines it was made from (:class:`DocumentTriples`);
    either is parsed into terms only if something reads them as terms. A list given here takes
    more triples as terms."""
    shared: bool = False
    """Whether other batches' records lead to its nodes for what a view derives of them (the
    manifest's facts, an RFC's sections, which every revision's alignments end in): a view
    derived a group of batches at a time reads it beside every group
    (:mod:`~ratified_rdf.graph.views`)."""
    document: bytes | None = field(default=None, repr=False, compare=False)
    """``triples`` as N-Triples, one triple a line as Oxigraph writes them, when whoever made
    the batch had them already (a view's batch is made from its lines): the writer stages
    this instead of writing the triples out again. None: the writer writes them."""
    _subject: NamedNode | None = field(default=None, init=False, repr=False, compare=False)

    def add(self, subject: str, predicate: str, obj: NamedNode | Literal | str) -> None:
        """Add one triple; a plain ``str`` object is an IRI. An IRI that is not one raises
        ValueError, naming it."""
        triples = self.triples
        if isinstance(triples, MappedTriples):
            if isinstance(obj, str):
                NamedNode(obj)  # checks it is an IRI (ValueError), as a term would
                written = f"<{obj}>"
            else:
                written = str(obj)
            triples.written(subject, _prefixed_predicate(predicate), written)
            return
        if not isinstance(triples, list):
            raise TypeError("A batch made from its N-Triples lines takes no more triples.")
        node = NamedNode(obj) if isinstance(obj, str) else obj
        # A record's triples come subject by subject: its node is made once, not per triple.
        last = self._subject
        if last is None or last.value != subject:
            last = self._subject = NamedNode(subject)
        triples.append(Triple(last, term(predicate), node))

    def text(self, subject: str, predicate: str, value: str | None) -> None:
        """Add a string literal, skipping absent values."""
        if value is None:
            return
        if isinstance(self.triples, MappedTriples):
            self.triples.written(subject, _prefixed_predicate(predicate), quoted(value))
        else:
            self.add(subject, predicate, Literal(value))

    def typed(self, subject: str, predicate: str, value: object, datatype: NamedNode) -> None:
        """Add a typed literal (a date-time in canonical form, see :func:`canonical_datetime`)."""
        lexical = canonical_datetime(value) if datatype == XSD_DT else _lexical(value)
        if isinstance(self.triples, MappedTriples):
            written = quoted(lexical)
            if datatype.value != XSD_STRING:  # N-Triples writes an xsd:string plain
                written = f"{written}^^<{datatype.value}>"
            self.triples.written(subject, _prefixed_predicate(predicate), written)
        else:
            self.add(subject, predicate, Literal(lexical, datatype=datatype))

    def ntriples(self) -> bytes:
        """Its triples as the N-Triples document Oxigraph writes (one triple a line): the
        lines it holds, or its terms written out."""
        if self.document is not None:
            return self.document
        triples = self.triples
        return triples.document if isinstance(triples, _LineTriples) else ntriples(triples)


XSD_STRING = v.XSD + "string"

_NTRIPLES_ESCAPES = str.maketrans(
    {
        **{code: f"\\u{code:04X}" for code in [*range(0x20), 0x7F, 0xFFFE, 0xFFFF]},
        0x08: "\\b",
        0x09: "\\t",
        0x0A: "\\n",
        0x0C: "\\f",
        0x0D: "\\r",
        0x22: '\\"',
        0x5C: "\\\\",
    }
)
"""Every escape N-Triples (as Oxigraph writes it) makes. JSON's are the same but for the
control characters without a short escape (JSON writes ``\\u001f``, Oxigraph ``\\u001F``),
and DEL, U+FFFE and U+FFFF, which JSON leaves as they are."""


def quoted(value: str) -> str:
    """``value`` as an N-Triples string literal, written exactly as Oxigraph writes one.

    JSON's string escapes are N-Triples' for every character but a few rare ones
    (:data:`_NTRIPLES_ESCAPES`), and the json module writes them in C, far quicker than a
    translation table: a text with one of those (found in what JSON wrote, a ``\\u`` escape
    or the character itself) is written by the table instead."""
    written = encode_basestring(value)
    if (
        "\\u" in written
        or "\x7f" in written
        or (not value.isascii() and ("\ufffe" in written or "\uffff" in written))
    ):
        return f'"{value.translate(_NTRIPLES_ESCAPES)}"'
    return written


class _LineTriples(Sequence[Triple]):
    """Triples held as an N-Triples document, one triple a line as Oxigraph writes them;
    parsed into terms only when they are read as terms."""

    _parsed: list[Triple] | None = None

    @property
    def document(self) -> bytes:
        """The triples as N-Triples."""
        raise NotImplementedError

    @property
    def parsed(self) -> bool:
        """Whether they have been read as terms (and are held as terms too)."""
        return self._parsed is not None

    @overload
    def __getitem__(self, index: int) -> Triple: ...

    @overload
    def __getitem__(self, index: slice) -> list[Triple]: ...

    def __getitem__(self, index: int | slice) -> Triple | list[Triple]:
        return self._terms()[index]

    def __iter__(self) -> Iterator[Triple]:
        return iter(self._terms())

    def _terms(self) -> list[Triple]:
        if self._parsed is None:
            self._parsed = [
                quad.triple for quad in parse(self.document, format=RdfFormat.N_TRIPLES)
            ]
        return self._parsed


class DocumentTriples(_LineTriples):
    """A batch's triples held as their N-Triples document (one triple a line, as Oxigraph
    writes them), parsed into terms only when they are read as terms; their number is the
    document's lines. A card view's batch is made from its lines, and staging it reads only
    those (the gate context reads types and touched nodes off them): at ×100, parsing every
    view batch back into terms took about a minute of the build's one busy core."""

    def __init__(self, document: bytes) -> None:
        """``document``: the triples, as :func:`~ratified_rdf.graph.store.ntriples` writes
        them."""
        self._document = document
        self._count = document.count(b"\n")

    @property
    def document(self) -> bytes:
        """The triples as N-Triples, as given."""
        return self._document

    def __len__(self) -> int:
        return self._count


class MappedTriples(_LineTriples):
    """A mapped batch's triples, written as N-Triples lines as they are added, with what
    staging reads of them kept on the way: the IRIs they have as subjects, and their types.

    Made into pyoxigraph terms, then written out again for the store and the gate, a mapped
    triple cost several times what its line costs, on the build's busiest core; and nothing
    reads a mapped batch's terms on the way to the store (docs/design.md)."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self._document: bytes | None = None
        self._last = ""  # a record's triples come subject by subject
        self._written_subject = ""
        self.subjects: set[str] = set()
        """The IRIs the triples have as subjects (every one: a mapped batch has no blank
        nodes)."""
        self.types: list[tuple[str, str]] = []
        """(IRI, its type as N-Triples writes it) of each ``rdf:type`` triple."""

    def add(self, subject: str, predicate: str, obj: str) -> None:
        """Add the triple whose object is ``obj`` as N-Triples writes it; ``subject`` and
        ``predicate`` are IRIs (ValueError if one is none)."""
        self.written(subject, _predicate(predicate), obj)

    def written(self, subject: str, predicate: tuple[str, bool], obj: str) -> None:
        """:meth:`add`, given the predicate as :func:`_predicate` writes it (the mapping
        looks it up once per prefixed name, not once per triple)."""
        if subject != self._last:
            NamedNode(subject)  # checks it is an IRI (ValueError), as a term would
            self._written_subject = f"<{subject}>"
            self._last = subject
            self.subjects.add(subject)
        written, typing = predicate
        if typing:
            self.types.append((subject, obj))
        self._lines.append(f"{self._written_subject} {written} {obj} .\n")
        self._document = self._parsed = None

    @property
    def document(self) -> bytes:
        """The lines so far, as one document."""
        if self._document is None:
            self._document = "".join(self._lines).encode()
        return self._document

    def __len__(self) -> int:
        return len(self._lines)


@lru_cache(maxsize=1024)
def _predicate(iri: str) -> tuple[str, bool]:
    """A predicate's IRI as N-Triples writes it (ValueError if it is none), and whether it is
    ``rdf:type``."""
    node = NamedNode(iri)
    return str(node), node == A


@lru_cache(maxsize=1024)
def _prefixed_predicate(prefixed: str) -> tuple[str, bool]:
    """:func:`_predicate` of a prefixed name (``rdf:type``)."""
    return _predicate(term(prefixed).value)


def canonical_decimal(value: float) -> str:
    """xsd:decimal in canonical form ("1", "0.9"), as stores normalise it, so a re-read
    value compares equal to the written one."""
    return format(Decimal(str(round(value, 6))).normalize(), "f")


def canonical_datetime(value: object) -> str:
    """xsd:dateTime in canonical form, as stores normalise it ("…T15:13:00Z", not
    "…T15:13:00+00:00"), so a re-read value compares equal to the written one: a batch checked
    beside what is stored then holds each date once, in one spelling."""
    lexical = value.isoformat() if isinstance(value, datetime) else str(value)
    if lexical.endswith("+00:00"):
        lexical = lexical.removesuffix("+00:00") + "Z"
    # Fractional seconds without trailing zeros, as stores keep them (".99745", not ".997450";
    # none at all for ".000000"): else a time with microseconds ending in 0 is spelt twice.
    return _TRAILING_ZEROS.sub(lambda m: m.group(1).rstrip("0").rstrip("."), lexical, count=1)


_TRAILING_ZEROS = re.compile(r"(\.\d+)(?=Z$|[+-]\d\d:\d\d$|$)")


def _lexical(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


@dataclass(frozen=True)
class RunContext:
    """Where a run's batches go."""

    tenant: TenantId
    brain_id: str
    run_id: str

    def graph(self, source: str) -> str:
        """The named graph for ``source`` (a source's name, :data:`~ratified_rdf.records.
        manifest.SourceName`, or a derived graph's, ``expertise-internal``) in this run."""
        return v.graph_iri(self.tenant, self.brain_id, self.run_id, source)


def spec_batches(
    records: SpecRecords,
    run: RunContext,
    person_of: Callable[[Author], str | None] | None = None,
    facts: Mapping[str, DraftFacts] | None = None,
    current_from: Mapping[str, datetime] | None = None,
) -> Iterator[Batch]:
    """All batches for one read of a specification repository.

    ``person_of`` maps a byline to a resolved person's IRI; without it a byline becomes a
    person of its own, named by the document. ``current_from`` gives, by revision name, when
    the build dates it current (its window's start), written as ``rr:currentFrom``.
    """
    yield _records_batch(records, run, facts or {}, person_of)
    documents = {r.name: (v.revision_iri(r.draft, r.number), r.document) for r in records.revisions}
    documents.update(
        {r.name: (v.revision_iri(r.draft, r.number), r.document) for r in records.kept_revisions}
    )
    documents.update({r.name: (v.document_iri(r.name), r.document) for r in records.rfcs})
    aligned: dict[str, list[AlignmentRecord]] = {}
    for alignment in records.alignments:
        aligned.setdefault(alignment.source_document, []).append(alignment)
    # A document's alignments travel in its own batch: its sections are then validated once,
    # with the rr:alignsWith shortcuts they carry, not again in a batch of their own.
    for rfc in records.rfcs:
        batch = _rfc_batch(records, rfc, run)
        _add_alignments(batch, aligned.get(rfc.name, []), documents)
        yield batch
    successors = _successors(records)
    standing = _standing_revisions(records)
    for revision in records.revisions:
        batch = _revision_batch(records, revision, successors, run, person_of)
        if standing.get(revision.draft) == revision.number:
            # A draft that became no RFC: its last revision's sections are the ones its
            # section cards are about, as an RFC's are when its text is not held.
            iri = v.revision_iri(revision.draft, revision.number)
            batch.add(v.document_iri(revision.draft), "rr:sectionsFrom", iri)
        start = (current_from or {}).get(revision.name)
        if start is not None:
            batch.typed(
                v.revision_iri(revision.draft, revision.number), "rr:currentFrom", start, XSD_DT
            )
        _add_alignments(batch, aligned.get(revision.name, []), documents)
        yield batch
    for kept in records.kept_revisions:
        batch = _kept_revision_batch(records, kept, successors, run, person_of)
        _add_alignments(batch, aligned.get(kept.name, []), documents)
        yield batch


def _kept_revision_batch(
    records: SpecRecords,
    kept: KeptRevision,
    successors: Mapping[str, str],
    run: RunContext,
    person_of: Callable[[Author], str | None] | None,
) -> Batch:
    """A revision the repository lacks, read from a text kept in the records folder: derived
    from the IETF archive's copy rather than a commit, dated by its posting."""
    batch = Batch(run.graph("spec"), f"{kept.name} ({kept.provenance})")
    iri = v.revision_iri(kept.draft, kept.number)
    batch.add(iri, "rdf:type", term("rr:Revision").value)
    batch.add(iri, "rr:revisionOf", v.document_iri(kept.draft))
    batch.text(iri, "rr:revisionNumber", kept.number)
    batch.text(iri, "rdfs:label", kept.name)
    batch.text(iri, "dcterms:title", kept.document.title)
    batch.text(iri, "rr:revisionProvenance", kept.provenance)
    batch.text(iri, "rr:sourceFile", kept.file)
    batch.text(iri, "rr:readingGap", kept.document.gap)
    batch.typed(iri, "prov:generatedAtTime", kept.posted_at, XSD_DT)
    batch.add(iri, "foaf:page", v.revision_url(kept.draft, kept.number))
    batch.add(iri, "prov:hadPrimarySource", kept.url)
    batch.add(kept.url, "rdf:type", term("rr:ArchivedText").value)
    _successor_and_authors(batch, iri, records, kept, successors, person_of)
    _sections(
        batch, iri, kept.document, lambda n: v.revision_section_url(kept.draft, kept.number, n)
    )
    return batch


def _standing_revisions(records: SpecRecords) -> dict[str, str]:
    """Draft name → the number of its last revision, for each draft that became no RFC and
    that no other draft replaced."""
    heads = {d.name for d in records.drafts if d.became is None and d.replaced_by is None}
    out: dict[str, str] = {}
    for revision in records.revisions:
        if revision.draft in heads and revision.number > out.get(revision.draft, ""):
            out[revision.draft] = revision.number
    return out


def _records_batch(
    records: SpecRecords,
    run: RunContext,
    facts: Mapping[str, DraftFacts],
    person_of: Callable[[Author], str | None] | None,
) -> Batch:
    """The manifest's public facts (the brain, its repository, drafts and RFCs) and the
    Datatracker's, where the records hold them (each draft's group, chairs, area directors)."""
    batch = Batch(run.graph("records"), f"manifest of {records.brain.id}", shared=True)
    brain = v.brain_iri(records.brain.tenant, records.brain.id)
    repo = v.repository_iri(records.brain.repository)
    batch.add(brain, "rdf:type", term("void:Dataset").value)
    batch.text(brain, "dcterms:title", records.brain.title)
    batch.add(brain, "dcterms:source", repo)
    batch.add(repo, "rdf:type", term("rr:SourceRepository").value)
    batch.add(repo, "foaf:page", records.brain.repository)
    batch.typed(repo, "rr:repositoryUrl", records.brain.repository, XSD_URI)
    for path in records.unread_files:
        batch.text(repo, "rr:unreadFile", path)
    for draft in records.drafts:
        iri = v.document_iri(draft.name)
        batch.add(iri, "rdf:type", term("rr:Draft").value)
        batch.text(iri, "rr:draftName", draft.name)
        batch.text(iri, "dcterms:title", draft.title)
        batch.add(iri, "foaf:page", v.draft_url(draft.name))
        if draft.became:
            batch.add(iri, "rr:became", v.document_iri(draft.became))
        for number in draft.missing_revisions:
            batch.text(iri, "rr:missingRevision", number)
        if draft.replaced_by:
            batch.add(iri, "dcterms:isReplacedBy", v.document_iri(draft.replaced_by))
            batch.add(v.document_iri(draft.replaced_by), "dcterms:replaces", iri)
        known = facts.get(draft.name)
        if known is not None:
            batch.text(iri, "rr:workingGroup", known.group)
            for role, names in (
                ("rr:chair", known.chairs),
                ("rr:areaDirector", known.area_directors),
            ):
                for name in names:
                    author = Author(name=name)
                    resolved = person_of(author) if person_of else None
                    batch.add(iri, role, resolved or _person(batch, author))
    for rfc in records.rfcs:
        iri = v.document_iri(rfc.name)
        batch.add(iri, "rdf:type", term("rr:RFC").value)
        batch.typed(iri, "rr:rfcNumber", rfc.number, XSD_INT)
        batch.text(iri, "dcterms:title", rfc.title)
        batch.typed(iri, "dcterms:issued", rfc.published, XSD_GYM)
        batch.add(iri, "foaf:page", v.rfc_url(rfc.name))
        for old in rfc.obsoletes:
            batch.add(iri, "rr:obsoletes", v.document_iri(f"rfc{old}"))
    return batch


def _rfc_batch(records: SpecRecords, rfc: RfcRecord, run: RunContext) -> Batch:
    iri = v.document_iri(rfc.name)
    if rfc.sections_from is not None:
        # The repository does not hold the RFC's text: the last revision's sections stand
        # for its own, numbered and linked as that revision has them, and the graph says so.
        standing = next(r for r in records.revisions if r.name == rfc.sections_from)
        batch = Batch(run.graph("spec"), f"{rfc.name} as {standing.name}", shared=True)
        batch.add(iri, "rr:sectionsFrom", v.revision_iri(standing.draft, standing.number))
        _sections(
            batch,
            iri,
            rfc.document,
            lambda n: v.revision_section_url(standing.draft, standing.number, n),
        )
        return batch
    # A text kept in the records folder (no ref) is named by its path there.
    where = f"{rfc.ref}:{rfc.file}" if rfc.ref is not None else f"records:{rfc.file}"
    batch = Batch(run.graph("spec"), f"{rfc.name} at {where}", shared=True)
    if rfc.commit is not None:
        batch.add(iri, "prov:wasDerivedFrom", _commit(batch, records, rfc.commit))
    batch.text(iri, "rr:sourceFile", rfc.file)
    _sections(batch, iri, rfc.document, lambda n: v.rfc_section_url(rfc.name, n))
    return batch


def _successor_and_authors(
    batch: Batch,
    iri: str,
    records: SpecRecords,
    revision: RevisionRecord | KeptRevision,
    successors: Mapping[str, str],
    person_of: Callable[[Author], str | None] | None,
) -> None:
    """What follows a revision (the next one, else the RFC its draft became) and who wrote
    it, alike for a revision read from git and one kept in the records folder."""
    successor = successors.get(revision.name)
    if successor is not None:
        batch.add(iri, "rr:supersededBy", successor)
    else:
        draft = next(d for d in records.drafts if d.name == revision.draft)
        if draft.became:
            batch.add(iri, "rr:became", v.document_iri(draft.became))
    for author in revision.document.authors:
        resolved = person_of(author) if person_of else None
        batch.add(iri, "dcterms:creator", resolved or _person(batch, author))


def _revision_batch(
    records: SpecRecords,
    revision: RevisionRecord,
    successors: Mapping[str, str],
    run: RunContext,
    person_of: Callable[[Author], str | None] | None,
) -> Batch:
    batch = Batch(run.graph("spec"), f"{revision.name} ({revision.provenance}):{revision.file}")
    iri = v.revision_iri(revision.draft, revision.number)
    batch.add(iri, "rdf:type", term("rr:Revision").value)
    batch.add(iri, "rr:revisionOf", v.document_iri(revision.draft))
    batch.text(iri, "rr:revisionNumber", revision.number)
    batch.text(iri, "rdfs:label", revision.name)
    batch.text(iri, "dcterms:title", revision.document.title)
    if revision.tag is not None:
        batch.text(iri, "rr:tag", revision.tag)
    if revision.provenance:
        batch.text(iri, "rr:revisionProvenance", revision.provenance)
    batch.text(iri, "rr:sourceFile", revision.file)
    batch.text(iri, "rr:readingGap", revision.document.gap)
    batch.typed(iri, "prov:generatedAtTime", revision.commit.committed_at, XSD_DT)
    # An unnumbered revision has no page of its own at the datatracker: its draft's is it.
    batch.add(
        iri,
        "foaf:page",
        v.draft_url(revision.draft)
        if revision.number == UNNUMBERED
        else v.revision_url(revision.draft, revision.number),
    )
    batch.add(iri, "prov:wasDerivedFrom", _commit(batch, records, revision.commit))
    _successor_and_authors(batch, iri, records, revision, successors, person_of)
    _sections(
        batch,
        iri,
        revision.document,
        lambda n: v.revision_section_url(revision.draft, revision.number, n),
    )
    return batch


def _successors(records: SpecRecords) -> dict[str, str]:
    """Each revision's next revision of the same text (its IRI), by the revision's name: the
    draft's next number, or the replacing draft's first. A revision with none is left out.
    (Found once for the run: found per revision, by scanning every revision, it grew with the
    square of their number.)"""
    numbers: dict[str, list[str]] = {}
    every: list[RevisionRecord | KeptRevision] = [*records.revisions, *records.kept_revisions]
    for revision in every:
        numbers.setdefault(revision.draft, []).append(revision.number)
    for found in numbers.values():
        found.sort()
    replaced_by = {d.name: d.replaced_by for d in records.drafts}
    successors: dict[str, str] = {}
    for revision in every:
        later = [n for n in numbers[revision.draft] if n > revision.number]
        if later:
            successors[revision.name] = v.revision_iri(revision.draft, later[0])
            continue
        replacing = replaced_by.get(revision.draft)
        if replacing and numbers.get(replacing):
            successors[revision.name] = v.revision_iri(replacing, numbers[replacing][0])
    return successors


def section_iris(document: str, parsed: ParsedDocument) -> list[str]:
    """The IRI of every section of ``parsed``, in document order."""
    iris: list[str] = []
    for section in parsed.sections:
        iri = v.section_iri(document, section.number, section.heading)
        if iri in iris:  # two unnumbered sections with one heading
            iri = f"{iri}-{section.position}"
        iris.append(iri)
    return iris


def _sections(
    batch: Batch, document: str, parsed: ParsedDocument, url: Callable[[str | None], str]
) -> None:
    iris = section_iris(document, parsed)
    for section, iri in zip(parsed.sections, iris, strict=True):
        batch.add(document, "rr:hasSection", iri)
        batch.add(iri, "rdf:type", term("rr:Section").value)
        batch.text(iri, "rr:sectionNumber", section.number)
        batch.text(iri, "dcterms:title", section.heading)
        batch.text(iri, "rr:headingKey", normalise_heading(section.heading))
        batch.text(iri, "rr:anchor", section.anchor)
        batch.typed(iri, "rr:position", section.position, XSD_INT)
        batch.typed(iri, "rr:isAppendix", section.appendix, XSD_BOOL)
        batch.text(iri, "rr:text", section.body)
        batch.text(iri, "rr:textSha256", hashlib.sha256(section.body.encode()).hexdigest())
        batch.add(iri, "foaf:page", url(section.number))
        if section.parent is not None:
            batch.add(iri, "rr:parentSection", iris[section.parent])


def _add_alignments(
    batch: Batch,
    alignments: list[AlignmentRecord],
    documents: dict[str, tuple[str, ParsedDocument]],
) -> None:
    """What each section of one document became in its final RFC (n-ary nodes + shortcuts)."""
    if not alignments:
        return
    source_iri, source_doc = documents[alignments[0].source_document]
    source_sections = section_iris(source_iri, source_doc)
    target_sections: dict[str, list[str]] = {}
    for record in alignments:
        target_iri, target_doc = documents[record.target_rfc]
        section_iri = source_sections[record.source_position]
        iri = v.alignment_iri(section_iri, record.target_rfc)
        # A match has both a position in the final RFC and a similarity; else no counterpart.
        position, similarity = record.target_position, record.similarity
        matched = position is not None and similarity is not None
        kind = "rr:SectionAlignment" if matched else "rr:NoCounterpart"
        batch.add(iri, "rdf:type", term(kind).value)
        batch.add(iri, "rr:alignedSection", section_iri)
        batch.add(iri, "rr:finalDocument", target_iri)
        batch.add(iri, "rr:alignmentRule", v.rule_iri(record.rule.value))
        if position is not None and similarity is not None:
            if record.target_rfc not in target_sections:
                target_sections[record.target_rfc] = section_iris(target_iri, target_doc)
            final_iri = target_sections[record.target_rfc][position]
            batch.add(iri, "rr:finalSection", final_iri)
            batch.add(section_iri, "rr:alignsWith", final_iri)
            batch.typed(iri, "rr:textSimilarity", canonical_decimal(similarity), XSD_DEC)
            batch.typed(iri, "rr:stillChanging", similarity < STILL_CHANGING_BELOW, XSD_BOOL)


def _commit(batch: Batch, records: SpecRecords, commit: CommitRef) -> str:
    public = commit.public_commit or commit.commit
    iri = v.commit_iri(records.brain.repository, public)
    batch.add(iri, "rdf:type", term("rr:Commit").value)
    batch.text(iri, "rr:commitId", public)
    batch.typed(iri, "prov:generatedAtTime", commit.committed_at, XSD_DT)
    batch.add(iri, "foaf:page", v.commit_url(records.brain.repository, public))
    return iri


def _person(batch: Batch, author: Author) -> str:
    iri = v.person_iri(author.name)
    batch.add(iri, "rdf:type", term("foaf:Person").value)
    batch.text(iri, "foaf:name", author.name)
    if author.email:
        batch.add(iri, "foaf:mbox", f"mailto:{author.email}")
    return iri
