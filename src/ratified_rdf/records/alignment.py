"""Align every section of a revision with the section of the RFC it became.

Section numbers move between revisions, headings mostly do not. So a section is matched to the
final document by its normalised heading first (disambiguated by its parent's heading when the
heading repeats, as "External References" does); then by its ``{#anchor}`` when the heading was
renamed; then by the similarity of its text. What matches nothing is recorded as having no
counterpart. The rule that matched travels with every alignment.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from functools import lru_cache

from rapidfuzz import fuzz

from ratified_rdf.records.models import AlignmentRecord, AlignmentRule
from ratified_rdf.sources.document import ParsedDocument, ParsedSection, normalise_heading

STILL_CHANGING_BELOW = 0.98
"""A section whose text is less similar than this to the final text was still changing."""

_RENAME_MIN_SIMILARITY = 0.6
_RENAME_MIN_LENGTH = 200
_WS = re.compile(r"\s+")


@lru_cache(maxsize=65536)
def comparable_text(body: str) -> str:
    """Section text with whitespace folded, the form similarity is measured on."""
    return _WS.sub(" ", body).strip()


@lru_cache(maxsize=65536)
def text_similarity(a: str, b: str) -> float:
    """Similarity of two comparable texts, 0 to 1 (normalised Indel distance).

    Cached because consecutive revisions repeat most sections word for word.
    """
    if not a and not b:
        return 1.0
    return round(fuzz.ratio(a, b) / 100.0, 4)


def forget_texts() -> None:
    """Let go of the texts the two caches above hold (up to 65,536 whole sections each, for
    the life of the process): once a run's sections are aligned nothing reads them, and at
    scale they are a large share of what the build holds through staging and the gate."""
    comparable_text.cache_clear()
    text_similarity.cache_clear()


def _most_similar(text: str, candidates: list[str]) -> int | None:
    """Index of the candidate most similar to ``text`` above the rename threshold."""
    best, best_score = None, _RENAME_MIN_SIMILARITY
    for index, candidate in enumerate(candidates):
        # The Indel ratio can never exceed 2·min/(sum) of the lengths: skip hopeless pairs.
        shorter, total = min(len(text), len(candidate)), len(text) + len(candidate)
        if total == 0 or 2 * shorter / total < best_score:
            continue
        score = text_similarity(text, candidate)
        if score >= best_score:
            best, best_score = index, score
    return best


def align_document(
    source_name: str,
    source: ParsedDocument,
    final_name: str,
    final: ParsedDocument,
) -> list[AlignmentRecord]:
    """One alignment record per section of ``source`` against ``final``."""
    finals = final.sections
    final_texts = [comparable_text(s.body) for s in finals]
    by_heading: dict[str, list[ParsedSection]] = defaultdict(list)
    by_anchor: dict[str, ParsedSection] = {}
    for section in finals:
        by_heading[normalise_heading(section.heading)].append(section)
        if section.anchor:
            by_anchor[section.anchor] = section
    matches = [_match(s, source.sections, finals, by_heading, by_anchor) for s in source.sections]
    # A renamed section can only have become a final section no heading or anchor claimed;
    # comparing against those few keeps the text comparison cheap.
    claimed = {target.position for target, _ in matches if target is not None}
    unclaimed = [s for s in finals if s.position not in claimed]
    unclaimed_texts = [final_texts[s.position] for s in unclaimed]
    records: list[AlignmentRecord] = []
    for section, (target, rule) in zip(source.sections, matches, strict=True):
        text = comparable_text(section.body)
        if target is None and unclaimed and len(text) >= _RENAME_MIN_LENGTH:
            best = _most_similar(text, unclaimed_texts)
            if best is not None:
                target, rule = unclaimed[best], AlignmentRule.SIMILAR_TEXT
        records.append(
            AlignmentRecord(
                source_document=source_name,
                source_position=section.position,
                target_rfc=final_name,
                target_position=target.position if target else None,
                rule=rule if target else AlignmentRule.NO_COUNTERPART,
                similarity=(
                    text_similarity(text, final_texts[target.position]) if target else None
                ),
            )
        )
    return records


def _match(
    section: ParsedSection,
    sections: Sequence[ParsedSection],
    finals: Sequence[ParsedSection],
    by_heading: dict[str, list[ParsedSection]],
    by_anchor: dict[str, ParsedSection],
) -> tuple[ParsedSection | None, AlignmentRule]:
    candidates = by_heading.get(normalise_heading(section.heading), [])
    if len(candidates) > 1:
        parent = _parent_heading(section, sections)
        same_parent = [c for c in candidates if _parent_heading(c, finals) == parent]
        candidates = same_parent or candidates
    if len(candidates) > 1:
        # Still ambiguous: the candidate whose text is closest wins.
        text = comparable_text(section.body)
        candidates = [max(candidates, key=lambda c: fuzz.ratio(text, comparable_text(c.body)))]
    if candidates:
        return candidates[0], AlignmentRule.SAME_HEADING
    if section.anchor and section.anchor in by_anchor:
        return by_anchor[section.anchor], AlignmentRule.SAME_ANCHOR
    return None, AlignmentRule.NO_COUNTERPART


def _parent_heading(section: ParsedSection, sections: Sequence[ParsedSection]) -> str | None:
    if section.parent is None:
        return None
    return normalise_heading(sections[section.parent].heading)
