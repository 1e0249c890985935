"""Clearance levels: their order, parsing, who reads what, and the redaction policies."""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable

import pytest
from pydantic import BaseModel, ValidationError

from ratified_rdf.trust import (
    Clearance,
    ClearanceError,
    RedactionPolicy,
    can_read,
    readable_levels,
)

LOWEST_FIRST = [
    Clearance.PUBLIC,
    Clearance.INTERNAL,
    Clearance.CONFIDENTIAL,
    Clearance.RESTRICTED,
]


# ---------------------------------------------------------------------------------------------
# Order
# ---------------------------------------------------------------------------------------------


def test_levels_are_declared_lowest_first() -> None:
    assert list(Clearance) == LOWEST_FIRST
    assert [level.value for level in Clearance] == [
        "public",
        "internal",
        "confidential",
        "restricted",
    ]
    assert [level.rank for level in Clearance] == [0, 1, 2, 3]


def test_public_internal_confidential_restricted() -> None:
    assert Clearance.PUBLIC < Clearance.INTERNAL < Clearance.CONFIDENTIAL < Clearance.RESTRICTED
    assert Clearance.RESTRICTED > Clearance.CONFIDENTIAL > Clearance.INTERNAL > Clearance.PUBLIC
    # Alphabetical order would put confidential below internal.
    assert Clearance.CONFIDENTIAL > Clearance.INTERNAL
    assert sorted(reversed(LOWEST_FIRST)) == LOWEST_FIRST
    assert max(Clearance) is Clearance.RESTRICTED
    assert min(Clearance) is Clearance.PUBLIC


@pytest.mark.parametrize(("a", "b"), list(itertools.product(LOWEST_FIRST, repeat=2)))
def test_comparisons_agree_with_rank(a: Clearance, b: Clearance) -> None:
    assert (a < b) == (a.rank < b.rank)
    assert (a <= b) == (a.rank <= b.rank)
    assert (a > b) == (a.rank > b.rank)
    assert (a >= b) == (a.rank >= b.rank)
    assert (a == b) == (a.rank == b.rank)


@pytest.mark.parametrize("op", [operator.lt, operator.le, operator.gt, operator.ge])
@pytest.mark.parametrize("other", ["public", "restricted", 0, 3, None])
def test_levels_do_not_compare_with_other_types(
    op: Callable[[object, object], bool], other: object
) -> None:
    with pytest.raises(TypeError):
        op(Clearance.INTERNAL, other)
    with pytest.raises(TypeError):
        op(other, Clearance.INTERNAL)


def test_a_level_is_not_its_name() -> None:
    assert Clearance.PUBLIC != "public"
    assert str(Clearance.CONFIDENTIAL) == "confidential"


# ---------------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("public", Clearance.PUBLIC),
        ("internal", Clearance.INTERNAL),
        ("confidential", Clearance.CONFIDENTIAL),
        ("restricted", Clearance.RESTRICTED),
        ("Confidential", Clearance.CONFIDENTIAL),
        ("RESTRICTED", Clearance.RESTRICTED),
        (" internal\n", Clearance.INTERNAL),
    ],
)
def test_parse(text: str, level: Clearance) -> None:
    assert Clearance.parse(text) is level


@pytest.mark.parametrize(
    "text",
    ["", "secret", "top-secret", "publik", "0", "PUBLIC!", "pub lic", "int\u0435rnal"],
)
def test_parse_lists_the_valid_levels_lowest_first(text: str) -> None:
    with pytest.raises(ClearanceError) as caught:
        Clearance.parse(text)
    message = str(caught.value)
    assert "public, internal, confidential, restricted" in message
    assert repr(text) in message
    assert isinstance(caught.value, ValueError)


def test_parse_caps_what_it_repeats_and_escapes_it() -> None:
    hostile = "x\r\nX-Forged: 1 " + "y" * 10_000
    with pytest.raises(ClearanceError) as caught:
        Clearance.parse(hostile)
    message = str(caught.value)
    assert len(message) < 200
    assert "\r" not in message
    assert "\n" not in message
    assert "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" not in message


def test_parse_does_not_fold_non_ascii_onto_a_level() -> None:
    # "ſ".upper() is "S" and KELVIN SIGN lowers to "k": neither may spell a level.
    for text in ("re\u017ftricted", "RE\u017fTRICTED", "conﬁdential"):
        with pytest.raises(ClearanceError):
            Clearance.parse(text)


@pytest.mark.parametrize("raw", [None, 1, b"public", ["public"]])
def test_parse_wants_a_string(raw: object) -> None:
    with pytest.raises(ClearanceError) as caught:
        Clearance.parse(raw)
    assert "public, internal, confidential, restricted" in str(caught.value)


def test_parse_returns_a_level_as_it_is() -> None:
    for level in Clearance:
        assert Clearance.parse(level) is level
    for policy in RedactionPolicy:
        assert RedactionPolicy.parse(policy) is policy


def test_pydantic_reads_levels_by_value() -> None:
    class Caller(BaseModel):
        clearance: Clearance

    assert Caller.model_validate_json('{"clearance": "internal"}').clearance is Clearance.INTERNAL
    assert Caller(clearance=Clearance.RESTRICTED).model_dump_json() == '{"clearance":"restricted"}'
    with pytest.raises(ValidationError):
        Caller.model_validate_json('{"clearance": "secret"}')


# ---------------------------------------------------------------------------------------------
# Who reads what
# ---------------------------------------------------------------------------------------------


def test_readable_levels() -> None:
    assert readable_levels(Clearance.PUBLIC) == (Clearance.PUBLIC,)
    assert readable_levels(Clearance.INTERNAL) == (Clearance.PUBLIC, Clearance.INTERNAL)
    assert readable_levels(Clearance.CONFIDENTIAL) == (
        Clearance.PUBLIC,
        Clearance.INTERNAL,
        Clearance.CONFIDENTIAL,
    )
    assert readable_levels(Clearance.RESTRICTED) == tuple(LOWEST_FIRST)


@pytest.mark.parametrize(("clearance", "level"), list(itertools.product(LOWEST_FIRST, repeat=2)))
def test_can_read_exactly_the_readable_levels(clearance: Clearance, level: Clearance) -> None:
    assert can_read(clearance, level) == (level in readable_levels(clearance))
    assert can_read(clearance, level) == (
        LOWEST_FIRST.index(level) <= LOWEST_FIRST.index(clearance)
    )


def test_nobody_reads_above_their_level() -> None:
    assert not can_read(Clearance.PUBLIC, Clearance.INTERNAL)
    assert not can_read(Clearance.CONFIDENTIAL, Clearance.RESTRICTED)
    assert can_read(Clearance.RESTRICTED, Clearance.PUBLIC)
    assert can_read(Clearance.INTERNAL, Clearance.INTERNAL)


@pytest.mark.parametrize("wrong", ["restricted", 3, None])
def test_access_checks_refuse_anything_but_a_level(wrong: object) -> None:
    with pytest.raises(TypeError):
        readable_levels(wrong)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        can_read(wrong, Clearance.PUBLIC)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        can_read(Clearance.RESTRICTED, wrong)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Redaction policies
# ---------------------------------------------------------------------------------------------


def test_silent_is_the_default_and_acknowledge_is_opt_in() -> None:
    assert RedactionPolicy.default() is RedactionPolicy.SILENT
    assert [policy.value for policy in RedactionPolicy] == ["silent", "acknowledge"]
    assert not RedactionPolicy.SILENT.may_acknowledge_withheld
    assert RedactionPolicy.ACKNOWLEDGE.may_acknowledge_withheld


def test_parse_a_policy() -> None:
    assert RedactionPolicy.parse("silent") is RedactionPolicy.SILENT
    assert RedactionPolicy.parse(" Acknowledge ") is RedactionPolicy.ACKNOWLEDGE
    with pytest.raises(ClearanceError) as caught:
        RedactionPolicy.parse("count")
    assert "silent, acknowledge" in str(caught.value)
    with pytest.raises(ClearanceError):
        RedactionPolicy.parse(None)
