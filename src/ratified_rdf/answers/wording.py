"""Small pieces of card wording shared by the answer modules."""

from __future__ import annotations


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """``1 post``, ``2 posts``, ``1,250 commits``, ``1 person``, ``2 people``."""
    return f"{count:,} " + (noun if count == 1 else plural_form or f"{noun}s")


__all__ = ["plural"]
