"""Small pieces of card wording shared by the answer modules."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ratified_rdf.answers.models import DiscussionPost, DraftedQuestion, Evidence


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 post``, ``2 posts``, ``1,250 commits``, ``1 person``, ``2 people``."""
    return f"{count:,} " + (noun if count == 1 else plural_form or f"{noun}s")


def activity_counts(posts: int, commits: int) -> str:
    """What someone's share rests on, saying only what there is: ``2 posts, 1 commit``,
    ``31 commits`` (a brain without posts, QUIC's, never reads "0 posts"); ``no posts or
    commits`` when neither."""
    parts = [plural(posts, "post")] if posts else []
    parts += [plural(commits, "commit")] if commits else []
    return ", ".join(parts) or "no posts or commits"


SINGULAR = {
    "drafts": "draft",
    "revisions": "revision",
    "RFCs": "RFC",
    "sections": "section",
    "section alignments": "section alignment",
    "sections with no counterpart": "section with no counterpart",
    "revisions that could not be read": "revision that could not be read",
}
"""The one-of-a-kind form of the plural names the queries give kinds of things (holdings)."""


def counted(count: int, nouns: str) -> str:
    """A count before a noun given in the plural: ``1 draft``, ``2 drafts``, ``1 RFC``."""
    return plural(count, SINGULAR.get(nouns, nouns), nouns)


SOURCES_LEAD = " These are the sources I looked at:"
"""Where a drafted question's list of sources begins (a surface short of room may cut it)."""


def drafted_question(
    question: str,
    title: str,
    to: Iterable[str],
    evidence: Iterable[Evidence],
    why: str,
    *,
    asking: str | None = None,
) -> DraftedQuestion:
    """A note the reader could send to the people a card names, with the sources the card
    rests on (drafted only: nothing is ever sent). ``why`` says why the record points at
    them, as a sentence. The note quotes the reader's ``question``, unless ``asking`` gives
    the question to put to them instead: a question about the people themselves ("who are
    the most active people?") is not one to send to those very people."""
    names = list(dict.fromkeys(n for n in to if n))
    sources = "\n".join(f"- {e.label}: {e.url}" for e in list(evidence)[:8] if e.url)
    looked = f"{SOURCES_LEAD}\n{sources}" if sources else ""
    text = (
        f"Hello {', '.join(names)},\n\n"
        f"I am trying to understand {title}. My question: {asking or _quoted(question)}\n\n"
        f"{why}{looked}\n\nThank you."
    )
    return DraftedQuestion(to=names, text=text)


_CROSS_REFERENCE = re.compile(r"\{\{\s*[?!]?\s*([A-Za-z][\w.-]*)\s*\}\}")
"""A kramdown-rfc cross-reference, ``{{early-data-indication}}``: a section by its anchor."""


def cited_words(post: DiscussionPost) -> str:
    """What ``post`` cited, as a reader follows it: a kramdown cross-reference is shown as
    the section it resolved to, named by its anchor (``§4.2.10 (by its anchor
    early-data-indication)``), not as the markup the writer typed; other text in quotes,
    with any cross-reference in it as its bare name (``{{?RFC9847}}``: ``RFC9847``)."""
    text = " ".join(post.cited_text.split())
    found = _CROSS_REFERENCE.fullmatch(text)
    if found is None:
        bare = _CROSS_REFERENCE.sub(lambda m: m.group(1), text)
        return f'"{bare}"'
    where = f"§{post.section_number}" if post.section_number else "the section"
    return f"{where} (by its anchor {found.group(1)})"


QUOTED_AT_MOST = 2000
"""Characters of the asker's question a drafted question quotes: as many as the router reads
(``router.READ_AT_MOST``), so a pasted page does not travel into every copy of the card."""


def _quoted(question: str) -> str:
    question = " ".join(question.split())
    return question if len(question) <= QUOTED_AT_MOST else question[:QUOTED_AT_MOST] + " …"


__all__ = ["SINGULAR", "SOURCES_LEAD", "cited_words", "counted", "drafted_question", "plural"]
