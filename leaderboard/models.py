"""Evaluation runs (a model on a dataset, with its scores) and saved leaderboard configs."""

import secrets

from django.conf import settings
from django.db import models


class EvaluationRun(models.Model):
    """One model evaluated on one dataset: status, progress and, once done, the scores.

    Unique per (model, dataset): re-running replaces the row's results, never adds a row.
    Scores: ``performance`` (the task's perf metric, 0..1), ``metrics`` (every metric
    computed, e.g. ``{"accuracy": .., "macro_f1": ..}``), ``per_tag`` (``{tag: {metric: value}}``),
    ``throughput`` (examples/second on the worker), ``memory_gib`` (peak, GiB),
    ``robustness`` and ``fairness`` (consistency under perturbation, 0..1).

    ``attempt`` is a fencing token: a worker claims a queued run by bumping it, and writes its
    results only if the run still carries its attempt (a rerun or a requeue supersedes it).
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
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life of the worker running it.")

    queued_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["model", "dataset"]
        constraints = [models.UniqueConstraint(fields=["model", "dataset"], name="one_run_per_model_and_dataset")]
        indexes = [models.Index(fields=["dataset", "status"], name="run_dataset_status")]

    def __str__(self):
        return f"{self.model} on {self.dataset}: {self.status}"


class LeaderboardConfig(models.Model):
    """A saved set of metric and dataset weights (a "fork"), or a frozen snapshot of a leaderboard.

    ``metric_weights``: ``{"performance": 4, "throughput": 1, ...}`` (0..5 each);
    ``dataset_weights``: ``{dataset_id: weight}``; ``snapshot``: the ranked rows at freeze time.
    Shared by URL through ``slug``.
    """

    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="leaderboard_configs")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    slug = models.SlugField(max_length=32, unique=True, default=secrets.token_urlsafe)
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    metric_weights = models.JSONField(default=dict)
    dataset_weights = models.JSONField(default=dict, blank=True)
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
