"""A :class:`Timeline` drawn as SVG, and as PNG for the command line.

Pure: the picture is a function of the series alone. Time runs left to right from the first
date drawn to the publication. From the top: one lane per kind of mark (posts, review
comments, mail, commits), each mark on its date; the similarity of each revision's text to the
final text as a step line, with the settled line (98%) dashed; each revision a tick labelled
with its draft number and the section's number there, bold where the section was renumbered;
the publication at the right as a band over the month it came out (an RFC's date is a month:
a mark inside the band may be from before or after the day). Every revision, mark and the
publication is a link (``<a href>``, so a keyboard reaches each one) with a ``<title>``
naming it; the picture's own ``<title>`` and ``<desc>`` are its text alternative.

Every text is escaped and only http(s) addresses become links, so a post's title cannot add
markup to the picture. It carries no ``<style>`` (a page's Content-Security-Policy refuses
inline styles): a browser rings a focused link by itself, and the web page's stylesheet adds
its own focus style.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from html import escape
from urllib.parse import urlsplit

from ratified_rdf.answers.models import Timeline, TimelineMark, TimelineRevision
from ratified_rdf.answers.timeline import moment

WIDTH = 960
"""The picture's width in pixels; its height follows from what it holds."""

_LEFT = 132  # lane names and the similarity axis
_RIGHT = 78  # the publication's label, right of its line
_FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, 'DejaVu Sans', Arial, sans-serif"
_CHAR = 6.0  # the width of a character at 11 px, near enough to keep labels apart
_INK, _MUTED, _LINE, _WASH = "#1d232b", "#5b6572", "#d8dde3", "#f4f6f8"
_SETTLED, _MOVED, _STEP, _THROUGH = "#2f7d4a", "#b5470b", "#1f5fa8", "#8a929c"

# Okabe and Ito's palette: told apart with every common kind of colour blindness.
_KINDS: dict[str, tuple[str, str]] = {
    "post": ("Posts", "#0072B2"),
    "review": ("Review comments", "#CC79A7"),
    "message": ("Mail", "#E69F00"),
    "commit": ("Commits", "#009E73"),
}
_NOUNS = {"post": "post", "review": "review comment", "message": "mail message", "commit": "commit"}

_MARK_GAP = 9.0  # marks closer than this in one lane stack instead of overlapping
_MAX_LEVELS = 8
_LABEL_GAP = 13.0  # rotated revision labels: one line of 11 px text each
_PLOT = 150.0  # the similarity plot's height


def timeline_svg(timeline: Timeline, *, id_prefix: str = "timeline") -> str:
    """``timeline`` as a standalone SVG document (UTF-8 text, no external resources).

    ``id_prefix`` keeps the ids of its title and description unique on a page that shows
    more than one picture."""
    return _Drawing(timeline, id_prefix).svg()


def timeline_png(timeline: Timeline, *, scale: float = 2.0) -> bytes:
    """``timeline`` as PNG bytes, drawn by resvg at ``scale`` times its size in pixels.

    Needs the ``plot`` extra (``pip install 'ratified-rdf[plot]'``): without it, the import
    of ``resvg_py`` fails, and the command line says which extra to install."""
    import resvg_py  # an optional extra: imported only when a PNG is asked for

    return bytes(
        resvg_py.svg_to_bytes(svg_string=timeline_svg(timeline), zoom=scale, background="white")
    )


def _safe(url: str | None) -> str | None:
    if not url:
        return None
    try:
        scheme = urlsplit(url).scheme
    except ValueError:
        return None
    return url if scheme in ("https", "http") else None


def _n(value: float) -> str:
    """A coordinate to a tenth of a pixel, ``12`` rather than ``12.0``."""
    return f"{value:.1f}".removesuffix(".0")


def _pct(value: float) -> str:
    return f"{value:.0%}"


def _link(url: str | None, title: str, body: str, cls: str, data: str = "") -> str:
    """A linked group with its accessible name; without a safe address, a plain group."""
    href = _safe(url)
    named = f"<title>{escape(title)}</title>{body}"
    if href is None:
        return f'<g class="{cls}"{data}>{named}</g>'
    return f'<a class="{cls}" href="{escape(href)}"{data}>{named}</a>'


def _stack(xs: Sequence[float]) -> tuple[list[int], int]:
    """A level for each mark (by x, in order) so that marks on one level keep apart."""
    ends: list[float] = []
    levels: list[int] = []
    for x in xs:
        for level, end in enumerate(ends):
            if x - end >= _MARK_GAP:
                ends[level] = x
                levels.append(level)
                break
        else:
            if len(ends) < _MAX_LEVELS:
                ends.append(x)
                levels.append(len(ends) - 1)
            else:  # a crowd: overlap on the level that has been free longest
                level = min(range(len(ends)), key=ends.__getitem__)
                ends[level] = x
                levels.append(level)
    return levels, max(len(ends), 1)


def _spread(xs: Sequence[float], low: float, high: float) -> list[float]:
    """Label positions near ``xs`` (ascending), at least a label apart, within bounds."""
    out = list(xs)
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + _LABEL_GAP)
    if out and out[-1] > high:
        out[-1] = high
        for i in range(len(out) - 2, -1, -1):
            out[i] = min(out[i], out[i + 1] - _LABEL_GAP)
    if out and out[0] < low:  # more labels than room: evenly, in order
        step = (high - low) / max(len(out) - 1, 1)
        out = [low + i * step for i in range(len(out))]
    return out


def _published_span(when: str) -> tuple[datetime, datetime]:
    """The publication's first moment and the moment after it: a whole month when the card
    gives a month (``2018-08``), else one day."""
    first = moment(when)
    assert first is not None, when
    if len(when.strip()) == 7:
        after = first.replace(year=first.year + first.month // 12, month=first.month % 12 + 1)
        return first, after
    return first, first + timedelta(days=1)


def _ticks(low: datetime, high: datetime) -> list[tuple[datetime, str]]:
    """Calendar ticks between ``low`` and ``high``: years, quarters or months by the span."""
    span = high - low
    months = 12 if span >= timedelta(days=730) else 3 if span >= timedelta(days=180) else 1
    year, month = low.year, 1
    ticks: list[tuple[datetime, str]] = []
    while True:
        at = low.replace(year=year, month=month, day=1, hour=0, minute=0, second=0, microsecond=0)
        if at > high:
            return ticks
        if at >= low:
            ticks.append((at, str(year) if month == 1 else f"{year}-{month:02d}"))
        month += months
        if month > 12:
            year, month = year + 1, month - 12


class _Drawing:
    """One picture being drawn: the scale, the rows, and the SVG parts in order."""

    def __init__(self, timeline: Timeline, id_prefix: str) -> None:
        self.t = timeline
        self.ids = escape(id_prefix)
        first, last = moment(timeline.start), moment(timeline.end)
        assert first is not None and last is not None, "a Timeline's dates parse"
        self.published: tuple[datetime, datetime] | None = None
        if timeline.publication is not None:
            self.published = _published_span(timeline.publication.date)
            last = max(last, self.published[1])
        span = max(last - first, timedelta(days=1))
        # A little room before the first date; the publication (or last date) ends the axis.
        self.low, self.high = first - span * 0.02, last + span * 0.01
        self.width = WIDTH - _LEFT - _RIGHT
        self.parts: list[str] = []
        self.placed: dict[str, float] = {}

    def at(self, when: datetime) -> float:
        """The x of a moment."""
        return _LEFT + (when - self.low) / (self.high - self.low) * self.width

    def x(self, when: str) -> float:
        # Each date is placed several times (sorting, steps, ticks): parsed once.
        placed = self.placed.get(when)
        if placed is None:
            at = moment(when)
            assert at is not None, when
            placed = self.placed[when] = self.at(at)
        return placed

    def svg(self) -> str:
        t = self.t
        lanes_top = 72.0
        lanes_bottom = self._lanes(lanes_top)
        plot_top = lanes_bottom + 26
        if t.revisions:
            bottom = self._plot(plot_top)
            bottom = self._revisions(plot_top + _PLOT, bottom)
        else:
            bottom = self._no_revisions(lanes_bottom + 8)
        self._calendar(lanes_top, plot_top + _PLOT if t.revisions else lanes_bottom)
        self._settled(lanes_bottom, plot_top)
        self._publication(lanes_top, plot_top + _PLOT if t.revisions else lanes_bottom)
        height = bottom + 12
        title = f"{t.section}: its life from {t.start[:10]} to {t.end[:10]}"
        words = " ".join([t.description, *t.not_drawn])
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{WIDTH}" '
            f'height="{_n(height)}" viewBox="0 0 {WIDTH} {_n(height)}" role="group" '
            f'aria-labelledby="{self.ids}-title" aria-describedby="{self.ids}-desc" '
            f'font-family="{escape(_FONT)}" font-size="11" fill="{_INK}">'
            f'<title id="{self.ids}-title">{escape(title)}</title>'
            f'<desc id="{self.ids}-desc">{escape(words)}</desc>'
            f'<rect class="paper" width="{WIDTH}" height="{_n(height)}" fill="#fff"/>'
            f'<text x="12" y="22" font-size="15" font-weight="600">{escape(t.section)}</text>'
        )
        return head + self._legend() + "".join(self.parts) + "</svg>"

    # --- the rows, top to bottom --------------------------------------------------------

    def _legend(self) -> str:
        items: list[tuple[str, str]] = [
            (self._glyph(kind, 0, 0), _NOUNS[kind])
            for kind in _KINDS
            if any(m.kind == kind for m in self.t.marks)
        ]
        if self.t.revisions:
            items += [
                (
                    f'<path d="M-6 3h5v-6h7" fill="none" stroke="{_STEP}" stroke-width="2"/>',
                    "similarity to the final text",
                ),
                (
                    f'<path d="M-6 0h12" stroke="{_SETTLED}" stroke-width="1.5" '
                    'stroke-dasharray="4 2"/>',
                    f"{_pct(self.t.settled_at)}: settled",
                ),
            ]
        if any(r.renumbered for r in self.t.revisions):
            items.append((f'<path d="M-4 -3h8l-4 6z" fill="{_MOVED}"/>', "renumbered (bold label)"))
        out, x = [], 20.0
        for glyph, words in items:
            out.append(
                f'<g transform="translate({_n(x)} 42)">{glyph}'
                f'<text x="10" y="4" fill="{_MUTED}">{escape(words)}</text></g>'
            )
            x += 26 + len(words) * _CHAR
        return f'<g class="legend" aria-hidden="true">{"".join(out)}</g>'

    def _glyph(self, kind: str, x: float, y: float) -> str:
        colour = _KINDS[kind][1]
        if kind == "post":
            return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="4" fill="{colour}"/>'
        if kind == "review":
            return f'<path d="M{_n(x)} {_n(y - 4.5)}l4.5 8h-9z" fill="{colour}"/>'
        if kind == "message":
            return f'<path d="M{_n(x)} {_n(y - 4.5)}l4.5 4.5l-4.5 4.5l-4.5-4.5z" fill="{colour}"/>'
        return f'<rect x="{_n(x - 3.5)}" y="{_n(y - 3.5)}" width="7" height="7" fill="{colour}"/>'

    def _lanes(self, top: float) -> float:
        """One lane per kind of mark the card holds; returns the lanes' bottom."""
        y = top
        for kind, (name, _colour) in _KINDS.items():
            marks = [m for m in self.t.marks if m.kind == kind]
            if not marks:
                continue
            xs = [self.x(m.date) for m in marks]
            levels, count = _stack(xs)
            height = 10 + count * 10
            self.parts.append(
                f'<rect x="{_LEFT}" y="{_n(y)}" width="{self.width}" height="{_n(height)}" '
                f'fill="{_WASH}"/>'
                f'<text x="{_LEFT - 8}" y="{_n(y + height / 2 + 4)}" text-anchor="end">'
                f"{escape(name)} ({len(marks)})</text>"
            )
            for mark, x, level in zip(marks, xs, levels, strict=True):
                self.parts.append(self._mark(mark, x, y + 10 + level * 10))
            y += height + 4
        if y == top:
            self.parts.append(
                f'<text x="{_LEFT}" y="{_n(top + 12)}" fill="{_MUTED}">'
                "The card lists no posts, review comments or commits.</text>"
            )
            y += 18
        return y

    def _mark(self, mark: TimelineMark, x: float, y: float) -> str:
        return _link(
            mark.url,
            mark.label,
            self._glyph(mark.kind, x, y),
            f"mark mark-{mark.kind}",
            f' data-kind="{mark.kind}" data-date="{escape(mark.date)}"',
        )

    def _y(self, top: float, similarity: float) -> float:
        return top + _PLOT - max(0.0, min(1.0, similarity)) * _PLOT

    def _plot(self, top: float) -> float:
        """The similarity axis and step line; returns the plot's bottom."""
        t, bottom = self.t, top + _PLOT
        right = _LEFT + self.width
        for level in (0.0, 0.25, 0.5, 0.75, 1.0):
            y = self._y(top, level)
            self.parts.append(
                f'<line x1="{_LEFT}" x2="{_n(right)}" y1="{_n(y)}" y2="{_n(y)}" '
                f'stroke="{_LINE}"/>'
                f'<text x="{_LEFT - 6}" y="{_n(y + 4)}" text-anchor="end" fill="{_MUTED}">'
                f"{_pct(level)}</text>"
            )
        settled_y = self._y(top, t.settled_at)
        self.parts.append(
            f'<line class="settled-line" x1="{_LEFT}" x2="{_n(right)}" y1="{_n(settled_y)}" '
            f'y2="{_n(settled_y)}" stroke="{_SETTLED}" stroke-width="1.5" '
            'stroke-dasharray="5 3"/>'
            f'<text x="{_LEFT - 44}" y="{_n(top + _PLOT / 2 - 4)}" text-anchor="end" '
            f'fill="{_MUTED}">similarity to</text>'
            f'<text x="{_LEFT - 44}" y="{_n(top + _PLOT / 2 + 10)}" text-anchor="end" '
            f'fill="{_MUTED}">the final text</text>'
        )
        end = self.x(t.publication.date) if t.publication else _LEFT + self.width
        for through in (True, False):
            steps = sorted(
                (r for r in t.revisions if (r.through is not None) is through),
                key=lambda r: self.x(r.date),
            )
            if not steps:
                continue
            points: list[str] = []
            for i, revision in enumerate(steps):
                x, y = self.x(revision.date), self._y(top, revision.similarity)
                after = self.x(steps[i + 1].date) if i + 1 < len(steps) else end
                points.append(f"{_n(x)},{_n(y)} {_n(after)},{_n(y)}")
            if not through and t.publication:
                points.append(f"{_n(end)},{_n(self._y(top, 1.0))}")
            dash = ' stroke-dasharray="3 2"' if through else ""
            self.parts.append(
                f'<polyline class="similarity" points="{" ".join(points)}" fill="none" '
                f'stroke="{_THROUGH if through else _STEP}" stroke-width="2"{dash}/>'
            )
        return bottom

    def _revisions(self, axis: float, bottom: float) -> float:
        """A tick and a label per revision, labels spread apart with leader lines."""
        ordered = sorted(self.t.revisions, key=lambda r: self.x(r.date))
        xs = [self.x(r.date) for r in ordered]
        spots = _spread(xs, _LEFT, _LEFT + self.width)
        texts = [self._revision_text(r) for r in ordered]
        longest = max(len(text) for text in texts)
        top = axis - _PLOT  # the plot's top
        for revision, x, spot, text in zip(ordered, xs, spots, texts, strict=True):
            y = self._y(top, revision.similarity)
            weight = ' font-weight="700"' if revision.renumbered else ""
            colour = _MOVED if revision.renumbered else _INK
            flag = (
                f'<path d="M{_n(x - 4)} {_n(axis + 1)}h8l-4 6z" fill="{_MOVED}"/>'
                if revision.renumbered
                else ""
            )
            body = (
                f'<circle cx="{_n(x)}" cy="{_n(y)}" r="3.5" fill="#fff" '
                f'stroke="{_THROUGH if revision.through else _STEP}" stroke-width="1.5"/>'
                f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{_n(axis)}" y2="{_n(axis + 7)}" '
                f'stroke="{_INK}"/>{flag}'
                f'<polyline points="{_n(x)},{_n(axis + 7)} {_n(spot)},{_n(axis + 18)} '
                f'{_n(spot)},{_n(axis + 21)}" fill="none" stroke="{_LINE}"/>'
                f'<text x="{_n(spot + 4)}" y="{_n(axis + 24)}" text-anchor="end"'
                f' transform="rotate(-90 {_n(spot + 4)} {_n(axis + 24)})" fill="{colour}"'
                f"{weight}>{escape(text)}</text>"
            )
            self.parts.append(
                _link(
                    revision.url,
                    self._revision_title(revision),
                    body,
                    "revision" + (" renumbered" if revision.renumbered else ""),
                    f' data-document="{escape(revision.document)}"',
                )
            )
        return max(bottom, axis + 26 + longest * _CHAR)

    @staticmethod
    def _revision_text(revision: TimelineRevision) -> str:
        name = f"-{revision.revision_number}" if revision.revision_number else revision.document
        number = f" §{revision.section_number}" if revision.section_number else ""
        return name + number + (" (renamed)" if revision.renamed else "")

    def _revision_title(self, revision: TimelineRevision) -> str:
        number = f" §{revision.section_number}" if revision.section_number else ""
        against = revision.through or "the final text"
        moved = [
            word
            for word, yes in (("renumbered", revision.renumbered), ("renamed", revision.renamed))
            if yes
        ]
        return (
            f"{revision.document}{number} {revision.heading}, {revision.date[:10]}: "
            f"{_pct(revision.similarity)} similar to {against}, "
            + ("settled" if revision.settled else "still changing")
            + (f"; {' and '.join(moved)}" if moved else "")
        )

    def _no_revisions(self, top: float) -> float:
        self.parts.append(
            f'<line x1="{_LEFT}" x2="{_n(_LEFT + self.width)}" y1="{_n(top)}" y2="{_n(top)}" '
            f'stroke="{_INK}"/>'
            f'<text x="{_LEFT}" y="{_n(top + 18)}" fill="{_MUTED}">'
            "The card lists no revisions of the section.</text>"
        )
        return top + 24

    def _calendar(self, top: float, bottom: float) -> None:
        """Year (or quarter, or month) lines behind everything, labelled above the lanes."""
        lines = []
        ticks = _ticks(self.low, self.high)
        first_x = (
            _LEFT + (ticks[0][0] - self.low) / (self.high - self.low) * self.width
            if ticks
            else _LEFT + self.width
        )
        if first_x - _LEFT > 48:  # the period the axis starts in, named at its left edge
            yearly = self.high - self.low >= timedelta(days=730)
            start = str(self.low.year) if yearly else f"{self.low:%Y-%m}"
            lines.append(f'<text x="{_LEFT + 3}" y="{_n(top - 4)}" fill="{_MUTED}">{start}</text>')
        # The publication's label names its month: a calendar label that would run into the
        # band or sit in the label's column is left out (its line stays).
        crowded = (
            (self.at(self.published[0]) - 4, self.at(self.published[1]) + _RIGHT)
            if self.published
            else None
        )
        for at, label in ticks:
            x = self.at(at)
            lines.append(
                f'<line x1="{_n(x)}" x2="{_n(x)}" y1="{_n(top - 14)}" y2="{_n(bottom)}" '
                f'stroke="{_LINE}"/>'
            )
            if crowded and x + 3 + len(label) * _CHAR > crowded[0] and x < crowded[1]:
                continue
            lines.append(f'<text x="{_n(x + 3)}" y="{_n(top - 4)}" fill="{_MUTED}">{label}</text>')
        # Behind the lanes and marks: drawn first.
        self.parts.insert(0, f'<g class="calendar" aria-hidden="true">{"".join(lines)}</g>')

    def _settled(self, lanes_bottom: float, plot_top: float) -> None:
        t = self.t
        found = next((r for r in t.revisions if r.document == t.settled), None)
        if found is None:
            return
        x = self.x(found.date)
        name = f"-{found.revision_number}" if found.revision_number else found.document
        words = f"settled from {name} ({found.date[:10]}) on"
        towards_left = x > _LEFT + self.width / 2
        anchor = "end" if towards_left else "start"
        tx = x - 4 if towards_left else x + 4
        self.parts.append(
            f'<g class="settled" aria-hidden="true"><line x1="{_n(x)}" x2="{_n(x)}" '
            f'y1="{_n(lanes_bottom + 6)}" y2="{_n(plot_top + _PLOT)}" stroke="{_SETTLED}" '
            'stroke-dasharray="5 3"/>'
            f'<text x="{_n(tx)}" y="{_n(lanes_bottom + 18)}" text-anchor="{anchor}" '
            f'fill="{_SETTLED}">{escape(words)}</text></g>'
        )

    def _publication(self, top: float, bottom: float) -> None:
        t, right = self.t, _LEFT + self.width
        if t.publication is None:
            words = ["publication", "date not", "on the card"]
            self.parts.append(
                f'<g class="no-publication" fill="{_MUTED}">'
                + "".join(
                    f'<text x="{_n(right + 8)}" y="{_n(top + 8 + 13 * i)}">{w}</text>'
                    for i, w in enumerate(words)
                )
                + "</g>"
            )
            return
        assert self.published is not None
        x, after = self.at(self.published[0]), self.at(self.published[1])
        band = max(after - x, 2.0)
        body = (
            f'<rect class="published" x="{_n(x)}" y="{_n(top - 14)}" width="{_n(band)}" '
            f'height="{_n(bottom - top + 14)}" fill="{_INK}" fill-opacity="0.10" '
            f'stroke="{_INK}" stroke-width="1"/>'
            f'<text x="{_n(x + band + 6)}" y="{_n(top + 8)}" font-weight="600">'
            f"{escape(t.publication.document)}</text>"
            f'<text x="{_n(x + band + 6)}" y="{_n(top + 21)}">published</text>'
            f'<text x="{_n(x + band + 6)}" y="{_n(top + 34)}">'
            f"{escape(t.publication.date)}</text>"
        )
        self.parts.append(
            _link(
                t.publication.url,
                f"{t.publication.document}, published {t.publication.date}",
                body,
                "publication",
            )
        )
