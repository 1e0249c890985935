"""``CallAudit``: how one reader's calls on a brain reach the audit log.

Every ask, query, validation, dump, review and prune is recorded before it runs (failing
closed) and how it ended after, as the reader's tenant, clearance and actor.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from pydantic import JsonValue

from ratified_rdf.audit.capture import capture
from ratified_rdf.audit.log import AuditLog
from ratified_rdf.audit.records import AuditRecord, DetailSidecar, Kind
from ratified_rdf.trust.reader import Reader

WRITES = frozenset({"build", "write_batch", "review"})
"""Audited kinds that change a brain: their records are fsynced before the work runs."""


class CallAudit:
    """The audit log (or none) one reader's calls on brain ``brain_id`` are recorded in."""

    def __init__(self, log: AuditLog | None, reader: Reader, brain_id: str) -> None:
        self.log = log
        self.reader = reader
        self.brain_id = brain_id

    def call(
        self, kind: Kind, subject: dict[str, JsonValue]
    ) -> AbstractContextManager[AuditRecord | None]:
        """A block recorded as a call of ``kind`` on ``subject``; without a log, nothing."""
        if self.log is None:
            return nullcontext()
        return capture(
            self.log,
            kind,
            {**subject, "brain": self.brain_id},
            tenant=self.reader.tenant,
            clearance=self.reader.clearance.value,
            actor=self.reader.actor,
            # Reads change nothing: their records skip the fsync wait (see capture).
            durable=kind in WRITES,
        )

    def detail(self, record: AuditRecord | None, detail: dict[str, JsonValue]) -> None:
        """Annotate a recorded call with what it found (rows, hashes, verdicts)."""
        if self.log is not None and record is not None:
            self.log.append(DetailSidecar(annotates=record.id, detail=detail), durable=False)


def sha256(text: str) -> str:
    """The hex SHA-256 of ``text``: how the audit log names a query's text or a claim."""
    return hashlib.sha256(text.encode()).hexdigest()


def audit_dir(store: Path) -> Path:
    """Where the audit log of the store at ``store`` lives: beside it, ``<store>.audit``."""
    return store.with_name(store.name + ".audit")


def remote_audit_dir(url: str) -> Path:
    """Where the audit log of calls to the server at ``url`` lives: under the user's state
    folder (``$XDG_STATE_HOME``, else ``~/.local/state``), one folder per server."""
    state = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    name = re.sub(r"[^A-Za-z0-9.-]+", "-", url.split("://", 1)[-1]).strip("-")
    return state / "ratified-rdf" / "audit" / name


def audit_folder(location: str | Path) -> Path:
    """Where the audit log of the brain at ``location`` (a store folder or a server's URL)
    lives."""
    if str(location).startswith(("http://", "https://")):
        return remote_audit_dir(str(location))
    return audit_dir(Path(location))
