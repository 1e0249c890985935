"""``verify_log``: check an audit log from scratch with only its files and its public key.

Every line must be the RFC 8785 canonical form of itself and fit the schema, record ids must
be unique, sidecars must point back at what they annotate, and anchoring steps must follow
their lifecycle. Every signed tree head must carry a good signature by the given key, match
the Merkle root recomputed from the records, and be consistent (RFC 9162 §2.1.4) with the
tree head before it. The first problem found is reported as a sentence saying what to do.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import BaseModel, ValidationError

from ratified_rdf.audit._files import Lines, read_lines
from ratified_rdf.audit.errors import AnchorStateError
from ratified_rdf.audit.lifecycle import AnchorState, check_transition
from ratified_rdf.audit.log import (
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
    """What ``verify_log`` found: counts, the latest good tree head, and the first problem."""

    directory: Path
    records: int
    tree_heads: int
    latest: SignedTreeHead | None
    problem: str | None

    @property
    def ok(self) -> bool:
        """Whether the log passed every check."""
        return self.problem is None

    @property
    def unsigned(self) -> int:
        """How many records no signed tree head covers yet."""
        return self.records - (self.latest.tree_size if self.latest else 0)

    def __str__(self) -> str:
        if self.problem is not None:
            return f"FAILED: {self.problem}"
        if self.latest is None:
            return (
                f"OK: the audit log at {self.directory} holds {self.records} well-formed "
                "records, but no signed tree head vouches for them yet."
            )
        text = (
            f"OK: the audit log at {self.directory} holds {self.records} records and "
            f"{self.tree_heads} signed tree heads, all verified and consistent. The latest "
            f"covers {self.latest.tree_size} records with root {self.latest.root_hash}."
        )
        if self.unsigned:
            text += (
                f" The last {self.unsigned} records are not covered by a signed tree head "
                "yet: sign one to vouch for them."
            )
        return text


class _Problem(Exception):
    """The first thing found wrong; its message is the report's sentence."""


def verify_log(directory: str | Path, public_key: Ed25519PublicKey) -> VerificationReport:
    """Check the audit log in ``directory`` against the log's ``public_key``."""
    checker = _Checker(Path(directory), public_key)
    try:
        checker.run()
    except _Problem as problem:
        return checker.report(str(problem))
    except OSError as exc:
        return checker.report(
            f"The audit log at {directory} cannot be read ({exc}). Check the path and its "
            "permissions."
        )
    return checker.report(None)


class _Checker:
    def __init__(self, directory: Path, public_key: Ed25519PublicKey) -> None:
        self.directory = directory
        self.public_key = public_key
        self.tree = MerkleTree()
        self.heads: list[SignedTreeHead] = []
        self.anchor_steps: list[tuple[int, AnchorSidecar]] = []

    def report(self, problem: str | None) -> VerificationReport:
        return VerificationReport(
            directory=self.directory,
            records=self.tree.size,
            tree_heads=len(self.heads),
            latest=self.heads[-1] if self.heads else None,
            problem=problem,
        )

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
        expected = key_id(self.public_key)
        for number, line in enumerate(_complete_lines(path), start=1):
            head = _parse(path, number, line, SignedTreeHead.model_validate_json)
            where = f"The tree head on {path}, line {number}"
            if head.key_id != expected:
                raise _Problem(
                    f"{where} was signed by the key {head.key_id}, but the public key given is "
                    f"{expected}. Give the log's public key ({PUBLIC_KEY_FILE}); if you did, "
                    "the tree head is forged."
                )
            if not verify_tree_head(head, self.public_key):
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
            self.heads.append(head)

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
