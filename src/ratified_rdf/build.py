"""The main job: read a repository through its manifest and write a brain, batch by gated batch."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from tqdm import tqdm

from ratified_rdf.graph import vocab as v
from ratified_rdf.graph.gate import ShaclGate
from ratified_rdf.graph.mapping import spec_batches
from ratified_rdf.graph.store import OxigraphStore
from ratified_rdf.graph.writer import Writer
from ratified_rdf.records.manifest import load_manifest
from ratified_rdf.records.spec import read_spec
from ratified_rdf.sources.git_repo import GitRepository, load_commit_map


class BuildReport(BaseModel):
    """What a build did, for the CLI and the benchmarks."""

    model_config = ConfigDict(frozen=True)

    brain_id: str
    run_id: str
    source: str
    revisions: int
    rfcs: int
    sections: int
    alignments: int
    batches: int
    triples: int
    """Distinct triples written (a commit shared by two batches counts once)."""
    read_seconds: float
    write_seconds: float
    total_seconds: float


def build(
    manifest_path: str | Path,
    *,
    source: str | None = None,
    store: OxigraphStore,
    cache_dir: Path | None = None,
    progress: bool = False,
) -> BuildReport:
    """Build (or rebuild) the brain a manifest describes into ``store``.

    ``source`` overrides the manifest's repository URL with a local clone or a bundle, for
    offline builds. The new run becomes current only once every batch has passed the gate.
    """
    started = time.perf_counter()
    manifest, _folder = load_manifest(manifest_path)
    origin = source or manifest.brain.repository
    repo = GitRepository.open(origin, cache_dir)
    commit_map = _commit_map(origin, manifest.brain.commit_map)
    bar = tqdm(
        total=sum(len(d.expected_revisions()) for d in manifest.draft) + len(manifest.rfc) + 1,
        desc="reading",
        unit="doc",
        disable=not progress,
        file=sys.stderr,
    )

    def step(label: str) -> None:
        bar.set_postfix_str(label, refresh=False)
        bar.update(1)

    records = read_spec(manifest, repo, commit_map, step)
    bar.close()
    read_done = time.perf_counter()
    writer = Writer(store, ShaclGate(), manifest.brain.id)
    run = writer.begin_run()
    batches = list(spec_batches(records, run))
    distinct: set[tuple[str, object]] = set()
    for batch in tqdm(
        batches, desc="writing (SHACL-gated)", unit="batch", disable=not progress, file=sys.stderr
    ):
        writer.write(batch)
        distinct.update((batch.graph, t) for t in batch.triples)
    writer.commit(run, used=[v.repository_iri(manifest.brain.repository)])
    done = time.perf_counter()
    return BuildReport(
        brain_id=manifest.brain.id,
        run_id=run.run_id,
        source=origin,
        revisions=len(records.revisions),
        rfcs=len(records.rfcs),
        sections=sum(len(r.document.sections) for r in records.revisions)
        + sum(len(r.document.sections) for r in records.rfcs),
        alignments=len(records.alignments),
        batches=len(batches),
        triples=len(distinct),
        read_seconds=round(read_done - started, 3),
        write_seconds=round(done - read_done, 3),
        total_seconds=round(done - started, 3),
    )


def _commit_map(origin: str, name: str | None) -> dict[str, str]:
    """The commit-id map shipped beside a local bundle or clone, if the manifest names one."""
    local = Path(origin).expanduser()
    if name is None or not local.exists():
        return {}
    folder = local if local.is_dir() else local.parent
    return load_commit_map(folder / name)
