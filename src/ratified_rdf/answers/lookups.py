"""``Lookups``: what readers of one store build once from its graphs and share: the heading
search index, the entity gazetteer, and the kept rows of whole-graph queries.

Each is keyed by the set of graphs it was read from, so readers at different clearances keep
their own. A write forgets them all (see :meth:`forget`): a run's graphs never change once
written, so until then the same graphs give the same index.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from ratified_rdf.answers.entities import Gazetteer
from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.answers.session import Kept
from ratified_rdf.graph.store import Queryable, Term
from ratified_rdf.queries import QueryRun, run_query
from ratified_rdf.queries.run import source_of


class Lookups:
    """Heading indexes, gazetteers and kept rows, per set of graphs."""

    def __init__(self) -> None:
        self.headings: dict[tuple[str, ...], tuple[HeadingIndex, QueryRun]] = {}
        self.gazetteers: dict[tuple[str, ...], Gazetteer] = {}
        self.kept: Kept = {}

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
        if key in self.headings:
            index, run = self.headings[key]
            return index, run.model_copy(update={"reused": True})
        rows, run = run_query(reads, key, "headings")
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
        self.headings[key] = (HeadingIndex.build(entries), run)
        return self.headings[key]

    def gazetteer(self, reads: Queryable, graphs: Sequence[str]) -> Gazetteer:
        """The entity gazetteer over ``graphs``: drafts, revisions, RFCs, people, threads and
        the heading index, read from ``reads`` on first use."""
        key = tuple(graphs)
        held = self.gazetteers.get(key)
        if held is not None:
            return held
        index, _ = self.heading_index(reads, key)

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
        titles: dict[int, str] = {}
        for row in rows("documents"):
            if "rfcNumber" in row:
                rfc = int(row["rfcNumber"].value)
                rfcs[rfc] = row["issued"].value if "issued" in row else None
                if "title" in row:
                    titles[rfc] = row["title"].value
            else:
                drafts.setdefault(row["name"].value, [])
        people: dict[str, tuple[str, list[str]]] = {}
        for row in rows("gazetteer_people"):
            iri = row["person"].value
            entry = people.setdefault(iri, (row["name"].value, []))
            if "alias" in row and row["alias"].value:
                entry[1].append(row["alias"].value)
        threads = rows("gazetteer_threads")
        found = Gazetteer(
            drafts=drafts,
            became=became,
            rfcs=rfcs,
            people=[(iri, name, aliases) for iri, (name, aliases) in people.items()],
            threads=(int(row["number"].value) for row in threads),
            mail=bool(rows("gazetteer_mail")),
            issues=any(row["kind"].value.endswith("#Issue") for row in threads),
            group=len(_brains_read(key)) > 1,
            headings=index,
            subject_words=_shared_words([_words(title) for title in titles.values()]),
            rfc_titles=titles,
            groups={
                match.group(1)
                for name in drafts
                if (match := re.match(r"draft-ietf-([a-z0-9]+)-", name))
            },
        )
        self.gazetteers[key] = found
        return found


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
