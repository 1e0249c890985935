"""The page as a person reads it, in Debian's Chromium (driven by Playwright) against the
pigeon brain served for real: the why, "doesn't know" and who-to-ask cards and a section's
resource page, each at a desktop and at a phone's width, saved as screenshots in
test-artifacts/serve/.

What is checked is what a reader would trip on: a link that reads as a bare address, a
drafted question that is not on the screen, a page wider than the phone, kramdown source
where a section's text should be.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from starlette.applications import Starlette

from ratified_rdf import Brain
from ratified_rdf.surfaces.server import create_app
from tests.serve.conftest import ARTEFACTS, PAGE_GUARD_MS, roomy
from tests.serve.deadlines import GENEROUS_S

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "mobile": {"width": 390, "height": 844}}
WHY = "who discussed RFC 9999 section 3.1?"
WHO = "who should I ask about RFC 9999 section 3.1?"
UNKNOWN = "how did the IESG vote on draft-example-pigeon?"
SAID = "what did section 2.1 of draft-example-pigeon-00 say?"
SECTION = "/doc/doc/rfc9999/section/3.1"
TAKE_OFF = "A pigeon MUST NOT take off before its datagram is tied to its leg securely."


@pytest.fixture(scope="module")
def site(
    pigeon_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> Iterator[str]:
    with serve(create_app(pigeon_brain, query_timeout_s=GENEROUS_S)) as base:
        yield base


@pytest.fixture(params=sorted(VIEWPORTS))
def screen(request: pytest.FixtureRequest, browser: Browser) -> Iterator[tuple[str, Page]]:
    """A fresh page at one width; it fails the test if the page logged an error."""
    width = request.param
    context = roomy(browser.new_context(viewport=VIEWPORTS[width]))
    opened = context.new_page()
    problems: list[str] = []
    opened.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: problems.append(str(e)))
    yield width, opened
    context.close()
    assert problems == [], f"the page logged errors: {problems}"


def _ask(site: str, page: Page, question: str) -> None:
    page.goto(site)
    page.fill("#q", question)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("article.card").wait_for(timeout=PAGE_GUARD_MS)


def _readable(page: Page, width: str) -> None:
    """What every page must be: no link reads as an address, nothing wider than the window."""
    # Their text, shown or folded away (the SPARQL's links wait behind "how this was computed").
    texts = page.locator("a:not(svg a)").all_text_contents()
    addresses = [t for t in texts if t.strip().lower().startswith(("http://", "https://"))]
    assert addresses == [], f"links that read as addresses: {addresses[:5]}"
    assert all(t.strip() for t in texts), "a link with no words"
    # A timeline's marks are SVG links (no inner text): each is named by its <title>.
    unnamed = page.locator("svg a").evaluate_all(
        "links => links.filter(a => !(a.querySelector('title')?.textContent || '').trim()).length"
    )
    assert unnamed == 0, f"{unnamed} timeline mark(s) with no title"
    if width == "mobile":
        wide = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert wide, "the page is wider than the phone's screen"


def _shot(page: Page, name: str) -> Path:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / name
    page.screenshot(path=str(path), full_page=True)
    assert path.is_file() and path.stat().st_size > 0
    return path


def test_the_why_card_shows_its_drafted_question(site: str, screen: tuple[str, Page]) -> None:
    width, page = screen
    _ask(site, page, WHY)
    card = page.locator("article.card")
    assert card.get_attribute("data-verdict") == "answered"
    drafted = card.locator(".drafted-question pre.drafted")
    assert drafted.is_visible()
    assert WHY in drafted.inner_text() and drafted.inner_text().startswith("Hello ")
    evidence = card.locator(".evidence-list a").first
    assert evidence.inner_text().startswith("RFC 9999 §3.1")
    assert (evidence.get_attribute("href") or "").startswith("https://www.rfc-editor.org/")
    assert "SELECT" not in card.inner_text()  # the SPARQL waits behind its fold
    _readable(page, width)
    _shot(page, f"reading-why-{width}.png")


def test_the_doesnt_know_card_reads_plainly(site: str, screen: tuple[str, Page]) -> None:
    width, page = screen
    _ask(site, page, UNKNOWN)
    card = page.locator("article.card.verdict-unknown")
    assert card.locator("h2").inner_text() == "The graph doesn't know"
    summary = card.locator(".summary").inner_text()
    assert "1 draft" in summary and "1 drafts" not in summary and "1 RFCs" not in summary
    _readable(page, width)
    _shot(page, f"reading-unknown-{width}.png")


def test_the_who_to_ask_card_drafts_a_question_too(site: str, screen: tuple[str, Page]) -> None:
    width, page = screen
    _ask(site, page, WHO)
    card = page.locator("article.card")
    assert card.locator(".asked").inner_text().endswith(f"“{WHO}”")
    drafted = card.locator(".drafted-question")
    # Whom to ask is the reader's question, not theirs: the note asks them about the text.
    assert drafted.is_visible() and WHO not in drafted.inner_text()
    assert "My question: why does RFC 9999 §3.1" in drafted.inner_text()
    people = card.locator("li.result-expert").all_inner_texts()
    assert people and any(name in drafted.inner_text() for name in ("Alice", "Bob"))
    assert not any(" 1 posts" in p or " 1 commits" in p for p in people)
    _readable(page, width)
    _shot(page, f"reading-who-{width}.png")


def test_what_a_section_said_reads_as_words(site: str, screen: tuple[str, Page]) -> None:
    width, page = screen
    _ask(site, page, SAID)
    said = page.locator("article.card li.result-section_text")
    assert said.locator("a").first.inner_text() == "draft-example-pigeon-00 §2.1 Take-off"
    text = said.locator("pre.said").inner_text()
    assert text.startswith("A pigeon MUST NOT take off") and '"kind"' not in text
    _readable(page, width)


def test_a_sections_page_shows_its_text_rendered(site: str, screen: tuple[str, Page]) -> None:
    width, page = screen
    page.goto(site + SECTION, wait_until="load")
    assert page.locator("h1").inner_text() == "RFC 9999 §3.1 Take-off"
    text = page.locator(".section-text")
    assert text.is_visible() and TAKE_OFF in text.inner_text()
    words = text.inner_text()
    assert "{{" not in words and "%%%" not in words and "{:" not in words
    public = page.locator("ul.links a").first
    assert public.inner_text() == "RFC 9999 §3.1 Take-off at www.rfc-editor.org"
    _readable(page, width)
    _shot(page, f"reading-section-{width}.png")


@pytest.mark.corpus
def test_a_tls_section_reads_as_prose_with_its_figure(
    tls_brain: Brain,
    serve: Callable[[Starlette], AbstractContextManager[str]],
    screen: tuple[str, Page],
) -> None:
    # RFC 8446 §4.3.2's source holds a %%% marker, an indented struct, a definition list
    # with {:br} and {{…}} references: every kind of markup the page must not show.
    width, page = screen
    with serve(create_app(tls_brain, query_timeout_s=GENEROUS_S)) as base:
        page.goto(base + "/doc/doc/rfc8446/section/4.3.2", wait_until="load")
        text = page.locator(".section-text")
        words = text.inner_text()
        assert "{{" not in words and "%%%" not in words and "{:br}" not in words
        assert "} CertificateRequest;" in text.locator("pre").first.inner_text()
        assert text.locator("dt").first.inner_text().startswith("certificate_request_context")
        xref = text.locator("a.xref").first
        assert xref.inner_text().startswith("Section 4.")
        assert (xref.get_attribute("href") or "").startswith("/id/doc/rfc8446/section/")
        _readable(page, width)
        _shot(page, f"reading-tls-section-{width}.png")
