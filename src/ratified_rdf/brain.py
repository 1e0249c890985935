"""``Brain``: the library's front door. Open a store, ask questions, run queries, validate, dump."""

from __future__ import annotations

from pathlib import Path
from typing import IO

from pyoxigraph import RdfFormat

from ratified_rdf.answers import discussion, holdings, people, sections, threads
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.models import Alternative, Answer
from ratified_rdf.answers.router import Intent, route
from ratified_rdf.answers.session import Session
from ratified_rdf.build import BuildReport, build
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import ShaclGate, Violation, to_rdflib
from ratified_rdf.graph.store import OxigraphStore, QueryResult, Term, TripleStore
from ratified_rdf.graph.writer import current_graphs
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.files import ParamValue


class BrainError(RuntimeError):
    """The store holds no brain, or not the one asked for."""


class Brain:
    """A built brain in a store, read through its current run's graphs.

    ``read_graphs`` are the current run's source graphs: the default graph of every query.
    ``graphs`` adds the catalog graph (runs and their provenance): what validate and dump
    cover. Keeping the catalog out of the query default graph keeps every lookup to two
    graphs, which halves the engine time of short queries on Oxigraph.
    """

    def __init__(self, store: TripleStore, brain_id: str) -> None:
        self.store = store
        self.brain_id = brain_id
        self.read_graphs: list[str] = []
        self.graphs: list[str] = []
        self._headings: tuple[HeadingIndex, QueryRun] | None = None
        self.refresh()

    @classmethod
    def open(cls, path: str | Path, brain_id: str | None = None) -> Brain:
        """Open the brain stored at ``path`` (a folder written by ``ratified build``)."""
        folder = Path(path)
        if not folder.is_dir():
            raise BrainError(
                f"There is no brain at {folder}. Build one first: "
                f"ratified build records/tls13 --store {folder}"
            )
        return cls.from_store(OxigraphStore(folder), brain_id)

    @classmethod
    def from_store(cls, store: TripleStore, brain_id: str | None = None) -> Brain:
        """Use a store already opened (embedded or remote)."""
        rows, _ = run_query(store, None, "brains")
        ids = [row["brain"].value.rsplit("/", 1)[-1] for row in rows]
        if not ids:
            raise BrainError(
                "This store holds no brain yet. Build one: ratified build records/tls13"
            )
        if brain_id is None:
            if len(ids) > 1:
                raise BrainError(f"This store holds several brains ({', '.join(ids)}); name one.")
            brain_id = ids[0]
        elif brain_id not in ids:
            raise BrainError(f"This store holds no brain {brain_id!r}; it holds {', '.join(ids)}.")
        return cls(store, brain_id)

    @classmethod
    def build(
        cls,
        manifest: str | Path,
        *,
        path: str | Path | None = None,
        source: str | None = None,
        progress: bool = False,
    ) -> tuple[Brain, BuildReport]:
        """Build the brain a manifest describes into ``path`` (in memory when ``None``)."""
        store = OxigraphStore(path)
        try:
            report = build(manifest, source=source, store=store, progress=progress)
        except BaseException:
            store.close()
            raise
        return cls(store, report.brain_id), report

    def refresh(self) -> None:
        """Re-read which run is current (after a rebuild by another process)."""
        self.graphs = current_graphs(self.store, self.brain_id)
        self.read_graphs = [g for g in self.graphs if g != v.catalog_graph(self.brain_id)]
        self._headings = None

    def _session(self) -> Session:
        return Session(self.store, self.read_graphs)

    def ask(self, question: str) -> Answer:
        """Answer a question in words, through the deterministic router."""
        target = route(question)
        session = self._session()
        if target.intent is Intent.SECTION_BECAME and target.draft and target.revision:
            return sections.section_became(
                session, question, target.draft, target.revision, target.section or ""
            )
        if target.intent is Intent.SECTION_BECAME:
            return sections.which_revision(session, question, target.section or "", target.draft)
        if target.intent is Intent.THREAD and target.number is not None:
            return threads.thread_lookup(session, question, target.number)
        if target.intent is Intent.PERSON and target.who:
            return people.person_lookup(session, question, target.who)
        if target.topic:
            return self._by_heading(session, question, target.intent)
        if target.intent is Intent.WHO_TO_ASK:
            return people.who_to_ask(session, question, target.rfc, target.section or "")
        if target.intent in {Intent.DISCUSSION, Intent.COUNT}:
            return discussion.discussion(
                session, question, target.rfc, target.section or "", count=target.count
            )
        if target.intent is Intent.SECTION_HISTORY:
            return sections.section_history(session, question, target.rfc, target.section or "")
        if target.intent is Intent.REVISION_CHAIN and target.draft and target.revision:
            return sections.revision_chain(session, question, target.draft, target.revision)
        if target.intent is Intent.REVISIONS and target.draft:
            return sections.revisions(session, question, target.draft)
        if target.intent is Intent.HOLDINGS:
            return holdings.holdings(session, question)
        return holdings.out_of_scope(session, question, target.reason or "it is out of scope")

    def heading_index(self) -> tuple[HeadingIndex, QueryRun]:
        """The heading search index over every section heading, built on first use."""
        if self._headings is None:
            rows, run = run_query(self.store, self.read_graphs, "headings")
            entries = [
                HeadingEntry(
                    section=row["section"].value,
                    heading=row["heading"].value,
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
            self._headings = (HeadingIndex.build(entries), run)
        return self._headings

    def _by_heading(self, session: Session, question: str, intent: Intent) -> Answer:
        """Find the section a question is about by its heading, then answer for it."""
        index, run = self.heading_index()
        found = index.search(question)
        session.queries.append(run)
        rfc_hits = [h for h in found.hits if h.entry.is_rfc and h.entry.number]
        if not rfc_hits:
            terms = ", ".join(found.query_terms) or "none"
            return holdings.out_of_scope(
                session, question, f"no RFC section heading matches its words (terms: {terms})"
            )
        best = rfc_hits[0]
        rfc = int(best.entry.document.removeprefix("RFC ").strip())
        number = best.entry.number or ""
        if intent is Intent.WHO_TO_ASK:
            answer = people.who_to_ask(session, question, rfc, number)
        else:
            answer = discussion.discussion(session, question, rfc, number)
        matched = ", ".join(f"'{w}'" for w in best.matched)
        lead = (
            f"Matched the words {matched} to the heading of {best.entry.document} "
            f"§{number} {best.entry.heading}. "
        )
        asking = "who should I ask about" if intent is Intent.WHO_TO_ASK else "who discussed"
        alternatives = [
            Alternative(
                question=f"{asking} {hit.entry.document} section {hit.entry.number}?",
                reason=(
                    f"runner-up heading: {hit.entry.heading} (matched "
                    + ", ".join(f"'{w}'" for w in hit.matched)
                    + ")"
                ),
            )
            for hit in rfc_hits[1:2]
        ]
        return answer.model_copy(
            update={
                "summary": lead + answer.summary,
                "alternatives": [*answer.alternatives, *alternatives],
            }
        )

    def section_became(self, draft: str, revision: str, section: str) -> Answer:
        """What section ``section`` of revision ``revision`` of ``draft`` became in the RFC."""
        question = f"what did section {section} of {draft}-{revision} become in the RFC?"
        return sections.section_became(self._session(), question, draft, revision, section)

    def section_history(self, rfc: int, section: str) -> Answer:
        """Each revision's number and title for RFC ``rfc`` section ``section``."""
        question = f"history of RFC {rfc} section {section}"
        return sections.section_history(self._session(), question, rfc, section)

    def section_discussion(self, rfc: int, section: str) -> Answer:
        """Posts, threads, commits and people connected to an RFC section while it changed."""
        question = f"who discussed RFC {rfc} section {section}?"
        return discussion.discussion(self._session(), question, rfc, section)

    def revision_chain(self, draft: str, revision: str) -> Answer:
        """The chain of revisions from one revision to its RFC."""
        question = f"what chain leads from {draft}-{revision} to the RFC?"
        return sections.revision_chain(self._session(), question, draft, revision)

    def holdings(self) -> Answer:
        """What the graph holds."""
        return holdings.holdings(self._session(), "what does the graph hold?")

    def run(self, name: str, **params: ParamValue) -> tuple[list[dict[str, Term]], QueryRun]:
        """Run the named query ``sparql/<name>.rq`` with typed parameters."""
        return run_query(self.store, self.read_graphs, name, params)

    def query(self, sparql: str) -> QueryResult:
        """Run your own read-only SELECT or ASK over the brain's current graphs."""
        return self.store.query(sparql, self.read_graphs)

    def validate(self) -> list[Violation]:
        """Validate every current graph with pyshacl; an empty list means the brain conforms."""
        data = to_rdflib(self.store.triples(self.graphs))
        return ShaclGate().validate_graph(data, f"brain {self.brain_id}")

    def dump(self, output: IO[bytes], rdf_format: RdfFormat = RdfFormat.N_QUADS) -> None:
        """Write the brain's current graphs (N-Quads and TriG keep graph names)."""
        self.store.dump(output, self.graphs, rdf_format)

    def close(self) -> None:
        """Flush and release the store."""
        self.store.close()

    def __enter__(self) -> Brain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
