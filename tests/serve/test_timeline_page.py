"""The timeline on the question page, as a person sees it: headless Chromium (Debian's, driven
by Playwright) against a live server, each picture counted against the card the page was
sent; on the pigeon brain, and on the real TLS brain for RFC 8446 §4.2.10 and for a section no
post discussed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from itertools import pairwise
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus

import pytest
from pyoxigraph import NamedNode
from starlette.applications import Starlette
from starlette.testclient import TestClient

from ratified_rdf import Brain
from ratified_rdf.answers.models import Answer
from ratified_rdf.graph.vocab import document_iri
from ratified_rdf.surfaces.server import create_app
from ratified_rdf.surfaces.timeline_svg import timeline_svg
from tests.serve.conftest import ARTEFACTS, PAGE_GUARD_MS
from tests.serve.deadlines import GENEROUS_S

if TYPE_CHECKING:
    from playwright.sync_api import Page

PIGEON_HISTORY = "history of RFC 9999 section 3.1"
PIGEON_WHY = "who discussed RFC 9999 section 3.1?"
EARLY_DATA_HISTORY = "history of RFC 8446 section 4.2.10"
EARLY_DATA_WHY = "why does RFC 8446 section 4.2.10 say what it says?"
EARLY_DATA_REVISIONS = 22
"""Issue 24's "done means": §4.2.10 has an earlier text in each of draft-ietf-tls-tls13-07 to
-28, so its picture has 22 revision ticks."""


def _asked(page: Page, site: str, question: str) -> dict[str, Any]:
    """Open the page on ``question``; the card's JSON as the page received it."""
    with page.expect_response(lambda r: "/api/ask?" in r.url, timeout=PAGE_GUARD_MS) as got:
        page.goto(f"{site}/?q={quote_plus(question)}")
    page.locator("article.card").wait_for(timeout=PAGE_GUARD_MS)
    body: dict[str, Any] = got.value.json()
    return body


def _links_of(card: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The card's dated revision links, and the links of its posts and listed commits."""
    revisions = [r["url"] for r in card["results"] if r["kind"] == "history_entry" and r["date"]]
    marks = [r["post_url"] for r in card["results"] if r["kind"] == "post"]
    marks += [r["commit_url"] for r in card["results"] if r["kind"] == "commit" and r["commit_url"]]
    return revisions, marks


def _publication_of(card: dict[str, Any]) -> dict[str, Any] | None:
    """The card's facts of its RFC, when it gives its publication."""
    return next(
        (r for r in card["results"] if r["kind"] == "document" and r["is_rfc"] and r["published"]),
        None,
    )


def _renumberings(card: dict[str, Any]) -> int:
    numbers = [
        r["section_number"] for r in card["results"] if r["kind"] == "history_entry" and r["date"]
    ]
    return sum(1 for a, b in pairwise(numbers) if a != b)


def _check_picture(page: Page, card: dict[str, Any], shot: str) -> None:
    """The picture on the page shows exactly the card's revisions, posts and commits, each a
    link to its source; it has a title, a text alternative, and a keyboard reaches it."""
    figure = page.locator("figure.timeline")
    figure.wait_for(timeout=PAGE_GUARD_MS)
    revisions, marks = _links_of(card)
    drawn_revisions = figure.locator("a.revision")
    drawn_marks = figure.locator("a.mark")
    assert drawn_revisions.count() == len(revisions)
    assert drawn_marks.count() == len(marks)
    hrefs = drawn_marks.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert sorted(hrefs) == sorted(marks)
    hrefs = drawn_revisions.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert sorted(hrefs) == sorted(revisions)
    assert figure.locator("a.revision.renumbered").count() == _renumberings(card)
    for kind in ("post", "review", "message", "commit"):
        shown = [m for m in card["timeline"]["marks"] if m["kind"] == kind]
        assert figure.locator(f"a.mark-{kind}").count() == len(shown)
    # Accessible: a title and a description the svg points at, and a visible caption.
    svg = figure.locator("svg")
    title_id, desc_id = svg.get_attribute("aria-labelledby"), svg.get_attribute("aria-describedby")
    assert card["timeline"]["section"] in figure.locator(f"[id='{title_id}']").text_content()
    assert card["timeline"]["description"] in figure.locator(f"[id='{desc_id}']").text_content()
    assert card["timeline"]["description"] in figure.locator("figcaption").inner_text()
    assert figure.locator("a:not(:has(title))").count() == 0
    # The keyboard: Tab from the question box reaches the picture's first link.
    publication = card["timeline"]["publication"]
    reachable = revisions + marks + ([publication["url"]] if publication else [])
    page.locator("#q").focus()
    for _ in range(80):
        page.keyboard.press("Tab")
        inside = page.evaluate(
            "() => !!document.activeElement.closest('figure.timeline') && "
            "document.activeElement.getAttribute('href')"
        )
        if inside:
            assert inside in reachable
            break
    else:
        raise AssertionError("Tab never reached a link in the timeline")
    figure.scroll_into_view_if_needed()
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    figure.screenshot(path=str(ARTEFACTS / shot))
    assert (ARTEFACTS / shot).stat().st_size > 0


# --- the pigeon brain: the page, and the API it reads --------------------------------------


@pytest.fixture(scope="module")
def pigeon_site(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> Iterator[str]:
    with serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as base:
        yield base


@pytest.mark.parametrize("question", [PIGEON_HISTORY, PIGEON_WHY])
def test_the_pigeon_cards_show_their_timeline(pigeon_site: str, page: Page, question: str) -> None:
    card = _asked(page, pigeon_site, question)
    assert card["timeline"] is not None
    _check_picture(page, card, f"timeline-pigeon-{card['intent']}.png")


def test_a_card_without_a_timeline_shows_no_picture(pigeon_site: str, page: Page) -> None:
    card = _asked(page, pigeon_site, "who should I ask about RFC 9999 section 3.1?")
    assert card["timeline"] is None and "timeline_svg" not in card
    assert page.locator("figure.timeline").count() == 0


def test_the_api_draws_the_timeline_only_when_asked(pigeon_brain: Brain) -> None:
    with TestClient(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as client:
        plain = client.get("/api/ask", params={"q": PIGEON_HISTORY}).json()
        drawn = client.get("/api/ask", params={"q": PIGEON_HISTORY, "timeline": "svg"}).json()
        wrong = client.get("/api/ask", params={"q": PIGEON_HISTORY, "timeline": "png"})
    assert "timeline_svg" not in plain and plain["timeline"] == drawn["timeline"]
    timeline = Answer.model_validate(plain).timeline
    assert timeline is not None and drawn["timeline_svg"] == timeline_svg(timeline)
    assert wrong.status_code == 400 and "timeline=svg" in wrong.json()["error"]


# --- the TLS brain: RFC 8446 §4.2.10, and a section no post discussed ----------------------


@pytest.fixture(scope="module")
def tls_site(
    tls_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> Iterator[str]:
    with serve(create_app(tls_brain, query_timeout_s=GENEROUS_S)) as base:
        yield base


@pytest.mark.corpus
@pytest.mark.parametrize("question", [EARLY_DATA_HISTORY, EARLY_DATA_WHY])
def test_early_data_shows_its_life_at_a_glance(tls_site: str, page: Page, question: str) -> None:
    card = _asked(page, tls_site, question)
    assert card["verdict"] == "answered" and card["timeline"] is not None
    _check_picture(page, card, f"timeline-early-data-{card['intent']}.png")
    revisions, marks = _links_of(card)
    figure = page.locator("figure.timeline")
    # Both cards list the revisions, the posts and listed commits, and the publication, so
    # both pictures draw all of them (_check_picture matched each to the card's links).
    assert figure.locator("a.revision").count() == len(revisions) == EARLY_DATA_REVISIONS
    numbers = [
        r["section_number"] for r in card["results"] if r["kind"] == "history_entry" and r["date"]
    ]
    moved = [b for a, b in pairwise(numbers) if a != b]
    assert moved and moved[-1] == "4.2.10"  # renumbered along the way, ending as the RFC's
    # Each renumbered tick is labelled with its new number (drawn by date, which is not
    # always the card's order: the records date -18 before -17).
    drawn = figure.locator("a.revision.renumbered text").all_text_contents()
    assert sorted(label.split("§", 1)[-1] for label in drawn) == sorted(moved)
    posts = [r for r in card["results"] if r["kind"] == "post"]
    commits = [r for r in card["results"] if r["kind"] == "commit" and r["commit_url"]]
    assert posts and commits and len(marks) == len(posts) + len(commits)
    assert figure.locator("a.mark").count() == len(marks)
    published = _publication_of(card)
    assert published is not None and published["name"] == "RFC 8446"
    assert card["timeline"]["publication"]["date"] == published["published"]
    drawn_publication = figure.locator("a.publication")
    assert drawn_publication.count() == 1
    assert drawn_publication.get_attribute("href") == published["url"]
    assert published["published"] in drawn_publication.text_content()
    # The settled line falls where the history card says the text stopped changing (the why
    # card's summary is about its discussion; its entries are the history card's).
    changing = [
        r["document"]
        for r in card["results"]
        if r["kind"] == "history_entry" and r["still_changing"]
    ]
    settled = card["timeline"]["settled"]
    if changing and card["intent"] == "section_history":
        assert changing[-1] in card["summary"]
    labels = page.locator("figure.timeline g.settled").all_text_contents()
    if settled:
        number = settled.rsplit("-", 1)[-1]
        assert len(labels) == 1 and f"-{number}" in labels[0]
    else:
        assert labels == []


def _undiscussed_section(brain: Brain) -> str:
    """An RFC 8446 section that aligns with earlier revisions but that no post discussed."""
    rows, _run = brain.run("rfc_coverage", rfc=NamedNode(document_iri("rfc8446")))
    for row in rows:
        if int(row["posts"].value) == 0 and row.get("number"):
            number = row["number"].value
            card = brain.ask(f"history of RFC 8446 section {number}")
            if card.timeline is not None and card.timeline.revisions:
                return number
    raise AssertionError("every RFC 8446 section with a history was discussed")


@pytest.mark.corpus
def test_a_section_no_post_discussed_has_a_quiet_timeline(
    tls_brain: Brain, tls_site: str, page: Page
) -> None:
    number = _undiscussed_section(tls_brain)
    card = _asked(page, tls_site, f"history of RFC 8446 section {number}")
    assert not [r for r in card["results"] if r["kind"] == "post"]
    _check_picture(page, card, "timeline-undiscussed.png")
    if not _links_of(card)[1]:
        assert "no posts" in page.locator("figure.timeline svg").text_content()
