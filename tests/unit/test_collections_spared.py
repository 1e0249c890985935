"""A build spares its long-lived objects the garbage collector's full passes
(:func:`ratified_rdf._memory.collections_spared`), without keeping what it lets go of."""

from __future__ import annotations

import gc
import weakref

from ratified_rdf._memory import collections_spared, thaw


class _Record:
    """A fictional record (instances of a plain class can be referred to weakly)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.partner: _Record | None = None


def test_survivors_of_a_full_collection_are_frozen_and_thawed_at_the_end() -> None:
    gc.unfreeze()
    with collections_spared():
        held = [_Record(f"record {n}") for n in range(1_000)]
        gc.collect()  # a full collection: its survivors are frozen
        frozen = gc.get_freeze_count()
        assert frozen >= len(held)
        thaw()  # as after a fork: the heap stays frozen while collections are spared
        assert gc.get_freeze_count() == frozen
    assert gc.get_freeze_count() == 0
    assert len(held) == 1_000


def test_what_is_let_go_of_is_still_freed() -> None:
    gc.unfreeze()
    with collections_spared():
        record = _Record("let go of")
        gc.collect()
        assert gc.get_freeze_count() > 0
        gone = weakref.ref(record)
        del record  # frozen, but nothing refers to it: freed at once
        assert gone() is None
        # A cycle among frozen objects waits for the block's end.
        first, second = _Record("one"), _Record("two")
        first.partner, second.partner = second, first
        gc.collect()
        cycle = weakref.ref(first)
        del first, second
        gc.collect()
        assert cycle() is not None
    gc.collect()
    assert cycle() is None
