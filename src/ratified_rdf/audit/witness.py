"""``LocalWitnessAnchor``: a witness directory that checks consistency, then countersigns."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from ratified_rdf.audit._files import AppendOnlyFile, read_lines
from ratified_rdf.audit.anchor import ConsistencyProver, Receipt
from ratified_rdf.audit.errors import AnchorRejected, AnchorUnreachable, AuditError
from ratified_rdf.audit.merkle import verify_consistency
from ratified_rdf.audit.records import canonical_bytes
from ratified_rdf.audit.signing import (
    HexSignature,
    SignedTreeHead,
    generate_key,
    key_id,
    load_private_key,
    load_public_key,
    save_private_key,
    save_public_key,
    sign_payload,
    verify_payload,
    verify_tree_head,
)

COSIGNATURE_CONTEXT = "ratified-rdf/audit/witness-cosignature/v1"
"""The ``context`` member of what a witness signs."""

SEEN_FILE = "seen.jsonl"
"""The tree heads a witness accepted, with its cosignatures, oldest first."""
WITNESS_KEY_FILE = "witness-key.pem"
"""The witness's Ed25519 signing key (PKCS#8 PEM, mode 0600)."""
WITNESS_PUBLIC_KEY_FILE = "witness-key.pub.pem"
"""The witness's public key: what checks its cosignatures."""


class WitnessedHead(BaseModel):
    """A tree head a witness accepted, with the witness's cosignature."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tree_head: SignedTreeHead
    cosignature: HexSignature


def cosignature_payload(sth: SignedTreeHead) -> dict[str, JsonValue]:
    """What a witness signs for a tree head: its context, the log's key id and the head."""
    return {
        "context": COSIGNATURE_CONTEXT,
        "log_key_id": sth.key_id,
        "root_hash": sth.root_hash,
        "timestamp": sth.timestamp,
        "tree_size": sth.tree_size,
    }


def verify_cosignature(sth: SignedTreeHead, receipt: Receipt, witness: Ed25519PublicKey) -> bool:
    """Whether ``receipt`` holds ``witness``'s good cosignature of ``sth``."""
    signature = receipt.get("cosignature")
    return (
        receipt.get("witness") == key_id(witness)
        and isinstance(signature, str)
        and verify_payload(witness, cosignature_payload(sth), signature)
    )


def last_seen(directory: str | Path) -> SignedTreeHead:
    """The latest tree head the witness in ``directory`` accepted, read without changing the
    folder, with its cosignature checked against the witness's public key when it is there.
    Raises ``AuditError`` when the folder is no witness or has seen nothing yet."""
    folder = Path(directory)
    path = folder / SEEN_FILE
    if not path.is_file():
        raise AuditError(
            f"There is no witness at {folder} ({SEEN_FILE} is missing). Give the folder that "
            "`ratified audit anchor --witness` writes to."
        )
    lines = read_lines(path)
    if lines.torn is not None or not lines.complete:
        raise AuditError(
            f"The witness at {folder} has "
            + ("a torn last line" if lines.torn is not None else "seen no tree head yet")
            + ": anchor a tree head there first (`ratified audit anchor --witness "
            f"{folder}`), then verify again."
        )
    try:
        latest = WitnessedHead.model_validate_json(lines.complete[-1])
    except ValidationError as exc:
        raise AuditError(
            f"The last line of {path} is damaged, so the witness cannot be used. Restore the "
            "witness's folder from a backup."
        ) from exc
    key_path = folder / WITNESS_PUBLIC_KEY_FILE
    if key_path.is_file():
        witness_key = load_public_key(key_path)
        receipt: Receipt = {"witness": key_id(witness_key), "cosignature": latest.cosignature}
        if not verify_cosignature(latest.tree_head, receipt, witness_key):
            raise AuditError(
                f"The witness's cosignature on the last line of {path} does not verify with "
                f"{key_path}: the witness's record was edited. Restore it from a backup."
            )
    return latest.tree_head


class LocalWitnessAnchor:
    """A witness in a second directory: it keeps every tree head it accepted and cosigns it.

    It accepts a tree head only if the log signed it and it extends the last one the
    witness accepted, as a consistency proof from the log shows; so the log can neither
    roll back nor fork without the witness refusing. The directory holds ``seen.jsonl``
    and the witness's own key pair (``witness-key.pem``, mode 0600, and
    ``witness-key.pub.pem``).
    """

    def __init__(
        self, directory: str | Path, log_key: Ed25519PublicKey, *, name: str = "local-witness"
    ) -> None:
        self.directory = Path(directory)
        self._log_key = log_key
        self._name = name
        self.directory.mkdir(parents=True, exist_ok=True)
        key_path = self.directory / WITNESS_KEY_FILE
        if key_path.exists():
            self._key = load_private_key(key_path)
        else:
            self._key = generate_key()
            save_private_key(self._key, key_path)
            save_public_key(self._key.public_key(), self.directory / WITNESS_PUBLIC_KEY_FILE)

    @property
    def name(self) -> str:
        """The anchor's name in the log's anchoring steps."""
        return self._name

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The key that checks this witness's cosignatures."""
        return self._key.public_key()

    def seen(self) -> list[WitnessedHead]:
        """The tree heads this witness accepted, oldest first."""
        lines = read_lines(self.directory / SEEN_FILE)
        if lines.torn is not None:
            raise AnchorUnreachable(
                f"The witness at {self.directory} has a torn last line in seen.jsonl: it "
                "stopped while writing. Move the line aside; the anchoring is retried later."
            )
        return [WitnessedHead.model_validate_json(line) for line in lines.complete]

    def submit(self, sth: SignedTreeHead, prove: ConsistencyProver) -> Receipt:
        """Check ``sth`` against the last tree head seen, then record and cosign it."""
        if not verify_tree_head(sth, self._log_key):
            raise AnchorRejected(
                f"The witness at {self.directory} refused the tree head of size "
                f"{sth.tree_size}: its signature does not verify with the log's public key."
            )
        try:
            return self._accept(sth, prove)
        except (OSError, ValidationError) as exc:
            raise AnchorUnreachable(
                f"The witness at {self.directory} cannot be used right now ({exc}). Check "
                "the directory; the anchoring is retried later."
            ) from exc

    def _accept(self, sth: SignedTreeHead, prove: ConsistencyProver) -> Receipt:
        # Holding the file's lock across check and append keeps two submitters from both
        # checking against the same last head.
        seen_file = AppendOnlyFile(self.directory / SEEN_FILE)
        try:
            seen = self.seen()
            if seen and seen[-1].tree_head == sth:
                return self._receipt(seen[-1])
            if seen:
                self._check_extends(seen[-1].tree_head, sth, prove)
            witnessed = WitnessedHead(
                tree_head=sth, cosignature=sign_payload(self._key, cosignature_payload(sth))
            )
            seen_file.append_line(canonical_bytes(witnessed))
            return self._receipt(witnessed)
        finally:
            seen_file.close()

    def _check_extends(
        self, last: SignedTreeHead, sth: SignedTreeHead, prove: ConsistencyProver
    ) -> None:
        if sth.tree_size < last.tree_size or sth.timestamp < last.timestamp:
            raise AnchorRejected(
                f"The witness at {self.directory} refused the tree head of size "
                f"{sth.tree_size}: it has already seen a newer one (size {last.tree_size}). "
                "The log was rolled back; investigate before anchoring again."
            )
        try:
            proof = prove(last.tree_size, sth.tree_size)
        except ValueError as exc:
            raise AnchorRejected(
                f"The witness at {self.directory} refused the tree head of size "
                f"{sth.tree_size}: the log cannot prove it extends the tree head of size "
                f"{last.tree_size} ({exc}). Investigate before anchoring again."
            ) from exc
        if not verify_consistency(last.tree_size, sth.tree_size, last.root, sth.root, proof):
            raise AnchorRejected(
                f"The witness at {self.directory} refused the tree head of size "
                f"{sth.tree_size}: it is not consistent with the tree head of size "
                f"{last.tree_size} it saw before, so the log was rewritten or forked. "
                "Investigate before anchoring again."
            )

    def _receipt(self, witnessed: WitnessedHead) -> Receipt:
        return {
            "witness": key_id(self.public_key),
            "cosignature": witnessed.cosignature,
            "tree_size": witnessed.tree_head.tree_size,
            "root_hash": witnessed.tree_head.root_hash,
        }
