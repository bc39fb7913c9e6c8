"""State changes on tasks and rounds, shared by the admin, owner pages, the API and jobs.

Each function takes keyword-only arguments, checks the actor, and applies its change in
one transaction.
"""

import uuid

from django.contrib.auth.models import Permission
from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RuleError
from tasks.error_codes import TaskErrorCode
from tasks.models import MLModel, Round, Task

# What a task owner may do in the Django admin (every list is scoped to the tasks they own).
OWNER_ADMIN_PERMISSIONS = {
    "tasks": {
        "task": ("view", "change"),
        "round": ("view", "add", "change"),
        "context": ("view", "add", "change"),
        "mlmodel": ("view", "change"),
        "dataset": ("view", "add", "change"),
        "datasetitem": ("view",),
    },
    "annotation": {"example": ("view", "change")},
    "validation": {"validation": ("view",)},
    "leaderboard": {"evaluationrun": ("view",), "leaderboardconfig": ("view",)},
}


@transaction.atomic
def set_round_status(*, round: Round, status: str, acting_user) -> Round:
    """Open or close ``round`` (``status`` is ``"open"`` or ``"closed"``) and return it.

    Opening sets ``start`` (the first time) and clears ``end``; closing sets ``end``.
    Setting the status a round already has changes nothing. A task has at most one open
    round: opening one while another is open raises ``RuleError`` (close that one first).
    Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin), and
    ``RuleError`` for an unknown status.
    Closing only sets the status here; building the round's datasets hooks in at this point.
    """
    if status not in Round.Status.values:
        raise RuleError("round_status_invalid", f"unknown round status '{status}' (use open or closed)", field="status")
    if not round.task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {round.task.code} may open or close its rounds")
    locked = Round.objects.select_for_update().get(pk=round.pk)
    if locked.status == status:
        return locked
    if status == Round.Status.OPEN:
        other = Round.objects.filter(task_id=locked.task_id, status=Round.Status.OPEN).exclude(pk=locked.pk).first()
        if other is not None:
            raise RuleError(
                "other_round_open", f"round {other.number} of {round.task.code} is still open; close it first", field="status"
            )
    now = timezone.now()
    locked.status = status
    if status == Round.Status.OPEN:
        locked.start = locked.start or now
        locked.end = None
    else:
        locked.end = now
    locked.save(update_fields=["status", "start", "end"])
    return locked


@transaction.atomic
def add_task_owner(*, task: Task, user, acting_user) -> None:
    """Make ``user`` an owner of ``task`` and give them the admin access owners need.

    The user becomes staff with ``OWNER_ADMIN_PERMISSIONS``; the admin shows them only
    the rows of tasks they own. Raises ``NotAllowed`` unless ``acting_user`` is an admin
    or already owns ``task``.
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only admins and owners of {task.code} may add owners")
    task.owners.add(user)
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    for app_label, models in OWNER_ADMIN_PERMISSIONS.items():
        for model, actions in models.items():
            codenames = [f"{action}_{model}" for action in actions]
            user.user_permissions.add(*Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames))


@transaction.atomic
def request_retraining(*, task: Task, acting_user, name: str | None = None, epochs: int | None = None) -> MLModel:
    """Create a new target-model record of ``task`` (status ``training``) and enqueue its training.

    The RQ job (``tasks.jobs.retrain_from_validated`` on the ``training`` queue, enqueued when
    the transaction commits) trains MiniLM on the task's validated examples plus the seed set
    and fills in the record. ``name`` (a slug, unique in the task) defaults to
    ``minilm-retrained-<timestamp>``; ``epochs`` overrides the default number of epochs.

    Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin);
    ``RuleError`` when the task has no validated example yet or the name is bad or taken.
    """
    from annotation.models import Example, ValidationState
    from tasks import jobs, training

    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"Only owners of {task.code} may retrain its target model.")
    validated = Example.objects.filter(
        round__task=task, validation_state=ValidationState.VERIFIED_CORRECT, retracted=False
    ).count()
    if not validated:
        raise RuleError(
            "no_validated_examples",
            f"Task {task.code} has no example validated as correct yet; retraining would only repeat the seed model.",
        )
    if epochs is not None and not 1 <= epochs <= 100:
        raise RuleError("bad_epochs", "epochs must be between 1 and 100.", field="epochs")
    name = training.check_model_name(task, name or jobs.retraining_name())
    job_id = f"retrain-{task.code}-{uuid.uuid4().hex}"
    ml_model = MLModel.objects.create(
        task=task, owner=acting_user, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(training.model_directory(task, name)),
        description=f"MiniLM retrained for {task.name} on {validated} validated examples plus the seed set.",
        training_info={"job_id": job_id, "requested_by": acting_user.pk, "requested_at": timezone.now().isoformat(),
                       "validated_at_request": validated},
    )
    transaction.on_commit(lambda: jobs.enqueue_retraining(task.pk, model_id=ml_model.pk, job_id=job_id, epochs=epochs))
    return ml_model


@transaction.atomic
def open_round(*, task: Task, acting_user, target_model_ids=(), start=None, end=None) -> Round:
    """Create the task's next round (number = last + 1), open, with the given models in the loop.

    Opening goes through ``set_round_status``, so its rules hold: only owners (and admins),
    and at most one open round per task (close the current one first; closing builds its
    datasets). Every target model must be a Hugging Face directory model of this task,
    and ``end`` must come after ``start``.

    Raises ``NotAllowed`` (403) or ``RuleError`` (400); nothing is created when refused.
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may open its rounds")
    if start and end and end <= start:
        raise RuleError(TaskErrorCode.BAD_ROUND_DATES, "the round's end must come after its start", field="end")
    ids = sorted(set(target_model_ids))
    models = list(MLModel.objects.filter(pk__in=ids, task=task))
    missing = sorted(set(ids) - {m.pk for m in models})
    if missing:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_OF_TASK,
            f"no model of task {task.code} has id {', '.join(map(str, missing))}",
            field="target_models",
        )
    not_loadable = [m.pk for m in models if m.kind != MLModel.Kind.HF_DIRECTORY]
    if not_loadable:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_LOADABLE,
            f"models {', '.join(map(str, not_loadable))} are prediction files; only Hugging Face directories can be in the loop",
            field="target_models",
        )
    last = Task.objects.select_for_update().get(pk=task.pk).rounds.order_by("-number").first()
    new_round = Round.objects.create(
        task=task, number=(last.number + 1) if last else 1, status=Round.Status.CLOSED, start=start, end=end
    )
    new_round.target_models.set(models)
    new_round = set_round_status(round=new_round, status=Round.Status.OPEN, acting_user=acting_user)
    if end:
        Round.objects.filter(pk=new_round.pk).update(end=end)
        new_round.end = end
    return new_round
