"""Where a draft's revisions are found in a repository: each place is a registered source.

A repository records its submitted revisions in one or more ways, and each is a small
:class:`RevisionSource` registered here by name:

- ``tags``: a ``<draft>-NN`` tag per revision (i-d-template's way);
- ``files``: one file per revision, ``draft-…-NN.xml`` or ``.txt`` (under any folder);
- ``docnames``: the commits whose front matter names a numbered revision
  (``docname: draft-…-07``, ``<rfc docName="draft-…-07">``);
- ``latest``: where the repository numbers no revision (``docname: draft-…-latest``), the
  document as last committed, one revision named ``latest``.

Every revision found says where its text came from (:attr:`FoundRevision.provenance`), so a
manifest, a build and a card can tell a tagged revision from one inferred from a file name or
a docname. :func:`find_revisions` asks the sources named, in order, and the first source that
holds a revision number gives it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from functools import cached_property
from pathlib import PurePosixPath
from typing import ClassVar, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from ratified_rdf.sources.formats import FORMATS
from ratified_rdf.sources.git_repo import CommitChanges, GitRepository, TagInfo

REVISION_NAME = re.compile(r"^(draft-[a-z0-9]+(?:-[a-z0-9]+)+)-(\d{2})$")
"""A numbered revision's name: ``draft-ietf-tls-dtls13-07`` is revision 07 of
draft-ietf-tls-dtls13."""

DOCUMENT_SUFFIXES = tuple(s for f in FORMATS.values() for s in f.suffixes)
"""Suffixes of files that can hold a draft's text, the preferred (the source) first."""

Memo = TypeVar("Memo")

_NOT_DOCUMENTS = ("readme", "contributing", "license", "licence", "changelog", "code_of_conduct")


class FoundRevision(BaseModel):
    """One revision of a draft as a source found it, and where its text came from."""

    model_config = ConfigDict(frozen=True)

    draft: str
    number: str
    """Two digits."""
    commit: str
    committed_at: datetime
    source: str
    """The registered source that found it: ``tags``, ``files`` or ``docnames``."""
    provenance: str
    """Where the text came from, as a phrase: ``tag draft-x-03``, ``file draft-x-03.txt at
    commit 1a2b3c4d5e6f``, ``commit 1a2b3c4d5e6f, whose x.md names draft-x-03``."""
    tag: str | None = None
    """The tag, for a revision read from one."""
    path: str | None = None
    """The file holding the text, when the source names it (a tag does not)."""
    guess: bool = False
    """Whether the commit was inferred (a docname names a revision over several commits)."""

    @property
    def name(self) -> str:
        """``draft-x-03``."""
        return f"{self.draft}-{self.number}"


class Rename(BaseModel):
    """A draft renamed to another, as the repository shows it (the file, or its docname)."""

    model_config = ConfigDict(frozen=True)

    old: str
    new: str
    because: str


class RepositoryScan:
    """What the sources read from one repository, each part read once and shared."""

    def __init__(self, repo: GitRepository, ref: str | None = None) -> None:
        self.repo = repo
        self._ref = ref
        self._memo: dict[str, object] = {}

    def memo(self, key: str, make: Callable[[], Memo]) -> Memo:
        """What ``make`` returns, made once per scan under ``key`` (a source's own reading,
        shared by its :meth:`~RevisionSource.find` and :meth:`~RevisionSource.renames`)."""
        if key not in self._memo:
            self._memo[key] = make()
        return cast(Memo, self._memo[key])

    @cached_property
    def ref(self) -> str | None:
        """The branch whose history the file and docname sources read: the given one, else
        the default branch, else the first branch."""
        if self._ref is not None:
            return self._ref
        branches = self.repo.branches()
        return self.repo.default_branch() or (branches[0] if branches else None)

    @cached_property
    def tags(self) -> dict[str, TagInfo]:
        """Every tag of the repository."""
        return self.repo.tags()

    @cached_property
    def history(self) -> list[CommitChanges]:
        """The branch's commits, oldest first, with the files each changed."""
        return self.repo.history(self.ref) if self.ref else []


class RevisionSource(Protocol):
    """A place a repository may record its revisions."""

    name: ClassVar[str]
    summary: ClassVar[str]
    """What it reads, as a phrase for a manifest's comment."""

    def find(self, scan: RepositoryScan) -> list[FoundRevision]:
        """Every revision this source finds, of any draft."""
        ...

    def renames(self, scan: RepositoryScan) -> list[Rename]:
        """Drafts this source shows renamed to another."""
        ...


_SOURCES: dict[str, RevisionSource] = {}


def register(source: RevisionSource) -> RevisionSource:
    """Register ``source`` under its name (a later one of the same name replaces it)."""
    _SOURCES[source.name] = source
    return source


DEFAULT_ORDER = ("tags", "files", "docnames")
"""The order the built-in sources of numbered revisions are preferred in: a tag is what was
submitted, a file named after a revision nearly so, a docname a guess at which commit it was.
``latest`` (a draft's one unnumbered revision) comes after them and is never mixed with them:
a manifest asks for it alone."""


def revision_source_names() -> tuple[str, ...]:
    """The registered revision sources' names, in the order they are tried by default (the
    built-in ones first, in :data:`DEFAULT_ORDER`)."""
    _load()
    rank = {name: index for index, name in enumerate(DEFAULT_ORDER)}
    return tuple(sorted(_SOURCES, key=lambda n: (rank.get(n, len(rank)), n)))


def revision_source(name: str) -> RevisionSource | None:
    """The registered revision source called ``name``, if there is one."""
    _load()
    return _SOURCES.get(name)


def _load() -> None:
    # Imported for their registration; here so that importing this module loads no source.
    from ratified_rdf.sources.revisions import docnames, files, latest, tags  # noqa: F401


def find_revisions(
    scan: RepositoryScan, names: Iterable[str] | None = None
) -> dict[str, list[FoundRevision]]:
    """Every revision each named source (every registered one by default) finds, by
    source name."""
    chosen = revision_source_names() if names is None else tuple(names)
    found: dict[str, list[FoundRevision]] = {}
    for name in chosen:
        source = revision_source(name)
        if source is None:
            raise KeyError(name)
        found[name] = source.find(scan)
    return found


def find_renames(scan: RepositoryScan, names: Iterable[str] | None = None) -> list[Rename]:
    """Every rename the named sources (every registered one by default) show."""
    chosen = revision_source_names() if names is None else tuple(names)
    renames: list[Rename] = []
    for name in chosen:
        source = revision_source(name)
        if source is not None:
            renames += [r for r in source.renames(scan) if r not in renames]
    return renames


def pick(
    draft: str, order: Sequence[str], found: dict[str, list[FoundRevision]]
) -> dict[str, FoundRevision]:
    """Revision number → the revision of ``draft`` the first source in ``order`` found."""
    chosen: dict[str, FoundRevision] = {}
    for name in order:
        for revision in found.get(name, []):
            if revision.draft == draft:
                chosen.setdefault(revision.number, revision)
    return dict(sorted(chosen.items()))


def is_document(path: str) -> bool:
    """Whether ``path`` may hold a draft's text (by its suffix; not a README or licence)."""
    pure = PurePosixPath(path)
    return (
        pure.suffix.lower() in DOCUMENT_SUFFIXES
        and not pure.name.lower().startswith(_NOT_DOCUMENTS)
        and not path.startswith(".")
    )


def short(commit: str) -> str:
    """A commit id as a provenance phrase shows it."""
    return commit[:12]
