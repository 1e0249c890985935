"""Reading on both cores: the documents' history is read in a child process while the texts
are read, and a long history's outlines in two. Each must give what reading in one process
gives, on the fictional repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from ratified_rdf import _forked
from ratified_rdf.build import ReadHistory, read_discussion_sources, read_git_evidence
from ratified_rdf.records.discussion import GitEvidence
from ratified_rdf.records.manifest import load_manifest
from ratified_rdf.records.spec import read_spec, spec_commits
from ratified_rdf.sources import git_history
from ratified_rdf.sources.git_repo import GitRepository
from tests.forks import counted_forks, markdown_blobs
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> GitRepository:
    return GitRepository.open(str(make_pigeon_repo(tmp_path_factory.mktemp("g"))))


class _Given:
    """A finished :class:`~ratified_rdf._forked.Forked`: its result, given."""

    def __init__(self, read: ReadHistory) -> None:
        self.read = read

    def result(self) -> ReadHistory:
        return self.read


def test_the_history_is_read_at_the_commits_the_texts_are(repo: GitRepository) -> None:
    manifest, _ = load_manifest(MANIFEST)
    spec = read_spec(manifest, repo, {})
    read = {r.commit.commit for r in spec.revisions} | {r.commit.commit for r in spec.rfcs}
    assert len(read) >= 3
    assert spec_commits(manifest, repo) == sorted(read)


def test_a_history_read_ahead_is_used_only_at_the_commits_the_texts_were_read(
    repo: GitRepository,
) -> None:
    manifest, folder = load_manifest(MANIFEST)
    spec = read_spec(manifest, repo, {})
    refs = spec_commits(manifest, repo)
    assert manifest.discussion is not None
    files = manifest.discussion.document_files
    inline = read_discussion_sources(manifest, spec, repo, {}, folder)
    assert inline.commits  # the fictional history has commits to tell apart
    nothing = GitEvidence(commits=[], places={}, branch_commits=lambda _merge: [])
    # Read at the same commits, what was read ahead is what the discussion is made of ...
    ahead = _Given(ReadHistory(refs, nothing))
    used = read_discussion_sources(manifest, spec, repo, {}, folder, history=ahead)  # type: ignore[arg-type]
    assert used.commits == ()
    # ... read at others (a tag moved between the two reads), it is read again.
    moved = _Given(ReadHistory([*refs[1:], "0" * 40], nothing))
    again = read_discussion_sources(manifest, spec, repo, {}, folder, history=moved)  # type: ignore[arg-type]
    assert again.commits == inline.commits
    # And a history read ahead in a child process is the one read in this one.
    child = _forked.Forked(
        lambda: ReadHistory(refs, read_git_evidence(repo, refs, files)), "reading the history"
    )
    forked = read_discussion_sources(manifest, spec, repo, {}, folder, history=child)
    assert forked.commits == inline.commits


def test_outlines_read_in_two_processes_are_those_read_in_one(
    repo: GitRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest, _ = load_manifest(MANIFEST)
    assert manifest.discussion is not None
    history = git_history.read_history(
        repo, spec_commits(manifest, repo), list(manifest.discussion.document_files)
    )
    blobs = markdown_blobs(history)
    assert len(blobs) >= 3
    forks = counted_forks(monkeypatch, git_history)
    monkeypatch.setattr(git_history, "TEXTS_PER_READ", 1)  # long enough to be split
    split = git_history._outlines(repo, blobs)
    assert forks == ["reading the texts' outlines"]
    whole = git_history._read_outlines(repo, sorted(blobs.items()))
    assert split.keys() == whole.keys() == blobs.keys()
    for blob, outline in whole.items():
        assert list(split[blob].lines) == list(outline.lines)
        assert split[blob].sections == outline.sections
        assert bool(split[blob]) == bool(outline)
    assert any(outline for outline in whole.values())  # some text has headings to place


def test_the_log_read_as_it_comes_is_the_log_read_whole(
    repo: GitRepository, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git log's output is parsed record by record as it is read, never held whole: read a few
    # bytes at a time (records cut anywhere), the history is the same; and a git that fails
    # is a sentence naming the repository.
    manifest, _ = load_manifest(MANIFEST)
    assert manifest.discussion is not None
    refs, files = spec_commits(manifest, repo), list(manifest.discussion.document_files)
    whole = git_history.read_history(repo, refs, files)
    assert len(whole) >= 3
    monkeypatch.setattr(git_history, "LOG_READ_BYTES", 7)
    assert git_history.read_history(repo, refs, files) == whole
    with pytest.raises(git_history.SourceError, match="git log failed on"):
        git_history.read_history(repo, ["f" * 40], files)


def test_a_character_cut_between_two_reads_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "accented"
    folder.mkdir()

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(folder), *args], check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    git("init", "-q", "-b", "main")
    git("config", "user.name", "Zoë Example")
    git("config", "user.email", "zoe@example.org")
    (folder / "draft.md").write_text("# Über den Flug\n\nDer Taubenschlag öffnet.\n")
    git("add", "draft.md")
    git("commit", "-q", "-m", "Café: the fictional first text")
    head = git("rev-parse", "HEAD")
    repo = GitRepository.open(str(folder))
    monkeypatch.setattr(git_history, "LOG_READ_BYTES", 1)  # every character cut
    [commit] = git_history.read_history(repo, [head], ["draft.md"])
    assert commit.author_name == "Zoë Example"
    assert commit.subject == "Café: the fictional first text"
