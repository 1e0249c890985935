"""Endpoint benchmark: the card questions and their SPARQL over HTTP vs in-process.

Run from the repository root with a brain already built::

    python -m benchmarks.endpoint --store DIR [--runs N] [--requests N] [--concurrency N]
    python -m benchmarks.endpoint --smoke      # the pigeon brain, 2 runs, 8 requests

Build one first with ``ratified build records/tls13 --source
../shared/corpus/tls13-spec/tls13-spec.bundle --store DIR``.

It measures, one target after the other on the same store (an embedded store is opened by one
process at a time):

1. **embedded**: ``Brain.ask`` for the four example questions and ``Brain.query`` for every
   distinct SPARQL text their cards ran (``answer.queries``), in this process.
2. **http**: the same calls to ``ratified serve`` started as a subprocess on a free loopback
   port: ``GET /api/ask?q=…`` and ``POST /sparql`` (form, JSON results), with keep-alive.

For each call: ``--runs`` timed runs after 5 warm-ups, median (p50) and p99 (nearest-rank;
with fewer than 100 runs that is the slowest). Then throughput: ``--requests`` calls (the
questions, or the queries, round-robin) from ``--concurrency`` client threads at once.
Row counts over HTTP are checked against the embedded store before anything is timed; a
difference prints ``MISMATCH`` and exits with status 1. Nothing here asserts on timings.

Targets are columns (embedded, http, and an ``oxigraph serve`` holding the same graphs): another
is one more class with ``ask``/``sparql``/``rows``/``close`` and one more entry in ``TARGETS``.

The report is Markdown on stdout, also written to ``benchmarks/out/endpoint.md`` (with
``--record``, to ``benchmarks/RESULTS.md``); progress goes to stderr. Exit status: 0 on
success, 1 on a row mismatch, 2 when the store is unusable or the server does not start.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Protocol

import httpx
import pyoxigraph
import starlette
import uvicorn

from benchmarks import report
from benchmarks.core import pigeon_store
from benchmarks.report import BenchError, Row
from ratified_rdf import Brain, BrainError
from ratified_rdf.audit import AuditLog
from ratified_rdf.graph.remote import SparqlProtocolStore
from ratified_rdf.graph.store import StoreError

QUESTIONS: tuple[str, ...] = (
    "why does early data work this way?",
    "who should I ask about key share?",
    "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
    "how did the IESG vote on draft-ietf-tls-tls13?",
)
WARMUP = 5
STARTUP_S = 120.0


log = report.logger("endpoint")


# --- targets -------------------------------------------------------------------------------


class Target(Protocol):
    """One way to reach the brain: every call returns once the full answer is in hand."""

    name: str

    def ask(self, question: str) -> None:
        """Answer a question in words."""
        ...

    def sparql(self, query: str) -> None:
        """Run a SELECT and receive every row."""
        ...

    def rows(self, query: str) -> int:
        """Run a SELECT and count its rows (for the check before timing)."""
        ...

    def close(self) -> None:
        """Release what the target holds."""
        ...


class Embedded:
    """The brain in this process: ``Brain.ask`` and ``Brain.query``."""

    name = "embedded"

    def __init__(self, store: Path) -> None:
        self.brain = open_brain(store)

    def ask(self, question: str) -> None:
        """``Brain.ask``."""
        self.brain.ask(question)

    def sparql(self, query: str) -> None:
        """``Brain.query`` (evaluates and reads every row)."""
        self.brain.query(query)

    def rows(self, query: str) -> int:
        """Rows ``Brain.query`` returns."""
        return len(self.brain.query(query).rows)

    def close(self) -> None:
        """Close the store so another process can open it."""
        self.brain.close()
        del self.brain
        gc.collect()


def serve(
    store: Path, options: Sequence[str] = (), output: IO[bytes] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """``ratified serve`` over ``store`` on a free loopback port, in a process of its own
    (its output to ``output``, a named file, or nowhere); returns once ``/api/holdings``
    answers, with the base URL."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "ratified_rdf", "serve", "--store", str(store)]
    process = subprocess.Popen(
        [*command, "--port", str(port), *options],
        stdout=output or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if output else subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"{base}/api/holdings", timeout=5).status_code == 200:
                return process, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    stop(process)
    said = "is the store built?"
    if output is not None:
        output.flush()
        text = Path(output.name).read_text(encoding="utf-8", errors="replace")
        said = "its log ends with:\n" + "\n".join(text.splitlines()[-20:])
    raise BenchError(f"ratified serve did not start within {STARTUP_S:.0f} s for {store}; {said}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server (kill it, only it, if it does not stop)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Http:
    """``ratified serve`` in a subprocess, reached over loopback HTTP with keep-alive."""

    name = "http"

    def __init__(self, store: Path) -> None:
        self.log_file = tempfile.NamedTemporaryFile(prefix="rr-serve-", suffix=".log")  # noqa: SIM115
        options = ["--query-timeout", "60", "--max-rows", "1000000"]
        try:
            self.process, self.base = serve(store, options, self.log_file)
        except BenchError:
            self.log_file.close()
            raise
        self._local = threading.local()
        self._clients: list[httpx.Client] = []
        self._lock = threading.Lock()

    @property
    def _client(self) -> httpx.Client:
        client: httpx.Client | None = getattr(self._local, "client", None)
        if client is None:
            client = httpx.Client(base_url=self.base, timeout=120)
            self._local.client = client
            with self._lock:
                self._clients.append(client)
        return client

    def _get(self, response: httpx.Response) -> httpx.Response:
        if response.status_code != 200:
            raise BenchError(
                f"{response.request.method} {response.request.url.path} answered "
                f"{response.status_code}: {response.text[:300]}"
            )
        return response

    def ask(self, question: str) -> None:
        """``GET /api/ask?q=…``, body read."""
        self._get(self._client.get("/api/ask", params={"q": question}))

    def sparql(self, query: str) -> None:
        """``POST /sparql`` as a form, JSON results, body read."""
        self._get(
            self._client.post(
                "/sparql",
                data={"query": query},
                headers={"Accept": "application/sparql-results+json"},
            )
        )

    def rows(self, query: str) -> int:
        """Bindings in the JSON results."""
        response = self._get(
            self._client.post(
                "/sparql",
                data={"query": query},
                headers={"Accept": "application/sparql-results+json"},
            )
        )
        return len(response.json()["results"]["bindings"])

    def close(self) -> None:
        """Close the clients and stop the server."""
        for client in self._clients:
            client.close()
        stop(self.process)
        self.log_file.close()


class OxigraphServer:
    """The same graphs loaded into an ``oxigraph serve`` (PyPI's oxigraph) on loopback, read
    through the library's remote store: the answers' SPARQL over the Protocol, and whole
    answers by a brain on that store."""

    name = "oxigraph-server"

    def __init__(self, store: Path) -> None:
        binary = shutil.which("oxigraph")
        if binary is None:
            raise BenchError("The oxigraph server command is missing: pip install oxigraph.")
        self.folder = tempfile.TemporaryDirectory(prefix="rr-oxigraph-")
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen(
            [binary, "serve", "--location", self.folder.name, "--bind", f"127.0.0.1:{port}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.base}/query", params={"query": "ASK {}"}).is_success:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise BenchError(f"oxigraph serve did not come up at {self.base}.")
            time.sleep(0.1)
        # Load exactly the graphs the embedded brain reads, with their names.
        with open_brain(store) as local:
            dump = io.BytesIO()
            local.dump(dump, pyoxigraph.RdfFormat.N_QUADS)
            self.graphs = list(local.read_graphs)
        log(f"{self.name}: loading {len(dump.getvalue()) / 1e6:.0f} MB of N-Quads")
        httpx.post(
            f"{self.base}/store",
            content=dump.getvalue(),
            headers={"Content-Type": "application/n-quads"},
            timeout=600,
        ).raise_for_status()
        self.remote = SparqlProtocolStore.oxigraph(self.base)
        # Audited like the other two targets, in a log of its own.
        self.log = AuditLog.open(Path(self.folder.name) / "audit")
        self.brain = Brain.from_store(self.remote, audit=self.log)

    def ask(self, question: str) -> None:
        """``Brain.ask`` on the server-backed store (several HTTP queries per answer)."""
        self.brain.ask(question)

    def sparql(self, query: str) -> None:
        """One query over the Protocol, over the same graphs, every row read."""
        self.remote.query(query, self.graphs)

    def rows(self, query: str) -> int:
        """Rows the server returns."""
        return len(self.remote.query(query, self.graphs).rows)

    def close(self) -> None:
        """Stop the server and drop its folder."""
        self.log.close()
        self.remote.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        self.folder.cleanup()


TARGETS: tuple[Callable[[Path], Target], ...] = (Embedded, Http, OxigraphServer)
"""Measured in this order; the first is the baseline every ratio is taken against."""


def open_brain(store: Path) -> Brain:
    """The brain in ``store``, or a sentence saying how to build one."""
    if not store.is_dir() or not any(store.iterdir()):
        raise BenchError(
            f"There is no brain in {store}. Build one first: ratified build records/tls13 "
            f"--source ../shared/corpus/tls13-spec/tls13-spec.bundle --store {store}"
        )
    try:
        return Brain.open(store)
    except (BrainError, StoreError) as error:
        raise BenchError(str(error)) from None


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def started(make: Callable[[Path], Target], store: Path) -> Iterator[Target]:
    """A target, closed afterwards whatever happens."""
    target = make(store)
    try:
        yield target
    finally:
        target.close()


# --- workload and measurement ----------------------------------------------------------------


@dataclass(frozen=True)
class CardQuery:
    """One distinct SPARQL text a card ran: its name, the parameters bound into it (shortened
    to tell apart runs of one query), and the embedded row count."""

    name: str
    sparql: str
    rows: int
    params: str


@dataclass
class Timings:
    """Per call: milliseconds of each timed run, by target name."""

    label: str
    detail: str
    runs: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class Throughput:
    """Calls per second of one workload under concurrency, by target name."""

    label: str
    per_second: dict[str, float] = field(default_factory=dict)


def card_queries(store: Path) -> tuple[list[CardQuery], dict[str, str]]:
    """Every distinct SPARQL text the questions' cards ran, with the embedded row count, and
    each question's verdict."""
    brain = open_brain(store)
    try:
        seen: dict[str, CardQuery] = {}
        verdicts = {}
        for question in QUESTIONS:
            answer = brain.ask(question)
            verdicts[question] = answer.verdict.value
            for run in answer.queries:
                if run.sparql not in seen:
                    rows = len(brain.query(run.sparql).rows)
                    params = ", ".join(f"{k}={short(v)}" for k, v in run.params.items())
                    seen[run.sparql] = CardQuery(run.name, run.sparql, rows, params)
        return list(seen.values()), verdicts
    finally:
        brain.close()
        del brain
        gc.collect()


def short(value: str) -> str:
    """A parameter value cut to what tells runs apart: an IRI's last segments."""
    text = "/".join(value.split("/")[-2:]) if value.startswith("http") else value
    return text if len(text) <= 28 else text[:27] + "…"


def time_call(call: Callable[[], None], runs: int) -> list[float]:
    """Milliseconds of ``runs`` calls after the warm-up."""
    for _ in range(WARMUP):
        call()
    out = []
    for _ in range(runs):
        started_at = time.perf_counter()
        call()
        out.append((time.perf_counter() - started_at) * 1000)
    return out


def throughput(calls: Sequence[Callable[[], None]], requests: int, concurrency: int) -> float:
    """Calls per second: ``requests`` calls taken round-robin from ``calls`` by
    ``concurrency`` threads sharing one counter."""
    lock = threading.Lock()
    issued = 0
    errors: list[BaseException] = []

    def worker() -> None:
        nonlocal issued
        while True:
            with lock:
                if issued >= requests or errors:
                    return
                index = issued
                issued += 1
            try:
                calls[index % len(calls)]()
            except BaseException as error:
                errors.append(error)
                return

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    started_at = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started_at
    if errors:
        raise errors[0]
    return requests / elapsed


def check_rows(target: Target, queries: Sequence[CardQuery]) -> list[str]:
    """Lines saying where ``target`` disagrees with the embedded row counts."""
    mismatches = []
    for query in queries:
        got = target.rows(query.sparql)
        if got != query.rows:
            mismatches.append(
                f"MISMATCH: {query.name} returned {query.rows} row(s) embedded but {got} "
                f"through {target.name} for the same SPARQL."
            )
    return mismatches


def measure(
    target: Target,
    queries: Sequence[CardQuery],
    questions: dict[str, Timings],
    sparql: dict[str, Timings],
    rates: dict[str, Throughput],
    args: argparse.Namespace,
) -> None:
    """Time every question and query on ``target``, then its throughput."""
    for question in QUESTIONS:
        log(f"{target.name}: asking {question!r} ({WARMUP} warm-up + {args.runs} runs)")
        questions[question].runs[target.name] = time_call(
            lambda q=question: target.ask(q), args.runs
        )
    for query in queries:
        log(f"{target.name}: {query.name} ({WARMUP} warm-up + {args.runs} runs)")
        sparql[query.sparql].runs[target.name] = time_call(
            lambda s=query.sparql: target.sparql(s), args.runs
        )
    log(f"{target.name}: throughput, {args.requests} calls from {args.concurrency} threads")
    rates["questions"].per_second[target.name] = throughput(
        [lambda q=q: target.ask(q) for q in QUESTIONS], args.requests, args.concurrency
    )
    rates["queries"].per_second[target.name] = throughput(
        [lambda s=q.sparql: target.sparql(s) for q in queries], args.requests, args.concurrency
    )


# --- report --------------------------------------------------------------------------------


def latency_section(title: str, note: str, rows: Sequence[Timings], names: Sequence[str]) -> str:
    """One row per call: p50 / p99 per target, and each target's p50 over the baseline's."""
    compared = [Row([t.label, t.detail], [t.runs.get(name) for name in names]) for t in rows]
    return "\n".join(
        [title, "", note, "", report.side_by_side(["call", "detail"], names, compared)]
    )


def throughput_section(
    rates: dict[str, Throughput], names: Sequence[str], args: argparse.Namespace
) -> str:
    """Calls per second per target, and each target's rate over the baseline's."""
    compared = [Row(r.label, [r.per_second.get(n) for n in names]) for r in rates.values()]
    return "\n".join(
        [
            "## Throughput",
            "",
            f"{args.requests} calls per workload, round-robin over its calls, from "
            f"{args.concurrency} client threads at once (server and clients share the machine's "
            f"{os.cpu_count()} CPU(s)).",
            "",
            report.side_by_side(
                "workload", names, compared, unit="calls/s", number=lambda v: f"{v:,.1f}"
            ),
        ]
    )


def data_section(store: Path, queries: int) -> str:
    """Over which brain the benchmark ran, and what each target is."""
    return (
        f"Store `{store}`; {len(QUESTIONS)} example questions and the {queries} distinct "
        "SPARQL texts their cards ran. **embedded** is `Brain.ask` / `Brain.query` in this "
        "process; **http** is `ratified serve` in a subprocess: `GET /api/ask` (the answer "
        "as JSON) and `POST /sparql` (a form, JSON results), over loopback with keep-alive, "
        "timed until the whole body is read; **oxigraph-server** is `oxigraph serve` holding "
        "the same graphs, read through the library's remote store."
    )


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store", type=Path, default=Path("brain"), help="a store folder holding a built brain"
    )
    parser.add_argument("--runs", type=int, default=50, help="timed runs per call (50)")
    parser.add_argument(
        "--requests", type=int, default=200, help="calls per throughput workload (200)"
    )
    parser.add_argument("--concurrency", type=int, default=4, help="client threads (4)")
    report.options(parser, smoke="the pigeon brain, 2 runs, 8 requests from 2 threads")
    args = report.parse(parser, argv)
    for name in ("runs", "requests", "concurrency"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.smoke:
        args.runs, args.requests, args.concurrency = 2, 8, 2
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Measure every target and print the report; 1 on a row mismatch, 2 on a setup problem."""
    args = parse_args(argv)
    if not args.smoke:
        return measure_all(args)
    with tempfile.TemporaryDirectory(prefix="rr-endpoint-") as scratch:
        args.store = pigeon_store(Path(scratch))
        return measure_all(args)


def measure_all(args: argparse.Namespace) -> int:
    """Every target on ``args.store``, then the report."""
    try:
        log(f"reading the card queries from {args.store}")
        queries, verdicts = card_queries(args.store)
        questions = {q: Timings(q, verdicts[q]) for q in QUESTIONS}
        sparql = {
            q.sparql: Timings(q.name, f"{q.rows} rows" + (f"; {q.params}" if q.params else ""))
            for q in queries
        }
        rates = {
            "questions": Throughput(f"the {len(QUESTIONS)} questions (ask)"),
            "queries": Throughput(f"the {len(queries)} card queries (SPARQL)"),
        }
        names = []
        for make in TARGETS:
            with started(make, args.store) as target:
                log(f"{target.name}: checking row counts")
                mismatches = check_rows(target, queries)
                if mismatches:
                    print("\n".join(mismatches))
                    print(
                        f"error: {target.name} and the embedded store disagree on row counts, "
                        "so no timing is compared.",
                        file=sys.stderr,
                    )
                    return 1
                names.append(target.name)
                measure(target, queries, questions, sparql, rates, args)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    note = (
        f"{WARMUP} warm-up runs, then {args.runs} timed runs per call; each cell is p50 / p99, "
        "p99 nearest-rank (the slowest run when there are fewer than 100); ratios of p50s."
    )
    sections = [
        data_section(args.store, len(queries)),
        latency_section(
            "## Questions: `/api/ask` vs `Brain.ask`", note, list(questions.values()), names
        ),
        latency_section(
            "## Card queries: `/sparql` vs `Brain.query`", note, list(sparql.values()), names
        ),
        throughput_section(rates, names, args),
    ]
    versions = {"Starlette": starlette.__version__, "uvicorn": uvicorn.__version__}
    title = "ratified-rdf endpoint benchmark"
    report.publish("endpoint", title, sections, extra=versions, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
