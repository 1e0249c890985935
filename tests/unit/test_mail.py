"""Reading IETF list archives: mbox and pipermail text, messy charsets, DMARC, threads, links.

The fixtures under ``tests/fixtures/mail`` are fictional mail of a made-up "pigeon" list at
example.org; each entry of ``pigeon-2024-03.mbox`` exercises one defect real archives have.
"""

from __future__ import annotations

import base64
import doctest
import gzip
import hashlib
from datetime import UTC, datetime
from email.message import Message
from pathlib import Path

import pytest

from ratified_rdf.sources import mail
from ratified_rdf.sources.mail import (
    MailArchiveError,
    MailMessage,
    MailReadResult,
    archive_links_in,
    mail_archive_permalink,
    read_mailman_text,
    read_mbox,
    threads,
)
from tests.fuzz.harness import within_bound

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "mail"
MBOX = FIXTURES / "pigeon-2024-03.mbox"
PIPERMAIL = FIXTURES / "pigeon-2017-March.txt"
ENVELOPE = b"From someone@example.org Mon Mar  4 08:00:00 2024\n"

THREAD = [
    "thread-1.alice@example.org",
    "thread-2.bob@example.org",
    "thread-3.carol@example.org",
    "thread-4.alice@example.org",
]


@pytest.fixture(scope="module")
def result() -> MailReadResult:
    return read_mbox(MBOX, "pigeon")


def _by_id(result: MailReadResult, message_id: str) -> MailMessage:
    found = [m for m in result.messages if m.message_id == message_id]
    assert len(found) == 1, f"expected one message {message_id}, got {len(found)}"
    return found[0]


def _mbox(*messages: bytes) -> bytes:
    """An mbox of the given messages, each behind an envelope line."""
    return b"\n".join(ENVELOPE + message + b"\n" for message in messages)


def _hand_token(message_id: str, list_name: str) -> str:
    """The archive's token, spelled out: SHA-1 of id then list, URL-safe base64, no padding."""
    digest = hashlib.sha1((message_id + list_name).encode("utf-8")).digest()
    return base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")


# -- the file as a whole


def test_every_entry_but_the_malformed_one_is_ingested_in_file_order(
    result: MailReadResult,
) -> None:
    ids = [m.message_id for m in result.messages]
    synthetic = [i for i in ids if i.endswith("@synthetic.invalid")]
    assert len(synthetic) == 1
    assert ids == [
        *THREAD[:3],
        "latin1.dave@example.org",
        "unknown-charset.erika@example.org",
        "html-only.grace@example.org",
        "alternative.heidi@example.org",
        THREAD[3],
        synthetic[0],
        "no-date.judy@example.org",
        "dmarc-via.jane@example.org",
        "dmarc-list.kim@example.org",
        "dmarc-escape.frank@example.net",
        "orphan-1.leo@example.org",
        "orphan-2.nina@example.org",
    ]


def test_the_malformed_entry_is_a_skipped_problem_with_a_readable_reason(
    result: MailReadResult,
) -> None:
    skipped = [p for p in result.problems if p.skipped]
    assert len(skipped) == 1
    problem = skipped[0]
    assert problem.index == 7
    assert problem.message_id is None
    assert problem.reason == (
        "Entry 7 in pigeon-2024-03.mbox has no header fields and was skipped: "
        "its bytes are not an e-mail message."
    )


def test_bytes_and_path_and_gzip_read_the_same(result: MailReadResult) -> None:
    data = MBOX.read_bytes()
    from_bytes = read_mbox(data, "pigeon")
    from_gzip = read_mbox(gzip.compress(data), "pigeon")
    assert from_bytes.messages == result.messages
    assert from_gzip.messages == result.messages
    assert [p.index for p in from_bytes.problems] == [p.index for p in result.problems]


def test_an_unreadable_message_does_not_stop_the_file() -> None:
    broken = (
        b"From: Alice Example <alice@example.org>\n"
        b"Subject: =?utf-8?b?broken!!?=\n"
        b"Message-ID: <broken.alice@example.org>\n"
        b"Content-Type: text/plain; charset=base64\n\n"
        b"\xff\xfe\x00 bytes that are no charset at all \x81\x8d\n"
    )
    fine = b"From: Bob Example <bob@example.org>\nMessage-ID: <fine.bob@example.org>\n\nok\n"
    read = read_mbox(_mbox(broken, fine), "pigeon")
    assert [m.message_id for m in read.messages] == [
        "broken.alice@example.org",
        "fine.bob@example.org",
    ]
    broken_message = read.messages[0]
    assert broken_message.subject == "=?utf-8?b?broken!!?="
    assert "bytes that are no charset at all" in broken_message.body
    assert "\ufffd" in broken_message.body  # 0x81 and 0x8d are undefined in windows-1252


def test_a_repeated_message_id_is_skipped_as_a_problem() -> None:
    date = b"Date: Mon, 04 Mar 2024 09:00:00 +0000\n"
    first = b"From: A <a@example.org>\nMessage-ID: <same@example.org>\nSubject: one\n" + date
    first += b"\n1\n"
    second = b"From: B <b@example.org>\nMessage-ID: <same@example.org>\nSubject: two\n" + date
    second += b"\n2\n"
    read = read_mbox(_mbox(first, second), "pigeon")
    assert [m.subject for m in read.messages] == ["one"]
    assert len(read.problems) == 1
    assert read.problems[0].skipped
    assert read.problems[0].index == 1
    assert "repeats Message-ID <same@example.org>" in read.problems[0].reason


def test_a_list_name_must_be_a_name() -> None:
    with pytest.raises(ValueError, match="is not a mailing-list name"):
        read_mbox(MBOX, " ")


# -- headers


def test_dates_are_timezone_aware_utc(result: MailReadResult) -> None:
    first = _by_id(result, THREAD[0])  # Date: Mon, 04 Mar 2024 09:00:00 +0100
    second = _by_id(result, THREAD[1])  # Date: Mon, 04 Mar 2024 10:30:00 -0500
    assert first.date == datetime(2024, 3, 4, 8, 0, tzinfo=UTC)
    assert first.date is not None and first.date.tzinfo is UTC
    assert second.date == datetime(2024, 3, 4, 15, 30, tzinfo=UTC)
    assert second.date is not None and second.date.tzinfo is UTC


def test_a_message_without_date_has_date_none_and_is_recorded(result: MailReadResult) -> None:
    message = _by_id(result, "no-date.judy@example.org")
    assert message.date is None
    assert message.body == "My client forgot the Date."
    assert [
        (p.index, p.skipped, p.reason)
        for p in result.problems
        if p.message_id == message.message_id
    ] == [
        (
            10,
            False,
            "Message <no-date.judy@example.org> (entry 10 in pigeon-2024-03.mbox) has no Date "
            "header; its date is unset.",
        )
    ]


def test_an_unreadable_date_is_none_and_recorded() -> None:
    raw = b"From: A <a@example.org>\nMessage-ID: <odd-date@example.org>\nDate: soon\n\nx\n"
    read = read_mbox(_mbox(raw), "pigeon")
    assert read.messages[0].date is None
    assert [p.reason for p in read.problems] == [
        "Message <odd-date@example.org> (entry 0 in the archive bytes) has a Date header that "
        "cannot be read ('soon'); its date is unset."
    ]


def test_a_message_without_message_id_gets_a_stable_synthetic_id(
    result: MailReadResult,
) -> None:
    message = next(m for m in result.messages if m.synthetic_id)
    assert message.subject == "[Pigeon] A message without an id"
    assert message.permalink is None
    problem = next(p for p in result.problems if p.message_id == message.message_id)
    assert problem.index == 9 and not problem.skipped
    assert "has no Message-ID" in problem.reason

    # the id is the SHA-1 of the entry's own bytes, so it survives a re-read of the same mail
    raw = b"From: Ivan Example <ivan@example.org>\nSubject: no id\n\nbody\n"
    alone = read_mbox(_mbox(raw), "pigeon").messages[0]
    assert alone.message_id == hashlib.sha1(raw).hexdigest() + "@synthetic.invalid"
    assert read_mbox(_mbox(raw), "pigeon").messages[0].message_id == alone.message_id


def test_resent_message_id_stands_in_for_a_missing_message_id() -> None:
    raw = b"From: A <a@example.org>\nResent-Message-ID: <resent@example.org>\n\nx\n"
    message = read_mbox(_mbox(raw), "pigeon").messages[0]
    assert message.message_id == "resent@example.org"
    assert not message.synthetic_id


# -- DMARC


def test_dmarc_via_datatracker_sender_is_restored_from_x_original_from(
    result: MailReadResult,
) -> None:
    message = _by_id(result, "dmarc-via.jane@example.org")
    assert message.sender_name == "Jane Doe"
    assert message.sender_address == "jane@example.org"


def test_dmarc_via_list_sender_takes_the_personal_reply_to_address(
    result: MailReadResult,
) -> None:
    # Reply-To: pigeon@example.org, Kim Example <kim@example.org>
    message = _by_id(result, "dmarc-list.kim@example.org")
    assert message.sender_name == "Kim Example"
    assert message.sender_address == "kim@example.org"


def test_dmarc_via_without_a_real_address_keeps_the_name_only() -> None:
    raw = (
        b'From: "Jane Doe via Datatracker" <noreply@ietf.org>\n'
        b"Message-ID: <via-only@example.org>\n\nx\n"
    )
    message = read_mbox(_mbox(raw), "pigeon").messages[0]
    assert message.sender_name == "Jane Doe"
    assert message.sender_address is None


def test_a_personal_name_with_via_is_left_alone() -> None:
    raw = b'From: "Olivia via Roma" <olivia@example.org>\nMessage-ID: <olivia@example.org>\n\nx\n'
    message = read_mbox(_mbox(raw), "pigeon").messages[0]
    assert message.sender_name == "Olivia via Roma"
    assert message.sender_address == "olivia@example.org"


def test_dmarc_escaped_address_is_decoded(result: MailReadResult) -> None:
    message = _by_id(result, "dmarc-escape.frank@example.net")  # frank=40example.net@dmarc…
    assert message.sender_name == "Frank Example"
    assert message.sender_address == "frank@example.net"


# -- bodies and charsets


def test_latin1_body_mislabelled_as_utf8_is_decoded_and_noted(result: MailReadResult) -> None:
    message = _by_id(result, "latin1.dave@example.org")
    assert message.body == "Le pigeon voyageur arrive à l'heure au café de la gare."
    notes = [p for p in result.problems if p.message_id == message.message_id]
    assert [(p.index, p.skipped) for p in notes] == [(3, False)]
    assert "declared utf-8, read as windows-1252" in notes[0].reason


def test_unknown_charset_x_unknown_is_decoded_not_fatal(result: MailReadResult) -> None:
    message = _by_id(result, "unknown-charset.erika@example.org")
    assert message.body == "Grüße aus dem Taubenschlag."
    assert message.subject == "Grüße vom Taubenschlag"  # =?x-unknown?q?Gr=FC=DFe…?=
    notes = [p for p in result.problems if p.message_id == message.message_id]
    assert "unknown charset 'x-unknown', read as utf-8" in notes[0].reason


def test_html_only_message_becomes_text_without_script_or_style(result: MailReadResult) -> None:
    message = _by_id(result, "html-only.grace@example.org")
    assert message.body == (
        "Seed bags weigh 12 g & fit one per carrier.\n\nSecond paragraph\nafter a break."
    )
    for hidden in ("alert", "hidden script text", "color", "hidden-style-rule", "ignored title"):
        assert hidden not in message.body


def test_multipart_alternative_prefers_text_plain(result: MailReadResult) -> None:
    message = _by_id(result, "alternative.heidi@example.org")
    assert message.body == "Plain version: carriers rest for 10 minutes — no longer."
    assert "HTML version" not in message.body


def test_alternative_without_plain_text_falls_back_to_html() -> None:
    raw = (
        b"From: A <a@example.org>\nMessage-ID: <alt-html@example.org>\nMIME-Version: 1.0\n"
        b'Content-Type: multipart/alternative; boundary="b"\n\n'
        b"--b\nContent-Type: text/html\n\n<p>Only <i>HTML</i> here.</p>\n--b--\n"
    )
    assert read_mbox(_mbox(raw), "pigeon").messages[0].body == "Only HTML here."


# -- threads


def test_four_message_thread_links_and_root(result: MailReadResult) -> None:
    messages = [_by_id(result, i) for i in THREAD]
    assert [m.in_reply_to for m in messages] == [None, *THREAD[:3]]
    assert [m.references for m in messages] == [
        (),
        (THREAD[0],),
        tuple(THREAD[:2]),
        tuple(THREAD[:3]),
    ]
    assert {m.thread_root for m in messages} == {THREAD[0]}


def test_threads_groups_by_root_and_orders_by_date(result: MailReadResult) -> None:
    grouped = threads(reversed(result.messages))
    assert [m.message_id for m in grouped[THREAD[0]]] == THREAD
    assert [m.message_id for m in grouped["lost-root.nina@example.org"]] == [
        "orphan-1.leo@example.org",
        "orphan-2.nina@example.org",
    ]
    assert sum(len(group) for group in grouped.values()) == len(result.messages)
    # threads come in order of their first date; the undated one comes last
    assert next(iter(grouped)) == THREAD[0]
    assert list(grouped)[-1] == "no-date.judy@example.org"


def test_a_missing_parent_makes_the_oldest_referenced_id_the_root(
    result: MailReadResult,
) -> None:
    orphan = _by_id(result, "orphan-1.leo@example.org")
    assert orphan.in_reply_to == "lost-parent.mallory@example.org"
    assert orphan.thread_root == "lost-root.nina@example.org"
    # a reply to the orphan (In-Reply-To only) climbs through it to the same root
    assert _by_id(result, "orphan-2.nina@example.org").thread_root == orphan.thread_root


def test_a_reference_cycle_terminates_with_the_earliest_message_as_root() -> None:
    a = (
        b"From: A <a@example.org>\nMessage-ID: <cycle-a@example.org>\n"
        b"Date: Tue, 05 Mar 2024 10:00:00 +0000\nIn-Reply-To: <cycle-b@example.org>\n\na\n"
    )
    b = (
        b"From: B <b@example.org>\nMessage-ID: <cycle-b@example.org>\n"
        b"Date: Mon, 04 Mar 2024 10:00:00 +0000\nReferences: <cycle-a@example.org>\n\nb\n"
    )
    c = (
        b"From: C <c@example.org>\nMessage-ID: <cycle-c@example.org>\n"
        b"In-Reply-To: <cycle-a@example.org>\n\nc\n"
    )
    read = read_mbox(_mbox(a, b, c), "pigeon")
    assert [m.thread_root for m in read.messages] == ["cycle-b@example.org"] * 3


def test_a_self_reference_is_not_a_parent() -> None:
    raw = (
        b"From: A <a@example.org>\nMessage-ID: <self@example.org>\n"
        b"In-Reply-To: <self@example.org>\n\nx\n"
    )
    assert read_mbox(_mbox(raw), "pigeon").messages[0].thread_root == "self@example.org"


# -- permalinks


def test_permalink_of_a_known_pair_equals_the_hand_computed_token() -> None:
    message_id = "thread-1.alice@example.org"
    digest = hashlib.sha1(b"thread-1.alice@example.org" + b"pigeon").digest()
    token = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    assert len(token) == 27
    expected = f"https://mailarchive.ietf.org/arch/msg/pigeon/{token}/"
    assert mail_archive_permalink(message_id, "pigeon") == expected
    assert mail_archive_permalink(f"<{message_id}>", "pigeon") == expected
    # the order is Message-ID then list name; the other order is a different token
    swapped = base64.urlsafe_b64encode(hashlib.sha1(b"pigeon" + message_id.encode()).digest())
    assert swapped.rstrip(b"=").decode("ascii") not in mail_archive_permalink(message_id, "pigeon")


def test_permalink_matches_the_datatracker_vector() -> None:
    # ietf-tools/datatracker pins these tokens in the tests of hash_list_message_id
    assert mail_archive_permalink(
        "156182196167.12901.11966487185176024571@ietfa.amsl.com", "ietf"
    ) == ("https://mailarchive.ietf.org/arch/msg/ietf/lr6RtZ4TiVMZn1fZbykhkXeKhEk/")
    assert _hand_token("E1hNffl-0004RM-Dh@zinfandel.tools.ietf.org", "codesprints") == (
        "N1nFHHUXiFWYtdzBgjtqzzILFHI"
    )
    assert mail_archive_permalink(
        "E1hNffl-0004RM-Dh@zinfandel.tools.ietf.org", "codesprints"
    ).endswith("/codesprints/N1nFHHUXiFWYtdzBgjtqzzILFHI/")


def test_the_docstring_example_holds() -> None:
    outcome = doctest.testmod(mail, verbose=False)
    assert outcome.attempted >= 1
    assert outcome.failed == 0


def test_every_read_message_carries_its_permalink(result: MailReadResult) -> None:
    for message in result.messages:
        if message.synthetic_id:
            continue
        token = _hand_token(message.message_id, "pigeon")
        assert message.permalink == f"https://mailarchive.ietf.org/arch/msg/pigeon/{token}/"


def test_list_names_are_lower_cased_as_mailman_stores_them() -> None:
    assert mail_archive_permalink("x@example.org", "Pigeon") == mail_archive_permalink(
        "x@example.org", "pigeon"
    )
    raw = b"From: A <a@example.org>\nMessage-ID: <x@example.org>\n\nx\n"
    message = read_mbox(_mbox(raw), "PIGEON").messages[0]
    assert message.list_name == "pigeon"
    assert message.permalink == mail_archive_permalink("x@example.org", "pigeon")


# -- archive links in text


def test_archive_links_in_finds_and_normalises_both_forms() -> None:
    token = _hand_token("thread-1.alice@example.org", "pigeon")
    text = (
        f"See https://mailarchive.ietf.org/arch/msg/pigeon/{token}/ and again\n"
        f"(http://mailarchive.ietf.org/arch/msg/Pigeon/{token}), plus the padded "
        f"https://mailarchive.ietf.org/arch/msg/tls/{token}= form.\n"
        "Old: <http://www.ietf.org/mail-archive/web/pigeon/current/msg00042.html>, "
        "https://ietf.org/mail-archive/web/TLS/current/msg12345.html."
    )
    assert archive_links_in(text) == [
        f"https://mailarchive.ietf.org/arch/msg/pigeon/{token}/",
        f"https://mailarchive.ietf.org/arch/msg/tls/{token}/",
        "https://www.ietf.org/mail-archive/web/pigeon/current/msg00042.html",
        "https://www.ietf.org/mail-archive/web/tls/current/msg12345.html",
    ]


def test_archive_links_in_text_without_links_is_empty() -> None:
    assert archive_links_in("No links here, only https://example.org/arch/msg/x/y/.") == []
    assert archive_links_in("https://mailarchive.ietf.org/arch/browse/pigeon/") == []
    assert archive_links_in("") == []


def test_archive_links_in_a_message_body(result: MailReadResult) -> None:
    body = _by_id(result, THREAD[1]).body
    assert archive_links_in(body) == [
        "https://mailarchive.ietf.org/arch/msg/pigeon/AAAAAAAAAAAAAAAAAAAAAAAAAAA/"
    ]


# -- Mailman pipermail text archives


def test_pipermail_text_archive_is_read_with_addresses_restored() -> None:
    read = read_mailman_text(PIPERMAIL, "pigeon")
    assert [m.message_id for m in read.messages] == [
        "20170303100000.homing@example.org",
        "58B95A2F.1020304@example.org",
        "frank.homing@example.net",
    ]
    assert [(m.sender_name, m.sender_address) for m in read.messages] == [
        ("Alice Example", "alice@example.org"),
        ("Bob Example", "bob@example.org"),
        ("Frank Example", "frank@example.net"),  # frank=40example.net at dmarc.ietf.org
    ]
    assert {m.thread_root for m in read.messages} == {"20170303100000.homing@example.org"}
    assert read.messages[2].references == (
        "20170303100000.homing@example.org",
        "58B95A2F.1020304@example.org",
    )
    assert read.messages[1].date == datetime(2017, 3, 3, 12, 30, tzinfo=UTC)


def test_pipermail_body_lines_starting_with_from_do_not_split_messages() -> None:
    first = read_mailman_text(PIPERMAIL, "pigeon").messages[0]
    assert first.body == (
        "How far should a carrier be expected to home?\n"
        "From the loft on the hill we measured 40 km."
    )


def test_pipermail_undeclared_latin1_body_is_decoded() -> None:
    read = read_mailman_text(PIPERMAIL.read_bytes(), "pigeon")
    assert read.messages[2].body == "Grüße, Frank"
    assert [(p.index, p.skipped) for p in read.problems] == [(2, False)]
    assert "no charset declared, read as windows-1252" in read.problems[0].reason


def test_an_entry_that_raises_is_skipped_with_its_error_and_the_rest_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_sender = mail._sender

    def fragile_sender(
        message: Message, list_name: str, deobfuscate: bool
    ) -> tuple[str | None, str | None]:
        if "boom" in str(message["Subject"]):
            raise RuntimeError("the From header exploded")
        return real_sender(message, list_name, deobfuscate)

    monkeypatch.setattr(mail, "_sender", fragile_sender)
    boom = b"From: A <a@example.org>\nMessage-ID: <boom@example.org>\nSubject: boom\nDate: x\n\n"
    fine = (
        b"From: B <b@example.org>\nMessage-ID: <fine@example.org>\nSubject: fine\n"
        b"Date: Mon, 04 Mar 2024 09:00:00 +0000\n\nok\n"
    )
    read = read_mbox(_mbox(boom, fine), "pigeon")
    assert [m.message_id for m in read.messages] == ["fine@example.org"]
    assert [(p.index, p.skipped, p.reason) for p in read.problems] == [
        (
            0,
            True,
            "Entry 0 in the archive bytes could not be read and was skipped "
            "(RuntimeError: the From header exploded).",
        )
    ]


# -- hostile archives


@pytest.mark.parametrize(
    "data", [b"\x1f\x8b", b"\x1f\x8b\x08\x00garbage"], ids=["magic-only", "bad-header"]
)
def test_gzip_that_does_not_decompress_is_a_mail_archive_error(data: bytes) -> None:
    with pytest.raises(MailArchiveError, match="The archive bytes start like gzip"):
        read_mbox(data, "pigeon")
    truncated = gzip.compress(MBOX.read_bytes())[:-9]
    with pytest.raises(MailArchiveError, match="truncated or corrupt"):
        read_mailman_text(truncated, "pigeon")


def test_obfuscated_addresses_are_restored_even_right_after_another() -> None:
    # A domain cannot end in ".", so the second address starts where the first one stopped.
    assert mail._restore_at("a at b.c. at d.e and x at y.z") == "a@b.c.@d.e and x@y.z"
    run = "a" * 100_000
    with within_bound(len(run)):
        assert mail._restore_at(run) == run


@pytest.mark.parametrize(
    ("display", "name"),
    [
        ("Jane Doe via Datatracker", "Jane Doe"),
        ("Jane via Doe via pigeon", "Jane"),
        ("Jane via a@b via pigeon", "Jane via a@b"),  # a "via" part holds no <, > or @
        ("Jane via pigeon@", None),
        ("via pigeon", None),
        ("Jane Doe", None),
    ],
)
def test_the_via_rewrite_is_found_as_the_expression_would(display: str, name: str | None) -> None:
    assert mail._via_name(display) == name


def test_a_long_via_display_name_is_read_quickly() -> None:
    raw = b'From: "' + b"x via " * 16_000 + b'@" <a@b.c>\nMessage-ID: <v@example.org>\n\nx\n'
    with within_bound(len(raw)):
        (message,) = read_mbox(_mbox(raw), "pigeon").messages
    # The "@" at the end follows every "via": none is a rewrite, and the name stays as written.
    assert (message.sender_name, message.sender_address) == ("x via " * 16_000 + "@", "a@b.c")


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>Hello</p><p>there</p>", "Hello\n\nthere"),
        ("<p>a</p><!-- hidden --><p>b</p>", "a\n\nb"),
        ("<p>a <b>bold</b> <a", "a bold <a"),  # a tag left open at the end is text
        ("<p>x</p><!-- never closed <p>y</p>", "x\n<!-- never closed\ny"),
        ("<p>x</p><![ y ]> z", "x\n<![ y ]> z"),  # html.parser would raise AssertionError
    ],
)
def test_html_bodies_become_text(html: str, text: str) -> None:
    assert mail.html_to_text(html) == text


@pytest.mark.parametrize("unit", ["<a ", "<!--", "<!-- x>", "</a ", "<a b='", "<![CDATA[ x>"])
def test_unfinished_html_is_read_in_linear_time(unit: str) -> None:
    html = unit * (100_000 // len(unit))
    with within_bound(len(html)):
        text = mail.html_to_text(html)
    assert text == html.strip()  # markup that never finishes is text
