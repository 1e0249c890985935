"""The reader of what a document says of other documents, for each format a brain reads.

One reader per format (:data:`~ratified_rdf.sources.formats.FORMATS`), each in a module of its
own: markdown (:mod:`~ratified_rdf.records.references`), xml2rfc XML
(:mod:`~ratified_rdf.records.references_xml`) and plain text
(:mod:`~ratified_rdf.records.references_text`). A new format's reader is one more entry in
:data:`REFERENCE_READERS`, under the format's name.
"""

from __future__ import annotations

from collections.abc import Callable

from ratified_rdf.records.references import DocumentReferences, read_references
from ratified_rdf.records.references_text import read_text_references
from ratified_rdf.records.references_xml import read_xml_references
from ratified_rdf.sources.formats import format_of

__all__ = ["REFERENCE_READERS", "references_in"]

REFERENCE_READERS: dict[str, Callable[[str], DocumentReferences]] = {
    "kramdown": read_references,
    "xml2rfc": read_xml_references,
    "text": read_text_references,
}
"""Each format's reader, by the format's name."""


def references_in(path: str, text: str) -> DocumentReferences | None:
    """What the document at ``path`` (its text ``text``) says of other documents, read by its
    format's reader; None for a file in a format no reader reads."""
    found = format_of(path)
    reader = REFERENCE_READERS.get(found.name) if found is not None else None
    return reader(text) if reader is not None else None
