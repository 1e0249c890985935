"""On both real corpora, every batch of a build is prepared from the run's gate context as
from the staged run itself, line for line (:mod:`ratified_rdf.graph.gate_context`): the
documents the gate validated are the ones it validated when it read the staged run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ratified_rdf import build as build_module
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.store import OxigraphStore
from tests.conftest import MANIFEST, QUIC_MANIFEST
from tests.gate_context_checks import assert_prepared_alike
from tests.recording import RecordingGate

pytestmark = pytest.mark.corpus


@pytest.mark.parametrize("corpus", ["tls", "quic"])
def test_every_batch_is_prepared_from_the_context_as_from_the_staged_run(
    corpus: str,
    tls_bundle: Path,
    quic_bundle: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    manifest, bundle = (MANIFEST, tls_bundle) if corpus == "tls" else (QUIC_MANIFEST, quic_bundle)
    monkeypatch.setattr(build_module, "ShaclGate", RecordingGate)
    RecordingGate.seen, RecordingGate.runs = [], []
    store = OxigraphStore(tmp_path / "store")
    report = build_module.build(manifest, source=str(bundle), store=store)
    ((staged, run),) = RecordingGate.runs
    assert len(staged) == report.batches
    # Nodes more than one batch touches (people, commits two pull requests share, RFCs): their
    # descriptions come from the staged run, so the check covers them. (Since the view adds
    # nothing to a node of the run, sections are no longer among them: QUIC has some fifty.)
    assert run.context is not None and len(run.context.shared) > 20
    assert assert_prepared_alike(ShaclGate(), staged, run) > report.triples
