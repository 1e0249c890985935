"""Cards a person enjoys reading: counts in the right number, a section's text rendered (and
escaped), the short CLI card with --sparql for the SPARQL, and the drafted question on every
card that names people."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from ratified_rdf import Brain
from ratified_rdf.answers.models import (
    Answer,
    DocumentFacts,
    DraftedQuestion,
    Evidence,
    Expert,
    Verdict,
)
from ratified_rdf.answers.wording import activity_counts, counted, drafted_question, plural
from ratified_rdf.queries import QueryRun
from ratified_rdf.surfaces import section_text
from ratified_rdf.surfaces.cli import main, render_card
from tests.pigeon import MANIFEST, make_pigeon_repo

WHY = "who discussed RFC 9999 section 3.1?"
WHO = "who should I ask about RFC 9999 section 3.1?"
UNKNOWN = "how did the IESG vote on draft-example-pigeon?"
HISTORY = "history of RFC 9999 section 3.1"
EDITORS = "who are the editors of draft-example-pigeon?"
PERSON = "what did Bob Example work on?"


# --- plurals -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("posts", "commits", "said"),
    [
        (2, 1, "2 posts, 1 commit"),
        (0, 31, "31 commits"),
        (1, 0, "1 post"),
        (0, 0, "no posts or commits"),
    ],
)
def test_a_persons_share_says_only_what_there_is(posts: int, commits: int, said: str) -> None:
    assert activity_counts(posts, commits) == said


@pytest.mark.parametrize(
    ("count", "noun", "nouns", "said"),
    [
        (0, "post", None, "0 posts"),
        (1, "post", None, "1 post"),
        (2, "post", None, "2 posts"),
        (1250, "commit", None, "1,250 commits"),
        (1, "person", "people", "1 person"),
        (3, "person", "people", "3 people"),
        (1, "query", "queries", "1 query"),
    ],
)
def test_a_count_takes_its_noun_in_the_right_number(
    count: int, noun: str, nouns: str | None, said: str
) -> None:
    assert plural(count, noun, nouns) == said


def test_kinds_named_in_the_plural_are_counted_in_the_singular_for_one() -> None:
    assert counted(1, "drafts") == "1 draft"
    assert counted(1, "RFCs") == "1 RFC"
    assert counted(1, "sections with no counterpart") == "1 section with no counterpart"
    assert counted(2, "section alignments") == "2 section alignments"
    assert counted(1, "widgets") == "1 widgets"  # an unknown kind is left as the query named it


_ONE_PLURAL = re.compile(r"(?<![\d,.])1 (posts|commits|rows|revisions|RFCs|drafts|steps|queries)\b")


@pytest.fixture(scope="module")
def pigeon(tmp_path_factory: pytest.TempPathFactory) -> Brain:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("pigeon-git"))
    brain, _report = Brain.build(MANIFEST, source=str(repo))
    return brain


@pytest.mark.parametrize("question", [WHY, WHO, UNKNOWN, HISTORY, "who knows most about pigeons?"])
def test_no_card_says_one_of_something_in_the_plural(pigeon: Brain, question: str) -> None:
    answer = pigeon.ask(question)
    card = render_card(answer)
    assert _ONE_PLURAL.search(card) is None, _ONE_PLURAL.search(card)
    assert _ONE_PLURAL.search(answer.model_dump_json()) is None


def test_the_unknown_card_counts_one_draft_and_one_rfc_in_the_singular(pigeon: Brain) -> None:
    answer = pigeon.ask(UNKNOWN)
    assert answer.verdict is Verdict.UNKNOWN
    # The pigeon brain holds one draft and one RFC (three revisions of the draft).
    assert "1 draft" in answer.summary and "1 RFC" in answer.summary
    assert "3 revisions" in answer.summary


@pytest.mark.parametrize("question", [HISTORY, WHY])
def test_a_section_card_says_when_its_rfc_was_published_in_one_line(
    pigeon: Brain, question: str
) -> None:
    answer = pigeon.ask(question)
    (published,) = [r for r in answer.results if isinstance(r, DocumentFacts)]
    card = render_card(answer)
    line = f"{published.name} ({published.title}): published {published.published}  {published.url}"
    assert card.count(line) == 1
    # Only what the card gives of the RFC: not the revisions it did not look up.
    assert "0 revision" not in card


# --- a section's text --------------------------------------------------------------------

KRAMDOWN = """The extension is defined as (see {{cipher-suites}} and {{!RFC8446}}):

%%% Key Exchange Messages
       struct {
           opaque identifier<0..2^16-1>;
       } NSTMessage;

identifier
: An opaque label, see {{Section 4 of RFC5246}}.
  It continues here.
{:br }

- first item with `code`
- second item,
  continued

1. one
2. two

| Name | Value |
|:-----|------:|
| a    | 1     |

> A quoted note.

```
fenced <b>figure</b>
```
"""


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.text: list[str] = []
        self._href: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "a":
            self._href = dict(attrs).get("href") or ""
            self.links.append((self._href, ""))

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._href is not None:
            href, words = self.links[-1]
            self.links[-1] = (href, words + data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self._href = None


def _parsed(fragment: str) -> _Tags:
    parser = _Tags()
    parser.feed(fragment)
    return parser


def test_kramdown_becomes_headings_paragraphs_lists_figures_and_references() -> None:
    page = section_text.to_html(KRAMDOWN)
    parsed = _parsed(page)
    words = "".join(parsed.text)
    for tag in ("p", "pre", "dl", "dt", "dd", "ul", "ol", "li", "table", "th", "blockquote"):
        assert tag in parsed.tags, tag
    assert "{{" not in words and "}}" not in words and "%%%" not in words
    assert "{:br" not in words and "Key Exchange Messages" not in words
    assert "opaque identifier<0..2^16-1>;" in words  # the figure, as drawn
    assert "} NSTMessage;" in words
    assert ("https://www.rfc-editor.org/rfc/rfc8446", "RFC 8446") in parsed.links
    assert ("https://www.rfc-editor.org/rfc/rfc5246", "Section 4 of RFC 5246") in parsed.links
    assert "cipher-suites" in words  # an anchor nobody resolved stays its name
    assert "fenced <b>figure</b>" in words and "<b>" not in page
    assert all(not text.startswith("http") for _href, text in parsed.links)


def test_a_resolver_names_the_section_an_anchor_points_at() -> None:
    def resolve(target: str) -> tuple[str, str | None] | None:
        return ("Section 9.1", "/id/doc/x/section/9.1") if target == "cipher-suites" else None

    parsed = _parsed(section_text.to_html(KRAMDOWN, resolve))
    assert ("/id/doc/x/section/9.1", "Section 9.1") in parsed.links


def test_the_plain_text_reading_drops_the_markup_too() -> None:
    text = section_text.to_text(KRAMDOWN)
    assert "{{" not in text and "%%%" not in text and "{:br" not in text
    assert "see cipher-suites and RFC 8446" in text
    assert "    } NSTMessage;" in text


@pytest.mark.parametrize(
    "hostile",
    [
        "<script>alert(1)</script>",
        "{{<script>alert(1)</script>}}",
        '[click](javascript:alert(1)) and [x](" onmouseover="alert(1))',
        "<img src=x onerror=alert(1)>\n\n    <script>in a figure</script>",
        '| <script>x</script> | "quoted" |\n|---|---|\n| a | <iframe> |',
        "term\n: <svg onload=alert(1)>",
        "```\n<script>unclosed fence",
        "{{unbalanced and {{ more }} and }} {{",
        "{{" * 300 + "}}" * 10,
        "```\n" * 3001 + "<!--\n" * 3000 + "<script>x</script>",
        "*a " * 5000 + "<script>",
    ],
)
def test_hostile_text_stays_text(hostile: str) -> None:
    page = section_text.to_html(hostile)
    parsed = _parsed(page)
    allowed = {"div", "p", "pre", "ul", "ol", "li", "dl", "dt", "dd", "h3", "a", "span", "code"}
    allowed |= {"table", "thead", "tbody", "tr", "th", "td", "blockquote", "strong", "em"}
    assert set(parsed.tags) <= allowed
    assert "<script" not in page and "<img" not in page and "<iframe" not in page
    assert "<svg" not in page and "onerror=" not in page.replace("onerror=alert", "")
    assert all(href.startswith(("http://", "https://", "/")) for href, _ in parsed.links)
    # Nothing the text said was lost: what is not markup is shown, escaped.
    assert html.unescape(re.sub(r"<[^>]+>", "", page)).count("script") == hostile.count("script")


def test_unbalanced_braces_are_shown_as_written() -> None:
    words = "".join(_parsed(section_text.to_html("see {{NSTMessage for more")).text)
    assert words == "see {{NSTMessage for more"


# --- the CLI card ------------------------------------------------------------------------


def _answer(**extra: object) -> Answer:
    return Answer(
        question="who should I ask about RFC 9999 section 3.1?",
        intent="who_to_ask",
        verdict=Verdict.ANSWERED,
        summary="For RFC 9999 §3.1 Take-off, ask Bob Example.",
        results=[
            Expert(
                name="Bob Example",
                iri="https://w3id.org/ratified-rdf/id/person/bob",
                role="participant",
                reason="1 post and 1 commit",
                posts=1,
                commits=1,
            ),
            DraftedQuestion(to=["Bob Example"], text="Hello Bob Example,\n\nMy question: why?"),
        ],
        evidence=[
            Evidence(
                iri="https://w3id.org/ratified-rdf/id/doc/rfc9999/section/3.1",
                label="RFC 9999 §3.1 Take-off",
                url="https://www.rfc-editor.org/rfc/rfc9999#section-3.1",
                role="rfc-section",
            ),
        ],
        queries=[
            QueryRun(
                name="section_experts",
                sparql="SELECT ?person WHERE { ?person ?p ?o }",
                params={"final": "https://w3id.org/ratified-rdf/id/doc/rfc9999/section/3.1"},
                rows=1,
                engine_ms=1.25,
            ),
        ],
        **extra,
    )


def test_the_default_card_has_the_answer_evidence_and_how_but_no_sparql() -> None:
    card = render_card(_answer())
    assert "For RFC 9999 §3.1 Take-off, ask Bob Example." in card
    assert "RFC 9999 §3.1 Take-off  https://www.rfc-editor.org/rfc/rfc9999#section-3.1" in card
    assert "section_experts.rq: 1 row, 1.25 ms engine" in card
    assert "SELECT" not in card and "?person" not in card
    assert "final=" not in card  # parameters come with the SPARQL
    assert "Bob Example (participant): 1 post and 1 commit" in card
    assert "A question you could send to Bob Example" in card
    assert "  | My question: why?" in card


def test_the_sparql_card_adds_parameters_and_text() -> None:
    card = render_card(_answer(), sparql=True)
    assert "SELECT ?person WHERE { ?person ?p ?o }" in card
    assert "final=https://w3id.org/ratified-rdf/id/doc/rfc9999/section/3.1" in card


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("cli-pigeon")
    repo = make_pigeon_repo(folder / "git")
    brain, _report = Brain.build(MANIFEST, path=folder / "store", source=str(repo))
    brain.close()
    return folder / "store"


def _ask(store: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["ask", "--store", str(store), *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_cli_card_is_short_unless_asked_for_its_sparql(store: Path) -> None:
    short = _ask(store, HISTORY)
    full = _ask(store, "--sparql", HISTORY)
    old = _ask(store, "--brief", HISTORY)  # scripts written for the old flag still run
    assert "How this was computed:" in short and "section_history.rq:" in short
    assert "SELECT" not in short and "PREFIX" not in short
    assert "SELECT" in full and "PREFIX" in full and len(full) > len(short)
    timings = re.compile(r"[\d.]+ ms")
    # The first ask saved its whole-graph rows for the next process, which then shows them
    # as reused: the same card, said truthfully.
    reused = re.compile(
        r" now: rows reused from its earlier run on the same graphs \(which took ms engine\)"
    )
    assert reused.sub("", timings.sub("ms", old)) == reused.sub("", timings.sub("ms", short))
    assert "https://www.rfc-editor.org/rfc/rfc9999#section-3.1" in short


def test_brief_and_sparql_together_is_a_mistake_said_in_words(store: Path) -> None:
    result = CliRunner().invoke(main, ["ask", "--store", str(store), "--brief", "--sparql", WHY])
    assert result.exit_code == 2 and "give one" in result.output


@pytest.mark.parametrize("question", [WHY, WHO, EDITORS, PERSON, "who knows most about pigeons?"])
def test_cards_that_name_people_draft_a_question_for_them(store: Path, question: str) -> None:
    card = _ask(store, question)
    answer = Answer.model_validate_json(_ask(store, "--json", question))
    drafted = [r for r in answer.results if isinstance(r, DraftedQuestion)]
    assert len(drafted) == 1 and drafted[0].to
    named = {r.name for r in answer.results if isinstance(r, Expert)}
    assert all(name in named or name in answer.summary for name in drafted[0].to)
    assert f"A question you could send to {', '.join(drafted[0].to)}" in card
    # A why card quotes the question; the others answered a question about the people (or
    # the document) themselves, and ask those people about the text instead.
    assert (question in drafted[0].text) == (question == WHY)
    for line in drafted[0].text.splitlines():
        assert f"  | {line}".rstrip() in card


def test_a_drafted_question_lists_its_sources_or_says_nothing_of_them() -> None:
    evidence = [Evidence(iri="x", label="RFC 9999 §3.1", url="https://example.org/a", role="r")]
    with_sources = drafted_question("why?", "RFC 9999 §3.1", ["Ann", "Ann", ""], evidence, "Why.")
    assert with_sources.to == ["Ann"]
    assert "- RFC 9999 §3.1: https://example.org/a" in with_sources.text
    bare = drafted_question("why?", "it", ["Ann"], [], "Why.")
    assert "sources" not in bare.text and bare.text.endswith("Why.\n\nThank you.")
