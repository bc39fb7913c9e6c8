"""Keeping every leaderboard current: queue exactly the evaluation runs that are missing.

``schedule_evaluations(task, models=None, datasets=None)`` is called (directly, or through the
``tasks.signals.leaderboard_inputs_changed`` signal that lower layers send) wherever either side
of a leaderboard changes: a round closes, a dataset is imported or its content replaced, a model
is uploaded, published or retrained. It is idempotent: calling it again queues nothing new.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef

from leaderboard import evaluation
from leaderboard.queueing import enqueue_recompute, enqueue_run
from leaderboard.models import EvaluationRun
from leaderboard.predictions import read_predictions_file
from tasks.models import Dataset, DatasetItem, MLModel, Task
from tasks.selectors import evaluable_models

Status = EvaluationRun.Status


def evaluable_datasets(task: Task, datasets=None) -> list[Dataset]:
    """The task's scoring and standard datasets that have at least one item (hidden ones
    included: they are evaluated and count toward the Dynascore), never a data-centric task's
    candidate pool (its kind's ``training_pool``: training data). ``datasets``: rows or ids."""
    queryset = Dataset.objects.filter(
        task=task, access__in=[Dataset.Access.SCORING, Dataset.Access.STANDARD]
    ).filter(Exists(DatasetItem.objects.filter(dataset=OuterRef("pk")))).exclude(name=task.spec.training_pool(task.config) or "")
    if datasets is not None:
        queryset = queryset.filter(pk__in=[getattr(d, "pk", d) for d in datasets])
    return list(queryset.order_by("pk"))


def _covered(model: MLModel, datasets: list[Dataset]) -> list[Dataset]:
    """For a predictions file, the datasets it has predictions for; for a runnable model, all."""
    if not model.is_predictions:
        return datasets
    try:
        names = {name for name, _ in read_predictions_file(model)}
    except (OSError, ValueError):
        return []
    return [d for d in datasets if d.name in names]


def _is_current(run: EvaluationRun, dataset: Dataset, model: MLModel) -> bool:
    """A run counts for the dataset's current content and the model's current checksum (an endpoint whose
    settings changed, a retrained directory): runs from before versions were recorded count, and so does
    a run that recorded no checksum yet (queued, running, failed) or whose model has none."""
    dataset_current = run.dataset_version is None or run.dataset_version == dataset.version
    return dataset_current and (not run.model_checksum or not model.checksum or run.model_checksum == model.checksum)


def schedule_evaluations(task: Task, *, models=None, datasets=None) -> list[EvaluationRun]:
    """Queue exactly the missing (model, dataset) evaluation runs of ``task``; return them.

    ``models``/``datasets``: ``MLModel``/``Dataset`` rows or ids to consider (default: every
    evaluable model, ``tasks.selectors.evaluable_models``, and every non-empty scoring or standard dataset,
    ``evaluable_datasets``). A pair is missing when it has no run, or when its run belongs to an
    earlier version of the dataset or was scored with another checksum of the model (its scores then
    move to the run's ``history`` with the model checksum they were computed with, still readable,
    no longer ranked). A predictions file is scheduled only on the datasets it covers. Queued,
    running, done and failed runs of the current version are left alone, so calling this again
    queues nothing new; two concurrent calls create each run once (the one-run-per-pair
    constraint; the loser skips it).

    The runs are written in the caller's transaction (or one of their own); their jobs go on
    the ``evaluation`` queue only once it commits (``leaderboard.queueing.enqueue_run``), so a run is
    never queued without a job and a rolled-back change queues nothing. The models' statuses
    become ``queued``/``evaluating`` at once, and the leaderboard cache is rebuilt after commit so
    the page shows them pending with their queued runs.
    """
    chosen_models = evaluable_models(task, models)
    chosen_datasets = evaluable_datasets(task, datasets)
    if not chosen_models or not chosen_datasets:
        return []
    scheduled: list[EvaluationRun] = []
    with transaction.atomic():
        existing = {
            (run.model_id, run.dataset_id): run
            for run in EvaluationRun.objects.filter(model__in=chosen_models, dataset__in=chosen_datasets).defer("item_results")
        }
        for model in chosen_models:
            for dataset in _covered(model, chosen_datasets):
                run = existing.get((model.pk, dataset.pk))
                if run is not None and _is_current(run, dataset, model):
                    continue
                if run is None:
                    try:
                        with transaction.atomic():
                            run = EvaluationRun.objects.create(model=model, dataset=dataset, dataset_version=dataset.version)
                    except IntegrityError:
                        continue  # a concurrent call created it
                else:
                    if not evaluation.archive_and_reset(run, dataset_version=dataset.version):
                        continue
                scheduled.append(run)
        for model_id in sorted({run.model_id for run in scheduled}):
            evaluation.refresh_model_status(model_id)
        run_ids = [run.pk for run in scheduled]
        if run_ids:
            transaction.on_commit(lambda: [enqueue_run(pk) for pk in run_ids])
            transaction.on_commit(lambda: enqueue_recompute(task.pk))
    return scheduled


def schedule_model(model: MLModel) -> list[EvaluationRun]:
    """Schedule a newly uploaded or registered model on every dataset of its task (``schedule_evaluations``).

    A predictions file that covers none of its task's datasets (none exists yet, or it names
    others) is marked ``failed`` with that reason (no run, no job: never shown as waiting for one).
    A runnable model (a directory or an endpoint) on a task with no dataset yet, as a freshly
    created or approved task, is not broken: it stays ``uploaded`` without a reason (it can answer
    in a round's loop at once), and the task's first dataset schedules it.
    """
    runs = schedule_evaluations(model.task, models=[model])
    if not runs and not EvaluationRun.objects.filter(model=model).exists():
        if not model.is_predictions and not evaluable_datasets(model.task):
            MLModel.objects.filter(pk=model.pk).update(status=MLModel.Status.UPLOADED, progress=0.0, failure_reason="")
            return runs
        covered = _covered(model, evaluable_datasets(model.task))
        reason = (
            f"The task '{model.task.code}' has no scoring or standard datasets to evaluate on yet."
            if not evaluable_datasets(model.task) else "The predictions file covers none of the task's datasets."
        )
        if not covered:
            MLModel.objects.filter(pk=model.pk).update(status=MLModel.Status.FAILED, progress=0.0, failure_reason=reason)
    return runs


def on_leaderboard_inputs_changed(sender, *, task, models=None, datasets=None, **kwargs) -> list[EvaluationRun]:
    """Receiver of ``tasks.signals.leaderboard_inputs_changed``: ``schedule_evaluations``."""
    if not isinstance(task, Task):
        task = Task.objects.get(pk=task)
    return schedule_evaluations(task, models=models, datasets=datasets)


def missing_pairs(task: Task) -> list[tuple[int, int]]:
    """``(model id, dataset id)`` pairs that ``schedule_evaluations`` would queue now (a read; for checks)."""
    pairs = []
    chosen_datasets = evaluable_datasets(task)
    runs = {(r.model_id, r.dataset_id): r for r in EvaluationRun.objects.filter(dataset__task=task).defer("item_results")}
    for model in evaluable_models(task):
        for dataset in _covered(model, chosen_datasets):
            run = runs.get((model.pk, dataset.pk))
            if run is None or not _is_current(run, dataset, model):
                pairs.append((model.pk, dataset.pk))
    return pairs
