"""The brain's audit trail: every build, write batch, ask and query leaves a record (with its
tenant and clearance) before it runs, and the log verifies from scratch."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from pyoxigraph import BlankNode, Literal, NamedNode, Triple

from ratified_rdf import Brain
from ratified_rdf.audit import KEY_ENV, AuditError, AuditLog, audit_dir, load_public_key, verify_log
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.graph.writer import _Written
from ratified_rdf.queries.files import QueryError
from ratified_rdf.surfaces.cli import main
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture(scope="module", autouse=True)
def operator_key(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The signing key the operator keeps outside the log's folder, named by the env."""
    path = tmp_path_factory.mktemp("operator") / "audit-key.pem"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(KEY_ENV, str(path))
        yield path


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, operator_key: Path) -> Path:
    folder = tmp_path_factory.mktemp("audited")
    repo = make_pigeon_repo(folder / "git")
    brain, _ = Brain.build(
        MANIFEST, path=folder / "brain", source=str(repo), reader=Reader.builder(actor="builder")
    )
    brain.close()
    return folder / "brain"


def _entries(store: Path) -> list[dict]:
    lines = (audit_dir(store) / "records.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_build_and_every_batch_are_recorded_and_signed(store: Path) -> None:
    entries = _entries(store)
    records = [e for e in entries if e["type"] == "record"]
    assert records[0]["kind"] == "build" and records[0]["actor"] == "builder"
    assert records[0]["tenant"] == "default" and records[0]["clearance"] == "public"
    batches = [r for r in records if r["kind"] == "write_batch"]
    assert len(batches) >= 7 and all(len(b["subject"]["ntriples_sha256"]) == 64 for b in batches)
    outcomes = {e["annotates"]: e["outcome"] for e in entries if e["type"] == "outcome"}
    assert all(outcomes[r["id"]] == "succeeded" for r in records)
    report = verify_log(audit_dir(store), load_public_key(audit_dir(store) / "log-key.pub.pem"))
    assert report.ok, str(report)
    assert report.latest is not None and report.latest.tree_size == len(entries)


def test_asks_and_queries_are_recorded_with_reader_and_failures_too(store: Path) -> None:
    with Brain.open(store, reader=Reader(clearance="internal", actor="carol")) as brain:
        answer = brain.ask("who discussed RFC 9999 section 3.1?")
        brain.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        with pytest.raises(QueryError, match="not valid SPARQL"):
            brain.query("SELECT nonsense")
        with pytest.raises(QueryError):
            brain.query("SELECT * WHERE { SERVICE <http://example.org/> { ?s ?p ?o } }")
    entries = _entries(store)
    by_id = {e["id"]: e for e in entries}
    asks = [e for e in entries if e.get("kind") == "ask"]
    assert asks[-1]["subject"]["question"] == answer.question
    assert (asks[-1]["actor"], asks[-1]["clearance"]) == ("carol", "internal")
    detail = next(e for e in entries if e.get("annotates") == asks[-1]["id"] and "detail" in e)
    assert [q["name"] for q in detail["detail"]["queries"]] == [q.name for q in answer.queries]
    failed = [e for e in entries if e["type"] == "outcome" and e["outcome"] == "failed"]
    assert [by_id[f["annotates"]]["subject"]["sparql"] for f in failed[-2:]] == [
        "SELECT nonsense",
        "SELECT * WHERE { SERVICE <http://example.org/> { ?s ?p ?o } }",
    ]
    assert {f["error_class"] for f in failed[-2:]} == {"QueryRefused"}


def test_a_call_that_cannot_be_recorded_does_not_run(store: Path) -> None:
    log = AuditLog.open(audit_dir(store))
    brain = Brain.open(store, audit=log)
    log.close()  # the log can no longer be written: every call must now fail, closed
    with pytest.raises(AuditError, match="did not run"):
        brain.ask("who discussed RFC 9999 section 3.1?")
    with pytest.raises(AuditError, match="did not run"):
        brain.query("SELECT * WHERE { ?s ?p ?o }")
    brain._store.close()


def test_cli_verifies_the_log_and_catches_an_edit(store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    key = tmp_path / "key.pub.pem"
    key.write_bytes((audit_dir(store) / "log-key.pub.pem").read_bytes())
    good = runner.invoke(main, ["audit", "verify", "--store", str(store), "--public-key", str(key)])
    assert good.exit_code == 0, good.output
    records = audit_dir(store) / "records.jsonl"
    original = records.read_bytes()
    try:
        records.write_bytes(original.replace(b'"actor":"builder"', b'"actor":"mallory"', 1))
        bad = runner.invoke(
            main, ["audit", "verify", "--store", str(store), "--public-key", str(key)]
        )
        assert bad.exit_code == 1 and "FAILED" in bad.output
    finally:
        records.write_bytes(original)


def test_cli_anchors_tree_heads_at_a_witness_and_the_log_still_verifies(
    store: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    witness = tmp_path / "witness"
    for _ in range(2):  # the second time, the witness checks consistency with the first
        anchored = runner.invoke(
            main, ["audit", "anchor", "--store", str(store), "--witness", str(witness)]
        )
        assert anchored.exit_code == 0, anchored.output
        assert "anchored at local-witness" in anchored.output
    steps = [e["state"] for e in _entries(store) if e["type"] == "anchor"]
    assert steps[-3:] == ["pending", "committed", "anchored"]
    report = verify_log(audit_dir(store), load_public_key(audit_dir(store) / "log-key.pub.pem"))
    assert report.ok, str(report)
    unreachable = runner.invoke(
        main, ["audit", "anchor", "--store", str(store), "--url", "http://127.0.0.1:9/sth"]
    )
    assert "replay_queued" in unreachable.output


def test_a_batchs_audit_digest_is_the_sha256_of_its_sorted_ntriples_lines() -> None:
    # What the audit record promises, computed here term by term: awkward literals included.
    batch = Batch(
        "https://example.org/graph/fictional/records", "a fictional batch (test)", triples=[]
    )
    subject = NamedNode("https://example.org/fictional/é")
    for value in (
        Literal('say "hi"\nand\tgo \\ now'),
        Literal("Grüße ☃", language="de"),
        Literal("12", datatype=NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
        BlankNode("b0"),
        NamedNode("https://example.org/fictional/z"),
    ):
        batch.triples.append(Triple(subject, NamedNode("https://example.org/fictional/p"), value))
    lines = sorted(f"{t.subject} {t.predicate} {t.object} ." for t in batch.triples)
    expected = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    assert _Written.of(batch, digest=True).sha256 == expected
    assert _Written.of(batch, digest=False).sha256 == ""
    # Given the document staging wrote (the build's path), the digest is the same.
    from ratified_rdf.graph.store import ntriples

    document = ntriples(batch.triples)
    assert _Written.of(batch, digest=True, document=document).sha256 == expected
