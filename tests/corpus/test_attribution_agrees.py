"""Every commit count a card shows, checked against the independent checker on both corpora.

The checker (``tests/independent/attribution.py``) reads git alone and imports nothing from the
package: its own section parser, its own diff-to-section placing, its own rules for which draft
a file is and which revision a commit landed in. Two comparisons:

* **Per revision, per section.** For every tagged revision of every draft, and every section
  of it, the commits that landed in that revision and changed that section: the brain's
  ``rr:changedSection`` edges against the checker's :meth:`commits_per_section`. Sections the
  checker could not find in the landed revision (a section the commit removed) are left out:
  the brain credits only sections the landed revision has.
* **Per card.** A card for an RFC section counts the distinct commits on every revision's
  section aligned with it (the structural alignment, checked by its own tests) and on the
  RFC's own text. The same count is rebuilt from the checker's per-revision sets and its
  :meth:`text_section_commits`, and compared with the card's count, section by section.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf.answers.models import Count
from tests.conftest import QUIC_CORPUS
from tests.independent.attribution import Attribution
from tests.independent.review_lines import place_review_comments

pytestmark = pytest.mark.corpus

TLS_CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "tls13-spec"
RR = "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
DC = "PREFIX dcterms: <http://purl.org/dc/terms/> "
_SECTION = re.compile(r"/id/doc/(draft-[a-z0-9-]+?)/(\d\d)/section/")

# (RFC, the draft that became it, the ref and file of its text, the day after its month).
TLS_TEXTS = [
    (8446, "draft-ietf-tls-tls13", "as-published", "draft-rescorla-tls-rfc8446-bis.md",
     "2018-09-01"),
    (9846, "draft-ietf-tls-rfc8446bis", "main", "rfc9846.md", "2026-08-01"),
]  # fmt: skip
QUIC_TEXTS = [
    (8999, "draft-ietf-quic-invariants", "main", "rfc8999.md", "2021-06-01"),
    (9000, "draft-ietf-quic-transport", "main", "rfc9000.md", "2021-06-01"),
    (9001, "draft-ietf-quic-tls", "main", "rfc9001.md", "2021-06-01"),
    (9002, "draft-ietf-quic-recovery", "main", "rfc9002.md", "2021-06-01"),
    (9114, "draft-ietf-quic-http", "main", "rfc9114.md", "2022-07-01"),
    (9204, "draft-ietf-quic-qpack", "main", "rfc9204.md", "2022-07-01"),
]


def _public(corpus: Path) -> dict[str, str]:
    """Bundle commit id → GitHub's, from the corpus's commit-map.tsv."""
    rows = (corpus / "commit-map.tsv").read_text().splitlines()[1:]
    return dict(row.split("\t")[:2] for row in rows if "\t" in row)


def _label(number: str | None, title: str) -> str:
    return number if number else "(unnumbered) " + title


def _checker_label(label: str) -> str:
    # The checker names an unnumbered section by its whole heading path; the brain by title.
    if label.startswith("(unnumbered) "):
        return "(unnumbered) " + label.removeprefix("(unnumbered) ").split(" > ")[-1]
    return label


def _brain_sets(brain: Brain) -> dict[tuple[str, str], set[str]]:
    """(revision tag, section label) → public ids of the commits that changed it there."""
    rows = brain.query(
        RR + DC + "SELECT ?id ?section ?number ?title WHERE { ?commit rr:commitId ?id ; "
        "rr:changedSection ?section . ?section dcterms:title ?title "
        "OPTIONAL { ?section rr:sectionNumber ?number } }"
    ).rows
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        revision = _SECTION.search(row["section"].value)
        if revision is None:
            continue  # a section of an RFC's own text
        number = row.get("number")
        label = _label(number.value if number else None, row["title"].value)
        found[(f"{revision.group(1)}-{revision.group(2)}", label)].add(row["id"].value)
    return found


_SETS: dict[int, dict[tuple[str, str], set[str]]] = {}


def _checker_sets(result: Attribution, public: dict[str, str]) -> dict[tuple[str, str], set[str]]:
    """(revision tag, section label) → public ids of the commits the checker credits there
    (worked out once per checker result: the card tests share it)."""
    if id(result) in _SETS:
        return _SETS[id(result)]
    found: dict[tuple[str, str], set[str]] = {}
    for tags in result.revisions.values():
        for tag in tags:
            if tag not in result.revision_trees:
                continue
            for label, shas in result.commits_per_section(tag).items():
                if not label.startswith("? "):
                    found[(tag, _checker_label(label))] = {public.get(s, s) for s in shas}
    _SETS[id(result)] = found
    return found


def _differences(
    ours: dict[tuple[str, str], set[str]], theirs: dict[tuple[str, str], set[str]]
) -> dict[tuple[str, str], tuple[set[str], set[str]]]:
    """Per (revision, section) that disagrees: (only the checker's, only ours)."""
    return {
        key: (
            theirs.get(key, set()) - ours.get(key, set()),
            ours.get(key, set()) - theirs.get(key, set()),
        )
        for key in set(ours) | set(theirs)
        if ours.get(key, set()) != theirs.get(key, set())
    }


@pytest.fixture(scope="module")
def quic_brain(quic_build: tuple[Path, BuildReport]) -> Iterator[Brain]:
    # Closed after this module: test_quic_brain opens the same store (and its audit log) next.
    brain = Brain.open(quic_build[0])
    yield brain
    brain.close()


def test_tls_commits_per_section_of_every_revision_equal_the_checkers(
    tls_brain: Brain, tls_checker: Attribution
) -> None:
    """Every section of every TLS revision (the duplicate-heading traps among them) has
    exactly the commits the checker finds."""
    theirs = _checker_sets(tls_checker, _public(TLS_CORPUS))
    ours = _brain_sets(tls_brain)
    assert len(theirs) > 1500  # the comparison covers the corpus, not a corner of it
    assert _differences(ours, theirs) == {}


def _why_apart(
    public_id: str,
    result: Attribution,
    bundle_ids: dict[str, str],
    revision: str | None = None,
    unfound: dict[str, set[str]] | None = None,
    brain_only: bool = False,
) -> str | None:
    """Why the brain and the checker may place a commit differently, or None: the documented
    differences, each checked on the commit itself. ``unfound``: per revision, the commits
    with a row whose section the checker could not find in that revision; ``brain_only``:
    the brain credits the commit there and the checker does not."""
    record = result.commits.get(bundle_ids.get(public_id, public_id))
    if record is None:
        return "off the default branch"  # the checker walks the default branch only
    if record.open_fence:
        return "a text whose fences do not pair up"
    if any(t.revision is None and t.draft in REPLACED for t in record.touches):
        return "a replaced draft's file after its last revision"
    if brain_only and revision and unfound and public_id in unfound.get(revision, ()):
        # The checker drops a row whose section path it cannot find in the landed revision
        # (an ancestor renamed or misnested at that commit); the brain's path-end rules find
        # one section there, or none.
        return "a section the checker cannot find in the revision"
    return None


_UNFOUND: dict[int, dict[str, set[str]]] = {}


def _unfound(result: Attribution, public: dict[str, str]) -> dict[str, set[str]]:
    """Per revision, the commits the checker has a row for whose section it cannot find."""
    if id(result) in _UNFOUND:
        return _UNFOUND[id(result)]
    found: dict[str, set[str]] = defaultdict(set)
    for tags in result.revisions.values():
        for tag in tags:
            if tag in result.revision_trees:
                for label, shas in result.commits_per_section(tag).items():
                    if label.startswith("? "):
                        found[tag] |= {public.get(s, s) for s in shas}
    _UNFOUND[id(result)] = found
    return found


# Drafts an adopted draft replaced: a change to their file after their last revision is
# credited by the brain to the draft that replaced them, whose first revision holds it.
REPLACED = {"draft-thomson-quic-invariants", "draft-ietf-quic-qcram"}


def test_quic_commits_per_section_of_every_revision_equal_the_checkers(
    quic_brain: Brain, quic_checker: Attribution
) -> None:
    """The same on QUIC's six drafts in one repository, save the documented differences,
    each checked on the commit: commits reachable only from a tag (the brain reads every tag's
    history, the checker the default branch's), texts whose fences do not pair up (which
    lines are code is a guess each makes its own way), and a replaced draft's file after its
    last revision."""
    public = _public(QUIC_CORPUS)
    bundle_ids = {github: bundle for bundle, github in public.items()}
    theirs = _checker_sets(quic_checker, public)
    ours = _brain_sets(quic_brain)
    assert len(theirs) > 4000
    unfound = _unfound(quic_checker, public)
    apart: dict[str, int] = defaultdict(int)
    for key, (only_theirs, only_ours) in _differences(ours, theirs).items():
        for commit in only_theirs | only_ours:
            brain_only = commit in only_ours
            reason = _why_apart(commit, quic_checker, bundle_ids, key[0], unfound, brain_only)
            assert reason is not None, (key, commit)
            apart[reason] += 1
    agreeing = sum(1 for key in theirs if theirs[key] == ours.get(key, set()))
    assert agreeing > 0.98 * len(theirs), dict(apart)


def _card_count(brain: Brain, rfc: int, section: str) -> int:
    """The commit count the card for the section shows, asked as a person would."""
    answer = brain.ask(f"how many commits changed RFC {rfc} section {section}?")
    (count,) = [r for r in answer.results if isinstance(r, Count)]
    assert count.what == "commits", answer.summary
    return count.count


def _rfc_sections(rfc: int) -> str:
    """The SPARQL pattern binding ?final to each section of RFC ``rfc``, with ?title and
    (when numbered) ?number."""
    return (
        "?final dcterms:title ?title . FILTER(STRSTARTS(STR(?final), "
        f'"https://w3id.org/ratified-rdf/id/doc/rfc{rfc}/section/")) '
        "OPTIONAL { ?final rr:sectionNumber ?number } "
    )


def _card_commits(brain: Brain, rfc: int) -> dict[str, set[str]]:
    """Per section number of RFC ``rfc``, the commits its card counts (what section_commits.rq
    reads: changes to any revision's section aligned with it, or to the RFC's text itself)."""
    rows = brain.query(
        RR
        + DC
        + "SELECT ?number ?title ?id WHERE { "
        + _rfc_sections(rfc)
        + "?section rr:alignsWith? ?final . "
        "FILTER(?section = ?final || NOT EXISTS { ?aligned rr:alignsWith ?section }) "
        "?commit rr:changedSection ?section ; rr:commitId ?id }"
    ).rows
    found: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        number = row.get("number")
        found[_label(number.value if number else None, row["title"].value)].add(row["id"].value)
    return found


def _rebuilt(
    brain: Brain, result: Attribution, public: dict[str, str], texts: list[tuple], rfc: int
) -> dict[str, set[str]]:
    """Per section number of RFC ``rfc``: the checker's commits over the revision sections
    aligned with it (the brain's alignment), and the checker's commits in the RFC's own text."""
    per_revision = _checker_sets(result, public)
    aligned = brain.query(
        RR
        + DC
        + "SELECT ?number ?title ?section ?sNumber ?sTitle WHERE { "
        + _rfc_sections(rfc)
        + "?section rr:alignsWith ?final ; dcterms:title ?sTitle . "
        "OPTIONAL { ?section rr:sectionNumber ?sNumber } }"
    ).rows
    commits: dict[str, set[str]] = defaultdict(set)
    for row in aligned:
        revision = _SECTION.search(row["section"].value)
        if revision is None:
            continue
        number, own = row.get("number"), row.get("sNumber")
        key = (
            f"{revision.group(1)}-{revision.group(2)}",
            _label(own.value if own else None, row["sTitle"].value),
        )
        final = _label(number.value if number else None, row["title"].value)
        commits[final] |= per_revision.get(key, set())
    for number, draft, ref, file, until in texts:
        if number == rfc:
            for label, shas in result.text_section_commits(ref, file, draft, until).items():
                commits[_checker_label(label)] |= {public.get(s, s) for s in shas}
    return {number: shas for number, shas in commits.items() if shas}


@pytest.mark.parametrize("rfc", [8446, 9846])
def test_tls_card_commit_counts_equal_the_checkers(
    tls_brain: Brain, tls_checker: Attribution, rfc: int
) -> None:
    """Every RFC 8446 and RFC 9846 section's card counts exactly the commits the checker finds
    for it, the three duplicate-heading traps among them; a sample is asked as a person
    would."""
    rebuilt = _rebuilt(tls_brain, tls_checker, _public(TLS_CORPUS), TLS_TEXTS, rfc)
    cards = _card_commits(tls_brain, rfc)
    assert len(rebuilt) > 100 and all(rebuilt[n] for n in ("4.1", "4.4", "5.1"))
    assert {n: c for n, c in cards.items() if c} == rebuilt
    for number in ("4.1", "4.4", "5.1", "4.2.1", "B.1", "B.3.1", "B.3.3"):
        assert _card_count(tls_brain, rfc, number) == len(rebuilt.get(number, ())), number


def test_tls_review_comments_sit_where_the_checker_places_them(
    tls_brain: Brain, tls_checker: Attribution, tls_mirror: Path
) -> None:
    """Every inline review comment of the TLS archive: the brain credits it to the section
    (and revision) the checker places its line in, and places no other; the comments neither
    can place (a reviewed commit the bundle lacks, a diff over several files) are counted."""
    archive = json.loads(
        subprocess.run(
            ["git", "--git-dir", str(tls_mirror), "show", "gh-pages:archive.json"],
            check=True,
            capture_output=True,
        ).stdout
    )
    placed, missed = place_review_comments(
        tls_mirror, archive, tls_checker, _public(TLS_CORPUS),
        rfc_texts={"rfc9846.md": ("rfc9846", "main", "rfc9846.md")},
    )  # fmt: skip
    theirs = {(p.pull, p.created, p.body_start): (p.revision, p.section) for p in placed}
    rows = tls_brain.query(
        RR + DC + "PREFIX sioc: <http://rdfs.org/sioc/ns#> "
        "SELECT ?number ?created ?content ?section ?sNumber ?title WHERE { "
        '?citation rr:citationRule "review-line" ; rr:inPost ?post ; rr:citesSection ?section . '
        "?section dcterms:title ?title OPTIONAL { ?section rr:sectionNumber ?sNumber } "
        "?post dcterms:created ?created ; sioc:content ?content ; "
        "sioc:has_container/rr:threadNumber ?number }"
    ).rows
    ours: dict[tuple[int, str, str], tuple[str, str]] = {}
    for row in rows:
        revision = _SECTION.search(row["section"].value)
        document = (
            f"{revision.group(1)}-{revision.group(2)}"
            if revision
            else row["section"].value.split("/id/doc/")[1].split("/")[0]
        )
        number = row.get("sNumber")
        key = (int(row["number"].value), row["created"].value, row["content"].value[:40])
        ours[key] = (document, _label(number.value if number else None, row["title"].value))
    assert len(theirs) > 400 and missed < 1000
    assert ours == theirs


@pytest.mark.parametrize("rfc", [8999, 9000, 9001, 9002, 9114, 9204])
def test_quic_card_commit_counts_equal_the_checkers(
    quic_brain: Brain, quic_checker: Attribution, rfc: int
) -> None:
    """Each QUIC RFC's section cards count the commits the checker finds, save the documented
    differences (see the per-revision test), each checked on the commit."""
    public = _public(QUIC_CORPUS)
    bundle_ids = {github: bundle for bundle, github in public.items()}
    rebuilt = _rebuilt(quic_brain, quic_checker, public, QUIC_TEXTS, rfc)
    cards = _card_commits(quic_brain, rfc)
    unfound = {"any": set().union(*_unfound(quic_checker, public).values())}
    assert rebuilt
    for number in set(rebuilt) | set(cards):
        mine, theirs = cards.get(number, set()), rebuilt.get(number, set())
        for commit in mine ^ theirs:
            brain_only = commit in mine
            reason = _why_apart(commit, quic_checker, bundle_ids, "any", unfound, brain_only)
            assert reason, (rfc, number, commit)
    if rfc == 9000:
        assert _card_count(quic_brain, 9000, "10.1") == len(cards["10.1"]) > 0
