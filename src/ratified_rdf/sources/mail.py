"""Reader for IETF mailing-list archives: mbox exports and Mailman "pipermail" text archives.

Every message becomes a :class:`MailMessage` with plain-text body, UTC date, thread root and the
permalink the IETF mail archive (mailarchive.ietf.org) gives it, computed offline. Real archives
are messy, so the reader never lets one message stop a file: each entry is parsed from its own
bytes, text is decoded with fallbacks and replacement, and an entry that is not mail at all is
reported in :attr:`MailReadResult.problems` and skipped.

Choices a caller should know:

* A message without ``Message-ID`` (or ``Resent-Message-ID``) gets a stable synthetic id,
  ``<sha1 of its raw bytes>@synthetic.invalid``; the ``.invalid`` top-level domain (RFC 2606)
  marks it as ours. Its ``permalink`` is ``None``: the archive gives such messages a random id of
  its own, so their archive URL cannot be known offline. A problem (not a skip) is recorded.
* A second message with an id already read is skipped with a problem, as the archive does.
* A ``Date`` that is missing or unparseable gives ``date=None``, and is recorded as a problem
  (not a skip): a message without a date cannot be placed in time, so a caller that needs one
  (the discussion records) leaves it out, and the problem says why.
* Text that does not decode in its declared charset is decoded as UTF-8, then as Windows-1252
  (a superset of Latin-1 for printable text) with replacement; the fallback is recorded.
* List names are lower-cased: Mailman stores every list name in lower case, and the archive
  hashes that form.
* A file that starts like gzip (bytes ``1f 8b``) but does not decompress is not read at all: it
  raises :class:`MailArchiveError` naming the file, since no entry of it can be trusted.
* A file read whole may still not be a list's archive: random bytes, another kind of file.
  The readers report each entry that is not mail and count them
  (:attr:`MailReadResult.unreadable`); :func:`check_mostly_mail` refuses a file with no message,
  or with fewer messages than :data:`MIN_MAIL_SHARE` of its entries, which the ``mail`` source
  does for every list before anything is built from it.
"""

from __future__ import annotations

import base64
import codecs
import gzip
import hashlib
import os
import re
import tempfile
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email import message_from_bytes
from email.errors import HeaderParseError
from email.header import decode_header
from email.message import Message
from email.policy import default as default_policy
from email.utils import getaddresses, parseaddr, parsedate_to_datetime
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict

from ratified_rdf.sources.document import ParseError

ARCHIVE_BASE = "https://mailarchive.ietf.org/arch/msg"
MIN_MAIL_SHARE: Final = 0.5
"""The least share of an archive file's entries that must be mail for the file to be taken as
a list's archive (:func:`check_mostly_mail`): real archives have a bad entry here and there,
never mostly."""
# RFC 2606 reserves .invalid, so no genuine Message-ID ends in it and ours stay recognisable
SYNTHETIC_DOMAIN = "synthetic.invalid"

_MSGID = re.compile(r"<([^<>]+)>")
_BARE_MSGID = re.compile(r"^[^\s<>@]+@[^\s<>@]+$")
_WS = re.compile(r"\s+")
_FOLD = re.compile(r"\r?\n[ \t]+")
# Pipermail writes addresses as "alice at example.org"; local parts may hold "=" (DMARC).
# A local part runs to the end of its run of characters (possessive: it must be followed by
# " at "), so a match tried from anywhere in a run ends where one from the run's start does.
# _OBFUSCATED only starts where a run does (the lookbehind), so that a long run without " at "
# after it is scanned once, not once from each of its positions; _OBFUSCATED_HERE covers a run
# whose start a previous match ended inside (see _restore_at).
_LOCAL_PART = r"[\w.+=!#$%&'*/?^`{|}~-]"
_OBFUSCATED_HERE = re.compile(rf"({_LOCAL_PART}++) at ([\w-]+(?:\.[\w-]+)+)")
_OBFUSCATED = re.compile(rf"(?<!{_LOCAL_PART})({_LOCAL_PART}++) at ([\w-]+(?:\.[\w-]+)+)")
# Pipermail's separator: "From alice at example.org  Tue Mar  3 10:00:00 2017". The full date
# is required, because pipermail does not escape "From " at the start of body lines.
_PIPERMAIL_FROM = re.compile(
    rb"^From \S+(?: at \S+)?\s+(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) "
    rb"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d\d:\d\d:\d\d \d{4}\s*$",
    re.M,
)
# "Jane Doe via Datatracker", "Jane Doe via pigeon": the DMARC rewrite of a display name.
# Only the separator is an expression; see _via_name for why.
_VIA_SEPARATOR = re.compile(r"\s+via\s+")
_DMARC_ESCAPE = re.compile(r"=([0-9A-Fa-f]{2})")
_ROBOT_LOCALS = frozenset({"noreply", "no-reply", "donotreply", "do-not-reply"})

# Archive links: the token is SHA-1 in URL-safe base64, 27 characters once padding is stripped;
# the archive also answers with the "=" left on, so that is accepted and normalised away.
_NEW_LINK = re.compile(
    r"https?://mailarchive\.ietf\.org/arch/msg/(?P<list>[A-Za-z0-9][A-Za-z0-9_.+-]*)/"
    r"(?P<token>[A-Za-z0-9_-]{27})(?:=|%3[Dd])?(?![A-Za-z0-9_-])/?"
)
_OLD_LINK = re.compile(
    r"https?://(?:www\.)?ietf\.org/mail-archive/web/(?P<list>[A-Za-z0-9][A-Za-z0-9_.+-]*)/"
    r"current/msg(?P<number>\d+)\.html"
)


class MailMessage(BaseModel):
    """One list message as the archive holds it, reduced to text."""

    model_config = ConfigDict(frozen=True)

    message_id: str
    """The Message-ID without angle brackets (or a synthetic ``…@synthetic.invalid`` id)."""
    list_name: str
    subject: str
    sender_name: str | None
    """Display name, with DMARC rewriting ("Jane Doe via Datatracker") undone."""
    sender_address: str | None
    """The sender's real address where the message reveals it, lower-cased."""
    date: datetime | None
    """The ``Date`` header in UTC, or ``None`` when it is missing or unreadable."""
    in_reply_to: str | None
    """The first id in ``In-Reply-To``, without angle brackets."""
    references: tuple[str, ...] = ()
    """Ids from ``References``, oldest first, without angle brackets."""
    body: str
    """Plain text: the text/plain alternative where there is one, otherwise HTML as text."""
    permalink: str | None
    """The mailarchive.ietf.org URL, or ``None`` for a synthetic id (see the module notes)."""
    thread_root: str
    """Id of the thread's root: the earliest ancestor held, else the oldest referenced id."""
    synthetic_id: bool = False


class MailProblem(BaseModel):
    """Something wrong with one archive entry, said as a sentence naming the entry."""

    model_config = ConfigDict(frozen=True)

    index: int
    """0-based position of the entry in the file."""
    message_id: str | None
    reason: str
    skipped: bool = False
    """True when the entry was left out; False when it was read despite the problem."""


class MailReadResult(BaseModel):
    """What one archive file yielded: its messages in file order, and its problems."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[MailMessage, ...] = ()
    problems: tuple[MailProblem, ...] = ()
    unreadable: int = 0
    """How many entries were not mail at all (or could not be read), each a skipped problem."""


class MailArchiveError(ParseError):
    """An archive file that cannot be read at all (gzip bytes that do not decompress), or that
    :func:`check_mostly_mail` refuses as not a list's archive.

    A :class:`ParseError`, so the command line reports it like any other unreadable record.
    Problems with single entries are never raised: they are :attr:`MailReadResult.problems`.
    """


# --------------------------------------------------------------------------- public helpers


def mail_archive_permalink(message_id: str, list_name: str) -> str:
    """The URL mailarchive.ietf.org gives a message, computed offline.

    The token is URL-safe base64 of SHA-1 over the Message-ID (angle brackets removed) followed
    by the list name, with the ``=`` padding stripped:

    >>> mail_archive_permalink("156182196167.12901.11966487185176024571@ietfa.amsl.com", "ietf")
    'https://mailarchive.ietf.org/arch/msg/ietf/lr6RtZ4TiVMZn1fZbykhkXeKhEk/'
    """
    # ietf-tools/mailarchive, mlarchive/archive/mail.py: make_hash(msgid, listname) is
    # sha1(msgid.encode('utf8')); sha.update(listname.encode('utf8')); urlsafe_b64encode, and
    # Message.get_absolute_url strips the "=" padding ("to shorten URL"). The datatracker's
    # ietf/utils/mailarch.py hash_list_message_id does the same, and its tests pin the value
    # in the example above.
    msgid = message_id.strip().strip("<>")
    name = _list_name(list_name)
    digest = hashlib.sha1(msgid.encode("utf-8") + name.encode("utf-8")).digest()
    token = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return f"{ARCHIVE_BASE}/{name}/{token}/"


def archive_links_in(text: str) -> list[str]:
    """Links into the IETF mail archive found in free text, normalised, in order, once each.

    New-style links (``https://mailarchive.ietf.org/arch/msg/<list>/<token>/``, with or without
    the final slash or the ``=`` padding) become that form with ``https`` and the slash; old
    ones (``http://www.ietf.org/mail-archive/web/<list>/current/msg12345.html``) become
    ``https://www.ietf.org/…``. List names are lower-cased; tokens keep their case.
    """
    found: list[tuple[int, str]] = []
    for match in _NEW_LINK.finditer(text):
        url = f"{ARCHIVE_BASE}/{match['list'].lower()}/{match['token']}/"
        found.append((match.start(), url))
    for match in _OLD_LINK.finditer(text):
        url = (
            f"https://www.ietf.org/mail-archive/web/{match['list'].lower()}"
            f"/current/msg{match['number']}.html"
        )
        found.append((match.start(), url))
    links: list[str] = []
    for _, url in sorted(found):
        if url not in links:
            links.append(url)
    return links


def check_mostly_mail(result: MailReadResult, archive: str) -> None:
    """Raise :class:`MailArchiveError` unless ``result`` (what a reader made of one file,
    described by ``archive``: "the mail archive x.mbox for list pigeon") holds a message, and
    holds messages for at least :data:`MIN_MAIL_SHARE` of the file's entries."""
    read = len(result.messages)
    entries = read + result.unreadable
    first = next((p.reason for p in result.problems if p.skipped), None)
    example = f" The first entry refused: {first}" if first else ""
    advice = (
        "check that the file is the list's mbox (or a Mailman text archive, with "
        'format = "mailman"), and fetch it again if it is damaged'
    )
    if entries == 0:
        raise MailArchiveError(
            f"{archive[0].upper()}{archive[1:]} holds no message: the file is empty, or "
            f"nothing in it starts a message. So it is not taken for the list's archive: "
            f"{advice}, or leave the list out of the manifest until it has messages."
        )
    if read == 0:
        raise MailArchiveError(
            f"No entry in {archive} is an e-mail message ({entries:,} read), so it is not "
            f"taken for the list's archive: {advice}.{example}"
        )
    if read < entries * MIN_MAIL_SHARE:
        raise MailArchiveError(
            f"Only {read:,} of the {entries:,} entries in {archive} are e-mail messages, "
            f"fewer than {MIN_MAIL_SHARE:.0%}, so it is not taken for the list's archive: "
            f"{advice}.{example}"
        )


def threads(messages: Iterable[MailMessage]) -> dict[str, list[MailMessage]]:
    """Messages grouped by ``thread_root``, each thread by date (undated last, in given order).

    Threads come in the order of their earliest dated message; threads with no dated message
    come last.
    """
    groups: dict[str, list[tuple[int, MailMessage]]] = {}
    for position, message in enumerate(messages):
        groups.setdefault(message.thread_root, []).append((position, message))
    ordered = {root: [m for _, m in sorted(items, key=_date_key)] for root, items in groups.items()}
    return dict(sorted(ordered.items(), key=lambda item: _first_date(item[1])))


# ------------------------------------------------------------------------------ readers


def read_mbox(source: str | os.PathLike[str] | bytes, list_name: str) -> MailReadResult:
    """Read an mbox file (a path, or its bytes; gzip is undone) as messages of ``list_name``.

    Entries are split by :class:`mailbox.mbox` and each is parsed from its own bytes. Bytes that
    do not start with a ``From`` envelope line are read as a single message. Raises
    :class:`MailArchiveError` for gzip bytes that do not decompress, and ``ValueError`` for a
    list name that is not one.
    """
    name = _list_name(list_name)
    label, data, path = _load(source)
    if not data.lstrip(b"\r\n").startswith(b"From "):
        return _read_entries([data] if data.strip() else [], name, label, deobfuscate=False)
    return _read_entries(_mbox_entries(data, path), name, label, deobfuscate=False)


def read_mailman_text(source: str | os.PathLike[str] | bytes, list_name: str) -> MailReadResult:
    """Read a Mailman pipermail text archive (``2017-March.txt``, or ``.txt.gz``).

    Messages are separated by ``From alice at example.org  Tue Mar  3 10:00:00 2017`` lines, and
    addresses and message ids written ``user at example.org`` are restored. Raises as
    :func:`read_mbox` does.
    """
    name = _list_name(list_name)
    label, data, _ = _load(source)
    starts = [match.start() for match in _PIPERMAIL_FROM.finditer(data)]
    entries: list[bytes] = []
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(data)
        chunk = data[start:end]
        # the separator line is an envelope, not a header
        entries.append(chunk.split(b"\n", 1)[1] if b"\n" in chunk else b"")
    return _read_entries(entries, name, label, deobfuscate=True)


# ------------------------------------------------------------------------------ internals


@dataclass
class _Draft:
    """A message read but not yet threaded."""

    message: MailMessage
    """The message with a provisional ``thread_root`` (its own id)."""
    message_id: str
    date: datetime | None
    ancestors: list[str] = field(default_factory=list)
    """References then In-Reply-To, oldest first, once each."""


def _list_name(list_name: str) -> str:
    name = list_name.strip().lower()
    if not name or "/" in name or any(ch.isspace() for ch in name):
        raise ValueError(f"{list_name!r} is not a mailing-list name (like 'tls' or 'pigeon').")
    return name


def _load(source: str | os.PathLike[str] | bytes) -> tuple[str, bytes, Path | None]:
    """A label for problems, the bytes with any gzip undone, and the path if they are the file's."""
    if isinstance(source, bytes):
        label, data, path = "the archive bytes", source, None
    else:
        path = Path(source)
        label, data = path.name, path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        try:
            data, path = gzip.decompress(data), None
        except (OSError, EOFError, zlib.error) as error:  # BadGzipFile is an OSError
            where = "The archive bytes" if path is None else f"The mail archive {path}"
            raise MailArchiveError(
                f"{where} start like gzip but do not decompress ({error}); the file is "
                "truncated or corrupt: fetch it again, or unpack it yourself."
            ) from None
    return label, data, path


def _mbox_entries(data: bytes, path: Path | None) -> list[bytes]:
    """Raw bytes of each mbox entry, split by the stdlib's mbox reader."""
    if path is not None:
        return _split_mbox(path)
    # mailbox.mbox reads only from a file; hand it one holding exactly these bytes
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "archive.mbox"
        copy.write_bytes(data)
        return _split_mbox(copy)


def _split_mbox(path: Path) -> list[bytes]:
    import mailbox  # with email.generator: a build reads mail, a reader never

    box = mailbox.mbox(path, create=False)
    try:
        return [box.get_bytes(key) for key in box.iterkeys()]
    finally:
        box.close()


def _read_entries(
    entries: list[bytes], list_name: str, label: str, *, deobfuscate: bool
) -> MailReadResult:
    problems: list[MailProblem] = []
    drafts: list[_Draft] = []
    seen: set[str] = set()
    unreadable = 0
    for index, raw in enumerate(entries):
        notes: list[MailProblem] = []
        try:
            draft = _draft(raw, index, list_name, label, deobfuscate, notes)
        except Exception as error:  # one bad entry must not stop the file
            unreadable += 1
            problems.append(
                MailProblem(
                    index=index,
                    message_id=None,
                    reason=f"Entry {index} in {label} could not be read and was skipped "
                    f"({type(error).__name__}: {error}).",
                    skipped=True,
                )
            )
            continue
        if draft is None:
            unreadable += 1
            problems.extend(notes)  # why the entry is not a message
            continue
        if draft.message_id in seen:
            problems.append(
                MailProblem(
                    index=index,
                    message_id=draft.message_id,
                    reason=f"Entry {index} in {label} repeats Message-ID <{draft.message_id}> "
                    "of an earlier entry and was skipped.",
                    skipped=True,
                )
            )
            continue
        problems.extend(notes)
        seen.add(draft.message_id)
        drafts.append(draft)
    roots = _thread_roots(drafts)
    messages = tuple(
        draft.message.model_copy(update={"thread_root": roots[draft.message_id]})
        for draft in drafts
    )
    return MailReadResult(messages=messages, problems=tuple(problems), unreadable=unreadable)


def _draft(
    raw: bytes,
    index: int,
    list_name: str,
    label: str,
    deobfuscate: bool,
    problems: list[MailProblem],
) -> _Draft | None:
    """Read one entry, or record why it is not a message and return None."""
    message = message_from_bytes(raw, policy=default_policy)
    headers = {name.lower() for name in message}
    if not headers & {"from", "message-id", "date", "subject"}:
        what = "has no header fields" if not headers else "has none of From, Date, Subject"
        problems.append(
            MailProblem(
                index=index,
                message_id=None,
                reason=f"Entry {index} in {label} {what} and was skipped: "
                "its bytes are not an e-mail message.",
                skipped=True,
            )
        )
        return None

    def note(reason: str) -> None:
        problems.append(MailProblem(index=index, message_id=message_id, reason=reason))

    message_id = _first_id(_raw_header(message, "Message-ID"), deobfuscate) or _first_id(
        _raw_header(message, "Resent-Message-ID"), deobfuscate
    )
    synthetic = message_id is None
    if message_id is None:
        message_id = f"{hashlib.sha1(raw).hexdigest()}@{SYNTHETIC_DOMAIN}"
        note(
            f"Entry {index} in {label} has no Message-ID; it was read as <{message_id}>, "
            "which has no archive permalink."
        )
    entry = f"Message <{message_id}> (entry {index} in {label})"

    date_text = _raw_header(message, "Date")
    date = _parse_date(date_text)
    if not date_text:
        note(f"{entry} has no Date header; its date is unset.")
    elif date is None:
        note(f"{entry} has a Date header that cannot be read ({date_text!r}); its date is unset.")

    references = _all_ids(_raw_header(message, "References"), deobfuscate)
    reply_ids = _all_ids(_raw_header(message, "In-Reply-To"), deobfuscate)
    in_reply_to = reply_ids[0] if reply_ids else None
    ancestors = [i for i in dict.fromkeys([*references, *reply_ids[:1]]) if i != message_id]

    sender_name, sender_address = _sender(message, list_name, deobfuscate)
    fallbacks: list[str] = []
    body = _body(message, fallbacks)
    if fallbacks:
        note(f"{entry} has text that did not decode as declared ({', '.join(fallbacks)}).")

    record = MailMessage(
        message_id=message_id,
        list_name=list_name,
        subject=_collapse(_decode_words(_raw_header(message, "Subject") or "")),
        sender_name=sender_name,
        sender_address=sender_address,
        date=date,
        in_reply_to=in_reply_to,
        references=tuple(references),
        body=body,
        permalink=None if synthetic else mail_archive_permalink(message_id, list_name),
        thread_root=message_id,
        synthetic_id=synthetic,
    )
    return _Draft(message=record, message_id=message_id, date=date, ancestors=ancestors)


# -- headers


def _raw_header(message: Message, name: str) -> str | None:
    """A header's value as written (unfolded, 8-bit bytes decoded), without RFC 2047 decoding.

    The raw value is used rather than policy.default's parsed header objects: those reject or
    mangle exactly the malformed values archives are full of.
    """
    for key, value in message.raw_items():
        if key.lower() == name.lower():
            return _FOLD.sub(" ", _scrub(str(value))).strip()
    return None


def _scrub(text: str) -> str:
    """Replace the surrogate escapes the parser leaves for undecodable header bytes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _decode(text.encode("utf-8", "surrogateescape"), None, [])
    return text


def _decode_words(text: str) -> str:
    """Decode RFC 2047 encoded words, tolerating unknown charsets and broken encodings."""
    if "=?" not in text:
        return text
    try:
        parts = decode_header(text)
    except (HeaderParseError, ValueError):
        return text
    return "".join(
        part if isinstance(part, str) else _decode(part, charset, []) for part, charset in parts
    )


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _restore_at(text: str) -> str:
    """``alice at example.org`` → ``alice@example.org``, everywhere in ``text``.

    The same replacements as ``re.sub(r"([local]+) at (domain)", r"\\1@\\2", text)``, in linear
    time: after each match, a match right where it ended is tried first (that is where the
    substitution would resume, possibly inside a run), then the next run that starts later.
    """
    pieces: list[str] = []
    position = 0
    while True:
        match = _OBFUSCATED_HERE.match(text, position) if position else None
        match = match or _OBFUSCATED.search(text, position)
        if match is None:
            break
        pieces += [text[position : match.start()], f"{match[1]}@{match[2]}"]
        position = match.end()
    pieces.append(text[position:])
    return "".join(pieces)


def _all_ids(value: str | None, deobfuscate: bool) -> list[str]:
    """Message ids in a header value, in order, once each, without angle brackets."""
    if not value:
        return []
    found = [_collapse(i) for i in _MSGID.findall(value)]
    if not found and _BARE_MSGID.match(value.strip()):
        found = [value.strip()]
    if deobfuscate:
        found = [_restore_at(i) for i in found]
    # ids never contain spaces; a space is a line break inside a long id, as some clients fold
    return list(dict.fromkeys(i.replace(" ", "") for i in found if i))


def _first_id(value: str | None, deobfuscate: bool) -> str | None:
    ids = _all_ids(value, deobfuscate)
    return ids[0] if ids else None


def _parse_date(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        parsed = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None  # since Python 3.10 an unreadable date raises; it never returns None
    # a date without a zone is taken as UTC, as the IETF archive does
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _sender(message: Message, list_name: str, deobfuscate: bool) -> tuple[str | None, str | None]:
    """Display name and real address of the sender, with DMARC rewriting undone.

    Two rewrites are undone. Mailman and the Datatracker replace a DMARC-protected sender with
    ``"Jane Doe via Datatracker" <noreply@ietf.org>`` (or ``via <list>`` and the list address);
    the name loses its suffix and the address comes from ``X-Original-From`` or ``Reply-To``
    when they hold it, else stays unknown. The IETF list server instead rewrites the address to
    ``jane=40example.com@dmarc.ietf.org``, which decodes back to ``jane@example.com``.
    """
    raw_from = _raw_header(message, "From") or ""
    if deobfuscate:
        raw_from = _restore_at(raw_from)
    name, written = parseaddr(raw_from)
    display = _collapse(_decode_words(name)).strip("\"' ") or None
    address = _undo_dmarc_address(written.strip().lower()) or None

    undone = _via_name(display) if display else None
    if undone is not None and (
        _is_rewriter(address, list_name) or _raw_header(message, "X-Original-From")
    ):
        display = undone.strip("\"' ") or None
        address = _original_address(message, list_name, deobfuscate)
    return display, address


def _via_name(display: str) -> str | None:
    """The name before a DMARC rewrite's ``" via <list or robot>"``, or None without one.

    What ``^(?P<name>.+?)\\s+via\\s+(?P<via>[^<>@]+)$`` would capture as ``name``: the shortest
    start before a "via" whose rest holds no ``<``, ``>`` or ``@``. That expression re-scans the
    rest for every "via" and is quadratic on a name of many; here a "via" ending before the last
    of those characters is passed over without a scan. (``display`` is collapsed: one space
    between words, none at the ends.)
    """
    blocked = max(display.rfind("<"), display.rfind(">"), display.rfind("@"))
    position = 1  # the name has at least one character
    while (separator := _VIA_SEPARATOR.search(display, position)) is not None:
        if separator.end() > blocked and separator.end() < len(display):
            return display[: separator.start()]
        position = separator.start() + 1
    return None


def _is_rewriter(address: str | None, list_name: str) -> bool:
    """Whether an address is a list's or a robot's, not a person's."""
    if not address or "@" not in address:
        return True
    local, _, _domain = address.partition("@")
    base = local.split("+", 1)[0]
    return base in _ROBOT_LOCALS or base in (list_name, f"{list_name}-bounces")


def _original_address(message: Message, list_name: str, deobfuscate: bool) -> str | None:
    """The person's address from X-Original-From, else Reply-To, skipping list and robot ones."""
    for header in ("X-Original-From", "Reply-To"):
        value = _raw_header(message, header)
        if not value:
            continue
        if deobfuscate:
            value = _restore_at(value)
        for _, candidate in getaddresses([value]):
            candidate = _undo_dmarc_address(candidate.strip().lower())
            if candidate and not _is_rewriter(candidate, list_name):
                return candidate
    return None


def _undo_dmarc_address(address: str) -> str:
    """``jane=40example.com@dmarc.ietf.org`` → ``jane@example.com``; other addresses unchanged."""
    local, at, domain = address.rpartition("@")
    if not at or not domain.startswith("dmarc.") or "=40" not in local.lower():
        return address
    decoded = _DMARC_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), local)
    return decoded if decoded.count("@") == 1 else address


# -- bodies


def _body(message: Message, fallbacks: list[str]) -> str:
    text = _part_text(message, fallbacks) or ""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def _part_text(part: Message, fallbacks: list[str]) -> str | None:
    """The readable text of a MIME part, or None if it has none (attachments, images)."""
    kind = part.get_content_type()
    if part.is_multipart():
        children = [c for c in part.get_payload() if isinstance(c, Message)]
        if kind == "multipart/alternative":
            # prefer text/plain, as a reader of the list would see it; else the best other
            for child in children:
                if child.get_content_type() == "text/plain":
                    text = _part_text(child, fallbacks)
                    if text and text.strip():
                        return text
            for child in reversed(children):  # alternatives are in increasing richness
                text = _part_text(child, fallbacks)
                if text and text.strip():
                    return text
            return None
        texts = [t for t in (_part_text(c, fallbacks) for c in children) if t and t.strip()]
        return "\n\n".join(texts) if texts else None
    if kind == "message/rfc822":
        inner = part.get_payload()
        inner = inner[0] if isinstance(inner, list) and inner else inner
        return _part_text(inner, fallbacks) if isinstance(inner, Message) else None
    if part.get_content_disposition() == "attachment":
        return None
    if part.get_content_maintype() == "multipart":
        # a multipart without a usable boundary is one undivided body: read it as text
        kind = "text/plain"
    if kind not in ("text/plain", "text/html"):
        return None
    payload = part.get_payload(decode=True)
    if not isinstance(payload, bytes):
        return None
    text = _decode(payload, part.get_content_charset(), fallbacks)
    return html_to_text(text) if kind == "text/html" else text


def _decode(data: bytes, charset: str | None, fallbacks: list[str]) -> str:
    """Decode text in its declared charset, else UTF-8, else Windows-1252 with replacement.

    Windows-1252 is the last resort because mislabelled 8-bit mail is overwhelmingly Latin-1 or
    its Windows superset; bytes it leaves undefined become U+FFFD rather than an error.
    """
    declared = (charset or "").strip().strip("\"'").lower()
    try:
        # undeclared text is US-ASCII (RFC 2045), which UTF-8 decodes too
        codec: str | None = codecs.lookup(declared or "utf-8").name
    except LookupError:
        codec = None
    if codec is not None:
        try:
            return data.decode(codec)
        except UnicodeDecodeError:
            pass
        except LookupError:  # a charset naming a non-text codec ("base64", "zlib")
            codec = None
    for fallback in ("utf-8", "cp1252"):
        if fallback == codec:
            continue
        try:
            text = data.decode(fallback)
        except UnicodeDecodeError:
            continue
        fallbacks.append(_fallback_note(declared, codec, fallback))
        return text
    fallbacks.append(_fallback_note(declared, codec, "windows-1252 with replacement"))
    return data.decode("cp1252", errors="replace")


def _fallback_note(declared: str, codec: str | None, used: str) -> str:
    used = "windows-1252" if used == "cp1252" else used
    if declared == "":
        return f"no charset declared, read as {used}"
    if codec is None:
        return f"unknown charset {declared!r}, read as {used}"
    return f"declared {declared}, read as {used}"


_BLOCK_TAGS = frozenset(
    {"address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "figcaption"}
    | {"footer", "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main"}
    | {"nav", "ol", "p", "pre", "section", "table", "td", "th", "tr", "ul"}
)
_SKIPPED_TAGS = frozenset({"script", "style", "head", "title", "template"})


class _TextExtractor(HTMLParser):
    """Collects the visible text of an HTML document, with line breaks at block elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._skipping: list[str] = []
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self._skipping.append(tag)
        elif tag in _BLOCK_TAGS:
            self.pieces.append("\n")
            self._pre += tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _BLOCK_TAGS:
            self.pieces.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS:
            # pop back to the matching open tag, tolerating unclosed ones inside it
            if tag in self._skipping:
                while self._skipping and self._skipping.pop() != tag:
                    pass
        elif tag in _BLOCK_TAGS:
            self.pieces.append("\n")
            if tag == "pre" and self._pre:
                self._pre -= 1

    def handle_data(self, data: str) -> None:
        if self._skipping:
            return
        self.pieces.append(data if self._pre else _WS.sub(" ", data))


def html_to_text(html: str) -> str:
    """The visible text of an HTML mail body: scripts and styles dropped, blocks on new lines."""
    parser = _TextExtractor()
    try:
        parser.feed(_defuse(html))
        parser.close()
    except AssertionError:
        # _markupbase asserts on declarations it cannot name; _defuse escapes the ones known
        # (``<![ x``), and a body that still trips one is read with the tags cut out.
        return _without_tags(html)
    lines = [line.strip() for line in "".join(parser.pieces).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")


# Where html.parser (via _markupbase) finds the end of a comment, of a <![CDATA[ … ]]> section
# and of an MS Office <![if …]> section, and the keyword it reads after "<![".
_COMMENT_CLOSE = re.compile(r"--\s*>")
_SECTION_CLOSE = re.compile(r"]\s*]\s*>")
_CONDITION_CLOSE = re.compile(r"]\s*>")
_SECTION_NAME = re.compile(r"[a-zA-Z][-_.a-zA-Z0-9]*")
_SECTION_NAMES = frozenset({"temp", "cdata", "ignore", "include", "rcdata"})
_CONDITION_NAMES = frozenset({"if", "else", "endif"})
_TAG = re.compile(r"<[^<>]*>")


def _defuse(html: str) -> str:
    """``html`` with each ``<`` that cannot begin a complete tag, comment or section written as
    ``&lt;``: text, as html.parser would read it after all.

    Those are the ``<`` after the last ``>``, a ``<!--`` with no ``-->`` after it, and a ``<![``
    without its closing ``]]>`` (or ``]>``) or without a keyword html.parser knows. In Python
    3.11 html.parser re-reads the rest of the document from every such ``<`` (an unfinished
    construct is given up one ``<`` at a time), which is quadratic or worse: 30 kB of ``<a ``
    took 26 s. Mail whose markup is complete is unchanged.
    """
    last_gt = html.rfind(">")
    if html.find("<", last_gt + 1) < 0 and "<!" not in html:
        return html  # the common case: nothing unfinished
    comment_close = _last_start(_COMMENT_CLOSE, html)
    section_close = _last_start(_SECTION_CLOSE, html)
    condition_close = _last_start(_CONDITION_CLOSE, html)
    pieces: list[str] = []
    done = 0
    at = html.find("<")
    while at >= 0:
        if at > last_gt:
            complete = False
        elif html.startswith("<!--", at):
            complete = comment_close >= at + 4
        elif html.startswith("<![", at):
            name = _SECTION_NAME.match(html, at + 3)
            keyword = name.group().lower() if name else ""
            if keyword in _SECTION_NAMES:
                complete = section_close >= at + 3
            else:
                complete = keyword in _CONDITION_NAMES and condition_close >= at + 3
        else:
            complete = True
        if not complete:
            pieces += [html[done:at], "&lt;"]
            done = at + 1
        at = html.find("<", at + 1)
    pieces.append(html[done:])
    return "".join(pieces)


def _last_start(pattern: re.Pattern[str], text: str) -> int:
    """Where the last match of ``pattern`` in ``text`` starts, or -1."""
    last = -1
    for match in pattern.finditer(text):
        last = match.start()
    return last


def _without_tags(html: str) -> str:
    """A last resort for HTML html.parser refuses: the text with anything tag-like cut out."""
    text = unescape(_TAG.sub(" ", html))
    return "\n".join(_collapse(line) for line in text.splitlines() if line.strip())


# -- threads


def _thread_roots(drafts: list[_Draft]) -> dict[str, str]:
    """Each draft's thread root.

    A message's step up is its oldest ancestor held in the file (References order, then
    In-Reply-To); climbing ends at a message with no held ancestor, whose root is the oldest id
    it references (a parent not in the file), or itself when it references nothing. Climbing
    into a cycle of broken references ends at the cycle's earliest message.
    """
    by_id = {draft.message_id: draft for draft in drafts}
    step: dict[str, str | None] = {}
    external: dict[str, str] = {}
    for draft in drafts:
        held = [a for a in draft.ancestors if a in by_id]
        step[draft.message_id] = held[0] if held else None
        if not held and draft.ancestors:
            external[draft.message_id] = draft.ancestors[0]

    roots: dict[str, str] = {}
    for draft in drafts:
        path: list[str] = []
        on_path: set[str] = set()
        current: str | None = draft.message_id
        root: str | None = None
        while current is not None:
            if current in roots:
                root = roots[current]
                break
            if current in on_path:
                cycle = path[path.index(current) :]
                root = min(cycle, key=lambda i: (*_date_key((0, by_id[i])), i))
                break
            path.append(current)
            on_path.add(current)
            nxt = step[current]
            if nxt is None:
                root = external.get(current, current)
                break
            current = nxt
        assert root is not None
        for member in path:
            roots[member] = root
    return roots


def _date_key(item: tuple[int, MailMessage | _Draft]) -> tuple[bool, datetime, int]:
    position, message = item
    date = message.date
    return (date is None, date or datetime.min.replace(tzinfo=UTC), position)


def _first_date(messages: list[MailMessage]) -> tuple[bool, datetime]:
    dated = [m.date for m in messages if m.date is not None]
    return (not dated, min(dated) if dated else datetime.max.replace(tzinfo=UTC))
