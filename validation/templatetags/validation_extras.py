"""Template helpers for the validation pages."""

from django import template

from annotation.models import ValidationState
from validation.queue_selectors import review_display as _review_display
from validation.round_close import DEFAULT_SPLIT_RATIOS

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
    """The annotator's answer: a label, the first answer span's text, or the first written answer
    (visual question answering stores answers as texts), or the first transcript (speech recognition)."""
    if not isinstance(target, dict):
        return ""
    if "label" in target:
        return target["label"]
    answers = target.get("answers") or target.get("transcripts") or []
    if not answers:
        return ""
    return answers[0].get("text", "") if isinstance(answers[0], dict) else str(answers[0])


@register.filter
def model_answer(output):
    if not isinstance(output, dict):
        return ""
    return output.get("label") or output.get("answer") or output.get("transcript") or ""


@register.filter
def state_label(state: str) -> str:
    """A validation state's name for people: ``verified_correct`` → "Verified correct"."""
    return dict(ValidationState.choices).get(state, state)


_METADATA_LABELS = {
    "example_explanation": "Why the annotator says the example is correct",
    "model_explanation": "Why the annotator says the model is wrong",
    "flag_reason": "Why the annotator flagged it",
}


@register.filter
def explanation_label(key: str) -> str:
    """The heading of an example's metadata entry for validators (``model_explanation`` → words)."""
    return _METADATA_LABELS.get(key, key.replace("_", " ").capitalize())


@register.filter
def split_ratios(ratios) -> str:
    """``{"train": 0.8, "dev": 0.1, "test": 0.1}`` as "train 80% · dev 10% · test 10%" (the default when empty)."""
    ratios = ratios if isinstance(ratios, dict) and ratios else DEFAULT_SPLIT_RATIOS
    return " · ".join(f"{name} {100 * float(ratios.get(name, 0)):g}%" for name in ("train", "dev", "test"))


@register.filter
def review_display(example):
    """``validation.queue_selectors.review_display(example)``: the example in a validator's words (headings, marked spans)."""
    return _review_display(example)
