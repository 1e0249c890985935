"""``AuditLog``: an append-only, signed, crash-safe audit log in one directory.

The directory holds ``records.jsonl`` (one RFC 8785 canonical JSON entry per line: exactly
the bytes of its Merkle leaf), ``sth.jsonl`` (the signed tree heads issued, oldest first,
numbered), ``vouchers.jsonl`` (each writer's signed word for each record it appended; see
``_vouchers``) and a copy of the log's public key (``log-key.pub.pem``). The private signing
key never lives there: whoever can rewrite the folder could re-sign it. It is a file the
operator chooses (``key_path``, else ``$RATIFIED_AUDIT_KEY``), made on first use; a log
opened without one appends records but signs nothing, and says so. Anyone holding the public
key can check the directory with ``verify_log``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from pydantic import ValidationError

from ratified_rdf.audit._files import (
    AppendOnlyFile,
    Lines,
    LockTimeout,
    PresenceLock,
    read_lines,
    set_aside_torn_line,
)
from ratified_rdf.audit._vouchers import VOUCHERS_FILE, Voucher, parse_vouchers, vouch, vouched
from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.merkle import MerkleTree, leaf_hash
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
"""Where logs made before the key moved out kept their signing key; never used to sign."""
PUBLIC_KEY_FILE = "log-key.pub.pem"
"""A copy of the log's public key; a verifier is given its own copy, kept elsewhere."""
PRESENCE_FILE = "open.lock"
"""Locked (shared) by every process that has the log open."""
HELD_UNSIGNED_FILE = "held-unsigned"
"""Written when a log is opened by no one else and ends with records no tree head covers:
every process then declines to sign over them until an operator adopts them."""
KEY_ENV = "RATIFIED_AUDIT_KEY"
"""The environment variable naming the signing key's file, outside every log's folder."""
EXAMPLE_KEY_PATH = "~/.config/ratified-rdf/audit-key.pem"
"""Where the messages suggest keeping the signing key."""

logger = logging.getLogger("ratified_rdf.audit")

VERIFY_HINT = "run `ratified audit verify` on it to find out more"
"""The end of every error that means the log's files are damaged."""


def torn_line_message(path: Path, lines: Lines) -> str:
    """The sentence that reports the torn last line of ``path``."""
    return (
        f"The audit log at {path.parent} has a torn last line in {path.name} "
        f"(line {len(lines.complete) + 1}): the process probably stopped while writing. "
        "Move the line aside and run `ratified audit verify` again."
    )


def public_key_path(key_path: Path) -> Path:
    """Where the public half of the signing key at ``key_path`` is written: ``x.pem`` gives
    ``x.pub.pem``."""
    name = key_path.name.removesuffix(".pem")
    return key_path.with_name(f"{name}.pub.pem")


def _move_key_hint(folder: Path) -> str:
    return (
        f"Move it out of the folder and point {KEY_ENV} at it, for example: mkdir -p "
        f"~/.config/ratified-rdf && mv {folder / PRIVATE_KEY_FILE} {EXAMPLE_KEY_PATH} && "
        f"export {KEY_ENV}={EXAMPLE_KEY_PATH}"
    )


def _inside(path: Path, folder: Path) -> bool:
    return path.expanduser().resolve().is_relative_to(folder.resolve())


class AuditLog:
    """An open audit log; appends and tree heads are thread-safe, and several processes may
    have one log open at once (a server, an MCP server, a build and readers of one brain).

    Each append or tree head takes the directory's lock for the time it writes one line, and
    first reads what the other processes appended since, so every process keeps the same tree.
    A process holding the key vouches for each record it appends (``vouchers.jsonl``), and any
    of them may sign over every record it wrote itself or another holder of the key vouched
    for; never over a record no one vouched for, which someone else put in the file: that is
    reported (``tampering``) and signing stops short of it. Open it with ``AuditLog.open``
    and close it (or use it as a context manager). A log without a signing key, or one that
    ends with records no tree head covered when it was opened by no one else (and was not
    told to adopt them), still appends but signs nothing: ``can_sign`` is False and
    ``signing_problem`` says why.
    """

    def __init__(
        self,
        directory: Path,
        key: Ed25519PrivateKey | None,
        *,
        recover: bool = True,
        adopt_unsigned: bool = False,
        keyless_reason: str | None = None,
        warn: bool = True,
    ) -> None:
        """Take ``directory`` for this process and load it; use ``AuditLog.open`` instead."""
        self.directory = directory
        self._key = key
        self._public_key = key.public_key() if key is not None else None
        self._key_id = key_id(self._public_key) if self._public_key is not None else ""
        self._lock = threading.Lock()
        self._holder: int | None = None  # the thread inside _locked, if one is
        self._listeners: list[Callable[[], None]] = []
        self._closed = False
        self._presence = PresenceLock(directory / PRESENCE_FILE)
        self._records = AppendOnlyFile(directory / RECORDS_FILE)
        self._heads = AppendOnlyFile(directory / TREE_HEADS_FILE)
        self._voucher_file = AppendOnlyFile(directory / VOUCHERS_FILE)
        self._records_read = self._heads_read = self._vouchers_read = 0
        self._recover = recover
        self._tree = MerkleTree([])
        self._record_ids: set[str] = set()
        self._tree_heads: list[SignedTreeHead] = []
        # What may be signed over, beyond the latest tree head: the leaf hashes of the records
        # this process appended, the vouchers other writers left, and the records an operator
        # adopted (everything below ``_adopted``). ``_vouched_through`` remembers how far the
        # records were found vouched for, so each signature checks only what is new.
        self._own: dict[int, bytes] = {}
        self._vouchers: dict[int, list[Voucher]] = {}
        self._adopted = 0
        self._vouched_through = 0
        self._stuck_at: int | None = None  # the record found with no voucher, if one was
        self._stuck_said: int | None = None  # the one the latest finding logged
        self._tampering: str | None = None
        try:
            try:
                with self._records.held():
                    self._catch_up(at_open=True)
            except LockTimeout as exc:
                raise AuditError(
                    f"The audit log at {directory} is busy: {exc}. That process may be stuck; "
                    "stop it, or try again."
                ) from exc
            self._check_latest_head()
            if key is not None:
                self._publish_public_key(key.public_key())
        except BaseException:
            self.close()
            raise
        self.signing_problem: str | None = None
        """Why this log signs no tree head, or None when it can sign."""
        if adopt_unsigned:
            self._adopted = self._tree.size
        held = directory / HELD_UNSIGNED_FILE
        unsigned = self._unsigned_count()
        if self._presence.alone:
            # Nobody else has it open, so nobody is about to sign these: left over from a
            # process that stopped before signing, or appended by someone. Say so for every
            # process that opens the log until an operator adopts them.
            if unsigned and not adopt_unsigned:
                held.write_text(f"{self._tree.size}\n", encoding="ascii")
            else:
                held.unlink(missing_ok=True)
        elif adopt_unsigned:
            held.unlink(missing_ok=True)
        elif _held_over(held, self._tree_heads):
            unsigned = max(unsigned, 1)
        else:
            unsigned = 0  # another process here appended them, and signs them as it goes
        if key is None:
            self.signing_problem = keyless_reason or (
                f"The audit log at {directory} was opened without a signing key: records are "
                "appended, but no tree head is signed, so `ratified audit verify` fails on "
                f"them. Set {KEY_ENV} to a key file outside the log's folder (it is made on "
                f"first use), for example: export {KEY_ENV}={EXAMPLE_KEY_PATH}"
            )
        elif unsigned and not adopt_unsigned:
            unsigned = self._unsigned_count() or unsigned
            self.signing_problem = (
                f"The audit log at {directory} ends with {_count(unsigned, 'record')} that no "
                "signed tree head covers: a process stopped before it signed them, or someone "
                "appended them. This process appends but will not sign over them. Check them "
                "(`ratified audit verify` counts them), then vouch for them with `ratified "
                "audit sign --adopt-unsigned`."
            )
        if self.signing_problem is not None and warn:
            logger.warning("%s", self.signing_problem)

    def _publish_public_key(self, key: Ed25519PublicKey) -> None:
        path = self.directory / PUBLIC_KEY_FILE
        if not path.exists():
            save_public_key(key, path)

    @classmethod
    def open(
        cls,
        directory: str | Path,
        key: Ed25519PrivateKey | None = None,
        *,
        key_path: str | Path | None = None,
        recover: bool = True,
        adopt_unsigned: bool = False,
        warn: bool = True,
    ) -> AuditLog:
        """Open the log in ``directory``, creating the directory when new.

        The signing key is ``key``, else the file ``key_path``, else the file named by
        ``$RATIFIED_AUDIT_KEY``; a file that does not exist yet is made (mode 0600, its
        public half beside it as ``*.pub.pem``) for a log that has signed nothing yet. A key
        file inside ``directory`` is refused, and a log whose key still sits there (the old
        ``log-key.pem``) is opened without it. Without a key the log appends but signs
        nothing, and says so once (a warning on the ``ratified_rdf.audit`` logger, unless
        not ``warn``: for a caller that reports ``signing_problem`` itself).

        Records that no tree head covered when the log is opened (a process stopped before
        signing, or someone appended them) are not signed over unless ``adopt_unsigned``.
        A torn last line (a process killed mid-append: its call never started, or its
        outcome was never confirmed) is moved aside into ``<file>.torn-<time>`` when
        ``recover``, and reported otherwise. A log with a damaged line, or whose latest tree
        head no longer matches its records, is not opened: appending to it would bury the
        damage.
        """
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        reason = None
        if key is None:
            chosen = key_path if key_path is not None else os.environ.get(KEY_ENV) or None
            if chosen is not None:
                key = cls._key_file(folder, Path(chosen).expanduser())
            elif (folder / PRIVATE_KEY_FILE).exists():
                reason = (
                    f"The audit log at {folder} keeps its signing key in its own folder "
                    f"({folder / PRIVATE_KEY_FILE}), where whoever can rewrite the log can also "
                    "re-sign it, so it is not used: records are appended, but no tree head is "
                    f"signed. {_move_key_hint(folder)}"
                )
        return cls(
            folder,
            key,
            recover=recover,
            adopt_unsigned=adopt_unsigned,
            keyless_reason=reason,
            warn=warn,
        )

    @staticmethod
    def _key_file(folder: Path, path: Path) -> Ed25519PrivateKey:
        if _inside(path, folder):
            raise AuditError(
                f"The audit signing key {path} is inside the audit log's folder {folder}, "
                "where whoever can rewrite the log could re-sign it. Move it to a folder of "
                f"its own (for example {EXAMPLE_KEY_PATH}) and give that path ({KEY_ENV} or "
                "--key)."
            )
        if path.exists():
            return load_private_key(path)
        if read_lines(folder / TREE_HEADS_FILE).complete:
            raise AuditError(
                f"There is no signing key at {path}, and the audit log at {folder} has signed "
                "tree heads already, so a new key would not match them. Restore its key to "
                f"{path}, or give the path where it is ({KEY_ENV} or --key)."
                + (
                    f" Its old key is still in the log's folder: {_move_key_hint(folder)}"
                    if (folder / PRIVATE_KEY_FILE).exists()
                    else ""
                )
            )
        path.parent.mkdir(parents=True, exist_ok=True)
        made = generate_key()
        save_private_key(made, path)
        save_public_key(made.public_key(), public_key_path(path))
        logger.info("Made the audit signing key %s (public key %s).", path, public_key_path(path))
        return made

    def _catch_up(self, *, at_open: bool = False, locked: bool = True) -> None:
        """Read the records and tree heads appended since this process last looked (by any
        process), into the tree. Under the lock (``locked``) a torn last line can only be a
        dead process's: it is set aside (``recover``) or reported; without the lock a line
        still being written is left for later."""
        for file in (self._records, self._heads, self._voucher_file):
            path = file.path
            offset = (
                self._records_read
                if file is self._records
                else self._heads_read
                if file is self._heads
                else self._vouchers_read
            )
            if file.size() == offset:
                continue  # nobody appended since: no read (what most appends find)
            lines = read_lines(path, offset)
            if lines.torn is not None and locked:
                if not self._recover:
                    raise AuditError(torn_line_message(path, read_lines(path)))
                stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
                set_aside_torn_line(path, stamp)
            read = sum(len(line) + 1 for line in lines.complete)
            try:
                if path == self._records.path:
                    entries = [parse_entry(line) for line in lines.complete]
                    for line in lines.complete:
                        self._tree.append(line)
                    self._record_ids.update(e.id for e in entries if isinstance(e, AuditRecord))
                    self._records_read += read
                elif path == self._heads.path:
                    heads = [SignedTreeHead.model_validate_json(x) for x in lines.complete]
                    for head in heads:
                        self._check_key(head)
                    self._tree_heads.extend(heads)
                    self._heads_read += read
                    if heads:
                        self._forget_signed()
                else:
                    covered = self._covered()
                    for voucher in parse_vouchers(lines.complete, covered):
                        if voucher.index >= covered:
                            self._vouchers.setdefault(voucher.index, []).append(voucher)
                    self._vouchers_read += read
            except ValidationError as exc:
                raise AuditError(
                    f"The audit log at {self.directory} has a damaged line, so it was not "
                    f"{'opened' if at_open else 'written to'}: {VERIFY_HINT}."
                ) from exc

    def _check_key(self, head: SignedTreeHead) -> None:
        if self._public_key is not None and head.key_id != key_id(self._public_key):
            raise AuditError(
                f"The audit log at {self.directory} was signed with the key {head.key_id}, "
                f"not with the key given ({key_id(self._public_key)}). Open it with its own "
                "key: tree heads signed by two keys would not verify."
            )

    def _check_latest_head(self) -> None:
        if self._tree_heads:
            latest = self._tree_heads[-1]
            if latest.tree_size > self._tree.size or latest.root != self._tree.root(
                latest.tree_size
            ):
                raise AuditError(
                    f"The records of the audit log at {self.directory} no longer match its "
                    f"latest signed tree head (size {latest.tree_size}), so it was not opened: "
                    f"{VERIFY_HINT}."
                )

    def _covered(self) -> int:
        """How many records the latest signed tree head covers."""
        return self._tree_heads[-1].tree_size if self._tree_heads else 0

    def _unsigned_count(self) -> int:
        return self._tree.size - self._covered()

    def _forget_signed(self) -> None:
        """Drop what vouched for records a tree head now covers: a head vouches for them."""
        covered = self._covered()
        for held in (self._own, self._vouchers):
            for index in [i for i in held if i < covered]:
                del held[index]

    def _vouched_size(self) -> int:
        """How many records, from the first on, may be signed over: each is covered by a
        tree head, was adopted, was appended by this process or is vouched for by another
        holder of the key. Call it with the lock held."""
        index = max(self._covered(), self._adopted, self._vouched_through)
        if index == self._stuck_at:
            # Its voucher would have come before it: only a tree head or an adoption moves
            # past it, so a server's signer, woken by every append meanwhile, stops here.
            return index
        key = self._public_key
        while index < self._tree.size:
            own = self._own.get(index)
            if own is not None and own == self._tree.leaf_hash(index):
                pass
            elif key is None or not vouched(self._tree, index, self._vouchers.get(index, []), key):
                break
            index += 1
        self._vouched_through = index
        self._stuck_at = index if index < self._tree.size else None
        return index

    def _note_tampering(self, vouched_size: int) -> None:
        """Say (once for each such record) when a record no one vouched for stops signing at
        ``vouched_size``; clear it when a tree head or an adoption covers it."""
        if vouched_size >= self._tree.size:
            self._tampering = None
            return
        # Logged once, not at every later attempt: the count after it grows as the server
        # goes on, and its signer tries again after every period.
        said = self._tampering is not None and self._stuck_said == vouched_size
        after = self._tree.size - vouched_size - 1
        finding = (
            f"The audit log at {self.directory} holds a record that no process holding its "
            f"signing key wrote: line {vouched_size + 1} of {RECORDS_FILE}, which no signed "
            "tree head covers, has no voucher from the key, so someone else appended it to "
            "the file (or a writer without the key did). No tree head is signed over it"
            + (f", nor over the {_count(after, 'record')} after it" if after else "")
            + ". Check it with `ratified audit verify`; only if you trust it, vouch for it "
            "with `ratified audit sign --adopt-unsigned`."
        )
        if not said:
            logger.error("%s", finding)
        self._tampering, self._stuck_said = finding, vouched_size

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """This process's thread lock and the directory's lock, caught up with the others.

        Held only while one line is written: never across a call's work. A thread that
        asks for it while holding it already (code run from inside an append, such as a
        finalizer the garbage collector started there) gets an ``AuditError`` at once;
        waiting would hold the directory's lock, and every other process's appends, for
        good."""
        me = threading.get_ident()
        if self._holder == me:
            raise AuditError(
                f"The audit log at {self.directory} was written to from inside one of its own "
                "appends, on the same thread (cleanup code run mid-append, such as a "
                "finalizer), so that write was refused: it would have waited for itself "
                "forever. Close what you audit with `with`, not by dropping it."
            )
        with self._lock:
            self._holder = me
            try:
                try:
                    held = self._records.held()
                    held.__enter__()
                except LockTimeout as exc:
                    raise AuditError(
                        f"The audit log at {self.directory} is busy: {exc}. That process may "
                        "be stuck; stop it, or try again."
                    ) from exc
                except OSError as exc:  # the file is gone or closed under us
                    raise AuditError(
                        f"Could not write to the audit log at {self.directory} ({exc}). "
                        "Check the disk's space and permissions before going on."
                    ) from exc
                try:
                    self._catch_up()
                    yield
                finally:
                    held.__exit__(None, None, None)
            finally:
                self._holder = None

    def _peek(self) -> None:
        """Catch up without the lock (complete lines only), for what only reads the tree."""
        if not self._closed:
            self._catch_up(locked=False)

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The key that checks this log's tree heads; an AuditError without a signing key."""
        if self._public_key is None:
            raise AuditError(self.signing_problem or "This audit log has no signing key.")
        return self._public_key

    @property
    def tampering(self) -> str | None:
        """What the latest signature found in the log that no holder of the key wrote (and
        so did not sign over), as a sentence; None when it found nothing."""
        return self._tampering

    @property
    def can_sign(self) -> bool:
        """Whether ``sign_tree_head`` signs (see ``signing_problem`` when it does not)."""
        return self.signing_problem is None

    @property
    def has_key(self) -> bool:
        """Whether the log was opened with a signing key (it may still decline to sign: see
        ``signing_problem``)."""
        return self._key is not None

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._closed

    @property
    def unsigned(self) -> int:
        """How many entries the latest signed tree head does not cover (appended by any
        process)."""
        with self._lock:
            self._peek()
            return self._unsigned_count()

    def on_append(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` (with no lock held) after every append, e.g. to wake a signer."""
        self._listeners.append(listener)

    def off_append(self, listener: Callable[[], None]) -> None:
        """Stop calling ``listener`` after appends; one never added is ignored."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    @property
    def size(self) -> int:
        """How many entries (leaves) the log holds (appended by any process)."""
        with self._lock:
            self._peek()
            return self._tree.size

    @property
    def tree_heads(self) -> tuple[SignedTreeHead, ...]:
        """The tree heads signed so far (by any process), oldest first."""
        with self._lock:
            self._peek()
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
        with self._locked():
            self._check_reference(entry)
            index, hashed = self._tree.size, leaf_hash(leaf)
            try:
                if self._key is not None:
                    # The voucher goes first: a crash between the two leaves a voucher for
                    # no record (it vouches for nothing else), never a record without one.
                    line = vouch(self._key, self._key_id, index, hashed, self._tree.root())
                    self._voucher_file.append_line(line, durable=False)
                    self._vouchers_read += len(line) + 1
                self._records.append_line(leaf, durable=durable)
            except OSError as exc:
                raise AuditError(
                    f"Could not write to the audit log at {self.directory} ({exc}). "
                    "Check the disk's space and permissions before going on."
                ) from exc
            self._records_read += len(leaf) + 1
            if isinstance(entry, AuditRecord):
                self._record_ids.add(entry.id)
            if self._key is not None:
                self._own[index] = hashed
            self._tree.append(leaf)
        for listener in tuple(self._listeners):
            listener()
        return index

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

    def sign_tree_head(self) -> SignedTreeHead | None:
        """Sign the current tree head, record it in ``sth.jsonl`` and return it; None when
        this log cannot sign (``signing_problem`` says why; it was said when it opened).

        A record that no holder of the key wrote (no voucher; see ``tampering``) is never
        signed over: the tree head then covers the records before it, if that is more than
        the latest covered, and an ``AuditError`` says what was found."""
        if self._key is None or self.signing_problem is not None:
            return None
        if self._closed:
            raise AuditError(
                f"The audit log at {self.directory} is closed, so no tree head was signed. "
                "Open it again to sign."
            )
        with self._locked():
            head = self._sign()
        if self._tampering is not None:
            signed = (
                f" A tree head was signed over the {_count(head.tree_size, 'record')} before it."
                if head is not None
                else ""
            )
            raise AuditError(f"{self._tampering}{signed}")
        return head

    def _sign(self) -> SignedTreeHead | None:
        """Sign a tree head over every record that may be signed over (with the lock held);
        None when a record no one vouched for leaves nothing new to sign."""
        assert self._key is not None
        size = self._vouched_size()
        self._note_tampering(size)
        if size < self._tree.size and size <= self._covered():
            return None
        # A tree head may only cover records already on disk (fsync of the file puts every
        # process's lines there).
        self._records.sync()
        latest = self._tree_heads[-1] if self._tree_heads else None
        # Heads are numbered in the order of the file, so that a head deleted from its middle
        # shows; a log whose heads are not numbered yet starts at its count of heads.
        if latest is None:
            sequence = 0
        elif latest.sequence is not None:
            sequence = latest.sequence + 1
        else:
            sequence = len(self._tree_heads)
        # Tree heads must not go back in time even if the clock does.
        moment = max(now_ms(), latest.timestamp if latest is not None else 0)
        head = sign_tree_head(self._key, size, self._tree.root(size), moment, sequence=sequence)
        line = canonical_bytes(head)
        try:
            self._heads.append_line(line)
        except OSError as exc:
            raise AuditError(
                f"Could not record a signed tree head in {self.directory} ({exc}). "
                "Check the disk's space and permissions, then sign again."
            ) from exc
        self._heads_read += len(line) + 1
        self._tree_heads.append(head)
        self._forget_signed()
        return head

    def checkpoint(self) -> SignedTreeHead | None:
        """Sign a tree head if any entry is not covered by one yet (and this log can sign);
        return it, or None when nothing was signed. Unlike ``sign_tree_head`` it does not
        raise on a record no holder of the key wrote: that was logged, and ``tampering``
        says it (a server's signer and a closing brain go on)."""
        if self.closed or not self.can_sign or not self.unsigned:
            return None
        with self._locked():
            return self._sign()

    def adopt_unsigned(self) -> None:
        """Let this log sign over the records no tree head covers now, vouched for or not:
        the operator has checked them. A log without a key still cannot sign."""
        if self._key is not None:
            with self._lock:
                self._peek()
                self._adopted = max(self._adopted, self._tree.size)
            self.signing_problem = None
            (self.directory / HELD_UNSIGNED_FILE).unlink(missing_ok=True)

    def root(self, size: int | None = None) -> bytes:
        """The Merkle root of the first ``size`` entries (all by default)."""
        with self._lock:
            self._peek()
            return self._tree.root(size)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        """The RFC 9162 inclusion proof of entry ``index`` in the tree of ``size`` entries."""
        with self._lock:
            self._peek()
            return self._tree.inclusion_proof(index, size)

    def consistency_proof(self, old_size: int, new_size: int | None = None) -> list[bytes]:
        """The RFC 9162 consistency proof from ``old_size`` entries to ``new_size``."""
        with self._lock:
            self._peek()
            return self._tree.consistency_proof(old_size, new_size)

    def close(self) -> None:
        """Release the files (the others that have the log open go on)."""
        with self._lock:
            self._closed = True
            self._records.close()
            self._heads.close()
            self._voucher_file.close()
            self._presence.close()

    def __enter__(self) -> AuditLog:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def _held_over(held: Path, heads: list[SignedTreeHead]) -> bool:
    """Whether ``held`` still marks records no tree head covers (a head signed since, by an
    operator who adopted them, makes it stale)."""
    try:
        size = int(held.read_text(encoding="ascii").strip() or "0")
    except (FileNotFoundError, ValueError):
        return False
    return not heads or heads[-1].tree_size < size


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")
