"""A user's type checker sees the library's types: the package is marked typed (``py.typed``,
PEP 561) and mypy, run as a user would on their own script, reveals real types for what the
public API returns, not ``Any``."""

from __future__ import annotations

import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest

SCRIPT = """
from ratified_rdf import Brain

with Brain.open("brain") as brain:
    answer = brain.ask("history of RFC 8446 section 4.2.10")
    reveal_type(answer)
    reveal_type(answer.queries[0].engine_ms)
    reveal_type(brain.query("ASK {}").boolean)
"""


def test_the_package_carries_its_py_typed_marker() -> None:
    assert resources.files("ratified_rdf").joinpath("py.typed").is_file()


@pytest.mark.slow
def test_mypy_sees_the_answer_types_in_a_users_script(tmp_path: Path) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--follow-imports=silent", "--no-incremental",
            "--cache-dir", str(tmp_path / "cache"), str(script),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )  # fmt: skip
    revealed = [line.split("Revealed type is ", 1)[1] for line in done.stdout.splitlines()
                if "Revealed type is " in line]  # fmt: skip
    assert revealed == [
        '"ratified_rdf.answers.models.Answer"',
        '"float"',
        '"bool | None"',
    ], done.stdout + done.stderr
