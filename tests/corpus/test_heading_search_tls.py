"""Heading search over the real TLS 1.3 drafts and RFC 8446, the way people ask.

Entries are built straight from the sources (every draft-ietf-tls-tls13 revision aligned with
RFC 8446 as published), with the section IRIs the graph uses, so the index sees what the
graph's SPARQL would hand it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.answers.heading_search import HeadingEntry, HeadingIndex
from ratified_rdf.graph import vocab
from ratified_rdf.graph.mapping import section_iris
from ratified_rdf.records.alignment import align_document
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.kramdown import parse_kramdown

pytestmark = pytest.mark.corpus

DRAFT = "draft-ietf-tls-tls13"
RFC = "rfc8446"


def _rfc_section(index: HeadingIndex, question: str) -> tuple[str | None, str]:
    best = index.search(question).best
    assert best is not None, question
    assert best.entry.is_rfc and best.entry.document == "RFC 8446", best
    return best.entry.number, best.entry.heading


@pytest.fixture(scope="module")
def entries(tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> list[HeadingEntry]:
    repo = GitRepository.open(str(tls_bundle), tmp_path_factory.mktemp("cache"))
    text = repo.read_text(repo.resolve("as-published").commit, "draft-rescorla-tls-rfc8446-bis.md")
    assert text is not None
    final = parse_kramdown(text)
    final_iris = section_iris(vocab.document_iri(RFC), final)
    out = [
        HeadingEntry(
            section=iri,
            heading=s.heading,
            number=s.number,
            document="RFC 8446",
            is_rfc=True,
            final=iri,
        )
        for s, iri in zip(final.sections, final_iris, strict=True)
    ]
    tags = repo.tags()
    for n in range(29):
        number = f"{n:02d}"
        name = f"{DRAFT}-{number}"
        text = repo.read_text(tags[name].commit, f"{DRAFT}.md")
        assert text is not None, name
        parsed = parse_kramdown(text)
        iris = section_iris(vocab.revision_iri(DRAFT, number), parsed)
        records = align_document(name, parsed, RFC, final)
        for section, iri, record in zip(parsed.sections, iris, records, strict=True):
            target = record.target_position
            out.append(
                HeadingEntry(
                    section=iri,
                    heading=section.heading,
                    number=section.number,
                    document=name,
                    is_rfc=False,
                    final=final_iris[target] if target is not None else None,
                )
            )
    return out


@pytest.fixture(scope="module")
def index(entries: list[HeadingEntry]) -> HeadingIndex:
    return HeadingIndex.build(entries)


def test_early_data_finds_the_early_data_indication(index: HeadingIndex) -> None:
    result = index.search("why does early data work this way?")
    assert _rfc_section(index, "why does early data work this way?") == (
        "4.2.10",
        "Early Data Indication",
    )
    assert result.best is not None and result.runner_up is not None
    assert result.best.matched == ("early", "data")
    assert result.runner_up.entry.final != result.best.entry.final
    # The alternative is another early-data section: the message that ends it, or 0-RTT.
    assert result.runner_up.entry.heading in {"End of Early Data", "0-RTT Data", "0-RTT"}
    assert result.query_terms == ("earli", "data", "~early-data")


def test_zero_rtt_reaches_early_data_through_the_alias(index: HeadingIndex) -> None:
    result = index.search("how does 0-RTT work?")
    # Headings that say "0-RTT" come first; "Early Data Indication" is found through the alias.
    assert result.best is not None and "0-RTT" in result.best.entry.heading
    early = next(hit for hit in result.hits if hit.entry.heading == "Early Data Indication")
    assert early.matched == ("0-RTT",)
    assert early.entry.number == "4.2.10"


def test_key_share(index: HeadingIndex) -> None:
    assert _rfc_section(index, "who should I ask about key share?") == ("4.2.8", "Key Share")
    best = index.search("who should I ask about key share?").best
    assert best is not None and best.matched == ("key", "share")
    assert _rfc_section(index, "what is the key_share extension for") == ("4.2.8", "Key Share")


def test_hello_retry_request(index: HeadingIndex) -> None:
    expected = ("4.1.4", "Hello Retry Request")
    assert _rfc_section(index, "how does the hello retry request work") == expected
    assert _rfc_section(index, "HRR") == expected
    assert _rfc_section(index, "when does a server send a HelloRetryRequest?") == expected


def test_tls_1_3_is_never_section_1_3(index: HeadingIndex) -> None:
    result = index.search("TLS 1.3")
    assert result.query_terms == ()
    assert all(hit.entry.number != "1.3" for hit in result.hits)
    assert result.hits == ()
    for question in ("1.3", "section 1.3", "TLSv1.3", "tls1.3"):
        assert index.search(question).hits == (), question
    # §1.3 is "Updates Affecting TLS 1.2": a word can find it, a version number cannot.
    hits = index.search("TLS 1.3 updates").hits
    updates = next(hit for hit in hits if hit.entry.number == "1.3")
    assert updates.matched == ("updates",)
    assert all("1.3" not in word for hit in hits for word in hit.matched)


def test_one_hit_per_concept_across_29_revisions(index: HeadingIndex) -> None:
    hits = index.search("client hello").hits
    concepts = [hit.entry.final or hit.entry.heading.lower() for hit in hits]
    assert len(concepts) == len(set(concepts))
    client_hello = next(hit for hit in hits if hit.entry.heading == "Client Hello")
    assert client_hello.entry.number == "4.1.2"
    assert client_hello.documents == 30
