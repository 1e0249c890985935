"""Build time of this checkout against an earlier commit, side by side in one run.

Run from the repository root::

    python benchmarks/build_side_by_side.py --before ceee1de [--runs 2] [--manifest records/tls13]
        [--source ../shared/corpus/tls13-spec/tls13-spec.bundle]

The earlier commit is checked out with ``git worktree`` into a temporary folder. Each run builds
the brain once with each tree (alternating, the earlier first), each into a fresh temporary
store, with ``python -m ratified_rdf build`` and that tree's ``src`` first on ``PYTHONPATH``;
the read, write and total seconds the build reports are collected. The report gives each
tree's medians and the ratio of this checkout's to the earlier one's. Nothing here asserts on
timings.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_TIMES = re.compile(r"Read ([\d.]+) s, wrote ([\d.]+) s, total ([\d.]+) s")


def _build(tree: Path, manifest: Path, source: str, store: Path) -> tuple[float, float, float]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, "-m", "ratified_rdf", "build", str(manifest), "--source", source,
         "--store", str(store), "--quiet"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    found = _TIMES.search(done.stdout + done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"The build with {tree} failed:\n{done.stderr[-2000:]}")
    read, write, total = (float(x) for x in found.groups())
    return read, write, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="the earlier commit to compare with")
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--manifest", default="records/tls13")
    parser.add_argument(
        "--source", default=str(ROOT.parent / "shared/corpus/tls13-spec/tls13-spec.bundle")
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="build-side-by-side-") as folder:
        earlier = Path(folder) / "before"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(earlier),
                        args.before], check=True, capture_output=True)  # fmt: skip
        try:
            times: dict[str, list[tuple[float, float, float]]] = {"before": [], "after": []}
            for run in range(args.runs):
                for name, tree in (("before", earlier), ("after", ROOT)):
                    store = Path(folder) / f"{name}-{run}"
                    manifest = tree / args.manifest
                    times[name].append(_build(tree, manifest, args.source, store))
                    print(f"run {run + 1} {name}: read/write/total {times[name][-1]} s",
                          file=sys.stderr)  # fmt: skip
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(earlier)], check=False, capture_output=True)  # fmt: skip
    print(f"| step | {args.before} s | this checkout s | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for index, step in enumerate(("read", "write", "total")):
        before = statistics.median(t[index] for t in times["before"])
        after = statistics.median(t[index] for t in times["after"])
        print(f"| {step} | {before:.1f} | {after:.1f} | {after / before:.2f}× |")


if __name__ == "__main__":
    main()
