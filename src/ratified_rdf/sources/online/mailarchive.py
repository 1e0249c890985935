"""A mailing list's messages, exported as mbox from the IETF mail archive.

The archive (ietf-tools/mailarchive, served at ``https://mailarchive.ietf.org/arch/``) exports
the result of any search through ``/arch/export/mbox/`` with the search's own parameters; for
one list over a date range that is::

    https://mailarchive.ietf.org/arch/export/mbox/?email_list=<list>&start_date=YYYY-MM-DD
        &end_date=YYYY-MM-DD

The answer is not a bare mbox but a gzipped tar (``application/x-tar-gz``) holding one mbox file
per list and month, ``<basename>/<list>/<YYYY-MM>.mbox``; :func:`extract_mboxes` unpacks it.
The archive compares dates with ``date >= start_date`` and ``date <= end_date`` at midnight, so
``end_date``'s own day is in practice left out: ask for the day after the last one wanted.

When a search matches no message, or more than it lets an anonymous user export
(``ANONYMOUS_EXPORT_LIMIT``, 100 in the archive's shipped settings), the archive does not fail:
it redirects to the search page with a notice. Redirects are therefore not followed here, and a
3xx answer is reported as a refusal that asks for a shorter range.
"""

from __future__ import annotations

import os
import tarfile
import tempfile
from datetime import date
from pathlib import Path

from ratified_rdf.sources.online.http import Fetched, FetchError, PoliteClient, full_url

MAILARCHIVE_URL = "https://mailarchive.ietf.org"
_EXPORT_PATH = "/arch/export/mbox/"
_GZIP_MAGIC = b"\x1f\x8b"


def export_url(list_name: str, start: date, end: date, *, base_url: str = MAILARCHIVE_URL) -> str:
    """The export URL for ``list_name``'s messages from ``start`` up to (not including) ``end``."""
    params = {
        "email_list": list_name,
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
    }
    return full_url(base_url.rstrip("/") + _EXPORT_PATH, params)


def download_mbox(
    client: PoliteClient,
    list_name: str,
    start: date,
    end: date,
    destination: str | Path,
    *,
    base_url: str = MAILARCHIVE_URL,
) -> Path:
    """Save ``list_name``'s export (a ``.tar.gz`` of mbox files) to ``destination``.

    ``destination`` is a file path, or a folder to hold ``<list>-<start>-<end>.tar.gz``. The
    bytes are written exactly as received, to a temporary file renamed into place, so a failed
    download never leaves a truncated archive under the final name. Raises
    :class:`FetchError` when the archive refuses (see the module docstring) or answers with
    something that is not a gzip file.
    """
    if end <= start:
        raise ValueError(f"the export range {start} to {end} is empty; end must be after start")
    url = export_url(list_name, start, end, base_url=base_url)
    try:
        fetched = client.get(
            url,
            follow_redirects=False,
            not_found_advice=f"Check the list name: the archive may know no list {list_name!r}.",
        )
    except FetchError as error:
        if error.status is not None and 300 <= error.status < 400:
            raise FetchError(
                url,
                error.reason,
                "The archive refused the export: it sends anonymous users back to the search "
                "page when a search matches no message, or more than it lets them export "
                "(100 by default). Ask for a shorter date range.",
                error.status,
            ) from None
        raise
    _check_archive(client, fetched)

    target = Path(destination)
    if target.is_dir():
        target = target / f"{list_name}-{start.isoformat()}-{end.isoformat()}.tar.gz"
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(fetched.content)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target


def extract_mboxes(archive: str | Path, folder: str | Path) -> list[Path]:
    """Unpack the ``.mbox`` files of an export into ``folder``; return their paths, sorted.

    Uses tarfile's ``data`` filter, which refuses absolute paths, ``..`` and links out of the
    folder: the archive is input from the network.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, mode="r:gz") as tar:
        members = [m for m in tar.getmembers() if m.isfile() and m.name.endswith(".mbox")]
        tar.extractall(folder, members=members, filter="data")
    return sorted(folder / m.name for m in members)


def _check_archive(client: PoliteClient, fetched: Fetched) -> None:
    if fetched.content.startswith(_GZIP_MAGIC):
        return
    # A cached non-archive would fail the same way on every later build: drop it.
    client.forget(fetched.url)
    raise FetchError(
        fetched.url,
        f"the answer is not a gzip archive (Content-Type {fetched.content_type or 'unknown'})",
        "The archive may have changed its export format, or be showing a notice page; open "
        "the URL in a browser to see what it says.",
        fetched.status,
    )
