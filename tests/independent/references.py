"""An independent count of what drafts' texts say of an RFC: its sections they cite and
whether they say they update it, read with plain patterns per format, written apart from
``ratified_rdf.records.references*`` (which follow aliases through reference lists and read
citations by the discussion's rules). Used by tests/corpus/test_group_corpus.py.
"""

from __future__ import annotations

import re

__all__ = ["aliases_of", "cited_sections", "says_it_updates"]

_NUMBER = r"([0-9]+(?:\.[0-9]+)*|[A-Z](?:\.[0-9]+)*)"


def aliases_of(text: str, rfc: int) -> set[str]:
    """The keys a text cites RFC ``rfc`` by: ``RFC8446`` and any alias it defines for it
    (``{{!TLS13=RFC8446}}``, a header entry ``TLS13: RFC8446``, an XML reference anchored
    ``TLS13`` whose series is RFC 8446, a text entry ``[TLS13] …, RFC 8446, …``)."""
    keys = {f"RFC{rfc}"}
    patterns = [
        rf"\{{\{{[!?]?\s*([A-Za-z][\w\-]*)\s*=\s*RFC\s?{rfc}\s*\}}\}}",
        rf"^\s+([A-Za-z][\w\-]*)\s*:\s*RFC\s?{rfc}\s*$",
        rf'<reference\s+anchor="([^"]+)"(?:(?!</reference>).)*?name="RFC"\s+value="{rfc}"',
        rf"^\s{{1,10}}\[([^\]\s]+)\][^\[]*?\bRFC\s{rfc},",
    ]
    for pattern in patterns:
        keys |= set(re.findall(pattern, text, re.MULTILINE | re.DOTALL))
    return keys


def cited_sections(text: str, rfc: int) -> set[str]:
    """The section numbers of RFC ``rfc`` a draft's text cites, in any format's way of
    writing it."""
    found: set[str] = set()
    for key in aliases_of(text, rfc):
        k = re.escape(key)
        patterns = [
            rf"(?:Section|Appendix)\s+{_NUMBER}\s+of\s+(?:\[|\{{\{{[!?]?|<xref\s+target=\"){k}\b",
            rf"\{{\{{[!?]?{k},\s*(?:Section|Appendix)\s+{_NUMBER}\s*\}}\}}",
            rf"(?:\[{k}\]|\{{\{{[!?]?{k}\}}\}}),?;?\s+(?:Section|Appendix)\s+{_NUMBER}",
            rf"<xref\s+target=\"{k}\"[^>]*\bsection=\"{_NUMBER}\"",
            # kramdown-rfc's other way: {{Section 4.1.2 of RFC8446}}
            rf"\{{\{{\s*(?:Section|Appendix)\s+{_NUMBER}\s+of\s+[!?]?{k}\s*\}}\}}",
        ]
        for pattern in patterns:
            found |= set(re.findall(pattern, text, re.IGNORECASE))
        # A list of sections of one document: "Sections 5.4 and E.3 of [RFC8446]", "Section
        # 5.4 and Appendix E.3 of RFC 8446", "{{RFC8446}} section 4.2.3" (any case).
        spaced = re.escape(key).replace("RFC", r"RFC\s?")
        listed = (
            rf"(?:Sections?|Appendix|Appendices)\s+({_NUMBER}(?:\s*(?:,|and|,\s*and)\s*"
            rf"(?:(?:Section|Appendix)\s+)?{_NUMBER})*)\s+of\s+(?:\[|\{{\{{[!?]?)?{spaced}\b"
        )
        for whole, *_ in re.findall(listed, text, re.IGNORECASE):
            found |= set(re.findall(rf"\b{_NUMBER}(?![\w])", whole))
    return {n.rstrip(".") for n in found}


def says_it_updates(text: str, rfc: int) -> bool:
    """Whether a draft's header says it updates RFC ``rfc`` (YAML front matter, the XML
    root's attribute, the text header's "Updates:" line)."""
    head = text[:6000]
    return bool(
        re.search(rf"^updates:[^\n]*\b{rfc}\b", head, re.MULTILINE | re.IGNORECASE)
        or re.search(rf"^updates:\s*\n(?:\s+-\s*\d+\s*\n)*\s+-\s*{rfc}\b", head, re.MULTILINE)
        or re.search(rf'<rfc\b[^>]*\bupdates="[^"]*\b{rfc}\b', head)
        or re.search(rf"^Updates:[^\n]*\b{rfc}\b", head, re.MULTILINE)
    )
