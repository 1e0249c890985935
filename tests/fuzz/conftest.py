"""Fuzz tests time each call against a bound; keep other tests' garbage out of that time."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _frozen_heap() -> Iterator[None]:
    """Collect once and freeze what earlier tests left alive.

    In a whole-suite run this process already holds the TLS brain's fixtures (millions of
    objects); a full collection over them, triggered by whatever a bounded call allocates,
    took over a second in CI and was charged to a 0.06 s parse. Frozen objects are skipped by
    the collector, so a bound measures the reader, not the heap it happens to run beside.
    """
    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()
