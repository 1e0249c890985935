"""Keep a reader's own SPARQL inside the reader's dataset: no calls to other endpoints.

The dataset itself is safe by construction (the store is always given the reader's graphs,
which override FROM and bound GRAPH). What the dataset cannot stop is ``SERVICE``, with which
Oxigraph would fetch from any URL the text names; so a query that uses it is refused before it
runs. The check is lexical and errs on the side of refusing: it strips comments, strings and
IRIs, then looks for the keyword, so a prefixed name spelled ``ex:service`` is refused too.
"""

from __future__ import annotations

import re

from ratified_rdf.queries.files import QueryError

_NOT_CODE = re.compile(
    r"""
      '''(?:[^'\\]|\\.|'(?!''))*'''      # long single-quoted string
    | \"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"  # long double-quoted string
    | '(?:[^'\\\n]|\\.)*'                 # single-quoted string
    | "(?:[^"\\\n]|\\.)*"                 # double-quoted string
    | <[^<>"{}|^`\\\s]*>                  # IRI
    | \#[^\n]*                            # comment
    """,
    re.VERBOSE,
)
_SERVICE = re.compile(r"\bSERVICE\b", re.IGNORECASE)


_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")


def refuse_service(sparql: str) -> None:
    """Raise :class:`QueryError` when ``sparql`` would call another endpoint (SERVICE)."""
    # SPARQL decodes \u and \U escapes anywhere in the text before it parses it.
    text = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), sparql)
    if _SERVICE.search(_NOT_CODE.sub(" ", text)):
        raise QueryError(
            "This query uses SERVICE, which would fetch from another endpoint; queries here "
            "read only this brain's graphs. Run the federated part against that endpoint."
        )
