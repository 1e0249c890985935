"""A server draws a few cards for nobody before it listens (issue 54), so that its first
real question finds the answer path warm (the gazetteer and its speller, the question types,
the answer models' serialisers) instead of doing that work itself: and none of it is audited,
since nothing was asked."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog
from ratified_rdf.surfaces.server import settle_in_background
from tests.pigeon import MANIFEST, make_pigeon_repo

REPO = Path(__file__).resolve().parents[2]


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


def test_settling_readies_the_request_path_and_says_when_the_cards_are_drawn(
    store: Path, tmp_path: Path
) -> None:
    # In a fresh interpreter, as `ratified serve` runs: the first request's hand-off to a
    # worker thread imported anyio's event loop backend, most of that request's time; the
    # server listens once the warm-up cards are drawn, which the event says.
    code = textwrap.dedent(
        f"""
        import sys, threading
        from ratified_rdf import Brain
        from ratified_rdf.audit import AuditLog
        from ratified_rdf.surfaces.server import settle_in_background
        log = AuditLog.open({str(tmp_path / "audit")!r})
        with Brain.open({str(store)!r}, audit=log, wait_for_copy=False) as served:
            warm = threading.Event()
            settle_in_background(served, warm).join(timeout=120)
            print(warm.is_set(), "anyio._backends._asyncio" in sys.modules)
        log.close()
        """
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["True", "True"]
