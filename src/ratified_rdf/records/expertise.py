"""Who knows what: people ranked by how central they were to each section's discussion.

Activity is what the graph can show: posts that referred to a section while it was still
changing, and commits that changed it, credited to the RFC section the text became. Two people
who were active on the same section are linked in a co-discussion projection, weighted by the
number of sections both were active on. Scores are computed with networkx and stored back in
the graph with the computation's provenance (:data:`ALGORITHM`):

- overall: PageRank (alpha 0.85, weighted) on the whole projection, and its betweenness
  (unweighted, normalised): exact up to :data:`EXACT_BETWEENNESS_UP_TO` people, otherwise
  estimated from :data:`BETWEENNESS_SOURCES` source people drawn with the fixed seed
  :data:`BETWEENNESS_SEED`, so a rebuild gives the same numbers;
- per RFC section: PageRank (alpha 0.85, weighted) on the subgraph induced by the section's
  own participants, personalised by each one's activity on that section (posts + commits).
  The edge weights are still the whole projection's (sections shared anywhere): a walk over
  the ties among the section's participants that restarts (15% of steps) at a participant
  chosen in proportion to their activity on the section. So among equally tied participants
  the most active rank first, among equally active ones the best tied; with alpha 0.85 the
  ties weigh more. Betweenness on the same subgraph, with each tie's length the inverse of
  the sections it stands for: every two participants share this section, so unweighted the
  subgraph is complete and everyone would score 0; weighted, a participant scores where the
  shortest way between two others (a weak tie between them) runs through them (strong ties
  to both), i.e. who brokers among the section's participants.

Each section's computation reads only its participants and the weights between them, so the
cost grows with the number of (section, participant pair)s, not with sections × people.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping
from itertools import combinations

import networkx as nx
from pydantic import BaseModel, ConfigDict

from ratified_rdf._forked import Forked
from ratified_rdf.records.discussion import DiscussionRecords, SectionRef
from ratified_rdf.records.identity import PeopleLookup
from ratified_rdf.records.models import SpecRecords

EXACT_BETWEENNESS_UP_TO = 500
"""Overall betweenness is exact for at most this many people (the TLS corpus has under 200)."""
BETWEENNESS_SOURCES = 500
"""Above that, the number of source people it is estimated from (networkx's ``k``)."""
BETWEENNESS_SEED = 7
"""The seed those sources are drawn with: fixed, so the scores are deterministic."""
FORK_BETWEENNESS_FROM_LINKS = 20_000
"""From how many links between people the overall betweenness is computed in a forked child
beside the sections' ranks (below it, forking costs more than it saves)."""

FORK_SECTIONS_FROM_TIES = 5_000
"""From how many ties within sections (the sum of each section's participants squared) half
the sections are ranked in a forked child beside the other half."""

ALGORITHM = (
    "co-discussion projection: people linked when both were active on an RFC section while it "
    "changed, weight = sections shared. Overall: networkx.pagerank(alpha=0.85, weight) on the "
    "whole projection; networkx.betweenness_centrality(normalized) on it, exact up to "
    f"{EXACT_BETWEENNESS_UP_TO} people, else sampled with k={BETWEENNESS_SOURCES}, "
    f"seed={BETWEENNESS_SEED}. Per section: networkx.pagerank(alpha=0.85, weight, "
    "personalization=posts+commits on the section) on the subgraph induced by the section's "
    "participants; networkx.betweenness_centrality(normalized, weight=1/sections shared) on "
    "that subgraph"
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


Activity = dict[tuple[str, SectionRef], tuple[int, int]]
"""(person key, final RFC section) → (posts, commits) while the text was changing."""


Totals = Mapping[str, tuple[int, int]]
"""person key → (distinct posts, distinct commits) over all sections while text was changing."""


def compute_expertise(discussion: DiscussionRecords, spec: SpecRecords) -> ExpertiseRecords:
    """Rank people overall and per RFC section from posts and commits while text changed."""
    activity, totals = _activity(discussion, spec)
    return rank_activity(activity, totals)


def rank_activity(activity: Activity, totals: Totals | None = None) -> ExpertiseRecords:
    """Score every person overall and on every section they were active on (see the module
    docstring); the same activity, in any order, always gives the same scores. Entries with
    neither posts nor commits are not activity and are left out.

    A person's overall counts are ``totals`` (distinct posts and commits: a commit that
    changed three sections is one commit) when given; otherwise the sum over sections."""
    activity = {key: counts for key, counts in activity.items() if sum(counts) > 0}
    sections: dict[SectionRef, Counter[str]] = defaultdict(Counter)
    for (person, section), (posts, commits) in activity.items():
        sections[section][person] += posts + commits
    if not activity:
        return ExpertiseRecords(algorithm=ALGORITHM, scores=())
    # Weights once, by pair (names in order): each section adds one to each pair of its
    # participants, so this costs the sum of the squares of the sections' sizes.
    shared: Counter[tuple[str, str]] = Counter()
    for participants in sections.values():
        shared.update(combinations(sorted(participants), 2))
    graph = nx.Graph()
    graph.add_nodes_from(sorted({person for person, _ in activity}))
    graph.add_weighted_edges_from((a, b, weight) for (a, b), weight in sorted(shared.items()))
    overall = nx.pagerank(graph, alpha=0.85, weight="weight")
    # On a large projection the people's betweenness takes as long as every section's ranks:
    # it is computed in a forked child, on the other core, while this process ranks sections.
    forked = graph.number_of_edges() >= FORK_BETWEENNESS_FROM_LINKS
    between_later = Forked(lambda: _betweenness(graph), "ranking people") if forked else None
    ordered = sorted(sections, key=lambda s: (s.document, s.position))
    here, there = _halves(ordered, sections)

    def rank(part: list[SectionRef]) -> dict[SectionRef, list[ExpertiseScore]]:
        return {s: _section_scores(s, sections[s], shared, activity) for s in part}

    # Each section is ranked on its own: half of them (by cost) in a forked child, on the
    # other core, while this process ranks the rest; the scores are the same either way.
    later = Forked(lambda: rank(there), "ranking sections") if there else None
    ranked = rank(here)
    if later is not None:
        ranked.update(later.result())
    by_section = [score for section in ordered for score in ranked[section]]
    between = between_later.result() if between_later is not None else _betweenness(graph)
    summed: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for (person, _section), (posts, commits) in activity.items():
        summed[person][0] += posts
        summed[person][1] += commits
    overall_counts = {
        person: (totals[person] if totals and person in totals else (counts[0], counts[1]))
        for person, counts in summed.items()
    }
    scores = [
        ExpertiseScore(
            person=person,
            section=None,
            posts=overall_counts[person][0],
            commits=overall_counts[person][1],
            pagerank=round(overall[person], 6),
            betweenness=round(between.get(person, 0.0), 6),
        )
        for person in sorted(overall_counts)
    ]
    return ExpertiseRecords(algorithm=ALGORITHM, scores=(*scores, *by_section))


def _halves(
    ordered: list[SectionRef], sections: Mapping[SectionRef, Counter[str]]
) -> tuple[list[SectionRef], list[SectionRef]]:
    """``ordered`` shared out in two parts of about equal cost (a section's participants
    squared: its ties), the second empty when the whole costs less than
    :data:`FORK_SECTIONS_FROM_TIES` (a fork would cost more than it saves)."""
    cost = {s: len(sections[s]) ** 2 for s in ordered}
    if sum(cost.values()) < FORK_SECTIONS_FROM_TIES:
        return ordered, []
    parts: tuple[list[SectionRef], list[SectionRef]] = ([], [])
    loads = [0, 0]
    for section in sorted(ordered, key=lambda s: -cost[s]):  # stable: ties keep their order
        lighter = 0 if loads[0] <= loads[1] else 1
        parts[lighter].append(section)
        loads[lighter] += cost[section]
    return parts


def _section_scores(
    section: SectionRef,
    participants: Counter[str],
    shared: Counter[tuple[str, str]],
    activity: Activity,
) -> list[ExpertiseScore]:
    """Everyone active on ``section``, ranked among its ``participants`` (each weighted by
    their activity there) on the links ``shared`` counts between them."""
    members = sorted(participants)
    local = nx.Graph()
    local.add_nodes_from(members)
    local.add_edges_from(
        (a, b, {"weight": shared[a, b], "length": 1 / shared[a, b]})
        for a, b in combinations(members, 2)
    )
    ranked = nx.pagerank(local, alpha=0.85, weight="weight", personalization=dict(participants))
    central = nx.betweenness_centrality(local, normalized=True, weight="length")
    scores = []
    for person in members:
        posts, commits = activity[(person, section)]
        scores.append(
            ExpertiseScore(
                person=person,
                section=section,
                posts=posts,
                commits=commits,
                pagerank=round(ranked[person], 6),
                betweenness=round(central.get(person, 0.0), 6),
            )
        )
    return scores


def _betweenness(graph: nx.Graph) -> dict[str, float]:
    """Normalised betweenness: exact on a small projection; on a large one, estimated from a
    fixed-seed sample of sources, because exact costs people × links."""
    if graph.number_of_nodes() <= EXACT_BETWEENNESS_UP_TO:
        return nx.betweenness_centrality(graph, normalized=True)
    return nx.betweenness_centrality(
        graph, k=BETWEENNESS_SOURCES, normalized=True, seed=BETWEENNESS_SEED
    )


def _activity(discussion: DiscussionRecords, spec: SpecRecords) -> tuple[Activity, Totals]:
    """Who was active on which final RFC section while its text was changing, and each
    person's distinct posts and commits over all of them."""
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
    distinct_posts: dict[str, set[str]] = defaultdict(set)
    distinct_commits: dict[str, set[str]] = defaultdict(set)
    seen: set[tuple[str, str, SectionRef]] = set()
    for citation in discussion.citations:
        person = authors.get(citation.post)
        if not citation.while_changing or citation.final is None or person is None:
            continue
        key = (citation.post, person, citation.final)
        if key not in seen:  # a post citing a section twice is one post
            seen.add(key)
            posts[(person, citation.final)] += 1
            distinct_posts[person].add(citation.post)
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
            distinct_commits[person].add(commit.commit)
    activity = {
        key: (posts.get(key, 0), commits.get(key, 0))
        for key in sorted(
            set(posts) | set(commits), key=lambda k: (k[0], k[1].document, k[1].position)
        )
    }
    people_active = set(distinct_posts) | set(distinct_commits)
    totals = {
        person: (len(distinct_posts.get(person, ())), len(distinct_commits.get(person, ())))
        for person in people_active
    }
    return activity, totals
