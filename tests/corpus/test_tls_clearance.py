"""Clearance on the real TLS brain: a restricted (fictional) list added to it is invisible to
a public reader, who gets exactly the answer the brain gives without it, and visible to a
restricted reader, on the same question."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ratified_rdf import Answer, Brain
from ratified_rdf.answers.models import DiscussionPost
from ratified_rdf.build import build
from ratified_rdf.graph.store import OxigraphStore
from tests.conftest import MANIFEST

pytestmark = pytest.mark.corpus

PRIVATE = Path(__file__).resolve().parents[1] / "fixtures" / "tls-private" / "tls-private.mbox"
QUESTIONS = ("why does early data work this way?", "who should I ask about early data?")


@pytest.fixture(scope="module")
def with_private_list(tls_bundle: Path, tmp_path_factory: pytest.TempPathFactory) -> Brain:
    records = tmp_path_factory.mktemp("records") / "tls13"
    shutil.copytree(MANIFEST, records)
    shutil.copy(PRIVATE, records / PRIVATE.name)
    manifest = records / "manifest.toml"
    manifest.write_text(
        manifest.read_text()
        + f'\n[[discussion.mail]]\nlist = "tls-private"\nfile = "{PRIVATE.name}"\n'
        + '\n[clearance]\nmail = "restricted"\n'
    )
    store = OxigraphStore()
    build(manifest, source=str(tls_bundle), store=store)
    return Brain.from_store(store)


def _comparable(answer: Answer) -> dict:
    data = answer.model_dump(mode="json")
    data["queries"] = [(q["name"], q["params"], q["rows"]) for q in data["queries"]]
    return data


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_public_reader_cannot_tell_the_restricted_list_exists(
    with_private_list: Brain, tls_brain: Brain, question: str
) -> None:
    public = with_private_list.read_as(with_private_list.reader.but(clearance="public"))
    answer = public.ask(question)
    assert "Zoe Fictional" not in answer.model_dump_json()
    # No count, no hint: the very answer the brain gives when the list was never ingested.
    assert _comparable(answer) == _comparable(tls_brain.ask(question))


def test_the_acknowledge_policy_says_only_that_more_exists_where_it_does(
    with_private_list: Brain,
) -> None:
    told = with_private_list.read_as(
        with_private_list.reader.but(clearance="public", redaction="acknowledge")
    )
    assert told.ask(QUESTIONS[0]).withheld == "More exists above your clearance."
    # Zoe is nobody the people table knows, so no expertise score moved: nothing to say.
    assert told.ask(QUESTIONS[1]).withheld is None


def test_a_restricted_reader_sees_the_thread_on_the_same_question(
    with_private_list: Brain, tls_brain: Brain
) -> None:
    restricted = with_private_list.read_as(with_private_list.reader.but(clearance="restricted"))
    answer = restricted.ask(QUESTIONS[0])
    mail = [r for r in answer.results if isinstance(r, DiscussionPost) and r.post_kind == "message"]
    assert [(m.author, m.document, m.section_number) for m in mail] == [
        ("Zoe Fictional", "draft-ietf-tls-tls13-21", "4.2.9")
    ]
    public = [r for r in tls_brain.ask(QUESTIONS[0]).results if isinstance(r, DiscussionPost)]
    assert len(public) + 1 == len([r for r in answer.results if isinstance(r, DiscussionPost)])
