"""State changes on tasks and rounds, shared by the admin, owner pages, the API and jobs.

Each function takes keyword-only arguments, checks the actor, and applies its change in
one transaction.
"""

import hashlib
import json

from django.contrib.auth.models import Permission
from django.db import transaction
from django.utils import timezone

from dynabench.errors import FieldErrors, NotAllowed, RuleError
from tasks.config import validate_task_config
from tasks.error_codes import TaskErrorCode
from tasks.models import Dataset, DatasetItem, MLModel, Round, Task
from tasks.signals import leaderboard_inputs_changed

# What a task owner may do in the Django admin (every list is scoped to the tasks they own).
# The largest primary key the database can hold (BigAutoField: a signed 64-bit integer).
MAX_ROW_ID = 2**63 - 1

OWNER_ADMIN_PERMISSIONS = {
    "tasks": {
        "task": ("view", "change"),
        "round": ("view", "add", "change"),
        "context": ("view", "add", "change"),
        "mlmodel": ("view", "change"),
        "dataset": ("view", "add", "change"),
        "datasetitem": ("view",),
        "taskrole": ("view", "add", "delete"),
        "taskban": ("view", "add", "delete"),
        "upload": ("view",),
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


#: The settings an owner edits on the console (``update_task_settings``), in form order.
SETTINGS_FIELDS = ("name", "instructions", "labels", "validations_needed", "daily_example_cap", "content_warning")
_CONFIG_FIELDS = {"labels", "validations_needed", "daily_example_cap"}


def task_settings(task: Task) -> dict:
    """Return the owner-editable settings of ``task`` plus its ``version`` (for a later save)."""
    return {
        "name": task.name, "instructions": task.instructions, "labels": task.labels,
        "validations_needed": task.validations_needed, "daily_example_cap": int(task.config.get("daily_example_cap") or 0),
        "content_warning": task.content_warning, "version": task.version,
    }


def _settings_field(message: str) -> str:
    """Map a config validation message (``config.labels.1: ...``) onto the settings field at fault."""
    path = message.split(":", 1)[0]
    parts = path.split(".")
    if len(parts) > 1 and parts[0] == "config" and parts[1] in _CONFIG_FIELDS:
        return parts[1]
    return "__all__"


@transaction.atomic
def update_task_settings(*, task: Task, acting_user, version: int, **changes) -> Task:
    """Change the owner-editable settings of ``task`` (``SETTINGS_FIELDS``) and return it.

    ``version`` is the ``Task.version`` the owner's form was loaded from: when the row changed
    since (another owner saved first), nothing is written and ``RuleError`` ``stale_settings``
    (409) says so. ``labels`` (a list of distinct, non-empty names; only for a kind whose spec
    ``has_labels``), ``validations_needed`` (1-20) and ``daily_example_cap`` (0 = none) go into
    ``Task.config`` and are checked with the task kind's schema (``validate_task_config``);
    label descriptions and aliases of labels removed are dropped. ``name`` is required (at most
    200 characters). Field errors come together as ``FieldErrors`` ``{field: [messages]}``.
    Raises ``NotAllowed`` unless ``acting_user`` owns the task (or is an admin).
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may change its settings")
    unknown = sorted(set(changes) - set(SETTINGS_FIELDS))
    if unknown:
        raise RuleError("unknown_setting", f"unknown setting(s) {', '.join(unknown)}", field=unknown[0])
    locked = Task.objects.select_for_update().get(pk=task.pk)
    if locked.version != version:
        raise RuleError(
            TaskErrorCode.STALE_SETTINGS,
            f"Another owner saved the settings of {task.code} after you opened this form (version {locked.version}, "
            f"yours {version}). Reload the page to see their changes, then make yours again.",
            status_code=409,
        )
    errors: dict[str, list[str]] = {}
    config = dict(locked.config)
    if "name" in changes:
        name = (changes["name"] or "").strip()
        if not name:
            errors.setdefault("name", []).append("A task needs a name.")
        elif len(name) > 200:
            errors.setdefault("name", []).append(f"At most 200 characters (this has {len(name)}).")
        locked.name = name
    if "instructions" in changes:
        locked.instructions = (changes["instructions"] or "").strip()
    if "content_warning" in changes:
        locked.content_warning = (changes["content_warning"] or "").strip()
    if "labels" in changes:
        labels = [str(label).strip() for label in changes["labels"] or []]
        if not locked.spec.has_labels:
            if labels:
                errors.setdefault("labels", []).append(f"A {locked.spec.display_name} task has no labels.")
        elif any(not label for label in labels):
            errors.setdefault("labels", []).append("A label cannot be empty.")
        elif len(set(labels)) != len(labels):
            errors.setdefault("labels", []).append("Each label may appear once.")
        else:
            config["labels"] = labels
            if "label_descriptions" in config:
                config["label_descriptions"] = {k: v for k, v in config["label_descriptions"].items() if k in labels}
            if "label_aliases" in config:
                config["label_aliases"] = {k: v for k, v in config["label_aliases"].items() if v in labels}
    for key in ("validations_needed", "daily_example_cap"):
        if key in changes:
            config[key] = changes[key]
    for message in validate_task_config(config, kind=locked.kind):
        errors.setdefault(_settings_field(message), []).append(message.split(": ", 1)[-1])
    if errors:
        raise FieldErrors("invalid_settings", errors)
    locked.config = config
    locked.version += 1
    locked.save()
    return locked


@transaction.atomic
def open_round(
    *, task: Task, acting_user, target_model_ids=(), start=None, end=None, loop_rule: str | None = None,
    endpoint_call_budget: int | None = None, endpoint_token_budget: int | None = None,
) -> Round:
    """Create the task's next round (number = last + 1), open, with the given models in the loop.

    ``loop_rule`` (``Round.LoopRule``, default round-robin) picks which of several models answers
    each new example. Opening goes through ``set_round_status``, so its rules hold: only owners (and admins),
    and at most one open round per task (close the current one first; closing builds its
    datasets). Every target model must be a Hugging Face directory or an endpoint model of this
    task, and ``end`` must come after ``start``. ``endpoint_call_budget`` / ``endpoint_token_budget``:
    the most calls / tokens endpoint models in the loop may use in the round (None: no limit).

    Raises ``NotAllowed`` (403) or ``RuleError`` (400); nothing is created when refused
    (a model id that is not a positive 64-bit integer is a ``model_not_of_task`` 400).
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may open its rounds")
    out_of_range = [i for i in target_model_ids if not isinstance(i, int) or not 1 <= i <= MAX_ROW_ID]
    if out_of_range:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_OF_TASK,
            f"model ids are integers from 1 to {MAX_ROW_ID}; {', '.join(map(str, out_of_range[:3]))} is not one",
            field="target_models",
        )
    loop_rule = loop_rule or Round.LoopRule.ROUND_ROBIN
    if loop_rule not in Round.LoopRule.values:
        raise RuleError(
            TaskErrorCode.BAD_LOOP_RULE, f"unknown rule '{loop_rule}'; use one of {', '.join(Round.LoopRule.values)}", field="loop_rule"
        )
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
    not_loadable = [m.pk for m in models if not m.answers]
    if not_loadable:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_LOADABLE,
            f"models {', '.join(map(str, not_loadable))} are prediction files; only Hugging Face directories and endpoints "
            "can be in the loop",
            field="target_models",
        )
    last = Task.objects.select_for_update().get(pk=task.pk).rounds.order_by("-number").first()
    new_round = Round.objects.create(
        task=task, number=(last.number + 1) if last else 1, status=Round.Status.CLOSED, start=start, end=end,
        loop_rule=loop_rule, endpoint_call_budget=endpoint_call_budget, endpoint_token_budget=endpoint_token_budget,
    )
    new_round.target_models.set(models)
    new_round = set_round_status(round=new_round, status=Round.Status.OPEN, acting_user=acting_user)
    if end:
        Round.objects.filter(pk=new_round.pk).update(end=end)
        new_round.end = end
    return new_round


# --- datasets: provenance, label visibility, the leaderboard's inputs ---------------------


def canonical_checksum(rows) -> tuple[str, int]:
    """Return ``(sha256 hex, count)`` of dataset items given as ``(uid, input, target, tag)`` tuples.

    Canonical content: the items sorted by uid, each the JSON array ``[uid, input, target, tag]``
    with sorted keys and no whitespace, joined by ``\\n``. The same items give the same
    checksum whatever their row ids or insertion order.
    """
    digest = hashlib.sha256()
    count = 0
    for uid, input_, target, tag in sorted(rows, key=lambda row: row[0]):
        if count:
            digest.update(b"\n")
        digest.update(json.dumps([uid, input_, target, tag], sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
        count += 1
    return digest.hexdigest(), count


def dataset_content_checksum(dataset: Dataset) -> tuple[str, int]:
    """Return ``(sha256 hex, item count)`` of the dataset's canonical content (``canonical_checksum``)."""
    rows = DatasetItem.objects.filter(dataset=dataset).values_list("uid", "input", "target", "tag")
    return canonical_checksum(rows.iterator(chunk_size=2000))


def record_dataset_content(dataset: Dataset, *, source: str | None = None, source_checksum: str | None = None) -> bool:
    """Recompute the dataset's item count and content checksum after its items were written.

    When the content differs from the recorded one, the version is bumped (the first content
    of a new dataset stays version 1), ``content_changed_at`` is set and
    ``leaderboard_inputs_changed`` is sent for this dataset, so every model is (re-)scored on
    the new version once the transaction commits; earlier scores stay readable, no longer
    ranked. ``source``/``source_checksum`` record where the content came from. Returns True
    when the content changed. Call it inside the transaction that wrote the items.
    """
    checksum, count = dataset_content_checksum(dataset)
    fields = {}
    if source is not None:
        fields["source"] = source[-1024:]
    if source_checksum is not None:
        fields["source_checksum"] = source_checksum
    changed = checksum != dataset.checksum or count != dataset.item_count
    if changed:
        if dataset.checksum and dataset.item_count:
            fields["version"] = dataset.version + 1
        fields.update(checksum=checksum, item_count=count, content_changed_at=timezone.now())
    if fields:
        Dataset.objects.filter(pk=dataset.pk).update(**fields)
        for name, value in fields.items():
            setattr(dataset, name, value)
    if changed and count:
        leaderboard_inputs_changed.send(sender=Dataset, task=dataset.task, datasets=[dataset])
    return changed


@transaction.atomic
def publish_labels(*, dataset: Dataset, acting_user) -> Dataset:
    """Make a hidden dataset's labels public, recording who did it and when.

    Raises ``NotAllowed`` unless ``acting_user`` owns the dataset's task (or is an admin);
    ``RuleError`` ``labels_already_public`` when they are public already, and
    ``no_labels_to_publish`` when the dataset has no item with a target.
    """
    if not dataset.task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {dataset.task.code} may publish the labels of its datasets")
    locked = Dataset.objects.select_for_update().get(pk=dataset.pk)
    if not locked.labels_hidden:
        raise RuleError(TaskErrorCode.LABELS_ALREADY_PUBLIC, f"the labels of {locked.name} are already public")
    if not DatasetItem.objects.filter(dataset=locked).exclude(target={}).exists():
        raise RuleError(TaskErrorCode.NO_LABELS_TO_PUBLISH, f"{locked.name} has no labelled item; there are no labels to publish")
    locked.label_visibility = Dataset.LabelVisibility.PUBLIC
    locked.labels_published_by = acting_user
    locked.labels_published_at = timezone.now()
    locked.save(update_fields=["label_visibility", "labels_published_by", "labels_published_at"])
    return locked


def set_loop_models(*, round: Round, acting_user, target_model_ids) -> Round:
    """Replace the models in the loop of the open ``round`` with ``target_model_ids`` and return it.

    For a round that is already open (a task created from a definition file opens round 1 with
    its contexts): examples written so far keep the model that answered them (``Example.model``).
    The same checks as ``open_round``: only owners (and admins), models of this task that answer
    (Hugging Face directories or endpoints); the round must be open; at least one model. Raises
    ``NotAllowed`` (403) or ``RuleError`` (400, ``field="target_models"``); nothing changes when refused.
    """
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may change its loop")
    if round.status != Round.Status.OPEN:
        raise RuleError("round_not_open",
                        f"round {round.number} is closed: open the next round with its models instead", field="target_models")
    ids = sorted({i for i in target_model_ids if isinstance(i, int) and not isinstance(i, bool)})
    models = list(MLModel.objects.filter(pk__in=ids, task=task))
    if not ids or len(models) != len(ids) or len(ids) != len(list(target_model_ids)):
        raise RuleError(TaskErrorCode.MODEL_NOT_OF_TASK, f"choose one or more models of task {task.code}", field="target_models")
    not_loadable = [m.pk for m in models if not m.answers]
    if not_loadable:
        raise RuleError(TaskErrorCode.MODEL_NOT_LOADABLE, f"models {', '.join(map(str, not_loadable))} are prediction files; only "
                        "Hugging Face directories and endpoints can be in the loop", field="target_models")
    with transaction.atomic():
        round.target_models.set(models)
    return round
