"""What a discussion source is, and the registry the build finds them in.

A *source* is one kind of record the discussion around the documents is kept in: GitHub's
issues and pull requests, a mailing list's archive, meeting minutes. It is named as the
manifest names it, and that one name is its graph's name, its key in ``[clearance]`` and
``[licence]``, its ``[discussion.<name>]`` table if it has one, and the prefix of its post
keys (``github/12/0``, ``mail/<message id>``). A source, given a :class:`ReadContext`:

- reads its records (:meth:`Source.read`), from the repository or from files beside the
  manifest;
- names the people it saw (:meth:`Source.people`), for identity resolution;
- resolves its posts' citations through the one resolver every source shares
  (:meth:`Source.citations`), so "Section 4.2" means the same section whoever wrote it;
- says which records it skipped and why (:meth:`Source.problems`);
- maps its records into batches for its graph (:meth:`Source.batches`), each through the
  SHACL gate like every batch;
- is written at its clearance and under its licence, both from the manifest
  (:meth:`Source.clearance`, :meth:`Source.licence`).

The documents (``spec``, ``records``) and their history (``git``) are not sources of this
kind: every brain has them, every other source is read against them (a post is resolved
through a revision, a review comment placed by git), so reading them is the build's core
(:mod:`ratified_rdf.records.spec`, :mod:`ratified_rdf.sources.git_history`). ``people`` and
``expertise`` are derived from the others (:data:`~ratified_rdf.records.manifest.DERIVED_FROM`).

A source registers itself with :func:`register_source`; the built-in ones are the modules
:data:`BUILT_IN` names, loaded the first time the registry is asked. docs/extending.md shows
a new source end to end.
"""

from __future__ import annotations

import importlib
import re
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from ratified_rdf._errors import InputError
from ratified_rdf.graph.discussion_mapping import MapContext
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.records.discussion import CitationRecord, CitationResolver, Landing
from ratified_rdf.records.identity import Identity, LinkEvidence
from ratified_rdf.records.manifest import CORE_SOURCES, Manifest
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.trust import Clearance

if TYPE_CHECKING:
    from ratified_rdf.sources.online.datatracker import DraftFacts  # httpx: a build's alone

__all__ = [
    "BUILT_IN",
    "MapContext",
    "PeopleEvidence",
    "ReadContext",
    "RegistryError",
    "Source",
    "post_sources",
    "register_source",
    "registered_sources",
    "source_named",
    "source_names",
    "unregister_source",
]

R = TypeVar("R")
S = TypeVar("S", bound="type[Source[Any]]")

BUILT_IN: tuple[str, ...] = (
    "ratified_rdf.sources.github_source",
    "ratified_rdf.sources.mail_source",
)
"""The modules of the sources every build knows, in the order their batches are written."""

_NAME = re.compile(r"^[a-z][a-z0-9]{0,30}$")


class RegistryError(InputError):
    """A source cannot be registered as asked: its name is taken or cannot be a source's."""


@dataclass(frozen=True)
class ReadContext:
    """What a source reads with: the manifest and the records folder it came from, the
    documents already read, and git (the only door to the repository: records run no git).
    One value for every source, so a new one needs no new parameter anywhere."""

    manifest: Manifest
    folder: Path
    """The records folder the manifest is in; relative file names resolve against it."""
    spec: SpecRecords
    """The revisions and RFCs read, with their sections and alignments."""
    repo: GitRepository
    commit_map: Mapping[str, str]
    """The repository's commit ids to GitHub's (empty when they are GitHub's own)."""
    facts: Mapping[str, DraftFacts]
    """Datatracker facts kept beside the manifest, by draft name."""
    landing: Landing
    """Which revision or RFC text a commit's change to a file landed in."""
    document_files: tuple[str, ...]
    """Which files' commits count as changes to the documents (the manifest's patterns)."""

    def path(self, name: str) -> Path:
        """A file the manifest names: as given when absolute, else beside the manifest."""
        given = Path(name)
        return given if given.is_absolute() else self.folder / given

    def entry(self, source: str) -> BaseModel | None:
        """A source's ``[discussion.<name>]`` table, as its :attr:`Source.entry` model read
        it; None when the manifest has none."""
        discussion = self.manifest.discussion
        return discussion.table(source) if discussion is not None else None


@dataclass(frozen=True)
class PeopleEvidence:
    """Who a source saw, for identity resolution: the identities its records carry and the
    links between identities they show (a pull request's login and its commits' address)."""

    identities: Sequence[Identity] = ()
    links: Sequence[LinkEvidence] = ()


class Source(ABC, Generic[R]):
    """A discussion source (see the module docstring); ``R`` is what its :meth:`read`
    returns, which only its own methods look inside.

    Subclass it, set :attr:`name` (and :attr:`entry` when the manifest configures it), write
    :meth:`read`, :meth:`citations` and :meth:`batches`, and decorate the class with
    :func:`register_source`.
    """

    name: ClassVar[str]
    """The manifest's name for it: graph, ``[clearance]`` and ``[licence]`` key, post keys'
    prefix. Lower-case letters and digits."""
    entry: ClassVar[type[BaseModel] | None] = None
    """The model of its ``[discussion.<name>]`` table; None when it takes none (it is then
    read whenever the manifest has a ``[discussion]``)."""
    holds_posts: ClassVar[bool] = True
    """Whether its graph holds posts citing sections (``sioc:Post`` with ``rr:inPost``
    citations): the queries that read every source's posts (``# Reads: posts``) read it."""

    def wanted(self, context: ReadContext) -> bool:
        """Whether this build reads it: always for a source that takes no table, else when
        the manifest has its table."""
        return self.entry is None or context.entry(self.name) is not None

    @abstractmethod
    def read(self, context: ReadContext) -> R:
        """Read its records. A record it cannot use is kept as a problem
        (:meth:`problems`), not raised; a source it cannot read at all raises
        :class:`~ratified_rdf._errors.SourceError` saying what to fix."""

    def people(self, read: R, context: ReadContext) -> PeopleEvidence:
        """The identities and links its records show (none unless it says so)."""
        return PeopleEvidence()

    def citations(self, read: R, resolver: CitationResolver) -> list[CitationRecord]:
        """Every citation in its posts, resolved by ``resolver`` (none unless it holds
        posts). Post keys start with ``<name>/``."""
        return []

    def problems(self, read: R) -> tuple[str, ...]:
        """The records it reported and skipped, as sentences for the build report."""
        return ()

    @abstractmethod
    def batches(self, read: R, context: MapContext) -> Iterator[Batch]:
        """Its records as batches for its graph (``context.graph(self.name)``), cut along
        records so that a rejected batch names a few; the same batches every time it is
        called with the same records (the writer maps a run more than once)."""

    def clearance(self, manifest: Manifest) -> Clearance:
        """The level its graph is written at: the manifest's ``[clearance]`` for its name."""
        return manifest.clearance_of(self.name)

    def licence(self, manifest: Manifest) -> str | None:
        """The licence its content is under: the manifest's ``[licence]`` for its name."""
        return manifest.licence.get(self.name)


_registry: dict[str, Source[Any]] = {}
_built_in_loaded = False


def _load_built_ins() -> None:
    """Import the built-in sources' modules once; each registers its source."""
    global _built_in_loaded
    if _built_in_loaded:
        return
    _built_in_loaded = True
    for module in BUILT_IN:
        importlib.import_module(module)


def register_source(cls: S) -> S:
    """Register a :class:`Source` subclass under its :attr:`~Source.name` (a class
    decorator). Raises :class:`RegistryError` when the name is not a source's name (lower-case
    letters and digits) or is taken by a core source or a registered one."""
    _load_built_ins()
    name = getattr(cls, "name", "")
    if not _NAME.match(name):
        raise RegistryError(
            f"{cls.__name__}.name is {name!r}: a source's name is lower-case letters and "
            "digits, starting with a letter (it names a graph and a manifest key)."
        )
    if name in CORE_SOURCES or name in _registry:
        raise RegistryError(
            f"A source named {name!r} is already registered; give {cls.__name__} a name of "
            f"its own (taken: {', '.join(source_names())})."
        )
    _registry[name] = cls()
    return cls


def unregister_source(name: str) -> None:
    """Forget a registered source (a test's, say). A built-in source cannot be forgotten."""
    source = _registry.get(name)
    if source is None:
        return
    if type(source).__module__ in BUILT_IN:
        raise RegistryError(f"{name} is a built-in source; it cannot be unregistered.")
    del _registry[name]


def registered_sources() -> tuple[Source[Any], ...]:
    """Every registered source: the built-in ones first, then the others as registered."""
    _load_built_ins()
    # In BUILT_IN's order whichever module was imported first, then as registered (stable).
    return tuple(sorted(_registry.values(), key=_built_in_rank))


def _built_in_rank(source: Source[Any]) -> int:
    module = type(source).__module__
    return BUILT_IN.index(module) if module in BUILT_IN else len(BUILT_IN)


def source_named(name: str) -> Source[Any] | None:
    """The registered source called ``name``, if any."""
    _load_built_ins()
    return _registry.get(name)


def source_names() -> tuple[str, ...]:
    """Every name a manifest may give a source: the core ones, then the registered ones."""
    return (*CORE_SOURCES, *(source.name for source in registered_sources()))


def post_sources() -> frozenset[str]:
    """The registered sources whose graphs hold posts (what ``# Reads: posts`` reads)."""
    return frozenset(source.name for source in registered_sources() if source.holds_posts)
