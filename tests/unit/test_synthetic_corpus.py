"""The synthetic generator's ground truth, checked against what it wrote and what a brain built
from it holds.

``benchmarks.synthetic`` writes the corpora every scale claim rests on and says what it meant:
``Corpus.counts`` (revisions, sections, threads, posts, commits, messages) and ``Truth`` (every
revision's and RFC's sections by number, and which section of which document each post cites,
or that a citation must not resolve). A tiny corpus is generated and built here, and that claim
is checked two ways the generator takes no part in:

- against the generated files, read with git and the standard library: the tags, the commits,
  ``archive.json``, the mbox, and in each post's text the citation the truth says it holds;
- against the built brain, by SPARQL: its revisions, RFCs and their sections, threads, posts,
  and each post's resolved citations (doc and section number) against the ones the truth says
  must resolve.

The tiny corpus (seed 7) is one where the build resolves every citation as the generator meant
it, so a difference is either a wrong truth or a build that resolves wrongly; the message names
the post. The second test changes one fact of the truth at a time and shows it is caught.
"""

from __future__ import annotations

import copy
import json
import mailbox
import re
import subprocess
import tomllib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from benchmarks.synthetic import Corpus, Truth, make_corpus
from ratified_rdf import Brain
from ratified_rdf.sources.mail import mail_archive_permalink

PREFIXES = """PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
PREFIX sioc: <http://rdfs.org/sioc/ns#>
"""
DOCUMENT = (
    '{ ?doc rr:tag ?name } UNION { ?doc rr:rfcNumber ?n BIND(CONCAT("rfc", STR(?n)) AS ?name) }'
)
"""Binds ``?name`` to a revision's tag (``draft-…-07``) or an RFC's ``rfcNNNNN``."""
REFERENCES = {"References", "Normative References", "Informative References"}
"""Sections the reader adds from the front matter's references, as kramdown-rfc does; the
generator writes the references, not these sections, so its truth leaves them out."""
BARE = {"section", "xref"}
"""Citation forms that name no draft: resolved only where the post's draft can be told."""
MARKER = re.compile(r"\b(?:Section|Appendix) [0-9A-Z]|§|#section-|\{\{")
"""What every written citation holds once (the generated prose has no digits and no such
words), so a post's markers are as many as its citations."""
GITHUB_POST = re.compile(r"/thread/(\d+)/post/(\d+)$")


@dataclass
class Evidence:
    """What the files and the brain hold, gathered once (no part of it from the generator)."""

    tags: list[str]
    commits: int
    archive: dict
    bodies: dict[str, str]
    """Post key (``github/<thread>/<index>``, ``mail/<message-id>``) → its text."""
    anchors: dict[str, dict[str, str]]
    """Revision or RFC → {anchor: heading} of its file's ``{#anchor}`` headings."""
    messages: int
    brain_counts: dict[str, int]
    sections: dict[str, dict[str, str]]
    """Revision or RFC → {section number: heading}, as the brain holds them."""
    cited: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Post key → the (document, section number) pairs the brain resolved its citations to."""


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "--git-dir", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


def _rows(brain: Brain, sparql: str) -> list[dict[str, str]]:
    return [{k: v.value for k, v in row.items()} for row in brain.query(PREFIXES + sparql).rows]


def _count(brain: Brain, where: str) -> int:
    return int(_rows(brain, f"SELECT (COUNT(*) AS ?n) WHERE {{ {where} }}")[0]["n"])


def gather(corpus: Corpus, brain: Brain) -> Evidence:
    """Read the generated files and query the brain."""
    repo = corpus.repo
    tags = _git(repo, "for-each-ref", "--format=%(refname:short)", "refs/tags").split()
    archive = json.loads(_git(repo, "show", "gh-pages:archive.json"))
    bodies: dict[str, str] = {}
    for item in [*archive["issues"], *archive["pulls"]]:
        # The archive's order: the opening, its comments, then each review and its comments.
        texts = [item["body"], *(c["body"] for c in item["comments"])]
        for review in item.get("reviews", []):
            texts += [review["body"], *(c["body"] for c in review["comments"])]
        bodies.update({f"github/{item['number']}/{i}": text for i, text in enumerate(texts)})
    manifest = tomllib.loads((corpus.manifest / "manifest.toml").read_text(encoding="utf-8"))
    files = {d["name"]: d["file"] for d in manifest["draft"]}
    files |= {f"rfc{r['number']}": r["file"] for r in manifest["rfc"]}
    anchors = {}
    for tag in tags:
        draft = re.sub(r"-\d\d$", "", tag)
        text = _git(repo, "show", f"{tag}:{files[draft]}")
        anchors[tag] = {a: h for h, a in re.findall(r"^#+ (.+?) \{#([^}]+)\}$", text, re.M)}
    messages = 0
    pages = {}
    mail = manifest["discussion"].get("mail", [])
    for entry in mail:
        for message in mailbox.mbox(corpus.manifest / entry["file"]):
            messages += 1
            key = f"mail/{message['Message-ID'].strip('<>')}"
            payload = message.get_payload(decode=True)
            bodies[key] = payload.decode("utf-8") if isinstance(payload, bytes) else ""
            pages[mail_archive_permalink(message["Message-ID"], entry["list"])] = key

    brain_counts = {
        "drafts": _count(brain, "?draft a rr:Draft"),
        "revisions": _count(brain, "?doc a rr:Revision ; rr:tag ?tag"),
        "rfcs": _count(brain, "?doc a rr:RFC"),
        "issues": _count(brain, "?t a rr:Issue"),
        "pull requests": _count(brain, "?t a rr:PullRequest"),
        "merged pull requests": _count(brain, "?t a rr:PullRequest ; rr:state 'MERGED'"),
        "posts": _count(brain, "?p a sioc:Post ; rr:postKind ?k FILTER(?k != 'message')"),
        "mail messages": _count(brain, "?p a sioc:Post ; rr:postKind 'message'"),
    }
    sections: dict[str, dict[str, str]] = {}
    for row in _rows(
        brain,
        f"SELECT ?name ?number ?title WHERE {{ {DOCUMENT} ?doc rr:hasSection ?s . "
        "?s rr:sectionNumber ?number ; dcterms:title ?title }",
    ):
        if row["title"] not in REFERENCES:
            sections.setdefault(row["name"], {})[row["number"]] = row["title"]
    cited: dict[str, list[tuple[str, str]]] = {}
    for row in _rows(
        brain,
        f"SELECT ?post ?page ?name ?number WHERE {{ ?c rr:inPost ?post ; rr:citesSection ?s . "
        f"?doc rr:hasSection ?s . ?s rr:sectionNumber ?number . {DOCUMENT} "
        "OPTIONAL { ?post a rr:MailMessage ; foaf:page ?page } }",
    ):
        found = GITHUB_POST.search(row["post"])
        key = f"github/{found[1]}/{found[2]}" if found else pages.get(row.get("page", ""), "")
        cited.setdefault(key or row["post"], []).append((row["name"], row["number"]))
    return Evidence(
        tags=tags,
        commits=int(_git(repo, "rev-list", "--all", "--count")),
        archive=archive,
        bodies=bodies,
        anchors=anchors,
        messages=messages,
        brain_counts=brain_counts,
        sections=sections,
        cited=cited,
    )


def _written(form: str, document: str | None, number: str | None) -> re.Pattern[str]:
    """How a citation of ``form`` reads in a post (``number`` not followed by more of one)."""
    n = re.escape(number or "")
    end = r"(?![0-9]|\.[0-9A-Za-z])"
    doc = re.escape(document or "")
    patterns = {
        "section": rf"\b(?:Section|Appendix) {n}{end}",
        "section-of-revision": rf"\b(?:Section|Appendix) {n} of {doc}\b",
        "revision-sign": rf"{doc} §{n}{end}",
        "url": rf"/{doc}#section-{n}{end}",
        "rfc": rf"\bRFC {re.escape((document or '')[3:])} Section {n}{end}",
        "foreign": r"\bRFC 8\d{4} Section \d\.\d\b",
        "missing": r"\bSection \d+\.\d\b",
        "xref": r"\{\{[^}]+\}\}",
    }
    return re.compile(patterns[form])


def problems(counts: dict[str, int], truth: Truth, seen: Evidence) -> list[str]:
    """Every way the generator's counts and truth disagree with the files and the brain."""
    found: list[str] = []

    def expect(what: str, claimed: object, actual: object) -> None:
        if claimed != actual:
            found.append(f"{what}: the generator says {claimed!r}, {actual!r} found")

    # The files.
    revisions = [t for t in seen.tags if re.search(r"-\d\d$", t)]
    expect("revision tags", counts["revisions"], len(revisions))
    expect("RFC tags", counts["rfcs"], len(seen.tags) - len(revisions))
    expect("drafts", counts["drafts"], len({re.sub(r"-\d\d$", "", t) for t in revisions}))
    expect("documents", sorted(truth.revisions), sorted(seen.tags))
    expect("commits (git rev-list --all)", counts["commits"], seen.commits)
    issues, pulls = seen.archive["issues"], seen.archive["pulls"]
    expect("issues in archive.json", counts["issues"], len(issues))
    expect("pull requests in archive.json", counts["pull requests"], len(pulls))
    expect("merged", counts["merged pull requests"], sum(1 for p in pulls if p["mergedAt"]))
    fixing = sum(1 for p in pulls if "Fixes #" in p["body"])
    expect("pull requests saying Fixes #N", counts["pull requests fixing an issue"], fixing)
    github = [k for k in seen.bodies if k.startswith("github/")]
    expect("posts in archive.json", counts["posts"], len(github))
    expect("messages in the mbox", counts["mail messages"], seen.messages)
    markers = sum(len(MARKER.findall(body)) for body in seen.bodies.values())
    expect("citations written in the posts", counts["citations written"], markers)
    for key in sorted(set(truth.citations) - set(seen.bodies)):
        found.append(f"{key}: the truth has citations in a post that was never written")
    for key, body in seen.bodies.items():
        meant = truth.citations.get(key, [])
        markers = len(MARKER.findall(body))
        if markers != len(meant):
            found.append(f"{key}: {len(meant)} citation(s) meant, {markers} written: {body!r}")
        for form, document, number in meant:
            if not _written(form, document, number).search(body):
                found.append(f"{key}: no {form} citation of {document} {number} in {body!r}")
            if form == "xref" and document is not None and number is not None:
                heading = truth.revisions.get(document, {}).get(number)
                named = [seen.anchors[document].get(a) for a in re.findall(r"\{\{(.+?)\}\}", body)]
                if heading not in named:
                    found.append(f"{key}: no anchor of {document} §{number} ({heading!r})")

    # The brain.
    for name in ("drafts", "revisions", "rfcs", "issues", "pull requests", "mail messages"):
        expect(f"{name} in the brain", counts[name], seen.brain_counts[name])
    merged = seen.brain_counts["merged pull requests"]
    expect("merged pull requests in the brain", counts["merged pull requests"], merged)
    expect("posts in the brain", counts["posts"], seen.brain_counts["posts"])
    total = sum(len(s) for s in seen.sections.values())
    expect("sections in the brain", counts["sections (all revisions and RFCs)"], total)
    for document in sorted(set(truth.revisions) | set(seen.sections)):
        wrote, held = truth.revisions.get(document, {}), seen.sections.get(document, {})
        for number in sorted(set(wrote) | set(held)):
            expect(f"{document} §{number} in the brain", wrote.get(number), held.get(number))
    for key in sorted(set(truth.citations) | set(seen.cited)):
        pinned = truth.pinned.get(key, True)
        resolving = [
            (document, number)
            for form, document, number in truth.citations.get(key, [])
            if document is not None and number is not None and (pinned or form not in BARE)
        ]
        expect(
            f"{key}: sections its citations resolve to",
            Counter(resolving),
            Counter(seen.cited.get(key, [])),
        )
    return found


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Corpus, Evidence]]:
    """The tiny corpus (with a mailing list), its brain, and what both hold."""
    folder = tmp_path_factory.mktemp("synthetic")
    corpus = make_corpus(folder / "corpus", factor=1, seed=7, mail=True, shape="tiny")
    brain, _ = Brain.build(
        corpus.manifest / "manifest.toml", path=folder / "store", source=str(corpus.repo)
    )
    try:
        yield corpus, gather(corpus, brain)
    finally:
        brain.close()


def test_truth_matches_the_files_and_the_brain(built: tuple[Corpus, Evidence]) -> None:
    corpus, seen = built
    assert corpus.counts["revisions"] >= 6 and corpus.counts["mail messages"] > 0
    resolving = sum(len(v) for v in seen.cited.values())
    assert resolving >= 30, "the tiny corpus should cite enough sections to check"
    assert problems(corpus.counts, corpus.truth, seen) == []


def _moved_citation(truth: Truth) -> str:
    key, cites = next((k, v) for k, v in sorted(truth.citations.items()) if v[0][1] is not None)
    form, document, number = cites[0]
    assert document is not None
    others = sorted(n for n in truth.revisions[document] if n != number)
    cites[0] = (form, document, others[0])
    return key


def _renamed_section(truth: Truth) -> str:
    document = sorted(truth.revisions)[0]
    number = sorted(truth.revisions[document])[-1]
    truth.revisions[document][number] = "A Heading Nobody Wrote"
    return f"{document} §{number}"


def _dropped_citation(truth: Truth) -> str:
    key = sorted(truth.citations)[0]
    truth.citations[key].pop()
    return key


def _unpinned_post(truth: Truth) -> str:
    key = next(k for k, v in sorted(truth.citations.items()) if any(f in BARE for f, *_ in v))
    truth.pinned[key] = False
    return key


@pytest.mark.parametrize(
    "mutate",
    [_moved_citation, _renamed_section, _dropped_citation, _unpinned_post],
    ids=["citation-moved", "section-renamed", "citation-dropped", "post-unpinned"],
)
def test_a_wrong_truth_is_caught(
    built: tuple[Corpus, Evidence], mutate: Callable[[Truth], str]
) -> None:
    corpus, seen = built
    truth = copy.deepcopy(corpus.truth)
    where = mutate(truth)
    found = problems(corpus.counts, truth, seen)
    assert any(where in problem for problem in found), f"changing {where} went unnoticed: {found}"


@pytest.mark.parametrize("count", ["posts", "commits", "sections (all revisions and RFCs)"])
def test_a_wrong_count_is_caught(built: tuple[Corpus, Evidence], count: str) -> None:
    corpus, seen = built
    counts = {**corpus.counts, count: corpus.counts[count] + 1}
    assert problems(counts, corpus.truth, seen)
