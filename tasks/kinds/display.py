"""Shapes of the model's answer for the pages: label bars and highlighted passage segments.

No ORM and no rules here: only what the templates need to draw an answer.
"""

from dataclasses import dataclass


def field_label(field: dict) -> str:
    """The heading of a task field (``{"name", "label"?}``): its ``label``, else its name in words."""
    return field.get("label") or field["name"].replace("_", " ").capitalize()


def review_label(field: dict) -> str:
    """The heading validators see for a field the annotator wrote.

    ``review_label`` from the config when given; else the field's label said of the annotator
    ("Your sentence" becomes "The annotator's sentence"), since the validator did not write it.
    """
    if field.get("review_label"):
        return field["review_label"]
    label = field_label(field)
    if label.lower().startswith("your "):
        return "The annotator's " + label[5:]
    return label


@dataclass(frozen=True)
class LabelBar:
    label: str
    prob: float
    predicted: bool
    yours: bool

    @property
    def percent_text(self) -> str:
        """The probability in percent with one decimal, as the page writes it (``"42.0"``)."""
        return f"{100 * self.prob:.1f}"


def label_bars(labels: list[str], output: dict, *, yours: str | None = None) -> list[LabelBar]:
    """Return one bar per label, in the task's label order, from ``{"label", "probs": {label: p}}``."""
    probs = output.get("probs") or {}
    order = list(labels) + [label for label in probs if label not in labels]
    return [
        LabelBar(label=label, prob=float(probs.get(label, 0.0)), predicted=label == output.get("label"), yours=label == yours)
        for label in order
    ]


@dataclass(frozen=True)
class Segment:
    text: str
    model: bool
    yours: bool


def passage_segments(passage: str, *, model_span: tuple[int, int] | None, your_span: tuple[int, int] | None) -> list[Segment]:
    """Split ``passage`` at the edges of the model's and the annotator's spans (char offsets, end exclusive).

    Each segment says whether it lies in the model's span, the annotator's, or both, so a
    template can wrap it in ``<mark>``. Spans are clipped to the passage.
    """
    n = len(passage)
    spans = {}
    for name, span in (("model", model_span), ("yours", your_span)):
        if span is not None:
            start, end = max(0, min(int(span[0]), n)), max(0, min(int(span[1]), n))
            spans[name] = (start, end) if start < end else None
    cuts = sorted({0, n, *(edge for span in spans.values() if span for edge in span)})
    segments = []
    for start, end in zip(cuts, cuts[1:]):
        inside = {name: bool(span and span[0] <= start and end <= span[1]) for name, span in spans.items()}
        segments.append(Segment(text=passage[start:end], model=inside.get("model", False), yours=inside.get("yours", False)))
    return segments
