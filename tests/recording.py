"""A build that keeps every batch its SHACL gate prepared: what the engine tests compare
engines on, and what ``benchmarks.gate`` times them on."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ratified_rdf import Brain, BuildReport
from ratified_rdf import build as build_module
from ratified_rdf.graph.gate import ShaclGate, StagedBatch, StagedRun
from ratified_rdf.graph.violations import PreparedBatch


class RecordingGate(ShaclGate):
    """The build's gate, keeping each prepared batch and the seconds preparing it took.

    A staged run is prepared here, batch by batch, in this process (the build's gate would
    prepare a run staged in memory in its workers, where nothing could keep them)."""

    seen: ClassVar[list[PreparedBatch]] = []
    preparing: ClassVar[list[float]] = []
    runs: ClassVar[list[tuple[list[StagedBatch], StagedRun]]] = []
    """Each staged run the gate checked, with its staged batches (the store stays open)."""

    def check_staged(
        self,
        staged: Iterable[StagedBatch],
        run: StagedRun,
        *args: Any,
        alongside: Callable[[], None] | None = None,
        **kw: Any,
    ) -> None:
        staged = list(staged)
        RecordingGate.runs.append((staged, run))
        # As the build's workers prepare them: from the gate context the run was staged with.
        context = run.context
        prepared = (
            context.prepare(k)
            if context is not None
            else self.prepare_staged(k, run.store, run.graphs)
            for k in staged
        )
        self.check_all(prepared, *args, **kw)
        if alongside is not None:
            alongside()

    def check_all(self, prepared: Iterable[PreparedBatch], *args: Any, **kw: Any) -> None:
        def keep(items: Iterable[PreparedBatch]) -> Iterator[PreparedBatch]:
            iterator = iter(items)
            while True:
                started = time.perf_counter()
                item = next(iterator, None)
                RecordingGate.preparing.append(time.perf_counter() - started)
                if item is None:
                    return
                RecordingGate.seen.append(item)
                yield item

        super().check_all(keep(prepared), *args, **kw)


def recorded_build(
    manifest: Path, source: str, engine: str | None = None
) -> tuple[list[PreparedBatch], float, BuildReport]:
    """Build ``manifest`` from ``source`` into a temporary store, gated by ``engine`` (by
    default the gate's own): every prepared batch, the seconds preparing them took, and the
    build's report."""
    RecordingGate.seen, RecordingGate.preparing, RecordingGate.runs = [], [], []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_module, "ShaclGate", RecordingGate)
        if engine is not None:
            patch.setenv("RATIFIED_GATE_ENGINE", engine)
        with tempfile.TemporaryDirectory(prefix="ratified-recorded-") as folder:
            brain, report = Brain.build(manifest, path=Path(folder) / "store", source=source)
            brain.close()
    return list(RecordingGate.seen), sum(RecordingGate.preparing), report
