"""The question page, end to end in headless Chromium (Debian's package, driven by Playwright)
against a live server over the real TLS brain."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from starlette.applications import Starlette

from ratified_rdf import Brain
from ratified_rdf.surfaces.server import create_app
from tests.serve.conftest import ARTEFACTS, PAGE_GUARD_MS
from tests.serve.deadlines import GENEROUS_S

if TYPE_CHECKING:
    from playwright.sync_api import Page

pytestmark = pytest.mark.corpus

EARLY_DATA = "why does early data work this way?"
OUT_OF_SCOPE = "how did the IESG vote on draft-ietf-tls-tls13?"


@pytest.fixture()
def site(
    tls_brain: Brain, serve: Callable[[Starlette], AbstractContextManager[str]]
) -> Iterator[str]:
    with serve(create_app(tls_brain, query_timeout_s=GENEROUS_S)) as base:
        yield base


def _screenshot(page: Page, name: str) -> Path:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTEFACTS / name
    page.screenshot(path=str(path), full_page=True)
    assert path.is_file() and path.stat().st_size > 0
    return path


def test_an_answer_card_with_its_sources_and_its_sparql(site: str, page: Page) -> None:
    page.goto(site)
    page.get_by_role("button", name=EARLY_DATA).click()
    card = page.locator("article.card")
    card.wait_for(timeout=PAGE_GUARD_MS)
    assert card.get_attribute("data-verdict") == "answered"
    assert "4.2.10" in page.locator(".summary").inner_text()
    assert page.locator(".trust").inner_text().startswith("Trust: derived")

    github = page.locator('a[href^="https://github.com/tlswg/tls13-spec/"]')
    rfc_editor = page.locator('a[href^="https://www.rfc-editor.org/"]')
    assert github.count() > 0 and rfc_editor.count() > 0
    assert page.locator("a.graph-link").count() > 0

    sparql = page.locator("pre.sparql").first
    assert not sparql.is_visible()
    page.get_by_text("Show how this was computed").click()
    assert sparql.is_visible()
    texts = "\n".join(page.locator("pre.sparql").all_inner_texts())
    assert "rr:alignsWith" in texts
    queries = page.locator("details.computed .query")
    assert queries.count() >= 5
    assert "ms engine" in queries.first.inner_text()
    assert page.locator("details.computed dl.params dt").count() > 0
    assert page.url.endswith("?q=why+does+early+data+work+this+way%3F")
    _screenshot(page, "early-data.png")


def test_the_graph_doesnt_know_card_is_grey(site: str, page: Page) -> None:
    page.goto(site)
    page.get_by_role("button", name=OUT_OF_SCOPE).click()
    card = page.locator("article.card.verdict-unknown")
    card.wait_for(timeout=PAGE_GUARD_MS)
    assert card.locator("h2").inner_text() == "The graph doesn't know"
    grey = card.evaluate("node => getComputedStyle(node).backgroundColor")
    assert grey == "rgb(238, 240, 242)"
    _screenshot(page, "unknown.png")


def test_what_a_question_says_stays_text(site: str, page: Page) -> None:
    page.goto(site)
    hostile = '<img src=x onerror="window.pwned=1"> who discussed RFC 8446 §4.2.1?'
    page.fill("#q", hostile)
    page.get_by_role("button", name="Ask", exact=True).click()
    page.locator("article.card").wait_for(timeout=PAGE_GUARD_MS)
    assert page.evaluate("window.pwned") is None
    assert page.locator("article.card img").count() == 0
    assert hostile in page.locator(".asked").inner_text()


def test_an_alternative_is_one_click_away(site: str, page: Page) -> None:
    page.goto(f"{site}/?q=who+should+I+ask+about+key+share%3F")
    page.locator("article.card").wait_for(timeout=PAGE_GUARD_MS)
    alternative = page.locator("button.alternative").first
    if alternative.count() == 0:
        pytest.skip("this answer offers no alternative to click")
    question = alternative.inner_text()
    alternative.click()
    page.locator(f'article.card .asked:has-text("{question}")').wait_for(timeout=PAGE_GUARD_MS)
    assert page.locator("#q").input_value() == question
