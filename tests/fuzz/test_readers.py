"""Hostile input to every reader: it parses, or it raises the error the reader documents, naming
the record; it never crashes, hangs, expands entities, or reads a file the input names.

Three kinds of test per reader: a Hypothesis property over generated documents (grammar-based,
plus edits of the fixture files), hand-written hostile cases (billion laughs, XXE, broken MIME,
truncated JSON …), and the pathological inputs of ``harness.PATHOLOGICAL``, each stretched to
100 kB and bounded in time. Known bugs are ``xfail(strict=True)`` with their ``KNOWN_BUGS`` id.
The long form of all this is ``python -m benchmarks.fuzz``.
"""

from __future__ import annotations

import gzip
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ratified_rdf.records.manifest import ManifestError, load_manifest
from ratified_rdf.sources.document import ParseError
from ratified_rdf.sources.github_archive import read_archive
from ratified_rdf.sources.kramdown import parse_kramdown
from ratified_rdf.sources.mail import MailArchiveError, read_mailman_text, read_mbox
from ratified_rdf.sources.xml2rfc import parse_xml2rfc
from tests.fuzz import strategies as fs
from tests.fuzz.harness import (
    BOUND_S,
    PATHOLOGICAL,
    READERS,
    SECRET,
    STRETCH,
    Outcome,
    Pathological,
    Verdict,
    Worker,
    document_problems,
    known,
    observe,
    secret_url,
    seed_files,
)

# Deterministic examples (derandomize) and no example database: a stray .hypothesis folder in
# the checkout helps nobody, and the strict xfails below need the same examples every run.
# too_slow and data_too_large are suppressed because the strategies build whole documents:
# generating them is slower than the health check expects, not the code under test. No
# deadline: each call is already bounded by the harness (a hang is a bug, not a slow example).
SHORT = settings(
    max_examples=40,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

XFAIL_PROPERTY = settings(SHORT, phases=[Phase.explicit, Phase.reuse, Phase.generate])
"""For properties a known bug breaks: stop at the first failing example, do not shrink it."""

SECRET_URL = secret_url()
INPUTS = fs.reader_inputs(SECRET_URL)


def allowed(reader: str, data: bytes) -> Outcome:
    """Run ``reader`` on ``data`` and fail on a bug (a crash, hang or broken invariant)."""
    outcome = READERS[reader].run(data)
    assert outcome.verdict is not Verdict.BUG, outcome.describe(data)
    return outcome


# ---------------------------------------------------------------------------- properties


@SHORT
@given(INPUTS["kramdown"])
def test_kramdown_reads_or_refuses_any_document(data: bytes) -> None:
    allowed("kramdown", data)


@SHORT
@given(INPUTS["rfc_text"])
def test_rfc_text_reads_or_refuses_any_document(data: bytes) -> None:
    allowed("rfc_text", data)


def _xml_outcome(data: bytes | str) -> Outcome:
    """The xml2rfc reader observed on bytes or text (the secret must never come back)."""
    reader = READERS["xml2rfc"]
    return observe(
        lambda: parse_xml2rfc(data),
        documented=reader.documented,
        bound=BOUND_S,
        check_result=lambda result: document_problems(result, len(data)),
        check_error=lambda error: ["the error repeats the secret"] if SECRET in str(error) else [],
    )


@SHORT
@given(INPUTS["xml2rfc"])
def test_xml2rfc_reads_or_refuses_any_document_and_never_reads_files(data: bytes) -> None:
    outcome = _xml_outcome(data)
    assert outcome.verdict is not Verdict.BUG, outcome.describe(data)


@SHORT
@given(INPUTS["github_archive"])
def test_github_archive_reads_or_refuses_hostile_values(data: bytes) -> None:
    allowed("github_archive", data)


@SHORT
@given(fs.archive_bytes(fs.wrongly_typed_archives()))
def test_github_archive_refuses_wrong_json_types_with_a_parse_error(data: bytes) -> None:
    allowed("github_archive", data)


@SHORT
@given(INPUTS["mbox"])
def test_mbox_reads_every_entry_or_reports_it(data: bytes) -> None:
    allowed("mbox", data)


@SHORT
@given(INPUTS["mailman"])
def test_mailman_text_reads_every_entry_or_reports_it(data: bytes) -> None:
    allowed("mailman", data)


@SHORT
@given(INPUTS["manifest"])
def test_manifest_loads_or_names_the_file_and_field(data: bytes) -> None:
    allowed("manifest", data)


@SHORT
@given(INPUTS["people"])
def test_people_overrides_load_or_name_the_file_and_field(data: bytes) -> None:
    allowed("people", data)


@SHORT
@given(fs.as_bytes(fs.manifests()))
def test_manifest_in_another_encoding_is_a_manifest_error(data: bytes) -> None:
    allowed("manifest", data)


def test_every_seed_file_is_read_without_a_bug() -> None:
    for reader, files in seed_files().items():
        for file in files:
            allowed(reader, file.read_bytes())


# ---------------------------------------------------------------------------- pathological


@pytest.fixture(scope="module")
def worker() -> Iterator[Worker]:
    """A child process for inputs that may crash the one they run in."""
    child = Worker()
    try:
        yield child
    finally:
        child.close()


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            case,
            id=case.id,
            marks=[pytest.mark.xfail(strict=True, reason=known(case.bug))] if case.bug else [],
        )
        for case in PATHOLOGICAL
        if case.ci
    ],
)
def test_pathological_input_is_read_in_bounded_time(
    case: Pathological, request: pytest.FixtureRequest
) -> None:
    data = case.build(STRETCH)
    if case.isolate:  # it may crash the process: run it in a worker
        outcome = request.getfixturevalue("worker").run(case.reader, data, case.bound)
    else:
        outcome = READERS[case.reader].run(data, bound=case.bound)
    assert outcome.verdict is not Verdict.BUG, outcome.describe(data)


# ---------------------------------------------------------------------------- kramdown-rfc

_MIDDLE = "\n--- middle\n\n# Scope\n\nText.\n"


def _yaml_bomb(depth: int) -> str:
    """A YAML header whose title is ten aliases of ten aliases … ``depth`` levels deep."""
    lines = ["---", "l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, depth + 1)]
    lines += [f"title: *l{depth}", "---"]
    return "\n".join(lines) + _MIDDLE


def test_kramdown_yaml_aliases_are_refused_even_without_expansion() -> None:
    # Real front matter never uses anchors; refusing them all is simpler than proving a
    # particular use harmless.
    with pytest.raises(ParseError, match=r"anchor \(&\) or alias \(\*\)"):
        parse_kramdown(_yaml_bomb(1))


@pytest.mark.parametrize("depth", [5, 9])
def test_kramdown_yaml_billion_laughs_is_refused_not_expanded(depth: int) -> None:
    # Depth 5 is 100,000 "lol"s from 400 bytes; depth 9 is the real bomb.
    # Expanded, depth 9 would be 10^9 "lol"s: the harness's bound (allowed) ends that as a bug.
    outcome = allowed("kramdown", _yaml_bomb(depth).encode())
    assert outcome.verdict is Verdict.ERROR, outcome.describe(_yaml_bomb(depth))


@pytest.mark.parametrize("depth", [3000, 30_000])
def test_kramdown_deeply_nested_yaml_header_does_not_crash_the_process(
    worker: Worker, depth: int
) -> None:
    # 60 kB of brackets (under the header size limit): the C loader used to recurse per level
    # and overflow the C stack, killing the process; the reader now stops at 50 levels.
    text = "---\ntitle: " + "[" * depth + "]" * depth + "\n---" + _MIDDLE
    outcome = worker.run("kramdown", text.encode(), bound=BOUND_S)
    assert outcome.verdict is Verdict.ERROR, outcome.describe(text)
    assert "more than 50 deep" in outcome.detail


def test_kramdown_yaml_header_over_the_size_limit_is_refused() -> None:
    text = "---\ntitle: " + "[" * 50_000 + "]" * 50_000 + "\n---" + _MIDDLE
    with pytest.raises(ParseError, match="over the limit"):
        parse_kramdown(text)


def test_kramdown_impossible_yaml_date_is_ignored() -> None:
    # Only the title, docname and authors are read; a date is kept as the text written.
    document = parse_kramdown("---\ntitle: Pigeons\ndate: 2017-02-30\n---" + _MIDDLE)
    assert document.title == "Pigeons"


def test_kramdown_yaml_number_too_long_for_int_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match="cannot be read"):
        parse_kramdown("---\ntitle: " + "9" * 5000 + "\n---" + _MIDDLE)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n\n\n",
        "---\n",
        "---\ntitle: [unclosed\n---" + _MIDDLE,
        "---\n- a list\n- not a mapping\n---" + _MIDDLE,
        "---\n!!python/object:os.system ls\n---" + _MIDDLE,
        "---\ntitle: !!binary aGVsbG8=\n---" + _MIDDLE,
        "```\n# not a heading\n" + _MIDDLE,
        "# a {#x}{: numbered=false}\n## b {: unnumbered}\n###### c\n# \u202e\x00\n",
        "%%## B\n{: #x}\n\n--- back\n\n# Z\n--- back\n# Y\n--- middle\n# M\n",
    ],
)
def test_kramdown_hostile_documents(text: str) -> None:
    allowed("kramdown", text.encode("utf-8"))


# ---------------------------------------------------------------------------- xml2rfc


class _Listener:
    """A TCP listener on loopback that counts connections: XML must never open one."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.socket.settimeout(0.2)
        self.port = self.socket.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.socket.close()


@pytest.fixture
def listener() -> Iterator[_Listener]:
    server = _Listener()
    try:
        yield server
    finally:
        server.close()


def _laughs(levels: int) -> str:
    entities = ['<!ENTITY lol0 "lol">'] + [
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, levels + 1)
    ]
    title = f"<front><title>&lol{levels};</title></front>"
    return f"<!DOCTYPE rfc [{''.join(entities)}]><rfc>{title}</rfc>"


def _hostile_xml(url: str) -> list[str]:
    """Billion laughs, XXE through general and parameter entities, external DTDs, XInclude."""
    title = "<front><title>&x;</title></front><middle><section><name>&x;</name></section></middle>"
    return [
        _laughs(9),
        _laughs(1),
        f'<!DOCTYPE rfc [<!ENTITY x SYSTEM "{SECRET_URL}">]><rfc>{title}</rfc>',
        '<!DOCTYPE rfc [<!ENTITY x SYSTEM "file:///etc/passwd">]><rfc>&x;</rfc>',
        f'<!DOCTYPE rfc [<!ENTITY x SYSTEM "{url}/entity">]><rfc>{title}</rfc>',
        f'<!DOCTYPE rfc [<!ENTITY % p SYSTEM "{SECRET_URL}"> %p;]><rfc>{title}</rfc>',
        f'<!DOCTYPE rfc [<!ENTITY % p SYSTEM "{url}/dtd"> %p;]><rfc/>',
        f'<!DOCTYPE rfc SYSTEM "{SECRET_URL}"><rfc>{title}</rfc>',
        f'<!DOCTYPE rfc SYSTEM "{url}/dtd"><rfc>{title}</rfc>',
        f'<!DOCTYPE rfc PUBLIC "-//x//y" "{url}/dtd"><rfc/>',
        f'<!DOCTYPE rfc [<!ENTITY u SYSTEM "{url}/u" NDATA gif>]><rfc/>',
        '<!DOCTYPE rfc [<!ENTITY a "&b;"><!ENTITY b "&a;">]><rfc>&a;</rfc>',
        f'<rfc xmlns:xi="http://www.w3.org/2001/XInclude"><xi:include href="{SECRET_URL}" '
        'parse="text"/></rfc>',
        f'<?xml-stylesheet href="{url}/xsl"?><rfc/>',
    ]


def test_xml_never_expands_entities_reads_files_or_opens_connections(
    listener: _Listener,
) -> None:
    url = f"http://127.0.0.1:{listener.port}"
    for text in _hostile_xml(url):
        for data in (text, text.encode("utf-8")):
            outcome = _xml_outcome(data)
            assert outcome.verdict is not Verdict.BUG, outcome.describe(data)
    assert listener.connections == 0


def test_xml_billion_laughs_is_refused_as_an_entity_declaration() -> None:
    with pytest.raises(ParseError, match="entity"):
        parse_xml2rfc(_laughs(9))


@pytest.mark.parametrize(
    "data",
    [
        b"<rfc>\xff\xfe</rfc>",
        b"<rfc><middle><section><name>\xc3\x28</name></section></middle></rfc>",
        b'<?xml version="1.0" encoding="utf-8"?><rfc>\xed\xa0\x80</rfc>',
        b"\xef\xbb\xbf\xef\xbb\xbf<rfc/>",
        *(
            pytest.param(f'<?xml version="1.0" encoding="{codec}"?><rfc/>'.encode(), id=codec)
            for codec in ("x-no-such-codec", "utf-7", "base64", "idna")
        ),
        b'<?xml version="1.0" encoding="cp037"?><rfc/>',
        b'<?xml version="1.0" encoding="utf-16"?><rfc/>',
        b"\x00<rfc/>",
        b"",
        b"<rfc>&#1114112;</rfc>",
        b"<rfc><![CDATA[",
    ],
)
def test_xml_invalid_bytes_are_a_parse_error(data: bytes) -> None:
    outcome = _xml_outcome(data)
    assert outcome.verdict is not Verdict.BUG, outcome.describe(data)


def test_xml_text_with_a_lone_surrogate_is_a_parse_error() -> None:
    outcome = _xml_outcome("<rfc><middle><section><name>a\ud800</name></section></middle></rfc>")
    assert outcome.verdict is Verdict.ERROR, outcome.detail
    assert "not Unicode text" in outcome.detail


@pytest.mark.parametrize(
    ("opening", "closing", "inner"),
    [("<section>", "</section>", ""), ("<b>", "</b>", "x"), ("<li><ul>", "</ul></li>", "")],
)
def test_xml_nested_too_deeply_is_a_parse_error(opening: str, closing: str, inner: str) -> None:
    text = f"<rfc><middle><section><name>n</name><t>{opening * 200}{inner}{closing * 200}</t>"
    outcome = _xml_outcome(text + "</section></middle></rfc>")
    assert outcome.verdict is Verdict.ERROR, outcome.detail
    assert "more than 100 deep" in outcome.detail


def test_xml_declared_encoding_is_read_for_bytes_and_ignored_for_text() -> None:
    # Text is already decoded: the declaration is ignored, as pyexpat does for a str.
    text = (
        '<?xml version="1.0" encoding="iso-8859-1"?><rfc><front><title>Grüße</title></front></rfc>'
    )
    assert parse_xml2rfc(text).title == "Grüße"
    assert parse_xml2rfc(text.encode("latin-1")).title == "Grüße"


# ---------------------------------------------------------------------------- archive.json

_THREAD = {"number": 1, "url": "https://github.com/x/y/issues/1", "createdAt": "2029-02-01T09:00Z"}


def _archive(**changes: object) -> bytes:
    return json.dumps({"issues": [], "pulls": [], **changes}).encode()


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            _archive(issues=[{**_THREAD, "author": "名前\u202e", "body": None}]),
            id="unicode-login-null-body",
        ),
        pytest.param(_archive(issues=[{**_THREAD, "number": 10**4000}]), id="huge-number"),
        pytest.param(_archive(issues=[{**_THREAD, "number": -(2**70)}]), id="negative-number"),
        pytest.param(_archive(issues=[{"url": "u", "createdAt": "2029-02-01"}]), id="no-number"),
        pytest.param(_archive(issues=[{"number": 7, "createdAt": "2029-02-01"}]), id="no-url"),
        pytest.param(_archive(issues=[{"number": 7, "url": "u"}]), id="no-createdAt"),
        pytest.param(
            _archive(pulls=[{**_THREAD, "reviews": [{"createdAt": "x"}]}]), id="bad-review-date"
        ),
        pytest.param(_archive(issues=[{**_THREAD, "comments": [{}]}]), id="comment-without-date"),
        pytest.param(_archive(issues=[["not", "an", "object"]]), id="thread-is-a-list"),
        pytest.param(_archive(issues=[None]), id="thread-is-null"),
        pytest.param(_archive(issues=[{**_THREAD, "labels": 5}]), id="labels-number"),
        pytest.param(b'{"issues": [], "pulls": [], "timestamp": null}', id="null-timestamp"),
        pytest.param(b'{"issues": [], "pulls": []', id="truncated"),
        pytest.param(b'{"issues": [], "pulls": [], "a": NaN}', id="nan"),
        pytest.param(b"[]", id="a-list"),
        pytest.param(b'{"issues": []}', id="no-pulls"),
        pytest.param(b"", id="empty"),
        pytest.param("\ufeff{}".encode(), id="bom"),
    ],
)
def test_github_archive_hostile_values(data: bytes) -> None:
    allowed("github_archive", data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(
            _archive(issues=[{**_THREAD, "comments": ["a string"]}]), id="comment-a-string"
        ),
        pytest.param(
            _archive(issues=[{**_THREAD, "createdAt": 20290201}]), id="createdAt-a-number"
        ),
        pytest.param(
            _archive(pulls=[{**_THREAD, "mergeCommit": "abc123"}]), id="mergeCommit-a-string"
        ),
        pytest.param(_archive(pulls=[{**_THREAD, "reviews": ["a string"]}]), id="review-a-string"),
        pytest.param(
            b'{"pulls": [], "issues": [{"number": 1e400, "url": "u", "createdAt": "2029-02-01"}]}',
            id="number-1e400",
        ),
        pytest.param(_archive(issues=None), id="issues-null"),
        pytest.param(_archive(pulls=5), id="pulls-a-number"),
        pytest.param(_archive(timestamp=5), id="timestamp-a-number"),
        pytest.param(_archive(timestamp="yesterday"), id="timestamp-not-a-date"),
        pytest.param(b'{"issues": [], "pulls": [], "repo": "\xff"}', id="not-utf8"),
        pytest.param(b'{"issues": [], "pulls": [], "n": ' + b"9" * 5000 + b"}", id="5000-digits"),
    ],
)
def test_github_archive_wrong_types_are_a_parse_error(data: bytes) -> None:
    outcome = allowed("github_archive", data)
    assert outcome.verdict is Verdict.ERROR, outcome.describe(data)


def test_github_archive_error_names_the_thread() -> None:
    with pytest.raises(ParseError, match=r"archive\.json: pull #42 is malformed"):
        read_archive(_archive(pulls=[{"number": 42, "url": "u", "createdAt": "not a date"}]))


# ---------------------------------------------------------------------------- mail

_ENVELOPE = b"From alice@example.com Mon Feb 05 10:00:00 2029\n"
_OK = (
    b"From: Alice <alice@example.com>\nMessage-ID: <ok@example.com>\n"
    b"Date: Mon, 05 Feb 2029 10:00:00 +0000\n"
)


def _mbox(*messages: bytes) -> bytes:
    return b"".join(_ENVELOPE + message + b"\n" for message in messages)


@pytest.mark.parametrize(
    "message",
    [
        pytest.param(b"just a body, no headers at all\n", id="no-headers"),
        pytest.param(b"Subject: no sender, no id, no date\n\nx\n", id="subject-only"),
        pytest.param(
            _OK + b"Content-Type: multipart/mixed; boundary=b\n\n--b\nunterminated\n",
            id="broken-mime",
        ),
        pytest.param(
            _OK + b"Content-Type: multipart/mixed\n\nno boundary at all\n", id="no-boundary"
        ),
        pytest.param(
            _OK + b"Content-Type: text/plain; charset=x-nonexistent\n\nGr\xfc\xdfe\n",
            id="unknown-charset",
        ),
        pytest.param(
            _OK + b"Content-Type: text/plain; charset=base64\n\nx\n", id="codec-not-a-charset"
        ),
        pytest.param(_OK + b"Content-Type: text/plain; charset=utf-16\n\n\xff\n", id="odd-utf16"),
        pytest.param(_OK + b"\n\x80\x81\xfe\xff 8-bit garbage \x00\x1b[31m\n", id="8bit-garbage"),
        pytest.param(
            _OK + b"Content-Transfer-Encoding: base64\n\n!!!not base64!!!\n", id="bad-base64"
        ),
        pytest.param(_OK + b"Content-Transfer-Encoding: quoted-printable\n\n=ZZ=\n", id="bad-qp"),
        pytest.param(
            _OK.replace(b"Alice", b"=?utf-8?q?Eve=0D=0ABcc:_victim@x?=") + b"\nx\n",
            id="encoded-crlf-in-name",
        ),
        pytest.param(
            b"Subject: =?utf-8?q?a=0D=0AFrom:_evil@example.org?=\n" + _OK + b"\nx\n",
            id="encoded-crlf-in-subject",
        ),
        pytest.param(
            _OK + b"Subject: x\r\nBcc: injected@example.org\r\n\r\nbody\r\n", id="crlf-headers"
        ),
        pytest.param(_OK + b"References: <a@b>\n\t<c\n @d>\n\nx\n", id="folded-references"),
        pytest.param(_OK.replace(b"<ok@example.com>", b"<>") + b"\nx\n", id="empty-message-id"),
        pytest.param(
            _OK + b"Content-Type: message/rfc822\n\nnot a message\n", id="rfc822-not-mail"
        ),
        pytest.param(
            _OK + b"Content-Type: text/html\n\n<script>x<p>y</pre></b><!--\n", id="broken-html"
        ),
    ],
)
def test_mbox_hostile_messages_are_read_or_reported(message: bytes) -> None:
    allowed("mbox", _mbox(message, _OK.replace(b"ok@", b"second@") + b"\nsecond\n"))


def test_mbox_message_without_message_id_is_reported_and_kept() -> None:
    raw = b"From: Alice <alice@example.com>\nDate: Mon, 05 Feb 2029 10:00:00 +0000\n\nhello\n"
    result = read_mbox(_mbox(raw), "pigeon")
    assert [m.synthetic_id for m in result.messages] == [True]
    assert [p.index for p in result.problems] == [0]
    assert "no Message-ID" in result.problems[0].reason


def test_mbox_header_injection_stays_in_its_header() -> None:
    raw = (
        b"From: =?utf-8?q?Eve=0D=0ABcc:_victim@example.org?= <eve@example.org>\n"
        b"Subject: =?utf-8?q?hi=0D=0AX-Injected:_yes?=\nMessage-ID: <inj@example.org>\n\nbody\n"
    )
    message = read_mbox(_mbox(raw), "pigeon").messages[0]
    assert "\n" not in message.subject and "\r" not in message.subject
    assert "\n" not in (message.sender_name or "") and "\r" not in (message.sender_name or "")
    assert message.body == "body"


def test_mbox_message_without_date_is_reported_as_a_problem() -> None:
    raw = b"From: Alice <alice@example.com>\nMessage-ID: <undated@example.com>\n\nhello\n"
    result = read_mbox(_mbox(raw), "pigeon")
    assert result.messages[0].date is None
    assert [(p.index, p.skipped, p.reason) for p in result.problems] == [
        (
            0,
            False,
            "Message <undated@example.com> (entry 0 in the archive bytes) has no Date header; "
            "its date is unset.",
        )
    ]


@pytest.mark.parametrize(
    "data",
    [b"\x1f\x8b", b"\x1f\x8b\x08\x00garbage", gzip.compress(_mbox(_OK + b"\nx\n"))[:-9]],
    ids=["magic-only", "bad-header", "truncated"],
)
@pytest.mark.parametrize("reader", ["mbox", "mailman"])
def test_mail_corrupt_gzip_is_reported(reader: str, data: bytes) -> None:
    outcome = allowed(reader, data)
    assert outcome.verdict is Verdict.ERROR, outcome.describe(data)
    assert "MailArchiveError: The archive bytes start like gzip" in outcome.detail


def test_mail_corrupt_gzip_file_is_named(tmp_path: Path) -> None:
    file = tmp_path / "2017-March.txt.gz"
    file.write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(MailArchiveError, match=f"The mail archive {file} start"):
        read_mailman_text(file, "pigeon")


def test_mail_list_name_is_checked_with_a_sentence() -> None:
    with pytest.raises(ValueError, match="is not a mailing-list name"):
        read_mbox(b"", "../etc")


# ---------------------------------------------------------------------------- manifests


def test_manifest_missing_file_is_a_manifest_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="There is no manifest"):
        load_manifest(tmp_path)


@pytest.mark.parametrize(
    "text",
    [
        "[brain\n",
        "brain = 1\n",
        "[brain]\nid = 'pigeon'\n[brain]\n",
        "[brain]\nid = 'x'\ntitle = 't'\nrepository = 'r'\n[[draft]]\nname = 'draft-a-b'\n"
        "file = 'f'\nrevisions = '00'\nreplaced_by = 'draft-a-b'\n",
        "[brain]\nid = 'x'\ntitle = 't'\nrepository = 'r'\ntenant = '../../etc'\ndraft = []\n",
        "[brain]\nid = 'x'\ntitle = 't'\nrepository = 'r'\ndraft = [1, 2]\n",
        "[brain]\nid = 'x'\ntitle = 't'\nrepository = 'r'\ndraft = []\n[clearance]\nmail = 7\n",
        "[brain]\nid = 'x'\ntitle = 't'\nrepository = 'r'\ndraft = []\n[[rfc]]\nnumber = "
        "99999999999999999999\n",
        "a = 1979-05-27T07:32:00Z\nb = inf\nc = nan\nd = 0x_1\n",
        "\ufeff[brain]\n",
        '[brain]\nid = "\\ud800"\n',
    ],
)
def test_manifest_hostile_documents(text: str) -> None:
    allowed("manifest", text.encode("utf-8", "surrogatepass"))


def test_manifest_not_utf8_is_a_manifest_error() -> None:
    data = "[brain]\ntitle = 'Grüße'\n".encode("latin-1")
    outcome = allowed("manifest", data)
    assert outcome.verdict is Verdict.ERROR, outcome.describe(data)
    assert "is not UTF-8 text (byte 0xfc at offset 19)" in outcome.detail


@pytest.mark.parametrize("unit", ["[", "{b = "])
def test_manifest_nested_too_deeply_is_a_manifest_error(unit: str) -> None:
    data = ("a = " + unit * 5000 + "1").encode()
    outcome = allowed("manifest", data)
    assert outcome.verdict is Verdict.ERROR, outcome.describe(data)
    assert "too deeply" in outcome.detail


def test_hypothesis_strategies_cover_the_readers() -> None:
    assert set(INPUTS) == set(READERS)


@SHORT
@given(st.binary(max_size=200))
def test_arbitrary_bytes_are_never_a_bug(data: bytes) -> None:
    for reader in READERS:
        allowed(reader, data)


def test_the_secret_check_sees_the_secret() -> None:
    leaked = f"<rfc><middle><section><name>{SECRET}</name></section></middle></rfc>"
    outcome = _xml_outcome(leaked)
    assert outcome.verdict is Verdict.BUG
    assert "pointed at" in outcome.detail
