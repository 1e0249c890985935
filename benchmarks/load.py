"""Load on the endpoint: N concurrent clients on loopback for a fixed time, against
``ratified serve`` in its own process.

Prints, side by side per kind of call: requests, throughput, p50/p99, status codes; the total
5xx count (target: zero); that updates and over-limit queries were refused cleanly under load;
and the server's resident memory sampled through the run (first, last, peak), to show whether
it stays flat. Stops by itself: bounded in time and in requests per client.

With ``--hostile`` the same run is made once alone and once under each attack of
:data:`ATTACKS`, in one invocation: one client sending the three-way cross join with ORDER BY
over and over (issue 18's exhaustion attack); eight slow readers, each from an address of its
own (127.0.0.11 to .18), streaming every triple at 100 bytes a second; eight heavy clients
(127.0.2.1 to .8) sending the heavy queries of issue 50 (a cross join with ORDER BY, a regular
expression over a join, a ``(<x>|!<x>)*`` path, 3,000-deep nesting, GROUP_CONCAT over a
join). The report gives, per attack, the normal clients' p99 (every call) under it over their
p99 alone (target: at most 3), each call's ratio, and the peak memory of the server with all
its query workers against the documented ceiling: the server and its workers at rest (after
the run alone) plus ``--query-memory-total``. Another attack (the MCP server's runaways, say)
is one more entry in :data:`ATTACKS`: a name and the functions its attacking clients run.

    python -m benchmarks.load --store DIR [--clients 16] [--seconds 60] [--hostile]
    python -m benchmarks.load --smoke [--hostile]     # the pigeon brain, 2 clients, 8 s

The report is Markdown on stdout and in ``benchmarks/out/load.md`` (with ``--record``, in
``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing
import queue
import socket
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx

from benchmarks import report
from benchmarks.core import pigeon_store
from benchmarks.endpoint import serve, stop
from benchmarks.report import BenchError, Row, ms, percentile, table

MAX_ROWS = 1_000
"""The server's row limit: the over-limit SELECT (every triple) must exceed it; the pigeon
brain of ``--smoke`` has fewer triples than this, so its server gets ``SMOKE_MAX_ROWS``."""
SMOKE_MAX_ROWS = 100
MIX: tuple[tuple[str, str, dict[str, str], int], ...] = (
    ("why card", "/api/ask", {"q": "why does early data work this way?"}, 200),
    ("who to ask", "/api/ask", {"q": "who should I ask about key share?"}, 200),
    ("became", "/api/ask", {"q": "what did section 4.2.9 of draft-ietf-tls-tls13-21 become?"}, 200),
    ("unknown", "/api/ask", {"q": "how did the IESG vote on draft-ietf-tls-tls13?"}, 200),
    ("select", "/sparql", {"query": "SELECT ?s WHERE { ?s a ?t } LIMIT 10"}, 200),
    # ORDER BY: a bare triple pattern would stream instead (up to --max-stream-rows).
    ("over limit", "/sparql", {"query": "SELECT * WHERE { ?s ?p ?o } ORDER BY ?s"}, 422),
    ("update", "/sparql", {"update": "DROP ALL"}, 403),
)


log = report.logger("load")
HOSTILE = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g"
HEAVY: tuple[tuple[str, str], ...] = (
    ("cross join, ORDER BY", HOSTILE),
    (
        "regex over a join",
        'SELECT * WHERE { ?a ?b ?c . ?d ?e ?f FILTER(REGEX(STR(?c), "(a+)+b")) }',
    ),
    ("path (<x>|!<x>)*", "SELECT * WHERE { ?s (<urn:x:p>|!<urn:x:p>)* ?o } ORDER BY ?s ?o"),
    ("nesting 3,000 deep", "SELECT * WHERE " + "{ " * 3_000 + "?s ?p ?o" + " }" * 3_000),
    ("GROUP_CONCAT", "SELECT (GROUP_CONCAT(STR(?c)) AS ?all) WHERE { ?a ?b ?c . ?d ?e ?f }"),
)
"""Issue 50's heavy queries, by name."""
EVERYTHING = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
SLOW_BYTES_S = 100
CEILING_MIB = 1_024
"""The server's --query-memory-total in these runs (its default, --query-memory's)."""

Record = Callable[[str, float, int], None]
"""How an attacking client reports one call: its kind, milliseconds, and status."""
Attacker = Callable[[str, float, Record], None]
"""One attacking client: the server's base URL, when to stop (``time.monotonic()``), and where
to record its calls."""


def _heavy(number: int) -> Attacker:
    def attack(base: str, stop: float, record: Record) -> None:
        kind, query = HEAVY[number % len(HEAVY)]
        local = httpx.HTTPTransport(local_address=f"127.0.2.{number + 1}")
        with httpx.Client(base_url=base, timeout=120, transport=local) as http:
            while time.monotonic() < stop:
                started = time.perf_counter()
                try:
                    code = http.post("/sparql", data={"query": query}).status_code
                except httpx.HTTPError:
                    code = 0
                record(kind, (time.perf_counter() - started) * 1000, code)

    return attack


def _slow_reader(number: int) -> Attacker:
    """A client from 127.0.0.(11 + number) that streams every triple, reading 100 bytes a
    second (with a small receive window, so the kernel does not read ahead for it) until the
    server cuts it off or the run ends, then asks again."""

    def attack(base: str, stop: float, record: Record) -> None:
        url = urlsplit(base)
        target = "/sparql?" + urlencode({"query": EVERYTHING})
        while time.monotonic() < stop:
            started = time.perf_counter()
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
            sock.settimeout(5)
            got = bytearray()
            try:
                sock.bind((f"127.0.0.{11 + number}", 0))
                sock.connect((url.hostname or "127.0.0.1", url.port or 80))
                sock.sendall(
                    f"GET {target} HTTP/1.1\r\nHost: {url.netloc}\r\n"
                    "Accept: application/sparql-results+json\r\n\r\n".encode()
                )
                while time.monotonic() < stop:
                    chunk = sock.recv(SLOW_BYTES_S)
                    if not chunk:
                        break
                    got += chunk
                    time.sleep(1)
            except OSError:
                pass
            finally:
                sock.close()
            status = int(got[9:12]) if got[9:12].isdigit() else 0
            # 200 read to its end, 499 for a 200 cut off (by the server, or the run's end).
            if status == 200 and not got.endswith(b"0\r\n\r\n"):
                status = 499
            record("slow reader", (time.perf_counter() - started) * 1000, status)

    return attack


def _hostile_join(base: str, stop: float, record: Record) -> None:
    local = httpx.HTTPTransport(local_address="127.0.2.100")
    with httpx.Client(base_url=base, timeout=120, transport=local) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            response = http.get("/sparql", params={"query": HOSTILE})
            record("hostile join", (time.perf_counter() - started) * 1000, response.status_code)


ATTACKS: dict[str, Callable[[], list[Attacker]]] = {
    "one hostile join": lambda: [_hostile_join],
    "8 slow readers": lambda: [_slow_reader(n) for n in range(8)],
    "8 heavy queries": lambda: [_heavy(n) for n in range(8)],
}
"""Each attack of ``--hostile``: its name, and the clients it runs beside the normal ones."""


def _attack(
    attack: str | None, base: str, stop: float, calls: multiprocessing.Queue[tuple[str, float, int]]
) -> None:
    """The attacking clients of ``attack``, each on a thread, until ``stop``; every call is
    put on ``calls``."""

    def record(kind: str, elapsed: float, code: int) -> None:
        calls.put((kind, elapsed, code))

    threads = [
        threading.Thread(target=attacker, args=(base, stop, record), daemon=True)
        for attacker in (ATTACKS[attack]() if attack else [])
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, stop - time.monotonic()) + 130)
    calls.close()
    calls.join_thread()


def rss_mib(pid: int) -> float:
    """Resident memory of the server and its query workers, MiB."""
    return report.rss_mib(pid, children=True) or 0.0


def run(
    base: str,
    pid: int,
    clients: int,
    seconds: float,
    attack: str | None = None,
) -> tuple[str, dict[str, list[float]], float]:
    """Drive the mix from ``clients`` threads for ``seconds`` (beside the clients of
    ``attack``, one of :data:`ATTACKS`); the report section, each call's times in ms, and the
    peak memory (MiB) of the server and its workers."""
    times: dict[str, list[float]] = defaultdict(list)
    codes: dict[str, Counter[int]] = defaultdict(Counter)
    wrong: Counter[str] = Counter()
    memory: list[float] = [rss_mib(pid)]
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(offset: int) -> None:
        # Each client from an address of its own on loopback (127.0.1.N), as distinct users
        # are to the server's fair share of query workers; the hostile client has its own.
        local = httpx.HTTPTransport(local_address=f"127.0.1.{offset % 250 + 1}")
        with httpx.Client(base_url=base, timeout=60, transport=local) as http:
            step = offset
            while time.monotonic() < stop and step < offset + 100_000:
                kind, path, params, expected = MIX[step % len(MIX)]
                step += 1
                started = time.perf_counter()
                if kind == "update":
                    response = http.post(path, data=params)
                else:
                    response = http.get(path, params=params, headers={"accept": "application/json"})
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    times[kind].append(elapsed)
                    codes[kind][response.status_code] += 1
                    if response.status_code != expected:
                        wrong[kind] += 1

    # The attackers run in a process of their own, so their threads do not compete for this
    # process's interpreter lock with the clients whose times are measured.
    calls: multiprocessing.Queue[tuple[str, float, int]] = multiprocessing.Queue()
    attackers = multiprocessing.get_context("fork").Process(
        target=_attack, args=(attack, base, stop, calls), daemon=True
    )
    if attack:
        attackers.start()
    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    for thread in threads:
        thread.start()
    hostile_times: dict[str, list[float]] = defaultdict(list)
    hostile_codes: dict[str, Counter[int]] = defaultdict(Counter)

    def drain() -> None:
        # Read as they come: a full pipe would keep the attackers' process from ending.
        with contextlib.suppress(queue.Empty):
            while True:
                kind, elapsed, code = calls.get(timeout=0.01)
                hostile_times[kind].append(elapsed)
                hostile_codes[kind][code] += 1

    while any(t.is_alive() for t in threads) or attackers.is_alive():
        time.sleep(1)
        drain()
        memory.append(rss_mib(pid))
        log(f"{sum(len(v) for v in times.values())} requests, server RSS {memory[-1]:.0f} MiB")
    drain()
    total = sum(len(v) for v in times.values())
    errors = sum(n for c in codes.values() for code, n in c.items() if code >= 500)
    rows = [
        [
            kind,
            f"{len(times[kind]):,}",
            f"{len(times[kind]) / seconds:.1f}",
            ms(statistics.median(times[kind])),
            ms(percentile(times[kind], 99)),
            ", ".join(f"{code}×{n}" for code, n in sorted(codes[kind].items())),
            str(wrong[kind]),
        ]
        for kind, *_ in MIX
        if times[kind]
    ]
    attacked = "".join(
        f" {kind}: {len(hostile_times[kind])} calls, status "
        + ", ".join(f"{code}×{n}" for code, n in sorted(hostile_codes[kind].items()))
        + "."
        for kind in sorted(hostile_times)
    )
    return (
        "\n".join(
            [
                f"## {clients} clients for {seconds:g} s" + (f" under {attack}" if attack else ""),
                "",
                f"{total:,} requests, {total / seconds:.1f} per second; 5xx: {errors} (target 0); "
                f"unexpected status: {sum(wrong.values())}. Server RSS: first {memory[0]:.0f} MiB, "
                f"last {memory[-1]:.0f} MiB, peak {max(memory):.0f} MiB (server and its query "
                f"workers).{' Attackers (499: a stream cut off):' if attacked else ''}{attacked}",
                "",
                table(
                    ["call", "requests", "per s", "p50 ms", "p99 ms", "status", "unexpected"],
                    rows,
                    right=(1, 2, 3, 4, 6),
                ),
            ]
        ),
        {kind: values for kind, values in times.items() if values},
        max(memory),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Serve, load, report; 1 if any 5xx or unexpected status, 2 on a setup problem."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--hostile", action="store_true", help="a second run with one hostile client beside"
    )
    report.options(parser, smoke="the pigeon brain, 2 clients for 8 s")
    args = report.parse(parser, argv)
    if args.smoke:
        args.clients, args.seconds = 2, 8.0
        with tempfile.TemporaryDirectory(prefix="rr-load-") as scratch:
            args.store = pigeon_store(Path(scratch))
            return load(args)
    if args.store is None:
        parser.error("--store is required (or --smoke)")
    return load(args)


def load(args: argparse.Namespace) -> int:
    """The runs on ``args.store`` and the report."""
    try:
        limit = SMOKE_MAX_ROWS if args.smoke else MAX_ROWS
        server, base = serve(args.store, ["--max-rows", str(limit)])
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        section, alone, _peak = run(base, server.pid, args.clients, args.seconds)
        at_rest = rss_mib(server.pid)
        runs = [section]
        sections = [f"Store: `{args.store}`", section]
        if args.hostile:
            summary: list[list[str]] = []
            for attack in ATTACKS:
                log(f"again, under {attack}")
                attacked, under, peak = run(
                    base, server.pid, args.clients, args.seconds, attack=attack
                )
                runs.append(attacked)
                rows = [
                    Row(kind, [percentile(alone[kind], 99), percentile(under[kind], 99)])
                    for kind in alone
                    if alone[kind] and under.get(kind)
                ]
                ratios = report.side_by_side("call", ["p99 alone", f"p99 under {attack}"], rows)
                sections += [attacked, f"### Each call's p99, alone and under {attack}\n\n{ratios}"]
                every_alone = percentile([t for v in alone.values() for t in v], 99)
                every_under = percentile([t for v in under.values() for t in v], 99)
                summary.append(
                    [
                        attack,
                        ms(every_alone),
                        ms(every_under),
                        f"{every_under / every_alone:.1f}",
                        f"{peak:,.0f}",
                        f"{at_rest + CEILING_MIB:,.0f}",
                    ]
                )
            header = ["attack", "p99 alone ms", "p99 under it ms", "ratio (target ≤ 3)"]
            header += ["peak MiB", "ceiling MiB"]
            sections.insert(
                1,
                "## The normal clients under each attack\n\n"
                + table(header, summary, right=(1, 2, 3, 4, 5))
                + f"\n\nCeiling: the server and its workers at rest ({at_rest:,.0f} MiB, after "
                f"the run alone) plus --query-memory-total ({CEILING_MIB:,} MiB).",
            )
    finally:
        stop(server)
    report.publish("load", "ratified-rdf endpoint under load", sections, record=args.record)
    bad = any("5xx: 0 " not in s or "unexpected status: 0." not in s for s in runs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
