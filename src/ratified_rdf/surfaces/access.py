"""Who a request reads as: bearer tokens mapped to readers (tenant, clearance, redaction).

The access file is TOML, one ``[[reader]]`` per token; only the token's SHA-256 is stored, so
the file can sit beside the store without handing out the tokens themselves::

    [[reader]]
    name = "alice"                       # the actor the audit log records
    token_sha256 = "9f86d0…"             # sha256 of the token, hex
    tenant = "default"
    clearance = "internal"
    redaction = "silent"                 # optional; or "acknowledge"
    expires = 2027-01-01T00:00:00Z       # optional; a TOML date-time with Z or an offset

A request without a token reads as the anonymous reader: the served brain's own (public
clearance unless the server was started otherwise). A token that is not listed, or whose
``expires`` has passed, is refused.

A server reads the file through :class:`AccessFile`: it looks at the file's identity (inode,
size, modification time) on every request and reads it again when that changed, or after
SIGHUP, so a token removed from the file is refused from the next request on. A file that
cannot be read then (bad TOML, a wrong field, gone) leaves the last good list in force and is
logged, naming the file and the problem, until it is fixed.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from types import FrameType
from typing import Annotated, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from ratified_rdf.records.manifest import ManifestError, read_toml_record
from ratified_rdf.trust import Clearance, TenantId


class ReaderGrant(BaseModel):
    """One token's reader."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[\w .@-]+$")]
    token_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    tenant: TenantId = TenantId.default()
    clearance: Clearance = Clearance.PUBLIC
    redaction: Literal["silent", "acknowledge"] = "silent"
    expires: AwareDatetime | None = None
    """The moment the token stops being accepted; never, when not given."""

    @field_validator("expires", mode="before")
    @classmethod
    def _zoned(cls, value: object) -> object:
        # A date alone, or a date-time without a zone, is a different moment on each clock.
        if isinstance(value, date) and getattr(value, "tzinfo", None) is None:
            raise ValueError(
                "give a date-time with a time zone, such as 2027-01-01T00:00:00Z (UTC) or "
                "2027-01-01T00:00:00+01:00"
            )
        return value

    def expired(self, now: datetime) -> bool:
        """Whether the token is no longer accepted at ``now``."""
        return self.expires is not None and now >= self.expires


class AccessList(BaseModel):
    """Every token the server accepts."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)

    reader: tuple[ReaderGrant, ...] = ()

    def grant_for(self, token: str, now: datetime | None = None) -> ReaderGrant | None:
        """The reader ``token`` stands for, compared in constant time; None if unknown, or
        expired at ``now`` (default: the current time)."""
        digest = hashlib.sha256(token.encode()).hexdigest()
        found = None
        for grant in self.reader:
            if hmac.compare_digest(grant.token_sha256, digest):
                found = grant
        if found is not None and found.expired(now or datetime.now(UTC)):
            return None
        return found


def load_access(path: Path) -> AccessList:
    """Read an access file (see the module docstring); errors name the file and the field."""
    return read_toml_record(path, AccessList, "an access list")


def token_digest(token: str) -> str:
    """What to write as ``token_sha256`` for ``token``."""
    return hashlib.sha256(token.encode()).hexdigest()


logger = logging.getLogger("ratified_rdf.access")

_Identity = tuple[int, int, int, int, int]


def _identity(path: Path) -> _Identity | None:
    """What changes when the file is edited or replaced; None when it cannot be looked at."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


class AccessFile:
    """An access file as a server reads it: :meth:`current` is the list in force, read again
    whenever the file changed (one ``stat`` a call otherwise) or :meth:`reload_soon` was
    called (on SIGHUP: see :func:`reload_on_sighup`). A file that cannot be read leaves the
    last good list in force; :attr:`problem` says why, and the log says it once per change.

    ``now`` is the clock expiry is judged by (the current time in UTC by default).
    """

    def __init__(self, path: Path, *, now: Callable[[], datetime] | None = None) -> None:
        """Read ``path`` (its errors, as for :func:`load_access`, are raised: a server
        refuses to start on a bad file)."""
        self.path = path
        self._now = now or (lambda: datetime.now(UTC))
        self._lock = threading.Lock()
        self._seen = _identity(path)
        self._list = load_access(path)
        self._reload = False
        self.problem: str | None = None
        """Why the file's latest version is not in force, when it is not."""

    def reload_soon(self) -> None:
        """Read the file again at the next :meth:`current`, changed or not. Safe to call from
        a signal handler: it only sets a flag."""
        self._reload = True

    def current(self) -> AccessList:
        """The list in force: the file's latest version, or the last one that could be read."""
        seen = _identity(self.path)
        if seen == self._seen and not self._reload:
            return self._list
        with self._lock:
            if seen != self._seen or self._reload:
                self._reload = False
                self._seen = seen
                self._read()
            return self._list

    def grant_for(self, token: str) -> ReaderGrant | None:
        """The reader ``token`` stands for in the list in force; None if it is not listed
        (any more) or has expired."""
        return self.current().grant_for(token, self._now())

    def _read(self) -> None:
        try:
            self._list = load_access(self.path)
        except ManifestError as error:
            problem = str(error)
        except OSError as error:
            problem = f"{self.path} cannot be read ({error.strerror or error})."
        else:
            if self.problem is not None:
                logger.warning(
                    "The access file %s reads again; its tokens are in force.", self.path
                )
            self.problem = None
            return
        self.problem = problem
        logger.error(
            "The access file %s was changed but cannot be used, so the tokens read from it "
            "before stay in force until it is fixed: %s",
            self.path,
            problem,
        )


@contextlib.contextmanager
def reload_on_sighup(access: AccessFile | None) -> Iterator[None]:
    """While inside, SIGHUP makes ``access`` read its file again at the next request. Without
    an access file, off the main thread, or where there is no SIGHUP, it does nothing."""
    hangup = getattr(signal, "SIGHUP", None)
    main = threading.current_thread() is threading.main_thread()
    if access is None or hangup is None or not main:
        yield
        return

    def reload(_signum: int, _frame: FrameType | None) -> None:
        access.reload_soon()

    previous = signal.signal(hangup, reload)
    try:
        yield
    finally:
        signal.signal(hangup, previous)
