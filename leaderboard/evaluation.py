"""Evaluation: running a model (or reading its predictions file) on a dataset, and the task's leaderboard cache.

The RQ entry points and the enqueueing are in ``leaderboard/jobs.py``; this module does the
work and never enqueues (the entry points enqueue what these functions return):

1. ``reset_runs(model_id)`` creates or resets one ``EvaluationRun`` per scoring and standard
   dataset (unique per model × dataset, so a rerun replaces) and returns the run ids to enqueue.
2. ``run_evaluation(run_id)`` claims the run with a conditional UPDATE (``queued`` → ``running``,
   bumping ``attempt``); only one worker wins. It predicts in batches through the model
   registry (or reads the predictions file, ``leaderboard/predictions.py``), beating
   ``heartbeat_at`` and ``progress`` as it goes, computes the metrics (the task kind's
   ``task.spec.score``; per tag, robustness and fairness in ``leaderboard/scoring.py``), and
   writes every result **in one transaction at the end**, only if the run still carries its
   attempt (a rerun or requeue in between supersedes it). A failure stores a readable reason.
   A worker that dies leaves the run ``running`` with a stale heartbeat: ``reset_stale_runs``
   puts it back in the queue; nothing half-written is ever visible.
3. ``rebuild_leaderboard(task_id)`` (idempotent) rebuilds the task's ``LeaderboardCache``:
   scores per model and dataset and bootstrap replicates.
"""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from dynabench.errors import RuleError
from dynabench.version import code_version
from leaderboard.bootstrap import ItemResults, bootstrap_performance
from leaderboard.scoring import (
    PERTURBATION_METRICS,
    load_item_results,
    perturbable_counts,
    perturbed_outputs,
    predict,
    robustness_and_fairness,
    serialise,
)
from leaderboard.models import EvaluationRun, EvaluationShard, LeaderboardCache
from leaderboard.predictions import read_predictions_file
from tasks.loop import artefacts, gate
from tasks.metrics.tags import per_tag_metrics
from tasks.models import Dataset, DatasetItem, MLModel, Purpose, Task
from tasks.services import canonical_checksum
from tasks.signals import model_evaluation_finished

Status = EvaluationRun.Status
GiB = 1024**3


def _setting(name, default):
    return getattr(settings, name, default)


def stale_after() -> timedelta:
    return timedelta(seconds=int(_setting("EVALUATION_STALE_AFTER_S", 600)))


def max_attempts() -> int:
    return int(_setting("EVALUATION_MAX_ATTEMPTS", 3))


def bootstrap_resamples() -> int:
    return int(_setting("LEADERBOARD_BOOTSTRAP_RESAMPLES", 1000))


# --- runs of a model -------------------------------------------------------------------


def datasets_to_evaluate(model: MLModel) -> list[Dataset]:
    """The scoring and standard datasets of the model's task; for a predictions file, those it covers.

    A data-centric task's candidate pool (its kind's ``training_pool``) is training data, never evaluated.

    A predictions file always covers the scoring datasets (checked on upload); a standard
    dataset is evaluated only when the file has a prediction for each of its items.
    """
    task = model.task
    datasets = list(
        Dataset.objects.filter(task_id=model.task_id, access__in=[Dataset.Access.SCORING, Dataset.Access.STANDARD])
        .exclude(name=task.spec.training_pool(task.config) or "")
        .order_by("pk")
    )
    if not model.is_predictions:
        return datasets
    covered = {dataset for dataset, _ in read_predictions_file(model)}
    return [d for d in datasets if d.access == Dataset.Access.SCORING or d.name in covered]


_RESET = dict(
    status=Status.QUEUED, progress=0.0, error="", job_id="", n_examples=None, performance=None, metrics={}, per_tag={},
    throughput=None, memory_gib=None, robustness=None, fairness=None, predictions_file="", item_results=None, metric_signatures={},
    started_at=None, finished_at=None, heartbeat_at=None,
)


def reset_runs(model_id: int) -> tuple[str, list[int]]:
    """Create or reset the model's evaluation runs; return a one-line summary and the queued run ids.

    Reruns replace: each (model, dataset) has one run, reset to ``queued`` with its scores
    cleared; a worker still busy with the old attempt will find its results refused. A predictions
    file with nothing to evaluate is marked ``failed`` with the reason (no run ids); a runnable model
    of a task with no dataset yet stays ``uploaded`` (``scheduling.schedule_model``).
    """
    model = MLModel.objects.select_related("task").get(pk=model_id)
    try:
        datasets = datasets_to_evaluate(model)
    except (OSError, ValueError) as error:
        MLModel.objects.filter(pk=model_id).update(status=MLModel.Status.FAILED, failure_reason=f"The predictions file cannot be read: {error}")
        return f"model {model_id}: failed, predictions file unreadable", []
    if not datasets and not model.is_predictions:  # a runnable model: the task has no dataset yet
        MLModel.objects.filter(pk=model_id).update(status=MLModel.Status.UPLOADED, progress=0.0, failure_reason="")
        return f"model {model_id}: no datasets to evaluate on yet (scored when the task gets one)", []
    if not datasets:
        MLModel.objects.filter(pk=model_id).update(
            status=MLModel.Status.FAILED, progress=0.0,
            failure_reason=f"The task '{model.task.code}' has no scoring or standard datasets to evaluate on yet.",
        )
        return f"model {model_id}: no datasets to evaluate on", []
    run_ids = []
    with transaction.atomic():
        for dataset in datasets:
            run, _ = EvaluationRun.objects.get_or_create(model=model, dataset=dataset)
            if run.dataset_version is not None and run.dataset_version != dataset.version:
                archive_and_reset(run, dataset_version=dataset.version)
            EvaluationRun.objects.filter(pk=run.pk).update(**_RESET, queued_at=timezone.now(), dataset_version=dataset.version)
            run_ids.append(run.pk)
        MLModel.objects.filter(pk=model_id).update(status=MLModel.Status.QUEUED, progress=0.0, failure_reason="")
    return f"model {model_id} ({model.name}): {len(run_ids)} evaluation runs queued", run_ids


SCORE_FIELDS = ("n_examples", "performance", "metrics", "throughput", "memory_gib", "robustness", "fairness")  # kept in history (aggregates only)


def archive_and_reset(run: EvaluationRun, *, dataset_version: int) -> bool:
    """Move ``run``'s scores to its ``history`` (they belong to an earlier dataset version) and
    queue it again for ``dataset_version``; return False when another caller did it first.

    Only a finished (done or failed) run is archived; a queued or running run of an earlier
    version is just re-targeted (the fencing ``attempt`` makes a worker still busy with it
    discard its results). The predictions file of the old version is kept under its version.
    """
    history = list(run.history or [])
    if run.status == Status.DONE:
        entry = {name: getattr(run, name) for name in SCORE_FIELDS}
        entry.update(
            dataset_version=run.dataset_version, dataset_checksum=run.dataset_checksum, model_checksum=run.model_checksum,
            code_version=run.code_version, finished_at=run.finished_at.isoformat() if run.finished_at else None,
            predictions_file=run.predictions_file,
        )
        history.append(entry)
    updated = EvaluationRun.objects.filter(pk=run.pk, attempt=run.attempt, dataset_version=run.dataset_version).update(
        **_RESET, queued_at=timezone.now(), dataset_version=dataset_version, history=history,
    )
    if updated:
        run.refresh_from_db()
    return bool(updated)


def reset_stale_runs(*, now=None, run_ids=None, reason: str | None = None) -> tuple[str, list[int]]:
    """Reset runs left ``running`` by a worker that stopped beating to ``queued`` (or fail them after
    the last attempt); return a one-line summary and the ids of the runs to enqueue again.

    A run is stale when its ``heartbeat_at`` is older than ``settings.EVALUATION_STALE_AFTER_S``
    (default 600 s); ``run_ids`` names runs known dead (RQ reported their job failed or
    abandoned), whatever their heartbeat, with ``reason`` as the note. Sharded runs are
    recovered shard by shard (``leaderboard/sharding.py``), never here.
    """
    now = now or timezone.now()
    sharded = EvaluationShard.objects.filter(run=OuterRef("pk"), run_attempt=OuterRef("attempt"))
    stale = EvaluationRun.objects.filter(status=Status.RUNNING).exclude(Exists(sharded))
    stale = stale.filter(pk__in=run_ids) if run_ids is not None else stale.filter(heartbeat_at__lt=now - stale_after())
    requeued, failed = [], 0
    for run in stale.select_related("model"):
        note = reason or f"The worker stopped responding (last heartbeat {run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC)."
        if run.attempt >= max_attempts():
            with transaction.atomic():
                done = EvaluationRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempt=run.attempt).update(
                    status=Status.FAILED, error=f"{note} Gave up after {run.attempt} attempts.", finished_at=now,
                )
                if done:
                    failed += 1
                    refresh_model_status(run.model_id)
            continue
        reset = {**_RESET, "error": f"{note} Re-queued."}
        if EvaluationRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempt=run.attempt).update(**reset):
            requeued.append(run.pk)
    return f"{len(requeued)} stale runs re-queued, {failed} failed after {max_attempts()} attempts", requeued


# --- one run ---------------------------------------------------------------------------


class PeakMemory:
    """Peak resident memory of this process (GiB) while the block runs, sampled every 20 ms.

    On CUDA the peak of ``torch.cuda.max_memory_allocated`` is reported instead. The figure
    is the whole worker process (Python, Django, every cached model), as on Dynabench,
    where the evaluation container's memory was measured.
    """

    def __init__(self, interval: float = 0.02):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096

    def _rss(self) -> int:
        try:
            with open("/proc/self/statm") as fh:
                return int(fh.read().split()[1]) * self._page
        except OSError:
            import resource

            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    def _watch(self):
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self._rss())

    def __enter__(self):
        self.peak = self._rss()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._rss())

    @property
    def gib(self) -> float:
        try:
            import torch

            if torch.cuda.is_available() and torch.cuda.max_memory_allocated() > 0:
                return torch.cuda.max_memory_allocated() / GiB
        except Exception:  # noqa: BLE001 - torch without CUDA support
            pass
        return self.peak / GiB


class _Beat:
    """Writes progress and the heartbeat on the run, at most every ``every`` seconds, for one attempt."""

    def __init__(self, run_id: int, attempt: int, every: float = 1.0):
        self.run_id, self.attempt, self.every, self.last = run_id, attempt, every, 0.0

    def __call__(self, progress: float, *, force: bool = False):
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            EvaluationRun.objects.filter(pk=self.run_id, attempt=self.attempt, status=Status.RUNNING).update(
                progress=round(min(max(progress, 0.0), 0.99), 4), heartbeat_at=timezone.now()
            )


def dataset_items(dataset_id: int, first: int | None = None, last: int | None = None) -> list[dict]:
    """The dataset's items (``pk``, ``uid``, ``input``, ``target``, ``tag``, ``metadata``) in id order,
    optionally only ids ``first..last`` (inclusive, a shard's range)."""
    queryset = DatasetItem.objects.filter(dataset_id=dataset_id)
    if first is not None:
        queryset = queryset.filter(pk__gte=first, pk__lte=last)
    return list(queryset.order_by("pk").values("pk", "uid", "input", "target", "tag", "metadata"))


def store_predictions(run: EvaluationRun, attempt: int, lines) -> str:
    """Write the run's raw predictions (an iterable of JSON-able dicts) through the storage; return its name.

    The name carries the dataset version (after the first), the run and its attempt
    (``evaluations/<model>/<dataset>[.v<version>]-<run>-a<attempt>.jsonl``), so an attempt never
    overwrites the file another attempt's row or the run's ``history`` points to.
    """
    body = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    version = f".v{run.dataset_version}" if (run.dataset_version or 1) != 1 else ""
    name = f"evaluations/{run.model_id}/{run.dataset.name}{version}-{run.pk}-a{attempt}.jsonl"
    target = artefacts.storage()
    if target.exists(name):
        target.delete(name)
    return target.save(name, ContentFile(body))


def endpoint_latency(outputs: list[dict]) -> dict:
    """``{"latency_ms_p50", "latency_ms_p95", "endpoint_calls", "endpoint_tokens"}`` over the outputs of an
    endpoint model that were asked in this run or an earlier attempt (their ``endpoint`` record: latency
    measured by the platform per call, retries included); {} for other models."""
    calls = [o["endpoint"] for o in outputs if isinstance(o.get("endpoint"), dict)]
    if not calls:
        return {}
    latencies = np.array([c.get("latency_ms") or 0.0 for c in calls], dtype=float)
    tokens = sum((c.get("prompt_tokens") or 0) + (c.get("completion_tokens") or 0) for c in calls)
    return {"latency_ms_p50": round(float(np.percentile(latencies, 50)), 3),
            "latency_ms_p95": round(float(np.percentile(latencies, 95)), 3), "endpoint_calls": len(calls),
            "endpoint_tokens": int(tokens)}


def score_outputs(run: EvaluationRun, attempt: int, items: list[dict], outputs: list[dict], *, robust=None, fair=None,
                  **measured) -> dict:
    """Score the model's ``outputs`` on ``items`` (the task kind's ``spec.score``, per tag; robustness and
    fairness, ``scoring.robustness_and_fairness``), store the predictions file, and return the run's
    fields to write plus the stored file's name.

    ``robust``, ``fair``: the outputs of each item's variants (``scoring.perturbed_outputs``); None for a
    predictions file, which has no robustness or fairness. ``measured``: ``throughput``, ``memory_gib``
    (None for a predictions file), ``inferences`` and ``wall_seconds``. ``metrics["perturbed_items"]``
    records how many items have a robustness and a fairness variant (0: not applicable on this dataset).
    """
    task, spec = run.model.task, run.model.task.spec
    scores = spec.score(task.config, items, outputs)
    robustness, fairness = robustness_and_fairness(task, items, outputs, robust, fair, scores) if robust is not None else (None, None)
    metrics = scores.metrics()
    metrics["wall_seconds"] = round(measured.pop("wall_seconds"), 3)
    metrics["inferences"] = measured.pop("inferences")
    dataset_checksum, _ = canonical_checksum((i["uid"], i["input"], i["target"], i["tag"]) for i in items)
    metrics["perturbed_items"] = perturbable_counts(task, items, dataset_checksum=dataset_checksum)  # 0: not applicable here
    metrics.update(endpoint_latency(outputs))
    name = store_predictions(run, attempt, (
        {"uid": item["uid"], "prediction": output, "target": item["target"], spec.score_key: score}
        for item, output, score in zip(items, outputs, scores.per_item)
    ))
    return {
        "fields": dict(
            n_examples=len(items), performance=metrics[task.config["perf_metric"]], metrics=metrics,
            per_tag=per_tag_metrics(items, scores), item_results=serialise(scores.item_results), **measured,
            robustness=robustness, fairness=fairness,
            metric_signatures=scores.signatures, dataset_checksum=dataset_checksum, model_checksum=run.model.checksum,
            code_version=code_version(),
        ),
        "file": name,
    }


def _evaluate(run: EvaluationRun, beat) -> dict:
    """Compute every score of ``run`` (its current ``attempt``); return the fields to write and the stored predictions file's name."""
    model, dataset, task = run.model, run.dataset, run.model.task
    items = dataset_items(dataset.pk)
    if not items:
        raise RuleError("empty_dataset", f"The dataset '{dataset.name}' has no items.")
    spec = task.spec
    inputs = [spec.model_input(task.config, item["input"]) for item in items]
    throughput = memory = robust = fair = None
    inferences = len(items)
    started = time.perf_counter()
    if model.is_predictions:
        stored = read_predictions_file(model)
        key = spec.prediction_field
        missing = [item["uid"] for item in items if (dataset.name, item["uid"]) not in stored]
        if missing:
            raise RuleError("incomplete_predictions", f"The predictions file has no prediction for {len(missing)} items of {dataset.name} (e.g. {', '.join(missing[:5])}).")
        outputs = [{key: stored[(dataset.name, item["uid"])]} for item in items]
        beat(0.9, force=True)
    else:
        from tasks.loop.registry import get_predictor

        predictor = get_predictor(model)
        with gate.admit(model, Purpose.EVALUATION), PeakMemory() as peak:
            outputs, seconds = predict(predictor, inputs, beat, 0.0, 0.6)
            robust, fair, extra = perturbed_outputs(task, predictor, items, inputs, beat)
        inferences += extra
        throughput = len(items) / seconds if seconds > 0 else None
        # A model behind an endpoint runs elsewhere: its memory is not measured (None, the Dynascore's
        # missing-metric rule applies as for a predictions file); throughput is the platform's view.
        memory = peak.gib if getattr(predictor, "measures_memory", True) else None
    return score_outputs(
        run, run.attempt, items, outputs, robust=robust, fair=fair, throughput=throughput, memory_gib=memory,
        inferences=inferences, wall_seconds=time.perf_counter() - started,
    )


def refresh_model_status(model_id: int) -> None:
    """Set the model's status and progress from its runs (call inside the transaction that changed them)."""
    model = MLModel.objects.select_for_update().get(pk=model_id)
    runs = list(EvaluationRun.objects.filter(model_id=model_id).select_related("dataset").values("status", "progress", "error", "dataset__name"))
    if not runs:
        return
    statuses = {r["status"] for r in runs}
    progress = sum(1.0 if r["status"] in (Status.DONE, Status.FAILED) else r["progress"] for r in runs) / len(runs)
    failures = [f"{r['dataset__name']}: {r['error']}" for r in runs if r["status"] == Status.FAILED]
    if statuses & {Status.QUEUED, Status.RUNNING}:
        status, reason = (MLModel.Status.EVALUATING if Status.RUNNING in statuses or progress > 0 else MLModel.Status.QUEUED), ""
    elif failures:
        status, reason = MLModel.Status.FAILED, "Evaluation failed on " + "; ".join(failures)
    else:
        status, reason = MLModel.Status.EVALUATED, ""
    MLModel.objects.filter(pk=model.pk).update(status=status, progress=round(progress, 4), failure_reason=reason[:5000], updated_at=timezone.now())
    if status != model.status and status in (MLModel.Status.EVALUATED, MLModel.Status.FAILED):
        transaction.on_commit(lambda: model_evaluation_finished.send(
            sender=MLModel, model_id=model.pk, status=str(status), reason=reason[:5000],
        ))


def claim_run(run_id: int) -> EvaluationRun | None:
    """Claim a queued run for this worker (``queued`` → ``running``, ``attempt`` bumped); None when
    another worker has it or it is no longer queued. Only one caller wins."""
    now = timezone.now()
    claimed = EvaluationRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
        status=Status.RUNNING, attempt=F("attempt") + 1, started_at=now, heartbeat_at=now, progress=0.0, error=""
    )
    if claimed != 1:
        return None
    run = EvaluationRun.objects.select_related("model__task", "dataset").get(pk=run_id)
    with transaction.atomic():
        refresh_model_status(run.model_id)
    return run


def fail_run(run: EvaluationRun, attempt: int, reason: str) -> bool:
    """Mark the run's ``attempt`` failed with ``reason`` (if still running) and refresh its model's status."""
    with transaction.atomic():
        done = EvaluationRun.objects.filter(pk=run.pk, attempt=attempt, status=Status.RUNNING).update(
            status=Status.FAILED, error=reason[:5000], finished_at=timezone.now(), heartbeat_at=timezone.now()
        )
        refresh_model_status(run.model_id)
    return bool(done)


def _earlier_attempt_files(name: str) -> set[str]:
    """Stored predictions files of the other attempts of the run that wrote ``name`` (same folder, same
    ``<dataset>[.v<version>]-<run>-a`` prefix)."""
    folder, _, base = name.rpartition("/")
    prefix = base.rpartition("-a")[0] + "-a"
    try:
        _, files = artefacts.storage().listdir(folder)
    except (FileNotFoundError, NotImplementedError):
        return set()
    return {f"{folder}/{f}" for f in files if f.startswith(prefix) and f"{folder}/{f}" != name}


def finish_run(run: EvaluationRun, attempt: int, outcome: dict) -> bool:
    """Write the scores of the run's ``attempt`` in one transaction, only if the run still carries that
    attempt; return whether they were written (a superseded attempt's file is deleted)."""
    previous, history = EvaluationRun.objects.filter(pk=run.pk).values_list("predictions_file", "history").first() or ("", [])
    archived = {entry.get("predictions_file") for entry in history or []}
    with transaction.atomic():
        written = EvaluationRun.objects.filter(pk=run.pk, attempt=attempt, status=Status.RUNNING).update(
            **outcome["fields"], status=Status.DONE, progress=1.0, error="", finished_at=timezone.now(),
            heartbeat_at=timezone.now(), predictions_file=outcome["file"],
        )
        if written:
            refresh_model_status(run.model_id)
            stale = {previous} if previous else set()
            stale |= _earlier_attempt_files(outcome["file"])
            stale -= archived | {outcome["file"]}
            transaction.on_commit(lambda: [artefacts.storage().delete(name) for name in stale])
    if not written:
        artefacts.storage().delete(outcome["file"])
    return bool(written)


def failure_reason(error: BaseException) -> str:
    """A readable reason for a failed run or shard: a ``RuleError``'s message, else the exception's type and text."""
    return error.message if isinstance(error, RuleError) else f"{type(error).__name__}: {error}"


def run_evaluation(run_id: int) -> tuple[str, int | None]:
    """Evaluate one model on one dataset (see the module docstring).

    Returns a one-line summary and the id of the task whose leaderboard must be recomputed
    once the results are committed (None when nothing was written).
    """
    run = claim_run(run_id)
    if run is None:
        status = EvaluationRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        return f"run {run_id}: not queued ({status or 'missing'}), skipped", None
    return evaluate_claimed(run)


def evaluate_claimed(run: EvaluationRun) -> tuple[str, int | None]:
    """Evaluate a run this worker has claimed (``claim_run``) in one piece; see ``run_evaluation``."""
    attempt = run.attempt
    label = f"run {run.pk} ({run.model.name} on {run.dataset.name})"
    try:
        outcome = _evaluate(run, _Beat(run.pk, attempt))
    except Exception as error:  # noqa: BLE001 - every failure is stored with a readable reason
        reason = failure_reason(error)
        fail_run(run, attempt, reason)
        return f"{label}: failed: {reason}", run.model.task_id
    if not finish_run(run, attempt, outcome):
        return f"{label}: superseded by a newer attempt, results discarded", None
    fields = outcome["fields"]
    return f"{label}: done, performance {fields['performance']:.4f} on {fields['n_examples']} items", run.model.task_id


# --- the leaderboard cache -------------------------------------------------------------

PERCENT_METRICS = ("performance", "robustness", "fairness")


def _applicable(run: EvaluationRun, model: MLModel) -> dict[str, bool]:
    """``{metric: whether it can be measured on the run's dataset}`` for robustness and fairness, as far
    as this finished run tells: its recorded ``perturbed_items`` counts (0: not applicable), or, for
    runs scored before they were recorded, a model (not a predictions file) whose consistency score is
    None (``metrics.consistency`` gives None only when no item has a variant). Empty when unknown."""
    counts = (run.metrics or {}).get("perturbed_items")
    if isinstance(counts, dict):
        return {m: int(counts.get(m) or 0) > 0 for m in PERTURBATION_METRICS if m in counts}
    if model.is_predictions:
        return {}
    return {m: getattr(run, m) is not None for m in PERTURBATION_METRICS}


def rebuild_leaderboard(task_id: int) -> str:
    """Rebuild the task's ``LeaderboardCache`` from its evaluation runs (idempotent).

    Stores, per model with at least one run on a scoring dataset (published or not: the page
    filters on the live flags), its scores per scoring dataset (performance, robustness and
    fairness in percent, throughput in examples/s, memory in GiB) and run statuses, plus
    paired bootstrap replicates of performance (``settings.LEADERBOARD_BOOTSTRAP_RESAMPLES``,
    default 1,000), and per dataset the metrics that are **not applicable** there
    (:func:`_applicable`). Returns a one-line summary.
    """
    task = Task.objects.get(pk=task_id)
    datasets = list(Dataset.objects.filter(task=task, access=Dataset.Access.SCORING).select_related("round").order_by("round__number", "name"))
    runs = (
        EvaluationRun.objects.filter(dataset__in=datasets)
        .select_related("model", "model__owner", "dataset")
        .order_by("model_id", "dataset_id")
    )
    rows: dict[int, dict] = {}
    items: dict[int, dict[int, ItemResults]] = {d.pk: {} for d in datasets}
    applicability: dict[int, dict[str, set]] = {d.pk: {"yes": set(), "no": set()} for d in datasets}
    for run in runs:
        model = run.model
        row = rows.setdefault(model.pk, {
            "id": model.pk, "name": model.name, "owner": model.owner.username if model.owner else "",
            "kind": model.kind, "status": model.status, "scores": {}, "runs": {},
        })
        current = run.dataset_version is None or run.dataset_version == run.dataset.version
        row["runs"][str(run.dataset_id)] = {"status": run.status if current else "stale", "progress": run.progress}
        if run.status != Status.DONE or run.performance is None or not current:
            continue
        for metric, applies in _applicable(run, model).items():
            applicability[run.dataset_id]["yes" if applies else "no"].add(metric)
        row["scores"][str(run.dataset_id)] = {
            "performance": 100 * run.performance,
            "throughput": run.throughput,
            "memory": run.memory_gib,
            "robustness": None if run.robustness is None else 100 * run.robustness,
            "fairness": None if run.fairness is None else 100 * run.fairness,
        }
        results = load_item_results(run.item_results)
        if results is not None and len(results) == run.n_examples:
            items[run.dataset_id][model.pk] = results
    model_ids = list(rows)
    replicates = bootstrap_performance(
        items, models=model_ids, datasets=[d.pk for d in datasets], perf_metric=task.config["perf_metric"],
        n_resamples=bootstrap_resamples(), seed=task.pk,
    ) if model_ids and datasets else np.zeros((0, len(model_ids), len(datasets)))
    LeaderboardCache.objects.update_or_create(task=task, defaults={
        "rows": list(rows.values()),
        "datasets": [
            {"id": d.pk, "name": d.name, "round": d.round.number if d.round else None, "weight": d.weight,
             "not_applicable": sorted(applicability[d.pk]["no"] - applicability[d.pk]["yes"])}
            for d in datasets
        ],
        "replicates": serialise(replicates.astype(np.float32)),
    })
    return f"leaderboard of {task.code}: {len(rows)} models × {len(datasets)} scoring datasets, {replicates.shape[0]} bootstrap resamples"
