"""Template filters of the leaderboard pages: safe Markdown and compact numbers."""

import markdown as markdown_lib
import nh3
from django import template
from django.utils.safestring import mark_safe

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
