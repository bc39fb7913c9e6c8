"""Who may write an example, and what it must be before the model in the loop sees it.

The user holds the task's ``annotator`` role and is not banned (``check_annotator``; the
qualification quiz is ``annotation/qualification.py``). The task collects examples and is active, the round is open, the context still offered; the
kind takes a one-shot example (not a text-to-image task, whose images are judged first); the
annotator's fields are text within their caps and not the prompt sent back unchanged; the
target has the kind's shape (``task.spec.clean_target``); explanations are the task's
fields; the time spent is a number of seconds; the tag fits ``TAG_MAX_LENGTH``. Each check raises ``RuleError`` with a code
from ``annotation/error_codes.py`` naming the field to fix. ``create_example``
(``annotation/services.py``), the sandbox, chat and text-to-image call these.
"""

import math

from annotation.error_codes import AnnotationErrorCode as Code
from dynabench.errors import NotAllowed, RuleError
from tasks import access
from tasks.models import Context, Round, Task

DEFAULT_MAX_LENGTH = 2000
"""Cap (characters) for an annotator field whose config gives no ``max_length``."""
EXPLANATION_MAX_LENGTH = 1000
FLAG_REASON_MAX_LENGTH = 500
TAG_MAX_LENGTH = 64
DEFAULT_EXPLANATION_FIELDS = ("example_explanation", "model_explanation")
EXPLANATION_LABELS = {
    "example_explanation": "Why your example is correct",
    "model_explanation": "Why the model got it wrong",
}


def check_annotator(*, user, task: Task) -> None:
    """Refuse (``NotAllowed`` ``not_annotator``) a user without the ``annotator`` role on ``task``
    (``tasks.access.has_task_role``), telling a banned user they are banned."""
    if not access.has_task_role(user, task, "annotator"):
        if access.is_banned(user, task):
            message = f"You are banned from {task.name}; ask one of its owners if you think this is a mistake."
        else:
            message = f"Only annotators write examples; ask an owner of {task.name} for the annotator role."
        raise NotAllowed(Code.NOT_ANNOTATOR, message)


def _clean_text(field: dict, value, *, default_max: int = DEFAULT_MAX_LENGTH) -> str:
    name = field["name"]
    label = field.get("label", name)
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise RuleError(Code.REQUIRED, f"{label} must be text.", field=name)
    if "\x00" in value:
        # PostgreSQL cannot store NUL in text or jsonb: refuse it instead of failing on save.
        raise RuleError(Code.NULL_CHARACTER, f"{label} contains a NUL character (\\u0000); remove it.", field=name)
    value = value.strip()
    if not value and field.get("required", True):
        raise RuleError(Code.REQUIRED, f"{label} is required: write something.", field=name)
    cap = field.get("max_length", default_max)
    if len(value) > cap:
        raise RuleError(
            Code.TOO_LONG, f"{label} has {len(value)} characters; the limit is {cap}. Shorten it.", field=name
        )
    return value


def clean_example_input(*, task: Task, context: Context, input: dict) -> dict:
    """Return the example's full input: the context's fields (from the server) plus the annotator's fields.

    Annotator fields are stripped and checked (required unless the config says not, at
    most ``max_length`` characters, else ``DEFAULT_MAX_LENGTH``). A field prefilled from a
    context field (``prefill_from``) must differ from that context field: the prompt sent
    back unchanged is not the annotator's example (with a label the model disagrees with, it
    would count as fooling the model). Context fields sent by the client are ignored: the
    context's own values are used. Raises ``RuleError`` ``unknown_field``, ``required``,
    ``too_long`` or ``unchanged_input`` naming the field.
    """
    if not isinstance(input, dict):
        raise RuleError(Code.REQUIRED, "The example's input must be an object of the task's fields.")
    config = task.config
    context_names = [f["name"] for f in config["context_fields"]]
    fields = config["input_fields"]
    names = [f["name"] for f in fields]
    unknown = sorted(set(input) - set(names) - set(context_names))
    if unknown:
        raise RuleError(
            Code.UNKNOWN_FIELD,
            f"Unknown field {', '.join(unknown)}; this task takes {', '.join(names)}.",
            field=unknown[0],
        )
    cleaned = {name: context.data.get(name, "") for name in context_names}
    for field in fields:
        value = _clean_text(field, input.get(field["name"]))
        source = field.get("prefill_from")
        if source and value and value == str(context.data.get(source, "")).strip():
            label = field.get("label", field["name"])
            raise RuleError(
                Code.UNCHANGED_INPUT,
                f"{label} is still the prompt as given: rewrite it in your own words before you submit.",
                field=field["name"],
            )
        cleaned[field["name"]] = value
    return cleaned


def clean_target(*, task: Task, example_input: dict, target) -> dict:
    """Return the annotator's target in its stored shape, or raise ``RuleError`` saying what to fix.

    The task's spec decides (``tasks/kinds/``, ``clean_target``). Classification:
    ``{"label": <one of task.labels>}`` (aliases are accepted and normalised). Extractive QA:
    ``{"answers": [{"text", "answer_start"}]}`` with exactly one answer that is a span of the
    passage (surrounding whitespace of the selection is trimmed and the start moved accordingly).
    """
    return task.spec.clean_target(task.config, example_input, target)


def _clean_explanations(task: Task, explanations, *, model_wrong: bool | None) -> dict:
    if explanations is None:
        return {}
    if not isinstance(explanations, dict):
        raise RuleError(Code.INVALID_METADATA, "Explanations must be an object of text fields.")
    allowed = task.config.get("explanation_fields") or list(DEFAULT_EXPLANATION_FIELDS)
    cleaned = {}
    for name, value in explanations.items():
        if name not in allowed:
            raise RuleError(
                Code.UNKNOWN_EXPLANATION, f"Unknown explanation '{name}'; this task takes {', '.join(allowed)}.", field=name
            )
        value = _clean_text(
            {"name": name, "label": EXPLANATION_LABELS.get(name, name), "required": False},
            value, default_max=EXPLANATION_MAX_LENGTH,
        )
        if not value:
            continue
        if name == "model_explanation" and model_wrong is False:
            raise RuleError(
                Code.EXPLANATION_NOT_APPLICABLE,
                "The model got this example right, so there is no model mistake to explain.",
                field=name,
            )
        cleaned[name] = value
    return cleaned


def _check_one_shot(task: Task) -> None:
    """Refuse a one-shot example (input and target at once) for a kind whose images are generated first and
    judged after (``annotation/t2i.py``)."""
    if task.spec.generates_images:
        raise RuleError(Code.WRONG_FLOW, f"{task.name} generates images from your prompt first: write on its "
                        "text-to-image page (/tasks/<code>/imagine/), where you judge the images.", status_code=409)


def _clean_time_spent(time_spent) -> float | None:
    if time_spent is None:
        return None
    try:
        value = float(time_spent)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise RuleError(Code.INVALID_TIME_SPENT, "Time spent must be a number of seconds, 0 or more.")
    return value


def _check_open(task: Task, round: Round, context: Context | None = None) -> None:
    if not task.active:
        raise RuleError(Code.TASK_INACTIVE, f"{task.name} is not collecting examples any more.")
    if not task.collecting:
        raise RuleError(
            Code.NOT_COLLECTING, f"{task.name} is an evaluation-only benchmark: it collects no examples.", status_code=409
        )
    if round.status != Round.Status.OPEN:
        raise RuleError(
            Code.ROUND_CLOSED, f"Round {round.number} of {task.name} is closed; open the task page for the current round."
        )
    if context is not None and not context.active:
        raise RuleError(Code.CONTEXT_NOT_AVAILABLE, "This context was withdrawn by the task owner; take a new context.")


def clean_tag(tag, *, context: Context) -> str:
    """The example's tag: the one sent, else the context's, stripped; at most ``TAG_MAX_LENGTH`` characters."""
    tag = (tag or context.tag or "").strip()
    if len(tag) > TAG_MAX_LENGTH:
        raise RuleError(Code.TOO_LONG, f"The tag is longer than {TAG_MAX_LENGTH} characters.", field="tag")
    return tag
