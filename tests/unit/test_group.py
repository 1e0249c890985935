"""A group brain: two fictional repositories (Pigeon and Sparrow, whose draft cites Pigeon's RFC
9999 and updates it) built into one store, each its own, linked, and asked about as one."""

from __future__ import annotations

import multiprocessing
import os
import re
from pathlib import Path
from typing import Any

import pytest

from ratified_rdf import Brain
from ratified_rdf import build as build_module
from ratified_rdf._forked import Forked
from ratified_rdf.answers.models import Expert, Holding, PersonActivity
from ratified_rdf.build import build
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.graph.writer import Writer, read_runs
from ratified_rdf.group import GroupReport, build_group, is_group, load_group
from ratified_rdf.queries import run_query
from ratified_rdf.records.manifest import ManifestError
from ratified_rdf.records.reference_formats import references_in
from ratified_rdf.records.references import read_references
from ratified_rdf.trust import TenantId
from tests.pigeon import FIXTURES as PIGEON
from tests.pigeon import _git, make_pigeon_repo
from tests.sparrow import FIXTURES as SPARROW
from tests.sparrow import MANIFEST as SPARROW_MANIFEST
from tests.sparrow import make_sparrow_repo

TENANT = TenantId.default()
LAST = (SPARROW / "draft-example-sparrow-01.md").read_text()


def _group(folder: Path, members: list[Path], group_id: str = "birds") -> Path:
    listed = ", ".join(f'"{m}"' for m in members)
    (folder / "group.toml").write_text(
        f'[group]\nid = "{group_id}"\ntitle = "Birds (fictional)"\nmembers = [{listed}]\n'
    )
    return folder


@pytest.fixture(scope="module")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("copies")
    make_pigeon_repo(folder)
    make_sparrow_repo(folder)
    return folder


@pytest.fixture(scope="module")
def birds(
    copies: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[OxigraphStore, GroupReport]:
    store = OxigraphStore()
    folder = _group(tmp_path_factory.mktemp("group"), [PIGEON, SPARROW])
    return store, build_group(folder, source=copies, store=store)


def _current(store: OxigraphStore, brain: str) -> tuple[str, list[str]]:
    """The id and graphs of ``brain``'s current run."""
    run = next(r for r in read_runs(store, TENANT, brain) if r.current)
    return run.run_id, sorted(run.graphs)


def _contents(store: OxigraphStore, graphs: list[str]) -> dict[str, list[str]]:
    return {g: sorted(map(str, store.triples([g]))) for g in graphs}


# ------------------------------------------------------------------------- references read


def test_references_are_read_from_the_header_and_the_text() -> None:
    cited = read_references(LAST)
    assert cited.normative == ("rfc9999",)
    # The entries of the informative list, not the fields under them (title:, author:);
    # {{?RFC2549}} in the text is an informative reference too.
    assert cited.informative == ("rfc1149", "draft-example-finch", "rfc2549")
    assert cited.updates == (9999,)
    assert cited.obsoletes == ()
    # Independently: every "Section N" in the text, with RFC 9999 beside it.
    body = LAST.split("--- middle", 1)[1]
    numbers = dict.fromkeys(re.findall(r"Section (\d+(?:\.\d+)*)", body))
    assert cited.sections == tuple(("rfc9999", n) for n in numbers)
    assert len(cited.sections) == 3


def test_references_take_updates_as_a_list_too() -> None:
    text = "---\ntitle: X\nupdates:\n  - 8446\n  - 8447\nobsoletes: 6961\n---\n\nText.\n"
    cited = read_references(text)
    assert (cited.updates, cited.obsoletes) == ((8446, 8447), (6961,))


def test_references_follow_the_aliases_a_draft_cites_documents_by() -> None:
    text = (
        "---\ntitle: X\nnormative:\n  SPARROW: RFC9998\n  RFC2119:\n---\n\n"
        "Built on {{!PIGEON=RFC9999}}: see Section 3.1 of {{PIGEON}}, "
        "{{PIGEON, Section 4}} and [SPARROW], Section 2; the changes in {{PIGEON}}; "
        "Appendix A. A PIGEON alone is a word.\n"
    )
    cited = read_references(text)
    assert cited.normative == ("rfc9998", "rfc2119", "rfc9999")
    assert cited.sections == (
        ("rfc9999", "3.1"),
        ("rfc9999", "4"),
        ("rfc9998", "2"),
        ("rfc9999", "A"),
    )


# ------------------------------------------------------------------------------- the build


def test_a_group_reads_every_member_and_its_own_links(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    store, report = birds
    assert report.members == ("pigeon", "sparrow")
    assert [b.brain_id for b in report.built] == ["pigeon", "sparrow"]
    group = Brain.from_store(store, "birds")
    members = [g for m in ("pigeon", "sparrow") for g in _current(store, m)[1]]
    assert set(members) < set(group.read_graphs)
    own = [g for g in group.read_graphs if "/birds/" in g]
    assert sorted(g.rsplit("/", 1)[-1] for g in own) == ["records", "references"]
    # Each member's expertise is read (one per run), not only the first member's.
    expertise = [g for g in group.read_graphs if g.endswith("/expertise")]
    assert len(expertise) == 2
    # The group is the brain meant when none is named; a member stays a brain of its own.
    assert Brain.from_store(store).brain_id == "birds"
    assert "/birds/" not in "".join(Brain.from_store(store, "sparrow").read_graphs)
    assert group.validate() == []


def test_the_group_links_each_cited_section_by_its_page_and_its_section(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    store, report = birds
    group = Brain.from_store(store, "birds")
    rows = group.query(
        "SELECT ?o WHERE { <https://w3id.org/ratified-rdf/id/doc/draft-example-sparrow/01> "
        "<http://purl.org/dc/terms/references> ?o }"
    ).rows
    cited = {row["o"].value for row in rows}
    body = LAST.split("--- middle", 1)[1]
    numbers = set(re.findall(r"Section (\d+(?:\.\d+)*)", body))
    pages = {f"https://www.rfc-editor.org/rfc/rfc9999#section-{n}" for n in numbers}
    sections = {f"https://w3id.org/ratified-rdf/id/doc/rfc9999/section/{n}" for n in numbers}
    assert pages | sections <= cited
    # The informative references: RFC 1149, the finch draft and {{?RFC2549}}.
    assert len(cited - pages - sections) == 3
    # requires RFC 9999, updates it: one edge each, for the one draft that says so.
    assert report.edges == len(cited) + 2


def test_rebuilding_one_member_leaves_the_others_and_the_group_alone(
    copies: Path, tmp_path: Path
) -> None:
    store = OxigraphStore()
    folder = _group(tmp_path, [PIGEON, SPARROW])
    build_group(folder, source=copies, store=store)
    pigeon, sparrow = _current(store, "pigeon"), _current(store, "sparrow")
    group = Brain.from_store(store, "birds")
    before = list(group.read_graphs)
    pigeon_triples = _contents(store, pigeon[1])

    # A member rebuilt on its own: the group's readers keep the last complete group brain.
    build(SPARROW_MANIFEST, source=str(copies / "sparrow-spec"), store=store)
    assert _current(store, "sparrow") != sparrow
    assert Brain.from_store(store, "birds").read_graphs == before

    # The group rebuilt for that member only: Pigeon's run and graphs are the same ones.
    report = build_group(folder, source=copies, store=store, only=["sparrow"])
    assert [b.brain_id for b in report.built] == ["sparrow"]
    assert _current(store, "pigeon") == pigeon
    assert _contents(store, pigeon[1]) == pigeon_triples
    after = Brain.from_store(store, "birds").read_graphs
    assert set(pigeon[1]) < set(after)
    assert not set(sparrow[1]) & set(after)
    assert set(_current(store, "sparrow")[1]) < set(after)


def test_pruning_a_group_drops_only_its_own_graphs(copies: Path, tmp_path: Path) -> None:
    store = OxigraphStore()
    folder = _group(tmp_path, [PIGEON, SPARROW])
    build_group(folder, source=copies, store=store)
    first = next(r for r in read_runs(store, TENANT, "birds") if r.current)
    build_group(folder, source=copies, store=store, only=["sparrow"])
    pigeon = _current(store, "pigeon")[1]
    forgotten = Writer(store, None, "birds").prune(1)  # type: ignore[arg-type]
    assert forgotten == [first.run_id]
    held = set(store.graphs())
    assert set(pigeon) <= held
    assert not {g for g in first.graphs if "/birds/" in g} & held


def test_a_group_file_says_what_is_wrong(copies: Path, tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="no group file"):
        load_group(tmp_path)
    _group(tmp_path, [PIGEON, PIGEON])
    assert is_group(tmp_path)
    with pytest.raises(ManifestError, match="pigeon is used twice"):
        load_group(tmp_path)
    _group(tmp_path, [PIGEON, SPARROW])
    with pytest.raises(ManifestError, match="has no member finch; its members are pigeon"):
        build_group(tmp_path, source=copies, store=OxigraphStore(), only=["finch"])
    with pytest.raises(ManifestError, match="No copy of pigeon-spec under"):
        build_group(tmp_path, source=tmp_path, store=OxigraphStore())


# ---------------------------------------------------------------------------- the questions


def test_which_documents_cite_a_section_or_an_rfc(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    group = Brain.from_store(birds[0], "birds")
    card = group.ask("which documents depend on RFC 9999 section 3.1?")
    assert card.intent == "group_citing"
    assert card.verdict == "answered"
    assert card.results[0].count == 1  # type: ignore[union-attr]
    assert [r.label for r in card.results[1:]] == ["draft-example-sparrow-01"]  # type: ignore[union-attr]
    assert "https://www.rfc-editor.org/rfc/rfc9999#section-3.1" in {e.url for e in card.evidence}
    assert [q.name for q in card.queries] == ["group_citing"]
    # Section 2 is cited by no one (Pigeon's own revisions cite nothing).
    assert group.ask("which drafts cite RFC 9999 section 2?").verdict == "unknown"
    card = group.ask("which drafts cite RFC 9999?")
    assert card.intent == "group_citing"
    assert "Normatively (they depend on it): draft-example-sparrow" in card.summary


def test_what_updates_an_rfc(birds: tuple[OxigraphStore, GroupReport]) -> None:
    card = Brain.from_store(birds[0], "birds").ask("what updates RFC 9999?")
    assert card.intent == "group_updates"
    assert [(r.label, r.became) for r in card.results] == [  # type: ignore[union-attr]
        ("draft-example-sparrow-01", "updates")
    ]


def test_what_the_group_published_in_a_year(birds: tuple[OxigraphStore, GroupReport]) -> None:
    group = Brain.from_store(birds[0], "birds")
    card = group.ask("what did the group publish in 2030?")
    assert card.intent == "group_published"
    counts = [r.count for r in card.results if r.kind == "count"]
    # Independently: RFC 9999 (published 2030-04) and sparrow-00 (tagged 2030-06-01).
    assert counts == [1, 1]
    assert "RFC 9999" in card.summary
    assert group.ask("what did the group publish in 2029?").results[0].count == 0  # type: ignore[union-attr]


def test_who_worked_most_on_a_topic_across_the_group(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    store = birds[0]
    card = Brain.from_store(store, "birds").ask("who knows most about sparrow?")
    assert card.intent == "group_topic_people"
    people = {r.name: r for r in card.results if isinstance(r, Expert)}
    # Independently, from tests/sparrow.py: Alice committed -00 and is on both bylines, Bob
    # committed -01 and is on its byline.
    assert {n: (p.commits, p.reason.split(" of ")[0]) for n, p in people.items()} == {
        "Alice Example": (1, "1 commit and 2 bylined revisions"),
        "Bob Example": (1, "1 commit and 1 bylined revision"),
    }
    # One identity across both repositories: the Bob Pigeon's brain knows is this Bob.
    pigeon = Brain.from_store(store, "pigeon").query(
        'SELECT ?p WHERE { ?p <http://xmlns.com/foaf/0.1/name> "Bob Example" }'
    )
    assert [row["p"].value for row in pigeon.rows] == [people["Bob Example"].iri]
    # The brain's own subject ("pigeon") is the whole brain's: its experts answer it.
    assert Brain.from_store(store, "birds").ask("who knows most about pigeon?").intent == "experts"


def test_a_brain_of_one_repository_keeps_its_experts_for_its_drafts_words(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    # Sparrow's own brain: "sparrow" is a word of its draft's name, as "tls" is of TLS's.
    sparrow = Brain.from_store(birds[0], "sparrow")
    assert sparrow.ask("who knows most about sparrow?").intent == "experts"
    # Said outright, the question is still the group type's.
    card = sparrow.ask("who knows most about sparrow across the group?")
    assert card.intent == "group_topic_people"


def test_the_group_adds_up_each_persons_standing_across_its_members(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    store = birds[0]

    def standing(brain: str) -> dict[str, tuple[int, int]]:
        rows, _ = Brain.from_store(store, brain).run("top_people")
        return {
            row["name"].value: (int(row["posts"].value), int(row["commits"].value)) for row in rows
        }

    group = standing("birds")
    members = [standing("pigeon"), standing("sparrow")]
    # Each person once, with the posts and commits each member's brain credits them with.
    expected = {
        name: (
            sum(m.get(name, (0, 0))[0] for m in members),
            sum(m.get(name, (0, 0))[1] for m in members),
        )
        for name in set(members[0]) | set(members[1])
    }
    assert group == expected
    assert {"Alice Example", "Bob Example"} <= set(group)


def test_a_persons_card_and_a_sections_people_count_each_member_once(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    store = birds[0]

    def credited(brain: str) -> tuple[int, int]:
        card = Brain.from_store(store, brain).ask("what did Bob Example work on?")
        first = card.results[0]
        assert isinstance(first, PersonActivity)
        return first.posts, first.commits

    pigeon, sparrow, group = credited("pigeon"), credited("sparrow"), credited("birds")
    assert group == (pigeon[0] + sparrow[0], pigeon[1] + sparrow[1])
    assert sparrow[1] >= 1  # Bob committed -01, whose sections stand for RFC 9998
    card = Brain.from_store(store, "birds").ask("who should I ask about RFC 9999 section 3.1?")
    names = [r.name for r in card.results if isinstance(r, Expert) and r.role == "participant"]
    assert names and len(names) == len(set(names))


# ------------------------------------------------------------- references in every format

WREN_XML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE rfc [
  <!ENTITY RFC2119 SYSTEM "https://bib.ietf.org/public/rfc/bibxml/reference.RFC.2119.xml">
]>
<rfc docName="draft-example-wren-00" category="exp" updates="9999" obsoletes="1149, 2549">
  <front><title>The Wren Extension (fictional)</title></front>
  <middle>
    <section title="Introduction">
      <t>Wrens nest as <xref target="RFC9999" section="3.1"/> says, and as Section 2 of
      <xref target="PIGEON"/> says for drafts; see also <xref target="I-D.example-finch"/>,
      <xref target="rules"/> and Section 4 of this document.</t>
    </section>
    <section title="Rules" anchor="rules">
      <t>Section 2 of <xref target="I-D.example-pigeon"/> is cited twice.</t>
    </section>
  </middle>
  <back>
    <references title="Normative References">
      &RFC2119;
      <reference anchor="RFC9999">
        <front><title>The Pigeon Transport Protocol</title></front>
        <seriesInfo name="RFC" value="9999"/>
      </reference>
      <reference anchor="PIGEON">
        <front><title>Pigeon, the draft</title></front>
        <seriesInfo name="Internet-Draft" value="draft-example-pigeon-01"/>
      </reference>
    </references>
    <references title="Informative References">
      <reference anchor="I-D.example-finch">
        <front><title>Finches</title></front>
        <seriesInfo name="Internet-Draft" value="draft-example-finch-02"/>
      </reference>
    </references>
  </back>
</rfc>
"""

ROBIN_TXT = """Robin Working Group                                           A. Example
Internet-Draft                                              Example Inc.
Updates: 9999, 9998 (if approved)                            1 July 2031
Obsoletes: 1149 (if approved)
Intended status: Experimental
Expires: 2 January 2032


                       The Robin Extension (fictional)
                         draft-example-robin-00

1.  Introduction

   Robins follow Section 3.1 of [RFC9999] and [TLS13], Section 4.2;
   their nests are those of Section 2 of [PIGEON].  See also
   [RFC1149] and Section 5 of this document.

2.  References

2.1.  Normative References

   [RFC9999]  Example, A., "The Pigeon Transport Protocol", RFC 9999,
              April 2030.

   [PIGEON]   Example, A., "The Pigeon Transport Protocol, updating
              RFC 2549", Work in Progress, Internet-Draft,
              draft-example-pigeon-02, 20 November 2029.

   [TLS13]    Example, B., "Fictional TLS", RFC 9990, DOI 10.0/RFC9990,
              May 2030.

2.2.  Informative References

   [RFC1149]  Waitzman, D., "A Standard for the Transmission of IP
              Datagrams on Avian Carriers", RFC 1149, April 1990.

Author's Address

   A. Example
"""


def test_references_are_read_from_xml2rfc_xml() -> None:
    cited = references_in("draft-example-wren.xml", WREN_XML)
    assert cited is not None
    # &RFC2119; is an external entity, never fetched: its name says which RFC it is.
    assert cited.normative == ("rfc2119", "rfc9999", "draft-example-pigeon")
    assert cited.informative == ("draft-example-finch",)
    assert (cited.updates, cited.obsoletes) == ((9999,), (1149, 2549))
    # The section attribute, and "Section N of" around a plain xref through its anchor; an
    # xref to the draft's own section and "this document" are no other document's.
    assert cited.sections == (("rfc9999", "3.1"), ("draft-example-pigeon", "2"))


def test_references_are_read_from_plain_text() -> None:
    cited = references_in("draft-example-robin-00.txt", ROBIN_TXT)
    assert cited is not None
    # [PIGEON]'s title names RFC 2549: its series information, after the title, says which
    # document it is.
    assert cited.normative == ("rfc9999", "draft-example-pigeon", "rfc9990")
    assert cited.informative == ("rfc1149",)
    assert (cited.updates, cited.obsoletes) == ((9999, 9998), (1149,))
    assert cited.sections == (
        ("rfc9999", "3.1"),
        ("rfc9990", "4.2"),
        ("draft-example-pigeon", "2"),
    )


def test_markdown_cites_a_drafts_sections_by_its_key() -> None:
    text = (
        "---\ntitle: X\ninformative:\n  I-D.example-pigeon:\n---\n\n"
        "See {{I-D.example-pigeon, Section 2}} and Section 3 of [I-D.example-pigeon].\n"
    )
    cited = read_references(text)
    assert cited.sections == (("draft-example-pigeon", "2"), ("draft-example-pigeon", "3"))


def _member(folder: Path, name: str, file: str, text: str, date: str) -> tuple[Path, Path]:
    """A fictional one-revision repository ``example/<name>-spec`` under ``folder`` (its copy
    beside Pigeon's) and its records folder."""
    repo = folder / f"{name}-spec"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / file).write_text(text)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "revision 00", date=date)
    _git(repo, "tag", f"draft-example-{name}-00")
    records = folder / "records" / name
    records.mkdir(parents=True)
    (records / "manifest.toml").write_text(
        f'[brain]\nid = "{name}"\ntitle = "{name} (fictional)"\n'
        f'repository = "https://github.com/example/{name}-spec"\nworking_group = "pigeon"\n\n'
        f'[[draft]]\nname = "draft-example-{name}"\nfile = "{file}"\nrevisions = "00-00"\n'
    )
    return repo, records


@pytest.fixture(scope="module")
def nests(tmp_path_factory: pytest.TempPathFactory) -> OxigraphStore:
    """Pigeon, Wren (XML, dated between Pigeon's -00 and -01) and Robin (text, after -02)."""
    folder = tmp_path_factory.mktemp("nests")
    make_pigeon_repo(folder)
    _, wren = _member(folder, "wren", "draft-example-wren.xml", WREN_XML, "2029-03-01T10:00:00Z")
    _, robin = _member(folder, "robin", "draft-example-robin.txt", ROBIN_TXT, "2031-07-01T10:00Z")
    store = OxigraphStore()
    build_group(_group(folder, [PIGEON, wren, robin], "nests"), source=folder, store=store)
    return store


def test_a_drafts_cited_section_is_the_one_current_at_the_citing_date(
    nests: OxigraphStore,
) -> None:
    group = Brain.from_store(nests, "nests")

    def cited(draft: str) -> set[str]:
        rows = group.query(
            f"SELECT ?o WHERE {{ <https://w3id.org/ratified-rdf/id/doc/{draft}/00> "
            "<http://purl.org/dc/terms/references> ?o }"
        ).rows
        return {row["o"].value for row in rows if "/draft-example-pigeon/" in row["o"].value}

    pigeon = "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon"
    # Wren (March 2029) cites Section 2 while -00 was current: Flight Rules there. Robin
    # (2031) cites it after -02: Terminology. Independently, from the fixtures' headings.
    assert cited("draft-example-wren") == {f"{pigeon}/00/section/2"}
    assert cited("draft-example-robin") == {f"{pigeon}/02/section/2"}
    # The second top-level heading of each revision's text is its Section 2.
    for draft, number in (("draft-example-wren", "00"), ("draft-example-robin", "02")):
        text = (PIGEON / f"draft-example-pigeon-{number}.md").read_text()
        second = [line[2:].strip() for line in text.splitlines() if line.startswith("# ")][1]
        (section,) = cited(draft)
        title = group.query(
            f"SELECT ?t WHERE {{ <{section}> <http://purl.org/dc/terms/title> ?t }}"
        ).rows
        assert [row["t"].value for row in title] == [second]
    # Both say they update RFC 9999; both cite its Section 3.1, by page and by section.
    card = group.ask("which documents depend on RFC 9999 section 3.1?")
    assert [r.label for r in card.results[1:]] == [  # type: ignore[union-attr]
        "draft-example-robin-00",
        "draft-example-wren-00",
    ]
    card = group.ask("what updates RFC 9999?")
    assert {r.label for r in card.results} == {  # type: ignore[union-attr]
        "draft-example-robin-00",
        "draft-example-wren-00",
    }


# ------------------------------------------------------------------- reading in parallel


def test_members_are_read_ahead_in_child_processes_and_written_in_order(
    copies: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    pids = tmp_path / "pids"
    real_read, real_write, real_forked = build_module._read, build_module._write, Forked

    def read(begun: Any, progress: bool) -> Any:
        with open(pids, "a") as file:  # in the reading process, whichever it is
            file.write(f"{begun.manifest.brain.id} {os.getpid()}\n")
        return real_read(begun, progress)

    def forked(work: Any, what: str) -> Any:
        events.append(what)
        return real_forked(work, what)

    def write(begun: Any, *args: Any) -> Any:
        events.append(f"writing {begun.manifest.brain.id}")
        return real_write(begun, *args)

    monkeypatch.setattr(build_module, "_read", read)
    monkeypatch.setattr(build_module, "_write", write)
    monkeypatch.setattr(build_module, "Forked", forked)
    folder = _group(tmp_path, [PIGEON, SPARROW])
    store = OxigraphStore()
    build_group(folder, source=copies, store=store, workers=2)
    # Both members' reading started before the first was written, each in a process of its
    # own; the store took them one at a time, in the group file's order.
    assert events == ["reading pigeon", "reading sparrow", "writing pigeon", "writing sparrow"]
    readers = dict(line.split() for line in pids.read_text().splitlines())
    assert set(readers) == {"pigeon", "sparrow"}
    assert len(set(readers.values())) == 2 and str(os.getpid()) not in readers.values()
    assert _current(store, "sparrow")[1] and Brain.from_store(store, "birds").validate() == []


def test_readers_see_the_last_complete_group_until_the_group_commits(
    copies: Path, tmp_path: Path
) -> None:
    store = OxigraphStore()
    folder = _group(tmp_path, [PIGEON, SPARROW])
    build_group(folder, source=copies, store=store)
    before = Brain.from_store(store, "birds").read_graphs
    seen: list[bool] = []

    def log(line: str) -> None:
        # Every member of the rebuild has committed its new run; the group's has not.
        if line.startswith("linking"):
            seen.append(Brain.from_store(store, "birds").read_graphs == before)
            seen.append(_current(store, "sparrow")[1][0] not in before)

    build_group(folder, source=copies, store=store, log=log)
    assert seen == [True, True]
    assert Brain.from_store(store, "birds").read_graphs != before


def test_a_failed_member_ends_the_reading_started_ahead(
    copies: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*_args: Any) -> Any:
        raise RuntimeError("the gate said no (a test's)")

    monkeypatch.setattr(build_module, "_write", fail)
    before = set(multiprocessing.active_children())
    with pytest.raises(RuntimeError, match="the gate said no"):
        build_group(_group(tmp_path, [PIGEON, SPARROW]), source=copies, store=OxigraphStore())
    # Sparrow's reading, started ahead of Pigeon's failed write, ended with the build.
    assert set(multiprocessing.active_children()) <= before


# ------------------------------------------------------------------ what each member holds


def test_what_the_group_holds_per_repository(birds: tuple[OxigraphStore, GroupReport]) -> None:
    store = birds[0]
    card = Brain.from_store(store, "birds").ask("what does the brain hold per repository?")
    assert card.intent == "group_holdings"
    counts = {r.what: r.count for r in card.results if isinstance(r, Holding)}
    # Independently, from the manifests and tests/pigeon.py, tests/sparrow.py: one draft and
    # one RFC each; Pigeon tags three revisions, Sparrow two; Sparrow's RFC 9998 has no file.
    for repository, revisions in (("pigeon-spec", 3), ("sparrow-spec", 2)):
        assert counts[f"drafts in {repository}"] == 1
        assert counts[f"RFCs in {repository}"] == 1
        assert counts[f"revisions in {repository}"] == revisions
    assert counts["RFC texts not held in pigeon-spec"] == 0
    lacking = next(r for r in card.results if r.what == "RFC texts not held in sparrow-spec")  # type: ignore[union-attr]
    assert lacking.names == ["RFC 9998"]  # type: ignore[union-attr]
    assert "sparrow-spec: 1 draft, 1 RFC, 2 revisions" in card.summary
    # Each repository's sections are those its own brain holds.
    for brain, repository in (("pigeon", "pigeon-spec"), ("sparrow", "sparrow-spec")):
        own = Brain.from_store(store, brain).ask("what does the brain hold?")
        sections = next(r for r in own.results if r.what == "sections")  # type: ignore[union-attr]
        assert counts[f"sections in {repository}"] == sections.count  # type: ignore[union-attr]
    # A brain of one repository answers with its own holdings.
    one = Brain.from_store(store, "pigeon").ask("what does the brain hold per repository?")
    assert one.intent == "group_holdings" and "3 revisions" in one.summary


CARDS = (
    "what is the history of RFC 9999 section 3.1?",
    "why does RFC 9999 section 3.1 say what it says?",
    "who should I ask about RFC 9999 section 3.1?",
    "what did draft-example-pigeon-00 section 2.2 become?",
)


@pytest.mark.parametrize("question", CARDS)
def test_a_single_brains_cards_repeat_no_row_on_the_group(
    birds: tuple[OxigraphStore, GroupReport], question: str
) -> None:
    store = birds[0]
    group = Brain.from_store(store, "birds").ask(question)
    alone = Brain.from_store(store, "pigeon").ask(question)
    assert group.intent == alone.intent and group.verdict == "answered"
    rows = [r.model_dump_json() for r in group.results]
    assert len(rows) == len(set(rows)), "a row repeated on the group brain"
    evidence = [e.model_dump_json() for e in group.evidence]
    assert len(evidence) == len(set(evidence))


# The whole-graph queries a group's cards read, each matched inside the graph its source wrote
# (GRAPH ?g) rather than across the union of every member's graphs, where each lookup went
# through every member's graphs (sparql/<name>.rq says how each is shaped).
WHOLE_GRAPH = (
    "pull_request_people",
    "pull_requests",
    "commit_details",
    "headings",
    "gazetteer_people",
    "gazetteer_threads",
)


@pytest.mark.parametrize("name", WHOLE_GRAPH)
def test_a_whole_graph_query_finds_on_the_group_what_its_members_hold(
    birds: tuple[OxigraphStore, GroupReport], name: str
) -> None:
    store = birds[0]

    def rows(brain: str) -> list[tuple[tuple[str, str], ...]]:
        found, _ = run_query(store, Brain.from_store(store, brain).read_graphs, name)
        return [tuple(sorted((key, term.value) for key, term in row.items())) for row in found]

    group, members = rows("birds"), rows("pigeon") + rows("sparrow")
    assert members, f"the fixtures hold nothing {name} reads"
    # The same rows as the members' own brains give, each once: no row lost by matching
    # inside one graph, none repeated by a name every member's graphs hold.
    assert sorted(set(group)) == sorted(set(members))
    assert len(group) == len(set(group))


def test_xml2rfc_v2_includes_and_a_text_headers_long_lists_are_read() -> None:
    xml = (
        '<?xml version="1.0"?>\n<rfc docName="draft-example-kite-01" updates="9999">\n'
        "<front><title>Kite</title></front><middle><section title='A'><t>x</t></section>"
        '</middle><back>\n<references title="Normative References">\n'
        "  <?rfc include='reference.RFC.9999'?>\n"
        '  <?rfc include="reference.I-D.example-finch.xml"?>\n</references>\n'
        "<references title='Informative References'>\n"
        "  <?rfc include='reference.RFC.1149'?>\n</references>\n</back></rfc>\n"
    )
    cited = references_in("draft-example-kite-01.xml", xml)
    assert cited is not None
    assert (cited.normative, cited.informative) == (
        ("rfc9999", "draft-example-finch"),
        ("rfc1149",),
    )
    text = (
        "Kite Working Group                                            A. Example\n"
        "Obsoletes: 1149 2549 (if approved)                          Example Inc.\n"
        "Updates: 9999 9998 9997                                     1 July 2031\n"
        "         9996, 9995\n"
        "Intended status: Experimental\n\n"
        "1.  Introduction\n\n   Kites.\n"
    )
    cited = references_in("draft-example-kite-01.txt", text)
    assert cited is not None
    assert (cited.updates, cited.obsoletes) == ((9999, 9998, 9997, 9996, 9995), (1149, 2549))


# ------------------------------------------------------------------ relinking one member


def _links(store: OxigraphStore, brain: str = "nests") -> set[str]:
    """The edges between documents the group's current run wrote."""
    run = next(r for r in read_runs(store, TENANT, brain) if r.current)
    return set(map(str, store.triples([g for g in run.graphs if g.endswith("/references")])))


def _nests(folder: Path) -> tuple[Path, Path]:
    """Pigeon, Wren and Robin (both citing Pigeon's sections) under ``folder``: the group's
    records folder and Wren's repository."""
    make_pigeon_repo(folder)
    wren, records = _member(
        folder, "wren", "draft-example-wren.xml", WREN_XML, "2029-03-01T10:00:00Z"
    )
    _, robin = _member(folder, "robin", "draft-example-robin.txt", ROBIN_TXT, "2031-07-01T10:00Z")
    return _group(folder, [PIGEON, records, robin], "nests"), wren


def test_rebuilding_one_member_relinks_only_it_and_the_members_citing_it(
    tmp_path: Path,
) -> None:
    group, wren = _nests(tmp_path)
    store = OxigraphStore()
    whole = build_group(group, source=tmp_path, store=store)
    before = _links(store)
    # Nothing cites Wren: only Wren's own last revision is read again, and every edge is
    # the same as the whole group's link step wrote.
    alone = build_group(group, source=tmp_path, store=store, only=["wren"])
    assert alone.documents == 1
    assert _links(store) == before and alone.edges == whole.edges
    # Wren and Robin cite Pigeon's sections: a rebuilt Pigeon's are found again from the
    # pages their kept edges cite, without reading their texts again.
    again = build_group(group, source=tmp_path, store=store, only=["pigeon"])
    assert again.documents == whole.documents - 2
    assert _links(store) == before
    pigeon = "https://w3id.org/ratified-rdf/id/doc/draft-example-pigeon/"
    assert any(f" <{pigeon}" in edge for edge in before)  # (there are such edges to find)

    # Wren's revision re-cut to cite Pigeon's Section 3: its edges follow, the others stay,
    # and the group is linked as a whole group's first build links it.
    _git(wren, "rm", "-q", "draft-example-wren.xml")
    (wren / "draft-example-wren.xml").write_text(WREN_XML.replace("Section 2", "Section 3"))
    _git(wren, "add", "-A")
    _git(wren, "commit", "-q", "-m", "revision 00 again", date="2029-03-02T10:00:00Z")
    _git(wren, "tag", "-f", "draft-example-wren-00")
    build_group(group, source=tmp_path, store=store, only=["wren"])
    fresh = OxigraphStore()
    build_group(group, source=tmp_path, store=fresh)
    assert _links(store) == _links(fresh) != before
    changed = {edge for edge in before ^ _links(store)}
    assert changed and all("/draft-example-wren/" in edge.split(" ")[0] for edge in changed)


def test_the_groups_small_run_is_gated_in_process_against_the_whole_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ratified_rdf import group as group_module
    from ratified_rdf.graph.gate import GateRejected, ShaclGate
    from ratified_rdf.graph.vocab import repository_iri

    group, _ = _nests(tmp_path)
    store = OxigraphStore()
    build_group(group, source=tmp_path, store=store)
    current = _current(store, "nests")
    monkeypatch.setenv("RATIFIED_GATE_WORKERS", "4")

    real_workers = ShaclGate._check_in_workers
    checked: list[str] = []

    def in_workers(gate: ShaclGate, items: Any, *args: Any, **kwargs: Any) -> None:
        items = list(items)
        checked.extend(getattr(item, "source", "") for item in items)
        if any(getattr(item, "source", "").startswith("group nests") for item in items):
            raise AssertionError("the group's small run started gate workers")
        real_workers(gate, items, *args, **kwargs)

    monkeypatch.setattr(ShaclGate, "_check_in_workers", in_workers)
    build_group(group, source=tmp_path, store=store, only=["robin"])
    assert _current(store, "nests") != current
    assert "manifest of robin" in checked  # the member's own run still has its workers
    current = _current(store, "nests")

    # Checked in this process, it is still checked: a record the shapes refuse (a
    # repository's address as plain text) is rejected, and the group's run stays as it was.
    real = group_module._group_records

    def wrong(*args: Any) -> Any:
        batch = real(*args)
        batch.text(
            repository_iri("https://github.com/example/robin-spec"),
            "rr:repositoryUrl",
            "https://github.com/example/robin-spec",
        )
        return batch

    monkeypatch.setattr(group_module, "_group_records", wrong)
    with pytest.raises(GateRejected):
        build_group(group, source=tmp_path, store=store, only=["robin"])
    assert _current(store, "nests") == current


# ------------------------------------------------------------- members built elsewhere


def test_members_built_in_their_own_stores_are_copied_not_built(
    copies: Path, tmp_path: Path, birds: tuple[OxigraphStore, GroupReport]
) -> None:
    own = {}
    for name, records in (("pigeon", PIGEON), ("sparrow", SPARROW_MANIFEST)):
        own[name] = OxigraphStore()
        build(records, source=str(copies / f"{name}-spec"), store=own[name])
    store = OxigraphStore()
    folder = _group(tmp_path, [PIGEON, SPARROW])
    report = build_group(folder, source=copies, store=store, reuse=list(own.values()))
    assert report.reused == ("pigeon", "sparrow") and report.built == ()
    for name, other in own.items():
        # The member's brain here is its own store's: the same run, graphs and triples.
        assert _current(store, name) == _current(other, name)
        graphs = [*_current(other, name)[1], v.catalog_graph(TENANT, name)]
        assert _contents(store, graphs) == _contents(other, graphs)
    # The group over the copies is the group built from scratch (birds): the same edges,
    # the same answers, and every graph it reads valid.
    assert _links(store, "birds") == _links(birds[0], "birds")
    group, fresh = Brain.from_store(store, "birds"), Brain.from_store(birds[0], "birds")
    for question in ("what updates RFC 9999?", "who knows most about sparrow?"):
        mine, theirs = group.ask(question), fresh.ask(question)
        assert [r.model_dump_json() for r in mine.results] == [
            r.model_dump_json() for r in theirs.results
        ]
    assert group.validate() == []


def test_a_member_built_from_another_state_is_built_not_copied(tmp_path: Path) -> None:
    group, wren = _nests(tmp_path)
    records = tmp_path / "records" / "wren"
    other = OxigraphStore()
    build(records, source=str(wren), store=other)
    # Wren gains revision 01 after its own store was built: that store is out of date.
    (wren / "draft-example-wren.xml").write_text(WREN_XML.replace("wren-00", "wren-01"))
    _git(wren, "commit", "-q", "-am", "revision 01", date="2029-06-01T10:00:00Z")
    _git(wren, "tag", "draft-example-wren-01")
    manifest = records / "manifest.toml"
    manifest.write_text(manifest.read_text().replace('"00-00"', '"00-01"'))
    store = OxigraphStore()
    report = build_group(group, source=tmp_path, store=store, reuse=[other])
    assert report.reused == ()
    assert [b.brain_id for b in report.built] == ["pigeon", "wren", "robin"]
    assert _current(store, "wren") != _current(other, "wren")
    # Up to date, it is copied; never over a run the group's store already holds.
    again = OxigraphStore()
    build(records, source=str(wren), store=again)
    fresh = OxigraphStore()
    assert build_group(group, source=tmp_path, store=fresh, reuse=[again]).reused == ("wren",)
    assert build_group(group, source=tmp_path, store=fresh, reuse=[again]).reused == ()


def test_a_topic_is_found_by_its_drafts_initials_too(
    birds: tuple[OxigraphStore, GroupReport],
) -> None:
    # "PTP": the Pigeon Transport Protocol, in both drafts' titles (tests/fixtures), in
    # neither's name; as "ECH" is TLS Encrypted Client Hello's (draft-ietf-tls-esni).
    card = Brain.from_store(birds[0], "birds").ask("who knows most about PTP across the group?")
    assert card.intent == "group_topic_people"
    people = {r.name: r for r in card.results if isinstance(r, Expert)}
    drafts = {d.strip(",") for p in people.values() for d in p.reason.split(" of ")[1].split()}
    assert drafts == {"draft-example-pigeon", "draft-example-sparrow"}
    assert {"Alice Example", "Bob Example"} <= set(people)


def test_section_citations_wrapped_or_listed_are_each_read() -> None:
    # Fictional text in the ways the tlswg drafts write them: a kramdown citation wrapped
    # over lines, "; Section" on the next line, two sections of one document in one phrase.
    text = (
        "---\nnormative:\n  RFC9999:\n  PIGEON: RFC9999\n---\n\n# Flight\n\n"
        "Birds land as {{RFC9999,\nSection 4.2.3}} says; see {{RFC9999}};\nSection E.1 too.\n"
        "Nests follow Section 4.4.3 and Section 4.4.4 of {{PIGEON}}, and Sections 5.4 and\n"
        "E.3 of [RFC9999], and Section 6 and Appendix B.2 of RFC 9999.\n"
    )
    cited = {s for d, s in read_references(text).sections if d == "rfc9999"}
    assert cited == {"4.2.3", "E.1", "4.4.3", "4.4.4", "5.4", "E.3", "6", "B.2"}
    # The independent checker (tests/independent/references.py) reads the same.
    from tests.independent.references import cited_sections

    assert cited_sections(text, 9999) == cited


def test_the_build_command_copies_members_from_reuse_stores(copies: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from ratified_rdf.surfaces.cli import main

    stores = []
    for name, records in (("pigeon", PIGEON), ("sparrow", SPARROW_MANIFEST)):
        brain, _ = Brain.build(records, path=tmp_path / name, source=str(copies / f"{name}-spec"))
        brain.close()
        stores += ["--reuse", str(tmp_path / name)]
    folder = _group(tmp_path, [PIGEON, SPARROW])
    common = ["build", str(folder), "--source", str(copies), "--quiet"]
    done = CliRunner().invoke(main, [*common, "--store", str(tmp_path / "group"), *stores])
    assert done.exit_code == 0, done.output
    assert "copied pigeon, sparrow from --reuse." in done.output
    # --reuse is a group's option: on one brain's manifest it is a mistake, said as one.
    alone = CliRunner().invoke(main, ["build", str(PIGEON), "--reuse", str(tmp_path / "pigeon")])
    assert alone.exit_code == 2 and "--reuse is for a group's folder" in alone.output


def test_a_reuse_folder_that_is_not_there_is_a_mistake_said_at_once(
    copies: Path, tmp_path: Path
) -> None:
    # The option parses whatever folder it names (the documented examples parse as written);
    # a folder that is not there is the user's mistake, said before anything is built.
    from click.testing import CliRunner

    from ratified_rdf.surfaces.cli import main

    folder = _group(tmp_path, [PIGEON, SPARROW])
    missing = tmp_path / "not-built"
    store = tmp_path / "group"
    done = CliRunner().invoke(
        main,
        ["build", str(folder), "--source", str(copies), "--store", str(store), "--quiet",
         "--reuse", str(missing)],
    )  # fmt: skip
    assert done.exit_code == 2, done.output
    assert f"--reuse {missing}: there is no store there." in done.output
    assert not missing.exists()
