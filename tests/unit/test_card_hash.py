"""A card's content hash: SHA-256 of the RFC 8785 canonical JSON of its verdict, results and
evidence, with scores written as their shortest round-trip decimal text."""

from __future__ import annotations

import hashlib
import types
from typing import Union, get_args, get_origin

import rfc8785
from pydantic import BaseModel

from ratified_rdf.answers.models import (
    Answer,
    DraftedQuestion,
    Evidence,
    Expert,
    Result,
    SectionFate,
    Verdict,
)
from ratified_rdf.answers.trust import content_hash


def _holds_float(annotation: object) -> bool:
    """Whether a value of this annotation can be, or can hold, a float."""
    if annotation is float:
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return any(_holds_float(f.annotation) for f in annotation.model_fields.values())
    return any(_holds_float(arg) for arg in get_args(annotation))


def _is_float_field(annotation: object) -> bool:
    """``float`` or ``float | None``: a float that is the field's own value."""
    if annotation is float:
        return True
    union = get_origin(annotation) in (Union, types.UnionType)
    return union and set(get_args(annotation)) <= {float, type(None)}


def test_floats_are_only_ever_a_results_own_fields() -> None:
    result_models = get_args(get_args(Result)[0])
    assert Expert in result_models and len(result_models) > 10
    for model in result_models:
        for name, field in model.model_fields.items():
            if _holds_float(field.annotation):
                assert _is_float_field(field.annotation), f"{model.__name__}.{name}"
    assert not _holds_float(Evidence)


def _deep_floats_as_text(value: object) -> object:
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list):
        return [_deep_floats_as_text(item) for item in value]
    if isinstance(value, dict):
        return {key: _deep_floats_as_text(item) for key, item in value.items()}
    return value


def test_the_hash_is_the_canonical_json_of_the_content_with_scores_as_text() -> None:
    card = Answer(
        question="why is the fictional sprocket here?",
        intent="discussion",
        verdict=Verdict.ANSWERED,
        summary="Wording, not content.",
        results=[
            Expert(
                name="Ada Example",
                iri="https://example.org/p/ada",
                role="participant",
                reason="posts",
                posts=2,
                pagerank=0.1 + 0.2,
                betweenness=1e-7,
            ),
            SectionFate(
                revision="draft-x-01",
                section_number="3",
                heading="Sprockets",
                rfc="RFC 9999",
                final_section_number="3.1",
                final_heading="Sprockets",
                similarity=1.0,
                still_changing=False,
                rule="heading",
            ),
            DraftedQuestion(to=["Ada Example"], text="quotes the question"),
        ],
        evidence=[
            Evidence(iri="https://example.org/s/3.1", label="§3.1", url=None, role="rfc-section")
        ],
    )
    content = {
        "intent": "discussion",
        "verdict": "answered",
        "results": [r.model_dump(mode="json") for r in card.results[:2]],
        "evidence": [e.model_dump(mode="json") for e in card.evidence],
    }
    expected = hashlib.sha256(rfc8785.dumps(_deep_floats_as_text(content))).hexdigest()
    assert content_hash(card) == expected
    # The scores are what tells the two definitions apart: RFC 8785's own number form of
    # these floats (1.0 as 1) hashes differently.
    assert content_hash(card) != hashlib.sha256(rfc8785.dumps(content)).hexdigest()
