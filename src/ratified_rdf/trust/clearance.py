"""Clearance levels and what an answer may say about evidence above the caller's level.

Every piece of evidence carries a :class:`Clearance` level, and so does every caller. A caller
reads evidence at or below its own level (:func:`can_read`, :func:`readable_levels`). What an
answer says about the evidence it withheld is the :class:`RedactionPolicy`: by default nothing
at all, since even "three more sources exist" leaks that a topic is discussed at a higher level.
"""

from __future__ import annotations

from enum import Enum, StrEnum
from typing import Final

from ratified_rdf._errors import InputError

_SHOWN_INPUT_LENGTH: Final = 32
"""How much of an unknown level or policy name an error repeats: enough to spot a typo."""


class ClearanceError(InputError):
    """A clearance level or a redaction policy could not be parsed."""


def _shown(text: str) -> str:
    # repr() escapes control characters, so a hostile name cannot forge log lines; the cap
    # keeps a megabyte of junk out of the message.
    if len(text) > _SHOWN_INPUT_LENGTH:
        return repr(text[:_SHOWN_INPUT_LENGTH]) + "..."
    return repr(text)


def _parse_name(text: object, what: str, names: tuple[str, ...]) -> str:
    """The member name ``text`` spells (ASCII, any case, surrounding whitespace ignored)."""
    listed = ", ".join(names)
    if not isinstance(text, str):
        raise ClearanceError(f"A {what} must be a string, one of: {listed}.")
    # ASCII only: str.lower() folds some non-ASCII letters onto ASCII ones (KELVIN SIGN -> k).
    name = text.strip().lower() if text.isascii() else ""
    if name not in names:
        raise ClearanceError(f"Unknown {what} {_shown(text)}; valid values are: {listed}.")
    return name


class Clearance(Enum):
    """How sensitive evidence is, and how much a caller may read; ordered lowest first.

    ``public < internal < confidential < restricted``. Comparing a level with anything that is
    not a :class:`Clearance` (such as the string ``"public"``) raises ``TypeError`` rather than
    quietly comparing spellings.
    """

    PUBLIC = "public"
    """Anyone may read it."""
    INTERNAL = "internal"
    """Anyone in the organisation may read it."""
    CONFIDENTIAL = "confidential"
    """Only those who need it may read it."""
    RESTRICTED = "restricted"
    """Only named people may read it."""

    @property
    def rank(self) -> int:
        """The level's position, 0 for ``public`` up to 3 for ``restricted``."""
        return _RANKS[self]

    @classmethod
    def parse(cls, text: object) -> Clearance:
        """The level named by ``text`` (``"internal"``, ``" Confidential "``, ...).

        A :class:`Clearance` is returned as it is, like a :class:`RedactionPolicy` (a ``str``)
        is by :meth:`RedactionPolicy.parse`.

        Raises:
            ClearanceError: ``text`` names no level; the message lists the valid levels, lowest
                first, and repeats at most the first 32 characters of ``text``.
        """
        if isinstance(text, Clearance):
            return text
        return cls(_parse_name(text, "clearance level", tuple(level.value for level in cls)))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Clearance):
            return NotImplemented
        return self.rank < other.rank

    def __le__(self, other: object) -> bool:
        if not isinstance(other, Clearance):
            return NotImplemented
        return self.rank <= other.rank

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, Clearance):
            return NotImplemented
        return self.rank > other.rank

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, Clearance):
            return NotImplemented
        return self.rank >= other.rank

    def __str__(self) -> str:
        return self.value


_RANKS: Final[dict[Clearance, int]] = {level: rank for rank, level in enumerate(Clearance)}


class RedactionPolicy(StrEnum):
    """What an answer may say about evidence above the caller's clearance."""

    SILENT = "silent"
    """The default: nothing. No count, no confidence, no source; the answer reads as if the
    withheld evidence did not exist."""
    ACKNOWLEDGE = "acknowledge"
    """Opt-in: the answer may say that more evidence exists above the caller's level, but not
    how much, how strong or where from."""

    @classmethod
    def default(cls) -> RedactionPolicy:
        """:attr:`SILENT`: revealing nothing is the safe choice when nobody chose."""
        return cls.SILENT

    @classmethod
    def parse(cls, text: object) -> RedactionPolicy:
        """The policy named by ``text`` (``"silent"`` or ``"acknowledge"``, any case).

        Raises:
            ClearanceError: ``text`` names no policy; the message lists the valid policies.
        """
        return cls(_parse_name(text, "redaction policy", tuple(policy.value for policy in cls)))

    @property
    def may_acknowledge_withheld(self) -> bool:
        """Whether an answer may say that evidence was withheld (never how much)."""
        return self is RedactionPolicy.ACKNOWLEDGE


def _require_clearance(value: object, name: str) -> Clearance:
    # A string here is a caller bug, and guessing what it meant would be a guess about access.
    if not isinstance(value, Clearance):
        raise TypeError(f"{name} must be a Clearance, not {type(value).__name__}.")
    return value


def readable_levels(clearance: Clearance) -> tuple[Clearance, ...]:
    """The levels a caller with ``clearance`` may read, lowest first.

    Raises:
        TypeError: ``clearance`` is not a :class:`Clearance`.
    """
    held = _require_clearance(clearance, "clearance")
    return tuple(level for level in Clearance if level <= held)


def can_read(clearance: Clearance, level: Clearance) -> bool:
    """Whether a caller with ``clearance`` may read evidence at ``level``.

    Raises:
        TypeError: either argument is not a :class:`Clearance`.
    """
    held = _require_clearance(clearance, "clearance")
    return _require_clearance(level, "level") <= held
