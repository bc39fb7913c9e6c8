"""Validations: other people's verdicts on examples."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class Validation(models.Model):
    """One validator's verdict on one example; unique per (example, validator).

    ``metadata`` holds what the task asks for: ``corrected_label`` or ``corrected_answer``
    (``{"text", "answer_start"}``), ``flag_reason``, ``explanation``. ``submission_key``: the
    one-time key of the submission that recorded it; a repeat returns this validation.

    ``counts``: whether the verdict counts toward the example's consensus. False for a gold
    check (``gold_check``: the validator's answer to a gold item, scored against its verdict,
    never a vote) and for every vote of a validator whose gold accuracy fell below the task's
    threshold (``ValidatorStanding``); ``validation/gold.py`` sets it.
    """

    class Label(models.TextChoices):
        CORRECT = "correct", "Correct"
        INCORRECT = "incorrect", "Incorrect"
        FLAGGED = "flagged", "Flagged"

    class Mode(models.TextChoices):
        USER = "user", "User"
        OWNER = "owner", "Owner"

    example = models.ForeignKey("annotation.Example", on_delete=models.CASCADE, related_name="validations")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="validations")
    label = models.CharField(max_length=16, choices=Label.choices)
    mode = models.CharField(max_length=8, choices=Mode.choices, default=Mode.USER)
    metadata = models.JSONField(default=dict, blank=True)
    counts = models.BooleanField(default=True, help_text="Counts toward the example's consensus.")
    gold_check = models.BooleanField(default=False, help_text="An answer to a gold item (scored, never a vote).")
    created_at = models.DateTimeField(auto_now_add=True)
    submission_key = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The one-time key of the form or API call that recorded it (dynabench/idempotency.py).",
    )

    class Meta:
        ordering = ["created_at"]
        constraints = [
            models.UniqueConstraint(fields=["example", "validator"], name="one_validation_per_example_and_validator"),
            models.UniqueConstraint(
                fields=["validator", "submission_key"], condition=~Q(submission_key=""), name="validation_submission_key_once"
            ),
        ]
        indexes = [models.Index(fields=["validator", "created_at"], name="validation_validator_recent")]

    def __str__(self):
        return f"{self.validator} says {self.label} on example {self.example_id}"


class RoundAgreement(models.Model):
    """A round's inter-rater agreement as last computed by the job
    ``validation.jobs.compute_round_agreement`` (never per request).

    ``verdicts``/``voted``: the fields of ``validation.calculations.Agreement`` over the
    verdicts and over imported category votes (``voted`` null when the round has none).
    ``figures``: the round's grouped figures (``validation.round_statistics.round_figures``: the validation queue and flagged
    examples) that pages of a round larger than ``selectors.FIGURES_LIVE_LIMIT`` read instead
    of grouping the round per request; null before the job first ran.
    ``validations``/``retracted``/``collected``: the round tally's counts the figures were
    computed from; when the tally has moved on the figures are stale, and
    ``validation.round_statistics.round_stats`` asks for a new computation at most every
    ``AGREEMENT_MIN_INTERVAL`` (``requested_at``).
    """

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, primary_key=True, related_name="agreement")
    verdicts = models.JSONField(null=True, blank=True)
    voted = models.JSONField(null=True, blank=True)
    figures = models.JSONField(null=True, blank=True)
    validations = models.IntegerField(default=-1)
    retracted = models.IntegerField(default=-1)
    collected = models.IntegerField(default=-1)
    computed_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    requested_at = models.DateTimeField(null=True, blank=True)

    def __str__(self):
        return f"agreement of round {self.round_id}"


class GoldItem(models.Model):
    """An example whose verdict the task owner knows, mixed into the review queue to measure validators.

    ``example``: a settled example of ``round`` (an owner marked a validated example as gold,
    or supplied a new one and decided it). ``verdict``: ``correct`` or ``incorrect``, the answer
    a careful validator gives; it never leaves the server. Inactive gold items are no longer
    served; answers already given still count.
    """

    class Verdict(models.TextChoices):
        CORRECT = "correct", "Correct"
        INCORRECT = "incorrect", "Incorrect"

    round = models.ForeignKey("tasks.Round", on_delete=models.CASCADE, related_name="gold_items")
    example = models.OneToOneField("annotation.Example", on_delete=models.CASCADE, related_name="gold")
    verdict = models.CharField(max_length=16, choices=Verdict.choices)
    active = models.BooleanField(default=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round", "id"]
        indexes = [models.Index(fields=["round", "active", "id"], name="gold_item_queue")]

    def __str__(self):
        return f"gold item {self.pk} ({self.round}): {self.verdict}"


class GoldAssignment(models.Model):
    """A gold item handed to a validator by the review queue (like a lease, one per validator and item).

    Only a served gold item takes a gold check from that validator; ``answered_at`` is set by
    the check, so a second submit of the same form counts once.
    """

    gold_item = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="assignments")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    served_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["gold_item", "validator"], name="one_gold_assignment_per_validator")]
        indexes = [models.Index(fields=["validator", "answered_at"], name="gold_assignment_open")]


class ValidatorStanding(models.Model):
    """A validator's gold accuracy on a task and whether their votes count there.

    Written by ``validation/gold.py:update_standing`` after each gold check: ``excluded`` when
    at least the task's ``gold_min_answers`` checks were answered and the share correct is below
    ``gold_accuracy_threshold``; ``reason`` says why, for the owner's page.
    """

    task = models.ForeignKey("tasks.Task", on_delete=models.CASCADE, related_name="validator_standings")
    validator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    answered = models.PositiveIntegerField(default=0)
    correct = models.PositiveIntegerField(default=0)
    excluded = models.BooleanField(default=False)
    reason = models.TextField(blank=True)
    changed_at = models.DateTimeField(null=True, blank=True)
    recomputed_examples = models.PositiveIntegerField(default=0, help_text="Examples whose consensus was recomputed at the last change.")

    class Meta:
        ordering = ["task", "validator"]
        constraints = [models.UniqueConstraint(fields=["task", "validator"], name="one_standing_per_task_and_validator")]

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.answered if self.answered else None

    def __str__(self):
        return f"{self.validator} on {self.task}: {self.correct}/{self.answered}{' (excluded)' if self.excluded else ''}"


class RoundPay(models.Model):
    """What a paid round pays its crowd workers, set by the task owner (``validation/pay.py``).

    Base pay per accepted example (validated correct) and per accepted validation (a vote that
    counts toward consensus; gold checks and excluded validators' votes do not), plus a bonus
    per validated model-fooling example, and optionally a transfer bonus per accepted example that
    fooled at least ``transfer_min_models`` of the task's other models (its transfer rate,
    ``validation/transfer.py``). Amounts in ``currency`` (the platform's), two decimals.
    ``reason``: the text MTurk's ``SendBonus`` shows the worker.
    """

    round = models.OneToOneField("tasks.Round", on_delete=models.CASCADE, related_name="pay")
    currency = models.CharField(max_length=3, default="GBP")
    per_example = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    per_validation = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    bonus_per_fooling = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    transfer_min_models = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Transfer bonus rule: an accepted example that fools at least this many other "
        "models of the task earns transfer_bonus (blank: no transfer bonus).",
    )
    transfer_bonus = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    reason = models.CharField(max_length=255, default="Pay for your accepted work in this Dynabench round.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(per_example__gte=0) & models.Q(per_validation__gte=0) & models.Q(bonus_per_fooling__gte=0)
                & models.Q(transfer_bonus__gte=0),
                name="round_pay_nonnegative",
            )
        ]

    def __str__(self):
        return f"pay of {self.round}"


from validation.judge_models import AIVote, RoundJudge  # noqa: E402,F401  (models of their own module)
