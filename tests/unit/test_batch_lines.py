"""A mapped batch is written as N-Triples lines as it is mapped, never made into terms.

The lines go to the store's loader, the gate's spool and the audit log's digest as they are,
so they must be, byte for byte, what Oxigraph writes for the same triples: every test here
holds them to pyoxigraph's own serialisation of the terms a batch of terms would hold.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from pyoxigraph import Literal, NamedNode, RdfFormat, Triple, serialize

from ratified_rdf.graph.gate_context import read_terms
from ratified_rdf.graph.mapping import (
    XSD_BOOL,
    XSD_DEC,
    XSD_DT,
    XSD_GYM,
    XSD_INT,
    XSD_URI,
    Batch,
    MappedTriples,
    quoted,
)

EX = "https://example.org/fictional/"
XSD_STRING = NamedNode("http://www.w3.org/2001/XMLSchema#string")
RARE = ["\x00", "\x07", "\x08", "\x0b", "\x0c", "\x1f", "\x7f", "\ufffe", "\uffff", "\ufdd0"]
"""Characters JSON and N-Triples escape differently, or where one might."""


def _every_character() -> list[str]:
    return [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF]


def test_every_character_is_quoted_as_oxigraph_writes_it() -> None:
    characters = _every_character()
    differ = [c for c in characters if quoted(f"a{c}b") != str(Literal(f"a{c}b"))]
    assert differ == []
    # And in one long text, as a section's: the serializer's own line, byte for byte.
    text = "".join(characters[:70_000])
    line = serialize(
        [Triple(NamedNode(EX + "s"), NamedNode(EX + "p"), Literal(text))],
        format=RdfFormat.N_TRIPLES,
    )
    assert line == f"<{EX}s> <{EX}p> {quoted(text)} .\n".encode()


@pytest.mark.parametrize("seed", range(20))
def test_random_text_is_quoted_as_oxigraph_writes_it(seed: int) -> None:
    rng = random.Random(seed)
    alphabet = [*RARE, '"', "\\", "\n", "\r", "\t", "é", "☃", "\U0001f600", "a", " ", "'"]
    for _ in range(200):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert quoted(text) == str(Literal(text)), repr(text)


def _fill(batch: Batch, rng: random.Random) -> None:
    """The same fictional record, whatever the batch holds its triples as."""
    texts = ["", 'say "hi"\nand\tgo \\ now', "Grüße ☃ \U0001f600", "".join(RARE), "plain"]
    for n in range(rng.randrange(3, 8)):
        subject = f"{EX}section/{n}-é"
        batch.add(subject, "rdf:type", f"{EX}Section")
        batch.text(subject, "dcterms:title", rng.choice(texts))
        batch.text(subject, "rr:anchor", None)  # absent: no triple
        batch.typed(subject, "rr:position", n, XSD_INT)
        batch.typed(subject, "rr:isAppendix", n % 2 == 0, XSD_BOOL)
        batch.typed(subject, "rr:textSimilarity", "0.25", XSD_DEC)
        batch.typed(subject, "prov:generatedAtTime", datetime(2016, 3, 1, 12, tzinfo=UTC), XSD_DT)
        batch.typed(subject, "dcterms:issued", "2018-08", XSD_GYM)
        batch.typed(subject, "rr:repositoryUrl", f"{EX}repo", XSD_URI)
        batch.typed(subject, "rr:headingKey", rng.choice(texts), XSD_STRING)
        batch.add(subject, "rr:parentSection", f"{EX}section/{rng.randrange(8)}")
        batch.add(subject, "dcterms:title", Literal("Grüße", language="de"))
        batch.add(subject, "foaf:page", NamedNode(f"{EX}page/{n}"))
        if rng.random() < 0.5:
            batch.add(f"{EX}document", "rr:hasSection", subject)  # back to an earlier subject


@pytest.mark.parametrize("seed", range(10))
def test_a_mapped_batch_is_what_oxigraph_writes_for_its_terms(seed: int) -> None:
    mapped = Batch(f"{EX}graph", "mapped")
    as_terms = Batch(f"{EX}graph", "as terms", triples=[])
    _fill(mapped, random.Random(seed))
    _fill(as_terms, random.Random(seed))
    assert isinstance(mapped.triples, MappedTriples)
    assert isinstance(as_terms.triples, list)
    assert len(mapped.triples) == len(as_terms.triples)
    assert mapped.ntriples() == serialize(as_terms.triples, format=RdfFormat.N_TRIPLES)
    # What staging keeps of it is what it would read off its terms.
    touched, types, loose = read_terms(as_terms.triples, frozenset())
    assert mapped.triples.subjects == touched
    assert mapped.triples.types == types
    assert loose == ()
    # Read as terms (parsed from its lines only now), they are the terms.
    assert not mapped.triples.parsed
    assert list(mapped.triples) == as_terms.triples
    assert mapped.triples[-1] == as_terms.triples[-1]


def test_a_mapped_batch_read_as_terms_still_takes_triples() -> None:
    batch = Batch(f"{EX}graph", "mapped")
    batch.add(f"{EX}a", "rdf:type", f"{EX}Thing")
    assert len(list(batch.triples)) == 1
    batch.text(f"{EX}a", "dcterms:title", "A")
    assert [t.object for t in batch.triples] == [NamedNode(f"{EX}Thing"), Literal("A")]
    assert batch.ntriples().count(b"\n") == len(batch.triples) == 2


@pytest.mark.parametrize(
    ("subject", "obj"),
    [
        ("not an iri", f"{EX}o"),
        (f"{EX}s", "mailto:someone with spaces@example.org"),
        (f"{EX}s", f"{EX}o> <{EX}injected"),
        (f"{EX}s<", f"{EX}o"),
        *((f"{EX}s", f"{EX}o{c}x") for c in '\n\r\t "{}|^`\\\x7f\x85'),
    ],
)
def test_a_mapped_batch_refuses_what_is_no_iri_and_keeps_nothing_of_it(
    subject: str, obj: str
) -> None:
    batch = Batch(f"{EX}graph", "mapped")
    batch.add(f"{EX}first", "rdf:type", f"{EX}Thing")
    with pytest.raises(ValueError):
        batch.add(subject, "foaf:page", obj)
    assert len(batch.triples) == 1
    assert batch.ntriples() == f"<{EX}first> <{_RDF_TYPE}> <{EX}Thing> .\n".encode()


_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
