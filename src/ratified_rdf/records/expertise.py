"""Who knows what: people ranked by how central they were to each section's discussion.

Activity is what the graph can show: posts that referred to a section while it was still
changing, and commits that changed it, credited to the RFC section the text became. Two people
who were active on the same section are linked in a co-discussion projection, written in both
directions so PageRank does not collapse to an order of names. Scores are computed with
networkx (PageRank, personalised per section by activity; betweenness on each section's own
participants) and stored back in the graph with the computation's provenance.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations

import networkx as nx
from pydantic import BaseModel, ConfigDict

from ratified_rdf.records.discussion import DiscussionRecords, SectionRef
from ratified_rdf.records.identity import PeopleLookup
from ratified_rdf.records.models import SpecRecords

ALGORITHM = (
    "networkx.pagerank(alpha=0.85, weight=shared sections) on the co-discussion projection, "
    "personalised by each section's activity; networkx.betweenness_centrality on each "
    "section's participants"
)


class ExpertiseScore(BaseModel):
    """One person's standing, overall (``section`` None) or on one RFC section."""

    model_config = ConfigDict(frozen=True)

    person: str
    """The person's key in the people table."""
    section: SectionRef | None
    posts: int
    commits: int
    pagerank: float
    betweenness: float


class ExpertiseRecords(BaseModel):
    """Every score of one computation."""

    model_config = ConfigDict(frozen=True)

    algorithm: str
    scores: tuple[ExpertiseScore, ...]


def compute_expertise(discussion: DiscussionRecords, spec: SpecRecords) -> ExpertiseRecords:
    """Rank people overall and per RFC section from posts and commits while text changed."""
    activity = _activity(discussion, spec)
    sections: dict[SectionRef, Counter[str]] = defaultdict(Counter)
    for (person, section), (posts, commits) in activity.items():
        sections[section][person] += posts + commits
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted({person for person, _ in activity}))
    for participants in sections.values():
        for a, b in combinations(sorted(participants), 2):
            for u, v in ((a, b), (b, a)):
                weight = graph.get_edge_data(u, v, {"weight": 0})["weight"]
                graph.add_edge(u, v, weight=weight + 1)
    scores: list[ExpertiseScore] = []
    if graph.number_of_nodes() == 0:
        return ExpertiseRecords(algorithm=ALGORITHM, scores=())
    overall = nx.pagerank(graph, alpha=0.85, weight="weight")
    between = nx.betweenness_centrality(graph.to_undirected(), normalized=True)
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (person, _section), (posts, commits) in activity.items():
        totals[person][0] += posts
        totals[person][1] += commits
    for person in sorted(totals):
        scores.append(
            ExpertiseScore(
                person=person,
                section=None,
                posts=totals[person][0],
                commits=totals[person][1],
                pagerank=round(overall[person], 6),
                betweenness=round(between.get(person, 0.0), 6),
            )
        )
    for section in sorted(sections, key=lambda s: (s.document, s.position)):
        participants = sections[section]
        personal = {p: participants.get(p, 0) for p in graph.nodes}
        ranked = nx.pagerank(graph, alpha=0.85, weight="weight", personalization=personal)
        local = nx.betweenness_centrality(graph.subgraph(participants).to_undirected())
        for person in sorted(participants):
            posts, commits = activity[(person, section)]
            scores.append(
                ExpertiseScore(
                    person=person,
                    section=section,
                    posts=posts,
                    commits=commits,
                    pagerank=round(ranked[person], 6),
                    betweenness=round(local.get(person, 0.0), 6),
                )
            )
    return ExpertiseRecords(algorithm=ALGORITHM, scores=tuple(scores))


def _activity(
    discussion: DiscussionRecords, spec: SpecRecords
) -> dict[tuple[str, SectionRef], tuple[int, int]]:
    """(person key, final RFC section) → (posts, commits) while the text was changing."""
    people = PeopleLookup(discussion.people)
    final_of = {
        (a.source_document, a.source_position): SectionRef(
            document=a.target_rfc, position=a.target_position
        )
        for a in spec.alignments
        if a.target_position is not None
    }
    rfcs = {r.name for r in spec.rfcs}
    authors: dict[str, str | None] = {}
    for thread in discussion.archive.threads:
        for post in thread.posts:
            authors[f"github/{thread.number}/{post.index}"] = people.login(post.author)
    for message in discussion.mail:
        authors[f"mail/{message.message_id}"] = people.email(message.sender_address)
    posts: Counter[tuple[str, SectionRef]] = Counter()
    seen: set[tuple[str, str, SectionRef]] = set()
    for citation in discussion.citations:
        person = authors.get(citation.post)
        if not citation.while_changing or citation.final is None or person is None:
            continue
        key = (citation.post, person, citation.final)
        if key not in seen:  # a post citing a section twice is one post
            seen.add(key)
            posts[(person, citation.final)] += 1
    commits: Counter[tuple[str, SectionRef]] = Counter()
    for evidence in discussion.commits:
        commit = evidence.commit
        person = people.git(commit.author_name, commit.author_email)
        if person is None:
            continue
        finals = {
            section
            if section.document in rfcs
            else final_of.get((section.document, section.position))
            for section in evidence.sections
        }
        for final in finals - {None}:
            assert final is not None
            commits[(person, final)] += 1
    return {
        key: (posts.get(key, 0), commits.get(key, 0))
        for key in sorted(
            set(posts) | set(commits), key=lambda k: (k[0], k[1].document, k[1].position)
        )
    }
