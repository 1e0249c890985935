"""``BuildReport``: what a build did. Apart from ``build``, so that the front door's signatures
resolve (``typing.get_type_hints(Brain.build)``) without importing what a build runs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class BuildReport(BaseModel):
    """What a build did, for the CLI and the benchmarks."""

    model_config = ConfigDict(frozen=True)

    brain_id: str
    tenant: str
    run_id: str
    source: str
    revisions: int
    rfcs: int
    sections: int
    alignments: int
    batches: int
    triples: int
    """Distinct triples written (a commit shared by two batches counts once)."""
    gate: str = ""
    """The SHACL engine that gated the run ("pyshacl-turbo 0.6.5"; a cross-checked run names
    both)."""
    problems: tuple[str, ...] = ()
    """Records reported and skipped (a malformed mail message, say), as sentences."""
    notes: tuple[str, ...] = ()
    """What the build decided that a reader of its answers should know, as sentences: dates
    that ran backwards along a chain, drafts whose sections cannot be followed into an RFC,
    changes made after publication."""
    read_seconds: float
    write_seconds: float
    total_seconds: float
