"""A user's mistake is reported as theirs: a sentence saying what is wrong and what to do,
exit code 2, no traceback, and never "this is a bug" (which is kept for real bugs, exit 3).

One test per mistake: a corrupted bundle, an empty bundle, a query file with a SPARQL syntax
error, a query file holding an update, a query file or a question that is not UTF-8, a
reviewer name that is not plain text, and a missing optional extra.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from ratified_rdf.audit import audit_dir
from ratified_rdf.surfaces.cli import main
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "who discussed RFC 9999 section 3.1?"


def _a_mistake(output: str) -> None:
    """What every mistake's report must (not) say."""
    assert any(line.startswith("Error: ") for line in output.splitlines()), output
    assert "bug" not in output.lower(), output
    assert "Traceback" not in output, output
    assert "\x1b" not in output, output  # nothing from the input reaches the terminal raw


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


@pytest.fixture(scope="module")
def bundle(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    path = tmp_path_factory.mktemp("bundle") / "pigeon.bundle"
    subprocess.run(
        ["git", "-C", str(repo), "bundle", "create", str(path), "--all"],
        check=True,
        capture_output=True,
    )
    return path.read_bytes()


@pytest.fixture(scope="module")
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("store") / "store"
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(folder), "--quiet")
    assert built.exit_code == 0, built.output
    return folder


@pytest.fixture(autouse=True)
def _own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test clones into a cache of its own (a bundle is cloned once per path)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("RATIFIED_DEBUG", raising=False)


def _build_from(source: Path, tmp_path: Path) -> Result:
    return _run(
        "build", str(MANIFEST), "--source", str(source), "--store", str(tmp_path / "s"), "--quiet"
    )


def _corrupt(data: bytes, how: str) -> bytes:
    header_end = data.index(b"\n\n") + 2
    if how == "pack":  # the header is fine, the pack after it is not
        body = bytes(b ^ 0xFF for b in data[header_end : header_end + 200])
        return data[:header_end] + body + data[header_end + 200 :]
    if how == "header bytes":  # a ref name that is not UTF-8, with an ANSI escape
        return b"# v2 git bundle\n\xff\xfe\x1b[31m refs/heads/main\n\n" + data[header_end:]
    if how == "cut short":  # cut inside the list of refs: no ref survives whole
        return data[:60]
    return b"\x00\xff\x1b[2J garbage " * 40  # not a bundle at all


@pytest.mark.parametrize("how", ["pack", "header bytes", "cut short", "not a bundle"])
def test_a_corrupted_bundle_is_named_as_such(how: str, bundle: bytes, tmp_path: Path) -> None:
    broken = tmp_path / "pigeon.bundle"
    broken.write_bytes(_corrupt(bundle, how))
    result = _build_from(broken, tmp_path)
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert str(broken) in result.output
    assert "git bundle create" in result.output  # what to do
    assert "the repository exists" not in result.output  # git's generic advice, not ours


def test_an_empty_bundle_is_named_as_such(tmp_path: Path) -> None:
    empty = tmp_path / "pigeon.bundle"
    empty.write_bytes(b"")
    result = _build_from(empty, tmp_path)
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert f"The bundle {empty} is an empty file." in result.output
    assert "git bundle create" in result.output


def test_a_good_bundle_at_the_same_path_builds_after_a_bad_one(
    bundle: bytes, tmp_path: Path
) -> None:
    path = tmp_path / "pigeon.bundle"
    path.write_bytes(_corrupt(bundle, "cut short"))
    assert _build_from(path, tmp_path).exit_code == 2
    path.write_bytes(bundle)
    result = _build_from(path, tmp_path)
    assert result.exit_code == 0, result.output


def test_a_query_with_a_syntax_error_names_the_file_and_the_mistake(
    store: Path, tmp_path: Path
) -> None:
    query = tmp_path / "broken.rq"
    query.write_text("SELECT * WHERE { ?s ?p }\n")
    result = _run("query", str(query), "--store", str(store))
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert str(query) in result.output and "SPARQL" in result.output


def test_a_query_file_holding_an_update_is_refused_and_changes_nothing(
    store: Path, tmp_path: Path
) -> None:
    update = tmp_path / "insert.rq"
    update.write_text(
        "INSERT DATA { <https://example.org/s> <https://example.org/p> <https://example.org/o> }"
    )
    result = _run("query", str(update), "--store", str(store))
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert str(update) in result.output and "update" in result.output.lower()
    ask = tmp_path / "ask.rq"
    ask.write_text("ASK { <https://example.org/s> ?p ?o }")
    after = _run("query", str(ask), "--store", str(store))
    assert after.exit_code == 0 and after.stdout.strip() == "False", after.output


def test_a_query_file_that_is_not_utf8_is_named_as_such(store: Path, tmp_path: Path) -> None:
    query = tmp_path / "latin1.rq"
    query.write_bytes("SELECT * WHERE { ?s ?p 'café' }".encode("latin-1"))
    result = _run("query", str(query), "--store", str(store))
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert "is not UTF-8 text (byte 0xE9" in result.output and "save" in result.output


@pytest.mark.slow
def test_a_question_that_is_not_utf8_is_refused_before_anything_runs(store: Path) -> None:
    records = audit_dir(store) / "records.jsonl"
    before = records.read_bytes()
    asked = subprocess.run(
        [
            sys.executable,
            "-m",
            "ratified_rdf",
            "ask",
            b"who discussed RFC 9999 section 3.1\xff?",
            "--store",
            str(store),
        ],
        capture_output=True,
        env={**os.environ, "LC_ALL": "C.UTF-8", "RATIFIED_DEBUG": ""},
        check=False,
    )
    stderr = asked.stderr.decode("utf-8", errors="replace")
    assert asked.returncode == 2, stderr
    _a_mistake(stderr)
    assert "The question is not UTF-8 text: character 35 (byte 0xFF)" in stderr, stderr
    assert "audit record" not in stderr
    assert records.read_bytes() == before  # refused before it was audited or run


def test_a_reviewer_name_that_is_not_plain_text_is_refused(store: Path) -> None:
    for name in ("\x1b[31mDana\x1b[0m", "Dana\x00", "D" * 1000):
        result = _run("review", QUESTION, "--reviewer", name, "--ratify", "--store", str(store))
        assert result.exit_code == 2, result.output
        _a_mistake(result.output)
        assert "reviewer's name" in result.output


def test_ratified_mcp_without_the_mcp_package_says_what_to_install(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "mcp.server.mcpserver", None)
    result = _run("mcp", "--store", str(store))
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert "pip install 'ratified-rdf[mcp]'" in result.output


def test_a_missing_eval_extra_says_what_to_install(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ratified_rdf.evaluation as evaluation

    def needs_bm25(*_args: object, **_kwargs: object) -> None:
        import bm25s  # noqa: F401

    monkeypatch.setitem(sys.modules, "bm25s", None)  # import fails as if not installed
    monkeypatch.setattr(evaluation, "run_eval", needs_bm25)
    questions = Path(__file__).parents[1] / "eval" / "questions.toml"
    result = _run("eval", str(questions), "--store", str(store))
    assert result.exit_code == 2, result.output
    _a_mistake(result.output)
    assert "optional package bm25s" in result.output
    assert "pip install 'ratified-rdf[eval]'" in result.output


def test_a_missing_module_of_our_own_is_still_a_bug(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ratified_rdf.evaluation as evaluation

    def broken(*_args: object, **_kwargs: object) -> None:
        raise ModuleNotFoundError("No module named 'ratified_rdf.gone'", name="ratified_rdf.gone")

    monkeypatch.setattr(evaluation, "run_eval", broken)
    questions = Path(__file__).parents[1] / "eval" / "questions.toml"
    result = _run("eval", str(questions), "--store", str(store))
    assert result.exit_code == 3, result.output
    assert "This is a bug" in result.output
