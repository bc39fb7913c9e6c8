"""A trained model's record: whether a name is usable for a task, where its directory lives,
whether the record can answer, whether its files are intact, and putting it in a round's loop."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.utils.text import slugify

from dynabench.errors import RuleError
from tasks.loop.model_checks import check_model_directory, directory_checksum
from tasks.loop.training.base_encoder import WEIGHTS_FILE
from tasks.loop.training.error_codes import TrainingErrorCode
from tasks.models import MLModel, Round, Task


def model_directory(task: Task, name: str) -> Path:
    """Return ``settings.MODELS_DIR/<task code>/<name>`` (``name`` must be a slug)."""
    return Path(settings.MODELS_DIR) / task.code / name


def check_model_name(task: Task, name: str, *, exclude_pk: int | None = None) -> str:
    """Return ``name`` if it is a usable, free model name for ``task``; raise ``RuleError`` otherwise.

    A name is a slug (it becomes a directory name) and unique among the task's models.
    """
    if not name or slugify(name) != name or len(name) > 100:
        raise RuleError(
            TrainingErrorCode.BAD_NAME,
            f"Model name {name!r} must be a slug: lowercase letters, digits and hyphens, at most 100 characters.",
            field="name",
        )
    taken = MLModel.objects.filter(task=task, name=name)
    if exclude_pk:
        taken = taken.exclude(pk=exclude_pk)
    if taken.exists():
        raise RuleError(TrainingErrorCode.NAME_TAKEN, f"Task {task.code} already has a model named {name!r}.", field="name")
    return name


def model_files_intact(ml_model: MLModel) -> bool:
    """Return True when the record's directory exists, passes the registry's checks and has the stored checksum."""
    path = Path(ml_model.path or "")
    if not (ml_model.checksum and (path / WEIGHTS_FILE).is_file()):
        return False
    try:
        check_model_directory(path, task=ml_model.task)
    except RuleError:
        return False
    return directory_checksum(path) == ml_model.checksum


def put_in_loop(ml_model: MLModel, round_number: int) -> Round:
    """Add ``ml_model`` to the target models of round ``round_number`` of its task; return the round.

    Raises ``RuleError(no_such_round)`` when the task has no such round.
    """
    round_ = Round.objects.filter(task=ml_model.task, number=round_number).first()
    if round_ is None:
        raise RuleError("no_such_round", f"Task {ml_model.task.code} has no round {round_number}.", field="round")
    round_.target_models.add(ml_model)
    return round_


def model_ready(ml_model: MLModel) -> bool:
    """True when ``ml_model`` can answer: not training, not failed before its first artefact was stored."""
    if ml_model.status == MLModel.Status.TRAINING:
        return False
    return not (ml_model.status == MLModel.Status.FAILED and not ml_model.checksum)
