"""ratified-rdf: a provable company brain of Internet-Draft revisions, RFCs and discussions.

The public API is re-exported here: :class:`Brain` (the front door), the :class:`Reader` who
reads it, the :class:`Answer` cards and the records in them, and one error root,
:class:`RatifiedError`. Every other module is the package's own business.
"""

import typing

from ratified_rdf._errors import (
    AuditError,
    BrainError,
    InputError,
    QueryFailed,
    RatifiedError,
    SourceError,
    StoreError,
)
from ratified_rdf._version import __version__

if typing.TYPE_CHECKING:
    from ratified_rdf._build_report import BuildReport
    from ratified_rdf._reading import Reading
    from ratified_rdf.answers.models import (
        Alternative,
        Answer,
        ChainStep,
        CommitChange,
        Count,
        DiscussionPost,
        DocumentFacts,
        DraftedQuestion,
        Evidence,
        Expert,
        HistoryEntry,
        Holding,
        Intent,
        PersonActivity,
        RevisionEntry,
        SectionActivity,
        SectionDiff,
        SectionFate,
        SectionText,
        ThreadInfo,
        Timeline,
        TimelineMark,
        TimelinePublication,
        TimelineRevision,
        Trust,
        Verdict,
    )
    from ratified_rdf.audit import AuditLog
    from ratified_rdf.brain import Brain
    from ratified_rdf.graph.gate import GateRejected
    from ratified_rdf.graph.remote import SparqlProtocolStore
    from ratified_rdf.graph.reviews import ReviewError
    from ratified_rdf.graph.scope import Scope
    from ratified_rdf.graph.store import OxigraphStore, QueryResult, TripleStore
    from ratified_rdf.graph.violations import Violation
    from ratified_rdf.queries import QueryRun
    from ratified_rdf.queries.files import QueryError
    from ratified_rdf.queries.guard import QueryRefused
    from ratified_rdf.records.manifest import ManifestError
    from ratified_rdf.trust import (
        Clearance,
        ClearanceError,
        Reader,
        RedactionPolicy,
        TenantId,
        TenantIdError,
    )

_LAZY = {
    "Alternative": "ratified_rdf.answers.models",
    "Answer": "ratified_rdf.answers.models",
    "AuditLog": "ratified_rdf.audit",
    "Brain": "ratified_rdf.brain",
    "BuildReport": "ratified_rdf._build_report",
    "ChainStep": "ratified_rdf.answers.models",
    "Clearance": "ratified_rdf.trust",
    "ClearanceError": "ratified_rdf.trust",
    "CommitChange": "ratified_rdf.answers.models",
    "Count": "ratified_rdf.answers.models",
    "DiscussionPost": "ratified_rdf.answers.models",
    "DocumentFacts": "ratified_rdf.answers.models",
    "DraftedQuestion": "ratified_rdf.answers.models",
    "Evidence": "ratified_rdf.answers.models",
    "Expert": "ratified_rdf.answers.models",
    "GateRejected": "ratified_rdf.graph.gate",
    "HistoryEntry": "ratified_rdf.answers.models",
    "Holding": "ratified_rdf.answers.models",
    "Intent": "ratified_rdf.answers.models",
    "ManifestError": "ratified_rdf.records.manifest",
    "OxigraphStore": "ratified_rdf.graph.store",
    "PersonActivity": "ratified_rdf.answers.models",
    "QueryError": "ratified_rdf.queries.files",
    "QueryRefused": "ratified_rdf.queries.guard",
    "QueryResult": "ratified_rdf.graph.store",
    "QueryRun": "ratified_rdf.queries",
    "Reader": "ratified_rdf.trust",
    "Reading": "ratified_rdf._reading",
    "RedactionPolicy": "ratified_rdf.trust",
    "ReviewError": "ratified_rdf.graph.reviews",
    "RevisionEntry": "ratified_rdf.answers.models",
    "Scope": "ratified_rdf.graph.scope",
    "SectionActivity": "ratified_rdf.answers.models",
    "SectionDiff": "ratified_rdf.answers.models",
    "SectionFate": "ratified_rdf.answers.models",
    "SectionText": "ratified_rdf.answers.models",
    "SparqlProtocolStore": "ratified_rdf.graph.remote",
    "TenantId": "ratified_rdf.trust",
    "TenantIdError": "ratified_rdf.trust",
    "ThreadInfo": "ratified_rdf.answers.models",
    "Timeline": "ratified_rdf.answers.models",
    "TimelineMark": "ratified_rdf.answers.models",
    "TimelinePublication": "ratified_rdf.answers.models",
    "TimelineRevision": "ratified_rdf.answers.models",
    "TripleStore": "ratified_rdf.graph.store",
    "Trust": "ratified_rdf.answers.models",
    "Verdict": "ratified_rdf.answers.models",
    "Violation": "ratified_rdf.graph.violations",
}
"""Where each public name is defined: imported on first use (PEP 562), so that a command that
only answers questions never imports what building or validating needs (the SHACL engine,
rdflib, the sources' parsers)."""


def __getattr__(name: str) -> object:
    """The public name ``name``, imported from its module on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ratified_rdf' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    globals()[name] = value  # found directly next time
    return value


def __dir__() -> list[str]:
    """Every name the root binds, those not imported yet too."""
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "Alternative",
    "Answer",
    "AuditError",
    "AuditLog",
    "Brain",
    "BrainError",
    "BuildReport",
    "ChainStep",
    "Clearance",
    "ClearanceError",
    "CommitChange",
    "Count",
    "DiscussionPost",
    "DocumentFacts",
    "DraftedQuestion",
    "Evidence",
    "Expert",
    "GateRejected",
    "HistoryEntry",
    "Holding",
    "InputError",
    "Intent",
    "ManifestError",
    "OxigraphStore",
    "PersonActivity",
    "QueryError",
    "QueryFailed",
    "QueryRefused",
    "QueryResult",
    "QueryRun",
    "RatifiedError",
    "Reader",
    "Reading",
    "RedactionPolicy",
    "ReviewError",
    "RevisionEntry",
    "Scope",
    "SectionActivity",
    "SectionDiff",
    "SectionFate",
    "SectionText",
    "SourceError",
    "SparqlProtocolStore",
    "StoreError",
    "TenantId",
    "TenantIdError",
    "ThreadInfo",
    "Timeline",
    "TimelineMark",
    "TimelinePublication",
    "TimelineRevision",
    "TripleStore",
    "Trust",
    "Verdict",
    "Violation",
    "__version__",
]
