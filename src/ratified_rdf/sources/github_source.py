"""The ``github`` source: issues, pull requests, comments and reviews from i-d-template's
``archive.json`` in the repository (the manifest's ``[discussion] github_archive``).

Its read holds the archive as parsed, the JSON as read (logins and pull request heads, for
identity resolution) and where each review comment's line sits (placed by git in the text
reviewed). The commit evidence (graph ``git``) links commits to the pull requests it holds.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ratified_rdf._errors import SourceError
from ratified_rdf.graph.discussion_mapping import MapContext, github_batches
from ratified_rdf.graph.mapping import Batch
from ratified_rdf.records.citations import find_citations
from ratified_rdf.records.discussion import (
    CitationRecord,
    CitationResolver,
    Landing,
    PostContext,
    github_post_key,
    review_line_citations,
)
from ratified_rdf.records.identity import identities_from_archive, link_evidence_from_prs
from ratified_rdf.sources.base import PeopleEvidence, ReadContext, Source, register_source
from ratified_rdf.sources.document import ParseError
from ratified_rdf.sources.git_history import (
    ChangePlace,
    PullAuthorsFromHistory,
    ReviewLine,
    place_review_lines,
)
from ratified_rdf.sources.git_repo import GitRepository
from ratified_rdf.sources.github_archive import GitHubArchive, read_archive

_COMMIT_ID = re.compile(r"[0-9a-f]{7,64}")


@dataclass(frozen=True)
class GitHubRead:
    """What the ``github`` source read."""

    archive: GitHubArchive
    raw: Mapping[str, Any] = field(default_factory=dict)
    """The archive's JSON as read (empty without an archive)."""
    review_lines: Mapping[str, tuple[ChangePlace, str]] = field(default_factory=dict)
    """Where each review comment's line sits, and the revision its change landed in, by
    post key."""
    unread: str | None = None
    """Why the archive the manifest names was not read (it is empty or not an archive), as
    a sentence for the build report; the brain then holds no issues or pull requests."""


@register_source
class GitHubSource(Source[GitHubRead]):
    """GitHub's issues and pull requests, with their comments and reviews."""

    name = "github"

    def read(self, context: ReadContext) -> GitHubRead:
        """The archive the manifest names (none when it names none), and where its review
        comments' lines sit."""
        discussion = context.manifest.discussion
        if discussion is None or not discussion.github_archive:
            return GitHubRead(GitHubArchive(repository="", timestamp=None, threads=()))
        repo = context.repo
        ref, path = discussion.github_archive.split(":", 1)
        text = repo.read_text(repo.resolve(ref).commit, path)
        if text is None:
            raise SourceError(f"{repo.source} has no {path} at {ref}; fix github_archive.")
        empty = GitHubArchive(repository="", timestamp=None, threads=())
        if not text.strip():
            # i-d-template leaves an empty archive.json when it never ran: no discussion to
            # read, which is no reason to refuse the repository's drafts.
            return GitHubRead(
                empty,
                unread=f"{path} at {ref} is empty, so the brain holds no issues, and no pull "
                "requests but those its merge commits name; the rest was built. Point "
                "github_archive at a filled archive, or remove it from [discussion].",
            )
        try:
            archive = read_archive(text)
        except ParseError as error:
            return GitHubRead(
                empty,
                unread=f"{path} at {ref} was not read, so the brain holds no issues, and no "
                "pull requests but those its merge commits name; the rest was built. "
                f"{error} Fix the archive, or remove github_archive from [discussion].",
            )
        lines = _review_lines(
            repo, archive, context.commit_map, list(context.document_files), context.landing
        )
        return GitHubRead(archive, json.loads(text), lines)

    def problems(self, read: GitHubRead) -> tuple[str, ...]:
        """The archive, when it was empty or could not be read."""
        return (read.unread,) if read.unread else ()

    def people(self, read: GitHubRead, context: ReadContext) -> PeopleEvidence:
        """Every login, and the links pull requests show between a login and an address."""
        if not read.raw:
            return PeopleEvidence()
        return PeopleEvidence(
            identities=identities_from_archive(read.raw),
            links=link_evidence_from_prs(
                PullAuthorsFromHistory(context.repo), read.raw, context.commit_map
            ),
        )

    def citations(self, read: GitHubRead, resolver: CitationResolver) -> list[CitationRecord]:
        """Every post's citations (the opening post's title counts as its text), then every
        review comment's line, as discussion of the section it sits in."""
        citations: list[CitationRecord] = []
        for thread in read.archive.threads:
            thread_context: PostContext | None = None
            for post in thread.posts:
                text = post.body if post.index else f"{thread.title}\n{post.body}"
                found = find_citations(text)
                if not found:
                    continue
                if thread_context is None:
                    thread_context = resolver.thread_context(thread)
                context = thread_context.model_copy(update={"names": resolver.names_in(text)})
                key = github_post_key(thread.number, post.index)
                citations += [resolver.resolve(key, post.created, c, context) for c in found]
        return citations + review_line_citations(resolver, read.archive, read.review_lines)

    def batches(self, read: GitHubRead, context: MapContext) -> Iterator[Batch]:
        """Threads with their posts and citations (graph ``github``)."""
        return github_batches(read.archive, context)


def _review_lines(
    repo: GitRepository,
    archive: GitHubArchive,
    public_ids: Mapping[str, str],
    files: list[str],
    landing: Landing,
) -> dict[str, tuple[ChangePlace, str]]:
    """Where each review comment's line sits, and the revision its change landed in (the
    reviewed commit's, else the pull request's merge commit's), by post key."""
    local_of = {public: local for local, public in public_ids.items()}
    by_prefix: dict[str, list[str]] = defaultdict(list)
    for public in local_of:
        by_prefix[public[:7]].append(public)

    def local(commit: str | None) -> str | None:
        # Archive text reaches git's command line here: only a commit id may (never "-…").
        if not commit or not _COMMIT_ID.fullmatch(commit):
            return None
        if not local_of:  # the repository's own ids are GitHub's
            return commit
        if commit in local_of:
            return local_of[commit]
        matches = [p for p in by_prefix.get(commit[:7], []) if p.startswith(commit)]
        return local_of[matches[0]] if len(matches) == 1 else None

    wanted: list[ReviewLine] = []
    merged: dict[str, str | None] = {}
    reviewed: dict[str, str] = {}
    for thread in archive.threads:
        base = local(thread.base_commit)
        if thread.kind != "pull" or base is None:
            continue
        for post in thread.posts:
            commit = local(post.review_commit)
            if post.kind != "review-comment" or post.diff_position is None or commit is None:
                continue
            key = github_post_key(thread.number, post.index)
            wanted.append(
                ReviewLine(key=key, base=base, commit=commit, position=post.diff_position)
            )
            merged[key], reviewed[key] = local(thread.merge_commit), commit
    places = place_review_lines(repo, wanted, files)
    lines: dict[str, tuple[ChangePlace, str]] = {}
    for key, place in places.items():
        landed = landing(reviewed[key], place.file)
        if landed is None and merged[key] is not None:
            landed = landing(merged[key] or "", place.file)
        if landed is not None:
            lines[key] = (place, landed)
    return lines
