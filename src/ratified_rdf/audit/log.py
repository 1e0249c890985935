"""``AuditLog``: an append-only, signed, crash-safe audit log in one directory.

The directory holds ``records.jsonl`` (one RFC 8785 canonical JSON entry per line: exactly
the bytes of its Merkle leaf), ``sth.jsonl`` (the signed tree heads issued, oldest first),
and the log's Ed25519 key pair (``log-key.pem``, mode 0600, and ``log-key.pub.pem``) unless
the caller keeps the private key elsewhere. Anyone holding the public key can check the
directory with ``verify_log``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from ratified_rdf.audit._files import AppendOnlyFile, Lines, read_lines, set_aside_torn_line
from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.merkle import MerkleTree
from ratified_rdf.audit.records import (
    AnchorSidecar,
    AuditRecord,
    DetailSidecar,
    LogEntry,
    OutcomeSidecar,
    canonical_bytes,
    parse_entry,
)
from ratified_rdf.audit.signing import (
    SignedTreeHead,
    generate_key,
    key_id,
    load_private_key,
    now_ms,
    save_private_key,
    save_public_key,
    sign_tree_head,
)

RECORDS_FILE = "records.jsonl"
"""The log's entries, one canonical JSON line each."""
TREE_HEADS_FILE = "sth.jsonl"
"""The log's signed tree heads, oldest first."""
PRIVATE_KEY_FILE = "log-key.pem"
"""The log's Ed25519 signing key (PKCS#8 PEM, mode 0600)."""
PUBLIC_KEY_FILE = "log-key.pub.pem"
"""The log's public key: what a verifier is given."""

VERIFY_HINT = "run `ratified audit verify` on it to find out more"
"""The end of every error that means the log's files are damaged."""


def torn_line_message(path: Path, lines: Lines) -> str:
    """The sentence that reports the torn last line of ``path``."""
    return (
        f"The audit log at {path.parent} has a torn last line in {path.name} "
        f"(line {len(lines.complete) + 1}): the process probably stopped while writing. "
        "Move the line aside and run `ratified audit verify` again."
    )


class AuditLog:
    """An open audit log; appends and tree heads are thread-safe and one process owns it.

    Open it with ``AuditLog.open`` and close it (or use it as a context manager) to release
    the directory for another process.
    """

    def __init__(self, directory: Path, key: Ed25519PrivateKey, *, recover: bool = True) -> None:
        """Take ``directory`` for this process and load it; use ``AuditLog.open`` instead."""
        self.directory = directory
        self._key = key
        self._lock = threading.Lock()
        try:
            self._records = AppendOnlyFile(directory / RECORDS_FILE)
        except BlockingIOError as exc:
            raise AuditError(
                f"Another process has the audit log at {directory} open. Stop it, or have "
                "that process write the records."
            ) from exc
        self._heads = AppendOnlyFile(directory / TREE_HEADS_FILE)
        try:
            if recover:  # only now, holding the lock, can no writer be mid-line
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
                for name in (RECORDS_FILE, TREE_HEADS_FILE):
                    set_aside_torn_line(directory / name, stamp)
            self._tree, self._record_ids, self._tree_heads = self._load()
        except BaseException:
            self.close()
            raise

    @classmethod
    def open(
        cls,
        directory: str | Path,
        key: Ed25519PrivateKey | None = None,
        *,
        recover: bool = True,
    ) -> AuditLog:
        """Open the log in ``directory``, creating the directory and a key pair when new.

        ``key`` is the log's signing key when it is kept outside the directory; without it
        the key is read from ``log-key.pem`` (made on first use). A torn last line (a process
        killed mid-append: its call never started, or its outcome was never confirmed) is
        moved aside into ``<file>.torn-<time>`` when ``recover``, and reported otherwise. A
        log with a damaged line, or whose latest tree head no longer matches its records, is
        not opened: appending to it would bury the damage.
        """
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        return cls(folder, key or cls._stored_key(folder), recover=recover)

    def _load(self) -> tuple[MerkleTree, set[str], list[SignedTreeHead]]:
        records = read_lines(self._records.path)
        heads = read_lines(self._heads.path)
        for lines, path in ((records, self._records.path), (heads, self._heads.path)):
            if lines.torn is not None:
                raise AuditError(torn_line_message(path, lines))
        try:
            entries = [parse_entry(line) for line in records.complete]
            tree_heads = [SignedTreeHead.model_validate_json(line) for line in heads.complete]
        except ValidationError as exc:
            raise AuditError(
                f"The audit log at {self.directory} has a damaged line, so it was not opened: "
                f"{VERIFY_HINT}."
            ) from exc
        tree = MerkleTree(records.complete)
        if tree_heads:
            latest = tree_heads[-1]
            if latest.key_id != key_id(self.public_key):
                raise AuditError(
                    f"The audit log at {self.directory} was signed with the key {latest.key_id}, "
                    f"not with the key given ({key_id(self.public_key)}). Open it with its own "
                    "key: tree heads signed by two keys would not verify."
                )
            if latest.tree_size > tree.size or latest.root != tree.root(latest.tree_size):
                raise AuditError(
                    f"The records of the audit log at {self.directory} no longer match its "
                    f"latest signed tree head (size {latest.tree_size}), so it was not opened: "
                    f"{VERIFY_HINT}."
                )
        record_ids = {entry.id for entry in entries if isinstance(entry, AuditRecord)}
        return tree, record_ids, tree_heads

    @staticmethod
    def _stored_key(folder: Path) -> Ed25519PrivateKey:
        path = folder / PRIVATE_KEY_FILE
        if path.exists():
            return load_private_key(path)
        if (folder / RECORDS_FILE).exists():
            raise AuditError(
                f"The audit log at {folder} has no signing key ({path} is missing). Restore "
                "the key, or pass the log's key to AuditLog.open."
            )
        key = generate_key()
        save_private_key(key, path)
        save_public_key(key.public_key(), folder / PUBLIC_KEY_FILE)
        return key

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The key that checks this log's tree heads."""
        return self._key.public_key()

    @property
    def size(self) -> int:
        """How many entries (leaves) the log holds."""
        return self._tree.size

    @property
    def tree_heads(self) -> tuple[SignedTreeHead, ...]:
        """The tree heads signed so far, oldest first."""
        with self._lock:
            return tuple(self._tree_heads)

    def append(self, entry: LogEntry, *, durable: bool = True) -> int:
        """Write ``entry`` as the next leaf and return its index; with ``durable`` (the
        default) only once it is on disk. A sidecar written after the work it describes may
        pass ``durable=False``: it reaches the disk with the next durable append, the next
        tree head, or closing, whichever comes first.

        A sidecar must point at something the log already holds: an outcome at an earlier
        record, an anchoring step at a tree head this log signed.
        """
        leaf = canonical_bytes(entry)
        with self._lock:
            self._check_reference(entry)
            try:
                self._records.append_line(leaf, durable=durable)
            except OSError as exc:
                raise AuditError(
                    f"Could not write to the audit log at {self.directory} ({exc}). "
                    "Check the disk's space and permissions before going on."
                ) from exc
            if isinstance(entry, AuditRecord):
                self._record_ids.add(entry.id)
            return self._tree.append(leaf)

    def _check_reference(self, entry: LogEntry) -> None:
        if (
            isinstance(entry, OutcomeSidecar | DetailSidecar)
            and entry.annotates not in self._record_ids
        ):
            raise AuditError(
                f"The sidecar {entry.id} annotates record {entry.annotates}, which this log "
                "does not hold. Append the record before what annotates it."
            )
        if isinstance(entry, AnchorSidecar) and not any(
            (head.tree_size, head.timestamp, head.root_hash)
            == (entry.tree_size, entry.timestamp, entry.root_hash)
            for head in self._tree_heads
        ):
            raise AuditError(
                f"The anchoring step {entry.id} names a tree head of size {entry.tree_size} "
                "that this log never signed. Anchor only tree heads from sign_tree_head()."
            )

    def entries(self) -> Iterator[LogEntry]:
        """Every entry in the log, oldest first, read back from disk."""
        with self._lock:
            lines = read_lines(self.directory / RECORDS_FILE).complete
        return map(parse_entry, lines)

    def sign_tree_head(self) -> SignedTreeHead:
        """Sign the current tree head, record it in ``sth.jsonl`` and return it."""
        with self._lock:
            # A tree head may only cover records already on disk.
            self._records.sync()
            # Tree heads must not go back in time even if the clock does.
            latest = self._tree_heads[-1].timestamp if self._tree_heads else 0
            head = sign_tree_head(
                self._key, self._tree.size, self._tree.root(), max(now_ms(), latest)
            )
            try:
                self._heads.append_line(canonical_bytes(head))
            except OSError as exc:
                raise AuditError(
                    f"Could not record a signed tree head in {self.directory} ({exc}). "
                    "Check the disk's space and permissions, then sign again."
                ) from exc
            self._tree_heads.append(head)
            return head

    def root(self, size: int | None = None) -> bytes:
        """The Merkle root of the first ``size`` entries (all by default)."""
        with self._lock:
            return self._tree.root(size)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The RFC 9162 inclusion proof of entry ``index`` in the tree of ``size`` entries."""
        with self._lock:
            return self._tree.inclusion_proof(index, size)

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """The RFC 9162 consistency proof from ``old_size`` entries to ``new_size``."""
        with self._lock:
            return self._tree.consistency_proof(old_size, new_size)

    def close(self) -> None:
        """Release the files and the directory's lock."""
        with self._lock:
            self._records.close()
            self._heads.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
