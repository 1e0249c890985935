"""What changed in one section between two revisions: the two texts' difference, with the
commits (and their pull requests) that changed the section in the revisions between."""

from __future__ import annotations

import difflib

from ratified_rdf.answers.discussion import COMMITS, PULL_REQUESTS, commit_changes
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import Answer, CommitChange, Evidence, SectionDiff, Verdict
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.answers.wording import plural
from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.store import Term

SHOWN_LINES = 40
"""Added and removed lines a card shows at most, each side (the links hold the rest)."""


def section_diff(
    session: Session, question: str, draft: str, older: str, newer: str, section: str
) -> Answer:
    """Section ``section`` of ``draft``-``older`` (or, when that revision has none, of
    ``newer``) followed to the other revision, and how its text differs."""
    older, newer = sorted((older, newer))
    first, second = v.revision_iri(draft, older), v.revision_iri(draft, newer)
    mine, theirs, flipped = _pair(session, f"{first}/section/{section}", second)
    if mine is None:
        mine, theirs, flipped = _pair(session, f"{second}/section/{section}", first)
        flipped = True
    if mine is None:
        return out_of_scope(
            session,
            question,
            f"neither {draft}-{older} nor {draft}-{newer} has a section {section}",
        )
    old_row, new_row = (theirs, mine) if flipped else (mine, theirs)
    old_lines = (text_of(old_row, "text") or "").splitlines() if old_row else []
    new_lines = (text_of(new_row, "text") or "").splitlines() if new_row else []
    diff = list(difflib.unified_diff(old_lines, new_lines, lineterm="", n=0))
    added = [line[1:] for line in diff if line.startswith("+") and not line.startswith("+++")]
    removed = [line[1:] for line in diff if line.startswith("-") and not line.startswith("---")]
    both = old_row is not None and new_row is not None
    ratio = difflib.SequenceMatcher(None, old_lines, new_lines).ratio() if both else None
    heading = text_of(mine, "heading") or ""
    older_number = text_of(old_row, "number") if old_row else None
    newer_number = text_of(new_row, "number") if new_row else None
    older_heading = (text_of(old_row, "heading") if old_row else None) or heading
    newer_heading = text_of(new_row, "heading") if new_row else None
    older_url = (text_of(old_row, "page") if old_row else None) or ""
    newer_url = text_of(new_row, "page") if new_row else None
    result = SectionDiff(
        older=f"{draft}-{older}",
        newer=f"{draft}-{newer}",
        older_number=older_number,
        newer_number=newer_number,
        heading=older_heading,
        newer_heading=newer_heading,
        similarity=round(ratio, 3) if ratio is not None else None,
        added=added[:SHOWN_LINES],
        removed=removed[:SHOWN_LINES],
        older_url=older_url,
        newer_url=newer_url,
    )
    final = text_of(mine, "final") or (text_of(theirs, "final") if theirs else None)
    commits = _commits_between(session, final, draft, older, newer)
    if not both:
        gone = "is not in" if not flipped else "was not yet in"
        summary = (
            f"§{section} {heading} of {draft}-{older if not flipped else newer} {gone} "
            f"{draft}-{newer if not flipped else older} under the same heading or as the same "
            "RFC section."
        )
    elif not added and not removed:
        summary = (
            f"§{older_number} {older_heading} did not change from {draft}-{older} to "
            f"{draft}-{newer}"
            + (f" (numbered §{newer_number} there)" if newer_number != older_number else "")
            + "."
        )
    else:
        summary = (
            f"From {draft}-{older} §{older_number} to {draft}-{newer} §{newer_number} "
            f"{newer_heading}: {plural(len(added), 'line')} added, "
            f"{plural(len(removed), 'line')} removed (similarity {ratio:.2f})."
        )
    pulls = sorted({c.pull_request for c in commits if c.pull_request})
    if commits:
        summary += (
            f" {plural(len({c.iri for c in commits}), 'commit')} changed it in between"
            + (f", through {', '.join(f'#{n}' for n in pulls)}" if pulls else "")
            + "."
        )
    evidence = [
        Evidence(
            iri=first, label=f"{draft}-{older} §{older_number}", url=older_url, role="section"
        ),
        *(
            [
                Evidence(
                    iri=second,
                    label=f"{draft}-{newer} §{newer_number}",
                    url=newer_url,
                    role="section",
                )
            ]
            if newer_url
            else []
        ),
        *(
            Evidence(
                iri=c.iri,
                label=f"commit {c.subject or c.iri[-7:]}",
                url=c.commit_url,
                role="commit",
            )
            for c in commits
        ),
    ]
    return Answer(
        question=question,
        intent="section_diff",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[result, *commits],
        evidence=evidence,
        queries=session.queries,
        note=(
            "The section is followed from one revision to the other as the history card "
            "follows it (the same RFC section, else the same heading); commits are those that "
            "changed it in the revisions after the older one, up to the newer one."
        ),
    )


def _pair(
    session: Session, section: str, other_revision: str
) -> tuple[dict[str, Term] | None, dict[str, Term] | None, bool]:
    """The section's own row (with its final section) and its counterpart's in
    ``other_revision``; (None, None) when the first revision has no such section."""
    own = session.run("section_text", section=section)
    if not own:
        return None, None, False
    others = session.run("section_counterpart", section=section, other_revision=other_revision)
    return own[0], (others[0] if others else None), False


def _commits_between(
    session: Session, final: str | None, draft: str, older: str, newer: str
) -> list[CommitChange]:
    """Commits that changed the section (any revision's copy aligned with ``final``) in a
    revision after ``older`` up to ``newer``: a commit changes only the revision it landed in."""
    if not final:
        return []
    prefix = v.document_iri(draft) + "/"
    landed = []
    places: dict[str, tuple[str, str | None]] = {}
    for row in session.run("section_commits", final=final):
        section = text_of(row, "section") or ""
        if not section.startswith(prefix):
            continue
        number = section[len(prefix) :].split("/", 1)[0]
        if older < number <= newer:
            landed.append(row)
            places[section] = (f"{draft}-{number}", None)
    if not landed:
        return []
    commit_iris = tuple(dict.fromkeys(r["commit"] for r in landed if "commit" in r))
    pull_iris = tuple(dict.fromkeys(r["pr"] for r in landed if "pr" in r))
    details = session.rows_about(*COMMITS, commit_iris)
    pulls = session.rows_about(*PULL_REQUESTS, pull_iris) if pull_iris else []
    # The same changes a why card lists, built the same way (one per commit and its PR).
    return commit_changes(landed, pulls, details, places)
