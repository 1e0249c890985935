"""RFC texts from the RFC Editor and draft revisions from the IETF archive, kept as records.

``ratified fetch rfc 9147`` and ``ratified fetch draft draft-ietf-tls-dtls13-07`` fill what a
repository lacks: the RFC's published text, or a revision no tag or file holds. Each is fetched
once through the polite client (so it is cached), checked by the reader the format registry
registers for its suffix (a text that reader cannot read is refused, never kept), and written
to ``<records>/texts/`` beside the manifest, under the name the IETF gives it
(``rfc9147.xml``, ``draft-ietf-tls-dtls13-07.txt``), so the revision sources' per-revision
file naming recognises it. Nothing here runs at read time: only these commands fetch.

The RFC Editor serves ``https://www.rfc-editor.org/rfc/rfcNNNN.xml`` (xml2rfc v3, for RFCs
from 8650 on) and ``.txt`` for every RFC; the IETF archive serves
``https://www.ietf.org/archive/id/<draft>-NN.xml`` (for drafts submitted as XML) and ``.txt``.
The XML is asked for first (its section tree is explicit), then the text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ratified_rdf.sources.document import ParseError
from ratified_rdf.sources.formats import parse_document
from ratified_rdf.sources.online.http import FetchError, PoliteClient, _write_atomically

__all__ = [
    "ARCHIVE_URL",
    "RFC_EDITOR_URL",
    "TEXTS_FOLDER",
    "KeptText",
    "fetch_draft_revision",
    "fetch_rfc_text",
    "record_rfc_text",
]

RFC_EDITOR_URL = "https://www.rfc-editor.org/rfc/"
ARCHIVE_URL = "https://www.ietf.org/archive/id/"
TEXTS_FOLDER = "texts"
"""The folder, inside the records folder, where fetched texts are kept."""
_SUFFIXES = (".xml", ".txt")
_REVISION = re.compile(r"^(draft-[a-z0-9]+(?:-[a-z0-9]+)+)-(\d{2})$")


@dataclass(frozen=True)
class KeptText:
    """A text fetched and kept as a record."""

    path: Path
    """Where it is kept, inside ``<records>/texts/``."""
    url: str
    """Where it was fetched from."""
    sections: int
    """How many sections its reader found in it."""
    from_cache: bool
    """Whether the answer came from the HTTP cache rather than the network."""


def fetch_rfc_text(
    client: PoliteClient, number: int, records: Path, *, base_url: str = RFC_EDITOR_URL
) -> KeptText:
    """Fetch RFC ``number``'s published text and keep it as ``<records>/texts/rfcNNNN.*``.

    Raises :class:`FetchError` when the RFC Editor has no such RFC in either format (a
    sentence saying to check the number) or answers with a text its reader cannot read."""
    if number <= 0:
        raise ValueError(f"An RFC number is a whole number above zero, not {number}.")
    return _fetch(
        client,
        f"rfc{number}",
        records,
        base_url,
        published=True,
        missing=f"The RFC Editor has no RFC {number} as XML or text: check the number "
        "(https://www.rfc-editor.org/search/rfc_search.php lists them).",
    )


def fetch_draft_revision(
    client: PoliteClient, revision: str, records: Path, *, base_url: str = ARCHIVE_URL
) -> KeptText:
    """Fetch one revision of a draft (``draft-ietf-tls-dtls13-07``) from the IETF archive and
    keep it as ``<records>/texts/<draft>-NN.*``.

    Raises ``ValueError`` for a name that is not a numbered revision, and
    :class:`FetchError` when the archive holds neither format of it or its reader cannot
    read what came back."""
    name = revision.strip().lower()
    if not _REVISION.match(name):
        raise ValueError(
            f"{revision!r} is not a numbered revision: give the draft's name and its two-digit "
            "revision, such as draft-ietf-tls-dtls13-07."
        )
    draft = name[: -len("-NN")]
    return _fetch(
        client,
        name,
        records,
        base_url,
        published=False,
        missing=f"The IETF archive holds no revision {name} as XML or text: check the draft's "
        f"name and revision (https://datatracker.ietf.org/doc/{draft}/ lists its revisions).",
    )


def _fetch(
    client: PoliteClient, stem: str, records: Path, base_url: str, *, published: bool, missing: str
) -> KeptText:
    base = base_url if base_url.endswith("/") else base_url + "/"
    last: FetchError | None = None
    for suffix in _SUFFIXES:
        url = f"{base}{stem}{suffix}"
        try:
            fetched = client.get(url, not_found_advice=missing)
        except FetchError as error:
            # Offline, the cache may hold the other format: a 404 is not cached.
            if error.status != 404 and not client.offline:
                raise
            last = last or error
            continue
        name = f"{stem}{suffix}"
        try:
            document = parse_document(name, fetched.text, published=published)
        except ParseError as error:
            client.forget(fetched.url)  # a later try must not read the same bad answer
            raise FetchError(
                fetched.url,
                f"its reader cannot read what came back ({error})",
                "The service may be showing a notice page; open the address in a browser.",
                fetched.status,
            ) from None
        if not document.sections:
            client.forget(fetched.url)
            raise FetchError(
                fetched.url,
                "its reader found no section in what came back",
                "The service may be showing a notice page; open the address in a browser.",
                fetched.status,
            )
        target = records / TEXTS_FOLDER / name
        _write(target, fetched.content)
        return KeptText(target, fetched.url, len(document.sections), fetched.from_cache)
    assert last is not None
    raise last


def record_rfc_text(manifest: Path, number: int, text: str) -> bool:
    """Write ``text = "<text>"`` into the ``[[rfc]]`` entry numbered ``number`` of the
    manifest file ``manifest``, replacing a ``text`` line it has; every other line, comments
    included, is kept as it is. False when the manifest has no such entry (nothing is
    written: an entry needs the RFC's title and publication, which the caller must give)."""
    lines = manifest.read_text(encoding="utf-8").splitlines(keepends=True)
    start = None
    for index, line in enumerate(lines):
        if line.strip() == "[[rfc]]":
            start = index
        elif start is not None and re.fullmatch(rf"number\s*=\s*{number}\s*", line.strip()):
            break
    else:
        return False
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
        len(lines),
    )
    entry = f'text = "{text}"\n'
    for index in range(start + 1, end):
        if re.match(r"\s*text\s*=", lines[index]):
            lines[index] = entry
            break
    else:
        # After the entry's last key, before the blank lines that end it.
        last = max(i for i in range(start, end) if lines[i].strip())
        lines.insert(last + 1, entry)
    _write(manifest, "".join(lines).encode("utf-8"))
    return True


def _write(target: Path, content: bytes) -> None:
    """Write ``content`` to a temporary file renamed into place: a failed write never
    leaves half a text under the record's name."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _write_atomically(target, content)
