"""Answers about documents as wholes: the RFC a draft became and when it was published, who
edited it (per revision, from the bylines), what it replaced and what an RFC obsoletes, and
its revisions; the same facts make the card of a draft or RFC named with no other question."""

from __future__ import annotations

from collections.abc import Iterable

from ratified_rdf.answers.holdings import out_of_scope
from ratified_rdf.answers.models import Answer, DocumentFacts, DraftedQuestion, Evidence, Verdict
from ratified_rdf.answers.session import Session, text_of
from ratified_rdf.answers.wording import drafted_question, plural
from ratified_rdf.graph import vocab as v


def _join(names: list[str]) -> str:
    if len(names) <= 2:
        return " and ".join(names)
    return ", ".join(names[:-1]) + f" and {names[-1]}"


def facts(
    session: Session, draft: str | None, rfc: int | None
) -> tuple[DocumentFacts, list[Evidence]] | None:
    """The facts of ``draft`` (when given) or RFC ``rfc``, and the links they rest on; None
    when the graph holds no such document."""
    name = draft or f"rfc{rfc}"
    rows = session.run("document_facts", document=v.document_iri(name))
    if not rows:
        return None
    first = rows[0]
    related: dict[str, list[str]] = {}
    for row in rows:
        relation, other = text_of(row, "relation"), text_of(row, "otherName")
        if relation and other and other not in related.setdefault(relation, []):
            related[relation].append(other)
    is_rfc = draft is None
    number = rfc if is_rfc else (int(text_of(first, "becameNumber") or 0) or None)
    issued = text_of(first, "issued")
    drafts = related.get("drafts", []) if is_rfc else [draft or ""]
    editors: list[str] = []
    bylines: dict[str, list[str]] = {}
    revisions: list[dict[str, str | None]] = []
    evidence: list[Evidence] = []
    for series in drafts:
        by_revision: dict[str, list[str]] = {}
        pages: dict[str, tuple[str, str, str]] = {}
        for row in session.run("draft_editors", draftName=series):
            label = text_of(row, "label") or ""
            by_revision.setdefault(label, [])
            who = text_of(row, "name")
            if who and who not in by_revision[label]:
                by_revision[label].append(who)
            pages[label] = (
                text_of(row, "revision") or "",
                text_of(row, "page") or "",
                (text_of(row, "date") or "")[:10],
            )
        bylines.update(by_revision)
        for label, (iri, page, day) in pages.items():
            revisions.append({"label": label, "date": day, "iri": iri, "page": page})
        if by_revision:
            last = max(by_revision)
            editors = by_revision[last] or editors
            iri, page, _ = pages[last]
            evidence.append(Evidence(iri=iri, label=f"{last} (byline)", url=page, role="revision"))
    revisions.sort(key=lambda r: (r["date"] or "", r["label"] or ""))
    document = DocumentFacts(
        name=f"RFC {rfc}" if is_rfc else name,
        title=text_of(first, "title"),
        url=text_of(first, "page") or "",
        is_rfc=is_rfc,
        rfc_number=number,
        published=issued[:7] if issued else None,
        editors=editors,
        bylines=bylines,
        revisions=len(revisions),
        first_revision=revisions[0]["label"] if revisions else None,
        first_date=revisions[0]["date"] if revisions else None,
        last_revision=revisions[-1]["label"] if revisions else None,
        last_date=revisions[-1]["date"] if revisions else None,
        replaces=related.get("replaces", []),
        replaced_by=related.get("replaced_by", []),
        obsoletes=related.get("obsoletes", []),
        obsoleted_by=related.get("obsoleted_by", []),
        drafts=related.get("drafts", []) if is_rfc else [],
    )
    links = [
        Evidence(
            iri=v.document_iri(name),
            label=document.name,
            url=document.url,
            role="rfc" if is_rfc else "draft",
        )
    ]
    if not is_rfc and number:
        links.append(
            Evidence(
                iri=v.document_iri(f"rfc{number}"),
                label=f"RFC {number}",
                url=v.rfc_url(f"rfc{number}"),
                role="rfc",
            )
        )
    return document, links + evidence


def describe(document: DocumentFacts) -> str:
    """The facts in sentences, most asked first."""
    parts: list[str] = []
    if document.is_rfc:
        parts.append(
            f"{document.name} ({document.title or 'untitled'}) was published"
            + (f" in {document.published}" if document.published else "")
            + "."
        )
        if document.drafts:
            parts.append(f"It came from {_join(document.drafts)}.")
    else:
        if document.rfc_number:
            parts.append(
                f"{document.name} became RFC {document.rfc_number}"
                + (f", published in {document.published}" if document.published else "")
                + "."
            )
        else:
            parts.append(f"{document.name} became no RFC the graph records.")
    for field, words in (
        ("replaces", "It replaced"),
        ("replaced_by", "It was replaced by"),
        ("obsoletes", "It obsoletes"),
        ("obsoleted_by", "It is obsoleted by"),
    ):
        if getattr(document, field):
            parts.append(f"{words} {_join(getattr(document, field))}.")
    if document.is_rfc and not document.obsoletes:
        parts.append("It obsoletes no RFC the graph records.")
    if document.editors:
        where = (
            f"the byline of {document.last_revision}" if document.last_revision else "its byline"
        )
        parts.append(f"Editors ({where}): {_join(document.editors)}.")
        everyone = sorted({n for names in document.bylines.values() for n in names})
        earlier = [n for n in everyone if n not in document.editors]
        if earlier:
            parts.append(f"Earlier bylines also named {_join(earlier)}.")
    if document.revisions:
        parts.append(
            f"{plural(document.revisions, 'revision')}, from {document.first_revision} "
            f"({document.first_date}) to {document.last_revision} ({document.last_date})."
        )
    return " ".join(parts)


def document_card(
    session: Session,
    question: str,
    draft: str | None,
    rfc: int | None,
    intent: str = "document",
    revision: str | None = None,
) -> Answer:
    """The facts of one draft or RFC as a card; with ``revision`` (a revision's name, e.g.
    ``draft-example-pigeon-01``, which the question named), that revision's date first."""
    found = facts(session, draft, rfc)
    if found is None:
        named = draft or f"RFC {rfc}"
        return out_of_scope(session, question, f"it holds no document {named}")
    document, evidence = found
    lead = ""
    if draft and revision:
        dated = _revision_date(session, draft, revision)
        if dated is None:
            held = _revision_ranges(draft, document.bylines) or "none"
            return out_of_scope(
                session, question, f"it holds no revision {revision} (of {draft}, it holds {held})"
            )
        day, link = dated
        lead = f"{revision} is dated {day} in the record" if day else f"{revision} is held"
        byline = document.bylines.get(revision)
        lead += f"; its byline names {_join(byline)}. " if byline else ". "
        if all(e.iri != link.iri for e in evidence):
            evidence = [*evidence, link]
    results: list[DocumentFacts | DraftedQuestion] = [document]
    if document.editors:
        # The card names the editors: it drafts the question for them, as a why card does.
        results.append(
            drafted_question(
                question,
                document.name,
                document.editors,
                evidence,
                "The record names you on the byline of its last revision.",
                # The card answers the facts asked for ("who are its editors?"): the note
                # asks the editors what only they can say.
                asking=f"how did {document.name} come to say what it says, and where were "
                "its main decisions made?",
            )
        )
    return Answer(
        question=question,
        intent=intent,
        verdict=Verdict.ANSWERED,
        summary=lead + describe(document),
        results=list(results),
        evidence=evidence,
        queries=session.queries,
        note=(
            "Publication months and what became what are the records' public facts "
            "(records/<brain>/manifest.toml); editors are the names on each revision's byline."
        ),
    )


def _revision_date(session: Session, draft: str, revision: str) -> tuple[str, Evidence] | None:
    """The date the record gives revision ``revision`` of ``draft`` (its posting date, else
    its tag's commit's: ``draft_editors`` reads ``prov:generatedAtTime``) and its link; None
    when the draft holds no such revision."""
    for row in session.run("draft_editors", draftName=draft):
        if text_of(row, "label") == revision:
            link = Evidence(
                iri=text_of(row, "revision") or "",
                label=revision,
                url=text_of(row, "page") or "",
                role="revision",
            )
            return (text_of(row, "date") or "")[:10], link
    return None


def _revision_ranges(draft: str, labels: Iterable[str]) -> str:
    """The revisions ``labels`` name, as runs of numbers: "-00, -06 to -25"; a revision git
    does not number is named whole."""
    numbers: list[int] = []
    others: list[str] = []
    for label in sorted(labels):
        tail = label.removeprefix(f"{draft}-")
        if tail.isdigit() and len(tail) == 2:
            numbers.append(int(tail))
        else:
            others.append(label)
    runs: list[str] = []
    for number in numbers:
        if runs and runs[-1].endswith(f"{number - 1:02d}"):
            start = runs[-1].split(" to ")[0]
            runs[-1] = f"{start} to -{number:02d}"
        else:
            runs.append(f"-{number:02d}")
    return ", ".join([*runs, *others])
