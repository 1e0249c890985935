"""ratified-rdf: a provable company brain of Internet-Draft revisions, RFCs and discussions.

The public API is re-exported here: :class:`Brain` (the front door), the :class:`Reader` who
reads it, the :class:`Answer` cards and the records in them, and one error root,
:class:`RatifiedError`. Every other module is the package's own business.
"""

from ratified_rdf._errors import (
    AuditError,
    BrainError,
    InputError,
    QueryFailed,
    RatifiedError,
    SourceError,
    StoreError,
)
from ratified_rdf._reading import Reading
from ratified_rdf._version import __version__
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
from ratified_rdf.build import BuildReport
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
