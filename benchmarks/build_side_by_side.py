"""Build time of this checkout against an earlier commit, side by side in one run.

Run from the repository root::

    python -m benchmarks.build_side_by_side --before ceee1de [--runs 2]
        [--manifest records/tls13] [--source ../shared/corpus/tls13-spec/tls13-spec.bundle]
    python -m benchmarks.build_side_by_side --smoke      # the pigeon brain, against HEAD

The earlier commit is checked out with ``git worktree`` into a temporary folder. Each run builds
the brain once with each tree (alternating, the earlier first), each into a fresh temporary
store, with ``python -m ratified_rdf build`` and that tree's ``src`` first on ``PYTHONPATH``;
the read, write and total seconds the build reports are collected. The report gives each
tree's medians and the ratio of this checkout's to the earlier one's (Markdown on stdout and
in ``benchmarks/out/build_side_by_side.md``; with ``--record``, in ``benchmarks/RESULTS.md``).
Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.core import DEFAULT_BUNDLE, pigeon_source
from benchmarks.report import BenchError, Row

ROOT = report.REPO
_TIMES = re.compile(r"Read ([\d.]+) s, wrote ([\d.]+) s, total ([\d.]+) s")
log = report.logger("build_side_by_side")


def _build(tree: Path, manifest: Path, source: str, store: Path) -> tuple[float, float, float]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "ratified_rdf", "build", str(manifest), "--source", source,
         "--store", str(store), "--quiet"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    found = _TIMES.search(done.stdout + done.stderr)
    if done.returncode != 0 or found is None:
        raise BenchError(f"The build with {tree} failed:\n{done.stderr[-2000:]}")
    read, write, total = (float(x) for x in found.groups())
    return read, write, total


def main(argv: Sequence[str] | None = None) -> int:
    """Build with both trees, alternating; print the report (2 when a build fails)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the earlier commit to compare with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--manifest", default="records/tls13", help="relative to each tree")
    parser.add_argument("--source", default=str(DEFAULT_BUNDLE))
    report.options(parser, smoke="the pigeon brain, against HEAD, one run")
    args = report.parse(parser, argv)
    if args.before is None and not args.smoke:
        parser.error("--before is required (or --smoke)")
    with tempfile.TemporaryDirectory(prefix="build-side-by-side-") as folder:
        if args.smoke:
            manifest, repo = pigeon_source(Path(folder))
            args.before, args.runs, args.source = args.before or "HEAD", 1, str(repo)
            args.manifest = str(manifest.relative_to(ROOT))
        try:
            times = report.alternate(
                args.before,
                args.runs,
                lambda name, run, tree: _build(
                    tree, tree / args.manifest, args.source, Path(folder) / f"{name}-{run}"
                ),
                log,
            )
        except BenchError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
    rows = [
        Row(step, [[t[index] for t in times["before"]], [t[index] for t in times["after"]]])
        for index, step in enumerate(("read", "write", "total"))
    ]
    table = report.side_by_side(
        "step", [args.before, "this checkout"], rows, unit="s", number=report.seconds, spread=""
    )
    sections = [
        f"`{args.manifest}` from `{args.source}`, {args.runs} alternating run(s); medians.",
        table,
    ]
    title = "Build time against an earlier commit"
    report.publish("build_side_by_side", title, sections, record=args.record)
    return 0


if __name__ == "__main__":
    sys.exit(main())
