"""The commits a merge brought in, computed from one listing of every commit's parents, are the
ones ``git rev-list <merge>^1..<merge>^2`` names, on every merge of random fictional histories
(here) and of both real corpora (tests/corpus/test_branch_commits_corpus.py)."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from ratified_rdf.sources.git_history import BranchCommits, branch_commits, commit_parents
from ratified_rdf.sources.git_repo import GitRepository


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(folder), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _random_history(folder: Path, seed: int, commits: int, *, skewed: bool) -> list[str]:
    """A bare repository of ``commits`` commits of an empty tree, each with one to three
    parents drawn from the commits before it (mostly recent ones, some far back: old branches
    merged late, criss-cross merges, octopus merges); every commit is tagged. ``skewed``: the
    commit dates run backwards at random, as real histories' sometimes do."""
    subprocess.run(["git", "init", "-q", "--bare", str(folder)], check=True)
    tree = _git(folder, "mktree")  # reads the empty tree from no input
    rng = random.Random(seed)
    made: list[str] = []
    for index in range(commits):
        count = 0 if not made else rng.choice([1, 1, 1, 2, 2, 2, 3])
        pool = made[-8:] if rng.random() < 0.8 else made
        parents = rng.sample(pool, min(count, len(pool))) if pool else []
        argv = [arg for parent in parents for arg in ("-p", parent)]
        made.append(
            subprocess.run(
                ["git", "--git-dir", str(folder), "commit-tree", tree, *argv, "-m", f"c{index}"],
                capture_output=True,
                text=True,
                check=True,
                env={
                    # Five authors, so who wrote a range of commits says which commits it holds.
                    "GIT_AUTHOR_NAME": f"Fictional Author {index % 5}",
                    "GIT_AUTHOR_EMAIL": f"author{index % 5}@example.org",
                    "GIT_COMMITTER_NAME": "Fictional Author",
                    "GIT_COMMITTER_EMAIL": "author@example.org",
                    "GIT_AUTHOR_DATE": f"{_date(rng, index, skewed)} +0000",
                    "GIT_COMMITTER_DATE": f"{_date(rng, index, skewed)} +0000",
                },
            ).stdout.strip()
        )
    for index, commit in enumerate(made):
        _git(folder, "tag", f"t{index}", commit)
    return [f"t{index}" for index in range(len(made))]


def _date(rng: random.Random, index: int, skewed: bool) -> int:
    return 1_600_000_000 + (rng.randrange(10**6) if skewed else index * 60)


def _ancestors(parents: dict[str, tuple[str, ...]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        commit = todo.pop()
        if commit not in seen:
            seen.add(commit)
            todo.extend(parents.get(commit, ()))
    return seen


def _merges_of(
    tmp_path: Path, seed: int, *, skewed: bool
) -> tuple[GitRepository, dict[str, tuple[str, ...]], BranchCommits, list[str]]:
    """A random history's repository, parents, branch commits and merges (more than 30)."""
    folder = tmp_path / "history.git"
    refs = _random_history(folder, seed, 120, skewed=skewed)
    repo = GitRepository.open(folder, cache_dir=tmp_path / "cache")
    parents = commit_parents(repo, refs)
    merges = [commit for commit, of in parents.items() if len(of) > 1]
    assert len(merges) > 30
    return repo, parents, BranchCommits(parents), merges


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_merge_brings_in_what_its_second_parent_reaches_and_its_first_does_not(
    tmp_path: Path, seed: int
) -> None:
    # Dates that run backwards: the answer is still exact (git's own walk, by date, can then
    # name a commit its first parent reaches; the generation numbers here do not depend on
    # dates).
    _, parents, computed, merges = _merges_of(tmp_path, seed, skewed=True)
    brought = 0
    for merge in merges:
        first, second = parents[merge][:2]
        expected = _ancestors(parents, second) - _ancestors(parents, first)
        assert set(computed(merge)) == expected, merge
        assert len(computed(merge)) == len(expected)  # each commit once
        brought += len(expected)
    assert brought > len(merges)  # the merges bring in commits, not only empty sides
    for commit, of in parents.items():
        if len(of) < 2:
            assert computed(commit) == []


@pytest.mark.parametrize("seed", [5, 6])
def test_every_merge_brings_in_what_git_rev_list_names(tmp_path: Path, seed: int) -> None:
    # With dates in order git's walk is exact: what the build asked git, merge by merge, before.
    repo, _, computed, merges = _merges_of(tmp_path, seed, skewed=False)
    for merge in merges:
        assert sorted(computed(merge)) == sorted(branch_commits(repo, merge)), merge
