"""Server-rendered SVG charts: no chart library, no script, every label escaped."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from html import escape

from markupsafe import Markup

from orcmem.service.overview import GrowthBucket

WIDTH = 640
HEIGHT = 240
PAD_LEFT = 56
PAD_RIGHT = 12
PAD_TOP = 14
PAD_BOTTOM = 34
_PERIOD_NOUN = {"day": "day", "week": "week", "month": "month"}


def _nice_max(value: int) -> int:
    """The smallest of 1, 2, 5 × 10^n at or above `value` (at least 1), so the axis reads in round numbers."""
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= value:
                return max(1, step * factor)
        step *= 10


def period_label(start: date, period: str) -> str:
    """How one bucket is named on the axis: `15 Jan`, `week of 11 Jan`, `Jan 2027`."""
    if period == "month":
        return start.strftime("%b %Y")
    text = f"{start.day} {start.strftime('%b')}"
    return f"week of {text}" if period == "week" else text


def growth_chart(buckets: Sequence[GrowthBucket], period: str) -> Markup:
    """Bars for memories added per period, a line for the running total; empty markup when there is no data."""
    if not buckets:
        return Markup("")
    top = _nice_max(max(b.total for b in buckets))
    plot_w = WIDTH - PAD_LEFT - PAD_RIGHT
    plot_h = HEIGHT - PAD_TOP - PAD_BOTTOM
    slot = plot_w / len(buckets)
    bar_w = max(1.0, slot * 0.7)

    def y(value: float) -> float:
        return PAD_TOP + plot_h - plot_h * value / top

    first, last = buckets[0], buckets[-1]
    span = (
        f"{period_label(first.start, 'day')} {first.start.year} to {period_label(last.start, 'day')} {last.start.year}"
    )
    summary = f"{last.total} memories in all, counted per {_PERIOD_NOUN[period]} from {span}."
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-labelledby="growth-title growth-desc" '
        'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="growth-title">Memories over time, per {_PERIOD_NOUN[period]}</title>',
        f'<desc id="growth-desc">{escape(summary)}</desc>',
    ]
    for tick in (0, top / 2, top):
        ty = y(tick)
        label = f"{tick:g}"
        parts.append(
            f'<line class="grid" x1="{PAD_LEFT}" y1="{ty:.1f}" x2="{WIDTH - PAD_RIGHT}" y2="{ty:.1f}"/>'
            f'<text class="axis" x="{PAD_LEFT - 6}" y="{ty + 4:.1f}" text-anchor="end">{escape(label)}</text>'
        )
    points = []
    for index, bucket in enumerate(buckets):
        cx = PAD_LEFT + slot * index + slot / 2
        points.append(f"{cx:.1f},{y(bucket.total):.1f}")
        if bucket.added:
            height = plot_h * bucket.added / top
            tip = f"{period_label(bucket.start, period)}: {bucket.added} added, {bucket.total} in total"
            parts.append(
                f'<rect class="added" x="{cx - bar_w / 2:.1f}" y="{y(bucket.added):.1f}" width="{bar_w:.1f}" '
                f'height="{height:.1f}"><title>{escape(tip)}</title></rect>'
            )
    if len(points) > 1:
        parts.append(f'<polyline class="total" points="{" ".join(points)}"/>')
    else:
        dot_x, dot_y = points[0].split(",")
        parts.append(f'<circle class="total-dot" cx="{dot_x}" cy="{dot_y}" r="3"/>')
    labels = {0: "start", len(buckets) - 1: "end"}
    if len(buckets) > 4:
        labels[len(buckets) // 2] = "middle"
    for index, anchor in labels.items():
        cx = PAD_LEFT + slot * index + slot / 2
        align = {"start": "start", "end": "end", "middle": "middle"}[anchor]
        if len(buckets) == 1:
            align = "middle"
        text = period_label(buckets[index].start, "month" if period == "month" else "day")
        parts.append(
            f'<text class="axis" x="{cx:.1f}" y="{HEIGHT - PAD_BOTTOM + 24}" text-anchor="{align}">'
            f"{escape(text)}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def share_bar(count: int, largest: int) -> Markup:
    """A small horizontal bar, `count` against `largest`, for the breakdown tables (decorative: the number is text)."""
    width = 0.0 if largest <= 0 else 100.0 * count / largest
    return Markup(
        '<svg class="share" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">'
        f'<rect class="share-bg" width="100" height="10"/><rect class="share-fg" width="{width:.1f}" height="10"/>'
        "</svg>"
    )
