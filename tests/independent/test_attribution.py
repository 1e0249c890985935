"""The independent attribution checker, on fictional repositories made here with each trap
(a repeated heading, several drafts in one repository, a moved file, tags out of date order,
work after the last tag, a merged branch) and on the real TLS and QUIC corpora."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.independent.attribution import Attribution, attribute, parse_sections

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"
TLS_BUNDLE = CORPUS / "tls13-spec" / "tls13-spec.bundle"
QUIC_BUNDLE = CORPUS / "quic-base-drafts" / "base-drafts.bundle"

ALICE = ("Alice Example", "alice@example.com")
BOB = ("Bob Example", "bob@example.org")


def _git(repo: Path, *args: str, date: str = "2031-01-01T10:00:00+00:00",
         author: tuple[str, str] = ALICE) -> str:  # fmt: skip
    """Run git in ``repo`` with a fixed identity and date; its output."""
    env = {
        "GIT_AUTHOR_NAME": author[0],
        "GIT_AUTHOR_EMAIL": author[1],
        "GIT_COMMITTER_NAME": ALICE[0],
        "GIT_COMMITTER_EMAIL": ALICE[1],
        "GIT_AUTHOR_DATE": date,
        "GIT_COMMITTER_DATE": date,
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(repo),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout


class Repo:
    """A fictional repository in a temporary folder, committed to one step at a time."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "spec"
        self.path.mkdir(parents=True)
        self.day = 0
        _git(self.path, "init", "-q", "-b", "main")

    def commit(self, message: str, files: dict[str, str],
               author: tuple[str, str] = ALICE) -> str:  # fmt: skip
        """Write ``files`` and commit them, a day after the previous commit; the commit id."""
        for name, text in files.items():
            (self.path / name).parent.mkdir(parents=True, exist_ok=True)
            (self.path / name).write_text(text)
        _git(self.path, "add", "-A")
        return self.commit_staged(message, author)

    def commit_staged(self, message: str, author: tuple[str, str] = ALICE) -> str:
        """Commit what is staged; the commit id."""
        self.day += 1
        date = f"2031-01-{self.day:02d}T10:00:00+00:00"
        _git(self.path, "commit", "-q", "-m", message, date=date, author=author)
        return self.head()

    def head(self) -> str:
        """The current commit id."""
        return _git(self.path, "rev-parse", "HEAD").strip()

    def tag(self, name: str, commit: str = "HEAD") -> None:
        """Tag ``commit``."""
        _git(self.path, "tag", name, commit)


def _draft(title: str, body: str = "The sparrow carries it.", appendix: str = "Fields.") -> str:
    """A small kramdown-rfc draft whose body and appendix both have a "Record Layer"."""
    return f"""---
title: {title}
# a YAML comment, not a heading
author:
  - name: Alice Example
--- abstract

An abstract.

--- middle

# Introduction

Sparrows.

# Record Protocol

## Record Layer

{body}

~~~ ascii-art
# a comment in a figure, not a heading
~~~

## Record Limits

Small.

# Acknowledgments
{{:numbered="false"}}

Thanks.

--- back

# Protocol Data Structures

## Record Layer

{appendix}

# Changes

Many.
"""


def _rows(result: Attribution, sha: str) -> set[tuple[str | None, str | None, str | None]]:
    return {(t.draft, t.revision, t.number) for t in result.commits[sha].touches}


def _follow(repo: Path, path: str) -> set[str]:
    return set(_git(repo, "log", "--follow", "--format=%H", "--", path).split())


# --------------------------------------------------------------------------- parsing


def test_sections_are_numbered_as_xml2rfc_numbers_them() -> None:
    """Numbers in the body and letters in the back; an unnumbered section takes no number;
    YAML comments and lines in figures are not headings; a repeated heading is two
    sections, told apart by their paths."""
    tree = parse_sections(_draft("Sparrow"))
    found = [(s.number, s.path) for s in tree.sections]
    assert found == [
        ("1", ("Introduction",)),
        ("2", ("Record Protocol",)),
        ("2.1", ("Record Protocol", "Record Layer")),
        ("2.2", ("Record Protocol", "Record Limits")),
        (None, ("Acknowledgments",)),
        ("A", ("Protocol Data Structures",)),
        ("A.1", ("Protocol Data Structures", "Record Layer")),
        ("B", ("Changes",)),
    ]
    body, appendix = tree.numbered("2.1"), tree.numbered("A.1")
    assert body is not None and appendix is not None
    assert not body.appendix and appendix.appendix
    assert tree.at(body.start + 2) == body
    assert tree.at(appendix.start + 2) == appendix


def test_generated_headings_and_anchors() -> None:
    """tls13-spec's ``%%##`` lines are headings (its build expands them into the appendix);
    anchors and attributes on a heading line are not part of its title."""
    text = (
        '# One {#one}\n\ntext\n\n## Two {#two numbered="false"}\n\n--- back\n\n'
        "# Data\n\n%%## Record Layer\n%%## Alerts\n\n## Cipher Suites\n"
    )
    found = [(s.number, s.title) for s in parse_sections(text).sections]
    assert found == [
        ("1", "One"), (None, "Two"), ("A", "Data"),
        ("A.1", "Record Layer"), ("A.2", "Alerts"), ("A.3", "Cipher Suites"),
    ]  # fmt: skip


def test_xml_section_nesting() -> None:
    """For RFC XML, ``<section>`` nesting gives the tree; text after a subsection closes is
    its parent's."""
    text = """<rfc>
<middle>
<section title="Intro">
<t>a</t>
<section><name>Record Layer</name>
<t>b</t>
</section>
<t>c</t>
</section>
<section numbered="false" title="Thanks"><t>d</t></section>
</middle>
<back>
<section title="Data"><section title="Record Layer"><t>e</t></section></section>
</back>
</rfc>
"""
    tree = parse_sections(text, "rfc9999.xml")
    assert [(s.number, s.path) for s in tree.sections] == [
        ("1", ("Intro",)),
        ("1.1", ("Intro", "Record Layer")),
        (None, ("Thanks",)),
        ("A", ("Data",)),
        ("A.1", ("Data", "Record Layer")),
    ]
    assert tree.at(6).number == "1.1"  # type: ignore[union-attr]
    assert tree.at(8).number == "1"  # type: ignore[union-attr]


# --------------------------------------------------------------------------- fictional repos


def test_a_repeated_heading_is_two_sections(tmp_path: Path) -> None:
    """A change to the body's Record Layer is 2.1, one to the appendix's is A.1: never the
    other, in the commit's text and in the revision it landed in."""
    repo = Repo(tmp_path)
    name = "draft-example-sparrow.md"
    first = repo.commit("first text", {name: _draft("Sparrow")})
    repo.tag("draft-example-sparrow-00")
    body = repo.commit("body", {name: _draft("Sparrow", body="The sparrow carries it fast.")})
    appendix = repo.commit(
        "appendix",
        {name: _draft("Sparrow", "The sparrow carries it fast.", appendix="Fields: two.")},
    )
    repo.tag("draft-example-sparrow-01")
    result = attribute(repo.path)
    assert _rows(result, body) == {("draft-example-sparrow", "draft-example-sparrow-01", "2.1")}
    assert _rows(result, appendix) == {("draft-example-sparrow", "draft-example-sparrow-01", "A.1")}
    (touch,) = result.commits[body].touches
    assert touch.path == ("Record Protocol", "Record Layer") and not touch.appendix
    sections = result.commits_per_section("draft-example-sparrow-01")
    assert sections["2.1"] == {body} and sections["A.1"] == {appendix}
    carried = result.carried_section_commits("draft-example-sparrow-01", include_subsections=True)
    assert carried["2"] == carried["2.1"] == {first, body}
    assert carried["A"] == carried["A.1"] == {first, appendix}


def test_several_drafts_in_one_repository(tmp_path: Path) -> None:
    """Each file's commits go to its own draft and that draft's revision, whatever other
    drafts were tagged in between; a commit changing two drafts counts once for each."""
    repo = Repo(tmp_path)
    alpha, beta = "draft-example-alpha.md", "draft-example-beta.md"
    first = repo.commit("both", {alpha: _draft("Alpha"), beta: _draft("Beta")})
    repo.tag("draft-example-beta-00")
    only_alpha = repo.commit("alpha", {alpha: _draft("Alpha", body="Alpha moves.")})
    repo.tag("draft-example-beta-01")
    repo.tag("draft-example-alpha-00")
    only_beta = repo.commit("beta", {beta: _draft("Beta", body="Beta moves.")}, author=BOB)
    repo.tag("draft-example-beta-02")
    result = attribute(repo.path)
    assert {(t.file, t.revision) for t in result.commits[first].touches} == {
        (alpha, "draft-example-alpha-00"),
        (beta, "draft-example-beta-00"),
    }
    assert _rows(result, only_alpha) == {("draft-example-alpha", "draft-example-alpha-00", "2.1")}
    assert _rows(result, only_beta) == {("draft-example-beta", "draft-example-beta-02", "2.1")}
    assert result.commits_per_draft() == {"draft-example-alpha": 2, "draft-example-beta": 2}
    assert result.commits_per_author() == {ALICE[1]: 2, BOB[1]: 1}
    assert result.commits_per_author("draft-example-beta") == {ALICE[1]: 1, BOB[1]: 1}
    for name in (alpha, beta):
        assert result.document_commits(name) == _follow(repo.path, name)


def test_a_draft_moved_into_archive_is_followed(tmp_path: Path) -> None:
    """A draft moved into ``archive/`` is still that draft, and its commits under both names
    are what ``git log --follow`` lists."""
    repo = Repo(tmp_path)
    name, moved = "draft-example-gamma.md", "archive/draft-example-gamma.md"
    before = repo.commit("gamma", {name: _draft("Gamma")})
    repo.tag("draft-example-gamma-00")
    (repo.path / "archive").mkdir()
    _git(repo.path, "mv", name, moved)
    move = repo.commit_staged("archive gamma")
    after = repo.commit("edit archived", {moved: _draft("Gamma", appendix="Archived fields.")})
    repo.tag("draft-example-gamma-01")
    result = attribute(repo.path)
    assert result.names_of(moved) == (moved, name)
    assert result.document_commits(moved) == {before, move, after} == _follow(repo.path, moved)
    assert _rows(result, after) == {("draft-example-gamma", "draft-example-gamma-01", "A.1")}
    assert {t.side for t in result.commits[move].touches} == {"none"}
    assert result.commits_per_draft() == {"draft-example-gamma": 3}


def test_tags_out_of_date_order_and_work_after_the_last_tag(tmp_path: Path) -> None:
    """A commit lands in the first revision, by number, whose tag contains it: with -02
    tagged on a commit older than -01's, everything after -00 lands in -01 and nothing in
    -02. A commit after the last tag landed in no revision."""
    repo = Repo(tmp_path)
    name = "draft-example-delta.md"
    first = repo.commit("delta", {name: _draft("Delta")})
    repo.tag("draft-example-delta-00")
    older = repo.commit("one", {name: _draft("Delta", body="One.")})
    newer = repo.commit("two", {name: _draft("Delta", body="Two.")})
    repo.tag("draft-example-delta-01")
    repo.tag("draft-example-delta-02", older)
    late = repo.commit("after publication", {name: _draft("Delta", body="Errata.")})
    result = attribute(repo.path)
    assert result.revisions["draft-example-delta"] == tuple(
        f"draft-example-delta-{n:02d}" for n in range(3)
    )
    assert result.landed(older, "draft-example-delta") == "draft-example-delta-01"
    assert result.landed(newer, "draft-example-delta") == "draft-example-delta-01"
    assert result.landed(late, "draft-example-delta") is None
    assert result.empty_revisions == {"draft-example-delta-02"}
    assert result.commits_per_section("draft-example-delta-02") == {}
    carried = result.carried_section_commits("draft-example-delta-02")
    assert carried["2.1"] == {first, older, newer}


def test_merged_branches_count_and_merges_do_not(tmp_path: Path) -> None:
    """Commits of a merged branch are attributed; the merge commit itself is not."""
    repo = Repo(tmp_path)
    name = "draft-example-eagle.md"
    repo.commit("eagle", {name: _draft("Eagle")})
    _git(repo.path, "checkout", "-q", "-b", "limits")
    branch = repo.commit("limits", {name: _draft("Eagle", appendix="Limits.")}, author=BOB)
    _git(repo.path, "checkout", "-q", "main")
    main = repo.commit("main", {name: _draft("Eagle", body="Eagles too.")})
    _git(repo.path, "merge", "-q", "--no-ff", "-m", "Merge pull request #3", "limits")
    merge = repo.head()
    repo.tag("draft-example-eagle-00")
    result = attribute(repo.path)
    assert branch in result.commits and main in result.commits
    assert merge not in result.commits
    assert _rows(result, branch) == {("draft-example-eagle", "draft-example-eagle-00", "A.1")}
    assert result.document_commits(name) == _follow(repo.path, name)


# --------------------------------------------------------------------------- real corpora


def _corpus(bundle: Path) -> Path:
    """``bundle``, or a skip (a failure under CI=true) saying it is missing."""
    if not bundle.is_file():
        message = f"The corpus is missing: {bundle} does not exist."
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return bundle


def _mirror(bundle: Path, folder: Path) -> Path:
    mirror = folder / "repository.git"
    subprocess.run(
        ["git", "clone", "--quiet", "--mirror", str(bundle), str(mirror)],
        check=True, capture_output=True,
    )  # fmt: skip
    return mirror


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Attribution]:
    """A mirror of the TLS bundle and the checker's attribution of it."""
    mirror = _mirror(_corpus(TLS_BUNDLE), tmp_path_factory.mktemp("tls"))
    return mirror, attribute(mirror)


@pytest.fixture(scope="module")
def quic(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Attribution]:
    """A mirror of the QUIC bundle and the checker's attribution of it."""
    mirror = _mirror(_corpus(QUIC_BUNDLE), tmp_path_factory.mktemp("quic"))
    return mirror, attribute(mirror)


def _bundle_id(bundle: Path, github_prefix: str | None = None,
               bundle_prefix: str | None = None) -> str:  # fmt: skip
    """The bundle's full commit id for a GitHub or bundle id prefix, from commit-map.tsv."""
    lines = (bundle.parent / "commit-map.tsv").read_text().splitlines()
    assert lines[0].split("\t") == ["bundle_sha", "github_sha"]
    found = [
        row.split("\t")[0]
        for row in lines[1:]
        if (github_prefix and row.split("\t")[1].startswith(github_prefix))
        or (bundle_prefix and row.split("\t")[0].startswith(bundle_prefix))
    ]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.corpus
def test_tls_record_layer_commit_is_in_section_5_1(tls: tuple[Path, Attribution]) -> None:
    """Commit 30bb500 (the TLSPlaintext length) changed §5.1 "Record Layer" of the revision
    it landed in, not the appendix sections with the same heading."""
    _, result = tls
    sha = _bundle_id(TLS_BUNDLE, bundle_prefix="30bb500")
    (touch,) = result.commits[sha].touches
    assert touch.file == "draft-ietf-tls-tls13.md" and touch.draft == "draft-ietf-tls-tls13"
    assert (touch.number, touch.path, touch.appendix) == (
        "5.1",
        ("Record Protocol", "Record Layer"),
        False,
    )
    assert touch.revision is not None
    sections = result.commits_per_section(touch.revision)
    assert {label for label, shas in sections.items() if sha in shas} == {"5.1"}
    tree = result.revision_trees[touch.revision]
    record_layers = [s for s in tree.sections if s.title == "Record Layer"]
    assert len(record_layers) > 1  # the trap is there: the heading repeats in the appendix
    assert tree.numbered("5.1").title == "Record Layer"  # type: ignore[union-attr]


@pytest.mark.corpus
def test_tls_body_sections_outnumber_their_appendix_twins(tls: tuple[Path, Attribution]) -> None:
    """In the last tls13 revision, carried through the chain, §5.1 has more commits than
    B.1, and §4.1 / §4.4 (with their subsections) more than B.3.1 / B.3.3."""
    _, result = tls
    carried = result.carried_section_commits("draft-ietf-tls-tls13-28", include_subsections=True)
    for body, twin in (("5.1", "B.1"), ("4.1", "B.3.1"), ("4.4", "B.3.3")):
        assert len(carried[body]) > len(carried.get(twin, ())) > 0


@pytest.mark.corpus
def test_quic_commits_per_draft_file_agree_with_git_log(quic: tuple[Path, Attribution]) -> None:
    """Per QUIC document file, the checker's commits are exactly ``git log --no-merges
    --full-history`` over the file's names, contain all of ``git log --follow``, and the only
    commits ``--follow`` leaves out changed an earlier name on a branch after the rename
    (``--follow`` walks by date with one name at a time)."""
    mirror, result = quic
    for path in ("rfc8999.md", "rfc9000.md", "rfc9001.md", "rfc9002.md", "rfc9114.md",
                 "rfc9204.md"):  # fmt: skip
        names = result.names_of(path)
        mine = result.document_commits(path)
        full = set(_git(mirror, "log", "--no-merges", "--full-history", "--format=%H", "--",
                        *names).split())  # fmt: skip
        follow = _follow(mirror, path)
        assert mine == full, path
        assert follow <= mine, path
        retired = {old: sha for sha, old, new in result.renames if old in names}
        for sha in mine - follow:
            touched = {t.file for t in result.commits[sha].touches} & set(retired)
            assert touched, (path, sha)
            when = int(_git(mirror, "log", "-1", "--format=%ct", sha))
            assert any(when > int(_git(mirror, "log", "-1", "--format=%ct", retired[name]))
                       for name in touched), (path, sha)  # fmt: skip
        drafts = {t.draft for sha in mine for t in result.commits[sha].touches if t.file in names}
        assert len(drafts) <= 2, (path, drafts)  # an individual draft, then the WG draft


@pytest.mark.corpus
def test_quic_drafts_get_their_own_commits(quic: tuple[Path, Attribution]) -> None:
    """Six drafts in one repository: each gets the commits of its own file, and transport
    (RFC 9000) has the most."""
    _, result = quic
    counts = result.commits_per_draft()
    for draft, path in (("draft-ietf-quic-transport", "rfc9000.md"),
                        ("draft-ietf-quic-tls", "rfc9001.md"),
                        ("draft-ietf-quic-recovery", "rfc9002.md"),
                        ("draft-ietf-quic-http", "rfc9114.md")):  # fmt: skip
        assert counts[draft] == len(result.document_commits(path)), draft
    assert max(counts, key=lambda d: counts[d] or 0) == "draft-ietf-quic-transport"
