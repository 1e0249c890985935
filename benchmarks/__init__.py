"""Benchmarks of ratified-rdf: scripts that measure and print, run from the repository root as
``python -m benchmarks.<name>``. They never assert on timings; what they compare, they compare
side by side in one run.

Scripts:

- ``core``: build time, question latency (on disk and in memory), audit overhead, and the same
  SPARQL on Oxigraph against rdflib, on the TLS brain.
- ``copy_thread``: which thread loads a brain's in-memory copy, in alternating processes.
- ``engines``: the card queries on Oxigraph (disk and memory), FalkorDB and rdflib.
- ``build_vs_load``: a build against a bulk load of its own output, and against an
  earlier commit's build (``--before``).
- ``endpoint``: the card questions and their SPARQL over HTTP against in-process.
- ``load``: ``ratified serve`` under many clients (and one hostile client).
- ``crash``: builds killed with SIGKILL at random moments.
- ``scale``: a synthetic corpus shaped like TLS, ×1, ×10 (×100), built and asked.
- ``synthetic``: the generator ``scale`` uses (run alone: generate one corpus).
- ``growth``: whether a card's cost stays with its own data as the graph grows.
- ``fuzz``: the long form of ``tests/fuzz``.
- ``routing``: routing time alone, and the cards against an earlier commit.
- ``many_users``: what sharing one brain between processes costs.

Shared modules: ``report`` (tables, ratios, machine facts, ``benchmarks/out/`` and
``benchmarks/RESULTS.md``) and ``core`` (the TLS brain and the questions the others reuse).
``falkor_worker.py`` is not a benchmark: ``engines`` runs it by path in FalkorDB's own Python.
See ``benchmarks/README.md``.
"""
