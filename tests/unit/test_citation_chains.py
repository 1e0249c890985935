"""Which draft a citation that names none is read against, on an invented repository with two
drafts open at once: draft-example-lantern (→ RFC 9901) and draft-example-ferry (→ RFC 9902).

Lantern -00 is posted 2030-01-01 and -01 2030-06-01, RFC 9901 in March 2031; Ferry -00 is
posted 2030-03-01 and -01 2030-09-01, RFC 9902 in June 2031. So in February 2030 only Lantern
is open, from March 2030 to March 2031 both are, and after June 2031 neither is.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ratified_rdf.records.citations import drafts_named
from ratified_rdf.records.discussion import (
    CitationRecord,
    DiscussionRecords,
    GitEvidence,
    read_discussion,
)
from ratified_rdf.records.identity import PeopleTable
from ratified_rdf.records.manifest import Manifest
from ratified_rdf.records.models import (
    CommitRef,
    DraftRecord,
    RevisionRecord,
    RfcRecord,
    SpecRecords,
)
from ratified_rdf.sources.base import ReadContext
from ratified_rdf.sources.document import ParsedDocument, ParsedSection
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.github_archive import GitHubArchive, GitHubPost, GitHubThread
from ratified_rdf.sources.github_source import GitHubRead, GitHubSource
from ratified_rdf.sources.mail import MailMessage
from ratified_rdf.sources.mail_source import MailRead, MailSource

LANTERN, FERRY = "draft-example-lantern", "draft-example-ferry"
POSTED = {
    f"{LANTERN}-00": "2030-01-01",
    f"{LANTERN}-01": "2030-06-01",
    f"{FERRY}-00": "2030-03-01",
    f"{FERRY}-01": "2030-09-01",
}
BOTH_OPEN = "2030-07-01"  # Lantern -01 and Ferry -00 are current


def _day(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def _document(topic: str) -> ParsedDocument:
    headings = [("1", "Introduction", None), ("2", f"{topic} Rules", f"{topic.lower()}-rules")]
    return ParsedDocument(
        title=topic,
        sections=tuple(
            ParsedSection(position=i, number=n, heading=h, anchor=a, level=1)
            for i, (n, h, a) in enumerate(headings)
        ),
    )


def _spec() -> tuple[Manifest, SpecRecords]:
    manifest = Manifest.model_validate(
        {
            "brain": {"id": "example", "title": "Two drafts", "repository": "https://x.invalid/r"},
            "draft": [
                {"name": LANTERN, "file": "l.md", "revisions": "00-01", "became": "rfc9901"},
                {"name": FERRY, "file": "f.md", "revisions": "00-01", "became": "rfc9902"},
            ],
            "rfc": [
                {"number": 9901, "title": "L", "published": "2031-03", "ref": "m", "file": "a"},
                {"number": 9902, "title": "F", "published": "2031-06", "ref": "m", "file": "b"},
            ],
        }
    )
    topic = {LANTERN: "Lamp", FERRY: "Deck"}
    revisions = tuple(
        RevisionRecord(
            draft=name.rsplit("-", 1)[0],
            number=name.rsplit("-", 1)[1],
            tag=name,
            file="d.md",
            commit=CommitRef(commit=name, committed_at=_day(day)),
            document=_document(topic[name.rsplit("-", 1)[0]]),
        )
        for name, day in POSTED.items()
    )
    rfcs = tuple(
        RfcRecord(
            number=number,
            title=str(number),
            published=published,
            ref="m",
            file="r.md",
            commit=CommitRef(commit=str(number), committed_at=_day("2031-07-01")),
            document=_document(word),
        )
        for number, published, word in ((9901, "2031-03", "Lamp"), (9902, "2031-06", "Deck"))
    )
    spec = SpecRecords(
        brain=manifest.brain,
        source="invented",
        drafts=(DraftRecord(name=LANTERN), DraftRecord(name=FERRY)),
        revisions=revisions,
        rfcs=rfcs,
        alignments=(),
    )
    return manifest, spec


def _thread(
    number: int, posts: list[tuple[str, str]], title: str = "A question", labels: tuple = ()
) -> GitHubThread:
    return GitHubThread(
        number=number,
        kind="issue",
        title=title,
        url=f"https://x.invalid/r/issues/{number}",
        state="OPEN",
        author="someone",
        created=_day(posts[0][0]),
        labels=labels,
        posts=tuple(
            GitHubPost(
                thread=number,
                index=index,
                kind="opening" if index == 0 else "comment",
                author="someone",
                created=_day(day),
                body=body,
                url=f"https://x.invalid/r/issues/{number}",
            )
            for index, (day, body) in enumerate(posts)
        ),
    )


def _message(message_id: str, subject: str, body: str, root: str) -> MailMessage:
    return MailMessage(
        message_id=message_id,
        list_name="example",
        subject=subject,
        sender_name="Someone",
        sender_address="someone@example.invalid",
        date=_day(BOTH_OPEN),
        in_reply_to=None if message_id == root else root,
        body=body,
        permalink=f"https://mailarchive.example.invalid/{message_id}",
        thread_root=root,
    )


def _read(threads: list[GitHubThread], messages: Sequence[MailMessage] = ()) -> DiscussionRecords:
    manifest, spec = _spec()
    context = ReadContext(
        manifest=manifest,
        folder=Path("."),
        spec=spec,
        repo=GitRepository(Path("/nonexistent"), "no repository: nothing here runs git"),
        commit_map={},
        facts={},
        landing=lambda _commit, _file: None,
        document_files=("*.md",),
    )
    archive = GitHubArchive(repository="example/r", timestamp=None, threads=tuple(threads))
    return read_discussion(
        context,
        PeopleTable(people=()),
        GitEvidence(commits=(), places={}, branch_commits=lambda _merge: []),
        [(GitHubSource(), GitHubRead(archive)), (MailSource(), MailRead(tuple(messages)))],
    )


def _one(threads: list[GitHubThread], messages: Sequence[MailMessage] = ()) -> CitationRecord:
    found = _read(threads, messages).citations
    assert len(found) == 1, found
    return found[0]


def _where(record: CitationRecord) -> tuple[str, int] | str | None:
    if record.target is None:
        return record.unresolved
    return record.target.document, record.target.position


def test_with_one_draft_open_a_bare_number_is_read_against_it() -> None:
    record = _one([_thread(1, [("2030-02-01", "Section 2 needs work.")])])
    assert _where(record) == (f"{LANTERN}-00", 1)
    assert record.rule == "current-revision"


def test_with_two_open_and_nothing_naming_one_it_is_left_unresolved_with_the_reason() -> None:
    record = _one([_thread(1, [(BOTH_OPEN, "Section 2 needs work.")])])
    assert record.target is None and record.rule is None
    assert record.unresolved == (
        "bare section number written while 2 drafts were open (draft-example-ferry, "
        "draft-example-lantern); neither the post nor its thread names one of them"
    )


@pytest.mark.parametrize(
    ("title", "labels", "opening", "comment", "meant"),
    [
        # The post names a draft elsewhere in its text.
        ("A question", (), "Hello.", f"Unlike {FERRY}-00 says, Section 2 is fine.", FERRY),
        # A label with the draft's name, with or without "draft-".
        ("A question", ("example-ferry",), "Hello.", "Section 2 is fine.", FERRY),
        ("A question", (LANTERN, "editorial"), "Hello.", "Section 2 is fine.", LANTERN),
        # The thread's title or opening post names it.
        (f"{FERRY}: a question", (), "Hello.", "Section 2 is fine.", FERRY),
        ("A question", (), f"About {LANTERN}.", "Section 2 is fine.", LANTERN),
        # The post's own words win over its thread's.
        ("A question", ("example-ferry",), "Hi.", f"In {LANTERN}, Section 2 is odd.", LANTERN),
    ],
)
def test_the_post_or_its_thread_naming_an_open_draft_pins_it(
    title: str, labels: tuple[str, ...], opening: str, comment: str, meant: str
) -> None:
    thread = _thread(1, [(BOTH_OPEN, opening), (BOTH_OPEN, comment)], title, labels)
    record = _one([thread])
    current = {LANTERN: f"{LANTERN}-01", FERRY: f"{FERRY}-00"}[meant]
    assert _where(record) == (current, 1)


def test_naming_both_open_drafts_tells_neither() -> None:
    text = f"Compare {LANTERN} and {FERRY}: Section 2 differs."
    record = _one([_thread(1, [(BOTH_OPEN, text)])])
    assert record.target is None
    assert record.unresolved is not None
    assert record.unresolved.endswith("the post and its thread name 2 of them")


def test_an_anchor_and_a_lone_revision_number_follow_the_same_rule() -> None:
    found = _read(
        [
            _thread(1, [(BOTH_OPEN, "See {{deck-rules}}, and -00 §2.")]),
            _thread(2, [(BOTH_OPEN, "See {{deck-rules}}, and -00 §2.")], labels=(FERRY,)),
        ]
    ).citations
    assert [_where(c) for c in found[2:]] == [(f"{FERRY}-00", 1), (f"{FERRY}-00", 1)]
    assert [c.rule for c in found[2:]] == ["anchor", "explicit-revision"]
    assert [c.unresolved.split(" written while")[0] for c in found[:2] if c.unresolved] == [
        "bare anchor",
        "revision 00 without a draft name",
    ]


def test_a_named_draft_is_read_in_its_own_chain_whatever_else_is_open() -> None:
    found = _read(
        [
            _thread(1, [(BOTH_OPEN, f"Section 2 of {FERRY} is fine.")]),
            _thread(2, [("2031-04-01", f"Section 2 of {LANTERN} was fine.")]),
        ]
    ).citations
    assert _where(found[0]) == (f"{FERRY}-00", 1)
    # After RFC 9901's month, Lantern had no current revision (Ferry still did).
    assert _where(found[1]) == f"written when no revision of {LANTERN} was current"


def test_a_message_is_pinned_by_its_subject_or_its_thread_root() -> None:
    root = _message("root@x", f"[example] {FERRY}: deck rules", "Section 2 is fine.", "root@x")
    reply = _message("reply@x", "Re: [example] deck rules", "Section 2 is odd.", "root@x")
    alone = _message("alone@x", "A question", "Section 2 is odd.", "alone@x")
    found = _read([], [root, reply, alone]).citations
    assert [_where(c) for c in found[:2]] == [(f"{FERRY}-00", 1), (f"{FERRY}-00", 1)]
    assert "neither the post nor its thread names one of them" in str(found[2].unresolved)


def test_windows_are_found_by_date_at_their_edges() -> None:
    found = _read(
        [
            _thread(1, [("2029-12-31", "Section 2.")]),  # before any revision
            _thread(2, [("2030-06-01", "Section 2.")], labels=(LANTERN,)),  # -01's own day
            _thread(3, [("2031-05-01", "Section 2.")]),  # only Ferry still open
            _thread(4, [("2031-06-02", "Section 2.")]),  # both published
        ]
    ).citations
    assert [_where(c) for c in found] == [
        "written when no held revision was current",
        (f"{LANTERN}-01", 1),
        (f"{FERRY}-01", 1),
        "written when no held revision was current",
    ]


def test_drafts_named_reads_full_names_in_prose_and_links_but_not_lone_revisions() -> None:
    text = (
        f"See https://datatracker.example.invalid/doc/html/{FERRY}-01#section-2, {LANTERN}, "
        "draft 21, -21, draft-21 and TLS 1.3."
    )
    assert drafts_named(text) == {FERRY, LANTERN}


@pytest.mark.parametrize(
    ("title", "labels", "comment", "meant"),
    [
        # (a) The post's own text, by a short name: one joining two words anywhere, a plain
        # one before "draft".
        ("A question", (), "As example-ferry says, Section 2 is fine.", FERRY),
        ("A question", (), "The lantern draft's Section 2 is fine.", LANTERN),
        # (b) The thread's title: its leading tag, whole or shortened.
        ("Ferry: deck rules", (), "Section 2 is fine.", FERRY),
        ("[lantern] rules", (), "Section 2 is fine.", LANTERN),
        ("Lant: rules", (), "Section 2 is fine.", LANTERN),
        # (c) The thread's labels: a draft's short name, with or without a leading "-".
        ("A question", ("ferry",), "Section 2 is fine.", FERRY),
        ("A question", ("-lantern", "editorial"), "Section 2 is fine.", LANTERN),
        # The post before the title, the title before the labels.
        ("Ferry: rules", ("lantern",), "The lantern draft's Section 2 is fine.", LANTERN),
        ("Ferry: rules", ("lantern",), "Section 2 is fine.", FERRY),
    ],
)
def test_a_short_name_in_the_post_its_title_or_its_labels_pins_the_draft(
    title: str, labels: tuple[str, ...], comment: str, meant: str
) -> None:
    thread = _thread(1, [(BOTH_OPEN, "Hello."), (BOTH_OPEN, comment)], title, labels)
    record = _one([thread])
    current = {LANTERN: f"{LANTERN}-01", FERRY: f"{FERRY}-00"}[meant]
    assert _where(record) == (current, 1)


@pytest.mark.parametrize(
    ("title", "labels", "comment"),
    [
        # A plain word is an ordinary word unless it stands before "draft".
        ("A question", (), "The ferry leaves; Section 2 is fine."),
        # Two drafts named in one place name neither; a tag too short, or shared, names none.
        ("A question", ("ferry", "lantern"), "Section 2 is fine."),
        ("Lan: rules", (), "Section 2 is fine."),
        ("Example: rules", (), "Section 2 is fine."),
    ],
)
def test_short_names_that_leave_two_drafts_or_none_resolve_nothing(
    title: str, labels: tuple[str, ...], comment: str
) -> None:
    thread = _thread(1, [(BOTH_OPEN, "Hello."), (BOTH_OPEN, comment)], title, labels)
    record = _one([thread])
    assert record.target is None
    assert record.unresolved is not None and "drafts were open" in record.unresolved
