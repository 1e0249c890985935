"""The slow tail of answer cards: p50 and p95 per card over many asks, and where the tail goes.

Run from the repository root::

    python -m benchmarks.ask_tail --store /tmp/brain-tls [--asks 200]          # in process
    python -m benchmarks.ask_tail --store /tmp/brain-tls --http [--asks 200]   # /api/ask
    python -m benchmarks.ask_tail --store /tmp/brain-tls --http --before 6e1be5c
    python -m benchmarks.ask_tail --smoke

In process (the default), the brain is opened as ``ratified serve`` opens it (a copy of the
reader's graphs in memory, settled: lookups built, heap frozen) and each card's question is
asked ``--asks`` times, the cards in turns, after ten warm-up rounds. For every ask it keeps
the wall time, the thread's own CPU time, the engine time of its queries and the collections
Python's collector ran meanwhile, so a slow ask shows whether it worked longer (CPU), waited
on the engine, was collected, or only waited for the processor (wall without CPU: another
process had it). With ``--http`` the same asks go through ``ratified serve``'s ``/api/ask``
(this checkout, a free loopback port), timed around each request; with ``--before`` the
server of that commit (checked out beside) is asked first, then this checkout's, each started
afresh, and the table has a row per card and tree. The server's CPU seconds (its own and its
query workers', from ``/proc``) while it answered are printed beside, so that a busy machine
shows. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from benchmarks import report
from benchmarks.core import PIGEON_QUESTIONS, QUESTIONS, pigeon_store
from benchmarks.endpoint import free_port, stop
from benchmarks.report import BenchError

log = report.logger("ask_tail")
WARM_UP = 10


class _Collections:
    """Counts the collector's runs by generation while installed."""

    def __init__(self) -> None:
        self.runs = [0, 0, 0]

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.runs[info["generation"]] += 1


def _in_process(store: Path, questions: Sequence[str], asks: int) -> list[list[str]]:
    from ratified_rdf import Brain
    from ratified_rdf.surfaces.server import settle_for_serving

    brain = Brain.open(store, in_memory=True)
    settle_for_serving(brain)
    counted = _Collections()
    gc.callbacks.append(counted)
    measured: dict[str, list[tuple[float, float, float, int]]] = {q: [] for q in questions}
    try:
        for round_ in range(WARM_UP + asks):
            for question in questions:
                before = list(counted.runs)
                started, cpu = time.perf_counter(), time.thread_time()
                answer = brain.ask(question)
                wall = (time.perf_counter() - started) * 1000
                used = (time.thread_time() - cpu) * 1000
                engine = sum(q.engine_ms for q in answer.queries if not q.reused)
                older = sum(counted.runs[1:]) - sum(before[1:])
                if round_ >= WARM_UP:
                    measured[question].append((wall, used, engine, older))
    finally:
        gc.callbacks.remove(counted)
        brain.close()
    rows = []
    for question, found in measured.items():
        walls = [f[0] for f in found]
        p50, p95 = report.percentile(walls, 50), report.percentile(walls, 95)
        slow = [f for f in found if f[0] >= p95]
        rows.append(
            [
                question,
                report.ms(p50),
                report.ms(p95),
                report.ms(max(walls)),
                report.ratio(p95, p50),
                report.ms(report.percentile([f[1] for f in found], 50)),
                report.ms(report.percentile([f[1] for f in found], 95)),
                report.ms(sum(f[1] for f in slow) / len(slow)),
                report.ms(sum(f[2] for f in slow) / len(slow)),
                f"{sum(1 for f in slow if f[3])} / {len(slow)}",
            ]
        )
    return rows


def _cpu_s(pid: int) -> float:
    """CPU seconds of process ``pid`` and of its children that ended and were waited for,
    plus those of its live children (the query workers), from ``/proc``."""
    tick = os.sysconf("SC_CLK_TCK")

    def fields(stat: Path) -> list[bytes]:
        data = stat.read_bytes()
        return data[data.rindex(b")") + 2 :].split()

    total = 0.0
    with contextlib.suppress(OSError, ValueError, IndexError):
        own = fields(Path(f"/proc/{pid}/stat"))
        total += sum(int(own[n]) for n in (11, 12, 13, 14)) / tick
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                theirs = fields(entry / "stat")
                if int(theirs[1]) == pid:
                    total += (int(theirs[11]) + int(theirs[12])) / tick
    return total


def _http(
    store: Path, questions: Sequence[str], asks: int, tree: Path = report.REPO
) -> tuple[list[list[str]], str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    process = subprocess.Popen(
        [sys.executable, "-m", "ratified_rdf", "serve", "--store", str(store), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    measured: dict[str, list[float]] = {q: [] for q in questions}
    load = os.getloadavg()[0]
    began = time.perf_counter()
    try:
        with httpx.Client(timeout=120) as client:
            deadline = time.monotonic() + 300
            while True:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise BenchError("ratified serve did not start")
                try:
                    if client.get(f"{base}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.1)
            for round_ in range(WARM_UP + asks):
                for question in questions:
                    started = time.perf_counter()
                    response = client.get(f"{base}/api/ask", params={"q": question})
                    took = (time.perf_counter() - started) * 1000
                    if response.status_code != 200:
                        raise BenchError(f"/api/ask gave {response.status_code}: {response.text}")
                    if round_ >= WARM_UP:
                        measured[question].append(took)
            cpu = _cpu_s(process.pid)
    finally:
        stop(process)
    wall = time.perf_counter() - began
    rows = []
    for question, walls in measured.items():
        p50, p95 = report.percentile(walls, 50), report.percentile(walls, 95)
        slowest = report.ms(max(walls))
        rows.append([question, report.ms(p50), report.ms(p95), slowest, report.ratio(p95, p50)])
    said = (
        f"{tree.name if tree != report.REPO else 'this checkout'}: load average {load:.2f} at "
        f"its start, {wall:.1f} s from start to the last answer, the server and its workers "
        f"{cpu:.1f} CPU s"
    )
    return rows, said


def main(argv: Sequence[str] | None = None) -> int:
    """Ask, time, print the report (2 when the server fails)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain's folder (the TLS brain)")
    parser.add_argument("--asks", type=int, default=200)
    parser.add_argument("--http", action="store_true", help="through ratified serve's /api/ask")
    parser.add_argument("--before", help="with --http: an earlier commit's server first")
    report.options(parser, smoke="the pigeon brain, 20 asks per card")
    args = report.parse(parser, argv)
    if args.smoke:
        store = pigeon_store(Path(tempfile.mkdtemp(prefix="rr-ask-tail-")))
        questions, asks = PIGEON_QUESTIONS, 20
    else:
        if args.store is None:
            parser.error("give --store (a built brain's folder)")
        store, questions, asks = args.store, QUESTIONS, args.asks
    notes: list[str] = []
    try:
        if not args.http:
            rows = _in_process(store, questions, asks)
        elif args.before is None or args.smoke:
            rows, said = _http(store, questions, asks)
            notes.append(said)
        else:
            rows = []
            with report.checkout(args.before) as earlier:
                for name, tree in ((f"before ({args.before})", earlier), ("after", report.REPO)):
                    log(f"{name}: asking")
                    found, said = _http(store, questions, asks, tree)
                    rows.extend([[f"{row[0]} ({name})", *row[1:]] for row in found])
                    notes.append(said.replace(tree.name, name, 1))
    except BenchError as error:
        print(error, file=sys.stderr)
        return 2
    if args.http:
        header: tuple[str, ...] = ("card's question", "p50 ms", "p95 ms", "slowest ms", "p95 ÷ p50")
        how = f"through `/api/ask` of `ratified serve`, {asks} asks per card. " + ". ".join(notes)
    else:
        header = (
            "card's question",
            "p50 ms",
            "p95 ms",
            "slowest ms",
            "p95 ÷ p50",
            "CPU p50 ms",
            "CPU p95 ms",
            "slowest 5%: CPU ms",
            "engine ms",
            "collected (gen 1-2)",
        )
        how = (
            f"in process, opened and settled as `ratified serve` does, {asks} asks per card; "
            "the slowest 5% columns average the asks at or above p95 (CPU is the asking "
            "thread's own; collected counts those asks during which the collector ran on an "
            "older generation)"
        )
    report.publish(
        "ask_tail",
        "The slow tail of answer cards",
        [f"{WARM_UP} warm-up rounds, the cards in turns, then {how}.", report.table(header, rows)],
        record=args.record,
        argv=argv,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
