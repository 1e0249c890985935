"""``ratified links``: check every link the cards render, offline by its form or online by asking.

A card (:class:`~ratified_rdf.answers.models.Answer`) carries public links in its evidence and
results: revision pages on the Datatracker, section anchors in a revision's or RFC's HTML,
commits, pull requests, issues and their comments on GitHub, mail archive messages. Once, every
revision link the cards rendered was a 404 and nobody noticed until a person clicked; this
module is the check that would have noticed.

Links come from cards (:func:`card_links`: every URL field of an answer) or from the whole graph
(:func:`graph_links`: every public page it holds, listed by the ``sparql/link_*.rq`` queries).
Each kind of link has a small registered :class:`LinkChecker` (:data:`CHECKERS`): it
recognises its links by host and path, and checks them offline against a :class:`LinkIndex`
read from the brain by the same queries: the revision a link names exists, a section anchor is
in that revision's (or RFC's) section list, a commit id is one the brain holds and GitHub's own
(not the bundle's, when a commit map is given), a thread number is held and of the kind the link
says. :class:`OnlineChecker` then asks each host, politely, whether the page is there.

The online check is an operator's command only: the library's engine never makes an outgoing
request for a reader, so neither the server nor the MCP server imports this module.
"""

from __future__ import annotations

import re
import sys
import threading
import time
import tomllib
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol
from urllib.parse import SplitResult, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, computed_field
from tqdm import tqdm

from ratified_rdf._errors import InputError
from ratified_rdf.answers.models import Answer
from ratified_rdf.graph import vocab as v
from ratified_rdf.sources.git_history import pull_request_refs
from ratified_rdf.sources.git_repo import SourceError

if TYPE_CHECKING:
    from ratified_rdf.brain import Brain
    from ratified_rdf.graph.store import Term


class LinksError(InputError):
    """A question file or cache that cannot be read as given; the message says what to do."""


# ------------------------------------------------------------------------------------------
# The report


class LinkSource(BaseModel):
    """Where a link was found: a card (its question and intent, and the field that held the
    link) or, under ``--all``, the graph resource whose page it is."""

    model_config = ConfigDict(frozen=True)

    question: str | None = None
    intent: str | None = None
    resource: str | None = None
    field: str

    def sentence(self) -> str:
        """Where the link came from, in words."""
        if self.question is not None:
            return f'card for "{self.question}" ({self.intent}), {self.field}'
        return f"graph resource <{self.resource}>, {self.field}"


class Expected(BaseModel):
    """What the graph says a page it holds should name: a link of one of ``kinds`` whose
    subject (a revision name, a commit id, a thread number …) is ``subject``."""

    model_config = ConfigDict(frozen=True)

    kinds: tuple[str, ...]
    subject: str | None = None
    detail: str | None = None


class Link(BaseModel):
    """One link to check, and where it was found."""

    model_config = ConfigDict(frozen=True)

    url: str
    source: LinkSource
    expected: Expected | None = None
    """Set for a page the graph holds (``--all``): the link must name its own resource."""


class BrokenLink(BaseModel):
    """A link that failed a check: why (a sentence), and every place it was found."""

    model_config = ConfigDict(frozen=True)

    url: str
    kind: str
    reason: str
    sources: tuple[LinkSource, ...]
    status: int | None = None
    """The HTTP status the host answered with (online checks only)."""


class KindCount(BaseModel):
    """How many distinct links of one kind were checked, and how many of them are broken."""

    model_config = ConfigDict(frozen=True)

    kind: str
    checked: int
    broken: int


class LinkReport(BaseModel):
    """The result of one ``ratified links`` run."""

    model_config = ConfigDict(frozen=True)

    scope: Literal["questions", "all"]
    online: bool
    questions: int = 0
    """How many questions were asked (``--question`` / ``--questions``)."""
    links: int = 0
    """How many links were found, counting a link once for every place it was found."""
    counts: tuple[KindCount, ...] = ()
    broken: tuple[BrokenLink, ...] = ()

    @computed_field  # type: ignore[prop-decorator]
    @property
    def ok(self) -> bool:
        """No link is broken (in the JSON too, for a script that reads only that)."""
        return not self.broken

    def summary(self) -> str:
        """One line: checked and broken per kind, then the totals."""
        parts = [f"{c.kind} {c.checked} checked, {c.broken} broken" for c in self.counts]
        checked = sum(c.checked for c in self.counts)
        broken = sum(c.broken for c in self.counts)
        mode = "online" if self.online else "offline"
        return (
            f"Links ({mode}): " + ("; ".join(parts) or "none found") + f". Total {checked} "
            f"distinct links checked ({self.links} found), {broken} broken."
        )

    def text(self, *, sources_shown: int = 3) -> str:
        """The report as plain text: the broken links grouped by kind, then the summary."""
        lines: list[str] = []
        by_kind: dict[str, list[BrokenLink]] = defaultdict(list)
        for item in self.broken:
            by_kind[item.kind].append(item)
        for kind in sorted(by_kind):
            items = by_kind[kind]
            lines.append(f"Broken {kind} links ({len(items)}):")
            for item in items:
                lines.append(f"  - {item.url}")
                lines.append(f"      {item.reason}")
                for source in item.sources[:sources_shown]:
                    lines.append(f"      from {source.sentence()}")
                if len(item.sources) > sources_shown:
                    lines.append(f"      and {len(item.sources) - sources_shown} more places")
            lines.append("")
        if not self.broken:
            lines.append("No broken links.")
        lines.append(self.summary())
        return "\n".join(lines)


# ------------------------------------------------------------------------------------------
# What the brain holds, for the offline checks


@dataclass
class LinkIndex:
    """What the brain holds that links name: revisions and their sections, RFCs and theirs,
    drafts, commit ids, threads, mail messages, the repository. Read by the ``link_*.rq``
    queries (:meth:`read`), or made by hand in a test."""

    repositories: set[str] = field(default_factory=set)
    drafts: set[str] = field(default_factory=set)
    rfcs: set[str] = field(default_factory=set)
    """RFCs the graph holds (with their sections)."""
    named_rfcs: set[str] = field(default_factory=set)
    """RFCs the graph only names (what a draft became, what an RFC obsoletes)."""
    revisions: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    """(draft, revision number) → the section numbers of that revision."""
    rfc_sections: dict[str, set[str]] = field(default_factory=dict)
    """RFC name (``rfc8446``) → its section numbers."""
    commits: set[str] = field(default_factory=set)
    threads: dict[int, str] = field(default_factory=dict)
    """Thread number → ``pull-request`` or ``issue``."""
    mail: set[str] = field(default_factory=set)
    """The IRIs of the mail messages the graph holds or links to."""
    commit_map: Mapping[str, str] | None = None
    """Bundle commit id → GitHub's (the corpus's ``commit-map.tsv``), when one is given."""
    pull_requests: set[int] | None = None
    """The pull request numbers the repository itself records (its ``refs/pull/N/head``),
    when its bundle or clone is given: GitHub's own list, read without the brain."""
    _github_ids: set[str] | None = field(default=None, repr=False)

    def github_ids(self) -> set[str]:
        """GitHub's ids of the commits in the commit map (empty without one)."""
        if self._github_ids is None:
            self._github_ids = set((self.commit_map or {}).values())
        return self._github_ids

    @classmethod
    def read(
        cls,
        rows: Mapping[str, Sequence[dict[str, Term]]],
        commit_map: Mapping[str, str] | None,
        pull_requests: set[int] | None = None,
    ) -> LinkIndex:
        """The index from the rows of the ``link_*.rq`` queries, by query name."""
        index = cls(commit_map=commit_map, pull_requests=pull_requests)
        documents: dict[str, str] = {}  # document IRI → draft or RFC name
        revisions: dict[str, tuple[str, str]] = {}
        for row in rows["link_repositories"]:
            if "page" in row:
                index.repositories.add(row["page"].value.rstrip("/"))
        for row in rows["link_documents"]:
            kind, name = row["kind"].value, _value(row, "name")
            if kind == "named-rfc":
                name = row["document"].value.rsplit("/", 1)[-1]
            if name is None:
                continue
            documents[row["document"].value] = name
            {"draft": index.drafts, "rfc": index.rfcs}.get(kind, index.named_rfcs).add(name)
        for row in rows["link_revisions"]:
            key = (row["draft"].value, row["number"].value)
            revisions[row["revision"].value] = key
            index.revisions.setdefault(key, set())
        for row in rows["link_sections"]:
            number = _value(row, "number")
            document = row["document"].value
            if number is None:
                continue
            if document in revisions:
                index.revisions[revisions[document]].add(number)
            elif document in documents:
                index.rfc_sections.setdefault(documents[document], set()).add(number)
        index.commits = {row["id"].value for row in rows["link_commits"]}
        for row in rows["link_threads"]:
            index.threads[int(row["number"].value)] = row["kind"].value
        index.mail = {row["resource"].value for row in rows["link_mail"]}
        return index

    def revision_list(self, draft: str) -> str:
        """The revision numbers held of ``draft``, as a range or list."""
        numbers = sorted(n for d, n in self.revisions if d == draft)
        if not numbers:
            return "none"
        return f"{numbers[0]}–{numbers[-1]}" if len(numbers) > 2 else ", ".join(numbers)


def _value(row: Mapping[str, Term], key: str) -> str | None:
    term = row.get(key)
    return None if term is None else term.value


# ------------------------------------------------------------------------------------------
# The checkers, one per kind of link


@dataclass(frozen=True)
class Named:
    """What a link names: its kind, its subject (a revision name, a commit id, ``#682`` …)
    and a detail (a section number, a comment anchor), as one checker read it."""

    kind: str
    subject: str
    detail: str | None = None
    parts: tuple[str, ...] = ()
    """The pieces the checker parsed out of the URL, for its own check."""


class LinkChecker(Protocol):
    """One kind of link: which URLs are of that kind, and what makes one broken offline."""

    @property
    def kind(self) -> str:
        """The kind's name (``revision``), its key in :data:`CHECKERS`."""

    @property
    def hosts(self) -> tuple[str, ...]:
        """The hosts links of this kind are on (``datatracker.ietf.org``)."""

    def parse(self, url: SplitResult) -> Named | None:
        """What ``url`` names, if its path is of this kind's form; None when it is not."""

    def check(self, named: Named, url: SplitResult, index: LinkIndex) -> str | None:
        """Why the link is broken (a sentence), or None when it is fine."""


CHECKERS: dict[str, LinkChecker] = {}
"""The registered checkers, by kind, in the order they are tried."""


def register(checker: LinkChecker) -> LinkChecker:
    """Add ``checker`` to :data:`CHECKERS` (a new kind of link is one more registration)."""
    if checker.kind in CHECKERS:
        raise ValueError(f"A checker for {checker.kind} links is registered already.")
    CHECKERS[checker.kind] = checker
    return checker


_DRAFT = r"draft-[a-z0-9]+(?:-[a-z0-9]+)*?"
_SECTION_ANCHOR = re.compile(r"section-(\d+(?:\.\d+)*)|appendix-([A-Z](?:\.\d+)*)")
"""The fragments xml2rfc's HTML gives sections and appendices (as :func:`vocab.fragment`
mints them): ``#section-4.2.1``, ``#appendix-B.3``."""
_COMMENT_ANCHOR = re.compile(r"issuecomment-\d+|pullrequestreview-\d+|discussion_r\d+")
"""The fragments GitHub gives an issue comment, a review and an inline review comment."""


@dataclass(frozen=True)
class _PathChecker:
    """A checker that recognises its links by a regular expression over the path (and what
    it requires of the fragment), then checks the parsed pieces."""

    kind: str
    hosts: tuple[str, ...]
    pattern: re.Pattern[str]
    fragment: Literal["none", "optional", "required"]
    name: Callable[[re.Match[str], SplitResult], Named]
    verify: Callable[[Named, LinkIndex], str | None]

    def parse(self, url: SplitResult) -> Named | None:
        """What ``url`` names, if its host and path are this kind's."""
        if url.hostname not in self.hosts:
            return None
        found = self.pattern.fullmatch(url.path)
        if found is None:
            return None
        if self.fragment == "none" and url.fragment:
            return None
        if self.fragment == "required" and not url.fragment:
            return None
        return self.name(found, url)

    def check(self, named: Named, url: SplitResult, index: LinkIndex) -> str | None:
        """The kind's own check on what the link names."""
        return self.verify(named, index)


def _repository_problem(owner_repo: str, index: LinkIndex) -> str | None:
    held = index.repositories
    if f"https://github.com/{owner_repo}" in held or not held:
        return None
    return (
        f"It is in the repository {owner_repo}, but the brain was built from "
        f"{', '.join(sorted(held))}."
    )


def _check_revision(named: Named, index: LinkIndex) -> str | None:
    draft, number = named.parts[0], named.parts[1]
    if (draft, number) in index.revisions:
        return None
    if draft not in index.drafts:
        return f"The brain holds no draft {draft}, so no revision {number} of it."
    return (
        f"The brain holds no revision {number} of {draft} (it holds "
        f"{index.revision_list(draft)}): the page names a revision that is not in the brain."
    )


def _check_revision_section(named: Named, index: LinkIndex) -> str | None:
    problem = _check_revision(named, index)
    if problem is not None or named.detail is None:
        return problem
    return _anchor_problem(
        named.detail,
        index.revisions[(named.parts[0], named.parts[1])],
        f"{named.parts[0]}-{named.parts[1]}",
    )


def _anchor_problem(fragment: str, sections: set[str], document: str) -> str | None:
    found = _SECTION_ANCHOR.fullmatch(fragment)
    if found is None:
        return (
            f"#{fragment} is not a section anchor xml2rfc makes (#section-N.N or "
            "#appendix-X.N), so the page opens at its top, not at the section."
        )
    number = found.group(1) or found.group(2)
    if number in sections:
        return None
    return (
        f"{document} has no section {number} in the brain's section list, so the anchor "
        f"#{fragment} points nowhere in it."
    )


def _check_draft(named: Named, index: LinkIndex) -> str | None:
    if named.subject in index.drafts:
        return None
    return f"The brain holds no draft {named.subject}."


def _check_rfc(named: Named, index: LinkIndex) -> str | None:
    if named.subject in index.rfcs or named.subject in index.named_rfcs:
        return None
    return f"The brain neither holds nor names {named.subject.upper()}."


def _check_rfc_section(named: Named, index: LinkIndex) -> str | None:
    if named.subject not in index.rfcs:
        return (
            f"The brain does not hold {named.subject.upper()}'s text, so it has no section "
            "list to find this anchor in."
        )
    assert named.detail is not None
    return _anchor_problem(
        named.detail, index.rfc_sections.get(named.subject, set()), named.subject.upper()
    )


def _check_commit(named: Named, index: LinkIndex) -> str | None:
    problem = _repository_problem(named.parts[0], index)
    if problem is not None:
        return problem
    commit = named.subject
    mapping = index.commit_map
    if mapping is not None:
        public = index.github_ids()
        if commit in mapping and commit not in public:
            return (
                f"{commit} is the bundle's id of GitHub commit {mapping[commit]}: on GitHub "
                "the link must use GitHub's id."
            )
        if commit not in public:
            return f"{commit} is not in the corpus's commit map, so GitHub has no such commit."
    if commit not in index.commits:
        return f"The brain holds no commit {commit}."
    return None


def _check_thread(named: Named, index: LinkIndex) -> str | None:
    problem = _repository_problem(named.parts[0], index)
    if problem is not None:
        return problem
    number = int(named.parts[2])
    held = index.threads.get(number)
    path_kind = "pull-request" if named.parts[1] == "pull" else "issue"
    if held is None:
        return f"The brain holds no issue or pull request #{number}."
    if held != path_kind:
        word = {"pull-request": "a pull request", "issue": "an issue"}
        return (
            f"#{number} is {word[held]} in the brain, but the link is to {word[path_kind]} "
            f"(/{named.parts[1]}/{number})."
        )
    pulls = index.pull_requests
    if pulls is not None and (held == "pull-request") != (number in pulls):
        if held == "pull-request":
            return (
                f"The repository has no pull request #{number} (its git holds no "
                f"refs/pull/{number}/head, GitHub's record of each one), yet the brain holds "
                f"one: /pull/{number} is not the pull request the brain means."
            )
        return (
            f"#{number} is a pull request of the repository (refs/pull/{number}/head), but "
            "the brain holds it as an issue."
        )
    return None


def _check_comment(named: Named, index: LinkIndex) -> str | None:
    if not _COMMENT_ANCHOR.fullmatch(named.detail or ""):
        return (
            f"#{named.detail} is not an anchor GitHub gives a comment or review "
            "(#issuecomment-N, #pullrequestreview-N, #discussion_rN)."
        )
    return _check_thread(named, index)


def _check_mail(named: Named, index: LinkIndex) -> str | None:
    if named.subject in index.mail:
        return None
    return "The brain holds no mail message at this address of the mail archive."


def _check_repository(named: Named, index: LinkIndex) -> str | None:
    return _repository_problem(named.subject, index)


_GITHUB = ("github.com",)
_OWNER_REPO = r"([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)"

for _checker in (
    _PathChecker(
        "revision",
        ("datatracker.ietf.org",),
        re.compile(rf"/doc/({_DRAFT})/(\d{{2}})/"),
        "none",
        lambda m, u: Named("revision", f"{m[1]}-{m[2]}", None, (m[1], m[2])),
        _check_revision,
    ),
    _PathChecker(
        "revision-section",
        ("datatracker.ietf.org",),
        re.compile(rf"/doc/html/({_DRAFT})-(\d{{2}})"),
        "optional",
        lambda m, u: Named("revision-section", f"{m[1]}-{m[2]}", u.fragment or None, (m[1], m[2])),
        _check_revision_section,
    ),
    _PathChecker(
        "draft",
        ("datatracker.ietf.org",),
        re.compile(rf"/doc/({_DRAFT})/"),
        "none",
        lambda m, u: Named("draft", m[1]),
        _check_draft,
    ),
    _PathChecker(
        "rfc",
        ("www.rfc-editor.org",),
        re.compile(r"/rfc/(rfc[1-9]\d*)"),
        "none",
        lambda m, u: Named("rfc", m[1]),
        _check_rfc,
    ),
    _PathChecker(
        "rfc-section",
        ("www.rfc-editor.org",),
        re.compile(r"/rfc/(rfc[1-9]\d*)"),
        "required",
        lambda m, u: Named("rfc-section", m[1], u.fragment),
        _check_rfc_section,
    ),
    _PathChecker(
        "commit",
        _GITHUB,
        re.compile(rf"/{_OWNER_REPO}/commit/([0-9a-f]{{40}})"),
        "none",
        lambda m, u: Named("commit", m[2], None, (m[1],)),
        _check_commit,
    ),
    _PathChecker(
        "pull-request",
        _GITHUB,
        re.compile(rf"/{_OWNER_REPO}/(pull)/([1-9]\d*)"),
        "none",
        lambda m, u: Named("pull-request", f"#{m[3]}", None, (m[1], m[2], m[3])),
        _check_thread,
    ),
    _PathChecker(
        "issue",
        _GITHUB,
        re.compile(rf"/{_OWNER_REPO}/(issues)/([1-9]\d*)"),
        "none",
        lambda m, u: Named("issue", f"#{m[3]}", None, (m[1], m[2], m[3])),
        _check_thread,
    ),
    _PathChecker(
        "comment",
        _GITHUB,
        re.compile(rf"/{_OWNER_REPO}/(pull|issues)/([1-9]\d*)"),
        "required",
        lambda m, u: Named("comment", f"#{m[3]}", u.fragment, (m[1], m[2], m[3])),
        _check_comment,
    ),
    _PathChecker(
        "mail",
        ("mailarchive.ietf.org", "www.ietf.org"),
        re.compile(
            r"/arch/msg/[^/]+/[^/]+/?|/mail-archive/web/[^/]+/current/msg\d+\.html",
        ),
        "none",
        lambda m, u: Named("mail", v.mail_link_iri(urlunsplit(u)) or ""),
        _check_mail,
    ),
    _PathChecker(
        "repository",
        _GITHUB,
        re.compile(rf"/{_OWNER_REPO}/?"),
        "none",
        lambda m, u: Named("repository", m[1]),
        _check_repository,
    ),
):
    register(_checker)


# ------------------------------------------------------------------------------------------
# Checking


def classify(url: str) -> tuple[Named | None, str | None]:
    """What ``url`` names by the first checker that recognises it, or why none can: a URL
    that is not well formed, or of a form no checker knows."""
    if not url or url != url.strip() or any(c.isspace() or ord(c) < 32 for c in url):
        return None, "The link holds blanks or control characters, so it is not a usable URL."
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a port that is not a number raises here)
    except ValueError as error:
        return None, f"The link is not a well-formed URL ({error})."
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        return None, "The link is not a web address (it needs https:// and a host)."
    for checker in CHECKERS.values():
        named = checker.parse(parts)
        if named is not None:
            return named, None
    hosts = sorted({h for c in CHECKERS.values() for h in c.hosts})
    known = parts.hostname in hosts
    return None, (
        f"No checker knows links of this form on {parts.hostname}"
        + (
            " (its path is not one the brain mints)."
            if known
            else f"; the brain mints links only on {', '.join(hosts)}."
        )
    )


def check_offline(link: Link, index: LinkIndex) -> tuple[str, str | None]:
    """The link's kind (``unrecognised`` when no checker knows it) and why it is broken, or
    None when its form, and what it names, are right."""
    named, problem = classify(link.url)
    if named is None:
        return "unrecognised", problem
    parts = urlsplit(link.url)
    if parts.scheme != "https":
        return named.kind, (
            "The link is http://, not https://: every host the brain links to serves https, "
            "and browsers warn on the plain one."
        )
    if parts.query:
        return named.kind, f"The link carries a query (?{parts.query}) the brain never mints."
    expected = link.expected
    if expected is not None:
        if named.kind not in expected.kinds:
            return named.kind, (
                f"It is given as {_a(' or '.join(expected.kinds))} link, but it has the form "
                f"of {_a(named.kind)} link."
            )
        if expected.subject is not None and named.subject != expected.subject:
            return named.kind, (
                f"The page names {named.subject or 'nothing the brain holds'}, but it is the "
                f"page of {expected.subject} in the graph."
            )
        if expected.detail is not None and named.detail != expected.detail:
            return named.kind, (
                f"The page's anchor is #{named.detail}, but the section it belongs to wants "
                f"#{expected.detail}."
            )
    return named.kind, CHECKERS[named.kind].check(named, parts, index)


def _a(kind: str) -> str:
    """The kind with its article: "a revision", "an rfc-section", "an issue"."""
    return f"{'an' if kind[0] in 'aeiou' or kind.startswith('rfc') else 'a'} {kind}"


def check_links(
    links: Sequence[Link],
    index: LinkIndex,
    *,
    scope: Literal["questions", "all"],
    questions: int = 0,
    online: OnlineChecker | None = None,
    progress: bool = False,
) -> LinkReport:
    """Check every distinct link once (offline; then online, when ``online`` is given) and
    report the broken ones with the places they broke at. A link counts once per kind in the
    totals, however many places hold it."""
    places: dict[tuple[str, Expected | None], list[LinkSource]] = defaultdict(list)
    for link in links:
        places[(link.url, link.expected)].append(link.source)
    kinds: dict[str, str] = {}
    problems: dict[tuple[str, str], list[LinkSource]] = defaultdict(list)  # (url, reason)
    for (url, expected), sources in tqdm(
        places.items(), desc="checking links", unit="link", disable=not progress, file=sys.stderr
    ):
        kind, problem = check_offline(Link(url=url, source=sources[0], expected=expected), index)
        kinds.setdefault(url, kind)
        if problem is not None:
            problems[(url, problem)].extend(sources)
    statuses: dict[str, int | None] = {}
    if online is not None:
        failed = {url for url, _ in problems}
        to_ask = [u for u, k in kinds.items() if k != "unrecognised" and u not in failed]
        everywhere: dict[str, list[LinkSource]] = defaultdict(list)
        for (url, _expected), sources in places.items():
            everywhere[url].extend(sources)
        for url, result in online.check(to_ask, progress=progress).items():
            if result.broken:
                problems[(url, result.reason())] = everywhere[url]
                statuses[url] = result.status
    broken_urls = {url for url, _ in problems}
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for url, kind in kinds.items():
        counts[kind][0] += 1
        counts[kind][1] += url in broken_urls
    broken = tuple(
        BrokenLink(
            url=url,
            kind=kinds[url],
            reason=reason,
            sources=tuple(sources),
            status=statuses.get(url),
        )
        for (url, reason), sources in sorted(
            problems.items(), key=lambda item: (kinds[item[0][0]], item[0])
        )
    )
    return LinkReport(
        scope=scope,
        online=online is not None,
        questions=questions,
        links=len(links),
        counts=tuple(
            KindCount(kind=k, checked=c, broken=b) for k, (c, b) in sorted(counts.items())
        ),
        broken=broken,
    )


# ------------------------------------------------------------------------------------------
# Where links come from: cards, and the whole graph


def url_fields(model: BaseModel) -> Iterator[tuple[str, str]]:
    """Every (field name, URL) a model of a card holds: fields named ``url`` or ``*_url``,
    and ``merge_commit`` (a merge commit's page); empty and unset ones are rendered as no
    link, so they are not links."""
    for name in type(model).model_fields:
        if name == "url" or name.endswith("_url") or name == "merge_commit":
            value = getattr(model, name)
            if isinstance(value, str) and value:
                yield name, value


_SECTION_PAGES = ("revision-section", "rfc-section", "rfc")
"""A section's page: in a revision, or in an RFC (an unnumbered one's is the RFC's own)."""
_THREAD_PAGES = ("pull-request", "issue", "mail")
_POST_PAGES = ("comment", *_THREAD_PAGES)

ROLE_KINDS: dict[str, tuple[str, ...]] = {
    "revision": ("revision",),
    "revision-section": ("revision-section",),
    "section": _SECTION_PAGES,
    "rfc": ("rfc",),
    "rfc-section": ("rfc-section", "rfc"),
    "commit": ("commit",),
    "draft": ("draft",),
    "pull-request": ("pull-request",),
    "issue": ("issue",),
    "thread": _THREAD_PAGES,
    "post": _POST_PAGES,
}
"""The kinds of link an evidence node of each role may carry: a ``[commit]`` must link to a
commit. A role not listed sets no expectation."""

FIELD_KINDS: dict[tuple[str, str], tuple[str, ...]] = {
    ("chain_step", "url"): ("revision", "rfc"),
    ("history_entry", "url"): _SECTION_PAGES,
    ("section_text", "url"): _SECTION_PAGES,
    ("revision", "url"): ("revision",),
    ("post", "thread_url"): _THREAD_PAGES,
    ("post", "post_url"): _POST_PAGES,
    ("commit", "commit_url"): ("commit",),
    ("commit", "pull_request_url"): ("pull-request",),
    ("thread", "url"): ("pull-request", "issue"),
    ("thread", "merge_commit"): ("commit",),
    ("section_activity", "url"): _SECTION_PAGES,
    ("document", "url"): ("draft", "rfc"),
    ("section_diff", "older_url"): _SECTION_PAGES,
    ("section_diff", "newer_url"): _SECTION_PAGES,
}
"""The kinds of link each URL field of a result may carry, by (result kind, field)."""


def card_links(answer: Answer) -> list[Link]:
    """Every link ``answer`` renders: its evidence's links and its results' URL fields, each
    expected to be of the kind its role or field says (:data:`ROLE_KINDS`,
    :data:`FIELD_KINDS`)."""
    links: list[Link] = []

    def add(where: str, url: str, kinds: tuple[str, ...] | None) -> None:
        source = LinkSource(question=answer.question, intent=answer.intent, field=where)
        expected = Expected(kinds=kinds) if kinds else None
        links.append(Link(url=url, source=source, expected=expected))

    for position, evidence in enumerate(answer.evidence):
        for name, url in url_fields(evidence):
            where = f"evidence {position + 1} ({evidence.role}) {name}"
            add(where, url, ROLE_KINDS.get(evidence.role))
    for position, result in enumerate(answer.results):
        for name, url in url_fields(result):
            where = f"result {position + 1} ({result.kind}) {name}"
            add(where, url, FIELD_KINDS.get((result.kind, name)))
    return links


LINK_QUERIES = (
    "link_repositories",
    "link_documents",
    "link_revisions",
    "link_sections",
    "link_commits",
    "link_threads",
    "link_posts",
    "link_mail",
    "link_others",
)
"""The ``sparql/link_*.rq`` queries: what the index is read from, and what ``--all`` checks."""


def read_graph(brain: Brain) -> dict[str, list[dict[str, Term]]]:
    """The rows of every ``link_*.rq`` query over the reader's graphs, by query name."""
    return {name: brain.run(name)[0] for name in LINK_QUERIES}


def graph_links(rows: Mapping[str, Sequence[dict[str, Term]]]) -> list[Link]:
    """Every public page the graph holds, each with what it must name (its own resource)."""
    links: list[Link] = []
    documents: dict[str, str] = {}
    revisions: dict[str, str] = {}

    def add(row: Mapping[str, Term], resource: str, expected: Expected | None) -> None:
        page = _value(row, "page")
        if page is None:
            return
        source = LinkSource(resource=row[resource].value, field="foaf:page")
        links.append(Link(url=page, source=source, expected=expected))

    for row in rows["link_repositories"]:
        add(row, "repository", Expected(kinds=("repository",)))
    for row in rows["link_documents"]:
        kind, name = row["kind"].value, _value(row, "name")
        if name is not None:
            documents[row["document"].value] = name
        if kind in {"draft", "rfc"}:
            add(row, "document", Expected(kinds=(kind,), subject=name))
    for row in rows["link_revisions"]:
        name = f"{row['draft'].value}-{row['number'].value}"
        revisions[row["revision"].value] = name
        add(row, "revision", Expected(kinds=("revision",), subject=name))
    for row in rows["link_sections"]:
        document = row["document"].value
        number = _value(row, "number")
        anchor = v.fragment(number).lstrip("#") or None
        if document in revisions:
            expected = Expected(
                kinds=("revision-section",), subject=revisions[document], detail=anchor
            )
        else:
            kinds = ("rfc-section",) if anchor else ("rfc", "rfc-section")
            expected = Expected(kinds=kinds, subject=documents.get(document), detail=anchor)
        add(row, "section", expected)
    for row in rows["link_commits"]:
        add(row, "commit", Expected(kinds=("commit",), subject=row["id"].value))
    for row in rows["link_threads"]:
        subject = f"#{row['number'].value}"
        add(row, "thread", Expected(kinds=(row["kind"].value,), subject=subject))
    for row in rows["link_posts"]:
        subject = f"#{row['number'].value}"
        add(row, "post", Expected(kinds=("pull-request", "issue", "comment"), subject=subject))
    for row in rows["link_mail"]:
        # A message's page names the message; a thread's page is its first message's.
        message = row["resource"].value if row["kind"].value == "message" else None
        add(row, "resource", Expected(kinds=("mail",), subject=message))
    for row in rows["link_others"]:
        add(row, "resource", None)
    return links


def read_questions(path: Path) -> list[str]:
    """The questions in a file: TOML (``[[question]]`` tables with ``text``, as in
    ``tests/eval/``, or ``question = "…"`` entries anywhere), or plain text, one a line
    (blank lines and lines starting with ``#`` left out)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise LinksError(f"{path} is not UTF-8 text; save it as UTF-8 and run again.") from None
    if path.suffix == ".toml":
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise LinksError(f"{path} is not valid TOML ({error}); fix it there.") from None
        found = list(_toml_questions(data, inside=None))
        if not found:
            raise LinksError(
                f'{path} holds no questions: give [[question]] tables with text = "…", or '
                'question = "…" entries.'
            )
        return list(dict.fromkeys(found))
    lines = [line.strip() for line in text.splitlines()]
    found = [line for line in lines if line and not line.startswith("#")]
    if not found:
        raise LinksError(f"{path} holds no questions; write one question a line.")
    return list(dict.fromkeys(found))


def _toml_questions(data: object, inside: str | None) -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            in_question = key == "text" and inside in {"question", "questions"}
            if isinstance(value, str) and (key == "question" or in_question):
                yield value
            else:
                yield from _toml_questions(value, key if isinstance(value, list) else inside)
    elif isinstance(data, list):
        for item in data:
            yield from _toml_questions(item, inside)


def load_commit_map(path: Path) -> dict[str, str]:
    """A corpus's ``commit-map.tsv`` (bundle id <TAB> GitHub id, a header line first)."""
    from ratified_rdf.sources.git_repo import load_commit_map as read_map

    if not path.is_file():
        raise LinksError(f"There is no commit map at {path}; give the corpus's commit-map.tsv.")
    mapping = read_map(path)
    if not mapping:
        raise LinksError(
            f"{path} holds no bundle id <TAB> GitHub id lines; give the corpus's commit-map.tsv."
        )
    return mapping


def repository_pull_requests(source: Path) -> set[int]:
    """The pull request numbers a repository's bundle or clone records: its
    ``refs/pull/N/head`` refs (read with ``git ls-remote``, so a bundle needs no clone)."""
    try:
        numbers = pull_request_refs(source)
    except SourceError as error:
        raise LinksError(f"{error} Give the bundle or clone the brain was built from.") from None
    if not numbers:
        raise LinksError(
            f"{source} holds no refs/pull/N/head refs, so it says nothing about pull requests; "
            "give a bundle or mirror made with them (git clone --mirror), or leave --source out."
        )
    return numbers


def check_questions(
    brain: Brain,
    questions: Iterable[str],
    *,
    commit_map: Mapping[str, str] | None = None,
    pull_requests: set[int] | None = None,
    online: OnlineChecker | None = None,
    progress: bool = False,
) -> LinkReport:
    """Ask each question and check every link its card renders (``commit_map`` and
    ``pull_requests`` as :class:`LinkIndex` takes them)."""
    asked = list(questions)
    index = LinkIndex.read(read_graph(brain), commit_map, pull_requests)
    links: list[Link] = []
    for question in tqdm(
        asked, desc="asking", unit="question", disable=not progress, file=sys.stderr
    ):
        links += card_links(brain.ask(question))
    return check_links(
        links, index, scope="questions", questions=len(asked), online=online, progress=progress
    )


def check_brain(
    brain: Brain,
    *,
    commit_map: Mapping[str, str] | None = None,
    pull_requests: set[int] | None = None,
    online: OnlineChecker | None = None,
    progress: bool = False,
) -> LinkReport:
    """Check every link any card could render: every public page the graph holds."""
    rows = read_graph(brain)
    index = LinkIndex.read(rows, commit_map, pull_requests)
    return check_links(graph_links(rows), index, scope="all", online=online, progress=progress)


# ------------------------------------------------------------------------------------------
# Online: polite HEAD requests with a cache


class HttpResult(BaseModel):
    """What a host answered for one URL (the fragment left off: hosts never see it)."""

    model_config = ConfigDict(frozen=True)

    url: str
    status: int | None = None
    final_url: str | None = None
    """Where the redirects ended, when they did."""
    error: str | None = None
    """Why there was no answer: a timeout, a refused connection."""
    method: Literal["HEAD", "GET"] = "HEAD"
    checked_at: datetime

    @property
    def broken(self) -> bool:
        """No answer, or an error status."""
        return self.status is None or self.status >= 400

    def reason(self) -> str:
        """Why it is broken, in a sentence."""
        if self.status is None:
            return f"The host did not answer ({self.error})."
        moved = f" (after redirects, at {self.final_url})" if self.final_url != self.url else ""
        return f"The host answered {self.status} to {self.method}{moved}."


class _CacheFile(BaseModel):
    results: dict[str, HttpResult] = Field(default_factory=dict)


DEFAULT_USER_AGENT = (
    "ratified-links (ratified-rdf's link checker, run by an operator; one request at a time "
    "per host)"
)


class OnlineChecker:
    """Ask hosts whether pages are there: HEAD (GET when a host refuses HEAD with 405),
    redirects followed, one request at a time per host and ``delay`` seconds between two to
    the same host, a few hosts at once; answers kept in a JSON cache and asked again once
    older than ``max_age``. 429 and 5xx answers are not cached: they say "later", not "gone"."""

    def __init__(
        self,
        cache: Path | None,
        *,
        max_age: timedelta = timedelta(days=7),
        delay: float = 1.0,
        timeout: float = 15.0,
        hosts_at_once: int = 4,
        user_agent: str = DEFAULT_USER_AGENT,
        via: Mapping[str, str] | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        """Set the checker up; nothing is asked until :meth:`check`. ``via`` sends the
        requests meant for one origin (``https://github.com``) to another (a mirror, or a
        test's server on loopback); answers are still kept under the URL as given."""
        self.cache = cache
        self.max_age = max_age
        self.delay = delay
        self.timeout = timeout
        self.hosts_at_once = max(1, hosts_at_once)
        self.user_agent = user_agent
        self.via = dict(via or {})
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self.requests: list[tuple[str, str]] = []
        """Every (method, URL) asked of a host, in order: what a test or a log can look at."""
        self._cached = self._load()

    def _load(self) -> dict[str, HttpResult]:
        if self.cache is None or not self.cache.is_file():
            return {}
        try:
            return _CacheFile.model_validate_json(self.cache.read_bytes()).results
        except ValueError:
            raise LinksError(
                f"The link cache {self.cache} is not one ratified links wrote; remove it (it "
                "is only a cache) or give another with --cache."
            ) from None

    def _save(self) -> None:
        if self.cache is None:
            return
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        spare = self.cache.with_name(self.cache.name + ".tmp")
        spare.write_text(_CacheFile(results=self._cached).model_dump_json(indent=1))
        spare.replace(self.cache)

    def check(self, urls: Iterable[str], *, progress: bool = False) -> dict[str, HttpResult]:
        """Each URL's answer (from the cache when fresh enough), by the URL as given."""
        import httpx

        wanted: dict[str, list[str]] = defaultdict(list)  # fragment-less URL → URLs given
        for url in urls:
            wanted[urlunsplit(urlsplit(url)._replace(fragment=""))].append(url)
        now = self._clock()
        fresh = {
            u: r
            for u, r in self._cached.items()
            if u in wanted and now - r.checked_at <= self.max_age
        }
        by_host: dict[str, list[str]] = defaultdict(list)
        for url in wanted:
            if url not in fresh:
                by_host[urlsplit(url).netloc].append(url)
        bar = tqdm(
            total=sum(map(len, by_host.values())),
            desc="asking hosts",
            unit="url",
            disable=not progress,
            file=sys.stderr,
        )
        answered: dict[str, HttpResult] = dict(fresh)

        def ask_host(urls_of_host: list[str]) -> None:
            with httpx.Client(
                headers={"User-Agent": self.user_agent},
                timeout=self.timeout,
                follow_redirects=True,
                max_redirects=10,
            ) as client:
                for position, url in enumerate(urls_of_host):
                    if position:
                        self._sleep(self.delay)
                    result = self._ask(client, url)
                    with self._lock:
                        answered[url] = result
                        if (
                            result.status is not None
                            and result.status != 429
                            and (result.status < 500)
                        ):
                            self._cached[url] = result
                        bar.update(1)

        try:
            with ThreadPoolExecutor(max_workers=self.hosts_at_once) as pool:
                for _ in pool.map(ask_host, by_host.values()):
                    pass
        finally:
            bar.close()
            self._save()
        return {given: answered[url] for url, givens in wanted.items() for given in givens}

    def _ask(self, client: object, url: str) -> HttpResult:
        import httpx

        assert isinstance(client, httpx.Client)
        method: Literal["HEAD", "GET"] = "HEAD"
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        target = self.via[origin] + url[len(origin) :] if origin in self.via else url
        try:
            with self._lock:
                self.requests.append(("HEAD", url))
            response = client.head(target)
            if response.status_code in {405, 501}:
                method = "GET"
                with self._lock:
                    self.requests.append(("GET", url))
                with client.stream("GET", target) as streamed:  # the status, not the body
                    response = streamed
        except httpx.HTTPError as error:
            return HttpResult(
                url=url,
                error=f"{type(error).__name__}: {error}",
                method=method,
                checked_at=self._clock(),
            )
        final = str(response.url)
        if origin in self.via and final.startswith(self.via[origin]):
            final = origin + final[len(self.via[origin]) :]
        return HttpResult(
            url=url,
            status=response.status_code,
            final_url=final,
            method=method,
            checked_at=self._clock(),
        )


def default_cache(store: Path | str) -> Path:
    """Where the online answers are kept by default: beside the store's folder, or for a
    store on a server (its URL), beside that server's audit log under the user's state
    folder."""
    if isinstance(store, str):
        from ratified_rdf.audit import remote_audit_dir

        audit = remote_audit_dir(store)
        return audit.with_name(audit.name + ".links-cache.json")
    return store.with_name(store.name + ".links-cache.json")


__all__ = [
    "CHECKERS",
    "BrokenLink",
    "KindCount",
    "Link",
    "LinkChecker",
    "LinkIndex",
    "LinkReport",
    "LinkSource",
    "LinksError",
    "OnlineChecker",
    "card_links",
    "check_brain",
    "check_links",
    "check_questions",
    "graph_links",
    "read_questions",
    "register",
]
