"""A text's outline carried from its parent's: on every commit of both corpora whose change
touched no outline line, the carried outline is the one a full parse of the text gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf.sources import git_history
from tests.conftest import corpus_history
from tests.forks import markdown_blobs

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("corpus", ["tls", "quic"])
def test_a_carried_outline_is_the_parsed_one(corpus: str, tls_bundle: Path, tmp_path: Path) -> None:
    repo, refs = corpus_history(corpus, tls_bundle, tmp_path)
    history = git_history.read_history(repo, refs, ["*.md"])
    blobs = markdown_blobs(history)
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


@pytest.mark.parametrize("corpus", ["tls", "quic"])
def test_the_places_of_every_change_do_not_depend_on_how_many_texts_are_read_at_once(
    corpus: str, tls_bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Texts are read a few hundred at a time so that a large history's never sit in memory
    # together: three at a time must place every change as reading them all at once does.
    repo, refs = corpus_history(corpus, tls_bundle, tmp_path)
    history = git_history.read_history(repo, refs, ["*.md"])
    places = []
    for per_read in (10**9, 3):
        monkeypatch.setattr(git_history, "TEXTS_PER_READ", per_read)
        places.append(git_history.place_changes(repo, history))
    whole, in_threes = places
    assert whole == in_threes
    assert sum(len(found) for found in whole.values()) > 1000
