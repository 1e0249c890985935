"""Load on the endpoint: N concurrent clients on loopback for a fixed time, against
``ratified serve`` in its own process.

Prints, side by side per kind of call: requests, throughput, p50/p99, status codes; the total
5xx count (target: zero); that updates and over-limit queries were refused cleanly under load;
and the server's resident memory sampled through the run (first, last, peak), to show whether
it stays flat. Stops by itself: bounded in time and in requests per client.

With ``--hostile`` the same run is made twice in one invocation, side by side: first the
clients alone, then the clients plus one hostile client that sends the three-way cross join
with ORDER BY (issue 18's exhaustion attack) over and over; the report gives each call's p99
under attack over its p99 alone, and the peak memory of the server with its query workers.

    python -m benchmarks.load --store DIR [--clients 16] [--seconds 60] [--hostile]
    python -m benchmarks.load --smoke [--hostile]     # the pigeon brain, 2 clients, 8 s

The report is Markdown on stdout and in ``benchmarks/out/load.md`` (with ``--record``, in
``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

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


def rss_mib(pid: int) -> float:
    """Resident memory of the server and its query workers, MiB."""
    return report.rss_mib(pid, children=True) or 0.0


def run(
    base: str, pid: int, clients: int, seconds: float, hostile: bool = False
) -> tuple[str, dict[str, float]]:
    """Drive the mix from ``clients`` threads for ``seconds`` (plus the hostile client when
    asked); the report section and each call's p99 in ms."""
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

    def attacker() -> None:
        local = httpx.HTTPTransport(local_address="127.0.2.1")
        with httpx.Client(base_url=base, timeout=120, transport=local) as http:
            while time.monotonic() < stop:
                started = time.perf_counter()
                response = http.get("/sparql", params={"query": HOSTILE})
                with lock:
                    times["hostile join"].append((time.perf_counter() - started) * 1000)
                    codes["hostile join"][response.status_code] += 1

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(clients)]
    if hostile:
        threads.append(threading.Thread(target=attacker, daemon=True))
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        time.sleep(1)
        memory.append(rss_mib(pid))
        log(f"{sum(len(v) for v in times.values())} requests, server RSS {memory[-1]:.0f} MiB")
    hostile_calls = times.pop("hostile join", [])
    hostile_codes = codes.pop("hostile join", Counter())
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
    attack = (
        f" Hostile client: {len(hostile_calls)} joins, status "
        + ", ".join(f"{code}×{n}" for code, n in sorted(hostile_codes.items()))
        + "."
        if hostile
        else ""
    )
    p99 = {kind: percentile(values, 99) for kind, values in times.items() if values}
    return "\n".join(
        [
            f"## {clients} clients for {seconds:g} s"
            + (" plus one hostile client" if hostile else ""),
            "",
            f"{total:,} requests, {total / seconds:.1f} per second; 5xx: {errors} (target 0); "
            f"unexpected status: {sum(wrong.values())}. Server RSS: first {memory[0]:.0f} MiB, "
            f"last {memory[-1]:.0f} MiB, peak {max(memory):.0f} MiB (server and its query "
            f"workers).{attack}",
            "",
            table(
                ["call", "requests", "per s", "p50 ms", "p99 ms", "status", "unexpected"],
                rows,
                right=(1, 2, 3, 4, 6),
            ),
        ]
    ), p99


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
        section, alone = run(base, server.pid, args.clients, args.seconds)
        runs = [section]
        sections = [f"Store: `{args.store}`", section]
        if args.hostile:
            log("again, with one hostile client")
            attacked, under = run(base, server.pid, args.clients, args.seconds, hostile=True)
            runs.append(attacked)
            rows = [Row(kind, [alone[kind], under[kind]]) for kind in alone if kind in under]
            ratios = report.side_by_side("call", ["p99 alone", "p99 under attack"], rows)
            sections += [attacked, f"## p99 side by side (target: ratio ≤ 3)\n\n{ratios}"]
    finally:
        stop(server)
    report.publish("load", "ratified-rdf endpoint under load", sections, record=args.record)
    bad = any("5xx: 0 " not in s or "unexpected status: 0." not in s for s in runs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
