"""A server draws a few cards for nobody right after it listens (issue 54), so that its first
real question finds the answer path warm (the gazetteer and its speller, the question types,
the answer models' serialisers) instead of doing that work itself: and none of it is audited,
since nothing was asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog
from ratified_rdf.surfaces.server import settle_in_background
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("brain") / "store"
    repo = make_pigeon_repo(tmp_path_factory.mktemp("git"))
    brain, _ = Brain.build(MANIFEST, source=str(repo), path=folder)
    brain.close()
    return folder


def test_settling_warms_the_answer_path_and_audits_nothing(store: Path, tmp_path: Path) -> None:
    log = AuditLog.open(tmp_path / "audit")
    with Brain.open(store, audit=log, wait_for_copy=False) as served:
        before = log.size
        settle_in_background(served).join(timeout=120)
        reading = served.reading
        key = tuple(served.read_graphs)
        gazetteer = reading.lookups.gazetteers[key]  # built, with its speller
        assert "speller" in vars(gazetteer)
        assert log.size == before  # drawn for nobody: no ask, no query recorded
        # And the first real question is audited as ever.
        served.ask("history of RFC 9999 section 3.1")
        assert log.size > before
    log.close()
