"""Show an :class:`EvalReport`: a terminal table, a Markdown report and a PNG bar chart.

The table puts the graph beside the BM25 and dense baselines, tuned beside held-out, and section
lookups beside the rest: the graph on every slice, the retrievers only on section lookups
(top-1 and top-10), with counting and list questions marked as not answerable by retrieval.
A second table gives the graph per question type (the expected intent): how many were right,
tuned beside held-out, how the wrong ones were presented, and how often the router picked the
expected intent; :func:`type_table` puts several reports (one per corpus) side by side.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ratified_rdf.evaluation.score import Aggregate, EvalReport, intents

DEFAULT_OUT = Path("benchmarks/out/eval")
BLOCKS = ("tuned", "held-out")


def _pct(hit: int, n: int) -> str:
    return f"{hit}/{n} ({100 * hit / n:.0f}%)" if n else "–"


def _agg(aggregate: Aggregate, *, lenient: bool = False) -> str:
    return _pct(aggregate.lenient if lenient else aggregate.correct, aggregate.n)


def table_rows(report: EvalReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the comparison table."""
    header = ["system"]
    for block in BLOCKS:
        header += [f"{block}: section lookup", f"{block}: all lookup", f"{block}: count/list"]
    a = report.aggregates
    rows = [
        ["graph (strict)"]
        + [
            cell
            for b in BLOCKS
            for cell in (
                _agg(a[f"{b}/section-lookup"]),
                _agg(a[f"{b}/lookup"]),
                _agg(a[f"{b}/count/list"]),
            )
        ],
        ["graph (lenient)"]
        + [
            cell
            for b in BLOCKS
            for cell in (
                _agg(a[f"{b}/section-lookup"], lenient=True),
                _agg(a[f"{b}/lookup"], lenient=True),
                _agg(a[f"{b}/count/list"], lenient=True),
            )
        ],
    ]
    for score in report.baselines:
        if score.skipped:
            rows.append([f"{score.name} (skipped: {score.skipped})"] + ["–"] * 6)
            continue
        for k in (1, 10):
            for lenient in (False, True):
                label = f"{score.name} top-{k}{' (lenient)' if lenient else ''}"
                row = [label]
                for block in BLOCKS:
                    hit, n = score.hits(block, k, lenient=lenient)
                    row += [_pct(hit, n), "n/a", f"n/a ({score.not_answerable.get(block, 0)})"]
                rows.append(row)
    return header, rows


TYPE_HEADER = [
    "type",
    "n",
    "correct",
    "tuned",
    "held-out",
    "flagged",
    "abstained",
    "conf. wrong",
    "intent ok",
]


def _type_cells(name: str, a: Aggregate, tuned: Aggregate, held: Aggregate) -> list[str]:
    return [
        name,
        str(a.n),
        _agg(a),
        _agg(tuned),
        _agg(held),
        str(a.flagged),
        str(a.abstained),
        str(a.confidently_wrong),
        _pct(a.intent_ok, a.n),
    ]


def type_rows(report: EvalReport) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-type table: one row per expected intent, then the total."""
    a = report.aggregates
    rows = [
        _type_cells(t, a[f"type/{t}"], a[f"tuned/type/{t}"], a[f"held-out/type/{t}"])
        for t in intents(report)
    ]
    rows.append(_type_cells("all", a["all"], a["tuned"], a["held-out"]))
    return TYPE_HEADER, rows


def _merge(parts: list[Aggregate]) -> Aggregate:
    return Aggregate(
        n=sum(p.n for p in parts),
        correct=sum(p.correct for p in parts),
        lenient=sum(p.lenient for p in parts),
        flagged=sum(p.flagged for p in parts),
        abstained=sum(p.abstained for p in parts),
        confidently_wrong=sum(p.confidently_wrong for p in parts),
        intent_ok=sum(p.intent_ok for p in parts),
    )


def type_table(reports: Mapping[str, EvalReport]) -> tuple[list[str], list[list[str]]]:
    """Per-type rows over several reports (one per corpus): each corpus's correct count, then
    the totals over all of them as in :func:`type_rows`."""
    names = sorted({t for r in reports.values() for t in intents(r)})
    header = ["type", *reports, *TYPE_HEADER[1:]]
    empty = Aggregate(
        n=0, correct=0, lenient=0, flagged=0, abstained=0, confidently_wrong=0, intent_ok=0
    )

    def get(report: EvalReport, key: str) -> Aggregate:
        return report.aggregates.get(key, empty)

    rows = []
    for label in [*names, "all"]:
        keys = ("all", "tuned", "held-out")
        if label != "all":
            keys = (f"type/{label}", f"tuned/type/{label}", f"held-out/type/{label}")
        per, tuned, held = ([get(r, key) for r in reports.values()] for key in keys)
        cells = _type_cells(label, _merge(per), _merge(tuned), _merge(held))
        rows.append([label, *(_agg(p) for p in per), *cells[1:]])
    return header, rows


def _plain(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    return [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        "  ".join("-" * w for w in widths),
        *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows),
    ]


def _markdown(header: list[str], rows: list[list[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def format_type_table(reports: EvalReport | Mapping[str, EvalReport]) -> str:
    """The per-type table as aligned plain text, for one report or several side by side."""
    if isinstance(reports, EvalReport):
        return "\n".join(_plain(*type_rows(reports)))
    return "\n".join(_plain(*type_table(reports)))


def type_table_markdown(reports: EvalReport | Mapping[str, EvalReport]) -> str:
    """The per-type table as Markdown, for one report or several side by side."""
    if isinstance(reports, EvalReport):
        return "\n".join(_markdown(*type_rows(reports)))
    return "\n".join(_markdown(*type_table(reports)))


def format_table(report: EvalReport) -> str:
    """The comparison table as aligned plain text, with the confidently wrong answers after it."""
    header, rows = table_rows(report)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join("-" * w for w in widths)
    out = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        line,
        *("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows),
        "",
        f"{report.questions} questions ({report.held_out} held-out) from {report.questions_path}; "
        f"graph p50 {report.p50_ms:.1f} ms per question. n/a (N): N questions retrieval cannot "
        "answer (counts, lists, what-did-X-become, unknown).",
        _totals(report),
        "",
        "Per question type (the expected intent):",
        *_plain(*type_rows(report)),
        "",
    ]
    wrong = report.confidently_wrong
    out.append(f"Confidently wrong: {len(wrong)}")
    out += [f"  {o.id} [{o.block}] {o.text!r}: {o.why}" for o in wrong]
    flagged = [o for o in report.outcomes if o.status in {"flagged", "abstained"}]
    out += [f"  (not confident) {o.id} {o.status}: {o.why}" for o in flagged]
    return "\n".join(out)


def _totals(report: EvalReport) -> str:
    a = report.aggregates
    return (
        f"Graph overall: {_agg(a['all'])} strict, {_agg(a['all'], lenient=True)} lenient; "
        f"tuned {_agg(a['tuned'])}, held-out {_agg(a['held-out'])}; "
        f"intent as expected {a['all'].intent_ok}/{a['all'].n}."
    )


def to_markdown(report: EvalReport) -> str:
    """The report as Markdown: the table, every question's outcome, and the wrong answers."""
    header, rows = table_rows(report)
    lines = [
        "# Evaluation: graph vs retrieval baselines",
        "",
        f"Questions: {report.questions} ({report.held_out} held-out), file "
        f"`{report.questions_path}`. Graph p50 {report.p50_ms:.1f} ms per question.",
        "",
        "Strict: the expected RFC section exactly. Lenient: also the same-headed section of the "
        "other RFC. Retrievers are scored only on section lookups; `n/a (N)` counts the "
        "questions they cannot answer.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
        _totals(report),
        "",
        "![accuracy](accuracy.png)",
        "",
        "## Per question type",
        "",
        *_markdown(*type_rows(report)),
        "",
        "## Confidently wrong answers",
        "",
    ]
    wrong = report.confidently_wrong
    lines += [f"- **{o.id}** ({o.block}) “{o.text}”: {o.why}" for o in wrong] or ["None."]
    lines += [
        "",
        "## Every question",
        "",
        "| id | block | kind | intent | expected | got | status |",
    ]
    lines.append("|---|---|---|---|---|---|---|")
    for o in report.outcomes:
        intent = o.intent if o.intent_ok else f"{o.intent} (expected {o.expected_intent})"
        lines.append(
            f"| {o.id} | {o.block} | {o.kind} | {intent} | {o.expected} | {o.got} | {o.status} |"
        )
    return "\n".join(lines) + "\n"


def write_chart(report: EvalReport, path: Path) -> Path:
    """A grouped bar chart of accuracy per system, tuned vs held-out, on section lookups."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display on a server or in CI
    import matplotlib.pyplot as plt

    systems: list[tuple[str, list[float]]] = []
    a = report.aggregates
    systems.append(("graph", [100 * (a[f"{b}/section-lookup"].accuracy or 0.0) for b in BLOCKS]))
    for score in report.baselines:
        if score.skipped:
            continue
        for k in (1, 10):
            values = []
            for block in BLOCKS:
                hit, n = score.hits(block, k)
                values.append(100 * hit / n if n else 0.0)
            systems.append((f"{score.name}@{k}", values))
    systems.append(
        ("graph count/list", [100 * (a[f"{b}/count/list"].accuracy or 0.0) for b in BLOCKS])
    )
    figure, axes = plt.subplots(figsize=(9, 4))
    width = 0.38
    for offset, block in enumerate(BLOCKS):
        xs = [i + (offset - 0.5) * width for i in range(len(systems))]
        axes.bar(xs, [values[offset] for _, values in systems], width, label=block)
    axes.set_xticks(range(len(systems)), [name for name, _ in systems], rotation=20)
    axes.set_ylabel("correct (%)")
    axes.set_ylim(0, 100)
    axes.set_title("Section lookups (strict): graph vs retrieval; graph on count/list")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def write_report(report: EvalReport, out_dir: str | Path = DEFAULT_OUT) -> list[Path]:
    """Write ``report.md``, ``accuracy.png`` and ``report.json`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    markdown = out / "report.md"
    markdown.write_text(to_markdown(report), encoding="utf-8")
    data = out / "report.json"
    data.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    return [markdown, write_chart(report, out / "accuracy.png"), data]
