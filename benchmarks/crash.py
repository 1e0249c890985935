"""Crash safety, long form: kill a build with SIGKILL at random moments, many times, and check
after each kill that the store holds the previous complete run or the new one (the same
content hash either way), never a mix; then that building again reaches the same content.

    python -m benchmarks.crash [--trials 20] [--seed 7] [--manifest DIR --source REPO] [--smoke]

Builds the fictional pigeon brain (tests/pigeon.py) by default; with ``--manifest`` and
``--source`` any brain (e.g. records/tls13 and the TLS bundle: each trial then takes a minute).
The short form, three trials, runs in CI as tests/crash/test_sigkill.py; ``--smoke`` runs two.
The report is Markdown on stdout and in ``benchmarks/out/crash.md`` (with ``--record``, in
``benchmarks/RESULTS.md``).
"""

from __future__ import annotations

import argparse
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from benchmarks import report
from ratified_rdf import Brain
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

log = report.logger("crash")


def build(manifest: Path, source: str, store: Path) -> subprocess.Popen[bytes]:
    """``ratified build`` in its own process (so it can be killed)."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ratified_rdf",
            "build",
            str(manifest),
            "--source",
            source,
            "--store",
            str(store),
            "--quiet",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def state(store: Path) -> tuple[str, str]:
    """(current run id, content hash) as a fresh reader sees it."""
    with Brain.open(store, reader=Reader(clearance="restricted")) as brain:
        run = next(r for r in brain.scope.runs if r.current)
        return run.run_id, brain.content_hash()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the trials and print the report; 1 if any trial left a mix."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", default="7")
    parser.add_argument("--manifest", type=Path)
    parser.add_argument("--source")
    report.options(parser, smoke="2 trials")
    args = report.parse(parser, argv)
    if args.smoke:
        args.trials = 2
    with tempfile.TemporaryDirectory(prefix="rr-crash-") as folder:
        store = Path(folder) / "brain"
        manifest = args.manifest or MANIFEST
        source = args.source or str(make_pigeon_repo(Path(folder) / "git"))
        started = time.monotonic()
        if build(manifest, source, store).wait() != 0:
            print("error: the first, unkilled build failed.", file=sys.stderr)
            return 2
        duration = time.monotonic() - started
        current, complete = state(store)
        log(f"complete build in {duration:.1f} s; content {complete[:12]}…")
        chance = random.Random(args.seed)
        outcomes: Counter[str] = Counter()
        mixed = 0
        for trial in range(1, args.trials + 1):
            process = build(manifest, source, store)
            moment = chance.uniform(0.05, duration)
            time.sleep(moment)
            process.send_signal(signal.SIGKILL)
            process.wait()
            run, content = state(store)
            outcome = "mix" if content != complete else "kept" if run == current else "new"
            outcomes[outcome] += 1
            mixed += outcome == "mix"
            current = run
            log(f"trial {trial}: killed at {moment:.2f} s: {outcome}")
        again = build(manifest, source, store).wait() == 0 and state(store)[1] == complete
    summary = (
        f"{args.trials} trials (seed {args.seed}), kill moments uniform over one build "
        f"({duration:.1f} s). After each kill: previous complete run kept "
        f"{outcomes['kept']}×, new complete run {outcomes['new']}×, a mix "
        f"{outcomes['mix']}× (target 0). Building again afterwards reached the same "
        f"content: {'yes' if again else 'NO'}."
    )
    title = "ratified-rdf crash safety (SIGKILL during builds)"
    report.publish("crash", title, [summary], record=args.record)
    return 0 if mixed == 0 and again else 1


if __name__ == "__main__":
    sys.exit(main())
