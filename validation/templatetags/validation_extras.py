"""Template helpers for the validation pages."""

from django import template

register = template.Library()


@register.filter
def get(mapping, key):
    """``{{ mapping|get:key }}``: ``mapping[key]`` or None."""
    if isinstance(mapping, dict):
        return mapping.get(key)
    return None


@register.filter
def pct(value):
    """Format a 0..1 rate as a percentage with one decimal, or an em dash for None."""
    return "—" if value is None else f"{100 * value:.1f}%"


@register.filter
def num3(value):
    return "—" if value is None else f"{value:.3f}"


@register.filter
def answer_text(target):
    """The annotator's answer: a label, or the first answer span's text."""
    if not isinstance(target, dict):
        return ""
    if "label" in target:
        return target["label"]
    answers = target.get("answers") or []
    return answers[0].get("text", "") if answers else ""


@register.filter
def model_answer(output):
    if not isinstance(output, dict):
        return ""
    return output.get("label") or output.get("answer") or ""
