"""The audit package's errors; each message is a sentence saying what went wrong and what to do."""

from __future__ import annotations

from ratified_rdf._errors import AuditError

__all__ = ["AnchorRejected", "AnchorStateError", "AnchorUnreachable", "AuditError"]


class AnchorStateError(AuditError):
    """An anchoring was asked to move between two states its lifecycle does not connect."""


class AnchorUnreachable(AuditError):
    """An anchor could not be reached for now; the anchoring is queued for a later retry."""


class AnchorRejected(AuditError):
    """An anchor refused a tree head for good; retrying the same tree head will not help."""
