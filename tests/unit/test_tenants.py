"""Tenant id validation: the attack corpus, the validation order, and properties over any text."""

from __future__ import annotations

import codecs
import copy
import pickle
from collections import Counter
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError

from ratified_rdf.trust import (
    DEFAULT_TENANT_ID,
    MAX_RAW_TENANT_ID_LENGTH,
    MAX_TENANT_ID_LENGTH,
    RESERVED_TENANT_IDS,
    TENANT_ID_MESSAGES,
    TENANT_ID_PATTERN,
    TenantId,
    TenantIdError,
    TenantIdRule,
    validate_tenant_id,
)
from tests.work import lines_run

ATTACKS = Path(__file__).resolve().parents[1] / "fixtures" / "tenant_attacks.txt"
FIXED_MESSAGES = frozenset(TENANT_ID_MESSAGES.values())

# The property tests write no example database: it would be a stray .hypothesis folder in the
# checkout, and a deterministic run is what a security test wants anyway. No deadline: the
# examples are short, and a huge input's work is bounded by counting (below), not by a clock.
PROPERTY = settings(max_examples=300, deadline=None, database=None)

VALID_IDS = [
    "acme",
    "a",
    "0",
    "7",
    "default",
    "public",
    "team-42",
    "a-b",
    "a--b",
    "r2d2",
    "9lives",
    "acme-corp-eu-west-1",
    "tenant-001",
    "com10",
    "lpt",
    "con1",
    "xn-abc",
    "x" * MAX_TENANT_ID_LENGTH,
    "a-" * (MAX_TENANT_ID_LENGTH // 2) + "z",
]


def load_attacks() -> list[tuple[str, str]]:
    """(expected rule, decoded payload) for every attack line in the corpus."""
    attacks = []
    for line in ATTACKS.read_text(encoding="ascii").split("\n"):
        if not line or line.startswith("#"):
            continue
        rule, payload = line.split(" ", 1)
        attacks.append((rule, codecs.decode(payload, "unicode_escape")))
    return attacks


def rejection(raw: object) -> TenantIdError:
    """The error validating ``raw`` raises; fails the test when it is accepted."""
    with pytest.raises(TenantIdError) as caught:
        validate_tenant_id(raw)
    return caught.value


def assert_does_not_echo(error: TenantIdError) -> None:
    """The error says only its rule's fixed sentence, and chains nothing that could."""
    assert str(error) in FIXED_MESSAGES
    assert str(error) == TENANT_ID_MESSAGES[error.rule] == error.message
    assert error.args == (error.message,)
    assert error.__cause__ is None
    assert error.__context__ is None


# ---------------------------------------------------------------------------------------------
# The attack corpus
# ---------------------------------------------------------------------------------------------


def test_corpus_is_plain_ascii_one_attack_a_line() -> None:
    raw = ATTACKS.read_bytes()
    assert raw.isascii()
    # Only "\n" may separate lines: anything else invisible must be written as an escape.
    assert all(byte == 0x0A or 0x20 <= byte < 0x7F for byte in raw)
    attacks = load_attacks()
    assert len(attacks) >= 150
    rules = {rule.value for rule in TenantIdRule}
    assert {rule for rule, _ in attacks} <= rules
    payloads = [payload for _, payload in attacks]
    assert len(set(payloads)) == len(payloads), "an attack is listed twice"


def test_every_attack_is_rejected_under_its_rule() -> None:
    attacks = load_attacks()
    bypasses: list[str] = []
    wrong_rule: list[tuple[str, str, str]] = []
    hits: Counter[str] = Counter()
    for expected, payload in attacks:
        try:
            validate_tenant_id(payload)
        except TenantIdError as error:
            assert_does_not_echo(error)
            hits[error.rule.value] += 1
            if error.rule.value != expected:
                wrong_rule.append((ascii(payload), expected, error.rule.value))
        else:
            bypasses.append(ascii(payload))
    print(f"\n{len(attacks)} attacks rejected, by rule: {dict(sorted(hits.items()))}")
    assert bypasses == []
    assert wrong_rule == []
    # Every rule that text can break is exercised by the corpus.
    assert set(hits) == {rule.value for rule in TenantIdRule} - {"not-a-string"}


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ("", TenantIdRule.SHAPE),
        (b"acme", TenantIdRule.NOT_A_STRING),
        (bytearray(b"acme"), TenantIdRule.NOT_A_STRING),
        (memoryview(b"acme"), TenantIdRule.NOT_A_STRING),
        (None, TenantIdRule.NOT_A_STRING),
        (42, TenantIdRule.NOT_A_STRING),
        (4.2, TenantIdRule.NOT_A_STRING),
        (True, TenantIdRule.NOT_A_STRING),
        (["acme"], TenantIdRule.NOT_A_STRING),
        ({"tenant": "acme"}, TenantIdRule.NOT_A_STRING),
    ],
)
def test_inputs_a_text_file_cannot_hold(raw: object, rule: TenantIdRule) -> None:
    error = rejection(raw)
    assert error.rule is rule
    assert_does_not_echo(error)


# ---------------------------------------------------------------------------------------------
# The order of the steps
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        # The raw bound comes before everything that walks the text.
        ("\x00" * (MAX_RAW_TENANT_ID_LENGTH + 1), TenantIdRule.TOO_LONG),
        ("%2e" * MAX_RAW_TENANT_ID_LENGTH, TenantIdRule.TOO_LONG),
        # NUL before the other control characters, raw or decoded.
        ("\x00\n", TenantIdRule.NUL),
        ("%00%0a", TenantIdRule.NUL),
        # Raw control characters before escapes the decoder would choke on.
        ("\n%c0", TenantIdRule.CONTROL_CHARACTER),
        # Malformed escapes before decoding, invalid UTF-8 while decoding.
        ("%zz%c0%ae", TenantIdRule.BAD_PERCENT_ENCODING),
        ("%c0%ae%2f", TenantIdRule.BAD_PERCENT_ENCODING),
        # Double encoding is seen before what the second decoding would reveal.
        ("%252e%252e%2f", TenantIdRule.DOUBLE_ENCODED),
        # Decoded control characters before separators.
        ("%0a%2f", TenantIdRule.CONTROL_CHARACTER),
        # Separators before dot segments: "../" is a separator problem first.
        ("..%2f", TenantIdRule.PATH_SEPARATOR),
        # A fullwidth solidus is a disguised slash first, a compatibility character second.
        ("a\uff0fb", TenantIdRule.LOOK_ALIKE),
        ("\u2025", TenantIdRule.LOOK_ALIKE),
        # Fullwidth letters are compatibility characters; Cyrillic letters are homoglyphs.
        ("\uff41\u0435", TenantIdRule.NOT_NORMALISED),
        ("\u0435", TenantIdRule.LOOK_ALIKE),
        # Length after decoding, before the shape: 64 upper-case letters are too long.
        ("A" * (MAX_TENANT_ID_LENGTH + 1), TenantIdRule.TOO_LONG),
        ("%41" * MAX_TENANT_ID_LENGTH, TenantIdRule.SHAPE),
        # The shape before reserved names: upper case is not lowered into "con".
        ("CON", TenantIdRule.SHAPE),
        ("%63%6f%6e", TenantIdRule.RESERVED),
    ],
)
def test_the_first_failing_step_names_the_rule(raw: str, rule: TenantIdRule) -> None:
    error = rejection(raw)
    assert error.rule is rule
    assert_does_not_echo(error)


def test_a_huge_input_is_rejected_before_any_work() -> None:
    # Nothing walks the text: 14 MB is refused by the very lines that refuse one character
    # too many (counted, so a loaded machine cannot make this flake).
    huge = "%c0%ae/" * 2_000_000
    error, work = lines_run(lambda: rejection(huge))
    assert error.rule is TenantIdRule.TOO_LONG
    just_over, least = lines_run(lambda: rejection("a" * (MAX_RAW_TENANT_ID_LENGTH + 1)))
    assert just_over.rule is TenantIdRule.TOO_LONG
    assert work == least


def test_a_str_subclass_is_judged_by_its_text() -> None:
    class Disguised(str):
        def __str__(self) -> str:
            return "acme"

        def __contains__(self, item: object) -> bool:
            return False

    assert rejection(Disguised("../etc")).rule is TenantIdRule.PATH_SEPARATOR


def test_decoding_errors_are_not_chained() -> None:
    # A UnicodeDecodeError would quote the offending bytes if it rode along as the context.
    error = rejection("%c0%ae%c0%ae")
    assert error.rule is TenantIdRule.BAD_PERCENT_ENCODING
    assert_does_not_echo(error)


def test_every_single_bmp_character_between_letters() -> None:
    # "a" + c + "b" is accepted exactly when c is in the allow-list's alphabet, and every
    # rejection is a TenantIdError with a fixed message.
    accepted = []
    for code in range(0x10000):
        char = chr(code)
        try:
            validate_tenant_id(f"a{char}b")
        except TenantIdError as error:
            assert str(error) in FIXED_MESSAGES
        else:
            accepted.append(char)
    assert "".join(accepted) == "-0123456789abcdefghijklmnopqrstuvwxyz"


# ---------------------------------------------------------------------------------------------
# Messages
# ---------------------------------------------------------------------------------------------


def test_every_rule_has_its_own_fixed_message() -> None:
    assert set(TENANT_ID_MESSAGES) == set(TenantIdRule)
    assert len(FIXED_MESSAGES) == len(TenantIdRule)
    for message in FIXED_MESSAGES:
        assert message.startswith("Invalid tenant id: ")
        assert "A valid tenant id is 1 to 63 lowercase ASCII letters" in message
        # Pydantic formats its messages as templates.
        assert "{" not in message
        assert "}" not in message


def test_the_error_keeps_its_rule_through_pickling() -> None:
    error = pickle.loads(pickle.dumps(TenantIdError(TenantIdRule.DOT_SEGMENT)))
    assert error.rule is TenantIdRule.DOT_SEGMENT
    assert str(error) == TENANT_ID_MESSAGES[TenantIdRule.DOT_SEGMENT]
    assert isinstance(error, ValueError)


# ---------------------------------------------------------------------------------------------
# Valid ids and the TenantId type
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", VALID_IDS)
def test_valid_ids_are_accepted_as_they_are(text: str) -> None:
    tenant = validate_tenant_id(text)
    assert type(tenant) is TenantId
    assert tenant == text
    assert str(tenant) == text
    assert type(str(tenant)) is str
    assert tenant.value == text
    assert type(tenant.value) is str
    assert validate_tenant_id(str(tenant)) == tenant
    assert TenantId(text) == tenant


@pytest.mark.parametrize("text", VALID_IDS)
def test_percent_encoded_ids_decode_to_their_canonical_form(text: str) -> None:
    every_byte = "".join(f"%{byte:02X}" for byte in text.encode())
    assert validate_tenant_id(every_byte) == text
    assert validate_tenant_id(quote(text, safe="")) == text


def test_at_least_fifteen_valid_ids() -> None:
    assert len(set(VALID_IDS)) >= 15


def test_the_default_tenant() -> None:
    tenant = TenantId.default()
    assert tenant == DEFAULT_TENANT_ID == "default"
    assert type(tenant) is TenantId


def test_tenant_id_behaves_as_its_text() -> None:
    tenant = TenantId("acme")
    assert isinstance(tenant, str)
    assert {tenant: 1}["acme"] == 1
    assert f"https://w3id.org/ratified-rdf/id/tenant/{tenant}/graph/x".count("acme") == 1
    assert repr(tenant) == "TenantId('acme')"
    assert TenantId(tenant) == tenant
    with pytest.raises(AttributeError):
        tenant.extra = 1  # type: ignore[attr-defined]


def test_tenant_id_cannot_be_built_around_validation() -> None:
    with pytest.raises(TenantIdError):
        TenantId("../etc")
    for clone in (copy.copy, copy.deepcopy, lambda t: pickle.loads(pickle.dumps(t))):
        assert type(clone(TenantId("acme"))) is TenantId


def test_reserved_ids_are_the_windows_device_names() -> None:
    assert {"con", "prn", "aux", "nul", "com0", "com9", "lpt0", "lpt9"} <= RESERVED_TENANT_IDS
    for name in RESERVED_TENANT_IDS:
        assert rejection(name).rule is TenantIdRule.RESERVED


# ---------------------------------------------------------------------------------------------
# Pydantic
# ---------------------------------------------------------------------------------------------


class Request(BaseModel):
    """A model that reads a tenant id from untrusted input, configured as documented."""

    model_config = ConfigDict(hide_input_in_errors=True)

    tenant: TenantId


def test_pydantic_validates_and_serialises_as_a_string() -> None:
    request = Request.model_validate_json('{"tenant": "acme"}')
    assert type(request.tenant) is TenantId
    assert request.model_dump() == {"tenant": "acme"}
    assert request.model_dump_json() == '{"tenant":"acme"}'


def test_pydantic_rejects_with_the_rule_and_without_the_input() -> None:
    hostile = "..%2fsecret-tenant"
    with pytest.raises(ValidationError) as caught:
        Request(tenant=hostile)  # type: ignore[arg-type]
    (error,) = caught.value.errors(include_input=False)
    assert error["type"] == "tenant_id"
    assert error["ctx"] == {"rule": "path-separator"}
    assert error["msg"] == TENANT_ID_MESSAGES[TenantIdRule.PATH_SEPARATOR]
    assert "secret" not in str(caught.value)


def test_pydantic_does_not_coerce_bytes_or_numbers() -> None:
    adapter = TypeAdapter(TenantId)
    for raw in (b"acme", 7):
        with pytest.raises(ValidationError) as caught:
            adapter.validate_python(raw)
        assert caught.value.errors()[0]["ctx"] == {"rule": "not-a-string"}


def test_pydantic_json_schema_is_the_allow_list() -> None:
    schema = TypeAdapter(TenantId).json_schema()
    assert schema == {
        "type": "string",
        "pattern": TENANT_ID_PATTERN.pattern,
        "minLength": 1,
        "maxLength": MAX_TENANT_ID_LENGTH,
    }


# ---------------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------------

# Characters that exercise every step: escapes, separators, dots, look-alikes, controls.
HOSTILE_ALPHABET = [
    *"abcxyz019-%2eEfF5cC0aA/\\.%",
    *("\x00", "\n", " ", "\u202e", "\u200b", "\ud800"),
    # fullwidth solidus, division slash, one dot leader, Cyrillic e, dotless i, fi ligature,
    # Arabic-Indic one, superscript two
    *("\uff0f", "\u2215", "\u2024", "\u0435", "\u0131", "\ufb01", "\u0661", "\u00b2"),
]


def check(raw: object) -> None:
    """The property every input must have: a canonical id that is a fixed point, or a
    TenantIdError with a fixed message, and nothing else."""
    try:
        tenant = validate_tenant_id(raw)
    except TenantIdError as error:
        assert_does_not_echo(error)
        return
    assert type(tenant) is TenantId
    assert TENANT_ID_PATTERN.fullmatch(tenant)
    assert len(tenant) <= MAX_TENANT_ID_LENGTH
    assert tenant not in RESERVED_TENANT_IDS
    again = validate_tenant_id(str(tenant))
    assert again == tenant
    assert type(again) is TenantId


@PROPERTY
@given(st.text(max_size=MAX_RAW_TENANT_ID_LENGTH + 8))
def test_any_text_is_a_valid_id_or_a_tenant_id_error(raw: str) -> None:
    check(raw)


@PROPERTY
@given(st.text(alphabet=st.sampled_from(HOSTILE_ALPHABET), max_size=40))
def test_hostile_text_is_a_valid_id_or_a_tenant_id_error(raw: str) -> None:
    check(raw)


@PROPERTY
@given(st.binary(max_size=24))
def test_any_percent_encoded_bytes_are_a_valid_id_or_a_tenant_id_error(data: bytes) -> None:
    check("".join(f"%{byte:02x}" for byte in data))
    check("".join(f"%25{byte:02x}" for byte in data))


@pytest.mark.slow
@PROPERTY
@given(st.from_regex(TENANT_ID_PATTERN, fullmatch=True))
def test_every_slug_of_the_allow_list_is_accepted_unless_reserved(slug: str) -> None:
    try:
        tenant = validate_tenant_id(slug)
    except TenantIdError as error:
        assert error.rule is TenantIdRule.RESERVED
        assert slug in RESERVED_TENANT_IDS or slug[2:4] == "--"
    else:
        assert tenant == slug
        assert validate_tenant_id(quote(slug, safe="")) == tenant


@PROPERTY
@given(st.one_of(st.none(), st.integers(), st.floats(), st.binary(), st.lists(st.text())))
def test_non_strings_are_never_accepted(raw: object) -> None:
    assert rejection(raw).rule is TenantIdRule.NOT_A_STRING
