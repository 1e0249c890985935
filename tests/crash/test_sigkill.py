"""Crash safety: a build killed with SIGKILL at a random moment leaves the store in the
previous complete state or the new one, never a mix; building again reaches the same content;
an unchanged rebuild is idempotent. (Three trials here; benchmarks/crash.py runs twenty.)"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

TRIALS = 3


def _build(store: Path, repo: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ratified_rdf",
            "build",
            str(MANIFEST),
            "--source",
            str(repo),
            "--store",
            str(store),
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
    )


def _state(store: Path) -> tuple[str, str]:
    """(current run id, content hash) of the store, as a fresh reader sees it."""
    with Brain.open(store, reader=Reader(clearance="restricted")) as brain:
        run = next(r for r in brain.scope.runs if r.current)
        return run.run_id, brain.content_hash()


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


def test_an_unchanged_rebuild_is_idempotent(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "brain"
    states = []
    for _ in range(2):
        assert _build(store, repo).wait(timeout=600) == 0
        states.append(_state(store))
    (first_run, first), (second_run, second) = states
    assert first_run != second_run and first == second  # two runs, one content


def test_sigkill_at_random_moments_never_leaves_a_mix(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "brain"
    started = time.monotonic()
    assert _build(store, repo).wait(timeout=600) == 0
    duration = time.monotonic() - started
    before_run, complete = _state(store)
    chance = random.Random(os.environ.get("RATIFIED_CRASH_SEED", "7"))
    outcomes = []
    for _ in range(TRIALS):
        build = _build(store, repo)
        time.sleep(chance.uniform(0.05, duration))
        build.send_signal(signal.SIGKILL)
        build.wait(timeout=30)
        run, content = _state(store)
        # Either the earlier complete run is still current, or the new one completed.
        assert content == complete, "the store holds a mix of two runs"
        outcomes.append("kept" if run == before_run else "completed")
        before_run = run
    # Building again after the crashes reaches the same content.
    assert _build(store, repo).wait(timeout=600) == 0
    assert _state(store)[1] == complete
    print(f"SIGKILL trials: {outcomes}")
