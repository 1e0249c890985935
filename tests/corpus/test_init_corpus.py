"""``ratified init`` on both real repositories: the QUIC one (six drafts in one repository)
and the TLS one, whose manifest it must agree with on every fact a repository holds."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ratified_rdf.records.manifest import load_manifest
from ratified_rdf.surfaces.cli import main
from tests.conftest import MANIFEST, REPO

pytestmark = pytest.mark.corpus

QUIC_RFCS = {
    "transport": 9000,
    "tls": 9001,
    "recovery": 9002,
    "invariants": 8999,
    "http": 9114,
    "qpack": 9204,
}


def _init(source: Path, name: str, folder: Path) -> tuple[str, dict, str]:
    out = folder / name / "manifest.toml"
    run = CliRunner().invoke(main, ["init", str(source), "--name", name, "--out", str(out)])
    assert run.exit_code == 0, run.output
    text = out.read_text(encoding="utf-8")
    return text, tomllib.loads(text), run.output


@pytest.fixture(scope="module")
def quic(quic_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, str]:
    return _init(quic_bundle, "quic", tmp_path_factory.mktemp("init"))


@pytest.fixture(scope="module")
def tls(tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict, str]:
    return _init(tls_bundle, "tls13", tmp_path_factory.mktemp("init"))


def test_quic_six_drafts_with_their_tag_ranges_and_files(quic: tuple[str, dict, str]) -> None:
    _, data, output = quic
    drafts = {d["name"]: d for d in data["draft"]}
    ranges = {"transport": "00-34", "tls": "00-34", "recovery": "00-34", "http": "00-34"}
    ranges |= {"qpack": "00-21", "invariants": "00-13"}
    for topic, span in ranges.items():
        entry = drafts[f"draft-ietf-quic-{topic}"]
        assert entry["revisions"] == span
        assert entry["file"] == f"draft-ietf-quic-{topic}.md"
        assert "moved" not in entry
    assert drafts["draft-thomson-quic-invariants"]["replaced_by"] == "draft-ietf-quic-invariants"
    assert drafts["draft-ietf-quic-qcram"]["replaced_by"] == "draft-ietf-quic-qpack"
    assert drafts["draft-ietf-quic-spin-exp"]["revisions"] == "00-01"
    assert "9 draft series" in output and "default branch main" in output


def test_quic_rfc_texts_hints_and_no_archive(quic: tuple[str, dict, str]) -> None:
    text, data, output = quic
    rfcs = {r["number"]: r for r in data["rfc"]}
    assert sorted(rfcs) == sorted(QUIC_RFCS.values())
    assert all((r["ref"], r["file"]) == ("main", f"rfc{n}.md") for n, r in rfcs.items())
    for topic, number in QUIC_RFCS.items():
        block = text.split(f'name = "draft-ietf-quic-{topic}"\n', 1)[1].split("[[", 1)[0]
        assert f'# became = "rfc{number}"' in block
    assert "github_archive" not in data["discussion"]
    assert "No GitHub archive" in output
    assert data["brain"]["commit_map"] == "commit-map.tsv"


def test_the_committed_quic_manifest_agrees_with_what_init_reads(
    quic: tuple[str, dict, str],
) -> None:
    _, data, _ = quic
    committed, _ = load_manifest(REPO / "records" / "quic")
    read = {d["name"]: d for d in data["draft"]}
    assert {d.name for d in committed.draft} == set(read)
    for entry in committed.draft:
        found = read[entry.name]
        assert (entry.file, entry.revisions, entry.replaced_by) == (
            found["file"],
            found["revisions"],
            found.get("replaced_by"),
        )
    for topic, number in QUIC_RFCS.items():
        assert committed.final_rfc(f"draft-ietf-quic-{topic}") == f"rfc{number}"
    assert {(r.number, r.ref, r.file) for r in committed.rfc} == {
        (r["number"], r["ref"], r["file"]) for r in data["rfc"]
    }


def test_tls_manifest_agrees_with_the_committed_one_on_what_a_repository_holds(
    tls: tuple[str, dict, str],
) -> None:
    text, data, _ = tls
    committed, _ = load_manifest(MANIFEST)
    read = {d["name"]: d for d in data["draft"]}
    names = {d.name for d in committed.draft}
    assert names <= set(read)
    # What init finds beyond the committed manifest: an earlier name of a committed draft,
    # read from the docname its file held before any tag (draft-ietf-tls-rfc5246-bis-00, which
    # became draft-ietf-tls-tls13-00), written as a guess from docnames and replaced by it.
    for name in set(read) - names:
        assert read[name]["revisions_from"] == ["docnames"], name
        assert read[name]["replaced_by"] in names, name
        assert f"{name}-00 (guess)" in text, name
    for entry in committed.draft:
        found = read[entry.name]
        assert found["file"] == entry.file
        assert found["revisions"] == entry.revisions
        assert found.get("replaced_by") == entry.replaced_by
        assert found.get("moved", {}) == entry.moved
    by_number = {entry["number"]: entry for entry in data["rfc"]}
    assert set(by_number) == {9846, 8446}
    # RFC 8446's own text is at the as-published tag, in a draft's file, which init does not
    # find; it offers the bis draft's -00 (which starts from that text) as a guess, said so.
    assert by_number[8446]["ref"] == "draft-rescorla-tls-rfc8446-bis-00"
    assert "# ^ guess: draft-rescorla-tls-rfc8446-bis-00" in text
    rfc = by_number[9846]
    expected = committed.rfc_entry("rfc9846")
    assert (rfc["number"], rfc["title"], rfc["ref"], rfc["file"]) == (
        expected.number,
        expected.title,
        expected.ref,
        expected.file,
    )
    assert data["brain"]["working_group"] == committed.brain.working_group
    assert data["brain"]["commit_map"] == committed.brain.commit_map
    assert committed.discussion is not None
    assert data["discussion"]["github_archive"] == committed.discussion.github_archive
    assert tuple(data["discussion"]["document_files"]) == committed.discussion.document_files
    block = text.split('name = "draft-ietf-tls-rfc8446bis"\n', 1)[1].split("[[", 1)[0]
    assert '# became = "rfc9846"' in block  # a hint, as the committed manifest says
    assert "Tags that are no draft revision: as-published" in text
