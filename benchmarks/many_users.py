"""What sharing one brain between processes costs, side by side in one run.

Run from the repository root::

    python benchmarks/many_users.py --store /tmp/tls-brain [--before fd8a2f6]

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

Nothing here asserts on timings.
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

QUESTIONS = [
    "history of RFC 8446 section 4.2.10",
    "who should I ask about RFC 8446 section 4.2.1?",
    "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
]

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


def audit_part(before: str | None) -> None:
    print("## Audit appends (appends per second, one process, a fresh log)")
    trees = {"this checkout": ROOT / "src"}
    worktree = None
    if before:
        worktree = Path(tempfile.mkdtemp(prefix="before-"))
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(worktree), before],
            check=True,
            capture_output=True,
        )
        trees = {before: worktree / "src", **trees}
    try:
        for durable, n in ((False, 3000), (True, 300)):
            runs: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(3):
                for name, src in trees.items():
                    runs[name].append(_appends(src, n, durable))
            kind = "durable (fsync)" if durable else "not durable"
            medians = {name: statistics.median(values) for name, values in runs.items()}
            line = ", ".join(f"{name} {value:,.0f}/s" for name, value in medians.items())
            ratio = ""
            if before:
                ratio = f"; ratio {medians['this checkout'] / medians[before]:.2f}"
            print(f"- {kind}, {n} appends: {line}{ratio}")
    finally:
        if worktree is not None:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(worktree)],
                check=False,
                capture_output=True,
            )


def cards_part(folder: Path) -> None:
    from ratified_rdf import Brain
    from ratified_rdf.audit import AuditLog, audit_dir
    from ratified_rdf.graph.store import OxigraphStore

    print("\n## Cards: shared (read-only, following) against exclusive (read-write), ms")
    shared = Brain.open(folder)
    timings: dict[str, dict[str, list[float]]] = {
        q: {"shared": [], "exclusive": []} for q in QUESTIONS
    }
    for question in QUESTIONS:
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
                brain.ask(QUESTIONS[0])  # warm: the heading index and kept rows
                for question in QUESTIONS:
                    started = time.perf_counter()
                    brain.ask(question)
                    timings[question][mode].append((time.perf_counter() - started) * 1000)
            finally:
                brain.close()
    for question, modes in timings.items():
        a, b = statistics.median(modes["shared"]), statistics.median(modes["exclusive"])
        print(f"- {question}: shared {a:.1f}, exclusive {b:.1f}, ratio {a / b:.2f}")


def follow_part(folder: Path) -> None:
    from ratified_rdf import Brain
    from ratified_rdf.graph.store import GENERATION_FILE

    print("\n## Following another process's writes")
    with Brain.open(folder) as brain:
        brain.ask(QUESTIONS[0])
        started = time.perf_counter()
        for _ in range(10_000):
            brain.reading.follow()
        idle_us = (time.perf_counter() - started) / 10_000 * 1e6
        print(f"- follow() with nothing changed: {idle_us:.1f} µs")
        catch_ups, next_asks = [], []
        for i in range(5):
            marker = folder / GENERATION_FILE
            marker.write_text(f"bench {i}\n")  # what a writer leaves when it finishes
            started = time.perf_counter()
            brain.reading.follow()
            catch_ups.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            brain.ask(QUESTIONS[0])
            next_asks.append((time.perf_counter() - started) * 1000)
        print(
            f"- catching up after a write: open afresh and read the runs "
            f"{statistics.median(catch_ups):.1f} ms; the next question (rebuilding the heading "
            f"index and kept rows) {statistics.median(next_asks):.1f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, required=True, help="A built brain's folder.")
    parser.add_argument("--before", help="An earlier commit for the audit appends' ratio.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="many-users-") as work:
        folder = Path(work) / "brain"
        shutil.copytree(args.store, folder)
        os.environ.setdefault("XDG_STATE_HOME", work)
        os.environ["RATIFIED_AUDIT_KEY"] = str(Path(work) / "audit-key.pem")
        audit_part(args.before)
        cards_part(folder)
        follow_part(folder)


if __name__ == "__main__":
    main()
