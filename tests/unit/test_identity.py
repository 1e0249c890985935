"""Resolving identities into people, on a fictional flock of pigeon fanciers.

Each test puts the resolver in front of one trap (a shared surname, a shared first name,
initials, a generic mailbox) or one rule, and checks both who ends up as one person and the
rule and evidence recorded for every join.
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import partial
from pathlib import Path

import pytest

from ratified_rdf.records.identity import (
    DifferentPair,
    Identity,
    LinkEvidence,
    MergeRule,
    Overrides,
    PeopleError,
    PeopleTable,
    PullAuthors,
    SameGroup,
    link_evidence_from_prs,
    load_overrides,
    normalise_email,
    normalise_name,
    resolve_people,
)
from ratified_rdf.sources.git_history import pull_authors
from ratified_rdf.sources.git_repo import GitRepository


def git(name: str | None = None, email: str | None = None) -> Identity:
    return Identity(kind="git", name=name, email=email)


def gh(login: str) -> Identity:
    return Identity(kind="github", login=login)


def doc(name: str, email: str | None = None) -> Identity:
    return Identity(kind="document", name=name, email=email)


def together(table: PeopleTable, *identities: Identity) -> bool:
    return len({table.person_of(i).key for i in identities}) == 1


def apart(table: PeopleTable, *identities: Identity) -> bool:
    return len({table.person_of(i).key for i in identities}) == len(identities)


def rules_of(table: PeopleTable, identity: Identity) -> list[str]:
    return [m.rule for m in table.person_of(identity).merges]


# --- normalisation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Alma.Pigeon@Coop.Test", "alma.pigeon@coop.test"),
        ("alma+drafts@coop.test", "alma@coop.test"),
        ("12345+RockDove@users.noreply.github.com", "rockdove@users.noreply.github.com"),
        ("rockdove@users.noreply.github.com", "rockdove@users.noreply.github.com"),
        ("not an address", None),
        ("", None),
    ],
)
def test_normalise_email(raw: str, expected: str | None) -> None:
    assert normalise_email(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Pigeon, Álma", "alma pigeon"),
        ("ALMA  PIGEON", "alma pigeon"),
        ("Zoë Crane-Heron", "zoe crane heron"),
        ("Gunnar Strauß (Gus)", "gunnar strauss"),
        ("Pigeon, Jr.", "pigeon"),
        ("O'Dove", "odove"),
    ],
)
def test_normalise_name(raw: str, expected: str) -> None:
    assert normalise_name(raw) == expected


# --- the traps --------------------------------------------------------------------------------


def test_surname_trap_alice_smith_and_bob_smith_stay_apart() -> None:
    alice = git("Alice Smith", "alice@smith-lofts.test")
    bob = git("Bob Smith", "bob@smith-lofts.test")
    also_alice = git("Alice Smith", "asmith@racing-pigeons.test")
    table = resolve_people([alice, bob, also_alice])
    assert apart(table, alice, bob)
    assert together(table, alice, also_alice)
    assert rules_of(table, alice) == [MergeRule.SAME_FULL_NAME]
    assert len(table.people) == 2


def test_common_first_name_trap_john_doe_and_john_roe_stay_apart() -> None:
    doe = git("John Doe", "john@doe.test")
    roe = git("John Roe", "john@roe.test")
    # A login equal to the shared local part must not pick either of them.
    login = gh("john")
    table = resolve_people([doe, roe, login])
    assert apart(table, doe, roe, login)
    assert table.identity_count == 3


def test_initials_trap_joins_only_on_evidence() -> None:
    initials = git("A. Pigeon", "ap@homing.test")
    full = git("Alma Pigeon", "alma@coop.test")
    assert apart(resolve_people([initials, full]), initials, full)

    link = LinkEvidence(a=initials, b=full, reason="both sign the loft register as member 7")
    table = resolve_people([initials, full], [link])
    assert together(table, initials, full)
    (merge,) = table.person_of(full).merges
    assert merge.rule == MergeRule.LINKED_BY_COMMIT
    assert merge.evidence == "both sign the loft register as member 7"


def test_identical_initials_are_not_a_full_name() -> None:
    one = git("A. Pigeon", "ap@homing.test")
    other = git("A Pigeon", "a.pigeon@racing.test")
    assert apart(resolve_people([one, other]), one, other)


def test_placeholder_names_do_not_join_people() -> None:
    one = git("Your Name", "gus@dove.test")
    other = git("Your Name", "hana@dove.test")
    bot = git("Loft Bot", "bot@loft.test")
    other_bot = git("Loft Bot", "ci@loft.test")
    table = resolve_people([one, other, bot, other_bot])
    assert apart(table, one, other, bot, other_bot)


# --- the rules --------------------------------------------------------------------------------


def test_same_email_in_another_case_and_with_a_tag_is_one_person() -> None:
    plain = git("Carol Finch", "carol.finch@aviary.test")
    shouting = git("C Finch", "Carol.Finch@AVIARY.test")
    tagged = doc("Carol Finch", "carol.finch+drafts@aviary.test")
    table = resolve_people([plain, shouting, tagged])
    assert together(table, plain, shouting, tagged)
    person = table.person_of(plain)
    assert person.name == "Carol Finch"
    assert person.emails == ("carol.finch@aviary.test",)
    assert {m.rule for m in person.merges} == {MergeRule.SAME_EMAIL}
    assert all("carol.finch@aviary.test" in m.evidence for m in person.merges)


def test_machine_local_addresses_do_not_join_people() -> None:
    one = git("Gus", "root@localhost")
    other = git("Hana", "root@localhost")
    laptop = git("Ivo", "ivo@ivos-laptop.local")
    laptop_again = git("ivo", "ivo@ivos-laptop.local")
    table = resolve_people([one, other, laptop, laptop_again])
    assert apart(table, one, other, laptop, laptop_again)


def test_noreply_address_stands_for_its_login() -> None:
    new_form = git("Dan Wren", "12345+DWren@users.noreply.github.com")
    old_form = git("dwren", "dwren@users.noreply.github.com")
    account = gh("DWren")
    table = resolve_people([new_form, old_form, account])
    assert together(table, new_form, old_form, account)
    person = table.person_of(account)
    assert person.logins == ("dwren",)
    assert person.emails == ()
    assert set(rules_of(table, account)) == {MergeRule.NOREPLY_ADDRESS}
    assert all("dwren" in m.evidence for m in person.merges)


def test_another_logins_noreply_address_stays_apart() -> None:
    account = gh("dwren")
    someone_else = git("Eve Lark", "999+elark@users.noreply.github.com")
    assert apart(resolve_people([account, someone_else]), account, someone_else)


def test_login_equal_to_a_distinctive_local_part_joins() -> None:
    account = gh("KestrelK")
    commits = git("Kai Kestrel", "kestrelk@falcon.test")
    table = resolve_people([account, commits])
    assert together(table, account, commits)
    (merge,) = table.person_of(account).merges
    assert merge.rule == MergeRule.LOGIN_IS_LOCAL_PART
    assert "kestrelk@falcon.test" in merge.evidence


@pytest.mark.parametrize(
    ("login", "address"),
    [
        ("info", "info@falcon.test"),  # a role mailbox
        ("admin", "admin@falcon.test"),
        ("john", "john@falcon.test"),  # a common given name
        ("kk", "kk@falcon.test"),  # too short to say anything
    ],
)
def test_login_equal_to_a_generic_local_part_does_not_join(login: str, address: str) -> None:
    account = gh(login)
    commits = git("Kai Kestrel", address)
    assert apart(resolve_people([account, commits]), account, commits)


def test_login_equal_to_a_local_part_two_addresses_claim_does_not_join() -> None:
    account = gh("plover")
    one = git("Pia Plover", "plover@shore.test")
    other = git("Per Plover", "plover@marsh.test")
    table = resolve_people([account, one, other])
    assert apart(table, account, one, other)


# --- overrides --------------------------------------------------------------------------------


def test_override_same_joins_what_no_rule_sees() -> None:
    account = gh("swiftlet")
    commits = git("Erin Swift", "erin@swift.test")
    byline = doc("Swift, Erin")
    overrides = Overrides(
        same=(
            SameGroup(
                members=("login:swiftlet", "email:erin@swift.test", "name:Erin Swift"),
                reason="Erin Swift lists swiftlet as her account on her home page",
            ),
        )
    )
    rules_only = resolve_people([account, commits, byline])
    assert together(rules_only, commits, byline)  # "Swift, Erin" is "Erin Swift"
    assert apart(rules_only, account, commits)
    table = resolve_people([account, commits, byline], overrides=overrides)
    assert together(table, account, commits, byline)
    person = table.person_of(account)
    assert (person.key, person.name) == ("erin-swift", "Erin Swift")
    assert len(person.merges) == 2
    for merge in person.merges:
        assert merge.rule == MergeRule.OVERRIDE
        assert "Erin Swift lists swiftlet" in merge.evidence


def test_override_different_wins_over_same_email() -> None:
    gus = git("Gus Dove", "family@dove.test")
    hana = git("Hana Dove", "family@dove.test")
    overrides = Overrides(
        different=(
            DifferentPair(
                pair=("name:Gus Dove", "name:Hana Dove"),
                reason="the Doves share a family mailbox",
            ),
        )
    )
    assert together(resolve_people([gus, hana]), gus, hana)
    table = resolve_people([gus, hana], overrides=overrides)
    assert apart(table, gus, hana)
    (refused,) = table.held_apart
    assert refused.rule == MergeRule.SAME_EMAIL
    assert "the Doves share a family mailbox" in refused.evidence


def test_override_different_wins_over_link_evidence_and_chains() -> None:
    # Gus and Hana share nothing directly, but a chain of links would join them through
    # a third identity: the pair must still stay apart.
    gus = git("Gus Dove", "gus@dove.test")
    hana = git("Hana Dove", "hana@dove.test")
    shared = gh("dovecote")
    links = [
        LinkEvidence(a=shared, b=gus, reason="PR #1 by dovecote is Gus's"),
        LinkEvidence(a=shared, b=hana, reason="PR #2 by dovecote is Hana's"),
    ]
    overrides = Overrides(
        different=(DifferentPair(pair=("email:gus@dove.test", "email:hana@dove.test"), reason="x"),)
    )
    table = resolve_people([gus, hana, shared], links, overrides)
    assert apart(table, gus, hana)
    assert together(table, shared, gus)  # the first link was taken, the second refused
    assert len(table.held_apart) == 1


def test_contradictory_overrides_are_refused() -> None:
    gus = git("Gus Dove", "gus@dove.test")
    hana = git("Hana Dove", "hana@dove.test")
    overrides = Overrides(
        same=(SameGroup(members=("email:gus@dove.test", "email:hana@dove.test"), reason="a"),),
        different=(DifferentPair(pair=("name:Gus Dove", "name:Hana Dove"), reason="b"),),
    )
    with pytest.raises(PeopleError, match="contradict"):
        resolve_people([gus, hana], overrides=overrides)


def test_unmatched_selectors_are_reported() -> None:
    overrides = Overrides(
        same=(SameGroup(members=("login:nobody", "email:gus@dove.test"), reason="typo"),)
    )
    table = resolve_people([git("Gus Dove", "gus@dove.test")], overrides=overrides)
    assert table.unmatched_selectors == ("login:nobody",)


def test_load_overrides_reads_a_file(tmp_path: Path) -> None:
    (tmp_path / "people.toml").write_text(
        '[[same]]\nmembers = ["login:swiftlet", "email:erin@swift.test"]\nreason = "r"\n'
        '[[different]]\npair = ["name:Gus Dove", "name:Hana Dove"]\nreason = "s"\n',
        encoding="utf-8",
    )
    overrides = load_overrides(tmp_path)
    assert overrides.same[0].members == ("login:swiftlet", "email:erin@swift.test")
    assert overrides.different[0].pair == ("name:Gus Dove", "name:Hana Dove")


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ('[[same]]\nmembers = ["handle:swiftlet", "email:e@s.test"]\nreason = "r"\n', "selector"),
        ('[[same]]\nmembers = ["login:swiftlet"]\nreason = "r"\n', "at least 2"),
        ('[[different]]\npair = ["name:Gus Dove", "name:gus  dove"]\nreason = "r"\n', "same"),
        ("[[same]\n", "not valid TOML"),
    ],
)
def test_load_overrides_refuses_bad_files(tmp_path: Path, text: str, complaint: str) -> None:
    file = tmp_path / "people.toml"
    file.write_text(text, encoding="utf-8")
    with pytest.raises(PeopleError, match=complaint):
        load_overrides(file)


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        ('[[same]]\nreason = "Grüße"\n'.encode("latin-1"), "is not UTF-8 text"),
        (b"x = " + b"[" * 5000 + b"1", "too deeply"),
    ],
)
def test_load_overrides_refuses_unreadable_files(
    tmp_path: Path, data: bytes, complaint: str
) -> None:
    file = tmp_path / "people.toml"
    file.write_bytes(data)
    with pytest.raises(PeopleError, match=complaint) as caught:
        load_overrides(file)
    assert str(file) in str(caught.value)


def test_load_overrides_names_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PeopleError, match="no people overrides file"):
        load_overrides(tmp_path)


# --- the table as a whole ---------------------------------------------------------------------


def test_every_merge_carries_its_rule_and_evidence() -> None:
    identities = [
        git("Carol Finch", "carol.finch@aviary.test"),
        git("C Finch", "CAROL.FINCH@aviary.test"),
        git("Carol Finch", "cfinch@work.test"),
        gh("cfinch"),
        git("Dan Wren", "7+dwren@users.noreply.github.com"),
        gh("dwren"),
        git("A. Pigeon", "ap@homing.test"),
        doc("Alma Pigeon", "alma@coop.test"),
        gh("swiftlet"),
        git("Erin Swift", "erin@swift.test"),
    ]
    links = [LinkEvidence(a=identities[6], b=identities[7], reason="the loft register")]
    overrides = Overrides(
        same=(SameGroup(members=("login:swiftlet", "name:Erin Swift"), reason="home page"),)
    )
    table = resolve_people(identities, links, overrides)
    assert table.identity_count == len(identities)
    assert len(table.people) == 4
    rules = {rule.value for rule in MergeRule}
    seen: set[str] = set()
    for person in table.people:
        assert len(person.merges) == len(person.identities) - 1
        for merge in person.merges:
            assert merge.rule in rules
            assert merge.evidence.strip()
            seen.add(merge.rule)
    assert seen == {
        MergeRule.SAME_EMAIL,
        MergeRule.SAME_FULL_NAME,
        MergeRule.LOGIN_IS_LOCAL_PART,
        MergeRule.NOREPLY_ADDRESS,
        MergeRule.LINKED_BY_COMMIT,
        MergeRule.OVERRIDE,
    }


def test_keys_are_unique_stable_slugs() -> None:
    first = git("Carol Finch", "carol@one.test")
    namesake = git("Carol Finch!", "c@two.test")  # normalises to the same name: same person
    other = git("Carol Fínch", "cf@three.test")  # also the same name once accents go
    no_ascii = git("鸽子", "gezi@loft.test")
    account = gh("gezi")
    # Initials are no full name, so these two stay apart and their slugs clash.
    initials = git("C. Finch", "c.finch@four.test")
    initials_too = git("C Finch", "finch.c@five.test")
    given = [no_ascii, account, other, namesake, first, initials, initials_too]
    table = resolve_people(given)
    assert [p.key for p in table.people] == ["c-finch", "c-finch-2", "carol-finch", "gezi"]
    assert table.person_of(no_ascii).name == "鸽子"
    assert resolve_people(reversed(given)) == table


def test_identities_must_say_something() -> None:
    with pytest.raises(ValueError, match="needs a login"):
        Identity(kind="github", name="Gus Dove")
    with pytest.raises(ValueError, match="has no login"):
        Identity(kind="git", name="Gus Dove", login="gus")
    with pytest.raises(ValueError, match="needs a name or an email"):
        Identity(kind="document")


# --- link evidence from pull requests ---------------------------------------------------------


def _commit(repo: Path, name: str, email: str, message: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": "Loft Keeper",
        "GIT_COMMITTER_EMAIL": "keeper@loft.test",
    }
    subprocess.run(
        ["git", "-C", str(repo), "commit", "--allow-empty", "-q", "-m", message],
        env=env,
        check=True,
    )
    out = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


@pytest.fixture
def loft_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A repository with one branch per fictional pull request, all off one base commit."""
    repo = tmp_path / "loft"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    commits = {"base": _commit(repo, "Loft Keeper", "keeper@loft.test", "base")}

    def branch(name: str, authors: list[tuple[str, str]]) -> None:
        subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", name, commits["base"]])
        for number, (author, email) in enumerate(authors):
            commits[name] = _commit(repo, author, email, f"{name} {number}")

    branch("alma", [("Alma Pigeon", "alma@coop.test"), ("A. Pigeon", "ALMA@coop.test")])
    branch("mixed", [("Alma Pigeon", "alma@coop.test"), ("Gus Dove", "gus@dove.test")])
    branch("carried", [("Alma Pigeon", "alma@coop.test")])
    branch("noreply", [("Hana Dove", "5+hdove@users.noreply.github.com")])
    return repo / ".git", commits


def _authors(git_dir: Path) -> PullAuthors:
    """Who wrote each pull request's commits, as git says (sources/, not records/)."""
    return partial(pull_authors, GitRepository(git_dir, str(git_dir)))


def _pull(number: int, author: str, head: str, base: str) -> dict[str, object]:
    return {"number": number, "author": author, "headRefOid": head, "baseRefOid": base}


def test_link_evidence_from_consistent_pull_requests(loft_repo: tuple[Path, dict]) -> None:
    git_dir, commits = loft_repo
    archive = {
        "pulls": [
            _pull(1, "almap", commits["alma"], commits["base"]),
            _pull(2, "almap", commits["carried"], commits["base"]),
            _pull(3, "almap", commits["carried"], commits["base"]),
            _pull(4, "gusd", commits["mixed"], commits["base"]),  # two authors: no link
            _pull(5, "gusd", "f" * 40, commits["base"]),  # head not in the repository
            _pull(6, "hana-helper", commits["noreply"], commits["base"]),  # hdove's address
        ]
    }
    links = link_evidence_from_prs(_authors(git_dir), archive, {})
    assert {(link.a, link.b) for link in links} == {
        (gh("almap"), git("Alma Pigeon", "alma@coop.test")),
        (gh("almap"), git("A. Pigeon", "ALMA@coop.test")),
    }
    for link in links:
        assert link.rule == MergeRule.LINKED_BY_COMMIT
        assert "#1, #2, #3" in link.reason


def test_link_evidence_drops_a_login_that_carried_someone_elses_commits(
    loft_repo: tuple[Path, dict],
) -> None:
    git_dir, commits = loft_repo
    # almap opened three pull requests with Alma's commits; gusd re-submitted one of them.
    archive = {
        "pulls": [
            *(_pull(n, "almap", commits["alma"], commits["base"]) for n in (1, 2, 3)),
            _pull(4, "gusd", commits["carried"], commits["base"]),
        ]
    }
    links = link_evidence_from_prs(_authors(git_dir), archive, {})
    assert {link.a.login for link in links} == {"almap"}
    # A tie names nobody.
    tie = {
        "pulls": [
            _pull(1, "almap", commits["carried"], commits["base"]),
            _pull(2, "gusd", commits["carried"], commits["base"]),
        ]
    }
    assert link_evidence_from_prs(_authors(git_dir), tie, {}) == []


def test_link_evidence_translates_github_commit_ids(loft_repo: tuple[Path, dict]) -> None:
    git_dir, commits = loft_repo
    # The repository's ids differ from GitHub's: the map says which is which.
    public = {name: f"{index:040x}" for index, name in enumerate(commits, start=1)}
    commit_map = {commits[name]: public[name] for name in commits}
    archive = {"pulls": [_pull(1, "almap", public["carried"], public["base"])]}
    links = link_evidence_from_prs(_authors(git_dir), archive, commit_map)
    assert [(link.a, link.b) for link in links] == [
        (gh("almap"), git("Alma Pigeon", "alma@coop.test"))
    ]
    # Without the map GitHub's ids name nothing in the repository.
    assert link_evidence_from_prs(_authors(git_dir), archive, {}) == []


def test_people_table_round_trips_through_json() -> None:
    # The table is plain data: it serialises and reads back unchanged.
    table = resolve_people([git("Carol Finch", "c@finch.test"), gh("cfinch")])
    assert PeopleTable.model_validate(json.loads(table.model_dump_json())) == table
