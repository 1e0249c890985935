"""What sharing one brain between processes costs, side by side in one run.

Run from the repository root::

    python -m benchmarks.many_users --store /tmp/tls-brain [--before fd8a2f6]
    python -m benchmarks.many_users --smoke      # the pigeon brain, against HEAD

``--store`` is a built brain (a folder); it is copied to a temporary folder first, so the
original is not touched. Three parts:

* **Audit appends** (with ``--before``): records appended to a fresh log by one process, in this
  checkout and in the earlier commit (checked out with ``git worktree``), alternating, three
  runs each: appends per second, durable (fsynced, as writes are) and not (as reads are), and
  this checkout's ratio to the earlier one's. Here each append also takes the log's lock and
  reads what other processes appended.
* **Cards**: the same questions asked through a shared opening (read-only, following other
  processes' writes before each question) and through an exclusive read-write opening, in one
  process, interleaved, after a warm-up; the median of 9 asks each and the ratio.
* **Following**: the time of ``Brain.follow()`` when nothing changed (one ``stat``), and of
  catching up once another process has finished a write (open afresh, read the runs, and the
  next question, which rebuilds what was dropped).

The report is Markdown on stdout and in ``benchmarks/out/many_users.md`` (with ``--record``, in
``benchmarks/RESULTS.md``). Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from benchmarks import report
from benchmarks.core import pigeon_store
from benchmarks.report import Row

ROOT = report.REPO

QUESTIONS = [
    "history of RFC 8446 section 4.2.10",
    "who should I ask about RFC 8446 section 4.2.1?",
    "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
]
PIGEON = [
    "history of RFC 9999 section 3.1",
    "who should I ask about RFC 9999 section 3.1?",
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
]
"""The same three kinds of card on the pigeon brain, for ``--smoke``."""

APPEND_SCRIPT = """
import sys, tempfile, time
from pathlib import Path
from ratified_rdf.audit import AuditLog, AuditRecord
n, durable = int(sys.argv[1]), sys.argv[2] == "durable"
with tempfile.TemporaryDirectory() as folder:
    with AuditLog.open(Path(folder) / "audit") as log:
        started = time.perf_counter()
        for i in range(n):
            log.append(AuditRecord(kind="query", tenant="default", clearance="public",
                                   actor="bench", subject={"n": i}), durable=durable)
        print(n / (time.perf_counter() - started))
"""


def _appends(src: Path, n: int, durable: bool) -> float:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", APPEND_SCRIPT, str(n), "durable" if durable else "fast"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def audit_part(before: str | None) -> str:
    """Appends per second in this checkout (and the earlier one), alternating."""
    with ExitStack() as stack:
        trees = {"this checkout": ROOT / "src"}
        if before:
            trees = {before: stack.enter_context(report.checkout(before)) / "src", **trees}
        rows = []
        for durable, n in ((False, 3000), (True, 300)):
            runs: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(3):
                for name, src in trees.items():
                    runs[name].append(_appends(src, n, durable))
            kind = "durable (fsync, as writes)" if durable else "not durable (as reads)"
            rows.append(Row(f"{kind}, {n} appends", [runs[name] for name in trees]))
    table = report.side_by_side(
        "appends", list(trees), rows, unit="per s", number=lambda v: f"{v:,.0f}", spread=""
    )
    return "\n".join(
        [
            "## Audit appends (appends per second, one process, a fresh log)",
            "",
            "Median of three runs, the trees alternating.",
            "",
            table,
        ]
    )


def cards_part(folder: Path, questions: Sequence[str]) -> str:
    """The same cards through a shared and an exclusive opening, interleaved."""
    from ratified_rdf import Brain
    from ratified_rdf.audit import AuditLog, audit_dir
    from ratified_rdf.graph.store import OxigraphStore

    shared = Brain.open(folder)
    timings: dict[str, dict[str, list[float]]] = {
        q: {"shared": [], "exclusive": []} for q in questions
    }
    for question in questions:
        shared.ask(question)
    shared.close()
    for _round in range(9):
        for mode in ("shared", "exclusive"):
            if mode == "shared":
                brain = Brain.open(folder)
            else:  # the same audit log, so only the opening differs
                brain = Brain.from_store(
                    OxigraphStore(folder), audit=AuditLog.open(audit_dir(folder))
                )
            try:
                brain.ask(questions[0])  # warm: the heading index and kept rows
                for question in questions:
                    started = time.perf_counter()
                    brain.ask(question)
                    timings[question][mode].append((time.perf_counter() - started) * 1000)
            finally:
                brain.close()
    rows = [Row(q, [modes["exclusive"], modes["shared"]]) for q, modes in timings.items()]
    return "\n".join(
        [
            "## Cards: shared (read-only, following) against exclusive (read-write)",
            "",
            "Median of 9 asks each, the openings interleaved in one process.",
            "",
            report.side_by_side("question", ["exclusive", "shared"], rows, spread=""),
        ]
    )


def follow_part(folder: Path, question: str) -> str:
    """``Brain.follow()`` idle, and catching up after another process's write."""
    from ratified_rdf import Brain
    from ratified_rdf.graph.store import GENERATION_FILE

    with Brain.open(folder) as brain:
        brain.ask(question)
        started = time.perf_counter()
        for _ in range(10_000):
            brain.reading.follow()
        idle_us = (time.perf_counter() - started) / 10_000 * 1e6
        catch_ups, next_asks = [], []
        for i in range(5):
            marker = folder / GENERATION_FILE
            marker.write_text(f"bench {i}\n")  # what a writer leaves when it finishes
            started = time.perf_counter()
            brain.reading.follow()
            catch_ups.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            brain.ask(question)
            next_asks.append((time.perf_counter() - started) * 1000)
    return "\n".join(
        [
            "## Following another process's writes",
            "",
            f"- follow() with nothing changed: {idle_us:.1f} µs",
            f"- catching up after a write: open afresh and read the runs "
            f"{report.ms(statistics.median(catch_ups))} ms; the next question (rebuilding the "
            f"heading index and kept rows) {report.ms(statistics.median(next_asks))} ms",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """The three parts on a copy of the brain; print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="A built brain's folder.")
    parser.add_argument("--before", help="An earlier commit for the audit appends' ratio.")
    report.options(parser, smoke="the pigeon brain, its cards, against HEAD")
    args = report.parse(parser, argv)
    if args.store is None and not args.smoke:
        parser.error("--store is required (or --smoke)")
    questions = PIGEON if args.smoke else QUESTIONS
    with tempfile.TemporaryDirectory(prefix="many-users-") as work:
        folder = Path(work) / "brain"
        if args.smoke:
            args.before = args.before or "HEAD"
            shutil.copytree(pigeon_store(Path(work) / "pigeon"), folder)
        else:
            shutil.copytree(args.store, folder)
        os.environ.setdefault("XDG_STATE_HOME", work)
        os.environ["RATIFIED_AUDIT_KEY"] = str(Path(work) / "audit-key.pem")
        sections = [
            audit_part(args.before),
            cards_part(folder, questions),
            follow_part(folder, questions[0]),
        ]
    title = "What sharing one brain between processes costs"
    report.publish("many_users", title, sections, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
