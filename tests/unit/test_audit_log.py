"""The on-disk audit log: durable appends, signed tree heads, proofs, several processes
appending to one log, and ``capture``."""

from __future__ import annotations

import errno
import gc
import importlib
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from ratified_rdf.audit import (
    KEY_ENV,
    PRIVATE_KEY_FILE,
    PUBLIC_KEY_FILE,
    RECORDS_FILE,
    TREE_HEADS_FILE,
    AnchorSidecar,
    AnchorState,
    AuditError,
    AuditLog,
    AuditRecord,
    DetailSidecar,
    OutcomeSidecar,
    canonical_bytes,
    capture,
    generate_key,
    leaf_hash,
    load_private_key,
    load_public_key,
    parse_entry,
    save_private_key,
    sign_tree_head,
    verify_consistency,
    verify_inclusion,
    verify_log,
    verify_tree_head,
)
from ratified_rdf.audit.log import public_key_path

GUARD_S = 120
"""How long a test waits for a thread it expects to end: far above what it takes."""


def _record(n: int = 0) -> AuditRecord:
    return AuditRecord(
        kind="query", tenant="acme", clearance="internal", actor="bob", subject={"n": n}
    )


@pytest.fixture(autouse=True)
def signing_key(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The operator's signing key: a file outside every log's folder, named by the env."""
    path = tmp_path_factory.mktemp("operator") / "audit-key.pem"
    monkeypatch.setenv(KEY_ENV, str(path))
    return path


@pytest.fixture
def log(tmp_path: Path) -> Iterator[AuditLog]:
    opened = AuditLog.open(tmp_path / "audit")
    yield opened
    opened.close()


def test_a_new_log_makes_its_files_and_its_key_outside_its_folder(
    log: AuditLog, signing_key: Path
) -> None:
    # The key used to be made inside the folder (log-key.pem), where whoever could rewrite
    # the log could re-sign it: now only a copy of the public key is kept there.
    folder = log.directory
    assert (folder / RECORDS_FILE).exists() and (folder / TREE_HEADS_FILE).exists()
    assert not (folder / PRIVATE_KEY_FILE).exists()
    assert stat.S_IMODE(signing_key.stat().st_mode) == 0o600
    raw = log.public_key.public_bytes_raw()
    assert load_private_key(signing_key).public_key().public_bytes_raw() == raw
    assert load_public_key(public_key_path(signing_key)).public_bytes_raw() == raw
    assert load_public_key(folder / PUBLIC_KEY_FILE).public_bytes_raw() == raw
    assert log.can_sign and log.signing_problem is None


def test_each_line_is_exactly_the_leaf(log: AuditLog) -> None:
    records = [_record(i) for i in range(3)]
    assert [log.append(record) for record in records] == [0, 1, 2]
    lines = (log.directory / RECORDS_FILE).read_bytes().split(b"\n")
    assert lines == [canonical_bytes(record) for record in records] + [b""]
    assert list(log.entries()) == records


def test_proofs_from_the_log_verify_against_its_signed_heads(log: AuditLog) -> None:
    records = [_record(i) for i in range(5)]
    for record in records[:3]:
        log.append(record)
    old = log.sign_tree_head()
    for record in records[3:]:
        log.append(record)
    new = log.sign_tree_head()
    assert verify_tree_head(new, log.public_key)
    assert (old.tree_size, new.tree_size) == (3, 5)
    assert new.timestamp >= old.timestamp
    for index, record in enumerate(records):
        proof = log.inclusion_proof(index, new.tree_size)
        leaf = leaf_hash(canonical_bytes(record))
        assert verify_inclusion(leaf, index, new.tree_size, proof, new.root)
    proof = log.consistency_proof(old.tree_size, new.tree_size)
    assert verify_consistency(old.tree_size, new.tree_size, old.root, new.root, proof)
    assert log.tree_heads == (old, new)


def test_reopening_restores_the_tree_and_heads(tmp_path: Path) -> None:
    with AuditLog.open(tmp_path) as log:
        for i in range(4):
            log.append(_record(i))
        head = log.sign_tree_head()
    with AuditLog.open(tmp_path) as log:
        assert log.size == 4
        assert log.root() == head.root
        assert log.tree_heads == (head,)
        log.append(_record(4))
        # A record no tree head covers fails verification (it used to pass): sign it.
        assert not verify_log(tmp_path, log.public_key).ok
        log.sign_tree_head()
    assert verify_log(tmp_path, load_public_key(tmp_path / PUBLIC_KEY_FILE)).ok


def test_two_opens_of_one_log_append_into_one_tree(log: AuditLog) -> None:
    # flock locks are per open file, so a second open in this process stands in for another.
    other = AuditLog.open(log.directory)
    try:
        assert other.can_sign  # nothing left over: the first opener is still here
        log.append(_record(1))
        other.append(_record(2))
        log.append(_record(3))
        assert log.size == other.size == 3
        head = other.sign_tree_head()
        assert head is not None and head.tree_size == 3
        assert log.tree_heads == (head,) and log.unsigned == 0
        assert log.root() == other.root() == head.root
        log.append(_record(4))
        assert log.sign_tree_head().tree_size == 4
    finally:
        other.close()
    subjects = [e.subject for e in log.entries() if isinstance(e, AuditRecord)]
    assert subjects == [{"n": 1}, {"n": 2}, {"n": 3}, {"n": 4}]
    assert verify_log(log.directory, log.public_key).ok


def test_a_writer_without_the_key_is_no_peer_whose_records_are_signed(
    log: AuditLog, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A process with the key vouches for what it appends; one without cannot, so nothing
    # tells its records from a stranger's: none is signed over until an operator adopts it.
    monkeypatch.delenv(KEY_ENV)
    keyless = AuditLog.open(log.directory, warn=False)
    try:
        log.append(_record(1))
        keyless.append(_record(2))
        log.append(_record(3))
    finally:
        keyless.close()
    assert log.checkpoint() is not None  # no raise: a closing brain or a server goes on
    assert [h.tree_size for h in log.tree_heads] == [1]
    assert log.tampering is not None and "line 2 of records.jsonl" in log.tampering
    assert log.tampering in caplog.text
    with pytest.raises(AuditError, match=r"line 2 of records.jsonl, which no signed tree head"):
        log.sign_tree_head()  # the explicit call says it
    log.adopt_unsigned()
    head = log.sign_tree_head()
    assert head is not None and head.tree_size == 3 and log.tampering is None
    assert verify_log(log.directory, log.public_key).ok


def test_a_voucher_copied_onto_a_stranger_s_record_vouches_for_nothing(log: AuditLog) -> None:
    log.append(_record(1))
    log.sign_tree_head()
    log.append(_record(2))
    vouchers = log.directory / "vouchers.jsonl"
    own = vouchers.read_bytes().split(b"\n")[1]
    assert own.startswith(b'{"index":1,')
    with AuditLog.open(log.directory) as beside:  # a peer process stands by
        with (log.directory / RECORDS_FILE).open("ab") as records:
            records.write(canonical_bytes(_record(666)) + b"\n")
        with vouchers.open("ab") as file:
            file.write(own.replace(b'"index":1,', b'"index":2,') + b"\n")
            file.write(b"not a voucher\n")
        assert beside.checkpoint() is not None
        assert [h.tree_size for h in beside.tree_heads] == [1, 2]
        assert beside.tampering is not None and "line 3 of records.jsonl" in beside.tampering
    report = verify_log(log.directory, log.public_key)
    assert report.problem is not None and "Line 3 has no voucher from the key" in report.problem


def test_tree_heads_are_numbered_in_the_order_of_the_file(tmp_path: Path) -> None:
    with AuditLog.open(tmp_path) as log:
        log.append(_record(1))
        first = log.sign_tree_head()
        second = log.sign_tree_head()
    with AuditLog.open(tmp_path) as log:  # another process goes on counting
        log.append(_record(2))
        third = log.sign_tree_head()
    assert [first.sequence, second.sequence, third.sequence] == [0, 1, 2]


def test_a_log_signed_before_heads_were_numbered_counts_its_old_heads(tmp_path: Path) -> None:
    key = generate_key()
    with AuditLog.open(tmp_path, key=key) as log:
        log.append(_record(1))
        root = log.root()
    # Two old-style heads (unnumbered, signed as tree-head/v1), as such a log holds them.
    old = [sign_tree_head(key, 1, root, 1_700_000_000_000 + n) for n in range(2)]
    heads = tmp_path / TREE_HEADS_FILE
    heads.write_bytes(b"".join(canonical_bytes(head) + b"\n" for head in old))
    assert b"sequence" not in heads.read_bytes()
    with AuditLog.open(tmp_path, key=key) as log:
        log.append(_record(2))
        assert log.sign_tree_head().sequence == 2  # after the two before it
    assert verify_log(tmp_path, key.public_key()).ok
    lines = heads.read_bytes().split(b"\n")
    heads.write_bytes(b"\n".join(lines[1:]))  # an old head deleted: the new one shows it
    report = verify_log(tmp_path, key.public_key())
    assert report.problem is not None
    assert "line 2 is the log's tree head number 3, so 1 tree head before it is missing" in (
        report.problem
    )
    # An unnumbered head after a numbered one: signed with the key, yet out of place.
    later = sign_tree_head(key, 2, verify_log(tmp_path, key.public_key()).latest.root, 2**42)
    heads.write_bytes(b"\n".join([*lines[:3], canonical_bytes(later), b""]))
    report = verify_log(tmp_path, key.public_key())
    assert report.problem is not None
    assert "line 4 carries no number, but the tree head before it does" in report.problem


@pytest.mark.slow
def test_processes_appending_at_once_lose_nothing(tmp_path: Path, signing_key: Path) -> None:
    directory = tmp_path / "audit"
    with AuditLog.open(directory) as log:
        log.sign_tree_head()
    script = (
        "import sys\n"
        "from ratified_rdf.audit import AuditLog, AuditRecord\n"
        "with AuditLog.open(sys.argv[1]) as log:\n"
        "    for i in range(40):\n"
        "        log.append(AuditRecord(kind='query', tenant='acme', clearance='internal',\n"
        "                               actor=sys.argv[2], subject={'n': i}))\n"
        "        if i % 10 == 9:\n"
        "            log.checkpoint()\n"
    )
    workers = [
        subprocess.Popen([sys.executable, "-c", script, str(directory), f"p{n}"]) for n in range(4)
    ]
    assert [w.wait(timeout=120) for w in workers] == [0, 0, 0, 0]
    with AuditLog.open(directory) as log:
        assert log.can_sign and log.unsigned == 0  # every process signed what it wrote
        records = [e for e in log.entries() if isinstance(e, AuditRecord)]
        heads = log.tree_heads
    assert sorted((r.actor, r.subject["n"]) for r in records) == sorted(
        (f"p{n}", i) for n in range(4) for i in range(40)
    )
    assert [h.tree_size for h in heads] == sorted(h.tree_size for h in heads)
    assert verify_log(directory, load_public_key(directory / PUBLIC_KEY_FILE)).ok


def test_records_left_unsigned_are_held_for_everyone_who_opens_the_log(tmp_path: Path) -> None:
    directory = tmp_path / "audit"
    with AuditLog.open(directory) as log:
        log.append(_record(1))  # its process stops before signing
    first = AuditLog.open(directory)  # opened by no one else: it judges them left over
    second = AuditLog.open(directory)  # opened beside it: told the same
    try:
        assert not first.can_sign and not second.can_sign
        assert second.signing_problem is not None
        assert "ends with 1 record" in second.signing_problem
    finally:
        first.close()
        second.close()
    with AuditLog.open(directory, adopt_unsigned=True) as log:
        assert log.sign_tree_head() is not None
    with AuditLog.open(directory) as log, AuditLog.open(directory) as beside:
        assert log.can_sign and beside.can_sign


def test_a_torn_last_line_is_reported_or_set_aside(tmp_path: Path) -> None:
    with AuditLog.open(tmp_path) as log:
        log.append(_record())
        log.sign_tree_head()
    with (tmp_path / RECORDS_FILE).open("ab") as records:
        records.write(b'{"actor":"bo')
    with pytest.raises(AuditError, match=r"torn last line in records.jsonl \(line 2\)"):
        AuditLog.open(tmp_path, recover=False)
    # After a crash, opening moves the torn bytes aside (nothing is lost) and carries on.
    with AuditLog.open(tmp_path) as log:
        assert log.size == 1
        log.append(_record())
        log.sign_tree_head()
    [aside] = tmp_path.glob(f"{RECORDS_FILE}.torn-*")
    assert aside.read_bytes() == b'{"actor":"bo'
    assert verify_log(tmp_path, load_public_key(tmp_path / PUBLIC_KEY_FILE)).ok


def test_records_that_no_longer_match_the_latest_head_stop_the_log(tmp_path: Path) -> None:
    with AuditLog.open(tmp_path) as log:
        log.append(_record(1))
        log.sign_tree_head()
    path = tmp_path / RECORDS_FILE
    path.write_bytes(path.read_bytes().replace(b'"n":1', b'"n":2'))
    with pytest.raises(AuditError, match="no longer match its latest signed tree head"):
        AuditLog.open(tmp_path)


def test_a_log_whose_key_is_lost_is_not_opened_with_a_new_one(
    tmp_path: Path, signing_key: Path
) -> None:
    with AuditLog.open(tmp_path) as log:
        log.append(_record())
        log.sign_tree_head()
    signing_key.unlink()
    with pytest.raises(AuditError, match=f"There is no signing key at {signing_key}, and the"):
        AuditLog.open(tmp_path)
    assert not signing_key.exists()


def test_a_log_without_a_key_appends_but_cannot_sign_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with AuditLog.open(tmp_path / "audit") as log:
        log.append(_record(1))
        assert log.sign_tree_head() is None and log.checkpoint() is None
        log.append(_record(2))
        assert not log.can_sign and log.tree_heads == ()
    said = [r.getMessage() for r in caplog.records if r.name == "ratified_rdf.audit"]
    assert len(said) == 1
    assert said[0].startswith(f"The audit log at {tmp_path / 'audit'} was opened without a ")
    assert f"Set {KEY_ENV} to a key file outside the log's folder" in said[0]
    assert not list((tmp_path / "audit").glob("*.pem"))
    with pytest.raises(AuditError, match="opened without a signing key"):
        _ = log.public_key


def test_a_key_left_in_the_log_folder_is_not_used_and_the_message_says_how_to_move_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.delenv(KEY_ENV)
    old = generate_key()  # A log from before the key moved out.
    save_private_key(old, tmp_path / PRIVATE_KEY_FILE)
    with AuditLog.open(tmp_path, key=old) as log:
        log.append(_record())
        log.sign_tree_head()
    with AuditLog.open(tmp_path) as log:
        log.append(_record(2))
        assert log.sign_tree_head() is None
        assert log.signing_problem is not None
    assert f"keeps its signing key in its own folder ({tmp_path / PRIVATE_KEY_FILE})" in (
        log.signing_problem
    )
    assert f"mv {tmp_path / PRIVATE_KEY_FILE} ~/.config/ratified-rdf/audit-key.pem" in (
        log.signing_problem
    )
    assert f"export {KEY_ENV}=" in log.signing_problem
    assert log.signing_problem in caplog.text
    # Pointing the variable at the key in the folder is refused outright.
    monkeypatch.setenv(KEY_ENV, str(tmp_path / PRIVATE_KEY_FILE))
    with pytest.raises(AuditError, match="is inside the audit log's folder"):
        AuditLog.open(tmp_path)
    # Moved out, it signs again (the records written meanwhile only once adopted).
    moved = tmp_path.parent / f"{tmp_path.name}-key.pem"
    (tmp_path / PRIVATE_KEY_FILE).rename(moved)
    monkeypatch.setenv(KEY_ENV, str(moved))
    with AuditLog.open(tmp_path, adopt_unsigned=True) as log:
        head = log.sign_tree_head()
    assert head is not None and head.tree_size == 2
    assert verify_log(tmp_path, old.public_key()).ok


def test_records_no_tree_head_covered_at_open_are_not_signed_over_unless_adopted(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with AuditLog.open(tmp_path) as log:
        log.append(_record(1))
        log.sign_tree_head()
        log.append(_record(2))  # killed before it signed: or someone appended it
    with AuditLog.open(tmp_path) as log:
        assert not log.can_sign and log.sign_tree_head() is None
        log.append(_record(3))  # still written
    assert log.signing_problem is not None
    assert "ends with 1 record that no signed tree head covers" in log.signing_problem
    assert "`ratified audit sign --adopt-unsigned`" in log.signing_problem
    assert log.signing_problem in caplog.text
    with AuditLog.open(tmp_path, adopt_unsigned=True) as log:
        head = log.sign_tree_head()
    assert head is not None and head.tree_size == 3
    with AuditLog.open(tmp_path) as log:  # nothing unsigned now: signs as usual
        assert log.can_sign


def test_checkpoint_signs_only_what_is_new(log: AuditLog) -> None:
    assert log.checkpoint() is None  # nothing to sign
    log.append(_record())
    head = log.checkpoint()
    assert head is not None and head.tree_size == 1 and log.unsigned == 0
    assert log.checkpoint() is None
    assert log.tree_heads == (head,)


def test_a_log_is_not_opened_with_another_key(tmp_path: Path) -> None:
    with AuditLog.open(tmp_path) as log:
        log.sign_tree_head()
    with pytest.raises(AuditError, match="Open it with its own key"):
        AuditLog.open(tmp_path, key=generate_key())


def test_sidecars_must_point_at_what_the_log_holds(log: AuditLog) -> None:
    with pytest.raises(AuditError, match="Append the record before what annotates it"):
        log.append(OutcomeSidecar(annotates="0" * 32, outcome="succeeded", duration_ms=1))
    with pytest.raises(AuditError, match="Append the record before what annotates it"):
        log.append(DetailSidecar(annotates="0" * 32, detail={"rows": 1}))
    with pytest.raises(AuditError, match="that this log never signed"):
        log.append(
            AnchorSidecar(
                anchor="w",
                tree_size=0,
                timestamp=0,
                root_hash="00" * 32,
                state=AnchorState.PENDING,
            )
        )
    assert log.size == 0


def test_concurrent_appends_all_land_once(log: AuditLog) -> None:
    def work(worker: int) -> None:
        for i in range(50):
            log.append(_record(worker * 100 + i))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    subjects = [entry.subject for entry in log.entries() if isinstance(entry, AuditRecord)]
    expected = [{"n": w * 100 + i} for w in range(4) for i in range(50)]
    assert log.size == len(subjects) == 200
    assert all(subject in subjects for subject in expected)
    log.sign_tree_head()
    assert verify_log(log.directory, log.public_key).ok


def test_capture_records_start_then_success(log: AuditLog, monkeypatch: pytest.MonkeyPatch) -> None:
    # The block "takes" 250.99 ms on a clock of the test's: its duration is in whole ms, cut.
    ticks = iter([7_000_000_000, 7_250_999_999])
    clock = SimpleNamespace(monotonic_ns=lambda: next(ticks))
    monkeypatch.setattr(importlib.import_module("ratified_rdf.audit.capture"), "time", clock)
    with capture(
        log, "ask", {"question": "q"}, tenant="acme", clearance="public", actor="eve"
    ) as record:
        assert list(log.entries()) == [record]
    started, outcome = log.entries()
    assert isinstance(started, AuditRecord) and isinstance(outcome, OutcomeSidecar)
    assert started.outcome == "started" and started.kind == "ask"
    assert (outcome.annotates, outcome.outcome, outcome.error) == (record.id, "succeeded", None)
    assert outcome.duration_ms == 250


def test_capture_records_a_failure_and_lets_it_through(log: AuditLog) -> None:
    with (
        pytest.raises(KeyError),
        capture(log, "build", "records/tls13", tenant="acme", clearance="internal", actor="ci"),
    ):
        raise KeyError("draft-ietf-tls-tls13-28")
    _, outcome = log.entries()
    assert isinstance(outcome, OutcomeSidecar)
    assert outcome.outcome == "failed"
    assert outcome.error_class == "KeyError"
    assert outcome.error == "'draft-ietf-tls-tls13-28'"


def test_capture_fails_closed_when_the_start_cannot_be_written(log: AuditLog) -> None:
    log.close()  # Writing to a closed log fails like a full or read-only disk would.
    ran = False
    with (
        pytest.raises(AuditError, match="The query call did not run"),
        capture(log, "query", "holdings", tenant="acme", clearance="public", actor="x"),
    ):
        ran = True
    assert not ran
    assert (log.directory / RECORDS_FILE).read_bytes() == b""


def test_capture_fails_closed_on_an_invalid_record(log: AuditLog) -> None:
    with (
        pytest.raises(AuditError, match="did not run"),
        capture(log, "ask", "q", tenant="", clearance="public", actor="x"),
    ):
        pytest.fail("the block must not run")
    assert log.size == 0


def test_an_abandoned_capture_never_holds_the_log_from_the_garbage_collector(
    log: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A call entered and then dropped (an MCP call cancelled while its record was written),
    # caught in a reference cycle, so only the garbage collector frees it; the collector
    # runs wherever memory is allocated, here inside the next append, under the log's lock.
    abandoned = capture(log, "query", "runaway", tenant="acme", clearance="public", actor="x")
    record = abandoned.__enter__()
    cycle: list[object] = [abandoned]
    cycle.append(cycle)
    del abandoned, cycle
    catch_up = log._catch_up

    def collecting(**kwargs: bool) -> None:
        gc.collect()
        catch_up(**kwargs)

    monkeypatch.setattr(log, "_catch_up", collecting)
    gc.disable()
    try:
        appending = threading.Thread(target=log.append, args=(_record(1),), daemon=True)
        appending.start()
        appending.join(GUARD_S)  # a guard against hanging the suite, not a time budget
    finally:
        gc.enable()
    assert not appending.is_alive(), "the append waited for itself, holding the log's lock"
    # Another process (a second open stands in for one) appends at once: nothing holds it.
    other = AuditLog.open(log.directory)
    try:
        other.append(_record(2))
    finally:
        other.close()
    entries = list(log.entries())
    assert [e.subject for e in entries if isinstance(e, AuditRecord)] == [
        "runaway",
        {"n": 1},
        {"n": 2},
    ]
    # The dropped call wrote nothing more: its record waits for an outcome, as a killed
    # process's does; whoever abandons a call says how it ended.
    assert not [e for e in entries if isinstance(e, OutcomeSidecar) and e.annotates == record.id]


def test_writing_to_the_log_from_inside_its_own_append_is_refused_not_a_hang(
    log: AuditLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    catch_up = log._catch_up
    refused: list[AuditError] = []

    def reentering(**kwargs: bool) -> None:
        catch_up(**kwargs)
        monkeypatch.setattr(log, "_catch_up", catch_up)
        try:
            log.append(_record(2))
        except AuditError as error:
            refused.append(error)

    monkeypatch.setattr(log, "_catch_up", reentering)
    appending = threading.Thread(target=log.append, args=(_record(1),), daemon=True)
    appending.start()
    appending.join(GUARD_S)  # a guard against hanging the suite, not a time budget
    assert not appending.is_alive(), "the append waited for itself, holding the log's lock"
    assert len(refused) == 1 and "from inside one of its own appends" in str(refused[0])
    assert [e.subject for e in log.entries() if isinstance(e, AuditRecord)] == [{"n": 1}]


def test_entries_read_back_what_was_written(log: AuditLog) -> None:
    record = _record()
    log.append(record)
    head = log.sign_tree_head()
    step = AnchorSidecar(
        anchor="w",
        tree_size=head.tree_size,
        timestamp=head.timestamp,
        root_hash=head.root_hash,
        state=AnchorState.PENDING,
    )
    log.append(step)
    assert list(log.entries()) == [record, step]
    line = (log.directory / RECORDS_FILE).read_bytes().split(b"\n")[1]
    assert parse_entry(line) == step


def test_a_failed_write_leaves_no_torn_line(log: AuditLog, monkeypatch: pytest.MonkeyPatch) -> None:
    log.append(_record(1))
    before = (log.directory / RECORDS_FILE).read_bytes()
    real_write = os.write

    def half_then_full_disk(fd: int, data: bytes) -> int:
        real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full_disk)
    with pytest.raises(AuditError, match=r"No space left on device.*Check the disk"):
        log.append(_record(2))
    monkeypatch.undo()
    assert (log.directory / RECORDS_FILE).read_bytes() == before
    assert log.size == 1
    log.append(_record(3))
    log.sign_tree_head()
    assert verify_log(log.directory, log.public_key).ok


@pytest.mark.parametrize("work_fails", [False, True])
def test_capture_raises_when_the_outcome_cannot_be_written(log: AuditLog, work_fails: bool) -> None:
    with (
        pytest.raises(AuditError, match="Could not write to the audit log") as caught,
        capture(log, "review", "shape report", tenant="acme", clearance="internal", actor="r"),
    ):
        log.close()  # The disk goes away while the work runs.
        if work_fails:
            raise ValueError("work failed")
    chain: list[BaseException] = []
    link: BaseException | None = caught.value
    while link is not None:
        chain.append(link)
        link = link.__cause__ or link.__context__
    assert isinstance(chain[1], OSError)
    assert any(isinstance(link, ValueError) for link in chain) == work_fails
    started = list(log.entries())
    assert len(started) == 1 and isinstance(started[0], AuditRecord)
