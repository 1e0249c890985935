"""The hand-written manifest of public facts a brain is rebuilt from (``records/<brain>/``).

One TOML file per working-group repository says which drafts it holds, which revisions to
expect, which RFC each draft became and where the RFC's own text lives. Everything else is read
from the repository itself.
"""

from __future__ import annotations

import re
import tomllib
from functools import cached_property
from pathlib import Path
from typing import Annotated, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ratified_rdf._errors import InputError
from ratified_rdf.records.text import MAX_TITLE_CHARS, line_problem
from ratified_rdf.trust import Clearance, TenantId

MANIFEST_NAME = "manifest.toml"
Record = TypeVar("Record", bound=BaseModel)

_DRAFT_NAME = re.compile(r"^draft-[a-z0-9]+(-[a-z0-9]+)+$")
_RANGE = re.compile(r"^(\d{2})(?:-(\d{2}))?$")
UNNUMBERED = "latest"
"""The one revision of a draft whose repository numbers none (``revisions = "latest"``): the
document as last committed, named as the repository names it (``docname: draft-x-latest``)."""


class ManifestError(InputError):
    """The manifest is missing or says something that cannot be true."""


def _title(value: str) -> str:
    """``value`` if it is a title the graph can hold (see :mod:`ratified_rdf.records.text`),
    else a ValueError saying why, refused here so the build never starts."""
    problem = line_problem(value, MAX_TITLE_CHARS)
    if problem is not None:
        raise ValueError(f"the title {problem}")
    return value


class BrainInfo(BaseModel):
    """Who this brain is about and where its repository lives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,62}$")]
    title: str
    repository: str
    tenant: TenantId = TenantId.default()
    """The tenant whose graphs the brain is written to; only readers of that tenant see it."""
    working_group: str | None = None
    commit_map: str | None = None

    @field_validator("title")
    @classmethod
    def _plain_title(cls, value: str) -> str:
        return _title(value)


SourceName = str
"""A source's name, as the manifest's ``[clearance]`` and ``[licence]`` name it: one of
:data:`CORE_SOURCES` or a registered source's (``github``, ``mail``, …; see
:func:`ratified_rdf.sources.base.source_names`). A build writes one named graph per source."""

CORE_SOURCES: tuple[SourceName, ...] = ("spec", "records", "git", "people", "expertise")
"""The sources every build has: the documents and their records, their history, and what is
derived from the others. The discussion sources (``github``, ``mail``) are registered."""

DERIVED_FROM: dict[SourceName, tuple[SourceName, ...]] = {
    "people": ("spec", "records", "git", "github"),
    "expertise": ("git", "github", "mail", "people"),
}
"""Graphs computed from others: each is at least as sensitive as everything it was made from.
(Expertise is computed once per level instead: see :meth:`Manifest.expertise_levels`.)"""


class DraftEntry(BaseModel):
    """A draft series: its revisions are found where :attr:`revisions_from` says (by
    default ``<name>-NN`` tags in the repository)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    file: str
    """The draft's document (a path in the repository) at each of its tags, unless
    :attr:`moved` says it lives elsewhere from some revision on."""
    revisions: str
    """The revisions that must exist, ``"00-28"`` or ``"00"``; ``"latest"`` when the repository
    numbers none (read with ``revisions_from = ["latest"]``)."""
    became: str | None = None
    replaced_by: str | None = None
    moved: dict[str, str] = {}
    """Where the document moved to between revisions: ``{"05" = "archive/x.md"}`` says that
    from revision 05 on (until a later entry) the document is ``archive/x.md``."""
    revisions_from: tuple[str, ...] = ("tags",)
    """Where the revisions are found, the first source holding a number giving it: ``tags``
    (``<name>-NN``), ``files`` (one file named ``<name>-NN.xml``/``.txt``/``.md`` per
    revision), ``docnames`` (the last commit whose docname names ``<name>-NN``); see
    :mod:`ratified_rdf.sources.revisions`. A revision found in a file is read from that file,
    not from :attr:`file`."""
    missing: tuple[str, ...] = ()
    """Revisions in the range that the repository does not hold (or holds in no form that
    can be read): the build reads the others, never these, and names these as missing
    instead of refusing."""

    @field_validator("revisions_from")
    @classmethod
    def _revision_sources(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        # Imported here: the sources read repositories, and this module is read first.
        from ratified_rdf.sources.revisions import revision_source_names

        known = revision_source_names()
        if not value:
            raise ValueError(f"revisions_from is empty; name one or more of {', '.join(known)}")
        for name in value:
            if name not in known:
                raise ValueError(
                    f"revisions_from names {name!r}, which is no revision source; the sources "
                    f"are {', '.join(known)}"
                )
        return value

    @field_validator("missing")
    @classmethod
    def _missing(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for number in value:
            if not re.fullmatch(r"\d{2}", number):
                raise ValueError(
                    f"missing names revision {number!r}; write each revision as two digits, "
                    'as in missing = ["03", "04"]'
                )
        return tuple(sorted(set(value)))

    @field_validator("name")
    @classmethod
    def _draft_name(cls, value: str) -> str:
        if not _DRAFT_NAME.match(value):
            raise ValueError(f"{value!r} is not an Internet-Draft name (draft-<words>)")
        return value

    @field_validator("file")
    @classmethod
    def _file(cls, value: str) -> str:
        return _repository_path(value, "file")

    @field_validator("moved")
    @classmethod
    def _moved(cls, value: dict[str, str]) -> dict[str, str]:
        for revision, path in value.items():
            if not re.fullmatch(r"\d{2}", revision):
                raise ValueError(
                    f"moved names revision {revision!r}; write each revision as two digits, "
                    'as in moved = { "05" = "archive/draft-x.md" }'
                )
            _repository_path(path, f"moved.{revision}")
        return dict(sorted(value.items()))

    @model_validator(mode="after")
    def _moves_within_revisions(self) -> DraftEntry:
        if self.unnumbered and (self.missing or self.moved):
            raise ValueError(
                f'revisions = "{UNNUMBERED}" is the one revision of a draft the repository '
                "never numbered: it has no missing revision and no move; remove 'missing' and "
                "'moved', or give the numbered range instead"
            )
        if self.unnumbered != (self.revisions_from == (UNNUMBERED,)):
            raise ValueError(
                f'revisions = "{UNNUMBERED}" and revisions_from = ["{UNNUMBERED}"] go together: '
                "a draft whose repository numbers no revision is read as its document was last "
                "committed, and one with numbered revisions from where they are numbered"
            )
        outside = [n for n in self.missing if n not in self.expected_revisions()]
        if outside:
            raise ValueError(
                f"missing names revision(s) {', '.join(outside)}, outside the revisions "
                f"{self.revisions}; name only revisions within the range"
            )
        first = self.expected_revisions()[0]
        for revision, path in self.moved.items():
            if revision <= first:
                raise ValueError(
                    f"moved says the document moved at revision {revision}, but the revisions "
                    f"start at {first}: put that path in 'file' instead"
                )
            if path == self.file_at(f"{int(revision) - 1:02d}"):
                raise ValueError(
                    f"moved says the document moved to {path} at revision {revision}, where it "
                    "already was; remove that entry"
                )
        return self

    def file_at(self, revision: str) -> str:
        """The document's path at revision ``revision`` (two digits): ``file``, or the last
        ``moved`` path whose revision is not after it."""
        path = self.file
        for start, moved_to in self.moved.items():
            if start <= revision:
                path = moved_to
        return path

    def document_files(self) -> tuple[str, ...]:
        """Every path the draft's document had at its tags: ``file``, then each move's."""
        paths = [self.file]
        for moved_to in self.moved.values():
            if moved_to not in paths:
                paths.append(moved_to)
        return tuple(paths)

    @field_validator("revisions")
    @classmethod
    def _range(cls, value: str) -> str:
        if value == UNNUMBERED:
            return value
        match = _RANGE.match(value)
        if not match or (match.group(2) and int(match.group(2)) < int(match.group(1))):
            raise ValueError(
                f"revisions {value!r} must look like '00-28' or '00', or be '{UNNUMBERED}' for a "
                "draft whose repository numbers no revision"
            )
        return value

    def expected_revisions(self) -> list[str]:
        """The two-digit revision numbers this entry's range names, in order (``["latest"]``
        for a draft whose repository numbers no revision)."""
        if self.unnumbered:
            return [UNNUMBERED]
        match = _RANGE.match(self.revisions)
        assert match is not None  # checked by the validator
        first = int(match.group(1))
        last = int(match.group(2) or match.group(1))
        return [f"{n:02d}" for n in range(first, last + 1)]

    @property
    def unnumbered(self) -> bool:
        """Whether the repository numbers none of the draft's revisions (``revisions =
        "latest"``): its one revision is the document as last committed, a gap the build
        names rather than a number it guesses."""
        return self.revisions == UNNUMBERED

    def held_revisions(self) -> list[str]:
        """The revisions of the range the repository holds: all but :attr:`missing`."""
        return [n for n in self.expected_revisions() if n not in self.missing]


def _repository_path(value: str, field: str) -> str:
    """``value`` if it is a relative path inside a repository, else a ValueError naming
    ``field``."""
    parts = value.split("/")
    if not value.strip() or value.startswith("/") or "\\" in value or ".." in parts or "" in parts:
        raise ValueError(
            f"{field} {value!r} is not a file path inside the repository; write it relative "
            "to the repository's top folder with '/' between folders, as in "
            "'archive/draft-x.md'"
        )
    return value


class RfcEntry(BaseModel):
    """A published RFC and, when the repository holds it, where its text lives.

    Without ``ref`` and ``file`` the RFC is still a fact (its number, title, publication and
    the draft that became it); a build then looks for its text in the repository, then in
    ``text`` (a copy kept in the records folder, as ``ratified fetch rfc`` keeps it), and
    where none is held the sections of the last revision of the draft that became it stand
    for its own (see :func:`ratified_rdf.records.rfc_texts.locate_rfc_text`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    number: int
    title: str
    published: Annotated[str, Field(pattern=r"^\d{4}-\d{2}$")]
    ref: str | None = None
    """The branch, tag or commit whose tree holds the RFC's text (with ``file``)."""
    file: str | None = None
    """The RFC's text at ``ref`` (with ``ref``)."""
    text: str | None = None
    """The RFC's text kept in the records folder, relative to it (``texts/rfc9147.xml``, where
    ``ratified fetch rfc`` keeps it): read when the repository does not hold the text."""
    obsoletes: tuple[int, ...] = ()

    @field_validator("title")
    @classmethod
    def _plain_title(cls, value: str) -> str:
        return _title(value)

    @field_validator("file")
    @classmethod
    def _file(cls, value: str | None) -> str | None:
        return None if value is None else _repository_path(value, "file")

    @field_validator("text")
    @classmethod
    def _text(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = value.split("/")
        if value.startswith("/") or "\\" in value or ".." in parts or "" in parts:
            raise ValueError(
                f"text {value!r} is not a file inside the records folder; write it relative to "
                "the folder of the manifest, as in 'texts/rfc9147.xml'"
            )
        return value

    @model_validator(mode="after")
    def _text_named_whole(self) -> RfcEntry:
        if (self.ref is None) != (self.file is None):
            given, missing = ("ref", "file") if self.file is None else ("file", "ref")
            raise ValueError(
                f"rfc{self.number} names its text's {given} but not its {missing}: give both "
                "to say where the RFC's text is, or neither when the repository does not hold it"
            )
        return self

    @property
    def name(self) -> str:
        """The RFC's document name, e.g. ``rfc8446``."""
        return f"rfc{self.number}"


class MailEntry(BaseModel):
    """A mailing list's archive, as a file beside the manifest (or an absolute path)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    list: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
    file: str
    format: Literal["mbox", "mailman"] = "mbox"


class DiscussionEntry(BaseModel):
    """Where the discussions around the documents are recorded.

    Besides its own fields, it holds a ``[discussion.<name>]`` table for each registered
    source that takes one (:attr:`ratified_rdf.sources.base.Source.entry`), read into that
    source's model; any other name is refused, as a misspelt field is.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    github_archive: Annotated[str, Field(pattern=r"^[^:]+:.+$")] | None = None
    """``ref:path`` of i-d-template's archive.json in the repository (``gh-pages:archive.json``)."""
    document_files: tuple[str, ...] = ("*.md",)
    """Which files' commits count as changes to the documents."""
    people: str = "people.toml"
    """Overrides for identity resolution, beside the manifest (optional file)."""
    mail: tuple[MailEntry, ...] = ()

    @model_validator(mode="after")
    def _source_tables(self) -> DiscussionEntry:
        """Read each extra table with its registered source's model; refuse the rest."""
        # Imported here: the registry loads the sources, and they read manifests.
        from ratified_rdf.sources.base import source_named

        extra = self.__pydantic_extra__ or {}
        for name, table in extra.items():
            source = source_named(name)
            model = source.entry if source is not None else None
            if model is None:
                fields = ", ".join(type(self).model_fields)
                raise ValueError(
                    f"[discussion] has no field {name!r}: its fields are {fields}, and a "
                    "table for a registered source that takes one"
                )
            if not isinstance(table, model):
                extra[name] = model.model_validate(table)
        return self

    def table(self, source: SourceName) -> BaseModel | None:
        """The ``[discussion.<source>]`` table, read with its source's model, if given."""
        return (self.__pydantic_extra__ or {}).get(source)


class Manifest(BaseModel):
    """A whole manifest, checked for internal consistency."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    brain: BrainInfo
    draft: tuple[DraftEntry, ...]
    rfc: tuple[RfcEntry, ...] = ()
    discussion: DiscussionEntry | None = None
    clearance: dict[SourceName, Clearance] = {}
    """The clearance level of each source's graph; a source not named is public."""
    licence: dict[SourceName, Annotated[str, Field(pattern=r"^https?://")]] = {}
    """The licence (a URL) each source's content is under, for the dataset description; a
    source not named gets no licence statement rather than a guessed one."""

    @field_validator("clearance", "licence")
    @classmethod
    def _known_sources(cls, value: dict[SourceName, object]) -> dict[SourceName, object]:
        """Every key names a source: a core one or a registered one."""
        from ratified_rdf.sources.base import source_names

        known = source_names()
        for name in value:
            if name not in known:
                raise ValueError(f"{name!r} is not a source; the sources are {', '.join(known)}")
        return value

    def expertise_levels(self) -> list[tuple[Clearance, frozenset[SourceName]]]:
        """Each level expertise is computed at, lowest first, with the sources it may use:
        a reader gets the scores of the highest level they are cleared for, computed from
        nothing above it, so a restricted list neither hides nor leaks the public ranking."""
        inputs = DERIVED_FROM["expertise"]
        levels = sorted({self.clearance_of(s) for s in inputs}, key=lambda c: c.rank)
        return [
            (level, frozenset(s for s in inputs if self.clearance_of(s) <= level))
            for level in levels
        ]

    def clearance_of(self, source: SourceName) -> Clearance:
        """The level a source's graph is written at: its own, raised to that of every graph
        it was derived from."""
        own = self.clearance.get(source, Clearance.PUBLIC)
        derived = () if source == "expertise" else DERIVED_FROM.get(source, ())
        inputs = (self.clearance_of(s) for s in derived)
        return max((own, *inputs), key=lambda level: level.rank)

    @model_validator(mode="after")
    def _consistent(self) -> Manifest:
        """Reject chains that point at drafts or RFCs the manifest does not describe."""
        drafts = {d.name for d in self.draft}
        rfcs = {r.name for r in self.rfc}
        for entry in self.draft:
            if entry.became and entry.became not in rfcs:
                raise ValueError(f"{entry.name} became {entry.became}, which has no [[rfc]] entry")
            if entry.replaced_by and entry.replaced_by not in drafts:
                raise ValueError(
                    f"{entry.name} is replaced by {entry.replaced_by}, which has no [[draft]] entry"
                )
        for rfc in self.rfc:
            for old in rfc.obsoletes:
                if f"rfc{old}" not in rfcs:
                    raise ValueError(f"rfc{rfc.number} obsoletes rfc{old}, which has no entry")
        self._final_rfcs  # noqa: B018  # computing it raises on a replacement cycle
        return self

    @cached_property
    def _drafts_by_name(self) -> dict[str, DraftEntry]:
        """Each draft's entry by name (the first, should a name repeat). Cached on the frozen
        manifest, so that following a chain of replacements is not a scan per step."""
        index: dict[str, DraftEntry] = {}
        for entry in self.draft:
            index.setdefault(entry.name, entry)
        return index

    @cached_property
    def _final_rfcs(self) -> dict[str, str | None]:
        """Each draft's final RFC (see :meth:`final_rfc`), every chain walked once.

        Walking each draft's chain on its own was cubic in the length of a chain of
        replacements: a walk per draft, a step per draft in it, a scan of the drafts per step.
        Raises ValueError on a cycle, naming the first draft of it reached (in manifest order).
        """
        by_name = self._drafts_by_name
        finals: dict[str, str | None] = {}
        for start in self.draft:
            path: list[str] = []
            on_path: set[str] = set()
            entry = start
            while entry.name not in finals:
                if entry.became is not None or entry.replaced_by is None:
                    finals[entry.name] = entry.became
                    break
                if entry.name in on_path:
                    raise ValueError(f"drafts replace each other in a cycle through {entry.name}")
                path.append(entry.name)
                on_path.add(entry.name)
                entry = by_name[entry.replaced_by]
            for name in path:
                finals[name] = finals[entry.name]
        return finals

    def draft_entry(self, name: str) -> DraftEntry:
        """The entry for draft ``name`` (a KeyError if the manifest has none)."""
        return self._drafts_by_name[name]

    def rfc_entry(self, name: str) -> RfcEntry:
        """The entry for RFC ``name`` (``rfc8446``)."""
        return next(r for r in self.rfc if r.name == name)

    def replacements(self, draft_name: str) -> int:
        """How many times a draft's text moved on to a replacing draft before its RFC."""
        hops, entry = 0, self.draft_entry(draft_name)
        while entry.replaced_by is not None and hops <= len(self.draft):
            hops, entry = hops + 1, self.draft_entry(entry.replaced_by)
        return hops

    def head(self, draft_name: str) -> str:
        """The draft a draft's text moved on to last, following replacements (itself when
        no draft replaced it)."""
        hops, entry = 0, self.draft_entry(draft_name)
        while entry.replaced_by is not None and hops <= len(self.draft):
            hops, entry = hops + 1, self.draft_entry(entry.replaced_by)
        return entry.name

    def final_rfc(self, draft_name: str) -> str | None:
        """The RFC a draft's text ended up in, following replacements."""
        return self._final_rfcs[draft_name]

    def parallel_drafts(self) -> dict[str, list[str]]:
        """RFC name → the drafts (two or more) that say they became it directly: drafts
        that ran side by side into one RFC, or one draft whose renaming was not recorded."""
        by_rfc: dict[str, list[str]] = {}
        for entry in self.draft:
            if entry.became is not None:
                by_rfc.setdefault(entry.became, []).append(entry.name)
        return {rfc: names for rfc, names in by_rfc.items() if len(names) > 1}


def load_manifest(path: str | Path) -> tuple[Manifest, Path]:
    """Load ``path`` (a manifest file or a folder holding ``manifest.toml``).

    Returns the manifest and the folder it came from, against which relative names resolve.
    """
    path = Path(path)
    file = path / MANIFEST_NAME if path.is_dir() else path
    if not file.is_file():
        raise ManifestError(
            f"There is no manifest at {file}. Point 'ratified build' at a records folder "
            f"holding {MANIFEST_NAME}, such as records/tls13."
        )
    try:
        return read_toml_record(file, Manifest, "a brain"), file.parent
    except ManifestError:
        # A manifest init wrote lacks the very fields its FILL IN lines ask for: name those
        # facts, not the fields they leave missing.
        _refuse_unfilled(file)
        raise


PLACEHOLDER_HOST = "example.invalid"
"""The reserved host ``ratified init`` writes as the repository's URL when it read a local
copy with no public remote (RFC 2606: it names no one's repository)."""

_FILL_IN = re.compile(r"#.*\bFILL IN:")


def check_buildable(manifest: Manifest, path: str | Path) -> None:
    """Raise :class:`ManifestError` if the manifest at ``path`` (a file, or a folder holding
    ``manifest.toml``) still has a ``FILL IN``
    line from ``ratified init``, or the repository URL is init's placeholder: a build would
    mint every link from it, or leave out a fact the user was asked for."""
    path = Path(path)
    file = path / MANIFEST_NAME if path.is_dir() else path
    _refuse_unfilled(file)
    host = re.match(r"^[a-z]+://([^/:]+)", manifest.brain.repository)
    # Only init's own host: fictional corpora name hosts under it (git.example.invalid).
    if host and host.group(1).lower() == PLACEHOLDER_HOST:
        raise ManifestError(
            f"{file} gives the repository as {manifest.brain.repository}, the placeholder "
            "'ratified init' writes: every commit's link would point nowhere. Set [brain] "
            "repository to the repository's public https URL (build from a local copy with "
            "--source meanwhile)."
        )


def _refuse_unfilled(file: Path) -> None:
    """Raise :class:`ManifestError` naming each fact ``file``'s FILL IN lines still ask for."""
    # Replaced, not refused: a file that is not UTF-8 is refused by the reader, saying so.
    text = file.read_bytes().decode("utf-8", errors="replace") if file.is_file() else ""
    lines = text.splitlines()
    unfilled = [
        f"line {number}: {_fact(line.split('FILL IN:', 1)[1])}"
        for number, line in enumerate(lines, start=1)
        if _FILL_IN.search(line)
    ]
    if unfilled:
        shown = "; ".join(unfilled[:5]) + (
            f"; and {len(unfilled) - 5} more" if unfilled[5:] else ""
        )
        raise ManifestError(
            f"{file} still has {len(unfilled)} FILL IN line(s) from 'ratified init' ({shown}). "
            "Fill in each fact (or decide it does not apply), delete the FILL IN line, and "
            "build again."
        )


def _fact(note: str) -> str:
    """The fact a FILL IN note asks for, its first phrase: the note is wrapped over several
    comment lines, and only the first carries the marker."""
    return re.split(r" \(|[.;:] ", note.strip(), maxsplit=1)[0].rstrip(",.")


def read_toml_record(
    file: Path,
    model: type[Record],
    describes: str,
    error_type: type[ManifestError] = ManifestError,
) -> Record:
    """Read a TOML record file into ``model``; every problem is an ``error_type`` sentence
    naming the file and the field."""
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as error:
        raise error_type(
            f"{file} is not UTF-8 text (byte {error.object[error.start]:#04x} at offset "
            f"{error.start}); TOML files must be UTF-8, so save it as UTF-8."
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise error_type(f"{file} is not valid TOML: {error}.") from None
    except RecursionError:
        raise error_type(
            f"{file} nests arrays or inline tables too deeply to be read; a record nests a "
            "few levels at most, so fix the file."
        ) from None
    try:
        return model.model_validate(data)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'the file'}: {e['msg']}"
            for e in error.errors()
        )
        message = f"{file} does not describe {describes} correctly: {problems}."
        raise error_type(message) from None
