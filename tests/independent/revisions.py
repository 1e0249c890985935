"""Which revisions of which drafts a repository holds, where each one's text is, and the
section tree of each, worked out from git alone.

Written apart from the pipeline (it imports nothing from ``ratified_rdf``), from the IETF's
conventions: a submitted revision ``draft-NAME-NN`` is held by

1. a tag ``draft-NAME-NN`` (what i-d-template makes on submission): its text is the draft's
   source file at the tag (``draft-NAME.md``, ``.mkd``, ``.xml``, else ``.txt``, else a
   ``draft-NAME-NN.*`` copy);
2. else a per-revision file ``draft-NAME-NN.{md,mkd,xml,txt}`` on the default branch, in any
   folder (the submitted copy): its text is the file's last version there (a source format
   before ``.txt`` when both were kept);
3. else a commit of the default branch whose source file names the revision in its front
   matter (``docname: draft-NAME-NN``, ``<rfc docName="draft-NAME-NN">``): its text is the
   file at the last such commit.

4. else, for a draft that nothing above numbers at all, a source file ``draft-NAME.{md,mkd,xml}``
   (or ``draft-NAME-latest.*``) on the default branch: one unnumbered revision,
   ``draft-NAME-latest``, its text the file as last committed there.

A tag named otherwise (``draft-01``) holds no revision. :func:`holdings` lists them;
:func:`section_rows` gives a text's sections as ``(number, title)`` rows in document order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from tests.independent.attribution import _Git, expand_entities, parse_sections

__all__ = ["Held", "holdings", "names_revision", "section_rows", "text_of"]

_TAG = re.compile(r"^(draft-[a-z0-9]+(?:-[a-z0-9]+)+?)-(\d{2})$")
_REVISION_FILE = re.compile(r"^(draft-[a-z0-9]+(?:-[a-z0-9]+)+?)-(\d{2})\.(md|mkd|xml|txt)$")
_SOURCE_FILE = re.compile(r"^(draft-[a-z0-9-]+?)\.(md|mkd|xml)$")
_DOCNAME = re.compile(
    r"""^docname:\s*["']?(draft-[a-z0-9-]+?)-(\d{2})["']?\s*$|docName\s*=\s*["'](draft-[a-z0-9-]+?)-(\d{2})["']""",
    re.M,
)
_FORMAT_ORDER = {"md": 0, "mkd": 0, "xml": 1, "txt": 2}


@dataclass(frozen=True)
class Held:
    """One revision the repository holds: where its text came from (``tag``, ``file`` or
    ``docname``), the ref naming it (the tag, or the commit), and the file read there."""

    draft: str
    number: str
    kind: str
    ref: str
    path: str

    @property
    def label(self) -> str:
        """``draft-NAME-NN``."""
        return f"{self.draft}-{self.number}"


def _default_branch(git: _Git) -> str:
    head = git.run("symbolic-ref", "-q", "HEAD").strip()
    return head or "HEAD"


def _files_at(git: _Git, ref: str) -> list[str]:
    return [p for p in git.run("ls-tree", "-r", "--name-only", ref).split("\n") if p]


def _pick(paths: list[str], draft: str, number: str) -> str | None:
    """The draft's text among ``paths`` of one tree: its source file, else its text, else a
    per-revision copy; at the top of the tree before a folder."""
    ranked: list[tuple[int, int, int, str]] = []
    for path in paths:
        name = PurePosixPath(path).name
        stem, _, suffix = name.rpartition(".")
        if suffix not in _FORMAT_ORDER:
            continue
        if stem == draft:
            ranked.append((0, _FORMAT_ORDER[suffix], path.count("/"), path))
        elif stem == f"{draft}-{number}":
            ranked.append((1, _FORMAT_ORDER[suffix], path.count("/"), path))
    return min(ranked)[3] if ranked else None


def holdings(git_dir: str | Path) -> dict[str, Held]:
    """Every revision the repository holds, by ``draft-NAME-NN`` (see the module's
    docstring for the order of the sources)."""
    git = _Git(Path(git_dir))
    try:
        return _holdings(git)
    finally:
        git.close()


def _holdings(git: _Git) -> dict[str, Held]:
    held: dict[str, Held] = {}
    branch = _default_branch(git)
    for tag in git.run("tag", "--list").split():
        found = _TAG.match(tag)
        if not found:
            continue
        path = _pick(_files_at(git, f"refs/tags/{tag}^{{commit}}"), *found.groups())
        if path is not None:
            held[tag] = Held(found.group(1), found.group(2), "tag", tag, path)
    # Per-revision files: the last commit of the default branch that changed each.
    files: dict[str, tuple[int, int, str, str]] = {}  # label -> (format rank, depth, path, commit)
    commit = ""
    # The branch's own line (first parents, merges diffed against it): a per-revision file
    # last changed by merging the branch that edited it is read as the merge left it.
    log = git.run(
        "log", "--first-parent", "-m", "--diff-filter=d", "--format=%x1e%H", "--name-only",
        "--no-renames", branch,
    )  # fmt: skip
    for line in log.split("\n"):
        if line.startswith("\x1e"):
            commit = line[1:]
            continue
        found = _REVISION_FILE.match(PurePosixPath(line).name) if line else None
        if not found:
            continue
        label = f"{found.group(1)}-{found.group(2)}"
        rank = (_FORMAT_ORDER[found.group(3)], line.count("/"), line, commit)
        if label not in files or rank[:3] < files[label][:3]:
            if label in files and files[label][2] == line:
                continue  # an older change of the file already chosen
            files[label] = rank
    for label, (_, _, path, commit) in files.items():
        if label not in held:
            draft, number = label[:-3], label[-2:]
            held[label] = Held(draft, number, "file", commit, path)
    _docnames(git, branch, held)
    _unnumbered(git, branch, held)
    return held


def _unnumbered(git: _Git, branch: str, held: dict[str, Held]) -> None:
    """Add one ``latest`` revision for each draft whose source file the default branch holds
    and that no tag, per-revision file or docname numbers."""
    numbered = {h.draft for h in held.values()}
    for path in _files_at(git, branch):
        found = _SOURCE_FILE.match(PurePosixPath(path).name)
        if not found:
            continue
        draft = found.group(1).removesuffix("-latest")
        if draft in numbered or f"{draft}-latest" in held:
            continue
        commit = git.run("log", "-1", "--format=%H", branch, "--", path).strip()
        held[f"{draft}-latest"] = Held(draft, "latest", "latest", commit, path)


def _docnames(git: _Git, branch: str, held: dict[str, Held]) -> None:
    """Add the revisions named only by a source file's front matter (``docname:``,
    ``docName=``): for each, the newest commit of the default branch that wrote a version of
    the file naming it (any commit from there to the file's next change holds that text)."""
    changes = git.run(
        "log", "--format=%x1e%H", "--name-only", "--no-renames", branch, "--",
        "*.md", "*.mkd", "*.xml",
    )  # fmt: skip
    commit = ""
    for line in changes.split("\n"):  # newest first
        if line.startswith("\x1e"):
            commit = line[1:]
            continue
        if not line or not _SOURCE_FILE.match(PurePosixPath(line).name):
            continue
        try:
            head = git.run("show", f"{commit}:{line}")[:6000]
        except Exception:  # the commit deleted the file
            continue
        for found in _DOCNAME.finditer(head):
            draft = found.group(1) or found.group(3)
            number = found.group(2) or found.group(4)
            label = f"{draft}-{number}"
            if label not in held:
                held[label] = Held(draft, number, "docname", commit, line)


def names_revision(git_dir: str | Path, commit: str, path: str, label: str) -> bool:
    """Whether ``path`` at ``commit`` names revision ``label`` in its front matter."""
    git = _Git(Path(git_dir))
    try:
        head = git.run("show", f"{commit}:{path}")[:6000]
    except Exception:
        return False
    return any(
        f"{m.group(1) or m.group(3)}-{m.group(2) or m.group(4)}" == label
        for m in _DOCNAME.finditer(head)
    )


def text_of(git_dir: str | Path, held: Held) -> str:
    """The text the revision's source holds."""
    git = _Git(Path(git_dir))
    ref = f"refs/tags/{held.ref}^{{commit}}" if held.kind == "tag" else held.ref
    return git.run("show", f"{ref}:{held.path}")


_XML_REFERENCES = re.compile(
    r"<!--.*?-->|<(/?)references\b([^>]*?)(/?)>|<name>(.*?)</name>", re.S | re.IGNORECASE
)
_TITLE_ATTRIBUTE = re.compile(r"""\btitle\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_YAML_KEY = re.compile(r"^(normative|informative):[ \t]*(\S.*)?$", re.M)


def _markdown_references(text: str) -> list[str]:
    """The reference lists kramdown-rfc writes for a markdown draft: ``Normative
    References`` when the front matter lists normative references or the text cites one with
    ``{{!…}}``, ``Informative References`` likewise for ``informative:`` and ``{{?…}}``."""
    text = text.replace("\r\n", "\n")  # a file saved on Windows
    front = text.split("\n---", 2)[0] if text.startswith("---") else ""
    lists: dict[str, bool] = {"normative": False, "informative": False}
    lines = front.split("\n")
    for index, line in enumerate(lines):
        key = _YAML_KEY.match(line)
        if not key:
            continue
        inline = (key.group(2) or "").strip()
        listed_inline = bool(inline) and inline not in ("{}", "~", "null")
        listed_below = index + 1 < len(lines) and lines[index + 1][:1] in (" ", "\t")
        if listed_inline or listed_below:
            lists[key.group(1)] = True
    lists["normative"] = lists["normative"] or "{{!" in text
    lists["informative"] = lists["informative"] or "{{?" in text
    return [f"{kind.title()} References" for kind in ("normative", "informative") if lists[kind]]


def _xml_references(text: str) -> tuple[list[str], str | None]:
    """The titles of the reference lists of an xml2rfc text, and the title of a
    ``<references>`` that holds them (v3 nests the lists in one), if any."""
    named: list[tuple[int, str]] = []  # (depth, title) of each <references>, in order
    depth = 0
    naming: int | None = None  # index into named of the list whose <name> is awaited
    for token in _XML_REFERENCES.finditer(text):
        closing, attributes, empty, name = token.groups()
        if token.group(0).startswith("<!--"):
            continue
        if name is not None:
            if naming is not None:
                named[naming] = (named[naming][0], " ".join(re.sub(r"<[^>]+>", "", name).split()))
                naming = None
            continue
        if closing:
            depth -= 1
            continue
        depth += 1
        given = _TITLE_ATTRIBUTE.search(attributes or "")
        named.append((depth, (given.group(1) or given.group(2) or "") if given else ""))
        naming = None if given else len(named) - 1
        if empty:
            depth -= 1
    inner = [title for level, title in named if level == 2]
    if inner:
        outer = next((title for level, title in named if level == 1), None)
        return inner, outer or None
    return [title or "References" for level, title in named if level == 1], None


def section_rows(text: str, path: str) -> list[tuple[str | None, str]]:
    """``(number, title)`` for every section of a text, in document order, with the
    references as xml2rfc renders them: a numbered section after the last of the body
    (``References`` holding ``N.1 Normative References`` and ``N.2 Informative References``
    when there are two lists, else the one list's own title)."""
    sections = parse_sections(text, path).sections
    rows = [(s.number, s.title) for s in sections]
    if not path.endswith((".md", ".mkd")):
        return rows  # a text says its references' numbers itself; XML trees hold them
    if path.endswith(".xml"):
        expanded = expand_entities(text)
        titles, outer = _xml_references(expanded)
        if outer is not None and not titles:
            titles = [outer]
    else:
        titles, outer = _markdown_references(text), None
    if not titles:
        return rows
    body = [s for s in sections if not s.appendix]
    top = max((int(s.number) for s in body if s.number and s.number.isdigit()), default=0)
    at = max((i + 1 for i, s in enumerate(sections) if not s.appendix), default=0)
    number = str(top + 1)
    if len(titles) == 1:
        inserted = [(number, titles[0])]
    else:
        inserted = [(number, outer or "References")]
        inserted += [(f"{number}.{i}", title) for i, title in enumerate(titles, 1)]
    return rows[:at] + inserted + rows[at:]
