"""The per-user storage quota of model files: what a user's models keep and what they reserve.

Shared by the web request (``services.submit_model_archive`` reserves an archive's bytes when it
creates the model) and the job (``unpacking.unpack`` stops reading past what is left, then settles
the reservation to the bytes it wrote), so both count alike.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Sum

from dynabench.errors import RuleError
from leaderboard.archives import MiB, models_root
from leaderboard.error_codes import LeaderboardErrorCode as Code
from tasks.models import MLModel


def storage_quota_bytes() -> int:
    """``settings.MODEL_STORAGE_QUOTA_BYTES`` (default 10 GiB): the most bytes of model files a user keeps."""
    return int(getattr(settings, "MODEL_STORAGE_QUOTA_BYTES", 10 * 1024**3))


def storage_used_bytes(user) -> int:
    """Unpacked bytes the user's models keep: every file of their uploaded model folders and
    predictions files under ``MEDIA_ROOT/models/`` (models that failed included, until deleted),
    plus the bytes reserved by their archives still waiting to be unpacked (status ``unpacking``:
    ``MLModel.archive_kept_bytes``), so queued uploads count at once."""
    root, used = models_root().resolve(), 0
    for path in MLModel.objects.filter(owner=user).exclude(path="").values_list("path", flat=True):
        local = Path(path)
        if not local.exists() or not local.resolve().is_relative_to(root):
            continue
        files = [local] if local.is_file() else [f for f in local.rglob("*") if f.is_file()]
        used += sum(f.stat().st_size for f in files)
    pending = MLModel.objects.filter(owner=user, status=MLModel.Status.UNPACKING).aggregate(total=Sum("archive_kept_bytes"))
    return used + (pending["total"] or 0)


def quota_left(user, *, reserved: int = 0) -> int | None:
    """Bytes ``user`` may still add, counting ``reserved`` bytes already reserved for the upload at hand
    as free; None for superusers and models without an owner (not limited)."""
    if user is None or getattr(user, "is_superuser", False):
        return None
    return storage_quota_bytes() - (storage_used_bytes(user) - reserved)


def check_storage_quota(user, adding: int, *, files: int | None = None) -> None:
    """Refuse (413, ``storage_quota``) when ``adding`` more unpacked bytes would take ``user`` over
    ``settings.MODEL_STORAGE_QUOTA_BYTES`` (default 10 GiB) counting ``storage_used_bytes``;
    superusers are exempt. ``files``: the model's bytes the message names (default ``adding``; the
    job passes what it wrote while ``adding`` is that less the bytes already reserved). Call it under
    ``lock_user`` to count concurrent uploads."""
    if getattr(user, "is_superuser", False):
        return
    used, quota = storage_used_bytes(user), storage_quota_bytes()
    if used + adding > quota:
        raise RuleError(
            Code.STORAGE_QUOTA,
            f"This model's files unpack to {(adding if files is None else files) / MiB:,.1f} MiB and your models already "
            f"keep (or are unpacking) {(used if files is None else used + adding - files) / MiB:,.1f} MiB; your storage quota is {quota / MiB:,.0f} MiB. Delete a model you no longer need, "
            "or leave out files the model does not need to run.",
            field="upload", status_code=413,
        )


def lock_user(user) -> None:
    """Lock ``user``'s row until the transaction ends, so one user's uploads pass the quota one at a
    time (PostgreSQL; SQLite serialises every writing transaction anyway)."""
    get_user_model().objects.select_for_update(of=("self",)).only("pk").get(pk=user.pk)
