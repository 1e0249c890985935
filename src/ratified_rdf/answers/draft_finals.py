"""The sections of a draft that became no RFC: its last revision's stand for its own.

A section card is about an RFC's section. Where the brain holds no RFC with the section a
question numbers, and a draft that became no RFC has it in its last revision (the revision
the build aligns that draft's chain with, ``rr:sectionsFrom``), the section is read there, as
the number is read in the document it is written beside: the cards take a
:class:`DraftFinal` where they take an RFC number.
"""

from __future__ import annotations

from dataclasses import dataclass

from ratified_rdf.answers.models import Alternative
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.graph import vocab as v


@dataclass(frozen=True)
class DraftFinal:
    """A draft that became no RFC, by the last revision whose sections stand for its own."""

    draft: str
    """The draft's name, e.g. ``draft-example-pigeon``."""
    revision: str
    """The last revision's IRI."""
    label: str
    """The last revision's name, e.g. ``draft-example-pigeon-02``."""

    def __str__(self) -> str:
        return self.label


Final = int | DraftFinal
"""What a section card is about: an RFC by number, or a draft that became no RFC."""


def final_iri(final: Final) -> str:
    """The IRI of the document whose sections the card reads: the RFC, or the last revision."""
    return final.revision if isinstance(final, DraftFinal) else v.document_iri(f"rfc{final}")


def final_name(final: Final) -> str:
    """``RFC 9999``, or the last revision's name."""
    return final.label if isinstance(final, DraftFinal) else f"RFC {final}"


def became_no_rfc(final: DraftFinal) -> str:
    """The sentence a section card ends with when it is about a draft's last revision, with
    a leading space."""
    return (
        f" {final.draft} became no RFC the records hold: its sections here are those of "
        f"{final.label}, its last revision, numbered as that revision numbers them."
    )


def draft_final_of(
    session: Session, section: str, draft: str | None, asking: str, *, only_named: bool = False
) -> tuple[DraftFinal, str, list[Alternative]] | None:
    """The draft that became no RFC whose last revision has section ``section``, with the lead
    and alternatives to say how it was chosen; None when no such draft has it.

    The draft the question names (or a later draft of its chain) wins; else, of several, the
    one whose last revision is the most recent; with ``only_named``, only the draft named.
    ``asking`` words the alternatives."""
    rows = session.run("draft_sections_numbered", sectionNumber=section)
    if draft is not None:
        named = [r for r in rows if text_of(r, "member") == draft]
        rows = named if named or only_named else rows
    heads: dict[str, DraftFinal] = {}
    for row in rows:
        name = text_of(row, "draftName") or ""
        heads.setdefault(
            name,
            DraftFinal(
                draft=name,
                revision=text_of(row, "revision") or "",
                label=text_of(row, "label") or name,
            ),
        )
    if not heads:
        return None
    chosen, *others = heads.values()
    lead = ""
    if others:
        names = ", ".join(o.label for o in others)
        lead = (
            f"Section {section} exists in {chosen.label} and {names}; this card is about "
            f"{chosen.label}, the most recent (ask with the draft's name for another). "
        )
    alternatives = [
        Alternative(
            question=f"{asking} {o.draft} section {section}?",
            reason=f"{o.label} also has a section {section}",
        )
        for o in others
    ]
    return chosen, lead, alternatives
