"""Routing time alone, and the existing cards' end-to-end times against an earlier commit,
side by side in one run.

Run from the repository root::

    python benchmarks/routing.py --store /tmp/tls-brain [--before 008d840] [--runs 2]

``--store`` is a TLS brain built by ``ratified build records/tls13`` (one is built into a
temporary folder when it is not given). The report has two parts:

* **Routing alone**: the gazetteer and heading index are built once, then every question of
  the evaluation files and the card list below is routed 20 times (``route`` only: no query
  runs); p50 and p95 per question, in milliseconds.
* **Cards end to end** (with ``--before``): the earlier commit is checked out with ``git
  worktree``; each run asks every card question in a fresh process of each tree (alternating,
  the earlier first), after one warm-up ask of each, then times 9 asks of each; the report
  gives each tree's median per question and this checkout's ratio to the earlier one's.

Nothing here asserts on timings.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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


def _questions() -> list[str]:
    found = list(CARDS)
    for path in sorted((ROOT / "tests" / "eval").glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        found.extend(q["text"] for q in data.get("question", []))
    return list(dict.fromkeys(found))


def routing(store: Path) -> None:
    from ratified_rdf import Brain
    from ratified_rdf.answers.router import route

    brain = Brain.open(store)
    start = time.perf_counter()
    gazetteer = brain.gazetteer()
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
    print(f"Routing alone, {len(questions)} questions × 20 (gazetteer built once, {built:.2f} s):")
    print(
        f"  p50 {statistics.median(ordered):.3f} ms   p95 {p95:.3f} ms   max {ordered[-1]:.3f} ms"
    )


def _cards(tree: Path, store: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, "-c", _TIMER, str(store), json.dumps(CARDS)],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"Asking with {tree} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def side_by_side(store: Path, before: str, runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="routing-side-by-side-") as folder:
        earlier = Path(folder) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(earlier),
                        before], check=True, capture_output=True)  # fmt: skip
        try:
            times: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
            for run in range(runs):
                print(f"[bench] run {run + 1}/{runs}", file=sys.stderr)
                times["before"].append(_cards(earlier, store))
                times["after"].append(_cards(ROOT, store))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(earlier)], check=False, capture_output=True)  # fmt: skip
    print(f"\nCards end to end, median of 9 asks, {runs} alternating runs (ms):")
    print(f"  {'question':<72} {before:>9} {'now':>9} {'ratio':>6}")
    ratios = []
    for question in CARDS:
        old = statistics.median(t[question] for t in times["before"])
        new = statistics.median(t[question] for t in times["after"])
        ratios.append(new / old if old else float("nan"))
        print(f"  {question[:72]:<72} {old:>9.2f} {new:>9.2f} {ratios[-1]:>6.2f}")
    print(f"  median ratio {statistics.median(ratios):.2f}, largest {max(ratios):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path)
    parser.add_argument("--before", help="an earlier commit to compare the cards with")
    parser.add_argument("--runs", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="routing-brain-") as folder:
        store = args.store
        if store is None:
            store = Path(folder) / "store"
            bundle = ROOT.parent / "shared/corpus/tls13-spec/tls13-spec.bundle"
            subprocess.run([sys.executable, "-m", "ratified_rdf", "build", "records/tls13",
                            "--source", str(bundle), "--store", str(store), "--quiet"],
                           check=True, cwd=ROOT)  # fmt: skip
        routing(store)
        if args.before:
            side_by_side(store, args.before, args.runs)


if __name__ == "__main__":
    main()
