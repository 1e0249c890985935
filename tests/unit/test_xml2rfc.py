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


ENTITIES = FIXTURE.parent / "pigeon-v2-entities.xml"


@pytest.mark.parametrize("as_bytes", [True, False], ids=["bytes", "text"])
def test_doctype_entities_are_expanded(as_bytes: bool) -> None:
    # The three shapes of the old template: a version in an attribute, BCP 14 keywords
    # holding markup (one nesting another entity), and an external reference.
    doc = parse_xml2rfc(ENTITIES.read_bytes() if as_bytes else ENTITIES.read_text())
    assert doc.docname == "draft-example-pigeon-entities-03"
    assert doc.title == "Pigeon Lofts with Entities"  # &nbsp;, from the XHTML set
    assert [(s.number, s.heading) for s in doc.sections] == [
        ("1", "Introduction"),
        ("1.1", "Requirements Language"),
        ("2", "Homing"),
        ("3", "Normative References"),
        ("A", "Loft Numbers"),
    ]
    bodies = [s.body for s in doc.sections]
    assert bodies[0] == "A pigeon MUST return to its loft 03."
    # The predefined &amp; is kept, and nothing inside CDATA is expanded.
    assert bodies[2] == "A pigeon MAY rest on the way & eat.\n\n&MUST; stays as written here"
    assert bodies[4] == "Loft 03 is the newest."


def test_an_external_entity_is_an_unresolved_reference_noted_not_fetched() -> None:
    doc = parse_xml2rfc(ENTITIES.read_bytes())
    assert doc.sections[3].body == "[RFC2119]"
    assert any(
        "&RFC2119;" in note and "was not fetched" in note and "unresolved reference" in note
        for note in doc.notes
    )
    # The parameter entity is neither fetched nor read, only noted.
    assert any("%pigeon-extras;" in note and "never read" in note for note in doc.notes)


def test_an_external_file_entity_is_never_read() -> None:
    prolog = '<!DOCTYPE rfc [\n  <!ENTITY ext SYSTEM "file:///etc/hostname">\n]>\n'
    doc = parse_xml2rfc(_minimal("<section><name>A&ext;B</name></section>", prolog=prolog))
    assert doc.sections[0].heading == "AB"
    assert doc.notes and "file:///etc/hostname" in doc.notes[0]


def test_entities_keep_every_line_where_it_was() -> None:
    from ratified_rdf.sources.xml_entities import expand_entities

    text = ENTITIES.read_text()
    expanded, _notes = expand_entities(text)
    assert expanded.count("\n") == text.count("\n")
    lines = expanded.split("\n")
    assert "loft 03" in next(line for line in lines if "A pigeon" in line)


def test_billion_laughs_is_refused_with_a_sentence() -> None:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{n} "{f"&lol{n - 1};" * 10}">' for n in range(1, 10)
    ]
    prolog = "<!DOCTYPE rfc [\n" + "\n".join(entities) + "\n]>\n"
    with pytest.raises(ParseError, match=r"more than 1,000,000 characters.*billion laughs"):
        parse_xml2rfc(_minimal("<section><name>&lol9;</name></section>", prolog=prolog).encode())


def test_many_references_to_a_modest_entity_are_refused_too() -> None:
    prolog = f'<!DOCTYPE rfc [\n<!ENTITY big "{"x" * 100_000}">\n]>\n'
    with pytest.raises(ParseError, match="billion laughs"):
        parse_xml2rfc(
            _minimal("<section><name>" + "&big;" * 11 + "</name></section>", prolog=prolog)
        )


def test_an_entity_naming_itself_is_refused() -> None:
    prolog = '<!DOCTYPE rfc [\n<!ENTITY a "x&b;">\n<!ENTITY b "y&a;">\n]>\n'
    with pytest.raises(ParseError, match="names itself"):
        parse_xml2rfc(_minimal("<section><name>&a;</name></section>", prolog=prolog))


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


@pytest.mark.parametrize("piece", ["<!--", "<![CDATA[", "<!-- -->&nbsp;"])
def test_a_text_of_unclosed_comments_is_read_in_linear_time(piece: str) -> None:
    from tests.fuzz.harness import within_bound

    text = "<rfc>&nbsp;" + piece * (100_000 // len(piece))
    with within_bound(len(text)), pytest.raises(ParseError, match="not well-formed"):
        parse_xml2rfc(text)
