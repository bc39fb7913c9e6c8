"""Large evaluations split into shards that any number of workers take, and the merge that scores them.

A run of a model that runs in the registry on a dataset of more than
``settings.EVALUATION_SHARD_ITEMS`` items (default 2,000) is not evaluated in one job:

1. ``split_run(run)`` (the worker that claimed the run, ``evaluation.claim_run``) cuts the
   dataset's items, in id order, into ranges of that many items and writes one
   ``EvaluationShard`` per range for the run's current attempt (removing the shards and files of
   earlier attempts); each is queued as its own job.
2. ``evaluate_shard(shard_id)``: any worker claims the shard (``queued`` → ``running``,
   ``attempt`` bumped: only one wins), loads the model (from the storage through its own
   artefact cache), predicts the range's items and their robustness/fairness variants, beating
   the shard's and the run's heartbeat, and stores the outputs in one file through the storage.
   Only then, in one transaction, the shard becomes ``done``; the worker that finishes the last
   shard queues the merge. A worker that dies mid-shard leaves no row changed but the shard's
   heartbeat: the reaper (``leaderboard/reaper.py``) retries it.
3. A failed shard is retried alone (``settings.EVALUATION_SHARD_ATTEMPTS`` tries, default 2, a
   dead worker counting as a failure); a shard that failed on its last try fails the run with
   its reason, and the other shards' results are then refused.
4. ``merge_shards(run_id)`` reads every shard's file, scores the whole dataset exactly as an
   unsharded run does (``evaluation.score_outputs``: the task kind's metrics, per tag,
   robustness and fairness over all items) and writes the run in one transaction, fenced by the
   run's attempt. Throughput is the items per second of forward time summed over the shards
   (a per-worker figure, comparable with an unsharded run's); memory is the largest shard's peak.

Every step is idempotent, so a job that runs twice (a retry racing the reaper) changes nothing.
"""

from __future__ import annotations

import json
import time

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from leaderboard import evaluation
from leaderboard.scoring import perturbed_outputs, predict
from leaderboard.models import EvaluationRun, EvaluationShard
from tasks.loop import artefacts, gate
from tasks.models import DatasetItem, Purpose

Status = EvaluationRun.Status


def shard_items() -> int:
    """Items per shard (``settings.EVALUATION_SHARD_ITEMS``, default 2,000; at least 1)."""
    return max(1, int(getattr(settings, "EVALUATION_SHARD_ITEMS", 2000)))


def shard_attempts() -> int:
    """Tries of one shard before it fails the run (``settings.EVALUATION_SHARD_ATTEMPTS``, default 2)."""
    return max(1, int(getattr(settings, "EVALUATION_SHARD_ATTEMPTS", 2)))


def should_shard(run: EvaluationRun) -> bool:
    """True when ``run`` runs a model (not a predictions file) on more than ``shard_items()`` items."""
    return run.model.runs_in_registry and DatasetItem.objects.filter(dataset_id=run.dataset_id).count() > shard_items()


def split_run(run: EvaluationRun) -> list[int]:
    """Write the shards of the claimed ``run``'s current attempt (item-id ranges of ``shard_items()``
    items, in id order); return their ids. Called once per attempt, by the worker that claimed it."""
    pks = list(DatasetItem.objects.filter(dataset_id=run.dataset_id).order_by("pk").values_list("pk", flat=True))
    size = shard_items()
    shards = [
        EvaluationShard(
            run=run, run_attempt=run.attempt, index=n, first_item=chunk[0], last_item=chunk[-1], n_items=len(chunk),
        )
        for n, chunk in enumerate(pks[i:i + size] for i in range(0, len(pks), size))
    ]
    earlier = EvaluationShard.objects.filter(run=run).exclude(run_attempt=run.attempt)
    files = [name for name in earlier.exclude(result_file="").values_list("result_file", flat=True)]
    with transaction.atomic():
        earlier.delete()  # shards of an earlier attempt: a worker still busy with one finds its row gone
        EvaluationShard.objects.bulk_create(shards)
        EvaluationRun.objects.filter(pk=run.pk, attempt=run.attempt).update(heartbeat_at=timezone.now())
    for name in files:
        artefacts.storage().delete(name)
    return list(EvaluationShard.objects.filter(run=run, run_attempt=run.attempt).order_by("index").values_list("pk", flat=True))


class _ShardBeat:
    """Beats the shard's and its run's heartbeat (at most every ``every`` seconds) for one shard attempt."""

    def __init__(self, shard: EvaluationShard, attempt: int, every: float = 1.0):
        self.shard, self.attempt, self.every, self.last = shard, attempt, every, 0.0

    def __call__(self, progress: float, *, force: bool = False):
        now = time.monotonic()
        if force or now - self.last >= self.every:
            self.last = now
            stamp = timezone.now()
            EvaluationShard.objects.filter(pk=self.shard.pk, attempt=self.attempt, status=Status.RUNNING).update(heartbeat_at=stamp)
            EvaluationRun.objects.filter(pk=self.shard.run_id, attempt=self.shard.run_attempt, status=Status.RUNNING).update(heartbeat_at=stamp)


def _label(shard: EvaluationShard) -> str:
    return f"shard {shard.index} (items {shard.first_item}–{shard.last_item}) of run {shard.run_id}"


def _run_is_current(shard: EvaluationShard) -> bool:
    return EvaluationRun.objects.filter(pk=shard.run_id, attempt=shard.run_attempt, status=Status.RUNNING).exists()


def evaluate_shard(shard_id: int) -> tuple[str, dict]:
    """Evaluate one shard (see the module docstring); return a summary and what to queue next:
    ``{"merge": run_id}`` when it was the run's last shard, ``{"retry": shard_id}`` when it failed
    and has a try left, ``{}`` otherwise."""
    claimed = EvaluationShard.objects.filter(pk=shard_id, status=Status.QUEUED).update(
        status=Status.RUNNING, attempt=F("attempt") + 1, heartbeat_at=timezone.now()
    )
    if claimed != 1:
        return f"shard {shard_id}: not queued, skipped", {}
    shard = EvaluationShard.objects.select_related("run__model__task", "run__dataset").get(pk=shard_id)
    attempt, run = shard.attempt, shard.run
    if not _run_is_current(shard):
        EvaluationShard.objects.filter(pk=shard_id, attempt=attempt).update(
            status=Status.FAILED, error="The run was reset or has failed; this shard's results are not needed.",
            finished_at=timezone.now(),
        )
        return f"{_label(shard)}: its run is no longer running, skipped", {}
    task = run.model.task
    beat = _ShardBeat(shard, attempt)
    try:
        items = evaluation.dataset_items(run.dataset_id, shard.first_item, shard.last_item)
        inputs = [task.spec.model_input(task.config, item["input"]) for item in items]
        from tasks.loop.registry import get_predictor

        predictor = get_predictor(run.model)
        with gate.admit(run.model, Purpose.EVALUATION), evaluation.PeakMemory() as peak:
            outputs, seconds = predict(predictor, inputs, beat, 0.0, 0.6)
            robust, fair, extra = perturbed_outputs(task, predictor, items, inputs, beat)
        body = "".join(
            json.dumps({"pk": item["pk"], "output": out, "robust": r, "fair": f}, ensure_ascii=False) + "\n"
            for item, out, r, f in zip(items, outputs, robust, fair)
        ).encode()
        name = f"evaluations/shards/{run.pk}/a{shard.run_attempt}/{shard.index}-s{attempt}.jsonl"
        store = artefacts.storage()
        if store.exists(name):
            store.delete(name)
        name = store.save(name, ContentFile(body))
    except Exception as error:  # noqa: BLE001 - every failure is stored with a readable reason
        return shard_failed(shard, attempt, evaluation.failure_reason(error))
    with transaction.atomic():
        written = EvaluationShard.objects.filter(pk=shard_id, attempt=attempt, status=Status.RUNNING).update(
            status=Status.DONE, result_file=name, seconds=seconds,
            memory_gib=peak.gib if getattr(predictor, "measures_memory", True) else None,
            inferences=len(items) + extra, finished_at=timezone.now(), heartbeat_at=timezone.now(),
        )
        if not written or not _run_is_current(shard):
            transaction.on_commit(lambda: artefacts.storage().delete(name))
            return f"{_label(shard)}: superseded, results discarded", {}
        # Serialise the shards of one run finishing at once, so exactly the last one sees none left.
        # get() drops the default ordering, whose join to a dataset's nullable round PostgreSQL cannot lock.
        EvaluationRun.objects.select_for_update(of=("self",)).get(pk=run.pk)
        shards = EvaluationShard.objects.filter(run_id=run.pk, run_attempt=shard.run_attempt)
        total, done = shards.count(), shards.filter(status=Status.DONE).count()
        EvaluationRun.objects.filter(pk=run.pk, attempt=shard.run_attempt, status=Status.RUNNING).update(
            progress=round(0.99 * done / total, 4), heartbeat_at=timezone.now(),
        )
    summary = f"{_label(shard)}: done, {len(items)} items in {seconds:.2f}s ({done}/{total} shards)"
    return summary, ({"merge": run.pk} if done == total else {})


def shard_failed(shard: EvaluationShard, attempt: int, reason: str) -> tuple[str, dict]:
    """Record that the shard's ``attempt`` failed with ``reason``: queue it again alone while it has tries
    left (``shard_attempts()``), else fail it and its run with the reason. Returns a summary and
    ``{"retry": shard_id}`` or ``{}``."""
    now = timezone.now()
    if attempt < shard_attempts():
        retried = EvaluationShard.objects.filter(pk=shard.pk, attempt=attempt, status=Status.RUNNING).update(
            status=Status.QUEUED, error=f"Try {attempt} failed: {reason} Retried."[:5000], heartbeat_at=None, job_id="",
        )
        return (f"{_label(shard)}: try {attempt} failed ({reason}), retried", {"retry": shard.pk}) if retried else (
            f"{_label(shard)}: superseded", {})
    with transaction.atomic():
        failed = EvaluationShard.objects.filter(pk=shard.pk, attempt=attempt, status=Status.RUNNING).update(
            status=Status.FAILED, error=reason[:5000], finished_at=now,
        )
        if failed:
            evaluation.fail_run(
                shard.run, shard.run_attempt,
                f"Shard {shard.index} (items {shard.first_item}–{shard.last_item}) failed {attempt} times: {reason}",
            )
    return f"{_label(shard)}: failed {attempt} times ({reason}); run failed", {}


def merge_shards(run_id: int) -> tuple[str, int | None]:
    """Score a sharded run from its shards' files and write it in one transaction (see the module
    docstring). Returns a summary and the task whose leaderboard to recompute (None when nothing
    was written). Idempotent: a run no longer running, or with a shard not done, is left alone."""
    run = EvaluationRun.objects.select_related("model__task", "dataset").filter(pk=run_id, status=Status.RUNNING).first()
    if run is None:
        return f"run {run_id}: not running, merge skipped", None
    attempt = run.attempt
    shards = list(EvaluationShard.objects.filter(run=run, run_attempt=attempt).order_by("index"))
    if not shards or any(s.status != Status.DONE for s in shards):
        return f"run {run_id}: shards not all done, merge skipped", None
    label = f"run {run_id} ({run.model.name} on {run.dataset.name}, {len(shards)} shards)"
    EvaluationRun.objects.filter(pk=run.pk, attempt=attempt, status=Status.RUNNING).update(heartbeat_at=timezone.now())
    try:
        items = evaluation.dataset_items(run.dataset_id)
        results = {}
        store = artefacts.storage()
        for shard in shards:
            with store.open(shard.result_file, "rb") as fh:
                for line in fh.read().decode("utf-8").splitlines():
                    if line.strip():
                        record = json.loads(line)
                        results[record["pk"]] = record
        missing = [item["uid"] for item in items if item["pk"] not in results]
        if missing:
            raise ValueError(f"{len(missing)} items have no output in the shards (e.g. {', '.join(missing[:5])}); the dataset changed during the run.")
        rows = [results[item["pk"]] for item in items]
        outputs = [row["output"] for row in rows]
        seconds = sum(s.seconds or 0.0 for s in shards)
        outcome = evaluation.score_outputs(
            run, attempt, items, outputs, throughput=len(items) / seconds if seconds > 0 else None,
            memory_gib=max((s.memory_gib for s in shards if s.memory_gib is not None), default=None),
            robust=[r["robust"] for r in rows], fair=[r["fair"] for r in rows],
            inferences=sum(s.inferences or 0 for s in shards),
            wall_seconds=(timezone.now() - run.started_at).total_seconds() if run.started_at else 0.0,
        )
    except Exception as error:  # noqa: BLE001 - every failure is stored with a readable reason
        reason = evaluation.failure_reason(error)
        evaluation.fail_run(run, attempt, f"Merging the shards failed: {reason}")
        return f"{label}: merge failed: {reason}", run.model.task_id
    if not evaluation.finish_run(run, attempt, outcome):
        return f"{label}: superseded by a newer attempt, results discarded", None
    files = [s.result_file for s in shards]
    for name in files:
        store.delete(name)
    fields = outcome["fields"]
    return f"{label}: done, performance {fields['performance']:.4f} on {fields['n_examples']} items", run.model.task_id


def stale_shards(now=None) -> list[tuple[EvaluationShard, str]]:
    """Running shards whose worker stopped beating for ``evaluation.stale_after()``, with the reason to record."""
    now = now or timezone.now()
    limit = now - evaluation.stale_after()
    stale = EvaluationShard.objects.filter(status=Status.RUNNING, heartbeat_at__lt=limit).select_related("run")
    return [(s, f"The worker stopped responding (last heartbeat {s.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC).") for s in stale]


def runs_waiting_for_merge(now=None) -> list[int]:
    """Running sharded runs whose shards are all done but whose merge has not written for
    ``evaluation.stale_after()`` (its job was lost or its worker died)."""
    now = now or timezone.now()
    limit = now - evaluation.stale_after()
    waiting = []
    for run in EvaluationRun.objects.filter(status=Status.RUNNING, heartbeat_at__lt=limit).only("pk", "attempt"):
        shards = EvaluationShard.objects.filter(run_id=run.pk, run_attempt=run.attempt)
        if shards.exists() and not shards.exclude(status=Status.DONE).exists():
            waiting.append(run.pk)
    return waiting
