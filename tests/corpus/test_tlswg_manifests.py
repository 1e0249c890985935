"""The TLS working group's 25 other repositories, each built on its own from the manifest
``ratified init`` wrote (records/tlswg/<name>/manifest.toml, completed by hand only with the
public facts of ../shared/corpus/tlswg/README.md).

Every manifest builds and its notes name gaps only; the 14 RFCs of the README's table are
recorded with their months; and every brain answers a section's history, its discussion, the
issues that discussed it and who to ask about it with a card and its evidence: where its draft
became an RFC, about the RFC's section; where it became none, about the section of the draft's
last revision, saying so. The builds are in memory, each once per session and only when a
test asks for it, so that one repository's test builds one brain.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.answers.models import Holding
from tests.conftest import REPO, TlswgStores, require_corpus

pytestmark = pytest.mark.corpus

RECORDS = REPO / "records" / "tlswg"
SHARED = REPO.parent / "shared" / "corpus" / "tlswg"
NAMES = sorted(p.parent.name for p in RECORDS.glob("*/manifest.toml"))

README_RFCS = {
    # The public facts the README's table states: repository, draft, RFC, month published.
    ("dtls13-spec", "draft-ietf-tls-dtls13"): (9147, "2022-04"),
    ("dtls-conn-id", "draft-ietf-tls-dtls-connection-id"): (9146, "2022-03"),
    ("draft-ietf-tls-ticketrequest", "draft-ietf-tls-ticketrequests"): (9149, "2022-04"),
    ("draft-ietf-tls-external-psk-importer", "draft-ietf-tls-external-psk-importer"): (
        9258,
        "2022-07",
    ),
    ("external-psk-design-team", "draft-ietf-tls-external-psk-guidance"): (9257, "2022-07"),
    ("tls-exported-authenticator", "draft-ietf-tls-exported-authenticator"): (9261, "2022-07"),
    ("tls-subcerts", "draft-ietf-tls-subcerts"): (9345, "2023-07"),
    ("certificate-compression", "draft-ietf-tls-certificate-compression"): (8879, "2020-12"),
    ("tls-record-limit", "draft-ietf-tls-record-limit"): (8449, "2018-08"),
    ("draft-ietf-tls-iana-registry-updates", "draft-ietf-tls-iana-registry-updates"): (
        8447,
        "2018-08",
    ),
    ("draft-ietf-tls-tls13-vectors", "draft-ietf-tls-tls13-vectors"): (8448, "2019-01"),
    ("oldversions-deprecate", "draft-ietf-tls-oldversions-deprecate"): (8996, "2021-03"),
    ("sniencryption", "draft-ietf-tls-sni-encryption"): (8744, "2020-07"),
    ("dnssec-chain-extension", "draft-ietf-tls-dnssec-chain-extension"): (9102, "2021-08"),
}

UNNUMBERED = {
    # The repository numbers no revision of either draft (no tag, no per-revision file,
    # docnames say -latest): each is its text as last committed, one revision named latest.
    "sniencryption": ("draft-ietf-tls-sni-encryption", "draft-ietf-tls-sni-encryption-oldsolution"),
}

SECTION = "3"
"""A section every built repository's last revision has."""

QUESTIONS = (
    ("history of section {s}", {"section_history"}),
    ("why does section {s} say what it says?", {"discussion"}),
    # The issues connected to the section where the brain holds issues; where it holds none,
    # "the graph doesn't know" (issues were never ingested), said of the section's document.
    ("which issues discussed section {s}?", {"threads"}),
    ("who should I ask about section {s}?", {"who_to_ask"}),
)

_NOTE_FAILURES = ("Error", "Traceback", "could not be built", "failed")


@pytest.fixture(scope="session")
def tlswg_brain(
    tlswg_store: TlswgStores,
) -> Iterator[Callable[[str], tuple[Brain, BuildReport]]]:
    """The brain of one repository, built from its manifest the first time a test of the
    session asks for it (shared with the other corpus tests), opened once here."""
    require_corpus(SHARED / "README.md", "TLS working group (tlswg)")
    built: dict[str, tuple[Brain, BuildReport]] = {}

    def brain(name: str) -> tuple[Brain, BuildReport]:
        if name not in built:
            store, report = tlswg_store(name)
            built[name] = (Brain.open(store), report)
        return built[name]

    yield brain
    for opened, _ in built.values():
        opened.close()


def test_there_is_one_manifest_per_repository_of_the_corpus() -> None:
    require_corpus(SHARED / "README.md", "TLS working group (tlswg)")
    held = sorted(p.name for p in SHARED.iterdir() if (p / f"{p.name}.bundle").is_file())
    assert held == NAMES


def test_the_readme_rfcs_are_recorded_with_their_months() -> None:
    recorded: dict[tuple[str, str], tuple[int, str]] = {}
    for name in NAMES:
        data = tomllib.loads((RECORDS / name / "manifest.toml").read_text(encoding="utf-8"))
        months = {r["number"]: r["published"] for r in data.get("rfc", [])}
        for draft in data["draft"]:
            if "became" in draft:
                number = int(draft["became"].removeprefix("rfc"))
                recorded[(name, draft["name"])] = (number, months[number])
    assert recorded == README_RFCS


@pytest.mark.parametrize("name", NAMES)
def test_each_repository_builds_and_its_notes_name_gaps_only(
    tlswg_brain: Callable[[str], tuple[Brain, BuildReport]], name: str
) -> None:
    _, report = tlswg_brain(name)
    assert report.revisions > 0 and report.sections > 0
    for note in (*report.notes, *report.problems):
        assert not any(word in note for word in _NOTE_FAILURES), note
    data = tomllib.loads((RECORDS / name / "manifest.toml").read_text(encoding="utf-8"))
    assert report.rfcs == len(data.get("rfc", []))
    # Every brain aligns its sections: with the RFC its draft became, else with its draft's
    # last revision.
    assert report.alignments > 0


@pytest.mark.parametrize(("name", "drafts"), sorted(UNNUMBERED.items()))
def test_a_repository_numbering_no_revision_builds_each_draft_as_last_committed(
    tlswg_brain: Callable[[str], tuple[Brain, BuildReport]], name: str, drafts: tuple[str, ...]
) -> None:
    brain, report = tlswg_brain(name)
    assert report.revisions == len(drafts)
    for draft in drafts:
        assert any(
            note.startswith(f"{draft}: revisions not numbered in the repository")
            for note in report.notes
        ), report.notes
        listed = brain.ask(f"what revisions does {draft} have?")
        assert "revisions not numbered in the repository" in listed.summary, listed.summary
        assert f"{draft}-latest" in listed.summary
    held = brain.ask("what do you hold?")
    gap = [
        r
        for r in held.results
        if isinstance(r, Holding) and r.what == "revisions not numbered in the repository"
    ]
    assert [sorted(g.names or ()) for g in gap] == [sorted(drafts)]
    # The section's commits are credited to the unnumbered revision's sections.
    who = brain.ask(f"who should I ask about section {SECTION}?")
    assert "commit" in who.summary, who.summary


@pytest.mark.parametrize("name", NAMES, ids=str)
def test_a_sections_history_discussion_and_who_to_ask_are_cards(
    tlswg_brain: Callable[[str], tuple[Brain, BuildReport]], name: str
) -> None:
    brain, _ = tlswg_brain(name)
    became = any(n == name for n, _ in README_RFCS)
    issues = brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> ASK { ?issue a rr:Issue }"
    ).boolean
    for question, intents in QUESTIONS:
        answer = brain.ask(question.format(s=SECTION))
        if "issues" in question and not issues:
            # Never ingested: the first rule, saying what the brain holds of the document.
            assert answer.verdict is Verdict.UNKNOWN, (question, answer.summary)
            assert "issue" in answer.summary, answer.summary
            continue
        assert answer.verdict is Verdict.ANSWERED, (question, answer.summary)
        assert answer.intent in intents, (question, answer.intent)
        assert f"§{SECTION} " in answer.summary, answer.summary
        assert answer.evidence, (question, answer.summary)
        assert ("became no RFC the records hold" in answer.summary) is not became, answer.summary
