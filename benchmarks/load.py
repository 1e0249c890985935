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

    python benchmarks/load.py --store DIR [--clients 16] [--seconds 60] [--hostile]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

import httpx

from benchmarks.core import ms, percentile, table
from benchmarks.endpoint import BenchError, free_port

OUT_FILE = Path(__file__).resolve().parent / "out" / "load.md"
MAX_ROWS = 1_000
MIX: tuple[tuple[str, str, dict[str, str], int], ...] = (
    ("why card", "/api/ask", {"q": "why does early data work this way?"}, 200),
    ("who to ask", "/api/ask", {"q": "who should I ask about key share?"}, 200),
    ("became", "/api/ask", {"q": "what did section 4.2.9 of draft-ietf-tls-tls13-21 become?"}, 200),
    ("unknown", "/api/ask", {"q": "how did the IESG vote on draft-ietf-tls-tls13?"}, 200),
    ("select", "/sparql", {"query": "SELECT ?s WHERE { ?s a ?t } LIMIT 10"}, 200),
    ("over limit", "/sparql", {"query": "SELECT * WHERE { ?s ?p ?o }"}, 422),
    ("update", "/sparql", {"update": "DROP ALL"}, 403),
)


def log(message: str) -> None:
    """Progress on stderr."""
    print(f"[load] {message}", file=sys.stderr, flush=True)


HOSTILE = "SELECT * WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i } ORDER BY ?a ?d ?g"


def rss_mib(pid: int) -> float:
    """Resident memory of process ``pid`` and its children (its query workers), Linux /proc."""
    total = 0.0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        pending += [int(child) for child in children]
    return total


def start_server(store: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``ratified serve`` on a free loopback port; returns once it answers."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ratified_rdf",
            "serve",
            "--store",
            str(store),
            "--port",
            str(port),
            "--max-rows",
            str(MAX_ROWS),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and server.poll() is None:
        try:
            if httpx.get(f"{base}/api/holdings", timeout=5).is_success:
                return server, base
        except httpx.HTTPError:
            time.sleep(0.2)
    server.kill()
    raise BenchError(f"ratified serve did not come up for {store}; is the store built?")


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
    parser.add_argument("--store", type=Path, required=True, help="a built brain")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--hostile", action="store_true", help="a second run with one hostile client beside"
    )
    args = parser.parse_args(argv)
    try:
        server, base = start_server(args.store)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        section, alone = run(base, server.pid, args.clients, args.seconds)
        if args.hostile:
            log("again, with one hostile client")
            attacked, under = run(base, server.pid, args.clients, args.seconds, hostile=True)
            ratios = table(
                ["call", "p99 alone ms", "p99 under attack ms", "ratio (target ≤ 3)"],
                [
                    [kind, ms(alone[kind]), ms(under[kind]), f"{under[kind] / alone[kind]:.2f}"]
                    for kind in alone
                    if kind in under
                ],
                right=(1, 2, 3),
            )
            section += f"\n\n{attacked}\n\n## p99 side by side\n\n{ratios}"
    finally:
        server.terminate()
        server.wait(timeout=60)
    report = f"# ratified-rdf endpoint under load\n\nStore: {args.store}\n\n{section}\n"
    print(report, end="")
    OUT_FILE.parent.mkdir(parents=True, exist_ok=True)
    OUT_FILE.write_text(report, encoding="utf-8")
    bad = "5xx: 0 " not in section or "unexpected status: 0." not in section
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
