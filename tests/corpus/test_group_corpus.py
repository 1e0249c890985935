"""The TLS working group's brain (records/tlswg/group.toml) built from the corpus, and the
group questions asked on it, each checked against the bundles' own text or the records'
public facts by code apart from the pipeline (tests/independent/references.py, tomllib, git).

Expectations come from the members the group file lists, so the test holds for any members
list: a member added to group.toml is counted like the others.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf.answers.models import (
    Expert,
    HistoryEntry,
    Holding,
    RevisionEntry,
    SectionActivity,
)
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.group import build_group, find_source, load_group
from ratified_rdf.records.manifest import Manifest, ManifestError
from ratified_rdf.records.spec import last_revisions
from ratified_rdf.sources.git_repo import GitRepository
from tests.conftest import REPO, TlswgStores, require_corpus
from tests.independent.references import cited_sections, says_it_updates

GROUP = REPO / "records" / "tlswg"
CORPUS = REPO.parent / "shared" / "corpus"


def _members() -> list[tuple[Path, Manifest]]:
    return load_group(GROUP)[1]


@pytest.fixture(scope="module")
def group(
    tmp_path_factory: pytest.TempPathFactory,
    tlswg_store: TlswgStores,
    tls_build: tuple[Path, BuildReport],
) -> Iterator[Brain]:
    """The whole group file's brain, its members copied from the brains the session builds
    once each for the other corpus tests (``build_group(reuse=…)``, ``ratified build
    --reuse``): the group's own part (its links, what it holds) is built here."""
    members = _members()
    for _, manifest in members:
        name = manifest.brain.repository.rstrip("/").rsplit("/", 1)[-1]
        try:
            find_source(CORPUS, manifest)
        except ManifestError:  # a skip, or under CI=true a failure, saying what is missing
            require_corpus(CORPUS / "tlswg" / name / f"{name}.bundle", name)
    built = [
        tls_build[0] if folder == REPO / "records" / "tls13" else tlswg_store(folder.name)[0]
        for folder, _ in members
    ]
    others = [OxigraphStore(path, shared=True) for path in built]
    store = OxigraphStore(tmp_path_factory.mktemp("tlswg") / "store")
    report = build_group(GROUP, source=CORPUS, store=store, reuse=others)
    for other in others:
        other.close()
    # Every member was copied, none built again: the session builds each brain once.
    assert report.reused == tuple(m.brain.id for _, m in members) and report.built == ()
    brain = Brain.from_store(store, "tlswg")
    yield brain
    brain.close()


@pytest.fixture(scope="module")
def last_texts(group: Brain) -> dict[str, tuple[str, str, str]]:
    """Each draft's last revision: label -> (draft, file, text), read with git itself; which
    revision is last is the manifest's (the selection the build reads)."""
    texts = {}
    for _, manifest in _members():
        source = find_source(CORPUS, manifest)
        repo = GitRepository.open(source)
        for draft, number, commit, file in last_revisions(manifest, repo):
            shown = subprocess.run(
                ["git", "--git-dir", str(repo.git_dir), "show", f"{commit}:{file}"],
                capture_output=True,
                check=True,
            )
            texts[f"{draft}-{number}"] = (draft, file, shown.stdout.decode("utf-8", "replace"))
    return texts


def test_the_documents_citing_rfc_8446_sections_are_those_the_texts_cite(
    group: Brain, last_texts: dict[str, tuple[str, str, str]]
) -> None:
    expected = {
        label: cited_sections(text, 8446)
        for label, (draft, _, text) in last_texts.items()
        if draft != "draft-ietf-tls-tls13"  # RFC 8446's own draft cites its own sections
    }
    expected = {label: numbers for label, numbers in expected.items() if numbers}
    assert expected, "no member's last revision cites a section of RFC 8446"
    found: dict[str, set[str]] = {}
    for number in sorted({n for numbers in expected.values() for n in numbers}):
        card = group.ask(f"which documents cite RFC 8446 section {number}?")
        assert card.intent == "group_citing"
        for entry in card.results:
            if isinstance(entry, RevisionEntry):
                found.setdefault(entry.label, set()).add(number)
    assert {k: v for k, v in found.items() if k in expected} == expected


def test_what_updates_rfc_8446_is_what_the_headers_say(
    group: Brain, last_texts: dict[str, tuple[str, str, str]]
) -> None:
    expected = {label for label, (_, _, text) in last_texts.items() if says_it_updates(text, 8446)}
    card = group.ask("what updates RFC 8446?")
    said = {r.label for r in card.results if isinstance(r, RevisionEntry) and r.became == "updates"}
    assert said == expected


def test_the_group_published_the_rfcs_its_records_date(group: Brain) -> None:
    published: dict[str, set[int]] = {}
    for folder, _ in _members():
        record = tomllib.loads((folder / "manifest.toml").read_text())
        for rfc in record.get("rfc", []):
            published.setdefault(str(rfc["published"])[:4], set()).add(int(rfc["number"]))
    for year, numbers in published.items():
        card = group.ask(f"what did the group publish in {year}?")
        assert card.intent == "group_published"
        said = {d.rfc_number for d in card.results if getattr(d, "is_rfc", False)}  # type: ignore[union-attr]
        assert said == numbers, year


def test_what_each_repository_holds_is_what_its_manifest_names(group: Brain) -> None:
    card = group.ask("what does the brain hold per repository?")
    assert card.intent == "group_holdings"
    counts = {r.what: r.count for r in card.results if isinstance(r, Holding)}
    for folder, _ in _members():
        record = tomllib.loads((folder / "manifest.toml").read_text())
        name = record["brain"]["repository"].rstrip("/").rsplit("/", 1)[-1]
        assert counts[f"drafts in {name}"] == len(record.get("draft", [])), name
        assert counts[f"RFCs in {name}"] == len(record.get("rfc", [])), name
        assert counts[f"revisions in {name}"] > 0, name


def test_the_section_covering_record_size_limits_is_found_across_documents(
    group: Brain, last_texts: dict[str, tuple[str, str, str]]
) -> None:
    card = group.ask("which section covers the record size limit extension?")
    assert card.intent == "where_is"
    first = card.results[0]
    assert isinstance(first, HistoryEntry)
    # Independently: the headings of the members' last revisions that name the extension.
    headings = {
        re.sub(r"\s*\{#[^}]*\}\s*$", "", line.lstrip("#").strip())
        for _, file, text in last_texts.values()
        if file.endswith(".md")
        for line in text.splitlines()
        if line.startswith("#") and re.search(r"record.size.limit", line, re.IGNORECASE)
    }
    assert first.heading in headings


def test_who_knows_most_about_a_topic_is_its_drafts_top_committer(group: Brain) -> None:
    card = group.ask("who knows most about subcerts?")
    assert card.intent == "group_topic_people"
    people = [r.name for r in card.results if isinstance(r, Expert)]
    bundle = next(find_source(CORPUS, m) for _, m in _members() if m.brain.id == "tls-subcerts")
    authors = subprocess.run(
        ["git", "--git-dir", str(GitRepository.open(bundle).git_dir), "log", "--all",
         "--format=%an"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\n")  # fmt: skip
    # Independently: who made most of the repository's commits, by git's own author names.
    top = max(set(authors) - {""}, key=authors.count)
    assert people[0] == top


def test_a_persons_work_spans_the_repositories_they_committed_to(group: Brain) -> None:
    person = "Martin Thomson"
    card = group.ask(f"what did {person} work on?")
    assert card.intent == "person"
    documents = {r.section.split(" §")[0] for r in card.results if isinstance(r, SectionActivity)}
    # Independently: the members whose history git says the person committed to, by the RFCs
    # their manifests name.
    spanned = 0
    for _, manifest in _members():
        repo = GitRepository.open(find_source(CORPUS, manifest))
        authors = subprocess.run(
            ["git", "--git-dir", str(repo.git_dir), "log", "--all", "--format=%an"],
            capture_output=True, text=True, check=True,
        ).stdout.split("\n")  # fmt: skip
        if person in authors and {f"RFC {r.number}" for r in manifest.rfc} & documents:
            spanned += 1
    assert spanned >= 2


@pytest.mark.parametrize(
    "question",
    [
        "what is the history of RFC 8446 section 4.2.11?",
        "why does RFC 8446 section 4.2.11 say what it says?",
        "who should I ask about RFC 8446 section 4.2.11?",
        "what did draft-ietf-tls-tls13-28 section 4.2.11 become?",
    ],
)
def test_the_tls_cards_repeat_no_row_on_the_group(group: Brain, question: str) -> None:
    card = group.ask(question)
    assert card.verdict == "answered"
    rows = [r.model_dump_json() for r in card.results]
    assert len(rows) == len(set(rows))
