"""The shell examples of README.md and docs/*.md, as the reader sees them: read by the test
that checks every documented ``ratified`` command parses (tests/unit/test_doc_examples.py)
and by the one that runs every example (tests/corpus/test_doc_examples_run.py)."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"```(?:sh|bash|shell|console)\n(.*?)```", re.S)


@dataclass(frozen=True)
class Block:
    """One shell block: where it starts (``docs/x.md:12``) and its command lines, each with
    its continuation lines joined and its comment kept (the shell drops it)."""

    where: str
    lines: tuple[str, ...]


def is_synopsis(command: str) -> bool:
    """Whether a command line describes a command's options (``[--port N]``, ``…``,
    ``<placeholder>``) rather than being one to run."""
    words = shlex.split(command, comments=True)
    return any(w.startswith("[") or "…" in w or w.startswith("<") for w in words)


def blocks() -> list[Block]:
    """Every shell block of the docs, in the order a reader meets them."""
    found: list[Block] = []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            lines = [ln for ln in match.group(1).replace("\\\n", " ").splitlines() if ln.strip()]
            found.append(Block(f"{path.relative_to(ROOT)}:{line}", tuple(lines)))
    return found


def ratified_commands() -> list[tuple[str, str]]:
    """(where, command) for every ``ratified …`` in a shell block, continuation lines
    joined, a chain (``&&``) split, comments dropped; a synopsis is a description, not an
    example, and is left out."""
    found: list[tuple[str, str]] = []
    for block in blocks():
        for line in block.lines:
            for part in line.split("&&"):
                words = shlex.split(part, comments=True)
                if words[:1] != ["ratified"] or is_synopsis(part):
                    continue
                file = block.where.split(":")[0]
                found.append((f"{file}: {part.strip()[:60]}", part))
    return found
