"""RFC 9846 (TLS 1.3) as published in plain text, read from the shared TLS corpus.

The text lives on the ``gh-pages`` branch of the tls13-spec git bundle in ``../shared`` beside
the checkout.  Without the corpus the test skips locally but fails under CI, where a missing
corpus means the check silently stopped running.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from ratified_rdf.sources.document import ParsedDocument
from ratified_rdf.sources.rfc_text import parse_rfc_text
from tests.conftest import require_corpus

pytestmark = pytest.mark.corpus

_TOC_ENTRY = re.compile(r"^ +(?:Appendix )?((?:\d+|[A-Z])(?:\.\d+)*)\.\s+(\S.*)$")


@pytest.fixture(scope="module")
def rfc9846_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    bundle = require_corpus()
    git = shutil.which("git")
    assert git is not None, "git is not installed, so the bundle cannot be read"
    repo = tmp_path_factory.mktemp("tls13-spec") / "repo.git"
    subprocess.run([git, "clone", "--bare", "--quiet", str(bundle), str(repo)], check=True)
    # A bare clone of a bundle keeps the bundle's branch names under refs/heads/.
    shown = subprocess.run(
        [git, "--git-dir", str(repo), "show", "refs/heads/gh-pages:rfc9846.txt"],
        check=True,
        capture_output=True,
    )
    return shown.stdout.decode("utf-8")


@pytest.fixture(scope="module")
def rfc9846(rfc9846_text: str) -> ParsedDocument:
    return parse_rfc_text(rfc9846_text)


def _toc_entries(text: str) -> list[tuple[str, str]]:
    """(number, title) of every numbered TOC entry, wrapped titles joined."""
    lines = text.splitlines()
    start = lines.index("Table of Contents") + 1
    entries: list[tuple[str, str]] = []
    for line in lines[start:]:
        if line and not line.startswith(" "):
            break
        match = _TOC_ENTRY.match(line)
        if match:
            entries.append((match.group(1), match.group(2).strip()))
        elif line.strip() and entries and line.startswith("            "):
            number, title = entries[-1]
            entries[-1] = (number, f"{title} {line.strip()}")
    return entries


def test_front_matter(rfc9846: ParsedDocument) -> None:
    assert rfc9846.docname == "rfc9846"
    assert rfc9846.title == "The Transport Layer Security (TLS) Protocol Version 1.3"
    assert [a.name for a in rfc9846.authors] == ["E. Rescorla"]


def test_known_sections(rfc9846: ParsedDocument) -> None:
    by_number = {s.number: s for s in rfc9846.sections if s.number}
    # RFC 9846 inserted "4.1. The Transcript Hash", so RFC 8446's 4.2.x extensions are 4.3.x.
    assert by_number["4.3.10"].heading == "Early Data Indication"
    assert by_number["4.3.1"].heading == "Supported Versions"
    assert by_number["4.2.1"].heading == "Cryptographic Negotiation"
    assert "4.2.10" not in by_number
    assert by_number["12"].heading == "References"
    assert by_number["12"].appendix is False


def test_appendices(rfc9846: ParsedDocument) -> None:
    top = [(s.number, s.heading) for s in rfc9846.sections if s.appendix and s.level == 1]
    assert [number for number, _ in top if number] == ["A", "B", "C", "D", "E", "F"]
    assert top[0] == ("A", "State Machine")
    by_number = {s.number: s for s in rfc9846.sections if s.number}
    assert by_number["A.1"].heading == "Client"
    assert by_number["A.1"].parent == by_number["A"].position


def test_numbering_matches_table_of_contents(rfc9846: ParsedDocument, rfc9846_text: str) -> None:
    toc = _toc_entries(rfc9846_text)
    numbered = [s for s in rfc9846.sections if s.number is not None]
    # The TOC stops at depth 3 (xml2rfc's default tocDepth), so the twelve 4-level sections
    # such as 4.3.8.1 are only in the body.
    assert len(toc) == len([s for s in numbered if s.level <= 3]) == 125
    assert [(s.number, s.heading) for s in numbered if s.level <= 3] == toc
    assert len(numbered) == 137
    assert {s.number for s in numbered if s.level == 4} >= {"4.3.8.1", "B.3.1.4"}


def test_unnumbered_back_matter(rfc9846: ParsedDocument) -> None:
    unnumbered = [(s.heading, s.level) for s in rfc9846.sections if s.number is None]
    assert unnumbered == [("Contributors", 1), ("Author's Address", 1)]


def test_no_page_furniture_or_front_matter(rfc9846: ParsedDocument) -> None:
    for section in rfc9846.sections:
        assert "[Page" not in section.body
    assert rfc9846.sections[0].heading == "Introduction"
    assert "Table of Contents" not in {s.heading for s in rfc9846.sections}


def test_handshake_figure_is_not_read_as_headings(rfc9846: ParsedDocument) -> None:
    overview = next(s for s in rfc9846.sections if s.number == "2")
    assert "Key  ^ ClientHello" in overview.body
    assert "Exch | + key_share*" in overview.body
