"""Citation finding on invented sentences: every written form and every look-alike trap."""

from __future__ import annotations

import pytest

from ratified_rdf.records.citations import Citation, find_citations, revision_mentions

TLS13 = "draft-ietf-tls-tls13"
BIS = "draft-ietf-tls-rfc8446bis"


def _one(text: str, **kwargs: str) -> Citation:
    found = find_citations(text, **kwargs)
    assert len(found) == 1, found
    return found[0]


def _fields(citation: Citation) -> tuple[str | None, str | None, str | None, int | None]:
    return citation.section, citation.draft, citation.revision, citation.rfc


@pytest.mark.parametrize(
    ("text", "section"),
    [
        ("The retry logic in Section 4.2.9 looks wrong to me.", "4.2.9"),
        ("I think section 4.2.9 needs an example.", "4.2.9"),
        ("See §4.2.9 for the details.", "4.2.9"),
        ("See § 4.2.9 for the details.", "4.2.9"),
        ("As Sec. 4.2.9 puts it, we are fine.", "4.2.9"),
        ("As sect. 4.2.9 puts it, we are fine.", "4.2.9"),
        ("Mind the gap in Sec 4.2.9 please.", "4.2.9"),
        ("Can we reword S 4.2.9 a little?", "4.2.9"),
        ("s4.2.9: this paragraph is unclear.", "4.2.9"),
        ("The subsection 4.2.9 is short.", "4.2.9"),
        ("Section 4.2.9. says something odd.", "4.2.9"),
        ("Check section 2.3's last sentence.", "2.3"),
        ("This belongs in Section 9 instead.", "9"),
        ("Section a.1 is lower case and Section A.1 is not.", "A.1"),
        ("Reading section 7.4.1.4.1 again helps.", "7.4.1.4.1"),
        ("Moved to the next\nSection\n  4 of the draft.", "4"),
    ],
)
def test_section_forms(text: str, section: str) -> None:
    citation = _one(text)
    assert _fields(citation) == (section, None, None, None)
    assert citation.kind == "section"
    assert citation.text == text[citation.start : citation.end]


def test_span_covers_keyword_and_number() -> None:
    text = "So Sec. 4.2.9 it is."
    citation = _one(text)
    assert (citation.start, citation.end, citation.text) == (3, 13, "Sec. 4.2.9")


@pytest.mark.parametrize(
    ("text", "sections"),
    [
        ("Sections 4.2.9 and 4.2.10 disagree.", ["4.2.9", "4.2.10"]),
        ("Sections 2, 3 and 5 are long.", ["2", "3", "5"]),
        ("Section 4.2.1, 4.2.3 or 4.2.4 would do.", ["4.2.1", "4.2.3", "4.2.4"]),
        ("Section 4.2.1 and §4.2.3 overlap.", ["4.2.1", "4.2.3"]),
        ("Appendices B and C.2 are informative.", ["B", "C.2"]),
        ("§§ 4.1 and 4.2 both apply.", ["4.1", "4.2"]),
    ],
)
def test_lists_give_one_citation_per_number(text: str, sections: list[str]) -> None:
    assert [c.section for c in find_citations(text)] == sections


def test_singular_section_does_not_swallow_plain_numbers() -> None:
    assert [c.section for c in find_citations("Section 4, 5 of us agreed.")] == ["4"]


@pytest.mark.parametrize(
    ("text", "section"),
    [
        ("Appendix A.1 lists the structures.", "A.1"),
        ("The appendix E text on privacy is fine.", "E"),
        ("APPENDIX B.3.1 has a typo.", "B.3.1"),
        ("Appendix C.4's claim is strong.", "C.4"),
    ],
)
def test_appendix_forms(text: str, section: str) -> None:
    citation = _one(text)
    assert citation.section == section and citation.kind == "appendix"


@pytest.mark.parametrize(
    ("text", "section", "draft", "revision"),
    [
        ("Compare section 4.2.9 of draft-21 with today.", "4.2.9", None, "21"),
        ("Compare -21 §4.2.9 with today.", "4.2.9", None, "21"),
        ("Compare draft-ietf-tls-tls13-21 section 4.2.9 with today.", "4.2.9", TLS13, "21"),
        ("Compare draft-ietf-tls-tls13-21, Section 4.2.9 with today.", "4.2.9", TLS13, "21"),
        ("In draft 21, Section 4.2.9 said otherwise.", "4.2.9", None, "21"),
        ("Section 8.1 of draft 4 was vague.", "8.1", None, "04"),
        ("Section 2 in the draft-18 text was vague.", "2", None, "18"),
        ("Section 2 of draft-ietf-tls-rfc8446bis-03 was vague.", "2", BIS, "03"),
        ("Section 2 of rfc8446bis-03 was vague.", "2", BIS, "03"),
        ("Section 2 of draft-ietf-tls-rfc8446bis was vague.", "2", BIS, None),
    ],
)
def test_revision_named_with_the_citation(
    text: str, section: str, draft: str | None, revision: str | None
) -> None:
    assert _fields(_one(text)) == (section, draft, revision, None)


def test_default_draft_fills_only_citations_without_a_document() -> None:
    text = "Compare -21 §4.2.9 with Section 4.2.10 and RFC 5246 section 7.4."
    found = find_citations(text, default_draft=TLS13)
    assert [_fields(c) for c in found] == [
        ("4.2.9", TLS13, "21", None),
        ("4.2.10", TLS13, None, None),
        ("7.4", None, None, 5246),
    ]


@pytest.mark.parametrize(
    ("text", "section", "rfc"),
    [
        ("RFC 8446 section 4.2.10 is the one.", "4.2.10", 8446),
        ("RFC8446 §4.2.10 is the one.", "4.2.10", 8446),
        ("RFC 8446, Section 4.2.10 is the one.", "4.2.10", 8446),
        ("[RFC8446], Section 4.2.10 is the one.", "4.2.10", 8446),
        ("RFC 8446 Appendix E is the one.", "E", 8446),
        ("section 5.1 of RFC 8446 is the one.", "5.1", 8446),
        ("Section 3 of [RFC6066] is the one.", "3", 6066),
        ("See {{Section 3 of ?RFC9847}} there.", "3", 9847),
        ("See Section\n  4 of {{RFC5077}} there.", "4", 5077),
        # Traps: sections of other RFCs keep that RFC so the caller can drop them.
        ("RFC 5246 section 7.4 says so.", "7.4", 5246),
        ("The nonce follows section 3 of RFC 5116 there.", "3", 5116),
    ],
)
def test_rfc_named_with_the_citation(text: str, section: str, rfc: int) -> None:
    assert _fields(_one(text)) == (section, None, None, rfc)


def test_other_draft_before_the_section_is_kept() -> None:
    # Trap: a section of another draft is attributed to that draft.
    citation = _one("The key update in draft-ietf-quic-tls section 4.1 differs.")
    assert _fields(citation) == ("4.1", "draft-ietf-quic-tls", None, None)


def test_rfc_joined_by_and_does_not_own_the_next_section() -> None:
    assert _fields(_one("RFC 8996 and Appendix E.5 forbid it.")) == ("E.5", None, None, None)


def test_rfc_that_owns_the_previous_section_does_not_own_the_next() -> None:
    found = find_citations("Section 3 of RFC 9999 Section 4 follows.")
    assert [_fields(c) for c in found] == [("3", None, None, 9999), ("4", None, None, None)]


@pytest.mark.parametrize(
    ("url", "section", "anchor", "draft", "revision", "rfc"),
    [
        (
            "https://datatracker.ietf.org/doc/html/draft-ietf-tls-tls13-21#section-4.2.9",
            "4.2.9",
            None,
            TLS13,
            "21",
            None,
        ),
        (
            "https://tools.ietf.org/html/draft-ietf-tls-tls13-19#appendix-g",
            "G",
            None,
            TLS13,
            "19",
            None,
        ),
        (
            "https://www.ietf.org/archive/id/draft-ietf-tls-rfc8446bis-14.html#section-1.3-2.6.1",
            "1.3",
            None,
            BIS,
            "14",
            None,
        ),
        ("https://www.rfc-editor.org/rfc/rfc8446#section-4.2.10", "4.2.10", None, None, None, 8446),
        ("https://www.rfc-editor.org/rfc/rfc8446.html#appendix-B.4", "B.4", None, None, None, 8446),
        ("https://www.rfc-editor.org/rfc/rfc8446.txt#section-2", "2", None, None, None, 8446),
        (
            "https://tlswg.github.io/tls13-spec/draft-ietf-tls-tls13.html#rfc.section.4.2.p.3",
            "4.2",
            None,
            TLS13,
            None,
            None,
        ),
        ("https://tlswg.github.io/tls13-spec/#rfc.appendix.E.6", "E.6", None, None, None, None),
        (
            "https://tlswg.github.io/tls13-spec/#early-data-indication",
            None,
            "early-data-indication",
            None,
            None,
            None,
        ),
        (
            "https://tlswg.org/tls13-spec/draft-ietf-tls-rfc8446bis.html#name-key-schedule",
            None,
            "name-key-schedule",
            BIS,
            None,
            None,
        ),
        ("https://tlswg.org/tls13-spec/rfc9846.html#section-4.5", "4.5", None, None, None, 9846),
        # Trap: another draft's URL keeps that draft.
        (
            "https://tools.ietf.org/html/draft-ietf-quic-tls-07#section-5.2",
            "5.2",
            None,
            "draft-ietf-quic-tls",
            "07",
            None,
        ),
    ],
)
def test_urls_with_fragments(
    url: str,
    section: str | None,
    anchor: str | None,
    draft: str | None,
    revision: str | None,
    rfc: int | None,
) -> None:
    text = f"Look at {url}."
    citation = _one(text)
    assert (citation.section, citation.anchor, *_fields(citation)[1:]) == (
        section,
        anchor,
        draft,
        revision,
        rfc,
    )
    assert citation.kind == "url"
    assert citation.text == url


@pytest.mark.parametrize(
    "url",
    [
        "https://github.com/tlswg/tls13-spec/pull/9#issuecomment-1",
        "https://github.com/tlswg/tls13-spec/blob/abc/draft-ietf-tls-tls13.md#L10",
        "https://www.iana.org/assignments/tls-parameters/tls-parameters.xhtml#tls-parameters-4",
        "https://tools.ietf.org/html/draft-ietf-tls-tls13-11#page-81",
        "https://www.rfc-editor.org/rfc/rfc8446.html#ref-GCM",
        "https://tlswg.org/tls13-spec/rfc9846.html#RFC6066",
        "https://tlswg.org/tls13-spec/rfc9846.html#table-1",
        "https://tools.ietf.org/html/rfc8446",
        "https://www.usenix.org/legacy/events/sec2001/full_papers/x.pdf",
    ],
)
def test_urls_that_are_not_section_citations(url: str) -> None:
    # Trap: comment, line, page, table and bibliography fragments, and URLs to no document.
    assert find_citations(f"Look at {url} there.") == []


def test_markdown_link_is_one_citation_with_the_url_document() -> None:
    text = "As [Appendix D](https://datatracker.ietf.org/doc/html/rfc8446#appendix-D) says."
    citation = _one(text)
    assert (citation.section, citation.rfc, citation.kind) == ("D", 8446, "appendix")
    assert citation.text == "Appendix D"


def test_markdown_link_label_gets_the_url_anchor() -> None:
    text = "See [Section 4.2.1](https://tlswg.github.io/tls13-spec/#supported-versions)."
    citation = _one(text)
    assert (citation.section, citation.anchor, citation.draft) == (
        "4.2.1",
        "supported-versions",
        None,
    )


def test_markdown_link_without_citation_label_is_cited_by_url() -> None:
    text = "[-14](https://www.ietf.org/archive/id/draft-ietf-tls-rfc8446bis-14.html#section-1.3)"
    assert _fields(_one(text)) == ("1.3", BIS, "14", None)


def test_section_of_a_url_takes_the_url_document() -> None:
    text = "See Section 2 of https://tools.ietf.org/html/rfc7540 for that."
    assert _fields(_one(text)) == ("2", None, None, 7540)


def test_kramdown_cross_references() -> None:
    text = "Remove {{early-data-indication}} (see {{NSTMessage}}, {{RFC6066}} and {{SLOTH}})."
    found = find_citations(text)
    assert [(c.anchor, c.kind, c.section) for c in found] == [
        ("early-data-indication", "xref", None),
        ("NSTMessage", "xref", None),
    ]


def test_citations_in_code_and_diffs_still_count() -> None:
    text = "```\n- see Section 4.2.9\n+ see {{early-data-indication}}\n```"
    assert [(c.section, c.anchor) for c in find_citations(text)] == [
        ("4.2.9", None),
        (None, "early-data-indication"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "TLS 1.3 is done and TLS 1.2 is still around.",
        "We negotiate version 1.2 and then v1.3.",
        "OpenSSL 1.1.1 and NSS 3.29 both ship it.",
        "The test server is 192.0.2.1 on port 443.",
        "The interim was on 2017.03.04, or 2017-03-04 in ISO form.",
        "That costs 1.5 RTT, or 0.5 of the budget.",
        "In this section:\n1. foo\n2. bar",
        "Items in this section\n1. foo\n2. bar",
        "The curve sect571r1 is gone, and SECG SEC 1 defines encodings.",
        "See PKCS #3 section 8.3, SP 800-56A section C.1 and FIPS 186-4 section 6.",
        "The client's 0-RTT data and the server's 1-RTT keys.",
        "In this section I describe why; a section Zeta is missing.",
        "Table 3 and Figure 2.1 are wrong, and §Handshake is vague.",
        "7.4.2.3. Server Hello",
    ],
)
def test_look_alikes_are_not_citations(text: str) -> None:
    assert find_citations(text) == []


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("Fixed in draft-21.", [(None, "21")]),
        ("Fixed in -21 already.", [(None, "21")]),
        ("Fixed in draft 21.", [(None, "21")]),
        ("Fixed in Draft -21.", [(None, "21")]),
        ("Fixed in draft 4.", [(None, "04")]),
        ("Fixed in draft-ietf-tls-tls13-21.", [(TLS13, "21")]),
        ("Fixed in rfc8446bis-03.", [(BIS, "03")]),
        ("Fixed in ietf-tls-tls13-21.", [(TLS13, "21")]),
        ("See https://www.ietf.org/archive/id/draft-ietf-tls-rfc8446bis-14.html", [(BIS, "14")]),
        ("Between draft -19 and -20 it changed.", [(None, "19"), (None, "20")]),
        ("QUIC's draft-ietf-quic-tls-07 points at it.", [("draft-ietf-quic-tls", "07")]),
        ("[-14](https://example.org/x) states it.", [(None, "14")]),
    ],
)
def test_revision_mentions(text: str, mentions: list[tuple[str | None, str]]) -> None:
    assert revision_mentions(text) == mentions


@pytest.mark.parametrize(
    "text",
    [
        "A 2^-32 margin, 2^(-32) again, 2^{-32} in TeX.",
        "The window is [-10,10] seconds, or -10 .. 10.",
        "Dated 2017-03-04 and 2017.03.04.",
        "Set x = -10; then retry.",
        "The draft-ietf-tls-tls13 repository has no revision here.",
        "TLS 1.3 and OpenSSL 1.1.1 are versions.",
        "The -1 index and -123 offset are not revisions.",
    ],
)
def test_not_revision_mentions(text: str) -> None:
    assert revision_mentions(text) == []


def test_citation_is_frozen() -> None:
    citation = _one("Section 1")
    with pytest.raises(ValueError):
        citation.section = "2"  # type: ignore[misc]
