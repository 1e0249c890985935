"""The evaluation's question file: questions, their expected intent and structured answers.

A question file is TOML holding an array of tables named ``question``::

    [[question]]
    id = "h01"                      # unique within the file
    block = "held-out"              # "tuned" (the router was developed against it) or "held-out"
    kind = "lookup"                 # "lookup" | "count" | "list"
    intent = "discussion"           # the intent the router is expected to pick
    text = "why does early data work this way?"
    derive = "words 8446 early data indication"   # optional: how the expectation was computed
    expect = { rfc = 8446, section = "4.2.10" }

The ``expect`` table is structured, never a string to match. Its keys:

* ``rfc`` + ``section``: the answer is about that RFC section (a section lookup); optional
  ``also = ["9846 4.3.10"]`` lists same-headed sections of another RFC, which count only as a
  *lenient* match, reported beside the strict score.
* ``rfc`` + ``final_section``: the asked-about draft section became that RFC section.
* ``count`` + ``what`` (+ ``tolerance``): the answer's count of ``what``, within ``tolerance``.
* ``revisions``: the set of revision names the answer lists (history, revisions, chains).
* ``verdict = "unknown"``: the graph must say it doesn't know.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Block = Literal["tuned", "held-out"]
Kind = Literal["lookup", "count", "list"]


class Expectation(BaseModel):
    """A structured expected answer; exactly one of its shapes is filled."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rfc: int | None = None
    section: str | None = None
    also: list[str] = Field(default_factory=list)
    final_section: str | None = None
    count: int | None = None
    what: str | None = None
    tolerance: int = 0
    revisions: list[str] | None = None
    verdict: Literal["unknown"] | None = None

    @model_validator(mode="after")
    def _one_shape(self) -> Expectation:
        shapes = [
            self.section is not None,
            self.final_section is not None,
            self.count is not None,
            self.revisions is not None,
            self.verdict is not None,
        ]
        if sum(shapes) != 1:
            raise ValueError(
                "An expect table needs exactly one of section, final_section, count, "
                "revisions or verdict."
            )
        if (self.section or self.final_section) and self.rfc is None:
            raise ValueError("A section expectation needs the RFC number it belongs to.")
        return self

    @property
    def rfc_section(self) -> tuple[int, str] | None:
        """(RFC, section) the answer should point to, for section-shaped expectations."""
        number = self.section or self.final_section
        return (self.rfc, number) if number and self.rfc is not None else None

    @property
    def lenient_sections(self) -> set[tuple[int, str]]:
        """The strict section plus the same-headed sections listed in ``also``."""
        found = {self.rfc_section} if self.rfc_section else set()
        for item in self.also:
            rfc, _, number = item.partition(" ")
            found.add((int(rfc), number))
        return found

    def describe(self) -> str:
        """The expectation in a few words, for tables and reports."""
        if self.rfc_section:
            return f"RFC {self.rfc_section[0]} §{self.rfc_section[1]}"
        if self.count is not None:
            return f"{self.count} {self.what or ''} (±{self.tolerance})".replace("  ", " ")
        if self.revisions is not None:
            return f"{len(self.revisions)} revisions"
        return f"verdict {self.verdict}"


class Question(BaseModel):
    """One evaluation question."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    text: str
    intent: str
    block: Block
    kind: Kind
    expect: Expectation
    derive: str | None = None

    @property
    def group(self) -> Literal["lookup", "count/list"]:
        """Lookups are reported apart from counting and list questions."""
        return "lookup" if self.kind == "lookup" else "count/list"

    @property
    def retrievable(self) -> bool:
        """A lookup of an RFC section by its words or number: what retrieval is scored on.

        What-did-X-become questions name a draft's old section number, which the RFC text does
        not carry, so they are left out with the counts and lists rather than counted as misses.
        """
        return self.kind == "lookup" and self.expect.section is not None


class QuestionFileError(ValueError):
    """The question file cannot be read as the format above."""


def load_questions(path: str | Path) -> list[Question]:
    """Every question in ``path``, validated; raises :class:`QuestionFileError` in a sentence."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise QuestionFileError(f"The question file {path} does not exist.") from error
    except tomllib.TOMLDecodeError as error:
        raise QuestionFileError(f"The question file {path} is not valid TOML: {error}.") from error
    raw = data.get("question")
    if not isinstance(raw, list) or not raw:
        raise QuestionFileError(f"The question file {path} holds no [[question]] tables.")
    questions: list[Question] = []
    for position, item in enumerate(raw, start=1):
        try:
            questions.append(Question.model_validate(item))
        except ValidationError as error:
            name = item.get("id", f"number {position}") if isinstance(item, dict) else position
            problems = "; ".join(e["msg"] for e in error.errors())
            raise QuestionFileError(
                f"Question {name} in {path} is malformed: {problems}."
            ) from error
    seen: set[str] = set()
    for question in questions:
        if question.id in seen:
            raise QuestionFileError(f"The question id {question.id} appears twice in {path}.")
        seen.add(question.id)
    return questions
