"""``/sparql`` is audited as ``Brain.query`` is: recorded before it runs, refused without a
record, and every refusal or timeout ends as a failed outcome; and ``ratified serve`` signs
a last tree head over everything it wrote when it is stopped by SIGTERM or SIGINT."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.audit import (
    KEY_ENV,
    RECORDS_FILE,
    AuditLog,
    AuditRecord,
    DetailSidecar,
    OutcomeSidecar,
    audit_dir,
)
from ratified_rdf.audit.log import public_key_path
from ratified_rdf.surfaces.cli import main
from ratified_rdf.surfaces.server import create_app
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.serve.deadlines import GENEROUS_S

# ORDER BY keeps it off the triple-pattern stream: this is the query sandbox's audit.
QUERY = "SELECT ?s WHERE { ?s a ?type } ORDER BY ?s LIMIT 7"


@pytest.fixture()
def audited(tmp_path: Path) -> tuple[Brain, AuditLog]:
    log = AuditLog.open(tmp_path / "audit")
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), audit=log)
    return brain, log


def _query_records(log: AuditLog) -> list[AuditRecord]:
    return [
        entry
        for entry in log.entries()
        if isinstance(entry, AuditRecord)
        and entry.kind == "query"
        and isinstance(entry.subject, dict)
        and entry.subject.get("via") == "/sparql"
    ]


def test_a_query_is_recorded_with_its_outcome_and_rows(audited: tuple[Brain, AuditLog]) -> None:
    brain, log = audited
    with TestClient(create_app(brain, query_timeout_s=GENEROUS_S)) as client:
        assert client.get("/sparql", params={"query": QUERY}).status_code == 200
        refused = client.get("/sparql", params={"query": "SELECT * { SERVICE <http://e/> {} }"})
        assert refused.status_code == 400
    ran, service = _query_records(log)
    assert ran.subject["sparql"] == QUERY  # type: ignore[index]
    assert ran.tenant == str(brain.reader.tenant) and ran.actor == brain.reader.actor
    entries = list(log.entries())
    details = [e for e in entries if isinstance(e, DetailSidecar) and e.annotates == ran.id]
    assert [d.detail for d in details] == [{"rows": 7}]
    outcomes = {e.annotates: e for e in entries if isinstance(e, OutcomeSidecar)}
    assert outcomes[ran.id].outcome == "succeeded"
    assert outcomes[service.id].outcome == "failed"
    assert "SERVICE" in (outcomes[service.id].error or "")


def test_no_audit_record_no_query(audited: tuple[Brain, AuditLog]) -> None:
    brain, log = audited
    log.close()
    with TestClient(create_app(brain, query_timeout_s=GENEROUS_S)) as client:
        response = client.get("/sparql", params={"query": QUERY})
        assert response.status_code == 503
        assert "could not be written" in response.text
        assert "answers nothing it cannot audit" in response.text
        ask = client.get("/api/ask", params={"q": "what does the graph hold?"})
        assert ask.status_code == 503
        assert "could not be written" in ask.json()["error"]


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_clean_stop_signs_every_record_the_server_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: int
) -> None:
    """`ratified serve` used to sign nothing while it ran and skip the last tree head on
    SIGTERM; now a stop by either signal leaves a log that verifies with the public key."""
    key = tmp_path / "operator" / "audit-key.pem"
    monkeypatch.setenv(KEY_ENV, str(key))
    store = tmp_path / "store"
    brain, _ = Brain.build(MANIFEST, source=str(make_pigeon_repo(tmp_path)), path=store)
    brain.close()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "ratified_rdf.surfaces.server", "--store", str(store)]
    server = subprocess.Popen(
        # The queries here must succeed: a roomy budget, not the 10 s a busy machine meets.
        [*command, "--port", str(port), "--on-disk", "--query-timeout", "300"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(600):  # a bound for a loaded machine, not a timing assertion
            if server.poll() is not None:
                break
            try:
                if httpx.get(f"{base}/api/holdings", timeout=60).is_success:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        for question in ("who discussed RFC 9999 section 3.1?", "history of RFC 9999"):
            assert httpx.get(f"{base}/api/ask", params={"q": question}, timeout=120).is_success
        assert httpx.get(f"{base}/sparql", params={"query": QUERY}, timeout=120).is_success
        server.send_signal(number)
        _, errors = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    assert server.returncode == 0, errors
    folder = audit_dir(store)
    entries = [json.loads(line) for line in (folder / RECORDS_FILE).read_text().splitlines()]
    assert sum(1 for e in entries if e.get("kind") == "ask") >= 2
    records = len(entries)
    verified = CliRunner().invoke(
        main, ["audit", "verify", str(folder), "--public-key", str(public_key_path(key))]
    )
    assert verified.exit_code == 0, verified.output
    assert f"holds {records} records, every one covered" in verified.output
