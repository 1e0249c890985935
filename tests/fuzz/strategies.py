"""Hypothesis strategies for hostile input to every reader, the router and the query parameters.

Each reader gets inputs built from its own grammar (the lines, headers, elements or fields it
looks for, mixed with arbitrary text) and edits of the fixture files, so that most examples get
deep into the reader instead of failing at the first byte. Values are hostile throughout:
arbitrary Unicode, control characters, markup and SPARQL metacharacters, huge numbers, wrong
types where the reader must cope with them.

Should a shape reproduce a known bug with its own ``xfail(strict=True)`` test (see
``harness.KNOWN_BUGS``), it is left out of the general properties, which would otherwise fail
for a reason already reported; the exclusion names its bug, and goes when the bug is fixed.
(None is excluded now: the shapes the first fuzzing left out are generated again.)
"""

from __future__ import annotations

import base64
import gzip
import json
import quopri
from datetime import UTC, datetime
from typing import Any, Final
from xml.sax.saxutils import escape, quoteattr

from hypothesis import strategies as st

from ratified_rdf.queries.files import QueryFile, all_queries
from tests.fuzz.harness import FIXTURES, seed_files

# ---------------------------------------------------------------------------- shared pieces

HOSTILE_FRAGMENTS: Final = (
    '"',
    "'",
    "\\",
    "<",
    ">",
    "{",
    "}",
    "#",
    "&",
    ";",
    "\n",
    "\r",
    "\t",
    "\x00",
    "\x0b",
    "\x0c",
    "\x7f",
    "\u0085",
    "\u2028",
    "\u202e",
    "\u200b",
    "\ufeff",
    "\ufffd",
    "\U0001f426",
    "é",
    "ß",
    "İ",
    "§",
    '" } ; DROP ALL ; #',
    "> } DROP ALL { <",
    "'''",
    '"""',
    "\\u0022",
    "%22",
    "&quot;",
    "]]>",
    "${x}",
    "*/",
)
"""Pieces that mean something to some parser: quotes, brackets, line breaks, SPARQL, markup."""

any_text: Final = st.text(max_size=40)
"""Arbitrary Unicode text (no lone surrogates)."""

hostile_text: Final = st.lists(
    st.one_of(st.text(max_size=8), st.sampled_from(HOSTILE_FRAGMENTS)), max_size=8
).map("".join)
"""Text made mostly of pieces that mean something to some parser."""

surrogate_text: Final = st.lists(
    st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr)), max_size=20
).map("".join)
"""Text that may hold lone surrogates, as ``json.loads`` produces from ``"\\ud800"``."""

words: Final = st.one_of(
    st.from_regex(r"[A-Za-z][a-z]{0,9}( [A-Za-z][a-z]{0,9}){0,4}", fullmatch=True),
    hostile_text,
    any_text,
)


def mostly(usual: st.SearchStrategy[Any], rare: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``usual`` nine times in ten, else ``rare``: hostile values that would otherwise stop
    most examples at the first check, so the rest of the reader would go untested."""
    # (st.one_of drops repeated strategies, so the weighting needs a draw of its own.)
    return st.integers(0, 9).flatmap(lambda n: usual if n < 9 else rare)


def _fixture_texts(reader: str) -> list[str]:
    return [path.read_text(encoding="utf-8", errors="replace") for path in seed_files()[reader]]


@st.composite
def edited_lines(draw: st.DrawFn, texts: list[str], line: st.SearchStrategy[str]) -> str:
    """One of ``texts`` with a few lines deleted, replaced, duplicated or inserted."""
    lines = draw(st.sampled_from(texts)).split("\n")
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(lines)))
        action = draw(st.sampled_from(["insert", "replace", "delete", "duplicate"]))
        if action == "insert" or not lines:
            lines.insert(at, draw(line))
        elif action == "replace":
            lines[min(at, len(lines) - 1)] = draw(line)
        elif action == "delete":
            del lines[min(at, len(lines) - 1)]
        else:
            lines.insert(at, lines[min(at, len(lines) - 1)])
    return "\n".join(lines)


def as_bytes(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """Text encoded the way files are: mostly UTF-8, sometimes another codec or CRLF."""
    return st.tuples(texts, st.sampled_from(["utf-8", "utf-8", "utf-8", "crlf", "latin-1"])).map(
        lambda pair: (
            pair[0].replace("\n", "\r\n").encode("utf-8", "surrogatepass")
            if pair[1] == "crlf"
            else pair[0].encode(pair[1], "replace")
            if pair[1] == "latin-1"
            else pair[0].encode("utf-8", "surrogatepass")
        )
    )


def with_byte_edits(data: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """Bytes with a few of their bytes overwritten by invalid UTF-8 and control bytes."""

    @st.composite
    def edit(draw: st.DrawFn) -> bytes:
        raw = bytearray(draw(data))
        for _ in range(draw(st.integers(0, 3))):
            if not raw:
                break
            at = draw(st.integers(0, len(raw) - 1))
            raw[at : at + 1] = draw(
                st.sampled_from([b"\xff", b"\xc3", b"\x80", b"\x00", b"\xed\xa0\x80", b"\xfe\xff"])
            )
        return bytes(raw)

    return edit()


# ---------------------------------------------------------------------------- kramdown-rfc

_KRAMDOWN_ATTRIBUTES: Final = (
    "",
    " {#anchor}",
    ' {: numbered="false"}',
    " {#a-b.c:d}",
    " {:unnumbered}",
    " {",
    " }",
    " ##",
    " {#}",
    ' {: #x numbered="false"}',
    " {#x}{#y}",
)

kramdown_line: Final = st.one_of(
    st.builds(
        lambda level, text, attribute: "#" * level + " " + text + attribute,
        st.integers(1, 7),
        words,
        st.sampled_from(_KRAMDOWN_ATTRIBUTES),
    ),
    st.builds(lambda text: "%%## " + text, words),
    st.sampled_from(
        [
            "```",
            "~~~",
            "    ```",
            "````",
            "```yaml",
            "~~~~~",
            "{: #x}",
            '{:numbered="false"}',
            "{: .note}",
            "--- middle",
            "--- back",
            "--- abstract",
            "--- note_Stuff",
            "---",
            "<!--",
            "-->",
            "<!-- a comment -->",
            "",
            "",
            "#",
            "# ",
            "####### seven",
        ]
    ),
    words,
)

_YAML_SCALARS: Final = st.one_of(
    any_text,
    hostile_text,
    st.integers(),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True),
    st.dates(),
)

_yaml_values: Final = st.recursive(
    _YAML_SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=8,
)

_authors: Final = st.lists(
    st.one_of(
        st.fixed_dictionaries(
            {},
            optional={
                "name": _YAML_SCALARS,
                "ins": _YAML_SCALARS,
                "email": _YAML_SCALARS,
                "organization": _YAML_SCALARS,
                "org": _YAML_SCALARS,
            },
        ),
        _yaml_values,
    ),
    max_size=3,
)


def _yaml_dump(data: dict[str, Any]) -> str:
    import yaml

    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except yaml.YAMLError:  # a value PyYAML will not write (it has no representer)
        return "title: x\n"


@st.composite
def kramdown_header(draw: st.DrawFn) -> str:
    """A YAML front matter block: kramdown-rfc's keys with right and wrong values, or junk.

    The junk lines include what the reader refuses: anchors and aliases, deep nesting, an
    impossible date (written raw: PyYAML would quote it) and a huge number.
    """
    data: dict[str, Any] = {}
    for key, values in (
        ("title", _yaml_values),
        ("docname", _yaml_values),
        ("abbrev", any_text),
        ("date", _YAML_SCALARS),
        ("author", st.one_of(_authors, _yaml_values)),
    ):
        if draw(st.booleans()):
            data[key] = draw(values)
    body = _yaml_dump(data)
    references = draw(
        st.lists(
            st.sampled_from(
                [
                    "normative:\n  RFC2119:\n",
                    "informative:\n  RFC8446:\n",
                    "normative:\n",
                    "informative:\n\n",
                    "entity:\n  SELF: RFC XXXX\n",
                ]
            ),
            max_size=3,
        )
    )
    junk = draw(
        st.lists(
            st.sampled_from(
                [
                    "title: [",
                    "  - name: [",
                    "::",
                    "- x",
                    "\t",
                    "date: 2017-02-30",
                    "a: &a [x, x]\nb: [*a, *a]",
                    "title: *a",
                    "n: " + "[" * 60 + "]" * 60,
                    "n: " + "9" * 5000,
                ]
            ),
            max_size=2,
        )
    )
    return "---\n" + body + "".join(references) + "\n".join(junk) + "\n---\n"


@st.composite
def kramdown_documents(draw: st.DrawFn) -> str:
    """A kramdown-rfc document from its grammar, or an edit of a fixture file."""
    if draw(st.integers(0, 3)) == 0:
        return draw(edited_lines(_fixture_texts("kramdown"), kramdown_line))
    header = draw(st.one_of(st.just(""), kramdown_header()))
    lines = draw(st.lists(kramdown_line, max_size=30))
    return header + "\n".join(lines)


# ---------------------------------------------------------------------------- RFC plain text

_section_numbers: Final = st.one_of(
    st.lists(st.integers(0, 30), min_size=1, max_size=5).map(lambda p: ".".join(map(str, p))),
    st.builds(
        lambda letter, rest: ".".join([letter, *map(str, rest)]),
        st.sampled_from(["A", "B", "C", "Z", "AA", "a"]),
        st.lists(st.integers(0, 9), max_size=3),
    ),
)

rfc_text_line: Final = st.one_of(
    st.builds(lambda n, t: f"{n}.  {t}", _section_numbers, words),
    st.builds(lambda n, t: f"Appendix {n}.  {t}", _section_numbers, words),
    st.builds(lambda n, t: f"   {n}.  {t} . . . . . . {len(t)}", _section_numbers, words),
    st.builds(lambda i, n, t: " " * i + f"{n}.  {t}", st.integers(0, 12), _section_numbers, words),
    st.builds(lambda t: "   " + t, words),
    st.builds(
        lambda left, gap, right: f"{left}{' ' * gap}{right}",
        st.sampled_from(
            [
                "Internet Engineering Task Force (IETF)",
                "Request for Comments: 8446",
                "Network Working Group",
                "Internet-Draft",
                "Obsoletes: 5077",
                "Category: Standards",
                "ISSN: 2070-1721",
                "Intended status: Experimental",
                "",
            ]
        ),
        st.integers(0, 40),
        st.one_of(
            st.sampled_from(
                [
                    "E. Rescorla",
                    "J. Doe, Ed.",
                    "A-B. Cde",
                    "Mozilla",
                    "Example Inc.",
                    "August 2018",
                    "2 March 2026",
                    "Sample Coop Ltd.",
                ]
            ),
            words,
        ),
    ),
    st.sampled_from(
        [
            "Abstract",
            "Status of This Memo",
            "Copyright Notice",
            "Table of Contents",
            "Acknowledgments",
            "Authors' Addresses",
            "Index",
            "References",
            "Normative References",
            "\f",
            "Rescorla                     Standards Track                   [Page 12]",
            "RFC 8446                           TLS                      August 2018",
            "Internet-Draft          Pigeon Transport Protocol            March 2026",
            "",
            "",
            "",
        ]
    ),
    words,
)


@st.composite
def rfc_text_documents(draw: st.DrawFn) -> str:
    """An RFC-style plain-text document from its grammar, or an edit of a fixture file."""
    if draw(st.integers(0, 2)) == 0:
        return draw(edited_lines(_fixture_texts("rfc_text"), rfc_text_line))
    return "\n".join(draw(st.lists(rfc_text_line, max_size=40)))


# ---------------------------------------------------------------------------- xml2rfc

_XML_TAGS: Final = (
    "section", "t", "name", "ul", "ol", "li", "dl", "dt", "dd", "figure", "artwork",
    "sourcecode", "table", "tr", "td", "th", "references", "reference", "blockquote", "aside",
    "front", "title", "author", "organization", "address", "email", "seriesInfo", "xref",
    "eref", "iref", "cref", "em", "strong", "tt", "bcp14", "middle", "back", "x:foo",
)  # fmt: skip
_XML_ATTRIBUTES: Final = (
    "anchor", "numbered", "title", "target", "fullname", "initials", "surname", "docName",
    "number", "name", "value", "toc",
)  # fmt: skip
# XML 1.0 characters: expat refuses the others with a ParseError, which is allowed but shallow.
_xml_chars: Final = st.characters(
    exclude_categories=("Cs", "Cc"), exclude_characters="\ufffe\uffff"
) | st.sampled_from("\n\t\r ")
_xml_text: Final = mostly(
    st.one_of(
        st.text(_xml_chars, max_size=30).map(escape),
        st.sampled_from(["&amp;", "&lt;", "&#x41;", "&#160;", "<![CDATA[ a < b ]]>"]),
        st.sampled_from(["<!-- c -->", "<?pi x?>"]),
    ),
    # Not well-formed: undefined entities, invalid character references, "]]>" in text.
    st.sampled_from(["&nbsp;", "&#0;", "&#xD800;", "&x;", "]]>", "<", "&"]),
)
_xml_attributes: Final = st.dictionaries(
    st.sampled_from(_XML_ATTRIBUTES),
    st.one_of(
        st.text(_xml_chars, max_size=20),
        st.sampled_from(["false", "no", "FALSE", "true", "Internet-Draft", "8446"]),
    ),
    max_size=3,
)


def _element(tag: str, attributes: dict[str, str], children: list[str]) -> str:
    attrs = "".join(f" {name}={quoteattr(value)}" for name, value in attributes.items())
    if not children:
        return f"<{tag}{attrs}/>"
    return f"<{tag}{attrs}>{''.join(children)}</{tag}>"


_xml_trees: Final = st.recursive(
    _xml_text,
    lambda inner: st.builds(
        _element, st.sampled_from(_XML_TAGS), _xml_attributes, st.lists(inner, max_size=4)
    ),
    max_leaves=25,
)


def xml_prologues(secret_url: str) -> st.SearchStrategy[str]:
    """What may come before the root: declarations, DOCTYPEs, and hostile DTDs (billion laughs,
    external entities pointing at ``secret_url``, parameter entities)."""
    laughs = '<!ENTITY lol0 "lol">' + "".join(
        f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, 10)
    )
    benign = st.sampled_from(
        [
            "",
            '<?xml version="1.0" encoding="UTF-8"?>\n',
            '<?xml version="1.0" encoding="latin-1"?>\n',
            '<!DOCTYPE rfc SYSTEM "rfc2629.dtd">\n',
            '<!DOCTYPE rfc [<!ATTLIST rfc docName CDATA "from-dtd">]>\n',
            "<!-- before -->\n",
        ]
    )
    hostile = st.sampled_from(
        [
            '<?xml version="1.1"?>',
            *(
                f'<?xml version="1.0" encoding="{codec}"?>\n'
                for codec in ("x-no-such-codec", "utf-7", "base64", "idna", "utf-16", "cp037")
            ),
            f'<!DOCTYPE rfc SYSTEM "{secret_url}">\n',
            f'<!DOCTYPE rfc [<!ENTITY x SYSTEM "{secret_url}">]>\n',
            f'<!DOCTYPE rfc [<!ENTITY % p SYSTEM "{secret_url}"> %p;]>\n',
            f"<!DOCTYPE rfc [{laughs}]>\n",
            '<!DOCTYPE rfc [<!ENTITY nbsp "&#160;">]>\n',
            '<!DOCTYPE rfc [<!ENTITY x "&x;">]>\n',
            '<!DOCTYPE rfc [<!ENTITY u SYSTEM "http://127.0.0.1:9/x" NDATA n>]>\n',
        ]
    )
    return st.one_of(benign, hostile)


@st.composite
def xml_documents(draw: st.DrawFn, secret_url: str) -> bytes:
    """An xml2rfc document: a prologue, an ``<rfc>`` root (or another) holding generated
    elements, entity references (``&x;``, ``&lol9;``) and sometimes broken bytes."""
    prologue = draw(xml_prologues(secret_url))
    root = draw(mostly(st.just("rfc"), st.sampled_from(["html", "x:rfc", "RFC"])))
    attributes = draw(_xml_attributes)
    parts = [
        draw(st.builds(_element, st.just("front"), st.just({}), st.lists(_xml_trees, max_size=3))),
        draw(st.builds(_element, st.just("middle"), st.just({}), st.lists(_xml_trees, max_size=4))),
        draw(st.builds(_element, st.just("back"), st.just({}), st.lists(_xml_trees, max_size=3))),
        draw(mostly(st.just(""), st.sampled_from(["&x;", "&lol9;", "&p;", "&nbsp;"]))),
    ]
    body = draw(st.permutations(parts))
    text = prologue + _element(root, attributes, [part for part in body if part])
    encoding = draw(mostly(st.just("utf-8"), st.sampled_from(["utf-16", "latin-1"])))
    data = text.encode(encoding, "replace")
    if draw(st.integers(0, 4)) == 0:
        data = draw(with_byte_edits(st.just(data)))
    return data


def xml_fixture_edits(secret_url: str) -> st.SearchStrategy[bytes]:
    """The pigeon xml2rfc fixture with lines edited, hostile prologues and fragments."""
    texts = _fixture_texts("xml2rfc")
    line = st.one_of(_xml_trees, xml_prologues(secret_url), st.sampled_from(["</section>", "<t>"]))
    return with_byte_edits(edited_lines(texts, line).map(lambda s: s.encode("utf-8")))


# ---------------------------------------------------------------------------- archive.json

_moments: Final = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
).map(lambda d: d.isoformat().replace("+00:00", "Z"))
_dates_in_threads: Final = mostly(
    st.one_of(_moments, st.sampled_from(["2020-01-01", "2020-01-01T00:00:00+05:30"])),
    st.one_of(st.sampled_from(["x", "", "2020-13-01T00:00:00Z", "Z"]), any_text),
)
_logins: Final = st.one_of(
    st.none(),
    st.from_regex(r"[a-z0-9][a-z0-9-]{0,38}", fullmatch=True),
    any_text,
    hostile_text,
    st.sampled_from(["ghost", "dependabot[bot]", "Ålice", "\u202eevil", "名前", ""]),
)
_bodies: Final = st.one_of(
    st.none(),
    any_text,
    hostile_text,
    st.sampled_from(["Fixes #1", "closes #2, #3 and #4", "Resolves: #5", "fix #"]),
)
_legacy_ids: Final = st.integers(0, 10**12).map(
    lambda n: base64.b64encode(f"017:PullRequestReview{n}".encode()).decode().rstrip("=")
)
_posts: Final = st.fixed_dictionaries(
    {"createdAt": _dates_in_threads},
    optional={"author": _logins, "body": _bodies, "updatedAt": _dates_in_threads},
)
_reviews: Final = st.fixed_dictionaries(
    {"createdAt": _dates_in_threads},
    optional={
        "id": st.one_of(st.none(), _legacy_ids, any_text),
        "author": _logins,
        "body": _bodies,
        "state": st.one_of(st.sampled_from(["APPROVED", "COMMENTED"]), any_text, st.none()),
        "comments": st.one_of(st.none(), st.lists(_posts, max_size=2)),
    },
)
_numbers: Final = mostly(
    st.one_of(st.integers(-(2**70), 2**70), st.integers(0, 10**6).map(str)),
    st.one_of(
        # Up to 4,001 digits: json.dumps cannot write 4,300 or more (a hand-written test can).
        st.integers(0, 10**4000),
        st.text(max_size=6),
        st.none(),
        st.booleans(),
        st.floats(allow_nan=True, allow_infinity=True),
    ),
)
_threads: Final = st.fixed_dictionaries(
    {"number": _numbers, "url": mostly(any_text, st.none()), "createdAt": _dates_in_threads},
    optional={
        "title": st.one_of(st.none(), any_text, hostile_text),
        "body": _bodies,
        "state": st.one_of(st.sampled_from(["OPEN", "CLOSED", "MERGED"]), st.none(), any_text),
        "author": _logins,
        "labels": st.one_of(st.none(), st.lists(st.one_of(any_text, st.integers()), max_size=3)),
        "closedAt": st.one_of(st.none(), _dates_in_threads),
        "mergedAt": st.one_of(st.none(), _dates_in_threads),
        "mergeCommit": st.one_of(st.none(), st.fixed_dictionaries({}, optional={"oid": any_text})),
        "headRefOid": st.one_of(st.none(), any_text),
        "comments": st.one_of(st.none(), st.lists(_posts, max_size=3)),
        "reviews": st.one_of(st.none(), st.lists(_reviews, max_size=2)),
    },
)


def _drop_some(draw: st.DrawFn, item: dict[str, Any]) -> dict[str, Any]:
    """The thread with a required field sometimes missing."""
    if draw(st.integers(0, 5)) == 0:
        item = dict(item)
        item.pop(draw(st.sampled_from(["number", "url", "createdAt"])), None)
    return item


@st.composite
def archives(draw: st.DrawFn) -> dict[str, Any]:
    """An archive.json whose containers have the right types and whose values are hostile:
    Unicode and empty logins, null bodies, huge numbers, bad dates, missing fields.

    The top-level ``timestamp`` is a valid moment, absent, or not a moment at all.
    """
    archive: dict[str, Any] = {
        "issues": [_drop_some(draw, t) for t in draw(st.lists(_threads, max_size=3))],
        "pulls": [_drop_some(draw, t) for t in draw(st.lists(_threads, max_size=3))],
    }
    if draw(st.booleans()):
        archive["repo"] = draw(st.one_of(any_text, st.integers(), st.none()))
    if draw(st.booleans()):
        archive["timestamp"] = draw(
            mostly(st.one_of(_moments, st.none()), st.one_of(any_text, st.integers()))
        )
    if draw(st.booleans()):
        archive["magic"] = draw(any_text)
    return archive


json_values: Final = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        any_text,
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(any_text, inner, max_size=3),
    max_leaves=10,
)


@st.composite
def wrongly_typed_archives(draw: st.DrawFn) -> dict[str, Any]:
    """An archive in which some fields, at any depth, hold a JSON value of the wrong type."""
    archive = draw(archives())

    def spoil(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: draw(json_values) if draw(st.integers(0, 4)) == 0 else spoil(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [draw(json_values) if draw(st.integers(0, 4)) == 0 else spoil(v) for v in value]
        return value

    return spoil(archive)


def archive_bytes(archive: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[bytes]:
    """An archive serialised as i-d-template does, ASCII-escaped or not."""
    return st.tuples(archive, st.booleans(), st.sampled_from([None, 1])).map(
        lambda triple: json.dumps(triple[0], ensure_ascii=triple[1], indent=triple[2]).encode(
            "utf-8", "surrogatepass"
        )
    )


@st.composite
def truncated_archives(draw: st.DrawFn) -> bytes:
    """The pigeon fixture archive (or a generated one) cut short anywhere, inside a UTF-8
    sequence too."""
    whole = draw(
        st.one_of(
            st.just((FIXTURES / "pigeon" / "pigeon-archive.json").read_bytes()),
            archive_bytes(archives()),
        )
    )
    return whole[: draw(st.integers(0, max(0, len(whole) - 1)))]


# ---------------------------------------------------------------------------- mail

_HEADER_VALUES: Final[dict[str, tuple[str, ...]]] = {
    "From": (
        "Alice Example <alice@example.com>",
        '"Jane Doe via Datatracker" <noreply@ietf.org>',
        '"Jane Doe via pigeon" <pigeon@ietf.org>',
        "jane=40example.com@dmarc.ietf.org",
        "alice at example.org (Alice Example)",
        "=?utf-8?b?SsOkbmU=?= <j@example.org>",
        "=?x-unknown?q?a=FF?= <a@b>",
        "=?utf-8?q?broken",
        "<>",
        '"unterminated <a@b',
        "a@b, c@d",
        "",
    ),
    "Date": (
        "Mon, 05 Feb 2029 10:00:00 +0000",
        "Tue, 3 Mar 2017 07:30:00 -0500",
        "3 Mar 2017 07:30",
        "Tue, 31 Feb 2017 25:61:61 +9999",
        "Mon, 1 Jan 0000 00:00:00 +0000",
        "Fri, 31 Dec 9999 23:59:59 -2359",
        "soon",
        "",
        "\x00",
    ),
    "Message-ID": (
        "<knot-1@example.com>",
        "<20170303100000.homing at example.org>",
        "id@host",
        "<broken",
        "<a@b> <c@d>",
        "<>",
        "< spaced id @ host >",
        "",
    ),
    "In-Reply-To": ("<knot-1@example.com>", "<missing@example.org>", "garbage", ""),
    "References": ("<knot-1@example.com> <knot-2@example.net>", "<a@b>\n <c@d>", "<<<>>>"),
    "Subject": ("Re: [Pigeon] Homing range", "=?utf-8?q?Gr=C3=BC=C3=9Fe?=", "=?koi8-r?b?5A==?="),
    "Content-Type": (
        "text/plain; charset=utf-8",
        "text/plain; charset=x-unknown",
        'text/plain; charset="base64"',
        "text/plain; charset=utf-16",
        "text/plain; charset=",
        "text/html; charset=utf-8",
        'multipart/alternative; boundary="b"',
        "multipart/mixed; boundary=b",
        "multipart/mixed",
        "multipart/mixed; boundary=",
        "message/rfc822",
        "application/octet-stream",
        "text/plain; format=flowed; delsp=yes",
        ";;;",
    ),
    "Content-Transfer-Encoding": ("base64", "quoted-printable", "8bit", "7bit", "x-uuencode", "?"),
    "Content-Disposition": ("attachment; filename=x.txt", "inline", "attachment"),
    "MIME-Version": ("1.0", "2.0"),
    "Reply-To": ("dave@example.net", "pigeon@ietf.org", "alice at example.org"),
    "X-Original-From": ("Jane Doe <jane@example.com>", "noreply@ietf.org"),
    "Resent-Message-ID": ("<resent@example.org>",),
}

_header_names: Final = st.one_of(
    st.sampled_from(sorted(_HEADER_VALUES)),
    st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,15}", fullmatch=True),
)


def _header_value_bytes(name: str) -> st.SearchStrategy[bytes]:
    known = _HEADER_VALUES.get(name, ())
    return st.one_of(
        *([st.sampled_from(known).map(lambda v: v.encode())] if known else []),
        words.map(lambda v: v.encode("utf-8", "surrogatepass")),
        # Header injection: a value that tries to start new headers or the body.
        st.sampled_from(
            [b"x\r\nBcc: victim@example.org", b"x\nFrom: evil@example.org", b"x\n\nbody"]
        ),
        st.binary(max_size=30),
    )


@st.composite
def mail_messages(draw: st.DrawFn) -> bytes:
    """One message: a few headers (missing, repeated, broken, 8-bit) and a body in some
    encoding, possibly multipart with a wrong boundary."""
    headers: list[bytes] = []
    for name in draw(st.lists(_header_names, max_size=8)):
        value = draw(_header_value_bytes(name))
        headers.append(name.encode() + b": " + value)
    text = draw(st.one_of(words, st.sampled_from(["Section 2.1 again.", "From the loft", ""])))
    body = draw(
        st.one_of(
            st.just(text.encode("utf-8", "surrogatepass")),
            st.sampled_from(["latin-1", "utf-16", "cp1252", "koi8-r"]).map(
                lambda codec: text.encode(codec, "replace")
            ),
            st.just(base64.b64encode(text.encode("utf-8", "surrogatepass"))),
            st.just(quopri.encodestring(text.encode("utf-8", "surrogatepass"))),
            st.just(
                f"<p>{text}<br><script>x</script><pre> a  b</pre>".encode("utf-8", "surrogatepass")
            ),
            st.binary(max_size=60),
            st.just(
                b"--b\nContent-Type: text/plain\n\nplain part\n--b\nContent-Type: text/html\n\n"
                b"<b>rich</b>\n--b--\n"
            ),
            st.just(b"--b\nContent-Type: text/plain\n\nunterminated part\n"),
            st.just(b"From: inner@example.org\nSubject: inner\n\ninner body\n"),
        )
    )
    newline = draw(st.sampled_from([b"\n", b"\r\n"]))
    return newline.join([*headers, b"", body])


def _maybe_gzipped(draw: st.DrawFn, data: bytes) -> bytes:
    """The bytes as they are, or gzip-compressed, sometimes cut short (corrupt gzip)."""
    choice = draw(st.integers(0, 19))
    if choice < 2:
        return gzip.compress(data)
    if choice == 2:
        return gzip.compress(data)[: draw(st.integers(0, 30))]
    return data


@st.composite
def mbox_files(draw: st.DrawFn) -> bytes:
    """An mbox: ``From `` envelope lines (sometimes missing or mangled) between messages,
    ``From `` lines in bodies, sometimes gzip-compressed, or an edit of a fixture file."""
    if draw(st.integers(0, 3)) == 0:
        edited = draw(
            edited_lines(
                _fixture_texts("mbox"),
                st.one_of(
                    words,
                    st.sampled_from(
                        [
                            "From nobody Thu Feb 08 09:00:00 2029",
                            "From ",
                            "Content-Type: multipart/mixed",
                            "",
                            "Message-ID:",
                            "Date:",
                            ">From x",
                        ]
                    ),
                ),
            )
        )
        data = edited.encode("utf-8", "surrogatepass")
    else:
        envelopes = st.sampled_from(
            [b"From alice@example.com Mon Feb 05 10:00:00 2029\n", b"From \n", b"From x\n", b""]
        )
        data = b"".join(
            draw(envelopes) + message + b"\n"
            for message in draw(st.lists(mail_messages(), max_size=4))
        )
    return _maybe_gzipped(draw, data)


@st.composite
def mailman_files(draw: st.DrawFn) -> bytes:
    """A pipermail text archive: separator lines (valid and near misses) between messages with
    ``user at example.org`` addresses, or an edit of the fixture file."""
    if draw(st.integers(0, 3)) == 0:
        edited = draw(
            edited_lines(
                _fixture_texts("mailman"),
                st.one_of(
                    words,
                    st.sampled_from(
                        [
                            "From bob at example.org  Fri Mar  3 12:30:00 2017",
                            "From x",
                            "Message-ID: <a at b>",
                            "In-Reply-To:",
                            "",
                        ]
                    ),
                ),
            )
        )
        return _maybe_gzipped(draw, edited.encode("utf-8", "surrogatepass"))
    separators = st.sampled_from(
        [
            b"From alice at example.org  Fri Mar  3 10:00:00 2017\n",
            b"From bob@example.org  Sat Mar  4 01:02:03 2017\n",
            b"From x  Xyz Mar  3 10:00:00 2017\n",
            b"From alice at example.org  Fri Mar  3 10:00 2017\n",
        ]
    )
    data = b"".join(
        draw(separators) + message + b"\n"
        for message in draw(st.lists(mail_messages(), max_size=4))
    )
    return _maybe_gzipped(draw, data)


# ---------------------------------------------------------------------------- manifests


def toml_value(value: Any) -> str:
    """A Python value as a TOML value (strings as basic strings, JSON-escaped)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value) if value == value and abs(value) != float("inf") else "nan"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(str(k))} = {toml_value(v)}" for k, v in value.items())
            + "}"
        )
    return json.dumps(str(value))


def toml_document(data: dict[str, Any]) -> str:
    """A manifest-shaped dictionary as TOML: tables, arrays of tables and inline values."""
    lines: list[str] = []
    scalars = {
        k: v
        for k, v in data.items()
        if not isinstance(v, dict | list)
        or (isinstance(v, list) and not all(isinstance(i, dict) for i in v))
    }
    for key, value in scalars.items():
        lines.append(f"{json.dumps(key)} = {toml_value(value)}")
    for key, value in data.items():
        if key in scalars:
            continue
        if isinstance(value, dict):
            lines.append(f"\n[{json.dumps(key)}]")
            lines.extend(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items())
        else:
            for item in value:
                lines.append(f"\n[[{json.dumps(key)}]]")
                lines.extend(f"{json.dumps(k)} = {toml_value(v)}" for k, v in item.items())
    return "\n".join(lines) + "\n"


_toml_scalars: Final = st.one_of(
    any_text,
    hostile_text,
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
)
_draft_names: Final = st.one_of(
    st.sampled_from(["draft-example-pigeon", "draft-ietf-tls-tls13", "draft-a-b"]),
    st.from_regex(r"draft-[a-z0-9]{1,5}(-[a-z0-9]{1,5}){1,3}", fullmatch=True),
    any_text,
)


def _maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right kind of value, sometimes any scalar or list."""
    return mostly(strategy, st.one_of(_toml_scalars, st.lists(_toml_scalars, max_size=2)))


@st.composite
def manifests(draw: st.DrawFn) -> str:
    """A manifest: the sections ``records/README.md`` describes, with right and wrong types,
    unknown keys, dangling references and replacement cycles; or the fixture with lines edited."""
    if draw(st.integers(0, 4)) == 0:
        line = st.one_of(
            words,
            st.sampled_from(
                [
                    "[brain]",
                    "[[draft]]",
                    'tenant = "../x"',
                    'revisions = "28-00"',
                    "id = ",
                    '"""',
                    "[clearance]",
                    'mail = "secret"',
                    "x = 1979-05-27T07:32:00Z",
                    "a.b.c = 1",
                ]
            ),
        )
        return draw(edited_lines(_fixture_texts("manifest"), line))
    names = draw(st.lists(_draft_names, min_size=1, max_size=3))
    brain = {
        "id": draw(_maybe(st.sampled_from(["pigeon", "tls13", "-bad", "a" * 70]))),
        "title": draw(_maybe(any_text)),
        "repository": draw(_maybe(any_text)),
    }
    optional = {
        "tenant": _maybe(
            st.one_of(st.sampled_from(["acme", "default", "../x", "ACME", "a--b"]), hostile_text)
        ),
        "working_group": _maybe(any_text),
        "commit_map": _maybe(any_text),
        "unknown": _toml_scalars,
    }
    for key, values in optional.items():
        if draw(st.booleans()):
            brain[key] = draw(values)
    drafts = [
        {
            "name": name,
            "file": draw(_maybe(any_text)),
            "revisions": draw(_maybe(st.sampled_from(["00-02", "00", "28-00", "0-1", "00-99"]))),
            **(
                {"became": draw(_maybe(st.sampled_from(["rfc9999", "rfc1", "x"])))}
                if draw(st.booleans())
                else {}
            ),
            **(
                {"replaced_by": draw(_maybe(st.sampled_from(names)))} if draw(st.booleans()) else {}
            ),
        }
        for name in names
    ]
    rfcs = [
        {
            "number": draw(_maybe(st.sampled_from([9999, 1, 0, -1, 2**62]))),
            "title": draw(_maybe(any_text)),
            "published": draw(_maybe(st.sampled_from(["2030-04", "2030-4", "x"]))),
            "ref": draw(_maybe(any_text)),
            "file": draw(_maybe(any_text)),
            **(
                {"obsoletes": draw(_maybe(st.lists(st.integers(0, 10**5), max_size=2)))}
                if draw(st.booleans())
                else {}
            ),
        }
        for _ in range(draw(st.integers(0, 2)))
    ]
    data: dict[str, Any] = {"brain": brain, "draft": drafts}
    if rfcs:
        data["rfc"] = rfcs
    if draw(st.booleans()):
        data["discussion"] = {
            "github_archive": draw(_maybe(st.sampled_from(["gh-pages:archive.json", "nocolon"]))),
            "document_files": draw(_maybe(st.lists(any_text, max_size=2))),
        }
    if draw(st.booleans()):
        data["clearance"] = draw(
            st.dictionaries(
                st.sampled_from(["mail", "github", "spec", "nope"]),
                _maybe(st.sampled_from(["public", "internal", "restricted", "secret"])),
                max_size=2,
            )
        )
    if draw(st.booleans()):
        data["licence"] = draw(
            st.dictionaries(
                st.sampled_from(["spec", "github", "x"]),
                _maybe(st.sampled_from(["https://example.org/l", "ftp://x", ""])),
                max_size=2,
            )
        )
    return toml_document(data)


_selectors: Final = st.one_of(
    st.builds(
        lambda kind, value: f"{kind}:{value}",
        st.sampled_from(["login", "email", "name", "LOGIN", " name ", "x", ""]),
        st.one_of(
            any_text,
            hostile_text,
            st.sampled_from(
                [
                    "ekr",
                    "ekr@rtfm.com",
                    "12345+ekr@users.noreply.github.com",
                    "Rescorla, Eric",
                    "a@",
                    "@b",
                    "<a@b>",
                    "Éric",
                    "a+b@c",
                    " ",
                ]
            ),
        ),
    ),
    any_text,
)


@st.composite
def people_files(draw: st.DrawFn) -> str:
    """A people overrides file (``[[same]]`` groups and ``[[different]]`` pairs of identity
    selectors, hostile and malformed), or the TLS one with lines edited."""
    if draw(st.integers(0, 4)) == 0:
        line = st.one_of(
            words,
            st.sampled_from(
                [
                    "[[same]]",
                    "[[different]]",
                    'members = ["login:a"]',
                    'pair = ["login:a", "login:A"]',
                    'reason = ""',
                    "x = 1",
                    'members = ["email:a@b", "email:A@B"]',
                ]
            ),
        )
        return draw(edited_lines(_fixture_texts("people"), line))
    data: dict[str, Any] = {}
    if draw(st.booleans()):
        data["same"] = [
            {
                "members": draw(_maybe(st.lists(_selectors, max_size=4))),
                "reason": draw(_maybe(any_text)),
            }
            for _ in range(draw(st.integers(0, 3)))
        ]
    if draw(st.booleans()):
        data["different"] = [
            {
                "pair": draw(_maybe(st.lists(_selectors, min_size=1, max_size=3))),
                "reason": draw(_maybe(any_text)),
            }
            for _ in range(draw(st.integers(0, 3)))
        ]
    if draw(st.integers(0, 5)) == 0:
        data["extra"] = draw(_toml_scalars)
    return toml_document(data)


# ---------------------------------------------------------------------------- questions

ROUTER_TOKENS: Final = (
    "what did", "section", "sections", "§", "sec.", "sec", "4.2.1", "4.2.10", "2.1", "A.1", "1.",
    "of", "draft-ietf-tls-tls13-21", "draft-example-pigeon-01", "draft-example-pigeon",
    "draft-", "-21", "become", "became", "in the RFC", "end up", "RFC 8446", "rfc9999",
    "RFC-9999", "history", "evolve", "changed", "over time", "who", "why", "discussed",
    "who should I ask", "who knows", "how many posts", "how many pull requests", "PR #12",
    "pull request 2", "issue 7", "#3", "on 2017-06-01", "as of 2017-02-30", "at 0000-00-00",
    "say", "said", "wording", "what do you know", "what does the graph hold", "revisions of",
    "versions", "chain", "leads to", "superseded", "who is", "work on", "what has", "Dave",
    "?", "TLS 1.3", "0-RTT", "key share", "early data", "HRR", "PSKs", "ClientHello", "'",
    '"', "}", "{", ";", "DROP ALL", "#", "\u00a7\u00a7", "٤.٢", "Ⅳ", "ß", "İ",
)  # fmt: skip
"""Words the router and heading search look for, to be mixed with arbitrary text."""

questions: Final = st.one_of(
    st.lists(st.one_of(st.sampled_from(ROUTER_TOKENS), st.text(max_size=10)), max_size=14).map(
        " ".join
    ),
    hostile_text,
    st.text(max_size=200),
    surrogate_text,
)
"""Questions: router vocabulary mixed with arbitrary and hostile text."""


injection_questions: Final = st.lists(
    st.one_of(st.sampled_from(ROUTER_TOKENS), hostile_text, st.text(max_size=12), surrogate_text),
    min_size=1,
    max_size=10,
).map(" ".join)
"""Questions from the router's words, SPARQL-hostile fragments and lone surrogates."""

tenant_ids: Final = st.one_of(
    hostile_text, surrogate_text, st.from_regex(r"[a-z0-9-]{1,70}", fullmatch=True)
)
"""Tenant ids: hostile text, and slugs valid or too long."""


# ---------------------------------------------------------------------------- query parameters

_safe_iri_text: Final = st.text(
    st.characters(
        min_codepoint=0x20,
        max_codepoint=0xD7FF,
        exclude_categories=("Cc", "Co", "Cs", "Cn"),
    ),
    max_size=20,
)
_iris: Final = st.one_of(
    st.builds(lambda tail: "https://w3id.org/ratified-rdf/id/doc/" + tail, _safe_iri_text),
    st.builds(
        lambda head, tail: head + ":" + tail,
        st.from_regex(r"[a-z][a-z0-9+.-]{0,5}", fullmatch=True),
        _safe_iri_text,
    ),
    st.sampled_from(["https://x> } DROP ALL {", "a:b#c", "urn:x:'';--", "a:b>", "<a:b>", "", "x"]),
    # Control characters, lone surrogates and line breaks, which no IRI holds.
    st.builds(lambda tail: "https://x/" + tail, surrogate_text),
    st.sampled_from(["https://x/\n", "https://x/\x00", "https://x/\x7f", "a:\ud800"]),
)
_VALUES_BY_KIND: Final = {
    "iri": _iris,
    "string": st.one_of(hostile_text, st.text(max_size=30), surrogate_text),
    "integer": st.one_of(st.integers(-(10**20), 10**20), hostile_text, st.booleans()),
}


@st.composite
def query_parameters(draw: st.DrawFn) -> tuple[QueryFile, dict[str, Any]]:
    """A query file of ``sparql/`` with parameters, and hostile values for each of its
    parameters by declared kind, sometimes as tuples (one ``VALUES`` row each)."""
    query = draw(st.sampled_from([q for q in all_queries() if q.params]))
    rows = draw(st.one_of(st.none(), st.integers(0, 3)))
    params: dict[str, Any] = {}
    for param in query.params:
        kind = _VALUES_BY_KIND[param.kind]
        params[param.name] = draw(kind) if rows is None else tuple(draw(kind) for _ in range(rows))
    return query, params


# ---------------------------------------------------------------------------- entry points


def reader_inputs(secret_url: str) -> dict[str, st.SearchStrategy[bytes]]:
    """The input strategy for each reader of ``harness.READERS``, as bytes."""
    return {
        "kramdown": with_byte_edits(as_bytes(kramdown_documents())),
        "rfc_text": with_byte_edits(as_bytes(rfc_text_documents())),
        "xml2rfc": mostly(xml_documents(secret_url), xml_fixture_edits(secret_url)),
        "github_archive": st.one_of(archive_bytes(archives()), truncated_archives()),
        "mbox": mbox_files(),
        "mailman": mailman_files(),
        "manifest": as_bytes(manifests()),
        "people": as_bytes(people_files()),
    }
