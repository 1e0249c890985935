"""``verify_log``: check an audit log from scratch with only its files and its public key.

Every line must be the RFC 8785 canonical form of itself and fit the schema, record ids must
be unique, sidecars must point back at what they annotate, and anchoring steps must follow
their lifecycle. Every signed tree head must carry a good signature by the given key, match
the Merkle root recomputed from the records, be consistent (RFC 9162 §2.1.4) with the tree
head before it, and carry the next number (a head deleted from the middle of ``sth.jsonl``
leaves a gap every later head shows). The first such problem stops the check.

A log that passes those checks still fails when it proves less than it should: records no
signed tree head covers (appended after the last signature, or tree heads cut from the end;
those without a voucher from the key, which no holder of the key wrote, are named as
tampering), records without any tree head, a private key kept in the log's own folder, and,
given the tree head a witness last saw, a log shorter than it (rolled back), different from
it (forked or rewritten) or missing it. Each is reported with its count, as a sentence saying
what to do. What a log can prove on its own, and what only a witness can, is in the README
("What the audit log proves").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ValidationError

from ratified_rdf.audit._files import Lines, read_lines
from ratified_rdf.audit._vouchers import VOUCHERS_FILE, Voucher, parse_vouchers, vouched
from ratified_rdf.audit.errors import AnchorStateError
from ratified_rdf.audit.lifecycle import AnchorState, check_transition
from ratified_rdf.audit.log import (
    PRIVATE_KEY_FILE,
    PUBLIC_KEY_FILE,
    RECORDS_FILE,
    TREE_HEADS_FILE,
    torn_line_message,
)
from ratified_rdf.audit.merkle import MerkleTree, verify_consistency
from ratified_rdf.audit.records import (
    AnchorSidecar,
    AuditRecord,
    DetailSidecar,
    OutcomeSidecar,
    canonical_bytes,
    parse_entry,
)
from ratified_rdf.audit.signing import SignedTreeHead, key_id, verify_tree_head

_M = TypeVar("_M", bound=BaseModel)

_RESTORE = "Restore the file from a backup and compare it with the witness's copy."


@dataclass(frozen=True)
class VerificationReport:
    """What ``verify_log`` found: counts, the latest good tree head, and every problem."""

    directory: Path
    records: int
    tree_heads: int
    latest: SignedTreeHead | None
    problems: tuple[str, ...] = ()
    key_checked: bool = True
    """Whether the signatures were checked with a public key obtained apart from the log."""
    witnessed: SignedTreeHead | None = None
    """The tree head a witness last saw, when one was given and the log extends it."""

    @property
    def problem(self) -> str | None:
        """The first problem found, or None."""
        return self.problems[0] if self.problems else None

    @property
    def ok(self) -> bool:
        """Whether the log passed every check that was made."""
        return not self.problems

    @property
    def verified(self) -> bool:
        """Whether the log passed, checked with a public key obtained apart from it."""
        return self.ok and self.key_checked

    @property
    def unsigned(self) -> int:
        """How many records no signed tree head covers."""
        return self.records - (self.latest.tree_size if self.latest else 0)

    def __str__(self) -> str:
        if self.problems:
            return "\n".join(f"FAILED: {problem}" for problem in self.problems)
        if self.records == 0:
            holds = f"the audit log at {self.directory} holds no records yet"
        else:
            assert self.latest is not None
            holds = (
                f"the audit log at {self.directory} holds {_count(self.records, 'record')}, "
                f"every one covered by its latest of {_count(self.tree_heads, 'signed tree head')} "
                f"(root {self.latest.root_hash}); all are consistent"
            )
        if not self.key_checked:
            return (
                f"NOT VERIFIED: {holds}, but no public key was given, so the signatures were "
                "checked at most against the copy in the log's own folder, which whoever can "
                "rewrite the log can replace. Give --public-key with a copy kept elsewhere."
            )
        text = f"VERIFIED: {holds}, and signed by the key given."
        if self.witnessed is not None:
            return (
                f"{text} It extends the tree head of size {self.witnessed.tree_size} the "
                f"witness last saw ({_when(self.witnessed)})."
            )
        return (
            f"{text} Not checked, as no witness was given: that this is the latest history. "
            "A copy cut back to an earlier signed tree head, or an older copy, passes this "
            "check too; give --witness DIR to rule that out."
        )


class _Problem(Exception):
    """The first thing found wrong; its message is the report's sentence."""


def verify_log(
    directory: str | Path,
    public_key: Ed25519PublicKey | None,
    *,
    key_checked: bool = True,
    witness: SignedTreeHead | None = None,
) -> VerificationReport:
    """Check the audit log in ``directory`` against the log's ``public_key``.

    ``key_checked`` says whether ``public_key`` was obtained apart from the log (pass False
    for the copy in its folder); with no key at all the signatures are not checked, only
    that every tree head names the same key. ``witness`` is the tree head a witness last
    saw: the log must still hold it, and records that match it.
    """
    checker = _Checker(Path(directory), public_key)
    try:
        checker.run()
    except _Problem as problem:
        return checker.report((str(problem),), key_checked)
    except OSError as exc:
        return checker.report(
            (
                f"The audit log at {directory} cannot be read ({exc}). Check the path and its "
                "permissions.",
            ),
            key_checked,
        )
    problems = [*checker.coverage_problems()]
    if witness is not None:
        problems += checker.witness_problems(witness)
    return checker.report(
        tuple(problems), key_checked, witness if witness is not None and not problems else None
    )


class _Checker:
    def __init__(self, directory: Path, public_key: Ed25519PublicKey | None) -> None:
        self.directory = directory
        self.public_key = public_key
        self.tree = MerkleTree()
        self.heads: list[SignedTreeHead] = []
        self.anchor_steps: list[tuple[int, AnchorSidecar]] = []

    def report(
        self,
        problems: tuple[str, ...],
        key_checked: bool,
        witnessed: SignedTreeHead | None = None,
    ) -> VerificationReport:
        return VerificationReport(
            directory=self.directory,
            records=self.tree.size,
            tree_heads=len(self.heads),
            latest=self.heads[-1] if self.heads else None,
            problems=problems,
            key_checked=key_checked and self.public_key is not None,
            witnessed=witnessed,
        )

    def coverage_problems(self) -> list[str]:
        """What a log whose every line and tree head is sound can still fail to prove."""
        problems = []
        private = self.directory / PRIVATE_KEY_FILE
        if private.exists():
            problems.append(
                f"The log's folder holds a private signing key ({private}): whoever can "
                "rewrite the log can re-sign it with that key, so its signatures prove "
                "nothing. Move the key out of the folder (see `ratified audit sign --help`) "
                "and check the log against a witness (--witness) for the time it sat there."
            )
        records, signed = self.tree.size, self.heads[-1].tree_size if self.heads else 0
        heads_file = self.directory / TREE_HEADS_FILE
        if records and not self.heads:
            problems.append(
                f"{heads_file} holds no signed tree head, so none of the "
                f"{_count(records, 'record')} in {RECORDS_FILE} is covered by a signature: the "
                "tree heads were deleted, or the log was written without a signing key. "
                f"{_RESTORE}"
            )
        elif records > signed:
            uncovered = (
                f"{records - signed:,} of {_count(records, 'record')} (lines {signed + 1} to "
                f"{records} of {RECORDS_FILE}) are not covered by a signed tree head; the "
                f"latest, line {len(self.heads)} of {heads_file}, covers {signed:,}."
            )
            strangers = self.unvouched(signed)
            if strangers:
                one = len(strangers) == 1
                problems.append(
                    f"{uncovered} {_lines_named(strangers)} {'has' if one else 'have'} no "
                    f"voucher from the key in {VOUCHERS_FILE}: no process holding the signing "
                    f"key wrote {'it' if one else 'them'}, so someone appended "
                    f"{'it' if one else 'them'} to the file (or a writer without the key "
                    "did), and no process signs over them. Check them; only if you trust "
                    "them, vouch for them with `ratified audit sign --adopt-unsigned`; "
                    f"otherwise {_RESTORE[0].lower()}{_RESTORE[1:]}"
                )
            else:
                problems.append(
                    f"{uncovered} Records were appended after the last signature, tree heads "
                    f"were cut from the end of {TREE_HEADS_FILE}, or the writer stopped "
                    "without signing. If a process still writes the log, sign it first "
                    "(`ratified audit sign`) and verify again; otherwise "
                    f"{_RESTORE[0].lower()}{_RESTORE[1:]}"
                )
        return problems

    def unvouched(self, start: int) -> list[int]:
        """The indexes, from ``start`` on, of records without a good voucher by the key
        (none are known without a key to check them with)."""
        if self.public_key is None:
            return []
        lines = read_lines(self.directory / VOUCHERS_FILE).complete
        vouchers: dict[int, list[Voucher]] = {}
        for voucher in parse_vouchers(lines, start):
            if voucher.index >= start:
                vouchers.setdefault(voucher.index, []).append(voucher)
        return [
            index
            for index in range(start, self.tree.size)
            if not vouched(self.tree, index, vouchers.get(index, []), self.public_key)
        ]

    def witness_problems(self, seen: SignedTreeHead) -> list[str]:
        """How the log disagrees with the tree head a witness last saw, if it does."""
        saw = f"the tree head of size {seen.tree_size} the witness last saw ({_when(seen)})"
        if self.public_key is not None and not verify_tree_head(seen, self.public_key):
            return [
                f"{saw[0].upper()}{saw[1:]} is not signed by the key given ({seen.key_id} "
                "signed it): the witness follows another log, or this log's key was replaced. "
                "Check which witness belongs to this log."
            ]
        if seen.tree_size > self.tree.size:
            return [
                f"The log holds {_count(self.tree.size, 'record')}, but {saw} covers "
                f"{seen.tree_size:,}: {seen.tree_size - self.tree.size:,} are missing, so the "
                f"log was rolled back to an older copy or cut short. {_RESTORE}"
            ]
        if self.tree.root(seen.tree_size) != seen.root:
            return [
                f"The first {_count(seen.tree_size, 'record')} differ from those of {saw}: the "
                f"log was forked or rewritten after the witness saw it. {_RESTORE}"
            ]
        key = (seen.tree_size, seen.timestamp, seen.root_hash)
        if all((h.tree_size, h.timestamp, h.root_hash) != key for h in self.heads):
            return [
                f"{self.directory / TREE_HEADS_FILE} lacks {saw}: tree heads were removed or "
                f"replaced. {_RESTORE}"
            ]
        return []

    def run(self) -> None:
        records = self.directory / RECORDS_FILE
        if not records.is_file():
            raise _Problem(
                f"There is no audit log at {self.directory}: {RECORDS_FILE} is missing. "
                "Check the directory you gave."
            )
        self.check_records(records)
        self.check_tree_heads(self.directory / TREE_HEADS_FILE)
        self.check_anchor_steps(records)

    def check_records(self, path: Path) -> None:
        record_lines: dict[str, int] = {}
        outcome_lines: dict[str, int] = {}
        seen_ids: dict[str, int] = {}
        lines = _complete_lines(path)
        for number, line in enumerate(lines, start=1):
            entry = _parse(path, number, line, parse_entry)
            where = f"{path}, line {number}"
            if entry.id in seen_ids:
                raise _Problem(
                    f"{where} repeats the id {entry.id} of line {seen_ids[entry.id]}: a line "
                    f"was copied. {_RESTORE}"
                )
            seen_ids[entry.id] = number
            if isinstance(entry, AuditRecord):
                record_lines[entry.id] = number
            elif isinstance(entry, OutcomeSidecar):
                if entry.annotates not in record_lines:
                    raise _Problem(
                        f"{where} is the outcome of record {entry.annotates}, but no earlier "
                        f"line holds that record: lines were deleted or reordered. {_RESTORE}"
                    )
                if entry.annotates in outcome_lines:
                    raise _Problem(
                        f"{where} is a second outcome of record {entry.annotates} (the first "
                        f"is on line {outcome_lines[entry.annotates]}): a record ends once. "
                        f"{_RESTORE}"
                    )
                outcome_lines[entry.annotates] = number
            elif isinstance(entry, DetailSidecar):
                if entry.annotates not in record_lines:
                    raise _Problem(
                        f"{where} adds detail to record {entry.annotates}, but no earlier line "
                        f"holds that record: lines were deleted or reordered. {_RESTORE}"
                    )
            else:
                self.anchor_steps.append((number, entry))
            self.tree.append(line)

    def check_tree_heads(self, path: Path) -> None:
        expected = key_id(self.public_key) if self.public_key is not None else None
        # A gap in the numbers is reported once every head is checked: a head moved up from
        # further down leaves one too, and its own problem says more.
        gap: str | None = None
        for number, line in enumerate(_complete_lines(path), start=1):
            head = _parse(path, number, line, SignedTreeHead.model_validate_json)
            where = f"The tree head on {path}, line {number}"
            if expected is None and self.heads and head.key_id != self.heads[0].key_id:
                raise _Problem(
                    f"{where} was signed by the key {head.key_id}, but the first by "
                    f"{self.heads[0].key_id}: one log has one key, so one of them is forged. "
                    f"{_RESTORE}"
                )
            if expected is not None and head.key_id != expected:
                raise _Problem(
                    f"{where} was signed by the key {head.key_id}, but the public key given is "
                    f"{expected}. Give the log's public key ({PUBLIC_KEY_FILE}); if you did, "
                    "the tree head is forged."
                )
            if self.public_key is not None and not verify_tree_head(head, self.public_key):
                raise _Problem(
                    f"{where} has a signature that does not verify: the tree head was forged "
                    f"or edited. {_RESTORE}"
                )
            if head.tree_size > self.tree.size:
                raise _Problem(
                    f"{where} covers {head.tree_size} records, but {RECORDS_FILE} holds only "
                    f"{self.tree.size}: records were deleted from its end. {_RESTORE}"
                )
            if head.root != self.tree.root(head.tree_size):
                raise _Problem(
                    f"{where} does not match the first {head.tree_size} records: they were "
                    f"changed, deleted or reordered after it was signed. {_RESTORE}"
                )
            if self.heads:
                self.check_consistency(where, self.heads[-1], head)
            gap = gap or self.check_sequence(where, head)
            self.heads.append(head)
        if gap is not None:
            raise _Problem(gap)

    def check_sequence(self, where: str, head: SignedTreeHead) -> str | None:
        """Every tree head is accounted for: a numbered head carries the number of the heads
        before it, and none without a number follows one with. A gap (heads missing before
        this one) is returned rather than raised."""
        before = len(self.heads)
        if head.sequence is None:
            if self.heads and self.heads[-1].sequence is not None:
                raise _Problem(
                    f"{where} carries no number, but the tree head before it does: heads are "
                    f"numbered since this log first numbered one, so lines of {TREE_HEADS_FILE} "
                    f"were moved or replaced. {_RESTORE}"
                )
            return None
        if head.sequence > before:
            missing = head.sequence - before
            return (
                f"{where} is the log's tree head number {head.sequence + 1}, so "
                f"{_count(missing, 'tree head')} before it {'is' if missing == 1 else 'are'} "
                f"missing from {TREE_HEADS_FILE}: {'it was' if missing == 1 else 'they were'} "
                f"deleted. {_RESTORE}"
            )
        if head.sequence < before:
            raise _Problem(
                f"{where} is the log's tree head number {head.sequence + 1}, but "
                f"{_count(before, 'tree head')} come before it: lines of {TREE_HEADS_FILE} "
                f"were copied or reordered. {_RESTORE}"
            )
        return None

    def check_consistency(self, where: str, old: SignedTreeHead, new: SignedTreeHead) -> None:
        if new.tree_size < old.tree_size or new.timestamp < old.timestamp:
            raise _Problem(
                f"{where} is older or smaller than the one before it: tree heads were "
                f"reordered or replaced. {_RESTORE}"
            )
        proof = self.tree.consistency_proof(old.tree_size, new.tree_size)
        if not verify_consistency(old.tree_size, new.tree_size, old.root, new.root, proof):
            raise _Problem(
                f"{where} is not consistent with the tree head before it: the log was "
                f"rewritten between them. {_RESTORE}"
            )

    def check_anchor_steps(self, path: Path) -> None:
        signed = {(head.tree_size, head.timestamp, head.root_hash) for head in self.heads}
        states: dict[tuple[str, int, int, str], AnchorState] = {}
        for number, step in self.anchor_steps:
            where = f"{path}, line {number}"
            head = (step.tree_size, step.timestamp, step.root_hash)
            if head not in signed or step.tree_size >= number:
                raise _Problem(
                    f"{where} records anchoring a tree head of size {step.tree_size} that "
                    f"{TREE_HEADS_FILE} does not hold before it: a tree head was removed or "
                    f"the line was forged. {_RESTORE}"
                )
            key = (step.anchor, *head)
            try:
                check_transition(states.get(key), step.state)
            except AnchorStateError as exc:
                raise _Problem(
                    f"{where} breaks the anchoring lifecycle at {step.anchor}: {exc} Lines "
                    f"were deleted or reordered. {_RESTORE}"
                ) from exc
            states[key] = step.state


def _complete_lines(path: Path) -> list[bytes]:
    lines: Lines = read_lines(path)
    if lines.torn is not None:
        raise _Problem(torn_line_message(path, lines))
    return lines.complete


def _parse(path: Path, number: int, line: bytes, parse: Callable[[bytes], _M]) -> _M:
    where = f"{path}, line {number}"
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise _Problem(f"{where} is not JSON ({exc}): the line was damaged. {_RESTORE}") from exc
    try:
        canonical = rfc8785.dumps(value)
    except rfc8785.CanonicalizationError as exc:
        raise _Problem(f"{where} has a value RFC 8785 cannot express ({exc}). {_RESTORE}") from exc
    if canonical != line:
        raise _Problem(
            f"{where} is not in RFC 8785 canonical form, so it was edited after it was "
            f"written. {_RESTORE}"
        )
    try:
        model = parse(line)
    except ValidationError as exc:
        detail = exc.errors()[0]
        field = ".".join(map(str, detail["loc"])) or "the line"
        raise _Problem(
            f"{where} does not fit the audit schema ({field}: {detail['msg']}): it was "
            f"edited after it was written. {_RESTORE}"
        ) from exc
    if canonical_bytes(model) != line:
        raise _Problem(
            f"{where} is not written the way the log writes it (a value in a variant form, "
            f"or a default left out): it was edited after it was written. {_RESTORE}"
        )
    return model


def _lines_named(indexes: list[int], most: int = 5) -> str:
    """``Line 41``, or ``3 of them (lines 41, 43 and 45)``, naming at most ``most`` lines."""
    numbers = [f"{index + 1}" for index in indexes[:most]]
    if len(indexes) == 1:
        return f"Line {numbers[0]}"
    if len(indexes) > most:
        named = f"lines {', '.join(numbers)}, …"
    else:
        named = f"lines {', '.join(numbers[:-1])} and {numbers[-1]}"
    return f"{len(indexes):,} of them ({named})"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _when(head: SignedTreeHead) -> str:
    moment = datetime.fromtimestamp(head.timestamp / 1000, UTC)
    return f"signed {moment.strftime('%Y-%m-%d %H:%M:%S')} UTC"
