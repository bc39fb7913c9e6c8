"""The records of AI validators: a round's judge and its votes.

Imported by ``validation/models.py`` (the app's models module); the rules are in ``validation/judge.py``
(choosing a judge, the voting job) and ``validation/judge_agreement.py`` (its agreement with people).

An AI vote is kept apart from ``Validation`` on purpose: the review queue, the validation API, pay and
consensus read ``Validation`` only, so an AI vote is never shown to a human validator, never pays anyone
and never counts toward consensus.
"""

from django.conf import settings
from django.db import models


class RoundJudge(models.Model):
    """A round's AI validator: the model that votes on each example entering the validation queue.

    ``model``: an endpoint model (called through the gate, purpose ``judge``: its submitter's consent,
    the round's endpoint budget) or a local causal language model (run in-process). ``enabled``: new
    examples are sent to it. Its votes are ``AIVote`` rows; they never count toward consensus.
    """

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, related_name="judge")
    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="+")
    enabled = models.BooleanField(default=True)
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"judge of {self.round}: {self.model.name}"


class AIVote(models.Model):
    """One AI validator's vote on one example; unique per (example, model): a rerun replaces nothing.

    ``label``: ``correct``, ``incorrect`` or ``flagged``; empty when the answer could not be read
    (``parsed`` False, ``raw`` keeps its first characters). ``reason``: the judge's short reason.
    ``confidence``: 0 to 1 when the judge gave one. ``settings_checksum``: sha256 of what decided the
    answer (an endpoint's URL, API, model name, parameters and prompt; a local model's directory
    checksum). ``prompt_tokens``/``completion_tokens``: what the call used. ``counted``: whether the vote
    counted toward the example's consensus (always False: AI votes do not count).
    """

    example = models.ForeignKey("annotation.Example", on_delete=models.CASCADE, related_name="ai_votes")
    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="ai_votes")
    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=16, blank=True, default="")
    parsed = models.BooleanField(default=True)
    reason = models.TextField(blank=True, default="")
    confidence = models.FloatField(null=True, blank=True)
    raw = models.TextField(blank=True, default="")
    settings_checksum = models.CharField(max_length=64, blank=True, default="")
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    counted = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["example", "model"], name="one_ai_vote_per_example_and_model")]
        indexes = [models.Index(fields=["round", "model"], name="ai_vote_round_model")]

    def __str__(self):
        return f"{self.model_id} says {self.label or 'unparsed'} on example {self.example_id}"
