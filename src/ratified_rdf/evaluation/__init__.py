"""An honest evaluation of the brain's answers: structured expectations, a held-out block, and
retrieval baselines on the same text.

Use::

    from ratified_rdf import Brain
    from ratified_rdf.evaluation import format_table, run_eval, write_report

    report = run_eval(Brain.open(store), "tests/eval/questions.toml")
    print(format_table(report))          # with the per-type table after the comparison
    write_report(report, "benchmarks/out/eval")
    print(format_type_table({"tls": report, "quic": other}))   # corpora side by side
"""

from ratified_rdf.evaluation.questions import (
    Expectation,
    Question,
    QuestionFileError,
    load_questions,
)
from ratified_rdf.evaluation.report import (
    format_table,
    format_type_table,
    to_markdown,
    type_table_markdown,
    write_report,
)
from ratified_rdf.evaluation.score import Aggregate, EvalReport, Outcome, run_eval, score_answer

__all__ = [
    "Aggregate",
    "EvalReport",
    "Expectation",
    "Outcome",
    "Question",
    "QuestionFileError",
    "format_table",
    "format_type_table",
    "load_questions",
    "run_eval",
    "score_answer",
    "to_markdown",
    "type_table_markdown",
    "write_report",
]
