"""Load, short form: concurrent clients on loopback for a few seconds (bounded in count and
time, stopping by themselves): no 5xx, and updates and over-limit queries are refused cleanly
while the server is busy. The long form, with throughput, p50/p99 and memory over the run, is
benchmarks/load.py."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager

import httpx
from starlette.applications import Starlette

from ratified_rdf import Brain
from ratified_rdf.surfaces.server import create_app
from tests.serve.deadlines import GENEROUS_S

CLIENTS = 6
SECONDS = 4.0
MIX: tuple[tuple[str, str, dict[str, str], int], ...] = (
    ("ask", "/api/ask", {"q": "who discussed RFC 9999 section 3.1?"}, 200),
    ("ask", "/api/ask", {"q": "what did section 2.1 of draft-example-pigeon-00 become?"}, 200),
    ("unknown", "/api/ask", {"q": "how did the IESG vote on draft-example-pigeon?"}, 200),
    ("select", "/sparql", {"query": "SELECT ?s WHERE { ?s a ?t } LIMIT 5"}, 200),
    # A bare triple pattern streams (rdflib's SPARQLStore pages that way); ordered, the same
    # rows go through the query sandbox and its row limit.
    ("pattern", "/sparql", {"query": "SELECT * WHERE { ?s ?p ?o }"}, 200),
    ("over-limit", "/sparql", {"query": "SELECT * WHERE { ?s ?p ?o } ORDER BY ?s"}, 422),
    ("update", "/sparql", {"update": "DROP ALL"}, 403),
)


def test_concurrent_clients_get_no_5xx_and_clean_refusals(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> None:
    app = create_app(pigeon_brain, query_timeout_s=GENEROUS_S, max_rows=20)
    outcomes: Counter[tuple[str, int]] = Counter()
    wrong: list[tuple[str, int, str]] = []
    lock = threading.Lock()
    stop = time.monotonic() + SECONDS
    with serve(app) as base:

        def client(offset: int) -> None:
            with httpx.Client(base_url=base, timeout=120) as http:
                step = offset
                # Every client makes each kind of request once, however slow the machine;
                # then more, until the time is up (or 500).
                while step < offset + len(MIX) or (time.monotonic() < stop and step < offset + 500):
                    kind, path, params, expected = MIX[step % len(MIX)]
                    step += 1
                    if kind == "update":
                        response = http.post(path, data=params)
                    else:
                        response = http.get(
                            path, params=params, headers={"accept": "application/json"}
                        )
                    with lock:
                        outcomes[(kind, response.status_code)] += 1
                        if response.status_code != expected:
                            wrong.append((kind, response.status_code, response.text[:200]))

        threads = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=SECONDS + 600)  # a hang guard, not a speed check
        assert not any(t.is_alive() for t in threads), "a client never came back"
    print(f"load: {sum(outcomes.values())} requests from {CLIENTS} clients: {dict(outcomes)}")
    assert sum(outcomes.values()) >= CLIENTS * len(MIX)
    assert not [o for o in outcomes if o[1] >= 500], outcomes
    assert wrong == []
