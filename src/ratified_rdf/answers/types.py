"""The registered question types: each one's cues, the entities it needs, its queries and
its card. The router (:mod:`ratified_rdf.answers.router`) scores them in this order.

Adding a type is one :func:`register` call here (or in your own module), its ``.rq`` file and
its card function; ``Brain.ask``, ``Brain.answer``, the CLI, the server, MCP and the web page all
reach it through the registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, time

from ratified_rdf.answers import (
    diffs,
    discussion,
    documents,
    draft_finals,
    holdings,
    people,
    router,
    sections,
    thread_lists,
    threads,
    where,
)
from ratified_rdf.answers.draft_finals import DraftFinal, Final
from ratified_rdf.answers.entities import Mentions
from ratified_rdf.answers.heading_search import (
    HeadingEntry,
    HeadingHit,
    SearchResult,
    heading_terms,
    runner_ups,
)
from ratified_rdf.answers.models import (
    Alternative,
    Answer,
    ChainStep,
    CommitChange,
    Count,
    DiscussionPost,
    DocumentFacts,
    DraftedQuestion,
    Expert,
    HistoryEntry,
    Holding,
    PersonActivity,
    RevisionEntry,
    SectionActivity,
    SectionDiff,
    SectionFate,
    SectionText,
    ThreadInfo,
)
from ratified_rdf.answers.router import (
    ASKING_WORDS,
    Intent,
    QuestionType,
    Reading,
    Route,
    cue,
    register,
)
from ratified_rdf.answers.session import Session, text_of

# ---------------------------------------------------------------------------- section targets


class Target:
    """The RFC section a card is about: from its number (with the RFC chosen by the router's
    rule) or from the question's heading words, with what to say about how it was found."""

    def __init__(
        self,
        rfc: Final | None,
        number: str,
        known: HeadingEntry | None = None,
        lead: str = "",
        alternatives: list[Alternative] | None = None,
        matched: tuple[str, ...] = (),
    ) -> None:
        self.matched = matched
        """The question's words its heading matched (when found by words)."""
        self.rfc = rfc
        self.number = number
        self.known = known
        self.lead = lead
        self.alternatives = alternatives or []

    def dress(self, answer: Answer) -> Answer:
        """``answer`` with how the section was found before its summary, and the other
        readings offered."""
        return answer.model_copy(
            update={
                "summary": self.lead + answer.summary,
                "alternatives": [*answer.alternatives, *self.alternatives],
            }
        )


def target(session: Session, question: str, chosen: Route, asking: str) -> Target | Answer:
    """The section ``chosen`` is about, or the "doesn't know" answer when its words find no
    RFC section heading. ``asking`` words the alternatives ("who discussed")."""
    if chosen.section and _numbered_in_revision(chosen):
        # "I'm reading draft-20 and section 4.2.10.2 ...": the number is that revision's own;
        # the card is about the RFC section it became.
        assert chosen.draft and chosen.revision
        name = f"{chosen.draft}-{chosen.revision}"
        final = sections.final_section(session, chosen.draft, chosen.revision, chosen.section)
        if final is None:
            return holdings.out_of_scope(
                session,
                question,
                f"section {chosen.section} of {name} has no counterpart in an RFC it holds",
            )
        final_rfc, final_number = final
        known = session.from_index(lambda index: index.rfc_section(final_rfc, final_number))
        lead = f"Section {chosen.section} of {name} became RFC {final_rfc} §{final_number}. "
        return Target(final_rfc, final_number, known, lead)
    if chosen.section and (drafted := _draft_final(session, chosen, asking)) is not None:
        return drafted
    if chosen.section:
        rfc, number = chosen.rfc, chosen.section
        known = None
        if rfc is not None:
            held_rfc: int = rfc
            known = session.from_index(lambda index: index.rfc_section(held_rfc, number))
        lead = ""
        if chosen.other_rfcs and rfc is not None:
            others = ", ".join(f"RFC {n}" for n in chosen.other_rfcs)
            lead = (
                f"Section {chosen.section} exists in RFC {rfc} and {others}; this card is about "
                f"RFC {rfc}, the earliest published (ask with the RFC number for another). "
            )
        alternatives = [
            Alternative(
                question=f"{asking} RFC {other} section {chosen.section}?",
                reason=f"RFC {other} also has a section {chosen.section}",
            )
            for other in chosen.other_rfcs
        ]
        return Target(rfc, chosen.section, known, lead, alternatives)
    if session.headings is None:
        return holdings.out_of_scope(session, question, "it has no heading index to search")
    index, run = session.headings
    found = index.search(question, limit=20)
    if not any(q.name == run.name for q in session.queries):
        session.queries.append(run.model_copy(update={"reused": True}))
    # A heading matched only by words that say what is asked ("issues" in PMTU Issues for
    # "which issues are still open about ack?") is not what the question is about.
    hits = [
        hit
        for hit in index.rfc_hits(found, chosen.rfc)
        if not {word.casefold() for word in hit.matched} <= ASKING_WORDS
    ]
    if not hits:
        # A brain of drafts that became no RFC has no RFC headings to match: its drafts' last
        # revisions stand for their sections, as they do for a section asked by number.
        drafted = _draft_topic(session, found, asking) if chosen.rfc is None else None
        if drafted is not None:
            return drafted
        terms = ", ".join(found.query_terms) or "none"
        return holdings.out_of_scope(
            session, question, f"no RFC section heading matches its words (terms: {terms})"
        )
    best = hits[0]
    rfc = int(best.entry.document.removeprefix("RFC ").strip())
    lead = _matched_lead(best, best.entry.document)
    alternatives = [_runner_up(asking, hit) for hit in runner_ups(hits)[:1]]
    return Target(rfc, best.entry.number or "", best.entry, lead, alternatives, best.matched)


def _matched_lead(hit: HeadingHit, document: str) -> str:
    """How a section was found by the question's words: what they matched, in ``document``."""
    matched = ", ".join(f"'{w}'" for w in hit.matched)
    entry = hit.entry
    return (
        f"Matched the words {matched} to the heading of {document} "
        f"§{entry.number} {entry.heading}. "
    )


def _runner_up(asking: str, hit: HeadingHit) -> Alternative:
    """The question to ask (``asking`` ...) about the runner-up heading ``hit``."""
    return Alternative(
        question=f"{asking} {hit.entry.document} section {hit.entry.number}?",
        reason=(
            f"runner-up heading: {hit.entry.heading} (matched "
            + ", ".join(f"'{w}'" for w in hit.matched)
            + ")"
        ),
    )


def _draft_topic(session: Session, found: SearchResult, asking: str) -> Target | None:
    """The section of a draft that became no RFC whose heading the question's words matched
    best, read in that draft's last revision (:mod:`draft_finals`); None when no hit is a
    section of such a revision."""
    hits = [
        hit
        for hit in found.hits
        if not hit.entry.is_rfc
        and hit.entry.number
        and not {word.casefold() for word in hit.matched} <= ASKING_WORDS
    ]
    for place, hit in enumerate(hits):
        entry = hit.entry
        assert entry.number
        rows = session.run("draft_sections_numbered", sectionNumber=entry.number)
        last = next(
            (
                row
                for row in rows
                if text_of(row, "section") == entry.section and text_of(row, "label")
            ),
            None,
        )
        if last is None:
            continue  # a section of an earlier revision, gone from the last one
        final = DraftFinal(
            draft=text_of(last, "draftName") or "",
            revision=text_of(last, "revision") or "",
            label=text_of(last, "label") or "",
        )
        lead = _matched_lead(hit, final.label)
        alternatives = [
            _runner_up(asking, other)
            for other in hits[place + 1 :]
            if other.entry.document == entry.document
        ][:1]
        return Target(final, entry.number, entry, lead, alternatives, hit.matched)
    return None


def _draft_final(session: Session, chosen: Route, asking: str) -> Target | None:
    """The section numbered in the last revision of a draft that became no RFC, where no RFC
    the brain holds has it, or where the question names that draft (and no RFC)."""
    mentions = chosen.mentions
    named = chosen.draft if chosen.draft in mentions.named_drafts and not mentions.rfcs else None
    if chosen.rfc is not None and named is None:
        return None
    assert chosen.section
    found = draft_finals.draft_final_of(
        session, chosen.section, named, asking, only_named=chosen.rfc is not None
    )
    if found is None:
        return None
    final, lead, alternatives = found
    return Target(final, chosen.section, None, lead, alternatives)


def _numbered_in_revision(chosen: Route) -> bool:
    """Whether the section number of ``chosen`` is written beside a revision, not an RFC:
    it is numbered as that revision numbers it."""
    mentions = chosen.mentions
    return bool(
        chosen.draft
        and chosen.revision
        and chosen.section
        and chosen.section not in mentions.rfc_sections
        and not mentions.days
    )


def _on_section(
    asking: str, card: Callable[[Session, str, Route, Target], Answer]
) -> Callable[[Session, str, Route], Answer]:
    """An answer function for a section card: find the section, then draw the card."""

    def answer(session: Session, question: str, chosen: Route) -> Answer:
        found = target(session, question, chosen, asking)
        if isinstance(found, Answer):
            return found
        return found.dress(card(session, question, chosen, found))

    return answer


# ------------------------------------------------------------------------------------ needs


def _section(mentions: Mentions, reading: Reading) -> bool:
    return reading.has_section


def _section_number(mentions: Mentions, reading: Reading) -> bool:
    return bool(mentions.sections)


def _topic_only(mentions: Mentions, reading: Reading) -> bool:
    return not mentions.sections and reading.may_have_topic


def _document(mentions: Mentions, reading: Reading) -> bool:
    return bool(mentions.drafts or mentions.rfcs) and not mentions.sections


def _nothing(mentions: Mentions, reading: Reading) -> bool:
    return True


# ------------------------------------------------------------------------------------- cues

_COUNTED = {
    "comments": "posts",
    "comment": "posts",
    "messages": "posts",
    "message": "posts",
    "post": "posts",
    "prs": "pull requests",
    "pr": "pull requests",
    "pull request": "pull requests",
    "issues": "threads",
    "issue": "threads",
    "thread": "threads",
    "commit": "commits",
    "person": "people",
    "persons": "people",
    "contributors": "people",
    "participants": "people",
}
_COUNT_NOUN = re.compile(
    r"\b(posts?|comments?|messages?|threads?|commits?|pull requests?|prs?|people|persons?|"
    r"issues?|contributors|participants|changes?|edits)\b",
    re.IGNORECASE,
)
_STATE = re.compile(r"\b(open|still open|unresolved|closed|merged)\b", re.IGNORECASE)
_THREADS = r"(?:issues?|prs?|pull requests?|threads?)"
_STATES = r"(?:open|closed|merged|unresolved)"
_CHANGED = re.compile(
    r"\b(?:chang\w*|modif\w*|touch\w*|alter\w*|edit\w*|updat\w*|affect\w*|landed)\b", re.I
)
_THREAD_WORDS = frozenset(
    {"issue", "issues", "pr", "prs", "pull", "pulls", "request", "requests", "thread", "threads"}
)
"""Words that name the kind of thread asked for, never a title's topic."""
_NOT_A_TITLE_TOPIC = frozenset(
    heading_terms(
        " ".join(
            [
                *_THREAD_WORDS,
                *ASKING_WORDS,
                "open closed merged unresolved still about concerning regarding touch touched",
                "touching mention mentioned mentioning discuss discussing any all list show",
            ]
        )
    )
)
"""Terms that say which threads are asked for, never what their titles are about."""


def _title_topic(question: str) -> tuple[str, ...]:
    """The words of what a list of threads is about ("cookie" in "which closed issues were
    about the cookie?")."""
    return tuple(
        word
        for word in re.findall(r"[\w-]+", question)
        if (terms := heading_terms(word)) and not set(terms) <= _NOT_A_TITLE_TOPIC
    )


_THREAD_KIND = re.compile(r"\b(issues?|prs?|pull requests?|threads?)\b", re.IGNORECASE)

_NOT_HELD = re.compile(
    # Whole words outside names: "draft-ietf-x-deployment-guide" is a draft, not a deployment.
    r"(?<![\w-])(?:iesg|ballots?|vot(?:e|es|ed|ing)|telechat|meeting minutes|minutes of|agendas?|"
    r"interims?|blue ?sheets?|jabber|slack|zulip|xmpp|meetecho|(?:meeting|session|video) "
    r"recordings?|recordings of|slide decks?|presentation slides|ipr|patents?|salar(?:y|ies)|"
    r"earns?|earnings|paid|wages?|budgets?|funding|revenue|"
    r"weather|stock price|lunch|dinner|which implementations|implementations? (?:support|"
    r"status|list|report)|interop\w*|openssl|boringssl|nss|wolfssl|chrome|firefox|nginx|"
    r"cloudflare|vendors?|market share|deployment stats?|errata|last call|directorates?|secdir|"
    r"genart|opsdir|shepherd\w*|"
    # Implementations and deployments: who wrote code for a protocol is not in its record.
    # "Mandatory-to-implement" and "implementation notes" are what a document says, not this.
    # "I am implementing QPACK" asks about the spec; "who implemented it" about the world.
    r"(?:who|which|first to|anyone|anybody|been|has|have|had)\b[^.?]{0,40}?\bimplement(?:s|ed|"
    r"ing)?|implement(?:ers|ors)|implementations? (?:of|that|which|exist\w*|are|"
    r"were|support\w*|ha(?:ve|d))|(?:tls |quic |crypto |ssl |http )?librar(?:y|ies)|"
    r"browsers?|deploy(?:s|ed|ing|ments?)|adoption|usage (?:data|numbers|statistics)|"
    r"how widely|in production|"
    # Code and deployments in other words: "which TLS stacks shipped it?", "how many
    # websites use it?", "how many servers negotiate it today?".
    r"(?:tls|quic|dtls|ssl|crypto|http|network) stacks?|ship(?:s|ped|ping)|web ?sites?|"
    r"how many (?:servers|clients|sites|hosts|domains|users|connections)|"
    # Meetings, hums and last calls: none of their records is ingested.
    r"meetings?|ietf ?-?\d{2,3}|hum(?:s|med)?|bofs?|wglc|working group last call)(?![\w-])",
    re.IGNORECASE,
)
_MAIL = re.compile(
    # "the list" is the mailing list, "the list of revisions" is not.
    r"(?<![\w-])(?:mailing[- ]lists?|(?:on|to|the|tls|quic) list(?!\s+of\b)|list archives?|"
    r"e-?mails?|mails?|mail threads?|messages? (?:on|to) the list)(?![\w-])",
    re.IGNORECASE,
)
"""What a mailing list said: never ingested when the brain holds no list archive."""


def _bind_count(chosen: Route, mentions: Mentions, reading: Reading) -> Route:
    noun = _COUNT_NOUN.search(reading.text)
    what = noun.group(1).lower() if noun else "posts"
    return chosen.model_copy(update={"count": _COUNTED.get(what, what)})


def _bind_threads(chosen: Route, mentions: Mentions, reading: Reading) -> Route:
    state = _STATE.search(reading.text)
    said = state.group(1).lower() if state else None
    word = {"still open": "open", "unresolved": "open"}.get(said or "", said)
    kind = _THREAD_KIND.search(reading.text)
    noun = kind.group(1).lower().rstrip("s") if kind else ""
    counted = {"issue": "issues", "pr": "pull requests", "pull request": "pull requests"}
    changed = bool(_CHANGED.search(reading.text)) and counted.get(noun) == "pull requests"
    return chosen.model_copy(
        update={"state": word, "count": counted.get(noun), "changed_only": changed}
    )


def _bind_diff(chosen: Route, mentions: Mentions, reading: Reading) -> Route:
    numbers = [n for d, n in mentions.revisions if d == chosen.draft]
    if len(numbers) >= 2:
        older, newer = sorted(numbers[:2])
    elif len(numbers) == 1:
        older, newer = f"{int(numbers[0]) - 1:02d}", numbers[0]
    else:
        return chosen
    return chosen.model_copy(update={"older": older, "newer": newer})


# ------------------------------------------------------------------------------------ cards


def _became(session: Session, question: str, chosen: Route) -> Answer:
    if chosen.draft and chosen.revision:
        return sections.section_became(
            session, question, chosen.draft, chosen.revision, chosen.section or ""
        )
    return sections.which_revision(session, question, chosen.section or "", chosen.draft)


def _history(session: Session, question: str, chosen: Route, found: Target) -> Answer:
    if found.rfc is None:
        return sections.which_rfc(session, question, found.number)
    return sections.section_history(session, question, found.rfc, found.number)


def _at(session: Session, question: str, chosen: Route) -> Answer:
    """The text current on the day named, or the text of the revision named."""
    if chosen.valid_at is not None:
        when = datetime.combine(chosen.valid_at, time(23, 59, 59), UTC)
    elif chosen.draft and chosen.revision and not chosen.mentions.rfcs:
        if chosen.section:
            # "What did section 4.2.9 of draft-21 say?": the number is the revision's own.
            return sections.revision_text(
                session, question, chosen.draft, chosen.revision, chosen.section
            )
        return _revision_text_by_heading(session, question, chosen)
    elif chosen.draft and chosen.revision:
        rows = session.run("document_revisions", draftName=chosen.draft)
        day = next(
            (text_of(r, "date") for r in rows if text_of(r, "revisionNumber") == chosen.revision),
            None,
        )
        if day is None:
            return holdings.out_of_scope(
                session, question, f"it holds no revision {chosen.draft}-{chosen.revision}"
            )
        when = datetime.fromisoformat(day)
    else:
        return holdings.out_of_scope(session, question, chosen.reason or "it names no day")
    found = target(session, question, chosen, "what did this say:")
    if isinstance(found, Answer):
        return found
    if found.rfc is None:
        return sections.which_rfc(session, question, found.number)
    return found.dress(sections.section_at(session, question, found.rfc, found.number, when))


def _revision_text_by_heading(session: Session, question: str, chosen: Route) -> Answer:
    """What a section named by its heading's words said in the revision named ("what did
    the state machine section say in draft-41?"): the RFC section the words find, followed
    back to the number its text had in that revision."""
    assert chosen.draft and chosen.revision
    found = target(session, question, chosen, "what did this say:")
    if isinstance(found, Answer):
        return found
    if found.rfc is None:
        return sections.which_rfc(session, question, found.number)
    name = f"{chosen.draft}-{chosen.revision}"
    own = sections.revision_numbers(session, found.rfc, found.number, (name,))[0]
    if own is None:
        return holdings.out_of_scope(
            session, question, f"{name} holds no text that became RFC {found.rfc} §{found.number}"
        )
    return found.dress(
        sections.revision_text(session, question, chosen.draft, chosen.revision, own)
    )


def _numbered_in_rfc(mentions: Mentions) -> bool:
    """Whether the question names revisions but numbers its section as an RFC does ("in
    draft-20, what was RFC 8446 section 4.2.10?"): that number is not the revision's."""
    return bool(
        mentions.revisions
        and mentions.rfcs
        and mentions.sections
        and set(mentions.sections) <= set(mentions.rfc_sections)
    )


def _diff(session: Session, question: str, chosen: Route) -> Answer:
    if not (chosen.draft and chosen.older and chosen.newer):
        return holdings.out_of_scope(session, question, "it names no two revisions of one draft")
    section = chosen.section or ""
    rfc: Final | None = chosen.mentions.rfcs[0] if chosen.mentions.rfcs else None
    lead = ""
    if not chosen.section:
        found = target(session, question, chosen, "what changed between the revisions in")
        if isinstance(found, Answer):
            return found
        rfc, section, lead = found.rfc, found.number, found.lead
    if rfc is not None and (not chosen.section or _numbered_in_rfc(chosen.mentions)):
        # "RFC 8446 section 4.2.10 between -20 and -21": follow the RFC section back to its
        # number in those revisions (it was §4.2.9 there), never read 4.2.10 as theirs.
        named = (f"{chosen.draft}-{chosen.older}", f"{chosen.draft}-{chosen.newer}")
        numbers = sections.revision_numbers(session, rfc, section, named)
        own = next((n for n in numbers if n), None)
        if own is None:
            return holdings.out_of_scope(
                session,
                question,
                f"neither {named[0]} nor {named[1]} holds a text that became "
                f"{draft_finals.final_name(rfc)} §{section}",
            )
        card = diffs.section_diff(session, question, chosen.draft, chosen.older, chosen.newer, own)
        return card.model_copy(
            update={
                "summary": lead + card.summary + sections.text_not_held(session, rfc),
                "note": _DIFF_THROUGH_RFC.format(
                    name=draft_finals.final_name(rfc), section=section
                ),
            }
        )
    return diffs.section_diff(session, question, chosen.draft, chosen.older, chosen.newer, section)


_DIFF_THROUGH_RFC = (
    "{name} §{section} is followed back to the number its text had in the revisions (the "
    "alignments the history card shows), then from one revision to the other as the history "
    "card follows it (the same RFC section, else the same heading); commits are those that "
    "changed it in the revisions after the older one, up to the newer one."
)


def _discussion(session: Session, question: str, chosen: Route, found: Target) -> Answer:
    return discussion.discussion(session, question, found.rfc, found.number, None, found.known)


def _count(session: Session, question: str, chosen: Route, found: Target) -> Answer:
    answer = discussion.discussion(
        session, question, found.rfc, found.number, chosen.count or "posts", found.known
    )
    return answer.model_copy(update={"intent": "count"})


def _who_to_ask(session: Session, question: str, chosen: Route, found: Target) -> Answer:
    return people.who_to_ask(session, question, found.rfc, found.number, found.known)


def _threads(session: Session, question: str, chosen: Route) -> Answer:
    scoped = chosen.section is not None or chosen.topic
    if not scoped or (chosen.topic and session.headings is None):
        return thread_lists.thread_list(
            session, question, rfc=None, section=None, state=chosen.state, kind=chosen.count
        )
    found = target(session, question, chosen, "which threads are about")
    if isinstance(found, Answer):
        if chosen.section is None and chosen.state:
            # No heading holds its topic ("which closed issues were about the cookie?"): the
            # threads in that state whose titles hold the topic's words.
            return thread_lists.thread_list(
                session,
                question,
                rfc=None,
                section=None,
                state=chosen.state,
                kind=chosen.count,
                titled=_title_topic(question),
            )
        return found
    return found.dress(
        thread_lists.thread_list(
            session,
            question,
            rfc=found.rfc,
            section=found.number,
            state=chosen.state,
            kind=chosen.count,
            known=found.known,
            changed_only=chosen.changed_only,
            titled=tuple(w for w in found.matched if w.casefold() not in _THREAD_WORDS),
        )
    )


def _person_section(session: Session, question: str, chosen: Route, found: Target) -> Answer:
    # The person card keeps the discussion's posts and commits only: no timeline to draw.
    card = discussion.discussion(
        session, question, found.rfc, found.number, None, found.known, timeline=False
    )
    return people.person_on_section(session, question, chosen.person or "", chosen.who or "", card)


def _document_card(session: Session, question: str, chosen: Route) -> Answer:
    """The card of the draft the question names (or whose revision it names), else of the
    RFC it names."""
    mentions = chosen.mentions
    draft = chosen.draft if chosen.draft and (mentions.named_drafts or not mentions.rfcs) else None
    revision = f"{draft}-{chosen.revision}" if draft and chosen.revision else None
    return documents.document_card(
        session, question, draft, None if draft else chosen.rfc, revision=revision
    )


def _where(session: Session, question: str, chosen: Route) -> Answer:
    if session.headings is None:
        return holdings.out_of_scope(session, question, "it has no heading index to search")
    index, run = session.headings
    session.queries.append(run.model_copy(update={"reused": True}))
    return where.where_is(session, question, chosen.rfc, index)


def _revisions(session: Session, question: str, chosen: Route) -> Answer:
    return sections.revisions(session, question, chosen.draft or "")


def _entity(session: Session, question: str, chosen: Route) -> Answer:
    """The card of the one thing a question names when no type's cues fit it."""
    mentions = chosen.mentions
    if mentions.people and mentions.sections:
        return _on_section("who discussed", _person_section)(session, question, chosen)
    if mentions.threads:
        answer = threads.thread_lookup(session, question, mentions.threads[0])
    elif mentions.revisions and mentions.sections:
        answer = _became(session, question, chosen)
    elif mentions.sections:
        answer = _on_section("history of", _history)(session, question, chosen)
    elif mentions.people:
        answer = people.person_lookup(session, question, chosen.who or "")
    elif mentions.drafts or mentions.rfcs:
        answer = _document_card(session, question, chosen)
    elif chosen.topic:
        answer = _on_section("history of", _history)(session, question, chosen)
    else:
        return holdings.out_of_scope(session, question, "no question this brain answers matches it")
    lead = (
        "The question names something the brain holds but asks nothing a card type answers; "
        "here is its card. "
    )
    return answer.model_copy(update={"intent": "entity", "summary": lead + answer.summary})


def _out_of_scope(session: Session, question: str, chosen: Route) -> Answer:
    return holdings.out_of_scope(session, question, chosen.reason or "it is out of scope")


def _not_held(session: Session, question: str, chosen: Route) -> Answer:
    said = _NOT_HELD.search(question) or _MAIL.search(question)
    what = said.group(0).lower() if said else "issues" if _ISSUES.search(question) else "that"
    what = next((kind or what for stem, kind in _KINDS if stem in what), what)
    reason = (
        f"it never ingested records of {what} (it reads drafts, RFCs, git history and "
        "the discussion sources its manifest names)"
    )
    mentions = chosen.mentions
    named = [
        *(f"RFC {n}" for n in mentions.rfcs),
        *(f"{d}-{n}" for d, n in mentions.revisions),
        *(d for d in mentions.drafts if all(d != r for r, _ in mentions.revisions)),
    ]
    if not named:
        return holdings.out_of_scope(session, question, reason)
    # The question names a document the brain holds: say what it can show about it.
    about = ", ".join(dict.fromkeys(named))
    answer = holdings.out_of_scope(
        session,
        question,
        f"{reason}; about {about} it holds the text of its revisions and sections, how each "
        "section became the RFC's, and the commits and discussion the manifest's sources "
        "connect to them",
    )
    return answer.model_copy(
        update={
            "alternatives": [
                Alternative(question=f"tell me about {name}", reason=f"the card of {name}")
                for name in dict.fromkeys(named)
            ]
        }
    )


_KINDS: tuple[tuple[str, str | None], ...] = (
    # Kinds named as they were asked ("meeting minutes", "interim"): kept as written.
    ("minutes", None),
    ("recording", None),
    ("interim", None),
    ("implement", "implementations"),
    ("librar", "implementations"),
    ("browser", "implementations"),
    ("stack", "implementations"),
    ("ship", "implementations"),
    ("deploy", "deployments"),
    ("site", "deployments"),
    ("how many", "deployments"),
    ("adoption", "deployments"),
    ("usage", "deployments"),
    ("widely", "deployments"),
    ("production", "deployments"),
    ("meeting", "meetings"),
    ("bof", "meetings"),
    ("ietf", "meetings"),
    ("hum", "hums"),
    ("wglc", "last calls"),
    ("last call", "last calls"),
    ("mail", "a mailing list"),
    ("list", "a mailing list"),
)
"""The kind of record a never-ingested question's words ask for, to name it in the card."""


def _never_ingested(mentions: Mentions, reading: Reading) -> bool:
    """Whether the question asks about a kind of record the brain never ingested: one no
    brain holds, or what a mailing list said when it holds no list archive."""
    if _NOT_HELD.search(reading.text):
        return True
    gazetteer = reading.gazetteer
    if gazetteer is None or gazetteer.permissive:
        return False
    if not gazetteer.mail and _MAIL.search(reading.text):
        return True
    return not gazetteer.issues and _ISSUES.search(reading.text) is not None


_ISSUES = re.compile(
    rf"\b(?:(?:still )?{_STATES}|which|what|list|show|any|all)(?: me)?(?: the| of the)? issues\b|"
    rf"\bissues (?:are|were|still) (?:still )?{_STATES}\b",
    re.IGNORECASE,
)
"""A question asking for issues, which a brain without any answers with "doesn't know"."""


# ------------------------------------------------------------------------------ registrations

_DISCUSSED = (
    "headings",
    "rfc_sections_from",
    "draft_sections_numbered",
    "section_posts",
    "section_commits",
    "post_authors",
    "section_later_commits",
    "commit_details",
    "pull_requests",
    "pull_request_people",
    "section_editors",
    "section_group",
    "group_officers",
)
"""What the discussion of a section runs (the why, count and person-on-section cards)."""

register(
    QuestionType(
        intent=Intent.NOT_HELD,
        answers="Says the graph doesn't know about kinds of record it never ingests.",
        cues=(cue(_NOT_HELD.pattern, 6), cue(_MAIL.pattern, 6), cue(_ISSUES.pattern, 6)),
        needs=_never_ingested,
        uses=0,
        answer=_not_held,
        queries=("holdings", "documents"),
        results=(Holding,),
    )
)
register(
    QuestionType(
        intent=Intent.HOLDINGS,
        answers="What the graph holds.",
        cues=(
            cue(
                r"\bwhat (?:do you|does (?:the|this) (?:graph|brain)|can you) (?:know|hold|cover)",
                5,
            ),
            cue(r"\bwhat(?:'s| is) in (?:the|this) (?:graph|brain)\b", 5),
            cue(r"\bwhat can (?:i|you) ask\b", 5),
            cue(
                r"\b(?:how many|number of|count of)\b.{0,40}\b(?:in|does|do|has|have) "
                r"(?:the |this )?(?:graph|brain)\b|\b(?:graph|brain) (?:holds?|contains?|has)\b",
                5,
            ),
        ),
        needs=_nothing,
        uses=0,
        answer=lambda s, q, r: holdings.holdings(s, q),
        queries=("holdings", "documents", "gazetteer_threads", "held_gaps"),
        results=(Holding,),
    )
)
register(
    QuestionType(
        intent=Intent.SECTION_AT,
        answers="What a section said on a day: the text of the revision current then.",
        cues=(
            cue(
                r"\b(?:say|said|says|read|reads|text|word|words|wording|worded|look(?:ed)? like|"
                r"written|contents?|as of|as it stood|as it was|what was)\b",
                3,
            ),
            cue(r"\b(?:on|at|by) \d{4}-\d{2}-\d{2}\b", 1.5),
        ),
        # A revision's text of a section named by number, or by its heading's words.
        needs=lambda m, r: bool(
            (m.days and r.has_section and not m.revisions)
            or (m.revisions and not m.days and r.has_section)
        ),
        uses=2,
        answer=_at,
        queries=("section_texts", "rfc_section", "section_text", "draft_sections_numbered"),
        results=(SectionText,),
    )
)
register(
    QuestionType(
        intent=Intent.SECTION_DIFF,
        asked="what changed in section {section} between {draft}-{older} and {draft}-{newer}?",
        answers="What changed in a section between two revisions, with the commits between.",
        cues=(
            cue(r"\bbetween\b", 3),
            cue(r"\b(?:diff|differ\w*|compare\w*|comparison|vs\.?|versus)\b", 3),
            cue(r"\bfrom\b.*\bto\b", 2),
            cue(r"\bchang\w*\b", 1),
        ),
        # A section by number, or by its heading's words ("what changed in key share between
        # draft 17 and draft 18"): followed back to its numbers in the two revisions.
        needs=lambda m, r: len(m.revisions) >= 2 and r.has_section,
        uses=3,
        answer=_diff,
        queries=(
            "section_commits",
            "commit_details",
            "pull_requests",
            "section_counterpart",
            "section_text",
            "rfc_sections_from",
            "draft_sections_numbered",
        ),
        results=(SectionDiff, CommitChange),
        bind=_bind_diff,
    )
)
register(
    QuestionType(
        intent=Intent.SECTION_BECAME,
        asked="what did section {section} of {draft}-{revision} become in the RFC?",
        answers="What a revision's section became in the RFC (or which revision to ask about).",
        cues=(
            cue(
                r"\b(?:becom\w*|became|end(?:ed|s)? up|turn(?:ed|s)? into|in the rfc|final\w*|"
                r"where did (?:it|that|this)|where is (?:it|that) now|now|map(?:s|ped)? to|"
                r"(?:numbered|number|called|named) in (?:the )?(?:rfc|final)|"
                r"correspond\w*|what happened to|fate)\b",
                3,
            ),
        ),
        needs=lambda m, r: (
            bool(m.sections and (m.revisions or m.drafts or not m.rfcs)) and not _numbered_in_rfc(m)
        ),
        uses=2,
        base=1,
        answer=_became,
        queries=("section_became", "revision_chain"),
        results=(SectionFate, ChainStep),
    )
)
register(
    QuestionType(
        intent=Intent.WHO_TO_ASK,
        asked="who should I ask about RFC {rfc} section {section}?",
        answers="Who to ask about a section: the people central to its discussion, then its "
        "editors and the group's officers.",
        cues=(
            cue(
                r"\bwhom? (?:should|could|can|do|would|might) (?:i|we|one) (?:ask|talk to|"
                r"contact|reach|email|ping|consult)\b|\bwho to (?:ask|contact)\b|\bwho knows\b|"
                r"\bexperts? (?:on|in|about|for)\b|\bwho(?:'s| is) the expert\b|"
                r"\bwho (?:are|were) the experts\b|"
                r"\b(?:contact|point of contact|go-to person)\b|\bask about\b|"
                # "who would know", "who can tell me about", "the person to talk to",
                # "someone I could consult": someone to ask, however it is put.
                r"\bwho (?:would|might|could|may|will) know\b|"
                r"\bwho (?:can|could|would|might) (?:tell|explain|help)\b|"
                r"\b(?:person|people|one|someone|somebody|anyone|anybody)"
                r"(?: (?:to|i|we|should|could|can|might|would|may)){0,3} (?:ask|talk to|"
                r"talk with|speak to|speak with|consult|contact|reach out to)\b",
                3,
            ),
        ),
        needs=_section,
        uses=1,
        answer=_on_section("who should I ask about", _who_to_ask),
        queries=(
            "section_experts",
            "section_editors",
            "group_officers",
            "rfc_section",
            "headings",
            "section_group",
            "rfc_sections_from",
            "draft_sections_numbered",
        ),
        results=(Expert, DraftedQuestion),
    )
)
register(
    QuestionType(
        intent=Intent.EXPERTS,
        answers="Who knows most about the whole brain's subject, from the stored scores.",
        cues=(
            cue(
                r"\bwho (?:knows|know) (?:the )?most\b|\b(?:top|main|key|biggest|most active|"
                r"leading) (?:contributors?|experts?|people|participants|authors)\b|"
                r"\bwho (?:are|were) the (?:experts|main people|key people)\b|"
                r"\bwho (?:contributed|participated|commented|posted|worked) (?:the )?most\b|"
                r"\b(?:has|have) (?:contributed|worked|done) (?:the )?most\b|"
                r"\bknows? .{0,40}\bbest\b|\brank\w*\b.{0,40}\b(?:people|contributors|experts)\b|"
                r"\bmost (?:active|involved|prolific|influential|central)\b|\bexperts\b|"
                r"\b(?:people|who) (?:matter|mattered|count|counted)(?: the)? most\b|"
                r"\bmost important (?:people|contributors|participants|voices)\b",
                4,
            ),
        ),
        needs=lambda m, r: not m.sections and not m.people and r.topic is None,
        uses=0,
        answer=lambda s, q, r: people.experts(s, q),
        queries=("top_people",),
        results=(Expert, DraftedQuestion),
    )
)
register(
    QuestionType(
        intent=Intent.COUNT,
        answers="How many posts, threads, commits, pull requests or people a section had.",
        cues=(cue(r"\bhow many\b|\bnumber of\b|\bcount\b|\btally\b|\bhow much\b", 3),),
        needs=_section,
        uses=1,
        answer=_on_section("how many posts referred to", _count),
        queries=_DISCUSSED,
        results=(Count, DiscussionPost, CommitChange, PersonActivity, Expert),
        bind=_bind_count,
    )
)
register(
    QuestionType(
        intent=Intent.THREADS,
        answers="The issues and pull requests connected to a section, or all of them, by state.",
        cues=(
            cue(
                rf"\b(?:still )?{_STATES} {_THREADS}\b",
                4,
            ),
            cue(
                rf"\b{_THREADS} (?:are|is|were|still) (?:still )?{_STATES}\b",
                4,
            ),
            cue(
                rf"\b(?:which|what|list|show|any|all)(?: me)?(?: the| of the)? {_THREADS}\b",
                3,
            ),
            cue(
                rf"\b{_THREADS} (?:that )?(?:chang\w*|touch\w*|modif\w*|alter\w*|edit\w*|"
                r"updat\w*|affect\w*|about|on|for|concerning|mention\w*|discuss\w*)\b",
                3,
            ),
        ),
        needs=lambda m, r: not m.threads and not m.people,
        uses=1,
        answer=_threads,
        queries=(
            "gazetteer_threads",
            "section_posts",
            "section_commits",
            "documents",
            "headings",
            "holdings",
            "draft_sections_numbered",
        ),
        results=(Count, ThreadInfo),
        bind=_bind_threads,
    )
)
register(
    QuestionType(
        intent=Intent.PERSON_SECTION,
        answers="What one person did on one section while it was changing.",
        cues=(
            cue(
                r"\b(?:chang\w*|work\w*|commit\w*|touch\w*|edit\w*|wr[io]te|writ\w*|do|did|does|"
                r"contribut\w*|discuss\w*|say|said|post\w*|comment\w*)\b",
                2,
            ),
        ),
        needs=lambda m, r: bool(m.people) and r.has_section,
        uses=2,
        base=1,
        answer=_on_section("who discussed", _person_section),
        queries=_DISCUSSED,
        results=(PersonActivity, CommitChange, DiscussionPost),
    )
)
register(
    QuestionType(
        intent=Intent.SECTION_HISTORY,
        asked="history of RFC {rfc} section {section}",
        answers="A section's history: its number, heading and similarity in every revision.",
        cues=(
            cue(
                r"\b(?:history|evolv\w*|evolution|over time|renumber\w*|lineage|timeline|trace)\b",
                3,
            ),
            cue(
                r"\b(?:earlier|previous|older|past|former|other) (?:section )?(?:texts?|versions?|"
                r"revisions?|numbers?|numberings?|names?|headings?)\b",
                3,
            ),
            cue(r"\b(?:revisions?|versions?) of (?:rfc|section|sec\.?|§)", 3),
            cue(r"\bhow (?:did|has|have) .{0,80}\bchang\w*\b", 2),
            cue(r"\b(?:was|were|been) (?:it |this |that )?(?:renamed|moved|numbered|called)\b", 2),
            cue(r"\bwhen did .{0,60}\b(?:settle|stabili[sz]e|stop changing|freeze)\b", 3),
            cue(r"\bstill valid\b|\bchang\w*\b", 1),
        ),
        needs=_section,
        uses=1,
        answer=_on_section("history of", _history),
        queries=(
            "section_history",
            "rfc_section",
            "rfc_sections_numbered",
            "headings",
            "section_posts",
            "section_commits",
            "post_authors",
            "commit_details",
            "pull_requests",
            "rfc_published",
            "rfc_sections_from",
            "draft_sections_numbered",
        ),
        results=(HistoryEntry, DiscussionPost, CommitChange, DocumentFacts),
    )
)
register(
    QuestionType(
        intent=Intent.DISCUSSION,
        asked="who discussed RFC {rfc} section {section}?",
        answers="The posts, threads, commits and people connected to a section while it changed.",
        cues=(
            cue(
                r"\b(?:discuss\w*|talk\w*|debat\w*|argu\w*|conversation\w*|rationale|reasoning|"
                r"motivat\w*|why|how come|look(?:s)? like (?:this|that)|this way|that way|"
                r"while it was (?:still )?changing|consensus|controvers\w*|"
                r"(?:said|say|wrote|commented|posted) about|feedback|concerns?|objections?|"
                r"backstory|background|story|context|origins?|motivation)\b",
                2,
            ),
            cue(r"\bwho (?:changed|touched|worked on|commented on|edited|wrote)\b", 2),
            # "which commits changed §2.3?" asks for the commits, which this card lists; the
            # history card's weak "changed" must not take it. Nor "list the commits that
            # changed §7.1" nor "commits that touched §2.3".
            cue(
                r"\b(?:which|what) commits?\b|"
                r"\b(?:list|show|give|find)(?: me)?(?: all)?(?: of)?(?: the)? commits?\b|"
                r"\bcommits? (?:that|which) (?:changed|touched|modified|edited|went into)\b",
                2,
            ),
            cue(
                r"\b(?:posts?|comments?|commits?|pull requests?|prs?|people|threads?|reviews?)\b", 1
            ),
            cue(r"\bwho\b", 1),
        ),
        needs=_section,
        uses=1,
        answer=_on_section("who discussed", _discussion),
        queries=(*_DISCUSSED, "section_history", "rfc_published"),
        results=(
            DiscussionPost,
            CommitChange,
            PersonActivity,
            HistoryEntry,
            DocumentFacts,
            Expert,
            DraftedQuestion,
        ),
    )
)
register(
    QuestionType(
        intent=Intent.THREAD,
        asked="what is #{number}?",
        answers="An issue or pull request by number: its state, author and the sections it "
        "changed.",
        cues=(),
        needs=lambda m, r: bool(m.threads or m.unknown_threads) and not m.sections,
        uses=1,
        base=2,
        answer=lambda s, q, r: threads.thread_lookup(s, q, r.number or 0),
        queries=("thread", "thread_changes"),
        results=(ThreadInfo, SectionActivity),
    )
)
register(
    QuestionType(
        intent=Intent.DOCUMENT,
        answers="A draft's or RFC's facts: the RFC it became and when, its editors, what it "
        "replaced or obsoletes, its revisions.",
        cues=(
            cue(
                r"\b(?:becom\w*|became|turn(?:ed|s)? into|end(?:ed|s)? up|published|publish\w*|"
                r"publication|come out|came out|released|issued|editors?|authors?|wrote|"
                r"written by|byline|obsolet\w*|replac\w*|supersed\w*|successor|predecessor|"
                r"what rfc|which rfc|rfc number|status)\b",
                3,
            ),
            cue(r"\bwhen\b|\bwho\b|\bwhat is\b|\btell me about\b|\bdescribe\b", 1),
            # A count of revisions is a fact of the document (with its first and last).
            cue(r"\bhow many (?:revisions|versions|drafts|times|iterations)\b", 5),
        ),
        needs=_document,
        uses=1,
        answer=_document_card,
        queries=("document_facts", "draft_editors"),
        results=(DocumentFacts, DraftedQuestion),
    )
)
register(
    QuestionType(
        intent=Intent.WHERE_IS,
        answers="Which section covers a topic: found by its heading, with the runner-up.",
        cues=(
            cue(
                r"\b(?:which|what) (?:section|part|chapter)\b|\bwhere (?:is|are|does|do|can|in)\b|"
                r"\b(?:specified|defined|described|covered|explained|documented)\b|"
                r"\b(?:covers?|specif(?:y|ies)|defines?|describes?)\b|\bfind the section\b|"
                r"\bsection (?:about|on|for|that)\b",
                3,
            ),
        ),
        needs=_topic_only,
        uses=1,
        answer=_where,
        queries=("headings",),
        results=(HistoryEntry,),
    )
)
register(
    QuestionType(
        intent=Intent.REVISION_CHAIN,
        asked="what chain leads from {draft}-{revision} to the RFC?",
        answers="The chain of revisions from one revision (or a draft's first) to the RFC.",
        cues=(
            cue(
                r"\b(?:chain|lead\w* to|path|route|steps?|journey|follow\w*|superseded|"
                r"came after|what came next|successors?|next revisions?|get to the rfc|road to|"
                r"up to the rfc|trac(?:e|ed|es|ing)|track\w*|(?<!in)to (?:the|its) rfc)\b",
                4,
            ),
            # "how did draft-x-40 get to RFC 9147?", "when did it reach the RFC?"
            cue(
                r"\b(?:get|gets|got|getting|reach\w*|make it|made it)\s+(?:to\s+)?"
                r"(?:the |its )?rfc\b",
                4,
            ),
        ),
        # A draft named without a revision is traced from its first revision.
        needs=lambda m, r: bool(m.revisions or m.drafts) and not m.sections,
        uses=1,
        answer=lambda s, q, r: sections.revision_chain(s, q, r.draft or "", r.revision),
        queries=("revision_chain",),
        results=(ChainStep,),
    )
)
register(
    QuestionType(
        intent=Intent.REVISIONS,
        asked="revisions of {draft}",
        answers="The revisions of a draft, with dates and links.",
        cues=(
            cue(r"\b(?:revisions?|versions|drafts|iterations)\b", 3),
            cue(
                # "every" and "each" take the singular: "list every version of the draft".
                r"\b(?:list|every|all|enumerate|show|give)\b.{0,40}\b(?:revisions?|versions)\b|"
                r"\b(?:every|each)\s+(?:single\s+)?version\b|"
                r"\b(?:revisions?|versions|iterations)\b.{0,60}\b(?:published|released|posted|"
                r"were there|exist)\b",
                4,
            ),
        ),
        needs=lambda m, r: bool(m.drafts) and not m.sections,
        uses=1,
        answer=_revisions,
        queries=("document_revisions",),
        results=(RevisionEntry,),
    )
)
register(
    QuestionType(
        intent=Intent.PERSON,
        answers="What a person worked on: the sections they posted and committed on most.",
        cues=(
            cue(
                r"\bwho is\b|\bwho was\b|\bwhat (?:did|has|does)\b|\bwhich sections\b|"
                r"\bwork(?:ed)? on\b|\bactivity\b|\bcontributions?\b|\bprofile\b",
                2,
            ),
        ),
        needs=lambda m, r: bool(m.people) and not r.has_section,
        uses=1,
        base=1,
        answer=lambda s, q, r: people.person_lookup(s, q, r.who or ""),
        queries=("person", "person_activity"),
        results=(SectionActivity, PersonActivity, DraftedQuestion),
    )
)

ENTITY = QuestionType(
    intent=Intent.ENTITY,
    answers="The card of what the question names, when no type's cues fit.",
    cues=(),
    needs=lambda m, r: m.held,
    uses=0,
    answer=_entity,
    queries=("document_facts", "section_history", "thread", "person_activity"),
    results=(DocumentFacts, HistoryEntry, ThreadInfo, SectionActivity),
)
"""The fallback for a question that names something held (not in the scored registry)."""

OUT_OF_SCOPE = QuestionType(
    intent=Intent.OUT_OF_SCOPE,
    answers="The graph doesn't know; what it holds.",
    cues=(),
    needs=_nothing,
    uses=0,
    answer=_out_of_scope,
    queries=("holdings", "documents"),
    results=(Holding,),
)
"""The fallback for everything else."""


def question_type(intent: Intent | str) -> QuestionType:
    """The type of ``intent``: a registered one, or a fallback."""
    fallbacks = {Intent.ENTITY: ENTITY, Intent.OUT_OF_SCOPE: OUT_OF_SCOPE}
    for name, kind in fallbacks.items():
        if intent == name:
            return kind
    return router.question_type(intent)


_NEVER_AMBIGUOUS = frozenset({Intent.OUT_OF_SCOPE, Intent.NOT_HELD, Intent.HOLDINGS})


def answer(session: Session, question: str, chosen: Route) -> Answer:
    """The card of the type ``chosen`` names; a question about a kind of record never
    ingested gets "the graph doesn't know", and a revision written short that several drafts
    hold gets the card that asks which, never one of their answers."""
    mentions = chosen.mentions
    if chosen.intent not in _NEVER_AMBIGUOUS and _NOT_HELD.search(question):
        # The first rule, kept where the card is made: whatever chose this type, a question
        # about a kind of record no brain ingests gets "the graph doesn't know".
        return _not_held(session, question, chosen)
    if mentions.ambiguous and not mentions.revisions and chosen.intent not in _NEVER_AMBIGUOUS:
        number, drafts = mentions.ambiguous[0]
        return sections.which_series(session, question, str(chosen.intent), number, drafts)
    return question_type(chosen.intent).answer(session, question, chosen)
