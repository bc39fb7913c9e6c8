"""Writing examples against the model in the loop: every rule lives here.

The HTMX pages, the REST API and the admin call these functions; views only parse input
and render output. Each function takes keyword-only arguments, checks the rules first and
raises ``dynabench.errors.RuleError`` (or its ``NotAllowed`` / ``RateLimited`` kinds) with
a code from ``annotation/error_codes.py`` and a message saying what to fix. State changes
happen in one transaction; nothing sent by the client decides whether the model was fooled.
"""

import logging
import math
import random
import time
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from annotation.calculations import decide_model_wrong, span_matches_passage
from annotation.error_codes import AnnotationErrorCode as Code
from annotation.models import Example
from dynabench.errors import NotAllowed, RateLimited, RuleError
from dynabench.roles import has_role
from tasks.config import normalise_label
from tasks.models import Context, MLModel, Round, Task, TaskKind
from tasks.registry import get_predictor

logger = logging.getLogger(__name__)

STRATEGIES = ("least_used", "uniform", "least_fooled")
DEFAULT_MAX_LENGTH = 2000
"""Cap (characters) for an annotator field whose config gives no ``max_length``."""
CONTEXT_MAX_LENGTH = 10000
"""Cap (characters) for a context field typed into the sandbox."""
EXPLANATION_MAX_LENGTH = 1000
FLAG_REASON_MAX_LENGTH = 500
TAG_MAX_LENGTH = 64
DEFAULT_EXPLANATION_FIELDS = ("example_explanation", "model_explanation")
EXPLANATION_LABELS = {
    "example_explanation": "Why your example is correct",
    "model_explanation": "Why the model got it wrong",
}
_TIE_WINDOW = 50
_RATE_WINDOW_S = 60


# --- Contexts ---------------------------------------------------------------------------


def choose_context(*, round: Round, strategy: str | None = None, tag: str | None = None, exclude=()) -> Context:
    """Return an active context of ``round`` for an annotator to write against.

    ``strategy`` (default: the task config's ``context_strategy``, else ``least_used``):

    - ``least_used``: a context with the fewest examples written so far (``times_used``);
    - ``uniform``: any active context, uniformly at random;
    - ``least_fooled``: a context on which the model was fooled least (non-retracted
      examples with ``model_wrong``), then least used.

    Ties are broken at random so concurrent annotators spread over contexts. ``tag``
    keeps contexts with that tag only. ``exclude`` (context ids) are skipped unless
    nothing else is left ("new context" on a round with one context returns it again).
    Raises ``RuleError`` ``unknown_strategy`` or ``no_context``.
    """
    strategy = strategy or round.task.config.get("context_strategy") or "least_used"
    if strategy not in STRATEGIES:
        raise RuleError(
            Code.UNKNOWN_STRATEGY, f"Unknown context strategy '{strategy}'; use one of {', '.join(STRATEGIES)}."
        )
    contexts = Context.objects.filter(round=round, active=True)
    if tag:
        contexts = contexts.filter(tag=tag)
    exclude = [pk for pk in exclude if pk]
    chosen = _pick_context(contexts.exclude(pk__in=exclude), strategy) if exclude else None
    chosen = chosen or _pick_context(contexts, strategy)
    if chosen is None:
        where = f" tagged '{tag}'" if tag else ""
        raise RuleError(
            Code.NO_CONTEXT,
            f"Round {round.number} of {round.task.name} has no active context{where} to write against yet. "
            "A task owner must import contexts.",
        )
    return chosen


def _pick_context(contexts, strategy: str) -> Context | None:
    if strategy == "uniform":
        count = contexts.count()
        return contexts.order_by("pk")[random.randrange(count)] if count else None
    if strategy == "least_fooled":
        fooled = Count("examples", filter=Q(examples__model_wrong=True, examples__retracted=False))
        rows = list(
            contexts.annotate(fooled=fooled)
            .order_by("fooled", "times_used", "pk")
            .values_list("pk", "fooled", "times_used")[:_TIE_WINDOW]
        )
        ties = [row[0] for row in rows if rows and row[1:] == rows[0][1:]]
    else:
        rows = list(contexts.order_by("times_used", "pk").values_list("pk", "times_used")[:_TIE_WINDOW])
        ties = [pk for pk, used in rows if used == rows[0][1]]
    if not ties:
        return None
    return Context.objects.select_related("round__task").get(pk=random.choice(ties))


# --- Limits -----------------------------------------------------------------------------


def check_submission_rate(*, key: str) -> None:
    """Count one submission for ``key`` (``"user:<id>"``, ``"ip:<addr>"``) in this minute's window.

    The limit is ``settings.ANNOTATION_SUBMISSIONS_PER_MINUTE`` (0 turns it off), counted
    in the Django cache (Redis) with a fixed one-minute window, so it holds across
    processes. Raises ``RateLimited`` (``rate_limited``, HTTP 429) past the limit.
    """
    limit = int(getattr(settings, "ANNOTATION_SUBMISSIONS_PER_MINUTE", 20))
    if limit <= 0:
        return
    now = time.time()
    cache_key = f"annotation:rate:{key}:{int(now // _RATE_WINDOW_S)}"
    try:
        count = cache.incr(cache_key)  # one round trip in the common case
    except ValueError:  # the first submission of this window
        count = 1 if cache.add(cache_key, 1, timeout=_RATE_WINDOW_S + 5) else cache.incr(cache_key)
    if count > limit:
        wait = math.ceil(_RATE_WINDOW_S - now % _RATE_WINDOW_S)
        raise RateLimited(
            Code.RATE_LIMITED,
            f"Too many submissions: at most {limit} a minute. Wait {wait} seconds, then submit again.",
        )


def _check_daily_cap(*, user, task: Task) -> None:
    cap = task.config.get("daily_example_cap")
    if not cap:
        return
    since = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    written = Example.objects.filter(author=user, round__task=task, created_at__gte=since).count()
    if written >= cap:
        raise RateLimited(
            Code.DAILY_CAP_REACHED,
            f"You have written {written} examples for {task.name} today; the daily limit is {cap}. "
            f"Come back tomorrow (the count restarts at midnight {settings.TIME_ZONE}).",
        )


# --- Checking an example ----------------------------------------------------------------


def _clean_text(field: dict, value, *, default_max: int = DEFAULT_MAX_LENGTH) -> str:
    name = field["name"]
    label = field.get("label", name)
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise RuleError(Code.REQUIRED, f"{label} must be text.", field=name)
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
    most ``max_length`` characters, else ``DEFAULT_MAX_LENGTH``). Context fields sent by
    the client are ignored: the context's own values are used. Raises ``RuleError``
    ``unknown_field``, ``required`` or ``too_long`` naming the field.
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
        cleaned[field["name"]] = _clean_text(field, input.get(field["name"]))
    return cleaned


def clean_target(*, task: Task, example_input: dict, target) -> dict:
    """Return the annotator's target in its stored shape, or raise ``RuleError`` saying what to fix.

    Classification: ``{"label": <one of task.labels>}`` (aliases are accepted and
    normalised). Extractive QA: ``{"answers": [{"text", "answer_start"}]}`` with exactly
    one answer that is a span of the passage:
    ``passage[answer_start:answer_start + len(text)] == text`` (surrounding whitespace of
    the selection is trimmed and the start moved accordingly).
    """
    target = target if isinstance(target, dict) else {}
    if task.kind == TaskKind.CLASSIFICATION:
        raw = target.get("label")
        choices = ", ".join(task.labels)
        if raw in (None, ""):
            raise RuleError(Code.REQUIRED, f"Pick a label: {choices}.", field="label")
        label = normalise_label(task.config, raw)
        if label is None:
            raise RuleError(Code.INVALID_LABEL, f"'{raw}' is not a label of this task; pick one of {choices}.", field="label")
        return {"label": label}

    passage = example_input.get(task.config["model_inputs"][1], "")
    answers = target.get("answers")
    if not isinstance(answers, list) or len(answers) != 1 or not isinstance(answers[0], dict):
        raise RuleError(Code.INVALID_ANSWER, "Give exactly one answer, selected in the passage.", field="answer")
    text, start = answers[0].get("text"), answers[0].get("answer_start")
    if not isinstance(text, str) or not text.strip():
        raise RuleError(
            Code.REQUIRED, "Select the answer in the passage (mouse, or Shift + arrow keys).", field="answer"
        )
    try:
        if isinstance(start, bool) or float(start) != int(start):
            raise ValueError
        start = int(start)
    except (TypeError, ValueError):
        raise RuleError(Code.INVALID_ANSWER, "The answer's start must be a character position.", field="answer")
    start += len(text) - len(text.lstrip())
    text = text.strip()
    if not span_matches_passage(passage, text=text, start=start):
        raise RuleError(
            Code.ANSWER_NOT_IN_PASSAGE,
            f"“{text[:80]}” is not the passage's text at position {start}. Select the answer in the passage again.",
            field="answer",
        )
    return {"answers": [{"text": text, "answer_start": start}]}


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
    if round.status != Round.Status.OPEN:
        raise RuleError(
            Code.ROUND_CLOSED, f"Round {round.number} of {task.name} is closed; open the task page for the current round."
        )
    if context is not None and not context.active:
        raise RuleError(Code.CONTEXT_NOT_AVAILABLE, "This context was withdrawn by the task owner; take a new context.")


# --- The model in the loop --------------------------------------------------------------


def model_in_loop(round: Round) -> MLModel:
    """Return the round's model in the loop: its first target model (lowest id) that is a model directory.

    Raises ``RuleError`` ``no_model_in_loop`` when the round has none.
    """
    model = round.target_models.filter(kind=MLModel.Kind.HF_DIRECTORY).order_by("pk").first()
    if model is None:
        raise RuleError(
            Code.NO_MODEL_IN_LOOP,
            f"Round {round.number} of {round.task.name} has no model in the loop, so examples cannot be "
            "checked yet. A task owner must add a target model to the round.",
            status_code=409,
        )
    return model


def model_input(task: Task, example_input: dict) -> dict:
    """Return the predictor's input: ``example_input`` restricted to ``config["model_inputs"]``."""
    return {name: example_input.get(name, "") for name in task.config["model_inputs"]}


def _predict(model: MLModel, inputs: dict) -> tuple[dict, float]:
    """Return the model's output for one input and the seconds the registry took (load included)."""
    started = time.perf_counter()
    try:
        return get_predictor(model).predict([inputs])[0], time.perf_counter() - started
    except RuleError:
        raise
    except Exception:
        logger.exception("model %s failed to answer", model.pk)
        raise RuleError(
            Code.MODEL_FAILED,
            f"The model in the loop ({model.name}) failed to answer, so nothing was saved. "
            "Try again in a moment; if it keeps failing, tell the task owner.",
            status_code=503,
        )


# --- Examples ---------------------------------------------------------------------------


@transaction.atomic
def _save_example(*, user, context: Context, **fields) -> Example:
    # Lock the author's row so that one annotator's concurrent submissions are counted one
    # at a time against the daily cap (SQLite serialises write transactions anyway).
    get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk").first()
    task = context.round.task
    _check_daily_cap(user=user, task=task)
    if not Round.objects.filter(pk=context.round_id, status=Round.Status.OPEN).exists():
        raise RuleError(Code.ROUND_CLOSED, "The round of this context was closed while you wrote; take a new context.")
    example = Example.objects.create(round=context.round, context=context, author=user, **fields)
    Context.objects.filter(pk=context.pk).update(times_used=F("times_used") + 1)
    return example


def create_example(
    *, user, context: Context, input: dict, target: dict, tag: str = "", time_spent=None, metadata=None
) -> Example:
    """Check an annotator's example, ask the model in the loop, and store both; return the ``Example``.

    1. The task must be active, the context's round open and the context active.
    2. ``input`` (the annotator's fields) and ``target`` are checked (``clean_example_input``,
       ``clean_target``); ``metadata`` may hold the task's explanation fields only.
    3. The per-user submission rate (``check_submission_rate``) is checked before the model runs.
    4. The round's model in the loop (``model_in_loop``) answers through the registry; the
       server decides ``model_wrong`` (``calculations.decide_model_wrong``).
    5. In one transaction: the daily cap (``daily_example_cap`` per user per task, UTC day,
       retracted examples included; checked under a lock on the author), the example
       with the model's full output, the model, the round and ``time_spent`` (seconds) is
       created, and ``Context.times_used`` is bumped with ``F()``. The returned example
       carries ``inference_s``, the seconds the model took (not stored).

    Only users with the ``annotator`` role (or admins) write examples. A ``model_explanation``
    sent with an example that turns out not to fool the model is dropped.
    Raises ``RuleError`` (``NotAllowed``/``RateLimited``) with a code from ``error_codes``.
    """
    if not has_role(user, "annotator"):
        raise NotAllowed(
            Code.NOT_ANNOTATOR, "Only annotators write examples; ask an admin for the annotator role."
        )
    round = context.round
    task = round.task
    _check_open(task, round, context)
    example_input = clean_example_input(task=task, context=context, input=input)
    example_target = clean_target(task=task, example_input=example_input, target=target)
    explanations = _clean_explanations(task, metadata, model_wrong=None)
    time_spent = _clean_time_spent(time_spent)
    tag = (tag or context.tag or "").strip()
    if len(tag) > TAG_MAX_LENGTH:
        raise RuleError(Code.TOO_LONG, f"The tag is longer than {TAG_MAX_LENGTH} characters.", field="tag")
    check_submission_rate(key=f"user:{user.pk}")
    model = model_in_loop(round)
    output, inference_s = _predict(model, model_input(task, example_input))
    model_wrong = decide_model_wrong(task, example_target, output)
    if "model_explanation" in explanations and not model_wrong:
        explanations.pop("model_explanation")
    example = _save_example(
        user=user, context=context, input=example_input, target=example_target, model=model,
        model_output=output, model_wrong=model_wrong, metadata=explanations, tag=tag, time_spent=time_spent,
    )
    example.inference_s = inference_s  # not stored: the page reports it in a Server-Timing header
    return example


def _check_author(example: Example, user) -> None:
    if not user.is_authenticated or example.author_id != user.pk:
        raise NotAllowed(Code.NOT_AUTHOR, "Only the author of an example can change it.")


def retract_example(*, example: Example, user) -> Example:
    """Retract ``user``'s own ``example``: it stays stored but leaves every count and queue.

    Retracting twice is harmless. Raises ``NotAllowed`` (``not_author``) for anyone else.
    """
    _check_author(example, user)
    Example.objects.filter(pk=example.pk).update(retracted=True)
    example.retracted = True
    return example


def flag_example(*, example: Example, user, reason: str) -> Example:
    """Flag ``user``'s own ``example`` with a reason (stored as ``metadata["flag_reason"]``).

    Raises ``NotAllowed`` (``not_author``) or ``RuleError`` ``flag_reason_required`` /
    ``too_long`` (at most ``FLAG_REASON_MAX_LENGTH`` characters).
    """
    _check_author(example, user)
    reason = (reason or "").strip() if isinstance(reason, str) else ""
    if not reason:
        raise RuleError(Code.FLAG_REASON_REQUIRED, "Say why you flag this example.", field="reason")
    if len(reason) > FLAG_REASON_MAX_LENGTH:
        raise RuleError(
            Code.TOO_LONG, f"The reason has {len(reason)} characters; the limit is {FLAG_REASON_MAX_LENGTH}.", field="reason"
        )
    with transaction.atomic():
        locked = Example.objects.select_for_update().get(pk=example.pk)
        locked.flagged = True
        locked.metadata = {**locked.metadata, "flag_reason": reason}
        locked.save(update_fields=["flagged", "metadata"])
    return locked


def add_explanations(*, example: Example, user, explanations: dict) -> Example:
    """Add the author's explanations to ``example``'s metadata (merged; empty fields are skipped).

    Keys are the task's ``explanation_fields`` (default ``example_explanation`` "why the
    example is correct" and ``model_explanation`` "why the model got it wrong", the latter
    only for an example that fooled the model), each at most ``EXPLANATION_MAX_LENGTH``
    characters. Raises ``NotAllowed`` (``not_author``), ``RuleError`` ``retracted``,
    ``unknown_explanation``, ``explanation_not_applicable``, ``required`` or ``too_long``.
    """
    _check_author(example, user)
    if example.retracted:
        raise RuleError(Code.RETRACTED, "This example was retracted; it takes no explanations.")
    task = example.round.task
    cleaned = _clean_explanations(task, explanations, model_wrong=example.model_wrong)
    if not cleaned:
        raise RuleError(Code.REQUIRED, "Write an explanation first.", field=next(iter(explanations or {}), None))
    with transaction.atomic():
        locked = Example.objects.select_for_update().get(pk=example.pk)
        locked.metadata = {**locked.metadata, **cleaned}
        locked.save(update_fields=["metadata"])
    return locked


# --- Sandbox ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SandboxAnswer:
    """The model's answer in the sandbox: nothing is stored.

    ``model_wrong`` is None when no target was given.
    """

    round: Round
    model: MLModel
    input: dict
    output: dict
    target: dict | None
    model_wrong: bool | None


def try_model(*, task: Task, input: dict, visitor: str, target: dict | None = None) -> SandboxAnswer:
    """Ask the model in the loop of ``task``'s current round about ``input``; save nothing.

    ``input`` holds the model's inputs (``config["model_inputs"]``), context fields
    included (at most ``CONTEXT_MAX_LENGTH`` characters each). ``visitor`` names who is
    trying (``"user:<id>"`` or ``"ip:<addr>"``) for the submission rate limit. With a
    ``target`` (label, or answer span) the answer says whether it would have fooled the
    model. Raises ``RuleError`` as ``create_example`` does.
    """
    round = task.current_round()
    if round is None:
        raise RuleError(Code.NO_ROUND, f"{task.name} has no round yet.")
    if not task.active:
        raise RuleError(Code.TASK_INACTIVE, f"{task.name} is not active.")
    if not isinstance(input, dict):
        raise RuleError(Code.REQUIRED, "The input must be an object of the task's fields.")
    config = task.config
    fields = {f["name"]: (f, DEFAULT_MAX_LENGTH) for f in config["input_fields"]}
    fields.update({f["name"]: ({**f, "required": True}, CONTEXT_MAX_LENGTH) for f in config["context_fields"]})
    cleaned = {}
    for name in config["model_inputs"]:
        field, default_max = fields[name]
        cleaned[name] = _clean_text(field, input.get(name), default_max=default_max)
    example_target = clean_target(task=task, example_input=cleaned, target=target) if target else None
    check_submission_rate(key=visitor)
    model = model_in_loop(round)
    output, _ = _predict(model, cleaned)
    model_wrong = decide_model_wrong(task, example_target, output) if example_target else None
    return SandboxAnswer(round=round, model=model, input=cleaned, output=output, target=example_target, model_wrong=model_wrong)
