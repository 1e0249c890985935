"""A ``/sparql`` query worker's first answers: loading an export against reading a checkpoint.

Run from the repository root::

    python -m benchmarks.worker_start --store /tmp/brain-tls [--runs 2]
    python -m benchmarks.worker_start --smoke      # the pigeon brain, one run

Each run, for each way in turn (the export first), makes a query sandbox of one worker over the
brain's store as ``ratified serve`` does, and sends the anonymous reader's query (the dataset
``/sparql`` gives it) once, then nine more times, then again until the worker's copy in memory
is made (the checkpoint way), and once after. The worker runs at the server's own priority
here (not nice 19), so that on a busy machine it is timed, not starved. It reports the first
answer's wall time and the CPU it took (this process's and the worker's), the tenth, when the
copy was made and a query after it. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.core import pigeon_store
from ratified_rdf import Brain
from ratified_rdf.queries import sandbox as sandboxing
from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits
from ratified_rdf.surfaces import standard

log = report.logger("worker_start")
SPARQL = (
    "PREFIX dcterms: <http://purl.org/dc/terms/> "
    "SELECT ?section ?title WHERE { ?section dcterms:title ?title } ORDER BY ?section LIMIT 50"
)
JSON = "application/sparql-results+json"
COPY_TRIES = 2_000


def _worker_cpu(box: QuerySandbox) -> float:
    """User + system seconds of the sandbox's (one) worker so far."""
    (worker,) = box._all
    if worker.process is None:
        return 0.0
    with open(f"/proc/{worker.process.pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _one(store: Path, way: str) -> dict[str, float]:
    found: dict[str, float] = {}
    with Brain.open(store) as brain:
        dataset = standard.query_dataset(brain, None, None)
        request = QueryRequest(
            SPARQL, dataset.graphs, JSON, None, named=dataset.named, views=dataset.views
        )
        box = QuerySandbox(
            SandboxLimits(workers=1, timeout_s=600),
            lambda: brain.reading.write_generation,
            store=store if way == "checkpoint" else None,
        )
        try:

            def ask() -> float:
                started = time.perf_counter()
                asyncio.run(box.run("bench", request, brain.reading.export))
                return time.perf_counter() - started

            cpu = time.process_time()
            found["first s"] = ask()
            found["first CPU s"] = time.process_time() - cpu + _worker_cpu(box)
            for _ in range(9):
                found["tenth s"] = ask()
            (worker,) = box._all
            began = time.perf_counter()
            tries = 0
            while worker.copying is not None and tries < COPY_TRIES:
                ask()
                tries += 1
                time.sleep(0.05)
            found["copy made after s"] = time.perf_counter() - began
            found["after copy s"] = ask()
        finally:
            box.close()
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Time both ways; print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain's folder (the TLS brain)")
    parser.add_argument("--runs", type=int, default=2)
    report.options(parser, smoke="the pigeon brain, one run")
    args = report.parse(parser, argv)
    if args.smoke:
        store, runs = pigeon_store(Path(tempfile.mkdtemp(prefix="rr-worker-start-"))), 1
    else:
        if args.store is None:
            parser.error("give --store (a built brain's folder)")
        store, runs = args.store, args.runs
    # Timed, not starved, on a busy machine.
    sandboxing.GENERAL_NICE = 0  # type: ignore[misc]
    measured: dict[str, list[dict[str, float]]] = {}
    for run in range(runs):
        log(f"run {run + 1}/{runs}")
        for way in ("export", "checkpoint"):
            measured.setdefault(way, []).append(_one(store, way))
    keys = ("first s", "first CPU s", "tenth s", "copy made after s", "after copy s")
    rows = []
    for way, found in measured.items():

        def median(key: str, found: list[dict[str, float]] = found) -> float:
            return statistics.median(f[key] for f in found)

        rows.append(
            [
                way,
                *(f"{median(key):.3f}" for key in keys),
                report.ratio(median("first s"), median("tenth s")),
            ]
        )
    first = {way: statistics.median(f["first s"] for f in found) for way, found in measured.items()}
    explained = (
        f"Medians of {runs} run(s); one worker at the server's own priority; the anonymous "
        f"reader's dataset as `/sparql` gives it; SPARQL: `{SPARQL}`. The first answer, "
        f"export ÷ checkpoint: {report.ratio(first['export'], first['checkpoint'])}."
    )
    header = ("way", *keys, "first ÷ tenth")
    report.publish(
        "worker_start",
        "A query worker's first answers: an export loaded against a checkpoint read",
        [explained, report.table(header, rows, right=range(1, 7))],
        record=args.record,
        argv=argv,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
