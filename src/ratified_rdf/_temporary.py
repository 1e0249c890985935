"""Temporary folders named for the process that made them, and clearing those left by
processes that are gone.

A build killed mid-run (SIGKILL, out of memory) cannot remove what it keeps under ``TMPDIR``
(a run's staging store, the gate's spool of every batch), and at scale that is gigabytes. So
each such folder is named ``<prefix><pid>-<random>``, and the next build on the machine removes
those whose process no longer runs.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ratified_rdf._errors import StoreError


def make_folder(prefix: str) -> Path:
    """A new private folder (mode 0700) under ``TMPDIR``, named for this process, after
    removing the folders of ``prefix`` that processes now gone left."""
    clear_abandoned(prefix)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))


def clear_abandoned(prefix: str) -> None:
    """Remove the folders under ``TMPDIR`` named ``<prefix><pid>-…`` whose process is gone."""
    for folder in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = folder.name.removeprefix(prefix).split("-", 1)[0]
        if pid.isdigit() and not running(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def running(pid: int) -> bool:
    """Whether a process with this id exists (on this machine's process table)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def no_room(error: OSError, purpose: str) -> StoreError:
    """The error for a build that could not keep what it keeps under ``TMPDIR`` (``error``),
    for ``purpose`` ("for the SHACL gate"): what happened and what to do."""
    return StoreError(
        f"The build could not keep the run's batches in the temporary folder "
        f"({tempfile.gettempdir()}) {purpose}: {error.strerror or error}. "
        "Nothing of this run was written. Free space there, or set TMPDIR to a folder "
        "with room (about 100 bytes a triple), and build again."
    )
