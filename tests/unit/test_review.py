"""Human ratification: a named reviewer ratifies or disputes a card; the card shows its state
and who gave it; a card whose evidence changed since shows as stale; queries filter on state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ratified_rdf import Brain, BrainError, ReviewError
from ratified_rdf.audit import audit_dir
from ratified_rdf.build import build
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.surfaces.cli import main
from ratified_rdf.trust import Reader
from tests.pigeon import MANIFEST, make_pigeon_repo

QUESTION = "who discussed RFC 9999 section 3.1?"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


@pytest.fixture()
def brain(repo: Path) -> Brain:
    built, _ = Brain.build(MANIFEST, source=str(repo), reader=Reader(clearance="internal"))
    return built


def test_a_ratified_card_shows_its_state_and_reviewer(brain: Brain) -> None:
    before = brain.ask(QUESTION)
    assert before.trust is not None and before.trust.state == "derived"
    after = brain.review(
        QUESTION,
        reviewer="Dana Reviewer",
        verdict="ratified",
        note="threads checked",
        content_hash=before.trust.content_hash,
    )
    assert after.trust is not None
    assert (after.trust.state, after.trust.reviewer, after.trust.note) == (
        "ratified",
        "Dana Reviewer",
        "threads checked",
    )
    assert after.trust.content_hash == before.trust.content_hash and not after.trust.stale
    assert after.queries[-1].name == "card_review"
    # A rephrasing is the same card, so it carries the same state.
    assert brain.ask("why is RFC 9999 section 3.1 this way?").trust.state == "ratified"
    # The review lives at the reviewer's clearance: a public reader sees a derived card.
    assert (
        brain.read_as(brain.reader.but(clearance="public")).ask(QUESTION).trust.state == "derived"
    )
    cards = brain.cards_in_state("ratified")
    assert [c["card"].value for c in cards] == [after.trust.card]
    assert brain.cards_in_state("disputed") == []
    # A later dispute replaces the state; the ratification stays on record.
    disputed = brain.review(QUESTION, reviewer="Eve Doubter", verdict="disputed")
    assert (disputed.trust.state, disputed.trust.reviewer) == ("disputed", "Eve Doubter")
    assert brain.cards_in_state("ratified") == []
    assert brain.validate() == []


def test_a_review_of_a_card_that_changed_since_it_was_read_is_refused(brain: Brain) -> None:
    with pytest.raises(BrainError, match="has changed since it was read"):
        brain.review(QUESTION, reviewer="Dana", verdict="ratified", content_hash="0" * 64)
    with pytest.raises(ReviewError, match="name is empty"):
        brain.review(QUESTION, reviewer="", verdict="ratified")  # a reviewer must have a name
    assert brain.ask(QUESTION).trust.state == "derived"


@pytest.mark.slow
def test_a_card_whose_evidence_changed_is_stale(repo: Path, tmp_path: Path) -> None:
    store = OxigraphStore()
    build(MANIFEST, source=str(repo), store=store)
    brain = Brain.from_store(store, reader=Reader(clearance="internal"))
    brain.review(QUESTION, reviewer="Dana Reviewer", verdict="ratified")
    # A later ingest without the mailing list: one post fewer on the card.
    records = tmp_path / "records"
    shutil.copytree(MANIFEST.parent, records)
    manifest = records / "manifest.toml"
    manifest.write_text(manifest.read_text().split("[[discussion.mail]]")[0])
    build(manifest, source=str(repo), store=store)
    brain.reading.refresh()
    card = brain.ask(QUESTION)
    assert card.trust is not None
    assert (card.trust.state, card.trust.stale, card.trust.reviewer) == (
        "derived",
        True,
        "Dana Reviewer",
    )


def test_cli_review_then_ask_shows_the_state(repo: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    runner = CliRunner()
    args = ["--store", str(store)]
    built = runner.invoke(main, ["build", str(MANIFEST), "--source", str(repo), *args, "--quiet"])
    assert built.exit_code == 0, built.output
    reviewed = runner.invoke(
        main,
        ["review", QUESTION, "--reviewer", "Dana Reviewer", "--ratify", "--note", "ok", *args],
    )
    assert reviewed.exit_code == 0, reviewed.output
    assert "ratified by Dana Reviewer" in reviewed.output
    asked = runner.invoke(main, ["ask", QUESTION, *args])
    assert "Trust: ratified by Dana Reviewer" in asked.output
    kinds = [
        json.loads(line).get("kind")
        for line in (audit_dir(store) / "records.jsonl").read_text().splitlines()
    ]
    assert "review" in kinds


def test_a_derived_claim_can_be_disputed_and_filtered_on(brain: Brain) -> None:
    alignment = (
        brain.query(
            "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
            "SELECT ?a WHERE { ?a rr:alignmentRule ?rule } ORDER BY ?a LIMIT 1"
        )
        .rows[0]["a"]
        .value
    )
    trust = brain.review_claim(alignment, reviewer="Dana Reviewer", verdict="disputed")
    assert (trust.state, len(trust.content_hash)) == ("disputed", 64)
    assert [c["card"].value for c in brain.cards_in_state("disputed")] == [alignment]
    with pytest.raises(BrainError, match="holds nothing about"):
        brain.review_claim("https://example.org/nothing", reviewer="Dana", verdict="disputed")


def test_reviews_at_two_levels_leave_each_reader_one_state(brain: Brain) -> None:
    public = brain.read_as(brain.reader.but(clearance="public"))
    card = public.review(QUESTION, reviewer="Dana Reviewer", verdict="ratified").trust.card
    brain.review(QUESTION, reviewer="dana reviewer", verdict="disputed")  # later, higher level
    assert [c["card"].value for c in public.cards_in_state("ratified")] == [card]
    assert [c["card"].value for c in brain.cards_in_state("disputed")] == [card]
    assert brain.cards_in_state("ratified") == []  # the later review is the state
    (row,) = brain.cards_in_state("disputed")
    assert (row["name"].value, row["title"].value) == ("dana reviewer", card_title_of(brain))
    assert public.validate() == [] and brain.validate() == []


def card_title_of(brain: Brain) -> str:
    from ratified_rdf.answers.trust import card_title

    return card_title(brain.ask(QUESTION))


def test_a_claim_on_an_rfc_section_leaves_the_section_one_heading(brain: Brain) -> None:
    section = (
        brain.query(
            "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> SELECT ?s WHERE "
            "{ ?r rr:rfcNumber 9999 ; rr:hasSection ?s . ?s rr:sectionNumber '3.1' }"
        )
        .rows[0]["s"]
        .value
    )
    before = sorted(map(str, brain.describe(section)))
    for reader in (brain.read_as(brain.reader.but(clearance="public")), brain):
        reader.review_claim(section, reviewer="Dana Reviewer", verdict="disputed", note="why?")
    assert sorted(map(str, brain.describe(section))) == before  # nothing written onto it
    assert [c["card"].value for c in brain.cards_in_state("disputed")] == [section]
    assert (
        brain.validate() == []
        and brain.read_as(brain.reader.but(clearance="public")).validate() == []
    )
