"""The independent checker's section trees of every format, on small fictional texts (the
Pigeon Transport Protocol): what each one must read as the IETF lays it out."""

from __future__ import annotations

from tests.independent.attribution import expand_entities, parse_sections
from tests.independent.revisions import section_rows

MARKDOWN = (
    "---\ntitle: Pigeon Perches\nnormative:\n  RFC1149:\n---\n\n--- abstract\n\nAbstract.\n\n"
    "--- middle\n\n#\u00a0Introduction\n\nPerches.\n\nPerch Sizes\n-----------\n\nSmall.\n\n"
    "# Perch Colours\n\nGrey {{?RFC2549}}.\n\n--- back\n\n# Wind\n\nStrong.\n\n"
    '# Acknowledgments\n{:numbered="false"}\n\nThanks.\n'
)

XML = """<?xml version="1.0"?>
<!DOCTYPE rfc SYSTEM "rfc2629.dtd" [
<!ENTITY MUST "<bcp14>MUST</bcp14>">
<!ENTITY PERCH "Perch">
<!ENTITY RFC2119 SYSTEM "http://xml2rfc.example/reference.RFC.2119.xml">
]>
<rfc docName="draft-pigeon-perches-03">
<front><title>Pigeon Perches</title></front>
<middle>
<section title="Introduction"><t>Pigeons &MUST; perch.</t>

  <section title="&PERCH; Sizes"><t>Small.</t></section>

</section>
</middle>
<back>
<references title="Normative References">&RFC2119;</references>
<references title="Informative References"></references>
<section title="Wind"><t>Strong.</t></section>
</back>
</rfc>
"""

TEXT = """



Network Working Group                                          A. Example
Internet-Draft                                              Pigeon Labs
Expires: 1 May 2031                                        October 2030


                             Pigeon Perches
                       draft-pigeon-perches-03

Table of Contents

   1.  Introduction  . . . . . . . . . . . . . . . . . . . . . . .   2
     1.1.  Perch Sizes . . . . . . . . . . . . . . . . . . . . . .   2
   Appendix A.  Wind . . . . . . . . . . . . . . . . . . . . . . .   3

1.  Introduction

   Pigeons perch on ledges, and
2 of them may share one.

1.1.  Perch Sizes

   Small.



Example                   Expires 1 May 2031                   [Page 2]
\f
Internet-Draft               Pigeon Perches                 October 2030


2.  References

2.1.  Normative References

   [RFC1149]  Waitzman, D., "Avian Carriers", RFC 1149.

Appendix A.  Wind

   Strong.

A.1.  Gusts

   Sudden.

Acknowledgments

   Thanks.

Author's Address

   A. Example
"""


def test_markdown_reads_setext_headings_and_any_space_after_the_hash() -> None:
    assert section_rows(MARKDOWN, "draft-pigeon-perches.md") == [
        ("1", "Introduction"),
        ("1.1", "Perch Sizes"),
        ("2", "Perch Colours"),
        ("3", "References"),
        ("3.1", "Normative References"),
        ("3.2", "Informative References"),
        ("A", "Wind"),
        (None, "Acknowledgments"),
    ]


def test_xml_entities_are_expanded_and_reference_lists_numbered_on() -> None:
    assert section_rows(XML, "draft-pigeon-perches-03.xml") == [
        ("1", "Introduction"),
        ("1.1", "Perch Sizes"),
        ("2", "References"),
        ("2.1", "Normative References"),
        ("2.2", "Informative References"),
        ("A", "Wind"),
    ]
    expanded = expand_entities(XML)
    assert "Pigeons <bcp14>MUST</bcp14> perch" in expanded
    assert "&RFC2119;" in expanded  # an external entity is left as written
    assert expanded.count("\n") == XML.count("\n")  # every line keeps its number


def test_a_whitespace_line_between_xml_elements_is_in_no_section() -> None:
    tree = parse_sections(XML, "draft-pigeon-perches-03.xml")
    blank = XML.split("\n").index("", 12) + 1  # the line after the Introduction's <t>
    assert blank in tree.blank_lines


def test_text_headings_are_read_from_the_margin_past_toc_and_page_breaks() -> None:
    assert section_rows(TEXT, "draft-pigeon-perches-03.txt") == [
        ("1", "Introduction"),
        ("1.1", "Perch Sizes"),
        ("2", "References"),
        ("2.1", "Normative References"),
        ("A", "Wind"),
        ("A.1", "Gusts"),
        (None, "Acknowledgments"),
        (None, "Author's Address"),
    ]
    tree = parse_sections(TEXT, "x.txt")
    sizes, introduction = tree.numbered("1.1"), tree.numbered("1")
    assert sizes is not None and introduction is not None
    assert introduction.end >= sizes.end  # a parent spans its subsections


def test_a_published_rfcs_back_matter_takes_no_letter_but_a_drafts_does() -> None:
    text = (
        "---\ntitle: Pigeons\n---\n\n--- middle\n\n# Introduction\n\nHi.\n\n--- back\n\n"
        "# Wind\n\nStrong.\n\n# Contributors\n\nCarol.\n\n# Acknowledgements\n\nThanks.\n"
    )
    draft = [(s.number, s.title) for s in parse_sections(text, "d.md").sections]
    rfc = [(s.number, s.title) for s in parse_sections(text, "d.md", published=True).sections]
    assert draft[-2:] == [("B", "Contributors"), ("C", "Acknowledgements")]
    assert rfc[-3:] == [("A", "Wind"), (None, "Contributors"), (None, "Acknowledgements")]


def test_of_many_same_headed_sections_each_is_its_own_by_position() -> None:
    text = (
        "---\ntitle: Pigeons\n---\n\n--- middle\n\n# Coos\n\n## Example\n\nOne.\n\n"
        "# Flaps\n\n## Example\n\nTwo.\n\n## Example\n\nThree.\n"
    )
    tree = parse_sections(text, "d.md")
    examples = [s for s in tree.sections if s.title == "Example"]
    assert [(s.number, s.occurrence) for s in examples] == [("1.1", 0), ("2.1", 0), ("2.2", 1)]
    three = text.split("\n").index("Three.") + 1
    assert tree.at(three) is examples[2]
