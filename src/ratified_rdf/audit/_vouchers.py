"""Record vouchers: a writer holding the log's key vouches for each record it appends.

Several processes may write one log (a server, an MCP server, a build, readers), and any of
them may sign a tree head over all of it; but a tree head must cover only what a process
holding the key wrote, never a line someone else added to ``records.jsonl``. So each writer
signs, for every record it appends, the canonical JSON of::

    {"context": "ratified-rdf/audit/record-voucher/v1", "index": <leaf index>,
     "key_id": <hex>, "leaf_hash": <hex>, "prior_root": <hex>}

and appends it to ``vouchers.jsonl`` (as ``{"index", "key_id", "signature"}``) under the lock
it appends the record with, just before the record. ``prior_root`` is the root of the tree
the record was appended to: a voucher vouches for one record at one place in one history,
not for what came before it (each record has its own), and cannot be moved to another log.
A record whose voucher is missing or does not verify was not written by a process holding
the key: no process signs a tree head over it, and ``verify_log`` reports it.

Vouchers are written without an fsync of their own (the next tree head or close puts them
on disk): a record is vouched for as long as it is unsigned, which a signed tree head ends.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, JsonValue, NonNegativeInt, ValidationError

from ratified_rdf.audit.merkle import MerkleTree
from ratified_rdf.audit.records import HexHash, canonical_json
from ratified_rdf.audit.signing import HexSignature, key_id

VOUCHERS_FILE = "vouchers.jsonl"
"""Each record's voucher, by the process that appended it, in the order they were written."""
VOUCHER_CONTEXT = "ratified-rdf/audit/record-voucher/v1"
"""The ``context`` member of what a voucher signs."""


class Voucher(BaseModel):
    """A writer's signed word that it appended the record at ``index``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: NonNegativeInt
    key_id: HexHash
    signature: HexSignature


def voucher_payload(
    index: int, signer: str, leaf_hash: bytes, prior_root: bytes
) -> dict[str, JsonValue]:
    """The object a voucher's signature covers (see the module docstring)."""
    return {
        "context": VOUCHER_CONTEXT,
        "index": index,
        "key_id": signer,
        "leaf_hash": leaf_hash.hex(),
        "prior_root": prior_root.hex(),
    }


def vouch(
    key: Ed25519PrivateKey, signer: str, index: int, leaf_hash: bytes, prior_root: bytes
) -> bytes:
    """The line of the voucher, by ``key`` (whose key id is ``signer``), for the record with
    ``leaf_hash`` appended at ``index`` to the tree whose root was ``prior_root``."""
    # Every append of a key holder runs this, so no model is built: these values take
    # canonical_json's fast path, whose bytes are RFC 8785's.
    payload = canonical_json(voucher_payload(index, signer, leaf_hash, prior_root))
    line: dict[str, JsonValue] = {
        "index": index,
        "key_id": signer,
        "signature": key.sign(payload).hex(),
    }
    return canonical_json(line)


_INDEX = b'{"index":'


def parse_vouchers(lines: list[bytes], start: int = 0) -> list[Voucher]:
    """The vouchers among ``lines`` for the records from ``start`` on; a line that is not a
    voucher vouches for nothing and is skipped (the record it was for is then reported as
    not vouched for)."""
    vouchers = []
    for line in lines:
        # Those for records a tree head covers are of no more use: skipped unparsed, since a
        # log reads every voucher when it opens.
        if line.startswith(_INDEX):
            digits = line[len(_INDEX) : line.find(b",", len(_INDEX))]
            if digits.isdigit() and int(digits) < start:
                continue
        try:
            vouchers.append(Voucher.model_validate_json(line))
        except ValidationError:
            continue
    return vouchers


def vouched(
    tree: MerkleTree, index: int, vouchers: list[Voucher], public_key: Ed25519PublicKey
) -> bool:
    """Whether one of ``vouchers`` (those written for ``index``) vouches for the record at
    ``index`` of ``tree`` with ``public_key``."""
    if not vouchers:
        return False
    signer = key_id(public_key)
    payload = canonical_json(
        voucher_payload(index, signer, tree.leaf_hash(index), tree.root(index))
    )
    return any(
        voucher.index == index
        and voucher.key_id == signer
        and _verifies(public_key, payload, voucher.signature)
        for voucher in vouchers
    )


def _verifies(public_key: Ed25519PublicKey, payload: bytes, signature: str) -> bool:
    try:
        public_key.verify(bytes.fromhex(signature), payload)
    except (InvalidSignature, ValueError):
        return False
    return True
