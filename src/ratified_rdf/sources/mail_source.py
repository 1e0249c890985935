"""The ``mail`` source: the messages of the mailing lists the manifest names (its
``[[discussion.mail]]`` entries), each list an mbox or Mailman text archive beside it.

A message without a date cannot be placed in a revision's window, and one without a
permalink cannot be linked: both are reported as problems, not ingested. A file that is not a
list's archive (no message, or mostly entries that are not mail) is refused before anything is
built from it (:func:`~ratified_rdf.sources.mail.check_mostly_mail`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ratified_rdf._errors import SourceError
from ratified_rdf.graph.discussion_mapping import MapContext, mail_batches
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.records.discussion import CitationRecord, CitationResolver, mail_post_key
from ratified_rdf.records.manifest import MailEntry
from ratified_rdf.sources.base import ReadContext, Source, register_source
from ratified_rdf.sources.mail import (
    MailMessage,
    MailProblem,
    MailReadResult,
    check_mostly_mail,
    read_mailman_text,
    read_mbox,
)


@dataclass(frozen=True)
class MailRead:
    """What the ``mail`` source read: the messages held, and those it could not use."""

    messages: tuple[MailMessage, ...] = ()
    """Messages with a date and a permalink, list by list in archive order."""
    problems: tuple[MailProblem, ...] = ()
    """What the readers reported, then the messages left out for want of a date or link."""


@register_source
class MailSource(Source[MailRead]):
    """The mailing lists' archives."""

    name = "mail"

    def read(self, context: ReadContext) -> MailRead:
        """Every list's archive, read leniently: bad messages become problems, not failures."""
        discussion = context.manifest.discussion
        entries = discussion.mail if discussion is not None else ()
        results = [_read_list(entry, context) for entry in entries]
        problems = [p for result in results for p in result.problems]
        messages: list[MailMessage] = []
        for result in results:
            for message in result.messages:
                if message.date is None or message.permalink is None:
                    problems.append(
                        MailProblem(
                            index=-1,
                            message_id=message.message_id,
                            reason=f"message <{message.message_id}> has no "
                            + ("date" if message.date is None else "permalink")
                            + ", so it cannot be placed or linked; it was not ingested.",
                            skipped=True,
                        )
                    )
                    continue
                messages.append(message)
        return MailRead(tuple(messages), tuple(problems))

    def citations(self, read: MailRead, resolver: CitationResolver) -> list[CitationRecord]:
        """Every message's citations, in its subject or body; a tie between the chains open
        when it was written is broken by the drafts its thread's first message names."""
        by_id = {m.message_id: m for m in read.messages}
        citations: list[CitationRecord] = []
        for message in read.messages:
            assert message.date is not None  # held messages are dated (see read)
            root = by_id.get(message.thread_root)
            opening = root if root is not None and root is not message else None
            citations += resolver.cite(
                mail_post_key(message.message_id),
                message.date,
                f"{message.subject}\n{message.body}",
                f"{opening.subject}\n{opening.body}" if opening is not None else None,
            )
        return citations

    def problems(self, read: MailRead) -> tuple[str, ...]:
        """Each problem's sentence."""
        return tuple(p.reason for p in read.problems)

    def batches(self, read: MailRead, context: MapContext) -> Iterator[Batch]:
        """One batch per list: its threads and messages (graph ``mail``)."""
        return mail_batches(read.messages, context)


def _read_list(entry: MailEntry, context: ReadContext) -> MailReadResult:
    """One list's archive file."""
    path = context.path(entry.file)
    if not path.is_file():
        raise SourceError(
            f"The mail archive {path} for list {entry.list} does not exist; fix 'file' in the "
            "manifest's [[discussion.mail]] entry."
        )
    reader = read_mbox if entry.format == "mbox" else read_mailman_text
    result = reader(path, entry.list)
    check_mostly_mail(result, f"the mail archive {path} for list {entry.list}")
    return result
