"""The timeline drawn: one link per revision, mark and publication, each named; a text
alternative; escaping; the PNG the command line writes; ``ratified ask --plot``."""

from __future__ import annotations

import re
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from ratified_rdf.answers.models import Timeline
from ratified_rdf.answers.timeline import with_timeline
from ratified_rdf.surfaces.cli import main
from ratified_rdf.surfaces.timeline_svg import WIDTH, timeline_png, timeline_svg
from tests.pigeon import MANIFEST, make_pigeon_repo
from tests.unit.test_timeline import DISCUSSION, HISTORY, PUBLISHED, _card, _commit, _post

NS = {"svg": "http://www.w3.org/2000/svg"}


def _timeline(results: list) -> Timeline:
    timeline = with_timeline(_card(results)).timeline
    assert timeline is not None
    return timeline


def _links(root: ET.Element, cls: str) -> list[ET.Element]:
    return [a for a in root.iter(f"{{{NS['svg']}}}a") if cls in (a.get("class") or "").split()]


def _drawn(timeline: Timeline) -> ET.Element:
    return ET.fromstring(timeline_svg(timeline))


def test_every_revision_mark_and_the_publication_is_a_named_link() -> None:
    timeline = _timeline([*HISTORY, *DISCUSSION, PUBLISHED])
    root = _drawn(timeline)
    revisions, marks = _links(root, "revision"), _links(root, "mark")
    assert sorted(a.get("href") or "" for a in revisions) == sorted(
        r.url for r in timeline.revisions
    )
    assert sorted((a.get("href") or "", a.get("data-kind") or "") for a in marks) == sorted(
        (m.url, m.kind) for m in timeline.marks
    )
    publication = _links(root, "publication")
    assert timeline.publication is not None
    assert [a.get("href") for a in publication] == [timeline.publication.url]
    for a in [*revisions, *marks, *publication]:
        title = a.find("svg:title", NS)
        assert title is not None and (title.text or "").strip()
    labels = {a.get("href"): a.find("svg:title", NS).text for a in marks}  # type: ignore[union-attr]
    assert all(labels[m.url] == m.label for m in timeline.marks)


def test_renumbered_revisions_are_marked_and_their_labels_give_the_number() -> None:
    timeline = _timeline(HISTORY)
    root = _drawn(timeline)
    renumbered = _links(root, "renumbered")
    assert [a.get("data-document") for a in renumbered] == [
        r.document for r in timeline.revisions if r.renumbered
    ]
    for a, revision in zip(_links(root, "revision"), timeline.revisions, strict=True):
        label = "".join(a.find("svg:text", NS).itertext())  # type: ignore[union-attr]
        assert label.startswith(f"-{revision.revision_number} §{revision.section_number}")
        assert ("(renamed)" in label) is revision.renamed


def test_the_picture_has_a_title_and_a_text_alternative() -> None:
    timeline = _timeline([*HISTORY, *DISCUSSION])
    root = _drawn(timeline)
    title, desc = root.find("svg:title", NS), root.find("svg:desc", NS)
    assert title is not None and desc is not None
    assert root.get("aria-labelledby") == title.get("id")
    assert root.get("aria-describedby") == desc.get("id")
    assert timeline.section in (title.text or "")
    assert timeline.description in (desc.text or "")
    assert all(line in (desc.text or "") for line in timeline.not_drawn)
    assert root.get("width") == str(WIDTH)
    other = ET.fromstring(timeline_svg(timeline, id_prefix="second"))
    assert other.find("svg:title", NS).get("id") != title.get("id")  # type: ignore[union-attr]


def test_a_section_with_no_discussion_says_so_and_draws_no_marks() -> None:
    root = _drawn(_timeline(HISTORY))
    assert _links(root, "mark") == []
    words = " ".join("".join(t.itertext()) for t in root.iter(f"{{{NS['svg']}}}text"))
    assert "no posts, review comments or commits" in words
    assert "publication date not on the card" in words


def test_what_a_post_says_stays_text_and_only_web_links_are_links() -> None:
    hostile = _post("comment", "2029-05-01T10:00:00Z", 7).model_copy(
        update={
            "thread_title": '<script>alert(1)</script> & "quotes" </svg>',
            "post_url": "javascript:alert(1)",
        }
    )
    timeline = _timeline([*HISTORY, hostile])
    svg = timeline_svg(timeline)
    root = ET.fromstring(svg)  # still well-formed XML
    assert not list(root.iter(f"{{{NS['svg']}}}script")) and "<script" not in svg
    assert all((a.get("href") or "").startswith("https://") for a in root.iter(f"{{{NS['svg']}}}a"))
    unlinked = [g for g in root.iter(f"{{{NS['svg']}}}g") if "mark" in (g.get("class") or "")]
    assert len(unlinked) == 1
    assert "<script>" in (unlinked[0].find("svg:title", NS).text or "")  # type: ignore[union-attr]


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_the_png_is_the_svg_drawn_at_its_scale() -> None:
    pytest.importorskip("resvg_py", reason="the plot extra: pip install 'ratified-rdf[plot]'")
    timeline = _timeline([*HISTORY, *DISCUSSION, PUBLISHED])
    height = float(_drawn(timeline).get("height") or 0)
    assert _png_size(timeline_png(timeline, scale=1.0)) == (WIDTH, round(height))
    assert _png_size(timeline_png(timeline, scale=2.0)) == (2 * WIDTH, round(2 * height))


@pytest.fixture(scope="module")
def pigeon_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_pigeon_repo(tmp_path_factory.mktemp("pigeon-git"))
    store = tmp_path_factory.mktemp("pigeon") / "store"
    built = CliRunner().invoke(
        main, ["build", str(MANIFEST), "--source", str(repo), "--store", str(store), "--quiet"]
    )
    assert built.exit_code == 0, built.output
    return store


def test_ask_plot_writes_the_cards_timeline(pigeon_store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    question = "history of RFC 9999 section 3.1"
    out = tmp_path / "out.svg"
    ran = runner.invoke(main, ["ask", "--store", str(pigeon_store), "--plot", str(out), question])
    assert ran.exit_code == 0, ran.output
    as_json = runner.invoke(main, ["ask", "--store", str(pigeon_store), "--json", question])
    card = _card([]).model_validate_json(as_json.stdout)
    assert card.timeline is not None
    assert out.read_text(encoding="utf-8") == timeline_svg(card.timeline)


def test_ask_plot_says_what_it_needs(pigeon_store: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    wrong = runner.invoke(
        main, ["ask", "--store", str(pigeon_store), "--plot", str(tmp_path / "out.gif"), "x"]
    )
    assert wrong.exit_code == 2 and ".svg or .png" in wrong.output
    none = runner.invoke(
        main,
        [
            "ask",
            "--store",
            str(pigeon_store),
            "--plot",
            str(tmp_path / "who.svg"),
            "who should I ask about RFC 9999 section 3.1?",
        ],
    )
    assert none.exit_code == 2 and "no timeline to plot" in none.output
    assert not (tmp_path / "who.svg").exists()


def test_a_publication_month_is_a_band_holding_the_marks_of_that_month() -> None:
    # RFC 9999 came out in 2030-03: a commit of 2030-03-20 is inside the month, not after it.
    late = _commit("ddd444", "2030-03-20T10:00:00Z")
    root = _drawn(_timeline([*HISTORY, late, PUBLISHED]))
    band = root.find(".//svg:rect[@class='published']", NS)
    assert band is not None
    left = float(band.get("x") or 0)
    right = left + float(band.get("width") or 0)
    drawn = next(a for a in _links(root, "mark") if a.get("href") == late.commit_url)
    square = drawn.find("svg:rect", NS)
    assert square is not None
    middle = float(square.get("x") or 0) + float(square.get("width") or 0) / 2
    assert left < middle < right
    # The band is about a month wide on the picture's scale: March is 31 days of the span.
    ticks = [a.find("svg:line", NS) for a in _links(root, "revision")]
    revisions = sorted(float(tick.get("x1") or 0) for tick in ticks if tick is not None)
    first_to_last = revisions[-1] - revisions[0]  # 2029-01-10 to 2030-01-05: 360 days
    assert right - left == pytest.approx(first_to_last * 31 / 360, rel=0.02)


def test_no_calendar_label_runs_into_the_publication() -> None:
    root = _drawn(_timeline([*HISTORY, PUBLISHED]))
    band = root.find(".//svg:rect[@class='published']", NS)
    assert band is not None
    left = float(band.get("x") or 0)
    labels = root.findall(".//svg:g[@class='calendar']/svg:text", NS)
    assert labels
    for label in labels:
        x = float(label.get("x") or 0)
        assert x + 6.0 * len(label.text or "") <= left or x > left + 200, label.text


def test_the_page_keeps_every_element_and_attribute_the_picture_uses() -> None:
    """The page rebuilds the server's SVG from an allowlist (app.js): anything drawn here
    that the list lacks would silently vanish from the page, a band's shading with it."""
    script = (Path(__file__).parents[2] / "src/ratified_rdf/surfaces/web/app.js").read_text()

    def allowed(name: str) -> set[str]:
        listed = re.search(rf"const {name} = new Set\(\[(.*?)\]\)", script, re.DOTALL)
        assert listed is not None, name
        return set(re.findall(r'"([^"]+)"', listed.group(1)))

    timeline = _timeline([*HISTORY, *DISCUSSION, PUBLISHED])
    root = _drawn(timeline)
    tags = {element.tag.split("}")[1] for element in root.iter()}
    attributes = {name for element in root.iter() for name in element.attrib} - {"href"}
    assert tags <= allowed("SVG_TAGS")
    assert attributes <= allowed("SVG_ATTRS")
