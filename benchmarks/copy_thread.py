"""Which thread loads the in-memory copy: the asking thread's own, or a thread that holds it.

Run from the repository root, with a built brain::

    python -m benchmarks.copy_thread --store DIR [--pairs N] [--rounds N]
    python -m benchmarks.copy_thread --smoke     # the pigeon brain, 1 pair, 2 rounds

Where a copy's blocks live is a matter of the whole process (glibc's malloc gives each thread
an arena, and the arena a copy was loaded into stays slow for later allocations), so each
side runs in a process of its own: ``--pairs`` pairs of child processes, the two sides
alternating, each opening the brain in memory as ``ratified serve`` does (heading index
built, heap frozen) and asking the questions of ``benchmarks.core`` in turns for
``--rounds`` rounds after 5 warm-ups. *own thread* is the library as it is
(:class:`ratified_rdf.graph.memory.MemoryDataset` loads on a thread that then holds the
copy); *asking thread* loads the copy on the thread that goes on to ask, as it did before.

The report (Markdown on stdout, also ``benchmarks/out/copy_thread.md``, and with ``--record``
``benchmarks/RESULTS.md``) gives each side's p50
end-to-end milliseconds per question, as the median over the pairs and each pair's range, and
the ratio. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from benchmarks import report
from benchmarks.core import PIGEON_QUESTIONS, QUESTIONS, pigeon_store
from benchmarks.report import Row

log = report.logger("copy_thread")
SIDES = ("asking thread", "own thread")
WARMUP = 5


def child(store: Path, side: str, rounds: int, smoke: bool) -> dict[str, float]:
    """One side in this process: p50 end-to-end milliseconds per question."""
    from ratified_rdf.brain import Brain
    from ratified_rdf.graph import memory
    from ratified_rdf.surfaces.server import settle_for_serving

    if side == "asking thread":
        # The copy made here, on the thread that asks, as before it had a thread of its own;
        # the loader returns at once, its release already given.
        def load_here(
            self: memory.MemoryDataset, source: memory.OxigraphStore, graphs: Sequence[str]
        ) -> None:
            loaded: Future[memory.Store] = Future()
            release = threading.Event()
            release.set()
            self.graphs = tuple(graphs)
            memory._load_and_hold(source, self.graphs, loaded, release)
            self._copy = loaded.result()
            self._release = release.set  # type: ignore[assignment]

        memory.MemoryDataset.__init__ = load_here  # type: ignore[method-assign]

    asked = PIGEON_QUESTIONS if smoke else QUESTIONS
    with Brain.open(store) as opened:
        brain = Brain(opened._store, opened.brain_id, in_memory=True, reader=opened.reader)
        brain.holdings()  # the first question makes the copy
        settle_for_serving(brain)
        for question in asked:
            for _ in range(WARMUP):
                brain.ask(question)
        times: dict[str, list[float]] = {question: [] for question in asked}
        for _ in range(rounds):
            for question in asked:
                started = time.perf_counter()
                brain.ask(question)
                times[question].append((time.perf_counter() - started) * 1000)
    return {question: statistics.median(values) for question, values in times.items()}


def run_side(store: Path, side: str, rounds: int, smoke: bool) -> dict[str, float]:
    """Run one side in a child process and read back its medians."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.copy_thread",
            "--store",
            str(store),
            "--rounds",
            str(rounds),
            "--side",
            side,
            *(["--smoke"] if smoke else []),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"error: the {side} side failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout)


def sections(results: dict[str, list[dict[str, float]]], pairs: int, rounds: int) -> list[str]:
    """The table: per question, each side's median p50 (range over pairs), and the ratio."""
    asking, own = results[SIDES[0]], results[SIDES[1]]
    rows = [
        Row(question, [[run[question] for run in asking], [run[question] for run in own]])
        for question in asking[0]
    ]
    return [
        "## Where the in-memory copy is loaded",
        f"{pairs} pairs of processes, the sides alternating; in each, {WARMUP} warm-ups then "
        f"{rounds} rounds of the questions of `benchmarks.core` in turns. p50 end-to-end ms "
        "per process; the median over the pairs, with the range.",
        report.side_by_side("question", SIDES, rows, baseline=1, spread="range"),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the pairs and print the report; 2 when there is no brain to read."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="folder of a built brain")
    parser.add_argument("--pairs", type=int, default=3, help="pairs of processes (default 3)")
    parser.add_argument("--rounds", type=int, default=60, help="timed rounds (default 60)")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)
    report.options(parser, smoke="the pigeon brain, 1 pair, 2 rounds")
    args = report.parse(parser, argv)
    if args.side is not None:
        print(json.dumps(child(args.store, args.side, args.rounds, args.smoke)))
        return 0
    if args.smoke:
        args.pairs, args.rounds = 1, 2
        with tempfile.TemporaryDirectory(prefix="rr-copy-thread-") as scratch:
            return run_pairs(args, pigeon_store(Path(scratch)))
    if args.store is None or not args.store.is_dir():
        print(
            f"error: there is no brain at {args.store}. Build one first: "
            f"ratified build records/tls13 --store {args.store or 'DIR'}",
            file=sys.stderr,
        )
        return 2
    return run_pairs(args, args.store)


def run_pairs(args: argparse.Namespace, store: Path) -> int:
    """The pairs of processes on ``store``, then the report."""
    results: dict[str, list[dict[str, float]]] = {side: [] for side in SIDES}
    for pair in range(args.pairs):
        order = SIDES if pair % 2 == 0 else SIDES[::-1]
        for side in order:
            log(f"pair {pair + 1}/{args.pairs}: {side}")
            results[side].append(run_side(store, side, args.rounds, args.smoke))
    parts = sections(results, args.pairs, args.rounds)
    title = "Which thread loads the in-memory copy"
    report.publish("copy_thread", title, parts, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
