"""One person per human: resolve git, GitHub and document identities into people.

A human shows up as git author and committer pairs (name, email), as GitHub logins in the issue
and pull-request archive, and as draft authors (name, email). :func:`resolve_people` joins those
identities with union-find, one rule at a time, and records for every join the rule and the
evidence behind it, so a reader can check why two identities were taken to be one person.

The rules are deliberately conservative. Two identities join when they share a normalised email
address; when they carry the same normalised full name of at least two real (non-initial)
words; when an external observation links them (a pull request by a login whose commits were all
authored by one address); or when a login equals an email address's local part that is
distinctive and claimed by nothing else. A shared surname, a shared first name or matching
initials are never enough. A hand-written overrides file (``records/<brain>/people.toml``) adds
the links the rules cannot see and forbids merges that must not happen; a forbidden merge wins
over every rule.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from enum import StrEnum
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ratified_rdf.records.manifest import ManifestError, read_toml_record

PEOPLE_NAME = "people.toml"
"""The overrides file's name in a records folder (``records/tls13/people.toml``)."""

IdentityKind = Literal["git", "github", "document"]
"""Where an identity was seen: a commit signature, a GitHub login or a document's byline."""


class PeopleError(ManifestError):
    """The identities or the overrides cannot be resolved into people as given."""


class MergeRule(StrEnum):
    """Why an identity joined a person."""

    OVERRIDE = "override"
    LINKED_BY_COMMIT = "login-linked-by-commit"
    SAME_EMAIL = "same-email"
    NOREPLY_ADDRESS = "noreply-address-is-login"
    SAME_LOGIN = "same-login"
    SAME_FULL_NAME = "same-full-name"
    LOGIN_IS_LOCAL_PART = "login-equals-email-local-part"


# ---------------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------------

_NOREPLY = re.compile(r"^(?:\d+\+)?(?P<login>[a-z0-9][a-z0-9-]*)@users\.noreply\.github\.com$")
_IP_LITERAL = re.compile(r"^\[?[0-9.:]+\]?$")
# Domains that only name a machine or a documentation example: two people's laptops can both
# say "root@localhost", so such an address proves nothing about who wrote a commit.
_UNROUTABLE_SUFFIXES = (".local", ".localdomain", ".lan", ".home", ".internal", "(none)")
_UNROUTABLE_DOMAINS = frozenset({"localhost", "example.com", "example.org", "example.net"})
# GitHub's own committer for merges and edits made in the web interface: not a person.
NOT_A_PERSON_EMAILS = frozenset({"noreply@github.com"})

# Local parts that many unrelated people use: role mailboxes, catch-all words and common given
# names. A login equal to one of these says nothing about whose address it is.
GENERIC_LOCAL_PARTS = frozenset(
    {
        # role and catch-all mailboxes
        "admin", "administrator", "contact", "dev", "email", "git", "github", "hello", "hi",
        "home", "inbox", "info", "list", "lists", "mail", "me", "name", "noreply", "no-reply",
        "office", "personal", "postmaster", "public", "root", "sales", "security", "social",
        "spam", "support", "team", "test", "user", "web", "webmaster", "work", "www",
        # common given names
        "adam", "alex", "alice", "andrew", "anna", "ben", "bill", "bob", "brian", "carl",
        "chris", "dan", "daniel", "dave", "david", "eric", "jack", "james", "jan", "jeff",
        "jens", "jim", "joe", "john", "jose", "kevin", "kris", "laura", "lisa", "maria",
        "mark", "martin", "matt", "max", "michael", "mike", "nick", "paul", "peter", "richard",
        "rob", "robert", "sam", "sarah", "sean", "stephen", "steve", "thomas", "tim", "tom",
        "hannes",
    }
)  # fmt: skip
_MIN_LOCAL_PART = 3

# Names version-control tools and bots write when no person is at hand.
_PLACEHOLDER_NAMES = frozenset({"your name", "unknown", "github", "root", "user", "no name"})
_NAME_SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv", "phd", "md"})
_PARENTHESISED = re.compile(r"\([^)]*\)")
_APOSTROPHES = re.compile(r"['’`]")
_NOT_WORD = re.compile(r"[^\w\s]|_")
_SLUG_DROP = re.compile(r"[^a-z0-9]+")


def _fold(text: str) -> str:
    """Lower-case without accents: ``Günther`` → ``gunther``, ``Preuß`` → ``preuss``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def noreply_login(address: str | None) -> str | None:
    """The login a GitHub noreply address stands for (``123+ekr@users.noreply…`` → ``ekr``)."""
    if not address:
        return None
    match = _NOREPLY.match(address.strip().lower())
    return match.group("login") if match else None


def normalise_email(address: str | None) -> str | None:
    """An address in the form identities are compared in, or None when it is not an address.

    Lower-cased, with a ``+tag`` dropped from the local part. A GitHub noreply address becomes
    ``<login>@users.noreply.github.com`` whichever of its two forms was used, since both stand
    for the login rather than a mailbox.
    """
    if not address:
        return None
    text = address.strip().lower()
    login = noreply_login(text)
    if login is not None:
        return f"{login}@users.noreply.github.com"
    local, at, domain = text.rpartition("@")
    if not at or not local or not domain:
        return None
    local = local.split("+", 1)[0] or local
    return f"{local}@{domain}"


def is_routable(address: str) -> bool:
    """Whether a normalised address names a real mailbox rather than a machine or an example."""
    domain = address.rpartition("@")[2]
    return (
        "." in domain
        and domain not in _UNROUTABLE_DOMAINS
        and not domain.endswith(_UNROUTABLE_SUFFIXES)
        and not _IP_LITERAL.match(domain)
    )


def normalise_name(name: str | None) -> str:
    """A name in the form identities are compared in (empty when there is none).

    Accents and case are folded, parenthesised nicknames and punctuation dropped, and
    ``Last, First`` turned round: ``"Rescorla, Éric"`` and ``"Eric Rescorla"`` compare equal.
    """
    if not name:
        return ""
    text = _PARENTHESISED.sub(" ", _fold(name))
    if text.count(",") == 1:
        before, after = (part.strip() for part in text.split(","))
        if _NOT_WORD.sub("", after).strip() in _NAME_SUFFIXES:
            text = before
        elif before and after:
            text = f"{after} {before}"
    text = _NOT_WORD.sub(" ", _APOSTROPHES.sub("", text))
    return " ".join(text.split())


def is_full_name(normalised: str) -> bool:
    """Whether a normalised name says enough to identify someone on its own.

    At least two words of two letters or more (so ``e rescorla`` is not a full name) and not a
    placeholder or a bot's name.
    """
    words = normalised.split()
    if normalised in _PLACEHOLDER_NAMES or not words or words[-1] == "bot":
        return False
    return sum(1 for word in words if len(word) >= 2) >= 2


def slug(text: str) -> str:
    """Lower-case ASCII words joined by dashes (empty when nothing ASCII remains)."""
    return _SLUG_DROP.sub("-", _fold(text)).strip("-")


# ---------------------------------------------------------------------------------------------
# Records
# ---------------------------------------------------------------------------------------------


class Identity(BaseModel):
    """One way a human appears in the record: a git signature, a GitHub login or a byline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: IdentityKind
    name: str | None = None
    email: str | None = None
    login: str | None = None

    @model_validator(mode="after")
    def _says_something(self) -> Identity:
        """A login belongs to GitHub identities; the others need a name or an address."""
        if self.kind == "github" and not self.login:
            raise ValueError("a github identity needs a login")
        if self.kind != "github" and self.login:
            raise ValueError(f"a {self.kind} identity has no login; use kind 'github'")
        if self.kind != "github" and not (self.name or self.email):
            raise ValueError(f"a {self.kind} identity needs a name or an email address")
        return self

    @property
    def login_key(self) -> str | None:
        """The GitHub login this identity stands for, lower-cased (from a noreply address too)."""
        if self.login:
            return self.login.lower()
        return noreply_login(self.email)

    @property
    def email_key(self) -> str | None:
        """The normalised address, or None for no address or a GitHub noreply address."""
        if noreply_login(self.email):
            return None
        return normalise_email(self.email)

    @property
    def name_key(self) -> str:
        """The normalised name (empty when there is none)."""
        return normalise_name(self.name)

    @property
    def label(self) -> str:
        """How the identity is quoted in evidence: ``git 'EKR <ekr@rtfm.com>'``, ``github @ekr``."""
        if self.kind == "github":
            return f"github @{self.login}"
        parts = [p for p in (self.name, f"<{self.email}>" if self.email else None) if p]
        return f"{self.kind} '{' '.join(parts)}'"

    def sort_key(self) -> tuple[str, str, str, str]:
        """A total order on identities, so that resolution does not depend on input order."""
        return (self.kind, self.login or "", self.email or "", self.name or "")


class LinkEvidence(BaseModel):
    """An externally observed link between two identities, e.g. a PR author and its commits."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    a: Identity
    b: Identity
    reason: str = Field(min_length=1)
    rule: str = MergeRule.LINKED_BY_COMMIT.value


class Merge(BaseModel):
    """Why an identity joined a person: the rule that fired and the evidence it fired on."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rule: str
    evidence: str


class Person(BaseModel):
    """One human and every identity they were found under."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    """A stable slug, unique in the table (``eric-rescorla``)."""
    name: str
    """The best display name among the identities."""
    identities: tuple[Identity, ...]
    merges: tuple[Merge, ...]
    """One per identity beyond the first: the join that brought it in."""

    @property
    def logins(self) -> tuple[str, ...]:
        """The person's GitHub logins, lower-cased and sorted."""
        return tuple(sorted({i.login_key for i in self.identities if i.login_key}))

    @property
    def emails(self) -> tuple[str, ...]:
        """The person's normalised addresses, sorted."""
        return tuple(sorted({i.email_key for i in self.identities if i.email_key}))


class PeopleTable(BaseModel):
    """Every person found, sorted by key, and the merges the overrides held back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    people: tuple[Person, ...]
    held_apart: tuple[Merge, ...] = ()
    """Merges a rule proposed and a ``[[different]]`` override refused."""
    unmatched_selectors: tuple[str, ...] = ()
    """Override selectors that matched no identity (a typo, or a person absent from the input)."""

    @property
    def identity_count(self) -> int:
        """How many distinct identities the people hold."""
        return sum(len(p.identities) for p in self.people)

    def matching(self, selector: str) -> list[Person]:
        """The people holding an identity ``selector`` (``login:ekr``, ``email:…``, ``name:…``)."""
        parsed = parse_selector(selector)
        return [p for p in self.people if any(_selects(parsed, i) for i in p.identities)]

    def person_of(self, identity: Identity) -> Person:
        """The person holding ``identity``."""
        for person in self.people:
            if identity in person.identities:
                return person
        raise KeyError(f"{identity.label} is not in the table")


# ---------------------------------------------------------------------------------------------
# Overrides
# ---------------------------------------------------------------------------------------------

_SELECTOR_KINDS = ("login", "email", "name")


def parse_selector(selector: str) -> tuple[str, str]:
    """Split ``kind:value`` into the kind and the value normalised for comparison."""
    kind, colon, value = selector.partition(":")
    kind = kind.strip().lower()
    if not colon or kind not in _SELECTOR_KINDS or not value.strip():
        raise ValueError(
            f"{selector!r} is not an identity selector; write 'login:<login>', "
            "'email:<address>' or 'name:<full name>'"
        )
    value = value.strip()
    if kind == "login":
        return kind, value.lower()
    if kind == "email":
        login = noreply_login(value)
        if login:
            return "login", login
        normalised = normalise_email(value)
        if normalised is None:
            raise ValueError(f"{selector!r} does not hold an email address")
        return kind, normalised
    return kind, normalise_name(value)


def _selects(parsed: tuple[str, str], identity: Identity) -> bool:
    kind, value = parsed
    if kind == "login":
        return identity.login_key == value
    if kind == "email":
        return identity.email_key == value
    return bool(value) and identity.name_key == value


class SameGroup(BaseModel):
    """Identities a person has confirmed (or public record shows) to be one human."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    members: tuple[str, ...] = Field(min_length=2)
    reason: str = Field(min_length=1)

    @field_validator("members")
    @classmethod
    def _selectors(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for selector in value:
            parse_selector(selector)
        return value


class DifferentPair(BaseModel):
    """Two identities that belong to different humans whatever the rules say."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    pair: tuple[str, str]
    reason: str = Field(min_length=1)

    @field_validator("pair")
    @classmethod
    def _selectors(cls, value: tuple[str, str]) -> tuple[str, str]:
        if parse_selector(value[0]) == parse_selector(value[1]):
            raise ValueError(f"{value[0]!r} and {value[1]!r} select the same identities")
        return value


class Overrides(BaseModel):
    """The hand-written corrections to the rules: who is the same, who is different."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    same: tuple[SameGroup, ...] = ()
    different: tuple[DifferentPair, ...] = ()


def load_overrides(path: str | Path) -> Overrides:
    """Load a people overrides file (or the ``people.toml`` in a records folder)."""
    path = Path(path)
    file = path / PEOPLE_NAME if path.is_dir() else path
    if not file.is_file():
        raise PeopleError(
            f"There is no people overrides file at {file}. Write one (it may be empty) "
            f"as records/<brain>/{PEOPLE_NAME}."
        )
    return read_toml_record(file, Overrides, "people", PeopleError)


# ---------------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------------


class _Edge(BaseModel):
    model_config = ConfigDict(frozen=True)

    a: int
    b: int
    rule: str
    evidence: str


class _UnionFind:
    """Union-find over identity indexes that refuses unions a cannot-link pair forbids."""

    def __init__(self, size: int, sides: list[set[tuple[int, int]]]) -> None:
        self.parent = list(range(size))
        self.size = [1] * size
        # For each root, which side of which [[different]] pair its component holds.
        self.sides = sides

    def find(self, item: int) -> int:
        root = item
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[item] != root:
            self.parent[item], item = root, self.parent[item]
        return root

    def forbidden_by(self, a: int, b: int) -> int | None:
        """The [[different]] pair that joining the components of a and b would break."""
        left, right = self.sides[self.find(a)], self.sides[self.find(b)]
        for pair, side in left:
            if (pair, 1 - side) in right:
                return pair
        return None

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        self.sides[ra] |= self.sides[rb]


def resolve_people(
    identities: Iterable[Identity],
    links: Iterable[LinkEvidence] = (),
    overrides: Overrides | None = None,
) -> PeopleTable:
    """Group identities into people; every join carries its rule and evidence.

    Joins are tried strongest first (overrides, then link evidence, shared addresses and
    logins, full names, and last logins equal to an address's local part), and a join that
    would put both sides of a ``[[different]]`` pair into one person is refused whichever rule
    proposed it. Identities named only in ``links`` are added to the table.
    """
    overrides = overrides or Overrides()
    links = list(links)
    unique = {identity for identity in identities}
    unique.update(identity for link in links for identity in (link.a, link.b))
    items = sorted(unique, key=Identity.sort_key)
    index = {identity: position for position, identity in enumerate(items)}

    sides: list[set[tuple[int, int]]] = [set() for _ in items]
    matched: set[str] = set()
    for number, different in enumerate(overrides.different):
        for side, selector in enumerate(different.pair):
            parsed = parse_selector(selector)
            for position, identity in enumerate(items):
                if _selects(parsed, identity):
                    matched.add(selector)
                    if (number, 1 - side) in sides[position]:
                        raise PeopleError(
                            f"{identity.label} matches both {different.pair[0]!r} and "
                            f"{different.pair[1]!r}, which a [[different]] override keeps apart."
                        )
                    sides[position].add((number, side))

    same_edges = _override_edges(items, overrides, matched)
    forest = _UnionFind(len(items), sides)
    joins: list[_Edge] = []
    held_apart: list[Merge] = []
    for edge in [
        *same_edges,
        *_link_edges(links, index),
        *_rule_edges(items),
    ]:
        if forest.find(edge.a) == forest.find(edge.b):
            continue
        pair = forest.forbidden_by(edge.a, edge.b)
        if pair is not None:
            different = overrides.different[pair]
            if edge.rule == MergeRule.OVERRIDE:
                raise PeopleError(
                    f"The overrides contradict each other: a [[same]] group joins "
                    f"{items[edge.a].label} and {items[edge.b].label}, but the [[different]] "
                    f"pair {different.pair[0]!r} / {different.pair[1]!r} keeps them apart."
                )
            held_apart.append(
                Merge(
                    rule=edge.rule,
                    evidence=f"{edge.evidence}; refused because {different.reason}",
                )
            )
            continue
        forest.union(edge.a, edge.b)
        joins.append(edge)

    members: dict[int, list[int]] = defaultdict(list)
    for position in range(len(items)):
        members[forest.find(position)].append(position)
    merges: dict[int, list[Merge]] = defaultdict(list)
    for edge in joins:
        merges[forest.find(edge.a)].append(Merge(rule=edge.rule, evidence=edge.evidence))

    people = _assign_keys(
        [
            (
                _display_name([items[p] for p in group]),
                tuple(items[p] for p in group),
                tuple(merges[root]),
            )
            for root, group in members.items()
        ]
    )
    all_selectors = {s for g in overrides.same for s in g.members} | {
        s for d in overrides.different for s in d.pair
    }
    return PeopleTable(
        people=tuple(people),
        held_apart=tuple(held_apart),
        unmatched_selectors=tuple(sorted(all_selectors - matched)),
    )


def _override_edges(
    items: Sequence[Identity], overrides: Overrides, matched: set[str]
) -> list[_Edge]:
    edges: list[_Edge] = []
    for group in overrides.same:
        chosen: list[tuple[int, str]] = []
        for selector in group.members:
            parsed = parse_selector(selector)
            for position, identity in enumerate(items):
                if _selects(parsed, identity):
                    matched.add(selector)
                    chosen.append((position, selector))
        for (first, first_selector), (other, selector) in pairwise(chosen):
            edges.append(
                _Edge(
                    a=first,
                    b=other,
                    rule=MergeRule.OVERRIDE,
                    evidence=(
                        f"{group.reason} (people.toml: {items[first].label} by "
                        f"{first_selector!r}, {items[other].label} by {selector!r})"
                    ),
                )
            )
    return edges


def _link_edges(links: Sequence[LinkEvidence], index: Mapping[Identity, int]) -> list[_Edge]:
    return [
        _Edge(a=index[link.a], b=index[link.b], rule=link.rule, evidence=link.reason)
        for link in links
    ]


def _chain(
    items: Sequence[Identity], positions: Sequence[int], rule: MergeRule, shared: str
) -> list[_Edge]:
    """Edges joining each position to the first, with the evidence "<first> and <other>
    ``shared``" (``shared``: what the two have in common, "both use the address …")."""
    first = positions[0]
    return [
        _Edge(
            a=first,
            b=other,
            rule=rule,
            evidence=f"{items[first].label} and {items[other].label} {shared}",
        )
        for other in positions[1:]
    ]


def _rule_edges(items: Sequence[Identity]) -> list[_Edge]:
    """Edges proposed by the automatic rules, strongest rule first."""
    by_email: dict[str, list[int]] = defaultdict(list)
    by_login: dict[str, list[int]] = defaultdict(list)
    by_name: dict[str, list[int]] = defaultdict(list)
    for position, identity in enumerate(items):
        email = identity.email_key
        if email and is_routable(email) and email not in NOT_A_PERSON_EMAILS:
            by_email[email].append(position)
        if identity.login_key:
            by_login[identity.login_key].append(position)
        if is_full_name(identity.name_key):
            by_name[identity.name_key].append(position)

    edges: list[_Edge] = []
    for email, group in sorted(by_email.items()):
        edges += _chain(items, group, MergeRule.SAME_EMAIL, f"both use the address {email}")
    for login, group in sorted(by_login.items()):
        for other in group[1:]:
            first = group[0]
            noreply = items[first].kind != "github" or items[other].kind != "github"
            edges.append(
                _Edge(
                    a=first,
                    b=other,
                    rule=MergeRule.NOREPLY_ADDRESS if noreply else MergeRule.SAME_LOGIN,
                    evidence=(
                        f"{items[first].label} and {items[other].label} both stand for the "
                        f"GitHub login {login}"
                        + (" (a GitHub noreply address names its login)" if noreply else "")
                    ),
                )
            )
    for name, group in sorted(by_name.items()):
        edges += _chain(
            items, group, MergeRule.SAME_FULL_NAME, f"carry the same full name '{name}'"
        )
    edges += _local_part_edges(items, by_email, by_login)
    return edges


def _local_part_edges(
    items: Sequence[Identity],
    by_email: Mapping[str, list[int]],
    by_login: Mapping[str, list[int]],
) -> list[_Edge]:
    """A login joins the address whose local part it is, when that local part is telling.

    Telling means at least three characters, not a role mailbox or a common given name, and
    the local part of exactly one distinct address: were ``ekr@a`` and ``ekr@b`` both present,
    the login could belong to either owner.
    """
    local_parts: dict[str, list[str]] = defaultdict(list)
    for email in by_email:
        local_parts[email.partition("@")[0]].append(email)
    edges: list[_Edge] = []
    for login, logins in sorted(by_login.items()):
        emails = local_parts.get(login, [])
        if len(emails) != 1 or len(login) < _MIN_LOCAL_PART or login in GENERIC_LOCAL_PARTS:
            continue
        email = emails[0]
        account = next((p for p in logins if items[p].kind == "github"), logins[0])
        holder = by_email[email][0]
        edges.append(
            _Edge(
                a=account,
                b=holder,
                rule=MergeRule.LOGIN_IS_LOCAL_PART,
                evidence=(
                    f"the GitHub login {login} is the local part of {email} "
                    f"({items[holder].label}), which no other address or login claims"
                ),
            )
        )
    return edges


def _display_name(identities: Sequence[Identity]) -> str:
    """The fullest properly written name: a byline's, then the most complete git name."""
    named = [i for i in identities if i.name_key and i.name_key not in _PLACEHOLDER_NAMES]
    counts = Counter(i.name.strip() for i in named if i.name)

    def score(identity: Identity) -> tuple[int, int, int, int, int, str]:
        name = (identity.name or "").strip()
        normalised = normalise_name(name)
        return (
            identity.kind == "document",
            is_full_name(normalised),
            # "Eric Rescorla" over "EKR" or "ekr": mixed case is how people write their names.
            name != name.lower() and name != name.upper(),
            len(normalised.split()),
            counts[name],
            name,
        )

    if named:
        return _natural_order((max(named, key=score).name or "").strip())
    logins = sorted(i.login for i in identities if i.login)
    if logins:
        return logins[0]
    emails = sorted(i.email for i in identities if i.email)
    return emails[0].partition("@")[0] if emails else "unknown"


def _natural_order(name: str) -> str:
    """``Swift, Erin`` as ``Erin Swift``; other names as they are written."""
    if name.count(",") != 1:
        return name
    before, after = (part.strip() for part in name.split(","))
    if not before or not after or _NOT_WORD.sub("", _fold(after)).strip() in _NAME_SUFFIXES:
        return name
    return f"{after} {before}"


def _assign_keys(
    groups: list[tuple[str, tuple[Identity, ...], tuple[Merge, ...]]],
) -> list[Person]:
    """People with unique slugs; a clash is numbered in the identities' stable order."""
    groups.sort(key=lambda g: (g[0].casefold(), [i.sort_key() for i in g[1]]))
    used: Counter[str] = Counter()
    people: list[Person] = []
    for name, identities, merges in groups:
        base = slug(name)
        if not base:
            # A name with no ASCII letters (宋冬生): fall back on a login or address.
            fallback = [i.login for i in identities if i.login] + [
                (i.email or "").partition("@")[0] for i in identities if i.email
            ]
            base = next((s for s in map(slug, fallback) if s), "person")
        used[base] += 1
        key = base if used[base] == 1 else f"{base}-{used[base]}"
        people.append(Person(key=key, name=name, identities=identities, merges=merges))
    people.sort(key=lambda p: p.key)
    return people


# ---------------------------------------------------------------------------------------------
# Identities and link evidence from what git and the GitHub archive say
# ---------------------------------------------------------------------------------------------

Signature = tuple[str, str]
"""A git signature as git prints it: (name, email), either possibly empty."""

PullAuthors = Callable[[str, str | None], Sequence[Signature]]
"""The author of each commit of a pull request, given its head and base commits (the base
None when unknown), newest first; empty when the head is not in the repository. Read by
:class:`ratified_rdf.sources.git_history.PullAuthorsFromHistory`: records run no git
themselves."""


def identities_from_git(signatures: Iterable[Signature]) -> list[Identity]:
    """Every distinct author and committer signature, from what git says
    (:func:`ratified_rdf.sources.git_history.signatures`).

    GitHub's own web-flow committer (``noreply@github.com``) is left out: it is not a person.
    """
    seen: set[Identity] = set()
    for name, email in signatures:
        if (normalise_email(email) or "") in NOT_A_PERSON_EMAILS:
            continue
        if name or email:
            seen.add(Identity(kind="git", name=name or None, email=email or None))
    return sorted(seen, key=Identity.sort_key)


def _archive_logins(archive: Mapping[str, Any]) -> Iterable[str]:
    for kind in ("issues", "pulls"):
        for item in archive.get(kind, ()):
            yield item.get("author")
            yield item.get("mergedBy")
            yield from item.get("assignees", ())
            for comment in item.get("comments", ()):
                yield comment.get("author")
            for review in item.get("reviews", ()):
                yield review.get("author")


def identities_from_archive(archive: Mapping[str, Any]) -> list[Identity]:
    """One GitHub identity per login that opened, commented on, reviewed or merged anything."""
    logins = {login for login in _archive_logins(archive) if isinstance(login, str) and login}
    return [Identity(kind="github", login=login) for login in sorted(logins, key=str.lower)]


_MAX_PR_COMMITS = 200
_DOMINANT_SHARE = 2 / 3


def link_evidence_from_prs(
    pull_authors: PullAuthors,
    archive: Mapping[str, Any],
    commit_map: Mapping[str, str] | None = None,
) -> list[LinkEvidence]:
    """Links from each pull request's author login to the one address its commits were made with.

    ``pull_authors`` says who wrote each pull request's commits (:data:`PullAuthors`).
    ``commit_map`` maps the repository's commit ids to GitHub's (as ``commit-map.tsv`` does);
    empty or None means the ids are GitHub's own. A pull request counts only when GitHub's head
    commit is in the repository (a bundle's ``refs/pull/N/head`` is not trusted: it can point at
    an unrelated commit), it has at most 200 commits (a larger branch is a merge of histories,
    not one person's work) and every commit between its base and its head has authors with one
    normalised address. An address whose commits reached the repository through pull requests
    of several logins is linked only to a login holding more than two thirds of those pull
    requests, since the others carried someone else's commits.
    """
    local = {public: mine for mine, public in (commit_map or {}).items()}
    observed: dict[tuple[str, str], list[int]] = defaultdict(list)
    signatures: dict[tuple[str, str], set[tuple[str, str]]] = defaultdict(set)
    logins: dict[str, str] = {}
    candidates = [
        (pull, login, head)
        for pull in archive.get("pulls", ())
        if isinstance(login := pull.get("author"), str)
        and login
        and (head := _local_commit(pull.get("headRefOid"), local)) is not None
    ]

    def authors_of(candidate: tuple[Mapping[str, Any], str, str]) -> set[Signature]:
        pull, _login, head = candidate
        commits = pull_authors(head, _local_commit(pull.get("baseRefOid"), local))
        return set(commits) if len(commits) <= _MAX_PR_COMMITS else set()

    all_authors = [authors_of(candidate) for candidate in candidates]
    for (pull, login, _head), authors in zip(candidates, all_authors, strict=True):
        emails = {normalise_email(email) for _, email in authors}
        if not authors or len(emails) != 1 or None in emails:
            continue
        email = emails.pop()
        assert email is not None
        other_login = noreply_login(email)
        if email in NOT_A_PERSON_EMAILS or (other_login and other_login != login.lower()):
            continue
        key = (login.lower(), email)
        logins[login.lower()] = login
        observed[key].append(int(pull.get("number", 0)))
        signatures[key].update(authors)

    by_email: dict[str, Counter[str]] = defaultdict(Counter)
    for (login, email), numbers in observed.items():
        by_email[email][login] += len(numbers)
    links: list[LinkEvidence] = []
    for (login, email), numbers in sorted(observed.items()):
        share = by_email[email][login] / sum(by_email[email].values())
        if share <= _DOMINANT_SHARE:
            continue
        account = Identity(kind="github", login=logins[login])
        listed = ", ".join(f"#{n}" for n in sorted(numbers)[:5])
        more = f" and {len(numbers) - 5} more" if len(numbers) > 5 else ""
        for name, address in sorted(signatures[(login, email)]):
            signature = Identity(kind="git", name=name or None, email=address or None)
            links.append(
                LinkEvidence(
                    a=account,
                    b=signature,
                    reason=(
                        f"{'pull requests' if len(numbers) > 1 else 'pull request'} {listed}"
                        f"{more} by {account.label}: every commit authored by {email}, "
                        f"including as {signature.label}"
                    ),
                )
            )
    return links


def _local_commit(public: Any, local: Mapping[str, str]) -> str | None:
    if not isinstance(public, str) or not public:
        return None
    return local.get(public) if local else public


class PeopleLookup:
    """Person keys by identity, GitHub login or mail address, from a resolved table."""

    def __init__(self, table: PeopleTable) -> None:
        self._by_identity = {i: p.key for p in table.people for i in p.identities}
        self._by_email = {e: p.key for p in table.people for e in p.emails}

    def identity(self, identity: Identity) -> str | None:
        """The key of the person holding ``identity``."""
        return self._by_identity.get(identity)

    def login(self, login: str | None) -> str | None:
        """The key of the person holding a GitHub login."""
        return self._by_identity.get(Identity(kind="github", login=login)) if login else None

    def email(self, address: str | None) -> str | None:
        """The key of the one person known under a mail address."""
        return self._by_email.get((address or "").lower())

    def git(self, name: str, email: str) -> str | None:
        """The key of the person behind a git signature."""
        return self._by_identity.get(Identity(kind="git", name=name or None, email=email or None))
