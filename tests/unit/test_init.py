"""``ratified init`` on small fictional repositories made with git in a temporary folder.

The Aviary working group never existed. Its repository (default branch ``trunk``) holds
several drafts: Alice's individual draft-alice-aviary-sparrow, replaced by the adopted
draft-ietf-aviary-sparrow (its file renamed), which became RFC 9990 (``rfc9990.md``); the
owl draft, moved into ``archive/`` between its -01 and -02 tags; and the wren draft, kept in a
file named ``wren.md``. The Pelican repository (default branch ``master``) holds one draft and
no RFC text at all.
"""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ratified_rdf import Brain
from ratified_rdf.records.manifest import DraftEntry, Manifest, ManifestError, load_manifest
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.init_manifest import InitError, brain_name_for, init_manifest
from ratified_rdf.surfaces.cli import main

_DAY = iter(range(1, 29))


def _git(repo: Path, *args: str) -> None:
    date = f"2031-02-{next(_DAY, 28):02d}T10:00:00+00:00"
    env = {
        "GIT_AUTHOR_NAME": "Alice Example",
        "GIT_AUTHOR_EMAIL": "alice@example.com",
        "GIT_COMMITTER_NAME": "Alice Example",
        "GIT_COMMITTER_EMAIL": "alice@example.com",
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": "/usr/bin:/bin:/usr/local/bin",
        "HOME": str(repo),
    }
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _draft(title: str, docname: str, body: str) -> str:
    return (
        f"---\ntitle: {title}\ndocname: {docname}\ndate: 2031\n---\n\n--- middle\n\n"
        f"# Introduction\n\n{body}\n\n# Details\n\nMore about {title.lower()}.\n"
    )


def _commit(repo: Path, message: str, *tags: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    for tag in tags:
        _git(repo, "tag", tag)


def make_aviary(folder: Path) -> Path:
    """The Aviary repository: several drafts, a replaced individual draft, a moved file, an
    oddly named file, an RFC text, an issue archive on gh-pages; default branch trunk."""
    repo = folder / "aviary-drafts"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "trunk")
    (repo / "README.md").write_text("# Aviary drafts\n")
    sparrow = repo / "draft-alice-aviary-sparrow.md"
    sparrow.write_text(_draft("Sparrows", "draft-alice-aviary-sparrow-00", "Small birds."))
    _commit(repo, "sparrow, individual -00", "draft-alice-aviary-sparrow-00")
    sparrow.write_text(_draft("Sparrows", "draft-alice-aviary-sparrow-01", "Small brown birds."))
    _commit(repo, "sparrow, individual -01", "draft-alice-aviary-sparrow-01")
    _git(repo, "mv", sparrow.name, "draft-ietf-aviary-sparrow.md")
    sparrow = repo / "draft-ietf-aviary-sparrow.md"
    sparrow.write_text(_draft("Sparrows", "draft-ietf-aviary-sparrow-00", "Small brown birds."))
    _commit(repo, "adopted sparrow", "draft-ietf-aviary-sparrow-00")
    owl = repo / "draft-ietf-aviary-owl.md"
    owl.write_text(_draft("Owls", "draft-ietf-aviary-owl-00", "Night birds."))
    _commit(repo, "owl -00", "draft-ietf-aviary-owl-00")
    owl.write_text(_draft("Owls", "draft-ietf-aviary-owl-01", "Night birds that hoot."))
    sparrow.write_text(_draft("Sparrows", "draft-ietf-aviary-sparrow-01", "Small birds, -01."))
    _commit(
        repo, "owl -01, sparrow -01", "draft-ietf-aviary-owl-01", "draft-ietf-aviary-sparrow-01"
    )
    (repo / "archive").mkdir()
    _git(repo, "mv", owl.name, "archive/draft-ietf-aviary-owl.md")
    _commit(repo, "move owl into archive/")
    moved = repo / "archive" / "draft-ietf-aviary-owl.md"
    moved.write_text(_draft("Owls", "draft-ietf-aviary-owl-02", "Night birds that hoot, -02."))
    _commit(repo, "owl -02", "draft-ietf-aviary-owl-02")
    wren = repo / "wren.md"
    wren.write_text(_draft("Wrens", "draft-ietf-aviary-wren-00", "Tiny birds."))
    _commit(repo, "wren -00", "draft-ietf-aviary-wren-00")
    wren.write_text(_draft("Wrens", "draft-ietf-aviary-wren-01", "Tiny loud birds."))
    _commit(repo, "wren -01", "draft-ietf-aviary-wren-01")
    sparrow.write_text(_draft("Sparrows", "draft-ietf-aviary-sparrow-02", "Small birds, -02."))
    _commit(repo, "sparrow -02", "draft-ietf-aviary-sparrow-02")
    _git(repo, "mv", sparrow.name, "rfc9990.md")
    text = _draft("Sparrows", "draft-ietf-aviary-sparrow-02", "Small birds, as published.")
    (repo / "rfc9990.md").write_text(text.replace("date: 2031", "number: 9990\ndate: 2032-04"))
    _commit(repo, "RFC 9990", "as-published")
    _git(repo, "checkout", "-q", "--orphan", "gh-pages")
    _git(repo, "rm", "-rfq", ".")
    (repo / "archive.json").write_text('{"magic": "E!vIA5L86J2I", "issues": [], "pulls": []}\n')
    _commit(repo, "archive")
    _git(repo, "checkout", "-q", "trunk")
    return repo


def make_pelican(folder: Path) -> Path:
    """The Pelican repository: one draft, no RFC text, no gh-pages; default branch master."""
    repo = folder / "pelican"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "master")
    beak = repo / "draft-ietf-pelican-beak.md"
    beak.write_text(_draft("Pelican Beaks", "draft-ietf-pelican-beak-00", "Large beaks."))
    _commit(repo, "beak -00", "draft-ietf-pelican-beak-00")
    beak.write_text(_draft("Pelican Beaks", "draft-ietf-pelican-beak-01", "Large pouched beaks."))
    _commit(repo, "beak -01", "draft-ietf-pelican-beak-01")
    return repo


@pytest.fixture(scope="module")
def aviary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_aviary(tmp_path_factory.mktemp("aviary"))


@pytest.fixture(scope="module")
def pelican(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pelican(tmp_path_factory.mktemp("pelican"))


def _init(repo: Path, name: str) -> tuple[str, dict]:
    result = init_manifest(GitRepository.open(repo), name=name)
    return result.text, tomllib.loads(result.text)


def _block(text: str, name: str) -> str:
    """The manifest text of draft ``name``'s entry, comment lines joined into one line."""
    block = text.split(f'name = "{name}"', 1)[1].split("[[", 1)[0]
    return " ".join(block.replace("\n# ", " ").split())


def _filled(text: str, *lines: tuple[str, str]) -> str:
    """``text`` as a user finishes it: each (old, new) line replaced, the public URL given,
    and every FILL IN comment (with the commented line it explains) deleted."""
    for old, new in lines:
        text = text.replace(old, new, 1)
    text = text.replace(
        "https://example.invalid/fill-in-the-public-url", "https://github.com/aviary/drafts"
    )
    kept: list[str] = []
    for line in text.splitlines():
        if "FILL IN:" in line:
            if line.startswith("# ^") and kept and kept[-1].startswith("# ") and " = " in kept[-1]:
                kept.pop()  # the commented placeholder the FILL IN line is about
            continue
        kept.append(line)
    return "\n".join(kept) + "\n"


def _drafts(data: dict) -> dict[str, dict]:
    return {d["name"]: d for d in data["draft"]}


def test_every_draft_series_in_one_repository_with_its_own_file(aviary: Path) -> None:
    _, data = _init(aviary, "aviary")
    drafts = _drafts(data)
    assert sorted(drafts) == [
        "draft-alice-aviary-sparrow",
        "draft-ietf-aviary-owl",
        "draft-ietf-aviary-sparrow",
        "draft-ietf-aviary-wren",
    ]
    assert drafts["draft-alice-aviary-sparrow"]["file"] == "draft-alice-aviary-sparrow.md"
    assert drafts["draft-alice-aviary-sparrow"]["revisions"] == "00-01"
    assert drafts["draft-ietf-aviary-sparrow"]["file"] == "draft-ietf-aviary-sparrow.md"
    assert drafts["draft-ietf-aviary-sparrow"]["revisions"] == "00-02"
    assert drafts["draft-ietf-aviary-owl"]["revisions"] == "00-02"
    assert data["brain"]["working_group"] == "aviary"


def test_the_default_branch_is_read_from_head_not_assumed_main(aviary: Path) -> None:
    text, data = _init(aviary, "aviary")
    assert "The default branch (HEAD of the repository) is trunk." in text
    assert data["rfc"][0]["ref"] == "trunk"


def test_a_file_moved_between_tags_is_followed(aviary: Path) -> None:
    _, data = _init(aviary, "aviary")
    owl = _drafts(data)["draft-ietf-aviary-owl"]
    assert owl["file"] == "draft-ietf-aviary-owl.md"
    assert owl["moved"] == {"02": "archive/draft-ietf-aviary-owl.md"}
    entry = DraftEntry.model_validate(owl)
    assert entry.file_at("01") == "draft-ietf-aviary-owl.md"
    assert entry.file_at("02") == "archive/draft-ietf-aviary-owl.md"
    assert entry.document_files() == (
        "draft-ietf-aviary-owl.md",
        "archive/draft-ietf-aviary-owl.md",
    )


def test_a_file_not_named_after_its_draft_is_the_one_changed_and_called_a_guess(
    aviary: Path,
) -> None:
    text, data = _init(aviary, "aviary")
    wren = _drafts(data)["draft-ietf-aviary-wren"]
    assert wren["file"] == "wren.md"
    assert "moved" not in wren
    block = _block(text, "draft-ietf-aviary-wren")
    assert "00: guess: the one document file changed since the revision before" in block


def test_an_individual_draft_renamed_to_the_adopted_one_is_read_as_replaced(
    aviary: Path,
) -> None:
    text, data = _init(aviary, "aviary")
    alice = _drafts(data)["draft-alice-aviary-sparrow"]
    assert alice["replaced_by"] == "draft-ietf-aviary-sparrow"
    block = _block(text, "draft-alice-aviary-sparrow")
    assert "read from the repository" in block and "guess" not in block
    assert "the docname draft-alice-aviary-sparrow-01 became draft-ietf-aviary-sparrow-00" in block
    assert "became =" not in block  # its text lives on in the adopted draft
    for other in ("draft-ietf-aviary-owl", "draft-ietf-aviary-wren", "draft-ietf-aviary-sparrow"):
        assert "replaced_by" not in _drafts(data)[other]


def test_facts_no_repository_holds_are_fill_in_comments_with_hints(aviary: Path) -> None:
    result = init_manifest(GitRepository.open(aviary), name="aviary")
    data = tomllib.loads(result.text)
    (rfc,) = data["rfc"]
    assert (rfc["number"], rfc["file"], rfc["title"]) == (9990, "rfc9990.md", "Sparrows")
    assert "published" not in rfc and "became" not in _drafts(data)["draft-ietf-aviary-sparrow"]
    assert '# became = "rfc9990"' in result.text
    assert "(the text gives 2032-04)" in result.text
    assert "Tags that are no draft revision: as-published." in result.text
    assert data["discussion"]["github_archive"] == "gh-pages:archive.json"
    assert not result.complete
    assert any("when RFC 9990 was published" in item for item in result.to_fill)
    assert any("which RFC draft-ietf-aviary-sparrow became" in item for item in result.to_fill)
    with pytest.raises(Exception, match="published"):
        Manifest.model_validate(data)


def test_the_manifest_completed_by_hand_builds_and_reads_the_moved_file(
    aviary: Path, tmp_path: Path
) -> None:
    text, _ = _init(aviary, "aviary")
    text = _filled(
        text,
        ('# became = "rfc9990"', 'became = "rfc9990"'),
        ('# published = "YYYY-MM"', 'published = "2032-04"'),
    )
    (tmp_path / "manifest.toml").write_text(text)
    manifest, _ = load_manifest(tmp_path)
    assert manifest.final_rfc("draft-alice-aviary-sparrow") == "rfc9990"
    brain, report = Brain.build(tmp_path, source=str(aviary))
    brain.close()
    assert (report.revisions, report.rfcs) == (10, 1)
    assert report.alignments > 0


def test_without_rfc_text_the_chains_still_build_and_it_says_so(
    pelican: Path, tmp_path: Path
) -> None:
    result = init_manifest(GitRepository.open(pelican), name="pelican")
    assert "This repository holds no RFC text" in result.text
    assert "An RFC a draft became is still a fact" in result.text
    assert "No archive.json on a gh-pages branch" in result.text
    assert "The default branch (HEAD of the repository) is master." in result.text
    assert "rfc" not in tomllib.loads(result.text)
    assert '# became = "rfcNNNN"' in result.text  # asked, though no RFC text is held
    assert not result.complete
    (tmp_path / "manifest.toml").write_text(_filled(result.text))
    brain, report = Brain.build(tmp_path, source=str(pelican))
    brain.close()
    # No RFC: each revision's two sections align with those of the last revision, -01.
    assert (report.revisions, report.rfcs, report.alignments) == (2, 0, 4)


def test_the_command_writes_the_manifest_and_says_what_to_fill_in(
    aviary: Path, tmp_path: Path
) -> None:
    out = tmp_path / "records" / "aviary" / "manifest.toml"
    run = CliRunner().invoke(main, ["init", str(aviary), "--out", str(out)])
    assert run.exit_code == 0, run.output
    assert out.is_file()
    assert "Read " in run.output and "default branch trunk" in run.output
    assert "4 draft series" in run.output
    assert "draft-alice-aviary-sparrow 00-01 in draft-alice-aviary-sparrow.md, replaced by" in (
        run.output
    )
    assert "Fill in" in run.output and "when RFC 9990 was published" in run.output
    again = CliRunner().invoke(main, ["init", str(aviary), "--out", str(out)])
    assert again.exit_code == 2
    assert "already exists; pass --out" in again.output


def test_the_command_on_a_repository_without_rfc_text_says_so(
    pelican: Path, tmp_path: Path
) -> None:
    out = tmp_path / "m.toml"
    run = CliRunner().invoke(main, ["init", str(pelican), "--out", str(out), "--name", "pelican"])
    assert run.exit_code == 0, run.output
    assert "No RFC text in the repository" in run.output
    assert "until each FILL IN line is done and deleted" in run.output
    assert "build it with: ratified build" in run.output


def test_mistakes_are_sentences_with_exit_2(tmp_path: Path) -> None:
    empty = tmp_path / "untagged"
    empty.mkdir()
    _git(empty, "init", "-q", "-b", "main")
    (empty / "notes.md").write_text("notes\n")
    _commit(empty, "notes", "v1")
    runner = CliRunner()
    untagged = runner.invoke(main, ["init", str(empty), "--out", str(tmp_path / "a.toml")])
    assert untagged.exit_code == 2
    assert "holds no draft revision" in untagged.output and "its tags are: v1" in untagged.output
    missing = runner.invoke(main, ["init", str(tmp_path / "nowhere")])
    assert missing.exit_code == 2 and "neither a folder, a file nor a URL" in missing.output
    named = runner.invoke(main, ["init", str(empty), "--name", "Not A Name"])
    assert named.exit_code == 2 and "Pass one with --name" in named.output
    with pytest.raises(InitError, match="Tag each submitted revision"):
        init_manifest(GitRepository.open(empty), name="x")


def test_brain_names_come_from_the_source() -> None:
    assert brain_name_for("/work/shared/corpus/quic-base-drafts/base-drafts.bundle") == (
        "base-drafts"
    )
    assert brain_name_for("https://github.com/tlswg/tls13-spec.git") == "tls13-spec"
    assert brain_name_for("git@github.com:Quic_WG/Base.Drafts") == "base-drafts"
    assert brain_name_for("/tmp/___/") is None


_HEAD = '[brain]\nid = "m"\ntitle = "t"\nrepository = "r"\n\n'


@pytest.mark.parametrize(
    ("moved", "message"),
    [
        ('{ "5" = "a/x.md" }', "write each revision as two digits"),
        ('{ "00" = "a/x.md" }', "put that path in 'file' instead"),
        ('{ "02" = "x.md" }', "where it already was"),
        ('{ "02" = "/abs/x.md" }', "not a file path inside the repository"),
        ('{ "02" = "../x.md" }', "not a file path inside the repository"),
    ],
)
def test_a_wrong_moved_entry_is_refused_with_a_sentence(
    tmp_path: Path, moved: str, message: str
) -> None:
    (tmp_path / "manifest.toml").write_text(
        _HEAD + f'[[draft]]\nname = "draft-a-b"\nfile = "x.md"\nrevisions = "00-03"\n'
        f"moved = {moved}\n"
    )
    with pytest.raises(ManifestError, match=message):
        load_manifest(tmp_path)


def test_moves_apply_from_their_revision_until_the_next() -> None:
    entry = DraftEntry(
        name="draft-a-b",
        file="x.md",
        revisions="00-05",
        moved={"04": "b/x.md", "02": "a/x.md"},
    )
    assert [entry.file_at(n) for n in entry.expected_revisions()] == [
        "x.md",
        "x.md",
        "a/x.md",
        "a/x.md",
        "b/x.md",
        "b/x.md",
    ]
    assert entry.document_files() == ("x.md", "a/x.md", "b/x.md")
