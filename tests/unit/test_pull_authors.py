"""Who wrote a pull request's commits, from one listing of every commit
(:class:`PullAuthorsFromHistory`), is what ``git log <head> ^<base>`` says
(:func:`pull_authors`, a git process per pull request) for every pair of commits of random
fictional histories, including heads and bases git does not hold; the real corpora are in
tests/corpus/test_pull_authors_corpus.py."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import pytest

from ratified_rdf.sources.git_history import PullAuthorsFromHistory, commit_parents, pull_authors
from ratified_rdf.sources.git_repo import GitRepository
from tests.unit.test_branch_commits import _ancestors, _random_history

UNKNOWN = "0123456789abcdef0123456789abcdef01234567"


def _history(
    tmp_path: Path, seed: int, *, skewed: bool = False
) -> tuple[GitRepository, dict[str, tuple[str, ...]]]:
    folder = tmp_path / "history.git"
    refs = _random_history(folder, seed, 80, skewed=skewed)
    repo = GitRepository.open(folder, cache_dir=tmp_path / "cache")
    return repo, commit_parents(repo, refs)


@pytest.mark.parametrize("seed", [11, 12])
def test_every_range_has_the_authors_git_names(tmp_path: Path, seed: int) -> None:
    # With dates in order git's walk is exact (test_branch_commits.py says why it is not
    # otherwise): what the build asked git, pull request by pull request, before.
    repo, parents = _history(tmp_path, seed)
    computed = PullAuthorsFromHistory(repo)
    commits = sorted(parents)
    rng = random.Random(seed)
    pairs: list[tuple[str, str | None]] = [(c, None) for c in commits[:10]]
    pairs += [(c, c) for c in commits[:10]]
    pairs += [(rng.choice(commits), rng.choice(commits)) for _ in range(150)]
    pairs += [(UNKNOWN, commits[0]), (commits[0], UNKNOWN), (UNKNOWN, None)]
    longer = 0
    for head, base in pairs:
        expected = pull_authors(repo, head, base)
        got = computed(head, base)
        assert sorted(got) == sorted(expected), (head, base)
        longer += len(expected) > 1
    assert longer > 50  # most ranges hold several commits, not the head alone


@pytest.mark.parametrize("skewed", [False, True])
def test_a_range_is_every_commit_the_head_reaches_and_the_base_does_not(
    tmp_path: Path, skewed: bool
) -> None:
    # Independent of git, and exact when commit dates run backwards: counted from the
    # parents alone, commit by commit.
    repo, parents = _history(tmp_path, 14, skewed=skewed)
    computed = PullAuthorsFromHistory(repo)
    rng = random.Random(14)
    commits = sorted(parents)
    for _ in range(100):
        head, base = rng.choice(commits), rng.choice(commits)
        expected = _ancestors(parents, head) - _ancestors(parents, base)
        assert len(computed(head, base)) == max(len(expected), 1), (head, base)


def test_what_the_listing_lacks_is_asked_of_git(tmp_path: Path) -> None:
    repo, parents = _history(tmp_path, 15)
    computed = PullAuthorsFromHistory(repo)
    assert computed(UNKNOWN, None) == []  # git does not hold it
    assert computed(next(iter(parents)), UNKNOWN) == []  # git refuses an unknown base


def test_ids_git_does_not_hold_cost_no_git_process_each(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Most pull requests' heads are GitHub's commits, never fetched. One listing of what git
    # holds answers for all of them; before, each cost a git process forked from the build.
    repo, parents = _history(tmp_path, 16)
    commits = sorted(parents)
    missing = [f"{n:040x}" for n in range(1, 301)]
    pairs: list[tuple[str, str | None]] = [(m, None) for m in missing[:100]]
    pairs += [(m, commits[n % len(commits)]) for n, m in enumerate(missing[100:200])]
    pairs += [(commits[n % len(commits)], m) for n, m in enumerate(missing[200:])]
    expected = [pull_authors(repo, head, base) for head, base in pairs]
    computed = PullAuthorsFromHistory(repo)
    import ratified_rdf.sources.git_history as git_history

    calls: list[list[str]] = []
    real_run = git_history.subprocess.run

    def counted(command: list[str], **kwargs: object) -> object:
        calls.append(command)
        return real_run(command, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(git_history.subprocess, "run", counted)
    assert [computed(head, base) for head, base in pairs] == expected == [[]] * 300
    assert len(calls) == 1 and "--batch-all-objects" in calls[0]


def test_a_commit_no_ref_reaches_is_still_asked_of_git(tmp_path: Path) -> None:
    repo, parents = _history(tmp_path, 17)
    parent = sorted(parents)[0]
    env = {
        "GIT_AUTHOR_NAME": "Ada Pigeon",
        "GIT_AUTHOR_EMAIL": "ada@pigeon.example",
        "GIT_COMMITTER_NAME": "Ada Pigeon",
        "GIT_COMMITTER_EMAIL": "ada@pigeon.example",
    }
    git = ["git", "--git-dir", str(repo.git_dir)]
    tree = subprocess.run(
        [*git, "rev-parse", f"{parent}^{{tree}}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    dangling = subprocess.run(
        [*git, "commit-tree", tree, "-p", parent, "-m", "never pushed to a branch"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    ).stdout.strip()
    computed = PullAuthorsFromHistory(repo)
    assert dangling not in computed.authors  # no ref reaches it: not in the listing
    got = computed(dangling, parent)
    assert got == pull_authors(repo, dangling, parent) == [("Ada Pigeon", "ada@pigeon.example")]
    assert computed(parent, dangling) == pull_authors(repo, parent, dangling)
