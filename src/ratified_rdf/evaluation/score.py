"""Score the brain's structured answers against a question file's structured expectations.

Nothing here compares strings of prose. A section answer is read from the answer's
``rfc-section`` evidence link (``…/rfc8446#section-4.2.10``); a what-did-X-become answer from its
``section_fate`` result; a count from its ``count`` result (or, for what the graph holds, its
``holding`` result of that kind); a list from the revision names in its ``history_entry``,
``revision``, ``chain_step``, ``section_diff`` (both sides) or ``section_text`` results
(precision and recall against the expected set; correct when F1 is at least 0.9); an expected
"unknown" from the verdict. Document facts are read from the ``document`` result of the
expected name, threads from the ``thread`` results (their order, numbers and states; a pull
request known only from its merge commit counts as merged), people
from the ``person`` and ``expert`` results' names. Every shape but "unknown" needs the verdict
``answered``.

Each wrong answer is sorted by how it was presented:

* **flagged**: the verdict is ``ambiguous``, so the user was told to choose;
* **abstained**: the verdict is ``unknown`` while an answer was expected (the graph said it
  doesn't know: a miss, but not a confident claim);
* **confidently wrong**: anything else (``answered`` with the wrong thing), listed with why.
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field

from ratified_rdf.answers.models import Answer, Verdict
from ratified_rdf.evaluation.baseline import BaselineScore, run_baselines
from ratified_rdf.evaluation.questions import Expectation, Question, load_questions

if TYPE_CHECKING:
    # Only for hints: results are told apart by their ``kind``, so the scorer also runs
    # against an older answers package (to measure a "before").
    from ratified_rdf.answers.models import DocumentFacts, ThreadInfo
    from ratified_rdf.brain import Brain

LIST_F1_CORRECT = 0.9
"""A list answer counts as correct from this F1 up (fixed before any scoring was run)."""

_RFC_SECTION_URL = re.compile(r"rfc(\d+)#(?:section|appendix)-([0-9A-Za-z.]+)$")
_REVISION_NAME = re.compile(r"^draft-[a-z0-9-]+-\d{2}$")

Status = Literal["correct", "flagged", "abstained", "confidently_wrong"]


class Outcome(BaseModel):
    """How the graph did on one question."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    block: str
    kind: str
    group: str
    expected_intent: str
    intent: str
    intent_ok: bool
    verdict: str
    expected: str
    got: str
    correct: bool
    lenient: bool
    """Correct, or pointed to a same-headed section of the other RFC (``expect.also``)."""
    status: Status
    why: str | None = None
    precision: float | None = None
    recall: float | None = None
    ms: float = 0.0


class Aggregate(BaseModel):
    """Totals over a slice of the questions."""

    model_config = ConfigDict(frozen=True)

    n: int
    correct: int
    lenient: int
    flagged: int
    abstained: int
    confidently_wrong: int
    intent_ok: int
    mean_precision: float | None = None
    mean_recall: float | None = None

    @property
    def accuracy(self) -> float | None:
        """Share of correct answers, or None for an empty slice."""
        return self.correct / self.n if self.n else None


class EvalReport(BaseModel):
    """The whole evaluation: per-question outcomes, aggregates and the retrieval baselines."""

    model_config = ConfigDict(frozen=True)

    questions_path: str
    questions: int
    held_out: int
    outcomes: list[Outcome]
    aggregates: dict[str, Aggregate]
    """Keyed ``all``, ``tuned``, ``held-out``, ``lookup``, ``count/list`` and
    ``<block>/<group>`` (e.g. ``held-out/lookup``), plus ``<block>/section-lookup``: the lookups
    with an expected RFC section, the slice the retrieval baselines are scored on; and
    ``type/<intent>`` and ``<block>/type/<intent>`` per expected intent (question type)."""
    baselines: list[BaselineScore] = Field(default_factory=list)
    p50_ms: float = 0.0

    @property
    def confidently_wrong(self) -> list[Outcome]:
        """Every wrong answer that was not flagged as ambiguous nor abstained from."""
        return [o for o in self.outcomes if o.status == "confidently_wrong"]


def answer_rfc_section(answer: Answer) -> tuple[int, str] | None:
    """The RFC section an answer is about: its first ``rfc-section`` evidence link."""
    for evidence in answer.evidence:
        if evidence.role == "rfc-section" and evidence.url:
            match = _RFC_SECTION_URL.search(evidence.url)
            if match:
                return int(match.group(1)), match.group(2)
    return None


def answer_fate(answer: Answer) -> tuple[int, str] | None:
    """(RFC, final section) from a what-did-X-become answer's ``section_fate`` result."""
    for result in answer.results:
        if result.kind == "section_fate" and result.final_section_number:
            rfc = re.search(r"\d+", result.rfc)
            if rfc:
                return int(rfc.group()), result.final_section_number
    return None


def answer_count(answer: Answer, what: str | None = None) -> tuple[int, str] | None:
    """(count, what) from a counting answer's ``count`` result; else, when ``what`` is given,
    from its ``holding`` result of that kind (how many drafts, RFCs… the graph holds)."""
    for result in answer.results:
        if result.kind == "count":
            return result.count, result.what
    if what is not None:
        for result in answer.results:
            if result.kind == "holding" and _fold(result.what) == _fold(what):
                return result.count, result.what
    return None


def answer_revisions(answer: Answer) -> set[str]:
    """Revision names an answer lists (history entries, revisions, chain steps, both sides of
    a section diff, the document of a section's text)."""
    names: set[str] = set()
    for result in answer.results:
        if result.kind in {"history_entry", "section_text"}:
            labels = [result.document]
        elif result.kind in {"revision", "chain_step"}:
            labels = [result.label]
        elif result.kind == "section_diff":
            labels = [result.older, result.newer]
        else:
            labels = []
        names.update(label for label in labels if label and _REVISION_NAME.match(label))
    return names


def answer_documents(answer: Answer) -> list[DocumentFacts]:
    """The answer's ``document`` results, in order."""
    return [r for r in answer.results if r.kind == "document"]


def answer_threads(answer: Answer) -> list[ThreadInfo]:
    """The answer's ``thread`` results, in order."""
    return [r for r in answer.results if r.kind == "thread"]


def answer_people(answer: Answer) -> list[str]:
    """Names of the answer's ``person`` and ``expert`` results, in order."""
    return [r.name for r in answer.results if r.kind in {"person", "expert"}]


def _fold(text: str) -> str:
    """Case-folded, white space runs as one space."""
    return " ".join(text.casefold().split())


def _document_key(name: str) -> str:
    """A document name without case or spaces: ``RFC 8446`` and ``rfc8446`` are one."""
    return "".join(name.casefold().split())


def _f1(listed: set[str], wanted: set[str]) -> tuple[float, float, float]:
    hits = len(listed & wanted)
    precision = hits / len(listed) if listed else 0.0
    recall = hits / len(wanted) if wanted else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _section_check(expect: Expectation, answer: Answer) -> str | None:
    """Why the extra ``rfc`` + ``section`` check fails, or None when it holds (or is absent)."""
    wanted = expect.rfc_section
    if wanted is None:
        return None
    found = answer_rfc_section(answer)
    if found == wanted:
        return None
    return f"about {_fmt_section(found)}, expected {_fmt_section(wanted)}"


def _score_document(expect: Expectation, answer: Answer) -> tuple[bool, str, str | None]:
    """(correct, got, why) for a ``document`` expectation."""
    assert expect.document is not None
    documents = answer_documents(answer)
    match = next(
        (d for d in documents if _document_key(d.name) == _document_key(expect.document)), None
    )
    if match is None:
        got = ", ".join(d.name for d in documents) or "no document"
        return False, got, f"no document result named {expect.document} (got {got})"
    problems: list[str] = []
    if expect.became is not None and match.rfc_number != expect.became:
        problems.append(f"became RFC {match.rfc_number}, expected RFC {expect.became}")
    if expect.published is not None and (match.published or "")[:7] != expect.published[:7]:
        problems.append(f"published {match.published}, expected {expect.published}")
    if expect.editors is not None:
        _, _, f1 = _f1({_fold(n) for n in match.editors}, {_fold(n) for n in expect.editors})
        if f1 < LIST_F1_CORRECT:
            problems.append(
                f"editors {', '.join(match.editors) or 'none'}, expected "
                f"{', '.join(expect.editors)} (F1 {f1:.2f})"
            )
    if expect.revisions_count is not None and match.revisions != expect.revisions_count:
        problems.append(f"{match.revisions} revisions, expected {expect.revisions_count}")
    got = f"document {match.name}" + (f" ({'; '.join(problems)})" if problems else "")
    return not problems, got, "; ".join(problems) or None


def thread_state(thread: ThreadInfo) -> str:
    """A thread result's state, case-folded; ``merged`` for a pull request known only from its
    merge (no state, but a merge time or merge commit)."""
    if thread.state:
        return _fold(thread.state)
    return "merged" if thread.merged or thread.merge_commit else ""


def _score_threads(expect: Expectation, answer: Answer) -> tuple[bool, str, str | None]:
    """(correct, got, why) for a ``thread`` or ``thread_state`` expectation."""
    threads = answer_threads(answer)
    shown = ", ".join(f"#{t.number} {thread_state(t)}" for t in threads[:6]) or "no threads"
    got = f"{len(threads)} threads ({shown}{', …' if len(threads) > 6 else ''})"
    if expect.thread is not None:
        if not threads:
            return False, got, f"no thread result, expected #{expect.thread}"
        if threads[0].number != expect.thread:
            return False, got, f"first thread #{threads[0].number}, expected #{expect.thread}"
        return True, got, None
    assert expect.thread_state is not None
    state = _fold(expect.thread_state)
    if expect.empty:
        listed = [t.number for t in threads if thread_state(t) == state]
        why = f"listed {state} threads {listed}, but the graph holds none" if listed else None
    elif not threads:
        why = f"no thread result, expected {state} threads"
    else:
        other = [f"#{t.number} {t.state}" for t in threads if thread_state(t) != state]
        why = f"threads not {state}: {', '.join(other[:6])}" if other else None
    why = why or _section_check(expect, answer)
    return why is None, got, why


def _score_person(expect: Expectation, answer: Answer) -> tuple[bool, str, str | None]:
    """(correct, got, why) for a ``person`` expectation."""
    assert expect.person is not None
    names = answer_people(answer)
    got = ", ".join(names[:5]) + (", …" if len(names) > 5 else "") if names else "no people"
    aliases = {_fold(a) for a in expect.person}
    first = names[: expect.top]
    if not any(_fold(name) in aliases for name in first):
        where = "first" if expect.top == 1 else f"among the first {expect.top}"
        rank = next((i for i, n in enumerate(names, 1) if _fold(n) in aliases), None)
        seen = f" (found at {rank})" if rank else " (not listed)"
        return False, got, f"{expect.person[0]} not {where}{seen}: got {got}"
    why = _section_check(expect, answer)
    return why is None, got, why


def _wrong(answer: Answer) -> Status:
    if answer.verdict is Verdict.AMBIGUOUS:
        return "flagged"
    if answer.verdict is Verdict.UNKNOWN:
        return "abstained"
    return "confidently_wrong"


def _fmt_section(found: tuple[int, str] | None) -> str:
    return f"RFC {found[0]} §{found[1]}" if found else "no RFC section"


def score_answer(question: Question, answer: Answer, ms: float = 0.0) -> Outcome:
    """Compare one answer's structure with one question's expectation."""
    expect = question.expect
    precision = recall = None
    why: str | None = None
    lenient = False
    if expect.verdict is not None:
        got = f"verdict {answer.verdict.value}"
        correct = answer.verdict.value == expect.verdict
        if not correct:
            found = answer_rfc_section(answer)
            why = (
                f"expected the graph to say it doesn't know, but it answered "
                f"({_fmt_section(found)}): {answer.summary[:160]}"
            )
    elif expect.count is not None:
        found_count = answer_count(answer, expect.what)
        got = f"{found_count[0]} {found_count[1]}" if found_count else "no count"
        correct = found_count is not None and abs(found_count[0] - expect.count) <= (
            expect.tolerance
        )
        if not correct:
            why = (
                f"counted {got}, expected {expect.describe()} from the independent parser"
                if found_count
                else f"no count in the answer (verdict {answer.verdict.value})"
            )
    elif expect.revisions is not None:
        listed = answer_revisions(answer)
        wanted = set(expect.revisions)
        precision, recall, f1 = _f1(listed, wanted)
        got = f"{len(listed)} revisions (P {precision:.2f}, R {recall:.2f})"
        correct = f1 >= LIST_F1_CORRECT
        if not correct:
            missing = sorted(wanted - listed)
            extra = sorted(listed - wanted)
            why = (
                f"F1 {f1:.2f}: missing {_short(missing)}; extra {_short(extra)} "
                f"(verdict {answer.verdict.value})"
            )
    elif expect.shape in {"document", "thread", "thread_state", "person"}:
        scorer = {
            "document": _score_document,
            "thread": _score_threads,
            "thread_state": _score_threads,
            "person": _score_person,
        }[expect.shape]
        correct, got, why = scorer(expect, answer)
        answered = answer.verdict is Verdict.ANSWERED
        if correct and not answered:
            why = f"the right result, but the verdict is {answer.verdict.value}"
        elif not correct and not answered:
            why = f"{why} (verdict {answer.verdict.value}: {answer.summary[:120]})"
        correct = correct and answered
    else:
        wanted_section = expect.rfc_section
        found = (
            answer_fate(answer) if expect.final_section is not None else None
        ) or answer_rfc_section(answer)
        got = _fmt_section(found)
        answered = answer.verdict is Verdict.ANSWERED
        correct = found == wanted_section and answered
        lenient = answered and found in expect.lenient_sections
        if not correct:
            why = f"pointed to {got}, expected {expect.describe()}"
            if lenient:
                why += " (the same heading in the other RFC: right only leniently)"
            if answer.verdict is not Verdict.ANSWERED:
                why += f" (verdict {answer.verdict.value}: {answer.summary[:120]})"
    status: Status = "correct" if correct else _wrong(answer)
    return Outcome(
        id=question.id,
        text=question.text,
        block=question.block,
        kind=question.kind,
        group=question.group,
        expected_intent=question.intent,
        intent=answer.intent,
        intent_ok=answer.intent == question.intent,
        verdict=answer.verdict.value,
        expected=expect.describe(),
        got=got,
        correct=correct,
        lenient=correct or lenient,
        status=status,
        why=why,
        precision=precision,
        recall=recall,
        ms=ms,
    )


def _short(names: Sequence[str]) -> str:
    if not names:
        return "none"
    shown = ", ".join(n.rsplit("-", 1)[-1] if n.startswith("draft-") else n for n in names[:8])
    return f"{len(names)} ({shown}{', …' if len(names) > 8 else ''})"


def aggregate(outcomes: Iterable[Outcome]) -> Aggregate:
    """Totals over some outcomes."""
    items = list(outcomes)
    precisions = [o.precision for o in items if o.precision is not None]
    recalls = [o.recall for o in items if o.recall is not None]
    return Aggregate(
        n=len(items),
        correct=sum(o.correct for o in items),
        lenient=sum(o.lenient for o in items),
        flagged=sum(o.status == "flagged" for o in items),
        abstained=sum(o.status == "abstained" for o in items),
        confidently_wrong=sum(o.status == "confidently_wrong" for o in items),
        intent_ok=sum(o.intent_ok for o in items),
        mean_precision=sum(precisions) / len(precisions) if precisions else None,
        mean_recall=sum(recalls) / len(recalls) if recalls else None,
    )


def aggregates(questions: Sequence[Question], outcomes: Sequence[Outcome]) -> dict[str, Aggregate]:
    """Aggregates per block, per group (lookup vs count/list), per block × group, and per
    question type (the expected intent), overall and per block."""
    by_id = {q.id: q for q in questions}

    def where(
        block: str | None = None,
        group: str | None = None,
        intent: str | None = None,
        retrievable: bool = False,
    ) -> Callable[[Outcome], bool]:
        """Whether an outcome is of ``block``, ``group`` and ``intent`` (None: any), and of a
        retrievable question when ``retrievable``."""
        return lambda o: (
            (block is None or o.block == block)
            and (group is None or o.group == group)
            and (intent is None or o.expected_intent == intent)
            and (not retrievable or by_id[o.id].retrievable)
        )

    slices: dict[str, Callable[[Outcome], bool]] = {
        "all": where(),
        "lookup": where(group="lookup"),
        "count/list": where(group="count/list"),
        "section-lookup": where(retrievable=True),
    }
    for block in ("tuned", "held-out"):
        slices[block] = where(block=block)
        for group in ("lookup", "count/list"):
            slices[f"{block}/{group}"] = where(block=block, group=group)
        slices[f"{block}/section-lookup"] = where(block=block, retrievable=True)
    for intent in sorted({q.intent for q in questions}):
        slices[f"type/{intent}"] = where(intent=intent)
        for block in ("tuned", "held-out"):
            slices[f"{block}/type/{intent}"] = where(block=block, intent=intent)
    return {name: aggregate(o for o in outcomes if keep(o)) for name, keep in slices.items()}


def intents(report: EvalReport) -> list[str]:
    """The question types (expected intents) of a report, in name order."""
    return sorted(key.removeprefix("type/") for key in report.aggregates if key.startswith("type/"))


def run_eval(
    brain: Brain,
    questions_path: str | Path,
    *,
    baselines: Sequence[str] = ("bm25", "dense"),
    progress: bool = True,
) -> EvalReport:
    """Ask the brain every question in ``questions_path``, score it, and run the baselines.

    ``baselines`` names the retrievers to compare against (``bm25``, ``dense``); a dense
    retriever whose package is not installed is reported as skipped, not silently dropped.
    Progress goes to stderr when ``progress`` is true.
    """
    questions = load_questions(questions_path)
    outcomes: list[Outcome] = []
    for position, question in enumerate(questions, start=1):
        start = time.perf_counter()
        answer = brain.ask(question.text)
        ms = (time.perf_counter() - start) * 1000
        outcomes.append(score_answer(question, answer, ms))
        if progress and (position % 10 == 0 or position == len(questions)):
            print(f"[eval] graph: {position}/{len(questions)} questions", file=sys.stderr)
    timings = sorted(o.ms for o in outcomes)
    scores = run_baselines(brain, questions, baselines, progress=progress) if baselines else []
    return EvalReport(
        questions_path=str(questions_path),
        questions=len(questions),
        held_out=sum(q.block == "held-out" for q in questions),
        outcomes=outcomes,
        aggregates=aggregates(questions, outcomes),
        baselines=scores,
        p50_ms=timings[len(timings) // 2] if timings else 0.0,
    )
