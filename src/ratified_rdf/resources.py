"""Find the ontology, shapes, queries and records that ship with the library.

They live at the top of the repository (the design card's layout); an installed wheel carries
copies under ``ratified_rdf/_data``. Both are looked for, the wheel's first.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


def resource_dir(name: str) -> Path:
    """The folder ``ontology``, ``shapes``, ``sparql`` or ``records``."""
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parents[1] / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"The {name}/ folder that ships with ratified-rdf is missing; reinstall the package."
    )
