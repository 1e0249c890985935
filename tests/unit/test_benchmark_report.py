"""The benchmarks' shared report module: the side-by-side table, and the sections of
RESULTS.md a script writes (one per script, newest first, hand-written sections untouched)."""

from __future__ import annotations

from benchmarks.report import Row, results_section, side_by_side, updated

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
