"""The expertise computation's provenance names the graphs it was computed from, and only
those: a brain without a mailing list has no mail graph to name, and the public level of a
brain whose list is restricted was computed without it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ratified_rdf import Brain
from tests.pigeon import MANIFEST, make_pigeon_repo

USED = (
    "PREFIX prov: <http://www.w3.org/ns/prov#> "
    "SELECT ?activity ?used WHERE { ?activity prov:used ?used }"
)


def _manifest(folder: Path, change: str) -> Path:
    records = folder / "pigeon"
    shutil.copytree(MANIFEST.parent, records)
    path = records / "manifest.toml"
    text = path.read_text()
    if change == "no mail":
        text = text.split("[[discussion.mail]]")[0] + text.split('file = "pigeon-list.mbox"')[1]
    else:
        text += '\n[clearance]\nmail = "restricted"\n'
    path.write_text(text)
    return path


def _used(brain: Brain) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for row in brain.query(USED).rows:
        level = row["activity"].value.rsplit("/", 1)[-1]
        found.setdefault(level, set()).add(row["used"].value)
    return found


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("git"))


def test_a_brain_without_mail_names_no_mail_graph(repo: Path, tmp_path: Path) -> None:
    brain, _ = Brain.build(_manifest(tmp_path, "no mail"), source=str(repo))
    used = _used(brain)
    assert used, "no computation said what it used"
    named = {g for graphs in used.values() for g in graphs}
    assert not any(g.endswith("/mail") for g in named)
    assert named <= set(next(r for r in brain.scope.runs if r.current).graphs)


def test_each_level_names_only_what_it_may_use(repo: Path, tmp_path: Path) -> None:
    built, _ = Brain.build(_manifest(tmp_path, "restricted mail"), source=str(repo))
    public, restricted = (
        built.read_as(built.reader.but(clearance="public")),
        built.read_as(built.reader.but(clearance="restricted")),
    )
    public_used = {g for graphs in _used(public).values() for g in graphs}
    assert public_used and not any(g.endswith("/mail") for g in public_used)
    restricted_used = _used(restricted)
    assert any(g.endswith("/mail") for graphs in restricted_used.values() for g in graphs)
