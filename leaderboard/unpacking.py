"""Unpacking a submitted model archive in a job: the request checks and stores it, a worker writes it.

``services.submit_model_archive`` refuses in the web request only what costs nothing to read (the
upload's size and format, a zip's central directory), reserves the owner's storage quota
(``MLModel.archive_kept_bytes``: a zip's declared kept bytes, a tar's size), puts the archive in
the storage (``uploads/<hex>.<zip|tar>`` in ``tasks.loop.artefacts.storage()``, so a worker on another
machine reads it) and creates the model ``unpacking``. The job ``leaderboard.jobs.unpack_model``
then calls :func:`unpack`:

1. claim: the model is ``unpacking`` and the job is the one recorded on it (``unpack_job_id``; a
   direct call, e.g. a test, acts for the recorded job); ``unpack_attempts`` goes up by one;
2. copy the archive from the storage into a staging folder
   ``MEDIA_ROOT/models/.unpacking-<id>-<random>/`` and read it member by member
   (``archives.unpack_archive``): each entry's header is checked (paths, links, pickles, the
   declared unpacked size against ``MODEL_ARCHIVE_MAX_UNPACKED_BYTES``) before its data is read,
   and reading stops at the first byte past that limit, past the entry's declared size or past
   the owner's quota; only the kept files are written. Then find the model folder, check it
   (``check_model_directory``: config, architecture, labels, tokenizer), settle the quota for
   the bytes written under a lock on the owner's row, checksum the folder and publish it;
3. under a lock on the model's row, if the model still waits for this job: move the folder to
   ``MEDIA_ROOT/models/<id>/``, set ``path``, ``checksum`` and status ``queued`` and schedule the
   evaluation as for any new model (``scheduling.schedule_model``);
4. delete the stored archive once the model is ``queued`` or ``failed``, and the staging folder
   whatever happened.

A ``RuleError`` in step 2 sets the model ``failed`` with its message (nothing stays on disk or in
the storage). Anything else propagates to RQ, whose failure callback
(``leaderboard.reaper.on_job_failure`` → :func:`job_failed`) fails the model with the reason, or
enqueues it again when its worker died and tries remain. The reaper (:func:`reap_unpacking`)
does the same for models whose job was lost, and removes staging folders and stored archives
that no model waits for.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from dynabench.errors import RuleError
from leaderboard import archives, queueing, quota
from leaderboard.error_codes import LeaderboardErrorCode as Code
from leaderboard.scheduling import schedule_model
from tasks.loop import artefacts
from tasks.loop.model_checks import check_model_directory, directory_checksum
from tasks.models import MLModel

logger = logging.getLogger(__name__)

STAGING_MARK = ".unpacking-"
#: Staging left by a web request that was killed (``.upload-*`` files, ``.staging-*`` skeletons).
REQUEST_MARKS = (".upload-", ".staging-")
UPLOADS = "uploads"


def max_attempts() -> int:
    """Unpacking jobs a model may start before a lost one fails it (``settings.UNPACK_MAX_ATTEMPTS``, default 3)."""
    return max(1, int(getattr(settings, "UNPACK_MAX_ATTEMPTS", 3)))


def grace() -> timedelta:
    """How long the reaper leaves an ``unpacking`` model alone after its job was enqueued or claimed
    it (``settings.UNPACK_GRACE_S``, default 60 s): the request enqueues the job just after it commits."""
    return timedelta(seconds=int(getattr(settings, "UNPACK_GRACE_S", 60)))


#: How long a request's staging files and a stored archive no model waits for are left alone: a
#: request stores its archive just before it creates the model.
FILES_GRACE = timedelta(hours=1)


def _claim(model_id: int, job_id: str | None) -> MLModel | None:
    models = MLModel.objects.filter(pk=model_id, status=MLModel.Status.UNPACKING)
    if job_id is not None:
        models = models.filter(unpack_job_id=job_id)
    if not models.update(unpack_attempts=F("unpack_attempts") + 1, updated_at=timezone.now()):
        return None
    return MLModel.objects.select_related("task", "owner").get(pk=model_id)


def _delete_archive(name: str) -> None:
    if name:
        try:
            artefacts.storage().delete(name)
        except OSError as error:  # the reaper deletes it later (remove_stray_uploads)
            logger.warning("the stored archive %s stays for the reaper: %s", name, error)


def fail_unpacking(model: MLModel, reason: str, *, job_id: str | None = None) -> bool:
    """Set ``model`` ``failed`` with ``reason`` if it still waits for its unpacking (for the job
    ``job_id`` when given), and delete its stored archive; return whether it changed."""
    models = MLModel.objects.filter(pk=model.pk, status=MLModel.Status.UNPACKING)
    if job_id is not None:
        models = models.filter(unpack_job_id=job_id)
    changed = bool(models.update(
        status=MLModel.Status.FAILED, failure_reason=reason[:5000], progress=0.0, archive="", updated_at=timezone.now(),
    ))
    if changed:
        _delete_archive(model.archive)
    return changed


def _extract(model: MLModel, staging: Path) -> tuple[Path, str, int]:
    """Step 2 of the module docstring: the checked model folder under ``staging``, its checksum and
    the bytes of its files. Raises ``RuleError`` when the archive is gone or refused."""
    storage = artefacts.storage()
    if not model.archive or not storage.exists(model.archive):
        raise RuleError(Code.ARCHIVE_GONE, "The uploaded archive is no longer in the storage; submit the model again.")
    local = staging / f"archive{Path(model.archive).suffix}"
    with storage.open(model.archive, "rb") as source, open(local, "wb") as out:
        shutil.copyfileobj(source, out, archives.MiB)
    unpacked = staging / "model"
    unpacked.mkdir()
    left = quota.quota_left(model.owner, reserved=model.archive_kept_bytes)
    written = archives.unpack_archive(local, unpacked, quota_left=left)
    local.unlink()
    folder = archives.model_folder(unpacked)
    check_model_directory(folder, task=model.task)
    return folder, directory_checksum(folder), written


def _settle_quota(model: MLModel, written: int, job_id: str | None) -> None:
    """Under a lock on the owner's row: check the quota for the bytes written (less those the request
    reserved) and keep them as the model's reservation until it leaves ``unpacking``. Raises
    ``RuleError`` (``storage_quota``, 413) when the owner's other uploads took the room meanwhile."""
    if model.owner is None:
        return
    with transaction.atomic():
        quota.lock_user(model.owner)
        quota.check_storage_quota(model.owner, written - model.archive_kept_bytes, files=written)
        MLModel.objects.filter(pk=model.pk, status=MLModel.Status.UNPACKING, unpack_job_id=job_id).update(archive_kept_bytes=written)


def unpack(model_id: int, *, job_id: str | None = None) -> str:
    """Unpack the stored archive of the ``unpacking`` model ``model_id`` (the module docstring's
    steps) for the RQ job ``job_id`` (None: for whichever job is recorded); return a one-line summary.

    Skipped (nothing changes) when the model is gone, no longer ``unpacking``, or waits for
    another job. A refused archive (``RuleError``) fails the model with the reason; any other
    exception propagates with the staging folder removed and the archive kept for a retry.
    """
    model = _claim(model_id, job_id)
    if model is None:
        status = MLModel.objects.filter(pk=model_id).values_list("status", flat=True).first()
        return f"model {model_id}: not unpacking for this job ({status or 'missing'}), skipped"
    recorded, archive = model.unpack_job_id, model.archive
    root = archives.models_root()
    root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_MARK}{model_id}-", dir=root))
    final = root / str(model_id)
    moved = False
    try:
        try:
            folder, checksum, written = _extract(model, staging)
            _settle_quota(model, written, recorded)
        except RuleError as error:
            fail_unpacking(model, error.message, job_id=recorded)
            return f"model {model_id}: failed: {error.message}"
        artefacts.publish(MLModel(path=str(folder), checksum=checksum))  # content-addressed: no lock needed
        with transaction.atomic():
            mine = MLModel.objects.select_for_update(of=("self",)).filter(
                pk=model_id, status=MLModel.Status.UNPACKING, unpack_job_id=recorded,
            ).first()
            if mine is None:
                return f"model {model_id}: taken over by another job meanwhile, skipped"
            if final.exists():  # left by an attempt that died between its move and its commit
                shutil.rmtree(final)
            os.replace(folder, final)
            moved = True
            MLModel.objects.filter(pk=model_id).update(
                path=str(final), checksum=checksum, status=MLModel.Status.QUEUED, failure_reason="", progress=0.0,
                archive="", updated_at=timezone.now(),
            )
            model.refresh_from_db()
            runs = schedule_model(model)
        _delete_archive(archive)
        return f"model {model_id} ({model.name}): unpacked {written:,} bytes; {len(runs)} evaluation runs queued"
    except BaseException:
        if moved:
            shutil.rmtree(final, ignore_errors=True)
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def job_failed(model_id: int, job_id: str, reason: str, *, worker_died: bool) -> str:
    """RQ reported the unpacking job ``job_id`` of ``model_id`` failed: when its worker died and the
    model has tries left (``max_attempts``) enqueue it again, else fail it with ``reason``. A job the
    model no longer waits for changes nothing. Returns a one-line summary."""
    model = MLModel.objects.filter(pk=model_id, status=MLModel.Status.UNPACKING, unpack_job_id=job_id).first()
    if model is None:
        return f"model {model_id}: no longer waits for {job_id}"
    if worker_died and model.unpack_attempts < max_attempts():
        queueing.enqueue_unpack(model_id)
        return f"model {model_id}: unpacking enqueued again"
    tries = f" Gave up after {model.unpack_attempts} tries." if worker_died else ""
    fail_unpacking(model, f"Unpacking the archive failed: {reason}{tries} Submit the model again.", job_id=job_id)
    remove_stray_staging()
    return f"model {model_id}: unpacking failed"


def reap_unpacking(*, job_alive, now=None) -> str:
    """The reaper's pass over unpacking: models ``unpacking`` for longer than ``grace()`` whose job is
    not alive (``job_alive(job_id)`` false: lost with its queue, or its worker died) are enqueued
    again, or fail with a reason once they started ``max_attempts()`` jobs; then stray staging
    folders and stored archives are removed. Returns a one-line summary."""
    now = now or timezone.now()
    requeued = failed = 0
    for model in MLModel.objects.filter(status=MLModel.Status.UNPACKING, updated_at__lt=now - grace()):
        if job_alive(model.unpack_job_id):
            continue
        if model.unpack_attempts >= max_attempts():
            reason = (f"The job unpacking the archive stopped without finishing ({model.unpack_attempts} tries; its worker "
                      "died or was lost). Submit the model again.")
            failed += fail_unpacking(model, reason, job_id=model.unpack_job_id)
        else:
            queueing.enqueue_unpack(model.pk)
            requeued += 1
    folders = remove_stray_staging(now=now)
    archives = remove_stray_uploads(now=now)
    return (f"{requeued} unpacking models without a job enqueued again, {failed} failed, "
            f"{len(folders)} stray unpacking folders and {archives} stray archives removed")


def _owner_id(folder: Path) -> int | None:
    number = folder.name[len(STAGING_MARK):].split("-", 1)[0]
    return int(number) if number.isdigit() else None


def remove_stray_staging(*, now=None) -> list[Path]:
    """Remove, under ``MEDIA_ROOT/models/`` of this machine, ``.unpacking-<id>-*`` folders of models no
    longer ``unpacking`` and a killed request's ``.upload-*``/``.staging-*`` left for an hour; return them."""
    root = archives.models_root()
    if not root.is_dir():
        return []
    now = now or timezone.now()
    waiting = set(MLModel.objects.filter(status=MLModel.Status.UNPACKING).values_list("pk", flat=True))
    removed = []
    for entry in root.iterdir():
        if entry.name.startswith(STAGING_MARK):
            stray = _owner_id(entry) not in waiting
        elif entry.name.startswith(REQUEST_MARKS):
            stray = entry.stat().st_mtime < (now - FILES_GRACE).timestamp()
        else:
            continue
        if not stray:
            continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
        removed.append(entry)
    return removed


def remove_stray_uploads(*, now=None) -> int:
    """Delete stored archives (``uploads/`` in the storage) that no ``unpacking`` model waits for and
    that are older than an hour (a request stores its archive just before creating the model);
    return how many."""
    storage = artefacts.storage()
    now = now or timezone.now()
    try:
        _, names = storage.listdir(UPLOADS)
    except (FileNotFoundError, NotImplementedError):
        return 0
    waiting = set(MLModel.objects.filter(status=MLModel.Status.UNPACKING).values_list("archive", flat=True))
    deleted = 0
    for name in names:
        key = f"{UPLOADS}/{name}"
        if key in waiting:
            continue
        try:
            old = storage.get_modified_time(key) < now - FILES_GRACE
        except (NotImplementedError, OSError):
            continue
        if old:
            storage.delete(key)
            deleted += 1
    return deleted
