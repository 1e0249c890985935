"""Durable line files: append a line so it survives a crash, read lines back and spot a torn one.

A line is written with one ``write`` of its bytes and the newline, then fsynced before the
append returns, so a crash can leave at most one last line without its newline: the torn
line that readers report instead of accepting.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ratified_rdf._errors import AuditError


@dataclass(frozen=True)
class Lines:
    """The complete lines of a file (without their newline) and a torn last line, if any."""

    complete: list[bytes]
    torn: bytes | None


def read_lines(path: Path, offset: int = 0) -> Lines:
    """The lines of ``path`` from byte ``offset`` on (a line boundary); a missing file has
    none."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return Lines([], None)
    *complete, last = data.split(b"\n")
    return Lines(complete, last or None)


class PresenceLock:
    """Says which processes have a log open: each holds a shared ``flock`` on one file for as
    long as it has the log open. :meth:`alone` tells the first opener, who alone may judge
    records nobody signed to be left over from a process that stopped."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self.alone = True
        except BlockingIOError:
            self.alone = False
        # Shared from now on, so the next opener knows this process is here.
        fcntl.flock(self._fd, fcntl.LOCK_SH)

    def close(self) -> None:
        """Leave: the lock goes with the file."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def set_aside_torn_line(path: Path, stamp: str) -> Path | None:
    """Move a torn last line (what a crash mid-append leaves) out of ``path`` into
    ``<path>.torn-<stamp>``, and return that file; nothing is deleted, and the file is left
    ending at its last complete line. ``None`` when there is no torn line."""
    lines = read_lines(path)
    if lines.torn is None:
        return None
    aside = path.with_name(f"{path.name}.torn-{stamp}")
    write_private_file(aside, lines.torn)
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size - len(lines.torn))
        handle.flush()
        os.fsync(handle.fileno())
    return aside


def fsync_directory(path: Path) -> None:
    """Make the creation of entries in directory ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_private_file(path: Path, data: bytes) -> None:
    """Create ``path`` with mode 0600 (owner only) and write ``data``; never overwrite."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        # The umask can only take bits away, but be explicit: a key must never be group-readable.
        os.fchmod(fd, 0o600)
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_directory(path.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


LOCK_WAIT_S = 10.0
"""How long to wait for another process's append (or signature) before reporting it: they
hold the lock only while they write one line."""


class LockTimeout(AuditError, OSError):
    """Another process held a log file's lock for longer than :data:`LOCK_WAIT_S`."""


class AppendOnlyFile:
    """A file open for appending whole lines durably; several processes may append to it.

    Appends are serialised between processes by :meth:`held`, an exclusive ``flock`` taken
    only for the time of one append (or one tree head), so every line is written whole by
    one process at a time and a reader holding the lock never sees a line half-written: a
    torn last line seen under the lock was left by a process that died mid-write.
    """

    def __init__(self, path: Path) -> None:
        existed = path.exists()
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        if not existed:
            fsync_directory(path.parent)

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """Hold the file's lock meanwhile (waiting up to :data:`LOCK_WAIT_S` for another
        process's append to finish)."""
        if self._fd < 0:
            raise OSError(errno.EBADF, f"{self.path} is closed")
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockTimeout(
                        f"another process has held {self.path} for over {LOCK_WAIT_S:g} s"
                    ) from None
                time.sleep(0.005)
        try:
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def size(self) -> int:
        """The file's length now, as every process has written it."""
        return os.fstat(self._fd).st_size if self._fd >= 0 else 0

    def append_line(self, line: bytes, *, durable: bool = True) -> None:
        """Append ``line`` and a newline, and (``durable``) return only once both are on disk.

        A line appended with ``durable=False`` reaches the disk with the next durable append
        (or :meth:`sync`): the same file is fsynced, so everything before it goes too. If the
        write fails part-way the file is cut back to its old length, so a failed append leaves
        no torn line behind while the process lives.
        """
        size = os.fstat(self._fd).st_size
        try:
            _write_all(self._fd, line + b"\n")
            if durable:
                os.fsync(self._fd)
        except OSError:
            # If even the cut fails the torn line stays, and readers report it.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, size)
            raise

    def sync(self) -> None:
        """Put every line appended so far on disk."""
        if self._fd >= 0:
            os.fsync(self._fd)

    def close(self) -> None:
        """Put what was appended on disk and release the file; closing twice is harmless."""
        if self._fd >= 0:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1
