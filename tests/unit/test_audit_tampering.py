"""Issue 18's audit tampering classes, each run as a stranger would: `ratified audit verify`
on the log's folder with the public key kept elsewhere, asserting the exit code and the
counts in what it prints. Every one of these passed ("OK", exit 0) before.

Exit codes: 0 verified, 1 failed, 4 consistent but not verified (no --public-key).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ratified_rdf.audit import (
    KEY_ENV,
    PRIVATE_KEY_FILE,
    RECORDS_FILE,
    TREE_HEADS_FILE,
    AuditLog,
    AuditRecord,
    LocalWitnessAnchor,
    SignedTreeHead,
    audit_dir,
    canonical_bytes,
    generate_key,
    load_private_key,
    parse_entry,
    save_private_key,
    save_public_key,
)
from ratified_rdf.audit.log import public_key_path
from ratified_rdf.surfaces.cli import main

ROUNDS, PER_ROUND = 4, 10
"""The history: four rounds of ten records, each signed and seen by the witness."""


@pytest.fixture(autouse=True)
def operator_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The operator's signing key, outside the log's folder (made on first use)."""
    path = tmp_path / "operator" / "audit-key.pem"
    monkeypatch.setenv(KEY_ENV, str(path))
    return path


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store path; its log is ``<store>.audit`` (the store itself is not needed here)."""
    return tmp_path / "brain"


@pytest.fixture
def witness(tmp_path: Path) -> Path:
    return tmp_path / "witness"


def _record(n: int, who: str = "alice") -> AuditRecord:
    return AuditRecord(
        kind="ask", tenant="acme", clearance="internal", actor=who, subject={"question": n}
    )


def _history(
    store: Path, witness: Path, rounds: range = range(ROUNDS), *, key_path: Path | None = None
) -> list[SignedTreeHead]:
    """Rounds of ten records; each round signed and its tree head submitted to the witness."""
    heads = []
    with AuditLog.open(audit_dir(store), key_path=key_path) as log:
        anchor = LocalWitnessAnchor(witness, log.public_key)
        for r in rounds:
            for n in range(PER_ROUND):
                log.append(_record(r * PER_ROUND + n))
            head = log.sign_tree_head()
            assert head is not None
            anchor.submit(head, log.consistency_proof)
            heads.append(head)
    return heads


def _verify(store: Path, key: Path | None, *extra: str) -> Result:
    args = ["audit", "verify", str(audit_dir(store))]
    if key is not None:
        args += ["--public-key", str(key)]
    return CliRunner().invoke(main, [*args, *extra])


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def _write_lines(path: Path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def _failures(result: Result) -> list[str]:
    return [line for line in result.stdout.splitlines() if line.startswith("FAILED: ")]


def test_an_untouched_log_passes_with_the_public_key_and_the_witness(
    store: Path, witness: Path, operator_key: Path
) -> None:
    _history(store, witness)
    key = public_key_path(operator_key)
    alone = _verify(store, key)
    assert alone.exit_code == 0, alone.stdout
    assert alone.stdout.startswith(
        f"VERIFIED: the audit log at {audit_dir(store)} holds 40 records, every one covered "
        "by its latest of 4 signed tree heads"
    )
    assert "Not checked, as no witness was given" in alone.stdout
    witnessed = _verify(store, key, "--witness", str(witness))
    assert witnessed.exit_code == 0, witnessed.stdout
    assert "It extends the tree head of size 40 the witness last saw" in witnessed.stdout


def test_the_cli_signs_and_anchors_and_the_result_verifies(
    store: Path, witness: Path, operator_key: Path
) -> None:
    runner = CliRunner()
    with AuditLog.open(audit_dir(store)) as log:
        for n in range(5):
            log.append(_record(n))
        log.sign_tree_head()
    anchored = runner.invoke(
        main, ["audit", "anchor", "--store", str(store), "--witness", str(witness)]
    )
    assert anchored.exit_code == 0, anchored.stdout
    assert "Tree head of size 5: anchored at local-witness." in anchored.stdout
    result = _verify(store, public_key_path(operator_key), "--witness", str(witness))
    assert result.exit_code == 0, result.stdout  # the anchoring steps were signed too


def test_without_the_public_key_it_is_not_verified(store: Path, witness: Path) -> None:
    _history(store, witness)
    result = _verify(store, None)
    assert result.exit_code == 4, result.stdout
    assert result.stdout.startswith("NOT VERIFIED: ")
    assert "VERIFIED: the" not in result.stdout.replace("NOT VERIFIED: the", "")


@pytest.mark.parametrize("kept", range(ROUNDS))
def test_sth_truncated_at_a_line_boundary(
    store: Path, witness: Path, operator_key: Path, kept: int
) -> None:
    _history(store, witness)
    heads = audit_dir(store) / TREE_HEADS_FILE
    _write_lines(heads, _lines(heads)[:kept])
    result = _verify(store, public_key_path(operator_key))
    assert result.exit_code == 1, result.stdout
    if kept == 0:
        assert _failures(result) == [
            f"FAILED: {heads} holds no signed tree head, so none of the 40 records in "
            "records.jsonl is covered by a signature: the tree heads were deleted, or the log "
            "was written without a signing key. Restore the file from a backup and compare it "
            "with the witness's copy."
        ]
    else:
        covered = kept * PER_ROUND
        [failure] = _failures(result)
        assert failure.startswith(
            f"FAILED: {40 - covered} of 40 records (lines {covered + 1} to 40 of records.jsonl) "
            f"are not covered by a signed tree head; the latest, line {kept} of {heads}, "
            f"covers {covered}."
        )
    witnessed = _verify(store, public_key_path(operator_key), "--witness", str(witness))
    assert witnessed.exit_code == 1
    assert f"FAILED: {heads} lacks the tree head of size 40 the witness last saw" in (
        witnessed.stdout
    )


def test_an_appended_forged_record(store: Path, witness: Path, operator_key: Path) -> None:
    _history(store, witness)
    records = audit_dir(store) / RECORDS_FILE
    with records.open("ab") as file:
        file.write(canonical_bytes(_record(99, who="mallory")) + b"\n")
    result = _verify(store, public_key_path(operator_key))
    assert result.exit_code == 1
    [failure] = _failures(result)
    assert failure.startswith(
        "FAILED: 1 of 41 records (lines 41 to 41 of records.jsonl) are not covered by a "
        "signed tree head; the latest, line 4 of"
    )


def test_the_last_ten_records_dropped_with_their_tree_heads(
    store: Path, witness: Path, operator_key: Path
) -> None:
    _history(store, witness)
    folder = audit_dir(store)
    _write_lines(folder / RECORDS_FILE, _lines(folder / RECORDS_FILE)[:-10])
    _write_lines(folder / TREE_HEADS_FILE, _lines(folder / TREE_HEADS_FILE)[:-1])
    key = public_key_path(operator_key)
    # What is left is a consistent, fully signed log: on its own it cannot show what is
    # missing (the README says so), and the pass says what it did not check.
    alone = _verify(store, key)
    assert alone.exit_code == 0 and "Not checked, as no witness was given" in alone.stdout
    result = _verify(store, key, "--witness", str(witness))
    assert result.exit_code == 1
    [failure] = _failures(result)
    assert failure.startswith(
        "FAILED: The log holds 30 records, but the tree head of size 40 the witness last saw "
        "(signed "
    )
    assert "covers 40: 10 are missing, so the log was rolled back to an older copy" in failure


def test_a_rollback_to_an_older_copy(
    tmp_path: Path, store: Path, witness: Path, operator_key: Path
) -> None:
    _history(store, witness, range(2))
    backup = tmp_path / "backup"
    shutil.copytree(audit_dir(store), backup)
    _history(store, witness, range(2, ROUNDS))
    shutil.rmtree(audit_dir(store))
    shutil.copytree(backup, audit_dir(store))
    key = public_key_path(operator_key)
    assert _verify(store, key).exit_code == 0  # an older copy is sound in itself
    result = _verify(store, key, "--witness", str(witness))
    assert result.exit_code == 1
    [failure] = _failures(result)
    assert failure.startswith("FAILED: The log holds 20 records, but the tree head of size 40")
    assert "20 are missing, so the log was rolled back to an older copy or cut short" in failure


def test_a_fork_with_unsigned_records(store: Path, witness: Path, operator_key: Path) -> None:
    _history(store, witness)
    folder = audit_dir(store)
    # Keep the first two rounds and their heads, then write another history after them.
    forged = [canonical_bytes(_record(100 + n, who="mallory")) for n in range(15)]
    _write_lines(folder / RECORDS_FILE, _lines(folder / RECORDS_FILE)[:20] + forged)
    _write_lines(folder / TREE_HEADS_FILE, _lines(folder / TREE_HEADS_FILE)[:2])
    key = public_key_path(operator_key)
    result = _verify(store, key)
    assert result.exit_code == 1
    [failure] = _failures(result)
    assert failure.startswith("FAILED: 15 of 35 records (lines 21 to 35 of records.jsonl)")
    witnessed = _verify(store, key, "--witness", str(witness))
    assert len(_failures(witnessed)) == 2
    assert "FAILED: The log holds 35 records, but the tree head of size 40" in witnessed.stdout


def test_a_full_rewrite_with_sth_emptied(store: Path, witness: Path, operator_key: Path) -> None:
    _history(store, witness)
    folder = audit_dir(store)
    forged = [canonical_bytes(_record(n, who="mallory")) for n in range(40)]
    _write_lines(folder / RECORDS_FILE, forged)
    (folder / TREE_HEADS_FILE).write_bytes(b"")
    key = public_key_path(operator_key)
    result = _verify(store, key)
    assert result.exit_code == 1
    assert _failures(result) == [
        f"FAILED: {folder / TREE_HEADS_FILE} holds no signed tree head, so none of the 40 "
        "records in records.jsonl is covered by a signature: the tree heads were deleted, or "
        "the log was written without a signing key. Restore the file from a backup and "
        "compare it with the witness's copy."
    ]
    witnessed = _verify(store, key, "--witness", str(witness))
    assert "FAILED: The first 40 records differ from those of the tree head of size 40" in (
        witnessed.stdout
    )
    assert "the log was forked or rewritten after the witness saw it" in witnessed.stdout


def test_a_fork_re_signed_with_another_key(
    tmp_path: Path, store: Path, witness: Path, operator_key: Path
) -> None:
    _history(store, witness)
    folder = audit_dir(store)
    # The forger cannot reach the operator's key, so signs the rewritten log with their own.
    with AuditLog.open(tmp_path / "forgery", key=generate_key()) as forgery:
        for line in _lines(folder / RECORDS_FILE)[:20]:
            forgery.append(parse_entry(line))
        forgery.sign_tree_head()
        for n in range(20):
            forgery.append(_record(200 + n, who="mallory"))
        forgery.sign_tree_head()
    for name in (RECORDS_FILE, TREE_HEADS_FILE):
        shutil.copy(tmp_path / "forgery" / name, folder / name)
    result = _verify(store, public_key_path(operator_key))
    assert result.exit_code == 1
    [failure] = _failures(result)
    assert f"{TREE_HEADS_FILE}, line 1 was signed by the key " in failure
    assert "if you did, the tree head is forged" in failure


def test_a_fork_re_signed_with_the_key_left_in_the_log_folder(
    tmp_path: Path, store: Path, witness: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A log from before the key moved out: its private key sits in its own folder, and the
    # verifier has a copy of the public key kept elsewhere.
    folder = audit_dir(store)
    folder.mkdir()
    old = generate_key()
    save_private_key(old, folder / PRIVATE_KEY_FILE)
    trusted = tmp_path / "trusted.pub.pem"
    save_public_key(old.public_key(), trusted)
    outside = tmp_path / "old-key.pem"
    save_private_key(old, outside)  # stands in for the old default, which used the folder's
    _history(store, witness, key_path=outside)
    # The forger takes the key from the folder and re-signs a rewritten history.
    stolen = load_private_key(folder / PRIVATE_KEY_FILE)
    with AuditLog.open(tmp_path / "forgery", key=stolen) as forgery:
        for line in _lines(folder / RECORDS_FILE)[:20]:
            forgery.append(parse_entry(line))
        for n in range(20):
            forgery.append(_record(300 + n, who="mallory"))
        forgery.sign_tree_head()
    for name in (RECORDS_FILE, TREE_HEADS_FILE):
        shutil.copy(tmp_path / "forgery" / name, folder / name)
    monkeypatch.delenv(KEY_ENV)
    result = _verify(store, trusted)
    assert result.exit_code == 1
    assert _failures(result) == [
        f"FAILED: The log's folder holds a private signing key ({folder / PRIVATE_KEY_FILE}): "
        "whoever can rewrite the log can re-sign it with that key, so its signatures prove "
        "nothing. Move the key out of the folder (see `ratified audit sign --help`) and check "
        "the log against a witness (--witness) for the time it sat there."
    ]
    witnessed = _verify(store, trusted, "--witness", str(witness))
    assert witnessed.exit_code == 1 and len(_failures(witnessed)) == 2
    assert "FAILED: The first 40 records differ from those of the tree head of size 40" in (
        witnessed.stdout
    )


def test_the_next_ordinary_run_does_not_sign_over_a_forgery(
    store: Path, witness: Path, operator_key: Path
) -> None:
    _history(store, witness)
    records = audit_dir(store) / RECORDS_FILE
    with records.open("ab") as file:
        file.write(canonical_bytes(_record(99, who="mallory")) + b"\n")
    signed = CliRunner().invoke(main, ["audit", "sign", "--store", str(store)])
    assert signed.exit_code == 2
    assert "ends with 1 record that no signed tree head covers" in signed.output
    assert _verify(store, public_key_path(operator_key)).exit_code == 1
    # Once the operator has looked, they can vouch for it explicitly.
    adopted = CliRunner().invoke(main, ["audit", "sign", "--store", str(store), "--adopt-unsigned"])
    assert adopted.exit_code == 0, adopted.output
    assert adopted.output.startswith("Signed tree head: size 41")


def test_signing_without_a_key_says_how_to_get_one(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV)
    with AuditLog.open(audit_dir(store)) as log:
        log.append(_record(0))
    signed = CliRunner().invoke(main, ["audit", "sign", "--store", str(store)])
    assert signed.exit_code == 2
    assert "was opened without a signing key" in signed.output
    assert f"Set {KEY_ENV} to a key file outside the log's folder" in signed.output
    result = _verify(store, None)
    assert result.exit_code == 1
    assert "none of the 1 record in records.jsonl is covered" in result.stdout


@pytest.mark.parametrize("deleted", range(ROUNDS - 1))
def test_any_one_tree_head_deleted_from_the_middle(
    store: Path, witness: Path, operator_key: Path, deleted: int
) -> None:
    # Issue 50: deleting an intermediate tree head left a consistent, fully covered log, so
    # it passed unless an anchoring step named that head. Heads are numbered now.
    _history(store, witness)
    heads = audit_dir(store) / TREE_HEADS_FILE
    lines = _lines(heads)
    _write_lines(heads, lines[:deleted] + lines[deleted + 1 :])
    result = _verify(store, public_key_path(operator_key))
    assert result.exit_code == 1, result.stdout
    assert _failures(result) == [
        f"FAILED: The tree head on {heads}, line {deleted + 1} is the log's tree head number "
        f"{deleted + 2}, so 1 tree head before it is missing from sth.jsonl: it was deleted. "
        "Restore the file from a backup and compare it with the witness's copy."
    ]


def test_a_record_appended_beside_a_running_writer_is_not_signed_by_audit_sign(
    store: Path, witness: Path, operator_key: Path
) -> None:
    # Issue 50: while a server held the log, any process signing it signed over a record
    # someone appended to the file. `audit sign` beside it now refuses, and says why.
    _history(store, witness)
    with AuditLog.open(audit_dir(store)) as server:
        server.append(_record(40))
        records = audit_dir(store) / RECORDS_FILE
        with records.open("ab") as file:
            file.write(canonical_bytes(_record(99, who="mallory")) + b"\n")
        signed = CliRunner().invoke(main, ["audit", "sign", "--store", str(store)])
        assert signed.exit_code == 2, signed.output
        assert "line 42 of records.jsonl, which no signed tree head covers, has no voucher " in (
            " ".join(signed.output.split())
        )
        assert "A tree head was signed over the 41 records before it." in (
            " ".join(signed.output.split())
        )
        assert server.tree_heads[-1].tree_size == 41
    result = _verify(store, public_key_path(operator_key))
    assert result.exit_code == 1
    [failure] = _failures(result)
    assert failure.startswith(
        "FAILED: 1 of 42 records (lines 42 to 42 of records.jsonl) are not covered by a "
        "signed tree head; the latest, line 5 of"
    )
    assert "Line 42 has no voucher from the key in vouchers.jsonl: no process holding the " in (
        failure
    )
