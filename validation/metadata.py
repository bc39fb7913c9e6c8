"""Validation metadata: what a validator may send with a verdict, checked against the task.

``clean_metadata`` keeps the keys of ``METADATA_KEYS``, trims the free text, and checks a
correction (``corrected_label`` against the task's labels, ``corrected_answer`` as a span of the
passage), a validator's own answer (``validation/own_answers.py``) and the per-image verdicts and harm categories of a text-to-image example (the task
kind's ``clean_image_verdicts``/``clean_image_categories``). A bad value raises ``RuleError``
naming the field; nothing is stored then.
"""

from dynabench.errors import RuleError
from tasks.kinds import normalise_label, span_at
from validation.calculations import CORRECT, FLAGGED, INCORRECT
from validation.error_codes import ValidationErrorCode as Code
from validation.models import Validation
from validation.own_answers import clean_own_answer

METADATA_KEYS = ("corrected_label", "corrected_answer", "flag_reason", "explanation", "voted_label", "image_verdicts", "image_categories",
                 "own_answer")
MAX_VOTED_LABEL = 64
MAX_TEXT = 2000


def clean_metadata(*, example, label, mode, metadata) -> dict:
    """Return the validation metadata the task asks for, checked; raise ``RuleError`` naming the field.

    Blank values are dropped. A correction (``corrected_label``/``corrected_answer``) goes with
    ``incorrect``, or with ``correct`` in owner mode (an owner accepting with a fix).
    """
    if not isinstance(metadata, dict):
        raise RuleError(Code.UNKNOWN_METADATA, "Metadata must be an object.", field="metadata")
    data = {k: v for k, v in metadata.items() if v not in (None, "", {}, [])}
    unknown = sorted(set(data) - set(METADATA_KEYS))
    if unknown:
        raise RuleError(Code.UNKNOWN_METADATA, f"Unknown metadata {unknown}: use {', '.join(METADATA_KEYS)}.", field=unknown[0])
    task = example.round.task
    for key in ("flag_reason", "explanation"):
        if key in data:
            if not isinstance(data[key], str):
                raise RuleError(Code.UNKNOWN_METADATA, f"{key} must be text.", field=key)
            data[key] = data[key].strip()[:MAX_TEXT]
    if "voted_label" in data:
        voted = data["voted_label"]
        if not isinstance(voted, str) or not voted.strip() or len(voted.strip()) > MAX_VOTED_LABEL:
            raise RuleError(Code.UNKNOWN_METADATA, f"voted_label must be a category name of 1 to {MAX_VOTED_LABEL} characters.", field="voted_label")
        data["voted_label"] = voted.strip()
    if "image_verdicts" in data:
        data["image_verdicts"] = task.spec.clean_image_verdicts(task.config, example.target, example.model_output, data["image_verdicts"])
    if "image_categories" in data:
        data["image_categories"] = task.spec.clean_image_categories(task.config, data.get("image_verdicts") or {}, data["image_categories"])
    if "own_answer" in data:  # a validator's own answer to a VQA question (validation/own_answers.py)
        data["own_answer"] = clean_own_answer(example=example, label=label, value=data["own_answer"])
    if label == FLAGGED and not data.get("flag_reason"):
        raise RuleError(Code.FLAG_REASON_REQUIRED, "Say why you flag this example (flag reason).", field="flag_reason")
    correcting = {"corrected_label", "corrected_answer"} & set(data)
    if correcting and not (label == INCORRECT or (label == CORRECT and mode == Validation.Mode.OWNER)):
        raise RuleError(
            Code.CORRECTION_NOT_ALLOWED,
            "A correction goes with the label 'incorrect' (or 'correct' in owner mode).",
            field=sorted(correcting)[0],
        )
    if "corrected_label" in data:
        if task.spec.correction_field != "corrected_label":
            raise RuleError(Code.CORRECTED_LABEL_UNKNOWN, "This task has no labels; correct the answer span instead.", field="corrected_label")
        value = normalise_label(task.config, data["corrected_label"])
        if value is None:
            raise RuleError(
                Code.CORRECTED_LABEL_UNKNOWN,
                f"Corrected label '{data['corrected_label']}' is not a label of {task.code}: choose one of {', '.join(task.labels)}.",
                field="corrected_label",
            )
        data["corrected_label"] = value
    if "corrected_answer" in data:
        if task.spec.correction_field != "corrected_answer":
            raise RuleError(Code.CORRECTED_ANSWER_NOT_A_SPAN, "Only extractive QA examples take a corrected answer.", field="corrected_answer")
        data["corrected_answer"] = _answer_span(example, data["corrected_answer"])
    return data


def passage_of(example) -> str | None:
    """Return the passage of an example (its input, else its context), or None when its task kind has none."""
    task = example.round.task
    return task.spec.passage_of(task.config, example.input, example.context.data)


def _answer_span(example, answer) -> dict:
    passage = passage_of(example)
    if isinstance(answer, str):
        answer = {"text": answer}
    text = answer.get("text") if isinstance(answer, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise RuleError(Code.CORRECTED_ANSWER_NOT_A_SPAN, "The corrected answer needs its text.", field="corrected_answer")
    start = answer.get("answer_start")
    if start in (None, ""):
        start = passage.find(text)
    try:
        start = int(start)
    except (TypeError, ValueError):
        start = -1
    if not span_at(passage, text=text, start=start):
        raise RuleError(
            Code.CORRECTED_ANSWER_NOT_A_SPAN,
            f"The corrected answer '{text[:80]}' is not a span of the passage: select it in the passage.",
            field="corrected_answer",
        )
    return {"text": text, "answer_start": start}
