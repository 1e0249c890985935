"""The TLS working group's 25 other repositories, each checked against the independent checker.

For every repository of ``../shared/corpus/tlswg`` the brain is built as a new user would:
from the manifest under ``records/tlswg/<name>`` where one is kept, else from the one
``ratified init`` writes, with what only the public record knows left out (its FILL IN lines
deleted and the repository's public URL given; which RFC a draft became changes neither the
revisions nor their sections). The checker (``tests/independent/revisions.py``) reads git
alone and imports nothing from the package; ``tests/independent/agreement.py`` sets its
answer beside the brain's:

* every revision, and where its text came from (tag, per-revision file, docname commit,
  and the very text read there);
* the revisions named missing;
* the section tree of every revision, markdown, xml2rfc XML and plain text alike.

And the commits credited to every section of every revision of three repositories of three
formats, against the checker's attribution by position: ``dtls-conn-id`` (markdown, tags),
``dnssec-chain-extension`` (xml2rfc v2, one file per revision) and ``oldversions-deprecate``
(plain text and XML, one file per revision).

The 25 brains are built once per session (a few minutes on two cores); the whole module's
time is in benchmarks/RESULTS.md.
"""

from __future__ import annotations

import re
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ratified_rdf import Brain
from ratified_rdf.surfaces.cli import main
from tests.conftest import REPO, TlswgStores, require_corpus
from tests.independent.agreement import _COMMIT, Agreement, compare
from tests.independent.attribution import attribute
from tests.independent.revision_files import section_commits
from tests.independent.revisions import holdings, names_revision

pytestmark = pytest.mark.corpus

TLSWG = REPO.parent / "shared" / "corpus" / "tlswg"
RECORDS = REPO / "records" / "tlswg"
NAMES = (
    "certificate-compression",
    "dnssec-chain-extension",
    "draft-ietf-tls-cert-abridge",
    "draft-ietf-tls-ctls",
    "draft-ietf-tls-esni",
    "draft-ietf-tls-external-psk-importer",
    "draft-ietf-tls-iana-registry-updates",
    "draft-ietf-tls-mlkem",
    "draft-ietf-tls-semistatic-dh",
    "draft-ietf-tls-svcb-ech",
    "draft-ietf-tls-ticketrequest",
    "draft-ietf-tls-tls13-vectors",
    "dtls-conn-id",
    "dtls-rrc",
    "dtls13-spec",
    "external-psk-design-team",
    "oldversions-deprecate",
    "rfc8447bis",
    "sniencryption",
    "tls-exported-authenticator",
    "tls-key-update",
    "tls-record-limit",
    "tls-subcerts",
    "tls-trust-anchor-ids",
    "tls13-pkcs1",
)
_FILL_IN = re.compile(r"^.*FILL IN:.*\n", re.M)
_PLACEHOLDER = "https://example.invalid/fill-in-the-public-url"


def _bundle(name: str) -> Path:
    return require_corpus(TLSWG / name / f"{name}.bundle", f"tlswg/{name}")


def _manifest(name: str, folder: Path) -> Path:
    """The kept manifest, else init's with its FILL IN lines deleted and the URL given."""
    kept = RECORDS / name / "manifest.toml"
    if kept.is_file():
        return kept
    out = folder / "init" / name / "manifest.toml"
    run = CliRunner().invoke(main, ["init", str(_bundle(name)), "--name", name, "--out", str(out)])
    assert run.exit_code == 0, run.output
    text = _FILL_IN.sub("", out.read_text(encoding="utf-8"))
    out.write_text(text.replace(_PLACEHOLDER, f"https://github.com/tlswg/{name}"))
    return out


class Built:
    """The 25 repositories: each one's bare clone, and its brain where its manifest names
    revisions to build (a repository holding none has no brain to build)."""

    def __init__(self, folder: Path, stores: TlswgStores) -> None:
        self.folder = folder
        self.stores = stores
        self.clones: dict[str, Path] = {}
        self.brains: dict[str, Path | None] = {}

    def clone(self, name: str) -> Path:
        if name not in self.clones:
            target = self.folder / "repos" / name
            subprocess.run(
                ["git", "clone", "-q", "--bare", str(_bundle(name)), str(target)], check=True
            )
            self.clones[name] = target
        return self.clones[name]

    def brain(self, name: str) -> Path | None:
        if name not in self.brains:
            manifest = _manifest(name, self.folder)
            drafts = tomllib.loads(manifest.read_text(encoding="utf-8")).get("draft", [])
            if not any("revisions" in draft for draft in drafts):
                self.brains[name] = None
            else:
                # Built once per session for every corpus test that reads it.
                self.brains[name] = (
                    self.stores(name)[0]
                    if manifest.parent.parent == RECORDS
                    else _built(manifest, self.folder / "brains" / name, _bundle(name))
                )
        return self.brains[name]


@pytest.fixture(scope="session")
def tlswg(tmp_path_factory: pytest.TempPathFactory, tlswg_store: TlswgStores) -> Built:
    """The repositories' clones and brains, made once per session as tests ask for them."""
    return Built(tmp_path_factory.mktemp("tlswg"), tlswg_store)


def _built(manifest: Path, store: Path, bundle: Path) -> Path:
    """``store``, built from a manifest init wrote (a repository with none kept)."""
    brain, _ = Brain.build(manifest, path=store, source=str(bundle))
    brain.close()
    return store


@pytest.fixture(scope="module")
def agreements(tlswg: Built) -> Iterator[dict[str, Agreement | None]]:
    found: dict[str, Agreement | None] = {}
    for name in NAMES:
        store = tlswg.brain(name)
        if store is None:
            found[name] = None
            continue
        brain = Brain.open(store)
        try:
            found[name] = compare(name, tlswg.clone(name), brain)
        finally:
            brain.close()
    yield found


@pytest.mark.parametrize("name", NAMES)
def test_revisions_sources_and_section_trees_agree_with_the_checker(
    name: str, agreements: dict[str, Agreement | None], tlswg: Built
) -> None:
    agreement = agreements[name]
    if agreement is None:
        # init found no revision to describe: the checker must find none either.
        assert holdings(tlswg.clone(name)) == {}
        return
    assert agreement.revisions > 0
    assert agreement.disagreements == [], str(agreement)


def test_the_checker_covers_every_format(agreements: dict[str, Agreement | None]) -> None:
    """The comparison reaches markdown, XML and text trees, not a corner of the corpus."""
    assert agreements["dnssec-chain-extension"] is not None  # xml2rfc v2, per-revision files
    assert agreements["oldversions-deprecate"] is not None  # text and XML per-revision files
    total = sum(a.sections for a in agreements.values() if a is not None)
    assert total > 5000


_SECTION = re.compile(r"/id/doc/(draft-[a-z0-9-]+?)/(\d\d)/section/")
_CHANGES = (
    "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
    "PREFIX dcterms: <http://purl.org/dc/terms/> "
    "SELECT ?id ?section ?number ?title WHERE { ?commit rr:commitId ?id ; "
    "rr:changedSection ?section . ?section dcterms:title ?title "
    "OPTIONAL { ?section rr:sectionNumber ?number } }"
)


def _public(name: str) -> dict[str, str]:
    rows = (TLSWG / name / "commit-map.tsv").read_text().splitlines()[1:]
    return dict(row.split("\t")[:2] for row in rows if "\t" in row)


def _brain_changes(store: Path) -> dict[tuple[str, str], set[str]]:
    """(revision, section number or ``(unnumbered) Heading``) → public commit ids."""
    brain = Brain.open(store)
    try:
        rows = brain.query(_CHANGES).rows
    finally:
        brain.close()
    ours: dict[tuple[str, str], set[str]] = {}
    for row in rows:
        revision = _SECTION.search(row["section"].value)
        if revision is None:
            continue
        number = row.get("number")
        label = number.value if number else "(unnumbered) " + row["title"].value
        key = (f"{revision.group(1)}-{revision.group(2)}", label)
        ours.setdefault(key, set()).add(row["id"].value)
    return ours


def _apart(
    ours: dict[tuple[str, str], set[str]], theirs: dict[tuple[str, str], set[str]]
) -> dict[tuple[str, str], tuple[set[str], set[str]]]:
    """Per (revision, section) that disagrees: (only the checker's, only the brain's)."""
    return {
        key: (theirs.get(key, set()) - ours.get(key, set()), ours.get(key, set()) - theirs[key])
        for key in set(ours) | set(theirs)
        if ours.get(key, set()) != theirs.setdefault(key, set())
    }


def test_markdown_commits_per_section_agree_with_the_checker(tlswg: Built, tmp_path: Path) -> None:
    """Every section of every revision of dtls-conn-id (kramdown-rfc markdown) has exactly
    the commits the checker's attribution by position finds. The attribution follows tags; a
    revision only a docname names (-07) is tagged, in a clone of the checker's own, at the
    commit the brain read it from when the checker finds that commit naming it too (several
    commits name -07, on branches that went back and forth: git alone cannot say which was
    submitted), else at the newest commit naming it."""
    name = "dtls-conn-id"
    store = tlswg.brain(name)
    assert store is not None
    public = _public(name)
    clone = tmp_path / "tagged.git"
    subprocess.run(
        ["git", "clone", "-q", "--mirror", str(tlswg.clone(name)), str(clone)], check=True
    )
    brain = Brain.open(store)
    try:
        read_at = {
            str(row["label"].value): str(row["provenance"].value)
            for row in brain.query(
                "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
                "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
                "SELECT ?label ?provenance WHERE { ?r rr:revisionProvenance ?provenance ; "
                "rdfs:label ?label }"
            ).rows
        }
    finally:
        brain.close()
    for held in holdings(clone).values():
        if held.kind == "docname":
            found = _COMMIT.search(read_at.get(held.label, ""))
            ref = held.ref
            if found and names_revision(clone, found.group(1), held.path, held.label):
                ref = found.group(1)
            subprocess.run(["git", "--git-dir", str(clone), "tag", held.label, ref], check=True)
    result = attribute(clone)
    theirs: dict[tuple[str, str], set[str]] = {}
    for tags in result.revisions.values():
        for tag in tags:
            for label, shas in result.commits_per_section(tag).items():
                if not label.startswith("? "):
                    if label.startswith("(unnumbered) "):
                        label = "(unnumbered) " + label.split(" > ")[-1]
                    theirs[(tag, label)] = {public.get(s, s) for s in shas}
    assert sum(len(v) for v in theirs.values()) > 200
    assert _apart(_brain_changes(store), theirs) == {}


@pytest.mark.parametrize(
    "name",
    [
        "dnssec-chain-extension",  # xml2rfc v2 with DOCTYPE entities, a file per revision
        "oldversions-deprecate",  # plain text (and XML) files, one per revision
    ],
)
def test_per_revision_file_commits_per_section_agree_with_the_checker(
    name: str, tlswg: Built
) -> None:
    """Every section of every revision held as its own file has exactly the commits that
    changed that file there, by position, as the checker finds them."""
    store = tlswg.brain(name)
    assert store is not None
    public = _public(name)
    ours = _brain_changes(store)
    brain = Brain.open(store)
    try:
        held = {
            row["label"].value
            for row in brain.query(
                "PREFIX rr: <https://w3id.org/ratified-rdf/ontology#> "
                "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
                "SELECT ?label WHERE { ?r rr:revisionNumber ?n ; rdfs:label ?label }"
            ).rows
        }
    finally:
        brain.close()
    theirs = {
        key: {public.get(s, s) for s in shas}
        for key, shas in section_commits(tlswg.clone(name)).items()
        if key[0] in held  # a working copy the manifest leaves out (-pre-04) is no revision
    }
    assert sum(len(v) for v in theirs.values()) > 200
    assert _apart(ours, theirs) == {}
