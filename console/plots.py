"""Server-side SVG charts of the round dashboard (no JavaScript, no chart library, CSP-safe)."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ["#2f5bd3", "#b42318", "#1f7a3a", "#9a6700", "#7a3bb8", "#0f7b8a"]
_LEFT, _RIGHT, _TOP, _BOTTOM = 44, 12, 12, 30


def _frame(width: int, height: int, label: str) -> list[str]:
    return [
        f'<svg class="dash-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-label="{escape(label)}">',
        f'<rect x="{_LEFT}" y="{_TOP}" width="{width - _LEFT - _RIGHT}" height="{height - _TOP - _BOTTOM}" fill="#fff" stroke="#dde1e8"/>',
    ]


def _x_labels(labels: list[str], x, height: int) -> list[str]:
    step = max(1, len(labels) // 6)
    return [
        f'<text x="{x(i):.1f}" y="{height - 10}" font-size="10" text-anchor="middle" fill="#5b6475">{escape(text)}</text>'
        for i, text in enumerate(labels) if i % step == 0 or i == len(labels) - 1
    ]


def bar_chart_svg(points: list[tuple[str, int]], *, label: str, width: int = 520, height: int = 200) -> SafeString:
    """Return an SVG bar chart of ``points`` (``[(x label, count), ...]`` in order), y from 0 to
    the largest count; an empty string when there are no points."""
    if not points:
        return mark_safe("")
    top = max(max(v for _, v in points), 1)
    plot_w, plot_h = width - _LEFT - _RIGHT, height - _TOP - _BOTTOM
    slot = plot_w / len(points)

    def x(i):
        return _LEFT + slot * (i + 0.5)

    parts = _frame(width, height, label)
    for tick in (0, top // 2, top):
        y = _TOP + plot_h * (1 - tick / top)
        parts.append(f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="#5b6475">{tick}</text>')
    for i, (name, value) in enumerate(points):
        h = plot_h * value / top
        parts.append(
            f'<rect x="{x(i) - slot * 0.4:.1f}" y="{_TOP + plot_h - h:.1f}" width="{slot * 0.8:.1f}" height="{h:.1f}" '
            f'fill="{PALETTE[0]}"><title>{escape(name)}: {value}</title></rect>'
        )
    parts += _x_labels([p[0] for p in points], x, height)
    parts.append("</svg>")
    return mark_safe("".join(parts))


def line_chart_svg(series: list[dict], *, label: str, width: int = 520, height: int = 200) -> SafeString:
    """Return an SVG line chart of rates in [0, 1] shown as %: ``series`` is ``[{"name",
    "points": [(x label, rate or None), ...]}]``, every series over the same x labels; None
    values leave a gap. A legend names each series. Empty string when nothing is drawn."""
    series = [s for s in series if any(v is not None for _, v in s["points"])]
    if not series:
        return mark_safe("")
    labels = [name for name, _ in series[0]["points"]]
    top = max(max((v for s in series for _, v in s["points"] if v is not None), default=0.0), 0.05)
    top = min(1.0, (int(top * 10) + 1) / 10)
    plot_w, plot_h = width - _LEFT - _RIGHT, height - _TOP - _BOTTOM

    def x(i):
        return _LEFT + (plot_w * i / (len(labels) - 1) if len(labels) > 1 else plot_w / 2)

    def y(v):
        return _TOP + plot_h * (1 - v / top)

    parts = _frame(width, height, label)
    for tick in (0, top / 2, top):
        parts.append(f'<text x="{_LEFT - 6}" y="{y(tick) + 4:.1f}" font-size="10" text-anchor="end" fill="#5b6475">{tick * 100:.0f}%</text>')
    for n, s in enumerate(series):
        color = PALETTE[n % len(PALETTE)]
        segment: list[str] = []
        for i, (name, value) in enumerate(s["points"]):
            if value is None:
                if len(segment) > 1:
                    parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(segment)}"/>')
                segment = []
                continue
            segment.append(f"{x(i):.1f},{y(value):.1f}")
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(value):.1f}" r="3" fill="{color}"><title>{escape(s["name"])} {escape(name)}: '
                f"{value * 100:.1f}%</title></circle>"
            )
        if len(segment) > 1:
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(segment)}"/>')
        parts.append(
            f'<text x="{_LEFT + 8}" y="{_TOP + 14 + 13 * n}" font-size="11" fill="{color}">{escape(s["name"])}</text>'
        )
    parts += _x_labels(labels, x, height)
    parts.append("</svg>")
    return mark_safe("".join(parts))
