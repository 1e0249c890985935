"""What no record should hold is refused, with a sentence: control characters and megabyte
titles at the SHACL gate (whichever source they come from), a mail archive that is not mail,
a review that says two things or of no question, a question the length of a document.

The builds here are of the fictional Pigeon records, with their mailing list's archive spoiled
in one way each (the archive sits beside the manifest, so a copy of the records folder is all
a test changes)."""

from __future__ import annotations

import asyncio
import random
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import rdflib
from click.testing import CliRunner
from mcp.types import CallToolResult, TextContent
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, serialize

from ratified_rdf import Brain, GateRejected, ReviewError
from ratified_rdf._errors import InputError
from ratified_rdf.answers.asking import MAX_QUESTION_CHARS
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import load_shapes
from ratified_rdf.graph.reviews import MAX_NAME_CHARS as MAX_REVIEWER_NAME_CHARS
from ratified_rdf.graph.shacl_engines import Pyshacl, Turbo, verdict
from ratified_rdf.graph.violations import SH, PreparedBatch
from ratified_rdf.records.text import MAX_BODY_CHARS, MAX_NAME_CHARS, MAX_TITLE_CHARS
from ratified_rdf.sources.mail import (
    MailArchiveError,
    check_mostly_mail,
    mail_archive_permalink,
    read_mbox,
)
from ratified_rdf.surfaces.cli import main
from ratified_rdf.surfaces.mcp_server import create_server
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "who discussed RFC 9999 section 3.1?"
MBOX = MANIFEST.parent / "pigeon-list.mbox"
FIRST_BODY = b"I think Section 2.1 should say which knot."
FIRST_SUBJECT = b"Subject: Take-off and the leg knot"
_TOKEN = mail_archive_permalink("knot-1@example.com", "pigeon").rstrip("/").rsplit("/", 1)[-1]
KNOT_1 = {v.mail_message_iri("pigeon", _TOKEN), v.mail_thread_iri("pigeon", _TOKEN)}
"""The first message of the archive, and the thread it opens."""


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("refused-git"))


def _records_with_mbox(folder: Path, mbox: bytes) -> Path:
    """A copy of the Pigeon records whose mailing list's archive is ``mbox``."""
    records = folder / "records"
    shutil.copytree(MANIFEST.parent, records)
    (records / MBOX.name).write_bytes(mbox)
    return records / MANIFEST.name


# ------------------------------------------------------------------------ the gate


@pytest.mark.parametrize(
    ("spoiled", "replacement", "sentence"),
    [
        (FIRST_BODY, b"I think Section 2.1\x00 should say which knot.", "A post's body is plain"),
        (FIRST_SUBJECT, b"Subject: Take-off \x1b[31mand\x1b[0m the leg knot\x07", "A title is"),
        (FIRST_SUBJECT, b"Subject: " + b"knot " * 500, "A title is one line"),
    ],
    ids=["NUL in a body", "ESC and BEL in a subject", "a 2,500-character subject"],
)
def test_text_no_record_should_hold_is_refused_by_the_gate(
    repo: Path, tmp_path: Path, spoiled: bytes, replacement: bytes, sentence: str
) -> None:
    mbox = MBOX.read_bytes()
    assert mbox.count(spoiled) == 1
    manifest = _records_with_mbox(tmp_path, mbox.replace(spoiled, replacement))
    with pytest.raises(GateRejected) as rejected:
        Brain.build(manifest, source=str(repo))
    report = rejected.value
    # The first batch refused is the message's own, or a GitHub post's linking to it (a batch
    # is checked with what the run says of the nodes it names).
    message = str(report)
    assert sentence in message and "nothing of it was written" in message
    assert {found.focus_node for found in report.violations} <= KNOT_1
    # The sentence names the message; what was refused is shown escaped and cut short.
    assert "\x00" not in message and "\x1b" not in message and "\x07" not in message
    assert len(message) < 2_000


@pytest.fixture(scope="module")
def engines() -> tuple[Turbo, Pyshacl]:
    reference = Pyshacl(load_shapes())
    return Turbo(load_shapes(), reference), reference


def _mail_message(body: str, subject: str, sender: str) -> PreparedBatch:
    """One mail message in its thread, from a sender the people graph does not know."""
    ns = {
        "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
        "sioc": "http://rdfs.org/sioc/ns#",
        "dc": "http://purl.org/dc/terms/",
        "rr": "https://w3id.org/ratified-rdf/ontology#",
        "foaf": "http://xmlns.com/foaf/0.1/",
    }

    def n(prefixed: str) -> NamedNode:
        prefix, local = prefixed.split(":")
        return NamedNode(ns[prefix] + local)

    post = NamedNode("https://mailarchive.ietf.org/arch/msg/pigeon/fictional-post/")
    thread = NamedNode("https://example.org/fictional/mail-thread")
    who = NamedNode("https://example.org/fictional/sender")
    when = Literal("2029-02-05T10:00:00Z", datatype=NamedNode(rdflib.XSD.dateTime))
    triples = [
        Triple(post, n("rdf:type"), n("sioc:Post")),
        Triple(post, n("rdf:type"), n("rr:MailMessage")),
        Triple(thread, n("rdf:type"), n("sioc:Thread")),
        Triple(thread, n("rdf:type"), n("rr:MailThread")),
        Triple(who, n("rdf:type"), n("foaf:Agent")),
        Triple(post, n("sioc:has_container"), thread),
        Triple(post, n("dc:created"), when),
        Triple(post, n("foaf:page"), post),
        Triple(thread, n("foaf:page"), post),
        Triple(post, n("rr:postKind"), Literal("message")),
        Triple(post, n("sioc:content"), Literal(body)),
        Triple(post, n("dc:title"), Literal(subject)),
        Triple(thread, n("dc:title"), Literal(subject)),
        Triple(who, n("foaf:name"), Literal(sender)),
        Triple(post, n("dc:creator"), who),
    ]
    return PreparedBatch(
        source="a fictional message",
        ntriples=serialize(triples, format=RdfFormat.N_TRIPLES) or b"",
        focus_nodes=(post.value, thread.value, who.value),
    )


REAL_POST = "Line one\r\n\tindented\n\x0cpage two \u202d3F\u202c"
"""What real posts hold, and a body may: GitHub keeps a comment's CRLF, an RFC's page break
is quoted, a document quotes a bidirectional override."""


@pytest.mark.parametrize(
    ("body", "subject", "sender", "refused"),
    [
        ("nul\x00", "Re: knots", "Dana Example", ["content"]),
        ("csi\x9b2J and vertical tab\x0b", "ok", "ok", ["content"]),
        (REAL_POST, "tab\there", "ok", ["title", "title"]),
        (REAL_POST, "\u202eetouq", "ok", ["title", "title"]),
        (REAL_POST, "t" * (MAX_TITLE_CHARS + 1), "n" * MAX_NAME_CHARS, ["title", "title"]),
        (REAL_POST, "ok", "Dana\x1b[2J", ["name"]),
        (REAL_POST, "t" * MAX_TITLE_CHARS, "n" * (MAX_NAME_CHARS + 1), ["name"]),
    ],
    ids=[
        *("NUL in a body", "C1 and VT in a body", "a tab in a title"),
        *("a bidirectional override in a title", "a title over its limit", "ESC in a name"),
        "a name over its limit",
    ],
)
def test_both_engines_refuse_the_same_text(
    engines: tuple[Turbo, Pyshacl], body: str, subject: str, sender: str, refused: list[str]
) -> None:
    native, reference = engines
    batch = _mail_message(body, subject, sender)
    found = verdict(reference.validate(batch))
    assert verdict(native.validate(batch)) == found
    assert sorted(re.split("[#/]", str(path))[-1] for _, path, _ in found) == sorted(refused)


@pytest.mark.parametrize(
    ("extra", "sender", "refused"),
    # Reporting a violation of the body takes seconds: the report holds the megabyte value.
    [(0, "\x07", ["name"]), pytest.param(1, "ok", ["content"], marks=pytest.mark.slow)],
)
def test_a_body_is_held_to_its_limit(
    engines: tuple[Turbo, Pyshacl], extra: int, sender: str, refused: list[str]
) -> None:
    # The compiled engine alone: pyshacl reads a line of N-Triples a megabyte long in
    # seconds (rdflib's reader), and is held to this limit by the generated batches of
    # test_shacl_engines.py, which break every maxLength by one character.
    native, _ = engines
    found = native.validate(_mail_message("x" * (MAX_BODY_CHARS + extra), "ok", sender))
    assert [re.split("[#/]", str(one.path))[-1] for one in found] == refused


def test_the_shapes_hold_the_documented_limits() -> None:
    shapes = load_shapes()
    limits: dict[str, set[int]] = {}
    for prop in shapes.subjects(SH.maxLength, None):
        path = re.split("[#/]", str(shapes.value(prop, SH.path)))[-1]
        limits.setdefault(path, set()).add(int(str(shapes.value(prop, SH.maxLength))))
    assert limits["title"] == {MAX_TITLE_CHARS}
    assert limits["name"] == {MAX_NAME_CHARS, MAX_REVIEWER_NAME_CHARS}
    assert limits["accountName"] == {MAX_NAME_CHARS}
    assert limits["content"] == {MAX_BODY_CHARS}


# ----------------------------------------------------------------------- mail archives


def test_a_mail_archive_of_random_bytes_is_refused(repo: Path, tmp_path: Path) -> None:
    garbage = random.Random(50).randbytes(64 * 1024)
    manifest = _records_with_mbox(tmp_path, garbage)
    with pytest.raises(MailArchiveError) as refused:
        Brain.build(manifest, source=str(repo))
    message = str(refused.value)
    assert message.startswith("No entry in the mail archive ")
    assert "pigeon-list.mbox for list pigeon is an e-mail message" in message
    assert "check that the file is the list's mbox" in message


def _entry(number: int, body: bytes) -> bytes:
    return b"From someone Mon Feb 05 10:00:00 2029\n" + body + f"\n{number}\n\n".encode()


def _message(number: int) -> bytes:
    return (
        f"From: Alice Example <alice@example.com>\nSubject: Knot {number}\n"
        f"Date: Mon, 05 Feb 2029 10:00:00 +0000\nMessage-ID: <knot-{number}@example.com>\n"
    ).encode()


@pytest.mark.parametrize(
    ("good", "bad", "refused"),
    [(0, 0, "holds no message"), (1, 2, "Only 1 of the 3 entries"), (2, 2, None), (3, 1, None)],
)
def test_an_archive_mostly_not_mail_is_refused(good: int, bad: int, refused: str | None) -> None:
    mbox = b"".join(_entry(n, _message(n)) for n in range(good))
    mbox += b"".join(_entry(n, b"\x00\xff" * 40) for n in range(bad))
    result = read_mbox(mbox, "pigeon")
    if refused is None:
        check_mostly_mail(result, "the mail archive x.mbox for list pigeon")
        assert len(result.messages) == good
        return
    with pytest.raises(MailArchiveError, match=refused):
        check_mostly_mail(result, "the mail archive x.mbox for list pigeon")


# ----------------------------------------------------------------------------- reviews


@pytest.fixture(scope="module")
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("refused-store") / "store"
    built, _ = Brain.build(MANIFEST, source=str(repo), path=folder)
    built.close()
    return folder


def _reviews(store: Path) -> list[object]:
    with Brain.open(store, reader=Reader(clearance="restricted")) as brain:
        return [row for state in ("ratified", "disputed") for row in brain.cards_in_state(state)]


@pytest.mark.parametrize(
    "flags", [["--ratify", "--dispute"], ["--dispute", "--ratify"], ["--ratify", "--withdraw"]]
)
def test_a_review_with_two_verdicts_is_refused(store: Path, flags: list[str]) -> None:
    result = CliRunner().invoke(
        main, ["review", QUESTION, "--reviewer", "Dana", *flags, "--store", str(store)]
    )
    assert result.exit_code == 2, result.output
    assert "Give one verdict, not --" in result.output
    assert all(flag in result.output for flag in flags)
    assert _reviews(store) == []


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_a_review_of_no_question_is_refused(store: Path, question: str) -> None:
    with (
        Brain.open(store, reader=Reader(clearance="internal")) as brain,
        pytest.raises(ReviewError, match="The question is empty"),
    ):
        brain.review(question, reviewer="Dana", verdict="ratified")
    result = CliRunner().invoke(
        main, ["review", question, "--reviewer", "Dana", "--ratify", "--store", str(store)]
    )
    assert result.exit_code == 2, result.output
    assert "Error: The question is empty." in result.output
    assert _reviews(store) == []


# --------------------------------------------------------------------------- questions


def test_a_question_the_length_of_a_document_is_refused(store: Path) -> None:
    question = "why " * 30_000
    with Brain.open(store) as brain:
        with pytest.raises(InputError, match="The question is 120,000 characters long") as caught:
            brain.ask(question)
        assert f"at most {MAX_QUESTION_CHARS:,}" in str(caught.value)
        assert brain.ask(QUESTION.ljust(MAX_QUESTION_CHARS)).verdict.value == "answered"
        # MCP's ask tool answers with the sentence as the tool's error.
        # On a thread of its own: a browser test of the same session may leave Playwright's
        # event loop running on this one.
        with ThreadPoolExecutor(1) as thread:
            call = create_server(brain).call_tool("ask", {"question": question})
            tool = thread.submit(asyncio.run, call).result()
        assert isinstance(tool, CallToolResult) and tool.is_error
        assert isinstance(tool.content[0], TextContent)
        assert tool.content[0].text.startswith("The question is 120,000 characters long")
    result = CliRunner().invoke(main, ["ask", question, "--store", str(store)])
    assert result.exit_code == 2
    assert "Error: The question is 120,000 characters long" in result.output
    review = CliRunner().invoke(
        main, ["review", question, "--reviewer", "Dana", "--ratify", "--store", str(store)]
    )
    assert review.exit_code == 2 and "120,000 characters" in review.output
    assert _reviews(store) == []
