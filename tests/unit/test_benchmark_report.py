"""The benchmarks' shared report module: the side-by-side table, the sections of RESULTS.md a
script writes (one per script, newest first, hand-written sections untouched), and the memory
sampler."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from benchmarks import report
from benchmarks.report import Row, pss_mib, results_section, side_by_side, updated

FACTS = {"date": "2031-02-03 04:05 UTC", "commit": "abc1234"}

RESULTS = """# Results

Intro, kept.

## 2030-01-01: a note written by hand

```
## not a heading: inside a fence
```

Its text.

## benchmarks.crash — 2030-06-01 — 0000000

<!-- old -->

Old figures.

## 2029-12-31: an older note

Older text.
"""


def test_side_by_side_gives_each_ratio_to_the_baseline() -> None:
    rows = [Row("a", [2.0, 4.0, 1.0]), Row("b", [[1.0, 3.0, 2.0], None, [1.0]])]
    text = side_by_side("call", ["x", "y", "z"], rows, baseline=2, total="sum", summary=True)
    lines = text.splitlines()
    assert lines[0] == "| call | x ms | y ms | z ms | x ÷ z | y ÷ z |"
    assert lines[2] == "| a | 2.00 | 4.00 | 1.00 | 2.00× | 4.00× |"
    assert lines[3] == "| b | 2.00 / 3.00 | n/a | 1.00 / 1.00 | 2.00× | n/a |"
    assert lines[4] == "| **sum** | **4.00** | **4.00** | **2.00** | **2.00×** | **2.00×** |"
    assert lines[-1] == "x ÷ z: median 2.00×, largest 2.00×; y ÷ z: median 4.00×, largest 4.00×."


def test_a_recorded_section_replaces_the_scripts_last_and_goes_first() -> None:
    body = "## Part\n\n| a |\n\n```\n## kept as written\n```"
    section = results_section("crash", body, FACTS, "`python -m benchmarks.crash` · facts")
    once = updated(RESULTS, "crash", section)
    assert "Old figures." not in once
    assert once.index("## benchmarks.crash — 2031-02-03 — abc1234") < once.index("## 2030-01-01")
    assert once.startswith("# Results\n\nIntro, kept.\n\n## benchmarks.crash")
    for kept in ("## not a heading: inside a fence", "Its text.", "Older text."):
        assert kept in once
    assert "#### Part" in once and "\n## kept as written\n" in once  # fenced: not demoted

    other = updated(once, "scale", results_section("scale", "Scale.", FACTS, "lead"))
    assert other.index("## benchmarks.scale") < other.index("## benchmarks.crash")
    assert updated(once, "crash", section) == once  # recording again changes nothing else


def test_a_sample_taken_while_a_process_forks_is_taken_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The tree is listed as one process, then (the parent forked) as two: a parent read
    # whole and a child read sharing half of it would count the shared half twice.
    listings = iter([["1"], ["1", "2"], ["1", "2"], ["1", "2"]])
    sizes = {"1": 600.0, "2": 300.0}
    read: list[str] = []

    def reading(task: str) -> float:
        read.append(task)
        return sizes[task] if task == "2" or len(read) > 1 else 1000.0

    monkeypatch.setattr(report, "process_tree", lambda root: next(listings))
    monkeypatch.setattr(report, "_pss_of", reading)
    assert pss_mib(1) == 900.0
    assert read == ["1", "1", "2"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_a_forked_childs_inherited_pages_are_counted_once_and_its_own_in_full() -> None:
    held = bytearray(os.urandom(1 << 20) * 96)  # 96 MiB, every page written
    alone = pss_mib()
    assert alone is not None
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        own = bytearray(os.urandom(1 << 20) * 64)  # 64 MiB of its own
        os.write(writer, b"1")
        time.sleep(60)
        del own
        os._exit(0)
    try:
        os.read(reader, 1)
        together = pss_mib()
        parent_alone = pss_mib(children=False)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)
        os.close(reader)
        os.close(writer)
    assert together is not None and parent_alone is not None
    # The 96 MiB shared: counted once between the two (half each), not twice; the child's
    # own 64 MiB counted in full.
    assert 48 < together - alone < 96 + 16
    assert parent_alone < alone - 40
    del held


def test_the_peak_sampler_reads_pss_only_when_the_resident_sizes_could_raise_the_peak(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A PSS read walks every page of a process; its resident size is cheap and never less.
    resident = iter([500.0, 400.0, 900.0, 700.0])
    pss = iter([450.0, 800.0])
    monkeypatch.setattr(report, "process_tree", lambda root: [root])
    monkeypatch.setattr(report, "_rss_of", lambda task: next(resident))
    monkeypatch.setattr(report, "pss_mib", lambda: next(pss))
    sampler = report.PeakPss()
    sampler.phase = "reading"
    sampler.take()  # 500 resident: read, 450
    sampler.phase = "view"
    sampler.take()  # 400 resident: cannot pass 450, not read
    sampler.take()  # 900 resident: read, 800
    sampler.take()  # 700: not read (pss would raise StopIteration)
    assert (sampler.peak, sampler.at) == (800.0, "view")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_a_processs_resident_size_is_never_below_its_pss() -> None:
    resident = report._rss_of(str(os.getpid()))
    proportional = pss_mib(children=False)
    assert proportional is not None and 0 < proportional <= resident
