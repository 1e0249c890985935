"""On both real corpora, who wrote each pull request's commits, from one listing of every
commit, is what ``git log <head> ^<base>`` says (what each build asked git, pull request by
pull request, before): every pull request of the TLS archive with its own base and head, and
on QUIC (which has no archive) every merge's branch against its base, and alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ratified_rdf.sources.git_history import PullAuthorsFromHistory, commit_parents, pull_authors
from ratified_rdf.sources.git_repo import GitRepository, load_commit_map
from tests.conftest import corpus_history

pytestmark = pytest.mark.corpus


def _tls_pulls(repo: GitRepository, bundle: Path) -> list[tuple[str, str | None]]:
    raw = repo.read_text(repo.resolve("gh-pages").commit, "archive.json")
    assert raw is not None
    local = {
        public: mine for mine, public in load_commit_map(bundle.parent / "commit-map.tsv").items()
    }
    pulls = []
    for pull in json.loads(raw).get("pulls", ()):
        head = local.get(pull.get("headRefOid") or "", pull.get("headRefOid"))
        base = pull.get("baseRefOid")
        if isinstance(head, str) and head:
            pulls.append((head, local.get(base, base) if isinstance(base, str) else None))
    return pulls


@pytest.mark.parametrize("corpus", ["tls", "quic"])
def test_every_pull_request_has_the_authors_git_names(
    corpus: str, tls_bundle: Path, tmp_path: Path
) -> None:
    repo, refs = corpus_history(corpus, tls_bundle, tmp_path)
    if corpus == "tls":
        pairs = _tls_pulls(repo, tls_bundle)
    else:
        # No archive, and no pull request heads in a clone: each merge's second parent is
        # the head of the branch it merged, its first the base.
        merges = [of for of in commit_parents(repo, refs).values() if len(of) > 1]
        pairs = [(of[1], of[0]) for of in merges]
        pairs += [(of[1], None) for of in merges[::5]]
    assert len(pairs) > 500
    computed = PullAuthorsFromHistory(repo)
    several = 0
    for head, base in pairs:
        expected = pull_authors(repo, head, base)
        assert sorted(computed(head, base)) == sorted(expected), (head, base)
        several += len(expected) > 1
    assert several > 100
