"""Time budgets for the server tests, so that they hold on a busy machine.

A query that must succeed gets :data:`GENEROUS_S`: at load 10 a query worker (niced below the
server) took more than half a second for an ``ASK``, and a test that gave it 0.5 s failed
with a 503 it never got on an idle machine. A query that must be ended runs forever on the
Pigeon brain (:data:`FOREVER_ROWS`, :data:`FOREVER_COUNT`), and only it is given a tight
budget (:func:`tight_budget`): it is ended at that budget however loaded the machine is,
because no machine finishes it.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from starlette.applications import Starlette

GENEROUS_S = 300.0
"""The query budget of a server whose queries must succeed: far above what any of them takes,
so it is never what a test meets."""

_FOUR_TIMES = "?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l"
FOREVER_ROWS = f"SELECT ?a WHERE {{ {_FOUR_TIMES} }}"
"""Every triple of the brain against every other, four times over: about 10^11 rows,
streamed from the first one on, so a query that is never done sending."""
FOREVER_COUNT = f"SELECT (COUNT(*) AS ?n) WHERE {{ {_FOUR_TIMES} }}"
"""The same combinations counted: no row comes out until all are counted, so only the
server's deadline, not the row loop, can end it."""


@contextmanager
def tight_budget(app: Starlette, seconds: float) -> Iterator[None]:
    """Within this block, a query sent to ``app`` (made by ``create_app``) may run ``seconds``
    (waiting for a free worker included); before and after it, what ``app`` was made with.
    For a query that must be ended or refused, never for one that must succeed."""
    state = app.state
    made_with = state.sandbox_limits
    tight = dataclasses.replace(made_with, timeout_s=seconds)
    # The sandbox is made at the first query, from the app's limits; the endpoint reads a
    # query's deadline from ``limits`` (the same limits, under the name the routes use), and a
    # stream (the graph store protocol, a triple pattern) waits its turn for ``wait_s``.
    streams = getattr(state, "standard", None)
    streams_waited = streams.wait_s if streams is not None else None
    state.sandbox_limits = state.limits = tight
    if state.sandbox is not None:
        state.sandbox.limits = tight
    if streams is not None:
        streams.wait_s = seconds
    try:
        yield
    finally:
        state.sandbox_limits = state.limits = made_with
        if state.sandbox is not None:
            state.sandbox.limits = made_with
        if streams is not None:
            streams.wait_s = streams_waited


HANG_GUARD_STEPS = 12_000
"""How many times :func:`until` looks, a hundredth of a second apart: two minutes and more,
so that on a loaded machine it only ever stops a test that would otherwise hang."""


def until(condition: Callable[[], object], what: str) -> None:
    """Wait for something a server does on another thread (bounded in steps, not timed: the
    bound only keeps a broken server from hanging the suite)."""
    for _ in range(HANG_GUARD_STEPS):
        if condition():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def roomy_quick_lane(app: Starlette) -> None:
    """Give the worker ``app`` keeps for light clients :data:`GENEROUS_S` per query, not the
    second of ``SandboxLimits.quick_s``, before ``app``'s first query: for a test whose light
    client's query must succeed there. A client is light while its queries lately ran under
    half of that, so a test's heavy client is one charged more than :data:`GENEROUS_S`."""
    assert app.state.sandbox is None, "set the quick lane's budget before the first query"
    roomy = dataclasses.replace(app.state.sandbox_limits, quick_s=GENEROUS_S)
    app.state.sandbox_limits = app.state.limits = roomy
