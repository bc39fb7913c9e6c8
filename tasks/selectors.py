"""Reads about tasks and datasets shared by every surface (API, pages, exports, admin, jobs).

``can_see_labels`` is the one rule for whether a dataset's targets may leave the server.
"""

from __future__ import annotations

from django.db.models import Q

from dynabench import hotsql
from tasks import access

from tasks.models import Dataset, MLModel, Task


def collecting_task(code: str) -> Task | None:
    """The active task ``code`` that collects examples, or None (unknown, inactive, or an
    evaluation-only benchmark). Every request of the annotation pages asks for it first: one
    fixed-shape statement (``dynabench.hotsql``)."""
    row = hotsql.fetch_one(hotsql.statement("tasks.collecting_task", _collecting_task_sql), [code, True, True])
    return hotsql.load_row(row, Task)[0] if row is not None else None


def _collecting_task_sql() -> str:
    t = Task
    return (
        f"SELECT {hotsql.select_list(t)} FROM {hotsql.table(t)} WHERE {hotsql.column(t, 'code')} = %s "
        f"AND {hotsql.column(t, 'active')} = %s AND {hotsql.column(t, 'collecting')} = %s"
    )


def can_see_labels(user, dataset: Dataset) -> bool:
    """True when ``user`` may see the targets (gold labels or answers) of ``dataset``.

    Public datasets: everyone, anonymous users included. Hidden datasets: only the task's
    owners and admins (``Task.is_owner``); everyone else gets inputs and uids only, and for
    hidden sets aggregate scores only (no per-item correctness, no predictions file with
    targets). ``user`` may be ``None`` (a job with no reader): treated as anonymous.
    """
    if not dataset.labels_hidden:
        return True
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    return dataset.task.is_owner(user)


def hidden_dataset_ids(user, datasets) -> set[int]:
    """The ids among ``datasets`` (an iterable of ``Dataset``) whose labels ``user`` may not see."""
    return {d.pk for d in datasets if not can_see_labels(user, d)}


def owned_task_ids(user) -> set[int] | None:
    """The ids of the tasks ``user`` owns; ``None`` for an admin (who owns every task's view)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return set()
    if user.is_superuser:
        return None
    return set(user.owned_tasks.values_list("pk", flat=True))


def example_labels_hidden(user, example, *, splits: set[tuple[int, str]] | None = None, owned: set[int] | None | bool = False) -> bool:
    """True when ``example`` (an ``annotation.models.Example``) went into a hidden dataset's split
    of its round and ``user`` is not an owner of its task nor an admin: its label, the model's answer,
    whether it fooled the model and its explanations then stay on the server, from its author too.

    ``splits``: ``tasks.access.hidden_splits()`` computed once for many examples; ``owned``:
    ``owned_task_ids(user)`` computed once (left out: looked up).
    """
    if not access.example_labels_hidden(example, splits):
        return False
    owned = owned_task_ids(user) if owned is False else owned
    if owned is None:
        return False
    return example.round.task_id not in owned


def evaluable_models(task, models=None) -> list:
    """The task's models that are scored on its datasets: every model record with an artefact (a path,
    or an endpoint's connection) that is not still ``training`` (a retrained model is scheduled when its
    training finishes). ``models``: ``MLModel`` rows or ids to narrow to. Ordered by id."""
    queryset = (
        MLModel.objects.filter(task=task).exclude(status=MLModel.Status.TRAINING)
        .exclude(Q(path="") & ~Q(kind=MLModel.Kind.ENDPOINT))
    )
    if models is not None:
        queryset = queryset.filter(pk__in=[getattr(m, "pk", m) for m in models])
    return list(queryset.order_by("pk"))


def model_name_taken(task, name: str) -> bool:
    """True when ``task`` already has a model named ``name`` (ignoring case and surrounding spaces):
    two models of one task under one name cannot be told apart on its pages. One query."""
    return MLModel.objects.filter(task=task, name__iexact=(name or "").strip()).exists()
