"""State changes of tasks and rounds, shared by the API, the admin and the owner pages."""

from django.db import transaction

from dynabench.errors import NotAllowed, RuleError
from tasks.error_codes import TaskErrorCode
from tasks.models import MLModel, Round, Task


@transaction.atomic
def open_round(*, task: Task, actor, target_model_ids=(), start=None, end=None) -> Round:
    """Open the task's next round (number = last + 1) with the given models in the loop.

    Rules: only an owner of the task (or an admin) may do it; the previous round must be
    closed first (closing builds its datasets); every target model must be a Hugging Face
    directory model of this task; ``end`` must come after ``start``.

    Raises ``NotAllowed`` (403) or ``RuleError`` (400) with a ``TaskErrorCode``.
    """
    if not task.is_owner(actor):
        raise NotAllowed("not_task_owner", "Only an owner of this task may open a round.")
    if start and end and end <= start:
        raise RuleError(TaskErrorCode.BAD_ROUND_DATES, "The round's end must come after its start.", field="end")
    last = Round.objects.select_for_update().filter(task=task).order_by("-number").first()
    if last is not None and last.status == Round.Status.OPEN:
        raise RuleError(
            TaskErrorCode.PREVIOUS_ROUND_OPEN,
            f"Round {last.number} is still open; close it before opening round {last.number + 1}.",
        )
    ids = sorted(set(target_model_ids))
    models = list(MLModel.objects.filter(pk__in=ids, task=task))
    missing = sorted(set(ids) - {m.pk for m in models})
    if missing:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_OF_TASK,
            f"No model of task {task.code} has id {', '.join(map(str, missing))}.",
            field="target_models",
        )
    not_loadable = [m.pk for m in models if m.kind != MLModel.Kind.HF_DIRECTORY]
    if not_loadable:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_LOADABLE,
            f"Models {', '.join(map(str, not_loadable))} are prediction files; only Hugging Face directory models can be in the loop.",
            field="target_models",
        )
    new_round = Round.objects.create(task=task, number=(last.number + 1) if last else 1, start=start, end=end)
    new_round.target_models.set(models)
    return new_round
