"""Tenant ids: the one gate every tenant id passes before it names a graph or a directory.

A tenant id arrives from untrusted places (HTTP headers, query strings, CLI flags, MCP tool
arguments) and ends up inside named-graph IRIs
(``https://w3id.org/ratified-rdf/id/tenant/<tenant>/graph/...``) and directory names. So there
is exactly one way to get a :class:`TenantId`: :func:`validate_tenant_id` (``TenantId(raw)``
calls it). It runs these steps in this fixed order and stops at the first that fails:

1. ``not-a-string``: the input is not a ``str`` (bytes, ``None``, numbers, ...).
2. ``too-long``: the input as received is longer than :data:`MAX_RAW_TENANT_ID_LENGTH`
   characters. This bounds the work of every later step.
3. ``nul``: the input contains U+0000.
4. ``control-character``: the input contains a control, format (zero-width, bidi override),
   surrogate, private-use, unassigned, whitespace or invisible character.
5. ``bad-percent-encoding``: a ``%`` is not followed by two hex digits.
6. Percent-decode exactly once (UTF-8, strict); ``bad-percent-encoding`` when the bytes are not
   valid UTF-8 (overlong forms such as ``%c0%ae``, encoded surrogates, stray bytes).
7. ``nul``: the decoded text contains U+0000 (``%00``).
8. ``double-encoded``: the decoded text still holds a ``%XX`` escape (``%252e``).
9. ``control-character``: as step 4, on the decoded text (``%0d%0a``, ``%e2%80%ae``).
10. ``path-separator``: the decoded text contains ``/`` or ``\\``.
11. ``dot-segment``: the decoded text is ``.`` or contains ``..``.
12. ``look-alike``: a character imitates a slash, a backslash, a dot or a hyphen (fullwidth
    solidus, division slash, one-dot leader, ideographic full stop, en dash, ...).
13. ``not-normalised``: NFKC normalisation would change the text (fullwidth letters,
    ligatures, superscripts, decomposed accents).
14. ``look-alike``: a character imitates an ASCII letter or digit (Cyrillic ``е``, Greek
    ``ο``, dotless ``ı``, accented letters, non-ASCII digits, combining marks).
15. ``too-long``: the decoded text is longer than :data:`MAX_TENANT_ID_LENGTH` characters.
16. ``shape``: the decoded text does not match :data:`TENANT_ID_PATTERN`, a DNS-label-like slug
    of lowercase ASCII letters, digits and inner hyphens.
17. ``reserved``: the id is in :data:`RESERVED_TENANT_IDS` (Windows device names) or has ``--``
    in its third and fourth places (``xn--`` punycode and the other reserved DNS label forms).

Percent-decoding is the only transformation: every check after step 6 looks at the same decoded
text, which is also the value a successful validation returns. Normalisation is a check, not a
rewrite. A legitimate id is plain ASCII, so a character that NFKC would change is a disguise,
and quietly folding it would let two different inputs name one tenant. NFKC output is always in
NFC, so the one NFKC comparison also rejects text that NFC alone would change. Upper case is
rejected at step 16, not lowered, for the same reason: an id has one spelling.

Steps 12 to 14 only decide which rule a hostile id is reported under; the allow-list at step 16
admits nothing but ``[a-z0-9-]`` whatever the earlier steps miss. Structural look-alikes
(step 12) are named before normalisation because a fullwidth solidus is better reported as a
disguised slash than as a compatibility character.

Pass the value as the HTTP framework, CLI parser or MCP runtime hands it over: if that layer
already percent-decoded it, step 6 is a second decoding of what was on the wire. That only
widens which spellings reach the same id; what comes out is always the decoded, checked text.

Errors never repeat the input, not even its length: a :class:`TenantIdError` carries a fixed
message per rule (:data:`TENANT_ID_MESSAGES`) and a machine-readable :attr:`TenantIdError.rule`.
"""

from __future__ import annotations

import re
import unicodedata
from enum import StrEnum
from typing import Any, Final, final
from urllib.parse import unquote

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, PydanticCustomError, core_schema

from ratified_rdf._errors import InputError

MAX_TENANT_ID_LENGTH: Final = 63
"""Longest tenant id, in characters after percent-decoding (a DNS label's limit)."""

MAX_RAW_TENANT_ID_LENGTH: Final = 4 * MAX_TENANT_ID_LENGTH
"""Longest input accepted before decoding.

A valid id is ASCII, so even fully percent-encoded it takes at most three characters per
character of the id (189); anything longer cannot decode to a valid id and is not worth
decoding.
"""

TENANT_ID_PATTERN: Final = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
"""The allow-list: a DNS-label-like slug of lowercase ASCII letters, digits and inner hyphens.

Always applied with ``fullmatch``: on its own, ``$`` also matches before a trailing newline.
"""

DEFAULT_TENANT_ID: Final = "default"
"""The tenant of a single-tenant brain (see :meth:`TenantId.default`)."""

RESERVED_TENANT_IDS: Final = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{digit}" for digit in range(10)}
    | {f"lpt{digit}" for digit in range(10)}
)
"""Windows device names: a directory named after one cannot be created or opened on Windows."""


class TenantIdRule(StrEnum):
    """The rule a rejected tenant id broke, in the order the rules are checked."""

    NOT_A_STRING = "not-a-string"
    TOO_LONG = "too-long"
    NUL = "nul"
    CONTROL_CHARACTER = "control-character"
    BAD_PERCENT_ENCODING = "bad-percent-encoding"
    DOUBLE_ENCODED = "double-encoded"
    PATH_SEPARATOR = "path-separator"
    DOT_SEGMENT = "dot-segment"
    LOOK_ALIKE = "look-alike"
    NOT_NORMALISED = "not-normalised"
    SHAPE = "shape"
    RESERVED = "reserved"


_VALID_SHAPE = (
    f"A valid tenant id is 1 to {MAX_TENANT_ID_LENGTH} lowercase ASCII letters, digits and"
    " inner hyphens, such as 'acme' or 'team-42'."
)

TENANT_ID_MESSAGES: Final[dict[TenantIdRule, str]] = {
    rule: f"Invalid tenant id: {reason}. {_VALID_SHAPE}"
    for rule, reason in {
        TenantIdRule.NOT_A_STRING: "it is not a text string",
        TenantIdRule.TOO_LONG: (
            f"it is longer than {MAX_TENANT_ID_LENGTH} characters after percent-decoding, or"
            f" longer than {MAX_RAW_TENANT_ID_LENGTH} characters as received"
        ),
        TenantIdRule.NUL: "it contains a NUL character",
        TenantIdRule.CONTROL_CHARACTER: (
            "it contains a control, format, whitespace, invisible, private-use, unassigned or"
            " surrogate character"
        ),
        TenantIdRule.BAD_PERCENT_ENCODING: (
            "it contains a malformed percent-escape, or percent-escapes that are not valid UTF-8"
        ),
        TenantIdRule.DOUBLE_ENCODED: "it is still percent-encoded after decoding once",
        TenantIdRule.PATH_SEPARATOR: "it contains a path separator (a slash or a backslash)",
        TenantIdRule.DOT_SEGMENT: "it is a dot segment or contains two dots in a row",
        TenantIdRule.LOOK_ALIKE: (
            "it contains a character that imitates a slash, a dot, a hyphen, an ASCII letter or"
            " a digit (a homoglyph, a non-ASCII digit or a combining mark)"
        ),
        TenantIdRule.NOT_NORMALISED: (
            "it contains a compatibility character (such as a fullwidth letter, a ligature or a"
            " superscript) that Unicode NFKC normalisation would change"
        ),
        TenantIdRule.SHAPE: (
            "it is not a lowercase slug that starts and ends with a letter or a digit"
        ),
        TenantIdRule.RESERVED: (
            "it is reserved (a Windows device name such as 'con', 'nul' or 'com1', or a label"
            " with two hyphens in its third and fourth places such as 'xn--')"
        ),
    }.items()
}
"""The fixed message of every rule; no message ever includes anything from the input."""


class TenantIdError(InputError):
    """A tenant id was rejected; :attr:`rule` says which rule it broke.

    The message is the rule's fixed sentence from :data:`TENANT_ID_MESSAGES`. The constructor
    takes only the rule, so no caller can put the rejected input into the message.
    """

    def __init__(self, rule: TenantIdRule) -> None:
        self.rule: TenantIdRule = rule
        self.message: str = TENANT_ID_MESSAGES[rule]
        super().__init__(self.message)

    def __reduce__(self) -> tuple[type[TenantIdError], tuple[TenantIdRule]]:
        # The default reduction would call the constructor with the message, not the rule.
        return (type(self), (self.rule,))


# ---------------------------------------------------------------------------------------------
# Character classes
# ---------------------------------------------------------------------------------------------

_MALFORMED_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")

# Default-ignorable or blank code points that Unicode files under letters, marks or symbols
# rather than under C*/Z*: they render as nothing (or as blank space), so they can hide inside
# an id that looks legitimate.
_INVISIBLE: Final = frozenset(
    "\u034f"  # COMBINING GRAPHEME JOINER
    "\u115f\u1160\u3164\uffa0"  # Hangul fillers
    "\u17b4\u17b5"  # Khmer inherent vowels
    "\u180b\u180c\u180d\u180f"  # Mongolian free variation selectors
    "\u2800"  # BRAILLE PATTERN BLANK
    "\U0001d159"  # MUSICAL SYMBOL NULL NOTEHEAD
)
_VARIATION_SELECTORS: Final = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))

# Characters that imitate the characters that give a path or an IRI structure, or the hyphen
# of the allow-list. Drawn from Unicode's confusables for '/', '\\', '.' and '-'; characters
# whose NFKC form contains one of these, or any dash punctuation (Pd), count as well.
_STRUCTURAL_LOOK_ALIKES: Final = frozenset(
    # '/'
    "\u0337\u0338\u20eb"  # combining short, long and long double solidus overlays
    "\u2044\u2215\u2571\u27cb\u29f6\u29f8\u2afb\u2afd\u2e4a\uff0f"
    "\u2cc6\u3033\u30ce\u31d3\u4e3f\ua718\U0001d23a\U0001f67c"
    # '\\'
    "\u20e5"  # combining reverse solidus overlay
    "\u2216\u2572\u27cd\u29f5\u29f7\u29f9\ufe68\uff3c"
    "\u244a\u31d4\u4e36\U0001d20f\U0001d23b\U0001f67d"
    # '.'
    "\u00b7\u0387\u0589\u0660\u06d4\u06f0\u0701\u0702\u0e2f\u1362\u1803\u1809"
    "\u2024\u2025\u2026\u2027\u2219\u22c5\u22ee\u22ef\u2cf9\u2cfe\u2e31\u2e3c"
    "\u3002\u30fb\ua4f8\ua4ff\ua60e\ufe12\ufe19\ufe30\ufe52\uff0e\uff61\uff65"
    "\U00010a50\U0001d16d"
    # '-'
    "\u02d7\u1428\u2043\u208b\u207b\u2212\u23af\u2500\u2796\u2cba\u30fc\u3161\u4e00"
)
_STRUCTURE: Final = frozenset("/\\.-")

# Letters and symbols that imitate ASCII letters and digits and that NFKC leaves alone (so
# step 13 does not already catch them), keyed by what they imitate. Drawn from Unicode's
# confusables; mostly Cyrillic, Greek, Armenian, Cherokee, Coptic and Lisu.
_LETTER_LOOK_ALIKES_BY_TARGET: Final[dict[str, str]] = {
    "a": "\u0430\u03b1\u0251\u237a\u0410\u0391\u13aa\ua4ee",
    "b": "\u0185\u042c\u13cf\u0412\u0392\u13f4\ua4d0",
    "c": "\u0441\u1d04\u2ca5\u0421\u13df\ua4da",
    "d": "\u0501\u13e7\u13a0\ua4d3",
    "e": "\u0435\u04bd\u0415\u0395\u13ac\ua4f0\u212e",
    "f": "\u0192\ua4dd\u03dc",
    "g": "\u0261\u0581\u050c\u13c0\ua4d6",
    "h": "\u04bb\u0570\u13c2\u041d\u0397\u13bb\ua4e7",
    "i": "\u0456\u0131\u03b9\u0269\u026a\u0406\u0399\u04c0\ua4f2\u2373",
    "j": "\u0458\u03f3\u0237\u0408\u13ab\ua4d9\u037f",
    "k": "\u03ba\u043a\u041a\u039a\u13e6\ua4d7\u2c94",
    "l": "\u04cf\u01c0\u05c0\u05d5\u0627\u07ca\u2c92\ua4e1\u13de",
    "m": "\u041c\u039c\u13b7\ua4df",
    "n": "\u0578\u057c\u039d\ua4e0\u0274",
    "o": "\u043e\u03bf\u0585\u2c9f\u101d\u10ff\u041e\u039f\u0555\u2c9e\ua4f3\u1d0f",
    "p": "\u0440\u03c1\u2ca3\u0420\u03a1\u13e2\ua4d1",
    "q": "\u051b\u0563\u0566\u051a",
    "r": "\u0433\u1d26\u2c85\ua4e3\u13a1",
    "s": "\u0455\u01bd\u0405\u13da\ua4e2",
    "t": "\u03c4\u0422\u03a4\u13a2\ua4d4",
    "u": "\u03c5\u057d\u1d1c\ua4f4\u054d",
    "v": "\u03bd\u0475\u05d8\u1d20\u2228\ua4e6\u13d9\u0474",
    "w": "\u051d\u0461\u0561\u1d21\u051c\u13b3\ua4ea",
    "x": "\u0445\u03c7\u0425\u03a7\u2cad\ua4eb\u2573\u00d7",
    "y": "\u0443\u04af\u03b3\u028f\u0423\u03a5\u04ae\u13a9\ua4ec",
    "z": "\u1d22\u0396\u13c3\ua4dc",
    "2": "\u01a7\u03e8\ua644",
    "3": "\u01b7\u021c\u0417\u04e0\u2ccc\ua76a",
    "4": "\u13ce",
    "5": "\u01bc",
    "6": "\u0431\u13ee\u2cd2",
    "7": "\u13ed",
    "8": "\u0222\u0223",
    "9": "\u2cca",
}
_LETTER_LOOK_ALIKES: Final = frozenset("".join(_LETTER_LOOK_ALIKES_BY_TARGET.values()))


def _is_control(char: str) -> bool:
    if char.isspace():
        return True
    category = unicodedata.category(char)
    if category[0] == "C" or category in ("Zs", "Zl", "Zp") or char in _INVISIBLE:
        return True
    code = ord(char)
    return any(low <= code <= high for low, high in _VARIATION_SELECTORS)


def _imitates_structure(char: str) -> bool:
    if char.isascii():
        return False
    if char in _STRUCTURAL_LOOK_ALIKES or unicodedata.category(char) == "Pd":
        return True
    folded = unicodedata.normalize("NFKC", char)
    return any(c in _STRUCTURE or c in _STRUCTURAL_LOOK_ALIKES for c in folded)


def _imitates_letter_or_digit(char: str) -> bool:
    if char.isascii():
        return False
    category = unicodedata.category(char)
    # Any digit outside ASCII: str.isdigit(), int() and an unflagged \d all accept them.
    if char in _LETTER_LOOK_ALIKES or category == "Nd" or category[0] == "M":
        return True
    # An accented Latin letter imitates its base letter ('á' for 'a').
    base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
    return base.isascii() and base.isalnum()


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------


def validate_tenant_id(raw: object) -> TenantId:
    """Validate an untrusted tenant id and return it as a :class:`TenantId`.

    The steps run in this order; the first that fails raises :class:`TenantIdError` with that
    step's rule (the module docstring explains each):

    1. ``not-a-string``: ``raw`` is not a ``str``.
    2. ``too-long``: ``raw`` has more than :data:`MAX_RAW_TENANT_ID_LENGTH` characters.
    3. ``nul``: ``raw`` contains U+0000.
    4. ``control-character``: ``raw`` contains a control, format, whitespace or invisible
       character, a lone surrogate, a private-use or an unassigned code point.
    5. ``bad-percent-encoding``: ``raw`` has a ``%`` not followed by two hex digits.
    6. Percent-decode once as strict UTF-8; ``bad-percent-encoding`` on invalid UTF-8.
    7. ``nul``: the decoded text contains U+0000.
    8. ``double-encoded``: the decoded text still contains a ``%XX`` escape.
    9. ``control-character``: as step 4, on the decoded text.
    10. ``path-separator``: the decoded text contains ``/`` or ``\\``.
    11. ``dot-segment``: the decoded text is ``.`` or contains ``..``.
    12. ``look-alike``: a character imitates ``/``, ``\\``, ``.`` or ``-``.
    13. ``not-normalised``: NFKC would change the decoded text (no folding: it is rejected).
    14. ``look-alike``: a character imitates an ASCII letter or digit.
    15. ``too-long``: the decoded text has more than :data:`MAX_TENANT_ID_LENGTH` characters.
    16. ``shape``: the decoded text does not fully match :data:`TENANT_ID_PATTERN` (upper case
        is rejected, not lowered).
    17. ``reserved``: a Windows device name, or ``--`` in the third and fourth places.

    Args:
        raw: the tenant id as received, possibly percent-encoded once.

    Returns:
        The decoded id; validating ``str()`` of it again returns an equal id.

    Raises:
        TenantIdError: with the rule of the first failing step and that rule's fixed message.
    """
    # 1. Only text can be checked; bytes would need a guess at their encoding.
    if not isinstance(raw, str):
        raise TenantIdError(TenantIdRule.NOT_A_STRING)
    # A str subclass may override its methods; check the plain text it stands for.
    text = str.__str__(raw)
    # 2. A cheap bound before anything walks the text.
    if len(text) > MAX_RAW_TENANT_ID_LENGTH:
        raise TenantIdError(TenantIdRule.TOO_LONG)
    # 3-5. What the decoder would see; a raw control character survives decoding anyway.
    if "\x00" in text:
        raise TenantIdError(TenantIdRule.NUL)
    if any(_is_control(c) for c in text):
        raise TenantIdError(TenantIdRule.CONTROL_CHARACTER)
    if _MALFORMED_ESCAPE.search(text):
        raise TenantIdError(TenantIdRule.BAD_PERCENT_ENCODING)
    # 6. The raise stays outside the except block: chained onto the TenantIdError, the
    # UnicodeDecodeError would quote the offending bytes in every traceback.
    decoded: str | None
    try:
        decoded = unquote(text, errors="strict")
    except UnicodeDecodeError:
        decoded = None
    if decoded is None:
        raise TenantIdError(TenantIdRule.BAD_PERCENT_ENCODING)
    text = decoded
    # 7-11. From here on every step sees the text that would be returned.
    if "\x00" in text:
        raise TenantIdError(TenantIdRule.NUL)
    if _ESCAPE.search(text):
        raise TenantIdError(TenantIdRule.DOUBLE_ENCODED)
    if any(_is_control(c) for c in text):
        raise TenantIdError(TenantIdRule.CONTROL_CHARACTER)
    if "/" in text or "\\" in text:
        raise TenantIdError(TenantIdRule.PATH_SEPARATOR)
    if text == "." or ".." in text:
        raise TenantIdError(TenantIdRule.DOT_SEGMENT)
    # 12-14. Disguises: named for what they imitate, before and after normalisation.
    if any(_imitates_structure(c) for c in text):
        raise TenantIdError(TenantIdRule.LOOK_ALIKE)
    if not unicodedata.is_normalized("NFKC", text):
        raise TenantIdError(TenantIdRule.NOT_NORMALISED)
    if any(_imitates_letter_or_digit(c) for c in text):
        raise TenantIdError(TenantIdRule.LOOK_ALIKE)
    # 15-17. The allow-list proper.
    if len(text) > MAX_TENANT_ID_LENGTH:
        raise TenantIdError(TenantIdRule.TOO_LONG)
    if not TENANT_ID_PATTERN.fullmatch(text):
        raise TenantIdError(TenantIdRule.SHAPE)
    if text in RESERVED_TENANT_IDS or text[2:4] == "--":
        raise TenantIdError(TenantIdRule.RESERVED)
    return TenantId._trusted(text)


@final
class TenantId(str):
    """A validated tenant id: a ``str`` that only :func:`validate_tenant_id` produces.

    ``TenantId(raw)`` validates ``raw`` exactly like :func:`validate_tenant_id`, so a function
    that takes a ``TenantId`` can interpolate it into an IRI or a path as it is, and a type
    checker refuses a plain ``str`` there. It compares, hashes and formats as its text;
    :attr:`value` is the same text as a plain ``str``.

    As a pydantic field type it accepts a string, validates it, and serialises as the string.
    Pydantic's ``ValidationError`` repeats the input it rejected: a model that reads tenant ids
    from untrusted input should set ``hide_input_in_errors=True`` and log
    ``errors(include_input=False)``. The error's type is ``tenant_id`` and its context carries
    the rule.
    """

    __slots__ = ()

    def __new__(cls, raw: object) -> TenantId:
        """Validate ``raw`` (see :func:`validate_tenant_id`)."""
        return validate_tenant_id(raw)

    @classmethod
    def _trusted(cls, text: str) -> TenantId:
        # Only validate_tenant_id calls this, with text that passed every step.
        return str.__new__(cls, text)

    @classmethod
    def default(cls) -> TenantId:
        """The tenant of a single-tenant brain: ``default``.

        Not ``public``: that word already names the lowest clearance level, and a tenant is
        not a clearance.
        """
        return validate_tenant_id(DEFAULT_TENANT_ID)

    @property
    def value(self) -> str:
        """The id as a plain ``str``."""
        return str.__str__(self)

    def __repr__(self) -> str:
        return f"TenantId({str.__repr__(self)})"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        """Validate with :func:`validate_tenant_id`; serialise as the plain string."""
        return core_schema.no_info_plain_validator_function(
            _validate_for_pydantic, serialization=core_schema.to_string_ser_schema()
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """A string matching :data:`TENANT_ID_PATTERN`."""
        return {
            "type": "string",
            "pattern": TENANT_ID_PATTERN.pattern,
            "minLength": 1,
            "maxLength": MAX_TENANT_ID_LENGTH,
        }


def _validate_for_pydantic(raw: object) -> TenantId:
    try:
        return validate_tenant_id(raw)
    except TenantIdError as error:
        rule = error.rule
    # Raised outside the except block so the TenantIdError is not chained onto it.
    raise PydanticCustomError("tenant_id", TENANT_ID_MESSAGES[rule], {"rule": rule.value})
