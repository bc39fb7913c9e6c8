"""RQ jobs of the tasks app. Jobs are plain functions that return a one-line summary.

``retrain_from_validated`` closes the loop: the examples that fooled (or did not fool) the
model in the loop and were validated as correct, from every round so far, plus the seed
set, become the training data of a new target model, ready to be evaluated and put in the
loop of the next round. ``tasks.services.request_retraining`` creates its record and
enqueues it on the ``training`` queue.
"""

import uuid
from collections import Counter

from django.utils import timezone

from tasks import training
from tasks.models import MLModel, Task

TRAINING_QUEUE = "training"
JOB_TIMEOUT_S = 3600


def retraining_name() -> str:
    """Return a fresh default name for a retrained model: ``minilm-retrained-<UTC timestamp>-<4 hex>``."""
    return f"minilm-retrained-{timezone.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:4]}"


def _record_for_run(task: Task, *, name: str | None, model_id: int | None) -> MLModel:
    """Return the MLModel this run trains: the given record, the one of the current RQ job, or a new one."""
    if model_id is not None:
        return MLModel.objects.get(pk=model_id, task=task)
    from rq import get_current_job

    job = get_current_job()
    if job is not None:
        existing = MLModel.objects.filter(task=task, training_info__job_id=job.id).first()
        if existing is not None:
            return existing
    name = training.check_model_name(task, name or retraining_name())
    return MLModel.objects.create(
        task=task, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(training.model_directory(task, name)), training_info={"job_id": job.id if job else None},
    )


def retrain_from_validated(task_id: int, *, name: str | None = None, model_id: int | None = None, epochs: int | None = None) -> str:
    """Train a new target model of task ``task_id`` on its validated examples plus the seed set.

    Steps:
    1. Find the record: ``model_id`` (created by ``request_retraining``), else the record of
       the current RQ job id, else a new record named ``name``. Re-running the same job
       therefore retrains the same record and replaces its directory; it never duplicates it.
    2. Collect the examples: the seed set and every ``verified_correct``, not retracted
       example of the task, all rounds (``training.validated_examples``).
    3. Train (``training.train_model_record``): progress on the record while it runs;
       ``training_info["data"]`` lists counts per source and round and the example ids;
       a failure sets ``status=failed`` with the reason and is raised again for RQ.
       ``epochs`` overrides the default number of epochs.

    Returns a one-line summary.
    """
    task = Task.objects.get(pk=task_id)
    record = _record_for_run(task, name=name, model_id=model_id)
    examples = training.seed_examples(task) + training.validated_examples(task)
    sources = {"seed": {"file": f"tasks/seed_data/{training.seed_data_path(task).name}"}}
    hp = training.default_hyperparameters(task)
    hp.epochs = epochs or hp.epochs
    record = training.train_model_record(record, examples, data_sources=sources, hp=hp)
    counts = Counter(ex.source for ex in examples)
    rounds = sorted({ex.round for ex in examples if ex.source == "validated"})
    return (
        f"Retrained {task.code}/{record.name} (model {record.pk}) on {len(examples)} examples "
        f"(seed {counts['seed']}, validated {counts['validated']} from rounds {', '.join(map(str, rounds)) or 'none'}) "
        f"in {record.training_info['duration_s']:.1f}s"
    )


def enqueue_retraining(task_id: int, *, model_id: int, job_id: str, epochs: int | None = None) -> None:
    """Put ``retrain_from_validated`` for record ``model_id`` on the ``training`` queue under ``job_id``."""
    import django_rq

    kwargs = {"model_id": model_id} | ({"epochs": epochs} if epochs else {})
    django_rq.get_queue(TRAINING_QUEUE).enqueue(
        retrain_from_validated, args=(task_id,), kwargs=kwargs, job_id=job_id, job_timeout=JOB_TIMEOUT_S,
        description=f"retrain task {task_id} into model {model_id}",
    )
