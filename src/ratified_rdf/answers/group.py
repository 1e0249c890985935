"""Questions across a working group's repositories (a group brain, :mod:`ratified_rdf.group`).

Which documents cite or depend on an RFC or one of its sections, what updates or obsoletes an
RFC, what the group published in a year, who worked most on a topic across the group, and what
the group holds per repository (with what it lacks). Which section of which document covers a
topic, and a person's work, are the built-in types' (``where_is``, ``person``): on a group brain
they read every member's documents and records.
Each is a registered question type like those in :mod:`~ratified_rdf.answers.types`; importing
this module registers them. They read the edges a group build writes between documents, so on
a brain of one repository they answer from that repository alone.
"""

from __future__ import annotations

import re

from pyoxigraph import NamedNode

# The built-in types register first: on a tie they keep the question (REGISTRY order).
from ratified_rdf.answers import types as _types  # noqa: F401
from ratified_rdf.answers.entities import Mentions
from ratified_rdf.answers.holdings import holdings as brain_holdings
from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import (
    Answer,
    Count,
    DocumentFacts,
    Evidence,
    Expert,
    Holding,
    Result,
    RevisionEntry,
    Verdict,
)
from ratified_rdf.answers.router import QuestionType, Reading, Route, cue, register
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.answers.wording import plural
from ratified_rdf.graph import vocab as v

__all__ = ["CITING", "HOLDINGS", "PUBLISHED", "TOPIC_PEOPLE", "UPDATES"]

CITING = "group_citing"
HOLDINGS = "group_holdings"
UPDATES = "group_updates"
PUBLISHED = "group_published"
TOPIC_PEOPLE = "group_topic_people"

_YEAR = re.compile(r"\b(19[89]\d|20\d\d)\b")
# "who knows most about ECH?", "who worked most on record size limits" : the topic after it.
_TOPIC = re.compile(
    r"\bwho (?:knows|worked|works|wrote|contributed)(?: the)? most (?:about|on|to) "
    r"(?:the )?(?P<topic>[\w .\-]+?)\s*(?:across|in|of)?\s*(?:the )?(?:group|wg)?\s*\??$",
    re.IGNORECASE,
)


def _rfc(mentions: Mentions) -> int | None:
    """The RFC a question names, held by the brain or not (a group cites RFCs it lacks)."""
    named = [*mentions.rfcs, *mentions.unknown_rfcs]
    return named[0] if named else None


def _section(route: Route) -> str | None:
    mentions = route.mentions
    return route.section or next(iter([*mentions.rfc_sections, *mentions.sections]), None)


def _revision(row: dict, how: str | None = None) -> RevisionEntry:
    return RevisionEntry(
        label=text_of(row, "label") or "",
        revision_number=text_of(row, "revisionNumber") or "",
        date=(text_of(row, "date") or "")[:10],
        url=text_of(row, "page") or "",
        became=how,
    )


def citing(session: Session, question: str, route: Route) -> Answer:
    """The drafts (their last revisions) that cite or depend on an RFC or one of its sections."""
    number = route.rfc or _rfc(route.mentions)
    if number is None:
        return out_of_scope(session, question, "it names no RFC")
    rfc = f"rfc{number}"
    section = _section(route)
    target = v.rfc_section_url(rfc, section) if section else v.document_iri(rfc)
    rows = session.run("group_citing", target=NamedNode(target))
    what = f"RFC {number}" + (f" Section {section}" if section else "")
    if not rows:
        return _unknown(
            session,
            question,
            CITING,
            f"No draft's last revision in this brain cites {what}.",
            note="Read from each draft's last revision written in markdown (its reference "
            "lists and section citations); XML and text revisions are not read for them yet.",
        )
    results = [_revision(row, text_of(row, "how")) for row in rows]
    hows = {(text_of(row, "draftName") or "", text_of(row, "how")) for row in rows}
    drafts = sorted({d for d, _ in hows})
    normative = sorted({d for d, h in hows if h == "normative"})
    verb = "cites" if len(drafts) == 1 else "cite"
    summary = f"{plural(len(drafts), 'draft')} {verb} {what} in the last revision read: "
    summary += f"{', '.join(drafts)}."
    if normative and not section:
        summary += f" Normatively (they depend on it): {', '.join(normative)}."
    evidence = [
        Evidence(iri=text_of(row, "revision") or "", label=r.label, url=r.url, role="revision")
        for row, r in zip(rows, results, strict=True)
    ]
    evidence.append(
        Evidence(
            iri=target,
            label=what,
            url=v.rfc_section_url(rfc, section) if section else v.rfc_url(rfc),
            role="rfc-section" if section else "rfc",
        )
    )
    return Answer(
        question=question,
        intent=CITING,
        verdict=Verdict.ANSWERED,
        summary=summary,
        results=[Count(what=f"drafts citing {what}", count=len(drafts)), *results],
        evidence=evidence,
        queries=session.queries,
        note="A citation in the text or a reference list, read from each draft's last "
        "revision written in markdown: a connection, not a judgement of how much it depends.",
    )


def updates(session: Session, question: str, route: Route) -> Answer:
    """The drafts whose metadata says they update or obsolete an RFC, and RFCs that did."""
    number = route.rfc or _rfc(route.mentions)
    if number is None:
        return out_of_scope(session, question, "it names no RFC")
    rfc = f"rfc{number}"
    rows = session.run("group_updates", target=NamedNode(v.document_iri(rfc)))
    if not rows:
        return _unknown(
            session,
            question,
            UPDATES,
            f"Nothing in this brain says it updates or obsoletes RFC {number}.",
        )
    results = [_revision(row, text_of(row, "how")) for row in rows]
    told = "; ".join(f"{r.label} ({r.became})" for r in results)
    return Answer(
        question=question,
        intent=UPDATES,
        verdict=Verdict.ANSWERED,
        summary=f"{plural(len(results), 'document')} say{'s' if len(results) == 1 else ''} it "
        f"updates or obsoletes RFC {number}: {told}.",
        results=list[Result](results),
        evidence=[
            Evidence(iri=text_of(row, "document") or "", label=r.label, url=r.url, role="revision")
            for row, r in zip(rows, results, strict=True)
        ],
        queries=session.queries,
        note="A draft's updates/obsoletes metadata says what it proposes; it takes effect when "
        "the draft is published as an RFC.",
    )


def published(session: Session, question: str, route: Route) -> Answer:
    """The RFCs a group published in the year the question names, and its revisions then."""
    found = _YEAR.search(question)
    if found is None:
        return out_of_scope(session, question, "it names no year")
    year = found.group(1)
    rfcs = session.run("group_published", year=year)
    revisions = session.run("group_revisions_in_year", year=year)
    documents = [
        DocumentFacts(
            name=f"RFC {text_of(row, 'rfcNumber')}",
            title=text_of(row, "title"),
            url=text_of(row, "page") or "",
            is_rfc=True,
            rfc_number=int(text_of(row, "rfcNumber") or 0),
            published=text_of(row, "issued"),
        )
        for row in rfcs
    ]
    if not documents and not revisions:
        return _unknown(
            session,
            question,
            PUBLISHED,
            f"This brain holds no RFC published and no revision posted in {year}.",
        )
    listed = ", ".join(f"{d.name} ({d.published}, {d.title})" for d in documents) or "no RFC"
    return Answer(
        question=question,
        intent=PUBLISHED,
        verdict=Verdict.ANSWERED,
        summary=f"In {year} the brain's repositories published {listed}, and posted "
        f"{plural(len(revisions), 'draft revision')}.",
        results=[
            Count(what=f"RFCs published in {year}", count=len(documents)),
            *documents,
            Count(what=f"draft revisions posted in {year}", count=len(revisions)),
            *(_revision(row) for row in revisions),
        ],
        evidence=[
            Evidence(iri=text_of(row, "rfc") or "", label=d.name, url=d.url, role="rfc")
            for row, d in zip(rfcs, documents, strict=True)
        ],
        queries=session.queries,
        note="RFCs by the publication month their records give; revisions by their date.",
    )


def _about(topic: str, name: str, title: str) -> bool:
    """Whether a draft of this name and title is about ``topic``: the topic is part of its
    name or title, or, written in capitals (ECH), the initials of consecutive capitalised
    words of its title (TLS *E*ncrypted *C*lient *H*ello), as a draft's acronym is made."""
    folded = topic.casefold()
    if folded in name.casefold() or folded in title.casefold():
        return True
    if not re.fullmatch(r"[A-Z]{3,8}", topic):
        return False
    initials = ""
    for word in [*title.split(), ""]:  # a run of capitalised words ends at any other word
        if word[:1].isupper():
            initials += word[0]
            continue
        if topic in initials:
            return True
        initials = ""
    return False


def topic_people(session: Session, question: str, route: Route) -> Answer:
    """Who worked most on the drafts whose name or title holds the question's topic."""
    found = _TOPIC.search(question.strip())
    topic = found.group("topic").strip() if found else ""
    if not topic:
        return out_of_scope(session, question, "it names no topic")
    drafts = tuple(
        NamedNode(text_of(row, "draft") or "")
        for row in session.run("group_drafts")
        if _about(topic, text_of(row, "draftName") or "", text_of(row, "title") or "")
    )
    rows = session.run("group_topic_people", draft=drafts) if drafts else []
    if not rows:
        return _unknown(
            session,
            question,
            TOPIC_PEOPLE,
            f"No draft in this brain has {topic!r} in its name or title, nor as its title's "
            "initials.",
        )
    people = [
        Expert(
            name=text_of(row, "name") or "",
            iri=text_of(row, "person") or "",
            role="editor" if int(text_of(row, "revisions") or 0) else "participant",
            reason=f"{plural(int(text_of(row, 'commits') or 0), 'commit')} and "
            f"{plural(int(text_of(row, 'revisions') or 0), 'bylined revision')} of "
            f"{', '.join((text_of(row, 'drafts') or '').split())}",
            commits=int(text_of(row, "commits") or 0),
        )
        for row in rows
    ]
    top = ", ".join(f"{p.name} ({p.reason})" for p in people[:5])
    return Answer(
        question=question,
        intent=TOPIC_PEOPLE,
        verdict=Verdict.ANSWERED,
        summary=f"Most work on the drafts about {topic!r} across the brain's repositories: {top}.",
        results=list(people),
        evidence=[Evidence(iri=p.iri, label=p.name, url=None, role="person") for p in people],
        queries=session.queries,
        note="Activity in the record (commits that landed in the drafts' revisions and bylines), "
        "not a measure of knowledge.",
    )


_HELD = (
    ("drafts", "drafts"),
    ("rfcs", "RFCs"),
    ("revisions", "revisions"),
    ("sections", "sections"),
)
# (column, what a result counts, the column naming them, the noun, what is wrong with them)
_LACKING = (
    ("missingRevisions", "revisions named but not held", "missingNames", "revision", "not held"),
    ("rfcTextsNotHeld", "RFC texts not held", "textlessNumbers", "RFC", "without its own text"),
    ("unreadFiles", "unread files", None, "file", "not read"),
)


def holdings(session: Session, question: str, route: Route) -> Answer:
    """What each member repository of a group brain holds, and what it lacks; a brain of one
    repository answers with its own holdings."""
    rows = session.run("group_holdings")
    if not rows:
        return brain_holdings(session, question).model_copy(update={"intent": HOLDINGS})
    results: list[Result] = []
    said = []
    for row in rows:
        name = (text_of(row, "page") or "").rstrip("/").rsplit("/", 1)[-1]
        held = [(what, int(text_of(row, key) or 0)) for key, what in _HELD]
        results += [Holding(what=f"{what} in {name}", count=count) for what, count in held]
        lacking = []
        for key, what, names, noun, wrong in _LACKING:
            count = int(text_of(row, key) or 0)
            listed = (text_of(row, names) or "").split() if names else []
            if key == "rfcTextsNotHeld":
                listed = [f"RFC {n}" for n in listed]
            results.append(Holding(what=f"{what} in {name}", count=count, names=listed))
            if count:
                lacking.append(f"{plural(count, noun)} {wrong}")
        line = f"{name}: " + ", ".join(plural(count, what.rstrip("s")) for what, count in held)
        said.append(line + (f"; lacks {', '.join(lacking)}" if lacking else "; lacks nothing read"))
    return Answer(
        question=question,
        intent=HOLDINGS,
        verdict=Verdict.ANSWERED,
        summary=f"The brain holds {plural(len(rows), 'repository', 'repositories')}. "
        + ". ".join(said)
        + ".",
        results=results,
        evidence=[
            Evidence(
                iri=text_of(row, "repository") or "",
                label=text_of(row, "page") or "",
                url=text_of(row, "page"),
                role="repository",
            )
            for row in rows
        ],
        queries=session.queries,
        note="Lacking: revisions a draft's record names that no file in the repository holds, "
        "RFCs whose own text is not in the records, and files on the default branch that "
        "look like a draft's text but no manifest entry reads.",
    )


_ACROSS = re.compile(
    r"\b(?:across|in|of) (?:the|this|our) (?:group|wg|working group)\b|\bacross (?:the )?repositor",
    re.IGNORECASE,
)


def _names_topic(reading: Reading) -> bool:
    """Whether a "who knows most about X" question is about the topic of some drafts: it says
    "across the group", or X is part of the name of a draft a group brain holds. Otherwise the
    whole brain's experts answer it, or a section's when X finds a heading; and an X made only
    of the brain's own subject words ("TLS") is the whole brain's subject. A brain of one
    repository answers such a question as it always has (its experts) unless it says "across
    the group": there the drafts' name words are the repository's own ("tls" in
    draft-ietf-tls-tls13) and would take every question about its subject."""
    found = _TOPIC.search(reading.text.strip())
    gazetteer = reading.gazetteer
    if found is None or gazetteer is None or reading.topic is not None:
        return False
    words = {w.casefold() for w in re.findall(r"\w+", found.group("topic"))}
    if not words or words <= gazetteer.subject_words:
        return False
    if _ACROSS.search(reading.text) is not None:
        return True
    parts = {p for name in gazetteer.drafts for p in name.split("-")[2:]}
    # The group's and the subject's own words are in every draft's name: they name no topic.
    return gazetteer.group and bool((words - gazetteer.groups - gazetteer.subject_words) & parts)


def _names_rfc(mentions: Mentions, _reading: Reading) -> bool:
    return _rfc(mentions) is not None


register(
    QuestionType(
        intent=CITING,
        answers="Which documents cite or depend on an RFC or one of its sections, across a group.",
        cues=(
            cue(
                r"\b(?:which|what) (?:documents?|drafts?|specs?|rfcs?) (?:cite|cites|citing|"
                r"depend|depends|reference|references|refer to|rel(?:y|ies) on|build on)\b",
                4,
            ),
            cue(r"\b(?:cite[sd]?|citing|depends? on|depending on|referenc\w+)\b", 2),
        ),
        needs=_names_rfc,
        uses=1,
        answer=citing,
        queries=("group_citing",),
        results=(Count, RevisionEntry),
        examples=(
            "which documents depend on RFC 8446 section 4.2.11?",
            "which drafts cite RFC 8446?",
        ),
    )
)
register(
    QuestionType(
        intent=UPDATES,
        answers="What updates or obsoletes an RFC, from drafts' metadata and RFCs' records.",
        cues=(cue(r"\b(?:what|which)\b.{0,30}\b(?:updates?|obsolet\w*)\b", 4),),
        needs=lambda m, r: _rfc(m) is not None and not m.sections,
        uses=1,
        answer=updates,
        queries=("group_updates",),
        results=(RevisionEntry,),
        examples=("what updates RFC 8446?",),
    )
)
register(
    QuestionType(
        intent=PUBLISHED,
        answers="What a group published in a year: its RFCs then, and its revisions posted.",
        cues=(cue(r"\bpublish\w*\b.{0,40}\b(?:19[89]\d|20\d\d)\b", 4),),
        needs=lambda m, r: not m.sections and _YEAR.search(r.text) is not None,
        uses=0,
        answer=published,
        queries=("group_published", "group_revisions_in_year"),
        results=(Count, DocumentFacts, RevisionEntry),
        examples=("what did the group publish in 2022?",),
    )
)
register(
    QuestionType(
        intent=TOPIC_PEOPLE,
        answers="Who worked most on the drafts about a topic, across a group's repositories.",
        cues=(cue(_TOPIC.pattern, 5),),
        needs=lambda m, r: not m.sections and not m.people and _names_topic(r),
        uses=0,
        answer=topic_people,
        queries=("group_drafts", "group_topic_people"),
        results=(Expert,),
        examples=("who knows most about ECH?",),
    )
)

register(
    QuestionType(
        intent=HOLDINGS,
        answers="What a group brain holds per repository, and what each lacks.",
        cues=(
            cue(
                r"\b(?:per|each|every|by) repositor(?:y|ies)\b|"
                r"\b(?:which|what) repositor(?:y|ies)\b.{0,40}\b(?:hold|have|has|lack|miss)\w*",
                6,  # more than "what does the brain hold": it says how to split the answer
            ),
        ),
        needs=lambda m, r: not m.sections and not m.people,
        uses=0,
        answer=holdings,
        # On a brain of one repository, its own holdings card answers (holdings.py's).
        queries=("group_holdings", "holdings", "documents", "gazetteer_threads", "held_gaps"),
        results=(Holding,),
        examples=("what does the brain hold per repository?",),
    )
)


def _unknown(
    session: Session, question: str, intent: str, summary: str, note: str | None = None
) -> Answer:
    """The card of a group question the brain holds nothing for: what it looked for, and the
    queries that found nothing."""
    return Answer(
        question=question,
        intent=intent,
        verdict=Verdict.UNKNOWN,
        summary=summary,
        queries=session.queries,
        note=note,
    )
