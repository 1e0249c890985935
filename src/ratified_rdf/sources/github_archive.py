"""Reader for i-d-template's ``archive.json``: every GitHub issue, pull request, comment and
review of a specification repository, as threads of posts.

The archive keeps no ids or URLs for comments, so a comment's public URL is its thread's page;
a review's URL is exact, because a legacy GraphQL node id (``017:PullRequestReview1003843``)
carries the database id GitHub uses in ``#pullrequestreview-<id>`` anchors.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from ratified_rdf.sources.document import ParseError

PostKind = Literal["opening", "comment", "review", "review-comment"]

_LEGACY_ID = re.compile(r"^\d+:[A-Za-z]+?(\d+)$")
_FIXES = re.compile(
    r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?)\s*:?\s+((?:#\d+(?:\s*,\s*|\s+and\s+|\s+)?)+)",
    re.IGNORECASE,
)


class GitHubPost(BaseModel):
    """One post in a thread: the opening text, a comment, a review or a review comment."""

    model_config = ConfigDict(frozen=True)

    thread: int
    index: int
    """0 for the opening post, then in the order the archive lists them."""
    kind: PostKind
    author: str | None
    created: datetime
    body: str
    url: str
    reply_to: int | None = None
    """Index of the post this one answers (a review comment answers its review)."""
    review_state: str | None = None


class GitHubThread(BaseModel):
    """An issue or pull request with its posts."""

    model_config = ConfigDict(frozen=True)

    number: int
    kind: Literal["issue", "pull"]
    title: str
    url: str
    state: str
    author: str | None
    created: datetime
    closed: datetime | None = None
    merged: datetime | None = None
    merge_commit: str | None = None
    head_commit: str | None = None
    labels: tuple[str, ...] = ()
    fixes: tuple[int, ...] = ()
    """Issues this pull request says it fixes or closes."""
    posts: tuple[GitHubPost, ...] = ()


class GitHubArchive(BaseModel):
    """A whole archive."""

    model_config = ConfigDict(frozen=True)

    repository: str
    timestamp: datetime | None
    threads: tuple[GitHubThread, ...]


def read_archive(text: str | bytes) -> GitHubArchive:
    """Parse an ``archive.json``; a malformed thread is an error naming the thread."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ParseError(f"archive.json is not valid JSON ({error}).") from None
    if not isinstance(data, dict) or "issues" not in data or "pulls" not in data:
        raise ParseError("archive.json has no 'issues' and 'pulls': is it i-d-template's archive?")
    threads: list[GitHubThread] = []
    for kind, items in (("issue", data["issues"]), ("pull", data["pulls"])):
        for item in items:
            try:
                threads.append(_thread(kind, item))
            except (KeyError, TypeError, ValueError) as error:
                number = item.get("number", "?") if isinstance(item, dict) else "?"
                raise ParseError(
                    f"archive.json: {kind} #{number} is malformed ({error})."
                ) from None
    stamp = data.get("timestamp")
    return GitHubArchive(
        repository=str(data.get("repo", "")),
        timestamp=_date(stamp) if stamp else None,
        threads=tuple(sorted(threads, key=lambda t: t.number)),
    )


def fixed_issues(text: str) -> tuple[int, ...]:
    """Issue numbers a text says it fixes or closes ("Fixes #12", "closes #3, #4")."""
    found: list[int] = []
    for match in _FIXES.finditer(text or ""):
        found += [int(n) for n in re.findall(r"#(\d+)", match.group(1))]
    return tuple(dict.fromkeys(found))


def review_url(thread_url: str, node_id: str | None) -> str:
    """The review's anchor on its pull request page, when the node id reveals it."""
    if node_id:
        try:
            decoded = base64.b64decode(node_id + "=" * (-len(node_id) % 4)).decode("ascii")
        except (binascii.Error, UnicodeDecodeError):
            decoded = ""
        match = _LEGACY_ID.match(decoded)
        if match:
            return f"{thread_url}#pullrequestreview-{match.group(1)}"
    return thread_url


def _thread(kind: str, item: dict[str, Any]) -> GitHubThread:
    number = int(item["number"])
    url = str(item["url"])
    posts = [
        GitHubPost(
            thread=number,
            index=0,
            kind="opening",
            author=item.get("author"),
            created=_date(item["createdAt"]),
            body=item.get("body") or "",
            url=url,
        )
    ]
    for comment in item.get("comments") or []:
        posts.append(
            GitHubPost(
                thread=number,
                index=len(posts),
                kind="comment",
                author=comment.get("author"),
                created=_date(comment["createdAt"]),
                body=comment.get("body") or "",
                url=url,
                reply_to=0,
            )
        )
    for review in item.get("reviews") or []:
        review_index = len(posts)
        link = review_url(url, review.get("id"))
        posts.append(
            GitHubPost(
                thread=number,
                index=review_index,
                kind="review",
                author=review.get("author"),
                created=_date(review["createdAt"]),
                body=review.get("body") or "",
                url=link,
                reply_to=0,
                review_state=review.get("state"),
            )
        )
        for comment in review.get("comments") or []:
            posts.append(
                GitHubPost(
                    thread=number,
                    index=len(posts),
                    kind="review-comment",
                    author=review.get("author"),
                    created=_date(comment["createdAt"]),
                    body=comment.get("body") or "",
                    url=link,
                    reply_to=review_index,
                )
            )
    merge = item.get("mergeCommit") or {}
    return GitHubThread(
        number=number,
        kind="pull" if kind == "pull" else "issue",
        title=str(item.get("title") or ""),
        url=url,
        state=str(item.get("state") or ""),
        author=item.get("author"),
        created=_date(item["createdAt"]),
        closed=_date(item["closedAt"]) if item.get("closedAt") else None,
        merged=_date(item["mergedAt"]) if item.get("mergedAt") else None,
        merge_commit=merge.get("oid"),
        head_commit=item.get("headRefOid"),
        labels=tuple(str(label) for label in item.get("labels") or ()),
        fixes=fixed_issues(f"{item.get('title') or ''}\n{item.get('body') or ''}")
        if kind == "pull"
        else (),
        posts=tuple(posts),
    )


def _date(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
