"""Commits credited by position, draft by draft, and only while the text was changing.

A fictional repository holds two drafts (the Heron and Egret protocols never existed), each in
its own file, tagged in interleaved order, and the Heron RFC's text. The Heron draft has two
sections headed "Wire Format", one in the body and one in an appendix; one commit after the RFC
was published edits its text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport, Verdict
from ratified_rdf.graph import vocab as v
from tests.pigeon import _git

HERON = """---
title: The Heron Protocol
docname: draft-example-heron-{rev}
author:
  - name: Alice Example
    email: alice@example.com
---

--- abstract

Herons, in flight.

--- middle

# Introduction

Herons fly over water.

# Wire Format

The wire carries one heron per frame{body}.

# Security Considerations

Herons bite.

--- back

# Wire Format

The appendix lists the frame table{appendix}.
"""

EGRET = """---
title: The Egret Protocol
docname: draft-example-egret-{rev}
author:
  - name: Erin Example
    email: erin@example.org
---

--- abstract

Egrets, wading.

--- middle

# Introduction

Egrets wade{intro}.

# Wire Format

Egrets need no wire.
"""

MANIFEST = """[brain]
id = "herons"
title = "Heron and Egret protocols (fictional test brain)"
repository = "https://github.com/example/birds"
working_group = "birds"

[[draft]]
name = "draft-example-heron"
file = "draft-example-heron.md"
revisions = "00-01"
became = "rfc9990"

[[draft]]
name = "draft-example-egret"
file = "draft-example-egret.md"
revisions = "00-02"
became = "rfc9991"

[[rfc]]
number = 9990
title = "The Heron Protocol"
published = "2031-02"
ref = "main"
file = "rfc9990.md"

[[rfc]]
number = 9991
title = "The Egret Protocol"
published = "2031-02"
ref = "main"
file = "rfc9991.md"

[discussion]
document_files = ["*.md"]

[licence]
spec = "https://example.org/licences/fictional-birds"
"""

ERIN = ("Erin Example", "erin@example.org")


def _commit(repo: Path, path: str, text: str, message: str, date: str, **kw: object) -> None:
    (repo / path).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message, date=date, **kw)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def birds_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("birds")


@pytest.fixture(scope="module")
def built(birds_folder: Path) -> tuple[Brain, BuildReport]:
    folder = birds_folder
    repo = folder / "birds"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    heron = {"body": "", "appendix": ""}
    egret = {"intro": ""}
    _commit(
        repo,
        "draft-example-heron.md",
        HERON.format(rev="00", **heron),
        "heron 00",
        "2030-01-05T10:00:00+00:00",
    )
    _git(repo, "tag", "draft-example-heron-00")
    _commit(
        repo,
        "draft-example-egret.md",
        EGRET.format(rev="00", **egret),
        "egret 00",
        "2030-01-06T10:00:00+00:00",
        author=ERIN,
    )
    _git(repo, "tag", "draft-example-egret-00")
    # Between the -00s and the -01s, in interleaved order: the body's Wire Format, Egret's
    # introduction, then the appendix's Wire Format.
    heron["body"] = ", and one egret at most"
    _commit(
        repo,
        "draft-example-heron.md",
        HERON.format(rev="00", **heron),
        "Limit egrets per frame",
        "2030-02-01T10:00:00+00:00",
    )
    egret["intro"] = " in shallow water"
    _commit(
        repo,
        "draft-example-egret.md",
        EGRET.format(rev="00", **egret),
        "Shallow water only",
        "2030-02-02T10:00:00+00:00",
        author=ERIN,
    )
    heron["appendix"] = " with a column for wingspan"
    _commit(
        repo,
        "draft-example-heron.md",
        HERON.format(rev="00", **heron),
        "Add wingspan column",
        "2030-02-03T10:00:00+00:00",
    )
    # One commit to both drafts' files: it landed once in each draft's next revision.
    (repo / "draft-example-heron.md").write_text(
        HERON.format(rev="00", **heron).replace("Herons bite.", "Herons bite softly.")
    )
    _commit(
        repo,
        "draft-example-egret.md",
        EGRET.format(rev="00", **egret).replace("no wire.", "no wire at all."),
        "Touch both",
        "2030-02-04T10:00:00+00:00",
    )
    # A pure move, then a move back with one edit: a rename changes only what it edits.
    (repo / "drafts").mkdir()
    _git(repo, "mv", "draft-example-heron.md", "drafts/draft-example-heron.md")
    _git(repo, "commit", "-q", "-m", "Move heron into drafts", date="2030-02-05T10:00:00+00:00")
    _git(repo, "mv", "drafts/draft-example-heron.md", "draft-example-heron.md")
    moved_back = (repo / "draft-example-heron.md").read_text()
    _commit(
        repo,
        "draft-example-heron.md",
        moved_back.replace("fly over water", "fly over open water"),
        "Move heron back, over open water",
        "2030-02-06T10:00:00+00:00",
    )
    # A pull request merged the GitHub way; the repository has no archive, so the merge
    # commit is all the brain knows of it.
    _git(repo, "checkout", "-q", "-b", "wingspan")
    branch_text = (repo / "draft-example-heron.md").read_text()
    _commit(
        repo,
        "draft-example-heron.md",
        branch_text.replace("for wingspan", "for wingspan in metres"),
        "Wingspan in metres",
        "2030-02-07T10:00:00+00:00",
    )
    _git(repo, "checkout", "-q", "main")
    _git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "wingspan",
        "-m",
        "Merge pull request #7 from alice/wingspan",
        "-m",
        "Metric wingspans",
        date="2030-02-08T10:00:00+00:00",
    )
    # A fork merges this repository into itself through its own pull request #3, then comes
    # back as this repository's pull request #8: "#3" is the fork's number, not ours.
    _git(repo, "checkout", "-q", "-b", "fork")
    egret_now = (repo / "draft-example-egret.md").read_text()
    _commit(repo, "draft-example-egret.md", egret_now.replace("Egrets, wading.", "Egrets wade."),
            "Fork: tidy egrets", "2030-02-09T10:00:00+00:00", author=ERIN)  # fmt: skip
    _git(repo, "checkout", "-q", "main")
    heron_now = (repo / "draft-example-heron.md").read_text()
    _commit(repo, "draft-example-heron.md", heron_now.replace("Herons, in flight.", "Herons fly."),
            "Main moves on", "2030-02-10T10:00:00+00:00")  # fmt: skip
    _git(repo, "checkout", "-q", "fork")
    _git(repo, "merge", "-q", "--no-ff", "main", "-m", "Merge pull request #3 from example/main",
         date="2030-02-11T10:00:00+00:00")  # fmt: skip
    _git(repo, "checkout", "-q", "main")
    _git(repo, "merge", "-q", "--no-ff", "fork", "-m", "Merge pull request #8 from erin/fork",
         "-m", "Tidier egrets", date="2030-02-12T10:00:00+00:00")  # fmt: skip
    heron_text = (repo / "draft-example-heron.md").read_text()
    _commit(
        repo,
        "draft-example-egret.md",
        EGRET.format(rev="01", **egret).replace("no wire.", "no wire at all."),
        "egret 01",
        "2030-03-01T10:00:00+00:00",
        author=ERIN,
    )
    _git(repo, "tag", "draft-example-egret-01")
    # Tagged on an older commit than -01 (as draft-ietf-tls-tls13-18 was): dates run backwards.
    _git(repo, "tag", "draft-example-egret-02", "HEAD~1")
    _commit(
        repo,
        "draft-example-heron.md",
        heron_text.replace("heron-00", "heron-01"),
        "heron 01",
        "2030-04-01T10:00:00+00:00",
    )
    _git(repo, "tag", "draft-example-heron-01")
    # The RFCs' texts, then an edit to the Heron RFC's body after it was published (2031-02).
    rfc = heron_text.replace("heron-00", "heron-01").replace(
        "docname: draft-example-heron-01", "number: 9990"
    )
    _commit(repo, "rfc9990.md", rfc, "As published", "2031-02-10T10:00:00+00:00")
    egret_rfc = (
        (repo / "draft-example-egret.md")
        .read_text()
        .replace("docname: draft-example-egret-01", "number: 9991")
    )
    _commit(repo, "rfc9991.md", egret_rfc, "Egret as published", "2031-02-11T10:00:00+00:00")
    _commit(
        repo,
        "rfc9990.md",
        rfc.replace("Herons bite softly.", "Herons bite hard."),
        "Erratum: bites",
        "2032-05-01T10:00:00+00:00",
    )
    manifest = folder / "manifest.toml"
    manifest.write_text(MANIFEST)
    return Brain.build(manifest, source=str(repo))


@pytest.fixture(scope="module")
def birds(built: tuple[Brain, BuildReport]) -> Brain:
    return built[0]


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


def test_two_sections_with_one_heading_are_two_sections(birds: Brain) -> None:
    heron_01 = _changed(birds, v.revision_iri("draft-example-heron", "01"))
    assert heron_01["Limit egrets per frame"] == {"2"}  # the body's Wire Format
    assert heron_01["Add wingspan column"] == {"A"}  # the appendix's Wire Format


def test_each_commit_is_credited_to_its_own_drafts_revision(birds: Brain) -> None:
    egret_01 = _changed(birds, v.revision_iri("draft-example-egret", "01"))
    heron_01 = _changed(birds, v.revision_iri("draft-example-heron", "01"))
    # Egret's edit came before heron-01 was tagged, yet it is Egret's, in Egret's -01.
    assert egret_01["Shallow water only"] == {"1"}
    assert "Shallow water only" not in heron_01
    assert not set(egret_01) & {"Limit egrets per frame", "Add wingspan column"}


def test_a_change_after_publication_is_not_a_change_while_it_was_changing(birds: Brain) -> None:
    rfc = _changed(birds, v.document_iri("rfc9990"))
    assert "Erratum: bites" not in rfc
    landed = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX dcterms: <http://purl.org/dc/terms/> "
        'SELECT ?doc WHERE { ?c dcterms:title "Erratum: bites" ; rr:landedIn ?doc }'
    ).rows
    assert [r["doc"].value for r in landed] == [v.document_iri("rfc9990")]


def test_dates_that_run_backwards_keep_every_window_open(built: tuple[Brain, BuildReport]) -> None:
    _brain, report = built
    (note,) = [n for n in report.notes if "draft-example-egret-02" in n]
    assert "not after the revision before it" in note and "spread evenly" in note
    start, end = re.search(r"from (\S+) to (\S+?)\.", note).groups()  # type: ignore[union-attr]
    # -01 keeps its month (from its tag, 2030-03-01) and -02 gets the span up to publication.
    assert "2030-03-01" < start < end <= "2031-02-01"
    assert not [n for n in report.notes if "draft-example-heron" in n]


def test_the_spreading_rule_never_empties_or_overlaps_a_window() -> None:
    from datetime import UTC, datetime

    from ratified_rdf.records.discussion import _spread_backwards

    day = [datetime(2016, month, dom, tzinfo=UTC) for month, dom in ((9, 22), (10, 20), (10, 16))]
    starts, spread = _spread_backwards([*day, datetime(2017, 3, 10, tzinfo=UTC)], day[0])
    assert spread == {2}
    assert starts == sorted(starts) and len(set(starts)) == len(starts)
    starts, spread = _spread_backwards([day[1], day[0], day[2]], datetime(2017, 1, 1, tzinfo=UTC))
    assert spread == {1, 2} and starts == sorted(starts) and len(set(starts)) == 3


def test_a_commit_to_two_drafts_files_landed_in_each(birds: Brain) -> None:
    assert _changed(birds, v.revision_iri("draft-example-heron", "01"))["Touch both"] == {"3"}
    assert _changed(birds, v.revision_iri("draft-example-egret", "01"))["Touch both"] == {"2"}
    landed = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX dcterms: <http://purl.org/dc/terms/> "
        'SELECT ?doc WHERE { ?c dcterms:title "Touch both" ; rr:landedIn ?doc }'
    ).rows
    assert {r["doc"].value for r in landed} == {
        v.revision_iri("draft-example-heron", "01"),
        v.revision_iri("draft-example-egret", "01"),
    }


def test_a_rename_changes_only_the_sections_it_edits(birds: Brain) -> None:
    heron_01 = _changed(birds, v.revision_iri("draft-example-heron", "01"))
    assert "Move heron into drafts" not in heron_01  # a pure move changed no section
    assert heron_01["Move heron back, over open water"] == {"1"}
    landed = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX dcterms: <http://purl.org/dc/terms/> "
        'SELECT ?doc WHERE { ?c dcterms:title "Move heron into drafts" ; rr:landedIn ?doc }'
    ).rows
    assert [r["doc"].value for r in landed] == [v.revision_iri("draft-example-heron", "01")]


def test_a_pull_request_is_known_from_its_merge_commit(birds: Brain) -> None:
    rows = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX dcterms: <http://purl.org/dc/terms/> "
        "PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT ?pr ?title ?page ?merge WHERE { "
        '  ?c dcterms:title "Wingspan in metres" ; rr:inPullRequest ?pr . '
        "  ?pr a rr:PullRequest ; dcterms:title ?title ; foaf:page ?page ; "
        "      prov:wasDerivedFrom/dcterms:title ?merge }"
    ).rows
    assert [(r["title"].value, r["page"].value, r["merge"].value) for r in rows] == [
        ("Metric wingspans", "https://github.com/example/birds/pull/7",
         "Merge pull request #7 from alice/wingspan"),
    ]  # fmt: skip
    answer = birds.ask("what was pull request #7 about?")
    assert answer.verdict == Verdict.ANSWERED
    assert '"Metric wingspans"' in answer.summary and "merged on 2030-02-08" in answer.summary
    assert "merge commit only" in answer.summary
    assert "changed 1 RFC section:" in answer.summary  # the branch's one appendix change
    card = birds.ask("who discussed section A of RFC 9990?")
    assert "through 1 pull request" in card.summary, card.summary


def test_who_merged_a_pull_request_known_from_git_alone_is_its_merge_commit_s(
    birds: Brain,
) -> None:
    # Alice made the merge commit of #7 on the command line: she merged it, and the card
    # shows that commit as its evidence.
    rows = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX foaf: <http://xmlns.com/foaf/0.1/> "
        "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "SELECT ?name WHERE { ?pr rr:threadNumber 7 ; prov:wasDerivedFrom ?merge . "
        "?merge prov:wasAttributedTo/foaf:name ?name }"
    ).rows
    assert [r["name"].value for r in rows] == ["Alice Example"]
    card = birds.ask("who merged PR 7?")
    assert card.verdict is Verdict.ANSWERED
    assert "It was merged by Alice Example on 2030-02-08, as its merge commit" in card.summary
    assert card.results[0].merged_by == "Alice Example"  # type: ignore[union-attr]
    assert [e.label for e in card.evidence if e.role == "commit"] == ["merge commit"]


def test_a_web_merge_is_its_author_s_and_a_web_squash_names_no_one() -> None:
    from datetime import UTC, datetime

    from ratified_rdf.graph.discussion_mapping import _merger
    from ratified_rdf.sources.git_history import CommitRecord

    def commit(parents: int, committer: tuple[str, str]) -> CommitRecord:
        at = datetime(2030, 1, 1, tzinfo=UTC)
        return CommitRecord(
            commit="c" * 40, parents=tuple("p" * 40 for _ in range(parents)),
            author_name="Bob Example", author_email="bob@example.org", authored_at=at,
            committed_at=at, subject="s", message="s", pull_request=4,
            committer_name=committer[0], committer_email=committer[1],
        )  # fmt: skip

    web = ("GitHub", "noreply@github.com")
    assert _merger(commit(2, web)).name == "Bob Example"  # type: ignore[union-attr]
    assert _merger(commit(1, web)) is None  # a squash's author wrote it, not merged it
    local = _merger(commit(1, ("Carol Example", "carol@example.net")))
    assert local is not None and local.email == "carol@example.net"


def test_a_forks_own_pull_request_number_is_not_this_repositorys(birds: Brain) -> None:
    rows = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "PREFIX dcterms: <http://purl.org/dc/terms/> "
        'SELECT ?number WHERE { ?c dcterms:title "Fork: tidy egrets" ; rr:inPullRequest ?pr . '
        "?pr rr:threadNumber ?number }"
    ).rows
    assert [int(r["number"].value) for r in rows] == [8]
    numbers = birds.query(
        "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
        "SELECT ?number WHERE { ?pr a rr:PullRequest ; rr:threadNumber ?number }"
    ).rows
    assert sorted(int(r["number"].value) for r in numbers) == [7, 8]


def test_a_part_marker_ends_the_section_above_it() -> None:
    from ratified_rdf.sources.git_history import _Outline
    from ratified_rdf.sources.kramdown import outline_and_breaks

    text = "---\ntitle: t\n---\n\n--- middle\n\n# One\n\nbody\n\n--- back\n\n# Two\n\nend\n"
    outline = _Outline(*outline_and_breaks(text))
    lines = text.split("\n")
    one, marker, two = lines.index("# One"), lines.index("--- back"), lines.index("# Two")
    assert [key[1] for key, _ in outline.covering(one + 2, one + 3)] == [("one",)]
    assert outline.covering(marker, marker + 2) == []  # "--- back" and the blank after it
    assert [key[1] for key, _ in outline.covering(marker, two + 1)] == [("two",)]


def test_coverage_counts_sections_discussed_changed_only_and_untraced(
    built: tuple[Brain, BuildReport], birds_folder: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from ratified_rdf.surfaces.cli import main

    store = tmp_path / "store"
    Brain.build(birds_folder / "manifest.toml", source=str(birds_folder / "birds"), path=store)[
        0
    ].close()
    result = CliRunner().invoke(main, ["coverage", "9990", "--store", str(store)])
    assert result.exit_code == 0, result.output
    # RFC 9990 has 4 sections, each changed by a commit while the text was changing (the one
    # that wrote the file first changed them all), and no post refers to any.
    assert "RFC 9990: 4 sections. 0 with discussion" in result.output
    assert "4 with changes only (commits, no post), 0 with nothing traced." in result.output
    assert "nothing:" not in result.output
    missing = CliRunner().invoke(main, ["coverage", "1234", "--store", str(store)])
    assert missing.exit_code != 0 and "holds no RFC 1234" in missing.output


def test_archive_text_never_reaches_gits_command_line_as_an_option(tmp_path: Path) -> None:
    from ratified_rdf.sources.github_source import _COMMIT_ID

    assert _COMMIT_ID.fullmatch("964f6fa") and _COMMIT_ID.fullmatch("a" * 40)
    for hostile in ("--output=/tmp/x", "-p", "HEAD", "964f6fa; rm", "main..evil", ""):
        assert not _COMMIT_ID.fullmatch(hostile), hostile


def test_a_removed_line_that_reads_like_a_file_header_is_content() -> None:
    """A removed line "-- an aside --" shows in the diff as "--- an aside --": it is content,
    and the hunks after it still belong to the file (they were lost to a file named "an aside
    --", which hid "Reflow paragraphs"' later sections on the QUIC corpus)."""
    from ratified_rdf.sources.git_history import _commit

    record = (
        "c0ffee\x1f\x1fAlice Example\x1falice@example.com\x1f2030-01-01T00:00:00+00:00\x1f"
        "2030-01-01T00:00:00+00:00\x1fAlice Example\x1falice@example.com\x1fReflow\x1d\n"
        ":100644 100644 aaaa bbbb M\tdraft-example-heron.md\n\n"
        "diff --git a/draft-example-heron.md b/draft-example-heron.md\n"
        "index aaaa..bbbb 100644\n--- a/draft-example-heron.md\n+++ b/draft-example-heron.md\n"
        "@@ -3 +3 @@\n--- an aside --\n+-- an aside, reflowed --\n"
        "@@ -9 +9 @@\n-herons\n+egrets\n"
    )
    (change,) = _commit(record).changes
    assert change.file == "draft-example-heron.md"
    assert [(h.old_start, h.new_start) for h in change.hunks] == [(3, 3), (9, 9)]


def test_a_section_is_found_by_its_path_when_an_ancestor_was_renamed() -> None:
    """The fallbacks for a changed section whose path the landed text lacks: one ancestor
    renamed, else the longest unique end of its path, else the whole path across "--- back";
    never a heading that repeats, and never an end of a path for a whole one."""
    from ratified_rdf.records.discussion import _by_path_end, _path_ends

    landed = {
        (False, ("loss detection", "pseudocode", "constants"), 0): 1,
        (False, ("congestion control", "constants"), 0): 2,
        (False, ("loss detection", "pseudocode", "alarm", "pseudocode"), 0): 3,
        (False, ("congestion control", "pseudocode"), 0): 4,
        (True, ("contributors",), 0): 5,
        (True, ("data structures", "handshake", "server messages"), 0): 6,
    }
    ends = _path_ends(landed)
    # "Algorithm Details" became "Pseudocode": one ancestor renamed, the rest as it was.
    assert _by_path_end(ends, (False, ("loss detection", "algorithm details", "constants"), 0)) == 1
    # Its parent renamed too, but ("alarm", "pseudocode") is one section's end.
    assert _by_path_end(ends, (False, ("recovery", "details", "alarm", "pseudocode"), 0)) == 3
    # "Constants" alone repeats: no guess.
    assert _by_path_end(ends, (False, ("overview", "constants"), 0)) is None
    # Moved from the body to an appendix, whole path unchanged.
    assert _by_path_end(ends, (False, ("contributors",), 0)) == 5
    # An appendix path that merely *ends* like a body section's path is not that section.
    assert _by_path_end(ends, (False, ("handshake", "server messages"), 0)) is None


def test_an_outline_is_carried_past_a_change_that_touches_no_heading() -> None:
    """Lines added or removed in a body move the headings after them; the outline carried
    from the parent text is the one the new text parses to."""
    from ratified_rdf.sources.git_history import Hunk, _Outline
    from ratified_rdf.sources.kramdown import outline_and_breaks

    before = "# One\n\nsome\ntext\n\n# Two\n\nmore\n\n--- back\n\n# Three\n\nend\n"
    after = "# One\n\nsome\nnew\nlines\n\n# Two\n\n\n--- back\n\n# Three\n\nend\n"
    hunks = [
        Hunk(old_start=4, old_lines=1, new_start=4, new_lines=2, outline=False),
        Hunk(old_start=8, old_lines=1, new_start=8, new_lines=0, outline=False),
    ]
    moved = _Outline(*outline_and_breaks(before)).moved(hunks)
    parsed = _Outline(*outline_and_breaks(after))
    assert (moved.lines, moved.sections) == (parsed.lines, parsed.sections)
