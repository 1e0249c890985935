"""The sandbox's export spool leaves nothing behind: its files have no name from the start,
so a server killed with SIGKILL (which runs no code of its own again) leaves no file of them
in the temporary folder, while its workers still load the graphs from them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

GUARD_S = 120
"""How long the test waits for the child's word at most, so a broken sandbox fails the test
instead of hanging it."""

CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from ratified_rdf.queries.sandbox import QueryRequest, QuerySandbox, SandboxLimits

    GRAPH = "urn:x-test:pigeon-lofts"

    def export(graphs):
        return "".join(
            f"<urn:x-test:loft/{n}> <urn:x-test:holds> <urn:x-test:pigeon/{n}> <{GRAPH}> .\\n"
            for n in range(50)
        ).encode()

    sandbox = QuerySandbox(SandboxLimits(workers=1, timeout_s=600))
    request = QueryRequest(
        "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", (GRAPH,),
        "application/sparql-results+json", None,
    )
    reply = asyncio.run(sandbox.run("address:127.0.0.9", request, export))
    count = json.loads(reply.body)["results"]["bindings"][0]["n"]["value"]
    print(json.dumps({"count": count}), flush=True)
    sys.stdin.read()  # until the test kills this process
    """
)


def test_a_server_killed_with_sigkill_leaves_no_spool_file(tmp_path: Path) -> None:
    folder = tmp_path / "tmp"
    folder.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "TMPDIR": str(folder)},
    )
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
        # The worker loaded the graphs from the spool: the count is the export's.
        assert json.loads(line) == {"count": "50"}
        child.send_signal(signal.SIGKILL)
        child.wait(GUARD_S)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if child.stdin is not None:
            child.stdin.close()
    assert sorted(p.name for p in folder.iterdir()) == []
