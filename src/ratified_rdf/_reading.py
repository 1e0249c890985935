"""``Reading``: one reader's live view of one brain in a store, beneath the ``Brain`` facade.

It holds what every call needs: the store, the reader's :class:`~ratified_rdf.graph.scope.
Scope` (kept current with :meth:`Reading.follow`), what readers of the store share (copies in
memory, heading indexes, gazetteers, kept rows), and the audit of the reader's calls. The
surfaces (the SPARQL endpoint, the standard surfaces) also use it directly, for what a library
user never needs: lazy results to stream, exports for worker copies, the catalog.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import IO

from pydantic import JsonValue
from pyoxigraph import QueryBoolean, QuerySolutions, QueryTriples, RdfFormat, Triple

from ratified_rdf._errors import BrainError
from ratified_rdf.answers import asking, discussion, holdings, reviewing
from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingIndex
from ratified_rdf.answers.lookups import Lookups
from ratified_rdf.answers.models import Answer
from ratified_rdf.answers.saved_rows import SavedRows
from ratified_rdf.answers.session import Session
from ratified_rdf.audit import AuditLog, AuditRecord, CallAudit, Kind
from ratified_rdf.audit.calls import sha256
from ratified_rdf.graph import publish
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.copies import GraphCopies
from ratified_rdf.graph.memory import MemoryDataset
from ratified_rdf.graph.scope import Scope
from ratified_rdf.graph.store import OxigraphStore, QueryResult, Term, TripleStore
from ratified_rdf.graph.views import usable_views
from ratified_rdf.graph.violations import Violation
from ratified_rdf.graph.writer import Writer, check_prune
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue
from ratified_rdf.queries.offline import run_offline
from ratified_rdf.trust import Reader


class Reading:
    """One reader's view of brain ``brain_id`` in ``store``, audited in ``audit``."""

    def __init__(
        self,
        store: TripleStore,
        brain_id: str,
        reader: Reader,
        audit: AuditLog | None,
        shared: tuple[GraphCopies, Lookups],
    ) -> None:
        self.store, self.brain_id, self.reader, self.audit = store, brain_id, reader, audit
        self.catalog = v.catalog_graph(reader.tenant, brain_id)
        self.copies, self.lookups = shared
        if isinstance(store, OxigraphStore) and store.shared and store.path is not None:
            # A folder other processes read too: the rows of whole-graph queries are saved
            # there for the next one, checked against the store's generation.
            self.lookups.saved = self.lookups.saved or SavedRows(store.path)
        self.calls = CallAudit(audit, reader, brain_id)
        self._seen_generation = store.generation if isinstance(store, OxigraphStore) else 0
        self.scope = Scope.read(store, reader.tenant, brain_id, reader.clearance)

    def follow(self) -> None:
        """Catch up with what other processes finished writing to a shared store (a build, a
        review, a prune): open it afresh, forget what was kept or copied from before, and
        read the runs again. Every call does this first; one ``stat`` when nothing changed.
        A server's store is always current."""
        store = self.store
        if isinstance(store, OxigraphStore) and store.shared:
            store.follow()
            if self._seen_generation != store.generation:
                self.copies.follow(store.generation)
                self.refresh()
                self._seen_generation = store.generation

    def refresh(self) -> None:
        """Re-read the runs, which one is current, and what this reader reads of it."""
        tenant, clearance = self.reader.tenant, self.reader.clearance
        self.scope = Scope.read(self.store, tenant, self.brain_id, clearance)

    def session(self, as_of: datetime | None = None) -> Session:
        """The session an answer's queries run in: the reader's graphs now (from their copy
        in memory, when kept), or those of the run current at ``as_of``."""
        self.follow()
        if as_of is None:
            graphs = self.scope.read_graphs
            reads = self.copies.reads(self.store, graphs)
        else:
            graphs, reads = self.scope.graphs_as_of(as_of), self.store
        headings = self.lookups.headings.get(tuple(graphs))
        run = self.scope.run_at(as_of)
        views = usable_views(graphs, run.graphs) if run is not None else frozenset()
        saved = self.lookups.saved
        return Session(reads, graphs, self.lookups.kept, headings, views=views, saved=saved)

    def audited(
        self, kind: Kind, subject: dict[str, JsonValue]
    ) -> AbstractContextManager[AuditRecord | None]:
        """Record the call before it runs (failing closed), and how it ended after."""
        self.follow()
        return self.calls.call(kind, subject)

    def writing(self) -> AbstractContextManager[None]:
        """The store's write lock for the block (a shared store takes it only now)."""
        return self.store.writing() if isinstance(self.store, OxigraphStore) else nullcontext()

    def writer(self) -> Writer:
        """The writer a review or prune goes through: its gate checks against every graph of
        the brain's current state (every clearance level), not the reader's alone."""
        # The SHACL gate (pyshacl, rdflib) is imported by what writes or validates, not by
        # every reader: an answer never needs it.
        from ratified_rdf.graph.gate import ShaclGate

        return Writer(self.store, ShaclGate(), self.brain_id, self.reader.tenant)

    def wrote(self) -> None:
        """After a write through this reader: forget copies and lookups, re-read the runs."""
        self.copies.wrote()
        self.refresh()

    def answer(
        self,
        question: str,
        answering: Callable[[Session], Answer],
        as_of: datetime | None = None,
        valid_at: datetime | None = None,
    ) -> Answer:
        """Every answer's path: audited as an ask, answered in one session, with its trust
        state and, under the acknowledge policy, whether more exists."""
        asking.check_question(question)
        with self.audited("ask", asking.asked(question, as_of, valid_at)) as record:
            try:
                session = self.session(as_of)
            except BrainError as error:
                return holdings.not_built(question, str(error))
            answer = asking.with_trust(session, answering(session))
            if as_of is None:
                answer = asking.acknowledged(answer, self.store, self.scope, self.reader.redaction)
            if record is not None:  # hashing every query's text is for the audit log alone
                self.calls.detail(record, asking.answer_detail(answer))
            return answer

    def run(
        self, name: str, as_of: datetime | None, params: Mapping[str, ParamValue]
    ) -> tuple[list[dict[str, Term]], QueryRun]:
        """Run the named query ``sparql/<name>.rq`` with typed parameters, audited."""
        bound: dict[str, JsonValue] = {k: str(v) for k, v in params.items()}
        subject: dict[str, JsonValue] = {"query": name, "params": bound}
        with self.audited("query", subject) as record:
            session = self.session(as_of)
            rows, run = run_query(session.store, session.graphs, name, dict(params))
            self.calls.detail(record, {"rows": run.rows, "sparql_sha256": sha256(run.sparql)})
            return rows, run

    def query(self, sparql: str, as_of: datetime | None) -> QueryResult:
        """Run a reader's own read-only query, audited: the guard checks its parse tree
        first, and an embedded store runs it on a thread sealed off the network."""
        # The guard parses with rdflib: imported by a reader's own query, not by an answer.
        from ratified_rdf.queries.guard import audited_text, check_reader_query

        with self.audited("query", audited_text(sparql)) as record:
            sparql = check_reader_query(sparql).text  # run what the guard read, not what came
            session = self.session(as_of)
            store, graphs = session.store, session.graphs
            if isinstance(store, OxigraphStore | MemoryDataset):
                result = run_offline(lambda: store.query(sparql, graphs))
            else:  # a remote engine runs the text itself; the guard above stands there
                result = store.query(sparql, graphs)
            self.calls.detail(record, {"rows": len(result.rows)})
            return result

    def validate(self, *, progress: bool = False) -> list[Violation]:
        """Validate the reader's graphs and the catalog as they may know it with pyshacl,
        audited; an empty list means they conform. ``progress`` shows on stderr the triples
        read, then the validation running (pyshacl says nothing until it is done)."""
        from tqdm import tqdm

        from ratified_rdf.graph.gate import ShaclGate, to_rdflib

        self.follow()  # first, so the audit record names the graphs read
        graphs = self.scope.graphs
        with self.audited("validate", {"graphs": len(graphs)}) as record:
            with tqdm(
                desc="reading", unit=" triples", disable=not progress, file=sys.stderr
            ) as bar:
                quads = publish.reader_quads(self.store, self.scope)
                data = to_rdflib(q.triple for q in publish.counting(quads, bar.update))
            with tqdm(
                total=1,
                desc=f"validating {len(data):,} triples against shapes/ (pyshacl)",
                bar_format="{desc}: {elapsed}",
                disable=not progress,
                file=sys.stderr,
            ) as bar:
                found = ShaclGate().validate_graph(data, f"brain {self.brain_id}")
                bar.update(1)
            self.calls.detail(record, {"violations": len(found)})
            return found

    def dump(self, output: IO[bytes], rdf_format: RdfFormat, *, progress: bool = False) -> None:
        """Write the reader's graphs and the catalog as they may know it, audited;
        ``progress`` counts the quads written on stderr."""
        from tqdm import tqdm

        self.follow()  # first, so the audit record names the graphs written
        named: list[JsonValue] = list(self.scope.graphs)
        with (
            self.audited("dump", {"format": str(rdf_format), "graphs": named}),
            tqdm(desc="dumping", unit=" quads", disable=not progress, file=sys.stderr) as bar,
        ):
            publish.dump(self.store, self.scope, output, rdf_format, bar.update)

    def prune(self, keep: int) -> list[str]:
        """Forget all but the latest ``keep`` runs and their graphs, audited; only a reader
        cleared for every graph may."""
        check_prune(keep, withheld=bool(self.scope.withheld_graphs))
        with self.writing(), self.audited("build", {"prune_keep": keep}) as record:
            forgotten = self.writer().prune(keep)
            self.calls.detail(record, {"forgotten": list(forgotten)})
        self.wrote()
        return forgotten

    def write_review(
        self, subject: dict[str, JsonValue], card: str, title: str, note: str | None, is_card: bool
    ) -> str:
        """Write one review into the reviews graph at the reader's clearance, audited."""
        graph = v.reviews_graph(self.reader.tenant, self.brain_id, self.reader.clearance.value)
        with self.writing(), self.audited("review", subject) as record:
            review = reviewing.write(self.writer(), graph, subject, card, title, note, is_card)
            self.calls.detail(record, {"review": review})
        self.wrote()
        return review

    def gazetteer(self, graphs: Sequence[str] | None = None) -> Gazetteer:
        """The entity gazetteer over ``graphs`` (default: the reader's): drafts, revisions,
        RFCs, people, threads and the heading index, built on first use and shared by every
        reader of the same graphs."""
        key = self._key(graphs)
        return self.lookups.gazetteer(self.copies.reads(self.store, key), key)

    def heading_index(self, graphs: Sequence[str] | None = None) -> tuple[HeadingIndex, QueryRun]:
        """The heading search index over every section heading in ``graphs`` (default: the
        reader's), built on first use and shared by every reader of the same graphs."""
        key = self._key(graphs)
        return self.lookups.heading_index(self.copies.reads(self.store, key), key)

    def indexes(self, session: Session) -> Gazetteer:
        """Give ``session`` the heading index of its graphs, and return their gazetteer."""
        session.headings = self.heading_index(session.graphs)
        return self.gazetteer(session.graphs)

    def read_lookups(self) -> None:
        """Build now what the first questions would for this reader: the heading index, and
        the rows why cards look their pull requests and commits up in. A server does it before
        it listens, so no question waits for it."""
        self.heading_index()
        discussion.read_lookups(self.session())

    @property
    def write_generation(self) -> int:
        """A number that changes with every write through this store's readers (a review, a
        prune, a build): a copy of graphs taken before it is stale."""
        return self.copies.generation

    def evaluate(self, sparql: str) -> QuerySolutions | QueryBoolean | QueryTriples:
        """The engine's lazy result of your own read query over the reader's graphs (SELECT,
        ASK, CONSTRUCT or DESCRIBE), for a caller that streams rows under a deadline (the
        SPARQL endpoint); the text is checked as in :meth:`Brain.query`. Not audited here:
        the caller records the call. Only the embedded store streams. The engine computes rows
        as they are pulled, on the pulling thread: pull them on a thread sealed off the network
        (:func:`~ratified_rdf.queries.offline.forbid_network`), as the query sandbox does."""
        from ratified_rdf.queries.guard import check_reader_query

        sparql = check_reader_query(sparql).text  # run what the guard read, not what came
        self.follow()
        if not isinstance(self.store, OxigraphStore):
            raise BrainError(
                "Only a brain in the embedded Oxigraph store streams query results; this one "
                "is on a server: query that server's own endpoint."
            )
        reads = self.copies.reads(self.store, self.scope.read_graphs)
        engine = reads if isinstance(reads, MemoryDataset) else self.store
        return engine.evaluate(sparql, self.scope.read_graphs)

    def export(self, graphs: Sequence[str]) -> bytes:
        """``graphs`` as N-Quads, for a copy kept elsewhere (the SPARQL endpoint's workers).
        Every graph must be one the reader reads, or the catalog, exported as the reader may
        know it (:func:`~ratified_rdf.graph.publish.reader_catalog`, as their dump holds it);
        the export itself is not audited (the queries run over the copy are)."""
        self.follow()
        if not set(graphs) <= {*self.scope.read_graphs, self.catalog}:
            raise BrainError("Only graphs this reader may read can be exported.")
        plain = [g for g in graphs if g != self.catalog]
        # The copy in memory of exactly these graphs, if this process keeps one: written out
        # by the engine alone, several times quicker than from the store, and without holding
        # the interpreter's lock that a server's cards need meanwhile.
        copy = self.copies.copies.get(tuple(sorted(plain)))
        if copy is not None:
            data = copy.nquads()
        else:
            data = publish.nquads(self.store, plain) if plain else b""
        if self.catalog in graphs:
            data += publish.catalog_nquads(self.store, self.scope)
        return data

    def describe_in_catalog(self, iri: str) -> list[Triple]:
        """What the brain's catalog (its runs, the graphs each wrote and their clearance) says
        about ``iri``, with it as subject. The catalog is no graph a query reads: a caller keeps
        only what its reader may know of (:func:`~ratified_rdf.surfaces.standard.
        scoped_description` does)."""
        self.follow()
        return self.store.describe([iri], [self.catalog])

    def catalog_triples(self) -> list[Triple]:
        """The catalog as this reader may know it: what their dump holds of it
        (:func:`~ratified_rdf.graph.publish.reader_catalog`)."""
        self.follow()
        return publish.reader_catalog(self.store, self.scope)

    def catalog_size(self) -> int:
        """How many triples the catalog holds, as this reader may know it."""
        return len(self.catalog_triples())

    def _key(self, graphs: Sequence[str] | None) -> tuple[str, ...]:
        if graphs is None:
            self.follow()
        return tuple(self.scope.read_graphs if graphs is None else graphs)


def share(in_memory: bool) -> tuple[GraphCopies, Lookups]:
    """What readers of one store share: copies in memory (when ``in_memory``) and the
    lookups built from the graphs, forgotten together on a write."""
    copies, lookups = GraphCopies(in_memory=in_memory), Lookups()
    copies.when_written(lookups.forget)
    copies.when_written(lookups.forget_headings, reopened=True)
    return copies, lookups


def open_store(path: str | Path, in_memory: bool) -> TripleStore:
    """The store at ``path``: a server by its URL (:meth:`SparqlProtocolStore.at`), or a
    folder, opened shared: read-only until a write, so servers, MCP servers, builds and any
    number of readers use one brain at once."""
    if str(path).startswith(("http://", "https://")):
        if in_memory:
            raise BrainError(
                f"in_memory copies a store folder; a server holds its own data. Open {path} "
                "without it."
            )
        from ratified_rdf.graph.remote import SparqlProtocolStore  # httpx: for a server only

        return SparqlProtocolStore.at(str(path))
    if not Path(path).is_dir():
        raise BrainError(
            f"There is no brain at {path}. Build one first: ratified build records/tls13 "
            f"--store {path}"
        )
    return OxigraphStore(Path(path), shared=True)


def build_store(path: str | Path | None) -> TripleStore:
    """The store a build writes into: in memory when ``path`` is ``None``, a server by its
    URL, else a folder."""
    if path is not None and str(path).startswith(("http://", "https://")):
        from ratified_rdf.graph.remote import SparqlProtocolStore

        return SparqlProtocolStore.at(str(path))
    return OxigraphStore(path)


@contextmanager
def closed_on_error(*held: TripleStore | AuditLog | None) -> Iterator[None]:
    """Close what is ``held`` (each one not ``None``) if the block fails, then fail."""
    try:
        yield
    except BaseException:
        for thing in held:
            if thing is not None:
                thing.close()
        raise
