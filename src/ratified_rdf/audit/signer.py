"""``PeriodicSigner``: a long-running process signs its audit log's tree head as it goes.

A server that signs only when it stops leaves everything since its start unsigned while it
runs, and all of it when it is killed. The signer signs a tree head whenever records are
unsigned and either ``interval_s`` seconds have passed since the last signature or
``max_unsigned`` records wait (whichever comes first), and once more when it stops, so a
crash leaves at most that much unsigned and a clean stop nothing. ``stop_on_sigterm`` turns
SIGTERM and SIGINT into an ordinary exit, so that stop runs on either.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType, TracebackType

from ratified_rdf.audit.errors import AuditError
from ratified_rdf.audit.log import AuditLog
from ratified_rdf.audit.signing import SignedTreeHead

DEFAULT_INTERVAL_S = 30.0
"""At most this many seconds pass between a record and the tree head that covers it."""
DEFAULT_MAX_UNSIGNED = 1000
"""At most this many records wait for a tree head before one is signed."""

logger = logging.getLogger("ratified_rdf.audit")


class PeriodicSigner:
    """Signs ``log``'s tree head every ``interval_s`` seconds or ``max_unsigned`` records,
    whichever comes first, in a background thread, and on ``stop``.

    Nothing is signed while nothing is unsigned, nor for a log that cannot sign (it said so
    when it opened). ``clock`` (seconds, monotonic) is replaceable for tests, which can also
    call ``tick`` themselves instead of starting the thread. Use it as a context manager
    around the process's serving loop. ``log`` may be None: then it does nothing.
    """

    def __init__(
        self,
        log: AuditLog | None,
        *,
        interval_s: float = DEFAULT_INTERVAL_S,
        max_unsigned: int = DEFAULT_MAX_UNSIGNED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be a positive number of seconds.")
        if max_unsigned < 1:
            raise ValueError("max_unsigned must be at least 1 record.")
        self._log = log
        self._interval_s = interval_s
        self._max_unsigned = max_unsigned
        self._clock = clock
        self._last = clock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self.signed = 0
        """How many tree heads this signer has signed."""
        if log is not None:
            log.on_append(self._appended)

    def due(self) -> bool:
        """Whether a tree head should be signed now."""
        log = self._log
        if log is None or log.closed or not log.can_sign:
            return False
        unsigned = log.unsigned
        return unsigned > 0 and (
            unsigned >= self._max_unsigned or self._clock() - self._last >= self._interval_s
        )

    def tick(self) -> SignedTreeHead | None:
        """Sign a tree head if one is due; return it, or None. With nothing unsigned the
        period starts again, so the first record after a quiet spell waits no longer than
        ``interval_s`` either."""
        if self._log is not None and not self._log.closed and not self._log.unsigned:
            self._last = self._clock()
        if not self.due():
            return None
        return self._sign()

    def _sign(self) -> SignedTreeHead | None:
        assert self._log is not None
        head = self._log.checkpoint()
        self._last = self._clock()
        if head is not None:
            self.signed += 1
        return head

    def _appended(self) -> None:
        log = self._log
        if log is not None and log.unsigned >= self._max_unsigned:
            self._wake.set()

    def start(self) -> PeriodicSigner:
        """Start signing in a background (daemon) thread; return self."""
        if self._log is not None and self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name="audit-tree-head-signer", daemon=True
            )
            self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stopping.is_set():
            waited = self._clock() - self._last
            self._wake.wait(timeout=max(0.05, self._interval_s - waited))
            self._wake.clear()
            if self._stopping.is_set():
                return
            try:
                self.tick()
            except AuditError as error:  # a full disk: say so, keep the server up, try again
                if self._log is not None and not self._log.closed:
                    logger.error("%s", error)

    def stop(self) -> SignedTreeHead | None:
        """Stop the thread, then sign a last tree head over anything still unsigned; return
        it (None if nothing needed signing). A failure to sign is raised: a clean stop that
        leaves records unsigned must be heard of."""
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        log = self._log
        if log is not None:
            log.off_append(self._appended)
        if log is None or log.closed or not log.can_sign or not log.unsigned:
            return None
        return self._sign()

    def __enter__(self) -> PeriodicSigner:
        """Start the signer."""
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop the signer, signing a last tree head."""
        self.stop()


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
"""The signals a clean stop comes by."""


@contextlib.contextmanager
def stop_on_sigterm() -> Iterator[None]:
    """While inside, SIGTERM and SIGINT raise ``SystemExit(0)`` in the main thread, so
    ``with`` blocks unwind (a signer's last tree head, a brain's close) and the process
    exits 0 after a clean stop.

    uvicorn handles both signals itself while it serves, shuts down gracefully, restores the
    handlers it found and raises the signal again: with the default SIGTERM handler the
    process then died before anything outside ``uvicorn.run`` could run. Off the main
    thread (where no handler can be installed) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise SystemExit(0)

    previous = {number: signal.signal(number, stop) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
