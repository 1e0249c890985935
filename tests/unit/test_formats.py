"""Every format, one reader each: the same draft in markdown, XML and plain text reads as one
section tree, and a commit to an XML draft is credited, by position, to the section it edited.

The Quail Courier Protocol (tests/fixtures/formats) is as fictional as the Pigeon's: one
revision written three ways (kramdown-rfc with setext headings and a no-break space after a
``#``, xml2rfc v2 with DOCTYPE entities, and the plain text xml2rfc would render, form feeds,
running headers and footers included).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf.graph import vocab as v
from ratified_rdf.sources.document import ParseError, outline_keys, section_keys
from ratified_rdf.sources.formats import FORMATS, format_of, parse_document
from tests.pigeon import _git

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "formats"
QUAIL = {
    "kramdown": FIXTURES / "draft-example-quail-transport.md",
    "xml2rfc": FIXTURES / "draft-example-quail-transport.xml",
    "text": FIXTURES / "draft-example-quail-transport-03.txt",
}
TREE = [
    ("1", "Introduction", 1, False),
    ("1.1", "Requirements Language", 2, False),
    ("2", "Courier Rules", 1, False),
    ("2.1", "Pickup", 2, False),
    ("2.1.1", "Late Parcels", 3, False),
    ("3", "Security Considerations", 1, False),
    ("4", "References", 1, False),
    ("4.1", "Normative References", 2, False),
    ("4.2", "Informative References", 2, False),
    ("A", "Coop Layout", 1, True),
    ("A.1", "Doors", 2, True),
]


def test_each_file_name_has_its_reader() -> None:
    assert {name: format_of(path.name) for name, path in QUAIL.items()} == {
        name: FORMATS[name] for name in QUAIL
    }
    assert format_of("draft-x.MKD") is FORMATS["kramdown"]
    assert format_of("draft-x.pdf") is None
    with pytest.raises(ParseError, match=r"no reader reads '\.pdf' files; name the file"):
        parse_document("draft-x.pdf", "%PDF")


@pytest.mark.parametrize("name", sorted(QUAIL))
def test_one_draft_in_every_format_has_one_section_tree(name: str) -> None:
    path = QUAIL[name]
    doc = parse_document(path.name, path.read_text(encoding="utf-8"))
    assert doc.title == "The Quail Courier Protocol"
    assert doc.docname == "draft-example-quail-transport-03"
    tree = [(s.number, s.heading, s.level, s.appendix) for s in doc.sections]
    # xml2rfc renders the authors' addresses as an unnumbered last section of the text.
    extra = [(None, "Author's Address", 1, True)] if name == "text" else []
    assert tree == TREE + extra


@pytest.mark.parametrize("name", sorted(QUAIL))
def test_each_formats_outline_names_the_sections_the_reader_makes(name: str) -> None:
    """Attribution places a diff's lines by the outline: each heading it finds must be the
    section of the same key in the parsed revision, on the line that heading is written."""
    path = QUAIL[name]
    text = path.read_text(encoding="utf-8")
    reader = FORMATS[name]
    parsed = section_keys(reader.parse(text).sections)
    outline = reader.outline(text)
    lines = text.split("\n")
    by_position = {s.position: s for s in reader.parse(text).sections}
    found = [by_position[parsed[key]].heading for key in outline_keys(outline.headings)]
    # kramdown-rfc makes the References sections from its YAML header, not from headings.
    generated = {"References", "Normative References", "Informative References"}
    expected = [heading for _, heading, _, _ in TREE]
    if name == "kramdown":
        expected = [h for h in expected if h not in generated]
    if name == "text":
        expected.append("Author's Address")
    assert found == expected
    for heading in outline.headings:
        if heading.heading != "References" or name != "xml2rfc":
            assert heading.heading.split()[0] in lines[heading.line]


def _changed(brain: Brain, document: str) -> dict[str, set[str]]:
    """Commit subject -> the numbers of the sections of ``document`` it changed."""
    rows = brain.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX dcterms: <http://purl.org/dc/terms/> "
        "SELECT ?title ?section WHERE { ?commit rr:changedSection ?section ; dcterms:title ?title }"
    ).rows
    found: dict[str, set[str]] = {}
    prefix = f"{document}/section/"
    for row in rows:
        section = row["section"].value
        if section.startswith(prefix):
            found.setdefault(row["title"].value, set()).add(section.removeprefix(prefix))
    return found


MANIFEST = """[brain]
id = "quail"
title = "Quail Courier Protocol (fictional test brain)"
repository = "https://github.com/example/quail"
working_group = "quail"

[[draft]]
name = "draft-example-quail-transport"
file = "draft-example-quail-transport.xml"
revisions = "00-03"

[discussion]
document_files = ["*.xml"]

[licence]
spec = "https://example.org/licences/fictional-quail"
"""


def _commit(repo: Path, text: str, message: str, date: str) -> None:
    (repo / "draft-example-quail-transport.xml").write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, date=date)


@pytest.fixture(scope="module")
def quail(tmp_path_factory: pytest.TempPathFactory) -> tuple[Brain, BuildReport]:
    folder = tmp_path_factory.mktemp("quail")
    repo = folder / "quail"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    text = (
        QUAIL["xml2rfc"]
        .read_text(encoding="utf-8")
        .replace('<!ENTITY ID-VERSION "03">', '<!ENTITY ID-VERSION "00">')
    )
    _commit(repo, text, "quail 00", "2030-01-05T10:00:00+00:00")
    _git(repo, "tag", "draft-example-quail-transport-00")
    text = text.replace("up at the coop door.", "up at the coop window.")
    _commit(repo, text, "Pickup at the window", "2030-01-10T10:00:00+00:00")
    text = text.replace("A door opens outward.", "A door opens inward.")
    _commit(repo, text, "Doors open inward", "2030-01-11T10:00:00+00:00")
    text = text.replace("Quails peck.", "Quails peck and scratch.")
    _commit(repo, text, "Scratching too", "2030-01-12T10:00:00+00:00")
    text = text.replace('ID-VERSION "00"', 'ID-VERSION "01"')
    _commit(repo, text, "quail 01", "2030-02-01T10:00:00+00:00")
    _git(repo, "tag", "draft-example-quail-transport-01")
    # A revision whose XML is broken: a gap in the record, not a failed build.
    broken = text.replace('ID-VERSION "01"', 'ID-VERSION "02"').replace("</middle>", "")
    _commit(repo, broken, "quail 02, broken", "2030-03-01T10:00:00+00:00")
    _git(repo, "tag", "draft-example-quail-transport-02")
    text = text.replace('ID-VERSION "01"', 'ID-VERSION "03"').replace(
        "Coops have one door.", "Coops have one door and one perch."
    )
    _commit(repo, text, "quail 03, mended", "2030-04-01T10:00:00+00:00")
    _git(repo, "tag", "draft-example-quail-transport-03")
    manifest = folder / "manifest.toml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    return Brain.build(manifest, source=str(repo))


def test_a_commit_to_an_xml_draft_is_credited_to_the_section_it_edited(
    quail: tuple[Brain, BuildReport],
) -> None:
    brain, _report = quail
    changed = _changed(brain, v.revision_iri("draft-example-quail-transport", "01"))
    assert changed["Pickup at the window"] == {"2.1"}
    assert changed["Doors open inward"] == {"A.1"}
    assert changed["Scratching too"] == {"3"}


def test_an_unreadable_revision_is_a_noted_gap_not_a_failed_build(
    quail: tuple[Brain, BuildReport],
) -> None:
    brain, report = quail
    assert report.revisions == 4
    gap = [note for note in report.notes if "draft-example-quail-transport-02 is a gap" in note]
    assert len(gap) == 1
    assert "not well-formed XML" in gap[0] and "build went on" in gap[0]
    # The revisions on either side of the gap are whole; the one after it has its changes.
    assert _changed(brain, v.revision_iri("draft-example-quail-transport", "03"))[
        "quail 03, mended"
    ] == {"A"}
    # The brain's holdings say it too.
    holdings = {h.what: h.count for h in brain.holdings().results}  # type: ignore[union-attr]
    assert holdings["revisions"] == 4
    assert holdings["revisions that could not be read"] == 1
    assert "1 revision that could not be read" in brain.holdings().summary
    # The external references are noted once, naming every revision that has them.
    unfetched = [note for note in report.notes if "&RFC2119;" in note]
    assert len(unfetched) == 1
    assert "draft-example-quail-transport-00" in unfetched[0]


def _places(repo: Path, file: str) -> dict[str, list[tuple[str, ...]]]:
    """Commit subject -> the heading paths of the sections its change was placed in."""
    from ratified_rdf.sources.git_history import place_changes, read_history
    from ratified_rdf.sources.git_repo import GitRepository

    opened = GitRepository.open(repo, cache_dir=repo.parent / "cache")
    commits = read_history(opened, ["main"], [file])
    places = place_changes(opened, commits)
    return {c.subject: [p.key[1] for p in places[c.commit]] for c in commits}


def test_a_setext_title_line_edited_alone_is_read_not_carried(tmp_path: Path) -> None:
    """A setext title line holds no mark, so a commit editing only it (or only a body) cannot
    be placed in its parent's outline moved: the text is read, and the new title's section is
    the one credited."""
    repo = tmp_path / "quail"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    text = QUAIL["kramdown"].read_text(encoding="utf-8")
    path = repo / "draft.md"

    def commit(new: str, message: str) -> str:
        path.write_text(new, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message)
        return new

    text = commit(text, "first")
    text = commit(text.replace("Pickup\n------", "Collection\n------"), "Rename pickup")
    text = commit(text.replace("at the coop door", "at the coop gate"), "Gate, not door")
    places = _places(repo, "draft.md")
    # The title line removed was in the old text's Pickup, the one added is in Collection.
    assert sorted(places["Rename pickup"]) == [
        ("courier rules", "collection"),
        ("courier rules", "pickup"),
    ]
    assert places["Gate, not door"] == [("courier rules", "collection")]


def test_a_commit_to_a_plain_text_draft_is_placed_by_position(tmp_path: Path) -> None:
    repo = tmp_path / "quail"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    text = QUAIL["text"].read_text(encoding="utf-8")
    path = repo / "draft.txt"
    for old, new, message in [
        ("", "", "first"),
        ("opens outward.", "opens inward.", "Inward"),
        ("Quails peck.", "Quails peck hard.", "Peck hard"),
    ]:
        text = text.replace(old, new) if old else text
        path.write_text(text, encoding="utf-8")
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", message)
    places = _places(repo, "draft.txt")
    assert places["Inward"] == [("coop layout", "doors")]
    assert places["Peck hard"] == [("security considerations",)]


MMARK = FIXTURES / "mmark" / "draft-example-quail-transport.md"
"""The Quail draft in mmark: a TOML title block between ``%%%`` lines, ``.# Abstract``,
``{mainmatter}`` and ``{backmatter}``; named ``.md`` as kramdown-rfc files are."""


def test_an_mmark_draft_is_known_by_its_text_and_has_the_same_section_tree() -> None:
    text = MMARK.read_text(encoding="utf-8")
    assert format_of(MMARK.name) is FORMATS["kramdown"]
    doc = parse_document(MMARK.name, text)
    assert doc.title == "The Quail Courier Protocol"
    assert doc.docname == "draft-example-quail-transport-03"
    tree = [(s.number, s.heading, s.level, s.appendix) for s in doc.sections]
    # mmark writes its references as XML blocks, not as a header's lists: no References.
    assert tree == [t for t in TREE if not t[1].endswith("References")]


def test_an_mmark_drafts_outline_places_lines_in_its_sections() -> None:
    """Change attribution reads the outline the name's reader gives: for an mmark text, the
    same sections, on the text's own lines (the title block keeps its lines)."""
    text = MMARK.read_text(encoding="utf-8")
    reader = format_of(MMARK.name)
    assert reader is not None
    parsed = reader.parse(text)
    by_position = {s.position: s for s in parsed.sections}
    keys = section_keys(parsed.sections)
    outline = reader.outline(text)
    found = [by_position[keys[key]].heading for key in outline_keys(outline.headings)]
    assert found == [s.heading for s in parsed.sections]
    lines = text.split("\n")
    assert [lines[h.line] for h in outline.headings][-2:] == ["# Coop Layout", "## Doors"]
    assert [h.appendix for h in outline.headings][-2:] == [True, True]
    assert reader.outline_line("{backmatter}") and reader.outline_line(".# Abstract")
