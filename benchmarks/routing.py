"""Routing time alone, and the existing cards' end-to-end times against an earlier commit,
side by side in one run.

Run from the repository root::

    python -m benchmarks.routing --store /tmp/tls-brain [--before 008d840] [--runs 2]
    python -m benchmarks.routing --smoke      # the pigeon brain, against HEAD, one run

``--store`` is a TLS brain built by ``ratified build records/tls13`` (one is built into a
temporary folder when it is not given). The report has two parts:

* **Routing alone**: the gazetteer and heading index are built once, then every question of
  the evaluation files and the card list below is routed 20 times (``route`` only: no query
  runs); p50 and p95 per question, in milliseconds.
* **Routing alone, against an earlier commit** (with ``--before``): the same, in a fresh
  process of each tree (alternating, the earlier first), every question of this checkout's
  files routed by both; p50 and p95 of each tree and this checkout's ratio.
* **Cards end to end** (with ``--before``): the earlier commit is checked out with ``git
  worktree``; each run asks every card question in a fresh process of each tree (alternating,
  the earlier first), after one warm-up ask of each, then times 9 asks of each; the report
  gives each tree's median per question and this checkout's ratio to the earlier one's.

The report is Markdown on stdout and in ``benchmarks/out/routing.md`` (with ``--record``, in
``benchmarks/RESULTS.md``). Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.core import DEFAULT_BUNDLE, PIGEON_QUESTIONS, pigeon_store
from benchmarks.report import Row

ROOT = report.REPO
log = report.logger("routing")

CARDS = [
    "history of RFC 8446 section 4.2.10",
    "who discussed RFC 8446 section 4.2.1?",
    "why does early data work this way?",
    "who should I ask about RFC 8446 §4.2.8?",
    "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
    "revisions of draft-ietf-tls-tls13",
    "what chain leads from draft-ietf-tls-tls13-21 to the RFC?",
    "what is PR #1091?",
    "how many posts referred to RFC 8446 §4.2.10 while it was changing?",
    "what did Dave Garrett work on?",
]
"""Questions of the card types that existed before the question registry."""

_TIMER = r"""
import json, statistics, sys, time
from ratified_rdf import Brain
questions = json.loads(sys.argv[2])
brain = Brain.open(sys.argv[1])
for q in questions:
    brain.ask(q)
out = {}
for q in questions:
    times = []
    for _ in range(9):
        start = time.perf_counter()
        brain.ask(q)
        times.append((time.perf_counter() - start) * 1000)
    out[q] = statistics.median(times)
brain.close()
print(json.dumps(out))
"""


_ROUTER = r"""
import json, statistics, sys, time
from ratified_rdf import Brain
from ratified_rdf.answers.router import route
questions = json.loads(sys.argv[2])
brain = Brain.open(sys.argv[1])
gazetteer = brain.reading.gazetteer()
for q in questions:
    route(q, gazetteer)
out = {}
for q in questions:
    times = []
    for _ in range(20):
        start = time.perf_counter()
        route(q, gazetteer)
        times.append((time.perf_counter() - start) * 1000)
    out[q] = statistics.median(times)
brain.close()
print(json.dumps(out))
"""


def _questions() -> list[str]:
    found = list(CARDS)
    for path in sorted((ROOT / "tests" / "eval").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        found.extend(q["text"] for q in data.get("question", []))
    return list(dict.fromkeys(found))


def routing(store: Path) -> str:
    """Every question routed 20 times on the brain's gazetteer: p50, p95 and the slowest."""
    from ratified_rdf import Brain
    from ratified_rdf.answers.router import route

    brain = Brain.open(store)
    start = time.perf_counter()
    gazetteer = brain.reading.gazetteer()
    built = time.perf_counter() - start
    questions = _questions()
    per_question: list[float] = []
    for question in questions:
        times = []
        for _ in range(20):
            begin = time.perf_counter()
            route(question, gazetteer)
            times.append((time.perf_counter() - begin) * 1000)
        per_question.append(statistics.median(times))
    brain.close()
    ordered = sorted(per_question)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"## Routing alone\n\n{len(questions)} questions × 20 (gazetteer and heading index "
        f"built once, {built:.2f} s): p50 {report.ms(statistics.median(ordered))} ms, p95 "
        f"{report.ms(p95)} ms, max {report.ms(ordered[-1])} ms."
    )


def _p95(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def routing_side_by_side(store: Path, before: str, runs: int) -> str:
    """Every question routed 20 times by each tree, in alternating processes (the earlier
    first); p50 and p95 of the per-question medians, and this checkout's ratio."""
    questions = _questions()
    times: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    with report.checkout(before) as earlier:
        for run in range(runs):
            log(f"routing run {run + 1}/{runs}")
            times["before"].append(_cards(earlier, store, questions, _ROUTER))
            times["after"].append(_cards(ROOT, store, questions, _ROUTER))
    medians = {
        side: [statistics.median(t[q] for t in runs_of) for q in questions]
        for side, runs_of in times.items()
    }
    b50, a50 = statistics.median(medians["before"]), statistics.median(medians["after"])
    b95, a95 = _p95(medians["before"]), _p95(medians["after"])
    return (
        f"## Routing alone, against {before}\n\n{len(questions)} questions × 20 per process, "
        f"{runs} alternating run(s) of a process per tree (median per question over runs): "
        f"{before} p50 {report.ms(b50)} ms, p95 {report.ms(b95)} ms; this checkout p50 "
        f"{report.ms(a50)} ms, p95 {report.ms(a95)} ms; p95 ratio {a95 / b95:.2f}×, p50 ratio "
        f"{a50 / b50:.2f}×."
    )


def _cards(tree: Path, store: Path, cards: Sequence[str], script: str = _TIMER) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(store), json.dumps(list(cards))],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"Asking with {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def side_by_side(store: Path, before: str, runs: int, cards: Sequence[str]) -> str:
    """The cards asked by both trees, alternating; medians and ratios."""
    times: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    with report.checkout(before) as earlier:
        for run in range(runs):
            log(f"run {run + 1}/{runs}")
            times["before"].append(_cards(earlier, store, cards))
            times["after"].append(_cards(ROOT, store, cards))
    rows = [
        Row(
            question,
            [
                statistics.median(t[question] for t in times["before"]),
                statistics.median(t[question] for t in times["after"]),
            ],
        )
        for question in cards
    ]
    return "\n".join(
        [
            f"## Cards end to end, against {before}",
            "",
            f"Median of 9 asks per process, {runs} alternating run(s) of a process per tree.",
            "",
            report.side_by_side("question", [before, "this checkout"], rows, summary=True),
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Route, then (with ``--before``) ask the cards in both trees; print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path)
    parser.add_argument("--before", help="an earlier commit to compare the cards with")
    parser.add_argument("--runs", type=int, default=2)
    report.options(parser, smoke="the pigeon brain, its questions, against HEAD, one run")
    args = report.parse(parser, argv)
    cards: Sequence[str] = CARDS
    if args.smoke:
        args.before, args.runs, cards = args.before or "HEAD", 1, PIGEON_QUESTIONS
    with tempfile.TemporaryDirectory(prefix="routing-brain-") as folder:
        store = args.store
        if args.smoke:
            store = pigeon_store(Path(folder))
        elif store is None:
            store = Path(folder) / "store"
            subprocess.run([sys.executable, "-m", "ratified_rdf", "build", "records/tls13",
                            "--source", str(DEFAULT_BUNDLE), "--store", str(store), "--quiet"],
                           check=True, cwd=ROOT)  # fmt: skip
        sections = [routing(store)]
        if args.before:
            sections.append(routing_side_by_side(store, args.before, args.runs))
            sections.append(side_by_side(store, args.before, args.runs, cards))
    title = "Routing, and the cards against an earlier commit"
    report.publish("routing", title, sections, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
