"""``Lookups``: what readers of one store build once from its graphs and share: the heading
search index, the entity gazetteer, and the kept rows of whole-graph queries.

Each is keyed by the set of graphs it was read from, so readers at different clearances keep
their own. A write forgets them all (see :meth:`forget`): a run's graphs never change once
written, so until then the same graphs give the same index. The rows the heading index and the
gazetteer are built from are saved in a shared store's folder for the next process
(:mod:`~ratified_rdf.answers.saved_rows`), so a one-shot ``ratified ask`` reads a file
instead of running their queries; and the heading index and gazetteer built from those rows
are saved beside them, so it does not rebuild them either.
"""

from __future__ import annotations

import importlib
import re
import threading
from collections import Counter
from collections.abc import Sequence
from types import ModuleType

from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.saved_rows import SavedRows, Values, values_of
from ratified_rdf.answers.session import Kept
from ratified_rdf.graph.store import Queryable
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.run import source_of

_SAVED_AS = "lookups"
_BUILT_FROM = (
    "headings",
    "gazetteer_revisions",
    "documents",
    "gazetteer_people",
    "gazetteer_threads",
    "gazetteer_mail",
)
"""The queries whose rows the heading index and the gazetteer are built from."""


def _builders() -> tuple[ModuleType, ...]:
    """The modules whose code decides what the saved heading index and gazetteer hold."""
    return tuple(
        importlib.import_module(name)
        for name in (
            __name__,
            "ratified_rdf.answers.entities",
            "ratified_rdf.answers.heading_search",
            "ratified_rdf.answers.spelling",
            "ratified_rdf.sources.document",
        )
    )


class Lookups:
    """Heading indexes, gazetteers and kept rows, per set of graphs."""

    def __init__(self) -> None:
        self.headings: dict[tuple[str, ...], tuple[HeadingIndex, QueryRun]] = {}
        self.gazetteers: dict[tuple[str, ...], Gazetteer] = {}
        self.kept: Kept = {}
        self._building = threading.RLock()
        self.saved: SavedRows | None = None
        """Where the rows of whole-graph queries are saved for the next process (a shared
        store's folder), if anywhere (:mod:`~ratified_rdf.answers.saved_rows`)."""

    def forget(self) -> None:
        """Forget gazetteers and kept rows (after a write); heading indexes stay, since a
        write of a review or a prune leaves the run's section graphs as they were."""
        self.kept.clear()
        self.gazetteers.clear()

    def forget_headings(self) -> None:
        """Forget heading indexes too (the store was opened afresh: a new run reads new
        graphs, and the old run's index would only hold memory)."""
        self.headings.clear()

    def heading_index(
        self, reads: Queryable, graphs: Sequence[str]
    ) -> tuple[HeadingIndex, QueryRun]:
        """The heading search index over every section heading in ``graphs``, read from
        ``reads`` on first use; a later use says its query was reused."""
        key = tuple(graphs)
        held = self.headings.get(key)
        if held is None:
            # A server's first question and its settling thread may both ask: built once.
            with self._building:
                held = self.headings.get(key)
                if held is None and not self._load_saved(key):
                    return self._heading_index(reads, key)
                held = self.headings[key]
        index, run = held
        return index, run.model_copy(update={"reused": True})

    def _heading_index(
        self, reads: Queryable, key: tuple[str, ...]
    ) -> tuple[HeadingIndex, QueryRun]:
        rows, run = self._rows(reads, key, "headings")
        entries = [
            HeadingEntry(
                section=row["section"],
                heading=row["heading"],
                page=row["page"],
                number=row.get("number"),
                document=row["documentLabel"],
                is_rfc="rfcNumber" in row,
                # An RFC section stands for itself (its alignment with a later RFC is
                # the next chain); a revision's section for the RFC section it became.
                final=row["section"] if "rfcNumber" in row else row.get("final"),
            )
            for row in rows
        ]
        self.headings[key] = (HeadingIndex.build(entries), run)
        return self.headings[key]

    def gazetteer(self, reads: Queryable, graphs: Sequence[str]) -> Gazetteer:
        """The entity gazetteer over ``graphs``: drafts, revisions, RFCs, people, threads and
        the heading index, read from ``reads`` on first use."""
        key = tuple(graphs)
        found = self.gazetteers.get(key)
        if found is not None:
            return found
        with self._building:  # built once, as the heading index is
            found = self.gazetteers.get(key)
            if found is None and key not in self.headings and self._load_saved(key):
                found = self.gazetteers[key]
            return found if found is not None else self._gazetteer(reads, key)

    def _load_saved(self, key: tuple[str, ...]) -> bool:
        """Take the heading index and gazetteer over ``key`` that an earlier process saved,
        when they are current (:meth:`SavedRows.load_object`); whether they were."""
        saved = self.saved
        if saved is None or not key:
            return False
        found = saved.load_object(_SAVED_AS, key, saved.generation(), _BUILT_FROM, _builders())
        if not (isinstance(found, tuple) and len(found) == 3):
            return False
        index, run, gazetteer = found
        if not (
            isinstance(index, HeadingIndex)
            and isinstance(run, QueryRun)
            and isinstance(gazetteer, Gazetteer)
            and gazetteer.headings is index
        ):
            return False
        self.headings[key] = (index, run)
        self.gazetteers[key] = gazetteer
        return True

    def _gazetteer(self, reads: Queryable, key: tuple[str, ...]) -> Gazetteer:
        generation = self.saved.generation() if self.saved is not None else None
        index, _ = self.heading_index(reads, key)

        def rows(name: str) -> list[Values]:
            return self._rows(reads, key, name)[0] if key else []

        drafts: dict[str, list[str]] = {}
        became: dict[str, int] = {}
        for row in rows("gazetteer_revisions"):
            name = row["draftName"]
            drafts.setdefault(name, []).append(row["revisionNumber"])
            if "became" in row:
                number = row["became"].rsplit("rfc", 1)[-1]
                if number.isdigit():
                    became[name] = int(number)
        rfcs: dict[int, str | None] = {}
        titles: dict[int, str] = {}
        draft_titles: dict[str, str] = {}
        for row in rows("documents"):
            if "rfcNumber" in row:
                rfc = int(row["rfcNumber"])
                rfcs[rfc] = row.get("issued")
                if "title" in row:
                    titles[rfc] = row["title"]
            else:
                drafts.setdefault(row["name"], [])
                if "title" in row:
                    draft_titles[row["name"]] = row["title"]
        people: dict[str, tuple[str, list[str]]] = {}
        for row in rows("gazetteer_people"):
            iri = row["person"]
            entry = people.setdefault(iri, (row["name"], []))
            if row.get("alias"):
                entry[1].append(row["alias"])
        threads = rows("gazetteer_threads")
        found = Gazetteer(
            drafts=drafts,
            became=became,
            rfcs=rfcs,
            people=[(iri, name, aliases) for iri, (name, aliases) in people.items()],
            threads=(int(row["number"]) for row in threads),
            mail=bool(rows("gazetteer_mail")),
            issues=any(row["kind"].endswith("#Issue") for row in threads),
            group=len(_brains_read(key)) > 1,
            headings=index,
            subject_words=_shared_words([_words(title) for title in titles.values()]),
            rfc_titles=titles,
            draft_titles=draft_titles,
            groups={
                match.group(1)
                for name in drafts
                if (match := re.match(r"draft-ietf-([a-z0-9]+)-", name))
            },
        )
        self.gazetteers[key] = found
        # Saved only when no write came while it was built (its rows are of one generation).
        if self.saved is not None and key and self.saved.generation() == generation:
            found.speller  # noqa: B018 - built now, so that it is saved with the rest
            self.saved.save_object(
                _SAVED_AS,
                key,
                generation,
                _BUILT_FROM,
                _builders(),
                (index, self.headings[key][1], found),
            )
        return found

    def _rows(
        self, reads: Queryable, key: tuple[str, ...], name: str
    ) -> tuple[list[Values], QueryRun]:
        """The values of the rows of ``sparql/<name>.rq`` over ``key`` and the record of the
        run they came from: saved by an earlier process when still current, else run now
        (and saved for the next)."""
        saved = self.saved
        if saved is None:
            rows, run = run_query(reads, key, name)
            return values_of(rows), run
        generation = saved.generation()
        found = saved.values(name, key, generation)
        if found is not None:
            return found
        rows, run = run_query(reads, key, name)
        saved.save(key, generation, rows, run)
        return values_of(rows), run


def _brains_read(graphs: Sequence[str]) -> set[str]:
    """The brains whose runs ``graphs`` come from: a run's graph is named
    ``…/<brain>/<run>/<source>``; the reviews graphs (``…/<brain>/reviews-<level>``) are the
    reading brain's own, so they are left out."""
    return {g.rsplit("/", 2)[0] for g in graphs if source_of(g) != "reviews"}


def _shared_words(titles: Sequence[set[str]]) -> set[str]:
    """The words in more than half of the RFC titles: the brain's own subject ("TLS",
    "QUIC"). A word only some titles hold names one RFC's topic ("congestion control" in
    RFC 9002's title) and must still find that RFC's section of the same name."""
    counts = Counter(word for title in titles for word in title)
    return {word for word, count in counts.items() if 2 * count > len(titles)}


def _words(text: str) -> set[str]:
    """The lower-case words of a title, for the brain's subject words."""
    return {w for w in re.findall(r"[a-z0-9]+", text.casefold()) if not w.isdigit()}
