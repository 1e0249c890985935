"""`ratified ask` imports only what answering uses: a cold command line spends its time on the
question, not on importing the SHACL engine, rdflib or the web and MCP stacks.

Structural, not timed: a fresh interpreter answers a question on the Pigeon brain through the
command line's own entry point, then lists the modules it loaded.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

import ratified_rdf
from ratified_rdf import Brain
from tests.pigeon import MANIFEST, make_pigeon_repo

HEAVY = ("pyshacl", "rdflib", "torch", "starlette", "uvicorn", "mcp", "owlready2")
"""What answering a question never needs: the SHACL engine and rdflib (a build's and
``validate``'s), the web and MCP servers' stacks, and the eval and ontology extras."""

_ASK = """
import json, sys
from ratified_rdf.surfaces import cli
try:
    cli.main(["ask", "--json", "--store", sys.argv[1], sys.argv[2]], standalone_mode=False)
except SystemExit as stop:
    assert not stop.code, stop.code
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("light")
    repo = make_pigeon_repo(folder / "git")
    brain, _ = Brain.build(MANIFEST, source=str(repo), path=folder / "store")
    brain.close()
    return folder / "store"


def _loaded_after_asking(store: Path, question: str) -> tuple[dict[str, object], set[str]]:
    source = str(Path(ratified_rdf.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", _ASK, str(store), question],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    card, modules = out.rsplit("\n", 2)[0], out.rsplit("\n", 2)[1]
    return json.loads(card), set(json.loads(modules))


@pytest.mark.parametrize(
    "question", ["who discussed RFC 9999 section 3.1?", "what does the graph hold?"]
)
def test_asking_imports_no_heavy_module(store: Path, question: str) -> None:
    card, modules = _loaded_after_asking(store, question)
    assert card["question"] == question  # it did answer, through the whole path
    loaded = sorted({m.split(".", 1)[0] for m in modules} & set(HEAVY))
    assert not loaded, f"answering a question imported {loaded}"
    # Nor the surfaces or stages that the question does not use.
    for module in (
        "ratified_rdf.build",
        "ratified_rdf.graph.gate",
        "ratified_rdf.surfaces.server",
        "ratified_rdf.surfaces.mcp_server",
        "ratified_rdf.sources.online",
        # The sources' own code (readers, mappings): which of them hold posts is known
        # without it while no other source is registered.
        "ratified_rdf.sources.base",
    ):
        assert module not in modules, module


def test_the_sources_that_hold_posts_are_named_without_importing_them() -> None:
    from ratified_rdf.queries.run import BUILT_IN_POST_SOURCES
    from ratified_rdf.sources.base import BUILT_IN, registered_sources

    built_in = [s for s in registered_sources() if type(s).__module__ in BUILT_IN]
    assert {s.name for s in built_in if s.holds_posts} == BUILT_IN_POST_SOURCES


def test_the_root_imports_its_names_on_first_use_and_gives_every_one() -> None:
    code = (
        "import json, sys, ratified_rdf\n"
        "first = sorted(sys.modules)\n"
        "found = {n: type(getattr(ratified_rdf, n)).__name__ for n in ratified_rdf.__all__}\n"
        "print(json.dumps([first, found]))"
    )
    source = str(Path(ratified_rdf.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    first, found = json.loads(out)
    assert not {m.split(".", 1)[0] for m in first} & {*HEAVY, "pyoxigraph"}
    assert "ratified_rdf.brain" not in first
    assert set(found) == set(ratified_rdf.__all__)
    assert found["Brain"] == "type" and found["__version__"] == "str"
    with pytest.raises(AttributeError, match="no attribute 'Nothing'"):
        ratified_rdf.Nothing  # noqa: B018


def test_the_list_of_commands_imports_neither_server() -> None:
    code = (
        "import sys\n"
        "from ratified_rdf.surfaces import cli\n"
        "try:\n"
        "    cli.main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "watched = ('starlette', 'mcp', 'ratified_rdf.surfaces.')\n"
        "print(sorted(m for m in sys.modules if m.startswith(watched)))"
    )
    source = str(Path(ratified_rdf.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    listing, loaded = out.rsplit("\n", 2)[0], out.rsplit("\n", 2)[1]
    assert "serve " in listing and "mcp " in listing
    assert "server" not in loaded and "mcp" not in loaded and "starlette" not in loaded, loaded


@pytest.mark.parametrize("limit", [30, 45, 80, 200])
def test_a_lazy_commands_listed_help_is_its_own(limit: int) -> None:
    from ratified_rdf.surfaces import cli

    for name, (_module, _attr, kept) in cli._LAZY_COMMANDS.items():
        command = cli.main.get_command(click.Context(cli.main), name)
        assert command is not None
        assert cli._short(kept, limit) == command.get_short_help_str(limit), name
