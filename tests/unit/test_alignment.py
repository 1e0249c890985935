"""Aligning the sections of a revision with the sections of the final RFC.

The documents are built directly from :class:`RawHeading` rows: a fictional revision
``draft-example-pigeon-transport-05`` and the fictional ``rfc9999`` it became. Each pair of
sections exercises one matching rule.
"""

from __future__ import annotations

import pytest

from ratified_rdf.records.alignment import STILL_CHANGING_BELOW, align_document, text_similarity
from ratified_rdf.records.models import AlignmentRecord, AlignmentRule
from ratified_rdf.sources.document import ParsedDocument, RawHeading, assemble_sections
from ratified_rdf.sources.kramdown import parse_kramdown

DRAFT = "draft-example-pigeon-transport-05"
RFC = "rfc9999"

Row = tuple[int, str, str | None, str]
"""(level, heading, anchor, body)"""

HOMING = (
    "A homing pigeon returns to its home loft from distances of several hundred kilometres. "
    "Senders MUST release the pigeon no earlier than one hour after sunrise, and receivers "
    "SHOULD keep the loft door open until the pigeon has landed. A pigeon that has not "
    "arrived within two days is presumed lost and the capsule is retransmitted."
)
HOMING_FINAL = HOMING.replace("several hundred kilometres", "several hundred kilometers")

SECURITY = (
    "Pigeons can be intercepted by hawks, so capsules carry no secrets in the clear. "
    "Implementations MUST seal every capsule with wax before release. "
    "A broken seal indicates tampering and the capsule MUST be discarded by the receiver. "
    "Lofts SHOULD be locked at night to keep out foxes and curious neighbours."
)
SECURITY_FINAL = SECURITY.replace(
    "Lofts SHOULD be locked at night to keep out foxes and curious neighbours.",
    "Lofts MUST be guarded by a trained loft cat at all hours of the day and night.",
)

RAMBLING = (
    "This section collects historical anecdotes about famous messenger birds of antiquity, "
    "including the legendary courier that flew across the mountains with news of a harvest. "
    "None of this material is normative, and the working group agreed to remove it before "
    "publication because it did not describe any protocol behaviour at all."
)

CAPSULE_REFS = "Capsule dimensions follow the fictional Standard Capsule Registry."
LOFT_REFS = "Loft dimensions follow the fictional Standard Loft Registry."
NO_IANA = "This document has no IANA actions."

REVISION_ROWS: list[Row] = [
    (1, "Introduction", None, "Pigeons   carry\ncapsules.\n\n  Lofts receive them."),
    (1, "Obsolete Flocking", None, "Flocks were once used for bulk transfer."),
    (1, "Capsules", None, "A capsule is a small tube."),
    # Text closer to the final Loft's references: only the parent tells them apart.
    (2, "External References", None, LOFT_REFS),
    (1, "Loft management", None, "Lofts are managed by keepers."),
    (2, "External References", None, CAPSULE_REFS),
    (1, "Wax Seals", "seals", "Seals are made of red wax."),
    (1, "Homing Behaviour", None, HOMING),
    (1, "Security Considerations", None, SECURITY),
    (1, "Safety Notes", None, SECURITY_FINAL),
    (1, "Registry Requests", None, NO_IANA),
    (1, "Historical Anecdotes", None, RAMBLING),
]

FINAL_ROWS: list[Row] = [
    (1, "Introduction", "intro", "Pigeons carry capsules.\nLofts receive them."),
    (1, "Capsules", None, "A capsule is a small tube."),
    (2, "External References", None, CAPSULE_REFS),
    (1, "Loft Management", None, "Lofts are managed by keepers."),
    (2, "External References", None, LOFT_REFS),
    (1, "Capsule Sealing", "seals", "Seals are made of red wax."),
    (1, "Navigation", None, HOMING_FINAL),
    (1, "Security Considerations", None, SECURITY_FINAL),
    (1, "IANA Considerations", None, NO_IANA),
]


def _doc(rows: list[Row]) -> ParsedDocument:
    return ParsedDocument(
        title="The Pigeon Transport Protocol",
        sections=assemble_sections(
            RawHeading(
                level=level,
                heading=heading,
                anchor=anchor,
                appendix=False,
                numbered=True,
                body=body,
            )
            for level, heading, anchor, body in rows
        ),
    )


@pytest.fixture(scope="module")
def revision() -> ParsedDocument:
    return _doc(REVISION_ROWS)


@pytest.fixture(scope="module")
def final() -> ParsedDocument:
    return _doc(FINAL_ROWS)


@pytest.fixture(scope="module")
def records(revision: ParsedDocument, final: ParsedDocument) -> list[AlignmentRecord]:
    return align_document(DRAFT, revision, RFC, final)


def _record(
    records: list[AlignmentRecord], revision: ParsedDocument, heading: str, nth: int = 0
) -> AlignmentRecord:
    positions = [s.position for s in revision.sections if s.heading == heading]
    return next(r for r in records if r.source_position == positions[nth])


def _target_heading(final: ParsedDocument, record: AlignmentRecord) -> str | None:
    if record.target_position is None:
        return None
    return final.sections[record.target_position].heading


def test_one_record_per_section_in_order(
    records: list[AlignmentRecord], revision: ParsedDocument
) -> None:
    assert [r.source_position for r in records] == list(range(len(revision.sections)))
    assert {r.source_document for r in records} == {DRAFT}
    assert {r.target_rfc for r in records} == {RFC}


def test_complete_alignment(records: list[AlignmentRecord]) -> None:
    assert [(r.source_position, r.target_position, r.rule) for r in records] == [
        (0, 0, AlignmentRule.SAME_HEADING),
        (1, None, AlignmentRule.NO_COUNTERPART),
        (2, 1, AlignmentRule.SAME_HEADING),
        (3, 2, AlignmentRule.SAME_HEADING),
        (4, 3, AlignmentRule.SAME_HEADING),
        (5, 4, AlignmentRule.SAME_HEADING),
        (6, 5, AlignmentRule.SAME_ANCHOR),
        (7, 6, AlignmentRule.SIMILAR_TEXT),
        (8, 7, AlignmentRule.SAME_HEADING),
        (9, None, AlignmentRule.NO_COUNTERPART),
        (10, None, AlignmentRule.NO_COUNTERPART),
        (11, None, AlignmentRule.NO_COUNTERPART),
    ]


def test_renumbered_section_matched_by_heading(
    records: list[AlignmentRecord], revision: ParsedDocument, final: ParsedDocument
) -> None:
    record = _record(records, revision, "Capsules")
    assert revision.sections[record.source_position].number == "3"
    assert record.target_position is not None
    assert final.sections[record.target_position].number == "2"
    assert _target_heading(final, record) == "Capsules"
    assert record.rule is AlignmentRule.SAME_HEADING
    assert record.similarity == 1.0


def test_heading_case_difference_still_matches(
    records: list[AlignmentRecord], revision: ParsedDocument, final: ParsedDocument
) -> None:
    record = _record(records, revision, "Loft management")
    assert _target_heading(final, record) == "Loft Management"
    assert record.rule is AlignmentRule.SAME_HEADING


def test_repeated_heading_disambiguated_by_parent(
    records: list[AlignmentRecord], revision: ParsedDocument, final: ParsedDocument
) -> None:
    under_capsules = _record(records, revision, "External References", 0)
    under_lofts = _record(records, revision, "External References", 1)
    assert under_capsules.rule is AlignmentRule.SAME_HEADING
    assert under_lofts.rule is AlignmentRule.SAME_HEADING
    assert under_capsules.target_position is not None
    assert under_lofts.target_position is not None
    capsule_target = final.sections[under_capsules.target_position]
    loft_target = final.sections[under_lofts.target_position]
    assert capsule_target.parent is not None and loft_target.parent is not None
    assert final.sections[capsule_target.parent].heading == "Capsules"
    assert final.sections[loft_target.parent].heading == "Loft Management"
    # The texts were swapped between the two, so they were still changing.
    assert under_capsules.similarity is not None and under_capsules.similarity < 0.98
    assert under_lofts.similarity is not None and under_lofts.similarity < 0.98


def test_repeated_heading_with_unknown_parent_falls_back_to_text(final: ParsedDocument) -> None:
    revision = _doc(
        [
            (1, "Perches", None, "Perches are wooden."),
            (2, "External References", None, LOFT_REFS),
        ]
    )
    [_, refs] = align_document(DRAFT, revision, RFC, final)
    assert refs.rule is AlignmentRule.SAME_HEADING
    assert refs.target_position == 4
    assert refs.similarity == 1.0


def test_renamed_heading_matched_by_anchor(
    records: list[AlignmentRecord], revision: ParsedDocument, final: ParsedDocument
) -> None:
    record = _record(records, revision, "Wax Seals")
    assert record.rule is AlignmentRule.SAME_ANCHOR
    assert _target_heading(final, record) == "Capsule Sealing"
    assert record.similarity == 1.0


def test_renamed_heading_without_anchor_matched_by_similar_text(
    records: list[AlignmentRecord], revision: ParsedDocument, final: ParsedDocument
) -> None:
    record = _record(records, revision, "Homing Behaviour")
    assert record.rule is AlignmentRule.SIMILAR_TEXT
    assert _target_heading(final, record) == "Navigation"
    assert record.similarity is not None
    assert 0.98 < record.similarity < 1.0


def test_removed_section_has_no_counterpart(
    records: list[AlignmentRecord], revision: ParsedDocument
) -> None:
    record = _record(records, revision, "Obsolete Flocking")
    assert record.rule is AlignmentRule.NO_COUNTERPART
    assert record.target_position is None
    assert record.similarity is None


def test_long_dissimilar_text_has_no_counterpart(
    records: list[AlignmentRecord], revision: ParsedDocument
) -> None:
    record = _record(records, revision, "Historical Anecdotes")
    assert len(RAMBLING) >= 200
    assert record.rule is AlignmentRule.NO_COUNTERPART
    assert record.target_position is None
    assert record.similarity is None


def test_short_text_is_never_matched_by_similarity(
    records: list[AlignmentRecord], revision: ParsedDocument
) -> None:
    # Identical to the unclaimed final "IANA Considerations", but too short to trust.
    record = _record(records, revision, "Registry Requests")
    assert record.rule is AlignmentRule.NO_COUNTERPART
    assert record.target_position is None


def test_similar_text_only_considers_unclaimed_final_sections(
    records: list[AlignmentRecord], revision: ParsedDocument
) -> None:
    # Word for word the final Security Considerations, which its namesake already claimed.
    record = _record(records, revision, "Safety Notes")
    assert record.rule is AlignmentRule.NO_COUNTERPART
    assert record.target_position is None


def test_changed_sentence_lowers_similarity_below_threshold(
    records: list[AlignmentRecord], revision: ParsedDocument
) -> None:
    record = _record(records, revision, "Security Considerations")
    assert record.rule is AlignmentRule.SAME_HEADING
    assert record.similarity is not None
    assert 0.6 < record.similarity < STILL_CHANGING_BELOW


def test_whitespace_only_differences_keep_similarity_one(
    records: list[AlignmentRecord], revision: ParsedDocument, final: ParsedDocument
) -> None:
    record = _record(records, revision, "Introduction")
    assert record.target_position is not None
    assert revision.sections[0].body != final.sections[record.target_position].body
    assert record.similarity == 1.0


def test_similarity_scale() -> None:
    assert STILL_CHANGING_BELOW == 0.98
    assert text_similarity("pigeon", "pigeon") == 1.0
    assert text_similarity("", "") == 1.0
    assert text_similarity("pigeon", "") == 0.0
    assert text_similarity("abcd", "abce") == 0.75


def test_alignment_of_parsed_kramdown() -> None:
    revision = parse_kramdown(
        "# Overview\n\nPigeons fly.\n\n# Old Loft Rules {#rules}\n\nKeep the door shut.\n"
    )
    final = parse_kramdown(
        "# Terminology\n\nA loft is a house.\n\n# Overview\n\nPigeons fly.\n\n"
        "# Loft Rules\n{: #rules}\n\nKeep the door shut.\n"
    )
    records = align_document(DRAFT, revision, RFC, final)
    assert [(r.target_position, r.rule, r.similarity) for r in records] == [
        (1, AlignmentRule.SAME_HEADING, 1.0),
        (2, AlignmentRule.SAME_ANCHOR, 1.0),
    ]
