"""Expertise ranking on a small invented activity set: what the scores mean, and that they are
the same on every run, whatever order the activity comes in."""

from __future__ import annotations

import random

import pytest

from ratified_rdf.records import expertise
from ratified_rdf.records.discussion import SectionRef
from ratified_rdf.records.expertise import ALGORITHM, Activity, ExpertiseRecords, rank_activity
from tests.forks import counted_forks


def _section(position: int) -> SectionRef:
    return SectionRef(document="rfc9999", position=position)


LOFT, PERCH, HATCH, ROOST = (_section(n) for n in (1, 2, 3, 4))
# Wren and Finch work together on three sections; Heron, Lark and Robin meet them now and
# then. Kite, Swift and Tern talk only among themselves, on Nest.
NEST = _section(5)
ACTIVITY: Activity = {
    ("wren", LOFT): (4, 3),
    ("finch", LOFT): (2, 0),
    ("heron", LOFT): (1, 0),
    ("wren", PERCH): (1, 0),
    ("finch", PERCH): (1, 1),
    ("lark", PERCH): (5, 0),
    ("finch", HATCH): (0, 1),
    ("heron", HATCH): (1, 0),
    ("wren", ROOST): (1, 0),
    ("finch", ROOST): (1, 0),
    ("robin", ROOST): (1, 0),
    ("kite", NEST): (3, 2),
    ("swift", NEST): (2, 0),
    ("tern", NEST): (1, 0),
}


def _ranking(records: ExpertiseRecords, section: SectionRef | None) -> list[str]:
    scores = [s for s in records.scores if s.section == section]
    return [s.person for s in sorted(scores, key=lambda s: (-s.pagerank, s.person))]


def test_among_equally_tied_participants_the_most_active_ranks_first() -> None:
    assert _ranking(rank_activity(ACTIVITY), NEST) == ["kite", "swift", "tern"]


def test_among_equally_active_participants_the_best_tied_rank_first() -> None:
    # One post each on Roost: Wren and Finch share three sections, Robin only this one.
    roost = {s.person: s.pagerank for s in rank_activity(ACTIVITY).scores if s.section == ROOST}
    assert roost["wren"] == roost["finch"] > roost["robin"]


def test_within_a_section_the_broker_between_weak_ties_has_betweenness() -> None:
    # On Loft, Wren and Finch share three sections, Finch and Heron two (Loft, Hatch), Wren and
    # Heron only Loft: the short way from Wren to Heron runs through Finch, who alone scores.
    loft = {s.person: s.betweenness for s in rank_activity(ACTIVITY).scores if s.section == LOFT}
    assert loft["finch"] > 0
    assert loft["wren"] == loft["heron"] == 0
    # Where every tie is as strong as every other, nobody brokers.
    nest = {s.person: s.betweenness for s in rank_activity(ACTIVITY).scores if s.section == NEST}
    assert set(nest.values()) == {0}


def test_ties_weigh_more_than_activity_as_pagerank_with_alpha_085_makes_them() -> None:
    # Lark wrote most about Perch but knows neither of the other two, who work together.
    assert _ranking(rank_activity(ACTIVITY), PERCH) == ["finch", "wren", "lark"]


def test_overall_the_best_connected_rank_first_and_bridges_have_betweenness() -> None:
    records = rank_activity(ACTIVITY)
    assert _ranking(records, None)[:2] == ["finch", "wren"]
    overall = {s.person: s for s in records.scores if s.section is None}
    assert (overall["wren"].posts, overall["wren"].commits) == (6, 3)
    # Robin and Lark reach the others only through Wren and Finch.
    assert overall["robin"].betweenness == overall["lark"].betweenness == 0
    assert overall["finch"].betweenness > 0 and overall["wren"].betweenness > 0


def test_scores_are_the_same_on_every_run_and_in_any_input_order() -> None:
    first = rank_activity(ACTIVITY)
    items = list(ACTIVITY.items())
    random.Random(3).shuffle(items)
    assert rank_activity(dict(items)) == first == rank_activity(ACTIVITY)
    assert first.algorithm == ALGORITHM and "personalization" in ALGORITHM


def test_each_section_is_ranked_among_its_own_participants_only() -> None:
    # Adding an unrelated section with new people leaves Loft's scores as they were.
    more = dict(ACTIVITY)
    more |= {(f"owl-{n}", _section(9)): (n + 1, 0) for n in range(6)}
    loft = [s for s in rank_activity(ACTIVITY).scores if s.section == LOFT]
    assert [s for s in rank_activity(more).scores if s.section == LOFT] == loft
    assert sum(s.pagerank for s in loft) == pytest.approx(1.0, abs=1e-5)


def test_a_large_projection_samples_betweenness_with_a_fixed_seed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Shrunk thresholds stand in for a projection of more than 500 people.
    monkeypatch.setattr(expertise, "EXACT_BETWEENNESS_UP_TO", 4)
    monkeypatch.setattr(expertise, "BETWEENNESS_SOURCES", 3)
    sampled = rank_activity(ACTIVITY)
    assert sampled == rank_activity(ACTIVITY)
    overall = {s.person: s.betweenness for s in sampled.scores if s.section is None}
    assert len(overall) == 8
    monkeypatch.undo()
    exact = {s.person: s.betweenness for s in rank_activity(ACTIVITY).scores if not s.section}
    assert overall != exact  # three sources of eight: an estimate, the same one every time


def test_betweenness_ranked_in_a_child_is_the_betweenness_ranked_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A large projection's overall betweenness is computed in a forked child while the
    # sections are ranked; the scores, exact or sampled, are those of one process.
    rng = random.Random(11)
    people = [f"person-{n}" for n in range(40)]
    activity: Activity = {
        (person, _section(rng.randrange(12))): (rng.randrange(4), rng.randrange(3))
        for person in people
        for _ in range(3)
    }
    forks = counted_forks(monkeypatch, expertise)
    for exact_up_to in (500, 10):  # exact, then sampled
        monkeypatch.setattr(expertise, "EXACT_BETWEENNESS_UP_TO", exact_up_to)
        monkeypatch.setattr(expertise, "BETWEENNESS_SOURCES", 5)
        monkeypatch.setattr(expertise, "FORK_BETWEENNESS_FROM_LINKS", 10**9)
        monkeypatch.setattr(expertise, "FORK_SECTIONS_FROM_TIES", 10**9)
        here = rank_activity(activity)
        assert forks == []
        monkeypatch.setattr(expertise, "FORK_BETWEENNESS_FROM_LINKS", 1)
        assert rank_activity(activity) == here
        assert forks == ["ranking people"]
        forks.clear()
        assert any(s.betweenness for s in here.scores if s.section is None)


def test_sections_ranked_half_in_a_forked_child_score_as_ranked_here(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Past a cost, half of the sections (by their ties) are ranked in a child process beside
    # the rest: every score, and their order, is what ranking them all here gives.
    forks = counted_forks(monkeypatch, expertise)
    monkeypatch.setattr(expertise, "FORK_SECTIONS_FROM_TIES", 10**9)
    here = rank_activity(ACTIVITY)
    assert forks == []
    monkeypatch.setattr(expertise, "FORK_SECTIONS_FROM_TIES", 1)
    assert rank_activity(ACTIVITY) == here
    assert forks == ["ranking sections"]


def test_no_activity_gives_no_scores() -> None:
    assert rank_activity({}).scores == ()
    assert rank_activity({("wren", LOFT): (0, 0)}).scores == ()
