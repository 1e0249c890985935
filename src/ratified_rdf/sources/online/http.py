"""A polite HTTP client: few requests at once, backs off when asked, caches what it fetched.

The client wraps a synchronous ``httpx.Client``. The build is synchronous from end to end (git
subprocesses, rdflib, pyoxigraph) and asks public services for a few dozen documents per draft,
so an event loop would buy nothing but a second way to call every function; the few places that
want parallel requests use :meth:`PoliteClient.get_many`, which runs them on threads. The
concurrency limit is a semaphore held around each request itself, not a pool size, so it holds
however many threads callers start.

Politeness, because the IETF's services are shared and free:

* at most ``concurrency`` requests in flight at once (2 by default);
* ``Retry-After`` on 429 and 503 is obeyed, in both its seconds and HTTP-date forms;
* other 5xx answers and transport errors (refused connections, timeouts) are retried with
  exponential backoff and jitter, a bounded number of times (4 attempts by default);
* every request carries a User-Agent naming this tool, and has timeouts;
* ``RATIFIED_ONLINE_BASE`` (an address such as ``http://127.0.0.1:8080``) sends every request
  for ``https://host/path`` to ``<base>/host/path`` instead: a mirror of the IETF's services,
  or a fake one in tests, with the command lines unchanged; answers are still cached under the
  address asked for;
* every successful answer is kept in an on-disk cache, keyed by its full URL, so a second build
  asks nothing it already knows. ``offline=True`` answers from that cache only and never opens a
  connection: offline builds must never touch the network.

``sleep``, the clock, the jitter source and the transport are injected so tests run instantly
against ``httpx.MockTransport``.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import random
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from ratified_rdf._version import __version__
from ratified_rdf.sources.git_repo import SourceError

DEFAULT_USER_AGENT = (
    f"ratified-rdf/{__version__} (builds a provenance graph of IETF drafts and RFCs; "
    f"cached and rate-limited) python-httpx/{httpx.__version__}"
)
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)

# The statuses whose Retry-After is honoured (RFC 9110 §10.2.3 names 503 and 3xx; RFC 6585 §4
# adds 429). Redirects are followed by httpx before we see them, so only these two matter.
_RETRY_AFTER_STATUSES = frozenset({429, 503})

ONLINE_BASE_ENV = "RATIFIED_ONLINE_BASE"
"""The environment variable naming a mirror every online request goes to (see the module)."""


def mirrored(url: str, base: str | None) -> str:
    """Where a request for ``url`` goes: ``url`` itself, or with a mirror ``base``,
    ``<base>/<host><path>?<query>``."""
    if not base:
        return url
    parsed = httpx.URL(url)
    query = f"?{parsed.query.decode('ascii')}" if parsed.query else ""
    return f"{base.rstrip('/')}/{parsed.host}{parsed.raw_path.decode('ascii').split('?')[0]}{query}"


class FetchError(SourceError):
    """A URL could not be fetched; the message names the URL and why.

    A subclass of :class:`SourceError` so the command line reports it like any other source that
    cannot be reached.
    """

    def __init__(self, url: str, reason: str, advice: str, status: int | None = None) -> None:
        self.url = url
        self.status = status
        self.reason = reason
        super().__init__(f"Fetching {url} failed: {reason}. {advice}")


class Fetched(BaseModel):
    """One answer: the body and status a URL gave, and when, from the network or the cache."""

    model_config = ConfigDict(frozen=True)

    url: str
    status: int
    content: bytes
    content_type: str | None = None
    fetched_at: datetime
    from_cache: bool = False

    @property
    def text(self) -> str:
        """The body decoded as UTF-8 (IETF services answer in UTF-8)."""
        return self.content.decode("utf-8", errors="replace")

    def parse_json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.content)


def _utcnow() -> datetime:
    return datetime.now(UTC)


def cache_key(url: str) -> str:
    """The file stem an answer for ``url`` is cached under."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


class ResponseCache:
    """Answers kept on disk: ``<sha256(url)>.body`` and ``<sha256(url)>.json`` (metadata).

    The metadata file is written last, so its presence means the entry is complete; both are
    written to a temporary name and renamed, so a crash or a concurrent writer never leaves half
    an entry behind.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def load(self, url: str) -> Fetched | None:
        """The cached answer for ``url``, or None."""
        stem = cache_key(url)
        meta_file = self.folder / f"{stem}.json"
        body_file = self.folder / f"{stem}.body"
        try:
            meta = json.loads(meta_file.read_text(encoding="utf-8"))
            content = body_file.read_bytes()
        except (FileNotFoundError, json.JSONDecodeError):
            return None
        if meta.get("url") != url:  # a hash collision, or a hand-edited entry: not ours
            return None
        return Fetched(
            url=url,
            status=meta["status"],
            content=content,
            content_type=meta.get("content_type"),
            fetched_at=datetime.fromisoformat(meta["fetched_at"]),
            from_cache=True,
        )

    def store(self, fetched: Fetched) -> None:
        """Keep ``fetched`` for later builds."""
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = cache_key(fetched.url)
        meta = {
            "url": fetched.url,
            "status": fetched.status,
            "content_type": fetched.content_type,
            "fetched_at": fetched.fetched_at.isoformat(),
        }
        _write_atomically(self.folder / f"{stem}.body", fetched.content)
        _write_atomically(
            self.folder / f"{stem}.json", json.dumps(meta, indent=2).encode("utf-8") + b"\n"
        )

    def forget(self, url: str) -> None:
        """Drop the entry for ``url``, if there is one."""
        stem = cache_key(url)
        for suffix in (".json", ".body"):  # metadata first: the entry stops counting at once
            (self.folder / f"{stem}{suffix}").unlink(missing_ok=True)


def _write_atomically(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def full_url(url: str, params: Mapping[str, str | int] | None = None) -> str:
    """``url`` with ``params`` merged into its query: the string answers are cached under."""
    return str(httpx.URL(url).copy_merge_params(params)) if params else str(httpx.URL(url))


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds, or None when it says nothing.

    The header is either a number of seconds or an HTTP-date (RFC 9110 §10.2.3); a date in the
    past means "now".
    """
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # HTTP-dates are GMT by definition
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


class PoliteClient:
    """GET requests that are cached, rate-limited and retried; see the module docstring."""

    def __init__(
        self,
        *,
        cache_dir: Path | None = None,
        max_age: timedelta | None = None,
        offline: bool = False,
        concurrency: int = 2,
        attempts: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        max_retry_after: float = 300.0,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        user_agent: str = DEFAULT_USER_AGENT,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], datetime] = _utcnow,
        jitter: Callable[[], float] = random.random,
        mirror: str | None = None,
    ) -> None:
        """Set the client up; nothing is fetched until :meth:`get`.

        ``cache_dir`` None keeps no cache (and then ``offline`` can answer nothing).
        ``max_age`` None means cached answers never go stale; when online, older ones are
        fetched again. Offline, any cached answer is used whatever its age, since there is no
        fresher one to be had. ``attempts`` counts the first try. ``backoff`` is the first retry's
        wait in seconds, doubled each time up to ``max_backoff``. A server asking (Retry-After)
        for a longer wait than ``max_retry_after`` seconds makes the fetch fail rather than hang
        the build. ``mirror`` is where requests go instead of the services' own hosts (default:
        ``$RATIFIED_ONLINE_BASE``, else none).
        """
        if concurrency < 1 or attempts < 1:
            raise ValueError("concurrency and attempts must both be at least 1")
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self.max_age = max_age
        self.offline = offline
        self.mirror = mirror if mirror is not None else os.environ.get(ONLINE_BASE_ENV) or None
        self.concurrency = concurrency
        self.attempts = attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self._sleep = sleep
        self._clock = clock
        self._jitter = jitter
        self._slots = threading.BoundedSemaphore(concurrency)
        self._http = httpx.Client(
            headers={"User-Agent": user_agent},
            timeout=timeout,
            transport=transport,
            follow_redirects=True,
        )

    def __enter__(self) -> PoliteClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def get(
        self,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        not_found_advice: str = "Check that the address is right.",
        follow_redirects: bool = True,
    ) -> Fetched:
        """Fetch ``url`` (with ``params`` added to its query), from the cache when it can.

        Raises :class:`FetchError` when the URL cannot be fetched: offline and not cached, a
        4xx answer, 5xx or transport errors on every attempt, or a server asking to wait longer
        than ``max_retry_after``. ``not_found_advice`` ends the message for a 404, so callers
        can say what was probably wrong ("Check the draft name."). Only 2xx answers count as
        success; with ``follow_redirects`` False a 3xx is a failure too.
        """
        full = full_url(url, params)
        cached = self.cache.load(full) if self.cache else None
        if cached is not None and (self.offline or self._fresh(cached)):
            return cached
        if self.offline:
            where = f"the cache at {self.cache.folder}" if self.cache else "no cache"
            raise FetchError(
                full,
                f"this build is offline and {where} holds no copy",
                "Run the same build once online to fill the cache, or build without offline.",
            )
        fetched = self._fetch(full, not_found_advice, follow_redirects)
        if self.cache is not None:
            self.cache.store(fetched)
        return fetched

    def get_json(self, url: str, **kwargs: Any) -> Any:
        """:meth:`get`, parsed as JSON; a body that is not JSON is a :class:`FetchError`."""
        fetched = self.get(url, **kwargs)
        try:
            return fetched.parse_json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            if self.cache is not None:
                self.cache.forget(fetched.url)
            raise FetchError(
                fetched.url,
                f"the answer is not JSON (Content-Type {fetched.content_type or 'unknown'})",
                "The service may be down for maintenance; try again later.",
                fetched.status,
            ) from None

    def get_many(self, urls: Iterable[str], **kwargs: Any) -> list[Fetched]:
        """:meth:`get` every URL, ``concurrency`` at a time, answers in the order asked."""
        urls = list(urls)
        if len(urls) <= 1:
            return [self.get(u, **kwargs) for u in urls]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda u: self.get(u, **kwargs), urls))

    def forget(self, url: str) -> None:
        """Drop ``url``'s cached answer, e.g. when its content proved unusable."""
        if self.cache is not None:
            self.cache.forget(url)

    def _fresh(self, cached: Fetched) -> bool:
        return self.max_age is None or self._clock() - cached.fetched_at <= self.max_age

    def _backoff_delay(self, retry: int) -> float:
        """The wait before retry number ``retry`` (1-based): doubling, with "equal jitter".

        Half the wait is fixed and half random, so clients that failed together do not all come
        back at the same moment, yet every retry still waits at least half the nominal time.
        """
        nominal = min(self.max_backoff, self.backoff * 2 ** (retry - 1))
        return nominal / 2 + nominal / 2 * self._jitter()

    def _fetch(self, url: str, not_found_advice: str, follow_redirects: bool) -> Fetched:
        for attempt in range(1, self.attempts + 1):
            last = attempt == self.attempts
            try:
                # The slot is held only while the request is on the wire, never while waiting
                # to retry, so one struggling URL does not starve the others.
                with self._slots:
                    response = self._http.get(
                        mirrored(url, self.mirror), follow_redirects=follow_redirects
                    )
            except httpx.TransportError as error:
                if last:
                    raise FetchError(
                        url,
                        f"{type(error).__name__}: {error or 'no detail'} "
                        f"(after {self.attempts} attempts)",
                        "Check the network connection, or build offline from the cache.",
                    ) from None
                self._sleep(self._backoff_delay(attempt))
                continue

            status = response.status_code
            if 200 <= status < 300:
                return Fetched(
                    url=url,
                    status=status,
                    content=response.content,
                    content_type=response.headers.get("content-type"),
                    fetched_at=self._clock(),
                )
            reason = f"{status} {httpx.codes.get_reason_phrase(status) or 'Unknown'}"
            if status == 404:
                raise FetchError(url, reason, not_found_advice, status)
            if status not in _RETRY_AFTER_STATUSES and status < 500:
                raise FetchError(url, reason, _advice_for(status, response), status)

            wait = None
            if status in _RETRY_AFTER_STATUSES:
                wait = retry_after_seconds(response.headers.get("retry-after"), self._clock())
            if wait is not None and wait > self.max_retry_after:
                raise FetchError(
                    url,
                    f"{reason}, and the server asks to wait {wait:.0f} seconds",
                    "It is rate-limiting or down for maintenance; try again later.",
                    status,
                )
            if last:
                raise FetchError(
                    url,
                    f"{reason} (after {self.attempts} attempts)",
                    "The server kept failing; try again later.",
                    status,
                )
            self._sleep(wait if wait is not None else self._backoff_delay(attempt))
        raise AssertionError("unreachable: the last attempt always returns or raises")


def _advice_for(status: int, response: httpx.Response) -> str:
    if 300 <= status < 400:
        target = response.headers.get("location", "somewhere else")
        return f"The server redirected to {target} instead of answering."
    if status in (401, 403):
        return "The service refuses anonymous requests for this; it may be blocking robots."
    return "The request was refused as it stands; check the address and its parameters."
