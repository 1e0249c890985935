"""Which commits changed each section of each revision of a repository that keeps one file
per revision (``draft-NAME-NN.xml``, ``.txt``, ``.md``), worked out from git alone.

Written apart from the pipeline (it imports nothing from ``ratified_rdf``). In such a
repository the file named for revision NN is that revision's working copy until it is
submitted: a commit that changed it (or the same revision's file in another format, the
``.txt`` rendered beside the ``.xml``) and that the revision's text contains changed
revision NN, in the sections its diff hunks sit in, by position, in the text of that commit
(removed lines in the parent's text, added ones in the commit's; see
:mod:`tests.independent.attribution`). A section of that text is the revision's section with
the same heading path and occurrence (:func:`tests.independent.attribution.match_section`).
Merge commits are not attributed; the commits they bring in are.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from tests.independent.attribution import (
    _Git,
    _rows_for,
    _TreeCache,
    _walk,
    match_section,
    parse_sections,
)
from tests.independent.revisions import holdings

__all__ = ["section_commits"]

_REVISION_FILE = re.compile(r"^(draft-[a-z0-9-]+?-\d{2})\.(?:md|mkd|xml|txt)$")


def section_commits(git_dir: str | Path) -> dict[tuple[str, str], set[str]]:
    """``(revision, section)`` → the commits that changed that section of that revision, for
    every revision the repository holds as a per-revision file. A section is named by its
    number, or ``(unnumbered) Heading``."""
    git = _Git(Path(git_dir))
    try:
        branch = git.run("symbolic-ref", "--short", "HEAD").strip()
        files = {label: h for label, h in holdings(git_dir).items() if h.kind == "file"}
        trees = {
            label: parse_sections(git.run("show", f"{h.ref}:{h.path}"), h.path)
            for label, h in files.items()
        }
        contains = {label: set(git.run("rev-list", h.ref).split()) for label, h in files.items()}
        cache = _TreeCache(git)
        found: dict[tuple[str, str], set[str]] = {}
        for header, changes in _walk(git, branch, (".md", ".mkd", ".xml", ".txt")):
            sha = header[0]
            for change in changes:
                path = change.new_path or change.old_path or ""
                named = _REVISION_FILE.match(PurePosixPath(path).name)
                label = named.group(1) if named else None
                if label not in files or sha not in contains[label]:
                    continue
                for _, _, section in _rows_for(change, cache, set()):
                    if section is None:
                        continue
                    landed = match_section(
                        section.number, section.path, section.occurrence, section.appendix,
                        trees[label],
                    )  # fmt: skip
                    if landed is None:
                        continue
                    name = landed.number or "(unnumbered) " + landed.title
                    found.setdefault((label, name), set()).add(sha)
        return found
    finally:
        git.close()
