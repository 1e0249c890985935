"""The archive.json reader refuses what is not an i-d-template archive with a ParseError that
names archive.json, and the thread where it knows it."""

from __future__ import annotations

import json

import pytest

from ratified_rdf.sources.document import ParseError
from ratified_rdf.sources.github_archive import read_archive

_THREAD = {"number": 7, "url": "https://github.com/x/y/pull/7", "createdAt": "2029-02-01T09:00Z"}


def _archive(**changes: object) -> bytes:
    return json.dumps({"issues": [], "pulls": [], **changes}).encode()


def test_a_well_formed_thread_is_read() -> None:
    archive = read_archive(
        _archive(
            pulls=[
                {
                    **_THREAD,
                    "title": "Fixes #3",
                    "mergeCommit": {"oid": "abc"},
                    "comments": None,
                    "reviews": [{"createdAt": "2029-02-02T09:00Z", "comments": []}],
                }
            ],
            timestamp="2029-03-01T00:00:00Z",
        )
    )
    (thread,) = archive.threads
    assert (thread.number, thread.merge_commit, thread.fixes) == (7, "abc", (3,))
    assert [p.kind for p in thread.posts] == ["opening", "review"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            _archive(pulls=[{**_THREAD, "comments": ["text"]}]),
            "pull #7 is malformed .*not an object",
        ),
        (_archive(pulls=[{**_THREAD, "reviews": 5}]), "pull #7 is malformed .*not an array"),
        (_archive(pulls=[{**_THREAD, "mergeCommit": "abc"}]), "pull #7 is malformed .*mergeCommit"),
        (_archive(pulls=[{**_THREAD, "createdAt": 20290201}]), "pull #7 is malformed .*not text"),
        (_archive(issues=["not a thread"]), r"issue #\? is malformed"),
        (
            b'{"issues": [{"number": 1e400, "url": "u", "createdAt": "x"}], "pulls": []}',
            r"issue #\? is malformed \(cannot convert float infinity",
        ),
        (_archive(issues=None), "'issues' is a null, not a list"),
        (_archive(timestamp=5), r"the timestamp \(a number\) is not an ISO 8601 date"),
        (_archive(timestamp="soon"), "the timestamp 'soon' is not an ISO 8601 date"),
        (_archive(repo=["x"]), "'repo' is an array"),
        (b'{"issues": [], "pulls": [], "repo": "\xff"}', "not valid JSON"),
        (b"[" * 100_000, "too deeply"),
    ],
)
def test_what_is_not_an_archive_is_a_parse_error_naming_it(data: bytes, message: str) -> None:
    with pytest.raises(ParseError, match=message) as caught:
        read_archive(data)
    assert "archive.json" in str(caught.value)
