"""Anchoring signed tree heads outside the log, with a lifecycle recorded in the log itself.

An ``Anchor`` takes a signed tree head and returns a receipt, or raises ``AnchorUnreachable``
(try again later) or ``AnchorRejected`` (final). ``Anchoring`` drives one anchor through the
lifecycle in ``lifecycle.py`` and appends every step to the log as an ``AnchorSidecar``, so
the log shows what was anchored where, what waits for a retry and what failed. Two anchors
ship: ``LocalWitnessAnchor`` (``witness.py``) and ``HttpTransparencyAnchor``
(``http_anchor.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Protocol

from pydantic import JsonValue

from ratified_rdf.audit.errors import AnchorRejected, AnchorUnreachable, AuditError
from ratified_rdf.audit.lifecycle import AnchorState, check_transition
from ratified_rdf.audit.log import VERIFY_HINT, AuditLog
from ratified_rdf.audit.records import AnchorSidecar
from ratified_rdf.audit.signing import SignedTreeHead

Receipt = dict[str, JsonValue]
"""What an anchor returns for a tree head it accepted."""

ConsistencyProver = Callable[[int, int], Sequence[bytes]]
"""Gives the log's consistency proof from an old tree size to a new one."""

_HeadKey = tuple[int, int, str]


class Anchor(Protocol):
    """Somewhere outside the log that keeps a tree head, so the log cannot later deny it."""

    @property
    def name(self) -> str:
        """A short, stable name; the log's anchoring steps record it."""
        ...

    def submit(self, sth: SignedTreeHead, prove: ConsistencyProver) -> Receipt:
        """Anchor ``sth`` and return a receipt; raise ``AnchorUnreachable`` or ``AnchorRejected``.

        ``prove`` gives the log's consistency proofs, for anchors that check them.
        """
        ...


def _head_key(sth: SignedTreeHead) -> _HeadKey:
    return (sth.tree_size, sth.timestamp, sth.root_hash)


class Anchoring:
    """Anchors a log's tree heads at one anchor, recording each lifecycle step in the log.

    The state of every tree head is read back from the log when this is made, so anchorings
    left queued (or cut short by a crash) by an earlier process are taken up by ``drain``.
    ``max_attempts`` bounds how often one tree head is tried before it is marked failed.
    """

    def __init__(self, log: AuditLog, anchor: Anchor, *, max_attempts: int = 5) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1: every anchoring is tried once.")
        self._log = log
        self._anchor = anchor
        self._max_attempts = max_attempts
        self._lock = threading.Lock()
        self._states: dict[_HeadKey, AnchorState] = {}
        self._attempts: dict[_HeadKey, int] = {}
        heads = {_head_key(head): head for head in log.tree_heads}
        self._heads: dict[_HeadKey, SignedTreeHead] = {}
        for entry in log.entries():
            if isinstance(entry, AnchorSidecar) and entry.anchor == anchor.name:
                key = (entry.tree_size, entry.timestamp, entry.root_hash)
                if key not in heads:
                    raise AuditError(
                        f"The audit log at {log.directory} records anchoring a tree head of "
                        f"size {entry.tree_size} that it never signed: {VERIFY_HINT}."
                    )
                self._track(key, entry.state)
                self._heads[key] = heads[key]

    def state(self, sth: SignedTreeHead) -> AnchorState | None:
        """Where the anchoring of ``sth`` stands; None if it was never submitted."""
        with self._lock:
            return self._states.get(_head_key(sth))

    def anchor(self, sth: SignedTreeHead) -> AnchorState:
        """Queue ``sth`` (pending), then try to anchor it once; return the state it reached."""
        with self._lock:
            self._heads[_head_key(sth)] = sth
            self._step(sth, AnchorState.PENDING)
            return self._attempt(sth)

    def drain(self) -> dict[SignedTreeHead, AnchorState]:
        """Retry every anchoring that is not final yet; return the state each one reached.

        An anchoring left ``committed`` was cut short by a crash: it is queued for replay
        (the anchor may or may not have it) and tried again.
        """
        with self._lock:
            reached: dict[SignedTreeHead, AnchorState] = {}
            for key, state in list(self._states.items()):
                if state in (AnchorState.ANCHORED, AnchorState.FAILED):
                    continue
                sth = self._heads[key]
                if state is AnchorState.COMMITTED:
                    self._step(
                        sth,
                        AnchorState.REPLAY_QUEUED,
                        detail="the attempt was cut short before the anchor answered",
                    )
                reached[sth] = self._attempt(sth)
            return reached

    def _attempt(self, sth: SignedTreeHead) -> AnchorState:
        key = _head_key(sth)
        if self._attempts.get(key, 0) >= self._max_attempts:
            return self._step(
                sth,
                AnchorState.FAILED,
                detail=f"gave up after {self._max_attempts} attempts",
            )
        self._step(sth, AnchorState.COMMITTED)
        try:
            receipt = self._anchor.submit(sth, self._log.consistency_proof)
        except AnchorUnreachable as exc:
            if self._attempts[key] >= self._max_attempts:
                return self._step(
                    sth,
                    AnchorState.FAILED,
                    detail=f"gave up after {self._max_attempts} attempts; the last said: {exc}",
                )
            return self._step(sth, AnchorState.REPLAY_QUEUED, detail=str(exc))
        except AnchorRejected as exc:
            return self._step(sth, AnchorState.FAILED, detail=str(exc))
        return self._step(sth, AnchorState.ANCHORED, receipt=receipt)

    def _step(
        self,
        sth: SignedTreeHead,
        state: AnchorState,
        *,
        detail: str | None = None,
        receipt: Receipt | None = None,
    ) -> AnchorState:
        key = _head_key(sth)
        check_transition(self._states.get(key), state)
        self._log.append(
            AnchorSidecar(
                anchor=self._anchor.name,
                tree_size=sth.tree_size,
                timestamp=sth.timestamp,
                root_hash=sth.root_hash,
                state=state,
                detail=detail,
                receipt=receipt,
            )
        )
        self._track(key, state)
        return state

    def _track(self, key: _HeadKey, state: AnchorState) -> None:
        self._states[key] = state
        if state is AnchorState.COMMITTED:
            self._attempts[key] = self._attempts.get(key, 0) + 1
