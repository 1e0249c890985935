"""On every merge of both real corpora, the commits it brought in, computed from one listing of
parents, are those ``git rev-list <merge>^1..<merge>^2`` names (what each build asked git,
merge by merge, before), and those its second parent reaches and its first does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.sources.git_history import BranchCommits, branch_commits, commit_parents
from tests.conftest import corpus_history
from tests.unit.test_branch_commits import _ancestors

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("corpus", ["tls", "quic"])
def test_every_merge_brings_in_what_git_says(corpus: str, tls_bundle: Path, tmp_path: Path) -> None:
    repo, refs = corpus_history(corpus, tls_bundle, tmp_path)
    parents = commit_parents(repo, refs)
    computed = BranchCommits(parents)
    merges = sorted(commit for commit, of in parents.items() if len(of) > 1)
    assert len(merges) > 500
    brought = 0
    for index, merge in enumerate(merges):
        expected = branch_commits(repo, merge)
        assert sorted(computed(merge)) == sorted(expected), merge
        if index % 10 == 0:
            first, second = parents[merge][:2]
            assert set(expected) == _ancestors(parents, second) - _ancestors(parents, first)
        brought += len(expected)
    assert brought > 2000
