"""Public facts fetched over the network: the IETF Datatracker, the IETF mail archive, and
RFC and draft texts from the RFC Editor and the IETF archive.

Everything here goes through one polite client (:mod:`.http`), which caches what it fetched on
disk so that a build can run again offline from the same answers.
"""

from ratified_rdf.sources.online.datatracker import (
    DatatrackerClient,
    DatatrackerError,
    DraftFacts,
    FactsRecordError,
    Revision,
    read_facts_record,
    write_facts_record,
)
from ratified_rdf.sources.online.http import Fetched, FetchError, PoliteClient
from ratified_rdf.sources.online.ietf_texts import (
    KeptText,
    fetch_draft_revision,
    fetch_rfc_text,
)
from ratified_rdf.sources.online.mailarchive import download_mbox, export_url, extract_mboxes

__all__ = [
    "DatatrackerClient",
    "DatatrackerError",
    "DraftFacts",
    "FactsRecordError",
    "FetchError",
    "Fetched",
    "KeptText",
    "PoliteClient",
    "Revision",
    "download_mbox",
    "export_url",
    "extract_mboxes",
    "fetch_draft_revision",
    "fetch_rfc_text",
    "read_facts_record",
    "write_facts_record",
]
