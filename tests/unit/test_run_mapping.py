"""A build lets go of its records once the run is mapped for the last time, before the gate.

At ×100 the records are some 7 GiB; the gate's workers fork from the build process, and each
comes to hold pages of whatever that process still holds. So the records must be gone (not
merely unused) when the gate starts, wherever the writer maps the run only once (the embedded
store, in memory or on disk), and still there for the second pass a server's write needs.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ratified_rdf import Brain, Verdict, build
from ratified_rdf.audit import AuditLog
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.records.models import SpecRecords
from tests.pigeon import MANIFEST, make_pigeon_repo


@pytest.fixture(scope="module")
def pigeon_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_pigeon_repo(tmp_path_factory.mktemp("pigeon"))


def _watch_records(monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[bool]]:
    """Weak references to every SpecRecords the build reads, and, for each time the gate
    began checking a staged run, whether all of them were still alive then."""
    refs: list[weakref.ref[SpecRecords]] = []
    alive_at_gate: list[bool] = []
    original_read: Callable[..., SpecRecords] = build.read_spec
    original_check = ShaclGate.check_staged

    def read_spec(*args: Any, **kwargs: Any) -> SpecRecords:
        records = original_read(*args, **kwargs)
        refs.append(weakref.ref(records))
        return records

    def check_staged(self: ShaclGate, *args: Any, **kwargs: Any) -> None:
        alive_at_gate.append(all(ref() is not None for ref in refs))
        original_check(self, *args, **kwargs)

    monkeypatch.setattr(build, "read_spec", read_spec)
    monkeypatch.setattr(ShaclGate, "check_staged", check_staged)
    return refs, alive_at_gate


@pytest.mark.parametrize("where", ["memory", "disk"])
def test_records_are_gone_when_the_gate_starts(
    pigeon_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    refs, alive_at_gate = _watch_records(monkeypatch)
    path = tmp_path / "store" if where == "disk" else None
    brain, report = Brain.build(MANIFEST, source=str(pigeon_repo), path=path)
    try:
        assert len(refs) == 1
        assert alive_at_gate == [False]
        assert report.revisions > 0 and report.sections > 0 and report.alignments > 0
        # Nothing was lost with them: the brain answers from what the single pass staged.
        answer = brain.ask("what did section 2.1 of draft-example-pigeon-00 become in the RFC?")
        assert answer.verdict is Verdict.ANSWERED
        assert answer.results[0].final_section_number == "3.1"
    finally:
        brain.close()


def test_a_server_store_keeps_them_for_its_second_pass(
    pigeon_repo: Path, monkeypatch: pytest.MonkeyPatch, oxigraph_url: str, tmp_path: Path
) -> None:
    refs, alive_at_gate = _watch_records(monkeypatch)
    # An audit log of the test's own: a server's default one lives in the user's state folder,
    # signed by whichever key an earlier run used.
    log = AuditLog.open(tmp_path / "audit")
    brain, report = Brain.build(MANIFEST, source=str(pigeon_repo), path=oxigraph_url, audit=log)
    try:
        assert alive_at_gate == [True]  # the run is written by mapping it again
        assert report.batches > 0 and report.triples > 300
        answer = brain.ask("what did section 2.1 of draft-example-pigeon-00 become in the RFC?")
        assert answer.verdict is Verdict.ANSWERED
    finally:
        brain.close()
    assert refs[0]() is None  # and let go of once written


def test_the_mapping_refuses_a_pass_it_was_not_told_of() -> None:
    from ratified_rdf.build import _MappingParts, _RunMapping
    from ratified_rdf.graph.mapping import RunContext
    from ratified_rdf.trust import TenantId

    parts = _MappingParts(
        SpecRecords.model_construct(revisions=[], rfcs=[], alignments=[], drafts=[]),
        None,
        None,
        {},
        [],
        RunContext(TenantId.default(), "b", "r"),
        (),
    )
    mapping = _RunMapping(parts, passes=1)
    mapping()  # the one pass it was told of (not consumed: nothing is mapped)
    with pytest.raises(RuntimeError, match="mapped more often"):
        mapping()
