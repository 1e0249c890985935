"""The fuzz harness's time bound (``tests/fuzz/harness.py``) counts the work a call does, not
the time a busy machine keeps it waiting: a bound of wall time failed linear readers whenever
the machine ran other work beside them (a CI run beside the corpus tier), and a bound of
processor time stops a runaway all the same. A wait that computes nothing meets a wall-clock
backstop."""

from __future__ import annotations

import re
import threading
import time

import pytest

from tests.fuzz import harness
from tests.fuzz.harness import TimeBoundExceeded, Verdict, observe, time_bound


def test_a_call_kept_waiting_past_its_bound_is_not_stopped() -> None:
    # Sleeping stands for a call that waits for a processor: wall time passes, no work is done.
    with time_bound(0.2):
        time.sleep(0.6)
    outcome = observe(lambda: time.sleep(0.6), documented=(), bound=0.2)
    assert outcome.verdict is Verdict.PARSED, outcome.detail


def test_a_call_that_computes_past_its_bound_is_stopped() -> None:
    with pytest.raises(TimeBoundExceeded, match="processor time"), time_bound(0.2):
        while True:
            pass


def test_a_catastrophic_backtrack_is_stopped() -> None:
    def backtrack() -> object:
        return re.match(r"(a+)+$", "a" * 64 + "b")

    outcome = observe(backtrack, documented=(), bound=0.2)
    assert outcome.verdict is Verdict.BUG
    assert "no result within the bound of 0.2 s of processor time" in outcome.detail


def test_a_wait_that_computes_nothing_meets_the_wall_clock_backstop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(harness, "WALL_BACKSTOP_S", 0.3)
    assert harness.wall_backstop(0.001) == 0.3
    with pytest.raises(TimeBoundExceeded, match="waiting, not computing"), time_bound(0.001):
        threading.Event().wait(600)
