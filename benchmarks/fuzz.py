"""Long-form fuzzing: every reader, the question router, the heading search and the query
parameters, with the properties of ``tests/fuzz`` run on many more examples and a mutation
fuzzer over real-looking seed files.

Run from the repository root::

    python -m benchmarks.fuzz [--examples N] [--mutations N] [--budget SECONDS] [--seed N]
                              [--bundle PATH | --no-corpus] [--only NAME,...] [--smoke]

Three phases, each counting per target the inputs tried, how each call ended (parsed,
documented error, BUG) and the slowest input:

1. Pathological: every input of ``tests/fuzz/harness.py`` built to trip super-linear code
   (``PATHOLOGICAL``, ``QUESTIONS_PATHOLOGICAL``), stretched to 100 kB, each under its bound.
2. Properties: the Hypothesis strategies of the tests, ``--examples`` per target (generation
   only, no shrinking): the seven readers, the router (deterministic, bounded), the heading
   search over the pigeon brain, and SPARQL injection through questions, query parameters and
   tenant ids (the store fingerprinted before and after; every bound query checked).
3. Mutations: ``--mutations`` inputs per reader made by stacking random byte edits (bit flips,
   interesting bytes, deletions, duplications, splices, dictionary tokens, truncation, and
   "stretches" that repeat a chunk up to 100 kB) on seed files: the fixtures, and with the TLS
   corpus beside the checkout, revisions of the draft, RFC 9846 (markdown and text) and a slice
   of the GitHub archive, read from the bundle through a temporary bare clone (never copied
   into the repository).

Readers run in a worker process, so that a crash in C code (a segmentation fault) or a hang
that ignores the alarm is counted as a BUG and a fresh worker takes over. A BUG's smallest
input is saved outside the repository (``--save-bugs``, default a temporary folder) unless it
came from the corpus, and each BUG is matched to the known bugs of ``harness.KNOWN_BUGS``.

The report is Markdown on stdout, also written to ``benchmarks/out/fuzz.md`` (with ``--record``,
the tallies in ``benchmarks/RESULTS.md``); progress goes to stderr. ``--smoke`` tries 3 inputs
per target and phase on the fixtures alone. Exit status 0 when nothing is a BUG, 1 when
anything is, 2 on a setup problem.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st

from benchmarks import report
from benchmarks.core import DEFAULT_BUNDLE
from benchmarks.report import table
from ratified_rdf import Brain
from ratified_rdf.answers.heading_search import SearchResult
from ratified_rdf.answers.router import Route, route
from ratified_rdf.trust import Reader
from tests.fuzz import strategies as fs
from tests.fuzz.brain_checks import (
    DOCUMENTED,
    fingerprint,
    pigeon_brain,
    values_problems,
)
from tests.fuzz.harness import (
    KNOWN_BUGS,
    PATHOLOGICAL,
    QUESTIONS_PATHOLOGICAL,
    READERS,
    STRETCH,
    Outcome,
    Verdict,
    Worker,
    bound_for,
    likely_known,
    observe,
    secret_url,
    seed_files,
)

REPO = report.REPO
MAX_INPUT = 400_000
"""Mutated inputs are cut to this many bytes (the largest seed is 341 kB)."""

BRAIN_TARGETS = ("router", "heading_search", "ask", "run", "tenant")
"""The targets that are not readers of files."""
FUNCTIONS = {
    "router": "ratified_rdf.answers.router.route",
    "heading_search": "Brain.heading_index()[0].search (pigeon brain)",
    "ask": "Brain.ask with SPARQL-hostile questions (pigeon brain)",
    "run": "Brain.run with hostile typed parameters, every sparql/*.rq",
    "tenant": "Brain.from_store(store, reader=Reader(tenant=…))",
}


class BudgetSpent(BaseException):
    """Raised inside a Hypothesis run to stop it when its share of the budget is used."""


log = report.logger("fuzz")


# --- tallies -------------------------------------------------------------------------------


@dataclass
class BugRecord:
    """Every input that failed one way: how many, and the smallest of them."""

    signature: str
    known: str
    count: int
    data: bytes
    detail: str
    phase: str
    from_corpus: bool
    saved: Path | None = None


@dataclass
class Tally:
    """What one target made of every input it was given."""

    target: str
    function: str
    tried: int = 0
    verdicts: Counter[Verdict] = field(default_factory=Counter)
    slowest: float = 0.0
    slowest_size: int = 0
    slowest_phase: str = ""
    bugs: dict[str, BugRecord] = field(default_factory=dict)
    budget_hit: list[str] = field(default_factory=list)

    def add(self, phase: str, data: bytes, outcome: Outcome, *, from_corpus: bool = False) -> None:
        """Count one outcome; keep the smallest input of each kind of bug."""
        self.tried += 1
        self.verdicts[outcome.verdict] += 1
        if outcome.seconds > self.slowest:
            self.slowest, self.slowest_size, self.slowest_phase = (
                outcome.seconds,
                len(data),
                phase,
            )
        if outcome.verdict is not Verdict.BUG:
            return
        signature = outcome.signature or "?"
        held = self.bugs.get(signature)
        if held is None:
            self.bugs[signature] = BugRecord(
                signature,
                likely_known(self.target, signature),
                1,
                data,
                outcome.detail,
                phase,
                from_corpus,
            )
            return
        held.count += 1
        if len(data) < len(held.data):
            held.data, held.detail, held.phase = data, outcome.detail, phase
            held.from_corpus = from_corpus


class Clock:
    """The wall-clock budget: a deadline per share, or none."""

    def __init__(self, budget: float | None) -> None:
        self.budget = budget
        self.started = time.monotonic()

    def share(self, parts: int) -> float | None:
        """Seconds for one of ``parts`` equal shares of what is left (None: unlimited)."""
        if self.budget is None:
            return None
        left = self.budget - (time.monotonic() - self.started)
        return max(1.0, left / max(1, parts))


@contextmanager
def progress(label: str, tally: Tally) -> Iterator[Callable[[], None]]:
    """Log ``label``'s progress every 10 s, and once at the end."""
    last = [time.monotonic()]

    def tick() -> None:
        if time.monotonic() - last[0] >= 10:
            last[0] = time.monotonic()
            log(f"{label}: {tally.tried} inputs, {tally.verdicts[Verdict.BUG]} BUG")

    yield tick
    log(f"{label}: done, {tally.tried} inputs, {tally.verdicts[Verdict.BUG]} BUG")


# --- seeds ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seed:
    """A seed file for the mutation fuzzer."""

    name: str
    data: bytes
    from_corpus: bool = False


def fixture_seeds() -> dict[str, list[Seed]]:
    """The fixture files each reader is seeded with."""
    return {
        reader: [Seed(str(path.relative_to(REPO)), path.read_bytes()) for path in paths]
        for reader, paths in seed_files().items()
    }


CORPUS_FILES: dict[str, tuple[tuple[str, str], ...]] = {
    "kramdown": (
        ("draft-ietf-tls-tls13-00", "draft-ietf-tls-tls13.md"),
        ("draft-ietf-tls-tls13-12", "draft-ietf-tls-tls13.md"),
        ("draft-ietf-tls-tls13-21", "draft-ietf-tls-tls13.md"),
        ("draft-ietf-tls-tls13-28", "draft-ietf-tls-tls13.md"),
        ("main", "rfc9846.md"),
    ),
    "rfc_text": (("gh-pages", "rfc9846.txt"),),
    "github_archive": (("gh-pages", "archive.json"),),
}
"""Files read from the corpus bundle (``ref``, ``path``) as seeds, by reader."""


def corpus_seeds(bundle: Path) -> tuple[dict[str, list[Seed]], str]:
    """Seeds from the TLS corpus bundle, read through a temporary bare clone, with a note
    saying what was used (or why nothing was)."""
    if not bundle.is_file():
        return {}, f"no corpus: {bundle} does not exist (fixtures only)"
    seeds: dict[str, list[Seed]] = {}
    with tempfile.TemporaryDirectory(prefix="ratified-fuzz-corpus-") as folder:
        clone = Path(folder) / "corpus.git"
        done = subprocess.run(
            ["git", "clone", "--quiet", "--bare", str(bundle), str(clone)],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            return {}, f"no corpus: git could not clone {bundle} ({done.stderr.strip()})"
        for reader, files in CORPUS_FILES.items():
            for ref, path in files:
                shown = subprocess.run(
                    ["git", "--git-dir", str(clone), "show", f"{ref}:{path}"],
                    capture_output=True,
                )
                if shown.returncode != 0:
                    continue
                data = shown.stdout
                if reader == "github_archive":
                    data = _archive_slice(data)
                seeds.setdefault(reader, []).append(Seed(f"{ref}:{path}", data, from_corpus=True))
    names = ", ".join(seed.name for group in seeds.values() for seed in group)
    return seeds, f"corpus {bundle.name}: {names}"


def _archive_slice(data: bytes, threads: int = 40) -> bytes:
    """The first ``threads`` issues and pull requests of an archive.json (3.6 MB whole)."""
    archive = json.loads(data)
    archive["issues"] = archive.get("issues", [])[:threads]
    archive["pulls"] = archive.get("pulls", [])[:threads]
    return json.dumps(archive, indent=1).encode()


# --- mutations -----------------------------------------------------------------------------

TOKENS: dict[str, tuple[bytes, ...]] = {
    "kramdown": (
        b"\n# ", b"\n## ", b"```\n", b"~~~\n", b"    ```\n", b"{#x}", b'{: numbered="false"}',
        b"\n--- back\n", b"\n--- middle\n", b"\n---\n", b"<!--", b"-->", b"%%## ", b"title: [",
        b"*a", b"&a ", b"date: 2017-02-30\n", b"\t", b" #", b"{",
    ),
    "rfc_text": (
        b"\f\n", b"\nTable of Contents\n", b"\n1.  Introduction\n", b"\nAppendix A.  X\n",
        b" . . . . . . 12\n", b"   [Page 3]\n", b"RFC 8446    TLS    August 2018\n", b"A.",
        b"\n\n", b"   ", b"Request for Comments: 9999\n",
    ),
    "xml2rfc": (
        b'<!DOCTYPE rfc [<!ENTITY x SYSTEM "SECRET">]>', b"&x;", b"<section>", b"</section>",
        b"<name>", b"<![CDATA[", b"]]>", b"<?xml version='1.0' encoding='latin-1'?>", b"\xff\xfe",
        b"&#0;", b"<t>", b"<xref target='a'/>", b"<ul><li>",
    ),
    "github_archive": (
        b"null", b"[]", b"{}", b"1e400", b'"\\ud800"', b"-0", b"true", b'"createdAt": 5',
        b'"comments": ["x"]', b"[[[[", b'"number": "x"', b"\\u0000",
    ),
    "mbox": (
        b"\nFrom x@y Mon Feb 05 10:00:00 2029\n", b"Content-Type: multipart/mixed; boundary=x\n",
        b"--x\n", b"=?utf-8?b?", b"?=", b"Date: \n", b"Message-ID: \n", b'charset="x-nope"',
        b"\r\n", b"Content-Transfer-Encoding: base64\n", b"Content-Type: text/html\n", b"<a ",
        b" via ", b"\x1f\x8b",
    ),
    "mailman": (
        b"\nFrom a at b.c  Fri Mar  3 10:00:00 2017\n", b" at ", b"Message-ID: <a at b>\n",
        b"In-Reply-To: ", b"=?iso-8859-1?q?", b"\r\n",
    ),
    "people": (
        b"[[same]]\n", b"[[different]]\n", b"login:", b"email:", b"name:", b'reason = ""\n',
        b'members = ["', b'", "', b"@users.noreply.github.com", b"\x00", b"[",
    ),
    "manifest": (
        b"[[draft]]\n", b"[brain]\n", b" = ", b'"""', b"[", b"]", b"1979-05-27T07:32:00Z",
        b"inf", b"nan", b'replaced_by = "', b"{a = ", b"\\u", b"\x00",
    ),
}  # fmt: skip
"""Pieces each reader gives meaning to, inserted by the mutation fuzzer."""

INTERESTING = (0x00, 0x0A, 0x0D, 0x0C, 0x09, 0x20, 0x22, 0x23, 0x26, 0x3C, 0x3E, 0x5B, 0x7B,
               0x7F, 0x80, 0xC0, 0xC3, 0xE2, 0xED, 0xF0, 0xFE, 0xFF)  # fmt: skip
STRETCH_SIZES = (200, 2_000, 20_000, STRETCH)


class Mutator:
    """Random byte-level edits stacked on seed files."""

    def __init__(self, rng: random.Random, seeds: Sequence[Seed], tokens: Sequence[bytes]) -> None:
        self.rng = rng
        self.seeds = seeds
        self.tokens = tokens
        self.operations: list[Callable[[bytearray], bytearray]] = [
            self._flip,
            self._interesting,
            self._delete,
            self._duplicate,
            self._token,
            self._splice,
            self._truncate,
            self._stretch,
            self._swap_lines,
        ]

    def next(self) -> tuple[bytes, Seed]:
        """A mutated input and the seed it came from."""
        seed = self.rng.choice(self.seeds)
        data = bytearray(seed.data)
        for _ in range(self.rng.randint(1, 4)):
            data = self.rng.choice(self.operations)(data)
        return bytes(data[:MAX_INPUT]), seed

    def _at(self, data: bytearray) -> int:
        return self.rng.randint(0, len(data))

    def _chunk(self, data: bytearray) -> tuple[int, int]:
        start = self._at(data)
        return start, min(len(data), start + self.rng.choice((1, 4, 16, 64, 512)))

    def _flip(self, data: bytearray) -> bytearray:
        for _ in range(self.rng.randint(1, 8)):
            if data:
                data[self.rng.randrange(len(data))] ^= 1 << self.rng.randrange(8)
        return data

    def _interesting(self, data: bytearray) -> bytearray:
        for _ in range(self.rng.randint(1, 4)):
            if data:
                data[self.rng.randrange(len(data))] = self.rng.choice(INTERESTING)
        return data

    def _delete(self, data: bytearray) -> bytearray:
        start, end = self._chunk(data)
        del data[start:end]
        return data

    def _duplicate(self, data: bytearray) -> bytearray:
        start, end = self._chunk(data)
        at = self._at(data)
        data[at:at] = data[start:end]
        return data

    def _token(self, data: bytearray) -> bytearray:
        at = self._at(data)
        data[at:at] = self.rng.choice(self.tokens)
        return data

    def _splice(self, data: bytearray) -> bytearray:
        other = self.rng.choice(self.seeds).data
        start = self.rng.randint(0, len(other))
        piece = other[start : start + self.rng.choice((16, 256, 4096))]
        at = self._at(data)
        data[at : at + len(piece) * self.rng.randint(0, 1)] = piece
        return data

    def _truncate(self, data: bytearray) -> bytearray:
        return data[: self._at(data)]

    def _stretch(self, data: bytearray) -> bytearray:
        """A short chunk (or token) repeated up to 100 kB: what super-linear code trips on."""
        if data and self.rng.random() < 0.6:
            start = self.rng.randrange(len(data))
            unit = bytes(data[start : start + self.rng.randint(1, 8)])
        else:
            unit = self.rng.choice(self.tokens)
        count = max(1, self.rng.choice(STRETCH_SIZES) // max(1, len(unit)))
        at = self._at(data)
        data[at:at] = unit * count
        return data

    def _swap_lines(self, data: bytearray) -> bytearray:
        lines = bytes(data).split(b"\n")
        if len(lines) > 1:
            i, j = self.rng.randrange(len(lines)), self.rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return bytearray(b"\n".join(lines))


# --- phases --------------------------------------------------------------------------------


class Targets:
    """The pigeon brain (built once) and what the brain targets do with one input."""

    def __init__(self, folder: Path) -> None:
        self.brain, self.store = pigeon_brain(folder)
        self.index, _ = self.brain.reading.heading_index()
        self.before = fingerprint(self.brain, self.store)

    def unchanged(self) -> list[str]:
        """What changed in the store since the start (nothing, or a BUG)."""
        now = fingerprint(self.brain, self.store)
        return [] if now == self.before else ["the store changed: an attack wrote to it"]

    def route(self, question: str, bound: float) -> Outcome:
        def check(result: object) -> list[str]:
            if not isinstance(result, Route):
                return ["route returned no Route"]
            problems = [] if route(question) == result else ["a second route differs"]
            if route("  \n".join(question.split())) != result:
                problems.append("the same words spaced differently route differently")
            return problems

        return observe(lambda: route(question), documented=(), bound=bound, check_result=check)

    def search(self, question: str, bound: float) -> Outcome:
        def check(result: object) -> list[str]:
            if not isinstance(result, SearchResult):
                return ["search returned no SearchResult"]
            scores = [hit.score for hit in result.hits]
            problems = [] if scores == sorted(scores, reverse=True) else ["hits out of order"]
            if self.index.search(question) != result:
                problems.append("a second search differs")
            return problems

        return observe(
            lambda: self.index.search(question), documented=(), bound=bound, check_result=check
        )

    def ask(self, question: str, bound: float) -> Outcome:
        def check(answer: Any) -> list[str]:
            return [p for run in answer.queries for p in values_problems(run)]

        return observe(
            lambda: self.brain.ask(question), documented=DOCUMENTED, bound=bound, check_result=check
        )

    def run(self, name: str, params: dict[str, Any], bound: float) -> Outcome:
        return observe(
            lambda: self.brain.run(name, **params),
            documented=DOCUMENTED,
            bound=bound,
            check_result=lambda result: values_problems(result[1]),  # type: ignore[index]
        )

    def tenant(self, tenant: str, bound: float) -> Outcome:
        def check(brain: object) -> list[str]:
            return [] if tenant == "default" else [f"the tenant {tenant!r} opened a brain"]

        return observe(
            lambda: Brain.from_store(self.store, reader=Reader(tenant=tenant)),
            documented=DOCUMENTED,
            bound=bound,
            check_result=check,
        )


def _text_bytes(value: Any) -> bytes:
    return repr(value).encode("utf-8", "surrogatepass") if not isinstance(value, bytes) else value


def run_pathological(
    worker: Worker, targets: Targets, tallies: dict[str, Tally]
) -> list[list[str]]:
    """Phase 1: every pathological input, at 100 kB, under its own bound."""
    rows: list[list[str]] = []
    cases = [*PATHOLOGICAL, *QUESTIONS_PATHOLOGICAL]
    log(f"pathological: {len(cases)} inputs of about {STRETCH // 1000} kB")
    last = time.monotonic()
    for number, case in enumerate(cases, start=1):
        if case.reader not in tallies:
            continue
        if time.monotonic() - last >= 10:
            last = time.monotonic()
            log(f"pathological: {number} of {len(cases)}")
        data = case.build(STRETCH)
        if case.reader == "router":
            outcome = targets.route(data.decode("utf-8"), case.bound)
        elif case.reader == "heading_search":
            outcome = targets.search(data.decode("utf-8"), case.bound)
        else:
            outcome = worker.run(case.reader, data, case.bound)
        tallies[case.reader].add("pathological", data, outcome)
        verdict = str(outcome.verdict)
        if outcome.verdict is Verdict.BUG:
            verdict += f" ({case.bug or likely_known(case.reader, outcome.signature) or 'new'})"
        elif case.bug:
            verdict += f" ({case.bug} no longer shows)"
        rows.append(
            [
                f"`{case.reader}` {case.name}",
                f"{len(data):,}",
                f"{outcome.seconds:.2f} / {case.bound:g}",
                verdict,
                outcome.signature.replace("|", "\\|") if outcome.verdict is Verdict.BUG else "",
            ]
        )
    return rows


def _generate(
    strategy: st.SearchStrategy[Any],
    examples: int,
    seed: int,
    deadline: float | None,
    consume: Callable[[Any], None],
) -> bool:
    """Feed ``examples`` generated values to ``consume``; True if the budget stopped it."""

    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
    )
    @hypothesis.seed(seed)
    @given(strategy)
    def run(value: Any) -> None:
        if deadline is not None and time.monotonic() > deadline:
            raise BudgetSpent
        consume(value)

    try:
        run()
    except BudgetSpent:
        return True
    return False


def run_properties(
    args: argparse.Namespace,
    worker: Worker,
    targets: Targets,
    tallies: dict[str, Tally],
    clock: Clock,
) -> None:
    """Phase 2: the tests' strategies, ``--examples`` values per target."""
    inputs = fs.reader_inputs(secret_url())
    names = list(tallies)
    mutated = sum(1 for name in names if name in READERS)  # phase 3 shares the budget too
    for number, name in enumerate(names):
        tally = tallies[name]
        share = clock.share(len(names) - number + mutated)
        deadline = None if share is None else time.monotonic() + share

        with progress(f"properties {name}", tally) as tick:

            def consume(value: Any, name: str = name, tick: Callable[[], None] = tick) -> None:
                tick()
                if name in READERS:
                    tallies[name].add("properties", value, worker.run(name, value))
                    return
                if name == "run":
                    query, params = value
                    data = _text_bytes((query.name, params))
                    outcome = targets.run(query.name, params, bound_for(len(data)) + 5)
                else:
                    data = _text_bytes(value)
                    call = {
                        "router": targets.route,
                        "heading_search": targets.search,
                        "ask": targets.ask,
                        "tenant": targets.tenant,
                    }[name]
                    outcome = call(value, bound_for(len(data)) + (5 if name == "ask" else 0))
                tallies[name].add("properties", data, outcome)

            strategies: dict[str, st.SearchStrategy[Any]] = {
                **inputs,
                "router": fs.questions,
                "heading_search": fs.questions,
                "ask": fs.injection_questions,
                "run": fs.query_parameters(),
                "tenant": fs.tenant_ids,
            }
            strategy = strategies[name]
            if _generate(strategy, args.examples, args.seed + number, deadline, consume):
                tally.budget_hit.append("properties")
    for name in ("ask", "run", "tenant"):
        if name in tallies:
            for problem in targets.unchanged():
                tallies[name].add("properties", b"", Outcome(Verdict.BUG, 0.0, problem, problem))


def run_mutations(
    args: argparse.Namespace,
    worker: Worker,
    seeds: dict[str, list[Seed]],
    tallies: dict[str, Tally],
    clock: Clock,
) -> None:
    """Phase 3: ``--mutations`` mutated seed files per reader."""
    readers = [name for name in READERS if name in tallies and seeds.get(name)]
    for number, name in enumerate(readers):
        tally = tallies[name]
        share = clock.share(len(readers) - number)
        deadline = None if share is None else time.monotonic() + share
        rng = random.Random(f"{args.seed}-{name}")
        mutator = Mutator(rng, seeds[name], TOKENS[name])
        with progress(f"mutations {name} ({len(seeds[name])} seeds)", tally) as tick:
            for _ in range(args.mutations):
                if deadline is not None and time.monotonic() > deadline:
                    tally.budget_hit.append("mutations")
                    break
                tick()
                data, seed = mutator.next()
                tally.add("mutations", data, worker.run(name, data), from_corpus=seed.from_corpus)


# --- report --------------------------------------------------------------------------------


def save_bugs(tallies: dict[str, Tally], folder: Path) -> None:
    """Write each BUG's smallest input to ``folder`` (not those made from corpus files)."""
    for tally in tallies.values():
        for number, bug in enumerate(tally.bugs.values(), start=1):
            if bug.from_corpus:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            bug.saved = folder / f"{tally.target}-{number}.bin"
            bug.saved.write_bytes(bug.data)


def _shown(data: bytes, limit: int = 90) -> str:
    text = repr(data if len(data) <= limit else data[: limit // 2] + b"..." + data[-limit // 2 :])
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def sections(
    args: argparse.Namespace,
    tallies: dict[str, Tally],
    pathological: list[list[str]],
    corpus_note: str,
    seconds: float,
    restarts: int,
) -> list[str]:
    """The report's sections: the tallies and BUGs, then the pathological inputs."""
    bugs = sum(t.verdicts[Verdict.BUG] for t in tallies.values())
    lines = [
        f"`--examples {args.examples} --mutations {args.mutations} --seed {args.seed}"
        + (f" --budget {args.budget:g}`" if args.budget else "`")
        + f" · {seconds:.0f} s · {corpus_note} · worker restarts after a crash or hang: "
        f"{restarts}",
        "",
        "## Per target",
        "",
        "Inputs of all three phases. *documented error* is the reader's own error type with a "
        "sentence; *BUG* is anything else (another exception, a crash, a broken invariant, an "
        "unclear message, or no answer within the bound).",
        "",
        table(
            ["target", "function", "inputs", "parsed", "documented error", "BUG", "slowest input"],
            [
                [
                    f"`{t.target}`",
                    t.function,
                    f"{t.tried:,}",
                    f"{t.verdicts[Verdict.PARSED]:,}",
                    f"{t.verdicts[Verdict.ERROR]:,}",
                    f"**{t.verdicts[Verdict.BUG]:,}**" if t.verdicts[Verdict.BUG] else "0",
                    f"{t.slowest:.2f} s ({t.slowest_size:,} B, {t.slowest_phase})"
                    + (f"; budget stopped {', '.join(t.budget_hit)}" if t.budget_hit else ""),
                ]
                for t in tallies.values()
            ],
            right=(2, 3, 4, 5),
        ),
        "",
        f"**{bugs:,} BUG outcome(s)**" if bugs else "**No BUG.**",
        "",
    ]
    found = [(t, b) for t in tallies.values() for b in t.bugs.values()]
    if found:
        lines += [
            "## BUGs by kind",
            "",
            "One row per target and signature (the exception and the innermost `ratified_rdf` "
            "frame, or the broken invariant), with the smallest input that showed it; *known* "
            "names the bug of `tests/fuzz/harness.py` `KNOWN_BUGS` it matches.",
            "",
            table(
                ["target", "signature", "known", "inputs", "smallest input", "phase"],
                [
                    [
                        f"`{t.target}`",
                        b.signature.replace("|", "\\|"),
                        b.known or "**new**",
                        f"{b.count:,}",
                        f"{len(b.data):,} B "
                        + (
                            "(from the corpus, not saved)"
                            if b.from_corpus
                            else f"`{b.saved.name}`"
                            if b.saved
                            else _shown(b.data)
                        ),
                        b.phase,
                    ]
                    for t, b in found
                ],
                right=(3,),
            ),
            "",
        ]
        saved = next((b.saved for _, b in found if b.saved), None)
        if saved is not None:
            lines += [f"Inputs saved in `{saved.parent}`.", ""]
        new = [(t, b) for t, b in found if not b.known]
        for t, b in new:
            lines += [
                f"### New: `{t.target}` {b.signature}",
                "",
                f"Smallest input ({len(b.data):,} bytes): {_shown(b.data, 300)}",
                "",
                "```text",
                b.detail[:3000],
                "```",
                "",
            ]
        known_ids = sorted({k for _, b in found for k in b.known.split("/") if k})
        if known_ids:
            lines += ["Known bugs seen:", ""]
            lines += [f"- **{k}**: {KNOWN_BUGS[k]}" for k in known_ids]
            lines += [""]
    paths = table(["input", "bytes", "seconds / bound", "verdict", "signature"], pathological)
    return ["\n".join(lines).rstrip(), f"## Pathological inputs\n\n{paths}"]


# --- main ----------------------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--examples", type=int, default=1000, help="generated inputs per target (1000)"
    )
    parser.add_argument(
        "--mutations", type=int, default=2000, help="mutated inputs per reader (2000)"
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds for the whole run, shared out between targets (no limit)",
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (0)")
    parser.add_argument(
        "--bundle", type=Path, default=DEFAULT_BUNDLE, help=f"the corpus ({DEFAULT_BUNDLE})"
    )
    parser.add_argument("--no-corpus", action="store_true", help="seed with the fixtures only")
    parser.add_argument(
        "--only",
        default="",
        help=f"comma-separated targets ({', '.join([*READERS, *BRAIN_TARGETS])}); default all",
    )
    parser.add_argument(
        "--save-bugs",
        type=Path,
        default=None,
        help="where to write BUG inputs (default: a new temporary folder)",
    )
    report.options(parser, smoke="3 inputs per target and phase, fixtures only")
    args = report.parse(parser, argv)
    if args.smoke:
        args.examples, args.mutations, args.no_corpus = 3, 3, True
    if args.examples < 0 or args.mutations < 0:
        parser.error("--examples and --mutations cannot be negative")
    if args.budget is not None and args.budget < 30:
        parser.error("--budget must be at least 30 seconds")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Run every phase and print the report; 1 if anything is a BUG, 2 on a setup problem."""
    args = parse_args(argv)
    known_targets = [*READERS, *BRAIN_TARGETS]
    chosen = [t.strip() for t in args.only.split(",") if t.strip()] or known_targets
    unknown = sorted(set(chosen) - set(known_targets))
    if unknown:
        print(
            f"error: no target named {', '.join(unknown)}; choose from {', '.join(known_targets)}.",
            file=sys.stderr,
        )
        return 2
    started = time.monotonic()
    tallies = {
        name: Tally(name, READERS[name].function if name in READERS else FUNCTIONS[name])
        for name in known_targets
        if name in chosen
    }
    seeds = fixture_seeds()
    corpus_note = "fixtures only (--no-corpus)"
    if not args.no_corpus:
        log(f"reading seeds from {args.bundle}")
        extra, corpus_note = corpus_seeds(args.bundle)
        for reader, group in extra.items():
            seeds.setdefault(reader, []).extend(group)
    worker = Worker()
    try:
        with tempfile.TemporaryDirectory(prefix="ratified-fuzz-pigeon-") as folder:
            log("building the pigeon brain")
            try:
                targets = Targets(Path(folder))
            except Exception as error:  # a setup problem, not a finding
                print(f"error: the pigeon brain did not build ({error}).", file=sys.stderr)
                return 2
            pathological = run_pathological(worker, targets, tallies)
            clock = Clock(
                None
                if args.budget is None
                else max(30.0, args.budget - (time.monotonic() - started))
            )
            run_properties(args, worker, targets, tallies, clock)
            run_mutations(args, worker, seeds, tallies, clock)
            targets.brain.close()
    finally:
        worker.close()
    bug_folder = args.save_bugs or Path(tempfile.mkdtemp(prefix="ratified-fuzz-bugs-"))
    save_bugs(tallies, bug_folder)
    parts = sections(
        args, tallies, pathological, corpus_note, time.monotonic() - started, worker.restarts
    )
    report.publish(
        "fuzz",
        "ratified-rdf fuzzing",
        parts,
        extra={"Hypothesis": hypothesis.__version__},
        record=args.record,
        summary=parts[:1],  # the tallies and BUGs, not every pathological input
    )
    return 1 if any(t.verdicts[Verdict.BUG] for t in tallies.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
