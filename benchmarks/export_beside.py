"""Cards asked beside the query workers' export: from the store, quad by quad through Python,
or from the copy in memory, written by the engine (issue 54 item 3, the slow tail).

Run from the repository root::

    python -m benchmarks.export_beside --store /tmp/brain-tls [--asks 40] [--passes 2]
    python -m benchmarks.export_beside --smoke

The brain is opened as ``ratified serve`` opens it (a copy of the reader's graphs in memory,
settled). Then the cards of the tail benchmark are asked in passes, ``--asks`` rounds each,
the ways in turn (alone; beside a thread exporting the reader's graphs from the store over
and over, as a server did for its workers; beside one exporting them from the copy in
memory), the turns repeated ``--passes`` times, so that each way meets the machine's load
alike. The export thread runs at the lowest priority, as the server's does. For each way it
prints the asks' p50 and p95 over every card and their ratio, and how many exports ran.
Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.core import PIGEON_QUESTIONS, QUESTIONS, pigeon_store

log = report.logger("export_beside")
WAYS = ("alone", "beside the export from the store", "beside the export from the copy")


def _exporting(export: Callable[[], object], stop: threading.Event, count: list[int]) -> None:
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    while not stop.is_set():
        export()
        count[0] += 1


def main(argv: Sequence[str] | None = None) -> int:
    """Ask beside each way of exporting; print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain's folder (the TLS brain)")
    parser.add_argument("--asks", type=int, default=40, help="rounds of every card per pass")
    parser.add_argument("--passes", type=int, default=2)
    report.options(parser, smoke="the pigeon brain, 5 rounds, one pass")
    args = report.parse(parser, argv)
    if args.smoke:
        store = pigeon_store(Path(tempfile.mkdtemp(prefix="rr-export-beside-")))
        questions, asks, passes = PIGEON_QUESTIONS, 5, 1
    else:
        if args.store is None:
            parser.error("give --store (a built brain's folder)")
        store, questions, asks, passes = args.store, QUESTIONS, args.asks, args.passes

    from ratified_rdf import Brain
    from ratified_rdf.graph import publish
    from ratified_rdf.surfaces.server import settle_for_serving

    brain = Brain.open(store, in_memory=True)
    settle_for_serving(brain)
    reading = brain.reading
    graphs = list(brain.read_graphs)
    copy = reading.copies.copies[tuple(sorted(graphs))]
    exports: dict[str, Callable[[], object] | None] = {
        WAYS[0]: None,
        WAYS[1]: lambda: publish.nquads(reading.store, graphs),
        WAYS[2]: copy.nquads,
    }
    walls: dict[str, list[float]] = {way: [] for way in WAYS}
    counts: dict[str, int] = dict.fromkeys(WAYS, 0)
    load = os.getloadavg()[0]
    try:
        for _ in range(3):  # warm-up rounds
            for question in questions:
                brain.ask(question)
        for run in range(passes):
            for way, export in exports.items():
                log(f"pass {run + 1}/{passes}: {way}")
                stop, count = threading.Event(), [0]
                thread = None
                if export is not None:
                    thread = threading.Thread(target=_exporting, args=(export, stop, count))
                    thread.start()
                    time.sleep(0.2)  # under way
                try:
                    for _ in range(asks):
                        for question in questions:
                            started = time.perf_counter()
                            brain.ask(question)
                            walls[way].append((time.perf_counter() - started) * 1000)
                finally:
                    stop.set()
                    if thread is not None:
                        thread.join()
                counts[way] += count[0]
    finally:
        brain.close()
    rows = []
    for way in WAYS:
        p50, p95 = report.percentile(walls[way], 50), report.percentile(walls[way], 95)
        rows.append(
            [
                way,
                str(len(walls[way])),
                report.ms(p50),
                report.ms(p95),
                report.ratio(p95, p50),
                str(counts[way]),
            ]
        )
    header = ("asked", "asks", "p50 ms", "p95 ms", "p95 ÷ p50", "exports made meanwhile")
    report.publish(
        "export_beside",
        "Cards beside the workers' export",
        [
            f"{len(questions)} cards, {asks} rounds a pass, {passes} pass(es) of each way in "
            f"turn; load average {load:.2f} at the start.",
            report.table(header, rows, right=range(1, 6)),
        ],
        record=args.record,
        argv=argv,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
