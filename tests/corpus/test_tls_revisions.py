"""Every revision of both TLS chains parses into a believable number of sections."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from ratified_rdf.records.manifest import load_manifest
from ratified_rdf.sources.document import ParsedDocument
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.kramdown import parse_kramdown
from ratified_rdf.sources.rfc_text import parse_rfc_text
from tests.conftest import MANIFEST

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def repo(tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> GitRepository:
    return GitRepository.open(str(tls_bundle), tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def parsed(repo: GitRepository) -> dict[str, ParsedDocument]:
    manifest, _ = load_manifest(MANIFEST)
    tags = repo.tags()
    documents: dict[str, ParsedDocument] = {}
    for draft in manifest.draft:
        for number in draft.expected_revisions():
            tag = tags[f"{draft.name}-{number}"]
            text = repo.read_text(tag.commit, draft.file)
            assert text is not None, f"{draft.name}-{number} has no {draft.file}"
            documents[f"{draft.name}-{number}"] = parse_kramdown(text)
    return documents


def test_all_45_revisions_are_read(parsed: dict[str, ParsedDocument]) -> None:
    assert len(parsed) == 29 + 1 + 15


@pytest.mark.parametrize("draft", ["draft-ietf-tls-tls13", "draft-ietf-tls-rfc8446bis"])
def test_no_revision_falls_far_below_its_neighbours(
    parsed: dict[str, ParsedDocument], draft: str
) -> None:
    counts = [
        (name, len(doc.sections)) for name, doc in parsed.items() if name.startswith(draft + "-")
    ]
    for index, (name, count) in enumerate(counts):
        neighbours = [
            c for _, c in counts[max(0, index - 2) : index] + counts[index + 1 : index + 3]
        ]
        assert count >= 0.8 * statistics.median(neighbours), (name, count, neighbours)


def test_revision_18_with_its_indented_fence_keeps_every_heading(
    parsed: dict[str, ParsedDocument],
) -> None:
    doc = parsed["draft-ietf-tls-tls13-18"]
    headings = {s.heading: s.number for s in doc.sections}
    # The fence opened with four spaces just before it must not swallow section 2.2.
    assert headings["Resumption and Pre-Shared Key (PSK)"] == "2.2"
    assert headings["Early Data Indication"] == "4.2.9"


def test_known_numbers_of_revision_21(parsed: dict[str, ParsedDocument]) -> None:
    numbers = {s.number: s.heading for s in parsed["draft-ietf-tls-tls13-21"].sections}
    assert numbers["4.2.9"] == "Early Data Indication"
    assert numbers["4.2.1"] == "Supported Versions"
    assert numbers["B.3.1.1"] == "Version Extension"  # a generated "%%####" heading


def test_rfc8446_as_published_numbers_like_the_rfc(repo: GitRepository) -> None:
    text = repo.read_text(repo.resolve("as-published").commit, "draft-rescorla-tls-rfc8446-bis.md")
    assert text is not None
    numbers = {s.number: s.heading for s in parse_kramdown(text).sections}
    assert numbers["4.2.10"] == "Early Data Indication"
    assert numbers["4.2.1"] == "Supported Versions"
    assert numbers["B.4"] == "Cipher Suites"
    assert numbers["E.8"] == "Attacks on Static RSA"


def test_rfc9846_markdown_and_published_text_agree(repo: GitRepository) -> None:
    """Two independent readers, one document: every number and heading must match."""
    markdown = repo.read_text(repo.resolve("main").commit, "rfc9846.md")
    text = repo.read_text(repo.resolve("gh-pages").commit, "rfc9846.txt")
    assert markdown is not None and text is not None
    from_md = [(s.number, s.heading.lower()) for s in parse_kramdown(markdown).sections if s.number]
    from_txt = [(s.number, s.heading.lower()) for s in parse_rfc_text(text).sections if s.number]
    assert len(from_md) == len(from_txt) > 130
    assert from_md == from_txt
