"""A new discussion source is one registered class: the Pigeon working group's meeting minutes.

The minutes are as fictional as the Pigeon Transport Protocol (tests/pigeon.py): one interim
meeting, each minuted remark a post. The source below reads them, names their speakers for
identity resolution, resolves their citations through the resolver every source shares, and
maps them with the SIOC terms GitHub and mail use, so no shape, query or card changes for it.
It is registered for these tests only; docs/extending.md walks through the same code.
"""

from __future__ import annotations

import io
import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from pydantic import BaseModel, ConfigDict
from pyoxigraph import NamedNode, RdfFormat, Store

from ratified_rdf import Brain
from ratified_rdf.answers.models import DiscussionPost
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.mapping import XSD_DT, Batch
from ratified_rdf.records.discussion import CitationRecord, CitationResolver
from ratified_rdf.records.identity import Identity
from ratified_rdf.records.manifest import ManifestError, load_manifest
from ratified_rdf.sources.base import (
    MapContext,
    PeopleEvidence,
    ReadContext,
    RegistryError,
    Source,
    register_source,
    registered_sources,
    source_names,
    unregister_source,
)
from tests.pigeon import FIXTURES, make_pigeon_repo

MINUTES_URL = "https://example.org/pigeon/minutes/2029-04-12"
MINUTES = f"""Pigeon WG interim meeting, 2029-04-12
{MINUTES_URL}

14:05 Alice Example: Section 2.1 should say when a datagram counts as tied.
14:20 Dana Example: The chairs will ask the list about the knot.
"""
"""An interim between -00 (posted 2029-01-12) and -01 (2029-06-03): Alice's "Section 2.1" is
-00's Take-off, which became RFC 9999 §3.1 and was still changing."""

_ITEM = re.compile(r"^(\d\d):(\d\d) ([^:]+): (.+)$")


# --- the source: what docs/extending.md calls sources/minutes.py ------------------------------


class MinutesEntry(BaseModel):
    """The manifest's ``[discussion.minutes]`` table: the minutes files beside it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    files: tuple[str, ...]


class MinutedItem(BaseModel):
    """One remark as minuted: when, who, what."""

    model_config = ConfigDict(frozen=True)

    index: int
    spoken: datetime
    speaker: str
    text: str


class Meeting(BaseModel):
    """One meeting's minutes: the title line, the page they are published at, the remarks."""

    model_config = ConfigDict(frozen=True)

    day: str
    title: str
    url: str
    items: tuple[MinutedItem, ...]


def read_minutes(text: str) -> Meeting:
    """A minutes file: a title line ending with the day, the page's URL, then one remark a
    line (``HH:MM Speaker: text``)."""
    title, url, *lines = [line for line in text.splitlines() if line.strip()]
    day = title.rsplit(" ", 1)[-1]
    items = []
    for line in lines:
        match = _ITEM.match(line)
        if match:
            hour, minute, speaker, said = match.groups()
            spoken = datetime.fromisoformat(f"{day}T{hour}:{minute}:00").replace(tzinfo=UTC)
            items.append(MinutedItem(index=len(items), spoken=spoken, speaker=speaker, text=said))
    return Meeting(day=day, title=title, url=url, items=tuple(items))


def post_key(meeting: Meeting, item: MinutedItem) -> str:
    return f"minutes/{meeting.day}/{item.index}"


class MinutesSource(Source[tuple[Meeting, ...]]):
    """Meeting minutes: each minuted remark is a post, each meeting its thread."""

    name = "minutes"
    entry = MinutesEntry

    def read(self, context: ReadContext) -> tuple[Meeting, ...]:
        entry = context.entry(self.name)
        assert isinstance(entry, MinutesEntry)
        return tuple(read_minutes(context.path(f).read_text()) for f in entry.files)

    def people(self, read: tuple[Meeting, ...], context: ReadContext) -> PeopleEvidence:
        speakers = {item.speaker for meeting in read for item in meeting.items}
        return PeopleEvidence(
            identities=[Identity(kind="document", name=name) for name in sorted(speakers)]
        )

    def citations(
        self, read: tuple[Meeting, ...], resolver: CitationResolver
    ) -> list[CitationRecord]:
        return [
            citation
            for meeting in read
            for item in meeting.items
            for citation in resolver.cite(
                post_key(meeting, item), item.spoken, item.text, meeting.title
            )
        ]

    def batches(self, read: tuple[Meeting, ...], context: MapContext) -> Iterator[Batch]:
        for meeting in read:
            batch = Batch(context.graph(self.name), f"minutes of {meeting.title}")
            thread = v.source_record_iri(self.name, meeting.day)
            batch.add(thread, "rdf:type", v.term("sioc:Thread").value)
            batch.text(thread, "dcterms:title", meeting.title)
            batch.add(thread, "foaf:page", meeting.url)
            for item in meeting.items:
                post = v.source_record_iri(self.name, meeting.day, str(item.index))
                batch.add(post, "rdf:type", v.term("sioc:Post").value)
                batch.add(post, "sioc:has_container", thread)
                batch.typed(post, "dcterms:created", item.spoken, XSD_DT)
                batch.add(post, "foaf:page", f"{meeting.url}#item-{item.index}")
                batch.text(post, "rr:postKind", "comment")
                batch.text(post, "sioc:content", item.text)
                person = context.people.iri(Identity(kind="document", name=item.speaker))
                if person is not None:
                    batch.add(post, "dcterms:creator", person)
                context.add_citations(batch, post, post_key(meeting, item))
            yield batch


# --- the tests --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def registered() -> Iterator[None]:
    """The minutes source, registered for this module's tests and forgotten after them."""
    register_source(MinutesSource)
    yield
    unregister_source("minutes")


def _records(folder: Path, extra: str) -> Path:
    """The Pigeon records folder, copied, with ``extra`` added to its manifest."""
    records = folder / "records"
    shutil.copytree(FIXTURES, records)
    manifest = records / "manifest.toml"
    manifest.write_text(manifest.read_text() + extra)
    return records


def _build(folder: Path, manifest_extra: str) -> Path:
    """The Pigeon brain built with its minutes into a store folder under ``folder``."""
    records = _records(
        folder, manifest_extra + '\n[discussion.minutes]\nfiles = ["minutes-2029-04-12.txt"]\n'
    )
    (records / "minutes-2029-04-12.txt").write_text(MINUTES)
    repo = make_pigeon_repo(folder / "git")
    brain, report = Brain.build(records, path=folder / "store", source=str(repo))
    brain.close()
    assert all("undated@example.com" in problem for problem in report.problems)
    return folder / "store"


@pytest.fixture(scope="module")
def built(registered: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Pigeon brain with its minutes, public, under a licence of their own."""
    return _build(
        tmp_path_factory.mktemp("minutes"),
        'minutes = "https://example.org/licences/fictional-pigeon-minutes"\n',
    )


def test_registered_sources_come_after_the_built_in_ones(registered: None) -> None:
    assert [s.name for s in registered_sources()] == ["github", "mail", "minutes"]
    assert source_names()[-3:] == ("github", "mail", "minutes")


def test_a_source_name_is_registered_once(registered: None) -> None:
    with pytest.raises(RegistryError, match="already registered"):
        register_source(MinutesSource)

    class Shouting(MinutesSource):
        name = "Minutes-2"

    with pytest.raises(RegistryError, match="lower-case letters and digits"):
        register_source(Shouting)


def test_the_manifest_knows_only_registered_sources(registered: None, tmp_path: Path) -> None:
    records = _records(tmp_path, '\n[discussion.agenda]\nfiles = ["agenda.txt"]\n')
    with pytest.raises(ManifestError, match="has no field 'agenda'"):
        load_manifest(records)
    records = _records(tmp_path / "b", '\n[discussion.minutes]\nfile = "one.txt"\n')
    with pytest.raises(ManifestError, match="files"):
        load_manifest(records)


def test_an_unregistered_source_is_not_a_manifest_key(tmp_path: Path) -> None:
    records = _records(tmp_path, 'agenda = "https://example.org/licences/agenda"\n')
    with pytest.raises(ManifestError, match="'agenda' is not a source"):
        load_manifest(records)


def test_a_section_the_minutes_cite_shows_them_on_its_card(built: Path) -> None:
    with Brain.open(built) as brain:
        answer = brain.ask("who discussed RFC 9999 section 3.1?")
        (graph,) = [g for g in brain.read_graphs if g.endswith("/minutes")]
        dumped = io.BytesIO()
        brain.dump(dumped, RdfFormat.N_QUADS)  # the reader's graphs and the catalog
    store = Store()
    store.load(dumped.getvalue(), format=RdfFormat.N_QUADS)
    catalog = {
        (q.predicate.value, q.object.value)
        for q in store.quads_for_pattern(NamedNode(graph), None, None)
    }
    (post,) = _minuted(answer.results)
    assert (post.post_url, post.post_kind, post.author) == (
        f"{MINUTES_URL}#item-0",
        "comment",
        "Alice Example",  # the speaker's name is one of her identities: one person
    )
    # Resolved as every post is: through -00, current at the meeting, to RFC 9999 §3.1.
    assert (post.document, post.section_number, post.cited_text, post.rule) == (
        "draft-example-pigeon-00",
        "2.1",
        "Section 2.1",
        "current-revision",
    )
    assert post.while_changing
    assert MINUTES_URL in [e.url for e in answer.evidence if e.role == "thread"]
    # Dana's remark cites nothing; the card's other posts are GitHub's and mail's, as before.
    assert len([r for r in answer.results if isinstance(r, DiscussionPost)]) == 5
    # The minutes' graph is their own, at the manifest's clearance and under its licence.
    assert {
        (v.RR + "sourceKind", "minutes"),
        (v.RR + "clearance", v.clearance_iri("public")),
        (v.DCTERMS + "license", "https://example.org/licences/fictional-pigeon-minutes"),
    } <= catalog


def test_minutes_at_a_higher_clearance_are_withheld(
    registered: None, tmp_path_factory: pytest.TempPathFactory
) -> None:
    store = _build(tmp_path_factory.mktemp("internal"), '\n[clearance]\nminutes = "internal"\n')
    with Brain.open(store) as public:
        answer = public.ask("who discussed RFC 9999 section 3.1?")
    assert _minuted(answer.results) == []
    assert len([r for r in answer.results if isinstance(r, DiscussionPost)]) == 4


def _minuted(results: list[object]) -> list[DiscussionPost]:
    return [
        r for r in results if isinstance(r, DiscussionPost) and r.post_url.startswith(MINUTES_URL)
    ]
