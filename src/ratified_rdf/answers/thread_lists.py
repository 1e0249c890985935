"""Lists of issues and pull requests: those connected to one section (posts in them referred
to it, or their commits changed it), or all of them, limited to a state when asked
("which issues are still open about early data?")."""

from __future__ import annotations

import re

from ratified_rdf.answers.draft_finals import DraftFinal, Final, became_no_rfc, final_name
from ratified_rdf.answers.heading_search import HeadingEntry, heading_terms
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import Answer, Count, Evidence, ThreadInfo, Verdict
from ratified_rdf.answers.sections import no_section, rfc_section_row
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.answers.wording import plural
from ratified_rdf.graph.store import Term

THREADS = ("gazetteer_threads", "thread")
"""The whole-graph rows every thread's title, state and link come from."""

LISTED_THREADS = 30
"""Threads a card lists at most (it counts them all)."""

_KINDS = {"issues": "issue", "pull requests": "pull request", None: "issue or pull request"}


def _words(text: str) -> list[str]:
    return re.sub(r"[^0-9a-z]+", " ", text.casefold()).split()


def _titled(title: str, words: tuple[str, ...]) -> bool:
    """Whether ``title`` holds the run of ``words`` (case and punctuation aside)."""
    wanted = _words(" ".join(words))
    held = _words(title)
    return bool(wanted) and any(
        held[i : i + len(wanted)] == wanted for i in range(len(held) - len(wanted) + 1)
    )


def _thread(row: dict[str, Term]) -> ThreadInfo:
    merged = text_of(row, "merged")
    return ThreadInfo(
        number=int(text_of(row, "number") or 0),
        title=text_of(row, "title") or "",
        state=(text_of(row, "state") or ("MERGED" if merged else "")).lower(),
        url=text_of(row, "page") or "",
        author=None,
        created=text_of(row, "created") or "",
        is_pull_request=(text_of(row, "kind") or "").endswith("#PullRequest"),
        merged=merged,
    )


def _any_held(session: Session, kind: str | None, rows: list[dict[str, Term]] | None) -> bool:
    """Whether the brain holds any thread of ``kind`` (issues, pull requests, or either),
    from every thread's ``rows`` when already read."""
    every = [_thread(r) for r in (rows if rows is not None else session.run(THREADS[0]))]
    if kind == "issues":
        return any(not t.is_pull_request for t in every)
    if kind == "pull requests":
        return any(t.is_pull_request for t in every)
    return bool(every)


def thread_list(
    session: Session,
    question: str,
    *,
    rfc: Final | None,
    section: str | None,
    state: str | None,
    kind: str | None,
    known: HeadingEntry | None = None,
    changed_only: bool = False,
    titled: tuple[str, ...] = (),
) -> Answer:
    """The threads connected to RFC ``rfc`` §``section`` (every thread when no section is
    given), of ``kind`` ("issues", "pull requests" or both) and in ``state`` when given.

    Connected: a post in it referred to the section, or a commit through it changed the
    section while it was changing (only the latter with ``changed_only``: "which PRs changed
    §4.2.11?"); and, when the section was found by the words ``titled``, a thread whose title
    holds those words ("issues about 0-RTT")."""
    evidence: list[Evidence] = []
    scope = "the brain"
    if section and rfc:
        found = rfc_section_row(session, rfc, section, known)
        if not found:
            return out_of_scope(session, question, no_section(session, section, rfc))
        final = text_of(found[0], "section") or ""
        scope = f"{final_name(rfc)} §{section} {text_of(found[0], 'heading')}"
        if changed_only:
            posts, commits = [], session.run("section_commits", final=final)
        else:
            posts, commits = session.run_together(
                ("section_posts", {"final": final}), ("section_commits", {"final": final})
            )
        iris = tuple(
            dict.fromkeys(
                [
                    *(r["thread"] for r in posts if "thread" in r),
                    *(r["pr"] for r in commits if "pr" in r),
                ]
            )
        )
        rows = session.rows_about(*THREADS, iris) if iris else []
        if titled and not changed_only:
            held = {text_of(r, "thread") for r in rows}
            rows += [
                r
                for r in session.run(THREADS[0])
                if text_of(r, "thread") not in held and _titled(text_of(r, "title") or "", titled)
            ]
        evidence.append(
            Evidence(iri=final, label=scope, url=text_of(found[0], "page"), role="rfc-section")
        )
    else:
        rows = session.run(THREADS[0])
    threads = [_thread(r) for r in rows]
    if titled and not section:
        # No section: the threads whose titles hold every word of the topic, compared as
        # heading search reads words ("cookie" holds in "Cookies and HRR").
        wanted = set(heading_terms(" ".join(titled)))
        threads = [t for t in threads if wanted <= set(heading_terms(t.title))]
    if kind == "issues":
        threads = [t for t in threads if not t.is_pull_request]
    elif kind == "pull requests":
        threads = [t for t in threads if t.is_pull_request]
    everything = threads
    noun = _KINDS.get(kind, "issue or pull request")
    nouns = "issues and pull requests" if kind is None else noun + "s"
    if not everything and not _any_held(session, kind, rows if not section else None):
        # Nothing to count from: "0 issues are open" would claim a record the brain lacks.
        return out_of_scope(
            session,
            question,
            f"it holds no {nouns} at all (no discussion archive was read into it that holds "
            f"any), so it cannot say which {nouns} there are",
        )
    if state:
        threads = [t for t in threads if t.state == state]
    threads.sort(key=lambda t: (t.created or t.merged or "", t.number), reverse=True)
    by_state: dict[str, int] = {}
    for t in everything:
        by_state[t.state or "unknown"] = by_state.get(t.state or "unknown", 0) + 1
    states = ", ".join(f"{n} {s}" for s, n in sorted(by_state.items()))
    connected = "connected to " + scope if section else "in " + scope
    if titled and section and not changed_only:
        connected += " or titled with '" + " ".join(titled) + "'"
    elif titled and not section:
        connected += " whose titles hold '" + " ".join(titled) + "'"
    listed = plural(len(threads), noun, nouns)
    if state:
        verb = "is" if len(threads) == 1 else "are"
        summary = f"{listed} {connected} {verb} {state}" + (
            f" (of {len(everything)}: {states})." if everything else "."
        )
    else:
        summary = f"{listed} {connected}" + (f": {states}." if everything else ".")
    if section:
        summary += (
            " A pull request is listed when a commit through it changed the section while "
            "it was changing."
            if changed_only
            else " A thread is connected when a post in it referred to the section or a commit "
            "through it changed the section while it was changing."
        )
    if isinstance(rfc, DraftFinal) and section:
        summary += became_no_rfc(rfc)
    if threads[:5]:
        summary += " Latest: " + "; ".join(f"#{t.number} {t.title}" for t in threads[:5]) + "."
    evidence.extend(
        Evidence(
            iri=t.url,
            label=f"#{t.number} {t.title} ({t.state or 'state unknown'})",
            url=t.url,
            role="pull-request" if t.is_pull_request else "issue",
        )
        for t in threads[:LISTED_THREADS]
    )
    return Answer(
        question=question,
        intent="threads",
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[
            Count(what=f"{state + ' ' if state else ''}{nouns}", count=len(threads)),
            *threads[:LISTED_THREADS],
        ],
        evidence=evidence,
        queries=session.queries,
        note=(
            "Connection, not causation: a thread listed here referred to the section or "
            "changed it while it was changing; it is not said to have caused anything."
        ),
    )
