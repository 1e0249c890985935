"""Scoping is always on: tenants never see each other's graphs, and a reader's clearance
chooses the graphs before any query runs, so restricted facts never enter a result."""

from __future__ import annotations

import io
import shutil
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from pyoxigraph import RdfFormat

from ratified_rdf import Brain, Verdict
from ratified_rdf import build as build_module
from ratified_rdf.answers.models import Answer, DiscussionPost
from ratified_rdf.build import build
from ratified_rdf.graph import writer
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.queries.files import QueryError
from ratified_rdf.queries.guard import QueryRefused
from ratified_rdf.trust import TENANT_ID_MESSAGES, Reader, TenantIdError
from tests.pigeon import MANIFEST, make_pigeon_repo

ATTACKS = Path(__file__).resolve().parents[1] / "fixtures" / "tenant_attacks.txt"
QUESTION = "who discussed RFC 9999 section 3.1?"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("g"))


def _records(folder: Path, *, tenant: str | None = None, mail: bool = True) -> Path:
    """The pigeon records with the mailing list restricted (and, optionally, left out)."""
    shutil.copytree(MANIFEST.parent, folder)
    manifest = folder / "manifest.toml"
    text = manifest.read_text()
    if tenant is not None:
        text = text.replace('id = "pigeon"', f'id = "pigeon"\ntenant = "{tenant}"')
    if not mail:
        text = text.split("[[discussion.mail]]")[0]
    manifest.write_text(text + '\n[clearance]\nmail = "restricted"\n')
    return manifest


@pytest.fixture(scope="module")
def restricted_mail(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> OxigraphStore:
    store = OxigraphStore()
    build(_records(tmp_path_factory.mktemp("r") / "records"), source=str(repo), store=store)
    return store


def _comparable(answer: Answer) -> dict:
    """An answer without what differs between any two runs (engine time, run ids)."""
    data = answer.model_dump(mode="json")
    data["queries"] = [(q["name"], q["params"], q["rows"]) for q in data["queries"]]
    return data


def test_a_reader_cleared_for_restricted_sees_the_mail(restricted_mail: OxigraphStore) -> None:
    brain = Brain.from_store(restricted_mail, reader=Reader(clearance="restricted"))
    assert brain.scope.withheld_graphs == []
    # One set of expertise scores: the one computed with the mail.
    scores = [g for g in brain.read_graphs if "/expertise" in g]
    assert [g.rsplit("/", 1)[-1] for g in scores] == ["expertise-restricted"]
    posts = [r for r in brain.ask(QUESTION).results if isinstance(r, DiscussionPost)]
    # The review's comment on a line of the diff is discussion too (rule review-line).
    assert [p.post_kind for p in posts] == ["opening", "message", "review", "review-comment"]


def test_a_public_reader_gets_no_restricted_fact_and_no_trace_of_it(
    restricted_mail: OxigraphStore, repo: Path, tmp_path: Path
) -> None:
    public = Brain.from_store(restricted_mail)  # public is the default clearance
    # Mail is restricted, and so are the expertise scores computed with it; the public
    # reader gets scores computed without it.
    assert sorted(g.rsplit("/", 1)[-1] for g in public.scope.withheld_graphs) == [
        "expertise-restricted",
        "mail",
        "view-mail",  # the card view of mail is at mail's clearance
    ]
    answer = public.ask(QUESTION)
    posts = [r for r in answer.results if isinstance(r, DiscussionPost)]
    assert [p.post_kind for p in posts] == ["opening", "review", "review-comment"]
    assert "mailarchive" not in answer.model_dump_json()
    assert answer.withheld is None
    # Nothing about the withheld evidence shows: the public answer is exactly what it is
    # when the restricted list holds no mail at all.
    without = OxigraphStore()
    build(_records(tmp_path / "records", mail=False), source=str(repo), store=without)
    empty = Brain.from_store(without)
    assert _comparable(answer) == _comparable(empty.ask(QUESTION))
    ask = "who should I ask about RFC 9999 section 3.1?"
    assert _comparable(public.ask(ask)) == _comparable(empty.ask(ask))
    # Nor do the reader's own SPARQL, dumps or validation reach it.
    rows = public.query(
        "SELECT ?t WHERE { GRAPH ?g { ?t a <https://w3id.org/ratified-rdf/ontology#MailThread> } }"
    ).rows
    assert not rows
    buffer = io.BytesIO()
    public.dump(buffer, RdfFormat.N_QUADS)
    graphs = {line.rsplit(" ", 2)[-2] for line in buffer.getvalue().decode().splitlines()}
    assert graphs == {f"<{g}>" for g in [*public.read_graphs, public.catalog]}


class _Moment(datetime):
    """A clock that always reads the same moment, so two builds get the same run id and times."""

    @classmethod
    def now(cls, tz: object = None) -> _Moment:
        return cls(2030, 5, 1, 12, 0, tzinfo=UTC)


def test_a_public_dump_is_the_dump_of_the_brain_built_without_what_it_withholds(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two builds differ only by the run id and the moments they ran at: both are fixed here,
    # so whatever else differs between the dumps is what the withheld graphs leaked.
    monkeypatch.setattr(writer, "datetime", _Moment)
    monkeypatch.setattr(build_module, "datetime", _Moment)
    monkeypatch.setattr(writer, "secrets", SimpleNamespace(token_hex=lambda n: "c0ffee"))
    dumps, described, digests = [], [], []
    for name, restricted in (("with", True), ("without", False)):
        folder = tmp_path / name
        shutil.copytree(MANIFEST.parent, folder)
        manifest = folder / "manifest.toml"
        text = manifest.read_text()
        if restricted:
            text += '\n[clearance]\nmail = "restricted"\n'
        else:
            mail = '[[discussion.mail]]\nlist = "pigeon"\nfile = "pigeon-list.mbox"\n'
            assert mail in text
            text = text.replace(mail, "")
        manifest.write_text(text)
        store = OxigraphStore()
        build(manifest, source=str(repo), store=store)
        public = Brain.from_store(store)
        assert bool(public.scope.withheld_graphs) is restricted
        buffer = io.BytesIO()
        public.dump(buffer, RdfFormat.N_QUADS)
        dumps.append(buffer.getvalue())
        # The catalog is in the dump, whether or not anything is withheld.
        assert f"<{public.catalog}> .".encode() in buffer.getvalue()
        described.append(sorted(map(str, public.describe_dataset())))
        digests.append(public.content_hash())
    assert dumps[0] == dumps[1]
    # Nor do the VoID description (counts, licences) or the content hash tell them apart.
    assert described[0] == described[1] and digests[0] == digests[1]
    assert b"/mail>" not in dumps[0] and b"/expertise-restricted>" not in dumps[0]


def test_the_acknowledge_policy_says_only_that_more_exists(
    restricted_mail: OxigraphStore,
) -> None:
    told = Brain.from_store(restricted_mail, reader=Reader(redaction="acknowledge"))
    answer = told.ask(QUESTION)
    assert answer.withheld == "More exists above your clearance."
    silent = told.read_as(told.reader.but(redaction="silent")).ask(QUESTION)
    assert silent.withheld is None
    assert _comparable(answer) == {**_comparable(silent), "withheld": answer.withheld}
    # Where nothing more exists, nothing is acknowledged.
    assert told.ask("what did section 2.1 of draft-example-pigeon-00 become?").withheld is None


def test_tenants_never_see_each_other(repo: Path, tmp_path: Path) -> None:
    store = OxigraphStore()
    build(_records(tmp_path / "a", tenant="acme"), source=str(repo), store=store)
    build(_records(tmp_path / "b", tenant="globex", mail=False), source=str(repo), store=store)
    acme = Brain.from_store(store, reader=Reader(tenant="acme", clearance="restricted"))
    globex = Brain.from_store(store, reader=Reader(tenant="globex", clearance="restricted"))
    assert all("/tenant/acme/" in g for g in acme.read_graphs + acme.graphs)
    assert all("/tenant/globex/" in g for g in globex.read_graphs + globex.graphs)
    # The other tenant's graphs are out of reach by name, through GRAPH or a reader; FROM is
    # refused outright.
    theirs = next(g for g in globex.read_graphs if g.endswith("/github"))
    with pytest.raises(QueryRefused, match="FROM"):
        acme.query(f"SELECT * FROM <{theirs}> WHERE {{ ?s ?p ?o }}")
    for sparql in (
        f"SELECT * WHERE {{ GRAPH <{theirs}> {{ ?s ?p ?o }} }}",
        "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
    ):
        graphs = {r["g"].value for r in acme.query(sparql).rows if "g" in r}
        assert not any("/tenant/globex/" in g for g in graphs)
        if "?g" not in sparql:
            assert all(
                "/tenant/globex/" not in str(v) for r in acme.query(sparql).rows for v in r.values()
            )
    mail = "SELECT ?t WHERE { ?t a <https://w3id.org/ratified-rdf/ontology#MailThread> }"
    assert acme.query(mail).rows and not globex.query(mail).rows
    assert globex.read_as(globex.reader.but(tenant="acme")).reader.tenant == "acme"
    with pytest.raises(Exception, match="no brain for tenant"):
        Brain.from_store(store, reader=Reader(tenant="initech"))


def test_every_hostile_tenant_id_is_refused_by_every_public_entry(
    restricted_mail: OxigraphStore,
) -> None:
    brain = Brain.from_store(restricted_mail)
    attacks = [
        line.split(" ", 1)[1].encode().decode("unicode_escape")
        for line in ATTACKS.read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert len(attacks) >= 100
    bypasses = []
    for attack in attacks:
        for entry in (
            lambda t: Brain.from_store(restricted_mail, reader=Reader(tenant=t)),
            lambda t: brain.read_as(brain.reader.but(tenant=t)),
        ):
            try:
                entry(attack)
            except TenantIdError as error:
                # A fixed sentence per rule: the input is never echoed.
                assert str(error) in TENANT_ID_MESSAGES.values()
            else:
                bypasses.append(attack)
    assert bypasses == []


def test_a_readers_query_cannot_call_out(restricted_mail: OxigraphStore) -> None:
    brain = Brain.from_store(restricted_mail)
    with pytest.raises(QueryError, match="SERVICE"):
        brain.query("SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }")
    # The word inside a string or an IRI is not a call.
    assert brain.query('SELECT ("SERVICE" AS ?x) WHERE {}').rows[0]["x"].value == "SERVICE"


def test_unknown_clearance_is_a_sentence(restricted_mail: OxigraphStore) -> None:
    with pytest.raises(ValueError, match="valid values are: public, internal"):
        Brain.from_store(restricted_mail, reader=Reader(clearance="top-secret"))
    assert Brain.from_store(restricted_mail).ask(QUESTION).verdict is Verdict.ANSWERED


def test_every_reading_entry_point_stays_inside_the_tenant(repo: Path, tmp_path: Path) -> None:
    store = OxigraphStore()
    build(_records(tmp_path / "a", tenant="acme"), source=str(repo), store=store)
    build(_records(tmp_path / "b", tenant="globex", mail=False), source=str(repo), store=store)
    acme = Brain.from_store(store, reader=Reader(tenant="acme", clearance="restricted"))
    globex = Brain.from_store(store, reader=Reader(tenant="globex", clearance="restricted"))
    thread = "SELECT ?t WHERE { ?t a <https://w3id.org/ratified-rdf/ontology#MailThread> }"
    [row] = acme.query(thread).rows
    mail_thread = row["t"].value
    # describe, ask, named queries, dumps: globex never sees acme's mail.
    assert acme.describe(mail_thread) and globex.describe(mail_thread) == []
    kinds = [r.post_kind for r in globex.ask(QUESTION).results if isinstance(r, DiscussionPost)]
    assert kinds == ["opening", "review", "review-comment"]
    final = "https://w3id.org/ratified-rdf/id/doc/rfc9999/section/3.1"
    posts = {
        name: {r["post"].value for r in b.run("section_posts", final=final)[0]}
        for name, b in (("acme", acme), ("globex", globex))
    }
    assert len(posts["acme"]) == 4 and posts["globex"] == posts["acme"] - {
        p for p in posts["acme"] if "/mail/" in p
    }
    buffer = io.BytesIO()
    globex.dump(buffer, RdfFormat.N_QUADS)
    assert (
        b"/tenant/acme/" not in buffer.getvalue() and mail_thread.encode() not in buffer.getvalue()
    )
    # Reviews are the reviewer's tenant's: a ratification in acme is not one in globex.
    acme.review(QUESTION, reviewer="Dana Reviewer", verdict="ratified")
    assert acme.ask(QUESTION).trust.state == "ratified"
    assert globex.ask(QUESTION).trust.state == "derived"
    assert globex.cards_in_state("ratified") == []
    # The heading index is shared by readers of the same graphs only.
    assert acme.reading.heading_index()[0] is not globex.reading.heading_index()[0]
