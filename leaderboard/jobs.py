"""RQ jobs of the leaderboard: evaluate a model on every dataset, recompute a task's leaderboard.

Jobs are plain functions that return a one-line summary; RQ runs them (queue ``evaluation``
for evaluations, ``default`` for the leaderboard), ``manage.py evaluate_model`` runs them
inline, tests call them directly. Their state lives on our own rows:

1. ``evaluate_model(model_id)`` creates or resets one ``EvaluationRun`` per scoring and
   standard dataset (unique per model × dataset, so a rerun replaces) and enqueues
   ``evaluate_run`` for each once the transaction commits.
2. ``evaluate_run(run_id)`` claims the run with a conditional UPDATE (``queued`` → ``running``,
   bumping ``attempt``); only one worker wins. It predicts in batches through the model
   registry (or reads the predictions file), beating ``heartbeat_at`` and ``progress`` as it
   goes, computes the metrics, and writes every result **in one transaction at the end**,
   only if the run still carries its attempt (a rerun or requeue in between supersedes it).
   A failure stores a readable reason. A worker that dies leaves the run ``running`` with a
   stale heartbeat: ``requeue_stale_runs`` (``manage.py requeue_stale_runs``) puts it back in
   the queue; nothing half-written is ever visible.
3. After each run, ``recompute_leaderboard(task_id)`` (idempotent) rebuilds the task's
   ``LeaderboardCache``: scores per model and dataset and bootstrap replicates.
"""

from __future__ import annotations

import io
import json
import math
import os
import tempfile
import threading
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from dynabench.errors import RuleError
from leaderboard.calculations import ItemResults, bootstrap_performance
from leaderboard.models import EvaluationRun, LeaderboardCache
from leaderboard.perturbations import fairness_variant, robustness_variant
from tasks.config import normalise_label
from tasks.metrics import best_over_ground_truths, squad_exact_match, squad_f1
from tasks.models import Dataset, DatasetItem, MLModel, Task

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


# --- enqueueing --------------------------------------------------------------------------


def _queue(name: str):
    import django_rq

    return django_rq.get_queue(name)


def enqueue_evaluation(model_id: int) -> None:
    """Put ``evaluate_model(model_id)`` on the ``evaluation`` queue."""
    _queue("evaluation").enqueue(evaluate_model, model_id)


def enqueue_run(run_id: int) -> None:
    """Put ``evaluate_run(run_id)`` on the ``evaluation`` queue and remember the job id on the run."""
    job = _queue("evaluation").enqueue(evaluate_run, run_id)
    EvaluationRun.objects.filter(pk=run_id, status=Status.QUEUED).update(job_id=str(job.id)[:64])


def enqueue_recompute(task_id: int) -> None:
    """Put ``recompute_leaderboard(task_id)`` on the ``default`` queue."""
    _queue("default").enqueue(recompute_leaderboard, task_id)


# --- evaluate_model ----------------------------------------------------------------------


def datasets_to_evaluate(model: MLModel) -> list[Dataset]:
    """The scoring and standard datasets of the model's task; for a predictions file, those it covers.

    A predictions file always covers the scoring datasets (checked on upload); a standard
    dataset is evaluated only when the file has a prediction for each of its items.
    """
    datasets = list(Dataset.objects.filter(task_id=model.task_id, access__in=[Dataset.Access.SCORING, Dataset.Access.STANDARD]).order_by("pk"))
    if model.kind != MLModel.Kind.PREDICTIONS:
        return datasets
    from leaderboard.services import read_predictions_file

    covered = {dataset for dataset, _ in read_predictions_file(model)}
    return [d for d in datasets if d.access == Dataset.Access.SCORING or d.name in covered]


_RESET = dict(
    status=Status.QUEUED, progress=0.0, error="", job_id="", n_examples=None, performance=None, metrics={}, per_tag={},
    throughput=None, memory_gib=None, robustness=None, fairness=None, predictions_file="", item_results=None,
    started_at=None, finished_at=None, heartbeat_at=None,
)


def evaluate_model(model_id: int, *, enqueue: bool = True) -> str:
    """Create or reset the model's evaluation runs and enqueue one job per dataset.

    ``enqueue=False`` leaves the runs queued for the caller to run (``manage.py evaluate_model --inline``).

    Reruns replace: each (model, dataset) has one run, reset to ``queued`` with its scores
    cleared; a worker still busy with the old attempt will find its results refused.
    Returns a one-line summary.
    """
    model = MLModel.objects.select_related("task").get(pk=model_id)
    try:
        datasets = datasets_to_evaluate(model)
    except (OSError, ValueError) as error:
        MLModel.objects.filter(pk=model_id).update(status=MLModel.Status.FAILED, failure_reason=f"The predictions file cannot be read: {error}")
        return f"model {model_id}: failed, predictions file unreadable"
    if not datasets:
        MLModel.objects.filter(pk=model_id).update(
            status=MLModel.Status.FAILED, progress=0.0,
            failure_reason=f"The task '{model.task.code}' has no scoring or standard datasets to evaluate on yet.",
        )
        return f"model {model_id}: no datasets to evaluate on"
    run_ids = []
    with transaction.atomic():
        for dataset in datasets:
            run, _ = EvaluationRun.objects.get_or_create(model=model, dataset=dataset)
            EvaluationRun.objects.filter(pk=run.pk).update(**_RESET, queued_at=timezone.now())
            run_ids.append(run.pk)
        MLModel.objects.filter(pk=model_id).update(status=MLModel.Status.QUEUED, progress=0.0, failure_reason="")
        if enqueue:
            transaction.on_commit(lambda: [enqueue_run(pk) for pk in run_ids])
    return f"model {model_id} ({model.name}): {len(run_ids)} evaluation runs queued"


def requeue_stale_runs(*, now=None) -> str:
    """Re-queue runs left ``running`` by a worker that stopped beating (or fail them after the last attempt).

    A run is stale when its ``heartbeat_at`` is older than ``settings.EVALUATION_STALE_AFTER_S``
    (default 600 s). Returns a one-line summary.
    """
    now = now or timezone.now()
    stale = EvaluationRun.objects.filter(status=Status.RUNNING, heartbeat_at__lt=now - stale_after())
    requeued, failed = [], 0
    for run in stale.select_related("model"):
        note = f"The worker stopped responding (last heartbeat {run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC)."
        if run.attempt >= max_attempts():
            with transaction.atomic():
                done = EvaluationRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempt=run.attempt).update(
                    status=Status.FAILED, error=f"{note} Gave up after {run.attempt} attempts.", finished_at=now,
                )
                if done:
                    failed += 1
                    _refresh_model_status(run.model_id)
            continue
        reset = {**_RESET, "error": f"{note} Re-queued."}
        if EvaluationRun.objects.filter(pk=run.pk, status=Status.RUNNING, attempt=run.attempt).update(**reset):
            requeued.append(run.pk)
    for pk in requeued:
        transaction.on_commit(lambda pk=pk: enqueue_run(pk))
    return f"{len(requeued)} stale runs re-queued, {failed} failed after {max_attempts()} attempts"


# --- evaluate_run ------------------------------------------------------------------------


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


def _predict(predictor, inputs: list[dict], beat, start: float, span: float) -> tuple[list[dict], float]:
    """Predict ``inputs`` in large chunks (the registry batches and length-sorts inside); return outputs, seconds."""
    outputs: list[dict] = []
    chunk = max(512, math.ceil(len(inputs) / 10))
    elapsed = 0.0
    for i in range(0, len(inputs), chunk):
        t0 = time.perf_counter()
        outputs.extend(predictor.predict(inputs[i:i + chunk]))
        elapsed += time.perf_counter() - t0
        beat(start + span * min(1.0, (i + chunk) / max(len(inputs), 1)))
    return outputs, elapsed


def _gold_label(task: Task, item: dict) -> str:
    label = normalise_label(task.config, (item["target"] or {}).get("label"))
    if label is None:
        raise RuleError("bad_item", f"Item {item['uid']} of the dataset has no valid gold label ({item['target']!r}).")
    return label


def _classification_metrics(gold: list[str], predicted: list[str | None]) -> dict:
    from sklearn.metrics import accuracy_score, f1_score

    pred = [p if p is not None else "" for p in predicted]
    return {
        "accuracy": float(accuracy_score(gold, pred)),
        "macro_f1": float(f1_score(gold, pred, average="macro", zero_division=0)),
        "n": len(gold),
    }


def _qa_item_scores(answers: list[str], item_targets: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    f1, em = [], []
    for answer, target in zip(answers, item_targets):
        truths = [a.get("text", "") for a in (target or {}).get("answers", [])]
        f1.append(best_over_ground_truths(squad_f1, answer or "", truths))
        em.append(best_over_ground_truths(squad_exact_match, answer or "", truths))
    return np.array(f1, dtype=float), np.array(em, dtype=float)


def _qa_metrics(f1: np.ndarray, em: np.ndarray) -> dict:
    return {"squad_f1": float(f1.mean()) if len(f1) else 0.0, "exact_match": float(em.mean()) if len(em) else 0.0, "n": int(len(f1))}


def _item_tags(item: dict) -> set[str]:
    tags = {item.get("tag") or ""}
    extra = (item.get("metadata") or {}).get("tags") or []
    if isinstance(extra, list):
        tags |= {str(t) for t in extra}
    tags.discard("")
    return tags


def _consistency(task: Task, original: list[dict], perturbed: list[dict]) -> float | None:
    """The perf metric of ``perturbed`` outputs measured against the ``original`` outputs (0..1)."""
    if not perturbed:
        return None
    if task.kind == "classification":
        metrics = _classification_metrics([o["label"] for o in original], [p["label"] for p in perturbed])
        return metrics[task.config["perf_metric"]]
    scores = [squad_f1(p.get("answer") or "", o.get("answer") or "") for o, p in zip(original, perturbed)]
    return float(np.mean(scores))


def _perturbation_scores(task, predictor, items, inputs, outputs, beat) -> tuple[float | None, float | None, int]:
    """Robustness and fairness (Dynaboard consistency) over items that have a perturbation."""
    fields = list(task.config["model_inputs"])
    if task.kind == "extractive_qa":
        fields = fields[:1]  # perturb the question; the passage's offsets must stay valid
    scores = []
    inferences = 0
    for index, make in enumerate((lambda f, k: (robustness_variant(f, key=k) or (None, None))[1], lambda f, k: fairness_variant(f, key=k))):
        which, batch = [], []
        for i, (item, inp) in enumerate(zip(items, inputs)):
            variant = make({f: inp.get(f, "") for f in fields}, item["uid"])
            if variant is not None:
                which.append(i)
                batch.append({**inp, **variant})
        perturbed, _ = _predict(predictor, batch, beat, 0.6 + 0.2 * index, 0.2) if batch else ([], 0.0)
        inferences += len(batch)
        scores.append(_consistency(task, [outputs[i] for i in which], perturbed))
    return scores[0], scores[1], inferences


def _serialise(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def load_item_results(data, *, kind: str) -> ItemResults | None:
    """Return the ``ItemResults`` stored on a run (``EvaluationRun.item_results``), or None."""
    if not data:
        return None
    array = np.load(io.BytesIO(bytes(data)), allow_pickle=False)
    if kind == "classification":
        return ItemResults(gold=array[0].astype(int), predicted=array[1].astype(int))
    return ItemResults(values=array.astype(float))


def _evaluate(run: EvaluationRun, beat) -> dict:
    """Compute every score of ``run``; return the fields to write and the temporary predictions file."""
    model, dataset, task = run.model, run.dataset, run.model.task
    items = list(DatasetItem.objects.filter(dataset=dataset).order_by("pk").values("pk", "uid", "input", "target", "tag", "metadata"))
    if not items:
        raise RuleError("empty_dataset", f"The dataset '{dataset.name}' has no items.")
    fields = list(task.config["model_inputs"])
    inputs = [{f: (item["input"] or {}).get(f, "") for f in fields} for item in items]
    throughput = memory = robustness = fairness = None
    inferences = len(items)
    started = time.perf_counter()
    if model.kind == MLModel.Kind.PREDICTIONS:
        from leaderboard.services import read_predictions_file

        stored = read_predictions_file(model)
        key = "label" if task.kind == "classification" else "answer"
        missing = [item["uid"] for item in items if (dataset.name, item["uid"]) not in stored]
        if missing:
            raise RuleError("incomplete_predictions", f"The predictions file has no prediction for {len(missing)} items of {dataset.name} (e.g. {', '.join(missing[:5])}).")
        outputs = [{key: stored[(dataset.name, item["uid"])]} for item in items]
        beat(0.9, force=True)
    else:
        from tasks.registry import get_predictor

        predictor = get_predictor(model)
        with PeakMemory() as peak:
            outputs, seconds = _predict(predictor, inputs, beat, 0.0, 0.6)
            robustness, fairness, extra = _perturbation_scores(task, predictor, items, inputs, outputs, beat)
        inferences += extra
        throughput = len(items) / seconds if seconds > 0 else None
        memory = peak.gib
    wall = time.perf_counter() - started

    per_tag: dict[str, dict] = {}
    by_tag: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        for tag in _item_tags(item):
            by_tag.setdefault(tag, []).append(i)
    if task.kind == "classification":
        gold = [_gold_label(task, item) for item in items]
        predicted = [o.get("label") for o in outputs]
        metrics = _classification_metrics(gold, predicted)
        for tag, rows in sorted(by_tag.items()):
            per_tag[tag] = _classification_metrics([gold[i] for i in rows], [predicted[i] for i in rows])
        codes = {label: i for i, label in enumerate(task.labels)}
        item_results = np.array([[codes[g] for g in gold], [codes.get(p, -1) for p in predicted]], dtype=np.int16)
        correctness = [g == p for g, p in zip(gold, predicted)]
    else:
        f1, em = _qa_item_scores([o.get("answer") for o in outputs], [item["target"] for item in items])
        metrics = _qa_metrics(f1, em)
        for tag, rows in sorted(by_tag.items()):
            per_tag[tag] = _qa_metrics(f1[rows], em[rows])
        item_results = f1.astype(np.float32)
        correctness = list(f1)
    metrics["wall_seconds"] = round(wall, 3)
    metrics["inferences"] = inferences

    directory = Path(settings.MEDIA_ROOT) / "evaluations" / str(model.pk)
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".run-", suffix=".jsonl", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        for item, output, score in zip(items, outputs, correctness):
            score_key = "correct" if task.kind == "classification" else "squad_f1"
            fh.write(json.dumps({"uid": item["uid"], "prediction": output, "target": item["target"], score_key: score}, ensure_ascii=False) + "\n")
    return {
        "fields": dict(
            n_examples=len(items), performance=metrics[task.config["perf_metric"]], metrics=metrics, per_tag=per_tag,
            throughput=throughput, memory_gib=memory, robustness=robustness, fairness=fairness,
            item_results=_serialise(item_results),
        ),
        "tmp_file": Path(tmp),
        "final_file": directory / f"{dataset.name}.jsonl",
    }


def _refresh_model_status(model_id: int) -> None:
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


def evaluate_run(run_id: int) -> str:
    """Evaluate one model on one dataset (see the module docstring); return a one-line summary."""
    now = timezone.now()
    claimed = EvaluationRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
        status=Status.RUNNING, attempt=F("attempt") + 1, started_at=now, heartbeat_at=now, progress=0.0, error=""
    )
    if claimed != 1:
        status = EvaluationRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
        return f"run {run_id}: not queued ({status or 'missing'}), skipped"
    run = EvaluationRun.objects.select_related("model__task", "dataset").get(pk=run_id)
    attempt = run.attempt
    label = f"run {run_id} ({run.model.name} on {run.dataset.name})"
    with transaction.atomic():
        _refresh_model_status(run.model_id)
    try:
        outcome = _evaluate(run, _Beat(run_id, attempt))
    except Exception as error:  # noqa: BLE001 - every failure is stored with a readable reason
        reason = error.message if isinstance(error, RuleError) else f"{type(error).__name__}: {error}"
        with transaction.atomic():
            EvaluationRun.objects.filter(pk=run_id, attempt=attempt, status=Status.RUNNING).update(
                status=Status.FAILED, error=reason[:5000], finished_at=timezone.now(), heartbeat_at=timezone.now()
            )
            _refresh_model_status(run.model_id)
            task_id = run.model.task_id
            transaction.on_commit(lambda: enqueue_recompute(task_id))
        return f"{label}: failed: {reason}"
    tmp, final = outcome["tmp_file"], outcome["final_file"]
    with transaction.atomic():
        written = EvaluationRun.objects.filter(pk=run_id, attempt=attempt, status=Status.RUNNING).update(
            **outcome["fields"], status=Status.DONE, progress=1.0, error="", finished_at=timezone.now(),
            heartbeat_at=timezone.now(), predictions_file=str(final.relative_to(settings.MEDIA_ROOT)),
        )
        if not written:
            tmp.unlink(missing_ok=True)
            return f"{label}: superseded by a newer attempt, results discarded"
        os.replace(tmp, final)
        _refresh_model_status(run.model_id)
        task_id = run.model.task_id
        transaction.on_commit(lambda: enqueue_recompute(task_id))
    fields = outcome["fields"]
    return f"{label}: done, performance {fields['performance']:.4f} on {fields['n_examples']} items"


# --- recompute_leaderboard ---------------------------------------------------------------

PERCENT_METRICS = ("performance", "robustness", "fairness")


def recompute_leaderboard(task_id: int) -> str:
    """Rebuild the task's ``LeaderboardCache`` from its evaluation runs (idempotent).

    Stores, per model with at least one run on a scoring dataset (published or not: the page
    filters on the live flags), its scores per scoring dataset (performance, robustness and
    fairness in percent, throughput in examples/s, memory in GiB) and run statuses, plus
    paired bootstrap replicates of performance (``settings.LEADERBOARD_BOOTSTRAP_RESAMPLES``,
    default 1,000). Returns a one-line summary.
    """
    task = Task.objects.get(pk=task_id)
    datasets = list(Dataset.objects.filter(task=task, access=Dataset.Access.SCORING).select_related("round").order_by("round__number", "name"))
    runs = (
        EvaluationRun.objects.filter(dataset__in=datasets)
        .select_related("model", "model__owner")
        .order_by("model_id", "dataset_id")
    )
    rows: dict[int, dict] = {}
    items: dict[int, dict[int, ItemResults]] = {d.pk: {} for d in datasets}
    for run in runs:
        model = run.model
        row = rows.setdefault(model.pk, {
            "id": model.pk, "name": model.name, "owner": model.owner.username if model.owner else "",
            "kind": model.kind, "status": model.status, "scores": {}, "runs": {},
        })
        row["runs"][str(run.dataset_id)] = {"status": run.status, "progress": run.progress}
        if run.status != Status.DONE or run.performance is None:
            continue
        row["scores"][str(run.dataset_id)] = {
            "performance": 100 * run.performance,
            "throughput": run.throughput,
            "memory": run.memory_gib,
            "robustness": None if run.robustness is None else 100 * run.robustness,
            "fairness": None if run.fairness is None else 100 * run.fairness,
        }
        results = load_item_results(run.item_results, kind=task.kind)
        if results is not None and len(results) == run.n_examples:
            items[run.dataset_id][model.pk] = results
    model_ids = list(rows)
    replicates = bootstrap_performance(
        items, models=model_ids, datasets=[d.pk for d in datasets], perf_metric=task.config["perf_metric"],
        n_resamples=bootstrap_resamples(), seed=task.pk,
    ) if model_ids and datasets else np.zeros((0, len(model_ids), len(datasets)))
    LeaderboardCache.objects.update_or_create(task=task, defaults={
        "rows": list(rows.values()),
        "datasets": [{"id": d.pk, "name": d.name, "round": d.round.number if d.round else None, "weight": d.weight} for d in datasets],
        "replicates": _serialise(replicates.astype(np.float32)),
    })
    return f"leaderboard of {task.code}: {len(rows)} models × {len(datasets)} scoring datasets, {replicates.shape[0]} bootstrap resamples"
