"""The evaluation's question file: questions, their expected intent and structured answers.

A question file is TOML holding an array of tables named ``question``::

    [[question]]
    id = "h01"                      # unique within the file
    block = "held-out"              # "tuned" (the router was developed against it) or "held-out"
    kind = "lookup"                 # "lookup" | "count" | "list"
    intent = "discussion"           # the intent the router is expected to pick
    text = "why does early data work this way?"
    derive = "words 8446 early data indication"   # optional: how the expectation was computed
    family = "tolerant"             # optional: the reading family it tests (see Family)
    expect = { rfc = 8446, section = "4.2.10" }

The ``expect`` table is structured, never a string to match. It holds exactly one *main
shape*; some shapes take optional extra checks. The shapes:

* ``rfc`` + ``section``: the answer is about that RFC section (a section lookup): its first
  ``rfc-section`` evidence link; optional ``also = ["9846 4.3.10"]`` lists same-headed sections
  of another RFC, which count only as a *lenient* match, reported beside the strict score.
* ``rfc`` + ``final_section``: the asked-about draft section became that RFC section.
* ``count`` + ``what`` (+ ``tolerance``): the answer's count of ``what``, within ``tolerance``:
  its ``count`` result, else (a question about what the graph holds) its ``holding`` result
  whose ``what`` is ``what``.
* ``revisions``: the set of revision names the answer lists (history entries, revisions,
  chain steps, the two sides of a ``section_diff``, the document of a ``section_text``);
  correct from an F1 of 0.9.
* ``verdict = "unknown"``: the graph must say it doesn't know.
* ``document = "RFC 8446"`` (or a draft name, ``"draft-ietf-tls-tls13"``): the answer is
  answered and has a ``document`` result of that name (compared without case or spaces).
  Optional checks on that result: ``became = 8446`` (its ``rfc_number``: the RFC it is or
  became), ``published = "2018-08"`` (its month), ``editors = ["Eric Rescorla"]`` (the byline
  names, an F1 of at least 0.9, compared case-folded) and ``revisions_count = 29``.
* ``thread = 785``: answered, and the first ``thread`` result is issue or pull request 785.
* ``thread_state = "open"``: answered, at least one ``thread`` result, and every one of them in
  that state (compared case-folded; a pull request known only from its merge commit, with no
  state, is ``merged``). With ``empty = true`` the graph holds none in that state:
  the answer must say so (answered) and list no thread in it. Optional ``rfc`` + ``section``:
  the answer's first ``rfc-section`` evidence must also be that section (threads of a section).
* ``person = ["Eric Rescorla", "ekr"]`` (aliases of one human) + ``top`` (default 1): answered,
  and one alias equals (case-folded) the name of one of the first ``top`` ``person`` or
  ``expert`` results. Optional ``rfc`` + ``section``: the answer's first ``rfc-section``
  evidence must also be that section (a person's work on one section).

Blocks: ``tuned`` questions were looked at while the router was developed; ``held-out``
questions were written (and committed) before, and are never edited to make one pass. Each
question file counts its own blocks.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ratified_rdf._errors import InputError

Block = Literal["tuned", "held-out"]
Kind = Literal["lookup", "count", "list"]
Family = Literal["names", "numbers", "first_rule", "tolerant"]
"""The families of issue 53's reading: a document by its short names; a section number read
in the document it is written beside; the first rule (what was never ingested is "doesn't
know", even beside a held document); tolerant reading (contractions, case, CamelCase, dates in
words, other words for one question, "merged by")."""


MAIN_SHAPES = (
    "final_section",
    "count",
    "revisions",
    "verdict",
    "document",
    "thread",
    "thread_state",
    "person",
)
"""The main shapes besides ``section`` (the shape of a table that fills none of these)."""

_SECTION_EXTRA = {"thread_state", "person"}
"""Main shapes that take ``rfc`` + ``section`` as an extra check."""

_DOCUMENT_EXTRAS = ("became", "published", "editors", "revisions_count")


class Expectation(BaseModel):
    """A structured expected answer; exactly one of its main shapes is filled."""

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
    document: str | None = None
    became: int | None = None
    published: str | None = None
    editors: list[str] | None = None
    revisions_count: int | None = None
    thread: int | None = None
    thread_state: str | None = None
    empty: bool = False
    person: list[str] | None = None
    top: int = 1

    @model_validator(mode="after")
    def _one_shape(self) -> Expectation:
        filled = [name for name in MAIN_SHAPES if getattr(self, name) is not None]
        if len(filled) > 1 or (not filled and self.section is None):
            raise ValueError(
                "An expect table needs exactly one of section, " + ", ".join(MAIN_SHAPES) + "."
            )
        shape = filled[0] if filled else "section"
        if self.section is not None and shape not in {"section", *_SECTION_EXTRA}:
            raise ValueError(f"A {shape} expectation takes no section.")
        if (self.section or self.final_section) and self.rfc is None:
            raise ValueError("A section expectation needs the RFC number it belongs to.")
        if self.rfc is not None and not (self.section or self.final_section):
            raise ValueError("An rfc in an expect table needs its section or final_section.")
        if self.also and shape != "section":
            raise ValueError("Only a section expectation takes also.")
        if shape != "document" and any(getattr(self, k) is not None for k in _DOCUMENT_EXTRAS):
            raise ValueError("became, published, editors and revisions_count need a document.")
        if self.empty and shape != "thread_state":
            raise ValueError("Only a thread_state expectation takes empty.")
        if shape != "person" and self.top != 1:
            raise ValueError("Only a person expectation takes top.")
        if self.top < 1:
            raise ValueError("top counts results from 1.")
        if self.person is not None and not self.person:
            raise ValueError("A person expectation needs at least one name.")
        return self

    @property
    def shape(self) -> str:
        """Which main shape this expectation is: ``section`` or one of :data:`MAIN_SHAPES`."""
        return next((name for name in MAIN_SHAPES if getattr(self, name) is not None), "section")

    @property
    def rfc_section(self) -> tuple[int, str] | None:
        """(RFC, section) the answer should point to: the section shapes, and the extra
        section check of a thread_state or person expectation."""
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
        shape = self.shape
        where = f" on RFC {self.rfc} §{self.section}" if self.section and shape != "section" else ""
        if shape in {"section", "final_section"} and self.rfc_section:
            return f"RFC {self.rfc_section[0]} §{self.rfc_section[1]}"
        if self.count is not None:
            return f"{self.count} {self.what or ''} (±{self.tolerance})".replace("  ", " ")
        if self.revisions is not None:
            return f"{len(self.revisions)} revisions"
        if self.document is not None:
            checks = [
                f"{name} {getattr(self, name)}"
                for name in _DOCUMENT_EXTRAS
                if getattr(self, name) is not None
            ]
            return f"document {self.document}" + (f" ({'; '.join(checks)})" if checks else "")
        if self.thread is not None:
            return f"thread #{self.thread}"
        if self.thread_state is not None:
            none = "no " if self.empty else ""
            return f"{none}{self.thread_state} threads{where}"
        if self.person is not None:
            rank = "first" if self.top == 1 else f"top {self.top}"
            return f"{self.person[0]} {rank}{where}"
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
    family: Family | None = None
    """The reading family the question tests, when it was written for one."""

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
        return self.kind == "lookup" and self.expect.shape == "section"


class QuestionFileError(InputError):
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
