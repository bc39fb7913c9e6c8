"""Template filters of the leaderboard pages: safe Markdown and compact numbers."""

import markdown as markdown_lib
import nh3
from django import template
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from tasks.models import MLModel

register = template.Library()


@register.filter
def safe_markdown(text: str):
    """Render Markdown and keep only safe HTML (``nh3``): model cards are written by submitters."""
    return mark_safe(nh3.clean(markdown_lib.markdown(text or "", extensions=["tables", "fenced_code"])))


@register.filter
def num(value, digits=1):
    """Format a number with ``digits`` decimals; an em dash for missing values."""
    if value is None or value == "":
        return "—"
    try:
        return f"{float(value):,.{int(digits)}f}"
    except (TypeError, ValueError):
        return "—"


@register.filter
def percent(value, digits=1):
    """Format a 0..1 fraction as a percentage."""
    try:
        return f"{100 * float(value):.{int(digits)}f}"
    except (TypeError, ValueError):
        return "—"


@register.filter
def get(mapping, key):
    if mapping is None:
        return None
    return mapping.get(key, mapping.get(str(key))) if hasattr(mapping, "get") else None


ARTEFACT_NOTES = {
    MLModel.Kind.PREDICTIONS: " · predictions file",
    MLModel.Kind.ENDPOINT: " · endpoint (throughput and latency measured from the platform, memory not measured)",
}
"""The note after a model's name, by the kind of its artefact (none for a model directory)."""


@register.simple_tag
def leaderboard_rows(table):
    """The ``<tr>`` of every ranked model, built in Python: 200 rows × 12 cells through the template
    engine cost ~80 ms, this ~5 ms. Every text is escaped; numbers are preformatted by the selector."""
    link = reverse("leaderboard:model", args=[0])[:-2]  # "/models/"
    out = []
    for row in table.rows:
        rank_range = f'<br><small class="muted" title="rank in 95% of bootstrap resamples">{row.rank_range[0]}–{row.rank_range[1]}</small>' if row.rank_range else ""
        owner = escape(row.owner) if row.owner else "anonymous"
        kind = ARTEFACT_NOTES.get(row.kind, "")
        cells = "".join(
            f'<td>{value}<br><small class="muted" title="95% bootstrap confidence interval">{ci}</small></td>' if ci else f"<td>{value}</td>"
            for value, ci in row.metric_cells
        ) + "".join(f"<td>{value}</td>" for value in row.dataset_cells)
        out.append(
            f'<tr data-model="{row.model_id}"><td>{row.rank}{rank_range}</td>'
            f'<td><a href="{link}{row.model_id}/">{escape(row.name)}</a><br><small class="muted">{owner}{kind}</small></td>'
            f'<td class="dynascore"><strong>{row.score_cell}</strong></td>{cells}</tr>'
        )
    return mark_safe("\n".join(out))


@register.simple_tag
def breakdown_rows(table):
    """The ``<tr>`` of "Why this order": per ranked model (in the table's order) its Dynascore (or its gap
    to the first-ranked model when the exchange rates are unstable) and each metric's part of it,
    precomputed by ``Row.format_cells``; a note names the metrics a model was scored without."""
    out = []
    for row in table.rows:
        missing = (f'<br><small class="muted">no {escape(", ".join(row.missing))}: scored on its other metrics</small>'
                   if row.missing else "")
        cells = "".join(f'<td data-metric="{m}">{escape(value)}</td>' for m, value in zip(table_metrics(table), row.breakdown_cells))
        out.append(f'<tr data-model="{row.model_id}"><td>{escape(row.name)}{missing}</td>'
                   f'<td class="dynascore"><strong>{escape(row.score_cell)}</strong></td>{cells}</tr>')
    return mark_safe("\n".join(out))


def table_metrics(table):
    """The metric names in the order of the rows' precomputed cells."""
    from leaderboard.metric_rules import METRICS

    return METRICS
