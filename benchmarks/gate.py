"""The SHACL gate's engines side by side on the batches of one real build.

Run from the repository root::

    python -m benchmarks.gate                     # the TLS build's batches
    python -m benchmarks.gate --bundle ../shared/corpus/quic-base-drafts/base-drafts.bundle \
        --manifest records/quic
    python -m benchmarks.gate --smoke             # the pigeon build, in seconds

The build runs once (into a temporary store, gated as usual) and keeps every batch the gate
prepared: its triples with the stored context it is checked against, and its focus nodes.
Then each engine validates every batch in this one process, one after the other, the same
batches in the same order: pyshacl (the reference), the compiled engine the gate uses
(pyshacl-turbo) and, with ``--weighed``, the other candidates that were weighed (pyshifty,
pyrudof), when installed. For each: seconds, triples per second, the ratio to pyshacl, and how
many batches got pyshacl's verdict (focus node, path and constraint of every violation).
Preparing the batches (reading their context from the staged run) is timed too, as it is part
of the gate's cost; and then the gate as a build runs it (``ShaclGate.check_staged`` on the
staged run, each batch prepared and validated in the gate's worker processes), wall clock,
against the same in one process.

The report is Markdown on stdout and in ``benchmarks/out/gate.md`` (with ``--record``, in
``benchmarks/RESULTS.md``). Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib.metadata import version
from pathlib import Path

import rdflib

from benchmarks import report
from benchmarks.core import DEFAULT_BUNDLE, pigeon_source
from benchmarks.report import Row
from ratified_rdf.graph.gate import ShaclGate, StagedBatch, StagedRun, load_shapes
from ratified_rdf.graph.shacl_engines import Pyshacl, Turbo, verdict
from ratified_rdf.graph.violations import PreparedBatch, violations_of
from tests.recording import RecordingGate, recorded_build

REPO = Path(__file__).resolve().parents[1]
NAME = "gate"
log = report.logger(NAME)

Verdict = frozenset[tuple[str, str | None, str | None]]


def _report_verdict(results: rdflib.Graph, focus: set[str]) -> Verdict:
    return verdict(v for v in violations_of(results, "bench") if v.focus_node in focus)


def candidates(
    shapes: rdflib.Graph, weighed: bool
) -> dict[str, Callable[[PreparedBatch], Verdict]]:
    """Each engine to time, by name, as a function from a batch to its verdict; with
    ``weighed``, also the other engines weighed for the gate, where installed."""
    reference = Pyshacl(shapes)
    native = Turbo(shapes, reference)
    engines: dict[str, Callable[[PreparedBatch], Verdict]] = {
        reference.name: lambda p: verdict(reference.validate(p)),
        native.name + " (the gate's)": lambda p: verdict(native.validate(p)),
    }
    ntriples = shapes.serialize(format="nt")
    if weighed and importlib.util.find_spec("shifty") is not None:
        import shifty

        prepared_shapes = shifty.PreparedValidator(ntriples)

        def with_shifty(p: PreparedBatch) -> Verdict:
            _, results, _ = prepared_shapes.validate(
                p.ntriples.decode(), infer=False, minimum_severity="violation"
            )
            return _report_verdict(results, set(p.focus_nodes))

        engines[f"pyshifty {version('pyshifty')}"] = with_shifty
    if weighed and importlib.util.find_spec("pyrudof") is not None:
        import pyrudof

        session = pyrudof.Rudof(pyrudof.RudofConfig())
        session.read_shacl(ntriples, format=pyrudof.ShaclFormat.NTriples)

        def with_rudof(p: PreparedBatch) -> Verdict:
            session.read_data(p.ntriples.decode(), format=pyrudof.RDFFormat.NTriples)
            focus = set(p.focus_nodes)
            found = set()
            for entry in session.validate_shacl().violations:
                node = str(entry.focus_node).strip("<>")
                if "violation" in str(entry.severity).lower() and node in focus:
                    path = str(entry.path).strip("<>") if entry.path is not None else None
                    found.add((node, path, str(entry.constraint_component).strip("<>")))
            return frozenset(found)

        engines[f"pyrudof {version('pyrudof')}"] = with_rudof
    return engines


def measure(
    batches: Sequence[PreparedBatch], engines: dict[str, Callable[[PreparedBatch], Verdict]]
) -> dict[str, tuple[float, int]]:
    """Each engine's seconds over every batch, and the batches where it reached the first
    engine's (the reference's) verdict."""
    verdicts: dict[str, list[Verdict]] = {}
    spent: dict[str, float] = {}
    for name, engine in engines.items():
        log(f"{name}: {len(batches)} batches")
        started = time.perf_counter()
        verdicts[name] = [engine(p) for p in batches]
        spent[name] = time.perf_counter() - started
    reference = verdicts[next(iter(engines))]
    return {
        name: (spent[name], sum(a == b for a, b in zip(found, reference, strict=True)))
        for name, found in verdicts.items()
    }


def gate_as_built(
    runs: Sequence[tuple[list[StagedBatch], StagedRun]],
) -> list[tuple[int, float]]:
    """Seconds the build's gate takes to check the recorded staged runs again, with its own
    number of workers and with one (everything in this process)."""
    gate = ShaclGate()
    spent: list[tuple[int, float]] = []
    for workers in dict.fromkeys((_default_workers(), 1)):
        log(f"the gate as built, {workers} worker(s)")
        started = time.perf_counter()
        for staged, run in runs:
            gate.check_staged(staged, run, workers=workers)
        spent.append((workers, time.perf_counter() - started))
    return spent


def _default_workers() -> int:
    return min(os.cpu_count() or 1, 4)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", type=Path, default=DEFAULT_BUNDLE)
    parser.add_argument("--manifest", type=Path, default=REPO / "records" / "tls13")
    parser.add_argument(
        "--weighed",
        action="store_true",
        help="also time the other engines weighed for the gate (pyshifty, pyrudof), if installed",
    )
    report.options(parser, smoke="the pigeon build")
    args = report.parse(parser, argv)
    if args.smoke:
        folder = Path(tempfile.mkdtemp(prefix="ratified-gate-smoke-"))
        manifest, repo = pigeon_source(folder)
        source = str(repo)
    else:
        if not args.bundle.is_file():
            raise report.BenchError(
                f"The corpus bundle is missing: looked for {args.bundle}. Put the shared "
                "corpus beside the checkout, or name one with --bundle."
            )
        manifest, source = args.manifest, str(args.bundle)
    log(f"building {manifest} from {source}, keeping every batch the gate prepares")
    batches, preparing, built = recorded_build(manifest, source)
    gate = built.gate
    as_built = gate_as_built(RecordingGate.runs)
    triples = sum(p.ntriples.count(b"\n") for p in batches)
    shapes = load_shapes()
    engines = candidates(shapes, args.weighed)
    results = measure(batches, engines)
    names = list(engines)
    base = results[names[0]][0]
    rows = [
        Row(
            name,
            [spent],
            [
                f"{triples / spent:,.0f}",
                report.ratio(base, spent),
                f"{agreed} of {len(batches)}",
            ],
        )
        for name, (spent, agreed) in results.items()
    ]
    table = report.side_by_side(
        "engine",
        ["validating"],
        rows,
        unit="s",
        number=report.seconds,
        spread="",
        notes=["triples/s", "speed-up over pyshacl", "batches with pyshacl's verdict"],
    )
    native = results[names[1]][0]
    lines = [
        "## Engines on one build's batches",
        "",
        f"{len(batches)} batches of {manifest.name} ({triples:,} triples with their context), "
        f"each validated by every engine in this process. The build was gated by {gate}.",
        "",
        table,
        "",
        f"Preparing the batches (reading each one's context from the staged run) took "
        f"{report.seconds(preparing)} in the recorded build, in its own process beside the "
        "gate's workers; with the gate's engine's time above, prepare + validate is "
        f"{triples / (preparing + native):,.0f} triples/s. The table below times both "
        "without anything beside them.",
        "",
        "The gate as a build runs it (`ShaclGate.check_staged` on the staged run: each batch "
        "prepared from the run's gate context and validated in a worker process), wall clock:",
        "",
        "| gate workers | seconds | triples/s |",
        "| ---: | ---: | ---: |",
        *(
            f"| {workers} | {report.seconds(spent)} | {triples / spent:,.0f} |"
            for workers, spent in as_built
        ),
        "",
    ]
    report.publish(
        NAME,
        "SHACL gate engines",
        ["\n".join(lines)],
        extra={"run": report.command(NAME, argv)},
        record=args.record,
    )


if __name__ == "__main__":
    main()
