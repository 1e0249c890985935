"""``verify_log`` from scratch: a good log passes, and each kind of damage is named plainly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from ratified_rdf.audit import (
    KEY_ENV,
    PUBLIC_KEY_FILE,
    RECORDS_FILE,
    TREE_HEADS_FILE,
    AuditLog,
    AuditRecord,
    canonical_bytes,
    capture,
    generate_key,
    load_public_key,
    sign_tree_head,
    verify_log,
)


def _record(n: int) -> AuditRecord:
    return AuditRecord(
        kind="write_batch",
        tenant="acme",
        clearance="confidential",
        actor="loader",
        subject={"graph": f"urn:batch:{n}"},
    )


@pytest.fixture(autouse=True)
def no_key_in_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return generate_key()


@pytest.fixture
def folder(tmp_path: Path, key: Ed25519PrivateKey) -> Path:
    """A log of 6 records (two with outcomes) and 3 signed tree heads, then 1 more record."""
    with AuditLog.open(tmp_path, key=key) as log:
        log.append(_record(0))
        log.sign_tree_head()
        for n in (1, 2):
            with capture(log, "ask", {"n": n}, tenant="acme", clearance="public", actor="a"):
                pass
        log.sign_tree_head()
        log.append(_record(3))
        log.sign_tree_head()
        log.append(_record(4))
    return tmp_path


@pytest.fixture
def public_key(folder: Path) -> Ed25519PublicKey:
    return load_public_key(folder / PUBLIC_KEY_FILE)


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def _write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def test_a_record_no_tree_head_covers_fails_with_the_count(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    # This used to pass as "OK" with a note: an appended record went unnoticed.
    report = verify_log(folder, public_key)
    assert not report.ok
    assert (report.records, report.tree_heads, report.unsigned) == (7, 3, 1)
    assert report.latest is not None and report.latest.tree_size == 6
    assert report.problem is not None
    assert report.problem.startswith(
        "1 of 7 records (lines 7 to 7 of records.jsonl) are not covered by a signed tree head; "
        f"the latest, line 3 of {folder / TREE_HEADS_FILE}, covers 6."
    )
    assert str(report).startswith("FAILED: 1 of 7 records")


def test_a_good_log_verifies(folder: Path, key: Ed25519PrivateKey) -> None:
    with AuditLog.open(folder, key=key, adopt_unsigned=True) as log:
        log.sign_tree_head()
    report = verify_log(folder, key.public_key())
    assert report.ok and report.verified, report.problem
    assert (report.records, report.tree_heads, report.unsigned) == (7, 4, 0)
    assert str(report).startswith(
        f"VERIFIED: the audit log at {folder} holds 7 records, every one covered by its "
        "latest of 4 signed tree heads"
    )
    assert "Not checked, as no witness was given: that this is the latest history" in str(report)


def test_without_a_trusted_key_a_sound_log_is_not_verified(
    folder: Path, key: Ed25519PrivateKey
) -> None:
    with AuditLog.open(folder, key=key, adopt_unsigned=True) as log:
        log.sign_tree_head()
    for public_key in (key.public_key(), None):
        report = verify_log(folder, public_key, key_checked=False)
        assert report.ok and not report.verified
        assert str(report).startswith("NOT VERIFIED: ")
        assert "Give --public-key with a copy kept elsewhere" in str(report)


def test_an_empty_new_log_verifies(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    with AuditLog.open(tmp_path, key=key) as log:
        pass
    report = verify_log(tmp_path, log.public_key)
    assert report.ok and report.records == 0
    assert "holds no records yet" in str(report)


def test_a_missing_log_is_reported(tmp_path: Path) -> None:
    report = verify_log(tmp_path / "nowhere", generate_key().public_key())
    assert not report.ok
    assert "records.jsonl is missing" in str(report)


def test_one_changed_byte_in_a_record_is_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    lines[0] = lines[0].replace(b"urn:batch:0", b"urn:batch:9")
    _write_lines(path, lines)
    report = verify_log(folder, public_key)
    assert not report.ok
    assert report.problem == (
        f"The tree head on {folder / TREE_HEADS_FILE}, line 1 does not match the first 1 "
        "records: they were changed, deleted or reordered after it was signed. Restore the "
        "file from a backup and compare it with the witness's copy."
    )


def test_a_byte_that_breaks_canonical_form_is_caught(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    lines[1] = lines[1].replace(b'"actor":', b'"actor" :')
    _write_lines(path, lines)
    report = verify_log(folder, public_key)
    assert f"{path}, line 2 is not in RFC 8785 canonical form" in str(report)


def test_a_damaged_line_is_not_json(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    lines[1] = lines[1][:-1]
    _write_lines(path, lines)
    assert f"{path}, line 2 is not JSON" in str(verify_log(folder, public_key))


def test_a_canonical_line_outside_the_schema_is_caught(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    entry = json.loads(lines[0])
    entry["clearance"] = "top-secret"
    lines[0] = rfc8785.dumps(entry)
    _write_lines(path, lines)
    problem = verify_log(folder, public_key).problem
    assert problem is not None
    assert f"{path}, line 1 does not fit the audit schema (record.clearance:" in problem


def test_a_variant_form_the_writer_never_writes_is_caught(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    entry = json.loads(lines[0])
    del entry["error"]  # A default left out still parses, but the writer always writes it.
    lines[0] = rfc8785.dumps(entry)
    _write_lines(path, lines)
    assert "is not written the way the log writes it" in str(verify_log(folder, public_key))


def test_a_deleted_line_is_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    del lines[1]  # The started record of the first capture: its outcome now points nowhere.
    _write_lines(path, lines)
    problem = verify_log(folder, public_key).problem
    assert problem is not None
    assert problem.startswith(f"{path}, line 2 is the outcome of record ")
    assert "no earlier line holds that record: lines were deleted or reordered" in problem


def test_a_deleted_line_without_sidecars_is_caught_by_the_tree_heads(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    del lines[5]
    _write_lines(path, lines)
    problem = verify_log(folder, public_key).problem
    assert problem is not None and "tree head on" in problem and "line 3" in problem


def test_lines_cut_from_the_end_are_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / RECORDS_FILE
    _write_lines(path, _lines(path)[:4])
    problem = verify_log(folder, public_key).problem
    assert problem is not None
    assert "line 2 covers 5 records, but records.jsonl holds only 4" in problem


def test_a_reordered_line_is_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    lines[5], lines[6] = lines[6], lines[5]
    _write_lines(path, lines)
    problem = verify_log(folder, public_key).problem
    assert problem is not None
    assert "line 3 does not match the first 6 records: they were changed, deleted or " in problem


def test_an_outcome_moved_before_its_record_is_caught(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / RECORDS_FILE
    lines = _lines(path)
    lines[3], lines[4] = lines[4], lines[3]
    _write_lines(path, lines)
    problem = verify_log(folder, public_key).problem
    assert problem is not None
    assert "line 4 is the outcome of record" in problem


def test_a_copied_line_is_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / RECORDS_FILE
    _write_lines(path, [*_lines(path), _lines(path)[0]])
    assert "line 8 repeats the id" in str(verify_log(folder, public_key))


def test_a_forged_tree_head_is_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / TREE_HEADS_FILE
    lines = _lines(path)
    head = json.loads(lines[2])
    head["tree_size"] = 7  # Claim the unsigned record too, keeping the old signature.
    lines[2] = rfc8785.dumps(head)
    _write_lines(path, lines)
    problem = verify_log(folder, public_key).problem
    assert problem == (
        f"The tree head on {path}, line 3 has a signature that does not verify: the tree "
        "head was forged or edited. Restore the file from a backup and compare it with the "
        "witness's copy."
    )


def test_a_tree_head_signed_by_another_key_is_caught(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / TREE_HEADS_FILE
    with AuditLog.open(folder) as log:
        honest = log.tree_heads[-1]
    forged = sign_tree_head(generate_key(), honest.tree_size, honest.root, honest.timestamp)
    _write_lines(path, [*_lines(path)[:2], canonical_bytes(forged)])
    problem = verify_log(folder, public_key).problem
    assert problem is not None
    assert f"line 3 was signed by the key {forged.key_id}" in problem
    assert "if you did, the tree head is forged" in problem


def test_the_wrong_public_key_is_named(folder: Path) -> None:
    report = verify_log(folder, generate_key().public_key())
    assert not report.ok
    assert "line 1 was signed by the key" in str(report)
    assert f"Give the log's public key ({PUBLIC_KEY_FILE})" in str(report)


def test_reordered_tree_heads_are_caught(folder: Path, public_key: Ed25519PublicKey) -> None:
    path = folder / TREE_HEADS_FILE
    lines = _lines(path)
    lines[1], lines[2] = lines[2], lines[1]
    _write_lines(path, lines)
    assert "is older or smaller than the one before it" in str(verify_log(folder, public_key))


@pytest.mark.parametrize("name", [RECORDS_FILE, TREE_HEADS_FILE])
def test_a_torn_last_line_is_caught(folder: Path, public_key: Ed25519PublicKey, name: str) -> None:
    path = folder / name
    count = len(_lines(path))
    with path.open("ab") as file:
        file.write(b'{"actor":"load')
    report = verify_log(folder, public_key)
    assert report.problem == (
        f"The audit log at {folder} has a torn last line in {name} (line {count + 1}): the "
        "process probably stopped while writing. Move the line aside and run "
        "`ratified audit verify` again."
    )


def test_a_complete_line_missing_its_newline_is_torn_too(
    folder: Path, public_key: Ed25519PublicKey
) -> None:
    path = folder / RECORDS_FILE
    path.write_bytes(path.read_bytes()[:-1])
    assert "has a torn last line in records.jsonl (line 7)" in str(verify_log(folder, public_key))


def test_an_unreadable_file_is_reported(folder: Path, public_key: Ed25519PublicKey) -> None:
    (folder / TREE_HEADS_FILE).unlink()
    (folder / TREE_HEADS_FILE).mkdir()
    report = verify_log(folder, public_key)
    assert not report.ok
    assert f"The audit log at {folder} cannot be read" in str(report)


@pytest.mark.slow
def test_every_single_bit_flip_anywhere_is_caught(tmp_path: Path) -> None:
    """Exhaustive: a log whose every record a tree head covers, each byte of each file
    flipped in turn (one bit), fails verification every time."""
    with AuditLog.open(tmp_path, key=generate_key()) as log:
        for n in range(3):
            with capture(log, "ask", {"n": n}, tenant="acme", clearance="public", actor="a"):
                pass
        log.sign_tree_head()
        log.append(_record(3))
        log.sign_tree_head()
    key = load_public_key(tmp_path / PUBLIC_KEY_FILE)
    assert verify_log(tmp_path, key).ok
    for name in (RECORDS_FILE, TREE_HEADS_FILE):
        path = tmp_path / name
        original = path.read_bytes()
        missed = []
        for index in range(len(original)):
            damaged = bytearray(original)
            damaged[index] ^= 0x01
            path.write_bytes(bytes(damaged))
            if verify_log(tmp_path, key).ok:
                missed.append(index)
        path.write_bytes(original)
        assert missed == [], f"{name}: flips at {missed[:10]} went unnoticed"
    assert verify_log(tmp_path, key).ok


def test_a_forked_tree_head_is_caught(tmp_path: Path) -> None:
    """Two histories from one key: a tree head of the other fork spliced in does not verify."""
    main, fork = tmp_path / "main", tmp_path / "fork"
    key = generate_key()
    with AuditLog.open(main, key=key) as log:
        log.append(_record(0))
        log.sign_tree_head()
    fork.mkdir()
    for name in (RECORDS_FILE, TREE_HEADS_FILE):
        (fork / name).write_bytes((main / name).read_bytes())
    with AuditLog.open(main, key=key) as log:
        log.append(_record(1))
        log.sign_tree_head()
    with AuditLog.open(fork, key=key) as log:
        log.append(_record(2))  # the same size, another record: a fork
        log.sign_tree_head()
    assert verify_log(main, key.public_key()).ok and verify_log(fork, key.public_key()).ok
    heads = _lines(main / TREE_HEADS_FILE)
    _write_lines(main / TREE_HEADS_FILE, [*heads, _lines(fork / TREE_HEADS_FILE)[-1]])
    report = verify_log(main, key.public_key())
    assert not report.ok and report.problem
