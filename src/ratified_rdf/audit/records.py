"""Audit records, their sidecars, and the RFC 8785 canonical bytes that become Merkle leaves.

A record is never changed once written. Facts that arrive later (how a call ended, how the
anchoring of a tree head went) are sidecars: frozen entries of their own that point at what
they annotate and are appended as leaves of their own.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from typing import Annotated, Literal, Self

import orjson
import rfc8785
from pydantic import (
    AfterValidator,
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    NonNegativeInt,
    PlainSerializer,
    StringConstraints,
    TypeAdapter,
    model_validator,
)

from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.lifecycle import AnchorState

Kind = Literal["build", "write_batch", "ask", "query", "review", "validate", "dump"]
"""What was done: one of the library's audited operations."""

Clearance = Literal["public", "internal", "confidential", "restricted"]
"""The most sensitive level of data the operation touched."""

Outcome = Literal["started", "succeeded", "failed"]
"""How an operation stands when its record is written."""

Finish = Literal["succeeded", "failed"]
"""How an operation ended."""

RecordId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{32}$")]
"""A UUID4 as 32 lower-case hex digits."""

HexHash = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
"""A SHA-256 hash as 64 lower-case hex digits."""

_Name = Annotated[str, StringConstraints(min_length=1)]


def _as_utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC)


# One fixed format (always microseconds, always "Z") so that a timestamp read back from the
# log serialises to the very same bytes.
UtcTimestamp = Annotated[
    AwareDatetime,
    AfterValidator(_as_utc),
    PlainSerializer(lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), return_type=str),
]
"""A timezone-aware moment, kept in UTC and written as ``YYYY-MM-DDTHH:MM:SS.ffffffZ``."""


def new_id() -> str:
    """A fresh record id."""
    return uuid.uuid4().hex


def utc_now() -> datetime:
    """The current moment in UTC."""
    return datetime.now(UTC)


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: RecordId = Field(default_factory=new_id)
    at: UtcTimestamp = Field(default_factory=utc_now)


class AuditRecord(_Entry):
    """One audited operation: who did what, for which tenant, at which clearance."""

    type: Literal["record"] = "record"
    kind: Kind
    tenant: _Name
    clearance: Clearance
    actor: _Name
    subject: str | dict[str, JsonValue]
    outcome: Outcome = "started"
    error: str | None = None

    @model_validator(mode="after")
    def _error_iff_failed(self) -> Self:
        if (self.outcome == "failed") != (self.error is not None):
            raise ValueError("a record carries an error message exactly when its outcome is failed")
        return self


class OutcomeSidecar(_Entry):
    """How the operation of an earlier ``started`` record ended, and how long it took."""

    type: Literal["outcome"] = "outcome"
    annotates: RecordId
    outcome: Finish
    duration_ms: NonNegativeInt
    error_class: str | None = None
    error: str | None = None

    @model_validator(mode="after")
    def _error_iff_failed(self) -> Self:
        failed = self.outcome == "failed"
        if failed != (self.error_class is not None) or (not failed and self.error is not None):
            raise ValueError("an outcome names its error class exactly when it failed")
        return self


class DetailSidecar(_Entry):
    """Facts about an earlier record learnt after it was written (the queries an answer ran,
    the triples a batch wrote), kept apart so the record's schema never changes."""

    type: Literal["detail"] = "detail"
    annotates: RecordId
    detail: dict[str, JsonValue]


class AnchorSidecar(_Entry):
    """One step in anchoring a signed tree head, named by its size, timestamp and root hash."""

    type: Literal["anchor"] = "anchor"
    anchor: _Name
    tree_size: NonNegativeInt
    timestamp: NonNegativeInt
    root_hash: HexHash
    state: AnchorState
    detail: str | None = None
    receipt: dict[str, JsonValue] | None = None

    @model_validator(mode="after")
    def _receipt_iff_anchored(self) -> Self:
        if (self.state is AnchorState.ANCHORED) != (self.receipt is not None):
            raise ValueError("an anchoring step carries a receipt exactly when it is anchored")
        return self


LogEntry = Annotated[
    AuditRecord | OutcomeSidecar | DetailSidecar | AnchorSidecar, Field(discriminator="type")
]
"""Any line of ``records.jsonl``."""

_LOG_ENTRY: TypeAdapter[AuditRecord | OutcomeSidecar | DetailSidecar | AnchorSidecar] = TypeAdapter(
    LogEntry
)


def parse_entry(line: bytes) -> AuditRecord | OutcomeSidecar | DetailSidecar | AnchorSidecar:
    """The entry one log line holds; raises ``pydantic.ValidationError`` if it holds none."""
    return _LOG_ENTRY.validate_json(line)


def canonical_json(value: JsonValue, what: str = "value") -> bytes:
    """The RFC 8785 canonical JSON of ``value``, refused unless it reads back to itself.

    Values without floats whose keys are all ASCII (every audit record, every answer card)
    take a fast path: for them orjson's sorted, compact JSON is byte for byte RFC 8785 (the
    same escapes; code-point order is UTF-16 order for ASCII keys), which a property test
    checks against the ``rfc8785`` package; orjson is several times quicker than the
    standard library's encoder on a card (benchmarks/RESULTS.md). Anything else goes through
    that package, and its bytes are read back and canonicalised again before
    they are returned, since a verifier does exactly that to every line: a float such as
    ``2.0**53`` is written as an integer that RFC 8785 then refuses, and such a line could
    never verify.
    """
    if _plain(value):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    try:
        data = rfc8785.dumps(value)
        if rfc8785.dumps(json.loads(data)) == data:
            return data
        problem = "it does not read back to the same bytes"
    except rfc8785.CanonicalizationError as exc:
        problem = str(exc)
    raise AuditError(
        f"This {what} cannot be written as canonical JSON ({problem}): RFC 8785 has no "
        "exact form for NaN, infinities or numbers beyond ±2**53, so give such values as "
        "strings."
    )


_MAX_SAFE = 2**53 - 1


def _plain(value: JsonValue) -> bool:
    """No floats, no integers beyond ±(2**53 − 1), no lone surrogates, only ASCII keys."""
    # Iterative and by exact type: this runs on every audit record, so it must stay cheap.
    # (``type(item) is str`` each time, not once into a name: mypy narrows only the former.)
    pending: list[object] = [value]
    while pending:
        item = pending.pop()
        if type(item) is str:
            if not item.isascii() and _SURROGATE.search(item):
                return False
        elif type(item) is dict:
            for key, inner in item.items():
                if type(key) is not str or not key.isascii():
                    return False
                pending.append(inner)
        elif type(item) is list:
            pending.extend(item)
        elif type(item) is int:
            if not -_MAX_SAFE <= item <= _MAX_SAFE:
                return False
        elif item is not None and type(item) is not bool:
            return False
    return True


_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical_bytes(model: BaseModel) -> bytes:
    """The RFC 8785 canonical JSON of ``model``: its Merkle leaf and its line in the log."""
    return canonical_json(model.model_dump(mode="json"), type(model).__name__)
