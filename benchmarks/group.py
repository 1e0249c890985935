"""A working group's brain at scale, in one run: the group built whole, each member built alone,
one member rebuilt in the group, side by side.

Run from the repository root::

    python -m benchmarks.group [--group records/tlswg] [--source ../shared/corpus]
        [--member dtls13-spec] [--folder /tmp/group-bench] [--wgs 130] [--record]
    python -m benchmarks.group --smoke      # Pigeon and Sparrow, the fictional group

Every build runs in this process, each into a fresh store on disk under ``--folder``:

1. the group (``build_group``: members read in child processes, written in order, linked)
   and each member alone (``build``, one after another, each into a store of its own), in
   ``--group-rounds`` rounds, each round in the other order than the last (group first, then
   members first): on a shared machine the load moves under a run, and whichever step came
   first in every round would carry the drift alone;
2. one member rebuilt in the group's store (``build_group(only=[member])``: the member's
   build, then the group's links made again) and that member built alone again, in
   ``--rounds`` rounds, alternating the order likewise. The corpus's bundles are read-only,
   so the member is rebuilt from the same copy: a member's build reads its whole repository
   whatever changed in it, so a changed one costs the same.

It prints each round's ratio of the measures the issue sets bars for (group ÷ sum of the
members alone, at most 1.5; rebuild ÷ that member alone, at most 1.2) and their median, by
wall time and by processor time (this process and its children: the member readers, the
gate's workers), which a busy machine inflates far less than wall time; the peak memory of
this process and all its children together (proportional set size,
:class:`~benchmarks.report.PeakPss`), the load average after each step, and an extrapolation
to every working group's repositories from the figures measured, with its assumptions said.
Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from ratified_rdf.build import build
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.group import build_group, find_source, load_group

ROOT = report.REPO
log = report.logger("group")

WORKING_GROUPS = 130
"""An assumption, not a measurement: the IETF has had on the order of 120 to 130 working
groups open at a time in recent years (the Datatracker's list of active groups); no copy of
that list is held here, so the figure is a parameter (``--wgs``)."""


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.1f} / {five:.1f} / {fifteen:.1f}"


def _fresh(folder: Path, name: str) -> OxigraphStore:
    path = folder / name
    shutil.rmtree(path, ignore_errors=True)
    return OxigraphStore(path)


def main(argv: Sequence[str] | None = None) -> int:
    """Build the group, each member alone, and one member again; print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", default="records/tlswg", help="a records folder with a group")
    parser.add_argument("--source", default=str(ROOT.parent / "shared/corpus"))
    parser.add_argument("--member", help="the member to rebuild (default: dtls13-spec or first)")
    parser.add_argument("--folder", help="where the stores go (default: a temporary folder)")
    parser.add_argument("--wgs", type=int, default=WORKING_GROUPS, help="working groups")
    parser.add_argument(
        "--group-rounds", type=int, default=2, help="group builds, each beside the members alone"
    )
    parser.add_argument("--rounds", type=int, default=2, help="rebuilds, each beside one alone")
    report.options(parser, smoke="Pigeon and Sparrow, the fictional group")
    args = report.parse(parser, argv)
    with tempfile.TemporaryDirectory(prefix="group-bench-") as scratch:
        folder = Path(args.folder or scratch)
        folder.mkdir(parents=True, exist_ok=True)
        if args.smoke:
            args.group, args.source = _smoke_group(folder)
        return _run(args, folder)


def _smoke_group(folder: Path) -> tuple[str, str]:
    from tests.pigeon import FIXTURES as PIGEON
    from tests.pigeon import make_pigeon_repo
    from tests.sparrow import FIXTURES as SPARROW
    from tests.sparrow import make_sparrow_repo

    copies = folder / "copies"
    shutil.rmtree(copies, ignore_errors=True)
    make_pigeon_repo(copies)
    make_sparrow_repo(copies)
    (folder / "group.toml").write_text(
        f'[group]\nid = "birds"\ntitle = "Birds (fictional)"\nmembers = ["{PIGEON}", "{SPARROW}"]\n'
    )
    return str(folder), str(copies)


class Clock:
    """Wall and processor seconds of a step: this process's and its children's (the member
    readers and the gate's workers, counted once they have ended)."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Clock:
        self._wall, self._cpu = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = _cpu() - self._cpu


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _run(args: argparse.Namespace, folder: Path) -> int:
    group, members = load_group(args.group)
    ids = [m.brain.id for _, m in members]
    member = args.member or ("dtls13-spec" if "dtls13-spec" in ids else ids[0])
    if member not in ids:
        print(f"error: {member} is not a member; the members are {', '.join(ids)}", sys.stderr)
        return 2
    loads = [_load()]
    # The group and the sum of its members alone, in rounds, each round in the other order
    # than the last: on a shared machine the load moves under a run, and a step measured
    # first in every round would carry the drift alone.
    wholes: list[Clock] = []
    sums: list[tuple[float, float]] = []
    alone: dict[str, float] = {}
    triples: dict[str, int] = {}
    peaks: dict[str, float] = {}
    store: OxigraphStore | None = None
    built = None

    def build_whole() -> None:
        nonlocal store, built
        if store is not None:
            store.close()
        with report.PeakPss() as peak, Clock() as clock:
            store = _fresh(folder, "group")
            built = build_group(args.group, source=args.source, store=store)
        wholes.append(clock)
        peaks["group"] = max(peaks.get("group", 0.0), peak.peak)
        log(f"group built in {clock.wall:.1f} s ({clock.cpu:.1f} s CPU)")

    def build_alone() -> None:
        wall = cpu = 0.0
        with report.PeakPss() as peak:
            for path, manifest in members:
                name = manifest.brain.id
                own = _fresh(folder, f"alone-{name}")
                with Clock() as clock:
                    done = build(path, source=find_source(args.source, manifest), store=own)
                wall, cpu = wall + clock.wall, cpu + clock.cpu
                alone[name] = min(alone.get(name, clock.wall), clock.wall)
                triples[name] = done.triples
                own.close()
                shutil.rmtree(folder / f"alone-{name}", ignore_errors=True)
                log(f"{name} alone in {clock.wall:.1f} s")
        sums.append((wall, cpu))
        peaks["alone"] = max(peaks.get("alone", 0.0), peak.peak)
        log(f"members alone: {wall:.1f} s ({cpu:.1f} s CPU)")

    for round_ in range(args.group_rounds):
        steps = (build_whole, build_alone) if round_ % 2 == 0 else (build_alone, build_whole)
        for step in steps:
            step()
            loads.append(_load())
    assert store is not None and built is not None
    # The rebuild and the member alone, alternating (each round in the other order): a ratio
    # of two builds taken side by side is steadier than one of builds minutes apart.
    path, manifest = next((p, m) for p, m in members if m.brain.id == member)
    rebuilds: list[Clock] = []
    again: list[Clock] = []

    def rebuild() -> None:
        with report.PeakPss() as peak, Clock() as clock:
            build_group(args.group, source=args.source, store=store, only=[member])
        rebuilds.append(clock)
        peaks["rebuild"] = max(peaks.get("rebuild", 0.0), peak.peak)

    def member_alone() -> None:
        own = _fresh(folder, f"alone-{member}")
        with Clock() as clock:
            build(path, source=find_source(args.source, manifest), store=own)
        again.append(clock)
        own.close()
        shutil.rmtree(folder / f"alone-{member}", ignore_errors=True)

    for round_ in range(args.rounds):
        for step in (rebuild, member_alone) if round_ % 2 == 0 else (member_alone, rebuild):
            step()
        log(f"{member} rebuilt in {rebuilds[-1].wall:.1f} s, alone in {again[-1].wall:.1f} s")
    store.close()
    loads.append(_load())
    group_ratios = [w.wall / s for w, (s, _) in zip(wholes, sums, strict=True)]
    group_cpu = [w.cpu / c for w, (_, c) in zip(wholes, sums, strict=True)]
    rebuild_ratios = [r.wall / a.wall for r, a in zip(rebuilds, again, strict=True)]
    rebuild_cpu = [r.cpu / a.cpu for r, a in zip(rebuilds, again, strict=True)]
    rows = [[name, report.seconds(alone[name]), f"{triples[name]:,}"] for name in ids]
    members_table = report.table(["member", "built alone (fastest)", "triples"], rows, right=(1, 2))

    def each(pairs: Sequence[tuple[float, float]]) -> str:
        return ", ".join(f"{a:.1f}/{b:.1f}" for a, b in pairs)

    ratios = report.table(
        [
            "measure",
            "each round: seconds (wall)",
            "each round's ratio",
            "median",
            "CPU ratio, median",
            "bar",
        ],
        [
            [
                f"group ({len(ids)} members) ÷ sum of members alone",
                each([(w.wall, s) for w, (s, _) in zip(wholes, sums, strict=True)]),
                ", ".join(f"{r:.2f}×" for r in group_ratios),
                f"{statistics.median(group_ratios):.2f}×",
                f"{statistics.median(group_cpu):.2f}×",
                "≤ 1.5×",
            ],
            [
                f"{member} rebuilt in the group ÷ {member} alone",
                each([(r.wall, a.wall) for r, a in zip(rebuilds, again, strict=True)]),
                ", ".join(f"{r:.2f}×" for r in rebuild_ratios),
                f"{statistics.median(rebuild_ratios):.2f}×",
                f"{statistics.median(rebuild_cpu):.2f}×",
                "≤ 1.2×",
            ],
        ],
        right=(1, 2, 3, 4),
    )
    cpu_line = (
        "Processor seconds (this process and its children): the group "
        + ", ".join(f"{w.cpu:.1f}" for w in wholes)
        + "; the members alone "
        + ", ".join(f"{c:.1f}" for _, c in sums)
        + f"; {member} rebuilt "
        + ", ".join(f"{r.cpu:.1f}" for r in rebuilds)
        + ", alone "
        + ", ".join(f"{a.cpu:.1f}" for a in again)
        + "."
    )
    memory = report.table(
        ["step", "peak memory, all processes (PSS)"],
        [
            ["the group built", f"{peaks['group']:,.0f} MiB"],
            ["each member alone (the largest)", f"{peaks['alone']:,.0f} MiB"],
            [f"{member} rebuilt", f"{peaks.get('rebuild', 0.0):,.0f} MiB"],
        ],
        right=(1,),
    )
    repositories = _repositories(args.source)
    total = sum(alone.values())
    per_repo_s = total / len(ids)
    per_repo_triples = sum(triples.values()) / len(ids)
    every = repositories * args.wgs
    extrapolated = (
        f"Extrapolated from this run: {len(ids)} members took {per_repo_s:.1f} s and "
        f"{per_repo_triples:,.0f} triples each on average, built alone (each its fastest "
        f"round). The TLS group's record "
        f"on GitHub is {repositories} repositories (the corpus's bundles); assuming every "
        f"working group is like it and {args.wgs} working groups (an assumption: the "
        f"Datatracker's active groups number about that; `--wgs`), every group's "
        f"repositories are about {every:,}: about {every * per_repo_s / 3600:,.1f} hours of "
        f"one build process and {every * per_repo_triples / 1e6:,.0f} million triples. The "
        f"members are independent: on M machines of C cores each, about "
        f"{every * per_repo_s / 3600:,.1f} ÷ (M × C) hours (docs/scaling.md). The average "
        f"leans on the largest member ({max(triples, key=lambda n: triples[n])}); a group of "
        f"small repositories costs less."
    )
    sections = [
        f"`{args.group}` from `{args.source}`, {len(ids)} members; the group and its members "
        f"alone in {len(wholes)} rounds, {member} rebuilt and alone in {len(rebuilds)}, each "
        f"round in the other order than the last; load average (1/5/15 min) at the start and "
        f"after each step of the group rounds, then after the rebuilds: {'; '.join(loads)}. "
        f"The group's own run read {built.documents} documents and wrote {built.edges:,} "
        "edges between them.",
        ratios,
        cpu_line,
        members_table,
        memory,
        extrapolated,
    ]
    report.publish(
        "group",
        f"issues 50-54 round four: the whole group brain ({group.group.id}, helper-f)",
        sections,
        record=args.record,
    )
    return 0


def _repositories(source: str) -> int:
    """How many repositories' copies the corpus holds (each a folder with a bundle or a
    clone, at most one folder down)."""
    root = Path(source)
    found = set()
    for folder in [root, *(p for p in root.iterdir() if p.is_dir())]:
        for child in folder.iterdir():
            if (child / f"{child.name}.bundle").is_file() or (child / ".git").exists():
                found.add(child.name)
    return len(found) or 1


if __name__ == "__main__":
    sys.exit(main())
