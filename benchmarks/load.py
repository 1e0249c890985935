"""Load on the endpoint: N concurrent clients on loopback for a fixed time, against
``ratified serve`` in its own process.

Prints, side by side per kind of call: requests, throughput, p50/p99, status codes; the total
5xx count (target: zero); that updates and over-limit queries were refused cleanly under load;
and the server's resident memory sampled through the run (first, last, peak), to show whether
it stays flat. Stops by itself: bounded in time and in requests per client.

With ``--hostile`` the same run is made once alone and once under each attack of
:data:`ATTACKS`, in one invocation (after a short warm-up that is not reported): one client
sending the three-way cross join with ORDER BY over and over (issue 18's exhaustion attack);
eight slow readers, each from an address of its own (127.0.0.11 to .18), streaming every
triple at 100 bytes a second; eight heavy clients (127.0.2.1 to .8) sending the heavy queries
of issue 50 (a cross join with ORDER BY, a regular expression over a join, a ``(<x>|!<x>)*``
path, 3,000-deep nesting, GROUP_CONCAT over a join); and an agent running ``ratified mcp`` on
the same brain, keeping two runaway ``sparql`` calls going and cancelling every other one.
Attacking clients are set up (the MCP server started) before the run's clock starts. One
table gives, per attack, the normal clients' p99 (every call) under it over their p99 alone
(target: at most 3), the same ratio for the call that runs no query (what the machine's load
does to any call), the CPU seconds of the server, its query workers and the attackers' own
processes, and the peak memory of the server with all its query workers against the
documented ceiling (the server and its workers at rest, after the run alone, plus
``--query-memory-total``), and of the MCP server with its workers against its own. Another
attack is one more entry in :data:`ATTACKS`: a name and the clients it runs.

    python -m benchmarks.load --store DIR [--clients 16] [--seconds 60] [--hostile]
        [--attacks "8 heavy queries,MCP runaways"]
    python -m benchmarks.load --smoke [--hostile]     # the pigeon brain, 2 clients, 8 s
    python -m benchmarks.load --smoke --hostile --before 6e1be5c --runs 3

With ``--before REV`` the whole sequence (a server, the warm-up, the run alone, the attacks)
is made ``--runs`` times for that commit's tree and for this checkout in turn (before, after,
before, …, on the same brain), so both see the same machine; one table gives every run's
ratios beside the load average at its start, and another the median ratio of each attack
for each tree.

The report is Markdown on stdout and in ``benchmarks/out/load.md`` (with ``--record``, in
``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import queue
import select
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
    # DISTINCT: a bare triple pattern would stream instead (up to --max-stream-rows). Not
    # ORDER BY, which sorts every triple before the first row: on the TLS brain more than the
    # server's --query-timeout, so the call met its deadline alone too and said nothing.
    ("over limit", "/sparql", {"query": "SELECT DISTINCT * WHERE { ?s ?p ?o }"}, 422),
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
NO_QUERY = "update"
"""The call of the mix that runs no query (refused as it comes)."""
WARM_UP_S = 4.0
"""The unreported run before the one alone (``--warm-up`` gives a longer one: on the TLS
brain the workers' first loads and copies in memory outlast it, and the run alone then held
them, slower than any attack's run)."""
CEILING_MIB = 1_024
"""The server's --query-memory-total in these runs (its default, --query-memory's)."""

MCP_IN_FLIGHT = 2
"""Runaway ``sparql`` calls the MCP agent keeps running at once (``ratified mcp``'s workers)."""
MCP_CANCEL_S = 2.0
"""How long the MCP agent lets every other runaway call run before it cancels it (the others
run to the MCP server's deadline or memory ceiling)."""
MCP_MIB = 1_024
"""``ratified mcp``'s --query-memory in these runs (its default), which bounds all its
workers together too."""

Record = Callable[[str, float, int], None]
"""How an attacking client reports one call: its kind, milliseconds, and status."""


@dataclass
class Start:
    """What an attacking client is given: the server's base URL, the brain's folder, and
    :meth:`ready` to call once it is set up (a client that starts a process of its own is
    ready once that process serves), which waits for the run's start."""

    base: str
    store: Path
    _ready: threading.Barrier
    _go: threading.Barrier
    _stop: list[float]

    def ready(self) -> float:
        """Wait until every attacking client is ready and the run starts; when it stops
        (``time.monotonic()``, the same clock in every process)."""
        self._ready.wait()
        self._go.wait()
        return self._stop[0]


Attacker = Callable[[Start, Record], None]
"""One attacking client: where to attack (and :meth:`Start.ready`, which says when to stop),
and where to record its calls."""
READY_S = 300.0
"""How long the attacking clients may take to be ready."""


def _heavy(number: int) -> Attacker:
    def attack(start: Start, record: Record) -> None:
        kind, query = HEAVY[number % len(HEAVY)]
        local = httpx.HTTPTransport(local_address=f"127.0.2.{number + 1}")
        stop = start.ready()
        with httpx.Client(base_url=start.base, timeout=120, transport=local) as http:
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

    def attack(start: Start, record: Record) -> None:
        url = urlsplit(start.base)
        target = "/sparql?" + urlencode({"query": EVERYTHING})
        stop = start.ready()
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


def _hostile_join(start: Start, record: Record) -> None:
    local = httpx.HTTPTransport(local_address="127.0.2.100")
    stop = start.ready()
    with httpx.Client(base_url=start.base, timeout=120, transport=local) as http:
        while time.monotonic() < stop:
            started = time.perf_counter()
            response = http.get("/sparql", params={"query": HOSTILE})
            record("hostile join", (time.perf_counter() - started) * 1000, response.status_code)


def _mcp_runaways(store: Path) -> Attacker:
    """An agent that starts ``ratified mcp`` on the same brain (stdio, as an agent's client
    does) and keeps :data:`MCP_IN_FLIGHT` runaway ``sparql`` calls running (the sorted cross
    join): every other one it cancels after :data:`MCP_CANCEL_S`, the rest run until the MCP
    server ends them. Calls are recorded as 200 (answered), 503 (ended by the MCP server) or
    499 (cancelled). It is ready once the MCP server has answered the handshake."""

    def attack(start: Start, record: Record) -> None:
        command = [sys.executable, "-m", "ratified_rdf", "mcp", "--store", str(start.store)]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert process.stdin is not None and process.stdout is not None
        stdin, stdout = process.stdin, process.stdout

        def send(message: dict[str, object]) -> None:
            stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
            stdin.flush()

        def receive(until: float) -> dict[str, object] | None:
            ready, _, _ = select.select([stdout], [], [], max(0.0, until - time.monotonic()))
            line = stdout.readline() if ready else b""
            return json.loads(line) if line.strip() else None

        flying: dict[int, tuple[float, float | None]] = {}  # id: started, when to cancel
        try:
            send(
                {
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "load-runaways", "version": "0"},
                    },
                }
            )
            began = time.monotonic()
            while receive(time.monotonic() + 1) is None:  # wait for the handshake's reply
                if process.poll() is not None or time.monotonic() > began + READY_S:
                    raise BenchError("ratified mcp did not answer the handshake.")
            send({"method": "notifications/initialized"})
            stop = start.ready()
            number = 0
            while time.monotonic() < stop:
                while len(flying) < MCP_IN_FLIGHT:
                    number += 1
                    arguments = {"query": HOSTILE}
                    send(
                        {
                            "id": number,
                            "method": "tools/call",
                            "params": {"name": "sparql", "arguments": arguments},
                        }
                    )
                    cancel = time.monotonic() + MCP_CANCEL_S if number % 2 else None
                    flying[number] = (time.perf_counter(), cancel)
                now = time.monotonic()
                for ident, (started, cancel) in list(flying.items()):
                    if cancel is not None and now >= cancel:
                        send(
                            {
                                "method": "notifications/cancelled",
                                "params": {"requestId": ident, "reason": "changed its mind"},
                            }
                        )
                        del flying[ident]
                        record("MCP runaway", (time.perf_counter() - started) * 1000, 499)
                reply = receive(min(stop, time.monotonic() + 0.2))
                if reply is None or reply.get("id") not in flying:
                    continue  # a notification, or the answer to a call just cancelled
                started, _ = flying.pop(int(str(reply["id"])))
                result = reply.get("result")
                failed = not isinstance(result, dict) or result.get("isError")
                record(
                    "MCP runaway", (time.perf_counter() - started) * 1000, 503 if failed else 200
                )
        finally:
            stdin.close()  # the MCP server exits when its stdin closes
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    return attack


ATTACKS: dict[str, Callable[[Path], list[Attacker]]] = {
    "one hostile join": lambda store: [_hostile_join],
    "8 slow readers": lambda store: [_slow_reader(n) for n in range(8)],
    "8 heavy queries": lambda store: [_heavy(n) for n in range(8)],
    "MCP runaways": lambda store: [_mcp_runaways(store)],
}
"""Each attack of ``--hostile``: its name, and the clients it runs beside the normal ones
(given the brain's folder, for a client that opens the brain itself)."""


def _attack(
    attack: str,
    target: tuple[str, Path],
    go: multiprocessing.Queue[float],
    calls: multiprocessing.Queue[tuple[str, float, int]],
) -> None:
    """The attacking clients of ``attack``, each on a thread: once all are ready, ``("ready",
    0, 0)`` is put on ``calls``, and they run until the time then read from ``go``; every call
    is put on ``calls``."""

    def record(kind: str, elapsed: float, code: int) -> None:
        calls.put((kind, elapsed, code))

    base, store = target
    attackers = ATTACKS[attack](store)
    ready, run = threading.Barrier(len(attackers) + 1), threading.Barrier(len(attackers) + 1)
    stop: list[float] = []
    start = Start(base, store, ready, run, stop)
    threads = [
        threading.Thread(target=attacker, args=(start, record), daemon=True)
        for attacker in attackers
    ]
    for thread in threads:
        thread.start()
    ready.wait(READY_S)
    calls.put(("ready", 0.0, 0))
    stop.append(go.get(timeout=READY_S))
    run.wait(READY_S)
    for thread in threads:
        thread.join(max(0.0, stop[0] - time.monotonic()) + 130)
    calls.close()
    calls.join_thread()


_TICK = os.sysconf("SC_CLK_TCK")


def _processes() -> dict[int, tuple[int, float, float]]:
    """Every process: its parent, its own CPU seconds, and its reaped children's."""
    found: dict[int, tuple[int, float, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        # After the name: state, ppid, …, utime stime cutime cstime (fields 14 to 17).
        own = (int(fields[11]) + int(fields[12])) / _TICK
        reaped = (int(fields[13]) + int(fields[14])) / _TICK
        found[int(entry.name)] = (int(fields[1]), own, reaped)
    return found


def _descendants(root: int, table: dict[int, tuple[int, float, float]]) -> list[int]:
    """``root``'s descendants, read from parent links: a server starts its query workers from
    threads, and ``/proc/<pid>/task/<pid>/children`` lists only the main thread's."""
    kids: dict[int, list[int]] = defaultdict(list)
    for pid, (parent, _, _) in table.items():
        kids[parent].append(pid)
    found, pending = [], list(kids[root])
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += kids[pid]
    return found


@dataclass(frozen=True)
class Tree:
    """One sample of a process tree: resident memory (MiB) and CPU seconds of the root itself
    and of its descendants (live, and reaped: a killed worker's CPU stays counted)."""

    mib: float
    own_cpu: float
    children_cpu: float
    processes: int = 0


def tree(root: int, *, with_root: bool = True) -> Tree:
    """``root`` and every descendant now (without ``root`` itself: its descendants alone)."""
    table = _processes()
    pids = _descendants(root, table)
    mib = sum(report.rss_mib(pid) or 0.0 for pid in ([root] if with_root else []) + pids)
    _, own, reaped = table.get(root, (0, 0.0, 0.0))
    children = sum(table[pid][1] + table[pid][2] for pid in pids if pid in table)
    if with_root:
        return Tree(mib, own, reaped + children, len(pids) + 1)
    return Tree(mib, 0.0, children, len(pids))


def rss_mib(pid: int) -> float:
    """Resident memory of the server and its query workers, MiB."""
    return tree(pid).mib


@dataclass
class Outcome:
    """One run: its report section, each normal call's times (ms), the peak memory (MiB) of
    the server with its workers, their CPU seconds in the run, and the same of the attackers'
    own processes (``ratified mcp`` and its workers), if they started any."""

    section: str
    times: dict[str, list[float]]
    peak: float
    server_cpu: float
    workers_cpu: float
    attacker_peak: float = 0.0
    attacker_rest: float = 0.0
    attacker_cpu: float = 0.0


def run(
    base: str,
    pid: int,
    clients: int,
    seconds: float,
    attack: str | None = None,
    store: Path = Path("."),
) -> Outcome:
    """Drive the mix from ``clients`` threads for ``seconds`` (beside the clients of
    ``attack``, one of :data:`ATTACKS`, on the brain in ``store``)."""
    times: dict[str, list[float]] = defaultdict(list)
    codes: dict[str, Counter[int]] = defaultdict(Counter)
    wrong: Counter[str] = Counter()
    said: dict[str, str] = {}  # the first unexpected answer of each call
    first = tree(pid)
    memory: list[float] = [first.mib]
    theirs: list[Tree] = []
    lock = threading.Lock()
    # The attackers run in a process of their own, so their threads do not compete for this
    # process's interpreter lock with the clients whose times are measured. The run starts
    # once they are ready.
    calls: multiprocessing.Queue[tuple[str, float, int]] = multiprocessing.Queue()
    go: multiprocessing.Queue[float] = multiprocessing.Queue()
    attackers = multiprocessing.get_context("fork").Process(
        target=_attack, args=(attack, (base, store), go, calls), daemon=True
    )
    if attack:
        attackers.start()
        try:
            kind, _, _ = calls.get(timeout=READY_S)
        except queue.Empty:
            kind = ""
        if kind != "ready":
            attackers.kill()
            raise BenchError(f"The attacking clients of {attack} were not ready in time.")
    stop = time.monotonic() + seconds
    go.put(stop)

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
                        said.setdefault(kind, f"{response.status_code} {response.text[:300]}")

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
        if attackers.pid is not None and attackers.is_alive():
            theirs.append(tree(attackers.pid, with_root=False))
        log(f"{sum(len(v) for v in times.values())} requests, server RSS {memory[-1]:.0f} MiB")
    drain()
    last = tree(pid)
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
    # The attackers' own processes at rest: their smallest sample with all of them running
    # (the MCP server and every worker it started), as the documented ceiling counts each
    # worker's loaded graphs; a sample taken while an ended worker was being replaced lacks
    # one worker's own memory, and would put the ceiling that much too low.
    running = max((t.processes for t in theirs if t.mib > 0), default=0)
    held = [t.mib for t in theirs if t.mib > 0 and t.processes == running]
    section = "\n".join(
        [
            f"## {clients} clients for {seconds:g} s" + (f" under {attack}" if attack else ""),
            "",
            f"{total:,} requests, {total / seconds:.1f} per second; 5xx: {errors} (target 0); "
            f"unexpected status: {sum(wrong.values())}. Server RSS: first {memory[0]:.0f} MiB, "
            f"last {memory[-1]:.0f} MiB, peak {max(memory):.0f} MiB (server and its query "
            f"workers). CPU in the run: the server {last.own_cpu - first.own_cpu:.1f} s, its "
            f"query workers {last.children_cpu - first.children_cpu:.1f} s."
            f"{' Attackers (499: cut off or cancelled):' if attacked else ''}{attacked}",
            "",
            table(
                ["call", "requests", "per s", "p50 ms", "p99 ms", "status", "unexpected"],
                rows,
                right=(1, 2, 3, 4, 6),
            ),
            *(
                f"\nThe first unexpected answer to {kind}: `{text.strip()}`"
                for kind, text in said.items()
            ),
        ]
    )
    return Outcome(
        section=section,
        times={kind: values for kind, values in times.items() if values},
        peak=max(memory),
        server_cpu=last.own_cpu - first.own_cpu,
        workers_cpu=last.children_cpu - first.children_cpu,
        attacker_peak=max(held, default=0.0),
        attacker_rest=min(held, default=0.0),
        attacker_cpu=max((t.children_cpu for t in theirs), default=0.0),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Serve, load, report; 1 if any 5xx or unexpected status, 2 on a setup problem."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument(
        "--hostile", action="store_true", help="again under each attack, after the run alone"
    )
    parser.add_argument(
        "--attacks",
        type=lambda text: [name.strip() for name in text.split(",")],
        default=list(ATTACKS),
        help=f"with --hostile, only these attacks (comma-separated, of: {', '.join(ATTACKS)})",
    )
    parser.add_argument(
        "--warm-up",
        type=float,
        default=None,
        help=f"seconds of the unreported run before the one alone (default {WARM_UP_S:g}, or "
        "--seconds if shorter)",
    )
    parser.add_argument("--before", help="an earlier commit to run side by side with this one")
    parser.add_argument(
        "--runs", type=int, default=3, help="with --before, rounds of before and after"
    )
    report.options(parser, smoke="the pigeon brain, 2 clients for 8 s")
    args = report.parse(parser, argv)
    if unknown := [name for name in args.attacks if name not in ATTACKS]:
        parser.error(f"no attack is named {', '.join(unknown)}; there are: {', '.join(ATTACKS)}")
    if args.smoke:
        args.clients, args.seconds = 2, 8.0
    if args.warm_up is None:
        args.warm_up = min(WARM_UP_S, args.seconds)
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="rr-load-") as scratch:
            args.store = pigeon_store(Path(scratch))
            return load(args)
    if args.store is None:
        parser.error("--store is required (or --smoke)")
    return load(args)


def load(args: argparse.Namespace) -> int:
    """The runs on ``args.store`` and the report."""
    if args.before:
        return _side_by_side(args)
    try:
        sections, _, bad = measure(args)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report.publish("load", "ratified-rdf endpoint under load", sections, record=args.record)
    return 1 if bad else 0


def measure(args: argparse.Namespace) -> tuple[list[str], list[list[str]], bool]:
    """One whole sequence on ``args.store`` with the code on ``PYTHONPATH``: the report's
    sections, the summary's rows (with ``--hostile``), and whether any run had a 5xx or an
    unexpected status."""
    limit = SMOKE_MAX_ROWS if args.smoke else MAX_ROWS
    server, base = serve(args.store, ["--max-rows", str(limit)])
    summary: list[list[str]] = []
    try:
        # A short run first, not reported: the workers' start and first loads, and the first
        # answer of each card, are not the load of the run alone.
        log("warming up")
        run(base, server.pid, args.clients, args.warm_up, store=args.store)
        alone = run(base, server.pid, args.clients, args.seconds, store=args.store)
        at_rest = rss_mib(server.pid)
        runs = [alone.section]
        sections = [f"Store: `{args.store}`", alone.section]
        if args.hostile:
            summary.append(_summary_row("none (alone)", alone, alone, at_rest))
            for attack in args.attacks:
                log(f"again, under {attack}")
                under = run(
                    base, server.pid, args.clients, args.seconds, attack=attack, store=args.store
                )
                runs.append(under.section)
                rows = [
                    Row(
                        kind, [percentile(alone.times[kind], 99), percentile(under.times[kind], 99)]
                    )
                    for kind in alone.times
                    if under.times.get(kind)
                ]
                ratios = report.side_by_side("call", ["p99 alone", f"p99 under {attack}"], rows)
                sections += [
                    under.section,
                    f"### Each call's p99, alone and under {attack}\n\n{ratios}",
                ]
                summary.append(_summary_row(attack, alone, under, at_rest))
            header = ["attack", "p99 alone ms", "p99 under it ms", "ratio (target ≤ 3)"]
            header += [f"`{NO_QUERY}` p99 ratio", "CPU s: server / its workers / attackers'"]
            header += ["peak MiB: server and workers / ceiling", "peak MiB: MCP tree / ceiling"]
            sections.insert(
                1,
                "## The normal clients under each attack\n\n"
                + table(header, summary, right=(1, 2, 3, 4, 5, 6, 7))
                + f"\n\nCeiling of the server and its workers: at rest ({at_rest:,.0f} MiB, after "
                f"the run alone) plus --query-memory-total ({CEILING_MIB:,} MiB). Ceiling of "
                f"the MCP tree (`ratified mcp` and its workers): its smallest sample in the run "
                "with all its workers running "
                f"plus its --query-memory ({MCP_MIB:,} MiB, also its total). `{NO_QUERY}` is "
                "refused before any query runs: its ratio is what the machine's load alone "
                "does to a call.",
            )
    finally:
        stop(server)
    bad = any("5xx: 0 " not in s or "unexpected status: 0." not in s for s in runs)
    return sections, summary, bad


def _side_by_side(args: argparse.Namespace) -> int:
    """``measure`` for ``args.before``'s tree and this checkout in turn, ``args.runs`` times;
    a table of every run's summary rows and one of each attack's median ratio by tree."""
    if not args.hostile:
        raise SystemExit("--before compares the attacks' ratios: give --hostile too.")
    rows: list[list[str]] = []
    ratios: dict[tuple[str, str], list[float]] = defaultdict(list)
    runs: list[str] = []  # every run's own sections, after the summary
    bad = False
    given = os.environ.get("PYTHONPATH")
    try:
        with report.checkout(args.before) as earlier:
            for number in range(1, args.runs + 1):
                for name, tree in (("before", earlier), ("after", report.REPO)):
                    # The server and the MCP agent's server are started as
                    # ``python -m ratified_rdf``: this tree's package is the one they import.
                    os.environ["PYTHONPATH"] = os.pathsep.join(
                        [str(tree / "src"), *([given] if given else [])]
                    )
                    started = os.getloadavg()[0]
                    log(f"run {number}, {name} ({tree}), load average {started:.1f}")
                    parts, summary, failed = measure(args)
                    bad = bad or failed
                    runs += [f"## Run {number}, {name}", *parts[1:]]
                    for line in summary[1:]:
                        rows.append([str(number), name, f"{started:.1f}", *line])
                        ratios[line[0], name].append(float(line[3]))
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        if given is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = given
    header = ["run", "tree", "load average at the start", "attack", "p99 alone ms"]
    header += ["p99 under it ms", "ratio (target ≤ 3)", f"`{NO_QUERY}` p99 ratio"]
    header += ["CPU s: server / its workers / attackers'", "peak MiB: server and workers / ceiling"]
    header += ["peak MiB: MCP tree / ceiling"]
    attacks = list(dict.fromkeys(attack for attack, _ in ratios))
    medians = [
        [
            attack,
            *(
                f"{statistics.median(ratios[attack, name]):.2f} "
                f"({', '.join(f'{r:.1f}' for r in ratios[attack, name])})"
                for name in ("before", "after")
            ),
        ]
        for attack in attacks
    ]
    sections = [
        f"Store: `{args.store}`. Before: `{args.before}`; after: this checkout. "
        f"{args.runs} rounds, before then after in each, {args.clients} clients for "
        f"{args.seconds:g} s a run.",
        "## The normal clients' p99 under each attack ÷ alone, median by tree\n\n"
        + table(["attack", "before (each run)", "after (each run)"], medians),
        "## Every run\n\n" + table(header, rows, right=(0, 2, 4, 5, 6, 7, 8, 9, 10)),
        *(
            "#" + part  # each run's own headings, one level under the run's
            if part.startswith("## ") and not part.startswith("## Run")
            else part
            for part in runs
        ),
    ]
    report.publish("load", "ratified-rdf endpoint under load", sections, record=args.record)
    return 1 if bad else 0


def _summary_row(attack: str, alone: Outcome, under: Outcome, at_rest: float) -> list[str]:
    """One line of the summary: the normal clients' p99 (every call) alone and under
    ``attack``, their ratio, the no-query call's ratio, CPU and peak memory."""
    every_alone = percentile([t for v in alone.times.values() for t in v], 99)
    every_under = percentile([t for v in under.times.values() for t in v], 99)
    plain = (
        f"{percentile(under.times[NO_QUERY], 99) / percentile(alone.times[NO_QUERY], 99):.1f}"
        if alone.times.get(NO_QUERY) and under.times.get(NO_QUERY)
        else "–"
    )
    cpu = f"{under.server_cpu:.1f} / {under.workers_cpu:.1f} / {under.attacker_cpu:.1f}"
    mcp = (
        f"{under.attacker_peak:,.0f} / {under.attacker_rest + MCP_MIB:,.0f}"
        if under.attacker_peak
        else "–"
    )
    return [
        attack,
        ms(every_alone),
        ms(every_under),
        f"{every_under / every_alone:.1f}",
        plain,
        cpu,
        f"{under.peak:,.0f} / {at_rest + CEILING_MIB:,.0f}",
        mcp,
    ]


if __name__ == "__main__":
    sys.exit(main())
