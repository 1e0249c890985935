"""Online sources against ``httpx.MockTransport`` only: no test touches the network or sleeps.

The Datatracker fixtures in tests/fixtures/datatracker/ describe a fictional draft,
draft-ietf-pigeon-transport, shaped like the real Tastypie answers.
"""

from __future__ import annotations

import io
import json
import tarfile
import threading
import time
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import httpx
import pytest

from ratified_rdf.sources.online import (
    DatatrackerClient,
    DraftFacts,
    FactsRecordError,
    FetchError,
    PoliteClient,
    Revision,
    download_mbox,
    extract_mboxes,
    read_facts_record,
    write_facts_record,
)
from ratified_rdf.sources.online.datatracker import facts_record_path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "datatracker"
DRAFT = "draft-ietf-pigeon-transport"
NOW = datetime(2031, 5, 1, 12, 0, tzinfo=UTC)
URL = "https://example.org/thing"

# (path, query) → fixture: exactly the requests the Datatracker client is expected to make.
ROUTES = {
    (f"/api/v1/doc/document/{DRAFT}/", ()): "document-draft-ietf-pigeon-transport.json",
    (
        "/api/v1/doc/newrevisiondocevent/",
        (("doc__name", DRAFT), ("limit", "3")),
    ): "newrevisiondocevent-page1.json",
    (
        "/api/v1/doc/newrevisiondocevent/",
        (("doc__name", DRAFT), ("limit", "3"), ("offset", "3")),
    ): "newrevisiondocevent-page2.json",
    (
        "/api/v1/doc/relateddocument/",
        (("limit", "3"), ("relationship", "became_rfc"), ("source__name", DRAFT)),
    ): "relateddocument-became_rfc.json",
    (
        "/api/v1/doc/relateddocument/",
        (("limit", "3"), ("relationship", "replaces"), ("source__name", DRAFT)),
    ): "relateddocument-replaces.json",
    ("/api/v1/group/group/2999/", ()): "group-2999.json",
    (
        "/api/v1/group/role/",
        (("group", "2999"), ("limit", "3"), ("name", "chair")),
    ): "role-2999-chair.json",
    (
        "/api/v1/group/role/",
        (("group", "2999"), ("limit", "3"), ("name", "ad")),
    ): "role-2999-ad.json",
    (
        "/api/v1/group/role/",
        (("group", "1999"), ("limit", "3"), ("name", "ad")),
    ): "role-1999-ad.json",
    **{
        (f"/api/v1/person/person/{n}/", ()): f"person-{n}.json"
        for n in (120001, 120002, 120003, 120004)
    },
}


class Recorder:
    """A MockTransport handler that records requests and answers from a script or routes."""

    def __init__(self, answers: list[httpx.Response | Exception] | None = None) -> None:
        self.answers = list(answers or [])
        self.requests: list[httpx.Request] = []
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            self.requests.append(request)
            answer = self.answers.pop(0) if self.answers else httpx.Response(200, text="ok")
        if isinstance(answer, Exception):
            raise answer
        return answer

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def datatracker_handler(request: httpx.Request) -> httpx.Response:
    key = (request.url.path, tuple(sorted(request.url.params.multi_items())))
    name = ROUTES.get(key)
    if name is None:
        return httpx.Response(404, text="not found")
    return httpx.Response(
        200, content=(FIXTURES / name).read_bytes(), headers={"content-type": "application/json"}
    )


def make_client(transport: httpx.BaseTransport, sleeps: list[float], **kwargs) -> PoliteClient:
    kwargs.setdefault("clock", lambda: NOW)
    kwargs.setdefault("jitter", lambda: 1.0)
    return PoliteClient(transport=transport, sleep=sleeps.append, **kwargs)


@pytest.fixture
def pigeon_facts() -> DraftFacts:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return datatracker_handler(request)

    with make_client(httpx.MockTransport(handler), []) as client:
        facts = DatatrackerClient(client, page_size=3).draft_facts(DRAFT)
    assert any("offset=3" in url for url in seen), "the second revision page was never asked"
    return facts


def test_draft_facts_are_assembled_across_pages(pigeon_facts: DraftFacts) -> None:
    facts = pigeon_facts
    assert facts.name == DRAFT
    assert facts.title == "The Pigeon Transport Protocol"
    # Five revisions from two pages, oldest first although the API lists newest first.
    assert [r.rev for r in facts.revisions] == ["00", "01", "02", "03", "04"]
    assert facts.revisions[0] == Revision("00", datetime(2029, 1, 10, 10, 0, tzinfo=UTC))
    assert facts.revisions[2].time == datetime(2029, 9, 1, 16, 45, 12, tzinfo=UTC)
    assert facts.became_rfc == 9999
    # One target is a document path, the other an older docalias path.
    assert facts.replaces == ("draft-alice-pigeon-carriage", "draft-example-pigeon")
    assert facts.group == "pigeon"
    assert facts.chairs == ("Alice Example", "Bob Example")
    # The group has no "ad" role of its own, so the parent area's directors answer.
    assert facts.area_directors == ("Carol Example", "Émile Example")
    assert (
        "https://datatracker.ietf.org/api/v1/doc/newrevisiondocevent/"
        f"?doc__name={DRAFT}&limit=3&offset=3" in facts.fetched_from
    )
    assert "https://datatracker.ietf.org/api/v1/person/person/120004/" in facts.fetched_from
    assert len(facts.fetched_from) == len(set(facts.fetched_from)) == 13


def test_retry_after_in_seconds_is_obeyed_then_the_fetch_succeeds() -> None:
    recorder = Recorder(
        [httpx.Response(429, headers={"Retry-After": "7"}), httpx.Response(200, text="fine")]
    )
    sleeps: list[float] = []
    with make_client(recorder.transport, sleeps) as client:
        fetched = client.get(URL)
    assert fetched.text == "fine"
    assert sleeps == [7.0]
    assert len(recorder.requests) == 2


def test_retry_after_as_an_http_date_is_obeyed() -> None:
    later = format_datetime(NOW + timedelta(seconds=30), usegmt=True)
    recorder = Recorder(
        [httpx.Response(503, headers={"Retry-After": later}), httpx.Response(200, text="fine")]
    )
    sleeps: list[float] = []
    with make_client(recorder.transport, sleeps) as client:
        assert client.get(URL).text == "fine"
    assert sleeps == [30.0]


def test_a_retry_after_beyond_the_limit_fails_at_once() -> None:
    recorder = Recorder([httpx.Response(503, headers={"Retry-After": "3600"})])
    sleeps: list[float] = []
    with (
        make_client(recorder.transport, sleeps, max_retry_after=60) as client,
        pytest.raises(FetchError, match="asks to wait 3600 seconds"),
    ):
        client.get(URL)
    assert sleeps == [] and len(recorder.requests) == 1


@pytest.mark.parametrize(("jitter", "expected"), [(1.0, [1.0, 2.0, 4.0]), (0.0, [0.5, 1.0, 2.0])])
def test_server_errors_back_off_then_fail_naming_the_url(
    jitter: float, expected: list[float]
) -> None:
    recorder = Recorder([httpx.Response(500)] * 10)
    sleeps: list[float] = []
    with (
        make_client(recorder.transport, sleeps, jitter=lambda: jitter) as client,
        pytest.raises(FetchError) as caught,
    ):
        client.get(URL)
    assert len(recorder.requests) == 4  # the default bound
    assert sleeps == expected
    message = str(caught.value)
    assert message.startswith(f"Fetching {URL} failed: 500 Internal Server Error")
    assert "after 4 attempts" in message and message.endswith(".")
    assert caught.value.status == 500


def test_transport_errors_are_retried() -> None:
    recorder = Recorder(
        [httpx.ConnectError("refused"), httpx.ReadTimeout("slow"), httpx.Response(200, text="ok")]
    )
    sleeps: list[float] = []
    with make_client(recorder.transport, sleeps) as client:
        assert client.get(URL).text == "ok"
    assert sleeps == [1.0, 2.0]


def test_transport_errors_on_every_attempt_name_the_error() -> None:
    recorder = Recorder([httpx.ConnectError("connection refused")] * 4)
    with (
        make_client(recorder.transport, [], attempts=2) as client,
        pytest.raises(FetchError, match=r"failed: ConnectError: connection refused"),
    ):
        client.get(URL)
    assert len(recorder.requests) == 2


def test_a_missing_draft_is_a_sentence_and_is_not_retried() -> None:
    recorder = Recorder([httpx.Response(404)])
    sleeps: list[float] = []
    with (
        make_client(recorder.transport, sleeps) as client,
        pytest.raises(FetchError) as caught,
    ):
        DatatrackerClient(client).draft_facts("draft-ietf-pigeon-nonexistent")
    assert str(caught.value) == (
        "Fetching https://datatracker.ietf.org/api/v1/doc/document/draft-ietf-pigeon-nonexistent/"
        " failed: 404 Not Found. Check the draft name: the Datatracker knows no document called "
        "draft-ietf-pigeon-nonexistent."
    )
    assert len(recorder.requests) == 1 and sleeps == []


def test_no_more_than_two_requests_are_ever_in_flight() -> None:
    lock = threading.Lock()
    in_flight = 0
    peak = 0
    overlapped = threading.Event()

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, peak
        with lock:
            in_flight += 1
            peak = max(peak, in_flight)
            if in_flight == 2:
                overlapped.set()
        # The first request waits for a second (however slow the threads are to start), so
        # two are in flight for sure; then each is held open so that a third would show.
        overlapped.wait(timeout=120)  # a hang guard: the second comes
        time.sleep(0.05)
        with lock:
            in_flight -= 1
        return httpx.Response(200, text=request.url.path)

    with make_client(httpx.MockTransport(handler), []) as client:
        # Eight threads of our own, not get_many: only the client's limit can hold them back.
        threads = [threading.Thread(target=client.get, args=(f"{URL}/{n}",)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        ordered = client.get_many(f"{URL}/many/{n}" for n in range(5))
    assert peak == 2
    assert [f.text for f in ordered] == [f"/thing/many/{n}" for n in range(5)]


def test_a_cache_hit_makes_no_request(tmp_path: Path) -> None:
    recorder = Recorder([httpx.Response(200, text="first"), httpx.Response(200, text="second")])
    with make_client(recorder.transport, [], cache_dir=tmp_path) as client:
        first = client.get(URL, params={"a": 1})
        again = client.get(URL, params={"a": 1})
    # A later build with a fresh client reads the same cache.
    with make_client(recorder.transport, [], cache_dir=tmp_path) as later:
        third = later.get(URL + "?a=1")
    assert len(recorder.requests) == 1
    assert (first.from_cache, again.from_cache, third.from_cache) == (False, True, True)
    assert again.text == third.text == "first"
    assert again.status == 200 and again.fetched_at == NOW


def test_a_stale_cache_entry_is_fetched_again(tmp_path: Path) -> None:
    recorder = Recorder([httpx.Response(200, text="old"), httpx.Response(200, text="new")])
    with make_client(recorder.transport, [], cache_dir=tmp_path) as client:
        client.get(URL)
    later = NOW + timedelta(days=2)
    with make_client(
        recorder.transport, [], cache_dir=tmp_path, max_age=timedelta(days=1), clock=lambda: later
    ) as client:
        assert client.get(URL).text == "new"
    assert len(recorder.requests) == 2


def test_offline_mode_raises_without_touching_the_transport(tmp_path: Path) -> None:
    recorder = Recorder()
    with (
        make_client(recorder.transport, [], cache_dir=tmp_path, offline=True) as client,
        pytest.raises(FetchError) as caught,
    ):
        client.get(URL)
    assert recorder.requests == []
    assert str(caught.value).startswith(f"Fetching {URL} failed: this build is offline")


def test_offline_mode_answers_from_the_cache(tmp_path: Path) -> None:
    recorder = Recorder([httpx.Response(200, text="cached")])
    with make_client(recorder.transport, [], cache_dir=tmp_path) as client:
        client.get(URL)
    offline_calls = Recorder()
    later = NOW + timedelta(days=365)
    with make_client(
        offline_calls.transport,
        [],
        cache_dir=tmp_path,
        offline=True,
        max_age=timedelta(days=1),  # stale, but offline there is nothing fresher
        clock=lambda: later,
    ) as client:
        assert client.get(URL).text == "cached"
    assert offline_calls.requests == []


def test_requests_say_who_is_asking() -> None:
    recorder = Recorder()
    with make_client(recorder.transport, []) as client:
        client.get(URL)
    assert recorder.requests[0].headers["user-agent"].startswith("ratified-rdf/")


def test_facts_record_round_trip(pigeon_facts: DraftFacts, tmp_path: Path) -> None:
    path = write_facts_record(pigeon_facts, tmp_path / "records" / "pigeon")
    assert path == tmp_path / "records" / "pigeon" / "datatracker" / f"{DRAFT}.json"
    assert path == facts_record_path(tmp_path / "records" / "pigeon", DRAFT)
    assert read_facts_record(path) == pigeon_facts
    data = json.loads(path.read_text(encoding="utf-8"))
    assert data["record"] == "datatracker-draft-facts" and data["version"] == 1
    assert data["revisions"][0] == ["00", "2029-01-10T10:00:00Z"]
    first = path.read_bytes()
    write_facts_record(read_facts_record(path), tmp_path / "records" / "pigeon")
    assert path.read_bytes() == first  # re-writing the same facts changes nothing


def test_a_malformed_facts_record_is_refused_with_a_sentence(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(
        json.dumps({"record": "datatracker-draft-facts", "version": 1, "name": "pigeon"}),
        encoding="utf-8",
    )
    with pytest.raises(FactsRecordError, match=r"does not describe a draft correctly: name:"):
        read_facts_record(path)
    with pytest.raises(FactsRecordError, match="There is no Datatracker record"):
        read_facts_record(tmp_path / "missing.json")


def _mbox_export() -> tuple[bytes, bytes]:
    mbox = (
        b"From alice@example.com Tue Jan 10 10:00:00 2029\n"
        b"From: Alice Example <alice@example.com>\nSubject: Pigeons\n\nCoo.\n\n"
    )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("mbox0101_abcde/pigeon/2029-01.mbox")
        info.size = len(mbox)
        tar.addfile(info, io.BytesIO(mbox))
    return buffer.getvalue(), mbox


def test_mbox_download_writes_the_bytes_it_received(tmp_path: Path) -> None:
    archive, mbox = _mbox_export()
    recorder = Recorder(
        [httpx.Response(200, content=archive, headers={"content-type": "application/x-tar-gz"})]
    )
    with make_client(recorder.transport, []) as client:
        path = download_mbox(client, "pigeon", date(2029, 1, 1), date(2029, 2, 1), tmp_path)
    assert path == tmp_path / "pigeon-2029-01-01-2029-02-01.tar.gz"
    assert path.read_bytes() == archive
    request = recorder.requests[0]
    assert request.url.host == "mailarchive.ietf.org"
    assert request.url.path == "/arch/export/mbox/"
    assert dict(request.url.params) == {
        "email_list": "pigeon",
        "start_date": "2029-01-01",
        "end_date": "2029-02-01",
    }
    [extracted] = extract_mboxes(path, tmp_path / "mbox")
    assert extracted.name == "2029-01.mbox" and extracted.read_bytes() == mbox


def test_a_refused_export_asks_for_a_shorter_range(tmp_path: Path) -> None:
    recorder = Recorder([httpx.Response(302, headers={"Location": "/arch/search/?q="})])
    with (
        make_client(recorder.transport, [], cache_dir=tmp_path / "cache") as client,
        pytest.raises(FetchError, match="Ask for a shorter date range"),
    ):
        download_mbox(client, "pigeon", date(2029, 1, 1), date(2030, 1, 1), tmp_path)
    assert len(recorder.requests) == 1  # a refusal is not retried
    assert list(tmp_path.glob("*.tar.gz")) == []


def test_an_export_that_is_not_gzip_is_refused_and_not_kept(tmp_path: Path) -> None:
    recorder = Recorder([httpx.Response(200, text="<html>notice</html>")] * 2)
    with make_client(recorder.transport, [], cache_dir=tmp_path / "cache") as client:
        for _ in range(2):  # the bad answer must not be served from the cache the second time
            with pytest.raises(FetchError, match="not a gzip archive"):
                download_mbox(client, "pigeon", date(2029, 1, 1), date(2029, 2, 1), tmp_path)
    assert len(recorder.requests) == 2
