"""RQ jobs of the leaderboard: the entry points and their enqueueing, nothing else.

Jobs are plain functions that return a one-line summary; RQ runs them (queue ``evaluation``
for evaluations, ``default`` for the leaderboard), ``manage.py evaluate_model`` runs them
inline, tests call them directly. The work is in ``leaderboard/evaluation.py`` (running a
model on a dataset, the leaderboard cache), ``leaderboard/predictions.py`` (predictions files)
and ``leaderboard/scoring.py`` (per-tag scores, robustness, fairness); the task kind's metrics
are its spec's (``tasks/kinds/``). Their state lives on our own rows:

1. ``evaluate_model(model_id)`` creates or resets one ``EvaluationRun`` per scoring and
   standard dataset and enqueues ``evaluate_run`` for each once the transaction commits.
2. ``evaluate_run(run_id)`` evaluates one run (claimed by one worker only; results written
   in one transaction at the end, unless a newer attempt superseded it), then enqueues
   ``recompute_leaderboard`` once that commits.
   A large run (more than ``settings.EVALUATION_SHARD_ITEMS`` items) is instead split into
   shards (``leaderboard/sharding.py``): ``evaluate_shard(shard_id)`` per shard, on any worker,
   and ``merge_shards(run_id)`` once the last shard is done.
3. ``requeue_stale_runs()`` puts runs whose worker stopped beating back in the queue;
   ``reap()`` (``leaderboard/reaper.py``, a repeating job) does that and more; every job here
   carries the failure callback ``on_job_failure``.
4. ``recompute_leaderboard(task_id)`` (idempotent) rebuilds the task's ``LeaderboardCache``;
   ``rebuild_arena_board(task_id)`` the arena's cached board (``leaderboard/arena_board.py``).
5. ``train_selection(model_id)`` trains a data-centric submission's selection with the task's
   fixed recipe and seed; its evaluation is then scheduled like any retrained model's.
6. ``unpack_model(model_id)`` unpacks a submitted archive waiting in the storage
   (``leaderboard/unpacking.py``), then schedules the model's evaluation.

Jobs are enqueued by their dotted path (``leaderboard.jobs.<name>``) from
``leaderboard/queueing.py``, so the modules doing the work never import this one.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import transaction
from redis.exceptions import RedisError
from rq import get_current_job

from dynabench.errors import RuleError
from dynabench import job_stop
from dynabench.job_stop import JobStopped
from leaderboard import arena_board, evaluation, sharding, unpacking
from leaderboard.models import EvaluationRun
from leaderboard import queueing
from leaderboard.queueing import enqueue_merge, enqueue_recompute, enqueue_run, enqueue_shard
from tasks.jobs import queue_again
from tasks.loop import artefacts
from tasks.loop.training import runs as training_runs
from tasks.models import MLModel

logger = logging.getLogger(__name__)

Status = EvaluationRun.Status


# --- entry points ------------------------------------------------------------------------


def evaluate_model(model_id: int, *, enqueue: bool = True) -> str:
    """Create or reset the model's evaluation runs and enqueue one job per dataset.

    ``enqueue=False`` leaves the runs queued for the caller to run (``manage.py evaluate_model --inline``).
    Reruns replace (``evaluation.reset_runs``). Returns a one-line summary.
    """
    with transaction.atomic():
        summary, run_ids = evaluation.reset_runs(model_id)
        if enqueue and run_ids:
            transaction.on_commit(lambda: [enqueue_run(pk) for pk in run_ids])
    return summary


def requeue_stale_runs(*, now=None) -> str:
    """Re-queue runs left ``running`` by a worker that stopped beating (or fail them after the last attempt).

    A run is stale when its ``heartbeat_at`` is older than ``settings.EVALUATION_STALE_AFTER_S``
    (default 600 s). Returns a one-line summary.
    """
    summary, requeued = evaluation.reset_stale_runs(now=now)
    for pk in requeued:
        transaction.on_commit(lambda pk=pk: enqueue_run(pk))
    return summary


def evaluate_run(run_id: int) -> str:
    """Evaluate one model on one dataset, then enqueue the leaderboard's recomputation once the results
    are committed; return a one-line summary.

    The worker claims the run (``evaluation.claim_run``); a large run is split into shards queued
    as their own jobs (``sharding.split_run``), any other is evaluated here in one piece
    (``evaluation.evaluate_claimed``). Then, for up to ``batch_seconds()``, the same job goes on
    with the next queued run (``_next_queued_run``): the model's own first, while it is loaded,
    so re-scoring every model on a closed round's new datasets loads each model once, not once
    per dataset; then any other model's, so one work horse does what would have cost a fork per
    job. Other workers' jobs claim runs the same way, one at a time, so they share the queue.
    """
    run = evaluation.claim_run(run_id)
    if run is None:
        status = EvaluationRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        return f"run {run_id}: not queued ({status or 'missing'}), skipped"
    artefacts.publish(run.model)  # records from before the storage: published by the first worker that has them
    if sharding.should_shard(run):
        shard_ids = sharding.split_run(run)
        transaction.on_commit(lambda: [enqueue_shard(pk) for pk in shard_ids])
        return f"run {run_id}: split into {len(shard_ids)} shards of at most {sharding.shard_items()} items"
    summaries, task_ids = [], set()
    started = time.monotonic()
    while run is not None:
        summary, task_id = evaluation.evaluate_claimed(run)
        summaries.append(summary)
        if task_id is not None:
            task_ids.add(task_id)
        # A stopping worker (dynabench/job_stop.py) takes no further run: the queued ones keep their own jobs.
        going_on = time.monotonic() - started < batch_seconds() and not job_stop.requested()
        run = _next_queued_run(run.model_id) if going_on else None
    for task_id in task_ids:
        transaction.on_commit(lambda task_id=task_id: enqueue_recompute(task_id))
    return "; ".join(summaries)


def batch_seconds() -> float:
    """How long one evaluation job goes on taking further queued runs
    (``settings.EVALUATION_BATCH_SECONDS``, default 300 s; 0: one run a job)."""
    return settings.EVALUATION_BATCH_SECONDS


def _next_queued_run(model_id: int):
    """Claim the next queued, unsharded run: the model ``model_id``'s first (it is loaded in this work
    horse already, the registry's cache, so its next dataset costs only the forward passes), then
    the oldest of any other model; or None when none is left. Each run's own job is deleted from
    the queue (``_drop_queued_job``); a large run is split into shards for every worker instead."""
    queued = EvaluationRun.objects.filter(status=EvaluationRun.Status.QUEUED)
    for candidates in (queued.filter(model_id=model_id), queued.exclude(model_id=model_id)):
        for run_id in candidates.order_by("pk").values_list("pk", flat=True)[:50]:
            run = evaluation.claim_run(run_id)
            if run is None:
                continue  # another worker took it meanwhile
            _drop_queued_job(run.job_id)
            current = get_current_job()
            if current is not None:  # the run is this job's now: a failure report of this job recovers it
                EvaluationRun.objects.filter(pk=run.pk).update(job_id=current.id)
                run.job_id = current.id
            if sharding.should_shard(run):  # large runs are split for every worker to share
                shard_ids = sharding.split_run(run)
                transaction.on_commit(lambda shard_ids=shard_ids: [enqueue_shard(pk) for pk in shard_ids])
                continue
            return run
    return None


def _drop_queued_job(job_id: str) -> None:
    """Delete the queued job of a run this job has claimed, so no worker forks a work horse only to
    find the run taken. Best effort: a job left behind (Redis unreachable) skips the run itself."""
    if not job_id:
        return
    from rq.exceptions import NoSuchJobError
    from rq.job import Job

    try:
        Job.fetch(job_id, connection=queueing.queue("evaluation").connection).delete(remove_from_queue=True)
    except NoSuchJobError:
        pass  # already gone (run, or never enqueued)
    except RedisError as error:
        logger.warning("the job %s of a run taken by another job stays queued: %s", job_id, error)


def evaluate_shard(shard_id: int) -> str:
    """Evaluate one shard of a large run (``sharding.evaluate_shard``); queue its retry, or the merge
    when it was the run's last shard; return a one-line summary."""
    summary, follow = sharding.evaluate_shard(shard_id)
    if "retry" in follow:
        transaction.on_commit(lambda: enqueue_shard(follow["retry"]))
    if "merge" in follow:
        transaction.on_commit(lambda: enqueue_merge(follow["merge"]))
    return summary


def merge_shards(run_id: int) -> str:
    """Score a sharded run from its shards and write it (``sharding.merge_shards``), then recompute the
    leaderboard once that commits; return a one-line summary."""
    summary, task_id = sharding.merge_shards(run_id)
    if task_id is not None:
        transaction.on_commit(lambda: enqueue_recompute(task_id))
    return summary


def recompute_leaderboard(task_id: int) -> str:
    """Rebuild the task's ``LeaderboardCache`` from its evaluation runs (``evaluation.rebuild_leaderboard``)."""
    return evaluation.rebuild_leaderboard(task_id)


def rebuild_arena_board(task_id: int) -> str:
    """Compute the task's arena board and keep it in the cache (``arena_board.rebuild_arena_board``)."""
    return arena_board.rebuild_arena_board(task_id)


def unpack_model(model_id: int) -> str:
    """Unpack the model's archive from the storage and queue its evaluation
    (``leaderboard.unpacking.unpack``); return a one-line summary. Idempotent: a model no longer
    ``unpacking`` is skipped. A refused archive (a damaged member, weights larger than declared,
    a bad config) leaves the model ``failed`` with the reason, nothing on disk or in the storage."""
    current = get_current_job()
    return unpacking.unpack(model_id, job_id=current.id if current is not None else None)


def train_selection(model_id: int) -> str:
    """Train a data-centric submission's selection with the task's fixed recipe and seed
    (``tasks.loop.training.runs.train_selection``). Training ends by sending
    ``tasks.signals.leaderboard_inputs_changed``, so the new model's evaluation runs are
    scheduled (``leaderboard.scheduling``) and their jobs enqueued once that commits. Returns a
    one-line summary; a refused selection or a failed training leaves the model ``failed`` with
    the reason.
    """
    model = MLModel.objects.select_related("task").get(pk=model_id)
    try:
        model = training_runs.train_selection(model)
    except JobStopped:  # the worker is stopping: the same job goes back on the queue for the next start
        return queue_again(model_id)
    except RuleError as error:
        return f"selection model {model_id}: failed: {error.message}"
    runs = EvaluationRun.objects.filter(model=model).count()
    return f"selection model {model_id} trained on {model.training_info.get('examples')} items; {runs} evaluation runs scheduled"
