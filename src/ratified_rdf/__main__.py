"""``python -m ratified_rdf``: the ``ratified`` command, where the script is not on PATH."""

from ratified_rdf.surfaces.cli import main

main()
