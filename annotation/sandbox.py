"""The sandbox: trying the model in the loop of a task's current round without storing anything.

Anyone may try (a user or a visitor's address), within the sandbox's hourly limit
(``settings.SANDBOX_TRIES_PER_HOUR``) and the submission rate; the input is checked as an
example's would be (``annotation/example_checks.py``, context fields typed in too), the
model is chosen and asked as for an example (``annotation/loop_choice.py``,
``annotation/model_answer.py``), and with a target the answer says whether it would have
fooled the model. Nothing is saved.
"""

import math
from dataclasses import dataclass

from django.conf import settings

from asgiref.sync import sync_to_async

from annotation import example_checks, limits, loop_choice, model_answer
from annotation.error_codes import AnnotationErrorCode as Code
from dynabench.errors import RateLimited, RuleError
from dynabench.ratelimits import count_hit, hits
from tasks.models import MLModel, Round, Task

CONTEXT_MAX_LENGTH = 10000
"""Cap (characters) for a context field typed into the sandbox."""
SANDBOX_WINDOW_S = 3600


def _sandbox_limit() -> int:
    return int(getattr(settings, "SANDBOX_TRIES_PER_HOUR", 30))


@dataclass(frozen=True)
class SandboxAllowance:
    """The sandbox's hourly limit for one visitor: ``limit`` tries per clock hour (None: no limit)."""

    limit: int | None
    used: int
    resets_in_s: int

    @property
    def remaining(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.used)


def sandbox_allowance(*, visitor: str) -> SandboxAllowance:
    """Return how many sandbox tries ``visitor`` (``"user:<id>"`` / ``"ip:<addr>"``) has left this hour.

    The limit is ``settings.SANDBOX_TRIES_PER_HOUR`` (default 30; 0 turns it off), counted
    in the Django cache per clock hour (``dynabench.ratelimits``), so it holds across processes.
    """
    limit = _sandbox_limit()
    used, resets_in = hits(f"annotation-sandbox:{visitor}", window_s=SANDBOX_WINDOW_S)
    if limit <= 0:
        return SandboxAllowance(limit=None, used=0, resets_in_s=resets_in)
    return SandboxAllowance(limit=limit, used=used, resets_in_s=resets_in)


def _count_sandbox_try(visitor: str) -> None:
    limit = _sandbox_limit()
    if limit <= 0:
        return
    used, resets_in = count_hit(f"annotation-sandbox:{visitor}", window_s=SANDBOX_WINDOW_S)
    if used > limit:
        minutes = math.ceil(resets_in / 60)
        raise RateLimited(
            Code.SANDBOX_LIMIT,
            f"You have used all {limit} sandbox tries of this hour. They come back in {minutes} minute"
            f"{'' if minutes == 1 else 's'}; meanwhile, write examples that count on the create page.",
        )


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
    trying (``"user:<id>"`` or ``"ip:<addr>"``) for the sandbox's hourly limit
    (``sandbox_allowance``; ``RateLimited`` ``sandbox_limit`` past it) and the submission
    rate limit. With a
    ``target`` (label, or answer span) the answer says whether it would have fooled the
    model. Raises ``RuleError`` as ``create_example`` does.
    """
    round, model, cleaned, example_target = check_try(task=task, input=input, visitor=visitor, target=target)
    output, _ = model_answer.ask_model(model, cleaned, round=round)
    return _answer(task, round, model, cleaned, example_target, output)


async def atry_model(*, task: Task, input: dict, visitor: str, target: dict | None = None) -> SandboxAnswer:
    """``try_model`` for async views: the checks on the request's thread, the wait on the model
    without one (``model_answer.aask_model``)."""
    round, model, cleaned, example_target = await sync_to_async(check_try)(task=task, input=input, visitor=visitor, target=target)
    output, _ = await model_answer.aask_model(model, cleaned, round=round)
    return _answer(task, round, model, cleaned, example_target, output)


def check_try(*, task: Task, input: dict, visitor: str, target: dict | None = None) -> tuple:
    """The checks of ``try_model`` and the model that answers: ``(round, model, cleaned input, target)``."""
    round = task.current_round()
    if round is None:
        raise RuleError(Code.NO_ROUND, f"{task.name} has no round yet.")
    if not task.active:
        raise RuleError(Code.TASK_INACTIVE, f"{task.name} is not active.")
    example_checks._check_one_shot(task)
    if not isinstance(input, dict):
        raise RuleError(Code.REQUIRED, "The input must be an object of the task's fields.")
    config = task.config
    fields = {f["name"]: (f, example_checks.DEFAULT_MAX_LENGTH) for f in config["input_fields"]}
    fields.update({f["name"]: ({**f, "required": True}, CONTEXT_MAX_LENGTH) for f in config["context_fields"]})
    cleaned = {}
    for name in config["model_inputs"]:
        field, default_max = fields[name]
        cleaned[name] = example_checks._clean_text(field, input.get(name), default_max=default_max)
    example_target = example_checks.clean_target(task=task, example_input=cleaned, target=target) if target else None
    _count_sandbox_try(visitor)
    limits.check_submission_rate(key=visitor)
    return round, loop_choice.model_in_loop(round), cleaned, example_target


def _answer(task: Task, round, model, cleaned: dict, example_target, output: dict) -> SandboxAnswer:
    model_wrong = task.spec.model_wrong(task.config, example_target, output) if example_target else None
    return SandboxAnswer(round=round, model=model, input=cleaned, output=output, target=example_target, model_wrong=model_wrong)
