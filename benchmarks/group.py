"""A working group's brain at scale, in one run: the group built whole, each member built alone,
one member rebuilt in the group, side by side.

Run from the repository root::

    python -m benchmarks.group [--group records/tlswg] [--source ../shared/corpus]
        [--member dtls13-spec] [--folder /tmp/group-bench] [--wgs 130] [--record]
    python -m benchmarks.group --smoke      # Pigeon and Sparrow, the fictional group

Every build runs in this process, each into a fresh store on disk under ``--folder``:

1. the group (``build_group``: members read in child processes, written in order, linked);
2. each member alone (``build``), one after another, each into a store of its own;
3. one member rebuilt in the group's store (``build_group(only=[member])``: the member's
   build, then the group's links made again), alternating with that member built alone again
   (``--rounds`` times; the sums of the rounds are compared). The corpus's bundles are read-only,
   so the member is rebuilt from the same copy: a member's build reads its whole repository
   whatever changed in it, so a changed one costs the same.

It prints the ratios the issue sets bars for (group ÷ sum of the members alone, at most 1.5;
rebuild ÷ that member alone, at most 1.2), the peak memory of this process and all its
children together (proportional set size, :class:`~benchmarks.report.PeakPss`), the load
average (the machine may be shared: only ratios of one run count), and an extrapolation to
every working group's repositories from the figures measured, with its assumptions said.
Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def _run(args: argparse.Namespace, folder: Path) -> int:
    group, members = load_group(args.group)
    ids = [m.brain.id for _, m in members]
    member = args.member or ("dtls13-spec" if "dtls13-spec" in ids else ids[0])
    if member not in ids:
        print(f"error: {member} is not a member; the members are {', '.join(ids)}", sys.stderr)
        return 2
    loads = [_load()]
    with report.PeakPss() as peak_group:
        store = _fresh(folder, "group")
        started = time.perf_counter()
        built = build_group(args.group, source=args.source, store=store)
        whole = time.perf_counter() - started
    log(f"group built in {whole:.1f} s")
    loads.append(_load())
    alone: dict[str, float] = {}
    triples: dict[str, int] = {}
    with report.PeakPss() as peak_alone:
        for path, manifest in members:
            name = manifest.brain.id
            own = _fresh(folder, f"alone-{name}")
            started = time.perf_counter()
            done = build(path, source=find_source(args.source, manifest), store=own)
            alone[name] = time.perf_counter() - started
            triples[name] = done.triples
            own.close()
            shutil.rmtree(folder / f"alone-{name}", ignore_errors=True)
            log(f"{name} alone in {alone[name]:.1f} s")
    loads.append(_load())
    # The rebuild and the member alone, alternating: the machine may be shared, and a ratio
    # of two builds taken side by side is steadier than one of builds minutes apart.
    path, manifest = next((p, m) for p, m in members if m.brain.id == member)
    rebuilds: list[float] = []
    again: list[float] = []
    with report.PeakPss() as peak_rebuild:
        for _ in range(args.rounds):
            started = time.perf_counter()
            build_group(args.group, source=args.source, store=store, only=[member])
            rebuilds.append(time.perf_counter() - started)
            own = _fresh(folder, f"alone-{member}")
            started = time.perf_counter()
            build(path, source=find_source(args.source, manifest), store=own)
            again.append(time.perf_counter() - started)
            own.close()
            shutil.rmtree(folder / f"alone-{member}", ignore_errors=True)
            log(f"{member} rebuilt in {rebuilds[-1]:.1f} s, alone in {again[-1]:.1f} s")
    # Each round's pair ran side by side; their sums weigh the rounds alike.
    rebuild, alone_member = sum(rebuilds), sum(again)
    store.close()
    loads.append(_load())
    total = sum(alone.values())
    rows = [[name, report.seconds(alone[name]), f"{triples[name]:,}"] for name in ids]
    members_table = report.table(["member", "built alone", "triples"], rows, right=(1, 2))
    ratios = report.table(
        ["measure", "seconds", "ratio", "bar"],
        [
            [
                f"group ({len(ids)} members) ÷ sum of members alone",
                f"{whole:.1f} ÷ {total:.1f}",
                f"{whole / total:.2f}×",
                "≤ 1.5×",
            ],
            [
                f"{member} rebuilt in the group ÷ {member} alone ({len(rebuilds)} rounds "
                f"side by side, summed; each: "
                f"{', '.join(f'{r:.0f}/{a:.0f}' for r, a in zip(rebuilds, again, strict=True))})",
                f"{rebuild:.1f} ÷ {alone_member:.1f}",
                f"{rebuild / alone_member:.2f}×",
                "≤ 1.2×",
            ],
        ],
        right=(1, 2),
    )
    memory = report.table(
        ["step", "peak memory, all processes (PSS)"],
        [
            ["the group built", f"{peak_group.peak:,.0f} MiB"],
            ["each member alone (the largest)", f"{peak_alone.peak:,.0f} MiB"],
            [f"{member} rebuilt", f"{peak_rebuild.peak:,.0f} MiB"],
        ],
        right=(1,),
    )
    repositories = _repositories(args.source)
    per_repo_s = total / len(ids)
    per_repo_triples = sum(triples.values()) / len(ids)
    every = repositories * args.wgs
    extrapolated = (
        f"Extrapolated from this run: {len(ids)} members took {per_repo_s:.1f} s and "
        f"{per_repo_triples:,.0f} triples each on average, built alone. The TLS group's record "
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
        f"`{args.group}` from `{args.source}`, {len(ids)} members; load average (1/5/15 min) "
        f"before, after the group, after the members, after the rebuild: {'; '.join(loads)}. "
        f"The group's own run read {built.documents} documents and wrote {built.edges:,} "
        "edges between them.",
        ratios,
        members_table,
        memory,
        extrapolated,
    ]
    report.publish(
        "group",
        f"issues 50-54 round three: the whole group brain ({group.group.id}, helper-c)",
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
