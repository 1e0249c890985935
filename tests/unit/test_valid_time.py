"""Valid time: what a section said on a day is the text of the revision current that day."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ratified_rdf import Brain, Verdict
from ratified_rdf.answers.models import SectionText
from ratified_rdf.answers.router import Intent, route
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture(scope="module")
def brain(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("g"))
    built, _ = Brain.build(MANIFEST, source=str(repo))
    return built


@pytest.mark.parametrize(
    ("day", "document", "until"),
    [
        ("2029-01-10", "draft-example-pigeon-00", "2029-06-01"),  # posted that very day
        ("2029-03-01", "draft-example-pigeon-00", "2029-06-01"),
        ("2029-07-01", "draft-example-pigeon-01", "2029-11-20"),
        ("2031-01-01", "RFC 9999", None),
    ],
)
def test_the_text_current_on_a_day(
    brain: Brain, day: str, document: str, until: str | None
) -> None:
    answer = brain.ask(f"what did RFC 9999 section 3.1 say on {day}?")
    assert (answer.intent, answer.verdict) == ("section_at", Verdict.ANSWERED)
    [text] = answer.results
    assert isinstance(text, SectionText) and text.document == document
    assert (text.current_until or "")[:10] == (until or "")
    assert "take off" in text.text and text.url.startswith("https://")
    # Through the revision: in -00 the section was numbered 2.1, in the RFC 3.1.
    assert text.section_number == ("2.1" if document.endswith("-00") else "3.1")


def test_valid_at_as_a_parameter_and_before_anything_existed(brain: Brain) -> None:
    given = brain.ask(
        "what did RFC 9999 section 3.1 say?", valid_at=datetime(2029, 7, 1, tzinfo=UTC)
    )
    assert given.results[0].document == "draft-example-pigeon-01"
    before = brain.ask("what did RFC 9999 section 3.1 say on 2028-03-01?")
    assert before.verdict is Verdict.UNKNOWN
    assert "earliest text is in draft-example-pigeon-00, of 2029-01-10" in before.summary


def test_the_router_reads_a_day_only_with_a_section_and_a_verb_of_saying() -> None:
    assert route("what did section 4.2.1 say on 2017-06-01?").intent is Intent.SECTION_AT
    assert route("what did section 4.2.1 say on 2017-06-01?").valid_at.isoformat() == "2017-06-01"
    assert route("who discussed section 4.2.1 on 2017-06-01?").intent is Intent.DISCUSSION
    assert route("what did section 4.2.1 say on 2017-02-30?").intent is Intent.OUT_OF_SCOPE
