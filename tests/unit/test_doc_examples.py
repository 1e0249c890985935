"""Every ``ratified`` command the README and docs/ show, as they show it, is one the command
line accepts: the command exists, every option and argument it gives parses (names, choices,
numbers, dates), in seconds and without the corpus; tests/corpus/test_doc_examples_run.py
runs them all. A renamed command or option, a dropped choice or a typo in the docs fails here
with the file and the line."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import click
import pytest

from ratified_rdf.surfaces.cli import main
from tests.doc_examples import ROOT, ratified_commands

EXAMPLES = ratified_commands()


def test_the_docs_show_examples_of_every_command_family() -> None:
    shown = {shlex.split(c, comments=True)[1] for _, c in EXAMPLES}
    assert {"ask", "build", "dump", "fetch", "init", "serve", "validate", "void"} <= shown


@pytest.mark.parametrize(("where", "command"), EXAMPLES, ids=[w for w, _ in EXAMPLES])
def test_a_documented_command_parses_as_written(
    where: str, command: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(ROOT)  # the docs' relative paths are from the repository's root
    # A file under ~ is the user's own (their audit key): the shell expands ~, and the user
    # has the file, so a home of this test's holds it.
    monkeypatch.setenv("HOME", str(tmp_path))
    args = [os.path.expanduser(w) for w in shlex.split(command, comments=True)[1:]]
    for given, word in zip(shlex.split(command, comments=True)[1:], args, strict=True):
        if given.startswith("~/"):
            Path(word).parent.mkdir(parents=True, exist_ok=True)
            Path(word).touch()
    ctx = main.make_context("ratified", list(args), resilient_parsing=False)
    group: click.Command = main
    # Walk down the groups as click does, parsing each level's own options.
    while isinstance(group, click.Group) and (ctx._protected_args or ctx.args):
        name, *rest = [*ctx._protected_args, *ctx.args]
        found = group.get_command(ctx, name)
        assert found is not None, f"{where}: no command {name!r}"
        ctx = found.make_context(name, rest, parent=ctx)
        group = found
    assert not ctx.args or isinstance(group, click.Group), f"{where}: {ctx.args} left over"
