"""``Brain``: the library's front door. Open a store, ask questions, run queries, validate, dump.

A facade over one reader's :class:`~ratified_rdf._reading.Reading`; the work is done in
``answers`` (cards, reviews), ``queries``, ``graph.publish`` and ``audit``.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import IO

from pyoxigraph import RdfFormat, Triple

from ratified_rdf._build_report import BuildReport
from ratified_rdf._reading import Reading, build_store, closed_on_error, open_store, share
from ratified_rdf.answers import asking, holdings, reviewing
from ratified_rdf.answers.lookups import Lookups
from ratified_rdf.answers.models import Answer, Trust
from ratified_rdf.answers.router import Intent
from ratified_rdf.answers.trust import card_title
from ratified_rdf.audit import AuditLog, audit_folder
from ratified_rdf.graph import publish, reviews
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.copies import GraphCopies
from ratified_rdf.graph.scope import Scope, choose_brain
from ratified_rdf.graph.store import QueryResult, Term, TripleStore
from ratified_rdf.graph.violations import Violation
from ratified_rdf.queries import QueryRun
from ratified_rdf.queries.files import ParamValue
from ratified_rdf.trust import Reader

_TITLE = "PREFIX dcterms: <http://purl.org/dc/terms/> SELECT ?t WHERE {{ <{}> dcterms:title ?t }}"


class Brain:
    """A built brain in a store, read by one :class:`~ratified_rdf.trust.Reader`.

    Scoping is always on: every query's dataset is the reader's :attr:`scope`, only its
    tenant's graphs at or below its clearance. :meth:`read_as` gives another reader of the
    same store, sharing what was built from it (copies in memory, indexes).
    """

    def __init__(
        self,
        store: TripleStore,
        brain_id: str,
        *,
        reader: Reader | None = None,
        audit: AuditLog | None = None,
        in_memory: bool = False,
        _shared: tuple[GraphCopies, Lookups] | None = None,
    ) -> None:
        self.reader, self.brain_id, self.audit = reader or Reader(), brain_id, audit
        self._store = store
        self.reading = Reading(store, brain_id, self.reader, audit, _shared or share(in_memory))
        """The reader's live view beneath this facade, for surfaces that stream or copy."""
        self.catalog = self.reading.catalog

    @classmethod
    def open(
        cls,
        path: str | Path,
        brain_id: str | None = None,
        *,
        reader: Reader | None = None,
        audit: AuditLog | None = None,
        in_memory: bool = False,
        wait_for_copy: bool = True,
    ) -> Brain:
        """Open the brain at ``path`` for ``reader`` (default: default tenant, public): a
        folder ``ratified build`` wrote, opened shared so many processes read it at once (each
        follows what the others write), or a SPARQL server's URL. ``in_memory`` answers from
        copies of the reader's graphs, made now; without ``wait_for_copy``, made on a thread
        while the store on disk answers alike (what a server does, to answer at once). Calls
        are audited in ``audit``, else in the log beside the store
        (:func:`~ratified_rdf.audit.audit_folder`)."""
        store = open_store(path, in_memory)
        with closed_on_error(store):
            log = audit or AuditLog.open(audit_folder(path))
            with closed_on_error(None if audit else log):
                brain = cls.from_store(
                    store, brain_id, reader=reader, audit=log, in_memory=in_memory
                )
                if in_memory and wait_for_copy:
                    brain.reading.session()  # copy the reader's graphs now, not on first use
                elif in_memory:
                    brain.reading.copies.meanwhile = True
                    brain.reading.copies.prepare(store, brain.read_graphs)
                return brain

    @classmethod
    def from_store(
        cls,
        store: TripleStore,
        brain_id: str | None = None,
        *,
        reader: Reader | None = None,
        audit: AuditLog | None = None,
        in_memory: bool = False,
    ) -> Brain:
        """Use a store already opened (embedded or remote); only ``reader``'s tenant's brains
        count, and ``brain_id`` may be left out when it holds one."""
        reader = reader or Reader()
        brain_id = choose_brain(store, reader.tenant, brain_id)
        return cls(store, brain_id, reader=reader, audit=audit, in_memory=in_memory)

    @classmethod
    def build(
        cls,
        manifest: str | Path,
        *,
        path: str | Path | None = None,
        source: str | None = None,
        progress: bool = False,
        reader: Reader | None = None,
        audit: AuditLog | None = None,
    ) -> tuple[Brain, BuildReport]:
        """Build the brain a manifest describes into ``path`` (in memory when ``None``; an
        Oxigraph server when a URL), audited in ``audit`` or the log beside the store. The
        brain returned reads as ``reader``, by default :meth:`Reader.builder`."""
        # What a build runs (sources, mapping, the SHACL gate) is imported when one does:
        # opening a brain to read it costs none of it.
        from ratified_rdf.build import build

        reader = reader or Reader.builder()
        log = audit or (None if path is None else AuditLog.open(audit_folder(path)))
        store = build_store(path)
        with closed_on_error(store, None if audit else log):
            report = build(
                manifest,
                source=source,
                store=store,
                progress=progress,
                audit=log,
                actor=reader.actor,
            )
        brain = cls(store, report.brain_id, reader=reader.but(tenant=report.tenant), audit=log)
        return brain, report

    def read_as(self, reader: Reader, *, brain_id: str | None = None) -> Brain:
        """Another reader of the same store and audit log; a different tenant must hold a
        brain of its own (``brain_id``, or its only one)."""
        if reader.tenant != self.reader.tenant or brain_id not in (None, self.brain_id):
            brain_id = choose_brain(self._store, reader.tenant, brain_id)
        else:
            brain_id = self.brain_id  # this brain: no need to look it up again
        shared = (self.reading.copies, self.reading.lookups)
        return Brain(self._store, brain_id, reader=reader, audit=self.audit, _shared=shared)

    @property
    def scope(self) -> Scope:
        """The graphs this reader reads of the current run, and the runs of the brain, as of
        this reader's last call (each call first follows other processes' writes)."""
        return self.reading.scope

    @property
    def read_graphs(self) -> list[str]:
        """The current run's graphs this reader reads: every query's default graph."""
        return self.scope.read_graphs

    @property
    def graphs(self) -> list[str]:
        """What :meth:`validate` and :meth:`dump` cover: :attr:`read_graphs` and the catalog
        graph, which they read as this reader may know it (without a word on the graphs
        withheld from them)."""
        return self.scope.graphs

    def ask(
        self, question: str, *, as_of: datetime | None = None, valid_at: datetime | None = None
    ) -> Answer:
        """Answer a question in words, through the deterministic router. ``as_of`` answers
        from the run current then; ``valid_at`` asks what a section said on a day."""
        drawing = asking.routed(question, valid_at, self.reading.indexes)
        return self.reading.answer(question, drawing, as_of, valid_at)

    def answer(self, intent: Intent | str, **entities: object) -> Answer:
        """Draw the card of one registered question type from the
        :class:`~ratified_rdf.answers.router.Route` fields it reads:
        ``brain.answer("who_to_ask", rfc=8446, section="4.2.8")``."""
        return self.reading.answer(*asking.drawn(intent, entities, self.reading.indexes))

    def section_became(self, draft: str, revision: str, section: str) -> Answer:
        """What section ``section`` of revision ``revision`` of ``draft`` became in the RFC."""
        return self.answer(Intent.SECTION_BECAME, draft=draft, revision=revision, section=section)

    def section_history(self, rfc: int, section: str) -> Answer:
        """Each revision's number and title for RFC ``rfc`` section ``section``."""
        return self.answer(Intent.SECTION_HISTORY, rfc=rfc, section=section)

    def section_discussion(self, rfc: int, section: str) -> Answer:
        """Posts, threads, commits and people connected to an RFC section while it changed."""
        return self.answer(Intent.DISCUSSION, rfc=rfc, section=section)

    def revision_chain(self, draft: str, revision: str) -> Answer:
        """The chain of revisions from one revision to its RFC."""
        return self.answer(Intent.REVISION_CHAIN, draft=draft, revision=revision)

    def holdings(self) -> Answer:
        """What the graph holds."""
        question = "what does the graph hold?"
        return self.reading.answer(question, lambda s: holdings.holdings(s, question))

    def review(
        self,
        question: str,
        *,
        reviewer: str,
        verdict: str,
        note: str | None = None,
        content_hash: str | None = None,
    ) -> Answer:
        """Record a verdict (ratified, disputed, withdrawn) on the card ``question`` gets now,
        at the reviewer's clearance; refused when ``content_hash`` (of the card the reviewer
        read) is not the card's now. Returns the card in its new state."""
        reviewing.check_reviewed_question(question)
        reviews.check_review(reviewer=reviewer, verdict=verdict, note=note)
        card = self.ask(question)
        subject = reviewing.card_subject(question, card, content_hash, reviewer, verdict)
        self.reading.write_review(subject, str(subject["card"]), card_title(card), note, True)
        return self.ask(question)

    def review_claim(
        self, claim: str, *, reviewer: str, verdict: str, note: str | None = None
    ) -> Trust:
        """Record a verdict on a derived claim (an alignment record, a score), hashed over its
        triples as the reader sees them now, and written about it, never onto it."""
        reviews.check_review(reviewer=reviewer, verdict=verdict, note=note, claim=claim)
        subject = reviewing.claim_subject(claim, self._store.describe([claim], self.read_graphs))
        subject.update(verdict=verdict, reviewer=reviewer)
        review = self.reading.write_review(subject, claim, claim, note, False)
        return reviewing.claim_trust(claim, subject, review, note)

    def cards_in_state(self, state: str) -> list[dict[str, Term]]:
        """The cards (and derived claims) whose latest review put them in ``state``."""
        return self.run("cards_in_state", state=reviewing.state_term(state))[0]

    def prune(self, keep: int) -> list[str]:
        """Forget all but the latest ``keep`` runs and their graphs; returns the run ids
        forgotten. Only a reader cleared for every graph may prune."""
        return self.reading.prune(keep)

    def run(
        self, name: str, *, as_of: datetime | None = None, **params: ParamValue
    ) -> tuple[list[dict[str, Term]], QueryRun]:
        """Run the named query ``sparql/<name>.rq`` with typed parameters."""
        return self.reading.run(name, as_of, params)

    def query(self, sparql: str, *, as_of: datetime | None = None) -> QueryResult:
        """Run your own read-only SELECT or ASK over the reader's graphs: its parse tree is
        checked first (:func:`~ratified_rdf.queries.guard.check_reader_query`: no updates,
        SERVICE or FROM), and an embedded store runs it on a thread sealed off the network."""
        return self.reading.query(sparql, as_of)

    def describe_dataset(
        self,
        *,
        dump_url: str | None = None,
        dump_format: str = "nquads",
        endpoint: str | None = None,
    ) -> list[Triple]:
        """A VoID and DCAT description of the graphs this reader sees, and where its dump and
        endpoint are (:func:`~ratified_rdf.graph.publish.describe_scope`)."""
        self.reading.follow()
        brain = v.brain_iri(self.reader.tenant, self.brain_id)
        titles = self.query(_TITLE.format(brain)).rows
        title = titles[0]["t"].value if titles else self.brain_id
        where = publish.Published(dump_url=dump_url, dump_format=dump_format, endpoint=endpoint)
        return publish.describe_scope(self._store, self.scope, brain, title, where)

    def content_hash(self) -> str:
        """SHA-256 of what the reader's current graphs hold, the same for two builds of the
        same sources (:func:`~ratified_rdf.graph.publish.content_hash`)."""
        self.reading.follow()
        return publish.content_hash(self._store, self.read_graphs, self.scope.current)

    def describe(self, iri: str) -> list[Triple]:
        """What the reader's graphs say about ``iri``: the triples with it as subject."""
        self.reading.follow()
        return self._store.describe([iri], self.read_graphs)

    def validate(self, *, progress: bool = False) -> list[Violation]:
        """Validate :attr:`graphs` with pyshacl; an empty list means they conform (a reader
        not cleared for everything may see references into what is withheld). ``progress``
        shows on stderr what it is doing: it takes minutes on a large brain."""
        return self.reading.validate(progress=progress)

    def dump(
        self,
        output: IO[bytes],
        rdf_format: RdfFormat = RdfFormat.N_QUADS,
        *,
        progress: bool = False,
    ) -> None:
        """Write :attr:`graphs` (N-Quads and TriG keep graph names); ``progress`` counts the
        quads written on stderr."""
        self.reading.dump(output, rdf_format, progress=progress)

    def close(self) -> None:
        """Sign the audit log's tree head over what is not signed yet (if it has its key),
        then release the store, the log and the copies in memory."""
        if self.audit is not None:
            self.audit.checkpoint()
            self.audit.close()
        self._store.close()
        self.reading.copies.drop()

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
