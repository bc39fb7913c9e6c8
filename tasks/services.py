"""State changes on tasks and rounds, shared by the admin, owner pages, the API and jobs.

Each function takes keyword-only arguments, checks the actor, and applies its change in
one transaction.
"""

from django.contrib.auth.models import Permission
from django.db import transaction
from django.utils import timezone

from dynabench.errors import NotAllowed, RuleError
from tasks.models import Round, Task

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
    Setting the status a round already has changes nothing. Raises ``NotAllowed`` unless
    ``acting_user`` owns the task (or is an admin), ``RuleError`` for an unknown status.
    Closing only sets the status here; building the round's datasets hooks in at this point.
    """
    if status not in Round.Status.values:
        raise RuleError("round_status_invalid", f"unknown round status '{status}' (use open or closed)", field="status")
    if not round.task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {round.task.code} may open or close its rounds")
    locked = Round.objects.select_for_update().get(pk=round.pk)
    if locked.status == status:
        return locked
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
