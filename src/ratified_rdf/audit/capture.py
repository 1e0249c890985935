"""``capture``: audit one operation around the code that performs it, failing closed."""

from __future__ import annotations

import time
from types import TracebackType

from pydantic import JsonValue

from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.log import AuditLog
from ratified_rdf.audit.records import AuditRecord, Clearance, Kind, OutcomeSidecar


class Capture:
    """The context manager :func:`capture` returns: the record is appended on entry, its
    outcome on exit.

    A class, not a generator: a generator-based block that is entered and never exited (a
    call abandoned mid-way) is closed by the garbage collector, which runs its cleanup on
    whatever thread happens to allocate, possibly one inside the log's own append, holding
    its lock. A block never exited here writes nothing more: its record stays without an
    outcome, as a killed process leaves it, and whoever abandons a call says how it ended
    (``__exit__`` with the reason)."""

    def __init__(
        self,
        log: AuditLog,
        kind: Kind,
        subject: str | dict[str, JsonValue],
        *,
        tenant: str,
        clearance: Clearance,
        actor: str,
        durable: bool,
    ) -> None:
        self._log = log
        self._kind = kind
        self._subject = subject
        self._who = (tenant, clearance, actor)
        self._durable = durable
        self._record: AuditRecord | None = None
        self._started = 0

    def __enter__(self) -> AuditRecord:
        tenant, clearance, actor = self._who
        try:
            record = AuditRecord(
                kind=self._kind,
                subject=self._subject,
                tenant=tenant,
                clearance=clearance,
                actor=actor,
            )
            self._log.append(record, durable=self._durable)
        except Exception as exc:
            raise AuditError(
                f"The {self._kind} call did not run because its audit record could not be "
                f"written: {exc}"
            ) from exc
        self._record = record
        self._started = time.monotonic_ns()
        return record

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        record, self._record = self._record, None
        if record is None:
            return  # never entered, or its outcome is written already
        took = (time.monotonic_ns() - self._started) // 1_000_000
        if exc is None:
            # The started record is already on disk; its outcome goes with the next durable
            # write.
            outcome = OutcomeSidecar(annotates=record.id, outcome="succeeded", duration_ms=took)
        else:
            outcome = OutcomeSidecar(
                annotates=record.id,
                outcome="failed",
                duration_ms=took,
                error_class=type(exc).__qualname__,
                error=str(exc),
            )
        # If the outcome cannot be written AuditError is raised; the block's exception stays
        # in its chain of causes.
        self._log.append(outcome, durable=False)


def capture(
    log: AuditLog,
    kind: Kind,
    subject: str | dict[str, JsonValue],
    *,
    tenant: str,
    clearance: Clearance,
    actor: str,
    durable: bool = True,
) -> Capture:
    """Record a ``started`` record, run the block, then record how it ended in a sidecar.

    The started record is written before the block runs, so a call that fails, or a process
    killed while it runs, still leaves it. With ``durable`` (the default; every write to a
    brain) it is also fsynced first, so not even a power cut loses it; reads may pass False
    to skip that wait, and then reach the disk with the next durable append, tree head or
    close, like every outcome. If the record cannot be written the block never runs and
    ``AuditError`` is raised, so no audited operation goes unrecorded. When the block raises,
    a ``failed`` outcome naming the error class and message is appended and the block's
    exception goes on. If that outcome cannot be written, ``AuditError`` is raised instead;
    the block's exception stays in its chain of causes. Usage::

        with capture(log, "ask", {"question": q}, tenant=t, clearance="internal", actor=a):
            answer = brain.ask(q)
    """
    return Capture(
        log, kind, subject, tenant=tenant, clearance=clearance, actor=actor, durable=durable
    )
