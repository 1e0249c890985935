"""The lifecycle of anchoring one signed tree head, and the only moves it allows.

``pending``: the tree head is queued for an anchor. ``committed``: an attempt is recorded in
the log before the anchor is contacted, so a crash mid-attempt stays visible. ``anchored``:
the anchor returned a receipt. ``replay_queued``: the anchor could not be reached; a later
drain tries again (through ``committed``). ``failed``: the anchor refused the tree head or
the retry budget ran out; it is final, and visible in the log.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from ratified_rdf.audit.errors import AnchorStateError


class AnchorState(StrEnum):
    """Where the anchoring of one tree head at one anchor stands."""

    PENDING = "pending"
    COMMITTED = "committed"
    ANCHORED = "anchored"
    REPLAY_QUEUED = "replay_queued"
    FAILED = "failed"


TRANSITIONS: Mapping[AnchorState | None, frozenset[AnchorState]] = {
    None: frozenset({AnchorState.PENDING}),
    AnchorState.PENDING: frozenset({AnchorState.COMMITTED}),
    AnchorState.COMMITTED: frozenset(
        {AnchorState.ANCHORED, AnchorState.REPLAY_QUEUED, AnchorState.FAILED}
    ),
    AnchorState.REPLAY_QUEUED: frozenset({AnchorState.COMMITTED, AnchorState.FAILED}),
    AnchorState.ANCHORED: frozenset(),
    AnchorState.FAILED: frozenset(),
}
"""The states each state may move to; ``None`` stands for an anchoring not yet started."""


def check_transition(current: AnchorState | None, new: AnchorState) -> None:
    """Raise ``AnchorStateError`` unless an anchoring may move from ``current`` to ``new``."""
    if new not in TRANSITIONS[current]:
        start = "not yet started" if current is None else current.value
        allowed = ", ".join(sorted(state.value for state in TRANSITIONS[current])) or "nothing"
        raise AnchorStateError(
            f"An anchoring that is {start} cannot become {new.value}; it can only become "
            f"{allowed}. Anchored and failed anchorings are final: anchor a new tree head instead."
        )
