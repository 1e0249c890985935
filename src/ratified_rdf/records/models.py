"""Records of truth: what the readers found, before it becomes RDF.

Every record crossing from the readers to the graph is one of these frozen pydantic models, so a
build can be inspected, serialised or tested without a store.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from ratified_rdf.records.manifest import BrainInfo
from ratified_rdf.sources.document import ParsedDocument


class CommitRef(BaseModel):
    """A commit in the source repository and, when they differ, its id on the public host."""

    model_config = ConfigDict(frozen=True)

    commit: str
    public_commit: str | None = None
    committed_at: datetime


class DraftRecord(BaseModel):
    """A draft series and where it went."""

    model_config = ConfigDict(frozen=True)

    name: str
    title: str | None = None
    became: str | None = None
    replaced_by: str | None = None
    missing_revisions: tuple[str, ...] = ()
    """Revisions (two digits) the manifest says the repository does not hold."""


class RevisionRecord(BaseModel):
    """One revision of a draft: the document as it stood at tag ``<draft>-NN``, or where
    another revision source found it (:attr:`provenance`)."""

    model_config = ConfigDict(frozen=True)

    draft: str
    number: str
    tag: str | None
    """The tag, for a revision read from one."""
    provenance: str = ""
    """Where its text came from (``tag draft-x-03``, ``file draft-x-03.txt at commit …``)."""
    file: str
    commit: CommitRef
    document: ParsedDocument

    @property
    def name(self) -> str:
        """The revision's full name, e.g. ``draft-ietf-tls-tls13-21``."""
        return f"{self.draft}-{self.number}"


class KeptRevision(BaseModel):
    """A revision the repository lacks, read from a text kept in the records folder
    (``texts/<draft>-NN.xml`` or ``.txt``, as ``ratified fetch draft`` keeps it from the IETF
    archive): no commit of the repository made it, so none is credited to it; it is dated by
    its posting as the Datatracker records it."""

    model_config = ConfigDict(frozen=True)

    draft: str
    number: str
    file: str
    """The kept text, relative to the records folder (``texts/draft-x-07.txt``)."""
    url: str
    """Where the IETF archive serves it."""
    posted_at: datetime
    document: ParsedDocument

    @property
    def name(self) -> str:
        """The revision's full name, e.g. ``draft-ietf-tls-dtls13-07``."""
        return f"{self.draft}-{self.number}"

    @property
    def provenance(self) -> str:
        """Where its text came from, as a phrase."""
        return f"kept record {self.file}, fetched from the IETF archive ({self.url})"


class RfcRecord(BaseModel):
    """A published RFC and its text as the repository holds it.

    When the repository does not hold the RFC's text, ``sections_from`` names the revision
    whose sections stand for the RFC's (the last revision of the draft that became it; its
    ``ref``, ``file``, ``commit`` and ``document`` are that revision's), or the RFC is a fact
    alone: no text, no sections, no commit.
    """

    model_config = ConfigDict(frozen=True)

    number: int
    title: str
    published: str
    ref: str | None
    file: str | None
    commit: CommitRef | None
    obsoletes: tuple[int, ...] = ()
    document: ParsedDocument
    sections_from: str | None = None
    """The revision (``draft-ietf-tls-dtls-connection-id-13``) whose sections stand for the
    RFC's own, whose text the repository does not hold."""
    found: str | None = None
    """Where the build found the text the manifest did not name, as a clause."""

    @property
    def text_held(self) -> bool:
        """Whether the RFC's own text was read (from where the manifest or the build found)."""
        return self.sections_from is None and self.commit is not None

    @property
    def name(self) -> str:
        """``rfc`` + number."""
        return f"rfc{self.number}"


class AlignmentRule(StrEnum):
    """How a section was matched to the section it became."""

    SAME_HEADING = "same-heading"
    SAME_ANCHOR = "same-anchor"
    SIMILAR_TEXT = "similar-text"
    NO_COUNTERPART = "no-counterpart"


class AlignmentRecord(BaseModel):
    """A section of a revision (or an older RFC) linked to the section of the RFC it became."""

    model_config = ConfigDict(frozen=True)

    source_document: str
    """Revision name (``draft-ietf-tls-tls13-21``) or RFC name (``rfc8446``)."""
    source_position: int
    target_rfc: str
    target_position: int | None
    rule: AlignmentRule
    similarity: float | None = None
    """Similarity of the section's text to the final text, 0 to 1."""


class SpecRecords(BaseModel):
    """Everything one read of a specification repository produced."""

    model_config = ConfigDict(frozen=True)

    brain: BrainInfo
    source: str
    drafts: tuple[DraftRecord, ...]
    revisions: tuple[RevisionRecord, ...]
    rfcs: tuple[RfcRecord, ...]
    alignments: tuple[AlignmentRecord, ...]
    kept_revisions: tuple[KeptRevision, ...] = ()
    """Revisions the repository lacks, read from texts kept in the records folder."""
    unread_files: tuple[str, ...] = ()
    """Files on the default branch that look like a draft's or an RFC's text but that no
    entry of the manifest reads (nor the build found an RFC's text in)."""
