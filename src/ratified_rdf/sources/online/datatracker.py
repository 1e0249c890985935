"""Public facts about a draft from the IETF Datatracker's JSON API, and the records they go in.

The Datatracker publishes its database read-only through Tastypie at
``https://datatracker.ietf.org/api/v1/``: one endpoint per Django model, list answers shaped
``{"meta": {"limit", "offset", "next", "previous", "total_count"}, "objects": [...]}``, and
foreign keys given as resource paths (``/api/v1/group/group/2161/``). For one draft this module
asks for:

* the document, ``/api/v1/doc/document/<name>/`` (its ``title`` and ``group``);
* its revisions, ``/api/v1/doc/newrevisiondocevent/?doc__name=<name>`` (``rev`` and ``time``);
* the RFC it became and the drafts it replaces, ``/api/v1/doc/relateddocument/?source__name=
  <name>&relationship=became_rfc`` (and ``=replaces``); the ``target`` is a document path,
  ``/api/v1/doc/document/rfc9000/``, or a ``/api/v1/doc/docalias/<name>/`` path on older data;
* its group, ``/api/v1/group/group/<id>/`` (``acronym``, ``type``, ``parent``);
* the group's chairs, ``/api/v1/group/role/?group=<id>&name=chair``, each role naming a person
  at ``/api/v1/person/person/<id>/`` (``name``, ``plain``, ``ascii``);
* the area directors: the group's own ``ad`` role (what the Datatracker's ``Group.ad_role()``
  reads), or else the ``ad`` roles of its parent area.

Field names and filters follow the Datatracker's ``ietf/doc/resources.py`` and
``ietf/group/resources.py``. Uncertainties, so they are easy to revisit:

* Documents have had an integer primary key since 2019, so ``?doc=<name>``/``?source=<name>``
  filter by a key that is no longer the name; ``doc__name``/``source__name`` (allowed:
  ``ALL_WITH_RELATIONS``) work whatever the key is, and other clients of the API use them.
* ``time`` values: current data carries an offset; older dumps had naive times. A naive time is
  read as UTC.
* A draft's own ``rfc_number`` stays null after publication; the ``became_rfc`` relation is the
  only place the number lives, so it is read from the target's name (``rfc9000``).

The answers are stored as a JSON record, ``records/<brain>/datatracker/<draft>.json``, so a build
reads public facts from the repository and never needs the network to rebuild.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urljoin, urlsplit

from pydantic import AwareDatetime, BaseModel, ConfigDict, ValidationError, field_validator

from ratified_rdf.records.manifest import ManifestError
from ratified_rdf.sources.git_repo import SourceError
from ratified_rdf.sources.online.http import PoliteClient, full_url

DATATRACKER_URL = "https://datatracker.ietf.org"
RECORD_KIND = "datatracker-draft-facts"
RECORD_VERSION = 1
RECORD_FOLDER = "datatracker"

_DRAFT_NAME = re.compile(r"^draft-[a-z0-9]+(-[a-z0-9]+)+$")
_RFC_NAME = re.compile(r"^rfc(\d+)$")
_MAX_PAGES = 200  # 200 pages of 100 objects: far past any real draft, short of a runaway loop
# Group types that are not a real group: individual submissions sit in the "none" group.
_NO_GROUP_TYPES = frozenset({"individ"})
_NO_GROUP_ACRONYMS = frozenset({"none"})


class DatatrackerError(SourceError):
    """The Datatracker answered, but not with what this module understands."""


class FactsRecordError(ManifestError):
    """A Datatracker facts record is missing or malformed.

    A :class:`ManifestError` because it is part of a brain's records, and the command line
    already reports those as sentences.
    """


class Revision(NamedTuple):
    """One revision of a draft and when the Datatracker recorded its posting."""

    rev: str
    time: AwareDatetime


class DraftFacts(BaseModel):
    """What the Datatracker says about a draft: revisions, outcome, group and its people."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    title: str
    revisions: tuple[Revision, ...]
    became_rfc: int | None = None
    replaces: tuple[str, ...] = ()
    group: str | None = None
    chairs: tuple[str, ...] = ()
    area_directors: tuple[str, ...] = ()
    fetched_from: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _draft_name(cls, value: str) -> str:
        if not _DRAFT_NAME.match(value):
            raise ValueError(f"{value!r} is not an Internet-Draft name (draft-<words>)")
        return value


class DatatrackerClient:
    """Reads a draft's facts from the Datatracker through a :class:`PoliteClient`."""

    def __init__(
        self, client: PoliteClient, *, base_url: str = DATATRACKER_URL, page_size: int = 100
    ) -> None:
        """``base_url`` is the site root; ``page_size`` the ``limit`` asked of list endpoints."""
        self.client = client
        self.base_url = base_url.rstrip("/") + "/"
        self.page_size = page_size

    def draft_facts(self, name: str) -> DraftFacts:
        """Everything this module knows how to ask about draft ``name`` (no revision suffix)."""
        if not _DRAFT_NAME.match(name):
            raise DatatrackerError(
                f"{name!r} is not an Internet-Draft name. Give the name without its revision "
                "number, such as draft-ietf-tls-tls13."
            )
        trail: list[str] = []
        document = self._json(f"/api/v1/doc/document/{name}/", trail, draft=name)
        title = document.get("title")
        if not isinstance(title, str):
            raise DatatrackerError(
                f"The Datatracker's answer for {name} has no title; its API may have changed."
            )
        revisions = self._revisions(name, trail)
        became = self._related(name, "became_rfc", trail)
        rfc_numbers = sorted({_rfc_number(target) for target in became})
        replaces = tuple(sorted(set(self._related(name, "replaces", trail))))

        group = chairs = area_directors = None
        group_uri = document.get("group")
        if isinstance(group_uri, str) and group_uri:
            group, chairs, area_directors = self._group_people(group_uri, trail)

        return DraftFacts(
            name=name,
            title=title,
            revisions=revisions,
            became_rfc=rfc_numbers[0] if rfc_numbers else None,
            replaces=replaces,
            group=group,
            chairs=chairs or (),
            area_directors=area_directors or (),
            fetched_from=tuple(dict.fromkeys(trail)),
        )

    def _revisions(self, name: str, trail: list[str]) -> tuple[Revision, ...]:
        earliest: dict[str, datetime] = {}
        for event in self._objects("/api/v1/doc/newrevisiondocevent/", {"doc__name": name}, trail):
            rev, when = event.get("rev"), event.get("time")
            if not isinstance(rev, str) or not isinstance(when, str):
                raise DatatrackerError(
                    f"A new-revision event for {name} lacks its rev or time; "
                    "the Datatracker's API may have changed."
                )
            moment = _parse_time(when)
            # A revision posted twice (a resubmission) keeps its first date: that is when the
            # text first became public.
            if rev not in earliest or moment < earliest[rev]:
                earliest[rev] = moment
        ordered = sorted(earliest.items(), key=lambda item: (item[1], item[0]))
        return tuple(Revision(rev, moment) for rev, moment in ordered)

    def _related(self, name: str, relationship: str, trail: list[str]) -> list[str]:
        """Names of the documents ``name`` has ``relationship`` to."""
        params = {"source__name": name, "relationship": relationship}
        targets = []
        for relation in self._objects("/api/v1/doc/relateddocument/", params, trail):
            target = relation.get("target")
            if not isinstance(target, str):
                raise DatatrackerError(
                    f"A {relationship} relation of {name} has no target; "
                    "the Datatracker's API may have changed."
                )
            targets.append(_last_segment(target))
        return targets

    def _group_people(
        self, group_uri: str, trail: list[str]
    ) -> tuple[str | None, tuple[str, ...], tuple[str, ...]]:
        group = self._json(group_uri, trail)
        acronym = group.get("acronym")
        group_type = _last_segment(group.get("type") or "")
        if (
            not isinstance(acronym, str)
            or acronym in _NO_GROUP_ACRONYMS
            or group_type in _NO_GROUP_TYPES
        ):
            return None, (), ()
        group_id = str(group.get("id") or _last_segment(group_uri))
        chairs = self._people_in_role(group_id, "chair", trail)
        directors = self._people_in_role(group_id, "ad", trail)
        parent = group.get("parent")
        if not directors and isinstance(parent, str) and parent:
            directors = self._people_in_role(_last_segment(parent), "ad", trail)
        return acronym, chairs, directors

    def _people_in_role(self, group_id: str, role: str, trail: list[str]) -> tuple[str, ...]:
        person_uris = []
        for entry in self._objects("/api/v1/group/role/", {"group": group_id, "name": role}, trail):
            person = entry.get("person")
            if isinstance(person, str) and person not in person_uris:
                person_uris.append(person)
        urls = [urljoin(self.base_url, uri) for uri in person_uris]
        trail.extend(urls)
        names = []
        for fetched in self.client.get_many(urls):
            try:
                person = _as_object(fetched.parse_json(), fetched.url)
            except (json.JSONDecodeError, UnicodeDecodeError):
                self.client.forget(fetched.url)
                raise DatatrackerError(
                    f"{fetched.url} did not answer with JSON; the Datatracker may be down for "
                    "maintenance. Try again later."
                ) from None
            # "name" is the person's full name as they chose to write it; "plain" and "ascii"
            # are fallbacks (a plain-text override, a transliteration).
            display = person.get("name") or person.get("plain") or person.get("ascii")
            if not isinstance(display, str) or not display:
                raise DatatrackerError(
                    f"The person at {fetched.url} has no name; the Datatracker's API may have "
                    "changed."
                )
            names.append(display)
        return tuple(sorted(set(names)))

    def _objects(
        self, path: str, params: dict[str, str], trail: list[str]
    ) -> Iterator[dict[str, Any]]:
        """Every object of a list endpoint, following Tastypie's ``meta.next`` page links."""
        url = urljoin(self.base_url, path)
        query: dict[str, str | int] | None = {**params, "limit": self.page_size}
        seen: set[str] = set()
        while True:
            page = self._json(url, trail, params=query)
            meta, objects = page.get("meta"), page.get("objects")
            if not isinstance(meta, dict) or not isinstance(objects, list):
                raise DatatrackerError(
                    f"{full_url(url, query)} is not a Tastypie list (no meta and objects); "
                    "the Datatracker's API may have changed."
                )
            for item in objects:
                yield _as_object(item, url)
            following = meta.get("next")
            if not following:
                return
            # "next" is a path with the original filters and a new offset; it is followed as is.
            url, query = urljoin(self.base_url, following), None
            if url in seen or len(seen) >= _MAX_PAGES:
                raise DatatrackerError(
                    f"The Datatracker's pages for {path} do not end (stopped at {url}); "
                    "try again later."
                )
            seen.add(url)

    def _json(
        self,
        path: str,
        trail: list[str],
        *,
        params: dict[str, str | int] | None = None,
        draft: str | None = None,
    ) -> dict[str, Any]:
        url = urljoin(self.base_url, path)
        trail.append(full_url(url, params))
        advice = (
            f"Check the draft name: the Datatracker knows no document called {draft}."
            if draft
            else "The Datatracker may have removed or renamed it."
        )
        data = self.client.get_json(url, params=params, not_found_advice=advice)
        return _as_object(data, full_url(url, params))


def fetch_draft_facts(
    name: str, client: PoliteClient, *, base_url: str = DATATRACKER_URL
) -> DraftFacts:
    """Shorthand for ``DatatrackerClient(client, base_url=base_url).draft_facts(name)``."""
    return DatatrackerClient(client, base_url=base_url).draft_facts(name)


def facts_record_path(folder: str | Path, draft: str) -> Path:
    """Where the facts record for ``draft`` lives in a brain's records ``folder``."""
    return Path(folder) / RECORD_FOLDER / f"{draft}.json"


def write_facts_record(facts: DraftFacts, folder: str | Path) -> Path:
    """Write ``facts`` to ``<folder>/datatracker/<draft>.json`` and return that path.

    ``folder`` is a brain's records folder (``records/<brain>``). The file is JSON with two
    header keys and the facts' fields::

        {
          "record": "datatracker-draft-facts",
          "version": 1,
          "name": "draft-ietf-tls-tls13",
          "title": "The Transport Layer Security (TLS) Protocol Version 1.3",
          "revisions": [["00", "2014-04-17T23:49:20+00:00"], ...],
          "became_rfc": 8446,
          "replaces": [],
          "group": "tls",
          "chairs": ["…"],
          "area_directors": ["…"],
          "fetched_from": ["https://datatracker.ietf.org/api/v1/doc/document/…/", ...]
        }

    These are public facts, written with sorted lists and stable formatting so re-fetching the
    same facts leaves the file unchanged and a diff shows only what the Datatracker changed.
    """
    path = facts_record_path(folder, facts.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = {"record": RECORD_KIND, "version": RECORD_VERSION, **facts.model_dump(mode="json")}
    path.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def read_facts_record(path: str | Path) -> DraftFacts:
    """Read a record written by :func:`write_facts_record`."""
    path = Path(path)
    if not path.is_file():
        raise FactsRecordError(
            f"There is no Datatracker record at {path}. Fetch the draft's facts online and "
            "write them with write_facts_record, then commit the file."
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise FactsRecordError(f"{path} is not valid JSON: {error}.") from None
    if not isinstance(data, dict) or data.get("record") != RECORD_KIND:
        raise FactsRecordError(
            f'{path} is not a Datatracker facts record (it lacks "record": "{RECORD_KIND}").'
        )
    if data.get("version") != RECORD_VERSION:
        raise FactsRecordError(
            f"{path} is a version {data.get('version')!r} record; this version of ratified-rdf "
            f"reads version {RECORD_VERSION}. Fetch the facts again to rewrite it."
        )
    fields = {k: v for k, v in data.items() if k not in ("record", "version")}
    try:
        return DraftFacts.model_validate(fields)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'record'}: {e['msg']}" for e in error.errors()
        )
        raise FactsRecordError(f"{path} does not describe a draft correctly: {problems}.") from None


def _as_object(data: Any, url: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise DatatrackerError(
            f"{url} did not answer with a JSON object; the Datatracker's API may have changed."
        )
    return data


def _last_segment(uri: str) -> str:
    """``/api/v1/doc/document/rfc9000/`` → ``rfc9000``."""
    return urlsplit(uri).path.rstrip("/").rsplit("/", 1)[-1]


def _rfc_number(name: str) -> int:
    match = _RFC_NAME.match(name)
    if not match:
        raise DatatrackerError(
            f"The Datatracker says the draft became {name!r}, which is not an RFC name."
        )
    return int(match.group(1))


def _parse_time(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise DatatrackerError(
            f"The Datatracker gave the time {value!r}, which is not an ISO 8601 time."
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
