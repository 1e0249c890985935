"""``PeriodicSigner``: a tree head every N seconds or M records, whichever first, and a last
one on stop; ``stop_on_sigterm`` makes SIGTERM unwind like Ctrl-C. A fake clock throughout:
nothing here waits on wall-clock time."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf.audit import (
    DEFAULT_INTERVAL_S,
    DEFAULT_MAX_UNSIGNED,
    KEY_ENV,
    RECORDS_FILE,
    AuditLog,
    AuditRecord,
    PeriodicSigner,
    canonical_bytes,
    generate_key,
    stop_on_sigterm,
    verify_log,
)


class FakeClock:
    """Seconds that pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _record(n: int) -> AuditRecord:
    return AuditRecord(kind="ask", tenant="acme", clearance="public", actor="a", subject={"n": n})


@pytest.fixture
def log(tmp_path: Path) -> Iterator[AuditLog]:
    opened = AuditLog.open(tmp_path / "audit", key=generate_key())
    yield opened
    opened.close()


def test_the_defaults_are_thirty_seconds_or_a_thousand_records() -> None:
    assert (DEFAULT_INTERVAL_S, DEFAULT_MAX_UNSIGNED) == (30.0, 1000)


def test_it_signs_after_m_records_whichever_comes_first(log: AuditLog) -> None:
    clock = FakeClock()
    signer = PeriodicSigner(log, interval_s=60, max_unsigned=5, clock=clock)
    for n in range(4):
        log.append(_record(n))
        assert signer.tick() is None  # 4 records, no time passed: not due
    log.append(_record(4))
    head = signer.tick()
    assert head is not None and head.tree_size == 5
    assert log.unsigned == 0 and signer.signed == 1


def test_it_signs_after_n_seconds_whichever_comes_first(log: AuditLog) -> None:
    clock = FakeClock()
    signer = PeriodicSigner(log, interval_s=30, max_unsigned=1000, clock=clock)
    log.append(_record(0))
    clock.now += 29.9
    assert signer.tick() is None
    clock.now += 0.1
    head = signer.tick()
    assert head is not None and head.tree_size == 1
    log.append(_record(1))  # the period starts again from that signature
    clock.now += 29
    assert signer.tick() is None
    clock.now += 1
    assert signer.tick() is not None and log.unsigned == 0


def test_nothing_unsigned_nothing_signed(log: AuditLog) -> None:
    clock = FakeClock()
    signer = PeriodicSigner(log, interval_s=30, max_unsigned=1000, clock=clock)
    clock.now += 3600
    assert signer.tick() is None and log.tree_heads == ()
    # The quiet hour does not count: the first record after it waits its own period.
    log.append(_record(0))
    clock.now += 0.5
    assert signer.tick() is None
    clock.now += 30
    assert signer.tick() is not None and log.unsigned == 0


def test_stop_signs_whatever_is_left_and_a_clean_stop_leaves_nothing_unsigned(
    log: AuditLog,
) -> None:
    signer = PeriodicSigner(log, interval_s=3600, max_unsigned=1000, clock=FakeClock())
    with signer:
        for n in range(3):
            log.append(_record(n))
    assert log.unsigned == 0 and [h.tree_size for h in log.tree_heads] == [3]
    assert verify_log(log.directory, log.public_key).ok
    assert signer.stop() is None  # stopping twice signs nothing more
    assert log._listeners == []  # a stopped signer is no longer woken by appends


def test_the_thread_is_woken_by_the_mth_record(log: AuditLog) -> None:
    signed = threading.Event()
    clock = FakeClock()  # frozen: only the record count can make a tree head due

    class Watched(PeriodicSigner):
        def _sign(self):  # type: ignore[no-untyped-def]
            head = super()._sign()
            if head is not None:
                signed.set()
            return head

    with Watched(log, interval_s=3600, max_unsigned=10, clock=clock) as signer:
        for n in range(9):
            log.append(_record(n))
        assert not signed.is_set()
        log.append(_record(9))
        assert signed.wait(timeout=120), "the 10th record should have woken the signer"
        assert signer.signed == 1
    assert log.tree_heads[0].tree_size == 10


def test_a_record_another_writer_appends_while_the_signer_runs_is_never_signed(
    log: AuditLog, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 50: a canonical record appended to records.jsonl while a server held the log was
    # signed within one interval, and verified. The writer did not write it, and no holder
    # of the key vouched for it: the signer signs up to it, never over it, and says so.
    clock = FakeClock()
    signer = PeriodicSigner(log, interval_s=30, max_unsigned=1000, clock=clock)
    log.append(_record(0))
    forged = AuditRecord(
        kind="ask", tenant="acme", clearance="public", actor="mallory", subject={"n": 666}
    )
    with (log.directory / RECORDS_FILE).open("ab") as records:
        records.write(canonical_bytes(forged) + b"\n")
    log.append(_record(1))  # the server goes on writing after it
    clock.now += 30
    head = signer.tick()
    assert head is not None and head.tree_size == 1  # the record before the forgery
    assert log.size == 3 and log.unsigned == 2
    finding = log.tampering
    assert finding is not None
    assert "line 2 of records.jsonl, which no signed tree head covers, has no voucher" in finding
    assert "nor over the 1 record after it" in finding
    assert "`ratified audit sign --adopt-unsigned`" in finding
    assert caplog.text.count(finding) == 1
    log.append(_record(2))
    clock.now += 30
    assert signer.tick() is None  # nothing new it may sign; said once, not every period
    assert signer.stop() is None
    assert "line 2 of records.jsonl" in caplog.text
    assert caplog.text.count("line 2 of records.jsonl") == 1
    assert [h.tree_size for h in log.tree_heads] == [1]
    report = verify_log(log.directory, log.public_key)
    assert not report.ok and report.problem is not None
    assert report.problem.startswith("3 of 4 records (lines 2 to 4 of records.jsonl) are not ")
    assert "Line 2 has no voucher from the key in vouchers.jsonl: no process holding the " in (
        report.problem
    )


def test_the_signer_goes_on_once_an_operator_adopts_the_stranger_s_record(
    tmp_path: Path,
) -> None:
    key = generate_key()
    log = AuditLog.open(tmp_path / "audit", key=key)
    clock = FakeClock()
    signer = PeriodicSigner(log, interval_s=30, max_unsigned=1000, clock=clock)
    with (log.directory / RECORDS_FILE).open("ab") as records:
        records.write(canonical_bytes(_record(666)) + b"\n")
    clock.now += 30
    assert signer.tick() is None and log.tampering is not None
    # The operator checks it and vouches for it from another process (the server runs on).
    with AuditLog.open(log.directory, key=key, adopt_unsigned=True) as operator:
        assert operator.sign_tree_head() is not None
    log.append(_record(1))
    clock.now += 30
    head = signer.tick()
    log.close()
    assert head is not None and head.tree_size == 2
    assert log.tampering is None
    assert verify_log(log.directory, key.public_key()).ok


def test_a_log_that_cannot_sign_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with AuditLog.open(tmp_path / "keyless") as keyless:
        with PeriodicSigner(keyless, max_unsigned=1, clock=FakeClock()) as signer:
            keyless.append(_record(0))
            assert signer.tick() is None
        assert keyless.tree_heads == ()
    with PeriodicSigner(None) as nothing:  # a brain without an audit log
        assert nothing.tick() is None


def test_a_closed_log_is_not_signed_on_stop(log: AuditLog) -> None:
    signer = PeriodicSigner(log, clock=FakeClock()).start()
    log.append(_record(0))
    log.checkpoint()
    log.append(_record(1))
    log.close()  # the brain closed first (and signed what it could)
    assert signer.stop() is None


def test_bad_settings_are_refused(log: AuditLog) -> None:
    with pytest.raises(ValueError, match="interval_s must be a positive"):
        PeriodicSigner(log, interval_s=0)
    with pytest.raises(ValueError, match="max_unsigned must be at least 1"):
        PeriodicSigner(log, max_unsigned=0)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_sigint_unwind_so_the_last_tree_head_is_signed(
    log: AuditLog, number: int
) -> None:
    before = signal.getsignal(number)
    with pytest.raises(SystemExit) as stopped, stop_on_sigterm(), PeriodicSigner(log):
        log.append(_record(0))
        os.kill(os.getpid(), number)
        threading.Event().wait(120)  # the handler raises here, in the main thread
    assert stopped.value.code == 0
    assert log.unsigned == 0 and log.tree_heads[-1].tree_size == 1
    assert signal.getsignal(number) == before  # the handler found is put back


def test_off_the_main_thread_no_handler_is_installed() -> None:
    seen: list[object] = []

    def elsewhere() -> None:
        with stop_on_sigterm():
            seen.append(signal.getsignal(signal.SIGTERM))

    thread = threading.Thread(target=elsewhere)
    thread.start()
    thread.join()
    assert seen == [signal.getsignal(signal.SIGTERM)]
