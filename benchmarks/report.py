"""What every benchmark prints, and where it goes.

One module for the scripts of this package, so that their reports look alike and say the
same things about the run:

- numbers: :func:`ms`, :func:`seconds`, :func:`ratio` and the nearest-rank :func:`percentile`;
- tables: :func:`table` (Markdown) and :func:`side_by_side`, the table every comparison in
  one run prints (what was compared as columns, then each one's ratio to the baseline column);
- the run's facts: :func:`machine` (date, git commit, CPUs, memory, Python, pyoxigraph, rdflib,
  load average) and :func:`facts_line`, the line under every report's title;
- output: :func:`publish` prints a report on stdout, writes it to ``benchmarks/out/<name>.md``
  and, when asked (``--record``), writes its summary as the script's section of
  ``benchmarks/RESULTS.md`` (:func:`record_section`);
- what the scripts share besides: :func:`options` and :func:`parse` (``--record``, ``--smoke``),
  :func:`logger` (progress on stderr), :class:`BenchError` (a precondition that failed),
  :func:`checkout` (an earlier commit in a temporary ``git worktree``, for side-by-side runs)
  and memory readings (:func:`peak_rss_mib`, :func:`rss_mib`).

Sections of RESULTS.md written by a script start with ``## benchmarks.<name> — <date> —
<commit>``. Each script has at most one: recording again replaces it and moves it to the top
(the file reads newest first; older figures stay in git history). Sections written by hand
(every other ``## `` heading) are never touched.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
"""What a side-by-side run measures (:func:`alternate`)."""

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT_DIR = HERE / "out"
RESULTS = HERE / "RESULTS.md"


class BenchError(RuntimeError):
    """A precondition failed; the message says what to do."""


def logger(name: str) -> Callable[[str], None]:
    """A function printing ``[name] message`` progress lines on stderr."""

    def log(message: str) -> None:
        print(f"[{name}] {message}", file=sys.stderr, flush=True)

    return log


# --- numbers -------------------------------------------------------------------------------


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (with fewer than 100 values, p99 is the slowest run)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def ms(value: float) -> str:
    """Milliseconds with a precision that suits their size."""
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    if value >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def seconds(value: float | None) -> str:
    """Seconds, or a dash."""
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def ratio(value: float | None, base: float | None = 1.0) -> str:
    """``value ÷ base`` as a multiplier (two decimals: comparisons can be close), or n/a;
    ``ratio(x)`` shows a quotient already taken."""
    if value is None or base is None or base <= 0 or math.isnan(value):
        return "n/a"
    quotient = value / base
    return f"{quotient:,.0f}×" if quotient >= 100 else f"{quotient:.2f}×"


# --- tables --------------------------------------------------------------------------------


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    """A Markdown table; the columns listed in ``right`` are right-aligned."""
    align = ["---:" if i in right else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


Measured = float | Sequence[float] | None
"""One cell of a comparison: a figure, the runs it summarises (shown as p50 and a spread,
compared by their median), or nothing (n/a)."""


@dataclass
class Row:
    """One row of :func:`side_by_side`: its leading text cells, one measurement per column
    compared, and trailing text cells."""

    label: str | Sequence[str]
    values: Sequence[Measured]
    notes: Sequence[str] = field(default_factory=tuple)


def _central(value: Measured) -> float | None:
    if value is None or isinstance(value, float | int):
        return value
    return statistics.median(value) if value else None


def side_by_side(
    header: str | Sequence[str],
    names: Sequence[str],
    rows: Sequence[Row],
    *,
    baseline: int = 0,
    unit: str = "ms",
    number: Callable[[float], str] = ms,
    spread: str = "p99",
    notes: Sequence[str] = (),
    total: str | None = None,
    summary: bool = False,
) -> str:
    """The comparison table: leading columns (``header``), one column per thing compared
    (``names``, in ``unit``), then each one's ratio to the ``baseline`` column, then trailing
    ``notes`` columns.

    A measurement given as runs shows its median and ``spread``: ``"p99"`` (``p50 / p99``),
    ``"range"`` (``median (min–max)``) or ``""`` (the median alone). ``total`` adds a row of
    the medians summed under that label; ``summary`` adds a line with the median and the
    largest of each ratio column."""
    lead = [header] if isinstance(header, str) else list(header)
    others = [i for i in range(len(names)) if i != baseline]
    suffix = f" {unit}" if unit else ""
    columns = [*lead, *(f"{name}{suffix}" for name in names)]
    columns += [f"{names[i]} ÷ {names[baseline]}" for i in others]
    columns += list(notes)

    def cell(value: Measured) -> str:
        if value is None or (not isinstance(value, float | int) and not value):
            return "n/a"
        if isinstance(value, float | int):
            return number(value)
        middle = number(statistics.median(value))
        if spread == "p99":
            return f"{middle} / {number(percentile(value, 99))}"
        if spread == "range":
            return f"{middle} ({number(min(value))}–{number(max(value))})"
        return middle

    body = []
    quotients: dict[int, list[float]] = {i: [] for i in others}
    sums = [0.0] * len(names)
    for row in rows:
        label = [row.label] if isinstance(row.label, str) else list(row.label)
        centre = [_central(v) for v in row.values]
        line = [*label, *(cell(v) for v in row.values)]
        base = centre[baseline]
        for i in others:
            line.append(ratio(centre[i], base))
            if centre[i] is not None and base:
                quotients[i].append(centre[i] / base)  # type: ignore[operator]
        for i, value in enumerate(centre):
            sums[i] += value or 0.0
        body.append(line + list(row.notes))
    if total is not None:
        line = [f"**{total}**", *([""] * (len(lead) - 1))]
        line += [f"**{number(s)}**" for s in sums]
        line += [f"**{ratio(sums[i], sums[baseline])}**" for i in others]
        body.append(line + [""] * len(notes))
    right = range(len(lead), len(lead) + len(names) + len(others))
    text = table(columns, body, right=right)
    if summary and any(quotients.values()):
        parts = [
            f"{names[i]} ÷ {names[baseline]}: median {statistics.median(q):.2f}×, largest "
            f"{max(q):.2f}×"
            for i, q in quotients.items()
            if q
        ]
        text += "\n\n" + "; ".join(parts) + "."
    return text


# --- the run's facts -----------------------------------------------------------------------


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


def _git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def commit() -> str:
    """This checkout's short commit id, with ``+changes`` when tracked files differ from it
    (RESULTS.md aside, which ``--record`` itself changes); ``unknown`` outside git."""
    head = _git("rev-parse", "--short", "HEAD")
    if not head:
        return "unknown"
    changed = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!" + _rel())
    return f"{head}+changes" if changed else head


def _rel() -> str:
    return str(RESULTS.relative_to(REPO))


def memory_gib() -> float:
    """This machine's memory in GiB (Linux), or NaN."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / (1024 * 1024)
    except OSError:
        pass
    return math.nan


def machine() -> dict[str, str]:
    """When, where and on what this run is made, as text (saved with a run, so a report
    rendered again later shows the run's own facts)."""
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    return {
        "date": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "commit": commit(),
        "cpus": str(os.cpu_count()),
        "memory": f"{memory_gib():.1f} GiB",
        "python": platform.python_version(),
        "pyoxigraph": _version("pyoxigraph"),
        "rdflib": _version("rdflib"),
        "machine": platform.machine(),
        "load": f"{load:.2f}",
    }


def facts_line(facts: Mapping[str, str] | None = None, **extra: str) -> str:
    """The line under a report's title: the run's facts, then ``extra`` (other versions, the
    options), ``·``-separated."""
    f = dict(facts or machine())
    parts = [
        f["date"],
        f"commit {f['commit']}",
        f"{f['cpus']} CPU(s)",
        f"{f['memory']} RAM",
        f"Python {f['python']}",
        f"pyoxigraph {f['pyoxigraph']}",
        f"rdflib {f['rdflib']}",
        f["machine"],
        f"load average {f['load']} at the start",
    ]
    parts += [f"{key} {value}" for key, value in extra.items()]
    return " · ".join(parts)


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    """Peak resident set size of this process (or of its largest waited-for child), MiB."""
    peak = resource.getrusage(who).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024  # macOS: bytes


def rss_mib(pid: int | str = "self", *, children: bool = False) -> float | None:
    """Resident memory now of process ``pid`` (Linux ``/proc``), with its children and theirs
    when asked (a server's query workers); None when it cannot be read."""
    total, found = 0.0, False
    pending = [str(pid)]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
                    found = True
            if children:
                task = current if current != "self" else str(os.getpid())
                pending += Path(f"/proc/{task}/task/{task}/children").read_text().split()
        except OSError:
            continue
    return total if found else None


def pss_mib(pid: int | str = "self", *, children: bool = True) -> float | None:
    """Proportional set size now of process ``pid`` and (by default) all its descendants
    (Linux ``/proc/<pid>/smaps_rollup``), MiB: the memory they hold together, each page shared
    between processes counted once, in shares (a forked worker's inherited pages are not
    counted twice, as adding their resident sizes would). None when it cannot be read.

    One sample is the sizes of one set of processes: the tree is listed before the sizes are
    read and again after, and read again when a process came or went in between. (A parent
    read whole just before it forks, and its child read just after, sharing half of it,
    counts the shared pages one and a half times.)"""
    root = str(os.getpid()) if pid == "self" else str(pid)
    sizes: list[float | None] = []
    for _ in range(SAMPLE_TRIES):
        before = process_tree(root) if children else [root]
        sizes = [_pss_of(task) for task in before]
        if (process_tree(root) if children else [root]) == before:
            break
    found = [size for size in sizes if size is not None]
    return sum(found) if found else None


SAMPLE_TRIES = 5
"""How many times :func:`pss_mib` reads a tree that changes while it is read, before it takes
the last reading."""


def process_tree(root: str) -> list[str]:
    """``root`` and every process below it (children of any of their threads), in the order
    found; an ended process drops out with its children."""
    found: list[str] = []
    pending = [root]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            threads = os.listdir(f"/proc/{current}/task")
        except OSError:
            continue
        for thread in sorted(threads):
            try:
                pending += Path(f"/proc/{current}/task/{thread}/children").read_text().split()
            except OSError:
                continue
    return found


def _rss_of(task: str) -> float:
    """One process's resident set size, MiB (``/proc/<pid>/statm``: read without walking its
    pages); 0 when it cannot be read (it ended)."""
    try:
        resident = int(Path(f"/proc/{task}/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return resident * _PAGE / (1 << 20)


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _pss_of(task: str) -> float | None:
    """One process's proportional set size, MiB; None when it cannot be read (it ended)."""
    try:
        for line in Path(f"/proc/{task}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


class PeakPss:
    """Samples :func:`pss_mib` of this process and its descendants on a thread, every
    ``every`` seconds, while in a ``with`` block; :attr:`peak` is the largest sample (MiB) and
    :attr:`at` what :attr:`phase` said when it was taken.

    Reading a process's PSS makes the kernel walk every page it maps (about a tenth of a
    second for 4 GiB, holding the process's memory map while it does), so a sampler reading
    it every second slows the build it measures. A process's PSS is never more than its
    resident size, which costs nothing to read: a sample whose resident sizes add up to no
    more than the peak so far cannot raise it, and is not read further."""

    def __init__(self, every: float = 1.0) -> None:
        self.every = every
        self.peak = 0.0
        self.at = ""
        self.phase = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            self.take()

    def take(self) -> None:
        """Take one sample now."""
        if sum(_rss_of(task) for task in process_tree(str(os.getpid()))) <= self.peak:
            return
        now = pss_mib() or 0.0
        if now > self.peak:
            self.peak, self.at = now, self.phase

    def __enter__(self) -> PeakPss:
        self._thread.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._stop.set()
        self._thread.join()


# --- side by side with an earlier commit ---------------------------------------------------


@contextmanager
def checkout(revision: str) -> Iterator[Path]:
    """``revision`` checked out (detached) in a temporary ``git worktree``, removed after."""
    folder = Path(tempfile.mkdtemp(prefix="rr-bench-before-"))
    tree = folder / "tree"
    done = subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(tree), revision],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise BenchError(f"git could not check out {revision!r}: {done.stderr.strip()}")
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(folder, ignore_errors=True)


def alternate(
    before: str, runs: int, measure: Callable[[str, int, Path], T], log: Callable[[str], None]
) -> dict[str, list[T]]:
    """``measure(name, run, tree)`` for ``runs`` rounds, each with ``before`` checked out
    (name ``"before"``) and then this checkout (``"after"``), alternating so both see the
    same machine; every measurement, by name. Raises :class:`BenchError` as ``measure`` does."""
    measured: dict[str, list[T]] = {"before": [], "after": []}
    with checkout(before) as earlier:
        for run in range(runs):
            for name, tree in (("before", earlier), ("after", REPO)):
                value = measure(name, run, tree)
                measured[name].append(value)
                log(f"run {run + 1} {name}: {value}")
    return measured


# --- options and output --------------------------------------------------------------------


def options(parser: argparse.ArgumentParser, smoke: str | None = None) -> None:
    """Add ``--record`` (and, with ``smoke`` saying what it runs, ``--smoke``)."""
    parser.add_argument(
        "--record",
        action="store_true",
        help=f"also write this run's summary as the script's section of {_rel()}",
    )
    if smoke is not None:
        parser.add_argument(
            "--smoke",
            action="store_true",
            help=f"a tiny run that proves the script works ({smoke}); never recorded",
        )


_STARTED: dict[str, str] = {}
"""The facts of this run, taken when its options were parsed (so the date and the load are
the run's start); :func:`publish` uses them."""


def parse(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse ``argv``, refusing ``--record`` with ``--smoke`` (a smoke run's figures are not
    results), and take the run's facts."""
    args = parser.parse_args(argv)
    if args.record and getattr(args, "smoke", False):
        parser.error("--smoke runs are never recorded: drop --record or --smoke")
    _STARTED.clear()
    _STARTED.update(machine())
    return args


def command(name: str, argv: Sequence[str] | None = None) -> str:
    """How this run was started, as a command to run again (``--record`` left out)."""
    given = list(sys.argv[1:] if argv is None else argv)
    return shlex.join(
        ["python", "-m", f"benchmarks.{name}", *(a for a in given if a != "--record")]
    )


def render(title: str, sections: Sequence[str], facts: str) -> str:
    """A whole report: the title, the facts line, the sections."""
    return "\n\n".join([f"# {title}", facts, *(s for s in sections if s)]) + "\n"


def publish(
    name: str,
    title: str,
    sections: Sequence[str],
    *,
    facts: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
    record: bool = False,
    summary: Sequence[str] | None = None,
    argv: Sequence[str] | None = None,
) -> str:
    """Print the report and write it to ``benchmarks/out/<name>.md``; with ``record``,
    also write ``summary`` (default: every section) as the script's section of RESULTS.md.

    ``facts`` are the run's (default: those :func:`parse` took at the start, else
    :func:`machine` now), ``extra`` more facts for the line under the title. Returns the
    report."""
    facts = dict(facts or _STARTED or machine())
    line = facts_line(facts, **(extra or {}))
    text = render(title, sections, line)
    print(text, end="", flush=True)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    out = OUT_DIR / f"{name}.md"
    out.write_text(text, encoding="utf-8")
    log = logger(name)
    log(f"wrote {out}")
    if record:
        body = "\n\n".join(s for s in (sections if summary is None else summary) if s)
        record_section(name, body, facts=facts, lead=f"`{command(name, argv)}` · {line}")
        log(f"wrote its section of {RESULTS}")
    return text


HEADING = "## benchmarks.{name} — "
"""How a section written by a script begins; the date and the commit follow."""
_FENCE = re.compile(r"^\s*(```|~~~)")


def _demoted(body: str) -> str:
    """``body`` with every Markdown heading outside code fences two levels lower, so that a
    recorded section holds no ``## `` line but its own."""
    lines, fenced = [], False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,4} ", line):
            line = "##" + line
        lines.append(line)
    return "\n".join(lines)


def results_section(name: str, body: str, facts: Mapping[str, str], lead: str) -> str:
    """The section of RESULTS.md a script writes."""
    day = facts["date"].split()[0]
    return "\n".join(
        [
            f"{HEADING.format(name=name)}{day} — {facts['commit']}",
            "",
            f"<!-- Written by `python -m benchmarks.{name} --record`; its next recorded run "
            "replaces this section. Edit the script, not this text. -->",
            "",
            lead,
            "",
            _demoted(body).strip(),
            "",
        ]
    )


def updated(results: str, name: str, section: str) -> str:
    """``results`` (RESULTS.md's text) with the script's previous section removed and
    ``section`` placed first, before every other ``## `` section."""
    start = HEADING.format(name=name)
    kept: list[str] = []
    first: int | None = None
    skipping = fenced = False
    for line in results.splitlines(keepends=True):
        if _FENCE.match(line):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            skipping = line.startswith(start)
            if first is None and not skipping:
                first = len(kept)
        if not skipping:
            kept.append(line)
    first = len(kept) if first is None else first
    head = "".join(kept[:first]).rstrip("\n") + "\n\n"
    rest = "".join(kept[first:])
    return head + section.rstrip("\n") + "\n" + ("\n" + rest if rest else "")


def record_section(name: str, body: str, *, facts: Mapping[str, str], lead: str) -> None:
    """Write ``body`` as the script's section of RESULTS.md (see :func:`updated`)."""
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Results\n"
    RESULTS.write_text(updated(text, name, results_section(name, body, facts, lead)), "utf-8")
