"""Ed25519 keys on disk and signed tree heads over RFC 8785 canonical JSON."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import rfc8785

from ratified_rdf.audit import (
    AuditError,
    canonical_bytes,
    generate_key,
    key_id,
    load_private_key,
    load_public_key,
    save_private_key,
    save_public_key,
    sign_tree_head,
    verify_tree_head,
)
from ratified_rdf.audit.merkle import EMPTY_ROOT


def test_keys_round_trip_through_pem_and_the_private_one_is_0600(tmp_path: Path) -> None:
    key = generate_key()
    save_private_key(key, tmp_path / "k.pem")
    save_public_key(key.public_key(), tmp_path / "k.pub.pem")
    assert stat.S_IMODE((tmp_path / "k.pem").stat().st_mode) == 0o600
    assert key_id(load_private_key(tmp_path / "k.pem").public_key()) == key_id(key.public_key())
    assert key_id(load_public_key(tmp_path / "k.pub.pem")) == key_id(key.public_key())


def test_an_existing_private_key_is_never_overwritten(tmp_path: Path) -> None:
    save_private_key(generate_key(), tmp_path / "k.pem")
    with pytest.raises(FileExistsError):
        save_private_key(generate_key(), tmp_path / "k.pem")


def test_unreadable_keys_raise_sentences(tmp_path: Path) -> None:
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(AuditError, match="Give an unencrypted PEM Ed25519 key"):
        load_private_key(tmp_path / "junk.pem")
    with pytest.raises(AuditError, match="Give a PEM Ed25519 public key"):
        load_public_key(tmp_path / "missing.pem")


def test_the_signature_covers_the_documented_canonical_json() -> None:
    key = generate_key()
    root = bytes(range(32))
    sth = sign_tree_head(key, 7, root, timestamp=1_700_000_000_000)
    message = rfc8785.dumps(
        {
            "context": "ratified-rdf/audit/tree-head/v1",
            "key_id": key_id(key.public_key()),
            "root_hash": root.hex(),
            "timestamp": 1_700_000_000_000,
            "tree_size": 7,
        }
    )
    key.public_key().verify(bytes.fromhex(sth.signature), message)
    assert verify_tree_head(sth, key.public_key())
    assert sth.root == root


def test_a_numbered_tree_head_signs_its_number_under_another_context() -> None:
    key = generate_key()
    root = bytes(range(32))
    sth = sign_tree_head(key, 7, root, timestamp=1_700_000_000_000, sequence=3)
    message = rfc8785.dumps(
        {
            "context": "ratified-rdf/audit/tree-head/v2",
            "key_id": key_id(key.public_key()),
            "root_hash": root.hex(),
            "sequence": 3,
            "timestamp": 1_700_000_000_000,
            "tree_size": 7,
        }
    )
    key.public_key().verify(bytes.fromhex(sth.signature), message)
    # Neither another number nor none at all (an old-style head) keeps the signature.
    for change in ({"sequence": 2}, {"sequence": None}):
        assert not verify_tree_head(sth.model_copy(update=change), key.public_key())
    assert b'"sequence":3' in canonical_bytes(sth)
    unnumbered = sign_tree_head(key, 7, root, timestamp=1_700_000_000_000)
    assert b"sequence" not in canonical_bytes(unnumbered)  # old lines read back unchanged


def test_any_change_to_a_tree_head_breaks_its_signature() -> None:
    key = generate_key()
    sth = sign_tree_head(key, 0, EMPTY_ROOT)
    assert verify_tree_head(sth, key.public_key())
    for change in (
        {"tree_size": 1},
        {"timestamp": sth.timestamp + 1},
        {"root_hash": "00" * 32},
        {"signature": "00" * 64},
    ):
        assert not verify_tree_head(sth.model_copy(update=change), key.public_key())
    assert not verify_tree_head(sth, generate_key().public_key())
