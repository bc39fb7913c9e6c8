"""The jobs the RQ worker runs for the cycle, and waiting until each has finished.

Decides when a step may go on: a model has trained (:func:`retrain`, :func:`wait_trained`), the
evaluation jobs have finished a run queued since the request on every scoring and standard
dataset (:func:`evaluate`), and the leaderboard cache has been rebuilt after the last run
(:func:`leaderboard_recomputed`). :func:`wait` raises ``CycleError`` when a job fails, a
process dies or the time is up.
"""

from __future__ import annotations

import time

from django.utils import timezone

from cycle.platform import CycleError, Platform
from cycle.stack import PlatformProcesses
from dynabench_client import DynabenchClient
from tasks.models import Dataset, MLModel, Task
from validation.retraining import request_retraining


def wait(description: str, check, *, processes: PlatformProcesses, timeout: float = 3600.0, poll: float = 1.0):
    """Call ``check()`` until it returns a true value; raise ``CycleError`` after ``timeout`` s or if a process died."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        try:
            processes.check_alive()
        except RuntimeError as exc:
            raise CycleError(f"while waiting for {description}: {exc}") from None
        if time.monotonic() > deadline:
            raise CycleError(f"{description} did not finish within {timeout:.0f} s")
        time.sleep(poll)


def wait_trained(ml_model_id: int, processes) -> MLModel:
    def done():
        model = MLModel.objects.get(pk=ml_model_id)
        if model.status == MLModel.Status.FAILED:
            raise CycleError(f"training of model {model.name} failed: {model.failure_reason}\n{processes.log_tail('worker')}")
        return model if model.status != MLModel.Status.TRAINING else None

    return wait(f"training of model {ml_model_id}", done, processes=processes)


def retrain(p: Platform, name: str, owner_user) -> MLModel:
    """Request the retraining job (owner) and wait for the worker to train the model."""
    record = request_retraining(task=p.task, acting_user=owner_user, name=name, epochs=p.options.epochs)
    return wait_trained(record.pk, p.processes)


def evaluate(owner: DynabenchClient, model_ids: list[int], processes, *, admin: DynabenchClient) -> dict[int, dict]:
    """Publish each model (API: its owner, or the admin for the platform's own seed model), queue its evaluation job (as the admin's "re-evaluate" action
    does), wait until the worker has finished a run queued since then on every scoring and
    standard dataset, and return each model as ``GET /api/v1/models/{id}`` reports it."""
    from leaderboard.queueing import enqueue_evaluation

    since = timezone.now().isoformat()
    owner_id = owner.me()["id"]
    for model_id in model_ids:
        mine = MLModel.objects.filter(pk=model_id, owner_id=owner_id).exists()
        (owner if mine else admin).publish_model(model_id, True)
        enqueue_evaluation(model_id)
    task_id = MLModel.objects.get(pk=model_ids[0]).task_id
    wanted = Dataset.objects.filter(task_id=task_id, access__in=[Dataset.Access.SCORING, Dataset.Access.STANDARD]).count()

    def done():
        models = {pk: owner.get_model(pk) for pk in model_ids}
        for model in models.values():
            fresh = [run for run in model["evaluations"] if run["queued_at"] and run["queued_at"] >= since]
            failed = [run for run in fresh if run["status"] == "failed"]
            if failed:
                raise CycleError(f"evaluation of {model['name']} on {failed[0]['dataset']} failed: {failed[0]['error']}")
            if len(fresh) < wanted or any(run["status"] != "done" for run in fresh) or model["status"] != "evaluated":
                return None
        return models

    return wait("the evaluation jobs", done, processes=processes, poll=2.0)


def leaderboard_recomputed(task: Task, processes) -> None:
    """Wait until the worker has rebuilt the task's leaderboard cache after the last finished run."""
    from leaderboard.models import EvaluationRun, LeaderboardCache

    def done():
        last = EvaluationRun.objects.filter(model__task=task).order_by("-finished_at").values_list("finished_at", flat=True).first()
        cache = LeaderboardCache.objects.filter(task=task).first()
        return cache is not None and last is not None and cache.computed_at >= last

    wait("the leaderboard recomputation", done, processes=processes, poll=1.0)
