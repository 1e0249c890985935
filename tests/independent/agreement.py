"""The independent checker's answer for one repository set beside a built brain's.

The checker (:mod:`tests.independent.revisions`, :mod:`tests.independent.attribution`)
reads git alone; this module is the only place that reads the brain, with SPARQL through
:meth:`ratified_rdf.Brain.query`, and lists every disagreement as a sentence:

* a revision one side holds and the other does not (of a draft the brain holds; drafts the
  brain leaves out are listed apart, as ``unlisted``);
* a revision whose text came from another kind of source (tag, per-revision file, docname
  commit), or from another text (the blobs read differ; for a docname revision, a text
  whose front matter does not name it: where the docname went back and forth between
  branches, several versions name one revision and git alone cannot say which was
  submitted);
* revisions named missing by one side only;
* a section tree that differs: the ``(number, title)`` rows of the revision's text in
  document order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.independent.attribution import _Git
from tests.independent.revisions import Held, holdings, names_revision, section_rows

__all__ = ["Agreement", "compare"]

_RR = "https://w3id.org/ratified-rdf/ontology#"
_REVISIONS = f"""
PREFIX rr: <{_RR}>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?revision ?draftName ?number ?provenance ?file ?gap WHERE {{
  ?revision rr:revisionOf ?draft ; rr:revisionNumber ?number .
  ?draft rr:draftName ?draftName .
  OPTIONAL {{ ?revision rr:revisionProvenance ?provenance }}
  OPTIONAL {{ ?revision rr:sourceFile ?file }}
  OPTIONAL {{ ?revision rr:readingGap ?gap }}
}}"""
_MISSING = f"""
PREFIX rr: <{_RR}>
SELECT ?draftName ?number WHERE {{ ?draft rr:draftName ?draftName ; rr:missingRevision ?number }}"""
_SECTIONS = f"""
PREFIX rr: <{_RR}>
PREFIX dcterms: <http://purl.org/dc/terms/>
SELECT ?revision ?number ?title ?position WHERE {{
  ?revision rr:revisionOf ?draft ; rr:hasSection ?section .
  ?section dcterms:title ?title ; rr:position ?position .
  OPTIONAL {{ ?section rr:sectionNumber ?number }}
}}"""
_COMMIT = re.compile(r"\bcommit ([0-9a-f]{7,40})\b")


@dataclass
class Agreement:
    """What the checker and the brain say of one repository, and where they differ."""

    name: str
    revisions: int = 0
    sections: int = 0
    disagreements: list[str] = field(default_factory=list)
    unlisted: list[str] = field(default_factory=list)
    """Revisions of drafts the brain does not hold at all (its manifest left them out)."""

    def __str__(self) -> str:
        lines = [f"{self.name}: {self.revisions} revisions, {self.sections} sections agree"]
        lines += [f"  DIFFERS: {d}" for d in self.disagreements]
        lines += [f"  not in the brain's drafts: {u}" for u in self.unlisted]
        return "\n".join(lines)


def _values(brain: object, query: str) -> list[dict[str, str]]:
    rows = brain.query(query).rows  # type: ignore[attr-defined]
    return [{k: v.value for k, v in row.items()} for row in rows]


def _blob(git: _Git, ref: str, path: str) -> str | None:
    try:
        return git.run("rev-parse", f"{ref}:{path}").strip()
    except Exception:
        return None


def _normal(title: str) -> str:
    return " ".join(title.split())


def compare(name: str, git_dir: str | Path, brain: object) -> Agreement:
    """Compare the checker's revisions and section trees of the repository at ``git_dir``
    with those of ``brain`` (a :class:`ratified_rdf.Brain`)."""
    result = Agreement(name)
    held = holdings(git_dir)
    git = _Git(Path(git_dir))
    brain_revisions = {
        f"{row['draftName']}-{row['number']}": row for row in _values(brain, _REVISIONS)
    }
    brain_drafts = {row["draftName"] for row in brain_revisions.values()}
    missing = {(row["draftName"], row["number"]) for row in _values(brain, _MISSING)}
    brain_drafts |= {draft for draft, _ in missing}
    by_iri: dict[str, list[tuple[int, str | None, str]]] = {}
    for row in _values(brain, _SECTIONS):
        by_iri.setdefault(row["revision"], []).append(
            (int(row["position"]), row.get("number"), row["title"])
        )
    for label in sorted(set(held) | set(brain_revisions)):
        mine, theirs = held.get(label), brain_revisions.get(label)
        if theirs is None:
            assert mine is not None
            if mine.draft in brain_drafts:
                result.disagreements.append(
                    f"{label}: held by the repository ({_where(mine)}); not in the brain"
                )
            else:
                result.unlisted.append(f"{label} ({_where(mine)})")
            continue
        if mine is None:
            result.disagreements.append(
                f"{label}: in the brain ({theirs.get('provenance')}); the checker finds no "
                "tag, per-revision file or docname holding it"
            )
            continue
        problem = _source_problem(git, mine, theirs)
        if problem:
            result.disagreements.append(f"{label}: {problem}")
            continue
        result.revisions += 1
        if theirs.get("gap"):
            result.disagreements.append(f"{label}: the brain could not read it: {theirs['gap']}")
            continue
        ref = f"refs/tags/{mine.ref}^{{commit}}" if mine.kind == "tag" else mine.ref
        text = git.run("show", f"{ref}:{mine.path}")
        expected = [(n, _normal(t)) for n, t in section_rows(text, mine.path)]
        got = [(n, _normal(t)) for _, n, t in sorted(by_iri.get(theirs["revision"], []))]
        if expected == got:
            result.sections += len(got)
        else:
            difference = _tree_difference(expected, got)
            result.disagreements.append(f"{label} ({mine.path}): {difference}")
    # Missing revisions: the numbers below a draft's newest held one that nothing holds.
    numbers: dict[str, set[int]] = {}
    for h in held.values():
        if h.draft in brain_drafts and h.number.isdigit():
            numbers.setdefault(h.draft, set()).add(int(h.number))
    gaps = {
        (draft, f"{n:02d}")
        for draft, held_numbers in numbers.items()
        for n in range(0, max(held_numbers))
        if n not in held_numbers
    }
    for draft, number in sorted(gaps - missing):
        result.disagreements.append(f"{draft}-{number}: held nowhere, not named missing")
    for draft, number in sorted(missing - gaps):
        result.disagreements.append(f"{draft}-{number}: named missing by the brain only")
    git.close()
    return result


def _where(held: Held) -> str:
    return f"{held.kind} {held.ref[:12]}, {held.path}"


def _source_problem(git: _Git, mine: Held, theirs: dict[str, str]) -> str | None:
    provenance = theirs.get("provenance", "")
    kind = {"tag": "tag", "file": "file", "commit": "docname"}.get(provenance.split(" ")[0])
    if kind == "file" and "as last committed" in provenance:
        kind = "latest"  # an unnumbered draft's text as last committed
    if kind != mine.kind:
        return f"the brain read it from '{provenance}', the checker from {_where(mine)}"
    path = theirs.get("file") or mine.path
    if kind == "tag":
        ref = f"refs/tags/{provenance.split(' ', 1)[1]}^{{commit}}"
    else:
        found = _COMMIT.search(provenance)
        if not found:
            return f"the brain's provenance names no commit: '{provenance}'"
        ref = found.group(1)
    mine_ref = f"refs/tags/{mine.ref}^{{commit}}" if mine.kind == "tag" else mine.ref
    if _blob(git, ref, path) != _blob(git, mine_ref, mine.path):
        if kind == "docname" and _names(git, ref, path, mine.label):
            # Several versions of the file name the revision (the docname went back and
            # forth between branches): git alone cannot say which was submitted, so any of
            # them is the revision's text.
            return None
        return (
            f"the brain read {path} at {ref[:24]} ('{provenance}'), "
            f"a different text from the checker's {_where(mine)}"
        )
    return None


def _names(git: _Git, ref: str, path: str, label: str) -> bool:
    """Whether ``path`` at ``ref`` names revision ``label`` in its front matter."""
    return names_revision(git.git_dir, ref, path, label)


def _tree_difference(
    expected: list[tuple[str | None, str]], got: list[tuple[str | None, str]]
) -> str:
    """The first row where the checker's and the brain's section lists part."""
    for index, (a, b) in enumerate(zip(expected, got, strict=False)):
        if a != b:
            return (
                f"section trees differ at row {index + 1}: checker {a[0] or '(unnumbered)'} "
                f"'{a[1]}', brain {b[0] or '(unnumbered)'} '{b[1]}' "
                f"({len(expected)} sections in the checker's, {len(got)} in the brain's)"
            )
    longer, side = (expected, "checker") if len(expected) > len(got) else (got, "brain")
    extra = longer[min(len(expected), len(got))]
    return (
        f"the {side} has {abs(len(expected) - len(got))} more section(s), from "
        f"{extra[0] or '(unnumbered)'} '{extra[1]}' ({len(expected)} in the checker's, "
        f"{len(got)} in the brain's)"
    )
