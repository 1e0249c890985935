"""One person per human across the real TLS record: commits, the GitHub archive and bylines.

The identities are every git author and committer in the bundle (pull-request heads included),
every login in ``archive.json`` and the two draft authors; links come from pull requests whose
commits were all made with one address; overrides from ``records/tls13/people.toml``.
"""

from __future__ import annotations

import json
import subprocess
from functools import partial

import pytest

from ratified_rdf.records.identity import (
    Identity,
    LinkEvidence,
    MergeRule,
    PeopleTable,
    identities_from_archive,
    identities_from_git,
    link_evidence_from_prs,
    load_overrides,
    resolve_people,
)
from ratified_rdf.sources.git_history import pull_authors, signatures
from ratified_rdf.sources.git_repo import GitRepository, load_commit_map
from tests.conftest import MANIFEST, require_corpus

pytestmark = pytest.mark.corpus

BYLINES = [
    Identity(kind="document", name="Eric Rescorla", email="ekr@rtfm.com"),
    Identity(kind="document", name="Tim Dierks", email="tim@dierks.org"),
]

# Everyone found under two or more identities besides EKR and Sean Turner (tested on their
# own below): display name, then selectors that must all land on that one person. Each row was
# checked by hand against the commits and pull requests that joined it.
SEVERAL_IDENTITIES = [
    ("Adam Langley", ["email:agl@google.com", "email:agl@imperialviolet.org", "login:agl"]),
    ("Alessandro Ghedini", ["email:alessandro@ghedini.me", "login:ghedo"]),
    ("Alexis La Goutte", ["email:alexis.lagoutte@gmail.com", "login:alagoutte"]),
    (
        "Andrei Popov",
        [
            "email:andreipo@dellmob0.redmond.corp.microsoft.com",
            "email:andreipo@microsoft.com",
            "login:Andrei-Popov",
        ],
    ),
    ("Andrey Jivsov", ["email:crypto@brainhub.org", "email:crypto@brianhub.org", "login:brainhub"]),
    ("Ben Schwartz", ["email:bemasc@google.com", "login:bemasc"]),
    ("Benjamin Beurdouche", ["email:benjamin.beurdouche@inria.fr", "login:beurdouche"]),
    ("Benjamin Kaduk", ["email:bkaduk@akamai.com", "email:kaduk@mit.edu", "login:kaduk"]),
    ("Benjamin Przybocki", ["email:buddybenj@gmail.com", "login:Buddybenj"]),
    (
        "BenSmyth",
        [
            "email:45383735+BenSmyth@users.noreply.github.com",
            "email:social@bensmyth.com",
            "login:BenSmyth",
        ],
    ),
    (
        "Bill Cox",
        ["email:waywardgeek@gmail.com", "email:waywardgeek@google.com", "login:waywardgeek"],
    ),
    (
        "Bob Beck",
        [
            "email:bbe@google.com",
            "email:beck@obtuse.com",
            "email:beck@openbsd.org",
            "login:bob-beck",
        ],
    ),
    ("Brian Smith", ["email:brian@briansmith.org", "login:briansmith"]),
    ("Brian Sniffen", ["email:bsniffen@akamai.com", "login:briansniffen"]),
    ("Carl Mehner", ["email:c@cem.me", "login:cem-"]),
    ("Cas Cremers", ["email:cas.cremers@gmail.com", "login:cascremers"]),
    ("Cedric Fournet", ["email:fournet@microsoft.com", "login:fournet"]),
    ("Christian Huitema", ["email:huitema@huitema.net", "login:huitema"]),
    ("Christopher Patton", ["email:chrispatton@gmail.com", "login:cjpatton"]),
    (
        "Christopher Wood",
        [
            "email:caw@heapingbits.net",
            "email:christopherwood07@gmail.com",
            "email:chriswood@cloudflare.com",
            "login:chris-wood",
        ],
    ),
    (
        "Colm MacCárthaigh",
        [
            "email:colm@allcosts.net",
            "email:colm@apache.org",
            "email:colmmacc@amazon.com",
            "login:colmmacc",
        ],
    ),
    ("Cullen Jennings", ["email:fluffy@iii.ca", "login:fluffy"]),
    ("Daniel Kahn Gillmor", ["email:dkg@fifthhorseman.net", "login:dkg"]),
    ("Dave Garrett", ["email:davemgarrett@gmail.com", "login:davegarrett"]),
    (
        "David Benjamin",
        ["email:davidben@davidben.net", "email:davidben@google.com", "login:davidben"],
    ),
    ("David Cooper", ["email:dcooper16@gmail.com", "login:dcooper16"]),
    ("David Schinazi", ["email:dschinazi@apple.com", "login:DavidSchinazi"]),
    (
        "David Wong",
        ["email:david@matasano.com", "email:mimoo@users.noreply.github.com", "login:mimoo"],
    ),
    ("dcollinsn", ["email:dcollinsn@gmail.com", "login:dcollinsn"]),
    ("Deirdre Connolly", ["email:durumcrustulum@gmail.com", "login:dconnolly"]),
    ("Fedor Brunner", ["email:fedor.brunner@azet.sk", "login:fedor-brunner"]),
    ("Felix Günther", ["email:feg@computer-dc.de", "login:fxguenther"]),
    (
        "Filippo Valsorda",
        [
            "email:filippo@cloudflare.com",
            "email:github@filippo.io",
            "email:hi@filippo.io",
            "login:FiloSottile",
        ],
    ),
    ("Hannes Mehnert", ["email:hannes@mehnert.org", "login:hannesm"]),
    ("Hannes Tschofenig", ["email:hannes.tschofenig@gmx.net", "login:hannestschofenig"]),
    ("Harold Short", ["email:haroldfredshort@gmail.com", "login:haroldfredshort"]),
    ("Henrik Grubbström (Grubba)", ["email:grubba@grubba.org", "login:grubba"]),
    ("Hubert Kario", ["email:hkario@redhat.com", "login:tomato42"]),
    (
        "IETF-WG-Chairs-Training",
        ["email:richard.barnes+ietftraining@gmail.com", "login:IETF-WG-Chairs-Training"],
    ),
    ("Ilari Liusvaara", ["email:ilariliusvaara@welho.com", "login:ilaril"]),
    (
        "Illya Gerasymchuk",
        ["email:iluxon4ik@hotmail.com", "email:iluxxonchik@gmail.com", "login:iluxonchik"],
    ),
    ("Jakub Wilk", ["email:jwilk@jwilk.net", "login:jwilk"]),
    ("Janos Follath", ["email:janos.follath@arm.com", "login:yanesca"]),
    (
        "JeffH",
        [
            "email:Jeff.Hodges@PayPal.com",
            "email:mobileuser@kingsmountain.com",
            "login:equalsJeffH",
        ],
    ),
    ("Jens Guballa", ["email:jens.guballa@etas.com", "email:jens@guballa.de", "login:jensguballa"]),
    ("John M. Schanck", ["email:jschanck@uwaterloo.ca", "login:jschanck"]),
    ("John Preuß Mattsson", ["email:john.mattsson@ericsson.com", "login:emanjon"]),
    ("Joseph Birr-Pixton", ["email:jpixton@gmail.com", "login:ctz"]),
    ("jsalowey", ["email:jsalowey@gmail.com", "login:jsalowey"]),
    ("Judson Wilson", ["email:wilson.judson@gmail.com", "login:JudsonWilson"]),
    (
        "Katriel Cohn-Gordon",
        [
            "email:katriel.cohn-gordon@cybersecurity.ox.ac.uk",
            "email:me@katriel.co.uk",
            "login:katrielalex",
        ],
    ),
    ("Kazu Yamamoto", ["email:kazu@iij.ad.jp", "login:kazu-yamamoto"]),
    ("Kazuho Oku", ["email:kazuhooku@gmail.com", "login:kazuho"]),
    ("Keith Winstein", ["email:keithw@cs.stanford.edu", "login:keithw"]),
    ("kmad", ["email:kmadura@gmail.com", "login:kmad"]),
    ("knekritz", ["email:knekritz@fb.com", "login:knekritz"]),
    ("Kris", ["email:kris@amongbytes.com", "login:kriskwiatkowski"]),
    ("Kyle Rose", ["email:krose@krose.org", "login:squarooticus"]),
    ("Leon Klingele", ["email:git@leonklingele.de", "login:leonklingele"]),
    ("Librazy", ["email:im@librazy.org", "login:Librazy"]),
    ("Loganaden Velvindron", ["email:logan@cyberstorm.mu", "login:loganaden"]),
    ("Manuel Schölling", ["email:manuel.schoelling@gmx.de", "login:manuels"]),
    (
        "Martin Thomson",
        ["email:martin.thomson@gmail.com", "email:mt@lowentropy.net", "login:martinthomson"],
    ),
    ("Mateusz Jończyk", ["email:matjon@users.noreply.github.com", "login:matjon"]),
    ("Matt Caswell", ["email:matt@openssl.org", "login:mattcaswell"]),
    ("Matthew Green", ["email:mgreen@Matthews-MacBook.local", "login:matthewdgreen"]),
    ("MikeBishop", ["email:michbish@microsoft.com", "login:MikeBishop"]),
    ("ms-s", ["email:mohit.sethi.88@gmail.com", "login:ms-s"]),
    (
        "Muhammad Usama Sardar",
        [
            "email:12mseemsardar@seecs.edu.pk",
            "email:56355592+muhammad-usama-sardar@users.noreply.github.com",
            "login:muhammad-usama-sardar",
        ],
    ),
    ("Nick Harper", ["email:nharper@chromium.org", "login:nharper"]),
    (
        "Nick Sullivan",
        [
            "email:nicholas.sullivan@gmail.com",
            "email:nick@Nicks-MacBook-Pro.local",
            "email:nick@cloudflare.com",
            "login:grittygrease",
        ],
    ),
    ("Nikos Mavrogiannopoulos", ["email:nmav@gnutls.org", "email:nmav@redhat.com", "login:nmav"]),
    ("Nimrod Aviram", ["email:nimrod.aviram@gmail.com", "login:nimia"]),
    ("Olivier Levillain", ["email:olivier.levillain@picty.org", "login:pictyeye"]),
    ("Peter Wu", ["email:peter@lekensteyn.nl", "email:pwu@cloudflare.com", "login:Lekensteyn"]),
    ("Rich Salz", ["email:rsalz@akamai.com", "login:richsalz"]),
    ("Richard Barnes", ["email:rlb@ipv.sx", "login:bifurcation"]),
    ("Robert Sayre", ["email:sayrer@gmail.com", "login:sayrer"]),
    ("Roelof DuToit", ["email:r@nerd.ninja", "login:roelfdutoit"]),
    ("russhousley", ["email:housley@vigilsec.com", "login:russhousley"]),
    ("Sam", ["email:zzq1015@users.noreply.github.com", "login:zzq1015"]),
    (
        "Santiago Zanella-Beguelin",
        [
            "email:s-zanella@users.noreply.github.com",
            "email:santiago@microsoft.com",
            "login:s-zanella",
        ],
    ),
    ("Simone Ragusa", ["email:hi@interrato.dev", "login:interrato"]),
    ("宋冬生", ["email:dongsheng.song@gmail.com", "login:songdongsheng"]),
    ("Stephen Checkoway", ["email:s@pahtak.org", "login:stevecheckoway"]),
    ("Stephen Farrell", ["email:stephen.farrell@cs.tcd.ie", "login:sftcd"]),
    ("Subodh Iyengar", ["email:mani.subodh@gmail.com", "login:siyengar"]),
    ("Thijs van Dijk", ["email:github@inurbanus.nl", "login:thijzert"]),
    ("Thyla van der Merwe", ["email:tvandermerwe@mozilla.com", "login:tvdmerwe"]),
    ("Tim Ruffing", ["email:tim@timruffing.de", "login:real-or-random"]),
    ("Tim Taubert", ["email:tim@timtaubert.de", "login:ttaubert"]),
    ("Tobias Nießen", ["email:tniessen@tnie.de", "login:tniessen"]),
    ("Todd Short", ["email:tshort@akamai.com", "login:tmshort"]),
    ("Tom Ritter", ["email:tom@ritter.vg", "login:tomrittervg"]),
    ("Victor Vasiliev", ["email:vasilvv@google.com", "login:vasilvv"]),
    ("Watson Ladd", ["email:watsonbladd@gmail.com", "email:wladd@mozilla.com", "login:wbl"]),
    (
        "Xiaoyin Liu",
        [
            "email:xiaoyin.l@outlook.com",
            "email:xiaoyinl@users.noreply.github.com",
            "login:xiaoyinl",
        ],
    ),
    ("Yoav Nir", ["email:yoav.nir@gmail.com", "login:yoavnir"]),
    ("yuhong", ["email:yuhongbao_386@hotmail.com", "login:yuhong"]),
    ("zhenfei", ["email:zzhang@securityinnovation.com", "login:zhenfeizhang"]),
]

EKR = ["login:ekr", "email:ekr@rtfm.com", "name:Eric Rescorla", "name:EKR"]
SEAN_TURNER = [
    "login:seanturner",
    "name:Sean Turner",
    "email:sean@sn3rd.com",
    "email:turners@ieca.com",
    "email:spt@Thunderfish.local",
    "email:spt@192.168.1.6",
]

# Distinct humans whose names overlap: a shared surname, a shared given name (with the same
# local part, tim@…), and a given name that is the other's surname.
SIMILAR_BUT_DIFFERENT = [
    ("name:Todd Short", "name:Harold Short"),
    ("name:Hannes Mehnert", "name:Hannes Tschofenig"),
    ("name:Tim Taubert", "name:Tim Ruffing"),
    ("name:David Benjamin", "name:Benjamin Kaduk"),
    ("name:John Mattsson", "name:John M. Schanck"),
    ("name:Nick Sullivan", "name:Nick Harper"),
]


@pytest.fixture(scope="module")
def record(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Identity], list[LinkEvidence]]:
    """Identities and pull-request links read from the bundle, pull-request heads included."""
    bundle = require_corpus()
    git_dir = tmp_path_factory.mktemp("people") / "tls13-spec.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", str(bundle), str(git_dir)], check=True)
    subprocess.run(
        [
            "git",
            "--git-dir",
            str(git_dir),
            "fetch",
            "--quiet",
            str(bundle),
            "refs/pull/*/head:refs/pull/*/head",
        ],
        check=True,
    )
    shown = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", "refs/heads/gh-pages:archive.json"],
        check=True,
        capture_output=True,
    )
    archive = json.loads(shown.stdout)
    commit_map = load_commit_map(bundle.parent / "commit-map.tsv")
    assert commit_map, "the corpus ships commit-map.tsv beside the bundle"
    repo = GitRepository(git_dir, str(bundle))
    identities = identities_from_git(signatures(repo)) + identities_from_archive(archive) + BYLINES
    return identities, link_evidence_from_prs(partial(pull_authors, repo), archive, commit_map)


@pytest.fixture(scope="module")
def people(record: tuple[list[Identity], list[LinkEvidence]]) -> PeopleTable:
    """The people of the TLS record, with records/tls13/people.toml applied."""
    identities, links = record
    return resolve_people(identities, links, load_overrides(MANIFEST))


@pytest.fixture(scope="module")
def rules_only(record: tuple[list[Identity], list[LinkEvidence]]) -> PeopleTable:
    """The same people with no overrides: what the rules and the links find on their own."""
    identities, links = record
    return resolve_people(identities, links)


def one_person(table: PeopleTable, selectors: list[str]) -> str:
    """The key of the single person every selector lands on (failing otherwise)."""
    keys = set()
    for selector in selectors:
        found = table.matching(selector)
        assert len(found) == 1, f"{selector} selects {[p.key for p in found]}"
        keys.add(found[0].key)
    assert len(keys) == 1, f"{selectors} are split over {sorted(keys)}"
    return keys.pop()


@pytest.mark.parametrize("table_name", ["people", "rules_only"])
def test_eric_rescorla_is_one_person(table_name: str, request: pytest.FixtureRequest) -> None:
    table: PeopleTable = request.getfixturevalue(table_name)
    key = one_person(table, [*EKR, "name:ekr"])
    person = next(p for p in table.people if p.key == key)
    assert (person.key, person.name) == ("eric-rescorla", "Eric Rescorla")
    assert person.logins == ("ekr",)
    assert person.emails == ("ekr@rtfm.com",)
    assert any(i.kind == "document" for i in person.identities)
    assert {i.name for i in person.identities} == {"Eric Rescorla", "EKR", "ekr", None}


@pytest.mark.parametrize("table_name", ["people", "rules_only"])
def test_sean_turner_is_one_person(table_name: str, request: pytest.FixtureRequest) -> None:
    table: PeopleTable = request.getfixturevalue(table_name)
    key = one_person(table, SEAN_TURNER)
    person = next(p for p in table.people if p.key == key)
    assert (person.key, person.name) == ("sean-turner", "Sean Turner")
    assert person.logins == ("seanturner",)
    assert person.emails == (
        "sean@sn3rd.com",
        "spt@192.168.1.6",
        "spt@thunderfish.local",
        "turners@ieca.com",
    )


@pytest.mark.parametrize(
    ("name", "selectors"), SEVERAL_IDENTITIES, ids=[n for n, _ in SEVERAL_IDENTITIES]
)
def test_people_with_several_identities_are_one_person(
    people: PeopleTable, name: str, selectors: list[str]
) -> None:
    key = one_person(people, selectors)
    person = next(p for p in people.people if p.key == key)
    assert person.name == name
    assert len(person.identities) >= 2


def test_the_list_of_people_with_several_identities_is_complete(people: PeopleTable) -> None:
    listed = {name for name, _ in SEVERAL_IDENTITIES} | {"Eric Rescorla", "Sean Turner"}
    found = {p.name for p in people.people if len(p.identities) > 1}
    assert found == listed


@pytest.mark.parametrize(("one", "other"), SIMILAR_BUT_DIFFERENT)
def test_similar_names_stay_apart(people: PeopleTable, one: str, other: str) -> None:
    assert one_person(people, [one]) != one_person(people, [other])


def test_logins_that_carried_someone_elses_commits_stay_apart(
    people: PeopleTable, rules_only: PeopleTable
) -> None:
    # emanjon re-submitted EKR's commits (#1210, #1369), keithw Judson Wilson's (#580);
    # ekr-aibot is a bot. The links alone must not join them, let alone with the overrides.
    for table in (people, rules_only):
        assert one_person(table, ["login:emanjon"]) != one_person(table, ["login:ekr"])
        assert one_person(table, ["login:ekr-aibot"]) != one_person(table, ["login:ekr"])
        assert one_person(table, ["login:keithw"]) != one_person(
            table, ["email:wilson.judson@gmail.com"]
        )


def test_every_merge_says_why(people: PeopleTable) -> None:
    rules = {rule.value for rule in MergeRule}
    for person in people.people:
        assert len(person.merges) == len(person.identities) - 1, person.key
        for merge in person.merges:
            assert merge.rule in rules
            assert merge.evidence.strip()
    used = {m.rule for p in people.people for m in p.merges}
    assert used == rules - {MergeRule.SAME_LOGIN}


def test_every_override_selects_someone(people: PeopleTable) -> None:
    assert people.unmatched_selectors == ()


def test_totals(people: PeopleTable, rules_only: PeopleTable) -> None:
    # 321 distinct identities (148 git signatures, 171 GitHub logins, 2 bylines) make 174
    # people; the rules and links alone find 182, and the overrides join 8 more pairs.
    assert people.identity_count == rules_only.identity_count == 321
    assert len(rules_only.people) == 182
    assert len(people.people) == 174
    assert len({p.key for p in people.people}) == len(people.people)
