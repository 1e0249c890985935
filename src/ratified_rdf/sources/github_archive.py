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
    review_commit: str | None = None
    """For a review comment: the (abbreviated) commit its review was made on."""
    diff_position: int | None = None
    """For a review comment: its line's position in that commit's pull request diff (GitHub's
    ``originalPosition``: 1 is the line below the file's first ``@@`` header)."""


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
    merged_by: str | None = None
    """The login that merged a pull request (``mergedBy``)."""
    merge_commit: str | None = None
    head_commit: str | None = None
    base_commit: str | None = None
    """The commit a pull request's diff is taken from (``baseRefOid``)."""
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
    """Parse an ``archive.json``; anything malformed is a :class:`ParseError` naming
    ``archive.json`` and, inside a thread, the thread."""
    try:
        data = json.loads(text)
    except ValueError as error:  # JSONDecodeError, bytes that are not UTF-8, a 5,000-digit int
        raise ParseError(f"archive.json is not valid JSON ({str(error)[:200]}).") from None
    except RecursionError:
        raise ParseError(
            "archive.json nests arrays or objects too deeply to be read; it is not an "
            "i-d-template archive."
        ) from None
    if not isinstance(data, dict) or "issues" not in data or "pulls" not in data:
        raise ParseError("archive.json has no 'issues' and 'pulls': is it i-d-template's archive?")
    threads: list[GitHubThread] = []
    for kind, key in (("issue", "issues"), ("pull", "pulls")):
        items = data[key]
        if not isinstance(items, list):
            raise ParseError(
                f"archive.json: '{key}' is a {_json_type(items)}, not a list of threads."
            )
        for item in items:
            try:
                threads.append(_thread(kind, item))
            except (KeyError, TypeError, ValueError, OverflowError, RecursionError) as error:
                # RecursionError: str() of a value nested almost as deep as json.loads allows.
                raise ParseError(
                    f"archive.json: {kind} #{_shown_number(item)} is malformed "
                    f"({str(error)[:300]})."
                ) from None
    stamp = data.get("timestamp")
    try:
        timestamp = _date(stamp) if stamp else None
    except (TypeError, ValueError):
        shown = repr(stamp[:60]) if isinstance(stamp, str) else f"(a {_json_type(stamp)})"
        raise ParseError(f"archive.json: the timestamp {shown} is not an ISO 8601 date.") from None
    repository = data.get("repo", "")
    if isinstance(repository, dict | list):
        raise ParseError(f"archive.json: 'repo' is an {_json_type(repository)}, not a name.")
    return GitHubArchive(
        repository=str(repository),
        timestamp=timestamp,
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


def _json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    names: dict[type, str] = {dict: "object", list: "array", str: "string"}
    return names.get(type(value), type(value).__name__)


def _shown_number(item: object) -> str:
    """A thread's number for a message: ``?`` when it has none that can be shown (a huge int
    would not even convert to text)."""
    number = item.get("number") if isinstance(item, dict) else None
    if isinstance(number, int) and not isinstance(number, bool) and abs(number) < 10**18:
        return str(number)
    if isinstance(number, str) and len(number) <= 20:
        return number
    return "?"


def _objects(value: object, what: str) -> list[dict[str, Any]]:
    """A list of JSON objects (``null`` is none); anything else is a TypeError naming it."""
    if not value:  # null, or an empty value of another type, as the archive never writes
        return []
    if not isinstance(value, list):
        raise TypeError(f"{what} is a {_json_type(value)}, not an array")
    for entry in value:
        if not isinstance(entry, dict):
            raise TypeError(f"an entry of {what} is a {_json_type(entry)}, not an object")
    return value


def _thread(kind: str, item: object) -> GitHubThread:
    if not isinstance(item, dict):
        raise TypeError(f"the thread is a {_json_type(item)}, not an object")
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
    for comment in _objects(item.get("comments"), "comments"):
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
    for review in _objects(item.get("reviews"), "reviews"):
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
        commit = review.get("commit")
        reviewed = commit if isinstance(commit, dict) else {}
        for comment in _objects(review.get("comments"), "a review's comments"):
            position = comment.get("originalPosition")
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
                    review_commit=reviewed.get("abbreviatedOid") or reviewed.get("oid"),
                    diff_position=position if isinstance(position, int) else None,
                )
            )
    merge = item.get("mergeCommit") or {}
    if not isinstance(merge, dict):
        raise TypeError(f"mergeCommit is a {_json_type(merge)}, not an object")
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
        merged_by=item["mergedBy"] if isinstance(item.get("mergedBy"), str) else None,
        merge_commit=merge.get("oid"),
        head_commit=item.get("headRefOid"),
        base_commit=item.get("baseRefOid"),
        labels=tuple(str(label) for label in item.get("labels") or ()),
        fixes=fixed_issues(f"{item.get('title') or ''}\n{item.get('body') or ''}")
        if kind == "pull"
        else (),
        posts=tuple(posts),
    )


def _date(value: object) -> datetime:
    """An ISO 8601 moment; a value that is not text is a TypeError."""
    if not isinstance(value, str):
        raise TypeError(f"a date is a {_json_type(value)}, not text")
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
