"""Trainings whose worker died: failed with a reason, and their stray staging folders removed.

``tasks/loop/training/runs.py`` marks a model ``training`` and writes its progress (and ``updated_at``, the
training's heartbeat) while it trains, into a staging folder ``<name>.training-<pid>`` next to
the model's directory. A worker killed mid-training (SIGKILL, out of memory, a lost machine)
leaves both behind. ``reap_trainings`` (called by the reaper, ``leaderboard/reaper.py``, and by
the RQ failure callback of training jobs) sets such models ``failed`` with a reason and removes
every staging folder no live training owns.
"""

from __future__ import annotations

import shutil
from datetime import timedelta
from datetime import timezone as dt_timezone
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from tasks.models import MLModel

STAGING_MARK = ".training-"


def training_stale_after() -> timedelta:
    """How long a training may go without a sign of life (``settings.TRAINING_STALE_AFTER_S``, default 600 s)."""
    return timedelta(seconds=int(getattr(settings, "TRAINING_STALE_AFTER_S", 600)))


def _job_alive(job_id: str | None, *, since) -> bool:
    """True when the training's RQ job is still waiting to start (queued, scheduled or deferred), or
    a worker started it after ``since``: between the worker taking the job and the training's first
    beat (loading the model, forking the work horse) the model's ``updated_at`` is still the
    request's, which may be older than the stale limit when the job waited long in the queue."""
    if not job_id:
        return False
    import django_rq
    from rq.job import Job, JobStatus

    try:
        job = Job.fetch(job_id, connection=django_rq.get_connection("training"))
        status = job.get_status()
    except Exception:  # noqa: BLE001 - the job is gone, or Redis is down: nothing is waiting
        return False
    if status in (JobStatus.QUEUED, JobStatus.SCHEDULED, JobStatus.DEFERRED):
        return True
    started = job.started_at
    if status != JobStatus.STARTED or started is None:
        return False
    if timezone.is_naive(started):
        started = timezone.make_aware(started, dt_timezone.utc)
    return started >= since


def fail_training(model_id: int, reason: str) -> bool:
    """Set a model still ``training`` to ``failed`` with ``reason``; return whether it changed."""
    return bool(MLModel.objects.filter(pk=model_id, status=MLModel.Status.TRAINING).update(
        status=MLModel.Status.FAILED, failure_reason=reason[:2000], updated_at=timezone.now(),
    ))


def remove_stray_folders() -> list[Path]:
    """Remove ``*.training-<pid>`` staging folders under ``settings.MODELS_DIR`` that no model still
    ``training`` owns; return the folders removed."""
    root = Path(settings.MODELS_DIR)
    if not root.is_dir():
        return []
    training = {str(Path(p)) for p in MLModel.objects.filter(status=MLModel.Status.TRAINING).values_list("path", flat=True)}
    removed = []
    for folder in root.glob(f"*/*{STAGING_MARK}*"):
        final = folder.with_name(folder.name.split(STAGING_MARK)[0])
        if folder.is_dir() and str(final) not in training:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def reap_trainings(*, now=None) -> str:
    """Fail trainings without a sign of life for ``training_stale_after()`` (unless their job is still
    waiting in the queue, or a worker started it within that time) and remove stray staging folders;
    return a one-line summary."""
    now = now or timezone.now()
    failed = 0
    stale_before = now - training_stale_after()
    for model in MLModel.objects.filter(status=MLModel.Status.TRAINING, updated_at__lt=stale_before):
        if _job_alive((model.training_info or {}).get("job_id"), since=stale_before):
            continue
        reason = (
            f"The worker training this model stopped responding (last progress {model.updated_at:%Y-%m-%d %H:%M:%S} UTC, "
            f"at {model.progress:.0%}). Start the training again."
        )
        if MLModel.objects.filter(pk=model.pk, status=MLModel.Status.TRAINING, updated_at=model.updated_at).update(
            status=MLModel.Status.FAILED, failure_reason=reason, updated_at=now,
        ):
            failed += 1
    removed = remove_stray_folders()
    return f"{failed} dead trainings failed, {len(removed)} stray training folders removed"


def on_training_job_failure(job, connection, exc_type=None, exc_value=None, tb=None) -> None:
    """RQ failure callback of training jobs: the job's model (``model_id`` argument) fails with the reason
    RQ reported (``AbandonedJobError``: its worker died; ``WorkHorseKilled``: the process running it was killed) unless it already ended, and its staging
    folder is removed."""
    model_id = (job.kwargs or {}).get("model_id")
    what = getattr(exc_type, "__name__", "error")
    if model_id is not None:
        fail_training(model_id, f"The training job {job.id} ended in the worker: {what}{f': {exc_value}' if str(exc_value or '') else ''}.")
    remove_stray_folders()
