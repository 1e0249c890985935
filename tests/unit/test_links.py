"""``ratified links``: every link a card renders is checked, and each checker fails when it
should.

The pigeon brain's own pages all pass (counted against the fixture's own files); links made
broken on purpose (a revision that does not exist, a section anchor not in that revision, a
bundle commit id where GitHub's belongs, a pull request number not held, …) each fail with a
sentence saying why. The online mode is tried against an HTTP server on loopback started
here; nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest
from click.testing import CliRunner, Result

from ratified_rdf import Brain
from ratified_rdf.answers.models import Answer, Evidence
from ratified_rdf.surfaces import links
from ratified_rdf.surfaces.cli import main
from tests.pigeon import DATES, FIXTURES, MANIFEST, make_pigeon_repo

REPO = "https://github.com/example/pigeon-spec"
ORIGINS = ("https://datatracker.ietf.org", "https://www.rfc-editor.org", "https://github.com")
"""The hosts the pigeon's links are on: the online tests send them all to loopback."""
QUESTIONS = [
    "why does the take-off rule look like this?",
    "what is PR #2?",
    "what is issue #1?",
    "history of RFC 9999 section 3.1",
    "what did section 2.1 of draft-example-pigeon-00 become in the RFC?",
    "what does the graph hold?",
    "who discussed RFC 9999 section 3.1?",
    "what did Bob Example work on?",
    "tell me about draft-example-pigeon",
]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("links-git"))


@pytest.fixture(scope="module")
def brain(repo: Path) -> Brain:
    built, _report = Brain.build(MANIFEST, source=str(repo))
    return built


@pytest.fixture(scope="module")
def rows(brain: Brain) -> dict[str, list]:
    return links.read_graph(brain)


@pytest.fixture(scope="module")
def commits(repo: Path) -> list[str]:
    """Every commit id of the pigeon repository, read with git."""
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-list", "--all"], check=True, capture_output=True, text=True
    )
    return out.stdout.split()


def _index(rows: dict[str, list], commit_map: dict[str, str] | None = None) -> links.LinkIndex:
    return links.LinkIndex.read(rows, commit_map)


def _check(url: str, index: links.LinkIndex) -> tuple[str, str | None]:
    source = links.LinkSource(question="q", intent="test", field="url")
    return links.check_offline(links.Link(url=url, source=source), index)


# ------------------------------------------------------------------------------------------
# The whole graph


def test_every_page_the_pigeon_graph_holds_passes_and_is_counted(
    brain: Brain, commits: list[str]
) -> None:
    report = links.check_brain(brain)
    assert report.ok, report.text()
    counts = {c.kind: c.checked for c in report.counts}
    archive = json.loads((FIXTURES / "pigeon-archive.json").read_text())
    # Counted from the fixture's own files, not from the brain.
    assert counts["revision"] == len(DATES)
    assert counts["issue"] == len(archive["issues"])
    assert counts["pull-request"] == len(archive["pulls"])
    assert counts["draft"] == 1 and counts["rfc"] == 1 and counts["repository"] == 1
    assert 0 < counts["commit"] <= len(commits)
    assert all(c.broken == 0 for c in report.counts)
    assert report.summary().startswith("Links (offline): ")


def test_a_page_that_names_another_resource_than_its_own_is_broken(
    rows: dict[str, list],
) -> None:
    index = _index(rows)
    page = links.Link(
        url="https://datatracker.ietf.org/doc/draft-example-pigeon/01/",
        source=links.LinkSource(resource="https://w3id.org/x/revision-00", field="foaf:page"),
        expected=links.Expected(kinds=("revision",), subject="draft-example-pigeon-00"),
    )
    kind, reason = links.check_offline(page, index)
    assert kind == "revision"
    assert reason and "draft-example-pigeon-01" in reason and "draft-example-pigeon-00" in reason
    wrong_kind = page.model_copy(
        update={"expected": links.Expected(kinds=("commit",), subject=None)}
    )
    assert "form of a revision link" in (links.check_offline(wrong_kind, index)[1] or "")
    fine = page.model_copy(
        update={"expected": links.Expected(kinds=("revision",), subject="draft-example-pigeon-01")}
    )
    assert links.check_offline(fine, index)[1] is None


# ------------------------------------------------------------------------------------------
# Each checker fails when it should

BROKEN = [
    # (url, kind, words the reason must hold)
    ("https://datatracker.ietf.org/doc/draft-example-pigeon/07/", "revision", "no revision 07"),
    ("https://datatracker.ietf.org/doc/draft-example-parrot/00/", "revision", "no draft"),
    (
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-00#section-3.1",
        "revision-section",
        "no section 3.1",
    ),
    (
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-00#appendix-C",
        "revision-section",
        "no section C",
    ),
    (
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-00#take-off",
        "revision-section",
        "not a section anchor",
    ),
    (
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-09#section-1",
        "revision-section",
        "no revision 09",
    ),
    ("https://datatracker.ietf.org/doc/draft-example-parrot/", "draft", "no draft"),
    ("https://www.rfc-editor.org/rfc/rfc1234", "rfc", "neither holds nor names"),
    ("https://www.rfc-editor.org/rfc/rfc9999#section-9", "rfc-section", "no section 9"),
    ("https://www.rfc-editor.org/rfc/rfc1234#section-1", "rfc-section", "does not hold"),
    (f"{REPO}/commit/{'0' * 40}", "commit", "holds no commit"),
    (f"https://github.com/example/parrot-spec/commit/{'0' * 40}", "commit", "repository"),
    (f"{REPO}/pull/99", "pull-request", "no issue or pull request #99"),
    (f"{REPO}/issues/2", "issue", "is a pull request"),
    (f"{REPO}/pull/1", "pull-request", "is an issue"),
    (f"{REPO}/pull/2#issue-2", "comment", "not an anchor GitHub gives"),
    (f"{REPO}/issues/98#issuecomment-1", "comment", "#98"),
    ("https://mailarchive.ietf.org/arch/msg/pigeon/not-a-message/", "mail", "no mail message"),
    ("https://github.com/example/parrot-spec", "repository", "built from"),
    ("http://datatracker.ietf.org/doc/draft-example-pigeon/00/", "revision", "https"),
    ("https://datatracker.ietf.org/doc/draft-example-pigeon/00/?x=1", "revision", "query"),
    ("https://example.org/somewhere", "unrecognised", "mints links only on"),
    ("https://datatracker.ietf.org/meeting/99/", "unrecognised", "not one the brain mints"),
    ("https://datatracker.ietf.org/doc/draft-example-pigeon/00/ ", "unrecognised", "blanks"),
    ("mailto:alice@example.com", "unrecognised", "not a web address"),
    ("https://[::1/x", "unrecognised", "not a well-formed URL"),
]


@pytest.mark.parametrize(("url", "kind", "words"), BROKEN)
def test_a_link_made_broken_on_purpose_fails_with_a_sentence_saying_why(
    rows: dict[str, list], url: str, kind: str, words: str
) -> None:
    found, reason = _check(url, _index(rows))
    assert found == kind
    assert reason is not None and words in reason, reason


def test_every_registered_kind_of_link_has_a_broken_case_above() -> None:
    assert set(links.CHECKERS) <= {kind for _, kind, _ in BROKEN}


def test_their_fine_neighbours_pass(rows: dict[str, list]) -> None:
    index = _index(rows)
    for url in (
        "https://datatracker.ietf.org/doc/draft-example-pigeon/02/",
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-01#section-3.1",
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-00#appendix-A",
        "https://datatracker.ietf.org/doc/html/draft-example-pigeon-00",
        "https://www.rfc-editor.org/rfc/rfc9999#section-3.1",
        f"{REPO}/pull/2",
        f"{REPO}/issues/1",
        f"{REPO}/pull/2#pullrequestreview-42",
        f"{REPO}/issues/1#issuecomment-7",
        REPO,
    ):
        assert _check(url, index)[1] is None, url


def test_a_bundle_commit_id_where_githubs_belongs_is_broken(
    rows: dict[str, list], commits: list[str]
) -> None:
    held = sorted(_index(rows).commits)
    # A corpus whose bundle rewrote every id: the map sends made-up bundle ids to the ids the
    # brain holds (GitHub's).
    bundle_ids = [f"{n:040x}" for n in range(1, len(held) + 1)]
    index = _index(rows, dict(zip(bundle_ids, held, strict=True)))
    kind, reason = _check(f"{REPO}/commit/{bundle_ids[0]}", index)
    assert kind == "commit"
    assert reason and "bundle's id" in reason and held[0] in reason
    assert _check(f"{REPO}/commit/{held[0]}", index)[1] is None
    unmapped = next(c for c in commits if c not in held)
    reason = _check(f"{REPO}/commit/{unmapped}", index)[1]
    assert reason and "not in the corpus's commit map" in reason


def test_pull_request_links_are_checked_against_the_repositorys_own_pull_refs(
    repo: Path, rows: dict[str, list], tmp_path: Path
) -> None:
    mirror = tmp_path / "mirror.git"
    subprocess.run(
        ["git", "clone", "-q", "--mirror", str(repo), str(mirror)], check=True, capture_output=True
    )
    with pytest.raises(links.LinksError, match="holds no refs/pull/N/head"):
        links.repository_pull_requests(mirror)
    head = subprocess.run(
        ["git", "--git-dir", str(mirror), "rev-parse", "main"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    for number in (2, 1):  # GitHub's record: #2 is a pull request, and (here) so is #1
        subprocess.run(
            ["git", "--git-dir", str(mirror), "update-ref", f"refs/pull/{number}/head", head],
            check=True,
        )
    pulls = links.repository_pull_requests(mirror)
    assert pulls == {1, 2}
    index = links.LinkIndex.read(rows, None, pulls)
    assert _check(f"{REPO}/pull/2", index)[1] is None
    reason = _check(f"{REPO}/issues/1", index)[1]
    assert reason and "is a pull request of the repository" in reason
    reason = _check(f"{REPO}/pull/2", links.LinkIndex.read(rows, None, {1}))[1]
    assert reason and "has no pull request #2" in reason


def test_a_new_kind_of_link_is_one_more_registration() -> None:
    with pytest.raises(ValueError, match="registered already"):
        links.register(links.CHECKERS["revision"])


# ------------------------------------------------------------------------------------------
# Cards


def _http_strings(value: object, path: str = "") -> Iterator[tuple[str, str]]:
    """Every http(s) string in a dumped card, by where it is, leaving out the queries (their
    SPARQL names IRIs) and ``iri`` fields (the graph's names, not rendered as links)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key not in {"queries", "iri", "trust"}:
                yield from _http_strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for item in value:
            yield from _http_strings(item, path)
    elif isinstance(value, str) and value.startswith(("http://", "https://")):
        yield path, value


def test_card_links_finds_every_url_a_card_carries(brain: Brain) -> None:
    seen = 0
    for question in QUESTIONS:
        answer = brain.ask(question)
        found = {link.url for link in links.card_links(answer)}
        carried = {url for _, url in _http_strings(answer.model_dump())}
        assert carried == found, question
        seen += len(found)
    assert seen > 30  # the questions above do carry links


def test_the_pigeon_cards_links_all_pass(brain: Brain) -> None:
    report = links.check_questions(brain, QUESTIONS)
    assert report.ok, report.text()
    assert report.questions == len(QUESTIONS)
    kinds = {c.kind for c in report.counts}
    assert {"revision", "revision-section", "rfc-section", "commit", "pull-request"} <= kinds


def test_a_broken_link_on_a_card_is_reported_with_its_question_and_intent(
    brain: Brain, rows: dict[str, list]
) -> None:
    answer = brain.ask(QUESTIONS[0])
    bad = "https://datatracker.ietf.org/doc/draft-example-pigeon/05/"
    broken: Answer = answer.model_copy(
        update={
            "evidence": [
                *answer.evidence,
                Evidence(iri="https://w3id.org/x", label="x", url=bad, role="revision"),
            ]
        }
    )
    report = links.check_links(links.card_links(broken), _index(rows), scope="questions")
    assert [b.url for b in report.broken] == [bad]
    (item,) = report.broken
    assert item.sources[0].question == QUESTIONS[0]
    assert item.sources[0].intent == answer.intent
    text = report.text()
    assert "Broken revision links (1):" in text and QUESTIONS[0] in text
    assert {c.kind: c.broken for c in report.counts}["revision"] == 1


def test_a_card_link_of_another_kind_than_its_role_or_field_says_is_broken(
    brain: Brain, rows: dict[str, list]
) -> None:
    answer = brain.ask("what is PR #2?")
    pull = f"{REPO}/pull/2"
    mislabelled: Answer = answer.model_copy(
        update={
            "evidence": [Evidence(iri="https://w3id.org/x", label="x", url=pull, role="commit")]
        }
    )
    report = links.check_links(links.card_links(mislabelled), _index(rows), scope="questions")
    (item,) = report.broken
    assert item.url == pull and "given as a commit link" in item.reason
    assert [s.field for s in item.sources] == ["evidence 1 (commit) url"]
    # The same page in the results, where a thread's page belongs, is not blamed.
    assert any(link.url == pull for link in links.card_links(answer))


def test_every_url_field_of_every_result_has_its_kinds_of_link() -> None:
    from typing import get_args

    from ratified_rdf.answers.models import Result

    union = get_args(Result)[0]
    for model in get_args(union):
        kind = model.model_fields["kind"].default
        for name in model.model_fields:
            if name == "url" or name.endswith("_url") or name == "merge_commit":
                assert (kind, name) in links.FIELD_KINDS, (kind, name)


def test_question_files_in_toml_or_plain_text(tmp_path: Path) -> None:
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(
        '[[question]]\nid = "a"\ntext = "what is PR #2?"\n\n'
        '[[question]]\nid = "b"\ntext = "what is issue #1?"\n'
    )
    assert links.read_questions(eval_file) == ["what is PR #2?", "what is issue #1?"]
    simple = tmp_path / "simple.toml"
    simple.write_text('[one]\nquestion = "what is PR #2?"\n[two]\nquestion = "why?"\n')
    assert links.read_questions(simple) == ["what is PR #2?", "why?"]
    plain = tmp_path / "questions.txt"
    plain.write_text("# comment\nwhat is PR #2?\n\nwhat is issue #1?\n")
    assert links.read_questions(plain) == ["what is PR #2?", "what is issue #1?"]
    (tmp_path / "empty.toml").write_text('title = "no questions"\n')
    with pytest.raises(links.LinksError, match="holds no questions"):
        links.read_questions(tmp_path / "empty.toml")
    (tmp_path / "bad.toml").write_text("[[question\n")
    with pytest.raises(links.LinksError, match="not valid TOML"):
        links.read_questions(tmp_path / "bad.toml")


# ------------------------------------------------------------------------------------------
# Online, against a server on loopback


class _Pages(BaseHTTPRequestHandler):
    """200 at /ok, 404 at /gone, a redirect from /moved to /ok, 405 to HEAD at /no-head (200
    to GET), 503 at /busy; every request is recorded."""

    seen: ClassVar[list[tuple[str, str, str]]] = []

    def _answer(self, method: str) -> None:
        self.seen.append((method, self.path, self.headers.get("User-Agent", "")))
        path = self.path
        if path == "/moved":
            self.send_response(301)
            self.send_header("Location", "/ok")
        elif path == "/no-head" and method == "HEAD":
            self.send_response(405)
        else:
            status = {"/ok": 200, "/no-head": 200, "/gone": 404, "/busy": 503}.get(path)
            # The pigeon's pages, as if their hosts answered: the Datatracker and the RFC
            # Editor have them all, GitHub has lost pull request #2.
            if status is None:
                status = 404 if path.endswith("/pull/2") else 200
            self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self) -> None:
        self._answer("HEAD")

    def do_GET(self) -> None:
        self._answer("GET")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def pages() -> Iterator[str]:
    _Pages.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2030, 1, 1, tzinfo=UTC)
        self.slept: list[float] = []

    def __call__(self) -> datetime:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_online_heads_follows_redirects_falls_back_to_get_and_caches(
    pages: str, tmp_path: Path
) -> None:
    clock = _Clock()
    cache = tmp_path / "links-cache.json"

    def checker() -> links.OnlineChecker:
        return links.OnlineChecker(cache, delay=0.5, clock=clock, sleep=clock.sleep)

    first = checker()
    urls = [f"{pages}/ok#section-1", f"{pages}/ok#section-2", f"{pages}/gone", f"{pages}/moved"]
    urls += [f"{pages}/no-head", f"{pages}/busy"]
    results = first.check(urls)
    assert not results[f"{pages}/ok#section-1"].broken
    assert results[f"{pages}/gone"].broken and results[f"{pages}/gone"].status == 404
    assert "404" in results[f"{pages}/gone"].reason()
    moved = results[f"{pages}/moved"]
    assert not moved.broken and moved.final_url == f"{pages}/ok"
    no_head = results[f"{pages}/no-head"]
    assert not no_head.broken and no_head.method == "GET"
    assert results[f"{pages}/busy"].broken
    # The fragment never reaches the host: /ok is asked once for both anchors.
    assert [url for _, url in first.requests if url.endswith("/ok")] == [f"{pages}/ok"]
    assert ("GET", "/no-head") in {(m, p) for m, p, _ in _Pages.seen}
    assert all("ratified-links" in agent for _, _, agent in _Pages.seen)
    # Five pages on one host, asked one at a time, the delay before each but the first (a
    # GET after a 405 follows its HEAD at once).
    assert clock.slept == [0.5] * 4
    asked = len(_Pages.seen)

    again = checker().check(urls)  # from the cache, but for the 503 (not cached)
    assert [p for _, p, _ in _Pages.seen[asked:]] == ["/busy"]
    assert again[f"{pages}/gone"].status == 404

    clock.now += timedelta(days=8)  # past the default week: asked again
    checker().check([f"{pages}/gone"])
    assert _Pages.seen[-1][:2] == ("HEAD", "/gone")


def test_online_through_the_report_a_page_the_host_lost_is_broken(
    brain: Brain, rows: dict[str, list], pages: str, tmp_path: Path
) -> None:
    clock = _Clock()
    checker = links.OnlineChecker(
        tmp_path / "cache.json",
        via={origin: pages for origin in ORIGINS},
        delay=0,
        clock=clock,
        sleep=clock.sleep,
    )
    answer = brain.ask("what is PR #2?")
    found = links.card_links(answer)
    report = links.check_links(found, _index(rows), scope="questions", online=checker)
    assert report.online
    assert [b.url for b in report.broken] == [f"{REPO}/pull/2"]
    (lost,) = report.broken
    assert lost.status == 404 and "answered 404 to HEAD" in lost.reason
    assert lost.sources[0].question == "what is PR #2?"
    # Each page asked about once, without its anchor, and every request went to loopback.
    assert sorted(url for _, url in checker.requests) == sorted(
        {link.url.split("#")[0] for link in found}
    )
    assert len(_Pages.seen) == len(checker.requests)


def test_online_does_not_ask_about_a_link_that_failed_its_form(
    rows: dict[str, list], pages: str
) -> None:
    checker = links.OnlineChecker(None, via={o: pages for o in ORIGINS}, delay=0)
    source = links.LinkSource(question="q", intent="test", field="url")
    bad = links.Link(url=f"{REPO}/pull/99", source=source)
    good = links.Link(url=f"{REPO}/issues/1", source=source)
    report = links.check_links([bad, good], _index(rows), scope="questions", online=checker)
    assert [b.url for b in report.broken] == [bad.url]
    assert "holds no issue or pull request #99" in report.broken[0].reason
    assert checker.requests == [("HEAD", good.url)]


def test_online_reports_a_host_that_does_not_answer(tmp_path: Path) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = links.OnlineChecker(None, timeout=2).check([f"http://127.0.0.1:{port}/x"])
    (answer,) = result.values()
    assert answer.broken and answer.status is None
    assert "did not answer" in answer.reason()


def test_the_default_cache_is_beside_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert links.default_cache(tmp_path / "brain") == tmp_path / "brain.links-cache.json"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    remote = links.default_cache("http://127.0.0.1:7878")
    assert remote.is_relative_to(tmp_path / "state") and remote.name.endswith(".links-cache.json")


@pytest.mark.slow
def test_the_server_and_the_mcp_server_never_load_the_link_checker() -> None:
    # The engine never makes an outgoing request for a reader: only the operator's command
    # reaches the online checker.
    code = (
        "import sys, ratified_rdf.surfaces.server, ratified_rdf.surfaces.mcp_server, "
        "ratified_rdf.surfaces.cli; print('ratified_rdf.surfaces.links' in sys.modules)"
    )
    source = str(Path(links.__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, env=env
    ).stdout
    assert out.strip() == "False"


# ------------------------------------------------------------------------------------------
# The command


def _run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def store(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("links-store") / "store"
    built = _run("build", str(MANIFEST), "--source", str(repo), "--store", str(folder), "--quiet")
    assert built.exit_code == 0, built.output
    return folder


def test_cli_checks_a_question_and_exits_0(store: Path) -> None:
    result = _run("links", "--question", QUESTIONS[0], "--store", str(store), "--quiet")
    assert result.exit_code == 0, result.output
    assert "No broken links." in result.output
    assert "commit " in result.output and "0 broken" in result.output


def test_cli_all_as_json(store: Path) -> None:
    result = _run("links", "--all", "--json", "--store", str(store), "--quiet")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output[result.output.index("{") :])
    assert data["ok"] is True
    report = links.LinkReport.model_validate(data)
    assert report.scope == "all" and report.ok
    assert {c.kind: c.checked for c in report.counts}["revision"] == len(DATES)


def test_cli_exits_1_and_lists_the_broken_links(store: Path, tmp_path: Path) -> None:
    brain = Brain.open(store)
    try:
        held = sorted(links.LinkIndex.read(links.read_graph(brain), None).commits)
    finally:
        brain.close()
    # A map that says the ids the brain holds are a bundle's: each commit link is then wrong.
    commit_map = tmp_path / "commit-map.tsv"
    commit_map.write_text(
        "bundle_sha\tgithub_sha\n" + "".join(f"{c}\t{n:040x}\n" for n, c in enumerate(held, 1))
    )
    result = _run(
        "links", "--all", "--commit-map", str(commit_map), "--store", str(store), "--quiet"
    )
    assert result.exit_code == 1, result.output
    assert f"Broken commit links ({len(held)}):" in result.output
    assert "the bundle's id of GitHub commit" in result.output
    assert "graph resource <" in result.output
    assert f"commit {len(held)} checked, {len(held)} broken" in result.output


def test_cli_source_checks_pull_requests_against_its_refs(
    store: Path, repo: Path, tmp_path: Path
) -> None:
    mirror = tmp_path / "pigeon.git"
    subprocess.run(
        ["git", "clone", "-q", "--mirror", str(repo), str(mirror)], check=True, capture_output=True
    )
    subprocess.run(
        ["git", "--git-dir", str(mirror), "update-ref", "refs/pull/1/head", "main"], check=True
    )
    result = _run("links", "--all", "--source", str(mirror), "--store", str(store), "--quiet")
    assert result.exit_code == 1, result.output
    assert "has no pull request #2" in result.output
    assert "#1 is a pull request of the repository" in result.output


def test_cli_questions_file(store: Path, tmp_path: Path) -> None:
    file = tmp_path / "q.txt"
    file.write_text("\n".join(QUESTIONS[:3]))
    result = _run("links", "--questions", str(file), "--store", str(store), "--quiet")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("--all", "--question", "what is PR #2?"),
    ],
)
def test_cli_usage_errors_exit_2(store: Path, args: tuple[str, ...]) -> None:
    result = _run("links", *args, "--store", str(store))
    assert result.exit_code == 2, result.output
    assert "--question, --questions FILE or --all" in result.output


def test_cli_a_file_with_no_questions_is_a_mistake(store: Path, tmp_path: Path) -> None:
    file = tmp_path / "none.txt"
    file.write_text("# nothing\n")
    result = _run("links", "--questions", str(file), "--store", str(store))
    assert result.exit_code == 2
    assert "holds no questions" in result.output and "Traceback" not in result.output
