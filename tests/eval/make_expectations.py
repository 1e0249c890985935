"""Write the expected answers into a question file from the independent parser.

Each question with a ``derive`` recipe gets its ``expect`` table recomputed by
:mod:`tests.eval.independent`; questions without one (the out-of-scope ones, expecting
``verdict = "unknown"``) are left as written. Only numbers, section ids, revision names and
person names are written, never corpus text. Recipes::

    words <rfc> <heading words>        the one RFC section whose heading fits the words
    rfcsection <rfc> <number>          that RFC section itself (checked to exist)
    heading <corpus> <heading words>   the earliest RFC of the corpus with a heading that fits
                                       (a question naming no RFC); two unrelated RFCs: refused

(all three add ``also``: the same-headed section of the other RFC of its line, lenient only)
    became <series> <revision> <num>   the RFC section with the same heading
    history <rfc> <number> [renamed]   revisions in the RFC's lineage holding the same heading
                                       (``renamed``: and, before the first, those holding it
                                       under an earlier heading, by its same first paragraph)
    count <rfc> <number>               posts naming the section while it changed, with tolerance
    posts <rfc> <number>               the same, and inline review comments on its lines
    revisions <series>                 every revision of the series
    chain <series> <revision>          the revisions from that one to the series' last
    diff <series> <old> <new> <num>    the two revisions of a section diff (checked: section
                                       <num> of <old> and its same-titled section in <new>)
    at <rfc> <number> <YYYY-MM-DD>     the revision current that day, holding the section
    atrev <series> <revision> <num>    that revision (checked to hold the section)
    in <rfc> <number> <revision>       that revision (checked to hold a section titled like
                                       the RFC's)
    document <name> [field ...]        a draft series or ``rfcNNNN``, with the checks named:
                                       became, published, editors, revisions_count
    thread <corpus> <number> [issue|pr]
                                       that issue or pull request (checked to be held, and of
                                       the kind the question names)
    threads <corpus> <state> <issues|prs|any> <title words>
                                       threads in that state whose titles hold the words
                                       (``empty`` when the record holds none)
    prs <rfc> <number>                 merged pull requests that changed the section: every one
                                       merged (checked), with the section as an extra check
    person <corpus> <alias>|<alias>…   one person, by names or logins (checked to be one)
    personsection <rfc> <number> <alias>|<alias>…
                                       that person, who changed that section (checked)
    experts <corpus> <top> <alias>|<alias>…
                                       the person with the most commits, among the first <top>
    holding <corpus> <drafts|revisions|RFCs>
                                       how many the graph holds (drafts and revisions from the
                                       manifest and the tags, RFCs from the manifest)

``<corpus>`` is ``tls``, ``quic`` or ``dtls`` (``tlswg/dtls13-spec``, the held-out corpus of
``paraphrase_dtls.toml``); an RFC or draft names its corpus itself.

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
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return str(value)


def _also(rfc: int, number: str) -> dict[str, object]:
    """Same-headed sections of the related RFCs, scored as a lenient match (never as strict)."""
    key = ind.section(ind.rfc_headings(rfc), number).key
    also = [
        f"{other} {found.number}"
        for other in ind.related_rfcs(rfc)
        if (found := ind.by_key(ind.rfc_headings(other), key))
    ]
    return {"also": also} if also else {}


def _section(rfc: int, number: str) -> dict[str, object]:
    return {"rfc": rfc, "section": number, **_also(rfc, number)}


def _aliases(args: list[str]) -> list[str]:
    return [a.strip() for a in " ".join(args).split("|") if a.strip()]


def _heading(corpus: str, words: str) -> dict[str, object]:
    """The earliest RFC holding a heading that fits: the router's documented rule."""
    hits: list[tuple[int, str]] = []
    for rfc in sorted(ind.all_rfcs(corpus)):
        try:
            hits.append((rfc, ind.heading_with_words(rfc, words)))
        except ValueError as error:
            if "fit 0 " not in str(error):
                raise
    if not hits:
        raise ValueError(f"No {corpus} RFC has a heading fitting {words!r}.")
    first = hits[0][0]
    unrelated = [rfc for rfc, _ in hits[1:] if rfc not in ind.related_rfcs(first)]
    if unrelated:
        raise ValueError(f"{words!r} fits headings of unrelated RFCs {first} and {unrelated}.")
    return _section(*hits[0])


def _document(name: str, fields: list[str]) -> dict[str, object]:
    facts = ind.rfc_facts(int(name[3:])) if name.startswith("rfc") else ind.draft_facts(name)
    table: dict[str, object] = {"document": facts["name"]}
    for field in fields:
        if field not in {"became", "published", "editors", "revisions_count"} or (
            field not in facts
        ):
            raise ValueError(f"No document check {field!r} for {name}.")
        table[field] = facts[field]
    return table


def _threads(corpus: str, state: str, kind: str, words: str) -> dict[str, object]:
    pulls = {"issues": False, "prs": True, "any": None}[kind]
    if not ind.threads(corpus):
        raise ValueError(f"The {corpus} record holds no threads with states.")
    found = ind.threads_about(corpus, words, state, pulls)
    if not ind.threads_about(corpus, words, None, pulls):
        raise ValueError(f"No {kind} in {corpus} are titled with {words!r} at all.")
    return {"thread_state": state, **({} if found else {"empty": True})}


def _prs(rfc: int, number: str) -> dict[str, object]:
    corpus = ind.corpus_of(rfc)
    found = ind.pull_requests_on_section(rfc, number)
    if not found:
        raise ValueError(f"No pull request changed RFC {rfc} {number}.")
    held = ind.threads(corpus)
    states = {held[n].state for n in found if n in held}
    if states != {"merged"}:
        raise ValueError(f"The pull requests on RFC {rfc} {number} are {states}, not merged.")
    return {"thread_state": "merged", "rfc": rfc, "section": number}


def _holding(corpus: str, what: str) -> dict[str, object]:
    drafts = ind.manifest(corpus)["draft"]
    tags = ind._tag_numbers(corpus)
    counts = {
        "drafts": sum(d["name"] in tags for d in drafts),
        "revisions": sum(len(tags.get(d["name"], [])) for d in drafts),
        "RFCs": len(ind.manifest(corpus)["rfc"]),
    }
    return {"count": counts[what], "what": what, "tolerance": 0}


def expectation(recipe: str) -> dict[str, object]:
    """The expect table for one ``derive`` recipe."""
    verb, *args = recipe.split()
    if verb == "words":
        rfc = int(args[0])
        return _section(rfc, ind.heading_with_words(rfc, " ".join(args[1:])))
    if verb == "rfcsection":
        rfc, number = int(args[0]), args[1]
        if ind.section(ind.rfc_headings(rfc), number) is None:
            raise ValueError(f"RFC {rfc} has no section {number}.")
        return _section(rfc, number)
    if verb == "heading":
        return _heading(args[0], " ".join(args[1:]))
    if verb == "became":
        found = ind.became(args[0], int(args[1]), args[2])
        if found is None:
            raise ValueError(f"No RFC section carries the heading of {recipe!r}.")
        return {"rfc": found[0], "final_section": found[1]}
    if verb == "history":
        renamed = args[2:] == ["renamed"]
        return {"revisions": ind.history(int(args[0]), args[1], renamed=renamed)}
    if verb in {"count", "posts"}:
        count = ind.count_posts_mentioning(int(args[0]), args[1], reviews=verb == "posts")
        return {"count": count, "what": "posts", "tolerance": count_tolerance(count)}
    if verb == "revisions":
        return {"revisions": ind.series_revisions(args[0])}
    if verb == "chain":
        return {"revisions": ind.series_revisions(args[0], int(args[1]))}
    if verb == "diff":
        series, older, newer = args[0], int(args[1]), int(args[2])
        ind.section_pair(series, older, newer, args[3])
        return {"revisions": [ind.revision_tag(series, older), ind.revision_tag(series, newer)]}
    if verb == "at":
        return {"revisions": [ind.revision_on_day(int(args[0]), args[1], args[2])]}
    if verb == "atrev":
        series, revision, number = args[0], int(args[1]), args[2]
        if ind.section(ind.revision_headings(series, revision), number) is None:
            raise ValueError(f"{ind.revision_tag(series, revision)} has no section {number}.")
        return {"revisions": [ind.revision_tag(series, revision)]}
    if verb == "in":
        rfc, number, tag = int(args[0]), args[1], args[2]
        target = ind.section(ind.rfc_headings(rfc), number)
        series, _, revision = tag.rpartition("-")
        if target is None or series not in ind.lineage(rfc):
            raise ValueError(f"{tag} is not in the lineage of RFC {rfc} {number}.")
        if ind.by_key(ind.revision_headings(series, int(revision)), target.key) is None:
            raise ValueError(f"{tag} holds no section titled {target.title!r}.")
        return {"revisions": [tag]}
    if verb == "document":
        return _document(args[0], args[1:])
    if verb == "thread":
        held = ind.threads(args[0]).get(int(args[1]))
        if held is None:
            raise ValueError(f"The {args[0]} record holds no thread #{args[1]}.")
        if args[2:] and held.is_pull_request != (args[2] == "pr"):
            raise ValueError(
                f"#{args[1]} is not {'a pull request' if args[2] == 'pr' else 'an issue'}."
            )
        return {"thread": int(args[1])}
    if verb == "threads":
        return _threads(args[0], args[1], args[2], " ".join(args[3:]))
    if verb == "prs":
        return _prs(int(args[0]), args[1])
    if verb == "person":
        aliases = _aliases(args[1:])
        ind.check_aliases(args[0], aliases)
        return {"person": aliases}
    if verb == "personsection":
        rfc, number, aliases = int(args[0]), args[1], _aliases(args[2:])
        if not ind.person_changed_section(rfc, number, aliases):
            raise ValueError(f"{aliases[0]} changed no line of RFC {rfc} {number}.")
        return {"person": aliases, "rfc": rfc, "section": number}
    if verb == "experts":
        corpus, top, aliases = args[0], int(args[1]), _aliases(args[2:])
        person = ind.check_aliases(corpus, aliases)
        if ind.top_committers(corpus, 1)[0][0] != person:
            raise ValueError(f"{aliases[0]} is not the {corpus} corpus's top committer.")
        return {"person": aliases, "top": top}
    if verb == "holding":
        return _holding(args[0], args[1])
    raise ValueError(f"Unknown recipe verb {verb!r} in {recipe!r}.")


def main(path: Path = QUESTIONS) -> None:
    """Recompute every derived ``expect`` table in ``path`` in place."""
    questions = tomllib.loads(path.read_text(encoding="utf-8"))["question"]
    tables: dict[str, str] = {}
    for question in questions:
        if "derive" in question:
            print(f"{question['id']}: {question['derive']}", file=sys.stderr)
            try:
                table = expectation(question["derive"])
            except (ValueError, KeyError) as error:
                raise SystemExit(f"{question['id']}: {question['derive']}: {error}") from error
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
