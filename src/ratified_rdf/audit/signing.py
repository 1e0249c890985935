"""Ed25519 keys and signed tree heads (STHs).

What is signed is always the RFC 8785 canonical JSON of a small object whose ``context``
member names what the signature is for, so a signature made for one purpose can never pass
for another. For a tree head the signed object is::

    {"context": "ratified-rdf/audit/tree-head/v2", "key_id": <hex>, "root_hash": <hex>,
     "sequence": <int>, "timestamp": <ms since the epoch>, "tree_size": <int>}

``sequence`` numbers a log's tree heads from 0, in the order of ``sth.jsonl``: a head deleted
from the middle of the file leaves a gap in the numbers that every later head shows. Heads
signed before the numbers existed carry none and are signed as ``tree-head/v1`` (the same
object without ``sequence``); they still verify, and a v2 head can never pass for one.
``key_id`` is the SHA-256 of the raw 32-byte Ed25519 public key, in hex. Hashes and
signatures are lower-case hex throughout.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Annotated

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, Field, JsonValue, NonNegativeInt, StringConstraints

from ratified_rdf.audit._files import fsync_directory, write_private_file
from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.records import HexHash

TREE_HEAD_CONTEXT = "ratified-rdf/audit/tree-head/v2"
"""The ``context`` member of a numbered tree head's signed payload."""
UNNUMBERED_TREE_HEAD_CONTEXT = "ratified-rdf/audit/tree-head/v1"
"""The ``context`` member of a tree head signed before heads were numbered."""

HexSignature = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{128}$")]
"""An Ed25519 signature as 128 lower-case hex digits."""


def generate_key() -> Ed25519PrivateKey:
    """A new Ed25519 private key."""
    return Ed25519PrivateKey.generate()


def key_id(public_key: Ed25519PublicKey) -> str:
    """The SHA-256 of the raw public key, in hex: a short name for the key."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def save_private_key(key: Ed25519PrivateKey, path: Path) -> None:
    """Write ``key`` as unencrypted PKCS#8 PEM, mode 0600; an existing file is never replaced."""
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    write_private_file(path, pem)


def save_public_key(key: Ed25519PublicKey, path: Path) -> None:
    """Write ``key`` as SubjectPublicKeyInfo PEM."""
    path.write_bytes(
        key.public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    fsync_directory(path.parent)


def load_private_key(path: Path) -> Ed25519PrivateKey:
    """The Ed25519 private key in the PEM file ``path``."""
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        raise AuditError(
            f"Cannot read the private key at {path} ({exc}). Give an unencrypted PEM Ed25519 key."
        ) from exc
    if not isinstance(key, Ed25519PrivateKey):
        raise AuditError(f"The key at {path} is not an Ed25519 key. Give an Ed25519 key.")
    return key


def load_public_key(path: Path) -> Ed25519PublicKey:
    """The Ed25519 public key in the PEM file ``path``."""
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise AuditError(
            f"Cannot read the public key at {path} ({exc}). Give a PEM Ed25519 public key."
        ) from exc
    if not isinstance(key, Ed25519PublicKey):
        raise AuditError(f"The key at {path} is not an Ed25519 key. Give an Ed25519 public key.")
    return key


def sign_payload(key: Ed25519PrivateKey, payload: dict[str, JsonValue]) -> str:
    """The hex Ed25519 signature over the RFC 8785 canonical JSON of ``payload``."""
    return key.sign(rfc8785.dumps(payload)).hex()


def verify_payload(key: Ed25519PublicKey, payload: dict[str, JsonValue], signature: str) -> bool:
    """Whether ``signature`` (hex) signs the canonical JSON of ``payload`` with ``key``."""
    try:
        key.verify(bytes.fromhex(signature), rfc8785.dumps(payload))
    except (InvalidSignature, ValueError):
        return False
    return True


def now_ms() -> int:
    """Milliseconds since the Unix epoch."""
    return time.time_ns() // 1_000_000


class SignedTreeHead(BaseModel):
    """A log's signed statement that its first ``tree_size`` records hash to ``root_hash``,
    and that it is the log's tree head number ``sequence`` (counting from 0; None for a head
    signed before heads were numbered)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tree_size: NonNegativeInt
    timestamp: NonNegativeInt
    root_hash: HexHash
    key_id: HexHash
    signature: HexSignature
    # Left out of the line when None, so an unnumbered head reads back to its very bytes.
    sequence: NonNegativeInt | None = Field(default=None, exclude_if=lambda value: value is None)

    def payload(self) -> dict[str, JsonValue]:
        """The object whose canonical JSON the signature covers."""
        return tree_head_payload(
            self.tree_size, self.timestamp, self.root_hash, self.key_id, self.sequence
        )

    @property
    def root(self) -> bytes:
        """The root hash as bytes."""
        return bytes.fromhex(self.root_hash)


def tree_head_payload(
    tree_size: int, timestamp: int, root_hash: str, signer: str, sequence: int | None = None
) -> dict[str, JsonValue]:
    """The signed object of a tree head (see the module docstring)."""
    payload: dict[str, JsonValue] = {
        "context": TREE_HEAD_CONTEXT if sequence is not None else UNNUMBERED_TREE_HEAD_CONTEXT,
        "key_id": signer,
        "root_hash": root_hash,
        "timestamp": timestamp,
        "tree_size": tree_size,
    }
    if sequence is not None:
        payload["sequence"] = sequence
    return payload


def sign_tree_head(
    key: Ed25519PrivateKey,
    tree_size: int,
    root_hash: bytes,
    timestamp: int | None = None,
    *,
    sequence: int | None = None,
) -> SignedTreeHead:
    """Sign the tree head ``(tree_size, root_hash)`` at ``timestamp`` (now by default, in ms)
    as the log's head number ``sequence`` (an unnumbered, old-style head when None)."""
    signer = key_id(key.public_key())
    moment = now_ms() if timestamp is None else timestamp
    payload = tree_head_payload(tree_size, moment, root_hash.hex(), signer, sequence)
    return SignedTreeHead(
        tree_size=tree_size,
        timestamp=moment,
        root_hash=root_hash.hex(),
        key_id=signer,
        signature=sign_payload(key, payload),
        sequence=sequence,
    )


def verify_tree_head(sth: SignedTreeHead, public_key: Ed25519PublicKey) -> bool:
    """Whether ``sth`` was signed by ``public_key`` and names it as its signer."""
    return sth.key_id == key_id(public_key) and verify_payload(
        public_key, sth.payload(), sth.signature
    )
