"""The records of AI help in writing examples: a round's writing assistant and the runs of a generator.

Imported by ``annotation/models.py`` (the app's models module); the rules are in
``annotation/assist.py`` and ``annotation/generation.py``.
"""

from django.conf import settings
from django.db import models


class RoundAssistant(models.Model):
    """A round's writing assistant: the model that suggests an example on the create page.

    ``model``: an endpoint model (OpenAI-compatible API) or a local causal language model (a
    Hugging Face directory of a conversational task, run in-process by ``tasks.loop.chat.CausalLMPredictor``).
    ``enabled``: annotators see *Suggest*. ``ab_split``: each worker is assigned, stably per round, to the
    assisted arm or the control arm (``annotation.calculations.ab_arm``), so the two can be compared
    fairly; off: everyone may ask. Its calls count against the round's endpoint budget.
    """

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, related_name="assistant")
    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="+")
    enabled = models.BooleanField(default=True)
    ab_split = models.BooleanField(default=False, help_text="Half the workers (stable per worker and round) get no assistant.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"assistant of {self.round}: {self.model.name}"


class GenerationRun(models.Model):
    """A job that asked a generator for ``per_context`` candidates per context of a round.

    Progress: ``done`` of ``total`` requests; ``candidates`` parsed, ``kept`` (they fooled the model in the
    loop and entered the validation queue), ``tokens`` the generator used. ``status``: queued, running,
    done, stopped (the round's endpoint budget ran out: what was kept stays) or failed with ``reason``.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        STOPPED = "stopped", "Stopped (budget spent)"
        FAILED = "failed", "Failed"

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="generation_runs")
    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="+")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    per_context = models.PositiveSmallIntegerField(default=1)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    candidates = models.PositiveIntegerField(default=0)
    kept = models.PositiveIntegerField(default=0)
    tokens = models.PositiveBigIntegerField(default=0)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"generation run {self.pk} of {self.round}"

    @property
    def progress(self) -> float:
        """0..1: requests answered of those planned."""
        return self.done / self.total if self.total else 0.0
