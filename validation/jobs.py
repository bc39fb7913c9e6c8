"""Jobs: plain functions that return a one-line summary (RQ, management commands and tests call them).

- ``reconcile_counters``: recheck every example's validation state and counts, and every
  round's tallies.
- ``compute_round_agreement``: a round's Fleiss' κ and Krippendorff's α, stored for the
  round page (``validation.round_statistics.round_stats`` asks for it when stale).
- ``retrain_from_validated`` closes the loop: the examples validated as correct (that fooled
  the model in the loop or not), from every round so far, with their final labels, plus the
  seed set, become the training data of a new target model, ready to be evaluated and put
  in the loop of the next round. ``validation.retraining.request_retraining`` creates its
  record and enqueues it on the ``training`` queue; ``tasks.loop.training`` trains it from the
  plain rows this app hands it.
- ``measure_transfer`` puts a round's validated examples to the task's other ready models and
  stores each example's transfer rate (``validation/transfer.py``).
"""

import time
import uuid
from collections import Counter
from dataclasses import asdict
from itertools import groupby

from django.db import transaction
from django.db.models import Count
from django.utils import timezone
from rq import Callback

from annotation import counters
from dynabench.job_stop import JobStopped
from annotation.models import Example, RoundTally
from tasks.data.seed_split import seed_data_path
from tasks.jobs import queue_again
from tasks.loop.training.examples import seed_examples, validated_training_examples
from tasks.loop.training.hyperparameters import default_hyperparameters
from tasks.loop.training.records import check_model_name, model_directory
from tasks.loop.training.runs import train_model_record
from tasks.models import Context, MLModel, Round, Task
from validation.calculations import ConsensusPolicy, derive_state, tally
from validation.models import RoundAgreement, Validation
from validation.round_statistics import has_voted_labels, round_agreement, round_figures
from validation.selectors import retraining_rows

_COLUMNS = ("validation_state", "validation_count", "correct_count", "incorrect_count", "flagged_count")


def reconcile_counters(*, fix: bool = True, batch_size: int = 2000) -> str:
    """Recompute every example's state and ``*_count`` columns from its validations, and every
    context's ``times_used`` from its examples (retracted ones included: a context was used
    when an example was written for it); report the drift and, with ``fix``, repair it.

    Uses ``calculations.derive_state`` and ``tally`` over the counted validations under each
    task's ``ConsensusPolicy``, as ``record_validation`` does. Each batch is fixed under row locks so a validation recorded meanwhile is not lost.
    Returns e.g. ``"checked 1200 examples: 3 drifted (fixed); checked 40 contexts: 1 drifted (fixed)"``.
    """
    needed = {t.pk: ConsensusPolicy.from_config(t.config) for t in Task.objects.all()}
    checked = drifted = 0
    ids = Example.objects.order_by("pk").values_list("pk", flat=True)
    for start in range(0, ids.count(), batch_size):
        chunk = list(ids[start : start + batch_size])
        with transaction.atomic():
            examples = Example.objects.filter(pk__in=chunk).order_by("pk")
            if fix:
                examples = examples.select_for_update(of=("self",))
            rows = list(examples.values_list("pk", "round__task_id", *_COLUMNS))
            votes = Validation.objects.filter(example_id__in=chunk, counts=True).order_by("example_id", "id").values_list("example_id", "label", "mode")
            by_example = {k: [(label, mode) for _, label, mode in g] for k, g in groupby(votes, key=lambda r: r[0])}
            wrong = []
            for pk, task_id, *stored in rows:
                checked += 1
                found = by_example.get(pk, [])
                counts = tally(label for label, _ in found)
                expected = [derive_state(found, needed[task_id]), *(counts[c] for c in _COLUMNS[1:])]
                if list(stored) != expected:
                    wrong.append(Example(pk=pk, **dict(zip(_COLUMNS, expected))))
            drifted += len(wrong)
            if fix and wrong:
                Example.objects.bulk_update(wrong, list(_COLUMNS), batch_size=500)

    used = dict(Example.objects.values_list("context_id").annotate(n=Count("id")).values_list("context_id", "n"))
    contexts = Context.objects.values_list("pk", "times_used")
    stale = [Context(pk=pk, times_used=used.get(pk, 0)) for pk, times in contexts.iterator() if times != used.get(pk, 0)]
    if fix and stale:
        Context.objects.bulk_update(stale, ["times_used"], batch_size=1000)
    round_ids = list(Round.objects.order_by("pk").values_list("pk", flat=True))
    tallies_wrong = counters.recount_rounds(round_ids, fix=fix)
    action = "fixed" if fix else "not fixed"
    return (
        f"checked {checked} examples: {drifted} drifted ({action}); "
        f"checked {Context.objects.count()} contexts: {len(stale)} drifted ({action}); "
        f"checked the tallies of {len(round_ids)} rounds: {tallies_wrong} drifted ({action})"
    )


def compute_round_agreement(round_id: int) -> str:
    """Compute round ``round_id``'s agreement (``round_statistics.round_agreement`` over the verdicts,
    and over imported category votes when there are some) and its grouped figures
    (``round_statistics.round_figures``), and store them in ``RoundAgreement`` with the tally counts
    they reflect (read first, so a write during the scan leaves the result stale rather than
    wrongly fresh). RQ runs it on the ``default`` queue; it reads every user-mode validation
    of the round once and groups its examples once (seconds at 1M examples / 3M validations).
    Returns e.g. ``"agreement of round 3 over 2999 examples in 1.2s"``."""
    round = Round.objects.select_related("task").get(pk=round_id)
    seen = RoundTally.objects.filter(round=round).values_list("validations", "retracted", "collected").first() or (0, 0, 0)
    started = time.perf_counter()
    verdicts = round_agreement(round)
    voted = round_agreement(round, field="voted_label") if has_voted_labels(round) else None
    figures = round_figures(round)
    took = time.perf_counter() - started
    RoundAgreement.objects.update_or_create(
        round=round,
        defaults={
            "verdicts": asdict(verdicts), "voted": asdict(voted) if voted else None, "figures": figures,
            "validations": seen[0], "retracted": seen[1], "collected": seen[2], "computed_at": timezone.now(),
            "duration_s": float(f"{took:.3f}"),
        },
    )
    return f"agreement of round {round_id} over {verdicts.n_items} examples in {took:.1f}s"


# --- retraining the target model from validated examples ---------------------------------

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
    name = check_model_name(task, name or retraining_name())
    return MLModel.objects.create(
        task=task, name=name, kind=MLModel.Kind.HF_DIRECTORY, status=MLModel.Status.TRAINING,
        path=str(model_directory(task, name)), training_info={"job_id": job.id if job else None},
    )


def retrain_from_validated(task_id: int, *, name: str | None = None, model_id: int | None = None, epochs: int | None = None) -> str:
    """Train a new target model of task ``task_id`` on its validated examples plus the seed set.

    Steps:
    1. Find the record: ``model_id`` (created by ``request_retraining``), else the record of
       the current RQ job id, else a new record named ``name``. Re-running the same job
       therefore retrains the same record and replaces its directory; it never duplicates it.
    2. Collect the examples: the seed set and the task's validated examples of every round
       with their final labels (an owner's correction wins over the annotator's label), dev
       and test splits left out (``selectors.retraining_rows``).
    3. Train (``tasks.loop.training.runs.train_model_record``): progress on the record while it runs;
       ``training_info["data"]`` lists counts per source and round and the example ids;
       a failure sets ``status=failed`` with the reason and is raised again for RQ.
       ``epochs`` overrides the default number of epochs.

    Returns a one-line summary.
    """
    task = Task.objects.get(pk=task_id)
    record = _record_for_run(task, name=name, model_id=model_id)
    examples = seed_examples(task) + validated_training_examples(task, retraining_rows(task))
    sources = {"seed": {"file": f"tasks/data/seed_data/{seed_data_path(task).name}"}}
    hp = default_hyperparameters(task)
    hp.epochs = epochs or hp.epochs
    try:
        record = train_model_record(record, examples, data_sources=sources, hp=hp)
    except JobStopped:  # the worker is stopping: the same job goes back on the queue for the next start
        return queue_again(record.pk)
    _take_the_loop(record)
    counts = Counter(ex.source for ex in examples)
    rounds = sorted({ex.round for ex in examples if ex.source == "validated"})
    return (
        f"Retrained {task.code}/{record.name} (model {record.pk}) on {len(examples)} examples "
        f"(seed {counts['seed']}, validated {counts['validated']} from rounds {', '.join(map(str, rounds)) or 'none'}) "
        f"in {record.training_info['duration_s']:.1f}s"
    )


def _take_the_loop(record: MLModel) -> None:
    """Put a freshly trained model in the loop of the round it was requested for
    (``training_info["loop_of_round"]``, set by ``close_round(open_next=True, next_loop="retrained")``),
    replacing the models that held it meanwhile, if that round is still open."""
    round_id = (record.training_info or {}).get("loop_of_round")
    if not round_id:
        return
    with transaction.atomic():
        round = Round.objects.select_for_update().filter(pk=round_id, task_id=record.task_id, status=Round.Status.OPEN).first()
        if round is not None:
            round.target_models.set([record])


def enqueue_retraining(task_id: int, *, model_id: int, job_id: str, epochs: int | None = None) -> None:
    """Put ``retrain_from_validated`` for record ``model_id`` on the ``training`` queue under ``job_id``."""
    import django_rq

    kwargs = {"model_id": model_id} | ({"epochs": epochs} if epochs else {})
    django_rq.get_queue(TRAINING_QUEUE).enqueue(
        retrain_from_validated, args=(task_id,), kwargs=kwargs, job_id=job_id, job_timeout=JOB_TIMEOUT_S,
        description=f"retrain task {task_id} into model {model_id}",
        on_failure=Callback("tasks.loop.recovery.on_training_job_failure"),
    )


def measure_transfer(round_id: int, model_ids: list[int] | None = None) -> str:
    """Measure the transfer of round ``round_id``'s validated examples (``validation.transfer.measure_round``),
    to ``model_ids`` only when given (a model that joined the task); return the one-line summary, e.g.
    ``"sentiment round 1: 40 validated examples, 80 answers run, 40 rated"``."""
    from validation import transfer

    round = Round.objects.select_related("task").filter(pk=round_id).first()
    if round is None:
        return f"round {round_id}: gone, nothing measured"
    return transfer.measure_round(round, model_ids=model_ids).line()
