"""The reaper: every evaluation run, shard and training ends ``done`` or ``failed`` with a reason,
even when the worker running it dies.

``reap()`` is one repeating RQ job (id ``dynabench-reaper`` on the ``default`` queue, every
``settings.REAPER_PERIOD_S`` seconds, default 60, through RQ's scheduler: run workers with
``--with-scheduler``). Every worker started with ``leaderboard.worker.ReapingWorker`` (the
``RQ["WORKER_CLASS"]`` setting) makes sure it exists when it starts (``ensure_reaper``), so the
reaper survives the death of any one worker and a restarted worker reaps at once. Each pass:

1. runs whose worker stopped beating for ``EVALUATION_STALE_AFTER_S`` go back in the queue,
   or fail after ``EVALUATION_MAX_ATTEMPTS`` (``evaluation.reset_stale_runs``);
2. shards whose worker stopped beating are retried alone, or fail their run on their last try
   (``sharding.shard_failed``); sharded runs whose merge was lost are merged again;
3. queued runs and shards whose RQ job was lost (the queue emptied, Redis down at enqueue,
   the job failed before it claimed its row) are enqueued again;
4. trainings without a sign of life fail with a reason and stray ``.training-<pid>`` folders
   are removed (``tasks.loop.recovery.reap_trainings``);
5. models ``unpacking`` whose job was lost are enqueued again, or fail with a reason after
   ``UNPACK_MAX_ATTEMPTS`` started jobs; stray ``.unpacking-<id>-*`` folders and stored archives
   no model waits for are removed (``leaderboard.unpacking.reap_unpacking``).

RQ's failure callback ``on_job_failure`` (on every evaluation and unpacking job) applies the same
recovery to its own run, shard or model at once, when RQ reports the job failed or abandoned by a
dead worker, or when the job's work horse was killed (``leaderboard.worker.WorkHorseKilled``, run by
the worker that forked it).
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from leaderboard import evaluation, jobs, queueing, sharding, unpacking
from leaderboard.models import EvaluationRun, EvaluationShard
from tasks.loop import recovery

logger = logging.getLogger(__name__)
Status = EvaluationRun.Status

REAPER_JOB_ID = "dynabench-reaper"
REAPER_QUEUE = "default"
#: The errors a failure callback gets when the job did not fail but the process running it died.
WORKER_DIED = ("AbandonedJobError", "WorkHorseKilled")
#: How many times the repeating job repeats before ``ensure_reaper`` starts a new one.
REPEATS = 1_000_000


def period_s() -> int:
    """Seconds between two passes of the reaper (``settings.REAPER_PERIOD_S``, default 60)."""
    return max(1, int(getattr(settings, "REAPER_PERIOD_S", 60)))


def _connection():
    import django_rq

    return django_rq.get_connection(REAPER_QUEUE)


def _job_alive(job_id: str, connection) -> bool:
    """True when the RQ job ``job_id`` exists and has not ended: queued, scheduled, deferred, or started
    on a worker that is still registered (a started job of a dead worker counts as lost)."""
    from rq.job import Job, JobStatus
    from rq.worker import Worker

    if not job_id:
        return False
    try:
        job = Job.fetch(job_id, connection=connection)
        status = job.get_status()
    except Exception:  # noqa: BLE001 - no such job (expired, deleted with its queue)
        return False
    if status == JobStatus.STARTED:
        return bool(job.worker_name) and job.worker_name in {w.name for w in Worker.all(connection=connection)}
    return status in (JobStatus.QUEUED, JobStatus.SCHEDULED, JobStatus.DEFERRED)


def lost_jobs(connection) -> tuple[list[int], list[int]]:
    """Queued runs and shards whose RQ job no longer exists or has ended: their ids (runs, shards)."""
    runs = [pk for pk, job_id in EvaluationRun.objects.filter(status=Status.QUEUED).values_list("pk", "job_id")
            if not _job_alive(job_id, connection)]
    shards = [pk for pk, job_id in EvaluationShard.objects.filter(status=Status.QUEUED).values_list("pk", "job_id")
              if not _job_alive(job_id, connection)]
    return runs, shards


def reap(*, now=None) -> str:
    """One pass of the reaper (see the module docstring); returns a one-line summary. Never raises, so
    the repeating job keeps repeating: a failing step is logged and reported in the summary."""
    parts = []
    steps = (("runs", _reap_runs), ("shards", _reap_shards), ("lost jobs", _requeue_lost), ("trainings", _reap_trainings),
             ("unpacking", _reap_unpacking))
    for name, step in steps:
        try:
            parts.append(step(now))
        except Exception as error:  # noqa: BLE001 - one broken step must not stop the others
            logger.exception("reaper step %s failed", name)
            parts.append(f"{name}: error {type(error).__name__}: {error}")
    return "; ".join(parts)


def _reap_runs(now) -> str:
    summary, requeued = evaluation.reset_stale_runs(now=now)
    for pk in requeued:
        transaction.on_commit(lambda pk=pk: queueing.enqueue_run(pk))
    return summary


def _reap_shards(now) -> str:
    retried = failed = 0
    for shard, reason in sharding.stale_shards(now):
        summary, follow = sharding.shard_failed(shard, shard.attempt, reason)
        if "retry" in follow:
            retried += 1
            queueing.enqueue_shard(follow["retry"])
        elif "run failed" in summary:
            failed += 1
    merges = sharding.runs_waiting_for_merge(now)
    for run_id in merges:
        queueing.enqueue_merge(run_id)
    return f"{retried} stale shards retried, {failed} failed their run, {len(merges)} merges queued again"


def _requeue_lost(now) -> str:
    runs, shards = lost_jobs(_connection())
    for pk in runs:
        queueing.enqueue_run(pk)
    for pk in shards:
        queueing.enqueue_shard(pk)
    return f"{len(runs)} queued runs and {len(shards)} queued shards without a job enqueued again"


def _reap_trainings(now) -> str:
    return recovery.reap_trainings(now=now)


def _reap_unpacking(now) -> str:
    connection = _connection()
    return unpacking.reap_unpacking(job_alive=lambda job_id: _job_alive(job_id, connection), now=now)


def ensure_reaper(connection=None) -> bool:
    """Make sure the repeating reaper job exists (queued, scheduled or running); return True when this
    call created it. Called by every ``ReapingWorker`` when it starts; safe to call from anywhere."""
    import django_rq
    from rq import Repeat

    connection = connection or _connection()
    if _job_alive(REAPER_JOB_ID, connection):
        return False
    django_rq.get_queue(REAPER_QUEUE).enqueue(
        reap, job_id=REAPER_JOB_ID, repeat=Repeat(times=REPEATS, interval=period_s()),
        result_ttl=period_s() * 10, failure_ttl=3600,
    )
    return True


def reap_once() -> None:
    """Queue one pass of the reaper now (besides the repeating one), e.g. when a worker starts."""
    import django_rq

    django_rq.get_queue(REAPER_QUEUE).enqueue(reap, result_ttl=period_s() * 10, failure_ttl=3600)


def on_job_failure(job, connection, exc_type=None, exc_value=None, tb=None) -> None:
    """RQ failure callback of evaluation and unpacking jobs: recover the job's run, shard or model at once.

    A run the job left ``running`` goes back in the queue (or fails after its last attempt), a
    shard is retried alone (or fails its run), a lost merge is queued again, a model left
    ``unpacking`` fails with the reason (or, when the worker died, is enqueued again while tries
    remain: ``unpacking.job_failed``); the reason names the job and what RQ reported
    (``AbandonedJobError``: the worker died; ``WorkHorseKilled``: the process running the job was killed).
    """
    what = getattr(exc_type, "__name__", "error")
    reason = f"The job {job.id} ended in the worker: {what}{f': {exc_value}' if str(exc_value or '') else ''}."
    name, args = job.func_name or "", list(job.args or ())
    if not args:
        return
    target = args[0]
    # Only the attempt this job ran: a retry has its own job id, which an old job's report must not touch.
    if name.endswith("evaluate_run"):
        if EvaluationRun.objects.filter(pk=target, job_id=job.id, status=Status.RUNNING).exists():
            summary, requeued = evaluation.reset_stale_runs(run_ids=[target], reason=reason)
            for pk in requeued:
                queueing.enqueue_run(pk)
    elif name.endswith("evaluate_shard"):
        shard = EvaluationShard.objects.select_related("run").filter(pk=target, job_id=job.id, status=Status.RUNNING).first()
        if shard is not None:
            _, follow = sharding.shard_failed(shard, shard.attempt, reason)
            if "retry" in follow:
                queueing.enqueue_shard(follow["retry"])
    elif name.endswith("merge_shards"):
        queueing.enqueue_merge(target)
    elif name.endswith("unpack_model"):
        unpacking.job_failed(target, job.id, reason, worker_died=what in WORKER_DIED)
    logger.warning("recovered after job %s failed: %s", job.id, reason)
