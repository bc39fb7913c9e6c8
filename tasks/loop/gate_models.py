"""The records of the gate every call to a model passes (``tasks/loop/gate.py``): what a round's
endpoint budget has reserved, and one audit row per call."""

from django.conf import settings
from django.db import models


class Purpose(models.TextChoices):
    """Why a model is called. A submitter's endpoint serves ``evaluation`` (what its submission asked
    for); every other purpose needs its submitter's consent (``Endpoint.consents``) unless the
    endpoint belongs to an owner of the task or to the platform."""

    EVALUATION = "evaluation", "Leaderboard evaluation"
    LOOP = "loop", "Model in the loop (answers, chat turns, side by side)"
    ASSIST = "assist", "Writing assistant (Suggest)"
    GENERATE = "generate", "Generated candidates"
    TRANSFER = "transfer", "Transfer to other models"
    JUDGE = "judge", "AI validator"
    TEST = "test", "Test connection"


class RoundSpend(models.Model):
    """What a round's endpoint models used: calls and tokens of the requests answered plus those in
    flight. A request reserves before it is sent, in one conditional ``UPDATE`` that cannot pass the
    round's ``endpoint_call_budget`` / ``endpoint_token_budget``, and gives back what it did not use."""

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, primary_key=True, related_name="spend")
    calls = models.PositiveIntegerField(default=0)
    tokens = models.BigIntegerField(default=0)


class ModelCall(models.Model):
    """One call to a model through the gate: which model, why, for whom, in which round, what it
    used and how it ended. A call the gate refused is recorded too (``status`` ``refused_*``)."""

    class Status(models.TextChoices):
        OK = "ok", "Answered"
        FAILED = "failed", "Failed"
        REFUSED_CONSENT = "refused_consent", "Refused: no consent"
        REFUSED_BUDGET = "refused_budget", "Refused: budget spent"

    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="calls")
    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="+")
    round = models.ForeignKey("tasks.Round", on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    purpose = models.CharField(max_length=16, choices=Purpose.choices)
    status = models.CharField(max_length=16, choices=Status.choices)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_ms = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [models.Index(fields=["model", "purpose"], name="modelcall_model_purpose"),
                   models.Index(fields=["model", "created_at"], name="modelcall_model_created")]
