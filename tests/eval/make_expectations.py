"""Write the expected answers into tests/eval/questions.toml from the independent parser.

Each question with a ``derive`` recipe gets its ``expect`` table recomputed by
:mod:`tests.eval.independent`; questions without one (the out-of-scope ones, expecting
``verdict = "unknown"``) are left as written. Only numbers, section ids and revision names are
written, never corpus text. Recipes::

    words <rfc> <heading words>        the one RFC section whose heading fits the words
    rfcsection <rfc> <number>          that RFC section itself (checked to exist)

(both add ``also``: the same-headed section of the other RFC, a lenient match only)
    became <series> <revision> <num>   the RFC section with the same heading
    history <rfc> <number>             revisions in the RFC's lineage holding the same heading
    count <rfc> <number>               posts naming the section while it changed, with tolerance
    revisions <series>                 every revision of the series
    chain <series> <revision>          the revisions from that one to the series' last

Run: ``python tests/eval/make_expectations.py [QUESTIONS]``.
"""

from __future__ import annotations

import math
import re
import sys
import tomllib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# A sibling script, not a package: found through the path entry above.
import independent as ind

QUESTIONS = Path(__file__).resolve().parent / "questions.toml"


def count_tolerance(expected: int) -> int:
    """How far a counted answer may stray: the parser only approximates the pipeline's links."""
    return max(2, math.ceil(0.25 * expected))


def _toml_value(value: object) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def _also(rfc: int, number: str) -> dict[str, object]:
    """Same-headed sections of the other RFCs, scored as a lenient match (never as strict)."""
    key = ind.section(ind.rfc_headings(rfc), number).key
    also = [
        f"{other} {found.number}"
        for other in ind.RFCS
        if other != rfc and (found := ind.by_key(ind.rfc_headings(other), key))
    ]
    return {"also": also} if also else {}


def expectation(recipe: str) -> dict[str, object]:
    """The expect table for one ``derive`` recipe."""
    verb, *args = recipe.split()
    if verb == "words":
        rfc = int(args[0])
        number = ind.heading_with_words(rfc, " ".join(args[1:]))
        return {"rfc": rfc, "section": number, **_also(rfc, number)}
    if verb == "rfcsection":
        rfc, number = int(args[0]), args[1]
        if ind.section(ind.rfc_headings(rfc), number) is None:
            raise ValueError(f"RFC {rfc} has no section {number}.")
        return {"rfc": rfc, "section": number, **_also(rfc, number)}
    if verb == "became":
        found = ind.became(args[0], int(args[1]), args[2])
        if found is None:
            raise ValueError(f"No RFC section carries the heading of {recipe!r}.")
        return {"rfc": found[0], "final_section": found[1]}
    if verb == "history":
        return {"revisions": ind.history(int(args[0]), args[1])}
    if verb == "count":
        count = ind.count_posts_mentioning(int(args[0]), args[1])
        return {"count": count, "what": "posts", "tolerance": count_tolerance(count)}
    if verb == "revisions":
        return {"revisions": ind.series_revisions(args[0])}
    if verb == "chain":
        return {"revisions": ind.series_revisions(args[0], int(args[1]))}
    raise ValueError(f"Unknown recipe verb {verb!r} in {recipe!r}.")


def main(path: Path = QUESTIONS) -> None:
    """Recompute every derived ``expect`` table in ``path`` in place."""
    questions = tomllib.loads(path.read_text(encoding="utf-8"))["question"]
    tables: dict[str, str] = {}
    for question in questions:
        if "derive" in question:
            print(f"{question['id']}: {question['derive']}", file=sys.stderr)
            table = expectation(question["derive"])
            tables[question["id"]] = (
                "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in table.items()) + " }"
            )
    lines = path.read_text(encoding="utf-8").splitlines()
    current: str | None = None
    for i, line in enumerate(lines):
        match = re.match(r'^id = "([^"]+)"', line)
        if match:
            current = match.group(1)
        elif line.startswith("expect = ") and current in tables:
            lines[i] = f"expect = {tables[current]}"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"Wrote {len(tables)} expectations into {path}.", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else QUESTIONS)
