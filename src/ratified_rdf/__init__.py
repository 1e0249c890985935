"""ratified-rdf: a provable company brain of Internet-Draft revisions, RFCs and discussions.

The public API is re-exported here; everything else is private to the package.
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
from ratified_rdf._version import __version__
from ratified_rdf.answers.models import Alternative, Answer, Evidence, Verdict
from ratified_rdf.brain import Brain
from ratified_rdf.build import BuildReport
from ratified_rdf.graph.gate import GateRejected, Violation
from ratified_rdf.graph.reviews import ReviewError
from ratified_rdf.queries import QueryRun

__all__ = [
    "Alternative",
    "Answer",
    "AuditError",
    "Brain",
    "BrainError",
    "BuildReport",
    "Evidence",
    "GateRejected",
    "InputError",
    "QueryFailed",
    "QueryRun",
    "RatifiedError",
    "ReviewError",
    "SourceError",
    "StoreError",
    "Verdict",
    "Violation",
    "__version__",
]
