"""Discussion records → RDF: threads, posts and accounts (SIOC), citations, commit evidence.

Threads go in batches of a few dozen with their posts and citations, commits in batches of a
few hundred: small enough that a rejected batch names a handful of records, large enough that
the gate's fixed cost per validation stays small.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.mapping import (
    XSD_BOOL,
    XSD_DT,
    XSD_INT,
    Batch,
    RunContext,
    section_iris,
)
from ratified_rdf.graph.vocab import term
from ratified_rdf.records.discussion import (
    CitationRecord,
    CommitEvidence,
    DiscussionRecords,
    SectionRef,
    github_post_key,
    mail_post_key,
)
from ratified_rdf.records.identity import (
    NOT_A_PERSON_EMAILS,
    Identity,
    PeopleLookup,
    PeopleTable,
    normalise_email,
)
from ratified_rdf.records.models import SpecRecords
from ratified_rdf.sources.git_history import CommitRecord
from ratified_rdf.sources.github_archive import GitHubArchive
from ratified_rdf.sources.mail import MailMessage, archive_links_in

THREADS_PER_BATCH = 40
COMMITS_PER_BATCH = 250


class SectionIris:
    """Section IRIs by (document name, position), for records that point at sections."""

    def __init__(self, spec: SpecRecords) -> None:
        self._docs = {
            r.name: (v.revision_iri(r.draft, r.number), r.document) for r in spec.revisions
        }
        self._docs.update({r.name: (v.document_iri(r.name), r.document) for r in spec.rfcs})
        self._cache: dict[str, list[str]] = {}

    def document(self, name: str) -> str:
        """The IRI of a revision or RFC by name."""
        return self._docs[name][0]

    def __call__(self, ref: SectionRef) -> str:
        if ref.document not in self._cache:
            iri, parsed = self._docs[ref.document]
            self._cache[ref.document] = section_iris(iri, parsed)
        return self._cache[ref.document][ref.position]


class PeopleIndex:
    """Person IRIs by identity, login or address, from a resolved people table."""

    def __init__(self, table: PeopleTable) -> None:
        self.table = table
        self._keys = PeopleLookup(table)

    def iri(self, identity: Identity) -> str | None:
        """The IRI of the person holding ``identity``, if the table knows it."""
        return _iri(self._keys.identity(identity))

    def login(self, login: str) -> str | None:
        """The IRI of the person holding a GitHub login."""
        return _iri(self._keys.login(login))

    def email(self, address: str | None) -> str | None:
        """The IRI of the one person known under ``address`` (a mail sender), if any."""
        return _iri(self._keys.email(address))


def _iri(key: str | None) -> str | None:
    return v.person_iri(key) if key else None


def people_batch(table: PeopleTable, run: RunContext) -> Batch:
    """Every resolved person, with each merge's rule and evidence (graph ``people``)."""
    batch = Batch(run.graph("people"), f"{len(table.people)} people resolved from identities")
    for person in table.people:
        iri = v.person_iri(person.key)
        batch.add(iri, "rdf:type", term("foaf:Person").value)
        batch.text(iri, "foaf:name", person.name)
        for email in person.emails:
            batch.add(iri, "foaf:mbox", f"mailto:{email}")
        for identity in person.identities:
            batch.text(iri, "rr:knownAs", identity.label)
        for merge in person.merges:
            # Named by what it says, not its place in the list: a group reads the people of
            # several repositories at once, and the same person's merges there must not meet.
            said = hashlib.sha256(f"{merge.rule}\n{merge.evidence}".encode()).hexdigest()
            node = f"{iri}/merge/{said[:16]}"
            batch.add(node, "rdf:type", term("rr:IdentityMerge").value)
            batch.add(node, "rr:mergedInto", iri)
            batch.text(node, "rr:mergeRule", merge.rule)
            batch.text(node, "rr:evidence", merge.evidence)
    return batch


@dataclass(frozen=True)
class MapContext:
    """What a source's mapping writes with: the run, the sections a post can cite, the
    people a post's writer can be, and every resolved citation by post key."""

    run: RunContext
    spec: SpecRecords
    sections: SectionIris
    people: PeopleIndex
    citations: Mapping[str, Sequence[CitationRecord]]

    @classmethod
    def of(cls, discussion: DiscussionRecords, spec: SpecRecords, run: RunContext) -> MapContext:
        """The context for mapping one read of the discussion in ``run``."""
        citations: dict[str, list[CitationRecord]] = {}
        for citation in discussion.citations:
            citations.setdefault(citation.post, []).append(citation)
        return cls(run, spec, SectionIris(spec), PeopleIndex(discussion.people), citations)

    @property
    def repository(self) -> str:
        """The repository's URL, as the manifest gives it."""
        return self.spec.brain.repository

    def graph(self, source: str) -> str:
        """The named graph of ``source`` in this run."""
        return self.run.graph(source)

    def add_citations(self, batch: Batch, post_iri: str, post_key: str) -> None:
        """The citations of the post keyed ``post_key`` (minted at ``post_iri``): the
        resolved ones with their section, the others with the reason they did not resolve."""
        _citations(batch, post_iri, self.citations.get(post_key, ()), self.sections)


class MapsPosts(Protocol):
    """A source as :func:`discussion_batches` maps it (the mapping half of
    :class:`ratified_rdf.sources.base.Source`)."""

    @property
    def name(self) -> str:
        """The source's name: its graph's, and its key in ``DiscussionRecords.posts``."""
        ...

    def batches(self, read: Any, context: MapContext) -> Iterator[Batch]:
        """What the source read, as batches for its graph."""
        ...


def discussion_batches(
    discussion: DiscussionRecords,
    spec: SpecRecords,
    run: RunContext,
    sources: Sequence[MapsPosts],
) -> Iterator[Batch]:
    """People (graph ``people``), then each source's posts and citations in the order given
    (graphs ``github``, ``mail``, a registered source's), then commit evidence (graph
    ``git``)."""
    context = MapContext.of(discussion, spec, run)
    yield people_batch(discussion.people, run)
    for source in sources:
        if source.name in discussion.posts:
            yield from source.batches(discussion.posts[source.name], context)
    yield from commit_batches(discussion, context)


def github_batches(archive: GitHubArchive, context: MapContext) -> Iterator[Batch]:
    """GitHub's threads, a few dozen a batch, with their posts and citations (graph
    ``github``)."""
    repository = context.repository
    people = context.people
    threads = archive.threads
    issues = {t.number for t in threads if t.kind == "issue"}
    for start in range(0, len(threads), THREADS_PER_BATCH):
        chunk = threads[start : start + THREADS_PER_BATCH]
        batch = Batch(
            context.graph("github"),
            f"GitHub threads #{chunk[0].number}–#{chunk[-1].number} of {repository}",
        )
        for thread in chunk:
            iri = v.thread_iri(repository, thread.number)
            kind = "rr:PullRequest" if thread.kind == "pull" else "rr:Issue"
            batch.add(iri, "rdf:type", term(kind).value)
            # Typed as a sioc:Thread too: shapes see no subclass reasoning.
            batch.add(iri, "rdf:type", term("sioc:Thread").value)
            batch.typed(iri, "rr:threadNumber", thread.number, XSD_INT)
            batch.text(iri, "dcterms:title", thread.title)
            batch.add(iri, "foaf:page", thread.url)
            batch.typed(iri, "dcterms:created", thread.created, XSD_DT)
            batch.text(iri, "rr:state", thread.state)
            for label in thread.labels:
                batch.text(iri, "rr:githubLabel", label)
            if thread.merged:
                batch.typed(iri, "rr:mergedAt", thread.merged, XSD_DT)
            if thread.merged_by:
                batch.add(iri, "rr:mergedBy", _account(batch, thread.merged_by, people))
            if thread.author:
                batch.add(iri, "sioc:has_creator", _account(batch, thread.author, people))
            for issue in thread.fixes:
                if issue in issues:
                    batch.add(iri, "rr:fixesIssue", v.thread_iri(repository, issue))
            for post in thread.posts:
                post_iri = v.post_iri(repository, thread.number, post.index)
                batch.add(post_iri, "rdf:type", term("sioc:Post").value)
                batch.add(post_iri, "sioc:has_container", iri)
                batch.typed(post_iri, "dcterms:created", post.created, XSD_DT)
                batch.add(post_iri, "foaf:page", post.url)
                batch.text(post_iri, "rr:postKind", post.kind)
                batch.text(post_iri, "sioc:content", post.body)
                if post.reply_to is not None:
                    batch.add(
                        post_iri,
                        "sioc:reply_of",
                        v.post_iri(repository, thread.number, post.reply_to),
                    )
                if post.author:
                    batch.add(post_iri, "sioc:has_creator", _account(batch, post.author, people))
                for link in archive_links_in(post.body):
                    message = v.mail_link_iri(link)
                    if message is not None:
                        batch.add(message, "rdf:type", term("rr:MailMessage").value)
                        batch.add(message, "foaf:page", link)
                        batch.add(post_iri, "sioc:links_to", message)
                context.add_citations(batch, post_iri, github_post_key(thread.number, post.index))
        yield batch


def commit_batches(discussion: DiscussionRecords, context: MapContext) -> Iterator[Batch]:
    """Commit evidence, a few hundred commits a batch (graph ``git``): linked to the pull
    requests GitHub's archive holds, or, without one, to those the history names."""
    repository = context.repository
    threads = discussion.archive.threads
    pulls = {t.number for t in threads if t.kind == "pull"}
    commits = discussion.commits
    merged = {} if threads else _merged_pull_requests(commits)
    pulls |= set(merged)
    for start in range(0, len(commits), COMMITS_PER_BATCH):
        chunk = commits[start : start + COMMITS_PER_BATCH]
        batch = Batch(
            context.graph("git"), f"commits {start + 1}–{start + len(chunk)} of {repository}"
        )
        for evidence in chunk:
            _commit(batch, evidence, repository, context.sections, pulls, context.people)
            number = evidence.commit.pull_request
            if number is not None and merged.get(number) is evidence:
                _merged_pull_request(batch, number, evidence, repository, context.people)
        yield batch


def _merged_pull_requests(commits: Sequence[CommitEvidence]) -> dict[int, CommitEvidence]:
    """Without a GitHub archive, the pull requests the history itself names: number → the
    commit that merged it (GitHub's "Merge pull request #N" merge, else a squash "… (#N)")."""
    found: dict[int, CommitEvidence] = {}
    for evidence in commits:
        number = evidence.commit.pull_request
        if number is None:
            continue
        earlier = found.get(number)
        if earlier is None or (
            len(evidence.commit.parents) > 1 and len(earlier.commit.parents) < 2
        ):
            found[number] = evidence
    return found


def _merged_pull_request(
    batch: Batch, number: int, evidence: CommitEvidence, repository: str, people: PeopleIndex
) -> None:
    """A pull request known only from the commit that merged it: its number, its title as the
    merge message gives it, its page, when it was merged, and the commit it is read from,
    attributed (``prov:wasAttributedTo``) to the person who merged it when git says who."""
    commit = evidence.commit
    iri = v.thread_iri(repository, number)
    batch.add(iri, "rdf:type", term("rr:PullRequest").value)
    batch.add(iri, "rdf:type", term("sioc:Thread").value)
    batch.typed(iri, "rr:threadNumber", number, XSD_INT)
    batch.text(iri, "dcterms:title", _merged_title(commit.subject, commit.message, number))
    batch.add(iri, "foaf:page", f"{repository.rstrip('/')}/pull/{number}")
    batch.typed(iri, "rr:mergedAt", commit.committed_at, XSD_DT)
    merge = v.commit_iri(repository, evidence.public_commit or commit.commit)
    batch.add(iri, "prov:wasDerivedFrom", merge)
    merger = _merger(commit)
    person = people.iri(merger) if merger is not None else None
    if person is not None:
        batch.add(merge, "prov:wasAttributedTo", person)


def _merger(commit: CommitRecord) -> Identity | None:
    """Who merged a pull request, as its merge or squash commit records it: the committer,
    who put the commit on the branch; but GitHub's web-flow commits what is merged on its
    site, and then a merge commit's author is who pressed the button, while a squash commit's
    author is the pull request's (who merged it is not in git, so no one is named)."""
    if (normalise_email(commit.committer_email) or "") not in NOT_A_PERSON_EMAILS:
        if commit.committer_name or commit.committer_email:
            return Identity(
                kind="git", name=commit.committer_name or None, email=commit.committer_email or None
            )
        return None
    if len(commit.parents) < 2 or not (commit.author_name or commit.author_email):
        return None
    return Identity(kind="git", name=commit.author_name or None, email=commit.author_email or None)


def _merged_title(subject: str, message: str, number: int) -> str:
    """The pull request's title: the line GitHub writes under "Merge pull request #N from …",
    or a squash commit's subject without its "(#N)"."""
    if subject.startswith("Merge pull request"):
        body = [line.strip() for line in message.splitlines()[1:] if line.strip()]
        return body[0] if body else f"Pull request #{number}"
    return subject.removesuffix(f"(#{number})").strip() or f"Pull request #{number}"


def _citations(
    batch: Batch, post_iri: str, records: Sequence[CitationRecord], sections: SectionIris
) -> None:
    """A post's citations: resolved ones with their section, the others with their reason."""
    for citation in records:
        cite = v.citation_iri(post_iri, citation.start)
        batch.add(cite, "rr:inPost", post_iri)
        batch.text(cite, "rr:citedText", citation.text)
        if citation.target is None:
            batch.add(cite, "rdf:type", term("rr:UnresolvedCitation").value)
            batch.text(cite, "rr:reason", citation.unresolved or "did not resolve")
            continue
        target = sections(citation.target)
        batch.add(cite, "rdf:type", term("rr:SectionCitation").value)
        batch.add(cite, "rr:citesSection", target)
        batch.text(cite, "rr:citationRule", citation.rule)
        batch.typed(cite, "rr:whileChanging", citation.while_changing, XSD_BOOL)
        batch.typed(cite, "rr:aboutPublished", citation.about_published, XSD_BOOL)
        if citation.while_changing:
            batch.add(post_iri, "rr:discussedWhileChanging", target)
        elif citation.about_published:
            batch.add(post_iri, "rr:discussedAfterPublication", target)


def mail_batches(messages: Sequence[MailMessage], context: MapContext) -> Iterator[Batch]:
    """One batch per list: threads and messages, with their citations (graph ``mail``)."""
    people = context.people
    by_list: dict[str, list[MailMessage]] = {}
    for message in messages:
        by_list.setdefault(message.list_name, []).append(message)
    for list_name, held_messages in sorted(by_list.items()):
        batch = Batch(context.graph("mail"), f"{len(held_messages)} messages of list {list_name}")
        held = {m.message_id: m for m in held_messages}
        for message in held_messages:
            iri = v.mail_message_iri(list_name, _token(message))
            root = held.get(message.thread_root, message)
            thread = v.mail_thread_iri(list_name, _token(root))
            batch.add(thread, "rdf:type", term("sioc:Thread").value)
            batch.add(thread, "rdf:type", term("rr:MailThread").value)
            batch.text(thread, "dcterms:title", root.subject)
            batch.add(thread, "foaf:page", root.permalink or "")
            batch.add(iri, "rdf:type", term("sioc:Post").value)
            batch.add(iri, "rdf:type", term("rr:MailMessage").value)
            batch.add(iri, "sioc:has_container", thread)
            batch.typed(iri, "dcterms:created", message.date, XSD_DT)
            batch.add(iri, "foaf:page", message.permalink or "")
            batch.text(iri, "rr:postKind", "message")
            batch.text(iri, "dcterms:title", message.subject)
            batch.text(iri, "sioc:content", message.body)
            parent = held.get(message.in_reply_to or "")
            if parent is not None:
                batch.add(iri, "sioc:reply_of", v.mail_message_iri(list_name, _token(parent)))
            person = people.email(message.sender_address)
            if person is not None:
                batch.add(iri, "dcterms:creator", person)
            elif message.sender_address and message.sender_name:
                sender = v.mail_sender_iri(message.sender_address)
                batch.add(sender, "rdf:type", term("foaf:Agent").value)
                batch.text(sender, "foaf:name", message.sender_name)
                batch.add(iri, "dcterms:creator", sender)
            context.add_citations(batch, iri, mail_post_key(message.message_id))
        yield batch


def _token(message: MailMessage) -> str:
    return (message.permalink or "").rstrip("/").rsplit("/", 1)[-1]


def _commit(
    batch: Batch,
    evidence: CommitEvidence,
    repository: str,
    sections: SectionIris,
    pulls: set[int],
    people: PeopleIndex,
) -> None:
    """A commit's evidence; a "#N" that names an issue, not a pull request, is not linked."""
    commit = evidence.commit
    public = evidence.public_commit or commit.commit
    iri = v.commit_iri(repository, public)
    batch.add(iri, "rdf:type", term("rr:Commit").value)
    batch.text(iri, "rr:commitId", public)
    batch.typed(iri, "prov:generatedAtTime", commit.committed_at, XSD_DT)
    batch.add(iri, "foaf:page", v.commit_url(repository, public))
    batch.text(iri, "dcterms:title", commit.subject)
    person = people.iri(
        Identity(kind="git", name=commit.author_name or None, email=commit.author_email or None)
    )
    if person is not None:
        batch.add(iri, "dcterms:creator", person)
    for landed in evidence.landed or ((evidence.landed_in,) if evidence.landed_in else ()):
        batch.add(iri, "rr:landedIn", sections.document(landed))
    for section in evidence.sections:
        batch.add(iri, "rr:changedSection", sections(section))
    for section in evidence.after_publication:
        batch.add(iri, "rr:changedAfterPublication", sections(section))
    for number in evidence.pull_requests:
        if number in pulls:
            batch.add(iri, "rr:inPullRequest", v.thread_iri(repository, number))


def _account(batch: Batch, login: str, people: PeopleIndex) -> str:
    iri = v.account_iri("github", login)
    batch.add(iri, "rdf:type", term("sioc:UserAccount").value)
    batch.text(iri, "foaf:accountName", login)
    person = people.login(login)
    if person is not None:
        batch.add(iri, "sioc:account_of", person)
    return iri
