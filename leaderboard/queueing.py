"""Putting the leaderboard's jobs on their RQ queues: one function per job, nothing else.

Each job is named by its dotted path (``leaderboard.jobs.<name>``), so this module imports
neither the jobs nor the services that call it: ``services``, ``scheduling``, ``unpacking``,
the reaper and the jobs themselves all enqueue through here, and no import runs back up.
Job ids are chosen here and remembered on our own rows (run, shard, model) so the reaper can
tell a lost job from a queued one; when Redis is down the row stays queued and the reaper
enqueues it again (``leaderboard/reaper.py``).
"""

from __future__ import annotations

import logging
import uuid

from django.utils import timezone
from redis.exceptions import RedisError
from rq import Callback

from leaderboard.models import EvaluationRun, EvaluationShard
from tasks.models import MLModel

logger = logging.getLogger(__name__)

Status = EvaluationRun.Status


def queue(name: str):
    """The django-rq queue called ``name`` (``evaluation``, ``training`` or ``default``)."""
    import django_rq

    return django_rq.get_queue(name)


def enqueue_evaluation(model_id: int) -> None:
    """Put ``evaluate_model(model_id)`` on the ``evaluation`` queue."""
    queue("evaluation").enqueue("leaderboard.jobs.evaluate_model", model_id)


def _on_failure() -> Callback:
    return Callback("leaderboard.reaper.on_job_failure")


def enqueue_run(run_id: int) -> None:
    """Put ``evaluate_run(run_id)`` on the ``evaluation`` queue and remember the job id on the run.

    The job id is chosen here: inside a transaction django-rq defers the enqueue to the
    commit and returns no job, so the id cannot come from the queue's answer. When Redis is
    down the run stays ``queued`` and the reaper enqueues it again (``leaderboard/reaper.py``).
    """
    job_id = f"evaluate-run-{run_id}-{uuid.uuid4().hex[:12]}"
    EvaluationRun.objects.filter(pk=run_id, status=Status.QUEUED).update(job_id=job_id)
    try:
        queue("evaluation").enqueue("leaderboard.jobs.evaluate_run", run_id, job_id=job_id, on_failure=_on_failure())
    except RedisError as error:
        logger.warning("run %s stays queued without a job (the reaper retries): %s", run_id, error)


def enqueue_shard(shard_id: int) -> None:
    """Put ``evaluate_shard(shard_id)`` on the ``evaluation`` queue, remembering the job id on the shard."""
    job_id = f"evaluate-shard-{shard_id}-{uuid.uuid4().hex[:12]}"
    EvaluationShard.objects.filter(pk=shard_id, status=Status.QUEUED).update(job_id=job_id)
    try:
        queue("evaluation").enqueue("leaderboard.jobs.evaluate_shard", shard_id, job_id=job_id, on_failure=_on_failure())
    except RedisError as error:
        logger.warning("shard %s stays queued without a job (the reaper retries): %s", shard_id, error)


def enqueue_merge(run_id: int) -> None:
    """Put ``merge_shards(run_id)`` on the ``evaluation`` queue."""
    queue("evaluation").enqueue("leaderboard.jobs.merge_shards", run_id, job_id=f"merge-run-{run_id}-{uuid.uuid4().hex[:12]}",
                                 on_failure=_on_failure())


def enqueue_selection_training(model_id: int) -> None:
    """Put ``train_selection(model_id)`` on the ``training`` queue."""
    queue("training").enqueue("leaderboard.jobs.train_selection", model_id, job_timeout=3600, description=f"train selection model {model_id}")


def enqueue_unpack(model_id: int) -> None:
    """Put ``unpack_model(model_id)`` on the ``evaluation`` queue and remember the job id on the model.

    The ``evaluation`` queue: unpacking moves artefact-sized data (the archive from the storage,
    the weights to disk, the artefact back to the storage) like an evaluation, within the same
    one-hour timeout, on the workers sized for that; the ``default`` queue's short jobs (the
    reaper, leaderboard recomputes) never wait behind gigabytes of I/O. Only the job whose id is
    recorded unpacks (``unpacking.unpack``); when Redis is down the model stays ``unpacking``
    and the reaper enqueues it again (``leaderboard/reaper.py``).
    """
    job_id = f"unpack-model-{model_id}-{uuid.uuid4().hex[:12]}"
    MLModel.objects.filter(pk=model_id, status=MLModel.Status.UNPACKING).update(unpack_job_id=job_id, updated_at=timezone.now())
    try:
        queue("evaluation").enqueue("leaderboard.jobs.unpack_model", model_id, job_id=job_id, on_failure=_on_failure(),
                                     description=f"unpack the archive of model {model_id}")
    except RedisError as error:
        logger.warning("model %s stays unpacking without a job (the reaper retries): %s", model_id, error)


def enqueue_recompute(task_id: int) -> None:
    """Put ``recompute_leaderboard(task_id)`` on the ``default`` queue, unless one for the task is
    queued and not started yet: it will read these results too, so twenty evaluation jobs that
    end together rebuild the leaderboard once or twice, not twenty times. The queued job's id is
    kept in Redis (``_recompute_marker``); a lost marker or a race costs one more rebuild (the
    job is idempotent), never a missed one."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job, JobStatus

    default = queue("default")
    marker = _recompute_marker(task_id)
    try:
        queued = default.connection.get(marker)
        if queued and Job.fetch(queued.decode(), connection=default.connection).get_status() == JobStatus.QUEUED:
            return
    except NoSuchJobError:
        logger.debug("the marked leaderboard job of task %s is gone (ran and expired, or the queue was emptied)", task_id)
    except RedisError as error:
        logger.warning("enqueueing the leaderboard of task %s without checking for a queued one: %s", task_id, error)
    job_id = f"recompute-leaderboard-{task_id}-{uuid.uuid4().hex[:12]}"
    default.enqueue("leaderboard.jobs.recompute_leaderboard", task_id, job_id=job_id)
    try:
        default.connection.set(marker, job_id, ex=24 * 3600)
    except RedisError as error:
        logger.warning("the queued leaderboard job of task %s is not marked: %s", task_id, error)


def enqueue_arena_board(task_id: int) -> None:
    """Put ``rebuild_arena_board(task_id)`` on the ``default`` queue, unless one for the task is
    queued and not started yet (it reads every judgment there is when it starts). Redis being down
    leaves the page saying the board is being computed; the next read tries again."""
    from rq.exceptions import NoSuchJobError
    from rq.job import Job, JobStatus

    default = queue("default")
    marker = f"dynabench:leaderboard:arena-job:{task_id}"
    try:
        queued = default.connection.get(marker)
        if queued and Job.fetch(queued.decode(), connection=default.connection).get_status() == JobStatus.QUEUED:
            return
    except NoSuchJobError:
        logger.debug("the marked arena job of task %s is gone (ran and expired, or the queue was emptied)", task_id)
    except RedisError as error:
        logger.warning("the arena board of task %s is not queued (the next read tries again): %s", task_id, error)
        return
    try:
        job_id = f"rebuild-arena-{task_id}-{uuid.uuid4().hex[:12]}"
        default.enqueue("leaderboard.jobs.rebuild_arena_board", task_id, job_id=job_id)
        default.connection.set(marker, job_id, ex=24 * 3600)
    except RedisError as error:
        logger.warning("the arena board of task %s is not queued (the next read tries again): %s", task_id, error)


def _recompute_marker(task_id: int) -> str:
    """Redis key holding the id of the last ``recompute_leaderboard`` job enqueued for the task."""
    return f"dynabench:leaderboard:recompute-job:{task_id}"
