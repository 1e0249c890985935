"""Answers about one issue or pull request."""

from __future__ import annotations

import re

from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import (
    Answer,
    Evidence,
    SectionActivity,
    ThreadInfo,
    Verdict,
)
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.answers.wording import plural
from ratified_rdf.graph.store import Term

_MERGED_BY = re.compile(r"\bwho merged\b|\bmerged by\b|\bmerger\b|\bwho (?:did|hit) merge\b", re.I)


def thread_lookup(session: Session, question: str, number: int) -> Answer:
    """An issue or pull request by number, with the RFC sections its commits changed."""
    rows = session.run("thread", number=number)
    if not rows:
        return out_of_scope(session, question, f"it holds no issue or pull request #{number}")
    row = rows[0]
    is_pull = (text_of(row, "kind") or "").endswith("#PullRequest")
    thread = ThreadInfo(
        number=number,
        title=text_of(row, "title") or "",
        state=text_of(row, "state") or "",
        url=text_of(row, "page") or "",
        author=text_of(row, "login"),
        created=text_of(row, "created") or "",
        is_pull_request=is_pull,
        merged=text_of(row, "merged"),
        # The archive's merger, else the person git attributes the merge commit to.
        merged_by=text_of(row, "merger") or text_of(row, "mergerName"),
        merge_commit=text_of(row, "mergePage"),
    )
    changes = session.run("thread_changes", thread=text_of(row, "thread") or "") if is_pull else []
    touched: dict[str, SectionActivity] = {}
    commits: dict[str, set[str]] = {}
    for change in changes:
        final = text_of(change, "finalPage") or ""
        commits.setdefault(final, set()).add(text_of(change, "commit") or "")
        touched[final] = SectionActivity(
            section=_final_label(change), url=final, commits=len(commits[final])
        )
    kind = "a pull request" if is_pull else "an issue"
    sections = ", ".join(f"{t.section}" for t in touched.values())
    if thread.created:
        opened = (
            f'#{number} is {kind}, {thread.state.lower()}: "{thread.title}"'
            + (f", opened by {thread.author}" if thread.author else "")
            + f" on {thread.created[:10]}."
        )
    else:  # known from the commit that merged it: the repository has no GitHub archive
        opened = (
            f'#{number} is {kind}, merged on {(thread.merged or "")[:10]}: "{thread.title}". '
            "The brain knows it from its merge commit only (no GitHub archive was read), so "
            "its author, discussion and opening date are not held."
        )
    summary = opened + (
        f" Its commits changed {plural(len(touched), 'RFC section')}: {sections}."
        if touched
        else ""
    )
    if is_pull and _MERGED_BY.search(question):
        # Asked who merged it: say who, or that the graph records when but not who.
        when = f" on {thread.merged[:10]}" if thread.merged else ""
        if thread.merged_by and not text_of(row, "merger"):
            summary += (
                f" It was merged by {thread.merged_by}{when}, as its merge commit records"
                f" ({thread.merge_commit})."
            )
        elif thread.merged_by:
            summary += f" It was merged by {thread.merged_by}{when}."
        elif thread.merged or thread.state.lower() == "merged":
            summary += (
                f" Who merged it the graph doesn't know: it records that it was merged{when}, "
                "not by whom."
            )
        else:
            summary += " It was not merged."
    evidence = [
        Evidence(
            iri=text_of(row, "thread") or "",
            label=f"#{number} {thread.title}",
            url=thread.url,
            role="pull-request" if is_pull else "issue",
        ),
        *(
            [
                Evidence(
                    iri=text_of(row, "mergeCommit") or "",
                    label="merge commit",
                    url=thread.merge_commit,
                    role="commit",
                )
            ]
            if thread.merge_commit
            else []
        ),
        *(
            Evidence(iri=t.url, label=t.section, url=t.url, role="rfc-section")
            for t in touched.values()
        ),
    ]
    return Answer(
        question=question,
        intent="thread",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[thread, *touched.values()],
        evidence=evidence,
        queries=session.queries,
    )


def _final_label(row: dict[str, Term]) -> str:
    """``RFC 8446 §5.1 Record Layer``: a pull request can change sections of one title in
    two RFCs (or two places of one), which the title alone would list twice alike."""
    title = text_of(row, "finalTitle") or ""
    rfc, number = text_of(row, "rfcNumber"), text_of(row, "finalNumber")
    where = " ".join(
        part for part in (f"RFC {rfc}" if rfc else "", f"§{number}" if number else "") if part
    )
    return f"{where} {title}".strip()
