"""ratified-rdf: a provable company brain of Internet-Draft revisions, RFCs and discussions.

The public API is re-exported here; everything else is private to the package.
"""

from ratified_rdf._version import __version__
from ratified_rdf.answers.models import Alternative, Answer, Evidence, Verdict
from ratified_rdf.brain import Brain, BrainError
from ratified_rdf.build import BuildReport
from ratified_rdf.graph.gate import GateRejected, Violation
from ratified_rdf.graph.reviews import ReviewError
from ratified_rdf.queries import QueryRun

__all__ = [
    "Alternative",
    "Answer",
    "Brain",
    "BrainError",
    "BuildReport",
    "Evidence",
    "GateRejected",
    "QueryRun",
    "ReviewError",
    "Verdict",
    "Violation",
    "__version__",
]
