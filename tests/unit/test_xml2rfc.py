"""Reading xml2rfc XML: section tree, xml2rfc numbering of references and appendices, safety."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.xml2rfc import parse_xml2rfc

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "xml2rfc" / "pigeon-v3.xml"


@pytest.fixture(scope="module")
def doc() -> ParsedDocument:
    return parse_xml2rfc(FIXTURE.read_bytes())


def _minimal(middle: str, *, prolog: str = "", back: str = "") -> str:
    return (
        f'<?xml version="1.0"?>\n{prolog}<rfc version="3"><front><title>T</title></front>'
        f"<middle>{middle}</middle><back>{back}</back></rfc>"
    )


def test_front_matter(doc: ParsedDocument) -> None:
    assert doc.title == "The Pigeon Transport Protocol (PTP)"
    assert doc.docname == "draft-example-pigeon-transport-02"
    assert [(a.name, a.email, a.organization) for a in doc.authors] == [
        ("Alice Example", "a.example@example.com", "Example Inc."),
        ("B. Sample", None, "Sample Coop Ltd."),
    ]


def test_outline(doc: ParsedDocument) -> None:
    assert [(s.number, s.heading, s.level, s.appendix, s.parent) for s in doc.sections] == [
        ("1", "Introduction", 1, False, None),
        ("1.1", "Requirements Language", 2, False, 0),
        ("2", "Flight Exchange", 1, False, None),
        ("2.1", "Departure", 2, False, 2),
        ("2.2", "Arrival", 2, False, 2),
        ("2.2.1", "Lost Birds", 3, False, 4),
        ("3", "Security Considerations", 1, False, None),
        # References in <back> continue the middle numbering; they are not lettered.
        ("4", "References", 1, False, None),
        ("4.1", "Normative References", 2, False, 7),
        ("4.2", "Informative References", 2, False, 7),
        ("A", "Loft Configuration", 1, True, None),
        ("A.1", "Home Lofts", 2, True, 10),
        (None, "Acknowledgments", 1, True, None),
        (None, "Further Thanks", 2, True, 12),
    ]
    assert [s.anchor for s in doc.sections][:3] == ["intro", "terms", "flight"]


def test_bodies(doc: ParsedDocument) -> None:
    by_anchor = {s.anchor: s for s in doc.sections}
    assert by_anchor["intro"].body == (
        "The Pigeon Transport Protocol (PTP) moves short notes between lofts, see [BCP14]."
    )
    assert by_anchor["terms"].body == "The key words MUST and SHOULD are used."
    # Own text only: the subsection's paragraph is not repeated in its parent.
    assert "presumed lost" not in by_anchor["arrival"].body
    assert by_anchor["arrival"].body == "Loft:\n\nWhere the bird lives."
    flight = by_anchor["flight"].body.split("\n\n")
    assert flight[0] == "A flight starts at the sending loft."
    # Artwork keeps its lines and alignment.
    assert flight[1] == "Loft ^ HELLO\nNote | + leg_band*\n     v COO   -------->"
    assert flight[2:] == [
        "A bird carries one note.",
        "A note is at most one line.",
        "Longer notes need two birds.",
    ]
    assert by_anchor["departure"].body == "The sender releases the bird.\n\nrelease(bird)\n  wait()"
    assert by_anchor["normative"].body == "[BCP14] Key Words for Fictional Documents"


def test_v2_title_attribute_and_references_before_sections() -> None:
    text = _minimal(
        '<section title="Intro"><t>x</t><section title="Sub"/></section>',
        back='<section title="Extra"/><references title="Normative References"/>',
    )
    doc = parse_xml2rfc(text)
    # xml2rfc numbers every <references> before the appendices, whatever the source order.
    assert [(s.number, s.heading) for s in doc.sections] == [
        ("1", "Intro"),
        ("1.1", "Sub"),
        ("2", "Normative References"),
        ("A", "Extra"),
    ]


def test_unnumbered_middle_section() -> None:
    doc = parse_xml2rfc(
        _minimal(
            '<section><name>One</name></section><section numbered="false"><name>Note</name>'
            "<section><name>Inner</name></section></section>"
        )
    )
    assert [(s.number, s.heading, s.parent) for s in doc.sections] == [
        ("1", "One", None),
        (None, "Note", None),
        (None, "Inner", 1),
    ]


def test_plain_doctype_is_accepted() -> None:
    doc = parse_xml2rfc(
        _minimal(
            "<section><name>One</name></section>", prolog=('<!DOCTYPE rfc SYSTEM "rfc2629.dtd">\n')
        )
    )
    assert doc.sections[0].heading == "One"


def test_doctype_with_entity_is_refused() -> None:
    prolog = '<!DOCTYPE rfc [\n  <!ENTITY boom "bang">\n]>\n'
    with pytest.raises(ParseError, match=r'entity "boom".*refused'):
        parse_xml2rfc(_minimal("<section><name>&boom;</name></section>", prolog=prolog))


def test_entity_expansion_bomb_is_refused_before_expansion() -> None:
    prolog = (
        "<!DOCTYPE rfc [\n"
        '  <!ENTITY a "aaaaaaaaaa">\n'
        '  <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">\n'
        '  <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">\n'
        "]>\n"
    )
    with pytest.raises(ParseError, match="entity"):
        parse_xml2rfc(_minimal("<section><name>&c;</name></section>", prolog=prolog).encode())


def test_external_entity_is_refused() -> None:
    prolog = '<!DOCTYPE rfc [\n  <!ENTITY ext SYSTEM "file:///etc/hostname">\n]>\n'
    with pytest.raises(ParseError, match="entity"):
        parse_xml2rfc(_minimal("<section><name>&ext;</name></section>", prolog=prolog))


def test_malformed_and_foreign_xml_are_refused() -> None:
    with pytest.raises(ParseError, match="not well-formed"):
        parse_xml2rfc("<rfc><front></rfc>")
    with pytest.raises(ParseError, match="not <rfc>"):
        parse_xml2rfc("<html><body/></html>")


def test_nesting_deeper_than_the_limit_is_refused_while_parsing() -> None:
    deep = "<section>" * 120 + "</section>" * 120
    with pytest.raises(ParseError, match="more than 100 deep"):
        parse_xml2rfc(_minimal(deep))
    # Nesting up to the limit is read (the tree is walked recursively).
    fine = "<section><name>a</name><t>" + "<b>" * 90 + "x" + "</b>" * 90 + "</t></section>"
    assert [s.body for s in parse_xml2rfc(_minimal(fine)).sections] == ["x"]


def test_text_with_a_lone_surrogate_is_refused() -> None:
    with pytest.raises(ParseError, match="not Unicode text"):
        parse_xml2rfc(_minimal("<section><name>a\ud800</name></section>"))


@pytest.mark.parametrize("codec", ["x-no-such-codec", "utf-7", "base64", "idna"])
def test_an_encoding_the_parser_cannot_use_is_refused(codec: str) -> None:
    with pytest.raises(ParseError, match="encoding the XML parser cannot use"):
        parse_xml2rfc(f'<?xml version="1.0" encoding="{codec}"?><rfc/>'.encode())
