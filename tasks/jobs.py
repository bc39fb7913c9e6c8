"""RQ jobs of the tasks app: training the default models in the background, and their enqueueing;
importing a large console upload (``run_upload``).

``manage.py ensure_default_models`` (which ``make run`` calls before the web server starts)
creates each default task's default model records (``tasks.loop.training.default_models.DEFAULT_MODELS``, status
``training``) and queues one ``train_default_model`` job per record that needs training on the
``training`` queue, so pages are served at once while the worker trains. The record's
``progress`` (0..1) moves while it trains; the write page and the task pages show it
(``tasks.loop.training.records.model_ready``). When a model is trained, ``tasks.loop.training.runs.train_model_record``
announces it with ``tasks.signals.leaderboard_inputs_changed``, and the leaderboard app queues
its missing evaluation runs on the seed scoring datasets
(``leaderboard.scheduling.schedule_evaluations``), so each leaderboard fills by itself.
"""

from __future__ import annotations

import uuid

from dynabench.job_stop import JobStopped
from tasks.loop.training import default_models
from tasks.data import uploads
from tasks.models import MLModel

TRAINING_QUEUE = "training"
JOB_TIMEOUT_S = 3600
_ALIVE = ("queued", "started", "deferred", "scheduled")


def train_default_model(model_id: int, *, epochs: int | None = None) -> str:
    """Train default model record ``model_id`` (``tasks.loop.training.default_models.train_default_model``; its evaluations
    are queued when it is stored). Returns a one-line summary. A failure leaves the record
    ``failed`` with its reason and is raised again for RQ to record; a stop of the worker queues
    the job again (``queue_again``).
    """
    model = MLModel.objects.select_related("task").get(pk=model_id)
    try:
        model = default_models.train_default_model(model, epochs=epochs)
    except JobStopped:
        return queue_again(model_id)
    info = model.training_info
    return (
        f"trained {model.task.code}/{model.name} (model {model.pk}) on {info['examples']} seed train examples "
        f"in {info['duration_s']:.1f}s"
    )


def training_job_alive(model: MLModel) -> bool:
    """True when the training job recorded on ``model`` (``training_info["job_id"]``) is still queued or running."""
    import django_rq
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    job_id = (model.training_info or {}).get("job_id")
    if not job_id:
        return False
    try:
        job = Job.fetch(job_id, connection=django_rq.get_connection(TRAINING_QUEUE))
    except NoSuchJobError:
        return False
    return job.get_status(refresh=False) in _ALIVE


def enqueue_default_training(model: MLModel, *, epochs: int | None = None) -> str:
    """Queue ``train_default_model`` for ``model`` on the ``training`` queue; return its job id.

    The job id is stored on the record (``training_info["job_id"]``) first, so a second
    ``ensure_default_models`` sees the job (``training_job_alive``) and queues nothing.
    """
    import django_rq

    job_id = f"train-default-{model.task.code}-{model.name}-{uuid.uuid4().hex[:12]}"
    info = {**(model.training_info or {}), "job_id": job_id}
    MLModel.objects.filter(pk=model.pk).update(training_info=info)
    model.training_info = info
    kwargs = {"epochs": epochs} if epochs else {}
    django_rq.get_queue(TRAINING_QUEUE).enqueue(
        train_default_model, args=(model.pk,), kwargs=kwargs, job_id=job_id, job_timeout=JOB_TIMEOUT_S,
        description=f"train default model {model.task.code}/{model.name}",
    )
    return job_id


def queue_again(model_id: int) -> str:
    """Put the running training job (``rq.get_current_job()``) back on its queue under a new id and
    record that id on model ``model_id`` (``training_info["job_id"]``, which ``training_job_alive`` and
    the reaper read); return a one-line summary for RQ to keep as the stopped job's result.

    Called by a training job that gave way to a stopping worker (``dynabench.job_stop.JobStopped``):
    the same function, arguments, timeout, description and failure callback, at the front of the
    queue, so the next worker to start trains that record first, from the beginning. Outside an RQ job the ``JobStopped`` is raised again.
    """
    import django_rq
    from rq import Callback, get_current_job

    job = get_current_job()
    if job is None:
        raise JobStopped(f"training of model {model_id} stopped outside an RQ job")
    job_id = f"{job.id.split('-again-')[0]}-again-{uuid.uuid4().hex[:8]}"
    name = getattr(job, "_failure_callback_name", None)
    on_failure = Callback(name, timeout=getattr(job, "_failure_callback_timeout", None)) if name else None
    info = {**(MLModel.objects.filter(pk=model_id).values_list("training_info", flat=True).first() or {}), "job_id": job_id}
    MLModel.objects.filter(pk=model_id).update(training_info=info)
    django_rq.get_queue(job.origin).enqueue(
        job.func_name, args=job.args, kwargs=job.kwargs, job_id=job_id, job_timeout=job.timeout,
        description=job.description, on_failure=on_failure, at_front=True,
    )
    return f"stopped with the worker; model {model_id} queued again as job {job_id} on {job.origin!r}"


def run_upload(upload_id: int) -> str:
    """Import a console upload (``tasks.data.uploads.run_upload``); return a one-line summary."""
    upload = uploads.run_upload(upload_id)
    if upload.status == upload.Status.DONE:
        return upload.result["summary"]
    return f"upload {upload.pk} refused: {upload.error_count} problem(s)"
