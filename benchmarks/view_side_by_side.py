"""Deriving the card view of a built brain with this checkout against an earlier commit.

Run from the repository root::

    python -m benchmarks.view_side_by_side --store DIR --before 7119135 [--runs 2]
    python -m benchmarks.view_side_by_side --smoke      # the pigeon brain, against HEAD

The earlier commit is checked out with ``git worktree`` into a temporary folder. Each run
derives the view once with each tree (alternating, the earlier first), in a process of its own
with that tree's ``src`` first on ``PYTHONPATH``: the store's latest run's graphs (its view
graphs left out) are copied into a store in memory, as a build stages a run that fits, and
``graph.views.view_batches`` derives the view from them. Each process reports the view's
triples and batches, an order-free digest of them, the seconds the derivation took, and the
peak resident memory it added over the staged copy. The report gives each tree's medians, the
ratio of this checkout's to the earlier one's, and whether both derived the same triples
(Markdown on stdout and in ``benchmarks/out/view_side_by_side.md``; with ``--record``, in
``benchmarks/RESULTS.md``). Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks import report
from benchmarks.report import BenchError, Row

ROOT = report.REPO
log = report.logger("view_side_by_side")


def worker(store_path: str) -> dict[str, Any]:
    """Derive the view of the latest run in ``store_path`` with whichever ``ratified_rdf``
    comes first on the path; what it measured."""
    from ratified_rdf import Brain

    with Brain.open(store_path) as brain:
        return derive(brain)


def derive(brain: Any) -> dict[str, Any]:
    """Derive the card view of ``brain``'s latest run again, from a copy in memory of the
    graphs the run wrote (its view graphs left out), as a build stages a run that fits: its
    triples and batches, an order-free digest of them, the seconds the derivation took and the
    peak resident memory it added over the copy. Uses only names every commit since the card
    view has (``brain`` is typed loosely for that reason)."""
    import gc
    import hashlib
    import resource
    import time

    from ratified_rdf.graph.mapping import RunContext
    from ratified_rdf.graph.store import OxigraphStore
    from ratified_rdf.graph.views import is_view_graph, view_batches

    graphs = list(brain.scope.read_graphs)
    run_id = max(g.split("/")[-2] for g in graphs)
    written = [g for g in graphs if f"/{run_id}/" in g and not is_view_graph(g)]
    disk = brain.reading.store
    if not isinstance(disk, OxigraphStore):
        raise BenchError("The brain is not in an embedded Oxigraph store.")
    memory = OxigraphStore()
    memory.load_from(disk, written)
    tenant = brain.reader.tenant
    brain_id = written[0].split("/")[-3]
    gc.collect()
    rss_before = report.rss_mib() or 0.0
    started = time.perf_counter()
    triples = batches = digest = 0
    for batch in view_batches(lambda: memory, RunContext(tenant, brain_id, run_id), written):
        batches += 1
        triples += len(batch.triples)
        for triple in batch.triples:
            hashed = hashlib.blake2b(f"{batch.graph} {triple}".encode(), digest_size=8)
            digest ^= int.from_bytes(hashed.digest(), "big")
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "triples": triples,
        "batches": batches,
        "digest": f"{digest:016x}",
        "seconds": seconds,
        "added_mib": peak - rss_before,
    }


def _derive(tree: Path, store: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "src"), str(ROOT)])}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.view_side_by_side", "--worker", str(store)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False,
    )  # fmt: skip
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        raise BenchError(f"Deriving the view with {tree} failed:\n{done.stderr[-2000:]}")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _pigeon_store(folder: Path) -> Path:
    """The fictional pigeon brain, built with this checkout, for ``--smoke``."""
    from ratified_rdf import Brain
    from tests.pigeon import MANIFEST, make_pigeon_repo

    store = folder / "pigeon-store"
    brain, _ = Brain.build(MANIFEST, path=store, source=str(make_pigeon_repo(folder)))
    brain.close()
    return store


def main(argv: Sequence[str] | None = None) -> int:
    """Derive with both trees, alternating; print the report (2 when a derivation fails)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="a built brain's store folder")
    parser.add_argument("--before", help="the earlier commit to compare with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    report.options(parser, smoke="the pigeon brain, against HEAD, one run")
    args = report.parse(parser, argv)
    if args.worker is not None:
        print(json.dumps(worker(args.worker)))
        return 0
    if not args.smoke and (args.before is None or args.store is None):
        parser.error("--store and --before are required (or --smoke)")
    with tempfile.TemporaryDirectory(prefix="view-side-by-side-") as folder:
        if args.smoke:
            args.store, args.before, args.runs = _pigeon_store(Path(folder)), "HEAD", 1
        try:
            results = report.alternate(
                args.before, args.runs, lambda name, run, tree: _derive(tree, args.store), log
            )
        except BenchError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    rows = [
        Row(what, [[r[key] for r in results["before"]], [r[key] for r in results["after"]]])
        for what, key in (("seconds", "seconds"), ("peak memory added, MiB", "added_mib"))
    ]
    table = report.side_by_side(
        "derivation",
        [args.before, "this checkout"],
        rows,
        unit="(s or MiB)",
        number=report.seconds,
        spread="",
    )
    before, after = results["before"][0], results["after"][0]
    same = "the same triples" if before["digest"] == after["digest"] else "different triples"
    sections = [
        f"The card view of the latest run in `{args.store}`, derived from a copy of its graphs "
        f"in memory, {args.runs} alternating run(s); medians.",
        table,
        f"{args.before}: {before['triples']:,} view triples in {before['batches']:,} batches; "
        f"this checkout: {after['triples']:,} in {after['batches']:,}; {same} (order-free "
        "digest of every triple of every batch).",
    ]
    report.publish(
        "view_side_by_side", "Deriving the card view against an earlier commit", sections,
        record=args.record,
    )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
