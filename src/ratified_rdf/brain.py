"""``Brain``: the library's front door. Open a store, ask questions, run queries, validate, dump."""

from __future__ import annotations

import getpass
import hashlib
import io
import os
import re
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

from pydantic import JsonValue
from pyoxigraph import QueryBoolean, QuerySolutions, QueryTriples, RdfFormat, Triple

from ratified_rdf._errors import BrainError
from ratified_rdf.answers import discussion, holdings, sections, types
from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.models import Answer, Trust
from ratified_rdf.answers.router import REGISTRY, Intent, Route, route
from ratified_rdf.answers.session import Kept, Session
from ratified_rdf.answers.trust import card_title, trust_of
from ratified_rdf.audit import AuditLog, AuditRecord, DetailSidecar, Kind, capture
from ratified_rdf.build import BuildReport, build
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph import void
from ratified_rdf.graph.gate import ShaclGate, Violation, to_rdflib
from ratified_rdf.graph.memory import MemoryDataset
from ratified_rdf.graph.remote import SparqlProtocolStore
from ratified_rdf.graph.reviews import VERDICTS, check_review, write_review
from ratified_rdf.graph.store import OxigraphStore, Queryable, QueryResult, Term, TripleStore
from ratified_rdf.graph.vocab import term
from ratified_rdf.graph.writer import RunRecord, Writer, read_runs
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue
from ratified_rdf.queries.guard import audited_text, check_reader_query
from ratified_rdf.queries.offline import run_offline
from ratified_rdf.queries.run import source_of
from ratified_rdf.trust import Clearance, RedactionPolicy, TenantId, can_read


class Brain:
    """A built brain in a store, read by one reader: a tenant, a clearance and a redaction
    policy.

    Scoping is always on. Every query's dataset is built here, from the reader's tenant (only
    that tenant's catalog and graphs are ever named) and clearance (only graphs at or below
    it). ``read_graphs`` are the current run's readable source graphs: the default graph of
    every query. ``graphs`` adds the catalog graph (runs and their provenance) when no graph is
    withheld from this reader: what validate and dump cover. :meth:`reader` gives another
    reader of the same store.
    """

    def __init__(
        self,
        store: TripleStore,
        brain_id: str,
        *,
        tenant: TenantId | str | None = None,
        clearance: Clearance | str = Clearance.PUBLIC,
        redaction: RedactionPolicy | str = RedactionPolicy.SILENT,
        audit: AuditLog | None = None,
        actor: str | None = None,
        in_memory: bool = False,
        _cache: _SharedCache | None = None,
    ) -> None:
        self._store = store
        self.audit = audit
        self.actor = actor or default_actor()
        self.brain_id = brain_id
        self.tenant = TenantId(tenant) if tenant is not None else TenantId.default()
        self.clearance = (
            clearance if isinstance(clearance, Clearance) else Clearance.parse(clearance)
        )
        self.redaction = RedactionPolicy.parse(redaction)
        self.catalog = v.catalog_graph(self.tenant, brain_id)
        self.runs: list[RunRecord] = []
        self.read_graphs: list[str] = []
        self.withheld_graphs: list[str] = []
        self.graphs: list[str] = []
        self._cache = _cache or _SharedCache(in_memory=in_memory)
        self._refreshing = threading.Lock()
        self._seen_generation = store.generation if isinstance(store, OxigraphStore) else 0
        self.refresh()

    @classmethod
    def open(
        cls,
        path: str | Path,
        brain_id: str | None = None,
        *,
        tenant: TenantId | str | None = None,
        clearance: Clearance | str = Clearance.PUBLIC,
        redaction: RedactionPolicy | str = RedactionPolicy.SILENT,
        audit: AuditLog | None = None,
        actor: str | None = None,
        in_memory: bool = False,
    ) -> Brain:
        """Open the brain stored at ``path`` for one reader: ``tenant`` (default: the default
        tenant), ``clearance`` (default: public). ``path`` is a folder written by ``ratified
        build``, or the URL of a SPARQL server: an Oxigraph server's root
        (``http://127.0.0.1:7878``) or any SPARQL 1.1 endpoint's own address
        (``https://example.org/sparql``; see :meth:`SparqlProtocolStore.at`).

        A folder is opened shared: read-only until something is written, so a server, MCP
        servers, a build and any number of readers use one brain at once, and each follows
        (:meth:`follow`) what the others finish writing.

        ``in_memory`` copies the graphs the reader reads from a folder's store into memory as
        it opens (a few seconds for the TLS brain) and answers from the copy, two to three
        times faster; writes still go to the folder, and drop the copies. For a long-running
        process; a one-off question is quicker without it.

        Every ask, query, validation and dump is audited, in ``audit`` or else in the log
        beside the store (:func:`audit_dir`), as ``actor`` (default: the login name)."""
        store: TripleStore
        if str(path).startswith(("http://", "https://")):
            if in_memory:
                raise BrainError(
                    "in_memory copies a store folder; a server holds its own data. Open "
                    f"{path} without it."
                )
            store, log_dir = SparqlProtocolStore.at(str(path)), remote_audit_dir(str(path))
        else:
            folder = Path(path)
            if not folder.is_dir():
                raise BrainError(
                    f"There is no brain at {folder}. Build one first: "
                    f"ratified build records/tls13 --store {folder}"
                )
            # Shared: read-only until a write, so servers, MCP servers, builds and any number
            # of readers use one brain at once.
            store, log_dir = OxigraphStore(folder, shared=True), audit_dir(folder)
        try:
            log = audit or AuditLog.open(log_dir)
        except BaseException:
            store.close()
            raise
        try:
            brain = cls.from_store(
                store,
                brain_id,
                tenant=tenant,
                clearance=clearance,
                redaction=redaction,
                audit=log,
                actor=actor,
                in_memory=in_memory,
            )
            if in_memory:
                brain._session()  # copy the reader's graphs now, not on the first question
            return brain
        except BaseException:
            store.close()
            if audit is None:
                log.close()
            raise

    @classmethod
    def from_store(
        cls,
        store: TripleStore,
        brain_id: str | None = None,
        *,
        tenant: TenantId | str | None = None,
        clearance: Clearance | str = Clearance.PUBLIC,
        redaction: RedactionPolicy | str = RedactionPolicy.SILENT,
        audit: AuditLog | None = None,
        actor: str | None = None,
        in_memory: bool = False,
    ) -> Brain:
        """Use a store already opened (embedded or remote); only ``tenant``'s brains count.
        ``in_memory``: answer from copies of readers' graphs, as in :meth:`open` (made on
        first use; only an embedded store is copied)."""
        scope = TenantId(tenant) if tenant is not None else TenantId.default()
        ids = _brain_ids(store, scope)
        if not ids:
            raise BrainError(
                f"This store holds no brain for tenant {scope!s} yet. Build one: "
                "ratified build records/tls13"
            )
        if brain_id is None:
            if len(ids) > 1:
                raise BrainError(f"This store holds several brains ({', '.join(ids)}); name one.")
            brain_id = ids[0]
        elif brain_id not in ids:
            raise BrainError(f"This store holds no brain {brain_id!r}; it holds {', '.join(ids)}.")
        return cls(
            store,
            brain_id,
            tenant=scope,
            clearance=clearance,
            redaction=redaction,
            audit=audit,
            actor=actor,
            in_memory=in_memory,
        )

    @classmethod
    def build(
        cls,
        manifest: str | Path,
        *,
        path: str | Path | None = None,
        source: str | None = None,
        progress: bool = False,
        clearance: Clearance | str = Clearance.RESTRICTED,
        audit: AuditLog | None = None,
        actor: str | None = None,
    ) -> tuple[Brain, BuildReport]:
        """Build the brain a manifest describes into ``path`` (in memory when ``None``; an
        Oxigraph server when a URL).

        The build and each batch it writes are audited in ``audit``, or, for a store on disk,
        in the log beside it. The brain returned reads as its builder, who saw every source
        (``clearance`` restricted unless given); use :meth:`reader` for anyone else.
        """
        remote = path is not None and str(path).startswith(("http://", "https://"))
        log = audit or (
            None
            if path is None
            else AuditLog.open(remote_audit_dir(str(path)) if remote else audit_dir(Path(path)))
        )
        store: TripleStore = SparqlProtocolStore.at(str(path)) if remote else OxigraphStore(path)
        try:
            report = build(
                manifest,
                source=source,
                store=store,
                progress=progress,
                audit=log,
                actor=actor or default_actor(),
            )
        except BaseException:
            store.close()
            if log is not None and audit is None:
                log.close()
            raise
        brain = cls(
            store,
            report.brain_id,
            tenant=report.tenant,
            clearance=clearance,
            audit=log,
            actor=actor,
        )
        return brain, report

    def reader(
        self,
        *,
        tenant: TenantId | str | None = None,
        clearance: Clearance | str | None = None,
        redaction: RedactionPolicy | str | None = None,
        brain_id: str | None = None,
        actor: str | None = None,
    ) -> Brain:
        """Another reader of the same store and audit log; what is not given is kept from
        this one. A different tenant must hold a brain of its own (``brain_id``, or its only
        one)."""
        if tenant is None or TenantId(tenant) == self.tenant:
            return Brain(
                self._store,
                brain_id or self.brain_id,
                tenant=self.tenant,
                clearance=self.clearance if clearance is None else clearance,
                redaction=self.redaction if redaction is None else redaction,
                audit=self.audit,
                actor=actor or self.actor,
                _cache=self._cache,
            )
        other = Brain.from_store(
            self._store,
            brain_id,
            tenant=tenant,
            clearance=self.clearance if clearance is None else clearance,
            redaction=self.redaction if redaction is None else redaction,
            audit=self.audit,
            actor=actor or self.actor,
        )
        other._cache = self._cache
        return other

    def follow(self) -> None:
        """Catch up with what other processes finished writing to the store (a build that
        made a new run current, a review, a prune): open it afresh, forget what was kept or
        copied from before, and read the runs again. Every question, query, dump and
        validation does this first; one ``stat`` when nothing changed. Only a brain opened
        from a folder (:meth:`open`) follows; a server's store is always current."""
        store = self._store
        if not isinstance(store, OxigraphStore) or not store.shared:
            return
        store.follow()
        if self._seen_generation == store.generation:
            return
        with self._refreshing:
            generation = store.generation
            if self._seen_generation != generation:
                self._cache.follow(generation)
                self.refresh()
                self._seen_generation = generation

    def _writing(self) -> AbstractContextManager[None]:
        """The store's write lock for the block (a shared store takes it only now)."""
        return self._store.writing() if isinstance(self._store, OxigraphStore) else nullcontext()

    def refresh(self) -> None:
        """Re-read the runs and which one is current (after a rebuild by another process)."""
        self.runs = read_runs(self._store, self.tenant, self.brain_id)
        self._reviews = self._review_graphs()
        self.read_graphs, self.withheld_graphs = self._split(self._run_at(None))
        self.graphs = [*self.read_graphs, *([] if self.withheld_graphs else [self.catalog])]

    def _review_graphs(self) -> dict[str, Clearance]:
        """The reviews graphs that exist for this brain, with the level each was written at."""
        levels = {v.reviews_graph(self.tenant, self.brain_id, c.value): c for c in Clearance}
        return {g: levels[g] for g in self._store.graphs() if g in levels}

    def _run_at(self, as_of: datetime | None) -> RunRecord | None:
        """The current run, or the one that was current at ``as_of`` (transaction time)."""
        if as_of is None:
            return next((r for r in self.runs if r.current), None)
        moment = as_of if as_of.tzinfo else as_of.replace(tzinfo=UTC)
        done = [r for r in self.runs if r.ended <= moment]
        return done[-1] if done else None

    def _split(
        self, run: RunRecord | None, clearance: Clearance | None = None
    ) -> tuple[list[str], list[str]]:
        """The graphs of ``run`` a reader cleared for ``clearance`` (default: this reader's)
        reads, and those withheld from them."""
        if run is None:
            return [], []
        clearance = clearance or self.clearance
        graphs = {**run.graphs, **self._reviews}
        readable = [g for g, level in graphs.items() if can_read(clearance, level)]
        # Expertise is computed once per level: read only the highest one cleared for.
        scores = [g for g in readable if source_of(g) == "expertise"]
        best = max(scores, key=lambda g: graphs[g].rank, default=None)
        withheld = [g for g in graphs if not can_read(clearance, graphs[g])]
        readable = [g for g in readable if source_of(g) != "expertise" or g == best]
        return readable, withheld

    def _session(self, as_of: datetime | None = None) -> Session:
        self.follow()
        if as_of is None:
            return Session(
                self._cache.reads(self._store, self.read_graphs),
                self.read_graphs,
                self._cache.kept,
                self._cache.headings.get(tuple(self.read_graphs)),
            )
        run = self._run_at(as_of)
        if run is None:
            raise BrainError(
                f"The brain had no complete build by {as_of.isoformat()}; its first run ended "
                f"{self.runs[0].ended.isoformat() if self.runs else 'never'}."
            )
        graphs = self._split(run)[0]
        return Session(
            self._store, graphs, self._cache.kept, self._cache.headings.get(tuple(graphs))
        )

    def ask(
        self, question: str, *, as_of: datetime | None = None, valid_at: datetime | None = None
    ) -> Answer:
        """Answer a question in words, through the deterministic router.

        ``as_of`` answers from the run that was current at that moment (transaction time:
        "what did the brain say before yesterday's ingest?"). ``valid_at`` asks what a section
        said on a day (valid time: "what did §4.2.1 say on 2017-06-01?"); the question may
        name the day itself.
        """
        return self._answer(
            question, lambda s: self._route(s, question, valid_at), as_of=as_of, valid_at=valid_at
        )

    def _answer(
        self,
        question: str,
        answering: Callable[[Session], Answer],
        *,
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
    ) -> Answer:
        """Every answer's path: audited as an ask, answered in one session, with the card's
        trust state and, under the acknowledge policy, whether more exists."""
        check_question(question)
        subject: dict[str, JsonValue] = {"question": question}
        if as_of is not None:
            subject["as_of"] = as_of.isoformat()
        if valid_at is not None:
            subject["valid_at"] = valid_at.isoformat()
        with self._audited("ask", subject) as record:
            try:
                session = self._session(as_of)
            except BrainError as error:
                return holdings.not_built(question, str(error))
            answer = self._with_trust(session, answering(session))
            answer = self._acknowledge(answer) if as_of is None else answer
            if record is not None:  # hashing every query's text is for the audit log alone
                self._detail(record, answer_detail(answer))
            return answer

    def _with_trust(self, session: Session, answer: Answer) -> Answer:
        """The answer with its card's trust state and the query that looked it up."""
        ran = len(session.queries)
        trust = trust_of(session, answer)
        return answer.model_copy(
            update={"trust": trust, "queries": [*answer.queries, *session.queries[ran:]]}
        )

    def review(
        self,
        question: str,
        *,
        reviewer: str,
        verdict: str,
        note: str | None = None,
        content_hash: str | None = None,
    ) -> Answer:
        """Record a person's verdict (ratified, disputed, withdrawn) on the card ``question``
        gets now, and return the card with its new state.

        ``content_hash`` is the hash of the card the reviewer read; if the card has changed
        since, nothing is written. The review is kept at the reviewer's clearance level, so
        only readers cleared as far see it, and it is audited.
        """
        check_review(reviewer=reviewer, verdict=verdict, note=note)
        card = self.ask(question)
        assert card.trust is not None
        if content_hash is not None and content_hash != card.trust.content_hash:
            raise BrainError(
                f"The card has changed since it was read (hash {content_hash[:12]}…, now "
                f"{card.trust.content_hash[:12]}…). Read it again, then review what it says now."
            )
        subject: dict[str, JsonValue] = {
            "question": question,
            "card": card.trust.card,
            "content_hash": card.trust.content_hash,
            "verdict": verdict,
            "reviewer": reviewer,
        }
        with self._writing(), self._audited("review", subject) as record:
            review = write_review(
                self._review_writer(),
                v.reviews_graph(self.tenant, self.brain_id, self.clearance.value),
                card=card.trust.card,
                title=card_title(card),
                content_hash=card.trust.content_hash,
                verdict=verdict,
                reviewer=reviewer,
                note=note,
            )
            self._detail(record, {"review": review})
        self._cache.wrote()
        self.refresh()
        return self.ask(question)

    def review_claim(
        self, claim: str, *, reviewer: str, verdict: str, note: str | None = None
    ) -> Trust:
        """Record a person's verdict on a derived claim (an alignment record, a score): its
        hash is over the claim's own triples as the reader sees them now. The review is
        written about the claim, never onto it: the claim's own description is the build's."""
        check_review(reviewer=reviewer, verdict=verdict, note=note, claim=claim)
        triples = self._store.describe([claim], self.read_graphs)
        if not triples:
            raise BrainError(f"The graph holds nothing about {claim} that you may read.")
        lines = sorted(f"{t.subject} {t.predicate} {t.object} ." for t in triples)
        digest = _sha256("\n".join(lines))
        subject: dict[str, JsonValue] = {
            "claim": claim,
            "content_hash": digest,
            "verdict": verdict,
            "reviewer": reviewer,
        }
        with self._writing(), self._audited("review", subject) as record:
            review = write_review(
                self._review_writer(),
                v.reviews_graph(self.tenant, self.brain_id, self.clearance.value),
                card=claim,
                title=claim,
                content_hash=digest,
                verdict=verdict,
                reviewer=reviewer,
                note=note,
                is_card=False,
            )
            self._detail(record, {"review": review})
        self._cache.wrote()
        self.refresh()
        return Trust(
            state=verdict,  # type: ignore[arg-type]
            card=claim,
            content_hash=digest,
            reviewer=reviewer,
            review=review,
            note=note,
            reviewed_state=verdict,  # type: ignore[arg-type]
        )

    def _review_writer(self) -> Writer:
        """The writer a review goes through: its gate checks the review against every graph
        of the brain's current state (every clearance level), not the reader's alone."""
        return Writer(self._store, ShaclGate(), self.brain_id, self.tenant)

    def cards_in_state(self, state: str) -> list[dict[str, Term]]:
        """The cards (and derived claims) whose latest review put them in ``state``."""
        if state not in VERDICTS:
            raise BrainError(f"A reviewed state is one of {', '.join(VERDICTS)}, not {state!r}.")
        return self.run("cards_in_state", state=term(VERDICTS[state]).value)[0]

    def _acknowledge(self, answer: Answer) -> Answer:
        """Under the acknowledge policy, say (only) that more exists above the reader's
        clearance: the answer's own queries, re-run over every graph of the run, found more
        rows. Under the default policy nothing is said, so nothing is re-run."""
        if not (self.redaction.may_acknowledge_withheld and self.withheld_graphs):
            return answer
        everything, _ = self._split(self._run_at(None), Clearance.RESTRICTED)
        for run in answer.queries:
            if len(self._store.query(run.sparql, everything).rows) > run.rows:
                return answer.model_copy(update={"withheld": WITHHELD_NOTE})
        return answer

    def _route(self, session: Session, question: str, valid_at: datetime | None) -> Answer:
        """Read the question for entities, choose its registered type, draw that card."""
        session.headings = self.heading_index(session.graphs)
        chosen = route(question, self.gazetteer(session.graphs))
        if valid_at is not None and chosen.section and not chosen.draft:
            return sections.section_at(session, question, chosen.rfc, chosen.section, valid_at)
        return types.answer(session, question, chosen)

    def answer(self, intent: Intent | str, **entities: object) -> Answer:
        """Draw the card of one registered question type from entities, without words:
        ``brain.answer("who_to_ask", rfc=8446, section="4.2.8")``. The keywords are the
        :class:`~ratified_rdf.answers.router.Route` fields the type reads (``rfc``,
        ``section``, ``draft``, ``revision``, ``number``, ``who``, ``older``, ``newer``,
        ``state``, ``count``); the card's question is written from them."""
        try:
            kind = types.question_type(intent)
        except KeyError:
            known = ", ".join(sorted(str(k.intent) for k in REGISTRY))
            raise BrainError(
                f"There is no question type {intent!r}; the types are {known}."
            ) from None
        fields = {k: v for k, v in entities.items() if v is not None}
        try:
            chosen = Route(intent=kind.intent, **fields)  # type: ignore[arg-type]
        except ValueError as error:
            raise BrainError(
                f"A {kind.intent} card cannot be drawn from {fields}: {error}"
            ) from None
        template = kind.asked
        try:
            question = template.format(**fields) if template else ""
        except KeyError:
            question = ""
        question = question or f"{kind.intent}: " + ", ".join(f"{k}={v}" for k, v in fields.items())

        def draw(session: Session) -> Answer:
            session.headings = self.heading_index(session.graphs)
            bound = chosen
            if chosen.who and not chosen.person:
                people = self.gazetteer(session.graphs).read(chosen.who).people
                if people:
                    bound = chosen.model_copy(
                        update={"person": people[0].iri, "who": people[0].name}
                    )
            return types.answer(session, question, bound)

        return self._answer(question, draw)

    def gazetteer(self, graphs: Sequence[str] | None = None) -> Gazetteer:
        """The entity gazetteer over ``graphs`` (default: the reader's): drafts, revisions,
        RFCs, people, threads and the heading index, built on first use and shared by every
        reader of the same graphs."""
        if graphs is None:
            self.follow()
        key = tuple(self.read_graphs if graphs is None else graphs)
        held = self._cache.gazetteers.get(key)
        if held is not None:
            return held
        index, _ = self.heading_index(key)
        reads = self._cache.reads(self._store, key)

        def rows(name: str) -> list[dict[str, Term]]:
            return run_query(reads, key, name)[0] if key else []

        drafts: dict[str, list[str]] = {}
        became: dict[str, int] = {}
        for row in rows("gazetteer_revisions"):
            name = row["draftName"].value
            drafts.setdefault(name, []).append(row["revisionNumber"].value)
            if "became" in row:
                number = row["became"].value.rsplit("rfc", 1)[-1]
                if number.isdigit():
                    became[name] = int(number)
        rfcs: dict[int, str | None] = {}
        subject: set[str] = set()
        for row in rows("documents"):
            if "rfcNumber" in row:
                rfcs[int(row["rfcNumber"].value)] = row["issued"].value if "issued" in row else None
                if "title" in row:
                    subject.update(_words(row["title"].value))
            else:
                drafts.setdefault(row["name"].value, [])
        people: dict[str, tuple[str, list[str]]] = {}
        for row in rows("gazetteer_people"):
            iri = row["person"].value
            entry = people.setdefault(iri, (row["name"].value, []))
            if "alias" in row and row["alias"].value:
                entry[1].append(row["alias"].value)
        found = Gazetteer(
            drafts=drafts,
            became=became,
            rfcs=rfcs,
            people=[(iri, name, aliases) for iri, (name, aliases) in people.items()],
            threads=(int(row["number"].value) for row in rows("gazetteer_threads")),
            headings=index,
            subject_words=subject,
            groups={
                match.group(1)
                for name in drafts
                if (match := re.match(r"draft-ietf-([a-z0-9]+)-", name))
            },
        )
        self._cache.gazetteers[key] = found
        return found

    def heading_index(self, graphs: Sequence[str] | None = None) -> tuple[HeadingIndex, QueryRun]:
        """The heading search index over every section heading in ``graphs`` (default: the
        reader's), built on first use and shared by every reader of the same graphs."""
        if graphs is None:
            self.follow()
        key = tuple(self.read_graphs if graphs is None else graphs)
        if key in self._cache.headings:
            index, run = self._cache.headings[key]
            return index, run.model_copy(update={"reused": True})
        rows, run = run_query(self._cache.reads(self._store, key), key, "headings")
        entries = [
            HeadingEntry(
                section=row["section"].value,
                heading=row["heading"].value,
                page=row["page"].value,
                number=row["number"].value if "number" in row else None,
                document=row["documentLabel"].value,
                is_rfc="rfcNumber" in row,
                # An RFC section stands for itself (its alignment with a later RFC is
                # the next chain); a revision's section for the RFC section it became.
                final=(
                    row["section"].value
                    if "rfcNumber" in row
                    else row["final"].value
                    if "final" in row
                    else None
                ),
            )
            for row in rows
        ]
        self._cache.headings[key] = (HeadingIndex.build(entries), run)
        return self._cache.headings[key]

    def read_lookups(self) -> None:
        """Build now what the first questions would for this reader: the heading index, and
        the rows why cards look their pull requests and commits up in. A server does it before
        it listens, so no question waits for it."""
        self.heading_index()
        discussion.read_lookups(self._session())

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
        return self._answer(question, lambda s: holdings.holdings(s, question))

    def run(
        self, name: str, *, as_of: datetime | None = None, **params: ParamValue
    ) -> tuple[list[dict[str, Term]], QueryRun]:
        """Run the named query ``sparql/<name>.rq`` with typed parameters."""
        subject = {"query": name, "params": {k: str(v) for k, v in params.items()}}
        with self._audited("query", subject) as record:
            session = self._session(as_of)
            rows, run = run_query(session.store, session.graphs, name, params)
            self._detail(record, {"rows": run.rows, "sparql_sha256": _sha256(run.sparql)})
            return rows, run

    def query(self, sparql: str, *, as_of: datetime | None = None) -> QueryResult:
        """Run your own read-only SELECT or ASK over the reader's graphs.

        The text is checked by its parse tree first (:func:`~ratified_rdf.queries.guard.
        check_reader_query`): updates, SERVICE, FROM / FROM NAMED and text that is not SPARQL
        1.1 raise :class:`~ratified_rdf.queries.guard.QueryRefused`. An embedded store then
        runs it on a thread sealed off the network, so the engine cannot fetch from anywhere
        whatever the text says; the dataset is the reader's graphs in any case."""
        with self._audited("query", audited_text(sparql)) as record:
            check_reader_query(sparql)
            session = self._session(as_of)
            store, graphs = session.store, session.graphs
            if isinstance(store, OxigraphStore | MemoryDataset):
                result = run_offline(lambda: store.query(sparql, graphs))
            else:
                # A remote engine runs the text itself; the guard above is what stands there.
                result = store.query(sparql, graphs)
            self._detail(record, {"rows": len(result.rows)})
            return result

    def prune(self, keep: int) -> list[str]:
        """Forget all but the latest ``keep`` runs and their graphs; returns the run ids
        forgotten. Only a reader cleared for every graph may prune."""
        if self.withheld_graphs:
            raise BrainError("Pruning forgets whole runs; only a restricted-clearance reader may.")
        if isinstance(keep, bool) or not isinstance(keep, int) or not 0 < keep <= _MAX_KEEP:
            raise BrainError(
                f"Say how many runs to keep as a whole number from 1 to {_MAX_KEEP:,}, not "
                f"{str(keep)[:40]}; the current run is always kept."
            )
        with self._writing(), self._audited("build", {"prune_keep": keep}) as record:
            writer = Writer(self._store, ShaclGate(), self.brain_id, self.tenant)
            forgotten = writer.prune(keep)
            self._detail(record, {"forgotten": list(forgotten)})
        self._cache.wrote()
        self.refresh()
        return forgotten

    def evaluate(self, sparql: str) -> QuerySolutions | QueryBoolean | QueryTriples:
        """The engine's lazy result of your own read query over the reader's graphs (SELECT,
        ASK, CONSTRUCT or DESCRIBE), for a caller that streams rows under a deadline (the
        SPARQL endpoint); the text is checked as in :meth:`query`. Not audited here: the caller
        records the call. Only the embedded store streams. The engine computes rows as they are
        pulled, on the pulling thread: pull them on a thread sealed off the network
        (:func:`~ratified_rdf.queries.offline.forbid_network`), as the query sandbox does."""
        check_reader_query(sparql)
        self.follow()
        if not isinstance(self._store, OxigraphStore):
            raise BrainError(
                "Only a brain in the embedded Oxigraph store streams query results; this one "
                "is on a server: query that server's own endpoint."
            )
        reads = self._cache.reads(self._store, self.read_graphs)
        if isinstance(reads, MemoryDataset):
            return reads.evaluate(sparql, self.read_graphs)
        return self._store.evaluate(sparql, self.read_graphs)

    @property
    def write_generation(self) -> int:
        """A number that changes with every write through this brain or its readers (a
        review, a prune, a build): a copy of graphs taken before it is stale."""
        return self._cache.generation

    def export(self, graphs: Sequence[str]) -> bytes:
        """``graphs`` as N-Quads, for a copy kept elsewhere (the SPARQL endpoint's workers).
        Every graph must be one of :attr:`read_graphs` (what this reader's queries see); the
        export itself is not audited (the queries run over the copy are)."""
        self.follow()
        allowed = set(self.read_graphs)
        if not set(graphs) <= allowed:
            raise BrainError("Only graphs this reader may read can be exported.")
        output = io.BytesIO()
        self._store.dump(output, list(graphs), RdfFormat.N_QUADS)
        return output.getvalue()

    def describe_dataset(
        self,
        *,
        dump_url: str | None = None,
        dump_format: str = "nquads",
        endpoint: str | None = None,
    ) -> list[Triple]:
        """A VoID and DCAT description of the graphs this reader sees: counts, partitions,
        vocabularies, licence, source and clearance of each, and where the dump and the
        endpoint are."""
        self.follow()
        run = self._run_at(None)
        if run is None:
            raise BrainError("The brain has no complete run to describe yet.")
        levels = {**run.graphs, **self._reviews}

        def run_named(name: str, graphs: Sequence[str], params: dict[str, str]) -> list:
            return run_query(self._store, list(graphs) or [self.catalog], name, params)[0]

        return void.describe(
            brain=v.brain_iri(self.tenant, self.brain_id),
            title=self._title(),
            run=run.iri,
            graphs={g: levels[g].value for g in self.read_graphs},
            run_query=run_named,
            dump_url=dump_url,
            dump_format=dump_format,
            endpoint=endpoint,
        )

    def _title(self) -> str:
        rows = self.query(
            "PREFIX dcterms: <http://purl.org/dc/terms/> SELECT ?t WHERE "
            f"{{ <{v.brain_iri(self.tenant, self.brain_id)}> dcterms:title ?t }}"
        ).rows
        return rows[0]["t"].value if rows else self.brain_id

    def content_hash(self) -> str:
        """SHA-256 of what the reader's current graphs hold, the same for two builds of the
        same sources: sorted N-Triples lines tagged with their graph's source, with the run id
        written as ``RUN`` and the moments computations ended left out."""
        self.follow()
        run = self._run_at(None)
        run_id = run.run_id if run else ""
        ended = term("prov:endedAtTime")
        lines = sorted(
            f"{triple} {source_of(graph)}".replace(run_id, "RUN")
            for graph in self.read_graphs
            for triple in self._store.triples([graph])
            if triple.predicate != ended
        )
        return _sha256("\n".join(lines))

    def describe_in_catalog(self, iri: str) -> list[Triple]:
        """What the brain's catalog (its runs, the graphs each wrote and their clearance) says
        about ``iri``, with it as subject. The catalog is no graph a query reads: a caller keeps
        only what its reader may know of (:func:`~ratified_rdf.surfaces.standard.
        scoped_description` does)."""
        self.follow()
        return self._store.describe([iri], [self.catalog])

    def catalog_size(self) -> int:
        """How many triples the catalog holds."""
        self.follow()
        return sum(1 for _ in self._store.triples([self.catalog]))

    def describe(self, iri: str) -> list[Triple]:
        """What the reader's graphs say about ``iri``: the triples with it as subject."""
        self.follow()
        return self._store.describe([iri], self.read_graphs)

    def validate(self) -> list[Violation]:
        """Validate the reader's graphs with pyshacl; an empty list means they conform.

        A reader not cleared for every graph of the run may see violations for references
        into what is withheld (an account whose person lives in a restricted people graph)."""
        with self._audited("validate", {"graphs": len(self.graphs)}) as record:
            data = to_rdflib(self._store.triples(self.graphs))
            found = ShaclGate().validate_graph(data, f"brain {self.brain_id}")
            self._detail(record, {"violations": len(found)})
            return found

    def dump(self, output: IO[bytes], rdf_format: RdfFormat = RdfFormat.N_QUADS) -> None:
        """Write the reader's graphs (N-Quads and TriG keep graph names)."""
        with self._audited("dump", {"format": str(rdf_format), "graphs": self.graphs}):
            self._store.dump(output, self.graphs, rdf_format)

    def _audited(self, kind: Kind, subject: dict[str, JsonValue]) -> AbstractContextManager:
        """Record the call before it runs (failing closed), and how it ended after."""
        self.follow()
        if self.audit is None:
            return nullcontext()
        return capture(
            self.audit,
            kind,
            {**subject, "brain": self.brain_id},
            tenant=self.tenant,
            clearance=self.clearance.value,
            actor=self.actor,
            # Reads change nothing: their records skip the fsync wait (see capture).
            durable=kind in _WRITES,
        )

    def _detail(self, record: AuditRecord | None, detail: dict[str, JsonValue]) -> None:
        if self.audit is not None and record is not None:
            self.audit.append(DetailSidecar(annotates=record.id, detail=detail), durable=False)

    def close(self) -> None:
        """Sign the audit log's tree head over what is not signed yet (if the log has its
        key), then flush and release the store, the log and the copies in memory."""
        if self.audit is not None:
            self.audit.checkpoint()
            self.audit.close()
        self._store.close()
        self._cache.drop_copies()

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def check_question(question: str) -> None:
    """Raise :class:`BrainError` unless ``question`` is text that UTF-8 can hold.

    A command line with bytes that are not UTF-8 reaches Python as lone surrogates (its
    ``surrogateescape`` decoding); such a string can be neither audited nor matched, so it is
    refused with where the bad byte is, before anything runs."""
    if not isinstance(question, str):
        raise BrainError(f"A question is text, not {type(question).__name__}.")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError as error:
        char = ord(question[error.start])
        byte = f" (byte 0x{char - 0xDC00:02X})" if 0xDC80 <= char <= 0xDCFF else ""
        raise BrainError(
            f"The question is not UTF-8 text: character {error.start + 1}{byte} is not "
            "UTF-8. Type it again in a UTF-8 terminal, or save it as UTF-8."
        ) from None


def audit_dir(store: Path) -> Path:
    """Where the audit log of the store at ``store`` lives: beside it, ``<store>.audit``."""
    return store.with_name(store.name + ".audit")


def remote_audit_dir(url: str) -> Path:
    """Where the audit log of calls to the server at ``url`` lives: under the user's state
    folder (``$XDG_STATE_HOME``, else ``~/.local/state``), one folder per server."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    name = re.sub(r"[^A-Za-z0-9.-]+", "-", url.split("://", 1)[-1]).strip("-")
    return state / "ratified-rdf" / "audit" / name


def default_actor() -> str:
    """Who is calling, when no one says: the login name of the process."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def answer_detail(answer: Answer) -> dict[str, JsonValue]:
    """What the audit keeps of an answer: its verdict and the queries that produced it."""
    return {
        "intent": answer.intent,
        "verdict": answer.verdict.value,
        "queries": [
            {"name": q.name, "sparql_sha256": _sha256(q.sparql), "rows": q.rows}
            for q in answer.queries
        ],
    }


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


_MAX_KEEP = 2**53 - 1
"""The most runs ``prune`` can be told to keep: the largest count an audit record holds exactly."""

_WRITES = frozenset({"build", "write_batch", "review"})
"""Audited kinds that change a brain: their records are fsynced before the work runs."""

WITHHELD_NOTE = "More exists above your clearance."
"""All the acknowledge policy ever says about withheld evidence: no count, no source."""


class _SharedCache:
    """What readers of one store share: heading indexes and the rows of whole-graph queries,
    keyed by the graphs they cover, and, for a brain opened ``in_memory``, copies of the graphs
    readers read."""

    MAX_COPIES = 4
    """Copies kept at once (one per distinct set of graphs: a tenant, a clearance level);
    the oldest goes first."""

    def __init__(self, in_memory: bool = False) -> None:
        self.headings: dict[tuple[str, ...], tuple[HeadingIndex, QueryRun]] = {}
        self.gazetteers: dict[tuple[str, ...], Gazetteer] = {}
        self.kept: Kept = {}
        self.in_memory = in_memory
        self.copies: dict[tuple[str, ...], MemoryDataset] = {}
        self.generation = 0
        """Counts writes through this brain's readers: what was copied before is stale."""
        self.store_generation = 0
        """The opening of a shared store the copies and kept rows were made from."""
        # The server answers on several threads: one copy per graph set, and a write's
        # ``wrote`` waits for a copy being made, so no copy outlives the write.
        self._copying = threading.Lock()

    def reads(self, store: TripleStore, graphs: Sequence[str]) -> Queryable:
        """Where to read ``graphs`` from: their copy in memory when the brain keeps one
        (made now if missing), otherwise the store itself."""
        if not self.in_memory or not isinstance(store, OxigraphStore) or not graphs:
            return store
        key = tuple(sorted(graphs))
        with self._copying:
            if key not in self.copies:
                while len(self.copies) >= self.MAX_COPIES:
                    self.copies.pop(next(iter(self.copies))).close()
                self.copies[key] = MemoryDataset(store, key)
            return self.copies[key]

    def follow(self, store_generation: int) -> None:
        """Forget what was copied or kept from the store before it was opened afresh
        (``store_generation`` is its count of openings), once per opening."""
        with self._copying:
            if store_generation == self.store_generation:
                return
            self.store_generation = store_generation
            # A new run reads new graphs: the old run's index would only hold memory.
            self.headings.clear()
        self.wrote()

    def wrote(self) -> None:
        """Forget every copy and kept rows after a write: the next read copies the graphs
        afresh and runs whole-graph queries again."""
        with self._copying:
            self.generation += 1
            self.drop_copies()
            self.kept.clear()
            self.gazetteers.clear()

    def drop_copies(self) -> None:
        """Let go of every copy (each one's holding thread ends; queries still running on
        one finish first)."""
        while self.copies:
            self.copies.popitem()[1].close()


def _words(text: str) -> set[str]:
    """The lower-case words of a title, for the brain's subject words."""
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if not w.isdigit()}


def _brain_ids(store: TripleStore, tenant: TenantId) -> list[str]:
    """The brains ``tenant`` holds: read from that tenant's catalog graphs and no others."""
    prefix = v.tenant_graphs(tenant)
    catalogs = [g for g in store.graphs() if g.startswith(prefix) and g.endswith("/catalog")]
    if not catalogs:
        return []
    rows, _ = run_query(store, catalogs, "brains")
    return sorted(row["brain"].value.rsplit("/", 1)[-1] for row in rows)
