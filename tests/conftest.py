"""Shared fixtures: where the real TLS corpus is, and one brain built from it per test session.

A test that needs the corpus skips when it is missing on a developer's machine, but fails loudly
under ``CI=true``: there a missing corpus means a check silently stopped running.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "tls13-spec"
BUNDLE = CORPUS / "tls13-spec.bundle"
MANIFEST = REPO / "records" / "tls13"


def require_corpus() -> Path:
    """The TLS bundle, or a skip (a failure under CI=true) saying it is missing."""
    if not BUNDLE.is_file():
        message = f"The TLS corpus is missing: {BUNDLE} does not exist."
        if os.environ.get("CI") == "true":
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return BUNDLE


@pytest.fixture(scope="session")
def tls_bundle() -> Path:
    """Path of the real tls13-spec git bundle."""
    return require_corpus()


@pytest.fixture(scope="session")
def tls_build(
    tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, BuildReport]:
    """The TLS brain built once per session from the bundle into an on-disk store."""
    store = tmp_path_factory.mktemp("tls-brain") / "store"
    brain, report = Brain.build(MANIFEST, path=store, source=str(tls_bundle))
    brain.close()
    return store, report


@pytest.fixture(scope="session")
def tls_brain(tls_build: tuple[Path, BuildReport]) -> Brain:
    """The TLS brain, open for reading."""
    return Brain.open(tls_build[0])
