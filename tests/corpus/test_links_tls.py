"""``ratified links --all`` on the real TLS brain: no link the graph holds is malformed (its
commits are GitHub's ids in the corpus's commit map, its pull requests are ones the bundle's
refs/pull/N/head record), and the number checked of each kind agrees with a count made without
the brain (git's tags, the GitHub archive on gh-pages, the manifest)."""

from __future__ import annotations

import json
import re
import subprocess
import tomllib
from pathlib import Path

import pytest

from ratified_rdf import Brain
from ratified_rdf.surfaces import links
from tests.conftest import CORPUS, MANIFEST

pytestmark = pytest.mark.corpus


@pytest.fixture(scope="module")
def report(tls_brain: Brain, tls_bundle: Path) -> links.LinkReport:
    commit_map = links.load_commit_map(CORPUS / "commit-map.tsv")
    pulls = links.repository_pull_requests(tls_bundle)  # GitHub's refs/pull/N/head
    return links.check_brain(tls_brain, commit_map=commit_map, pull_requests=pulls)


def test_every_link_the_tls_graph_holds_is_well_formed(report: links.LinkReport) -> None:
    assert report.ok, report.text()
    assert {c.kind for c in report.counts} >= {
        "revision",
        "revision-section",
        "rfc-section",
        "commit",
        "pull-request",
        "issue",
        "comment",
    }


def test_revisions_checked_are_the_bundles_revision_tags(
    report: links.LinkReport, tls_bundle: Path
) -> None:
    out = subprocess.run(
        ["git", "ls-remote", "--tags", str(tls_bundle)], check=True, capture_output=True, text=True
    ).stdout
    tags = {line.split("refs/tags/", 1)[1] for line in out.splitlines() if "refs/tags/" in line}
    revisions = {t for t in tags if re.fullmatch(r"draft-[a-z0-9-]+-\d\d", t)}
    assert len(revisions) > 40
    assert _checked(report, "revision") == len(revisions)


def test_threads_checked_are_the_archives_issues_and_pulls(
    report: links.LinkReport, tls_mirror: Path
) -> None:
    archive = json.loads(
        subprocess.run(
            ["git", "--git-dir", str(tls_mirror), "show", "gh-pages:archive.json"],
            check=True,
            capture_output=True,
        ).stdout
    )
    assert _checked(report, "issue") == len(archive["issues"])
    assert _checked(report, "pull-request") == len(archive["pulls"])


def test_drafts_and_rfcs_checked_are_the_manifests(report: links.LinkReport) -> None:
    manifest = tomllib.loads((MANIFEST / "manifest.toml").read_text())
    assert _checked(report, "draft") == len(manifest["draft"])
    assert _checked(report, "rfc") == len(manifest["rfc"])


def _checked(report: links.LinkReport, kind: str) -> int:
    return next(c.checked for c in report.counts if c.kind == kind)
