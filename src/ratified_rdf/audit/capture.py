"""``capture``: audit one operation around the code that performs it, failing closed."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import JsonValue

from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.log import AuditLog
from ratified_rdf.audit.records import AuditRecord, Clearance, Kind, OutcomeSidecar


@contextmanager
def capture(
    log: AuditLog,
    kind: Kind,
    subject: str | dict[str, JsonValue],
    *,
    tenant: str,
    clearance: Clearance,
    actor: str,
    durable: bool = True,
) -> Iterator[AuditRecord]:
    """Record a ``started`` record, run the block, then record how it ended in a sidecar.

    The started record is written before the block runs, so a call that fails, or a process
    killed while it runs, still leaves it. With ``durable`` (the default; every write to a
    brain) it is also fsynced first, so not even a power cut loses it; reads may pass False
    to skip that wait, and then reach the disk with the next durable append, tree head or
    close, like every outcome. If the record cannot be
    written the block never runs and ``AuditError`` is raised, so no audited operation goes
    unrecorded. When
    the block raises, a ``failed`` outcome naming the error class and message is appended
    and the block's exception goes on. If that outcome cannot be written, ``AuditError`` is
    raised instead; the block's exception stays in its chain of causes. Usage::

        with capture(log, "ask", {"question": q}, tenant=t, clearance="internal", actor=a):
            answer = brain.ask(q)
    """
    try:
        record = AuditRecord(
            kind=kind, subject=subject, tenant=tenant, clearance=clearance, actor=actor
        )
        log.append(record, durable=durable)
    except Exception as exc:
        raise AuditError(
            f"The {kind} call did not run because its audit record could not be written: {exc}"
        ) from exc
    started = time.monotonic_ns()
    try:
        yield record
    except BaseException as exc:
        log.append(
            OutcomeSidecar(
                annotates=record.id,
                outcome="failed",
                duration_ms=_elapsed_ms(started),
                error_class=type(exc).__qualname__,
                error=str(exc),
            ),
            durable=False,
        )
        raise
    # The started record is already on disk; its outcome goes with the next durable write.
    log.append(
        OutcomeSidecar(annotates=record.id, outcome="succeeded", duration_ms=_elapsed_ms(started)),
        durable=False,
    )


def _elapsed_ms(started: int) -> int:
    return (time.monotonic_ns() - started) // 1_000_000
