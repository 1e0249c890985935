"""A build against a bulk load of its own output (and against an earlier commit's build, and
the gate's workers against none), in one run.

Run from the repository root::

    python -m benchmarks.build_vs_load [--runs 2] [--workers 2,1] [--before COMMIT]
        [--manifest records/tls13] [--source ../shared/corpus/tls13-spec/tls13-spec.bundle]
    python -m benchmarks.build_vs_load --smoke      # the pigeon brain, one run

Each run builds the brain once per gate worker count in ``--workers`` (``RATIFIED_GATE_WORKERS``;
alternating, so every count sees the same machine), each into a fresh temporary store, with
``python -m ratified_rdf build`` as a user runs it. With ``--before``, the earlier commit is
checked out in a temporary ``git worktree`` and each run builds with it too (its ``src`` first
on ``PYTHONPATH``, its manifest), the earlier tree first: this script took over what
``build_side_by_side`` measured, with the bulk load beside every build. Then, beside each
build, the brain's own
N-Quads (the current run's graphs, as ``ratified dump`` writes them) are bulk-loaded with
``pyoxigraph.Store(path).bulk_load`` into a fresh folder: what the store itself needs to hold
the same quads. The report gives, per worker count, the medians of the build's read (git,
sources, records) and write (mapping, staging, the card view, the gate, the write) seconds,
the bulk load's, the processor seconds of each build's own process (and of what it waited
for: gate workers a fork server started are not counted), and those of every process the
build started (on Linux this script reaps what a build leaves behind, its fork server and
the gate workers that server started, so their time is counted: a machine's whole cost of
a build), and the build ÷ bulk load ratio; and the content hash of every
brain built (``Brain.content_hash``: the same facts, whatever the worker count), which must
agree (an earlier commit's too, unless it changed what a build writes).

The machine's load average is printed at the start and the end: on a busy machine, ratios
measured side by side are what count. Markdown on stdout and in
``benchmarks/out/build_vs_load.md``; with ``--record``, in ``benchmarks/RESULTS.md``. Nothing
here asserts on timings. Exit status: 0, 1 when the brains' hashes differ, 2 when a build fails.
"""

from __future__ import annotations

import argparse
import ctypes
import io
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from pyoxigraph import RdfFormat, Store

from benchmarks import report
from benchmarks.core import DEFAULT_BUNDLE, pigeon_source
from benchmarks.report import BenchError, Row
from ratified_rdf import Brain, Reader

ROOT = report.REPO
_TIMES = re.compile(r"Read ([\d.]+) s, wrote ([\d.]+) s, total ([\d.]+) s")
log = report.logger("build_vs_load")


def adopt_orphans() -> bool:
    """Make this process the reaper of every process its children leave behind (Linux's
    ``PR_SET_CHILD_SUBREAPER``), so that a build's fork server and the gate workers it
    started, which outlive the build by a moment, are reaped here and their processor time
    counted (:func:`reap_orphans`); False where that cannot be done."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


_PR_SET_CHILD_SUBREAPER = 36
ORPHANS_GRACE_SECONDS = 60.0
"""How long :func:`reap_orphans` waits for a build's leftover processes to end."""


def reap_orphans() -> None:
    """Reap every process a build left behind (adopted by :func:`adopt_orphans`), waiting
    up to :data:`ORPHANS_GRACE_SECONDS` for them to end: their processor time then counts
    in this process's ``RUSAGE_CHILDREN``."""
    deadline = time.monotonic() + ORPHANS_GRACE_SECONDS
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return  # none left
        if pid == 0:
            time.sleep(0.05)
    log("some process a build started had not ended after a minute; its time is not counted")


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def build(
    manifest: Path, source: str, store: Path, workers: int, tree: Path = ROOT
) -> tuple[float, float, float, float, float]:
    """One build as a user runs it, with ``tree``'s code: (read, write, total) seconds as it
    reports them, the processor seconds of its process and of those it waited for (not a
    fork server's), and those of every process it started (the same without
    :func:`adopt_orphans`)."""
    before = _cpu()
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "RATIFIED_GATE_WORKERS": str(workers)}
    done = subprocess.run(
        [sys.executable, "-m", "ratified_rdf", "build", str(manifest), "--source", source,
         "--store", str(store), "--quiet"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    found = _TIMES.search(done.stdout + done.stderr)
    if done.returncode != 0 or found is None:
        raise BenchError(
            f"The build with {workers} gate worker(s) in {tree} failed:\n{done.stderr[-2000:]}"
        )
    read, write, total = (float(x) for x in found.groups())
    own = _cpu() - before
    reap_orphans()
    return read, write, total, own, _cpu() - before


def bulk_load(store: Path, into: Path) -> tuple[float, int, str]:
    """The built brain's N-Quads bulk-loaded into a fresh store at ``into``: (seconds, quads,
    the brain's content hash)."""
    with Brain.open(store, reader=Reader(clearance="restricted")) as brain:
        data = io.BytesIO()
        brain.dump(data, RdfFormat.N_QUADS)
        digest = brain.content_hash()
    quads = data.getvalue()
    started = time.perf_counter()
    fresh = Store(str(into))
    fresh.bulk_load(quads, RdfFormat.N_QUADS)
    fresh.flush()
    seconds = time.perf_counter() - started
    del fresh
    return seconds, quads.count(b"\n"), digest


def main(argv: Sequence[str] | None = None) -> int:
    """Build with each tree and worker count, alternating, and bulk-load each build's output."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--workers", default="2,1", help="gate worker counts, comma-separated")
    parser.add_argument("--before", help="an earlier commit to build beside this checkout")
    parser.add_argument("--manifest", default="records/tls13", help="relative to each tree")
    parser.add_argument("--source", default=str(DEFAULT_BUNDLE))
    report.options(parser, smoke="the pigeon brain, one run")
    args = report.parse(parser, argv)
    counts = [int(w) for w in args.workers.split(",")]
    adopted = adopt_orphans()
    started_load = os.getloadavg()
    digests: dict[str, set[str]] = {}
    quads = 0
    with tempfile.TemporaryDirectory(prefix="build-vs-load-") as folder, ExitStack() as stack:
        trees: list[tuple[str, Path]] = [("this checkout", ROOT)]
        if args.before:
            try:
                trees.insert(0, (args.before, stack.enter_context(report.checkout(args.before))))
            except BenchError as error:
                print(f"error: {error}", file=sys.stderr)
                return 2
        columns = [(name, tree, w) for name, tree in trees for w in counts]
        times: dict[int, list[tuple[float, ...]]] = {c: [] for c in range(len(columns))}
        manifest = ROOT / args.manifest
        if args.smoke:
            manifest, repo = pigeon_source(Path(folder))
            args.runs, args.source = 1, str(repo)
        try:
            for run in range(args.runs):
                for column, (name, tree, workers) in enumerate(columns):
                    store = Path(folder) / f"brain-{column}-{run}"
                    mine = manifest if args.smoke else tree / args.manifest
                    log(f"run {run + 1}: building with {name}, {workers} gate worker(s)")
                    read, write, total, cpu, every = build(mine, args.source, store, workers, tree)
                    log(f"run {run + 1}: bulk-loading its N-Quads into a fresh store")
                    load_s, quads, digest = bulk_load(store, Path(folder) / f"load-{column}-{run}")
                    digests.setdefault(name, set()).add(digest)
                    times[column].append((read, write, total, load_s, cpu, every))
                    busy = os.getloadavg()[0]
                    log(f"  build {total:.1f} s (read {read:.1f}, write {write:.1f}, "
                        f"{cpu:.1f} processor s, {every:.1f} with every process it started); "
                        f"bulk load {load_s:.1f} s; load average {busy:.1f}")  # fmt: skip
        except BenchError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    ended_load = os.getloadavg()
    labels = [
        f"{name}, {w} gate worker(s)" if len(trees) > 1 else f"{w} gate worker(s)"
        for name, _, w in columns
    ]
    rows = [
        Row(step, [[t[index] for t in times[c]] for c in range(len(columns))])
        for index, step in enumerate(
            (
                "build: read",
                "build: write",
                "build: total",
                "bulk load",
                "build: processor (own process)",
                "build: processor (every process it started)"
                if adopted
                else "build: processor (not counted: no subreaper here)",
            )
        )
    ]
    table = report.side_by_side("step", labels, rows, unit="s", number=report.seconds, spread="")
    ratios = report.table(
        ["build", "build ÷ bulk load (median of runs)"],
        [
            [label, report.ratio(_median([t[2] / t[3] for t in times[c]]))]
            for c, label in enumerate(labels)
        ],
        right=[1],
    )
    mine = digests.get("this checkout", set())
    same = len(mine) == 1
    shown = manifest.relative_to(ROOT) if manifest.is_relative_to(ROOT) else manifest.name
    hashes = "Content hash of every brain built: " + (
        f"the same (`{next(iter(mine))[:16]}…`)." if same else f"DIFFERENT: {mine}"
    )
    if args.before:
        earlier = digests.get(args.before, set())
        hashes += (
            f" {args.before}'s builds: the same as this checkout's."
            if earlier == mine
            else f" {args.before}'s builds: {', '.join(sorted(d[:16] for d in earlier))}."
        )
    sections = [
        f"`{shown}` from `{args.source}`, {args.runs} alternating run(s), "
        f"{quads:,} quads; medians. Load average at the start "
        f"{' / '.join(f'{x:.1f}' for x in started_load)}, at the end "
        f"{' / '.join(f'{x:.1f}' for x in ended_load)} ({os.cpu_count()} CPU(s)).",
        table,
        ratios,
        hashes,
    ]
    report.publish("build_vs_load", "A build against a bulk load of its own output", sections,
                   record=args.record)  # fmt: skip
    return 0 if same else 1


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


if __name__ == "__main__":
    sys.exit(main())
