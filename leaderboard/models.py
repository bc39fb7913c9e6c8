"""Evaluation runs (a model on a dataset, with its scores) and saved leaderboard configs."""

import secrets

from django.conf import settings
from django.db import models

from leaderboard.metric_rules import MISSING_EXCLUDE_MODEL, MISSING_PER_MODEL


class EvaluationRun(models.Model):
    """One model evaluated on one dataset: status, progress and, once done, the scores.

    Unique per (model, dataset): re-running replaces the row's results, never adds a row.
    Scores: ``performance`` (the task's perf metric, 0..1), ``metrics`` (every metric
    computed, e.g. ``{"accuracy": .., "macro_f1": ..}``), ``per_tag`` (``{tag: {metric: value}}``),
    ``throughput`` (examples/second on the worker), ``memory_gib`` (peak, GiB),
    ``robustness`` and ``fairness`` (consistency under perturbation, 0..1).

    ``attempt`` is a fencing token: a worker claims a queued run by bumping it, and writes its
    results only if the run still carries its attempt (a rerun or a requeue supersedes it).

    Provenance, written with the results: ``model_checksum`` (sha256 of the model's artefact),
    ``dataset_checksum`` and ``dataset_version`` (the content the scores were computed on) and
    ``code_version`` (``dynabench.version.code_version``). A run whose ``dataset_version`` is not
    the dataset's current one is stale: it is no longer ranked, and when it is re-run its old
    scores move to ``history`` (one entry per past version), where they stay readable.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="evaluation_runs")
    dataset = models.ForeignKey("tasks.Dataset", on_delete=models.CASCADE, related_name="evaluation_runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    progress = models.FloatField(default=0.0)
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)
    attempt = models.PositiveIntegerField(default=0)

    n_examples = models.PositiveIntegerField(null=True, blank=True)
    performance = models.FloatField(null=True, blank=True)
    metrics = models.JSONField(default=dict, blank=True)
    per_tag = models.JSONField(default=dict, blank=True)
    throughput = models.FloatField(null=True, blank=True, help_text="Examples per second.")
    memory_gib = models.FloatField(null=True, blank=True, help_text="Peak memory, GiB.")
    robustness = models.FloatField(null=True, blank=True)
    fairness = models.FloatField(null=True, blank=True)
    predictions_file = models.CharField(max_length=1024, blank=True, help_text="JSONL of raw predictions, relative to MEDIA_ROOT.")
    item_results = models.BinaryField(
        null=True, blank=True, editable=False,
        help_text="Per-item results in the dataset's item order (``.npy``): label codes (gold, predicted) "
        "for classification, per-item SQuAD F1 for QA. Feeds the bootstrap confidence intervals.",
    )
    metric_signatures = models.JSONField(
        default=dict, blank=True,
        help_text="{metric: signature string} of metrics computed by a library that reports one (sacreBLEU's "
        "'nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0'), so a score can be reproduced.",
    )
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the worker running it.")

    model_checksum = models.CharField(max_length=64, blank=True, help_text="sha256 of the model artefact scored.")
    dataset_checksum = models.CharField(max_length=64, blank=True, help_text="sha256 of the dataset content scored.")
    dataset_version = models.PositiveIntegerField(null=True, blank=True, help_text="Dataset version the scores belong to.")
    code_version = models.CharField(max_length=64, blank=True, help_text="Version of the evaluation code.")
    history = models.JSONField(default=list, blank=True, help_text="Scores on earlier versions of the dataset.")

    queued_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["model", "dataset"]
        constraints = [models.UniqueConstraint(fields=["model", "dataset"], name="one_run_per_model_and_dataset")]
        indexes = [models.Index(fields=["dataset", "status"], name="run_dataset_status")]

    def __str__(self):
        return f"{self.model} on {self.dataset}: {self.status}"


class EvaluationShard(models.Model):
    """One item-id range of a large evaluation run, taken by any worker (``leaderboard/sharding.py``).

    A run of more than ``settings.EVALUATION_SHARD_ITEMS`` items is split, for one attempt of the
    run (``run_attempt``), into shards of consecutive ``DatasetItem`` ids ``first_item..last_item``
    (inclusive). A worker claims a shard by bumping ``attempt`` (a fencing token, as on the run),
    beats ``heartbeat_at``, and stores its outputs in one file through the storage
    (``result_file``, JSONL, one line per item) before marking the shard ``done``; the last shard
    done queues the merge, which scores the whole run and writes it in one transaction.
    ``seconds``: time spent in the model's forward on this shard; ``memory_gib``: the worker's
    peak; ``inferences``: model calls including perturbed inputs.
    """

    Status = EvaluationRun.Status

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="shards")
    run_attempt = models.PositiveIntegerField()
    index = models.PositiveIntegerField()
    first_item = models.BigIntegerField()
    last_item = models.BigIntegerField()
    n_items = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=EvaluationRun.Status.choices, default=EvaluationRun.Status.QUEUED)
    attempt = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    job_id = models.CharField(max_length=64, blank=True)
    result_file = models.CharField(max_length=1024, blank=True, help_text="Storage name of the shard's outputs (JSONL).")
    seconds = models.FloatField(null=True, blank=True)
    memory_gib = models.FloatField(null=True, blank=True)
    inferences = models.PositiveIntegerField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    queued_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "run_attempt", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "run_attempt", "index"], name="one_shard_per_index")]
        indexes = [models.Index(fields=["status", "heartbeat_at"], name="shard_status_heartbeat")]

    def __str__(self):
        return f"shard {self.index} of run {self.run_id} (attempt {self.run_attempt}): {self.status}"


def new_config_slug() -> str:
    """A random URL-safe slug of 16 characters (12 random bytes), within the 32-character column."""
    return secrets.token_urlsafe(12)


class MissingMetric(models.TextChoices):
    """What the Dynascore does with a model that lacks a weighted delta metric (prediction-file
    submissions have no throughput, memory, robustness or fairness): ``leaderboard.dynascore.dynascore``'s
    ``missing_metric``, decided per model (``leaderboard.metric_rules.PER_MODEL_RULE``). A metric that is not
    applicable on the datasets (fairness where no item has a gendered word or a name) is never
    "missing"."""

    PER_MODEL = MISSING_PER_MODEL, "Rank them on the metrics they have; the others keep every metric"
    EXCLUDE_MODEL = MISSING_EXCLUDE_MODEL, "List them as pending; keep the metric"


class LeaderboardConfig(models.Model):
    """A saved set of metric and dataset weights (a "fork"), or a frozen snapshot of a leaderboard.

    ``metric_weights``: ``{"performance": 4, "throughput": 1, ...}`` (0..5 each, metrics only);
    ``dataset_weights``: ``{dataset_id: weight}``; ``missing_metric``: the missing-metric choice
    (:class:`MissingMetric`); ``snapshot``: the ranked rows at freeze time.
    Shared by URL through ``slug``.
    """

    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="leaderboard_configs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    slug = models.SlugField(max_length=32, unique=True, default=new_config_slug)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    metric_weights = models.JSONField(default=dict)
    dataset_weights = models.JSONField(default=dict, blank=True)
    missing_metric = models.CharField(
        max_length=16, choices=MissingMetric.choices, default=MissingMetric.PER_MODEL,
        help_text="Models without a weighted metric (e.g. prediction files: no throughput or memory).",
    )
    frozen = models.BooleanField(default=False)
    snapshot = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.task.code}: {self.name}"


class LeaderboardCache(models.Model):
    """The inputs of a task's leaderboard, recomputed by ``leaderboard.jobs.recompute_leaderboard``.

    ``rows``: one entry per published model with its scores per scoring dataset (see
    ``leaderboard.selectors.leaderboard_inputs``); ``datasets``: the scoring datasets in column
    order; ``replicates``: bootstrap replicates of performance, ``.npy`` float32 of shape
    (resamples, rows, datasets). The page re-ranks these with any weights without touching
    the evaluation rows.
    """

    task = models.OneToOneField("tasks.Task", on_delete=models.CASCADE, related_name="leaderboard_cache")
    rows = models.JSONField(default=list)
    datasets = models.JSONField(default=list)
    replicates = models.BinaryField(null=True, blank=True)
    computed_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"leaderboard cache of {self.task.code}"
