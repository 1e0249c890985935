"""``/sparql`` is audited as ``Brain.query`` is: recorded before it runs, refused without a
record, and every refusal or timeout ends as a failed outcome."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.audit import AuditLog, AuditRecord, DetailSidecar, OutcomeSidecar
from ratified_rdf.surfaces.server import create_app
from tests.pigeon import MANIFEST, make_pigeon_repo

QUERY = "SELECT ?s WHERE { ?s a ?type } LIMIT 7"


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
    with TestClient(create_app(brain)) as client:
        assert client.get("/sparql", params={"query": QUERY}).status_code == 200
        refused = client.get("/sparql", params={"query": "SELECT * { SERVICE <http://e/> {} }"})
        assert refused.status_code == 400
    ran, service = _query_records(log)
    assert ran.subject["sparql"] == QUERY  # type: ignore[index]
    assert ran.tenant == str(brain.tenant) and ran.actor == brain.actor
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
    with TestClient(create_app(brain)) as client:
        response = client.get("/sparql", params={"query": QUERY})
        assert response.status_code == 503
        assert "could not be written" in response.text
        assert "answers nothing it cannot audit" in response.text
        ask = client.get("/api/ask", params={"q": "what does the graph hold?"})
        assert ask.status_code == 503
        assert "could not be written" in ask.json()["error"]
