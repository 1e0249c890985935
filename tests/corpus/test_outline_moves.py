"""A text's outline carried from its parent's: on every commit of both corpora whose change
touched no outline line, the carried outline is the one a full parse of the text gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.sources import git_history
from tests.conftest import corpus_history

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("corpus", ["tls", "quic"])
def test_a_carried_outline_is_the_parsed_one(corpus: str, tls_bundle: Path, tmp_path: Path) -> None:
    repo, refs = corpus_history(corpus, tls_bundle, tmp_path)
    history = git_history.read_history(repo, refs, ["*.md"])
    blobs = {
        blob
        for commit in history
        for change in commit.changes
        if change.file.endswith(".md")
        for blob in (change.old_blob, change.new_blob)
        if blob
    }
    parsed = git_history._outlines(repo, blobs)
    carried = 0
    for commit in history:
        for change in commit.changes:
            old, new = change.old_blob, change.new_blob
            if not (old and new and change.hunks) or old not in parsed or new not in parsed:
                continue
            if any(h.outline or h.new_start <= 1 for h in change.hunks):
                continue
            moved = parsed[old].moved(change.hunks)
            assert (moved.lines, moved.sections) == (parsed[new].lines, parsed[new].sections), (
                commit.commit,
                change.file,
            )
            carried += 1
    assert carried > 1000  # most commits change no outline line
