"""How soon ``ratified serve`` answers after it starts, and its first answers against its tenth.

Run from the repository root::

    python -m benchmarks.serve_start --store /tmp/brain-tls [--before b03276e] [--runs 2]
    python -m benchmarks.serve_start --smoke      # the pigeon brain, this checkout, one run

Each run starts ``python -m ratified_rdf serve`` on a free loopback port (with ``--before``,
each tree in turn, the earlier first, with its ``src`` first on ``PYTHONPATH``), asks
``/health`` every 20 ms until it answers, then at once sends ten ``/api/ask`` of one question
and ten ``/sparql`` of one query, one after another. It reports when the server first
answered ``/health``, when the first ``/api/ask`` and the first ``/sparql`` were answered
(seconds since the process started), how long the first and the tenth of each took, and the
first over the tenth, and the CPU seconds the server and its query workers had used when the
first ``/sparql`` was answered (from ``/proc``: on a busy machine, where the workers' low
priority makes them wait for the processors, this is the work done before that answer, which
wall times no longer show). Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from benchmarks import report
from benchmarks.ask_tail import _cpu_s
from benchmarks.core import pigeon_store
from benchmarks.endpoint import free_port, stop
from benchmarks.report import BenchError

log = report.logger("serve_start")
QUESTION = "history of RFC 8446 section 4.2.10"
PIGEON_QUESTION = "history of RFC 9999 section 3.1"
SPARQL = (
    "PREFIX dcterms: <http://purl.org/dc/terms/> "
    "SELECT ?section ?title WHERE { ?section dcterms:title ?title } ORDER BY ?section LIMIT 50"
)
TIMES = 10
WAIT_S = 300.0


def _one(tree: Path, store: Path, question: str) -> dict[str, float]:
    """Start a server with ``tree``'s code, time what the module docstring says, stop it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    command = [sys.executable, "-m", "ratified_rdf", "serve", "--store", str(store)]
    started = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    found: dict[str, float] = {}
    try:
        with httpx.Client(timeout=WAIT_S) as client:
            while True:
                if process.poll() is not None:
                    raise BenchError(f"ratified serve with {tree} ended (exit {process.poll()})")
                if time.perf_counter() - started > WAIT_S:
                    raise BenchError(f"ratified serve with {tree} did not answer /health")
                try:
                    if client.get(f"{base}/health").status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                time.sleep(0.02)
            found["health"] = time.perf_counter() - started
            for kind, url, params in (
                ("ask", f"{base}/api/ask", {"q": question}),
                ("sparql", f"{base}/sparql", {"query": SPARQL}),
            ):
                took: list[float] = []
                found[f"{kind} refused"] = 0
                while len(took) < TIMES:
                    asked = time.perf_counter()
                    response = client.get(url, params=params)
                    if response.status_code == 503 and time.perf_counter() - started < WAIT_S:
                        found[f"{kind} refused"] += 1  # "try again": the client does
                        continue
                    if response.status_code != 200:
                        raise BenchError(
                            f"{url} (with {tree}) gave {response.status_code}: {response.text}"
                        )
                    took.append(time.perf_counter() - asked)
                    if len(took) == 1:
                        found[f"{kind} answered"] = time.perf_counter() - started
                        found[f"{kind} cpu"] = _cpu_s(process.pid)
                found[f"{kind} first"], found[f"{kind} tenth"] = took[0], took[-1]
    finally:
        stop(process)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    """Start servers, time them; print the report (2 when a server fails)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain's folder (the TLS brain)")
    parser.add_argument("--before", help="an earlier commit to compare with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--question", default=QUESTION)
    report.options(parser, smoke="the pigeon brain, this checkout, one run")
    args = report.parse(parser, argv)
    if args.smoke:
        store = pigeon_store(Path(tempfile.mkdtemp(prefix="rr-serve-start-")))
        runs, before, question = 1, None, PIGEON_QUESTION
    else:
        if args.store is None:
            parser.error("give --store (a built brain's folder)")
        store, runs, before, question = args.store, args.runs, args.before, args.question
    measured: dict[str, list[dict[str, float]]] = {}
    try:
        if before is None:
            for run in range(runs):
                log(f"run {run + 1}/{runs}")
                measured.setdefault("this checkout", []).append(_one(report.REPO, store, question))
        else:
            with report.checkout(before) as earlier:
                trees = {f"before ({before})": earlier, "after": report.REPO}
                for run in range(runs):
                    log(f"run {run + 1}/{runs}")
                    for name, tree in trees.items():
                        measured.setdefault(name, []).append(_one(tree, store, question))
    except BenchError as error:
        print(error, file=sys.stderr)
        return 2
    keys = (
        "health",
        "ask answered",
        "sparql answered",
        "ask first",
        "ask tenth",
        "sparql first",
        "sparql tenth",
    )
    rows = []
    for name, found in measured.items():

        def median(key: str, found: list[dict[str, float]] = found) -> float:
            return statistics.median(f[key] for f in found)

        rows.append(
            [
                name,
                *(f"{median(key):.3f}" for key in keys),
                report.ratio(median("ask first"), median("ask tenth")),
                report.ratio(median("sparql first"), median("sparql tenth")),
                f"{median('ask refused'):g} / {median('sparql refused'):g}",
                f"{median('sparql cpu'):.2f}",
                f"{os.getloadavg()[0]:.1f}" if name == list(measured)[-1] else "",
            ]
        )
    header = (
        "",
        "/health s",
        "first /api/ask answered s",
        "first /sparql answered s",
        "/api/ask first s",
        "tenth s",
        "/sparql first s",
        "tenth s",
        "ask first ÷ tenth",
        "sparql first ÷ tenth",
        "503s before the first answer (ask / sparql)",
        "server + workers CPU s at the first /sparql answer",
        "load average at the end",
    )
    explained = (
        f"Medians of {runs} run(s); seconds since the server process started for the first "
        f"three columns (a 503 saying to try again is retried at once, and counted), each "
        f"successful request's own time after. Question: {question!r}; SPARQL: "
        f"`{SPARQL}`."
    )
    report.publish(
        "serve_start",
        "`ratified serve`: ready, first answers, first against tenth",
        [explained, report.table(header, rows, right=range(1, 13))],
        record=args.record,
        argv=argv,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
