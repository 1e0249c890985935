"""Core benchmark: build time, question latency, and the same SPARQL on Oxigraph vs rdflib.

Run from the repository root::

    python -m benchmarks.core [--store DIR] [--runs N] [--builds N] [--bundle PATH] [--smoke]

It measures, in one process:

1. Build: the TLS 1.3 brain built from the git bundle into a fresh temporary store ``--builds``
   times (about 50 s each): read, SHACL-gated write and total seconds, triples written and the
   gate's throughput. With ``--store DIR`` holding a brain already, building is skipped; with
   ``--store DIR`` empty or missing, the first build goes there (and stays).
2. Questions: seven questions through ``Brain.ask``, from the brain's in-memory copy (as
   ``ratified serve`` answers), then from the store on disk; each warmed up 5 times, then
   ``--runs`` timed rounds in which each question is asked once in turn: median and p99
   end-to-end milliseconds, and the median engine milliseconds of each query the answer ran.
   The ``revision_chain`` query is also timed on its own against its target of under 1 ms.
3. Baseline: the brain's current graphs dumped as N-Quads and loaded into an ``rdflib.Dataset``
   (default graph = union of the graphs, as Oxigraph is queried); each distinct bound SPARQL the
   questions ran is run, text unchanged, on rdflib. Distinct rows are checked against Oxigraph's
   before anything is timed; a mismatch prints ``MISMATCH`` and exits with status 1.
4. Peak memory: the process's maximum resident set size (build, queries and rdflib together).

The report is Markdown on stdout, also written to ``benchmarks/out/core.md`` (and with
``--record`` to ``benchmarks/RESULTS.md``); progress goes to stderr. ``--smoke`` measures the
fictional pigeon brain instead, with 2 runs. Nothing here asserts on timings.

The TLS brain's helpers live here too, for the scripts that measure it: ``QUESTIONS``,
``build_once``, ``open_existing``, ``run_builds``, and ``pigeon_store`` for their smoke runs.
"""

from __future__ import annotations

import argparse
import gc
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import rdflib
from pyoxigraph import RdfFormat

from benchmarks import report
from benchmarks.report import BenchError, Row, ms, peak_rss_mib, percentile, table
from ratified_rdf import Brain, BrainError
from ratified_rdf.audit import AuditLog
from ratified_rdf.build import BuildReport
from ratified_rdf.graph.store import OxigraphStore, StoreError
from ratified_rdf.surfaces.server import settle_for_serving

REPO = Path(__file__).resolve().parents[1]
DEFAULT_BUNDLE = REPO.parent / "shared/corpus/tls13-spec/tls13-spec.bundle"
MANIFEST = REPO / "records/tls13"
log = report.logger("core")

QUESTIONS: tuple[str, ...] = (
    "what did section 4.2.9 of draft-ietf-tls-tls13-21 become in the RFC?",
    "history of RFC 8446 section 4.2.10",
    "how did the IESG vote on draft-ietf-tls-tls13?",
    "who discussed RFC 8446 §4.2.1?",
    "how many posts referred to RFC 8446 §4.2.10 while it was changing?",
    "why does early data work this way?",
    "who should I ask about key share?",
)
PIGEON_QUESTIONS: tuple[str, ...] = (
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
    "history of RFC 9999 section 3.1",
    "how did the IESG vote on draft-example-pigeon?",
    "who discussed RFC 9999 section 3.1?",
    "how many posts referred to RFC 9999 §3.1 while it was changing?",
    "why does the take-off rule look like this?",
    "who should I ask about RFC 9999 section 3.1?",
)
"""The same kinds of question, in the order of ``QUESTIONS``, about the pigeon brain (what
``--smoke`` runs ask)."""
WARMUP = 5
RDFLIB_RUNS = 5
CHAIN_QUERY = "revision_chain"
CHAIN_TARGET_MS = 1.0
CARD_TARGET_MS = 10.0
"""Issue 4: router, heading search and card for one question, end to end, p50."""


@dataclass
class QueryTimes:
    """Engine times of one distinct bound query, gathered across the timed question runs."""

    name: str
    sparql: str
    rows: int
    engine_ms: list[float] = field(default_factory=list)


@dataclass
class QuestionTimes:
    """End-to-end times of one question, and its queries' engine times by query name."""

    question: str
    intent: str
    verdict: str
    total_ms: list[float] = field(default_factory=list)
    engine_ms: dict[str, list[float]] = field(default_factory=dict)


@dataclass
class BaselineRow:
    """One query on both engines."""

    name: str
    rows: int
    oxigraph_ms: float
    rdflib_ms: float


# --- 1. build ------------------------------------------------------------------------------


def open_existing(store_dir: Path) -> Brain | None:
    """The brain already in ``store_dir``, or ``None`` when the folder is missing or empty."""
    if not store_dir.is_dir() or not any(store_dir.iterdir()):
        return None
    try:
        store = OxigraphStore(store_dir)
    except StoreError as error:
        raise BenchError(str(error)) from None
    try:
        return Brain.from_store(store)
    except BrainError:
        store.close()
        return None


def build_once(
    store_dir: Path, bundle: Path, index: int, total: int, manifest: Path = MANIFEST
) -> tuple[Brain, BuildReport]:
    """One full build from the bundle (or any source) into ``store_dir``."""
    log(f"build {index}/{total}: {bundle.name} -> {store_dir}")
    brain, built = Brain.build(
        manifest, path=store_dir, source=str(bundle), progress=sys.stderr.isatty()
    )
    log(
        f"build {index}/{total}: {built.triples:,} triples in {built.total_seconds:.1f} s "
        f"(read {built.read_seconds:.1f} s, write {built.write_seconds:.1f} s)"
    )
    return brain, built


def pigeon_source(folder: Path) -> tuple[Path, Path]:
    """(manifest, repository) of the fictional pigeon brain (``tests/pigeon.py``), the
    repository made in ``folder``: what ``--smoke`` runs build instead of TLS, in seconds."""
    from tests.pigeon import MANIFEST as PIGEON_MANIFEST
    from tests.pigeon import make_pigeon_repo

    return PIGEON_MANIFEST, make_pigeon_repo(folder / "git")


def pigeon_store(folder: Path) -> Path:
    """The pigeon brain built into ``folder/store`` (closed), for a ``--smoke`` run."""
    manifest, repo = pigeon_source(folder)
    brain, _ = build_once(folder / "store", repo, 1, 1, manifest)
    brain.close()
    return folder / "store"


def check_inputs(bundle: Path) -> None:
    """Fail with a sentence when the corpus or the manifest is missing."""
    if not bundle.is_file():
        raise BenchError(
            f"The TLS corpus bundle is missing: looked for {bundle}. Put the shared corpus in "
            f"{REPO.parent / 'shared'} (corpus/tls13-spec/tls13-spec.bundle with its "
            "commit-map.tsv), pass --bundle PATH, or pass --store DIR with a brain already built."
        )
    if not (MANIFEST / "manifest.toml").is_file():
        raise BenchError(f"The manifest is missing: looked for {MANIFEST / 'manifest.toml'}.")


def run_builds(
    stack: ExitStack, store: Path | None, builds: int, bundle: Path, manifest: Path | None = None
) -> tuple[Brain, list[BuildReport], str]:
    """Build ``builds`` times (or reuse ``store``); return the brain to query and a note.
    ``manifest`` is the TLS brain's unless given (with ``bundle``, any source)."""
    if store is not None:
        existing = open_existing(store)
        if existing is not None:
            log(f"{store} already holds brain {existing.brain_id!r}; skipping the build")
            stack.callback(existing.close)
            return existing, [], f"Build skipped: `{store}` already holds a brain."
    if builds < 1:
        raise BenchError("--builds must be at least 1 when there is no brain to reuse.")
    if manifest is None:
        check_inputs(bundle)
    reports: list[BuildReport] = []
    brain: Brain | None = None
    for index in range(1, builds + 1):
        if brain is not None:
            brain.close()
        if index == 1 and store is not None:
            target = store
        else:
            # The store in a folder of its own: its audit log goes beside it, in the folder.
            scratch = stack.enter_context(tempfile.TemporaryDirectory(prefix="rr-bench-"))
            target = Path(scratch) / "store"
        try:
            brain, built = build_once(target, bundle, index, builds, manifest or MANIFEST)
        except StoreError as error:
            raise BenchError(str(error)) from None
        reports.append(built)
    assert brain is not None
    stack.callback(brain.close)  # closed before the temporary folders are removed
    temporary = "a fresh temporary store each time" if builds > 1 else "a fresh temporary store"
    if store is None:
        where = temporary
    elif builds == 1:
        where = f"`{store}` (kept)"
    else:
        where = f"`{store}` (kept) first, then {temporary}"
    return brain, reports, f"Built {builds} time(s) into {where}; the last build is queried."


def build_section(reports: list[BuildReport], note: str) -> str:
    """The build table."""
    lines = ["## Build (bundle → SHACL-gated Oxigraph)", "", note]
    if not reports:
        return "\n".join(lines)
    rows = [
        [
            str(i),
            f"{r.read_seconds:.1f}",
            f"{r.write_seconds:.1f}",
            f"{r.total_seconds:.1f}",
            f"{r.triples:,}",
            f"{r.batches}",
            f"{r.sections:,}",
            f"{r.alignments:,}",
            f"{r.triples / r.write_seconds:,.0f}" if r.write_seconds else "n/a",
        ]
        for i, r in enumerate(reports, 1)
    ]
    header = [
        "build",
        "read s",
        "write (gated) s",
        "total s",
        "triples",
        "batches",
        "sections",
        "alignments",
        "gate triples/s",
    ]
    lines += ["", table(header, rows, right=range(len(header)))]
    if len(reports) > 1:
        totals = [r.total_seconds for r in reports]
        lines += [
            "",
            f"Median total: {statistics.median(totals):.1f} s over {len(reports)} builds.",
        ]
    return "\n".join(lines)


# --- 2. questions --------------------------------------------------------------------------


def bench_questions(
    brain: Brain, runs: int, asked: Sequence[str] = QUESTIONS
) -> tuple[list[QuestionTimes], dict[tuple[str, str], QueryTimes]]:
    """Warm up, then time each question ``runs`` times; gather every query's engine time.

    The questions take turns (one run of each, ``runs`` rounds): the machine's speed drifts
    over minutes, and in turns every question sees the same mix of fast and slow moments
    instead of one question getting a slow minute to itself."""
    questions: list[QuestionTimes] = []
    queries: dict[tuple[str, str], QueryTimes] = {}
    for question in asked:
        log(f"asking {question!r}: {WARMUP} warm-up runs")
        for _ in range(WARMUP):
            brain.ask(question)
        answer = brain.ask(question)
        questions.append(QuestionTimes(question, answer.intent, str(answer.verdict.value)))
    log(f"{runs} timed rounds of the {len(asked)} questions, in turns")
    for _ in range(runs):
        for times in questions:
            started = time.perf_counter()
            answer = brain.ask(times.question)
            times.total_ms.append((time.perf_counter() - started) * 1000)
            for run in answer.queries:
                if not run.reused:  # a reused run's time is the first run's, not this ask's
                    times.engine_ms.setdefault(run.name, []).append(run.engine_ms)
                key = (run.name, run.sparql)
                record = queries.setdefault(key, QueryTimes(run.name, run.sparql, run.rows))
                record.engine_ms.append(run.engine_ms)
    return questions, queries


def bench_audit(brain: Brain, runs: int, asked: Sequence[str] = QUESTIONS) -> list[list[str]]:
    """Each question asked by the same reader with and without an audit log, runs interleaved
    so both see the same machine; the log is a fresh one in a temporary folder."""
    rows = []
    with tempfile.TemporaryDirectory() as folder, AuditLog.open(folder) as audit_log:
        # Two readers of one open store: the only difference between them is the log.
        plain = Brain(brain._store, brain.brain_id, audit=None, reader=brain.reader)
        audited = Brain(brain._store, brain.brain_id, audit=audit_log, reader=brain.reader)
        for question in asked:
            log(f"audit overhead: {question!r}, {runs} interleaved pairs")
            for _ in range(WARMUP):
                plain.ask(question)
                audited.ask(question)
            without: list[float] = []
            overhead: list[float] = []
            for _ in range(runs * 3):
                pair = []
                for reader in (plain, audited):
                    started = time.perf_counter()
                    reader.ask(question)
                    pair.append((time.perf_counter() - started) * 1000)
                without.append(pair[0])
                overhead.append(pair[1] - pair[0])
            # The median of paired differences: each pair shares the machine's moment, so
            # load that comes and goes cancels instead of swamping a sub-millisecond cost.
            base, extra = statistics.median(without), statistics.median(overhead)
            rows.append(
                [
                    question,
                    ms(base),
                    ms(extra),
                    f"{extra / base:.1%}",
                    "met" if extra < 0.1 * base else "MISSED",
                ]
            )
        audit_log.sign_tree_head()
    return rows


def audit_section(rows: list[list[str]], runs: int) -> str:
    """The audit overhead table."""
    return "\n".join(
        [
            "## Audit overhead per ask",
            "",
            f"The same reader with and without the audit log ({runs * 3} interleaved pairs per "
            "question; overhead is the median of the paired differences). Each audited ask "
            "appends a started record before it runs, then "
            "a detail sidecar and an outcome, each RFC 8785-canonical; reads are written, not "
            "fsynced, and reach the disk with the next sync (writes to a brain are fsynced "
            "first). Target: under 10% of ask latency.",
            "",
            table(
                ["question", "no log ms (median)", "overhead ms", "overhead", "< 10%"],
                rows,
                right=(1, 2, 3),
            ),
        ]
    )


def bench_heading_search(brain: Brain, runs: int, asked: Sequence[str] = QUESTIONS) -> list[float]:
    """The heading index alone (already built): every question searched ``runs`` times, ms."""
    index, _ = brain.reading.heading_index()
    for question in asked:
        index.search(question)
    times: list[float] = []
    for _ in range(runs):
        for question in asked:
            started = time.perf_counter()
            index.search(question)
            times.append((time.perf_counter() - started) * 1000)
    return times


def bench_chain_alone(brain: Brain, sparql: str, runs: int) -> list[float]:
    """The revision-chain query by itself, straight on the store (no answer shaping)."""
    for _ in range(WARMUP):
        brain._store.query(sparql, brain.graphs)
    return [brain._store.query(sparql, brain.graphs).engine_ms for _ in range(runs)]


def questions_section(
    questions: list[QuestionTimes],
    in_memory: list[QuestionTimes],
    copy_s: float,
    queries: dict[tuple[str, str], QueryTimes],
    chain_alone: list[float] | None,
    searches: list[float],
    runs: int,
) -> str:
    """The question table (on disk and from the in-memory copy), the card target, the heading
    search's own time and the revision-chain target line."""
    rows = [
        Row(
            [q.question, f"{q.intent} / {q.verdict}"],
            [q.total_ms, m.total_ms],
            [", ".join(f"{n} {ms(statistics.median(v))}" for n, v in q.engine_ms.items())],
        )
        for q, m in zip(questions, in_memory, strict=True)
    ]
    compared = report.side_by_side(
        ["question", "intent / verdict"],
        ["on disk", "in memory"],
        rows,
        baseline=1,
        notes=["median engine ms by query (on disk)"],
    )

    def verdict(times: QuestionTimes) -> str:
        median = statistics.median(times.total_ms)
        return f"{ms(median)} ms {'met' if median < CARD_TARGET_MS else 'MISSED'}"

    targets = [
        [q.question, verdict(q), verdict(m)] for q, m in zip(questions, in_memory, strict=True)
    ]
    lines = [
        "## Questions (`Brain.ask`, end to end: router, heading search, queries, card)",
        "",
        f"{WARMUP} warm-up runs, then {runs} timed rounds in which the questions take turns "
        "(each sees the same mix of the machine's fast and slow moments); each cell is p50 / "
        "p99 end-to-end ms, p99 nearest-rank. "
        "*On disk* reads the RocksDB store; *in memory* is the same brain as `ratified serve` "
        "answers: opened with `in_memory=True` (its copy of the reader's graphs took "
        f"{copy_s:.1f} s to make), its heading index built and the heap then frozen for the "
        "collector (`settle_for_serving`).",
        "",
        compared,
        "",
        f"**Card target** (p50 under {CARD_TARGET_MS:g} ms, end to end):",
        "",
        table(["question", "on disk", "in memory"], targets),
        "",
        f"**Heading search alone** (the index built, no query): median "
        f"{ms(statistics.median(searches))} ms, p99 {ms(percentile(searches, 99))} ms over "
        f"{len(searches):,} searches of the questions above (target: well under 1 ms).",
        "",
    ]
    in_answers = [
        t for (name, _), rec in queries.items() if name == CHAIN_QUERY for t in rec.engine_ms
    ]
    if in_answers:
        median = statistics.median(in_answers)
        met = "met" if median < CHAIN_TARGET_MS else "MISSED"
        line = (
            f"**{CHAIN_QUERY}** median engine time: {ms(median)} ms inside answers"
            f" (target < {CHAIN_TARGET_MS:g} ms: {met})"
        )
        if chain_alone:
            alone = statistics.median(chain_alone)
            met = "met" if alone < CHAIN_TARGET_MS else "MISSED"
            line += (
                f"; {ms(alone)} ms run alone on the store, p99 {ms(percentile(chain_alone, 99))} ms"
                f" (target: {met})"
            )
        lines.append(line + ".")
    else:
        lines.append(f"**{CHAIN_QUERY}** did not run in any answer.")
    return "\n".join(lines)


# --- 3. rdflib baseline --------------------------------------------------------------------


def load_rdflib(brain: Brain) -> tuple[rdflib.Dataset, int, float]:
    """The brain's current graphs as an rdflib Dataset whose default graph is their union."""
    log("dumping the current graphs as N-Quads")
    buffer = io.BytesIO()
    brain.dump(buffer, RdfFormat.N_QUADS)
    data = buffer.getvalue()
    quads = data.count(b"\n")
    log(f"loading {quads:,} quads into rdflib (about 10-20 s)")
    started = time.perf_counter()
    dataset = rdflib.Dataset(default_union=True)
    dataset.parse(data=data, format="nquads")
    return dataset, quads, time.perf_counter() - started


def rdflib_rows(dataset: rdflib.Dataset, sparql: str) -> int:
    """Run ``sparql`` on rdflib and read every row; the number of distinct rows."""
    return len(set(dataset.query(sparql)))


def oxigraph_rows(brain: Brain, sparql: str) -> int:
    """The number of distinct rows of ``sparql`` on the brain's store. Oxigraph returns a row
    once per graph of the union that holds it, rdflib once, so distinct rows are compared."""
    rows = brain.query(sparql).rows
    return len({tuple(sorted((k, str(v)) for k, v in row.items())) for row in rows})


def bench_rdflib(
    brain: Brain,
    dataset: rdflib.Dataset,
    queries: dict[tuple[str, str], QueryTimes],
    runs: int,
) -> tuple[list[BaselineRow], list[str]]:
    """Check distinct rows on every query first, then time rdflib; return rows and
    mismatches."""
    mismatches = []
    for record in queries.values():
        log(f"rdflib: checking {record.name}")
        got, expected = rdflib_rows(dataset, record.sparql), oxigraph_rows(brain, record.sparql)
        if got != expected:
            mismatches.append(
                f"MISMATCH: {record.name} returned {expected} distinct row(s) on Oxigraph but "
                f"{got} on rdflib for the same SPARQL over the same graphs."
            )
    if mismatches:
        return [], mismatches
    rows = []
    for record in queries.values():
        log(f"rdflib: timing {record.name} ({runs} runs)")
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            rdflib_rows(dataset, record.sparql)
            times.append((time.perf_counter() - started) * 1000)
        rows.append(
            BaselineRow(
                record.name,
                record.rows,
                statistics.median(record.engine_ms),
                statistics.median(times),
            )
        )
    return rows, []


def baseline_section(rows: list[BaselineRow], quads: int, load_s: float, runs: int) -> str:
    """The side-by-side table."""
    compared = [Row(r.name, [r.oxigraph_ms, r.rdflib_ms], [str(r.rows)]) for r in rows]
    return "\n".join(
        [
            "## Same SPARQL, same data: Oxigraph vs rdflib",
            "",
            f"The current graphs ({quads:,} quads) dumped as N-Quads and loaded into "
            f"`rdflib.Dataset(default_union=True)` in {load_s:.1f} s. Identical bound SPARQL; "
            "distinct rows counted on both and checked equal before timing (Oxigraph returns a "
            "row once per graph of the union holding it; *rows* is Oxigraph's count). Oxigraph "
            f"medians come from the question runs; rdflib medians from {runs} runs (parse + "
            "evaluate + read every row).",
            "",
            report.side_by_side("query", ["oxigraph engine", "rdflib"], compared, notes=["rows"]),
        ]
    )


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store",
        type=Path,
        help="a store folder: reused when it holds a brain, else the first build goes there",
    )
    parser.add_argument("--runs", type=int, default=50, help="timed runs per question (50)")
    parser.add_argument("--builds", type=int, default=1, help="builds to time (1, ~50 s each)")
    parser.add_argument(
        "--bundle", type=Path, default=DEFAULT_BUNDLE, help=f"the corpus ({DEFAULT_BUNDLE})"
    )
    report.options(parser, smoke="the pigeon brain and PIGEON_QUESTIONS, 2 runs")
    args = report.parse(parser, argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.smoke:
        args.runs = 2
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every part and print the report; 1 on a row mismatch, 2 on a setup problem."""
    args = parse_args(argv)
    sections = []
    memory: list[tuple[str, float]] = []
    with ExitStack() as stack:
        try:
            if args.smoke:
                scratch = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="rr-")))
                manifest, source = pigeon_source(scratch)
                built = run_builds(stack, args.store, args.builds, source, manifest)
            else:
                built = run_builds(stack, args.store, args.builds, args.bundle)
        except BenchError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        brain, reports, note = built
        asked = PIGEON_QUESTIONS if args.smoke else QUESTIONS
        memory.append(("after build / open", peak_rss_mib()))
        sections.append(build_section(reports, note))

        # Answers are timed without an audit log; the audit section adds one and compares.
        brain = Brain(brain._store, brain.brain_id, audit=None, reader=brain.reader)
        # From memory first, as a process that serves from memory is: after hundreds of
        # answers from disk the same process answered from memory more slowly, most likely
        # as RocksDB's cached blocks stay in the malloc arenas of the threads that read them.
        log("copying the reader's graphs into memory")
        copied = Brain(brain._store, brain.brain_id, in_memory=True, reader=brain.reader)
        started = time.perf_counter()
        copied.holdings()  # the first question makes the copy
        copy_s = time.perf_counter() - started
        threshold = gc.get_threshold()
        settle_for_serving(copied)  # as `ratified serve` does before its first question
        in_memory, _ = bench_questions(copied, args.runs, asked)
        searches = bench_heading_search(copied, args.runs, asked)
        gc.unfreeze()
        gc.set_threshold(*threshold)
        del copied
        questions, queries = bench_questions(brain, args.runs, asked)
        chain = next((r for (name, _), r in queries.items() if name == CHAIN_QUERY), None)
        chain_alone = None
        if chain is not None:
            log(f"timing {CHAIN_QUERY} alone ({args.runs} runs)")
            chain_alone = bench_chain_alone(brain, chain.sparql, args.runs)
        memory.append(("after questions", peak_rss_mib()))
        sections.append(
            questions_section(
                questions, in_memory, copy_s, queries, chain_alone, searches, args.runs
            )
        )
        sections.append(audit_section(bench_audit(brain, args.runs, asked), args.runs))

        dataset, quads, load_s = load_rdflib(brain)
        baseline, mismatches = bench_rdflib(brain, dataset, queries, RDFLIB_RUNS)
        if mismatches:
            for line in mismatches:
                print(line)
            print(
                "error: rdflib and Oxigraph disagree on rows, so no timing is compared.",
                file=sys.stderr,
            )
            return 1
        memory.append(("after rdflib baseline (end)", peak_rss_mib()))
        sections.append(baseline_section(baseline, quads, load_s, RDFLIB_RUNS))
        del dataset

    memory_rows = [[label, f"{mib:,.0f}"] for label, mib in memory]
    sections.append(
        "\n".join(
            [
                "## Peak memory (max RSS of this process so far)",
                "",
                table(["checkpoint", "peak RSS MiB"], memory_rows, right=(1,)),
            ]
        )
    )
    report.publish("core", "ratified-rdf core benchmark", sections, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
