"""Scale benchmark: the TLS corpus's shape ×1, ×10 (×100), built and asked at each size.

Run from the repository root::

    python -m benchmarks.scale --factors 1,10 [--seed N] [--runs N] [--time-budget SECONDS]
    python -m benchmarks.scale --smoke      # tiny drafts ×1 and ×2, 2 runs: about a minute

For each factor ``k`` (ascending), in a temporary folder:

1. Generate: ``benchmarks.synthetic`` writes a git repository and manifest with ``2·k``
   drafts shaped like the TLS corpus (revisions, drifting sections, issues, pull requests,
   posts citing sections, commits, heavy-tailed people), deterministic from ``--seed``.
2. Build: ``Brain.build(manifest, path=…/store, source=repo)`` in a subprocess of its own
   (progress on stderr), so a factor that overruns ``--time-budget`` is stopped by killing
   that process group, and peak memory is the build's alone. Reported: entity counts from the
   build's own records, triples, read and write seconds, the gate's throughput, triples per
   second overall, a split of the build into its steps (measured by wrapping the functions
   ``ratified_rdf.build`` calls, in the subprocess; no source is changed), peak RSS, store
   size, and how the build's citation resolution compares with what the generator meant.
3. Cards, once every factor is built: the closed stores are opened with ``Brain.open`` in
   one more subprocess, and five cards about the same section of the same draft (draft 0 is
   generated identically at every factor) are warmed up and timed ``--runs`` times, the
   factors taking turns ask by ask (so a busy machine weighs on each factor alike):
   section_became, section history, the why card ("who discussed RFC n section x?"),
   who-to-ask by section and who-to-ask by topic (heading search). p50/p99 end to end and of
   engine time (the sum of ``engine_ms`` of the queries the answer ran; the heading index,
   built once per reader and reused, is reported separately as the cold first ask). Then
   the same cards again from an in-memory copy of the reader's graphs (``in_memory=True``,
   what ``ratified serve`` answers from), where a lookup's cost does not depend on how far
   the store on disk has outgrown RocksDB's cache.

Then the ratios ×k ÷ ×1 side by side, against the issue's targets: card engine time at ×100
at most 2× that at ×1; build throughput roughly constant per triple. A factor whose projected
time (from the factors already measured, step by step, each step growing at least linearly)
exceeds ``--time-budget`` is not started; one that overruns is stopped. Either way its
projection is reported, labelled as a projection. ``--project`` lists factors to project
without running (default 100).

``--corpus-cache DIR`` keeps each generated corpus in ``DIR`` and reuses it on a later run
(keyed by factor, seed and the generator's source), so a second ×100 run skips the 12 minutes
of generation; the report says which corpora were reused.

``--from-json benchmarks/out/scale.json --retime-cards`` times the cards again on the folders a
run kept (``--keep``), e.g. after a change to the queries, without building again.

The report is Markdown on stdout and in ``benchmarks/out/scale.md`` (with ``--record``, in
``benchmarks/RESULTS.md``); progress goes to stderr. ``--shape tiny`` generates drafts a
fraction of TLS's size (``synthetic.SHAPES``), which ``--smoke`` uses. Nothing here asserts on
timings.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import math
import os
import pickle
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from functools import wraps
from pathlib import Path
from typing import Any

from benchmarks import report, synthetic
from benchmarks.report import (
    BenchError,
    PeakPss,
    memory_gib,
    ms,
    peak_rss_mib,
    percentile,
    ratio,
    table,
)
from benchmarks.report import seconds as secs

OUT_FILE = report.OUT_DIR / "scale.md"
WARMUP = 5
DEFAULT_BUDGET = 3600.0
CARD_TIMEOUT = 3600.0
ENGINE_TARGET = 2.0
"""Card engine time at ×100 at most this many times that at ×1."""

# Steps of a build, in the order they run: (function wrapped, where it lives, label, side).
STEPS: tuple[tuple[str, str, str, str], ...] = (
    ("read_spec", "ratified_rdf.build", "spec: tags, parse, align", "read"),
    ("identities_from_git", "ratified_rdf.build", "people: git signatures", "read"),
    ("link_evidence_from_prs", "ratified_rdf.build", "people: PR ↔ commit links", "read"),
    ("resolve_people", "ratified_rdf.build", "people: resolve", "read"),
    ("read_history", "ratified_rdf.build", "history: git log -p", "read"),
    ("first_containing", "ratified_rdf.build", "history: landed-in tags", "read"),
    ("read_discussion", "ratified_rdf.build", "citations + commit evidence", "read"),
    ("spec_batches", "ratified_rdf.build", "map spec → RDF", "write"),
    ("discussion_batches", "ratified_rdf.build", "map discussion → RDF", "write"),
    ("compute_expertise", "ratified_rdf.build", "expertise (networkx)", "write"),
    ("expertise_batches", "ratified_rdf.build", "map expertise → RDF", "write"),
    (
        "check_staged",
        "ratified_rdf.graph.gate:ShaclGate",
        "SHACL gate (prepare + validate)",
        "write",
    ),
    ("write_all", "ratified_rdf.graph.writer:Writer", "stage + gate + store", "write"),
    ("commit", "ratified_rdf.graph.writer:Writer", "commit run", "write"),
)
GENERATORS = {"spec_batches", "discussion_batches", "expertise_batches"}


log = report.logger("scale")


def folder_mib(folder: Path) -> float:
    """Bytes of every file under ``folder``, in MiB."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / (1024 * 1024)


# --- worker: generate and build -------------------------------------------------------------


def instrument(
    seconds: dict[str, float], on_read: Callable[[str, Any], None] | None = None
) -> None:
    """Wrap each build step so its time adds up in ``seconds``; hand the records the read steps
    return to ``on_read`` (with the step's name) as they are returned.

    Nothing is kept of the build: a generator step is timed as it is consumed (its time is
    the time spent inside it), not listed, and the records are looked at when they are read,
    not held to the end, so the build frees what it frees and the peak measured is its own."""
    import importlib

    def timed_items(items: Any, name: str) -> Iterator[Any]:
        iterator = iter(items)
        while True:
            started = time.perf_counter()
            try:
                item = next(iterator)
            except StopIteration:
                seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started
                return
            seconds[name] = seconds.get(name, 0.0) + time.perf_counter() - started
            yield item

    for name, where, _label, _side in STEPS:
        module_name, _, owner_name = where.partition(":")
        module = importlib.import_module(module_name)
        owner = getattr(module, owner_name) if owner_name else module
        original = getattr(owner, name, None)
        if original is None:
            continue  # the build changed shape; that step is reported as n/a

        def timed(
            *args: Any, _original: Callable = original, _name: str = name, **kwargs: Any
        ) -> Any:
            started = time.perf_counter()
            result = _original(*args, **kwargs)
            seconds[_name] = seconds.get(_name, 0.0) + time.perf_counter() - started
            if _name in GENERATORS:
                return timed_items(result, _name)
            if _name in {"read_spec", "read_discussion"} and on_read is not None:
                on_read(_name, result)
            return result

        setattr(owner, name, wraps(original)(timed))


def resolution_checks(truth: Any, spec: Any, discussion: Any) -> dict[str, Any]:
    """Compare the build's citations with what the generator wrote into each post.

    A bare number or anchor in a post whose draft nothing written tells apart from the others
    then open (``truth.pinned``) is counted under ``<form>-unpinned``: as meant only if left
    unresolved, however plausible a guess would have been."""
    documents = {r.name: r.document for r in (*spec.revisions, *spec.rfcs)}
    found: dict[str, list[Any]] = defaultdict(list)
    for citation in discussion.citations:
        found[citation.post].append(citation)
    per_form: dict[str, Counter[str]] = defaultdict(Counter)
    extra = 0
    for post, records in found.items():
        meant = truth.citations.get(post, [])
        extra += max(0, len(records) - len(meant))
    for post, meant in truth.citations.items():
        records = sorted(found.get(post, []), key=lambda c: c.start)
        pinned = getattr(truth, "pinned", {}).get(post, True)
        for index, (written_form, document, number) in enumerate(meant):
            form = written_form
            if written_form in synthetic.BARE_FORMS and not pinned:
                form, document = f"{written_form}-unpinned", None
            per_form[form]["written"] += 1
            if index >= len(records):
                per_form[form]["not found"] += 1
                continue
            record = records[index]
            if document is None:
                per_form[form]["as meant"] += record.target is None
                continue
            if record.target is None:
                per_form[form]["unresolved"] += 1
                continue
            target = record.target
            got = documents[target.document].sections[target.position].number
            if target.document == document and got == number:
                per_form[form]["as meant"] += 1
            elif target.document != document:
                per_form[form]["other document"] += 1
            else:
                per_form[form]["other section"] += 1
    commits = discussion.commits
    return {
        "forms": {form: dict(counts) for form, counts in sorted(per_form.items())},
        "unexpected citations": extra,
        "commits": len(commits),
        "commits with sections": sum(1 for c in commits if c.sections),
        "commits landed in a revision or RFC": sum(1 for c in commits if c.landed_in),
        "commits in a pull request": sum(1 for c in commits if c.pull_requests),
        "touched headings unresolved": sum(len(c.unresolved_headings) for c in commits),
    }


def entity_counts(spec: Any, discussion: Any) -> dict[str, int]:
    """What the build's records hold (not what the generator meant to write)."""
    threads = discussion.archive.threads
    rules = Counter(str(a.rule) for a in spec.alignments)
    citations = discussion.citations
    return {
        "drafts": len(spec.drafts),
        "revisions": len(spec.revisions),
        "RFCs": len(spec.rfcs),
        "sections": sum(len(r.document.sections) for r in (*spec.revisions, *spec.rfcs)),
        "alignments": len(spec.alignments),
        "  same heading": rules.get("same-heading", 0),
        "  same anchor": rules.get("same-anchor", 0),
        "  similar text": rules.get("similar-text", 0),
        "  no counterpart": rules.get("no-counterpart", 0),
        "issues": sum(1 for t in threads if t.kind == "issue"),
        "pull requests": sum(1 for t in threads if t.kind == "pull"),
        "posts": sum(len(t.posts) for t in threads) + len(discussion.mail),
        "citations found": len(citations),
        "  resolved": sum(1 for c in citations if c.target is not None),
        "  while changing": sum(1 for c in citations if c.while_changing),
        "commits": len(discussion.commits),
        "people": len(discussion.people.people),
        "identities": discussion.people.identity_count,
    }


def generated_corpus(folder: Path, args: argparse.Namespace) -> tuple[Any, bool]:
    """The factor's corpus, and whether it came from ``--corpus-cache``.

    Without a cache it is generated into the factor's folder. With one, it is kept there under
    a key of factor, seed, mail and the generator's own source (so an edited generator never
    reuses an old corpus), generated first when missing or half-written: generating ×100 takes
    about 12 minutes, which a second run on the same machine need not spend again."""

    def log_line(message: str) -> None:
        print(f"[synthetic] {message}", file=sys.stderr, flush=True)

    options = {
        "factor": args.factor,
        "seed": args.seed,
        "mail": args.mail,
        "log": log_line,
        "shape": args.shape,
    }
    if args.corpus_cache is None:
        return synthetic.make_corpus(folder / "corpus", **options), False
    source = Path(synthetic.__file__).read_bytes()
    key = f"{args.shape}-x{args.factor}-seed{args.seed}{'-mail' if args.mail else ''}"
    place = args.corpus_cache / f"{key}-{hashlib.sha256(source).hexdigest()[:12]}"
    saved = place / "corpus.pickle"
    if saved.exists():
        return pickle.loads(saved.read_bytes()), True
    shutil.rmtree(place, ignore_errors=True)  # a generation that did not finish
    corpus = synthetic.make_corpus(place / "corpus", **options)
    saved.write_bytes(pickle.dumps(corpus))
    return corpus, False


def worker_build(args: argparse.Namespace) -> int:
    """Generate the corpus and build it; write the result as JSON."""
    from ratified_rdf.brain import Brain
    from ratified_rdf.graph.gate import workers_start_afresh

    folder: Path = args.dir
    seconds: dict[str, float] = {}
    corpus, reused = generated_corpus(folder, args)
    after_generation = peak_rss_mib()
    looked: dict[str, Any] = {"entities": {}, "checks": {}}
    truth: list[Any] = [corpus.truth]
    corpus.truth = None  # held by `truth` until the records are checked, then let go of
    read: dict[str, Any] = {}

    def on_read(step: str, records: Any) -> None:
        # Checked the moment the discussion is read, so that neither the records nor the
        # generator's truth outlive the read: the build lets go of its records before the
        # gate, and a benchmark holding them would measure itself.
        read[step] = records
        if step == "read_discussion" and "read_spec" in read:
            spec = read.pop("read_spec")
            discussion = read.pop(step)
            looked["entities"] = entity_counts(spec, discussion)
            looked["checks"] = resolution_checks(truth.pop(), spec, discussion)

    instrument(seconds, on_read)
    how = "taken from the corpus cache (generated earlier in" if reused else "generated in"
    log(f"×{args.factor}: {how} {corpus.seconds:.1f} s{')' if reused else ''}; building")
    load_before = os.getloadavg()
    store = folder / "store"
    # Built as the CLI builds: this worker is started guarded, so the gate's workers start
    # afresh (ratified_rdf.graph.gate.workers_start_afresh).
    with PeakPss() as pss, workers_start_afresh():
        brain, report = Brain.build(
            corpus.manifest / "manifest.toml",
            path=store,
            source=str(corpus.repo),
            progress=sys.stderr.isatty(),
        )
        brain.close()
    log(
        f"×{args.factor}: {report.triples:,} triples in {report.total_seconds:.1f} s "
        f"(read {report.read_seconds:.1f} s, write {report.write_seconds:.1f} s), "
        f"peak {pss.peak:,.0f} MiB for all its processes"
    )
    result = {
        "factor": args.factor,
        "seed": args.seed,
        "generated": corpus.counts,
        "generate_seconds": corpus.seconds,
        "corpus_reused": reused,
        "repo_mib": folder_mib(corpus.repo),
        "report": report.model_dump(),
        "steps": seconds,
        "entities": looked["entities"],
        "checks": looked["checks"],
        "card": asdict(corpus.card),
        "rss_after_generation_mib": after_generation,
        "pss_all_mib": pss.peak,
        "rss_build_mib": peak_rss_mib(),
        "rss_children_mib": peak_rss_mib(resource.RUSAGE_CHILDREN),
        "store_mib": folder_mib(store),
        "load": [load_before, os.getloadavg()],
    }
    args.result.write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
    return 0


# --- worker: cards --------------------------------------------------------------------------


def card_questions(card: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, question) of the five cards, all about one section of draft 0's RFC."""
    rfc, section = card["rfc"], card["section"]
    return [
        (
            "section_became",
            f"what did section {card['revision_section']} of {card['revision']} become in the RFC?",
        ),
        ("section history", f"history of RFC {rfc} section {section}"),
        ("why (who discussed)", f"who discussed RFC {rfc} section {section}?"),
        ("who to ask (section)", f"who should I ask about RFC {rfc} section {section}?"),
        ("who to ask (topic)", f"who should I ask about {card['heading'].lower()}?"),
    ]


def worker_cards(args: argparse.Namespace) -> int:
    """Open every built store given and time the cards, on disk and then from in-memory
    copies (as ``ratified serve`` answers by default), the factors asked in turn; write the
    result, per factor, as JSON.

    The factors are timed in one process, ask by ask in turn (×1, ×100, ×1, …), not one after
    the other: what the machine is doing meanwhile then falls on every factor alike, and a
    ratio compares like with like. (Timed one process after the other, a ×100 asked under
    load beside a ×1 asked on a quiet machine read 4.44× where alternating read 1.76×.)"""
    from ratified_rdf.brain import Brain
    from ratified_rdf.surfaces.server import settle_for_serving

    folders: list[Path] = args.dirs
    builds = [json.loads((f / "build.json").read_text(encoding="utf-8")) for f in folders]
    questions = [card_questions(b["card"]) for b in builds]
    names = [f"×{b['factor']}" for b in builds]
    brains, open_ms = [], []
    for folder in folders:
        opened = time.perf_counter()
        brains.append(Brain.open(folder / "store"))
        open_ms.append((time.perf_counter() - opened) * 1000)
    # Timed without the audit log, as core.py does (it measures the log's overhead itself).
    readers = [Brain(b._store, b.brain_id, audit=None, reader=b.reader) for b in brains]
    on_disk = time_cards(readers, questions, args.runs, [f"{n} on disk" for n in names])
    copies, copy_ms = [], []
    for name, brain in zip(names, brains, strict=True):
        copy = Brain(brain._store, brain.brain_id, audit=None, in_memory=True, reader=brain.reader)
        log(f"{name}: copying the reader's graphs into memory")
        started = time.perf_counter()
        copy.holdings()  # the first question makes the copy
        copy_ms.append((time.perf_counter() - started) * 1000)
        settle_for_serving(copy)  # as `ratified serve` does before its first question
        copies.append(copy)
    memory = time_cards(copies, questions, args.runs, [f"{n} in memory" for n in names])
    gc.unfreeze()
    for brain in brains:
        brain.close()
    rss = peak_rss_mib()
    for index, folder in enumerate(folders):
        result = {
            "open_ms": open_ms[index],
            "cards": on_disk[index],
            "memory": {"copy_ms": copy_ms[index], "cards": memory[index]},
            "rss_mib": rss,
            "alternated": names,
        }
        (folder / "cards.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


def time_cards(
    readers: list[Any], questions: list[list[tuple[str, str]]], runs: int, where: list[str]
) -> list[list[dict[str, Any]]]:
    """Warm up and time each card ``runs`` times through each reader (one per factor, each
    with its own questions), the readers taking turns ask by ask, the order turned each
    round; one list of cards per reader."""
    found: list[list[dict[str, Any]]] = [[] for _ in readers]
    for index in range(len(questions[0])):
        label = questions[0][index][0]
        log(f"{', '.join(where)}: {label}: {WARMUP} warm-up + {runs} timed runs, in turn")
        cold: list[float] = []
        headings: list[float | None] = []
        for reader, asked in zip(readers, questions, strict=True):
            started = time.perf_counter()
            answer = reader.ask(asked[index][1])
            cold.append((time.perf_counter() - started) * 1000)
            found_headings = [q.engine_ms for q in answer.queries if q.name == "headings"]
            headings.append(found_headings[0] if found_headings else None)
        for _ in range(WARMUP - 1):
            for reader, asked in zip(readers, questions, strict=True):
                reader.ask(asked[index][1])
        total: list[list[float]] = [[] for _ in readers]
        engine: list[list[float]] = [[] for _ in readers]
        by_query: list[dict[str, list[float]]] = [defaultdict(list) for _ in readers]
        last: list[Any] = [None for _ in readers]
        order = list(range(len(readers)))
        for _ in range(runs):
            for r in order:
                started = time.perf_counter()
                answer = readers[r].ask(questions[r][index][1])
                total[r].append((time.perf_counter() - started) * 1000)
                ran = [q for q in answer.queries if not q.reused]
                engine[r].append(sum(q.engine_ms for q in ran))
                for q in ran:
                    by_query[r][q.name].append(q.engine_ms)
                last[r] = answer
            order.reverse()  # whoever went first goes last next round
        for r in range(len(readers)):
            slowest = max(by_query[r], key=lambda n: statistics.median(by_query[r][n]), default="")
            found[r].append(
                {
                    "label": label,
                    "question": questions[r][index][1],
                    "intent": last[r].intent,
                    "verdict": str(last[r].verdict.value),
                    "results": len(last[r].results),
                    "cold_ms": cold[r],
                    "headings_ms": headings[r],
                    "total_ms": total[r],
                    "engine_ms": engine[r],
                    "slowest_query": slowest,
                    "slowest_query_ms": statistics.median(by_query[r][slowest]) if slowest else 0.0,
                }
            )
    return found


# --- parent: run the workers under a budget -------------------------------------------------


def run_worker(argv: list[str], timeout: float | None) -> tuple[bool, float]:
    """Run this script as a worker in its own process group; kill the group on timeout.

    Returns (finished, seconds). Raises when the worker fails."""
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.scale", *argv],
        cwd=report.REPO,
        start_new_session=True,
    )
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        log(f"time budget of {timeout:,.0f} s reached: stopping the worker (process group)")
        _stop(process)
        return False, time.perf_counter() - started
    except BaseException:
        _stop(process)
        raise
    if code != 0:
        raise BenchError(
            f"The worker `{' '.join(argv[:4])}` exited with status {code}; its error is above. "
            "Fix that and run again."
        )
    return True, time.perf_counter() - started


def _stop(process: subprocess.Popen) -> None:
    """SIGTERM the worker's process group (the build and its gate workers), then SIGKILL."""
    for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def projection(measured: list[dict[str, Any]], factor: int) -> dict[str, Any] | None:
    """Project a factor's generate and build seconds, triples and memory from measured ones.

    Each step grows from the largest measured factor with the exponent seen between the two
    largest (at least 1: nothing is assumed to get cheaper per item); with one factor measured,
    linearly. Returns None when nothing was measured."""
    done = sorted((m for m in measured if m.get("build")), key=lambda m: m["factor"])
    if not done:
        return None
    top = done[-1]
    below = done[-2] if len(done) > 1 else None
    scale = factor / top["factor"]

    def grow(now: float, before: float | None) -> tuple[float, float]:
        exponent = 1.0
        if below is not None and before and now > 0:
            exponent = max(1.0, math.log(now / before) / math.log(top["factor"] / below["factor"]))
        return now * scale**exponent, exponent

    steps: dict[str, tuple[float, float]] = {}
    for name, *_ in STEPS:
        now = top["build"]["steps"].get(name)
        if now is None:
            continue
        before = below["build"]["steps"].get(name) if below else None
        steps[name] = grow(now, before)
    report = top["build"]["report"]
    other_read = report["read_seconds"] - sum(
        top["build"]["steps"].get(n, 0.0) for n, _, _, side in STEPS if side == "read"
    )
    generate = grow(top["build"]["generate_seconds"], below and below["build"]["generate_seconds"])
    read = sum(steps[n][0] for n, _, _, side in STEPS if side == "read" and n in steps)
    read += max(0.0, other_read) * scale
    nested = {"check_staged", "commit"}  # inside write_all / after it: counted once
    write_named = [n for n, _, _, side in STEPS if side == "write" and n not in nested]
    write = sum(steps[n][0] for n in write_named if n in steps) + steps.get("commit", (0.0,))[0]
    other_write = report["write_seconds"] - sum(
        top["build"]["steps"].get(n, 0.0) for n in [*write_named, "commit"]
    )
    write += max(0.0, other_write) * scale
    memory = grow(top["build"]["rss_build_mib"], below and below["build"]["rss_build_mib"])
    return {
        "factor": factor,
        "from": [m["factor"] for m in done[-2:]],
        "triples": report["triples"] * scale,
        "generate_seconds": generate[0],
        "read_seconds": read,
        "write_seconds": write,
        "build_seconds": read + write,
        "total_seconds": generate[0] + read + write,
        "steps": steps,
        "rss_build_mib": memory[0],
        "rss_exponent": memory[1],
    }


def run_factor(
    factor: int, args: argparse.Namespace, measured: list[dict[str, Any]]
) -> dict[str, Any]:
    """Generate and build one factor, within the budget; or say why not. The folder is kept
    (``entry["folder"]``) until every factor's cards are timed (:func:`time_all_cards`)."""
    entry: dict[str, Any] = {"factor": factor}
    budget = args.time_budget or None
    projected = projection(measured, factor)
    if projected is not None:
        entry["projection"] = projected
        if budget is not None and projected["total_seconds"] > budget:
            log(
                f"×{factor}: not started: projected {projected['total_seconds']:,.0f} s "
                f"exceeds the budget of {budget:,.0f} s"
            )
            entry["skipped"] = (
                f"not started: projected {projected['total_seconds']:,.0f} s to generate and "
                f"build, over the --time-budget of {budget:,.0f} s"
            )
            return entry
    parent = args.workdir or Path(tempfile.gettempdir())
    folder = Path(tempfile.mkdtemp(prefix=f"rr-scale-x{factor}-", dir=parent))
    entry["folder"] = str(folder)
    log(f"×{factor}: generating and building in {folder}")
    common = ["--dir", str(folder), "--factor", str(factor), "--seed", str(args.seed)]
    common += ["--shape", args.shape]
    build_argv = ["--worker", "build", *common, "--result", str(folder / "build.json")]
    if args.mail:
        build_argv.append("--mail")
    if args.corpus_cache is not None:
        build_argv += ["--corpus-cache", str(args.corpus_cache)]
    finished, elapsed = run_worker(build_argv, budget)
    entry["wall_seconds"] = elapsed
    if not finished:
        entry["stopped"] = (
            f"stopped after {elapsed:,.0f} s (the --time-budget); the build was killed"
        )
        return entry
    entry["build"] = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    return entry


def time_all_cards(entries: list[dict[str, Any]], runs: int) -> None:
    """Time the cards of every built factor in one worker, the factors asked in turn
    (:func:`worker_cards`), and put each factor's times in its entry."""
    built = [e for e in entries if e.get("build")]
    if not built:
        return
    factors = ", ".join(f"×{e['factor']}" for e in built)
    log(f"timing the cards of {factors}, in turn")
    argv = ["--worker", "cards", "--runs", str(runs), "--dirs"]
    argv += [e["folder"] for e in built]
    finished, _ = run_worker(argv, CARD_TIMEOUT)
    for e in built:
        if finished:
            e["cards"] = json.loads((Path(e["folder"]) / "cards.json").read_text(encoding="utf-8"))
        else:
            e["cards_stopped"] = f"card timing stopped after {CARD_TIMEOUT:,.0f} s"


def remove_folders(entries: list[dict[str, Any]]) -> None:
    """Remove each factor's folder (and its audit log) once the run is reported."""
    for e in entries:
        folder = e.pop("folder", None)
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(Path(f"{folder}.audit"), ignore_errors=True)


# --- report ---------------------------------------------------------------------------------


def run_meta(args: argparse.Namespace) -> dict[str, Any]:
    """When, on what and with which options this run was made."""
    return {
        "facts": report.machine(),
        "seed": args.seed,
        "shape": args.shape,
        "factors": args.factors,
        "time_budget": args.time_budget,
        "runs": args.runs,
    }


def facts_of(meta: dict[str, Any]) -> dict[str, str]:
    """The run's facts (a run saved before they were kept has fewer: the rest are ``?``)."""
    if "facts" in meta:
        return meta["facts"]
    old = {"date": meta.get("started", "?"), "cpus": str(meta.get("cpus", "?"))}
    keys = ("commit", "memory", "python", "pyoxigraph", "rdflib", "machine", "load")
    return {key: str(meta.get(key, "?")) for key in keys} | old


def options_line(meta: dict[str, Any]) -> dict[str, str]:
    """The run's options, for the line under the title."""
    budget = f"{meta['time_budget']:,.0f} s per factor" if meta["time_budget"] else "none"
    return {
        "seed": str(meta["seed"]),
        "shape": meta.get("shape", "tls"),
        "factors": ", ".join(f"×{f}" for f in meta["factors"]),
        "time budget": budget,
        "timed runs per card": str(meta["runs"]),
    }


def header_section(meta: dict[str, Any]) -> str:
    """What the corpus is."""
    return (
        "The corpus is generated by `benchmarks.synthetic`: ×1 is the TLS corpus's shape "
        "(two draft chains ending in RFCs, their GitHub threads, commits and people), ×k "
        "has k times the drafts, threads, commits and people over the same years, so at ×10 "
        "most of its twenty chains are open at once. Every name, text and date is invented."
        + (
            f" These drafts are of the `{meta['shape']}` shape, not TLS's."
            if meta.get("shape", "tls") != "tls"
            else ""
        )
    )


TLS_ROWS: tuple[tuple[str, str, float], ...] = (
    ("drafts (chains)", "drafts", 3),
    ("revisions", "revisions", 45),
    ("RFCs", "RFCs", 2),
    ("sections (all revisions and RFCs)", "sections", 5767),
    ("alignments", "alignments", 5629),
    ("same heading", "  same heading", 4689),
    ("same anchor", "  same anchor", 72),
    ("similar text", "  similar text", 129),
    ("no counterpart", "  no counterpart", 739),
    ("issues", "issues", 446),
    ("pull requests", "pull requests", 998),
    ("posts", "posts", 6092),
    ("citations found", "citations found", 390),
    ("  resolved", "  resolved", 315),
    ("  while changing", "  while changing", 228),
    ("commits", "commits", 2226),
    ("people", "people", 173),
    ("identities", "identities", 312),
)


def corpus_section(entries: list[dict[str, Any]]) -> str:
    """Entity counts per factor, from the build's records, beside the TLS corpus."""
    built = [e for e in entries if e.get("build")]
    if not built:
        return "## Corpus\n\nNo factor was built."
    keys = list(built[0]["build"]["entities"])
    tls = {key: value for _, key, value in TLS_ROWS}
    rows = []
    for key in keys:
        row = [key.replace("  ", "· ")]
        row.append(f"{tls[key]:,.0f}" if key in tls else "")
        row += [f"{e['build']['entities'].get(key, 0):,}" for e in built]
        rows.append(row)
    rows.append(["generated in s", "", *(secs(e["build"]["generate_seconds"]) for e in built)])
    rows.append(["repository MiB", "", *(f"{e['build']['repo_mib']:.1f}" for e in built)])
    header = ["entity (as the build read it)", "TLS corpus", *(f"×{e['factor']}" for e in built)]
    return "\n".join(
        [
            "## Corpus (what the build's records hold)",
            "",
            "Counted on the records the build produced (`read_spec`, `read_discussion`), not "
            "on what the generator meant to write; the TLS column is the real corpus counted "
            "the same way (read-only, counts only).",
            "",
            table(header, rows, right=range(1, len(header))),
        ]
    )


def build_section(entries: list[dict[str, Any]]) -> str:
    """Build times, throughput and memory per factor, then the step split."""
    built = [e for e in entries if e.get("build")]
    lines = ["## Build (generated repository → SHACL-gated Oxigraph on disk)", ""]
    if not built:
        return "\n".join([*lines, "No factor was built."])
    rows = []
    for e in built:
        b = e["build"]
        r = b["report"]
        gate = b["steps"].get("check_staged")
        rows.append(
            [
                f"×{e['factor']}",
                f"{r['triples']:,}",
                f"{r['batches']:,}",
                secs(r["read_seconds"]),
                secs(r["write_seconds"]),
                secs(r["total_seconds"]),
                secs(gate),
                f"{r['triples'] / gate:,.0f}" if gate else "–",
                f"{r['triples'] / r['write_seconds']:,.0f}",
                f"{r['triples'] / r['total_seconds']:,.0f}",
                f"{b['rss_after_generation_mib']:,.0f}",
                f"{b['rss_build_mib']:,.0f}",
                f"{b['rss_children_mib']:,.0f}",
                f"{b['pss_all_mib']:,.0f}" if "pss_all_mib" in b else "–",
                f"{b['store_mib']:,.0f}",
                " → ".join(f"{load[0]:.1f}" for load in b.get("load", [])) or "–",
            ]
        )
    header = [
        "factor",
        "triples",
        "batches",
        "read s",
        "write s",
        "build s",
        "gate s",
        "gate triples/s",
        "write triples/s",
        "build triples/s",
        "RSS after generating MiB",
        "peak RSS MiB",
        "largest child MiB",
        "peak, all processes MiB",
        "store MiB",
        "load (1 min) start → end",
    ]
    lines += [
        "Read and write seconds are `BuildReport`'s (write includes mapping to RDF and the "
        "expertise computation, which run after reading ends). Gate seconds are "
        "`ShaclGate.check_staged` (preparing each batch's context and validating it in worker "
        "processes); *gate triples/s* = triples ÷ gate seconds, *write triples/s* = triples ÷ "
        'write seconds (core.py\'s "gate throughput"), *build triples/s* = triples ÷ build '
        "seconds. Peak RSS is the build process's (generation included); the largest child is "
        "the biggest gate worker or git process. *Peak, all processes* is the largest sum, "
        "sampled each second, of the proportional set sizes of the build process and every "
        "process below it (a page shared by forked processes counted once, in shares): the "
        "memory they held together, which is what a machine must have. The machine is shared: "
        "the load average "
        "at the start and end of each build says how contended its two cores were.",
        "",
        table(header, rows, right=range(1, len(header))),
        "",
        "### Where the build's time goes (seconds per step)",
        "",
        "Measured by wrapping the functions `ratified_rdf.build` calls, in the build process. "
        "The growth column is the exponent between the two largest factors "
        "(t ∝ factor^exponent; 1 is linear).",
        "",
    ]
    step_rows = []
    for name, _, label, side in STEPS:
        values = [e["build"]["steps"].get(name) for e in built]
        if all(v is None for v in values):
            continue
        exponent = "–"
        if len(built) > 1 and values[-1] and values[-2]:
            span = math.log(built[-1]["factor"] / built[-2]["factor"])
            exponent = f"{math.log(values[-1] / values[-2]) / span:.2f}"
        step_rows.append([label, side, *(secs(v) for v in values), exponent])
    step_header = ["step", "side", *(f"×{e['factor']} s" for e in built), "growth"]
    lines.append(table(step_header, step_rows, right=range(2, len(step_header))))
    return "\n".join(lines)


def checks_section(entries: list[dict[str, Any]]) -> str:
    """How the build's citation resolution compares with what the generator meant."""
    built = [e for e in entries if e.get("build") and e["build"].get("checks")]
    if not built:
        return ""
    forms = sorted({f for e in built for f in e["build"]["checks"]["forms"]})
    meaning = {
        "section": '"Section 4.2" (current revision of the post\'s draft)',
        "section-unpinned": '"Section 4.2", several drafts open, none named (must not resolve)',
        "section-of-revision": '"Section 4.2 of draft-…-07"',
        "revision-sign": '"draft-…-07 §4.2"',
        "url": "link to `draft-…-07#section-4.2`",
        "xref": "`{{anchor}}` (current revision of the post's draft)",
        "xref-unpinned": "`{{anchor}}`, several drafts open, none named (must not resolve)",
        "foreign": '"RFC 80123 Section 3.1" (must not resolve)',
        "missing": "a number the revision lacks (must not resolve)",
        "rfc": '"RFC 90000 Section 4.2" after publication',
    }
    rows = []
    for form in forms:
        row = [meaning.get(form, form)]
        for e in built:
            counts = e["build"]["checks"]["forms"].get(form, {})
            written = counts.get("written", 0)
            good = counts.get("as meant", 0)
            row.append(f"{good:,}/{written:,} ({good / written:.0%})" if written else "–")
        rows.append(row)
    for key in (
        "unexpected citations",
        "commits with sections",
        "commits in a pull request",
        "touched headings unresolved",
    ):
        rows.append([key, *(f"{e['build']['checks'].get(key, 0):,}" for e in built)])
    header = ["citation form (as written)", *(f"×{e['factor']}" for e in built)]
    return "\n".join(
        [
            "## Does the build find what was meant?",
            "",
            "Each generated citation names a section of the revision current when its post was "
            "written (or must not resolve). *As meant* = the build resolved it to that revision "
            "and section number (or left it unresolved). A bare number or anchor names no "
            "draft: it is resolved in the draft its post is about, which the generator's truth "
            "says can be told when only that draft was open, or the thread is labelled with it "
            "(three threads in four), or the post or its thread's opening post names it. Where "
            "several drafts were open and nothing written names one, it must stay unresolved.",
            "",
            table(header, rows, right=range(1, len(header))),
        ]
    )


def where_timed(entry: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(where, cards) of one factor: on disk, and from the in-memory copy when it was timed
    (runs saved before the copy was timed have only the store on disk)."""
    found = [("on disk", entry["cards"]["cards"])]
    if entry["cards"].get("memory"):
        found.append(("in memory", entry["cards"]["memory"]["cards"]))
    return found


def cards_section(entries: list[dict[str, Any]], runs: int) -> str:
    """Card latency per factor, on disk and in memory."""
    asked = [e for e in entries if e.get("cards")]
    if not asked:
        return "## Cards\n\nNo factor was asked."
    card = asked[0]["build"]["card"]
    rows = []
    for index, (label, _question) in enumerate(card_questions(card)):
        first = True
        for e in asked:
            for where, cards in where_timed(e):
                c = cards[index]
                rows.append(
                    [
                        label if first else "",
                        f"×{e['factor']}",
                        where,
                        f"{c['verdict']} ({c['results']})",
                        ms(c["cold_ms"]),
                        ms(statistics.median(c["total_ms"])),
                        ms(percentile(c["total_ms"], 99)),
                        ms(statistics.median(c["engine_ms"])),
                        ms(percentile(c["engine_ms"], 99)),
                        f"{c['slowest_query']} {ms(c['slowest_query_ms'])}",
                    ]
                )
                first = False
    header = [
        "card",
        "factor",
        "store",
        "verdict (results)",
        "cold first ms",
        "p50 ms",
        "p99 ms",
        "engine p50 ms",
        "engine p99 ms",
        "slowest query (p50 ms)",
    ]
    questions = "\n".join(f"- {label}: “{q}”" for label, q in card_questions(card))
    opens = ", ".join(f"×{e['factor']} {ms(e['cards']['open_ms'])} ms" for e in asked)
    copies = ", ".join(
        f"×{e['factor']} {secs(e['cards']['memory']['copy_ms'] / 1000)} s"
        for e in asked
        if e["cards"].get("memory")
    )
    together = all(e["cards"].get("alternated") for e in asked)
    memory = (
        f"{asked[0]['cards']['rss_mib']:,.0f} MiB (one process held every factor's store and copy)"
        if together
        else ", ".join(f"×{e['factor']} {e['cards']['rss_mib']:,.0f} MiB" for e in asked)
    )
    turns = (
        "The factors were asked in one process, in turn, ask by ask (the order turned each "
        "round), so what the machine did meanwhile fell on each alike. "
        if together
        else "Each factor was asked in a process of its own, one after the other. "
    )
    return "\n".join(
        [
            "## Cards at scale (`Brain.open` on the built store, and its in-memory copy)",
            "",
            "All about one busy section of draft 0's RFC (at the 90th percentile of activity), "
            "which is generated identically at every factor; the corpus around it grows:"
            f"\n\n{questions}\n",
            f"{WARMUP} warm-up asks (the first one, cold, is shown), then {runs} timed asks; p99 "
            "is nearest-rank. End to end is the wall time around `Brain.ask` (unaudited reader, "
            "as in core.py); engine time is the sum of the answer's `engine_ms` except the "
            "heading index query, which is built once per reader and reused (it is in the cold "
            'ask). "On disk" reads the RocksDB store; "in memory" reads a copy of the '
            "reader's graphs (`Brain.open(…, in_memory=True)`, what `ratified serve` uses by "
            "default), settled as serve settles it (heading index built, heap frozen for the "
            "collector; so its cold asks do not include the index). "
            f"{turns}Open: {opens}. Copy into memory: {copies or 'not timed'}. "
            f"Peak RSS of the asking process (with the copy): {memory}.",
            "",
            table(header, rows, right=range(4, 9)),
        ]
    )


def ratios_section(entries: list[dict[str, Any]]) -> str:
    """×k ÷ ×1 for card times and build throughput, against the issue's targets."""
    asked = [e for e in entries if e.get("cards")]
    base = next((e for e in asked if e["factor"] == 1), None)
    if base is None or len(asked) < 2:
        return "## Ratios ×k ÷ ×1\n\nNeeds ×1 and a larger factor measured."
    others = [e for e in asked if e is not base]
    top = others[-1]
    # A growth exponent per card from ×1 to the largest measured factor, carried to ×100.
    project_to = 100 if all(e["factor"] < 100 for e in others) else None
    card_rows = []
    # The worst card per (factor, where): the target is judged on each store separately.
    worst: dict[tuple[int, str], float] = {}
    wheres = [w for w, _ in where_timed(base) if all(w in dict(where_timed(e)) for e in others)]
    for where in wheres:
        base_cards = dict(where_timed(base))[where]
        for index, c1 in enumerate(base_cards):
            engine1 = statistics.median(c1["engine_ms"])
            total1 = statistics.median(c1["total_ms"])
            row = [c1["label"], where]
            for e in others:
                ck = dict(where_timed(e))[where][index]
                engine = statistics.median(ck["engine_ms"]) / engine1 if engine1 else math.nan
                worst[e["factor"], where] = max(worst.get((e["factor"], where), 0.0), engine)
                row += [ratio(engine), ratio(statistics.median(ck["total_ms"]) / total1)]
            if project_to is not None:
                top_card = dict(where_timed(top))[where][index]
                grown = statistics.median(top_card["engine_ms"]) / engine1
                exponent = math.log(grown) / math.log(top["factor"]) if grown > 0 else math.nan
                row.append(f"~{ratio(project_to**exponent)}")
            card_rows.append(row)
    card_header = ["card (p50)", "store"]
    for e in others:
        card_header += [f"×{e['factor']} ÷ ×1 engine", f"×{e['factor']} ÷ ×1 end to end"]
    if project_to is not None:
        card_header.append(f"×{project_to} ÷ ×1 engine (PROJECTED)")

    def gate(e: dict[str, Any]) -> float:
        seconds = e["build"]["steps"].get("check_staged")
        return e["build"]["report"]["triples"] / seconds if seconds else math.nan

    measures: list[tuple[str, Callable[[dict[str, Any]], float]]] = [
        ("triples", lambda e: e["build"]["report"]["triples"]),
        ("gate triples/s", gate),
        (
            "write triples/s",
            lambda e: e["build"]["report"]["triples"] / e["build"]["report"]["write_seconds"],
        ),
        (
            "build triples/s",
            lambda e: e["build"]["report"]["triples"] / e["build"]["report"]["total_seconds"],
        ),
        (
            "read seconds per triple",
            lambda e: e["build"]["report"]["read_seconds"] / e["build"]["report"]["triples"],
        ),
        (
            "peak RSS per triple",
            lambda e: e["build"]["rss_build_mib"] / e["build"]["report"]["triples"],
        ),
        (
            "peak of all processes per triple",
            lambda e: e["build"].get("pss_all_mib", math.nan) / e["build"]["report"]["triples"],
        ),
    ]
    build_rows = [
        [label, *(ratio(value(e) / value(base)) for e in others)] for label, value in measures
    ]
    build_header = ["build", *(f"×{e['factor']} ÷ ×1" for e in others)]
    verdicts = []
    for e in others:
        cards = "; ".join(
            f"{where}, the fastest-growing card's engine time is "
            f"**{ratio(worst[e['factor'], where])}** ×1's ("
            + ("over" if worst[e["factor"], where] > ENGINE_TARGET else "within")
            + f" the target of ≤ {ENGINE_TARGET:g}× at ×100)"
            for where in wheres
        )
        verdicts.append(
            f"- ×{e['factor']}: {cards}. Gate throughput is **{ratio(gate(e) / gate(base))}** "
            "and whole-build throughput **"
            + ratio(measures[3][1](e) / measures[3][1](base))
            + "** of ×1's (target: about 1×)."
        )
    return "\n".join(
        [
            "## Ratios ×k ÷ ×1 against the targets",
            "",
            "Targets from the issue: card engine time at ×100 at most 2× that at ×1; build "
            "throughput roughly constant per triple. Card ratios compare p50s (engine and end "
            "to end)."
            + (
                " The PROJECTED column is not measured: it carries each card's growth from "
                f"×1 to ×{top['factor']} on to ×{project_to} as a power law."
                if project_to is not None
                else ""
            ),
            "",
            table(card_header, card_rows, right=range(2, len(card_header))),
            "",
            "Build ratios: for throughputs above 1× is faster per triple; for read seconds "
            "and memory per triple above 1× is costlier.",
            "",
            table(build_header, build_rows, right=range(1, len(build_header))),
            "",
            *verdicts,
        ]
    )


def projection_section(entries: list[dict[str, Any]]) -> str:
    """Projections for factors not measured, clearly labelled."""
    projected = [e for e in entries if not e.get("build") and e.get("projection") is not None]
    if not projected:
        return ""
    lines = ["## PROJECTION (not measured) for factors not built", ""]
    for e in projected:
        p = e["projection"]
        why = e.get("skipped") or e.get("stopped") or "projected only (--project)"
        basis = " and ".join(f"×{f}" for f in p["from"])
        rows = [
            [
                next(label for n, _, label, _ in STEPS if n == name),
                secs(value),
                f"{exponent:.2f}",
            ]
            for name, (value, exponent) in p["steps"].items()
            if name not in {"check_staged"}
        ]
        gate = p["steps"].get("check_staged")
        lines += [
            f"### ×{p['factor']}: PROJECTED, {why}",
            "",
            f"Extrapolated from the measured {basis}: each step grows from the largest "
            "measured factor with the exponent seen between the two largest, never below 1 "
            "(linear). Only as good as that assumption: steps with a superlinear term that is "
            "small at ×10 (the co-discussion projection's links, which grow with the people "
            "each section has; `git rev-list` per tag) may grow faster than measured so far.",
            "",
            f"- triples (linear in the corpus): **~{p['triples'] / 1e6:,.1f} M** (projection)",
            f"- generate: **~{secs(p['generate_seconds'])} s**; read: "
            f"**~{secs(p['read_seconds'])} s**; write: **~{secs(p['write_seconds'])} s**; "
            f"generate + build: **~{p['total_seconds'] / 3600:,.1f} h** (projection)",
            (
                f"- SHACL gate alone: ~{secs(gate[0])} s (exponent {gate[1]:.2f}) → "
                f"~{p['triples'] / gate[0]:,.0f} triples/s (projection)"
                if gate
                else "- SHACL gate: not measured"
            ),
            f"- peak RSS of the build: ~{p['rss_build_mib'] / 1024:,.1f} GiB (exponent "
            f"{p['rss_exponent']:.2f}; projection)"
            + (
                f", more than this machine's {memory_gib():,.0f} GiB"
                if p["rss_build_mib"] / 1024 > memory_gib()
                else f"; this machine has {memory_gib():,.0f} GiB"
            ),
            "",
            table(["step", "projected s", "exponent"], rows, right=(1, 2)),
            "",
        ]
    return "\n".join(lines)


def status_section(entries: list[dict[str, Any]]) -> str:
    """What happened to each factor asked for."""
    rows = []
    for e in entries:
        if e.get("cards"):
            state = "built and asked"
            if e["build"].get("corpus_reused"):
                state += " (corpus from --corpus-cache)"
        elif e.get("build"):
            state = e.get("cards_stopped", "built; cards not timed")
        else:
            state = (
                e.get("skipped")
                or e.get("stopped")
                or (
                    "projected only"
                    if e.get("projection")
                    else "no projection: nothing was measured"
                )
            )
        wall = secs(e.get("wall_seconds")) if e.get("wall_seconds") else "–"
        rows.append([f"×{e['factor']}", state, wall])
    return "\n".join(
        [
            "## Factors",
            "",
            table(["factor", "outcome", "generate + build wall s"], rows, right=(2,)),
        ]
    )


# --- main -----------------------------------------------------------------------------------


def factor_list(text: str) -> list[int]:
    """``"1,10,100"`` → ``[1, 10, 100]``."""
    try:
        values = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a list of whole numbers; write it like 1,10,100."
        ) from None
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError("Factors must be whole numbers of at least 1.")
    return values


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options (the worker options are internal)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--factors", type=factor_list, default=[1, 10], help="1,10 (default)")
    parser.add_argument("--seed", type=int, default=7, help="generator seed (7)")
    parser.add_argument("--runs", type=int, default=30, help="timed runs per card (30)")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=DEFAULT_BUDGET,
        help=f"seconds per factor to generate and build ({DEFAULT_BUDGET:,.0f}; 0 = none)",
    )
    parser.add_argument(
        "--project",
        type=factor_list,
        default=[100],
        help="factors to project without building (100)",
    )
    parser.add_argument("--mail", action="store_true", help="also generate a mailing list")
    parser.add_argument("--keep", action="store_true", help="keep each factor's folder")
    parser.add_argument("--workdir", type=Path, help="where the temporary folders go")
    parser.add_argument(
        "--corpus-cache",
        type=Path,
        help="keep generated corpora here and reuse them on later runs (by factor, seed and "
        "generator source)",
    )
    parser.add_argument(
        "--from-json",
        type=Path,
        help="re-render the report of a saved run (benchmarks/out/scale.json); runs nothing",
    )
    parser.add_argument(
        "--retime-cards",
        action="store_true",
        help="with --from-json: time the cards again on the folders that run kept (--keep), "
        "found by the saved path or in --workdir, and save the run again",
    )
    parser.add_argument("--worker", choices=("build", "cards"), help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--dirs", type=Path, nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--factor", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument(
        "--shape",
        choices=synthetic.SHAPES,
        default="tls",
        help="each draft's size: tls (the TLS corpus's), tiny (seconds to build)",
    )
    report.options(parser, smoke="tiny drafts, ×1 and ×2, 2 runs, ×100 projected")
    args = report.parse(parser, argv)
    if args.smoke:
        args.shape, args.factors, args.runs, args.project = "tiny", [1, 2], 2, [100]
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.time_budget < 0:
        parser.error("--time-budget must be 0 (none) or a number of seconds")
    if args.retime_cards and args.from_json is None:
        parser.error("--retime-cards needs --from-json (the run whose kept folders to time)")
    return args


def sections(meta: dict[str, Any], entries: list[dict[str, Any]]) -> list[str]:
    """The report's sections."""
    return [
        header_section(meta),
        status_section(entries),
        corpus_section(entries),
        build_section(entries),
        checks_section(entries),
        cards_section(entries, meta["runs"]),
        ratios_section(entries),
        projection_section(entries),
    ]


def saved_run(path: Path, args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run saved as JSON by an earlier ``scale.py`` (the options fill in what it lacks)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise BenchError(
            f"Cannot read the saved run {path} ({error}); pass the scale.json a run wrote."
        ) from None
    if isinstance(data, list):  # saved before runs kept their options
        meta = run_meta(args)
        stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC)
        meta["facts"] |= {"date": f"{stamp:%Y-%m-%d %H:%M} UTC (saved)", "commit": "unknown"}
        meta["factors"] = [e["factor"] for e in data if e.get("build") or e.get("stopped")]
        return meta, data
    return data["meta"], data["entries"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run every factor and print the report; 2 on a setup problem."""
    args = parse_args(argv)
    if args.worker == "build":
        return worker_build(args)
    if args.worker == "cards":
        return worker_cards(args)
    try:
        if args.from_json is not None:
            meta, entries = saved_run(args.from_json, args)
            if args.retime_cards:
                retime_cards(entries, args)
        else:
            meta, entries = run_all(args)
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    known = {e["factor"] for e in entries}
    for factor in args.project:
        if factor not in known:
            entries.append({"factor": factor, "projection": projection(entries, factor)})
    title = "ratified-rdf scale benchmark (synthetic corpus)"
    report.publish(
        "scale",
        title,
        sections(meta, entries),
        facts=facts_of(meta),
        extra=options_line(meta),
        record=args.record,
    )
    if args.from_json is None or args.retime_cards:
        OUT_FILE.with_suffix(".json").write_text(
            json.dumps({"meta": meta, "entries": entries}, indent=1, default=str),
            encoding="utf-8",
        )
    return 0


def retime_cards(entries: list[dict[str, Any]], args: argparse.Namespace) -> None:
    """Time the cards of every built factor again, in the folder its run kept, in turn."""
    for entry in entries:
        if not entry.get("build"):
            continue
        factor = entry["factor"]
        if entry.get("folder"):
            folder = Path(entry["folder"])
        else:
            found = sorted((args.workdir or Path(".")).glob(f"rr-scale-x{factor}-*/"))
            if len(found) != 1:
                raise BenchError(
                    f"Found {len(found)} kept folders for ×{factor} in "
                    f"{args.workdir or Path('.')}; pass the --workdir the run kept them in "
                    "(it must hold exactly one per factor)."
                )
            folder = found[0]
        if not (folder / "store").is_dir():
            raise BenchError(f"{folder} holds no store; was the run made with --keep?")
        entry["folder"] = str(folder)
    time_all_cards(entries, args.runs)
    if any(e.get("cards_stopped") for e in entries):
        raise BenchError(f"Timing the cards again overran {CARD_TIMEOUT:,.0f} s.")


def run_all(args: argparse.Namespace) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Every factor asked for, in ascending order."""
    if shutil.which("git") is None:
        raise BenchError("git is not installed; install git to generate the corpus.")
    if args.workdir is not None:
        args.workdir.mkdir(parents=True, exist_ok=True)
    meta = run_meta(args)
    entries: list[dict[str, Any]] = []
    try:
        for factor in args.factors:
            entries.append(run_factor(factor, args, entries))
        time_all_cards(entries, args.runs)
    finally:
        if args.keep:
            for e in entries:
                if e.get("folder"):
                    log(f"×{e['factor']}: kept {e['folder']}")
        else:
            remove_folders(entries)
    return meta, entries


if __name__ == "__main__":
    sys.exit(main())
