"""Citations found in the real tls13-spec GitHub archive match hand labels.

The labels in ``citation_labels.toml`` hold locators only (thread, post, and a span given by a
bare cited string and its occurrence, or by an offset); the archive text itself is read from the
corpus bundle at test time, so no IETF or author text is committed. Without the bundle the tests
skip locally and fail under ``CI=true``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ratified_rdf.records.citations import Citation, find_citations, revision_mentions
from tests.conftest import require_corpus

pytestmark = pytest.mark.corpus

LABELS = Path(__file__).with_name("citation_labels.toml")
_DATA = tomllib.loads(LABELS.read_text(encoding="utf-8"))
CASES: list[dict[str, Any]] = _DATA["case"]
MENTIONS: list[dict[str, Any]] = _DATA["mention"]
FIELDS = ("section", "anchor", "draft", "revision", "rfc")
# What a locator may quote: a section number, an anchor or an RFC/revision number, never prose.
_BARE = re.compile(r"^(?:[A-H]|\d+)(?:\.\d+)*$|^[a-z][\w-]*$|^\d{4}$|^-?\d{2}$")

Threads = dict[int, dict[str, Any]]


@pytest.fixture(scope="module")
def threads(tmp_path_factory: pytest.TempPathFactory) -> Threads:
    bundle = require_corpus()
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is not installed, so the corpus bundle cannot be read.", pytrace=False)
    repo = tmp_path_factory.mktemp("tls13-archive") / "repo.git"
    subprocess.run([git, "clone", "--bare", "--quiet", str(bundle), str(repo)], check=True)
    shown = subprocess.run(
        [git, "--git-dir", str(repo), "show", "refs/heads/gh-pages:archive.json"],
        check=True,
        capture_output=True,
    )
    archive = json.loads(shown.stdout)
    # Issues and pull requests share GitHub's number space, so a number names one thread.
    return {t["number"]: t for kind in ("issues", "pulls") for t in archive[kind]}


def _post(threads: Threads, locator: dict[str, Any]) -> str:
    thread = threads[locator["thread"]]
    where = locator["where"]
    if where == "body":
        return thread["body"] or ""
    if where == "comment":
        return thread["comments"][locator["index"]]["body"] or ""
    if where == "review":
        return thread["reviews"][locator["index"]]["body"] or ""
    if where == "review-comment":
        review = thread["reviews"][locator["review"]]
        return review["comments"][locator["comment"]]["body"] or ""
    raise AssertionError(f"unknown place in a thread: {where!r}")


def _span(text: str, locator: dict[str, Any]) -> tuple[int, int]:
    if "offset" in locator:
        start = locator["offset"]
        end = start + locator["length"]
        assert end <= len(text), f"offset beyond the post ({len(text)} characters)"
        return start, end
    find, occurrence = locator["find"], locator["occurrence"]
    start = -1
    for _ in range(occurrence + 1):
        start = text.find(find, start + 1)
        assert start >= 0, f"occurrence {occurrence} of {find!r} is not in the post"
    return start, start + len(find)


def _overlapping(citations: list[Citation], start: int, end: int) -> list[Citation]:
    return [c for c in citations if c.start < end and start < c.end]


@pytest.mark.parametrize("case", CASES, ids=[c["label"] for c in CASES])
def test_labelled_citation(threads: Threads, case: dict[str, Any]) -> None:
    text = _post(threads, case)
    start, end = _span(text, case)
    found = _overlapping(find_citations(text), start, end)
    if case.get("none"):
        assert found == [], f"expected no citation here, got {found}"
        return
    assert len(found) == 1, f"expected one citation here, got {found}"
    citation = found[0]
    expected = {field: case.get(field) for field in FIELDS}
    assert {field: getattr(citation, field) for field in FIELDS} == expected
    if "kind" in case:
        assert citation.kind == case["kind"]


@pytest.mark.parametrize("case", MENTIONS, ids=[m["label"] for m in MENTIONS])
def test_labelled_revision_mention(threads: Threads, case: dict[str, Any]) -> None:
    text = _post(threads, case)
    start, end = _span(text, case)
    # The line holding the span: small enough that other mentions are known to the labeller.
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    mentions = revision_mentions(line)
    if case.get("none"):
        number = text[start:end].lstrip("-").zfill(2)
        assert all(found != number for _, found in mentions), mentions
        return
    assert (case.get("draft"), case["revision"]) in mentions


def test_labels_cover_enough_real_cases() -> None:
    traps = [c for c in CASES if c.get("trap")]
    assert len(CASES) >= 45
    assert len(traps) >= 15
    assert {c.get("kind") for c in CASES} >= {"url", "xref", "appendix"}
    assert any(c.get("none") for c in CASES) and any(c.get("rfc") for c in CASES)


def test_labels_quote_no_archive_text() -> None:
    for case in [*CASES, *MENTIONS]:
        if "find" in case:
            assert _BARE.match(case["find"]), f"{case['label']}: locator quotes text"
        else:
            assert {"offset", "length"} <= case.keys(), case["label"]
