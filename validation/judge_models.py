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
    examples are sent to it. Its votes are ``AIVote`` rows.

    ``policy`` (``validation/judge_policy.py``): ``off`` (default: its votes never count), ``one_vote``
    (its vote counts as one consensus vote) or ``triage`` (an example it is confident about,
    ``confidence >= triage_confidence``, needs one human vote fewer). Either holds only while
    ``counting``: its Cohen's κ against the consensus on at least ``min_settled`` settled examples is
    above ``kappa_threshold``; ``counting_reason`` says why it counts or not, for the owner.
    ``ab_split``: only the examples of the ``policy`` arm (a stable seeded half, ``judge_agreement.policy_arm``)
    are under the policy, so that the dashboard compares the two halves. ``last_summary``/``last_run_at``:
    what the last voting job (``validation.judge.judge_examples``) did, and when it ended.
    """

    class Policy(models.TextChoices):
        OFF = "off", "Off: AI votes never count"
        ONE_VOTE = "one_vote", "One vote: the AI vote counts as one consensus vote"
        TRIAGE = "triage", "Triage: examples the AI is confident about need one human vote fewer"

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, related_name="judge")
    model = models.ForeignKey("tasks.MLModel", on_delete=models.CASCADE, related_name="+")
    enabled = models.BooleanField(default=True)
    policy = models.CharField(max_length=16, choices=Policy.choices, default=Policy.OFF)
    kappa_threshold = models.FloatField(default=0.6, help_text="Cohen's κ against the consensus the judge must exceed.")
    min_settled = models.PositiveIntegerField(default=50, help_text="Settled examples with its vote before κ is trusted.")
    triage_confidence = models.FloatField(default=0.9, help_text="Triage: the confidence that saves one human vote.")
    ab_split = models.BooleanField(default=False, help_text="Only a stable half of the examples is under the policy.")
    counting = models.BooleanField(default=False)
    counting_reason = models.TextField(blank=True, default="")
    checked_at = models.DateTimeField(null=True, blank=True)
    last_summary = models.TextField(blank=True, default="", help_text="The last voting job's one-line summary.")
    last_run_at = models.DateTimeField(null=True, blank=True)
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
    checksum). ``prompt_tokens``/``completion_tokens``: what the call used. ``counted_as``: how the vote
    counted toward the example's consensus: ``""`` not at all (the default), ``vote`` (one consensus
    vote) or ``triage`` (one human vote fewer needed); set when the vote is cast under the round's
    policy, cleared only while the example is pending (a settled example is never rewritten).
    ``arm``: ``policy`` or ``control`` under the round's A/B split, else ``""``.
    """

    class CountedAs(models.TextChoices):
        NOT = "", "Did not count"
        VOTE = "vote", "One consensus vote"
        TRIAGE = "triage", "One human vote fewer"

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
    counted_as = models.CharField(max_length=8, choices=CountedAs.choices, blank=True, default="")
    arm = models.CharField(max_length=8, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["example", "model"], name="one_ai_vote_per_example_and_model")]
        indexes = [models.Index(fields=["round", "model"], name="ai_vote_round_model")]

    def __str__(self):
        return f"{self.model_id} says {self.label or 'unparsed'} on example {self.example_id}"
