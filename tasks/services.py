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
from tasks.loop import artefacts, gate
from tasks.kinds.config import validate_task_config
from tasks.error_codes import TaskErrorCode
from tasks.loop.model_checks import model_config
from tasks.models import Context, Dataset, DatasetItem, MLModel, Purpose, Round, Task
from tasks.signals import labels_removed, leaderboard_inputs_changed, round_status_changed

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
        if not locked.target_models.exists() and not round.task.spec.collects_without_model:
            raise RuleError(
                TaskErrorCode.NO_MODEL_IN_LOOP,
                f"Round {locked.number} of {round.task.code} has no model in the loop: add one before opening it "
                "(annotators' examples are checked against it).",
                field="target_models",
            )
    now = timezone.now()
    locked.status = status
    if status == Round.Status.OPEN:
        locked.start = locked.start or now
        locked.end = None
    else:
        locked.end = now
    locked.save(update_fields=["status", "start", "end"])
    round_id = locked.pk
    transaction.on_commit(lambda: round_status_changed.send(sender=Round, round_id=round_id, status=str(status)))
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
    grant_owner_admin_access(user)


def grant_owner_admin_access(user) -> None:
    """Make ``user`` staff with ``OWNER_ADMIN_PERMISSIONS`` (the admin then shows them only the
    rows of the tasks they own). For a user who just became an owner; checks nothing itself."""
    if not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    for app_label, models in OWNER_ADMIN_PERMISSIONS.items():
        for model, actions in models.items():
            codenames = [f"{action}_{model}" for action in actions]
            user.user_permissions.add(*Permission.objects.filter(content_type__app_label=app_label, codename__in=codenames))


#: The settings an owner edits on the console (``update_task_settings``), in form order.
SETTINGS_FIELDS = (
    "name", "instructions", "labels", "validations_needed", "daily_example_cap", "min_scoring_items", "content_warning",
)
_CONFIG_FIELDS = {"labels", "validations_needed", "daily_example_cap", "min_scoring_items"}

#: The fewest items a round's dev or test dataset may hold when the owner sets no minimum
#: (``Task.config["min_scoring_items"]``; checked when closing, ``validation.round_close.preview_round_close``).
DEFAULT_MIN_SCORING_ITEMS = 1


def task_settings(task: Task) -> dict:
    """Return the owner-editable settings of ``task`` plus its ``version`` (for a later save)."""
    return {
        "name": task.name, "instructions": task.instructions, "labels": task.labels,
        "validations_needed": task.validations_needed, "daily_example_cap": int(task.config.get("daily_example_cap") or 0),
        "min_scoring_items": int(task.config.get("min_scoring_items") or DEFAULT_MIN_SCORING_ITEMS),
        "content_warning": task.content_warning, "version": task.version,
    }


def _settings_field(message: str) -> str:
    """Map a config validation message (``config.labels.1: ...``) onto the settings field at fault."""
    path = message.split(":", 1)[0]
    parts = path.split(".")
    if len(parts) > 1 and parts[0] == "config" and parts[1] in _CONFIG_FIELDS:
        return parts[1]
    return "__all__"


def _loop_models_of(task: Task) -> list[tuple[Round, MLModel]]:
    rounds = task.rounds.filter(status=Round.Status.OPEN).prefetch_related("target_models")
    return [(r, m) for r in rounds for m in r.target_models.all()]


def _label_change_errors(task: Task, old: list[str], config: dict) -> list[str]:
    """Messages for a new label set (in ``config``) that a model in the loop of an open round cannot follow."""
    errors = []
    candidate = Task(kind=task.kind, code=task.code, config=config)
    for round, model in _loop_models_of(task):
        hf_config = None if model.is_endpoint else _model_config_or_none(model)
        if not model.is_endpoint and hf_config is None:
            errors.append(
                f"{model.name}, in the loop of round {round.number}, is still being trained on the current label set, so it "
                "could not output the new one. Wait until it is ready, or take it out of the loop (Rounds) first; a model "
                "trained after the change learns the labels it must output."
            )
            continue
        missing = labels_out_of_reach(model, config)
        if missing:
            errors.append(
                f"{model.name}, in the loop of round {round.number}, cannot predict {', '.join(map(repr, missing))}: every "
                "example with that label would count as fooling it. Take it out of the loop (Rounds) and put in a model "
                "trained on the new label set first."
            )
            continue
        try:
            if hf_config is not None:
                task.spec.check_model_config(hf_config, candidate)
        except RuleError:
            removed = [label for label in old if label not in config.get("labels", [])]
            errors.append(
                f"{model.name}, in the loop of round {round.number}, still outputs {', '.join(map(repr, removed)) or 'other labels'}: "
                "with this label set it would no longer load. Take it out of the loop (Rounds) first."
            )
    return errors


def _model_config_or_none(model: MLModel) -> dict | None:
    """The model directory's ``config.json``, or None while there is none to read (training, unpacking)."""
    try:
        return model_config(artefacts.local_path(model))
    except RuleError:
        return None


def _removed_label_errors(task: Task, removed: list[str], labels: list[str], removed_labels: dict) -> list[str]:
    """Messages for removed labels that examples or dataset items still carry without a decision."""
    errors = []
    for label in removed:
        replacement = removed_labels.get(label)
        if replacement and replacement not in labels:
            errors.append(f"'{label}' can only become a remaining label ({', '.join(labels)}), not '{replacement}'.")
            continue
        items = DatasetItem.objects.filter(dataset__task=task, target__label=label).count()
        if items and not replacement:
            errors.append(
                f"{items} dataset item{'s' if items != 1 else ''} still carr{'y' if items != 1 else 'ies'} '{label}': relabel them "
                f"under 'Removed labels' ({label}=<a remaining label>) so they can still be scored."
            )
        elif label not in removed_labels and task.rounds.filter(examples__target__label=label).exists():
            errors.append(
                f"Examples carry '{label}': say what they become under 'Removed labels': {label}=<a remaining label> "
                f"relabels them, '{label}=' marks them and keeps them out of every dataset a round close writes."
            )
    return errors


@transaction.atomic
def update_task_settings(*, task: Task, acting_user, version: int, removed_labels: dict | None = None, **changes) -> Task:
    """Change the owner-editable settings of ``task`` (``SETTINGS_FIELDS``) and return it.

    ``version`` is the ``Task.version`` the owner's form was loaded from: when the row changed
    since (another owner saved first), nothing is written and ``RuleError`` ``stale_settings``
    (409) says so. ``labels`` (a list of distinct, non-empty names; only for a kind whose spec
    ``has_labels``), ``validations_needed`` (1-20), ``daily_example_cap`` (0 = none) and
    ``min_scoring_items`` (the fewest items a round's dev or test set may hold, at least 1) go into
    ``Task.config`` and are checked with the task kind's schema (``validate_task_config``);
    label descriptions and aliases of labels removed are dropped.

    Labels keep their meaning: while a model is in the loop of an open round, a label set it cannot
    follow is refused on ``labels`` (a label it cannot predict, ``labels_out_of_reach``, would make
    every such example "fool" it; a label it still outputs would stop it loading). A removed label
    that examples carry needs ``removed_labels[label]``: another label relabels them (and becomes an
    alias, so owner corrections and files naming it still map), ``""`` marks them; both through the
    ``labels_removed`` signal (the annotation app's receiver rewrites the examples, keeping the old
    label in their metadata). Dataset items carrying it need a relabelling. ``name`` is required (at most
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
            old = list(config.get("labels", []))
            removed = [label for label in old if label not in labels]
            removed_labels = {str(k).strip(): str(v or "").strip() for k, v in (removed_labels or {}).items()}
            mapped = {k: v for k, v in removed_labels.items() if k in removed and v in labels}
            config["labels"] = labels
            label_errors = _removed_label_errors(locked, removed, labels, removed_labels)
            if labels != old and not label_errors:
                label_errors = _label_change_errors(
                    locked, old, {**config, "label_aliases": {**config.get("label_aliases", {}), **mapped}})
            if label_errors:
                errors.setdefault("labels", []).extend(label_errors)
            elif removed:
                labels_removed.send(sender=Task, task=locked, mapping={label: removed_labels.get(label, "") for label in removed})
            if "label_descriptions" in config:
                config["label_descriptions"] = {k: v for k, v in config["label_descriptions"].items() if k in labels}
            if "label_aliases" in config:
                config["label_aliases"] = {k: v for k, v in config["label_aliases"].items() if v in labels}
            if mapped:
                config["label_aliases"] = {**config.get("label_aliases", {}), **mapped}
    for key in ("validations_needed", "daily_example_cap", "min_scoring_items"):
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


def labels_out_of_reach(model: MLModel, config: dict | None = None) -> list[str]:
    """Return the labels of the task (or of ``config``, a task config about to be saved) that
    ``model`` cannot output, asked of the task kind's spec (``labels_out_of_reach``) with the
    model's ``config.json``. ``[]`` when the kind has no labels, or when the model has no config
    yet (still training or unpacking: its labels are checked when it loads), and for an endpoint
    model, which answers in words and so can name any label."""
    hf_config = None if model.is_endpoint else _model_config_or_none(model)
    if hf_config is None:
        return []
    return model.task.spec.labels_out_of_reach(config if config is not None else model.task.config, hf_config)


def check_loop_models(task: Task, models: list[MLModel]) -> None:
    """Refuse (``RuleError``, ``target_models``) what cannot be in ``task``'s loop: an endpoint without its submitter's
    consent (``tasks.loop.gate``), a predictions file, a model that cannot output a label of the task."""
    gate.check_consent(models, Purpose.LOOP, field="target_models")
    not_loadable = [m.pk for m in models if not m.answers]
    if not_loadable:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_LOADABLE,
            f"models {', '.join(map(str, not_loadable))} are prediction files; only Hugging Face directories and endpoints "
            "can be in the loop",
            field="target_models",
        )
    for model in models:
        missing = labels_out_of_reach(model)
        if missing:
            raise RuleError(
                TaskErrorCode.LABEL_OUT_OF_REACH,
                f"Model {model.name} cannot predict the label{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))} "
                f"of {task.code}: every example with {'them' if len(missing) > 1 else 'it'} would count as fooling it. "
                "Choose a model trained on every label of the task, or remove the label first.",
                field="target_models",
            )


def _task_models(task: Task, ids) -> list[MLModel]:
    out_of_range = [i for i in ids if not isinstance(i, int) or not 1 <= i <= MAX_ROW_ID]
    if out_of_range:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_OF_TASK,
            f"model ids are integers from 1 to {MAX_ROW_ID}; {', '.join(map(str, out_of_range[:3]))} is not one",
            field="target_models",
        )
    ids = sorted(set(ids))
    models = list(MLModel.objects.filter(pk__in=ids, task=task))
    missing = sorted(set(ids) - {m.pk for m in models})
    if missing:
        raise RuleError(
            TaskErrorCode.MODEL_NOT_OF_TASK,
            f"no model of task {task.code} has id {', '.join(map(str, missing))}",
            field="target_models",
        )
    return models


@transaction.atomic
def open_round(
    *, task: Task, acting_user, target_model_ids=(), start=None, end=None, loop_rule: str | None = None,
    without_model: bool = False, contexts_from: int | None = None,
    endpoint_call_budget: int | None = None, endpoint_token_budget: int | None = None,
) -> Round:
    """Create the task's next round (number = last + 1), open, with the given models in the loop.

    ``loop_rule`` (``Round.LoopRule``, default round-robin) picks which of several models answers
    each new example. Opening goes through ``set_round_status``, so its rules hold: only owners (and admins),
    and at most one open round per task (close the current one first; closing builds its
    datasets). Every target model must be a Hugging Face directory or an endpoint model of this
    task that can output every label of the task (``labels_out_of_reach``), and ``end`` must come
    after ``start``. ``endpoint_call_budget`` / ``endpoint_token_budget``: the most calls / tokens
    endpoint models in the loop may use in the round (None: no limit).

    A round needs at least one model in the loop: with none, ``RuleError`` ``no_model_in_loop``,
    unless ``without_model`` (the owner's explicit "collect without a model") and the kind's spec
    allows it (``collects_without_model``; else ``kind_needs_a_model``).
    ``contexts_from``: the number of an earlier round whose active contexts are copied into the new
    round (same uid, data and tag; use counts start at 0); ``None``: none are copied (upload them,
    ``tasks.data.uploads``; ``round_gaps`` says the round has none).

    Raises ``NotAllowed`` (403) or ``RuleError`` (400); nothing is created when refused
    (a model id that is not a positive 64-bit integer is a ``model_not_of_task`` 400).
    """
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may open its rounds")
    loop_rule = loop_rule or Round.LoopRule.ROUND_ROBIN
    if loop_rule not in Round.LoopRule.values:
        raise RuleError(
            TaskErrorCode.BAD_LOOP_RULE, f"unknown rule '{loop_rule}'; use one of {', '.join(Round.LoopRule.values)}", field="loop_rule"
        )
    if start and end and end <= start:
        raise RuleError(TaskErrorCode.BAD_ROUND_DATES, "the round's end must come after its start", field="end")
    models = _task_models(task, list(target_model_ids))
    current = task.rounds.filter(status=Round.Status.OPEN).first()
    if current is not None:  # the first thing to fix, before the new round's own settings
        raise RuleError("other_round_open", f"round {current.number} of {task.code} is still open; close it first", field="status")
    if not models:
        if not without_model:
            raise RuleError(
                TaskErrorCode.NO_MODEL_IN_LOOP,
                f"Choose at least one model in the loop for the next round of {task.code}: annotators' examples are "
                "checked against it, and without one the round's write page cannot take any.",
                field="target_models",
            )
        if not task.spec.collects_without_model:
            raise RuleError(
                TaskErrorCode.NEEDS_A_MODEL,
                f"A {task.spec.display_name} task cannot collect without a model: its write page asks the model in "
                "the loop for every example. Choose at least one model.",
                field="target_models",
            )
    check_loop_models(task, models)
    last = Task.objects.select_for_update().get(pk=task.pk).rounds.order_by("-number").first()
    source = None
    if contexts_from is not None:
        source = task.rounds.filter(number=contexts_from).first() if isinstance(contexts_from, int) else None
        if source is None:
            raise RuleError(
                TaskErrorCode.BAD_CONTEXTS_FROM, f"{task.code} has no round {contexts_from} to carry contexts over from",
                field="contexts_from",
            )
    new_round = Round.objects.create(
        task=task, number=(last.number + 1) if last else 1, status=Round.Status.CLOSED, start=start, end=end,
        loop_rule=loop_rule, endpoint_call_budget=endpoint_call_budget, endpoint_token_budget=endpoint_token_budget,
    )
    new_round.target_models.set(models)
    if source is not None:
        Context.objects.bulk_create(
            [Context(round=new_round, uid=c.uid, data=c.data, tag=c.tag)
             for c in source.contexts.filter(active=True).only("uid", "data", "tag").iterator(chunk_size=2000)],
            batch_size=2000,
        )
    new_round = set_round_status(round=new_round, status=Round.Status.OPEN, acting_user=acting_user)
    if end:
        Round.objects.filter(pk=new_round.pk).update(end=end)
        new_round.end = end
    return new_round


def check_loop(*, round: Round, models) -> None:
    """Check the models an owner puts in ``round``'s loop by hand (the admin's round form): each
    must be a directory or endpoint model that can output every label of the task (``labels_out_of_reach``),
    an endpoint of someone who does not own the task only with its owner's consent, and an open round
    keeps at least one unless the kind collects without a model. Raises ``RuleError``
    (``model_not_loadable``, ``label_out_of_reach``, ``model_consent_missing``, ``last_model_in_loop``)."""
    models = list(models)
    check_loop_models(round.task, models)
    if round.status == Round.Status.OPEN and not models and not round.task.spec.collects_without_model:
        raise RuleError(
            TaskErrorCode.LAST_MODEL_IN_LOOP,
            f"Round {round.number} is open: keep at least one model in its loop (annotators' examples need a model to answer them).",
            field="target_models",
        )


def round_gaps(round: Round) -> list[str]:
    """Return what ``round`` still lacks before annotators can write in it, one sentence each
    (empty when nothing): it is closed; it has no model in the loop; its models are all still
    training or failed; it has no active context."""
    gaps = []
    if round.status != Round.Status.OPEN:
        gaps.append(f"Round {round.number} is closed.")
    models = list(round.target_models.all())
    if not models and not round.task.spec.collects_without_model:
        gaps.append("No model in the loop: add one, or annotators cannot write.")
    elif models and not any(m.status not in (MLModel.Status.TRAINING, MLModel.Status.FAILED, MLModel.Status.UNPACKING) for m in models):
        gaps.append("Every model in the loop is still training or failed: annotators wait until one is ready.")
    if not round.contexts.filter(active=True).exists():
        gaps.append("No context yet: carry them over from an earlier round or upload a file (Uploads).")
    return gaps


@transaction.atomic
def add_loop_model(*, round: Round, model_id: int, acting_user) -> Round:
    """Put the model ``model_id`` (of the round's task) in the loop of the open ``round``.

    Adding a model already in the loop changes nothing. Raises ``NotAllowed`` unless
    ``acting_user`` owns the task; ``RuleError`` when the round is closed (``round_not_open``), the
    model is not a directory or endpoint model of the task, it cannot output a label of the task, or
    it is another user's endpoint whose submitter did not consent to the loop (``model_consent_missing``).
    """
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may change the models in its loop")
    locked = Round.objects.select_for_update().get(pk=round.pk)
    if locked.status != Round.Status.OPEN:
        raise RuleError(TaskErrorCode.ROUND_NOT_OPEN, f"Round {locked.number} is closed: its loop can no longer change.", field="target_models")
    models = _task_models(task, [model_id])
    check_loop_models(task, models)
    locked.target_models.add(*models)
    return locked


@transaction.atomic
def remove_loop_model(*, round: Round, model_id: int, acting_user) -> Round:
    """Take the model ``model_id`` out of the loop of the open ``round``; examples it already
    answered keep their record of it. Removing the last model is refused (``last_model_in_loop``:
    add another first) unless the kind collects without a model. Raises ``NotAllowed`` unless
    ``acting_user`` owns the task; ``RuleError`` for a closed round or a model not in the loop."""
    task = round.task
    if not task.is_owner(acting_user):
        raise NotAllowed("not_task_owner", f"only owners of {task.code} may change the models in its loop")
    locked = Round.objects.select_for_update().get(pk=round.pk)
    if locked.status != Round.Status.OPEN:
        raise RuleError(TaskErrorCode.ROUND_NOT_OPEN, f"Round {locked.number} is closed: its loop can no longer change.", field="target_models")
    current = {m.pk: m for m in locked.target_models.all()}
    if model_id not in current:
        raise RuleError(TaskErrorCode.MODEL_NOT_OF_TASK, f"model {model_id} is not in the loop of round {locked.number}", field="target_models")
    if len(current) == 1 and not task.spec.collects_without_model:
        raise RuleError(
            TaskErrorCode.LAST_MODEL_IN_LOOP,
            f"{current[model_id].name} is the only model in the loop of round {locked.number}: add another model "
            "before taking it out (annotators' examples need a model to answer them).",
            field="target_models",
        )
    locked.target_models.remove(current[model_id])
    return locked


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


def record_dataset_content(
    dataset: Dataset, *, source: str | None = None, source_checksum: str | None = None, content: tuple[str, int] | None = None,
) -> bool:
    """Recompute the dataset's item count and content checksum after its items were written.

    When the content differs from the recorded one, the version is bumped (the first content
    of a new dataset stays version 1), ``content_changed_at`` is set and
    ``leaderboard_inputs_changed`` is sent for this dataset, so every model is (re-)scored on
    the new version once the transaction commits; earlier scores stay readable, no longer
    ranked. ``source``/``source_checksum`` record where the content came from. Returns True
    when the content changed. Call it inside the transaction that wrote the items; ``content``:
    ``dataset_content_checksum(dataset)`` computed beforehand by a caller that wrote its items in
    several transactions (a SQLite import, ``tasks/data/importers/``), so the reading of every item
    holds no write lock.
    """
    checksum, count = content if content is not None else dataset_content_checksum(dataset)
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
