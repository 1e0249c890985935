"""``ratified fetch rfc N`` and ``ratified fetch draft NAME-NN`` against a loopback fake of the
RFC Editor and the IETF archive: what is kept, where, read by which reader, cached, and the
sentence a missing RFC or revision gets."""

from __future__ import annotations

import http.server
import io
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import ClassVar

import httpx
import pytest
from click.testing import CliRunner, Result

from ratified_rdf import Brain
from ratified_rdf.sources.formats import parse_document
from ratified_rdf.sources.git_repo import SourceError
from ratified_rdf.sources.revisions.files import revision_of_file
from ratified_rdf.surfaces.cli import main
from tests.pigeon import MANIFEST, make_pigeon_repo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rfc_text"
HERON_XML = (
    '<?xml version="1.0"?>\n<rfc docName="draft-example-heron-wading-07" ipr="trust200902">\n'
    '<front><title>Heron Wading</title><author fullname="Bob Example"/></front>\n'
    '<middle>\n<section title="Introduction"><t>Herons wade.</t></section>\n'
    '<section title="Details"><t>Long legs.</t></section>\n</middle>\n</rfc>\n'
)


class _Fake(http.server.BaseHTTPRequestHandler):
    """The RFC Editor at /rfc/ (RFC 9999 as text only) and the archive at /archive/id/
    (draft-example-heron-wading-07 as XML); everything else is 404."""

    files: ClassVar[dict[str, bytes]] = {}
    asked: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.asked.append(self.path)
        body = self.files.get(self.path)
        self.send_response(404 if body is None else 200)
        self.send_header("Content-Type", "text/plain")
        payload = b"Not found" if body is None else body
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture()
def fake() -> Iterator[str]:
    _Fake.files = {
        "/rfc/rfc9999.txt": (FIXTURES / "pigeon-v3.txt").read_bytes(),
        "/archive/id/draft-example-heron-wading-07.xml": HERON_XML.encode(),
    }
    _Fake.asked = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fake)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def test_fetch_rfc_keeps_the_text_its_reader_reads_and_asks_once(fake: str, tmp_path: Path) -> None:
    records, cache = tmp_path / "records", tmp_path / "cache"
    args = ["--records", str(records), "--cache", str(cache), "--base-url", f"{fake}/rfc/"]
    done = _run("fetch", "rfc", "9999", *args)
    assert done.exit_code == 0, done.output
    kept = records / "texts" / "rfc9999.txt"
    assert kept.read_bytes() == (FIXTURES / "pigeon-v3.txt").read_bytes()
    assert f"kept as {kept}" in done.stdout and "fetching RFC 9999" in done.stderr
    # The XML is asked for first; the RFC Editor has only the text here.
    assert _Fake.asked == ["/rfc/rfc9999.xml", "/rfc/rfc9999.txt"]
    document = parse_document(kept.name, kept.read_text(), published=True)
    assert [s.number for s in document.sections][:3] == ["1", "1.1", "2"]
    # Again: the cache answers (the XML's 404 is not cached, so that is asked again).
    again = _run("fetch", "rfc", "9999", *args)
    assert again.exit_code == 0 and "from the cache" in again.stdout, again.output
    assert _Fake.asked.count("/rfc/rfc9999.txt") == 1
    asked = len(_Fake.asked)
    offline = _run("fetch", "rfc", "9999", *args, "--offline")
    assert offline.exit_code == 0 and "from the cache" in offline.stdout, offline.output
    assert len(_Fake.asked) == asked
    kept.unlink()
    nothing = _run("fetch", "rfc", "9998", *args, "--offline")
    assert nothing.exit_code == 2 and "offline" in nothing.output, nothing.output


def test_fetch_draft_keeps_a_revision_the_revision_sources_name(fake: str, tmp_path: Path) -> None:
    records = tmp_path / "records"
    done = _run(
        "fetch",
        "draft",
        "draft-example-heron-wading-07",
        "--records",
        str(records),
        "--cache",
        str(tmp_path / "cache"),
        "--base-url",
        f"{fake}/archive/id",
    )
    assert done.exit_code == 0, done.output
    kept = records / "texts" / "draft-example-heron-wading-07.xml"
    assert kept.read_text() == HERON_XML
    assert revision_of_file(f"texts/{kept.name}") == ("draft-example-heron-wading", "07")
    assert "2 sections" in done.stdout
    assert _Fake.asked == ["/archive/id/draft-example-heron-wading-07.xml"]


def test_a_missing_rfc_or_revision_is_a_sentence_and_keeps_nothing(
    fake: str, tmp_path: Path
) -> None:
    records = tmp_path / "records"
    common = ["--records", str(records), "--cache", str(tmp_path / "cache")]
    rfc = _run("fetch", "rfc", "9998", *common, "--base-url", f"{fake}/rfc/")
    assert rfc.exit_code != 0
    assert "404 Not Found" in rfc.output and "has no RFC 9998 as XML or text" in rfc.output
    assert "Traceback" not in rfc.output
    draft = _run(
        "fetch",
        "draft",
        "draft-example-heron-wading-08",
        *common,
        "--base-url",
        f"{fake}/archive/id/",
    )
    assert draft.exit_code != 0
    assert "holds no revision draft-example-heron-wading-08" in draft.output
    assert not (records / "texts").exists() or not any((records / "texts").iterdir())
    named = _run("fetch", "draft", "draft-example-heron-wading", *common)
    assert named.exit_code == 2 and "two-digit revision" in named.output
    assert "/archive/id/draft-example-heron-wading.xml" not in _Fake.asked


def test_a_page_no_reader_can_read_is_refused_and_not_cached(fake: str, tmp_path: Path) -> None:
    _Fake.files["/rfc/rfc9997.xml"] = b"<html><body>Maintenance</body></html>"
    common = ["--records", str(tmp_path / "r"), "--cache", str(tmp_path / "cache")]
    done = _run("fetch", "rfc", "9997", *common, "--base-url", f"{fake}/rfc/")
    assert done.exit_code != 0 and "notice page" in done.output, done.output
    assert not (tmp_path / "r" / "texts" / "rfc9997.xml").exists()
    _run("fetch", "rfc", "9997", *common, "--base-url", f"{fake}/rfc/")
    assert _Fake.asked.count("/rfc/rfc9997.xml") == 2  # asked again: the bad page was dropped


def test_a_fetched_rfc_text_names_itself_in_the_manifest_and_a_build_reads_it(
    fake: str, tmp_path: Path
) -> None:
    # The pigeon repository without its RFC text; the RFC Editor (the fake) has one.
    repo = make_pigeon_repo(tmp_path / "g")
    subprocess.run(["git", "-C", str(repo), "rm", "-q", "rfc9999.md"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "tidy up"], check=True)
    records = tmp_path / "records"
    shutil.copytree(MANIFEST.parent, records)
    manifest = records / "manifest.toml"
    manifest.write_text(
        manifest.read_text().replace('ref = "main"\nfile = "rfc9999.md"\n', ""),
        encoding="utf-8",
    )
    without, notes = _built(manifest, repo)
    assert [n for n in notes if "stand for" in n], notes

    fetch = ["fetch", "rfc", "9999", "--records", str(records), "--cache", str(tmp_path / "c")]
    done = _run(*fetch, "--base-url", f"{fake}/rfc/")
    assert done.exit_code == 0, done.output
    assert "now names it: text = 'texts/rfc9999.txt'" in done.stdout
    entry = manifest.read_text().split("[[rfc]]")[1].split("[")[0]
    assert 'text = "texts/rfc9999.txt"' in entry and "number = 9999" in entry
    again = _run(*fetch, "--base-url", f"{fake}/rfc/")
    assert again.exit_code == 0 and manifest.read_text().count("text = ") == 1

    # The build reads the kept text by its suffix's reader: here the RFC's own markdown.
    shutil.copy(MANIFEST.parent / "rfc9999.md", records / "texts" / "rfc9999.md")
    manifest.write_text(manifest.read_text().replace("rfc9999.txt", "rfc9999.md"))
    brain, notes = _built(manifest, repo)
    assert not [n for n in notes if "RFC 9999" in n], notes
    card = brain.ask("history of RFC 9999 section 3.1")
    assert card.verdict.value == "answered", card.summary
    before = without.ask("history of RFC 9999 section 3.1")
    # The RFC's own text now, where the last revision's stood for it before.
    assert "do not hold RFC 9999's own text" in before.summary
    assert "own text" not in card.summary
    (records / "texts" / "rfc9999.md").unlink()
    with pytest.raises(SourceError, match="ratified fetch rfc 9999 --records"):
        Brain.build(manifest, source=str(repo))


def _built(manifest: Path, repo: Path) -> tuple[Brain, list[str]]:
    brain, report = Brain.build(manifest, source=str(repo))
    return brain, list(report.notes)


def test_online_base_sends_every_request_to_a_mirror_under_the_host_s_name(
    fake: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The docs' own command line, unchanged: only the environment names the mirror.
    _Fake.files["/www.rfc-editor.org/rfc/rfc9999.txt"] = _Fake.files["/rfc/rfc9999.txt"]
    monkeypatch.setenv("RATIFIED_ONLINE_BASE", fake)
    records = tmp_path / "records"
    done = _run("fetch", "rfc", "9999", "--records", str(records), "--cache", str(tmp_path / "c"))
    assert done.exit_code == 0, done.output
    assert _Fake.asked == [
        "/www.rfc-editor.org/rfc/rfc9999.xml",
        "/www.rfc-editor.org/rfc/rfc9999.txt",
    ]
    # The answer is cached under the address asked for, as without a mirror.
    assert "https://www.rfc-editor.org/rfc/rfc9999.txt" in done.stdout


def test_fetch_mail_makes_the_folder_it_is_given(
    fake: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ratified_rdf.sources.online.mailarchive import export_url

    url = httpx.URL(export_url("pigeon", date(2029, 1, 1), date(2029, 2, 1)))
    _Fake.files[f"/{url.host}{url.raw_path.decode()}"] = _mbox_export()
    monkeypatch.setenv("RATIFIED_ONLINE_BASE", fake)
    monkeypatch.chdir(tmp_path)
    done = _run(
        "fetch", "mail", "pigeon", "--since", "2029-01-01", "--until", "2029-02-01", "--to", "mail/"
    )
    assert done.exit_code == 0, done.output
    assert (tmp_path / "mail" / "pigeon-2029-01-01-2029-02-01.tar.gz").is_file()
    assert (tmp_path / "mail" / "mbox" / "mbox0101_abcde" / "pigeon" / "2029-01.mbox").is_file()


def _mbox_export() -> bytes:
    mbox = b"From alice@example.com Tue Jan 10 10:00:00 2029\nFrom: Alice\nSubject: Coo\n\nCoo.\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        info = tarfile.TarInfo("mbox0101_abcde/pigeon/2029-01.mbox")
        info.size = len(mbox)
        tar.addfile(info, io.BytesIO(mbox))
    return buffer.getvalue()
