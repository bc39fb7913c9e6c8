"""Server-side SVG of each model's performance per round (no JavaScript, no chart library)."""

from __future__ import annotations

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

PALETTE = ["#2f5bd3", "#b42318", "#1f7a3a", "#9a6700", "#7a3bb8", "#0f7b8a", "#c2410c", "#4b5563", "#be185d", "#15803d"]


def performance_by_round_svg(series: list[dict], *, width: int = 640, height: int = 260, max_lines: int = 10) -> SafeString:
    """Return an inline SVG line chart: x = round number, y = performance (%), one line per model.

    ``series``: ``[{"name": str, "points": [(round, performance %), ...]}, ...]``, best model
    first; only the first ``max_lines`` are drawn, with a legend. Empty string when there is
    nothing to draw (no dataset tied to a round).
    """
    series = [s for s in series if s["points"]][:max_lines]
    if not series:
        return mark_safe("")
    rounds = sorted({r for s in series for r, _ in s["points"]})
    values = [v for s in series for _, v in s["points"]]
    lo = max(0.0, (min(values) // 10) * 10 - (10 if min(values) % 10 == 0 and min(values) > 0 else 0))
    hi = min(100.0, (max(values) // 10 + 1) * 10)
    if hi <= lo:
        hi = lo + 10
    left, right, top, bottom = 48, 190, 14, 34
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(r):
        return left + (plot_w * (rounds.index(r) / (len(rounds) - 1)) if len(rounds) > 1 else plot_w / 2)

    def y(v):
        return top + plot_h * (1 - (v - lo) / (hi - lo))

    parts = [
        f'<svg class="round-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="Performance per round">',
        f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#dde1e8"/>',
    ]
    step = 10 if hi - lo > 20 else 5
    tick = lo
    while tick <= hi + 1e-9:
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#eef1f6"/>')
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" font-size="11" text-anchor="end" fill="#5b6475">{tick:g}</text>')
        tick += step
    for r in rounds:
        parts.append(f'<text x="{x(r):.1f}" y="{top + plot_h + 16}" font-size="11" text-anchor="middle" fill="#5b6475">R{r}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" font-size="11" text-anchor="middle" fill="#5b6475">round</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="11" text-anchor="middle" fill="#5b6475" transform="rotate(-90 12 {top + plot_h / 2:.1f})">performance (%)</text>')
    for i, s in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        points = " ".join(f"{x(r):.1f},{y(v):.1f}" for r, v in s["points"])
        name = escape(s["name"])
        parts.append(f'<g><title>{name}</title><polyline fill="none" stroke="{colour}" stroke-width="2" points="{points}"/>')
        for r, v in s["points"]:
            parts.append(f'<circle cx="{x(r):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}"><title>{name}: R{r} {v:.1f}%</title></circle>')
        parts.append("</g>")
        ly = top + 6 + i * 16
        parts.append(f'<rect x="{width - right + 12}" y="{ly}" width="10" height="10" fill="{colour}"/>')
        label = name if len(s["name"]) <= 24 else escape(s["name"][:23]) + "…"
        parts.append(f'<text x="{width - right + 28}" y="{ly + 9}" font-size="11" fill="#1d2330">{label}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))
