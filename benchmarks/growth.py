"""Growth probe: does a card's cost stay with its own data when the graph around it grows?

Run from the repository root::

    python -m benchmarks.growth [--store DIR] [--copies 10] [--runs 40] [--bundle PATH] [--smoke]

A card should cost what its own section's data costs, whatever else the store holds. A query
that Oxigraph evaluates with nothing bound (a UNION, or an OPTIONAL of several patterns) scans
every revision or draft instead, and grows with the corpus. ``benchmarks.scale`` finds such
growth in hours (a synthetic corpus, built at ×1, ×10, ×100); this probe finds it in seconds,
on the real TLS brain:

1. The brain (``--store DIR``, or built from the bundle into a temporary folder, about a
   minute) is opened with an in-memory copy of the reader's graphs, and the questions of
   ``benchmarks.core`` are asked once to learn which bound queries each card runs.
2. A second in-memory store holds the same graphs plus ``--copies`` copies of them with every
   ratified-rdf IRI renamed (``…/id/`` → ``…/id/copyN/``); literals stay as they are, so a
   copy's section numbers, headings and names look like the original's. The graph grows
   ``copies + 1`` times and the cards' own data does not.
3. Every query is timed on both stores (interleaved, ``--runs`` each, p50), and its rows are
   checked equal on both: a query whose rows change picked up a copy, and is reported as
   ``LEAKS`` (exit status 1), except queries marked ``# Whole graph:`` (``holdings``,
   ``documents``: "the graph doesn't know" lists what it holds), which must grow. Then each
   question end to end, on a reader whose copy is swapped for the grown store.

The growth ratio of a well-anchored query is not 1: bigger hash tables cost a little more per
lookup. The report gives the median ratio over all queries as that floor and flags a query
that grows more than 1.5 times the floor. Markdown on stdout and in ``benchmarks/out/growth.md``
(with ``--record``, in ``benchmarks/RESULTS.md``); progress on stderr. ``--smoke`` probes the
pigeon brain with one copy and 2 runs. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from pyoxigraph import NamedNode, RdfFormat, Store

from benchmarks import report
from benchmarks.core import (
    DEFAULT_BUNDLE,
    PIGEON_QUESTIONS,
    QUESTIONS,
    build_once,
    check_inputs,
    open_existing,
    pigeon_store,
)
from benchmarks.report import BenchError, Row
from ratified_rdf.brain import Brain
from ratified_rdf.queries.files import load_query
from ratified_rdf.queries.run import source_of

log = report.logger("growth")
IRI_SPACE = b"<https://w3id.org/ratified-rdf/id/"
FLAG = 1.5
"""A query growing more than this many times the floor is flagged."""


def grown_copy(source: Brain, graphs: Sequence[str], copies: int) -> Store:
    """The reader's graphs plus ``copies`` renamed copies, in one in-memory store."""
    store = Store()
    for graph in graphs:
        data = source._store.dump_graph(graph)  # type: ignore[attr-defined]
        name = NamedNode(graph)
        store.bulk_load(data, RdfFormat.N_TRIPLES, to_graph=name)
        for n in range(1, copies + 1):
            renamed = data.replace(IRI_SPACE, IRI_SPACE[:-1] + f"copy{n}/".encode())
            store.bulk_load(renamed, RdfFormat.N_TRIPLES, to_graph=name)
    return store


def rows_of(store: Store, sparql: str, graphs: list[NamedNode]) -> tuple[float, list[tuple]]:
    """(milliseconds, sorted rows as text) of one run."""
    started = time.perf_counter()
    result = store.query(sparql, default_graph=graphs, named_graphs=graphs)
    rows = [tuple(map(str, solution)) for solution in result]
    return (time.perf_counter() - started) * 1000, sorted(rows)


def probe_queries(
    reader: Brain, base: Store, grown: Store, runs: int, asked: Sequence[str]
) -> list[tuple[str, str, int, float, float, bool]]:
    """(query, first question, rows, ×1 p50 ms, grown p50 ms, rows equal) per distinct query."""
    seen: dict[str, tuple[str, str]] = {}
    for question in asked:
        for run in reader.ask(question).queries:  # reused runs too: their SPARQL is timed here
            seen.setdefault(run.name, (question, run.sparql))
    results = []
    for name, (question, sparql) in seen.items():
        reads = load_query(name).reads
        graphs = [NamedNode(g) for g in reader.read_graphs if not reads or source_of(g) in reads]
        log(f"{name}: {runs} runs on each store")
        small: list[float] = []
        large: list[float] = []
        for _ in range(runs):
            seconds, small_rows = rows_of(base, sparql, graphs)
            small.append(seconds)
            seconds, large_rows = rows_of(grown, sparql, graphs)
            large.append(seconds)
        results.append(
            (
                name,
                question,
                len(small_rows),
                statistics.median(small),
                statistics.median(large),
                small_rows == large_rows,
            )
        )
    return results


def probe_cards(
    reader: Brain, grown: Store, runs: int, asked: Sequence[str]
) -> list[tuple[str, float, float, bool]]:
    """(question, ×1 p50 ms, grown p50 ms, same answer) end to end, the grown store swapped in."""
    copy = next(iter(reader.reading.copies.copies.values()))
    own = copy._copy
    results = []
    for question in asked:
        timings: dict[str, list[float]] = {"base": [], "grown": []}
        answers = {}
        for _ in range(runs):
            for label, store in (("base", own), ("grown", grown)):
                copy._copy = store
                # The brain does not know its copy was swapped: rows it kept from the other
                # store would be reused, so whole-graph queries run afresh on every ask here.
                reader.reading.lookups.kept.clear()
                started = time.perf_counter()
                answer = reader.ask(question)
                timings[label].append((time.perf_counter() - started) * 1000)
                answers[label] = answer.model_dump(include={"verdict", "results", "evidence"})
        copy._copy = own
        results.append(
            (
                question,
                statistics.median(timings["base"]),
                statistics.median(timings["grown"]),
                answers["base"] == answers["grown"],
            )
        )
    return results


def sections(
    queries: list[tuple[str, str, int, float, float, bool]],
    cards: list[tuple[str, float, float, bool]],
    copies: int,
    quads: tuple[int, int],
    runs: int,
) -> list[str]:
    """The report's sections."""
    anchored = [q for q in queries if not load_query(q[0]).whole_graph]
    floor = (
        statistics.median(large / small for *_, small, large, _ in anchored) if anchored else 1.0
    )
    rows = []
    for name, _question, count, small, large, same in sorted(
        queries, key=lambda q: q[4] / q[3], reverse=True
    ):
        if load_query(name).whole_graph:
            verdict = "whole graph (by design)"
        else:
            verdict = "LEAKS" if not same else "grows" if large / small > FLAG * floor else "ok"
        rows.append(Row(name, [small, large], [str(count), verdict]))
    card_rows = [
        Row(q, [small, large], ["same" if same else "DIFFERENT"]) for q, small, large, same in cards
    ]
    size = copies + 1
    names = ["×1 p50", f"×{size} p50"]
    return [
        f"The reader's graphs ({quads[0]:,} quads) against the same graphs with {copies} "
        f"renamed copies beside them ({quads[1]:,} quads, ×{size}), both in memory. p50 of "
        f"{runs} interleaved runs. Floor (median growth over the queries about one section, "
        f"draft or person): **{floor:.2f}×**; a query above {FLAG:g}× the floor is flagged.",
        report.side_by_side("query", names, rows, notes=["rows", "verdict"]),
        "Each question end to end (`Brain.ask`, unaudited, the copy swapped for the grown "
        "store); the answer must be the same on both, except where \"the graph doesn't "
        'know" lists what the graph holds:',
        report.side_by_side("question", names, card_rows, notes=["answer"]),
    ]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built TLS brain (default: build one)")
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE, help="the TLS git bundle")
    parser.add_argument("--copies", type=int, default=10, help="renamed copies to add (10)")
    parser.add_argument("--runs", type=int, default=40, help="timed runs per query (40)")
    report.options(parser, smoke="the pigeon brain, 1 copy, 2 runs")
    args = report.parse(parser, argv)
    if args.copies < 1 or args.runs < 1:
        parser.error("--copies and --runs must be at least 1")
    if args.smoke:
        args.copies, args.runs = 1, 2
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Build or open the brain, grow a copy, time every card query on both."""
    args = parse_args(argv)
    try:
        return run(args)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    """The probe itself; 1 when a query's rows picked up a copy."""
    asked = PIGEON_QUESTIONS if args.smoke else QUESTIONS
    with tempfile.TemporaryDirectory(prefix="rr-growth-") as scratch:
        store = pigeon_store(Path(scratch)) if args.smoke else args.store
        brain = open_existing(store) if store else None
        if brain is None:
            check_inputs(args.bundle)
            brain, _ = build_once(args.store or Path(scratch) / "store", args.bundle, 1, 1)
        reader = Brain(
            brain._store, brain.brain_id, audit=None, in_memory=True, reader=brain.reader
        )
        reader.holdings()  # makes the in-memory copy
        base = next(iter(reader.reading.copies.copies.values()))._copy
        log(f"adding {args.copies} renamed copies of {len(base):,} quads")
        grown = grown_copy(brain, reader.read_graphs, args.copies)
        queries = probe_queries(reader, base, grown, args.runs, asked)
        cards = probe_cards(reader, grown, max(5, args.runs // 4), asked)
        quads = (len(base), len(grown))
        brain.close()
    title = "Growth probe: does a card's cost stay with its own data?"
    parts = sections(queries, cards, args.copies, quads, args.runs)
    report.publish("growth", title, parts, record=args.record)
    leaks = [n for n, *_, same in queries if not same and not load_query(n).whole_graph]
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
