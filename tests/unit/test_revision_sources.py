"""Revisions found wherever a repository keeps them, on small fictional repositories.

None of these working groups existed. The Heron repository keeps one XML file per revision
(no tags), a working copy named ``draft-…-pre-02.xml`` and a stray tag ``draft-01``. The
Kestrel repository has no tags at all: Bob's individual draft names its revision in its
front matter (``docname``), and its file was renamed to the adopted draft's, whose docname
then names its own revisions. The Grebe repository tags only revisions -03 and -06 of its
draft (its docname says ``-latest``, as i-d-template's does). The Plover repository holds one
draft's text and nothing naming any of its revisions. In the Tern repository, the draft that
became RFC 9993 goes on, renamed, as the draft revising it (``…-rfc9993bis``).
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest

from ratified_rdf import Brain
from ratified_rdf.build import build_notes
from ratified_rdf.records.manifest import ManifestError, load_manifest
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.init_manifest import init_manifest
from ratified_rdf.sources.revisions import (
    RepositoryScan,
    find_renames,
    find_revisions,
    revision_source_names,
)

_RR = "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>\n"
_DAY = iter(range(1, 29))


def _git(repo: Path, *args: str) -> None:
    date = f"2033-03-{next(_DAY, 28):02d}T10:00:00+00:00"
    env = {
        "GIT_AUTHOR_NAME": "Bob Example",
        "GIT_AUTHOR_EMAIL": "bob@example.com",
        "GIT_COMMITTER_NAME": "Bob Example",
        "GIT_COMMITTER_EMAIL": "bob@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _commit(repo: Path, message: str, *tags: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    for tag in tags:
        _git(repo, "tag", tag)


def _xml(docname: str, body: str) -> str:
    return (
        f'<?xml version="1.0"?>\n<rfc docName="{docname}" ipr="trust200902">\n'
        '<front><title>Heron Wading</title><author fullname="Bob Example"/></front>\n'
        f'<middle>\n<section title="Introduction"><t>{body}</t></section>\n'
        '<section title="Details"><t>Long legs.</t></section>\n</middle>\n</rfc>\n'
    )


def _md(title: str, docname: str, body: str) -> str:
    return (
        f"---\ntitle: {title}\ndocname: {docname}\n---\n\n--- middle\n\n"
        f"# Introduction\n\n{body}\n\n# Details\n\nMore about {title.lower()}.\n"
    )


def make_heron(folder: Path) -> Path:
    """One file per revision under drafts/, no revision tags, a -pre working copy and a
    tag named draft-01."""
    repo = folder / "heron"
    (repo / "drafts").mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    for number in ("00", "01", "02"):
        name = f"draft-ietf-heron-wading-{number}"
        (repo / "drafts" / f"{name}.xml").write_text(_xml(name, f"Herons wade, {number}."))
        if number == "02":
            pre = repo / "drafts" / "draft-ietf-heron-wading-pre-02.xml"
            pre.write_text(_xml("draft-ietf-heron-wading-02", "Herons wade, almost 02."))
        _commit(repo, f"wading -{number}", *(["draft-01"] if number == "01" else []))
    return repo


def make_kestrel(folder: Path) -> Path:
    """No tags: Bob's draft names -00 and -01 in its docname; its file is renamed to the
    adopted draft's (git sees the rename), which names -00 and -01 in turn."""
    repo = folder / "kestrel"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    bob = repo / "draft-bob-kestrel-hover.md"
    bob.write_text(_md("Hovering", "draft-bob-kestrel-hover-00", "Kestrels hover."))
    _commit(repo, "bob -00")
    bob.write_text(_md("Hovering", "draft-bob-kestrel-hover-01", "Kestrels hover, -01."))
    _commit(repo, "bob -01")
    _git(repo, "mv", bob.name, "draft-ietf-raptor-hovering.md")
    adopted = repo / "draft-ietf-raptor-hovering.md"
    adopted.write_text(_md("Hovering", "draft-ietf-raptor-hovering-00", "Kestrels hover, -01."))
    _commit(repo, "adopted")
    adopted.write_text(_md("Hovering", "draft-ietf-raptor-hovering-01", "Kestrels hover well."))
    _commit(repo, "adopted -01")
    return repo


def make_grebe(folder: Path) -> Path:
    """Tags at -03 and -06 only; the docname is -latest, so nothing else names a revision."""
    repo = folder / "grebe"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    dive = repo / "draft-ietf-grebe-dive.md"
    for number in range(7):
        dive.write_text(_md("Diving", "draft-ietf-grebe-dive-latest", f"Grebes dive, {number}."))
        tags = [f"draft-ietf-grebe-dive-{number:02d}"] if number in (3, 6) else []
        _commit(repo, f"dive {number}", *tags)
    return repo


def make_plover(folder: Path) -> Path:
    """One draft, docname -latest, no tags and no per-revision files."""
    repo = folder / "plover"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    nest = repo / "draft-ietf-plover-nest.md"
    nest.write_text(_md("Nests", "draft-ietf-plover-nest-latest", "Plovers nest on sand."))
    _commit(repo, "nest")
    return repo


def make_tern(folder: Path) -> Path:
    """draft-ietf-tern-flight -00 and -01 tagged, then its file renamed to the bis draft."""
    repo = folder / "tern"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    flight = repo / "draft-ietf-tern-flight.md"
    for number in ("00", "01"):
        flight.write_text(_md("Flight", "draft-ietf-tern-flight-latest", f"Terns fly, {number}."))
        _commit(repo, f"flight -{number}", f"draft-ietf-tern-flight-{number}")
    _git(repo, "mv", flight.name, "draft-ietf-tern-rfc9993bis.md")
    bis = repo / "draft-ietf-tern-rfc9993bis.md"
    bis.write_text(_md("Flight", "draft-ietf-tern-rfc9993bis-latest", "Terns fly, 01."))
    _commit(repo, "start the bis", "draft-ietf-tern-rfc9993bis-00")
    return repo


@pytest.fixture(scope="module")
def heron(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_heron(tmp_path_factory.mktemp("heron"))


@pytest.fixture(scope="module")
def kestrel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_kestrel(tmp_path_factory.mktemp("kestrel"))


@pytest.fixture(scope="module")
def grebe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_grebe(tmp_path_factory.mktemp("grebe"))


def _filled(text: str) -> str:
    """``text`` as a user finishes it: the public URL given, each FILL IN note deleted with
    the commented line it is about."""
    text = text.replace("https://example.invalid/fill-in-the-public-url", "https://git.example")
    kept: list[str] = []
    for line in text.splitlines():
        if "FILL IN:" in line:
            if line.startswith("# ^") and kept and kept[-1].startswith("# ") and " = " in kept[-1]:
                kept.pop()
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"


def _drafts(text: str) -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in tomllib.loads(text)["draft"]}


def _build(text: str, repo: Path, folder: Path) -> tuple[Brain, Any]:
    (folder / "manifest.toml").write_text(_filled(text))
    return Brain.build(folder, source=str(repo))


def test_the_sources_are_registered_tags_first() -> None:
    assert revision_source_names()[:3] == ("tags", "files", "docnames")


def test_per_revision_files_are_revisions_with_their_file_as_provenance(heron: Path) -> None:
    scan = RepositoryScan(GitRepository.open(heron))
    files = find_revisions(scan, ["files"])["files"]
    wading = [r for r in files if r.draft == "draft-ietf-heron-wading"]
    assert [(r.number, r.path) for r in wading] == [
        ("00", "drafts/draft-ietf-heron-wading-00.xml"),
        ("01", "drafts/draft-ietf-heron-wading-01.xml"),
        ("02", "drafts/draft-ietf-heron-wading-02.xml"),
    ]
    assert wading[0].provenance.startswith("file drafts/draft-ietf-heron-wading-00.xml at commit")
    assert not any(r.guess for r in wading)


def test_init_describes_a_repository_of_per_revision_files(heron: Path) -> None:
    result = init_manifest(GitRepository.open(heron), name="heron")
    wading = _drafts(result.text)["draft-ietf-heron-wading"]
    assert wading["revisions"] == "00-02"
    assert wading["revisions_from"] == ["files"]
    assert "missing" not in wading
    assert "draft-ietf-heron-wading-pre" not in _drafts(result.text)
    flat = " ".join(result.text.replace("\n# ", " ").split())
    assert "Not a draft series: draft-ietf-heron-wading-pre extends" in flat
    assert "are not <draft-name>-NN, not read" in flat and "too): draft-01." in flat
    assert "02: file drafts/draft-ietf-heron-wading-02.xml at commit" in flat


def test_a_per_revision_file_build_reads_each_file_and_records_where(
    heron: Path, tmp_path: Path
) -> None:
    result = init_manifest(GitRepository.open(heron), name="heron")
    brain, report = _build(result.text, heron, tmp_path)
    try:
        assert report.revisions == 3
        rows = brain.query(
            _RR + "SELECT ?n ?p WHERE { ?r rr:revisionNumber ?n ; rr:revisionProvenance ?p ."
            " FILTER NOT EXISTS { ?r rr:tag ?t } } ORDER BY ?n"
        ).rows
        assert [r["n"].value for r in rows] == ["00", "01", "02"]
        assert "drafts/draft-ietf-heron-wading-01.xml" in rows[1]["p"].value
    finally:
        brain.close()


def test_without_tags_docnames_give_the_revisions_and_the_rename_is_followed(
    kestrel: Path,
) -> None:
    scan = RepositoryScan(GitRepository.open(kestrel))
    (rename,) = find_renames(scan)
    assert (rename.old, rename.new) == ("draft-bob-kestrel-hover", "draft-ietf-raptor-hovering")
    result = init_manifest(GitRepository.open(kestrel), name="kestrel")
    drafts = _drafts(result.text)
    bob, adopted = drafts["draft-bob-kestrel-hover"], drafts["draft-ietf-raptor-hovering"]
    assert (bob["revisions"], bob["revisions_from"]) == ("00-01", ["docnames"])
    assert bob["replaced_by"] == "draft-ietf-raptor-hovering"
    assert (adopted["revisions"], adopted["file"]) == ("00-01", "draft-ietf-raptor-hovering.md")
    flat = " ".join(result.text.replace("\n# ", " ").split())
    assert "read from the repository" in flat
    assert "names draft-bob-kestrel-hover-01 (guess)" in flat


def test_a_docname_only_build_chains_the_renamed_draft(kestrel: Path, tmp_path: Path) -> None:
    result = init_manifest(GitRepository.open(kestrel), name="kestrel")
    brain, report = _build(result.text, kestrel, tmp_path)
    try:
        assert report.revisions == 4
        rows = brain.query(
            _RR + "SELECT ?old WHERE { ?old <http://purl.org/dc/terms/isReplacedBy> ?new . "
            '?new rr:draftName "draft-ietf-raptor-hovering" }'
        ).rows
        assert len(rows) == 1
    finally:
        brain.close()


def test_revisions_no_source_holds_are_listed_missing_and_recorded(
    grebe: Path, tmp_path: Path
) -> None:
    result = init_manifest(GitRepository.open(grebe), name="grebe")
    dive = _drafts(result.text)["draft-ietf-grebe-dive"]
    assert dive["revisions"] == "00-06"
    assert dive["missing"] == ["00", "01", "02", "04", "05"]
    assert "revisions_from" not in dive  # tags, the default
    brain, report = _build(result.text, grebe, tmp_path)
    try:
        assert report.revisions == 2
        assert any("lacks revision(s) 00, 01, 02, 04, 05" in note for note in report.notes)
        rows = brain.query(_RR + "SELECT ?n WHERE { ?d rr:missingRevision ?n } ORDER BY ?n").rows
        assert [r["n"].value for r in rows] == ["00", "01", "02", "04", "05"]
    finally:
        brain.close()


def test_a_build_refuses_fill_in_lines_left_and_says_which(grebe: Path, tmp_path: Path) -> None:
    result = init_manifest(GitRepository.open(grebe), name="grebe")
    text = result.text.replace(
        "https://example.invalid/fill-in-the-public-url", "https://git.example"
    )
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "FILL IN: the repository's" in line)
    del lines[at : at + 2]  # the URL's note, done; the note on became is left
    (tmp_path / "manifest.toml").write_text("\n".join(lines) + "\n")
    with pytest.raises(
        ManifestError,
        match=r"still has 1 FILL IN line\(s\) from 'ratified init' \(line \d+: the RFC this "
        r"draft became, if it became one\)\. Fill in each fact",
    ):
        Brain.build(tmp_path, source=str(grebe))


def test_a_build_refuses_the_placeholder_repository_url(grebe: Path, tmp_path: Path) -> None:
    result = init_manifest(GitRepository.open(grebe), name="grebe")
    text = _filled(result.text).replace(
        "https://git.example", "https://example.invalid/fill-in-the-public-url"
    )
    (tmp_path / "manifest.toml").write_text(text)
    with pytest.raises(ManifestError, match="the placeholder 'ratified init' writes"):
        Brain.build(tmp_path, source=str(grebe))


_HEAD = '[brain]\nid = "m"\ntitle = "t"\nrepository = "https://git.example/m"\n\n'


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ('revisions_from = ["branches"]', "'branches', which is no revision source"),
        ("revisions_from = []", "revisions_from is empty"),
        ('missing = ["7"]', "write each revision as two digits"),
        ('missing = ["09"]', "outside the revisions 00-03"),
    ],
)
def test_wrong_revision_fields_are_refused_with_a_sentence(
    tmp_path: Path, fields: str, message: str
) -> None:
    (tmp_path / "manifest.toml").write_text(
        _HEAD + f'[[draft]]\nname = "draft-a-b"\nfile = "x.md"\nrevisions = "00-03"\n{fields}\n'
    )
    with pytest.raises(ManifestError, match=message):
        load_manifest(tmp_path)


def test_drafts_becoming_one_rfc_side_by_side_are_named_in_the_notes(tmp_path: Path) -> None:
    (tmp_path / "manifest.toml").write_text(
        _HEAD
        + "".join(
            f'[[draft]]\nname = "draft-ietf-gull-{n}"\nfile = "{n}.md"\nrevisions = "00"\n'
            'became = "rfc9992"\n\n'
            for n in ("wing", "beak")
        )
        + '[[rfc]]\nnumber = 9992\ntitle = "Gulls"\npublished = "2034-01"\nref = "main"\n'
        'file = "rfc9992.md"\n'
    )
    manifest, _ = load_manifest(tmp_path)
    assert manifest.parallel_drafts() == {
        "rfc9992": ["draft-ietf-gull-wing", "draft-ietf-gull-beak"]
    }
    # The notes read the records only for what an RFC's text was found as: none read here.
    nothing = SpecRecords(
        brain=manifest.brain, source="gull", drafts=(), revisions=(), rfcs=(), alignments=()
    )
    notes = build_notes(manifest, nothing, None)
    assert any("draft-ietf-gull-wing, draft-ietf-gull-beak all became rfc9992" in n for n in notes)


def test_a_draft_no_revision_of_is_numbered_is_read_as_last_committed(tmp_path: Path) -> None:
    """init writes the one unnumbered revision (no count to guess), and it builds."""
    plover = make_plover(tmp_path)
    result = init_manifest(GitRepository.open(plover), name="plover")
    assert '[[draft]]\nname = "draft-ietf-plover-nest"\nfile = "draft-ietf-plover-nest.md"' in (
        result.text
    )
    assert 'revisions = "latest"\nrevisions_from = ["latest"]' in result.text
    assert not any("how many revisions" in i for i in result.to_fill)
    assert any("whether draft-ietf-plover-nest became an RFC" in i for i in result.to_fill)
    assert '# became = "rfcNNNN"' in result.text and "# [[rfc]]\n#   number = NNNN" in result.text
    assert not result.complete
    records = tmp_path / "records"
    records.mkdir()
    brain, report = _build(result.text, plover, records)
    try:
        assert report.revisions == 1 and report.sections > 0
        assert any(
            "draft-ietf-plover-nest: revisions not numbered in the repository" in note
            for note in report.notes
        )
    finally:
        brain.close()


def test_a_draft_going_on_as_a_bis_draft_became_that_rfc_and_is_not_replaced(
    tmp_path: Path,
) -> None:
    result = init_manifest(GitRepository.open(make_tern(tmp_path)), name="tern")
    flight = _drafts(result.text)["draft-ietf-tern-flight"]
    assert "replaced_by" not in flight
    assert '# became = "rfc9993"' in result.text
    flat = " ".join(result.text.replace("\n# ", " ").split())
    assert "its file went on as draft-ietf-tern-rfc9993bis, which revises RFC 9993" in flat


def test_a_revision_listed_missing_is_not_read_though_a_source_holds_it(
    heron: Path, tmp_path: Path
) -> None:
    result = init_manifest(GitRepository.open(heron), name="heron")
    text = result.text.replace(
        'revisions_from = ["files"]', 'revisions_from = ["files"]\nmissing = ["01"]'
    )
    brain, report = _build(text, heron, tmp_path)
    try:
        assert report.revisions == 2
        rows = brain.query(_RR + "SELECT ?n WHERE { ?r rr:revisionNumber ?n } ORDER BY ?n").rows
        assert [r["n"].value for r in rows] == ["00", "02"]
    finally:
        brain.close()


def test_the_bis_drafts_first_revision_is_offered_as_the_rfcs_text(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    result = init_manifest(GitRepository.open(make_tern(tmp_path / "repo")), name="tern")
    (rfc,) = tomllib.loads(result.text)["rfc"]
    assert (rfc["number"], rfc["ref"], rfc["file"], rfc["title"]) == (
        9993,
        "draft-ietf-tern-rfc9993bis-00",
        "draft-ietf-tern-rfc9993bis.md",
        "Flight",
    )
    flat = " ".join(result.text.replace("\n# ", " ").split())
    assert "guess: draft-ietf-tern-rfc9993bis-00, the revision of RFC 9993" in flat
    assert "This repository holds no RFC text" not in result.text
    text = result.text.replace('# became = "rfc9993"', 'became = "rfc9993"')
    head, _, tail = text.rpartition('# published = "YYYY-MM"')  # the [[rfc]] entry's, last
    text = head + 'published = "2034-05"' + tail
    (tmp_path / "brain").mkdir()
    brain, report = _build(text, tmp_path / "repo" / "tern", tmp_path / "brain")
    brain.close()
    assert report.rfcs == 1 and report.alignments > 0


def test_a_became_to_fill_in_comes_with_an_rfc_entry_titled_as_the_last_revision(
    grebe: Path, tmp_path: Path
) -> None:
    result = init_manifest(GitRepository.open(grebe), name="grebe")
    assert '# [[rfc]]\n#   number = NNNN\n#   title = "Diving"\n' in result.text
    text = result.text.replace('# became = "rfcNNNN"', 'became = "rfc9994"')
    text = text.replace("# [[rfc]]\n#   number = NNNN\n#   title", "[[rfc]]\nnumber = 9994\ntitle")
    text = text.replace('#   published = "YYYY-MM"', 'published = "2034-06"')
    brain, report = _build(text, grebe, tmp_path)
    brain.close()
    assert report.rfcs == 1 and report.alignments > 0


def test_the_brain_is_titled_as_its_last_drafts_last_revision(grebe: Path) -> None:
    result = init_manifest(GitRepository.open(grebe), name="grebe")
    assert tomllib.loads(result.text)["brain"]["title"] == "Diving"
    assert "the title of draft-ietf-grebe-dive-06, the last draft's last revision" in (
        " ".join(result.text.replace("\n# ", " ").split())
    )


def test_a_draft_no_revision_of_is_held_still_names_the_group_and_its_files(
    tmp_path: Path,
) -> None:
    result = init_manifest(GitRepository.open(make_plover(tmp_path)), name="plover")
    data = tomllib.loads(result.text)
    assert data["brain"]["working_group"] == "plover"
    assert data["discussion"]["document_files"] == ["*.md"]


def test_a_manifest_lacking_what_its_fill_in_lines_ask_names_those_facts(
    tmp_path: Path,
) -> None:
    result = init_manifest(GitRepository.open(make_plover(tmp_path)), name="plover")
    text = result.text.replace(
        "https://example.invalid/fill-in-the-public-url", "https://git.example/plover"
    ).replace('revisions = "latest"\n', "")
    (tmp_path / "manifest.toml").write_text(text)
    # Not "revisions: Field required": the facts the user was asked for.
    with pytest.raises(ManifestError, match=r"FILL IN line\(s\).*the RFC this draft became"):
        load_manifest(tmp_path)


@pytest.mark.parametrize(("archive", "problem"), [("", "empty"), ('{"issues": [', "not JSON")])
def test_an_empty_or_broken_archive_is_a_note_in_the_manifest(
    tmp_path: Path, archive: str, problem: str
) -> None:
    repo = make_grebe(tmp_path)
    _git(repo, "checkout", "-q", "--orphan", "gh-pages")
    _git(repo, "rm", "-rfq", ".")
    (repo / "archive.json").write_text(archive)
    _commit(repo, "archive")
    _git(repo, "checkout", "-q", "main")
    result = init_manifest(GitRepository.open(repo), name="grebe")
    flat = " ".join(result.text.replace("\n# ", " ").split())
    assert f"check: gh-pages:archive.json is {problem}, so the brain will hold no issues" in flat
    assert tomllib.loads(result.text)["discussion"]["github_archive"] == "gh-pages:archive.json"
