"""ratified-rdf: a provable company brain of Internet-Draft revisions, RFCs and discussions."""

__version__ = "0.1.0"
