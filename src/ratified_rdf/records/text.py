"""What text a record may carry: plain, and of a bounded length.

The SHACL shapes refuse the same at the gate (``shapes/core.ttl``: titles, names and bodies),
so whatever a source reads, the store never holds a terminal escape, a NUL byte or a title a
megabyte long. A record that can say so earlier, naming the field and the file (the manifest),
checks with :func:`line_problem` before anything is read. The limits are generous: the real
corpora's longest title is a few hundred characters and their longest post a few tens of
thousands.
"""

from __future__ import annotations

import re
from typing import Final

MAX_TITLE_CHARS: Final = 2_000
"""The longest title (``dcterms:title``) a record holds: a brain's, an RFC's, a section's
heading, a thread's, a mail subject."""
MAX_NAME_CHARS: Final = 500
"""The longest name (``foaf:name``, ``foaf:accountName``) a record holds."""
MAX_BODY_CHARS: Final = 1_000_000
"""The longest body (``sioc:content``) a post or a mail message holds."""

# C0 and C1 controls (DEL, tab and newline included), and the bidirectional embeddings,
# overrides and isolates that make a terminal or a page show other text than what is held.
_NOT_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def line_problem(value: str, limit: int) -> str | None:
    """Why ``value`` is not one line of plain text of at most ``limit`` characters, as a
    clause to follow the field's name ("is 1,000,000 characters long; …"); None when it is.
    The character refused is named by its code point, never echoed."""
    if len(value) > limit:
        return f"is {len(value):,} characters long; keep it to {limit:,} or fewer"
    bad = _NOT_A_LINE.search(value)
    if bad is None:
        return None
    char = bad.group()
    kind = "a bidirectional control" if char >= "\u202a" else "a control character"
    return (
        f"holds {kind} (U+{ord(char):04X} at position {bad.start()}); write it as one line "
        "of plain text"
    )
