"""Bounded for everyone (issue 50): a client that reads a stream slowly, opens many
connections, sends heavy queries or is the first to read a set of graphs costs the others
nothing past their own deadlines.

Every deadline here is a setting the test chooses (a tiny byte-rate window, a short query
timeout) or a hook it holds (a copy that waits for the test's word); nothing asserts how long
anything took.
"""

from __future__ import annotations

import asyncio
import math
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.graph import copies
from ratified_rdf.queries.sandbox import QuerySandbox, SandboxLimits
from ratified_rdf.surfaces import standard
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import GENEROUS_S, roomy_quick_lane, tight_budget, until

Serve = Callable[[Starlette], AbstractContextManager[str]]
NTRIPLES = "application/n-triples"
WHOLE_GRAPH = "/sparql?default"


@pytest.fixture()
def small_buffers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Small chunks and a short queue, so the pigeon graph is more than what waits between
    the producer and a client that reads nothing: the producer comes to wait on it."""
    monkeypatch.setattr(standard, "CHUNK_BYTES", 1024)
    monkeypatch.setattr(standard, "QUEUE_CHUNKS", 2)


@contextmanager
def _serving_small(app: Starlette) -> Iterator[str]:
    """``app`` served as the ``serve`` fixture does, on a listener whose connections have a
    small send buffer: what the server's kernel holds for a client that reads nothing is
    small too, so the pigeon graph is more than all the buffers on the way."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    _until(lambda: server.started, "the server starts")
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)
        listener.close()


def _stalled_stream(base: str) -> socket.socket:
    """A client on 127.0.0.1 that asks for the whole graph and reads nothing (a tiny receive
    window, so the kernel holds little of it either)."""
    url = urlsplit(base)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)
    sock.connect((url.hostname, url.port))
    sock.sendall(
        f"GET {WHOLE_GRAPH} HTTP/1.1\r\nHost: {url.netloc}\r\nAccept: {NTRIPLES}\r\n\r\n".encode()
    )
    return sock


def _read_to_the_end(sock: socket.socket) -> bytes:
    sock.settimeout(60)
    data = bytearray()
    with sock:
        while chunk := sock.recv(65536):
            data += chunk
    return bytes(data)


_until = until


def _stream_windows(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The byte-rate window of every stream made from now on, in the order they are made."""
    windows: list[float] = []

    class Recorded(standard._Stream):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            windows.append(self._window)

    monkeypatch.setattr(standard, "_Stream", Recorded)
    return windows


def _from(address: str, base: str) -> httpx.Client:
    """A client whose connections come from ``address`` (another user, to the server)."""
    transport = httpx.HTTPTransport(local_address=address)
    return httpx.Client(base_url=base, timeout=120, transport=transport)


def test_a_slow_reader_is_cut_off_and_another_client_streams(
    pigeon_brain: Brain, small_buffers: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One stream slot. The slow reader takes it; past a window of the producer waiting on it
    # with less than the floor read, its stream is stopped and the slot is another's. Only the
    # slow reader's stream has the tiny window: the other client's, which must be read to its
    # end, is made with a roomy one, so a busy machine pausing that client cannot cut it off.
    app = create_app(
        pigeon_brain,
        query_workers=1,
        query_timeout_s=GENEROUS_S,
        stream_min_bytes_s=1_000,
        stream_window_s=0.3,
    )
    state = app.state.standard
    windows = _stream_windows(monkeypatch)
    with _serving_small(app) as base:
        slow = _stalled_stream(base)
        _until(lambda: "address:127.0.0.1" in state.busy, "the slow reader holds the slot")
        _until(lambda: windows == [0.3], "the slow reader's stream is made")
        state.window_s = 60.0
        with _from("127.0.0.2", base) as other:
            answer = other.get(WHOLE_GRAPH, headers={"Accept": NTRIPLES})
        assert answer.status_code == 200, answer.text
        lines = [line for line in answer.text.splitlines() if line.strip()]
        assert len(lines) > 0
        cut = _read_to_the_end(slow)
    # The slow reader's download was broken off: no chunked body's last, empty chunk.
    assert cut.startswith(b"HTTP/1.1 200")
    assert not cut.endswith(b"0\r\n\r\n")
    assert state.busy == {}
    # Remembered: the slow reader did not read its stream to its end, the other did.
    assert state.read_well == {"address:127.0.0.1": False, "address:127.0.0.2": True}


def test_many_connections_from_one_address_hold_one_stream_slot(
    pigeon_brain: Brain, small_buffers: None
) -> None:
    # Two slots, and --per-client 2 for the query workers; yet one address streams one answer
    # at a time, so its second connection waits and another address gets the other slot (the
    # one kept for clients that read their last stream to its end: this one did, first).
    app = create_app(
        pigeon_brain, query_workers=2, per_client=2, query_timeout_s=20, stream_window_s=60
    )
    state = app.state.standard
    with _serving_small(app) as base:
        with _from("127.0.0.2", base) as other:
            assert other.get(WHOLE_GRAPH, headers={"Accept": NTRIPLES}).status_code == 200
        first = _stalled_stream(base)
        _until(lambda: "address:127.0.0.1" in state.busy, "the first connection streams")
        second = _stalled_stream(base)
        with _from("127.0.0.2", base) as other:
            answer = other.get(WHOLE_GRAPH, headers={"Accept": NTRIPLES})
            assert answer.status_code == 200, answer.text
            assert state.busy == {"address:127.0.0.1": 1}
        for sock in (first, second):
            sock.shutdown(socket.SHUT_RDWR)
            sock.close()


def test_a_heavy_client_does_not_starve_a_light_clients_query(
    pigeon_brain: Brain, serve: Serve
) -> None:
    # Two workers: one general, one kept for light clients. The general one is held (directly,
    # so no query's clock races another's) and a second client has used a lot of worker time
    # lately; its query waits, while a light client's is admitted to the kept worker.
    # The light client's queries must succeed, on the kept worker too: a roomy budget there,
    # and a light client one whose queries ran under half of it.
    app = create_app(pigeon_brain, query_workers=2, query_timeout_s=GENEROUS_S)
    roomy_quick_lane(app)
    ask = {"query": "ASK { ?s ?p ?o }"}
    with serve(app) as base:
        with _from("127.0.0.2", base) as light:
            assert light.get("/sparql", params=ask).status_code == 200  # workers started
        sandbox = app.state.sandbox
        with sandbox._lock:
            sandbox._busy["address:a-heavy-one"] = 1
        sandbox._charge("address:127.0.0.3", 10 * GENEROUS_S)
        replies: list[httpx.Response] = []

        def heavy() -> None:
            with _from("127.0.0.3", base) as client:
                replies.append(client.get("/sparql", params=ask))

        waiting = threading.Thread(target=heavy, daemon=True)
        waiting.start()
        _until(lambda: bool(sandbox._waiting), "the heavy client waits")
        with _from("127.0.0.2", base) as light:
            answered = light.get("/sparql", params=ask)
        assert answered.status_code == 200, answered.text
        assert [w.client for w in sandbox._waiting] == ["address:127.0.0.3"]
        assert sandbox.granted[-1] == ("address:127.0.0.2", "quick")
        # Once the general worker is free, the heavy client's query has it.
        sandbox._release("address:a-heavy-one")
        waiting.join(120)
        assert [r.status_code for r in replies] == [200]
        assert sandbox.granted[-1] == ("address:127.0.0.3", "general")


def test_a_freed_worker_goes_to_the_client_that_used_the_least(
    pigeon_brain: Brain, serve: Serve
) -> None:
    # One worker, held; a heavy client asks first and a light one after: the light one is
    # served first when the worker comes free.
    app = create_app(pigeon_brain, query_workers=1, query_timeout_s=GENEROUS_S)
    ask = {"query": "ASK { ?s ?p ?o }"}
    with serve(app) as base:
        with _from("127.0.0.4", base) as warm:
            assert warm.get("/sparql", params=ask).status_code == 200
        sandbox = app.state.sandbox
        with sandbox._lock:
            sandbox._busy["address:a-heavy-one"] = 1
        sandbox._charge("address:127.0.0.3", 100.0)
        replies: dict[str, httpx.Response] = {}

        def client(address: str) -> None:
            with _from(address, base) as http:
                replies[address] = http.get("/sparql", params=ask)

        threads = [threading.Thread(target=client, args=(a,), daemon=True) for a in ("127.0.0.3",)]
        threads[0].start()
        _until(lambda: len(sandbox._waiting) == 1, "the heavy client waits")
        threads.append(threading.Thread(target=client, args=("127.0.0.2",), daemon=True))
        threads[1].start()
        _until(lambda: len(sandbox._waiting) == 2, "the light client waits too")
        sandbox._release("address:a-heavy-one")
        for thread in threads:
            thread.join(120)
        assert {a: r.status_code for a, r in replies.items()} == {
            "127.0.0.2": 200,
            "127.0.0.3": 200,
        }
        order = [client for client, _ in sandbox.granted][-2:]
        assert order == ["address:127.0.0.2", "address:127.0.0.3"]


@pytest.fixture()
def held_copy(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Copies of graphs wait for the test's word before they are made."""
    go = threading.Event()
    real = copies.MemoryDataset

    def held(store: object, graphs: object) -> object:
        go.wait(120)  # the word, or (on code that waits for the copy) two minutes
        return real(store, graphs)  # type: ignore[arg-type]

    monkeypatch.setattr(copies, "MemoryDataset", held)
    yield go
    go.set()


def test_copying_a_readers_graphs_counts_against_its_deadline(
    pigeon_brain: Brain, held_copy: threading.Event
) -> None:
    # A reader of a brain answered from memory, whose graphs are not copied yet: its first
    # request waits at most the query timeout for the copy, then is told to retry; the copy
    # goes on, and once it is made the retry is answered.
    brain = Brain.from_store(pigeon_brain.reading.store, in_memory=True)
    # Only the requests that must be refused meet the short budget; the retry, which must be
    # answered, has the roomy one.
    app = create_app(brain, query_timeout_s=GENEROUS_S)
    question = {"q": "what does the graph hold?"}
    with TestClient(app) as client:
        with tight_budget(app, 0.2):
            first = client.get("/api/ask", params=question)
            streamed = client.get(WHOLE_GRAPH, headers={"Accept": NTRIPLES})
            described = client.get("/doc/doc/rfc9999", headers={"Accept": "text/turtle"})
        assert first.status_code == 503, first.text
        assert "copying your graphs" in first.json()["error"]
        assert "try again" in first.json()["error"]
        assert first.headers["retry-after"] == "5"
        assert streamed.status_code == 503 and "copying your graphs" in streamed.text
        assert described.status_code == 503 and "copying your graphs" in described.text
        held_copy.set()
        _until(lambda: bool(brain.reading.copies.copies), "the copy is made")
        again = client.get("/api/ask", params=question)
        assert again.status_code == 200, again.text


# Every triple against every other, sorted: the engine holds the whole join before a row.
SORTED_JOIN = "SELECT ?a ?d WHERE { ?a ?b ?c . ?d ?e ?f } ORDER BY ?a ?d ?c ?f"


def test_the_memory_ceiling_holds_for_all_queries_together(
    pigeon_brain: Brain, serve: Serve
) -> None:
    # One query may grow by a GiB here, but all of them together by 32 MiB: the sorted join
    # outgrows the total alone, so it is ended as the largest.
    app = create_app(
        pigeon_brain,
        query_timeout_s=GENEROUS_S,
        query_memory_mib=1_024,
        query_memory_total_mib=32,
        max_rows=10**9,
    )
    with serve(app) as base, httpx.Client(base_url=base, timeout=GENEROUS_S + 60) as http:
        response = http.get("/sparql", params={"query": SORTED_JOIN})
        assert response.status_code == 503, response.text[:300]
        assert "more than the 32 MiB of memory all of them together" in response.text
        assert app.state.sandbox.ended == 1
        # The answer comes at once; the slot is given back once the replacement is loaded.
        _until(lambda: app.state.sandbox.busy == 0, "the ended query's slot is given back")
        assert http.get("/sparql", params={"query": "ASK { ?s ?p ?o }"}).status_code == 200


def test_a_stream_slot_is_kept_for_clients_that_read_their_streams() -> None:
    # Two slots, one of them kept for clients whose latest stream was read to its end. A slow
    # reader takes the other; another from a new address waits, and so does the first once
    # its stream was cut off; a client that read its last stream finds the kept one free.
    state = standard._State(max_stream_rows=10, max_streams=2, wait_s=1)
    state.ended("address:normal", read_well=True)
    assert state.take("address:slow-1")
    assert not state.take("address:slow-2")  # a new address: the other slot only
    assert state.take("address:normal")
    assert state.kept_for == {"address:normal"}
    state.give_back("address:normal")
    state.ended("address:normal", read_well=True)
    state.give_back("address:slow-1")
    state.ended("address:slow-1", read_well=False)
    assert state.take("address:slow-2")  # the other slot, free again
    assert not state.take("address:slow-1")  # cut off: not the kept one
    assert state.take("address:normal")
    assert state.busy == {"address:normal": 1, "address:slow-2": 1}


def test_a_client_flooding_the_kept_worker_waits_behind_one_that_asks_now_and_then() -> None:
    # Both clients' queries are quick, so both may use the worker kept for light clients; one
    # sends even quicker ones back to back (as attackers refused in a millisecond do) and was
    # served many times since the other was. It asked first, yet the kept worker, once freed,
    # goes to the other: otherwise a normal client queues behind every flooder on that worker.
    sandbox = QuerySandbox(SandboxLimits(workers=2, quick_workers=1))
    flooder, occasional = "address:127.0.2.2", "address:127.0.1.1"
    for client, seconds in [(occasional, 0.02)] + [(flooder, 0.002)] * 40:
        with sandbox._lock:
            sandbox._take(client, "general")
        sandbox._release(client, "general")
        sandbox._charge(client, seconds)

    async def scene() -> list[str]:
        with sandbox._lock:
            sandbox._take("address:a-heavy-one", "general")
            sandbox._take("address:someone-quick", "quick")
        first = asyncio.ensure_future(sandbox._acquire(flooder, math.inf))
        while len(sandbox._waiting) < 1:
            await asyncio.sleep(0)
        second = asyncio.ensure_future(sandbox._acquire(occasional, math.inf))
        while len(sandbox._waiting) < 2:
            await asyncio.sleep(0)
        # A turn is granted under the lock as the slot is given back: read at once who got it.
        sandbox._release("address:someone-quick", "quick")
        order = [sandbox.granted[-1][0]]
        sandbox._release(order[0], "quick")
        order.append(sandbox.granted[-1][0])
        await asyncio.gather(first, second)
        return order

    try:
        assert asyncio.run(scene()) == [occasional, flooder]
    finally:
        sandbox.close()


def test_a_client_sending_quick_queries_back_to_back_waits_for_the_other_workers() -> None:
    # Both clients' queries are quick. One sends its next as soon as the last is answered (as
    # a client whose queries are refused in a moment does, over and over); the other asks now
    # and then between other work. With the other worker taken by a heavy query, the kept
    # worker goes to the second only: the first waits for the other workers, so the kept one
    # is not running its queries, one after the other, whenever a client asking now and then
    # comes. The sandbox's clock is the test's: ten seconds of history, then the scene.
    sandbox = QuerySandbox(SandboxLimits(workers=2, quick_workers=1))
    now = [0.0]
    sandbox._clock = lambda: now[0]
    flooder, occasional = "address:127.0.2.2", "address:127.0.1.1"
    for client, share in ((flooder, 0.95), (occasional, 0.1)):
        sandbox._charge(client, 0.01)  # both known to be light
        for tenth in range(100):  # a query a tenth of a second, waiting or running for share
            now[0] = (tenth + share) / 10
            sandbox._was_busy(client, tenth / 10, [(tenth / 10, now[0])])
    now[0] = 10.0

    async def scene() -> tuple[str, str]:
        with sandbox._lock:
            sandbox._take("address:a-heavy-one", "general")
        first = asyncio.ensure_future(sandbox._acquire(flooder, math.inf))
        for _ in range(1_000):  # the task's first steps, until it waits or has a worker
            if first.done() or sandbox._waiting:
                break
            await asyncio.sleep(0)
        assert not first.done(), "the kept worker is free, yet not for it"
        second = await sandbox._acquire(occasional, math.inf)
        sandbox._release("address:a-heavy-one", "general")
        return await first, second

    try:
        assert asyncio.run(scene()) == ("general", "quick")
    finally:
        sandbox.close()


def test_a_light_client_waits_for_the_kept_worker_while_heavy_ones_wait() -> None:
    # Two light clients asking now and then share the kept worker; a heavy one waits for the
    # general worker. When the general worker comes free, it goes to the heavy client, and
    # the light one waiting takes the kept worker once it is free: a general worker runs at
    # the lowest priority, where on a busy machine a light query waited on the processors
    # longer than for the other light client's query on the kept one.
    sandbox = QuerySandbox(SandboxLimits(workers=2, quick_workers=1))
    first, second, heavy = "address:127.0.1.1", "address:127.0.1.2", "address:127.0.2.1"
    sandbox._charge(first, 0.01)
    sandbox._charge(second, 0.01)
    sandbox._charge(heavy, 10.0)

    async def scene() -> list[tuple[str, str]]:
        with sandbox._lock:
            sandbox._take("address:grinding", "general")
            sandbox._take(first, "quick")
        waiting = [
            asyncio.ensure_future(sandbox._acquire(client, math.inf)) for client in (heavy, second)
        ]
        for _ in range(1_000):
            if len(sandbox._waiting) == 2:
                break
            await asyncio.sleep(0)
        assert len(sandbox._waiting) == 2, "both wait: every worker is taken"
        sandbox._release("address:grinding", "general")
        order = [sandbox.granted[-1]]
        sandbox._release(first, "quick")
        order.append(sandbox.granted[-1])
        for task in waiting:  # one left waiting (for a worker nobody frees) gives up
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        return order

    try:
        assert asyncio.run(scene()) == [(heavy, "general"), (second, "quick")]
    finally:
        sandbox.close()
