"""A second fictional spec repository, for group tests: the Sparrow Extension never existed.

Two revisions tagged draft-example-sparrow-00 and -01 (tests/fixtures/sparrow/), whose text
cites sections of the Pigeon Transport Protocol's RFC 9999 (tests/pigeon.py) and, in -01,
says it updates it. Alice wrote -00 and Bob -01: both also work on Pigeon.
"""

from __future__ import annotations

from pathlib import Path

from tests.pigeon import BOB, _git

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sparrow"
MANIFEST = FIXTURES / "manifest.toml"
DATES = ["2030-06-01T10:00:00+00:00", "2031-02-01T10:00:00+00:00"]


def make_sparrow_repo(folder: Path) -> Path:
    """Create the fictional repository ``folder/sparrow-spec`` and return its path."""
    repo = folder / "sparrow-spec"
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    document = repo / "draft-example-sparrow.md"
    for number, date in enumerate(DATES):
        document.write_text((FIXTURES / f"draft-example-sparrow-{number:02d}.md").read_text())
        _git(repo, "add", "-A")
        _git(
            repo,
            "commit",
            "-q",
            "-m",
            f"revision {number:02d}",
            date=date,
            author=BOB if number else None,
        )
        _git(repo, "tag", f"draft-example-sparrow-{number:02d}")
    return repo
