"""What a hostile input may do to a reader, and how to tell: shared by the fuzz tests and by the
long-form harness ``benchmarks/fuzz.py``.

Every call is observed the same way (:func:`observe`): under a bound on the processor time it
uses, enforced with ``SIGPROF`` (the regular-expression engine and Python code both notice it,
so a catastrophic backtrack becomes an exception instead of a hang; a machine so busy that the
call waits for a processor does not count against it), with a wall-clock backstop for a wait
that computes nothing, and classified as

* ``parsed``: a result that keeps the reader's invariants (section tree, numbering, no
  expansion, problems naming their entry …);
* ``documented error``: an exception the reader documents (``ParseError``, ``ManifestError`` …)
  whose message is a sentence, naming the record where the reader knows it;
* ``BUG``: anything else: another exception escaping (``KeyError``, ``RecursionError``,
  ``UnicodeError`` …), a broken invariant, an unclear message, or no answer within the bound.

:data:`READERS` wraps each reader as a function of bytes; :data:`PATHOLOGICAL` holds inputs
built to trip super-linear code (regular expressions that backtrack, loops within loops), each
stretched to about 100 kB; :data:`KNOWN_BUGS` names the bugs these tests found, so a test that
reproduces one is marked ``xfail(strict=True)`` with its description and stays visible until
the code is fixed.
"""

from __future__ import annotations

import atexit
import gc
import multiprocessing
import os
import re
import shutil
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from enum import StrEnum
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Any, Final

from ratified_rdf.records.identity import Overrides, PeopleError, load_overrides
from ratified_rdf.records.manifest import Manifest, ManifestError, load_manifest
from ratified_rdf.sources.document import ParsedDocument, ParseError
from ratified_rdf.sources.github_archive import GitHubArchive, read_archive
from ratified_rdf.sources.kramdown import parse_kramdown
from ratified_rdf.sources.mail import (
    SYNTHETIC_DOMAIN,
    MailArchiveError,
    MailReadResult,
    read_mailman_text,
    read_mbox,
)
from ratified_rdf.sources.rfc_text import parse_rfc_text
from ratified_rdf.sources.xml2rfc import parse_xml2rfc

REPO: Final = Path(__file__).resolve().parents[2]
FIXTURES: Final = REPO / "tests" / "fixtures"

BOUND_S: Final = 2.0
"""Seconds one call may take on an input of up to 100 kB. Real files are far quicker: the
277 kB TLS 1.3 draft parses in 0.03 s and the 341 kB text of RFC 9846 in 0.4 s."""

STRETCH: Final = 100_000
"""Size in bytes (or characters) the pathological inputs are stretched to."""

LIST_NAME: Final = "pigeon"
"""The mailing-list name the mail readers are given (a valid one: the input is the bytes)."""


SECRET: Final = "RATIFIED-FUZZ-SECRET-5f1c0e"
"""The content of a file that hostile XML points external entities and DTDs at
(:func:`secret_url`): it must never appear in anything a reader returns or raises."""

_SECRET_FOLDER: list[Path] = []


def secret_url() -> str:
    """The ``file:`` URL of a file holding :data:`SECRET` (one per process, removed at exit)."""
    if not _SECRET_FOLDER:
        folder = Path(tempfile.mkdtemp(prefix="ratified-fuzz-secret-"))
        atexit.register(_remove_if_mine, folder, os.getpid())
        (folder / "secret.txt").write_text(SECRET, encoding="utf-8")
        _SECRET_FOLDER.append(folder)
    return (_SECRET_FOLDER[0] / "secret.txt").as_uri()


def bound_for(size: int) -> float:
    """The time bound for an input of ``size`` bytes: :data:`BOUND_S`, plus 10 s per MB."""
    return BOUND_S + 10.0 * size / 1_000_000


# ---------------------------------------------------------------------------- time bound


class TimeBoundExceeded(BaseException):
    """Raised inside a call that ran past its bound.

    A ``BaseException``, so that a reader's own ``except Exception`` (the mail reader keeps one
    bad entry from stopping a file) cannot swallow it and carry on.
    """


WALL_BACKSTOP_S: Final = 120.0
"""The least wall-clock time a bounded block may take (see :func:`wall_backstop`)."""


def wall_backstop(seconds: float) -> float:
    """When a block bounded by ``seconds`` of processor time is stopped all the same: a wait
    that computes nothing (a lock never released, a read that never returns) never reaches a
    processor-time bound. Far above what the busiest machine stretches the bound's work to."""
    return max(WALL_BACKSTOP_S, 30.0 * seconds)


@contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Interrupt the block with :class:`TimeBoundExceeded` once the process has used
    ``seconds`` of processor time in it, or after :func:`wall_backstop` of wall time.

    Processor time (``ITIMER_PROF``: user and system, every thread of the process), not wall
    time: a hang or a super-linear loop computes, and is stopped; on a machine so busy that
    the block waits for a processor (a CI run beside the corpus tier), that wait is not its
    work, and a linear reader still finishes within its bound. Uses ``SIGPROF`` and
    ``SIGALRM``, so it only interrupts on the main thread of a POSIX process; elsewhere the
    block runs unbounded and callers compare the processor time afterwards.
    """
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        yield
        return
    backstop = wall_backstop(seconds)

    def on_processor(_signum: int, _frame: FrameType | None) -> None:
        raise TimeBoundExceeded(f"no result within {seconds:.1f} s of processor time")

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise TimeBoundExceeded(f"no result within {backstop:.0f} s (waiting, not computing)")

    previous_prof = signal.signal(signal.SIGPROF, on_processor)
    previous_alarm = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, backstop)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, previous_prof)
        signal.signal(signal.SIGALRM, previous_alarm)


@contextmanager
def within_bound(size: int) -> Iterator[None]:
    """Fail a block run on an input of ``size`` bytes (or characters) that has no result within
    :func:`bound_for` that size: for the unit tests of code written to stay linear on hostile
    input.

    The bound guards against a hang; it is no measure of speed. A catastrophic backtrack or a
    quadratic loop on 100 kB runs for minutes and a linear reader for milliseconds, and the
    bound (2 s and more, of processor time: see :func:`time_bound`) lies far from both. The
    collector is paused meanwhile, so that a heap other tests left alive is not collected on
    the block's time (see tests/fuzz/conftest.py).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        with time_bound(bound_for(size)):
            yield
    finally:
        if collecting:
            gc.enable()


# ---------------------------------------------------------------------------- outcomes


class Verdict(StrEnum):
    """How one call on one input ended."""

    PARSED = "parsed"
    ERROR = "documented error"
    BUG = "BUG"


@dataclass(frozen=True)
class Outcome:
    """One observed call: its verdict, how long it took and what it said."""

    verdict: Verdict
    seconds: float
    detail: str = ""
    """The documented error's message, or, for a bug, what went wrong (with a traceback)."""
    signature: str = ""
    """For a bug, a short key that groups inputs failing for one cause: the exception type and
    the innermost frame in ``ratified_rdf``, or the invariant that broke."""

    def describe(self, data: bytes | str) -> str:
        """A failure message for a test: the verdict, the input (shortened) and the detail."""
        shown: bytes | str = data
        if len(data) > 300:
            shown = data[:150] + data[-150:]  # type: ignore[operator]  # same type both halves
        return (
            f"{self.verdict} after {self.seconds:.3f} s on an input of {len(data)} "
            f"{'bytes' if isinstance(data, bytes) else 'characters'}: {shown!r}\n"
            f"{self.signature}\n{self.detail}"
        )


def where(error: BaseException) -> str:
    """The innermost ``ratified_rdf`` frame of ``error``'s traceback, as ``module:function``
    (or the innermost frame at all when none is the package's)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f for f in frames if "/ratified_rdf/" in f.filename.replace("\\", "/")]
    if not (ours or frames):
        return "?"
    frame = (ours or frames)[-1]
    path = frame.filename.replace("\\", "/")
    module = path.split("/ratified_rdf/", 1)[-1] if "/ratified_rdf/" in path else Path(path).name
    return f"{module}:{frame.name}"


def is_sentence(message: str) -> bool:
    """Whether an error message says something: a few words, not a bare value or code.

    (Full stops are not required: the query errors name the parameter and what it must be,
    without one, and are clear.)"""
    return len(message.split()) >= 3


def observe(
    call: Callable[[], object],
    *,
    documented: tuple[type[BaseException], ...],
    bound: float,
    check_result: Callable[[object], list[str]] = lambda _result: [],
    check_error: Callable[[BaseException], list[str]] = lambda _error: [],
) -> Outcome:
    """Run ``call`` under ``bound`` seconds of processor time (:func:`time_bound`) and classify
    how it ended (see the module notes)."""
    started = time.perf_counter()
    processor = time.process_time()
    try:
        with time_bound(bound):
            result = call()
    except TimeBoundExceeded as error:
        return Outcome(
            Verdict.BUG,
            time.perf_counter() - started,
            f"no result within the bound of {bound:.1f} s of processor time (a hang or "
            f"super-linear work); "
            f"interrupted in:\n{_traceback_tail(error)}",
            f"hang in {where(error)}",
        )
    except documented as error:
        elapsed = time.perf_counter() - started
        problems = check_error(error)
        if not is_sentence(str(error)):
            problems.append("the error message is not a sentence")
        if problems:
            return Outcome(
                Verdict.BUG,
                elapsed,
                f"{type(error).__name__}: {error}\n" + "\n".join(problems),
                f"unclear {type(error).__name__}: {problems[0]}",
            )
        return Outcome(Verdict.ERROR, elapsed, f"{type(error).__name__}: {error}")
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as error:  # anything else escaping is the bug being looked for
        return Outcome(
            Verdict.BUG,
            time.perf_counter() - started,
            f"{type(error).__name__}: {str(error)[:500]}\n{_traceback_tail(error)}",
            f"{type(error).__name__} in {where(error)}",
        )
    elapsed = time.perf_counter() - started
    used = time.process_time() - processor
    if used > bound:
        return Outcome(
            Verdict.BUG,
            elapsed,
            f"took {used:.2f} s of processor time, over the bound of {bound:.1f} s",
            "slow (uninterruptible)",
        )
    problems = check_result(result)
    if problems:
        return Outcome(Verdict.BUG, elapsed, "\n".join(problems), f"invariant: {problems[0]}")
    return Outcome(Verdict.PARSED, elapsed)


def _traceback_tail(error: BaseException, frames: int = 6) -> str:
    lines = traceback.format_exception(error)
    head, body = lines[:1], lines[1:-1]
    return "".join([*head, *body[-frames:], lines[-1]]).rstrip()


# ---------------------------------------------------------------------------- invariants


def document_problems(document: object, size: int) -> list[str]:
    """What is wrong with a parsed document: the section tree the readers promise (positions in
    order, each parent before its child and one level up, numbers unique) and no expansion
    (the text it holds is bounded by the input, so no entity or alias was expanded)."""
    if not isinstance(document, ParsedDocument):
        return [f"the reader returned a {type(document).__name__}, not a ParsedDocument"]
    problems: list[str] = []
    numbers: set[str] = set()
    sections = document.sections
    for index, section in enumerate(sections):
        label = f"section {index} ({section.number or 'unnumbered'} {section.heading[:40]!r})"
        if section.position != index:
            problems.append(f"{label} has position {section.position}")
        parent = section.parent
        if parent is not None and not 0 <= parent < index:
            problems.append(f"{label} has parent {parent}, not an earlier section")
            continue
        level = 1 if parent is None else sections[parent].level + 1
        if section.level != level:
            problems.append(f"{label} has level {section.level}, its parent says {level}")
        if section.number is not None:
            if section.number in numbers:
                problems.append(f"{label} repeats the number {section.number}")
            numbers.add(section.number)
    texts = [
        document.title or "",
        document.docname or "",
        *(f"{a.name} {a.email} {a.organization}" for a in document.authors),
        *(f"{s.heading} {s.anchor} {s.body}" for s in sections),
    ]
    if any(SECRET in text for text in texts):
        problems.append("the document holds the content of a file its input pointed at")
    held = len(document.title or "") + len(document.docname or "")
    held += sum(
        len(a.name) + len(a.email or "") + len(a.organization or "") for a in document.authors
    )
    held += sum(len(s.heading) + len(s.body) + len(s.anchor or "") for s in sections)
    if held > 4 * size + 10_000:
        problems.append(
            f"the document holds {held} characters of text read from {size} bytes: "
            "something was expanded"
        )
    return problems


def archive_problems(archive: object) -> list[str]:
    """What is wrong with a read archive: threads by number, posts numbered in order, each
    post in its thread, replies pointing back."""
    if not isinstance(archive, GitHubArchive):
        return [f"the reader returned a {type(archive).__name__}, not a GitHubArchive"]
    problems: list[str] = []
    numbers = [t.number for t in archive.threads]
    if numbers != sorted(numbers):
        problems.append("the threads are not in number order")
    for thread in archive.threads:
        for index, post in enumerate(thread.posts):
            if post.index != index or post.thread != thread.number:
                problems.append(
                    f"post {index} of #{thread.number} says #{post.thread}/{post.index}"
                )
            if post.reply_to is not None and not 0 <= post.reply_to < index:
                problems.append(f"post {index} of #{thread.number} replies to {post.reply_to}")
    return problems


INTERNAL_ERRORS: Final = frozenset(
    {
        "AssertionError",
        "AttributeError",
        "IndexError",
        "KeyError",
        "TypeError",
        "UnboundLocalError",
        "UnicodeDecodeError",
        "UnicodeEncodeError",
        "UnicodeError",
        "ZeroDivisionError",
    }
)
"""Exception types that, swallowed by the mail reader's per-entry safety net, mean its own code
failed on an entry (and a message was lost), not that the entry was not mail."""

_SWALLOWED = re.compile(r"could not be read and was skipped \((\w+):")
_ENTRY = re.compile(r"\bentry (\d+)\b", re.IGNORECASE)


def mail_problems(result: object) -> list[str]:
    """What is wrong with a read mail archive: ids unique and one line, problems naming their
    entry, a synthetic id always reported, no internal error swallowed."""
    if not isinstance(result, MailReadResult):
        return [f"the reader returned a {type(result).__name__}, not a MailReadResult"]
    problems: list[str] = []
    ids = [m.message_id for m in result.messages]
    if len(ids) != len(set(ids)):
        problems.append("two messages share a Message-ID")
    for message in result.messages:
        one_line = {
            "message_id": message.message_id,
            "subject": message.subject,
            "sender_name": message.sender_name or "",
            "sender_address": message.sender_address or "",
            "in_reply_to": message.in_reply_to or "",
            "thread_root": message.thread_root,
            "references": " ".join(message.references),
        }
        for name, value in one_line.items():
            if "\n" in value or "\r" in value:
                problems.append(f"{name} of <{message.message_id[:60]}> holds a line break")
        if not message.message_id or any(ch.isspace() for ch in message.message_id):
            problems.append(f"the Message-ID {message.message_id[:60]!r} is empty or has spaces")
        if message.synthetic_id != message.message_id.endswith("@" + SYNTHETIC_DOMAIN):
            problems.append(f"<{message.message_id[:60]}> is synthetic in one place only")
        if message.synthetic_id and message.permalink is not None:
            problems.append(f"synthetic <{message.message_id[:60]}> has a permalink")
        if message.synthetic_id and not any(
            p.message_id == message.message_id and "no Message-ID" in p.reason
            for p in result.problems
        ):
            problems.append(f"<{message.message_id[:60]}> got a synthetic id without a problem")
    for problem in result.problems:
        named = _ENTRY.search(problem.reason)
        if named is None or int(named.group(1)) != problem.index:
            problems.append(
                f"the problem {problem.reason[:120]!r} does not name entry {problem.index}"
            )
        swallowed = _SWALLOWED.search(problem.reason)
        if swallowed and swallowed.group(1) in INTERNAL_ERRORS:
            problems.append(
                f"entry {problem.index} was lost to an internal {swallowed.group(1)}: "
                f"{problem.reason[:300]}"
            )
    return problems


# ---------------------------------------------------------------------------- readers


@dataclass(frozen=True)
class Reader:
    """One reader, as a function of the bytes of a file."""

    name: str
    function: str
    """The public function fuzzed, for reports."""
    call: Callable[[bytes], object]
    documented: tuple[type[BaseException], ...]
    check_result: Callable[[object, bytes], list[str]]
    check_error: Callable[[BaseException, bytes], list[str]] = field(
        default=lambda _error, _data: []
    )

    def run(self, data: bytes, bound: float | None = None) -> Outcome:
        """Observe the reader on ``data`` (bound: :func:`bound_for` its size)."""
        return observe(
            lambda: self.call(data),
            documented=self.documented,
            bound=bound if bound is not None else bound_for(len(data)),
            check_result=lambda result: self.check_result(result, data),
            check_error=lambda error: self.check_error(error, data),
        )


def _text(data: bytes) -> str:
    """Bytes as the build decodes a file from git: UTF-8 with replacement."""
    return data.decode("utf-8", errors="replace")


def _archive_error(error: BaseException, _data: bytes) -> list[str]:
    return [] if "archive.json" in str(error) else ["the error does not name archive.json"]


def _mail_error(error: BaseException, _data: bytes) -> list[str]:
    # Given bytes, the mail readers name "the archive bytes" (a file, by its path).
    return [] if "archive" in str(error) else ["the error does not name the archive"]


_MANIFEST_FOLDERS: dict[int, Path] = {}


def _remove_if_mine(folder: Path, owner: int) -> None:
    """Remove ``folder`` at exit, but only in the process that made it: a forked worker
    inherits the parent's exit handlers and would otherwise delete the parent's folder."""
    if os.getpid() == owner:
        shutil.rmtree(folder, ignore_errors=True)


def manifest_file() -> Path:
    """Where the manifest reader's input is written: one temporary folder per process (a
    forked worker makes its own, and removes it when it stops)."""
    pid = os.getpid()
    if pid not in _MANIFEST_FOLDERS:
        folder = Path(tempfile.mkdtemp(prefix="ratified-fuzz-manifest-"))
        atexit.register(_remove_if_mine, folder, pid)
        _MANIFEST_FOLDERS[pid] = folder
    return _MANIFEST_FOLDERS[pid] / "manifest.toml"


def _load_manifest_bytes(data: bytes) -> Manifest:
    file = manifest_file()
    file.write_bytes(data)
    return load_manifest(file.parent)[0]


def _manifest_error(error: BaseException, _data: bytes) -> list[str]:
    return [] if str(manifest_file()) in str(error) else ["the error does not name the file"]


def _load_people_bytes(data: bytes) -> Overrides:
    file = manifest_file().with_name("people.toml")
    file.write_bytes(data)
    return load_overrides(file)


def _people_error(error: BaseException, _data: bytes) -> list[str]:
    file = manifest_file().with_name("people.toml")
    return [] if str(file) in str(error) else ["the error does not name the file"]


def _people_result(result: object, _data: bytes) -> list[str]:
    return [] if isinstance(result, Overrides) else [f"returned a {type(result).__name__}"]


def _manifest_result(result: object, _data: bytes) -> list[str]:
    return [] if isinstance(result, Manifest) else [f"returned a {type(result).__name__}"]


READERS: Final[dict[str, Reader]] = {
    reader.name: reader
    for reader in (
        Reader(
            "kramdown",
            "ratified_rdf.sources.kramdown.parse_kramdown",
            lambda data: parse_kramdown(_text(data)),
            (ParseError,),
            lambda result, data: document_problems(result, len(data)),
        ),
        Reader(
            "rfc_text",
            "ratified_rdf.sources.rfc_text.parse_rfc_text",
            lambda data: parse_rfc_text(_text(data)),
            (ParseError,),
            lambda result, data: document_problems(result, len(data)),
        ),
        Reader(
            "xml2rfc",
            "ratified_rdf.sources.xml2rfc.parse_xml2rfc",
            parse_xml2rfc,
            (ParseError,),
            lambda result, data: document_problems(result, len(data)),
            lambda error, _data: ["the error repeats the secret"] if SECRET in str(error) else [],
        ),
        Reader(
            "github_archive",
            "ratified_rdf.sources.github_archive.read_archive",
            read_archive,
            (ParseError,),
            lambda result, _data: archive_problems(result),
            _archive_error,
        ),
        Reader(
            "mbox",
            "ratified_rdf.sources.mail.read_mbox",
            lambda data: read_mbox(data, LIST_NAME),
            (MailArchiveError,),
            lambda result, _data: mail_problems(result),
            _mail_error,
        ),
        Reader(
            "mailman",
            "ratified_rdf.sources.mail.read_mailman_text",
            lambda data: read_mailman_text(data, LIST_NAME),
            (MailArchiveError,),
            lambda result, _data: mail_problems(result),
            _mail_error,
        ),
        Reader(
            "people",
            "ratified_rdf.records.identity.load_overrides (read_toml_record)",
            _load_people_bytes,
            (PeopleError,),
            _people_result,
            _people_error,
        ),
        Reader(
            "manifest",
            "ratified_rdf.records.manifest.load_manifest",
            _load_manifest_bytes,
            (ManifestError,),
            _manifest_result,
            _manifest_error,
        ),
    )
}


def seed_files() -> dict[str, list[Path]]:
    """The fixture files each reader is seeded with (real-looking, fictional inputs)."""
    pigeon = FIXTURES / "pigeon"
    return {
        "kramdown": sorted([*pigeon.glob("*.md"), *(FIXTURES / "kramdown").glob("*.md")]),
        "rfc_text": sorted((FIXTURES / "rfc_text").glob("*.txt")),
        "xml2rfc": sorted((FIXTURES / "xml2rfc").glob("*.xml")),
        "github_archive": [pigeon / "pigeon-archive.json"],
        "mbox": sorted(
            [
                pigeon / "pigeon-list.mbox",
                *(FIXTURES / "mail").glob("*.mbox"),
                *(FIXTURES / "tls-private").glob("*.mbox"),
            ]
        ),
        "mailman": sorted((FIXTURES / "mail").glob("*.txt")),
        "manifest": [pigeon / "manifest.toml", REPO / "records" / "tls13" / "manifest.toml"],
        "people": [REPO / "records" / "tls13" / "people.toml"],
    }


# ---------------------------------------------------------------------------- isolation

GRACE_S: Final = 5.0
"""Seconds a worker may take past a call's bound (to notice the alarm) before it is killed."""


def _serve(connection: Connection) -> None:
    """A worker's loop: read ``(reader, data, bound)``, send back the :class:`Outcome`."""
    try:
        while True:
            try:
                request = connection.recv()
            except EOFError:
                return
            if request is None:  # asked to stop
                return
            reader, data, bound = request
            connection.send(READERS[reader].run(data, bound))
    finally:
        # A worker ends with os._exit, which runs no atexit handler: tidy up here.
        own = _MANIFEST_FOLDERS.get(os.getpid())
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)


class Worker:
    """A child process that runs readers, so that a crash in C code (a segmentation fault from
    a C stack overflow) or a hang that ignores ``SIGALRM`` ends the child, not the caller. The
    crash or hang is reported as a bug and a fresh child takes over."""

    def __init__(self) -> None:
        """Start the child: forked where the platform can (instant, with every module already
        imported), else spawned (a clean interpreter that imports this module)."""
        methods = multiprocessing.get_all_start_methods()
        self._context: Any = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.restarts = 0
        self._start()

    def _start(self) -> None:
        self._connection, child = self._context.Pipe()
        self._process = self._context.Process(target=_serve, args=(child,), daemon=True)
        self._process.start()
        child.close()

    def run(self, reader: str, data: bytes, bound: float | None = None) -> Outcome:
        """The reader's outcome on ``data``, observed in the child."""
        limit = bound if bound is not None else bound_for(len(data))
        started = time.perf_counter()
        self._connection.send((reader, data, limit))
        # The child stops the call at ``limit`` of its processor time, or at the wall-clock
        # backstop: only past that (and a grace to notice it) is it taken for stuck.
        if self._connection.poll(wall_backstop(limit) + GRACE_S):
            try:
                outcome: Outcome = self._connection.recv()
            except EOFError:
                pass
            else:
                return outcome
        elapsed = time.perf_counter() - started
        if self._process.is_alive():
            self._process.kill()
        self._process.join(timeout=10)
        code = self._process.exitcode
        self.restarts += 1
        self._start()
        if code is not None and code < 0:
            return Outcome(
                Verdict.BUG,
                elapsed,
                f"the reader killed its process with signal {-code} (a crash in C code)",
                f"crash (signal {-code}) in {READERS[reader].function}",
            )
        return Outcome(
            Verdict.BUG,
            elapsed,
            f"no answer within {wall_backstop(limit) + GRACE_S:.1f} s, even to the alarm (a hang "
            "in C code)",
            f"hang (uninterruptible) in {READERS[reader].function}",
        )

    def close(self) -> None:
        """Stop the child."""
        with suppress(OSError):
            self._connection.send(None)
        self._connection.close()
        self._process.join(timeout=5)
        if self._process.is_alive():
            self._process.kill()
            self._process.join(timeout=5)


# ---------------------------------------------------------------------------- known bugs


KNOWN_BUGS: Final[dict[str, str]] = {}
"""The bugs these tests found in ``src/`` and that are not fixed yet, by id: what is wrong and
where. Empty now: K1–K6, R1, R2, X1–X3, A1–A3, M1–M5, T1, T2, Q1, H1, P1 and P2, found by the
first fuzzing, are fixed, and their reproductions are ordinary tests. A new bug gets an id here,
a signature in :data:`KNOWN_SIGNATURES` and ``xfail(strict=True)`` on its reproductions until
it is fixed."""


KNOWN_SIGNATURES: Final[tuple[tuple[str, str, str], ...]] = ()
"""How each known bug shows in an outcome's signature: (bug, target or any, a piece of it)."""


def likely_known(target: str, signature: str) -> str:
    """The known bugs an outcome's signature points at (``K3/K5``), or ``""`` for a new one."""
    bugs = {
        bug
        for bug, where_, piece in KNOWN_SIGNATURES
        if where_ in {"", target} and piece in signature
    }
    return "/".join(sorted(bugs))


def known(bug: str) -> str:
    """The xfail reason for a known bug: its id and description."""
    return f"{bug}: {KNOWN_BUGS[bug]}"


# ---------------------------------------------------------------------------- pathological


PATHOLOGICAL_BOUND_S: Final = 1.0
"""Seconds a pathological input of :data:`STRETCH` bytes may take, unless its case says more:
real text of that size takes well under 0.1 s (routing 100 kB of ordinary words about 0.1 s),
and a super-linear pattern takes tens of seconds, or hours, at this size."""


@dataclass(frozen=True)
class Pathological:
    """An input built to make super-linear code show itself, for one reader."""

    reader: str
    name: str
    build: Callable[[int], bytes]
    """The input stretched to about ``size`` bytes."""
    bug: str | None = None
    """The :data:`KNOWN_BUGS` id it reproduces, if it does."""
    bound: float = PATHOLOGICAL_BOUND_S
    """Seconds it may take at :data:`STRETCH` bytes (more where the work is linear but heavy)."""
    isolate: bool = False
    """Run it in a :class:`Worker`: it may crash the process it runs in."""
    ci: bool = True
    """Whether the short form runs it (a second input for the same bug, or a slow linear one,
    runs in ``benchmarks/fuzz.py`` only)."""

    @property
    def id(self) -> str:
        """A test id: ``reader-name``."""
        return f"{self.reader}-{self.name}"


def stretch(
    prefix: str | bytes, unit: str | bytes, suffix: str | bytes = b""
) -> Callable[[int], bytes]:
    """A builder: ``prefix + unit * n + suffix`` with ``n`` chosen to make about ``size`` bytes."""
    head, body, tail = (p.encode() if isinstance(p, str) else p for p in (prefix, unit, suffix))

    def build(size: int) -> bytes:
        count = max(1, (size - len(head) - len(tail)) // len(body))
        return head + body * count + tail

    return build


def _nested(
    opening: str, closing: str, inner: str, prefix: str, suffix: str
) -> Callable[[int], bytes]:
    def build(size: int) -> bytes:
        depth = max(1, (size - len(prefix) - len(suffix)) // (len(opening) + len(closing)))
        return (prefix + opening * depth + inner + closing * depth + suffix).encode()

    return build


def _manifest_chain(size: int) -> bytes:
    head = (
        '[brain]\nid = "chain"\ntitle = "t"\nrepository = "r"\n\n'
        '[[rfc]]\nnumber = 1\ntitle = "t"\npublished = "2020-01"\nref = "r"\nfile = "f"\n'
    )
    entry = '[[draft]]\nname = "draft-a-n{0}"\nfile = "f"\nrevisions = "00"\n{1}\n'
    count = max(2, (size - len(head)) // 90)
    drafts = [
        entry.format(i, f'replaced_by = "draft-a-n{i + 1}"' if i < count - 1 else 'became = "rfc1"')
        for i in range(count)
    ]
    return (head + "".join(drafts)).encode()


_MIDDLE = "---\ntitle: t\n---\n\n--- middle\n\n"
_TOC = "Title\n\nTable of Contents\n\n   "
_BODY = "\n\n1.  Introduction\n\n   Text.\n"
_MAIL = "From: a@example.org\nMessage-ID: <m@example.org>\nDate: Tue, 3 Mar 2017 10:00:00 +0000\n"
_PIPERMAIL = "From alice at example.org  Tue Mar  3 10:00:00 2017\n"
_XML = "<rfc><middle><section><name>n</name>"
_XML_END = "</section></middle></rfc>"
_ARCHIVE = '{"issues": [{"number": 1, "url": "u", "createdAt": "2020-01-01T00:00:00Z", "body": "'

_MEDIUM = 2.0
"""The bound for inputs measured at 0.15 to 0.4 s here (on a loaded machine), for a margin of
five or more."""

_HEAVY = 5.0
"""The bound for inputs whose work is linear but heavy (tens of thousands of sections, entries or
MIME parts in 100 kB): each is measured at 0.5 to 1.2 s here, a quarter of this or less. They
run in the long form only, to keep the short form short."""

PATHOLOGICAL: Final[tuple[Pathological, ...]] = (
    # kramdown-rfc
    Pathological("kramdown", "heading-blanks", stretch("# a", " ", "x\n")),
    Pathological("kramdown", "heading-hashes", stretch("# ", "#", "x\n"), ci=False),
    Pathological("kramdown", "heading-tabs-hashes", stretch("# a", "\t#", "x\n")),
    Pathological("kramdown", "unbalanced-fences", stretch("# a\n", "```\n")),
    Pathological("kramdown", "headings", stretch(_MIDDLE, "# a\n"), bound=_HEAVY, ci=False),
    Pathological("kramdown", "ial-lines", stretch(_MIDDLE + "# a\n", "{: #x}\n")),
    Pathological("kramdown", "inline-ial-braces", stretch("# a ", "{ ", "\n")),
    Pathological("kramdown", "comments", stretch("# a\n", "<!--\n")),
    Pathological("kramdown", "long-yaml-title", stretch("---\ntitle: ", "a", "\n---\n# a\n")),
    # libyaml's parser is quadratic in this nesting and its composer recurses on the C stack
    # (bugs K5 and K6, fixed: the reader stops at 50 levels); still run in a worker process,
    # where a crash in C code could only end the worker.
    Pathological(
        "kramdown",
        "yaml-flow-nesting",
        stretch("---\ntitle: ", "[a, ", "\n---\n"),
        isolate=True,
    ),
    Pathological(
        "kramdown",
        "yaml-nested-brackets",
        _nested("[", "]", "", "---\ntitle: ", "\n---\n\n--- middle\n\n# A\n"),
        isolate=True,
        ci=False,
    ),
    Pathological("kramdown", "part-markers", stretch("# a\n", "--- back\n# b\n"), bound=_MEDIUM),
    Pathological("kramdown", "long-line", stretch("# a\n", "x")),
    # RFC plain text
    Pathological("rfc_text", "toc-dots", stretch(_TOC, ".", _BODY)),
    Pathological("rfc_text", "toc-spaced-dots", stretch(_TOC, " .", _BODY), ci=False),
    Pathological("rfc_text", "author-initials", stretch("x  ", "A.", "!" + _BODY)),
    Pathological("rfc_text", "headings", stretch("x\n\n", "1.  A\n\n"), bound=_HEAVY, ci=False),
    Pathological("rfc_text", "form-feeds", stretch("x\n", "\f\n", _BODY), bound=_HEAVY, ci=False),
    Pathological("rfc_text", "footers", stretch("x\n", "a  b [Page 1]\n", _BODY), bound=_MEDIUM),
    Pathological("rfc_text", "three-columns", stretch("x\n\f\n", "a  b  ", _BODY)),
    Pathological("rfc_text", "running-header", stretch("x\n\f\nRFC 1  ", "a  ", _BODY)),
    Pathological("rfc_text", "long-line", stretch("", "x", _BODY)),
    Pathological("rfc_text", "blank-line", stretch("", " ", "x" + _BODY)),
    Pathological("rfc_text", "toc-entries", stretch(_TOC, "1.  A . . 1\n   ", _BODY)),
    # xml2rfc
    Pathological(
        "xml2rfc",
        "nested-sections",
        _nested("<section>", "</section>", "", "<rfc><middle>", "</middle></rfc>"),
    ),
    Pathological(
        "xml2rfc", "nested-inline", _nested("<b>", "</b>", "x", _XML + "<t>", "</t>" + _XML_END)
    ),
    Pathological(
        "xml2rfc",
        "nested-lists",
        _nested("<li><ul>", "</ul></li>", "", _XML + "<ul>", "</ul>" + _XML_END),
    ),
    Pathological(
        "xml2rfc",
        "flat-sections",
        stretch("<rfc><middle>", "<section><name>a</name><t>b</t></section>", "</middle></rfc>"),
        bound=_MEDIUM,
    ),
    Pathological("xml2rfc", "long-text", stretch(_XML + "<t>", "a ", "</t>" + _XML_END)),
    Pathological(
        "xml2rfc",
        "many-xrefs",
        stretch(_XML + "<t>", '<xref target="a"/>', "</t>" + _XML_END),
        bound=_MEDIUM,
    ),
    Pathological("xml2rfc", "long-attribute", stretch('<rfc docName="', "a", '"/>')),
    Pathological("xml2rfc", "undefined-entities", stretch("<rfc>", "&a;", "</rfc>")),
    Pathological(
        "xml2rfc",
        "entity-declarations",
        stretch("<!DOCTYPE rfc [", '<!ENTITY a "&#38;a;">', "]><rfc>&a;</rfc>"),
    ),
    # GitHub archive.json
    Pathological("github_archive", "deep-arrays", stretch("", "[")),
    Pathological(
        "github_archive", "fixes-list", stretch(_ARCHIVE, "fixes #1, ", '"}], "pulls": []}')
    ),
    Pathological(
        "github_archive",
        "pull-fixes",
        stretch(_ARCHIVE.replace("issues", "pulls"), "closes #1 #2 and ", '"}], "issues": []}'),
    ),
    Pathological(
        "github_archive",
        "many-comments",
        stretch(
            '{"pulls": [], "issues": [{"number": 1, "url": "u", '
            '"createdAt": "2020-01-01T00:00:00Z", "comments": [',
            '{"createdAt": "2020-01-01T00:00:00Z", "body": null},',
            '{"createdAt": "2020-01-01T00:00:00Z"}]}]}',
        ),
    ),
    # mbox
    Pathological(
        "mbox",
        "html-unclosed-tags",
        stretch(_MAIL + "Content-Type: text/html\n\n", "<a "),
    ),
    Pathological(
        "mbox",
        "via-display-name",
        stretch('From: "', "x via ", '@" <a@b.c>\n\nx\n'),
    ),
    Pathological("mbox", "envelope-lines", stretch("", "From a\n"), bound=_HEAVY, ci=False),
    Pathological("mbox", "long-subject", stretch(_MAIL + "Subject: ", "a", "\n\nx\n")),
    Pathological(
        "mbox",
        "encoded-words",
        stretch(_MAIL + "Subject: ", "=?utf-8?q?a?= ", "\n\nx\n"),
        bound=_MEDIUM,
    ),
    Pathological("mbox", "references", stretch(_MAIL + "References: ", "<a@b> ", "\n\nx\n")),
    Pathological("mbox", "many-headers", stretch(_MAIL, "X-A: b\n", "\nx\n")),
    Pathological("mbox", "long-message-id", stretch("From: a@b\nMessage-ID: <", "a", ">\n\nx\n")),
    Pathological("mbox", "obfuscated-at", stretch(_MAIL + "Reply-To: ", "a at b ", "\n\nx\n")),
    Pathological(
        "mbox",
        "multipart-parts",
        stretch(
            _MAIL + "Content-Type: multipart/mixed; boundary=b\n\n",
            "--b\nContent-Type: text/plain\n\nx\n",
            "--b--\n",
        ),
        # Linear but slow: the stdlib's email package parses each MIME part's headers into
        # objects, about 1.3 ms a part; 100 kB holds 3,000 parts.
        bound=15.0,
        ci=False,
    ),
    Pathological("mbox", "html-entities", stretch(_MAIL + "Content-Type: text/html\n\n", "&amp;")),
    # Mailman text
    Pathological(
        "mailman",
        "obfuscated-from",
        stretch(_PIPERMAIL + "From: ", "a", "\n\nx\n"),
    ),
    Pathological("mailman", "separators", stretch("", _PIPERMAIL)),
    Pathological("mailman", "at-words", stretch(_PIPERMAIL + "From: a at b.c\n\n", "a at b ")),
    # manifests
    Pathological("manifest", "deep-arrays", stretch("a = ", "[", "1")),
    Pathological("manifest", "deep-inline-tables", stretch("a = ", "{b = ", "1")),
    Pathological("manifest", "replacement-chain", _manifest_chain),
    Pathological("manifest", "long-string", stretch('[brain]\nid = "x"\ntitle = "', "a", '"\n')),
    Pathological("manifest", "many-tables", stretch("", "[[draft]]\n"), bound=_HEAVY, ci=False),
)
"""Inputs stretched to :data:`STRETCH` bytes that must still be read within their bound."""


def _words(unit: str, prefix: str = "", suffix: str = "") -> Callable[[int], bytes]:
    return stretch(prefix.encode(), unit.encode(), suffix.encode())


_SEARCH = 2.0

QUESTIONS_PATHOLOGICAL: Final[tuple[Pathological, ...]] = (
    # The router (reader "router": the bytes are UTF-8 text for ratified_rdf.answers.route).
    Pathological("router", "section-words", _words("section ")),
    Pathological("router", "section-signs", _words("§1.")),
    Pathological("router", "section-dotted", _words("1.", "section ")),
    Pathological("router", "section-numbers", _words("section 1.1.1.1.1.1.1 ")),
    Pathological("router", "sec-dots", _words("sec.")),
    Pathological("router", "draft-names", _words("draft-a")),
    Pathological("router", "draft-revisions", _words("draft-ietf-tls-tls13-21 ")),
    Pathological("router", "draft-hyphens", _words("draft-")),
    Pathological("router", "draft-digits", _words("draft-1-"), ci=False),
    Pathological("router", "rfc-words", _words("RFC ")),
    Pathological("router", "rfc-hyphens", _words("RFC-")),
    Pathological("router", "digits", _words("1")),
    Pathological("router", "days", _words("on 2017-01-01 ")),
    Pathological("router", "what-did", _words("a ", "what did ")),
    Pathological("router", "who-is", _words("a ", "who is ")),
    Pathological("router", "pull-requests", _words("pr ")),
    Pathological("router", "hashes", _words("#")),
    Pathological("router", "who-should-i-ask", _words("who should I ask ")),
    Pathological("router", "how-many", _words("how many posts ")),
    Pathological("router", "spaces", _words(" ", "", "x")),
    Pathological("router", "unicode-digits", _words("§٤.٢ ")),
    # The heading search over the pigeon brain's headings: 100 kB is some 50,000 words to cut,
    # stem and look up, up to 0.6 s, hence a bound of its own.
    Pathological("heading_search", "lowercase-word", _words("a"), bound=_SEARCH),
    Pathological("heading_search", "camel-word", _words("Ab"), bound=_SEARCH),
    Pathological("heading_search", "aliases", _words("0-RTT "), bound=_SEARCH),
    Pathological("heading_search", "heading-words", _words("early data key share "), bound=_SEARCH),
    Pathological("heading_search", "versions", _words("TLS 1.3 "), bound=_SEARCH),
    Pathological("heading_search", "attached-versions", _words("v1.2"), bound=_SEARCH),
    Pathological("heading_search", "hyphens", _words("a-"), bound=_SEARCH),
    Pathological("heading_search", "dropped-marks", _words("(a)'"), bound=_SEARCH),
    Pathological("heading_search", "underscores", _words("a_"), bound=_SEARCH),
    Pathological("heading_search", "camel-case", _words("ClientHello"), bound=_SEARCH),
    Pathological("heading_search", "dotted-numbers", _words("1.1."), bound=_SEARCH),
    # NFKC turns each of these 3-byte characters into 18 letters: 600,000 to analyse.
    Pathological("heading_search", "nfkc-expansion", _words("\ufdfa"), bound=6.0),
    Pathological("heading_search", "capitals", _words("A"), bound=_SEARCH),
    Pathological("heading_search", "acronyms", _words("PSK"), bound=_SEARCH, ci=False),
)
"""Questions stretched to :data:`STRETCH` bytes for the router and the heading search."""
