"""The exception hierarchy: one root, a few kinds a caller can act on.

Every error the library raises on purpose derives from :class:`RatifiedError`, and its message
is a sentence the user reads: what was wrong and what to do. A caller that only wants to show
that sentence catches the root; one that acts on the kind catches a subclass::

    RatifiedError
    ├── InputError      the caller's input is wrong: a manifest, a question, a query's text,
    │                   a review, a clearance or tenant name (also a ValueError)
    │   └── GateRejected (graph.gate) what would be written fails the SHACL shapes
    ├── SourceError     a source could not be read: a repository, an archive, a download
    ├── StoreError      the store cannot be used: locked, missing, not a brain's store
    │   └── BrainError  the store holds no brain, or not the one asked for, or not at that time
    ├── QueryFailed     a query could not be run to the end: refused by its sandbox, too big,
    │                   out of time
    └── AuditError      the audit log cannot record, or a record does not check out

The subclasses defined elsewhere keep the built-in class they were before as a second base
(``ManifestError`` is still a ``ValueError``, ``StoreError`` a ``RuntimeError``), so code that
caught those goes on working.
"""

from __future__ import annotations


class RatifiedError(Exception):
    """The root of every error ratified-rdf raises on purpose; its message says what to do."""


class InputError(RatifiedError, ValueError):
    """Something the caller gave is wrong: a manifest, a question, a query's text, a review,
    a clearance or tenant name. Nothing was written."""


class SourceError(RatifiedError, RuntimeError):
    """A source could not be read: a git repository, a GitHub archive, a mail archive, a
    download."""


class StoreError(RatifiedError, RuntimeError):
    """The store cannot be used as asked: another process holds its lock, it is missing, or
    it is not a brain's store."""


class BrainError(StoreError):
    """The store holds no brain, not the one asked for, or none complete at that moment."""


class QueryFailed(RatifiedError):
    """A query could not be run to the end: its sandbox refused it, it grew too big, or it
    ran out of time."""


class AuditError(RatifiedError, RuntimeError):
    """The audit log cannot record a call, or what it holds does not check out."""
