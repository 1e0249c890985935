"""Reading RFC Editor plain text: headings, numbering self-check and page furniture."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.rfc_text import _strip_toc_leaders, parse_rfc_text
from tests.fuzz.harness import within_bound

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rfc_text"


def _read(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def v3() -> ParsedDocument:
    return parse_rfc_text(_read("pigeon-v3.txt"))


@pytest.fixture(scope="module")
def v2() -> ParsedDocument:
    return parse_rfc_text(_read("pigeon-v2-paginated.txt"))


def _outline(doc: ParsedDocument) -> list[tuple[str | None, str, int, bool, int | None]]:
    return [(s.number, s.heading, s.level, s.appendix, s.parent) for s in doc.sections]


def test_v3_front_matter(v3: ParsedDocument) -> None:
    assert v3.title == "The Pigeon Transport Protocol (PTP)"
    assert v3.docname == "draft-example-pigeon-transport-02"
    assert [(a.name, a.organization) for a in v3.authors] == [
        ("A. Example", "Example Inc."),
        ("B. Sample", "Sample Coop Ltd."),
    ]


def test_v3_outline(v3: ParsedDocument) -> None:
    assert _outline(v3) == [
        ("1", "Introduction", 1, False, None),
        ("1.1", "Requirements Language", 2, False, 0),
        ("2", "Flight Exchange", 1, False, None),
        ("2.1", "Departure", 2, False, 2),
        ("2.2", "Arrival", 2, False, 2),
        ("2.2.1", "Lost Birds", 3, False, 4),
        ("3", "Security Considerations", 1, False, None),
        ("4", "References", 1, False, None),
        ("4.1", "Normative References", 2, False, 7),
        ("A", "Loft Configuration", 1, True, None),
        ("A.1", "Home Lofts", 2, True, 9),
        ("A.2", "Visiting Lofts", 2, True, 9),
        ("B", "Example Flight Log", 1, True, None),
        (None, "Acknowledgments", 1, True, None),
        (None, "Authors' Addresses", 1, True, None),
    ]
    assert [s.position for s in v3.sections] == list(range(len(v3.sections)))
    assert all(s.anchor is None for s in v3.sections)


def test_front_matter_and_toc_are_not_sections(v3: ParsedDocument) -> None:
    headings = {s.heading for s in v3.sections}
    assert not headings & {"Abstract", "Status of This Memo", "Copyright Notice"}
    assert "Table of Contents" not in headings
    # The TOC lines look like headings; only the real ones (one each) may be read.
    assert [s.heading for s in v3.sections].count("Introduction") == 1
    assert "Requirements Language" not in v3.sections[0].body


def test_ascii_art_at_column_zero_is_body_not_heading(v3: ParsedDocument) -> None:
    flight = v3.sections[2]
    assert flight.heading == "Flight Exchange"
    assert "Loft ^ HELLO" in flight.body
    # Shaped exactly like a heading, but inside the figure with no blank line around it.
    assert "2.  Coo acknowledgement" in flight.body
    assert "Coo acknowledgement" not in {s.heading for s in v3.sections}
    # Column-0 art keeps its alignment rather than being shifted by the body dedent.
    assert "\n     v COO" in flight.body


def test_bodies_are_dedented_and_exclude_subsections(v3: ParsedDocument) -> None:
    intro = v3.sections[0]
    assert intro.body.startswith("The Pigeon Transport Protocol (PTP) moves short notes")
    assert intro.body.splitlines()[1] == "Each note is tied to the leg of one bird."
    assert v3.sections[7].body == ""
    assert v3.sections[12].body == "09:00  released\n11:30  arrived"


def test_v2_paginated_outline(v2: ParsedDocument) -> None:
    assert v2.title == "The Pigeon Transport Protocol (PTP)"
    assert v2.docname == "draft-example-pigeon-transport-01"
    assert [a.name for a in v2.authors] == ["A. Example"]
    assert _outline(v2) == [
        ("1", "Introduction", 1, False, None),
        ("2", "Flight Exchange", 1, False, None),
        ("2.1", "Departure", 2, False, 1),
        (
            "2.2",
            "Handling of Notes That Arrive After the Bird Has Already Gone Back to Its Home Loft",
            2,
            False,
            1,
        ),
        ("3", "Security Considerations", 1, False, None),
        ("4", "References", 1, False, None),
        ("A", "Loft Configuration", 1, True, None),
        ("A.1", "Home Lofts", 2, True, 6),
        ("A.1.1", "Perches", 3, True, 7),
        ("A.2", "Visiting Lofts", 2, True, 6),
        (None, "Acknowledgments", 1, True, None),
        (None, "Author's Address", 1, True, None),
    ]


def test_v2_page_furniture_is_stripped(v2: ParsedDocument) -> None:
    for section in v2.sections:
        assert "[Page" not in section.body
        assert "Internet-Draft" not in section.body
        assert "Expires September" not in section.body
        assert "\f" not in section.body
    # The paragraph that straddles a page break reads on without a gap.
    assert (
        "that the reader has to join it back together without any running\n"
        "header or footer ending up inside the body of the section."
    ) in v2.sections[0].body
    assert v2.sections[2].body == "The sender attaches the note and releases the bird."
    assert v2.sections[4].body == "Hawks are out of scope."


def test_v2_art_line_spelling_a_back_matter_title_is_not_a_heading(v2: ParsedDocument) -> None:
    assert "Index" not in {s.heading for s in v2.sections}
    assert "Index        " in v2.sections[1].body


def test_printed_numbering_that_disagrees_is_refused() -> None:
    # Dropping 2.1 makes the printed "2.2" disagree with xml2rfc numbering of what remains.
    text = _read("pigeon-v3.txt").replace(
        "2.1.  Departure\n\n   The sender attaches the note and releases the bird.\n\n", ""
    )
    with pytest.raises(ParseError) as excinfo:
        parse_rfc_text(text)
    message = str(excinfo.value)
    assert '"Arrival"' in message
    assert "printed as 2.2" in message
    assert "gives 2.1" in message
    assert "line " in message


def test_skipped_appendix_letter_is_refused() -> None:
    text = _read("pigeon-v3.txt").replace("Appendix B.  Example", "Appendix C.  Example")
    with pytest.raises(ParseError, match=r'"Example Flight Log".*printed as C.*gives B'):
        parse_rfc_text(text)


def test_text_without_sections_is_refused() -> None:
    with pytest.raises(ParseError, match="No section headings"):
        parse_rfc_text("Network Working Group      A. Example\n\n   Nothing here.\n")
    with pytest.raises(ParseError, match="empty"):
        parse_rfc_text("\n\n")


def test_crlf_line_endings_are_read() -> None:
    doc = parse_rfc_text(_read("pigeon-v3.txt").replace("\n", "\r\n"))
    assert [s.number for s in doc.sections][:3] == ["1", "1.1", "2"]
    assert "\r" not in doc.sections[0].body


def test_unnumbered_heading_listed_in_the_toc_is_recognised() -> None:
    text = (
        _read("pigeon-v3.txt")
        .replace("   Acknowledgments\n", "   Pigeon Lore\n   Acknowledgments\n", 1)
        .replace(
            "Acknowledgments\n\n   The author",
            "Pigeon Lore\n\n   Coo.\n\nAcknowledgments\n\n   The author",
        )
    )
    doc = parse_rfc_text(text)
    assert [(s.number, s.heading) for s in doc.sections[-3:]] == [
        (None, "Pigeon Lore"),
        (None, "Acknowledgments"),
        (None, "Authors' Addresses"),
    ]
    assert doc.sections[-3].body == "Coo."


def test_document_without_toc_starts_after_front_matter() -> None:
    text = _read("pigeon-v3.txt")
    start = text.index("Table of Contents")
    text = text[:start] + text[text.index("1.  Introduction") :]
    doc = parse_rfc_text(text)
    assert [s.number for s in doc.sections][:2] == ["1", "1.1"]
    assert "Copyright Notice" not in {s.heading for s in doc.sections}


@pytest.mark.parametrize(
    ("entry", "stripped"),
    [
        ("1.  Introduction . . . . . . . . 4", "1.  Introduction"),
        ("1.  Introduction...... 4", "1.  Introduction"),
        ("1.  Introduction......4", "1.  Introduction......4"),  # the number must stand apart
        ("Appendix A.  Pigeons  12", "Appendix A.  Pigeons"),
        ("Index 7", "Index 7"),  # one blank and no dots: not a page number
        ("2.1.  Version 1.3 . 5", "2.1.  Version 1.3"),
        ("3.  Thirty.5", "3.  Thirty.5"),  # a dot then the digits: no blank, no page number
        ("Authors' Addresses", "Authors' Addresses"),
    ],
)
def test_toc_leaders_and_page_numbers_are_stripped(entry: str, stripped: str) -> None:
    assert _strip_toc_leaders(entry) == stripped


@pytest.mark.parametrize("unit", [".", " .", ". "])
def test_a_toc_line_of_dots_is_read_quickly(unit: str) -> None:
    text = (
        "Title\n\nTable of Contents\n\n   " + unit * 50_000 + "\n\n1.  Introduction\n\n   Text.\n"
    )
    with within_bound(len(text)):
        doc = parse_rfc_text(text)
    assert [s.heading for s in doc.sections] == ["Introduction"]


def test_a_long_header_entry_of_initials_is_not_an_author_and_is_read_quickly() -> None:
    text = "x  " + "A." * 50_000 + "!\n   E. Rescorla\n   Mozilla\n\n1.  Introduction\n\n   Text.\n"
    with within_bound(len(text)):
        doc = parse_rfc_text(text)
    assert [(a.name, a.organization) for a in doc.authors] == [("E. Rescorla", "Mozilla")]


def test_a_title_after_three_spaces_or_opening_with_a_parenthesis_is_a_heading() -> None:
    # xml2rfc renders a heading written with a no-break space before its title with three
    # spaces, and titles may open with "(" ("(EC)DHE Shared Secret Calculation").
    text = (
        _read("pigeon-v3.txt")
        .replace("\n2.1.  Departure\n", "\n2.1.   Departure\n")
        .replace("\n2.2.  Arrival\n", "\n2.2.  (Late) Arrival\n")
    )
    doc = parse_rfc_text(text)
    by_number = {s.number: s.heading for s in doc.sections}
    assert by_number["2.1"] == "Departure"
    assert by_number["2.2"] == "(Late) Arrival"
    assert by_number["2.2.1"] == "Lost Birds"
