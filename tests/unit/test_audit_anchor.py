"""Anchoring: the enforced lifecycle, the local witness and the HTTP transparency anchor."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ratified_rdf.audit import (
    RECORDS_FILE,
    Anchoring,
    AnchorRejected,
    AnchorSidecar,
    AnchorState,
    AnchorStateError,
    AnchorUnreachable,
    AuditLog,
    AuditRecord,
    HttpTransparencyAnchor,
    LocalWitnessAnchor,
    SignedTreeHead,
    canonical_bytes,
    check_transition,
    generate_key,
    sign_tree_head,
    verify_cosignature,
    verify_log,
)

S = AnchorState


def _record(n: int) -> AuditRecord:
    return AuditRecord(
        kind="review", tenant="acme", clearance="restricted", actor="carol", subject={"n": n}
    )


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return generate_key()


@pytest.fixture
def log(tmp_path: Path, key: Ed25519PrivateKey) -> Iterator[AuditLog]:
    opened = AuditLog.open(tmp_path / "log", key=key)
    opened.append(_record(0))
    yield opened
    opened.close()


def _signed(log: AuditLog) -> SignedTreeHead:
    head = log.sign_tree_head()
    assert head is not None, log.signing_problem
    return head


def _steps(log: AuditLog) -> list[tuple[str, S]]:
    return [(e.anchor, e.state) for e in log.entries() if isinstance(e, AnchorSidecar)]


LEGAL = {
    (None, S.PENDING),
    (S.PENDING, S.COMMITTED),
    (S.COMMITTED, S.ANCHORED),
    (S.COMMITTED, S.REPLAY_QUEUED),
    (S.COMMITTED, S.FAILED),
    (S.REPLAY_QUEUED, S.COMMITTED),
    (S.REPLAY_QUEUED, S.FAILED),
}
PAIRS = [(current, new) for current in (None, *S) for new in S]


@pytest.mark.parametrize(("current", "new"), PAIRS)
def test_only_the_lifecycle_moves_are_allowed(current: S | None, new: S) -> None:
    if (current, new) in LEGAL:
        check_transition(current, new)
    else:
        with pytest.raises(AnchorStateError, match=f"cannot become {new.value}"):
            check_transition(current, new)


def test_a_final_state_says_it_is_final() -> None:
    with pytest.raises(AnchorStateError, match="it can only become nothing"):
        check_transition(S.ANCHORED, S.COMMITTED)


# --- the local witness -------------------------------------------------------------------


@pytest.fixture
def witness(tmp_path: Path, log: AuditLog) -> LocalWitnessAnchor:
    return LocalWitnessAnchor(tmp_path / "witness", log.public_key)


def test_the_witness_cosigns_consistent_heads(log: AuditLog, witness: LocalWitnessAnchor) -> None:
    anchoring = Anchoring(log, witness)
    first = _signed(log)
    assert anchoring.anchor(first) is S.ANCHORED
    for n in range(1, 6):
        log.append(_record(n))
    second = _signed(log)
    assert anchoring.anchor(second) is S.ANCHORED
    assert [seen.tree_head for seen in witness.seen()] == [first, second]
    assert _steps(log) == [("local-witness", s) for s in (S.PENDING, S.COMMITTED, S.ANCHORED)] * 2
    receipt = [e for e in log.entries() if isinstance(e, AnchorSidecar)][-1].receipt
    assert receipt is not None
    assert verify_cosignature(second, receipt, witness.public_key)
    assert not verify_cosignature(first, receipt, witness.public_key)
    assert not verify_cosignature(second, receipt, generate_key().public_key())
    # The anchoring steps came after the second head: a verifier counts them as unsigned
    # until a tree head covers them.
    problem = verify_log(log.directory, log.public_key).problem
    assert problem is not None and problem.startswith("3 of 12 records (lines 10 to 12 ")
    _signed(log)
    assert verify_log(log.directory, log.public_key).ok


def test_the_witness_answers_the_same_head_twice_without_storing_it_again(
    log: AuditLog, witness: LocalWitnessAnchor
) -> None:
    head = _signed(log)
    first = witness.submit(head, log.consistency_proof)
    assert witness.submit(head, log.consistency_proof) == first
    assert len(witness.seen()) == 1


def test_the_witness_refuses_a_fork(
    tmp_path: Path, log: AuditLog, witness: LocalWitnessAnchor, key: Ed25519PrivateKey
) -> None:
    witness.submit(_signed(log), log.consistency_proof)
    # The same key over other records: what a rewritten history looks like to the witness.
    with AuditLog.open(tmp_path / "fork", key=key) as fork:
        for n in range(3):
            fork.append(_record(n + 10))
        forked = _signed(fork)
        with pytest.raises(AnchorRejected, match="not consistent with the tree head of size 1"):
            witness.submit(forked, fork.consistency_proof)
    stranger = sign_tree_head(generate_key(), forked.tree_size, forked.root)
    with pytest.raises(AnchorRejected, match="signature does not verify"):
        witness.submit(stranger, log.consistency_proof)
    assert len(witness.seen()) == 1


def test_the_witness_refuses_a_head_the_log_cannot_prove(
    log: AuditLog, witness: LocalWitnessAnchor
) -> None:
    first = _signed(log)
    witness.submit(first, log.consistency_proof)
    log.append(_record(1))
    second = _signed(log)

    def lost_records(old: int, new: int) -> list[bytes]:
        raise ValueError("The tree has 1 leaves, so it has no tree head of size 2")

    with pytest.raises(AnchorRejected, match="the log cannot prove it extends"):
        witness.submit(second, lost_records)


def test_the_witness_refuses_a_rollback(log: AuditLog, witness: LocalWitnessAnchor) -> None:
    old = _signed(log)
    log.append(_record(1))
    witness.submit(_signed(log), log.consistency_proof)
    anchoring = Anchoring(log, witness)
    assert anchoring.anchor(old) is S.FAILED
    failed = [e for e in log.entries() if isinstance(e, AnchorSidecar)][-1]
    assert failed.detail is not None and "already seen a newer one (size 2)" in failed.detail


def test_a_broken_witness_queues_the_head_until_it_is_repaired(
    log: AuditLog, witness: LocalWitnessAnchor
) -> None:
    seen = witness.directory / "seen.jsonl"
    seen.write_bytes(b'{"tree_head":')  # A witness that crashed mid-write.
    anchoring = Anchoring(log, witness)
    head = _signed(log)
    assert anchoring.anchor(head) is S.REPLAY_QUEUED
    seen.unlink()
    assert anchoring.drain() == {head: S.ANCHORED}
    assert anchoring.state(head) is S.ANCHORED
    assert _steps(log) == [
        ("local-witness", s)
        for s in (S.PENDING, S.COMMITTED, S.REPLAY_QUEUED, S.COMMITTED, S.ANCHORED)
    ]


def test_anchoring_the_same_head_twice_is_illegal(
    log: AuditLog, witness: LocalWitnessAnchor
) -> None:
    anchoring = Anchoring(log, witness)
    head = _signed(log)
    anchoring.anchor(head)
    with pytest.raises(AnchorStateError, match="An anchoring that is anchored cannot become"):
        anchoring.anchor(head)


def test_the_witness_keeps_its_own_key(tmp_path: Path, log: AuditLog) -> None:
    first = LocalWitnessAnchor(tmp_path / "w", log.public_key)
    again = LocalWitnessAnchor(tmp_path / "w", log.public_key)
    assert first.public_key.public_bytes_raw() == again.public_key.public_bytes_raw()
    assert (tmp_path / "w" / "witness-key.pub.pem").exists()


# --- the HTTP transparency anchor ------------------------------------------------------

URL = "https://transparency.example/v1/submit"
Handler = Callable[[httpx.Request], httpx.Response]


def _http(handler: Handler) -> HttpTransparencyAnchor:
    return HttpTransparencyAnchor(URL, transport=httpx.MockTransport(handler))


def _receipt(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    return httpx.Response(200, json={"accepted": body["tree_size"], "receipt_id": "r-1"})


def test_a_good_receipt_anchors_and_is_kept_in_the_log(log: AuditLog) -> None:
    head = _signed(log)
    sent: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return _receipt(request)

    assert Anchoring(log, _http(handler)).anchor(head) is S.ANCHORED
    assert sent[0].method == "POST" and str(sent[0].url) == URL
    assert sent[0].content == canonical_bytes(head)
    assert sent[0].headers["content-type"] == "application/json"
    anchored = [e for e in log.entries() if isinstance(e, AnchorSidecar)][-1]
    assert anchored.receipt == {"accepted": 1, "receipt_id": "r-1"}
    assert anchored.anchor == "http"


def test_an_unreachable_service_queues_the_head(log: AuditLog) -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    anchoring = Anchoring(log, _http(handler))
    head = _signed(log)
    assert anchoring.anchor(head) is S.REPLAY_QUEUED
    detail = [e for e in log.entries() if isinstance(e, AnchorSidecar)][-1].detail
    assert detail is not None and "could not be reached (connection refused)" in detail


def test_a_503_then_success_is_anchored_by_drain(log: AuditLog) -> None:
    answers = iter([httpx.Response(503), None])

    def handler(request: httpx.Request) -> httpx.Response:
        return next(answers) or _receipt(request)

    anchoring = Anchoring(log, _http(handler))
    head = _signed(log)
    assert anchoring.anchor(head) is S.REPLAY_QUEUED
    assert anchoring.drain() == {head: S.ANCHORED}
    assert anchoring.drain() == {}
    _signed(log)
    assert verify_log(log.directory, log.public_key).ok


def test_a_400_fails_for_good(log: AuditLog) -> None:
    anchoring = Anchoring(log, _http(lambda request: httpx.Response(400, text="bad tree head")))
    head = _signed(log)
    assert anchoring.anchor(head) is S.FAILED
    assert anchoring.drain() == {}
    failed = [e for e in log.entries() if isinstance(e, AnchorSidecar)][-1]
    assert failed.detail is not None and "refused the tree head of size 1 with 400" in failed.detail


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(200, text="thanks!"),
        httpx.Response(200, json=["not", "an", "object"]),
        httpx.Response(201, content=b'{"serial": 123456789012345678901234567890}'),
        httpx.Response(200, content=b'{"serial": 9007199254740992.0}'),
    ],
)
def test_a_success_without_a_usable_receipt_is_a_refusal(
    log: AuditLog, answer: httpx.Response
) -> None:
    anchoring = Anchoring(log, _http(lambda request: answer))
    assert anchoring.anchor(_signed(log)) is S.FAILED
    _signed(log)
    assert verify_log(log.directory, log.public_key).ok


def test_429_is_retried_not_refused() -> None:
    anchor = _http(lambda request: httpx.Response(429))
    with pytest.raises(AnchorUnreachable, match="answered 429"):
        anchor.submit(sign_tree_head(generate_key(), 0, bytes(32)), lambda old, new: [])


def test_the_retry_budget_ends_in_a_visible_failure(log: AuditLog) -> None:
    anchoring = Anchoring(log, _http(lambda request: httpx.Response(503)), max_attempts=2)
    head = _signed(log)
    assert anchoring.anchor(head) is S.REPLAY_QUEUED
    assert anchoring.drain() == {head: S.FAILED}
    failed = [e for e in log.entries() if isinstance(e, AnchorSidecar)][-1]
    assert failed.detail is not None and failed.detail.startswith("gave up after 2 attempts")


def test_states_survive_a_restart_and_a_cut_short_attempt_is_replayed(log: AuditLog) -> None:
    head = _signed(log)
    for state in (S.PENDING, S.COMMITTED):  # The process died while the anchor was called.
        log.append(
            AnchorSidecar(
                anchor="http",
                tree_size=head.tree_size,
                timestamp=head.timestamp,
                root_hash=head.root_hash,
                state=state,
            )
        )
    anchoring = Anchoring(log, _http(_receipt))
    assert anchoring.state(head) is S.COMMITTED
    assert anchoring.drain() == {head: S.ANCHORED}
    assert _steps(log)[1:] == [("http", s) for s in (S.COMMITTED, S.REPLAY_QUEUED)] + [
        ("http", S.COMMITTED),
        ("http", S.ANCHORED),
    ]


def test_verify_catches_a_broken_anchoring_lifecycle(log: AuditLog) -> None:
    Anchoring(log, _http(_receipt)).anchor(_signed(log))
    path = log.directory / RECORDS_FILE
    lines = path.read_bytes().split(b"\n")
    del lines[2]  # The "committed" step: pending would jump straight to anchored.
    path.write_bytes(b"\n".join(lines))
    problem = verify_log(log.directory, log.public_key).problem
    assert problem is not None
    assert f"{path}, line 3 breaks the anchoring lifecycle at http: An anchoring that is " in (
        problem
    )
    assert "pending cannot become anchored" in problem
