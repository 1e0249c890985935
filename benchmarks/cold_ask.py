"""A cold ``ratified ask --json``, this checkout against an earlier commit, side by side.

Run from the repository root::

    python -m benchmarks.cold_ask --before b03276e --store /tmp/brain-tls [--runs 5]
    python -m benchmarks.cold_ask --smoke      # the pigeon brain, against HEAD, two runs

Each run starts a fresh interpreter per question and tree, alternating (the earlier first),
with that tree's ``src`` first on ``PYTHONPATH`` and its modules compiled beforehand (an
installed package has its ``.pyc`` files; this machine may set ``PYTHONDONTWRITEBYTECODE``).
The wall time is taken around the process, and its CPU time (user + system, from ``wait4``)
beside it: on a shared machine the CPU time is the steadier figure. ``python -c pass`` is the
floor. This checkout's asks are also timed once with nothing saved in the store's folder (the
first ask after a build, which saves the rows of whole-graph queries for the next ones:
``answers/saved_rows.py``).

The cards are compared byte for byte: each tree's ``--json`` with the queries' ``engine_ms``
left out (it differs from run to run), and also with their ``reused`` flag left out (a card
whose whole-graph rows were read from the store's folder says they were reused, as a warm
process's card does). Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from benchmarks.core import PIGEON_QUESTIONS, QUESTIONS, pigeon_store
from benchmarks.report import BenchError

log = report.logger("cold_ask")
SAVED = "ratified-rows"
"""The folder of saved rows in a store (``answers/saved_rows.py``)."""


def _compile(tree: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(tree / "src")],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )


def _timed(argv: Sequence[str], tree: Path) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (user + system) and stdout of one process."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        stdout = out.read()
    if process.returncode != 0:
        raise BenchError(f"{' '.join(argv)} failed with {tree} (exit {process.returncode})")
    return wall, usage.ru_utime + usage.ru_stime, stdout


def _ask(tree: Path, store: Path, question: str) -> tuple[float, float, bytes]:
    argv = [sys.executable, "-m", "ratified_rdf", "ask", "--json", "--store", str(store)]
    return _timed([*argv, question], tree)


def _card(stdout: bytes, *drop: str) -> str:
    card = json.loads(stdout)
    for query in card.get("queries", ()):
        for key in drop:
            query.pop(key, None)
    return json.dumps(card, indent=2, ensure_ascii=False)


def _cell(values: list[float]) -> str:
    return f"{min(values):.2f} / {statistics.median(values):.2f}"


def main(argv: Sequence[str] | None = None) -> int:
    """Ask with both trees, alternating; print the report (2 when an ask fails)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="the earlier commit to compare with")
    parser.add_argument("--store", type=Path, help="a built brain's folder (the TLS brain)")
    parser.add_argument("--runs", type=int, default=5)
    report.options(parser, smoke="the pigeon brain, against HEAD, two runs")
    args = report.parse(parser, argv)
    if args.smoke:
        scratch = Path(tempfile.mkdtemp(prefix="rr-cold-ask-"))
        store, questions, runs, before = pigeon_store(scratch), PIGEON_QUESTIONS[:2], 2, "HEAD"
    else:
        if args.before is None or args.store is None:
            parser.error("give --before (a commit) and --store (a built brain's folder)")
        store, questions, runs, before = args.store, QUESTIONS, args.runs, args.before
    here = report.REPO
    wall: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    cards: dict[tuple[str, str], bytes] = {}
    try:
        with report.checkout(before) as earlier:
            trees = {"before": earlier, "after": here}
            for tree in trees.values():
                _compile(tree)
            first: dict[str, tuple[float, float]] = {}
            for question in questions:  # the first ask after a build: nothing saved yet
                shutil.rmtree(store / SAVED, ignore_errors=True)
                seconds, used, _ = _ask(here, store, question)
                first[question] = (seconds, used)
            for run in range(runs):
                log(f"run {run + 1}/{runs}")
                for name, tree in trees.items():
                    seconds, used, _ = _timed([sys.executable, "-c", "pass"], tree)
                    wall.setdefault((name, "python -c pass"), []).append(seconds)
                    cpu.setdefault((name, "python -c pass"), []).append(used)
                for question in questions:
                    for name, tree in trees.items():
                        seconds, used, stdout = _ask(tree, store, question)
                        wall.setdefault((name, question), []).append(seconds)
                        cpu.setdefault((name, question), []).append(used)
                        cards[name, question] = stdout
    except BenchError as error:
        print(error, file=sys.stderr)
        return 2
    rows = []
    for label in ("python -c pass", *questions):
        b_cpu, a_cpu = cpu["before", label], cpu["after", label]
        same = ""
        if label in first:
            before_card, after_card = cards["before", label], cards["after", label]
            same = (
                "yes"
                if _card(before_card, "engine_ms") == _card(after_card, "engine_ms")
                else "but `reused`"
                if _card(before_card, "engine_ms", "reused")
                == _card(after_card, "engine_ms", "reused")
                else "**no**"
            )
        rows.append(
            [
                f"`{label}`",
                _cell(wall["before", label]),
                _cell(wall["after", label]),
                f"{first[label][0]:.2f}" if label in first else "",
                _cell(b_cpu),
                _cell(a_cpu),
                f"{first[label][1]:.2f}" if label in first else "",
                report.ratio(min(b_cpu), min(a_cpu)),
                same,
            ]
        )
    header = (
        "",
        "wall s, before (min / median)",
        "wall s, after",
        "after, nothing saved",
        "CPU s, before",
        "CPU s, after",
        "CPU, nothing saved",
        "CPU ÷ (min)",
        "same card",
    )
    body = report.table(header, rows, right=range(1, 8))
    explained = (
        f"{runs} runs, trees alternating, each ask a fresh interpreter; CPU is user + system "
        f"of the process. Before: `{before}`; after: this checkout. Same card: the `--json` "
        "bytes with each query's `engine_ms` left out (`but reused`: equal once `reused` is "
        "left out too)."
    )
    report.publish(
        "cold_ask",
        "A cold `ratified ask`, before and after",
        [explained, body],
        record=args.record,
        argv=argv,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
