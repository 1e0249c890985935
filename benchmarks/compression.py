"""Compression benchmark: the server's gzip level against Brotli qualities, side by side.

Run from the repository root::

    python -m benchmarks.compression [--store DIR]    # a built brain's dump
    python -m benchmarks.compression                  # the pigeon brain

It serialises the brain's graphs as N-Quads (the largest answers the server sends are graphs
and dumps) and compresses the same bytes with zlib at the server's gzip level and with Brotli
at several qualities, in chunks the size a stream writes, as a stream's producer does. It prints
each coding's size and CPU time as ratios to gzip's, measured in one run, so a busy machine
moves both alike. Nothing here asserts on timings.
"""

from __future__ import annotations

import argparse
import io
import tempfile
import time
from pathlib import Path

from ratified_rdf import Brain
from ratified_rdf.surfaces import _http, standard

QUALITIES = (1, 3, 4, 5, 6, 9)


def _payload(store: str | None) -> bytes:
    if store is None:
        from tests.pigeon import MANIFEST, make_pigeon_repo

        with tempfile.TemporaryDirectory() as folder:
            repo = make_pigeon_repo(Path(folder))
            brain, _ = Brain.build(MANIFEST, source=str(repo))
    else:
        brain = Brain.open(store)
    out = io.BytesIO()
    brain.dump(out)
    return out.getvalue()


def _compress(coding: str, data: bytes) -> tuple[int, float]:
    started = time.process_time()
    compressor = _http.compressor(coding)
    size = 0
    for at in range(0, len(data), standard.CHUNK_BYTES):
        size += len(compressor.compress(data[at : at + standard.CHUNK_BYTES]))
    size += len(compressor.flush())
    return size, time.process_time() - started


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", help="a built brain's store folder (default: pigeon)")
    parser.add_argument("--rounds", type=int, default=5, help="times each coding runs")
    args = parser.parse_args()
    data = _payload(args.store)
    rows: list[tuple[str, int, float]] = []
    for label, quality in [("gzip", None), *((f"br q{q}", q) for q in QUALITIES)]:
        if quality is not None:
            _http.BROTLI_QUALITY = quality
        best = min(
            (_compress("gzip" if quality is None else "br", data) for _ in range(args.rounds)),
            key=lambda r: r[1],
        )
        rows.append((label, *best))
    _, gzip_size, gzip_cpu = rows[0]
    print(f"{len(data):,} bytes of N-Quads; ratios to gzip level {_http.GZIP_LEVEL}\n")
    print("| coding | size / gzip | CPU / gzip | size / input |")
    print("|---|---|---|---|")
    for label, size, cpu in rows:
        print(
            f"| {label} | {size / gzip_size:.2f} | {cpu / gzip_cpu:.2f} | {size / len(data):.3f} |"
        )


if __name__ == "__main__":
    main()
