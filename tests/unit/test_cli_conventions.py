"""What users of a command line expect of ``ratified``: help on every option, quiet commands
that say a thing once when it matters, and nothing left behind by a command that failed."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from ratified_rdf.audit import KEY_ENV
from ratified_rdf.surfaces.cli import main
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "who discussed RFC 9999 section 3.1?"


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _commands(
    group: click.Group, ctx: click.Context, path: str = "ratified"
) -> list[tuple[str, click.Command]]:
    found: list[tuple[str, click.Command]] = []
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        assert command is not None, name
        found.append((f"{path} {name}", command))
        if isinstance(command, click.Group):
            found += _commands(command, click.Context(command, parent=ctx), f"{path} {name}")
    return found


def test_every_option_of_every_command_has_help() -> None:
    ctx = click.Context(main)
    missing = [
        f"{path} {'/'.join(param.opts)}"
        for path, command in _commands(main, ctx)
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden and not param.help
    ]
    assert not missing, f"options without help: {missing}"


@pytest.fixture(autouse=True)
def _own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv(KEY_ENV, raising=False)
    monkeypatch.delenv("RATIFIED_DEBUG", raising=False)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


def test_a_command_on_a_store_that_is_not_there_leaves_no_log_behind(tmp_path: Path) -> None:
    asked = _run("ask", QUESTION, "--store", str(tmp_path / "nowhere"))
    assert asked.exit_code == 2 and "There is no brain at" in asked.output, asked.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == []


def test_a_build_from_a_bad_source_leaves_no_folders_behind(tmp_path: Path) -> None:
    store = tmp_path / "brain"
    done = _run(
        "build", str(MANIFEST), "--source", str(tmp_path / "nowhere"), "--store", str(store)
    )
    assert done.exit_code == 2, done.output
    assert "neither a folder" in done.output
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "cache") == []


def test_a_failed_build_keeps_a_store_that_was_there(tmp_path: Path, repo: Path) -> None:
    store = tmp_path / "brain"
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet")
    assert built.exit_code == 0, built.output
    again = _run(
        "build", str(MANIFEST), "--source", str(tmp_path / "nowhere"), "--store", str(store)
    )
    assert again.exit_code == 2, again.output
    assert store.is_dir() and (tmp_path / "brain.audit").is_dir()
    asked = _run("ask", QUESTION, "--store", str(store))
    assert asked.exit_code == 0, asked.output


def test_an_unsigned_log_is_one_line_on_build_and_none_on_reads(tmp_path: Path, repo: Path) -> None:
    store = tmp_path / "brain"
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet")
    assert built.exit_code == 0, built.output
    notes = [line for line in built.stderr.splitlines() if "not signed" in line]
    assert len(notes) == 1, built.stderr
    assert KEY_ENV in notes[0] and "ratified audit --help" in notes[0]
    asked = _run("ask", QUESTION, "--store", str(store))
    assert asked.exit_code == 0, asked.output
    assert "sign" not in asked.stderr, asked.stderr


def test_an_unsigned_read_of_a_signed_log_says_so_in_one_line(
    tmp_path: Path, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "brain"
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "keys" / "audit-key.pem"))
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet")
    assert built.exit_code == 0, built.output
    assert "sign" not in built.stderr, built.stderr
    monkeypatch.delenv(KEY_ENV)
    asked = _run("ask", QUESTION, "--store", str(store))
    notes = [line for line in asked.stderr.splitlines() if "sign" in line]
    assert len(notes) == 1 and notes[0].startswith("Note: "), asked.stderr


def test_a_servers_audit_log_says_where_it_is_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ratified_rdf.surfaces.cli import _audit_log

    url = "http://127.0.0.1:7878"
    for _ in range(2):
        with _audit_log(url) as log:
            pass
        log.close()
    said = capsys.readouterr().err.splitlines()
    folder = tmp_path / "state" / "ratified-rdf" / "audit" / "127.0.0.1-7878"
    assert said == [f"Note: the calls to {url} are audited in {folder}."]


def test_validate_and_dump_say_what_they_are_doing_unless_quiet(tmp_path: Path, repo: Path) -> None:
    store = tmp_path / "brain"
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet")
    assert built.exit_code == 0, built.output
    checked = _run("validate", "--store", str(store))
    assert checked.exit_code == 0 and "conforms" in checked.stdout, checked.output
    assert "reading" in checked.stderr and "against shapes/ (pyshacl)" in checked.stderr
    quiet = _run("validate", "--store", str(store), "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == "", quiet.stderr
    dumped = _run("dump", "--store", str(store), "-o", str(tmp_path / "brain.nq"))
    assert dumped.exit_code == 0 and "dumping" in dumped.stderr, dumped.output
    assert "quads" in dumped.stderr


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_serve_and_mcp_say_an_unsigned_read_in_one_note_line(
    command: str,
    tmp_path: Path,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A log signed before, opened now without its key: the commands' one `Note:` line, not
    # the log's own warning (several lines, on the logger, which reach stderr twice).
    store = tmp_path / "brain"
    monkeypatch.setenv(KEY_ENV, str(tmp_path / "keys" / "audit-key.pem"))
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet")
    assert built.exit_code == 0, built.output
    monkeypatch.delenv(KEY_ENV)
    started: list[str] = []
    if command == "serve":
        monkeypatch.setattr("uvicorn.run", lambda app, **_: started.append("serve"))
        ran = _run("serve", "--store", str(store), "--port", "0", "--query-workers", "1")
    else:
        from ratified_rdf.surfaces import mcp_server

        monkeypatch.setattr(mcp_server, "serve_stdio", lambda brain, limits: started.append("mcp"))
        ran = _run("mcp", "--store", str(store))
    assert ran.exit_code == 0 and started == [command], ran.output
    notes = [line for line in ran.stderr.splitlines() if "sign" in line]
    assert len(notes) == 1 and notes[0].startswith("Note: "), ran.stderr
    assert not [r for r in caplog.records if r.name.startswith("ratified_rdf.audit")]
    if command == "mcp":
        assert ran.stdout == ""  # stdout is the MCP client's channel


def test_every_command_that_can_take_seconds_says_what_it_is_doing(
    tmp_path: Path, repo: Path
) -> None:
    store = tmp_path / "brain"
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet")
    assert built.exit_code == 0, built.output
    at = ["--store", str(store)]
    review = ["--reviewer", "Ada Example", "--ratify"]
    commands = {
        "tracing RFC 9999's sections": ["coverage", "9999", *at],
        "counting the dataset's graphs": ["void", *at],
        "checking the audit log": ["audit", "verify", *at],
        "pruning runs": ["prune", *at],
        "reading": ["init", str(repo), "--out", str(tmp_path / "m.toml")],
        "running ask.rq": ["query", str(tmp_path / "ask.rq"), *at],
        "recording the review": ["review", "history of RFC 9999 section 1", *review, *at],
    }
    (tmp_path / "ask.rq").write_text("ASK {}\n", encoding="utf-8")
    for label, args in commands.items():
        said = _run(*args)
        # verify of an unsigned log fails (1), as it should; it still says what it checks.
        assert said.exit_code in {0, 1, 4}, (args, said.output)
        assert label in said.stderr, (args, said.stderr)
        assert label not in said.stdout
        (tmp_path / "m.toml").unlink(missing_ok=True)
        quiet = _run(*args, "--quiet")
        assert quiet.exit_code == said.exit_code, (args, quiet.output)
        assert label not in quiet.stderr, (args, quiet.stderr)
        (tmp_path / "m.toml").unlink(missing_ok=True)
